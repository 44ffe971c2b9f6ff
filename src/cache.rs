//! Page-cache control and residency.
//!
//! * `warm` reads the range once before measuring (the VM here evicts page cache that sits idle
//!   for about a minute, so warming has to happen right before the run).
//! * `cold` runs `fsync` (dirty pages cannot be dropped) then `posix_fadvise(POSIX_FADV_DONTNEED)`
//!   on the whole file: no root needed, only this file affected.
//! * `cold-all` (root) also calls `sync` and writes `3` to `/proc/sys/vm/drop_caches`.
//!
//! Residency is measured with `cachestat(2)` (Linux 6.5+), which walks the cache's folios and costs
//! microseconds even on a large file; where the kernel lacks it, with `mincore(2)` on a read-only
//! mapping of the file, in chunks so a huge file never needs a huge vector (a mapping that is never
//! touched does not fault pages in). The kernel shows page-cache state only to a user who may
//! write the file (cachestat says EPERM, mincore says "all resident" to anyone else), so for such
//! a file residency is [`ResidencyUnknown`], never a made-up number.
//!
//! The calls go through rustix's safe wrappers; what stays `unsafe` is what rustix does not
//! cover: `mincore(2)` and the mapping it inspects (`cachestat(2)`, a raw `syscall`, is
//! `crate::facts::pagecache`'s, which reads every state it counts).

use crate::config::CacheMode;
use crate::facts::pagecache::cached_pages;
use anyhow::{bail, Context};
use rustix::fs::{fadvise, Advice};
use std::fs::File;
use std::num::NonZeroU64;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// How much of a file is in the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Residency {
    pub resident_pages: u64,
    pub total_pages: u64,
}

impl Residency {
    /// Percent resident (0 for an empty file).
    pub fn percent(&self) -> f64 {
        if self.total_pages == 0 {
            0.0
        } else {
            100.0 * self.resident_pages as f64 / self.total_pages as f64
        }
    }
}

fn page_size() -> u64 {
    rustix::param::page_size() as u64
}

/// Cached pages of `len` bytes of `file` from `off` (`len` 0: to the end of the file), from
/// `cachestat(2)` (`crate::facts::pagecache`); `None` where the kernel lacks it (or refuses it
/// for this file).
pub fn cachestat_pages(file: &File, off: u64, len: u64) -> Option<u64> {
    cached_pages(file, off, len).ok()
}

/// Residency could not be measured truthfully.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResidencyUnknown {
    pub reason: &'static str,
}

impl std::fmt::Display for ResidencyUnknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "page-cache residency unknown: {}", self.reason)
    }
}
impl std::error::Error for ResidencyUnknown {}

const NOT_WRITABLE: &str = "the kernel reports it only to users who may write the file \
     (cachestat refuses, mincore says every page is cached)";

pub use crate::facts::pagecache::mincore_is_truthful;

/// Measures the page-cache residency of an open file: `cachestat`, else `mincore`. Fails with
/// [`ResidencyUnknown`] where neither can tell (a file this user may not write): a made-up 100%
/// would read as "the run was not cold".
pub fn residency_of(file: &File) -> anyhow::Result<Residency> {
    let meta = file.metadata().context("fstat")?;
    if meta.is_file() {
        match cached_pages(file, 0, 0) {
            Ok(cached) => {
                let total_pages = meta.len().div_ceil(page_size());
                return Ok(Residency {
                    resident_pages: cached.min(total_pages),
                    total_pages,
                });
            }
            Err(libc::EPERM) => {
                return Err(ResidencyUnknown {
                    reason: NOT_WRITABLE,
                }
                .into())
            }
            Err(_) if !mincore_is_truthful(file) => {
                return Err(ResidencyUnknown {
                    reason: NOT_WRITABLE,
                }
                .into())
            }
            Err(_) => {}
        }
    }
    residency_by_mincore(file)
}

/// Measures the page-cache residency of an open file with `mincore(2)`.
pub fn residency_by_mincore(file: &File) -> anyhow::Result<Residency> {
    let (resident_pages, total_pages) = crate::facts::pagecache::mincore_pages(file)?;
    Ok(Residency {
        resident_pages,
        total_pages,
    })
}

