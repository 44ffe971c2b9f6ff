//! One timed pass over one layout: read every id of an access list, either by opening its small
//! file (`open` + `read` + `close`, as a web server serving `h/t/o/k.txt` does) or by one `pread`
//! from the already open packed file at the offset the in-memory index gives.
//!
//! Each access is timed on its own with the TSC clock into an hdrhistogram; the pass's total time
//! is the sum of those, so the bookkeeping between accesses (histogram, XOR of the data) is not
//! counted against either layout. Paths and offsets are computed before the clock starts.

use super::layout::Layout;
use crate::cache::{drop_all_caches, residency_of, warm_file};
use crate::config::CacheMode;
use crate::measure::{new_latency_histogram, Clock};
use anyhow::Context;
use hdrhistogram::Histogram;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Which of the two layouts a pass reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    /// One small file per id in the directory tree.
    Dir,
    /// One packed file and its index.
    Packed,
}

impl LayoutKind {
    pub const BOTH: [LayoutKind; 2] = [LayoutKind::Dir, LayoutKind::Packed];

    pub fn as_str(self) -> &'static str {
        match self {
            LayoutKind::Dir => "dir",
            LayoutKind::Packed => "packed",
        }
    }
}

/// What one pass measured.
#[derive(Debug, Clone)]
pub struct Pass {
    /// Sum of the per-access times, nanoseconds.
    pub total_ns: u64,
    /// Per-access latency, nanoseconds.
    pub hist: Histogram<u64>,
    pub accesses: u64,
    pub bytes: u64,
    /// XOR (see [`crate::xor`]) of every access's data, each taken from its offset 0: both
    /// layouts must agree on it for the same access list.
    pub xor: u32,
    /// False when `stop` ended the pass early.
    pub completed: bool,
}

/// Puts the page cache in `mode` for a pass over `kind`, and returns the share of that layout
/// resident just before the pass, percent. Cold modes evict every small file and the packed file.
pub fn prepare_cache(layout: &Layout, kind: LayoutKind, mode: CacheMode) -> anyhow::Result<f64> {
    match mode {
        CacheMode::AsIs => {}
        CacheMode::Warm => match kind {
            LayoutKind::Dir => {
                let mut buf = vec![0u8; layout.file_size_bytes as usize];
                for p in &layout.paths {
                    open(p)?
                        .read_exact(&mut buf)
                        .with_context(|| format!("warming {}", crate::text::shown_path(p)))?;
                }
            }
            LayoutKind::Packed => {
                let f = open(&layout.packed_path)?;
                warm_file(&f, layout.offsets.len() as u64 * layout.file_size_bytes)?;
            }
        },
        CacheMode::Cold | CacheMode::ColdAll => evict_layout(layout)?,
    }
    let resident = residency_pct(layout, kind)?;
    if mode == CacheMode::ColdAll {
        // Last, so the residency check's opens do not bring directory entries and inodes back.
        drop_all_caches()?;
    }
    Ok(resident)
}

/// Evicts every small file and the packed file from the page cache.
///
/// `cache::evict_file` runs `fsync` before `POSIX_FADV_DONTNEED` because dirty pages cannot be
/// dropped. With ten thousand files that is ten thousand `fsync`s, which took ~18 s per eviction
/// here while other work wrote to the same disk. One `syncfs` makes every page of the layout clean
/// (the layout is only ever read), after which the advice alone drops them; the residency check
/// that follows verifies it.
pub fn evict_layout(layout: &Layout) -> anyhow::Result<()> {
    super::layout::sync_fs(&layout.dir)?;
    for p in layout.paths.iter().chain([&layout.packed_path]) {
        let f = open(p)?;
        rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed)
            .map_err(std::io::Error::from)
            .with_context(|| format!("evicting {} (posix_fadvise)", crate::text::shown_path(p)))?;
    }
    Ok(())
}

fn open(p: &std::path::Path) -> anyhow::Result<File> {
    File::open(p).with_context(|| format!("opening {}", crate::text::shown_path(p)))
}

/// Share of a layout's pages in the page cache, percent.
pub fn residency_pct(layout: &Layout, kind: LayoutKind) -> anyhow::Result<f64> {
    let (mut resident, mut total) = (0u64, 0u64);
    let mut add = |p: &std::path::Path| -> anyhow::Result<()> {
        let r = residency_of(&open(p)?)?;
        resident += r.resident_pages;
        total += r.total_pages;
        Ok(())
    };
    match kind {
        LayoutKind::Dir => layout.paths.iter().try_for_each(|p| add(p))?,
        LayoutKind::Packed => add(&layout.packed_path)?,
    }
    Ok(if total == 0 {
        0.0
    } else {
        100.0 * resident as f64 / total as f64
    })
}

/// Reads every id of `ids` from the `kind` layout, timing each access.
pub fn run_pass(
    layout: &Layout,
    kind: LayoutKind,
    ids: &[u32],
    stop: &AtomicBool,
) -> anyhow::Result<Pass> {
    let clock = Clock::get();
    let mut hist = new_latency_histogram();
    let mut buf = vec![0u8; layout.file_size_bytes as usize];
    let mut pass = Pass {
        total_ns: 0,
        hist: new_latency_histogram(),
        accesses: 0,
        bytes: 0,
        xor: 0,
        completed: false,
    };
    let packed = match kind {
        LayoutKind::Packed => Some(open(&layout.packed_path)?),
        LayoutKind::Dir => None,
    };
    for &id in ids {
        if stop.load(Ordering::Relaxed) {
            pass.hist = hist;
            return Ok(pass);
        }
        let id = id as usize;
        let t0 = clock.raw();
        let read = match &packed {
            None => File::open(&layout.paths[id]).and_then(|mut f| f.read_exact(&mut buf)),
            Some(f) => f.read_exact_at(&mut buf, layout.offsets[id]),
        };
        let t1 = clock.raw();
        read.with_context(|| match kind {
            LayoutKind::Dir => format!("reading {}", layout.paths[id].display()),
            LayoutKind::Packed => format!(
                "reading id {id} at offset {} of {}",
                layout.offsets[id],
                crate::text::shown_path(&layout.packed_path)
            ),
        })?;
        let ns = clock.delta_ns(t0, t1).max(1);
        hist.saturating_record(ns);
        pass.total_ns += ns;
        pass.accesses += 1;
        pass.bytes += buf.len() as u64;
        pass.xor ^= crate::xor::xor_aligned(&buf);
    }
    pass.hist = hist;
    pass.completed = true;
    Ok(pass)
}
