//! The hybrid road, for a file that is partly cached: the cached 8 MiB chunks are XOR-ed from a
//! mapping on every core while one io_uring reads the rest from the disk with `O_DIRECT`, both
//! at once. Reading everything from the disk would wait for bytes that are already in memory;
//! mapping everything would fetch the missing parts with synchronous page faults, one 2 MiB
//! folio at a time.
//!
//! A chunk counts as cached when `cachestat` finds at least 90% of its pages; a page evicted
//! between the look and the read is faulted in again, so the XOR is right either way.

use super::direct::{direct_ranges, Direct};
use super::map::Mapping;
use super::{probe, roads};
use std::fs::File;
use std::path::Path;

/// XOR of the whole file and a note on the split, or `None` where `cachestat` is missing.
pub fn run(
    path: &Path,
    file: &File,
    len_bytes: u64,
    threads: usize,
    block_bytes: usize,
    queue_depth: u32,
) -> anyhow::Result<Option<(u32, String)>> {
    let chunks = roads::chunks_of(len_bytes);
    let Some(cached) = probe::cached_chunks(file, &chunks) else {
        return Ok(None);
    };
    let mut warm = Vec::new();
    let mut cold: Vec<(u64, u64)> = Vec::new(); // (start, end), adjacent chunks merged
    for (&(off, len), &is_cached) in chunks.iter().zip(&cached) {
        if is_cached {
            warm.push((off, len));
        } else if let Some(last) = cold.last_mut().filter(|r| r.1 == off) {
            last.1 = off + len;
        } else {
            cold.push((off, off + len));
        }
    }
    let note = format!(
        "{} of {} chunks mapped, the rest O_DIRECT",
        warm.len(),
        chunks.len()
    );
    let map = Mapping::new(file, len_bytes)?;
    let (from_cache, from_disk) = std::thread::scope(|s| {
        let disk = roads::spawn_in(s, || {
            direct_ranges(path, file, cold.clone(), block_bytes, queue_depth)
        })?;
        let from_cache = roads::mmap_chunks(&map, &warm, threads);
        let from_disk = disk
            .join()
            .map_err(|_| anyhow::anyhow!("the disk reader thread panicked"));
        anyhow::Ok((from_cache, from_disk))
    })?;
    let from_disk = match from_disk?? {
        Direct::Done(x, _) => x,
        Direct::Unsupported(_) => {
            // No O_DIRECT here: read the missing chunks through the cache instead.
            let missing: Vec<(u64, u64)> = cold
                .iter()
                .flat_map(|&(a, b)| {
                    roads::chunks_of(b - a)
                        .into_iter()
                        .map(move |(o, l)| (a + o, l))
                })
                .collect();
            roads::pread_chunks(file, &missing, 1, block_bytes)?
        }
    };
    Ok(Some((from_cache? ^ from_disk, note)))
}
