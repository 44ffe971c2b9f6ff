//! The synchronous roads of `fast`: XOR straight from a mapping (`mmap`), or `pread` into a
//! page-aligned buffer per thread (`pread`, and `buffered` for cold files without O_DIRECT).
//!
//! Threads do not get fixed halves of the file: they take [`CHUNK_BYTES`] chunks from a shared
//! counter, so a thread slowed down by another process on its core does not leave the other idle
//! at the end. Chunks are 2 MiB-aligned, which keeps every chunk on whole PMD mappings; each
//! chunk's XOR is rotated by its offset ([`xor_at`]), so the order chunks finish in does not matter.
//!
//! One `unsafe` call stays: `madvise(MADV_POPULATE_READ)` on a chunk of the mapping (rustix's
//! `madvise` is `unsafe`, as advice can change what memory holds).

use super::map::Mapping;
use crate::engine::job::fill_from;
use crate::engine::AlignedBuf;
use crate::xor::xor_at;
use anyhow::{bail, Context};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// Unit of work handed to a thread.
pub const CHUNK_BYTES: u64 = 8 << 20;

/// Threads worth starting for `len_bytes` (no more than there are chunks).
pub fn useful_threads(len_bytes: u64, threads: usize) -> usize {
    threads.clamp(1, len_bytes.div_ceil(CHUNK_BYTES).max(1) as usize)
}

/// The `(offset, len)` chunks of `0..len_bytes`.
pub fn chunks_of(len_bytes: u64) -> Vec<(u64, u64)> {
    (0..len_bytes.div_ceil(CHUNK_BYTES))
        .map(|i| {
            let off = i * CHUNK_BYTES;
            (off, CHUNK_BYTES.min(len_bytes - off))
        })
        .collect()
}

/// Runs `work(offset, len)` over every chunk of `0..len_bytes` on `threads` threads (the caller's
/// thread is one of them) and XORs the results. `init` makes each thread's private state.
pub fn for_each_chunk<S>(
    len_bytes: u64,
    threads: usize,
    init: impl Fn() -> anyhow::Result<S> + Sync,
    work: impl Fn(&mut S, u64, u64) -> anyhow::Result<u32> + Sync,
) -> anyhow::Result<u32> {
    for_each_listed(&chunks_of(len_bytes), threads, init, work)
}

