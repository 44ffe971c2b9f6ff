//! What `fast` looks at before it picks a road: how much of the file is in the page cache, and
//! whether the cached folios are big enough to be mapped with 2 MiB page-table entries.
//!
//! Residency comes from `cachestat(2)` (Linux 6.5+, syscall 451), which walks the cache's folios
//! rather than every 4 KiB page, so it costs microseconds even on a large file; `mincore(2)` (via
//! [`crate::cache::residency_of`]) is the fallback on older kernels. The folio probe is in
//! [`super::map`], because it needs the mapping itself.

use crate::cache;
use std::fs::File;
use std::os::fd::AsRawFd;

/// The `cachestat` system call number (the same on every architecture with the unified table).
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

/// Page-cache residency of a file, and how it was measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cached {
    pub cached_pages: u64,
    pub total_pages: u64,
    /// `"cachestat"` or `"mincore"`.
    pub source: &'static str,
}

impl Cached {
    /// Percent of the file's pages in the page cache (100 for an empty file).
    pub fn percent(&self) -> f64 {
        if self.total_pages == 0 {
            100.0
        } else {
            (100.0 * self.cached_pages as f64 / self.total_pages as f64).min(100.0)
        }
    }
}

fn page_size_bytes() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// `cachestat` over the whole file, or `None` where the kernel lacks it.
fn cachestat(file: &File) -> Option<u64> {
    cachestat_range(file, 0, 0) // len 0: to the end of the file
}

/// Cached pages of `len` bytes from `off` (`len` 0: to the end), or `None` without `cachestat`.
fn cachestat_range(file: &File, off: u64, len: u64) -> Option<u64> {
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
    (rc == 0).then_some(stat.nr_cache)
}

/// Measures how much of `file` (of `len_bytes`) is cached: `cachestat`, else `mincore`.
pub fn page_cache(file: &File, len_bytes: u64) -> anyhow::Result<Cached> {
    let total_pages = len_bytes.div_ceil(page_size_bytes());
    if let Some(cached_pages) = cachestat(file) {
        return Ok(Cached {
            cached_pages,
            total_pages,
            source: "cachestat",
        });
    }
    let r = cache::residency_of(file)?;
    Ok(Cached {
        cached_pages: r.resident_pages,
        total_pages: r.total_pages,
        source: "mincore",
    })
}

/// For each `(offset, len)` chunk, whether at least 90% of its pages are cached; `None` where
/// the kernel lacks `cachestat` (a `mincore` per chunk would cost more than it saves).
pub fn cached_chunks(file: &File, chunks: &[(u64, u64)]) -> Option<Vec<bool>> {
    let page = page_size_bytes();
    chunks
        .iter()
        .map(|&(off, len)| {
            let cached = cachestat_range(file, off, len)?;
            Some(cached * 10 >= len.div_ceil(page) * 9)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_freshly_written_file_counts_as_cached_and_an_evicted_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        drop(f);
        let f = File::open(&path).unwrap();
        let warm = page_cache(&f, 1 << 20).unwrap();
        assert_eq!(warm.total_pages, (1 << 20) / page_size_bytes());
        assert!(warm.percent() > 90.0, "{warm:?}");
        cache::evict_file(&f).unwrap();
        let cold = page_cache(&f, 1 << 20).unwrap();
        assert!(cold.percent() < 10.0, "{cold:?}");
    }
}
