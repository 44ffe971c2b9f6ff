//! What the page cache held of the file: `cachestat(2)` (Linux 6.5+), which walks the file's
//! cache and counts its pages by state (cached, dirty, under writeback, evicted and recently
//! evicted, from the shadow entries eviction leaves), in microseconds even for a large file.
//! Where the kernel lacks it, `mincore(2)` on a mapping of the file gives the cached pages only
//! ([`mincore_pages`], which `crate::cache`'s residency uses too).
//!
//! The kernel tells page-cache state only to a user who may write the file: `cachestat` says
//! EPERM to anyone else (and `mincore` says "all cached"), so such a file has no figure here,
//! never a made-up one.

use anyhow::Context as _;
use memmap2::MmapOptions;
use rustix::fs::{accessat, Access, AtFlags, CWD};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::fd::AsRawFd;

/// The `cachestat` system call number (one number on every architecture with the unified table).
const SYS_CACHESTAT: libc::c_long = 451;

#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// How the figures were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Cachestat,
    /// Cached pages only; dirty, writeback and evicted are 0 (unknown).
    Mincore,
}

/// The file's pages in the page cache, by state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageCache {
    pub source: Source,
    /// The file's size in pages when read.
    pub file_pages: u64,
    pub cached_pages: u64,
    /// Cached and modified, not yet written back.
    pub dirty_pages: u64,
    /// Being written back now.
    pub writeback_pages: u64,
    /// Evicted from the cache (and remembered by a shadow entry).
    pub evicted_pages: u64,
    /// Evicted recently enough that a read would count as a refault.
    pub recently_evicted_pages: u64,
    pub page_bytes: u64,
}

impl PageCache {
    /// The figures for the whole of `file`: cachestat, else mincore; `None` when neither may
    /// tell (see the module doc) or the file is not a regular one.
    pub fn of(file: &File) -> Option<PageCache> {
        let meta = file.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        let page_bytes = rustix::param::page_size() as u64;
        let file_pages = meta.len().div_ceil(page_bytes);
        match cachestat(file, 0, 0) {
            Ok(s) => Some(PageCache {
                source: Source::Cachestat,
                file_pages,
                cached_pages: s.nr_cache,
                dirty_pages: s.nr_dirty,
                writeback_pages: s.nr_writeback,
                evicted_pages: s.nr_evicted,
                recently_evicted_pages: s.nr_recently_evicted,
                page_bytes,
            }),
            Err(libc::EPERM) => None,
            Err(_) if !mincore_is_truthful(file) => None,
            Err(_) => {
                let (cached_pages, _) = mincore_pages(file).ok()?;
                Some(PageCache {
                    source: Source::Mincore,
                    file_pages,
                    cached_pages,
                    dirty_pages: 0,
                    writeback_pages: 0,
                    evicted_pages: 0,
                    recently_evicted_pages: 0,
                    page_bytes,
                })
            }
        }
    }

    /// Share of the file cached, percent (0 for an empty file).
    pub fn cached_pct(&self) -> f64 {
        pct(self.cached_pages, self.file_pages)
    }

    /// Dirty bytes (not yet written back), plus those under writeback.
    pub fn unwritten_bytes(&self) -> u64 {
        (self.dirty_pages + self.writeback_pages) * self.page_bytes
    }
}

fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        (100.0 * n as f64 / of as f64).min(100.0)
    }
}

/// Cached pages of `len` bytes of `file` from `off` (`len` 0: to the end), or the errno.
pub fn cached_pages(file: &File, off: u64, len: u64) -> Result<u64, i32> {
    cachestat(file, off, len).map(|s| s.nr_cache)
}

fn cachestat(file: &File, off: u64, len: u64) -> Result<Cachestat, i32> {
    let range = CachestatRange { off, len };
    let mut stat = Cachestat::default();
    // SAFETY: both pointers refer to live, correctly laid out structs for the duration of the
    // call; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const CachestatRange,
            &mut stat as *mut Cachestat,
            0u32,
        )
    };
    if rc == 0 {
        Ok(stat)
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

/// Whether `mincore(2)` tells the truth about `file`'s page cache: since Linux 5.0 it does only
/// for a caller who owns the file or may write it (or root); for anyone else it reports every
/// page as resident, to close a side channel.
pub fn mincore_is_truthful(file: &File) -> bool {
    // faccessat only checks permissions (with the effective ids) of the file the descriptor
    // link names; it opens nothing.
    let writable = accessat(
        CWD,
        format!("/proc/self/fd/{}", file.as_raw_fd()),
        Access::WRITE_OK,
        AtFlags::EACCESS,
    )
    .is_ok();
    writable
        || file.metadata().is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid() == rustix::process::geteuid().as_raw()
        })
}

/// The cached pages of an open file and its size in pages, with `mincore(2)` on a read-only
/// mapping of it, in chunks so a huge file never needs a huge vector (a mapping that is never
/// touched faults nothing in).
pub fn mincore_pages(file: &File) -> anyhow::Result<(u64, u64)> {
    let len = file.metadata().context("fstat")?.len();
    let page = rustix::param::page_size() as u64;
    let total_pages = len.div_ceil(page);
    if len == 0 || !file.metadata()?.is_file() {
        return Ok((0, total_pages));
    }
    const CHUNK: u64 = 1 << 30;
    let mut resident = 0u64;
    let mut vec = Vec::new();
    let mut off = 0u64;
    while off < len {
        let map_len = CHUNK.min(len - off) as usize;
        // SAFETY: a read-only shared mapping that we never dereference; mincore only inspects
        // the page tables / page cache behind it.
        let map = unsafe { MmapOptions::new().offset(off).len(map_len).map(file) }
            .context("mmap for mincore")?;
        let pages = (map_len as u64).div_ceil(page) as usize;
        vec.resize(pages, 0u8);
        // SAFETY: `map` is a live mapping of `map_len` bytes and `vec` has one byte per page.
        let rc = unsafe { libc::mincore(map.as_ptr() as *mut _, map_len, vec.as_mut_ptr()) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error()).context("mincore");
        }
        resident += vec.iter().filter(|b| **b & 1 == 1).count() as u64;
        off += map_len as u64;
    }
    Ok((resident, total_pages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_file_just_written_is_cached_and_dirty_and_after_fsync_and_eviction_it_is_neither() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        f.write_all_at(&vec![3u8; 4 << 20], 0).unwrap();
        let Some(c) = PageCache::of(&f) else {
            eprintln!("skipped: no page-cache figures for this file");
            return;
        };
        assert_eq!(c.file_pages, (4 << 20) / c.page_bytes);
        assert!(c.cached_pct() > 99.0, "{c:?}");
        if c.source == Source::Cachestat {
            // Some of it may be under writeback already; none is clean yet (no fsync).
            assert!(c.unwritten_bytes() > 0, "{c:?}");
        }
        crate::cache::evict_file(&f).unwrap();
        let after = PageCache::of(&f).unwrap();
        assert_eq!(after.dirty_pages, 0, "{after:?}");
        // Invalidation leaves no shadow entries (`evicted` counts pages reclaim took).
        assert!(after.cached_pct() < 1.0, "{after:?}");
    }

    #[test]
    fn a_device_has_no_page_cache_figures() {
        assert!(PageCache::of(&File::open("/dev/null").unwrap()).is_none());
    }
}