/// Like [`for_each_chunk`] over an explicit list of `(offset, len)` chunks.
pub fn for_each_listed<S>(
    chunks: &[(u64, u64)],
    threads: usize,
    init: impl Fn() -> anyhow::Result<S> + Sync,
    work: impl Fn(&mut S, u64, u64) -> anyhow::Result<u32> + Sync,
) -> anyhow::Result<u32> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let worker = || -> anyhow::Result<u32> {
        let mut state = init()?;
        let mut x = 0u32;
        while !failed.load(Ordering::Relaxed) {
            let Some(&(off, len)) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            match work(&mut state, off, len) {
                Ok(v) => x ^= v,
                Err(e) => {
                    failed.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        Ok(x)
    };
    let threads = threads.clamp(1, chunks.len().max(1));
    std::thread::scope(|s| {
        let mut others = Vec::with_capacity(threads);
        for _ in 1..threads {
            match spawn_in(s, worker) {
                Ok(h) => others.push(h),
                Err(e) => {
                    // The threads already started stop at their next chunk; the scope waits.
                    failed.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        let mut x = worker()?;
        for h in others {
            x ^= h
                .join()
                .map_err(|_| anyhow::anyhow!("a worker thread panicked"))??;
        }
        Ok(x)
    })
}

/// `f` on a new thread of scope `s`, through [`std::thread::Builder`]: a process at its thread
/// limit (`RLIMIT_NPROC`, `ulimit -u`) gets the error, "spawning a worker thread: ...", where
/// `Scope::spawn` would panic.
pub fn spawn_in<'scope, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, '_>,
    f: impl FnOnce() -> T + Send + 'scope,
) -> anyhow::Result<std::thread::ScopedJoinHandle<'scope, T>> {
    std::thread::Builder::new()
        .name("diskscope-fast".into())
        .spawn_scoped(s, f)
        .context("spawning a worker thread")
}

/// XOR of a mapped file, chunk by chunk.
pub fn mmap_road(map: &Mapping, threads: usize) -> anyhow::Result<u32> {
    mmap_chunks(map, &chunks_of(map.bytes().len() as u64), threads)
}

/// XOR of the listed chunks of a mapped file.
pub fn mmap_chunks(map: &Mapping, chunks: &[(u64, u64)], threads: usize) -> anyhow::Result<u32> {
    let bytes = map.bytes();
    for_each_listed(
        chunks,
        threads,
        || Ok(()),
        |_, off, len| {
            let (o, l) = (off as usize, len as usize);
            // Map the whole chunk in one call instead of one fault per fault-around window:
            // ~10% less CPU where the cache holds 4 KiB folios, neutral for PMD mappings. It
            // fails harmlessly on kernels before 5.14 (the XOR then faults as usual).
            // SAFETY: advice on a part of our own mapping; it reads, never writes.
            let _ = unsafe {
                rustix::mm::madvise(
                    bytes.as_ptr().add(o) as *mut std::ffi::c_void,
                    l,
                    rustix::mm::Advice::LinuxPopulateRead,
                )
            };
            let x = xor_at(off, &bytes[o..o + l]);
            map.check()?;
            Ok(x)
        },
    )
}

/// XOR of `len_bytes` of `file` read with `pread` in `block_bytes` pieces into a page-aligned
/// buffer per thread. A file that ends early is an error, never a silently different XOR.
pub fn pread_road(
    file: &File,
    len_bytes: u64,
    threads: usize,
    block_bytes: usize,
) -> anyhow::Result<u32> {
    for_each_chunk(
        len_bytes,
        threads,
        || Ok(AlignedBuf::new(block_bytes)),
        |buf, off, len| pread_chunk(file, buf, off, len),
    )
}

/// XOR of the listed chunks of `file`, read with `pread` on `threads` threads.
pub fn pread_chunks(
    file: &File,
    chunks: &[(u64, u64)],
    threads: usize,
    block_bytes: usize,
) -> anyhow::Result<u32> {
    for_each_listed(
        chunks,
        threads,
        || Ok(AlignedBuf::new(block_bytes)),
        |buf, off, len| pread_chunk(file, buf, off, len),
    )
}

fn pread_chunk(file: &File, buf: &mut AlignedBuf, off: u64, len: u64) -> anyhow::Result<u32> {
    let mut x = 0u32;
    let mut at = off;
    while at < off + len {
        let want = (buf.len() as u64).min(off + len - at) as usize;
        let data = &mut buf[..want];
        let n = fill_from(data, |s, done| file.read_at(s, at + done as u64))
            .with_context(|| format!("pread at offset {at}"))?;
        if n < want {
            bail!(
                "the file shrank while being read (end of file at {})",
                at + n as u64
            );
        }
        x ^= xor_at(at, data);
        at += want as u64;
    }
    Ok(x)
}

/// XOR of everything `read(2)` returns until end of file, for files whose size is unknown
/// (pseudo-files that report 0, pipes). Returns the XOR and the bytes read.
/// Another descriptor (its own file offset and readahead state) of the file `file` is open on,
/// with `flags` (e.g. `O_DIRECT`): through `/proc/self/fd`, never through the path again, so a
/// path renamed meanwhile cannot make one stream read another file. The inode is compared anyway.
pub fn reopen(file: &File, flags: i32) -> std::io::Result<File> {
    crate::fsguard::reopen(file, flags)
}

pub fn xor_to_end(mut file: &File, block_bytes: usize) -> anyhow::Result<(u32, u64)> {
    use std::io::Read;
    let mut buf = AlignedBuf::new(block_bytes);
    let (mut x, mut at) = (0u32, 0u64);
    loop {
        let n = fill_from(&mut buf, |s, _| file.read(s))
            .with_context(|| format!("read at offset {at}"))?;
        if n == 0 {
            return Ok((x, at));
        }
        x ^= xor_at(at, &buf[..n]);
        at += n as u64;
    }
}

/// The buffered cold road: `streams` threads, each reading its own contiguous part of the file
/// with `pread` on its own descriptor, so the kernel sees that many sequential streams and keeps
/// a readahead window open for each (several streams keep more of the device busy than one).
pub fn buffered_road(
    path: &Path,
    file: &File,
    len_bytes: u64,
    streams: usize,
    block_bytes: usize,
) -> anyhow::Result<u32> {
    buffered_range(path, file, 0, len_bytes, streams, block_bytes)
}

/// [`buffered_road`] over the bytes `start..end` of the file: the parts of the streams are whole
/// chunks from `start` (any offset; the race passes multiples of [`CHUNK_BYTES`], or a
/// 4 KiB-aligned leftover to one stream).
pub fn buffered_range(
    path: &Path,
    file: &File,
    start: u64,
    end: u64,
    streams: usize,
    block_bytes: usize,
) -> anyhow::Result<u32> {
    buffered_range_until(path, file, start, end, streams, block_bytes, None).map(|p| p.xor)
}

/// Offsets a time-boxed stream stops at: the start of what it leaves is O_DIRECT-aligned, so the
/// direct road can read the rest.
pub const STOP_ALIGN: u64 = 4096;

/// What a time-boxed [`buffered_range_until`] read and left.
#[derive(Debug, Clone, PartialEq)]
pub struct Partial {
    /// XOR of the bytes read (each rotated by its offset).
    pub xor: u32,
    /// `(start, end)` ranges left unread when the deadline passed; their starts are
    /// [`STOP_ALIGN`]-aligned when the range's `start` was.
    pub left: Vec<(u64, u64)>,
}

impl Partial {
    /// Bytes left unread.
    pub fn left_bytes(&self) -> u64 {
        self.left.iter().map(|(a, b)| b - a).sum()
    }
}

/// [`buffered_range`] that stops reading at `deadline`: each stream finishes the read in hand
/// (and reads on to the next [`STOP_ALIGN`] boundary), then leaves the rest of its part to the
/// caller. The race uses it so that a buffered probe already slower than O_DIRECT stops costing
/// time the moment it has lost, rather than at the end of its bytes.
pub fn buffered_range_until(
    path: &Path,
    file: &File,
    start: u64,
    end: u64,
    streams: usize,
    block_bytes: usize,
    deadline: Option<Instant>,
) -> anyhow::Result<Partial> {
    let len_bytes = end.saturating_sub(start);
    let streams = useful_threads(len_bytes, streams) as u64;
    let unit = CHUNK_BYTES;
    let units = len_bytes.div_ceil(unit);
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(streams as usize);
        for i in 0..streams {
            let from = start + (units * i / streams * unit).min(len_bytes);
            let to = start + (units * (i + 1) / streams * unit).min(len_bytes);
            // A stream that cannot be started fails the road; those started finish their part
            // (the scope waits for them).
            handles.push(spawn_in(
                s,
                move || -> anyhow::Result<(u32, Option<(u64, u64)>)> {
                    let f = reopen(file, 0).with_context(|| {
                        format!("FILE: cannot open {}", crate::text::shown_path(path))
                    })?;
                    // It only tunes readahead; a failure changes nothing but the speed.
                    let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::Sequential);
                    let mut buf = AlignedBuf::new(block_bytes);
                    match deadline {
                        None => Ok((pread_chunk(&f, &mut buf, from, to - from)?, None)),
                        Some(d) => pread_until(&f, &mut buf, from, to, d),
                    }
                },
            )?);
        }
        let mut out = Partial {
            xor: 0,
            left: Vec::new(),
        };
        for h in handles {
            let (x, left) = h
                .join()
                .map_err(|_| anyhow::anyhow!("a reader thread panicked"))??;
            out.xor ^= x;
            out.left.extend(left);
        }
        Ok(out)
    })
}

