//! What `fast` looks at before it picks a road: how much of the file is in the page cache, and
//! whether the cached folios are big enough to be mapped with 2 MiB page-table entries.
//!
//! Residency comes from [`crate::cache::cachestat_pages`] (`cachestat(2)`, microseconds even on a
//! large file), with `mincore(2)` as the fallback on older kernels. The folio probe is in
//! [`super::map`], because it needs the mapping itself.

use crate::cache;
use std::fs::File;

/// Page-cache residency of a file, and how it was measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cached {
    pub cached_pages: u64,
    pub total_pages: u64,
    /// `"cachestat"` or `"mincore"`, or [`UNKNOWN`] when neither can tell.
    pub source: &'static str,
}

/// The `source` of a residency nobody can measure here: `cachestat` refuses a file this user
/// may not write, and `mincore` then says every page is cached, true or not.
pub const UNKNOWN: &str = "unknown: the kernel reports it only to users who may write the file";

impl Cached {
    /// Whether the residency was measured (see [`UNKNOWN`]).
    pub fn known(&self) -> bool {
        self.source != UNKNOWN
    }
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
    rustix::param::page_size() as u64
}

/// Measures how much of `file` (of `len_bytes`) is cached: `cachestat`, else `mincore`.
pub fn page_cache(file: &File, len_bytes: u64) -> anyhow::Result<Cached> {
    let total_pages = len_bytes.div_ceil(page_size_bytes());
    if let Some(cached_pages) = cache::cachestat_pages(file, 0, 0) {
        return Ok(Cached {
            cached_pages,
            total_pages,
            source: "cachestat",
        });
    }
    if !cache::mincore_is_truthful(file) {
        return Ok(Cached {
            cached_pages: 0,
            total_pages,
            source: UNKNOWN,
        });
    }
    let r = cache::residency_by_mincore(file)?;
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
            let cached = cache::cachestat_pages(file, off, len)?;
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