/// Measures the page-cache residency of `path`.
pub fn residency(path: &Path) -> anyhow::Result<Residency> {
    let f =
        File::open(path).with_context(|| format!("opening {}", crate::text::shown_path(path)))?;
    residency_of(&f)
}

/// Drops the file's pages from the page cache (fsync + fadvise DONTNEED).
pub fn evict_file(file: &File) -> anyhow::Result<()> {
    // fsync on a read-only descriptor is fine on Linux; EINVAL comes from special files.
    if let Err(e) = file.sync_all() {
        if e.raw_os_error() != Some(libc::EINVAL) {
            return Err(e).context("fsync before eviction");
        }
    }
    fadvise(file, 0, None, Advice::DontNeed)
        .map_err(std::io::Error::from)
        .context("posix_fadvise(DONTNEED)")
}

/// Drops every clean page of the machine (root only).
pub fn drop_all_caches() -> anyhow::Result<()> {
    rustix::fs::sync();
    match std::fs::write("/proc/sys/vm/drop_caches", "3\n") {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            bail!("--cache cold-all needs root to write /proc/sys/vm/drop_caches; use --cache cold")
        }
        Err(e) => Err(e).context("writing /proc/sys/vm/drop_caches"),
    }
}

/// Reads `len` bytes from offset 0 so they are cached.
pub fn warm_file(file: &File, len: u64) -> anyhow::Result<()> {
    // WILLNEED only starts readahead; a failure changes nothing but the speed of the reads.
    let _ = fadvise(file, 0, NonZeroU64::new(len), Advice::WillNeed);
    let mut buf = crate::engine::AlignedBuf::new(1 << 20);
    let mut off = 0u64;
    while off < len {
        let want = (buf.len() as u64).min(len - off) as usize;
        let n = file
            .read_at(&mut buf[..want], off)
            .with_context(|| format!("warming the cache at offset {off}"))?;
        if n == 0 {
            break;
        }
        off += n as u64;
    }
    Ok(())
}

/// Puts the file at `path` into the cache state `mode` asks for (for its first `len` bytes when
/// warming). `as-is` does nothing.
pub fn prepare(path: &Path, mode: CacheMode, len: u64) -> anyhow::Result<()> {
    if mode == CacheMode::AsIs {
        return Ok(());
    }
    let f =
        File::open(path).with_context(|| format!("opening {}", crate::text::shown_path(path)))?;
    prepare_open(&f, mode, len)
}

/// [`prepare`] on an open descriptor (the run's own, so it acts on the file the run reads even
/// if the path is renamed meanwhile).
pub fn prepare_open(f: &File, mode: CacheMode, len: u64) -> anyhow::Result<()> {
    match mode {
        CacheMode::AsIs => {}
        CacheMode::Warm => warm_file(f, len)?,
        CacheMode::Cold => evict_file(f)?,
        CacheMode::ColdAll => {
            evict_file(f)?;
            drop_all_caches()?;
        }
    }
    Ok(())
}

/// Above this share of resident pages a "cold" run was not cold.
pub const COLD_TOLERANCE_PCT: f64 = 1.0;

/// Whether a run in cache mode `mode` that started with `resident_pct` of its file cached was
/// not cold: the one test behind both the warning ([`cold_warning`]) and the verdict's
/// `not_cold`, so the two never disagree.
pub fn not_cold(mode: CacheMode, resident_pct: f64) -> bool {
    matches!(mode, CacheMode::Cold | CacheMode::ColdAll) && resident_pct > COLD_TOLERANCE_PCT
}

/// A warning when a cold run's file is still cached, or when whether it is cannot be known
/// (`residency` `None`): never a claim the measurement cannot back.
pub fn cold_warning(mode: CacheMode, residency: Option<&Residency>) -> Option<String> {
    let cold = matches!(mode, CacheMode::Cold | CacheMode::ColdAll);
    if !cold {
        return None;
    }
    let Some(r) = residency else {
        return Some(format!(
            "note: residency unknown, so whether the run was cold is unknown: {NOT_WRITABLE}"
        ));
    };
    not_cold(mode, r.percent()).then(|| {
        format!(
            "warning: the run was not cold: {:.1}% of the file was still in the page cache \
             (pages mapped or locked by another process cannot be evicted)",
            r.percent()
        )
    })
}