/// XOR of `from..to` read in buffer-sized `pread`s until `deadline`; then on to the next
/// [`STOP_ALIGN`] boundary, and the range from there to `to` is returned unread.
fn pread_until(
    file: &File,
    buf: &mut AlignedBuf,
    from: u64,
    to: u64,
    deadline: Instant,
) -> anyhow::Result<(u32, Option<(u64, u64)>)> {
    let mut x = 0u32;
    let mut at = from;
    while at < to {
        if Instant::now() >= deadline {
            let stop = at.next_multiple_of(STOP_ALIGN).min(to);
            x ^= pread_chunk(file, buf, at, stop - at)?;
            return Ok((x, (stop < to).then_some((stop, to))));
        }
        let want = (buf.len() as u64).min(to - at);
        x ^= pread_chunk(file, buf, at, want)?;
        at += want;
    }
    Ok((x, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_range_once_whatever_the_thread_count() {
        let len = 3 * CHUNK_BYTES + 5;
        for threads in [1, 2, 3, 8] {
            let seen = std::sync::Mutex::new(Vec::new());
            for_each_chunk(
                len,
                threads,
                || Ok(()),
                |_, off, l| {
                    seen.lock().unwrap().push((off, l));
                    Ok(0)
                },
            )
            .unwrap();
            let mut seen = seen.into_inner().unwrap();
            seen.sort();
            let total: u64 = seen.iter().map(|c| c.1).sum();
            assert_eq!(total, len, "threads {threads}");
            assert_eq!(seen.last().unwrap(), &(3 * CHUNK_BYTES, 5));
        }
    }

    #[test]
    fn a_failing_chunk_fails_the_whole_run() {
        let r = for_each_chunk(
            4 * CHUNK_BYTES,
            2,
            || Ok(()),
            |_, off, _| {
                if off == 2 * CHUNK_BYTES {
                    bail!("boom")
                }
                Ok(1)
            },
        );
        assert!(r.is_err());
    }

    /// A file of `len` pattern bytes in a temporary directory, and its XOR.
    fn pattern_file(len: u64) -> (tempfile::TempDir, std::path::PathBuf, u32) {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut data = vec![0u8; len as usize];
        crate::pattern::fill(crate::pattern::DEFAULT_SEED, 0, &mut data);
        File::create(&path).unwrap().write_all(&data).unwrap();
        (dir, path, xor_at(0, &data))
    }

    #[test]
    fn a_time_boxed_read_plus_what_it_left_is_the_whole_range_whenever_it_stops() {
        let len = 3 * CHUNK_BYTES + 12_345;
        let (_dir, path, want) = pattern_file(len);
        let file = File::open(&path).unwrap();
        let start = CHUNK_BYTES;
        let want_range = {
            let mut data = vec![0u8; (len - start) as usize];
            file.read_exact_at(&mut data, start).unwrap();
            xor_at(start, &data)
        };
        assert_ne!(want, want_range);
        // Already past (everything left), mid-way for some streams, and never (nothing left);
        // an odd block size makes the stops land off 4 KiB until they are rounded up.
        let now = Instant::now();
        for deadline in [
            now,
            now + std::time::Duration::from_micros(300),
            now + std::time::Duration::from_secs(3600),
        ] {
            for (streams, block) in [(1, 1 << 20), (3, 1000), (4, 65_536)] {
                let p =
                    buffered_range_until(&path, &file, start, len, streams, block, Some(deadline))
                        .unwrap();
                let mut x = p.xor;
                for &(a, b) in &p.left {
                    assert_eq!(a % STOP_ALIGN, 0, "{p:?}");
                    assert!(start <= a && a < b && b <= len, "{p:?}");
                    x ^= buffered_range(&path, &file, a, b, 1, block).unwrap();
                }
                assert_eq!(x, want_range, "streams {streams} block {block}: {p:?}");
            }
        }
        // A deadline already past leaves every stream's whole part (they start chunk-aligned).
        let p = buffered_range_until(&path, &file, 0, len, 2, 1 << 20, Some(now)).unwrap();
        assert_eq!((p.xor, p.left_bytes()), (0, len), "{p:?}");
        // No deadline: nothing is left.
        let p = buffered_range_until(&path, &file, 0, len, 2, 1 << 20, None).unwrap();
        assert_eq!((p.xor, p.left_bytes()), (want, 0));
    }
}
