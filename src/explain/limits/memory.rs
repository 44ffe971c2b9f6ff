//! The memory ceilings: `memcpy` and XOR of a large buffer on 1..=nproc threads, and the
//! copy-and-XOR cost of a cached read at each buffer size and memory kind. Measured directly,
//! not through the runner, because they are not I/O (see the parent's module doc).

use super::budget::*;
use super::machine::*;
use super::runs::{run_read, timed};
use crate::config::{Buffers, CacheMode, Method};
use crate::explain::profile::{same_memory, MemoryCeiling, MemoryLevel, Profile, Stalls};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Thread counts for the memory ceiling: every count up to 8, then powers of two, then nproc
/// (so a 128-core machine still measures in about a minute).
pub(super) fn thread_counts(nproc: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=nproc.min(8)).collect();
    let mut t = 16;
    while t < nproc {
        v.push(t);
        t *= 2;
    }
    if nproc > 8 {
        v.push(nproc);
    }
    v
}

/// Sizes of the L2 and last-level caches of CPU 0, bytes (sysfs), with common defaults.
pub fn cache_sizes() -> (u64, u64) {
    let mut l2 = 0;
    let mut llc = 0;
    for i in 0..8 {
        let d = PathBuf::from(format!("/sys/devices/system/cpu/cpu0/cache/index{i}"));
        let read = |f: &str| std::fs::read_to_string(d.join(f)).ok();
        let (Some(level), Some(size)) = (read("level"), read("size")) else {
            continue;
        };
        if read("type").is_some_and(|t| t.trim() == "Instruction") {
            continue;
        }
        let Ok(bytes) = crate::size::parse_size(size.trim()) else {
            continue;
        };
        match level.trim() {
            "2" => l2 = bytes,
            "3" | "4" => llc = llc.max(bytes),
            _ => {}
        }
    }
    let l2 = if l2 == 0 { 1 << 20 } else { l2 };
    (l2, llc.max(l2 * 4))
}

/// What one memory measurement does with each piece of its source.
#[derive(Debug, Clone, Copy)]
pub(super) enum MemWork {
    /// memcpy into a buffer of this many bytes.
    Copy(usize),
    /// XOR the source in place, 1 MiB at a time.
    Xor,
}

/// The best of [`TRIES`] measurements of `work`, each a third of `d`, and their spread.
pub(super) fn memory_rate_mib_s(
    src: &[u8],
    threads: usize,
    work: MemWork,
    d: Duration,
) -> (f64, f64) {
    let tries: Vec<f64> = (0..TRIES)
        .map(|_| memory_rate_once(src, threads, work, d / TRIES))
        .collect();
    best_and_spread(&tries)
}

/// MiB per second of `threads` threads doing `work` over disjoint parts of `src`, summed.
pub(super) fn memory_rate_once(src: &[u8], threads: usize, work: MemWork, d: Duration) -> f64 {
    let barrier = Barrier::new(threads);
    let chunk = src.len() / threads;
    let piece_bytes = match work {
        MemWork::Copy(b) => b.min(chunk).max(1),
        MemWork::Xor => (1 << 20).min(chunk).max(1),
    };
    let bytes_per_s: f64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let mine = &src[t * chunk..(t + 1) * chunk];
                let barrier = &barrier;
                s.spawn(move || {
                    let mut dst = match work {
                        MemWork::Xor => Vec::new(),
                        _ => vec![1u8; piece_bytes],
                    };
                    barrier.wait();
                    let start = Instant::now();
                    let mut done = 0u64;
                    let mut acc = 0u32;
                    while start.elapsed() < d {
                        for piece in mine.chunks(piece_bytes) {
                            match work {
                                MemWork::Xor => acc ^= crate::xor::xor_aligned(piece),
                                MemWork::Copy(_) => {
                                    dst[..piece.len()].copy_from_slice(piece);
                                    black_box(&mut dst);
                                }
                            }
                            done += piece.len() as u64;
                        }
                    }
                    black_box(acc);
                    (done, start.elapsed())
                })
            })
            .collect();
        // All bytes over the longest thread's time: summing per-thread rates would count twice
        // the bandwidth of threads that took turns on a busy machine instead of running together.
        let (bytes, longest) = hs
            .into_iter()
            .map(|h| h.join().unwrap_or((0, Duration::ZERO)))
            .fold((0u64, Duration::ZERO), |(b, l), (d, e)| (b + d, l.max(e)));
        bytes as f64 / longest.as_secs_f64().max(1e-9)
    });
    bytes_per_s / (1024.0 * 1024.0)
}

/// Copy and XOR apart for `threads` threads, from memory to a buffer that fits L2 (the
/// buffer-size levels are measured through the page cache by [`read_levels`]), with the larger
/// spread of the two.
pub(super) fn memory_ceiling(src: &[u8], threads: usize, d: Duration) -> (MemoryCeiling, f64) {
    let (l2, _) = cache_sizes();
    let small = (l2 / 2).min((src.len() / threads) as u64);
    let (copy_mib_s, copy_spread) =
        memory_rate_mib_s(src, threads, MemWork::Copy(small as usize), d);
    let (xor_mib_s, xor_spread) = memory_rate_mib_s(src, threads, MemWork::Xor, d);
    let m = MemoryCeiling {
        threads,
        copy_mib_s,
        xor_mib_s,
        read_levels: Vec::new(),
    };
    (m, copy_spread.max(xor_spread))
}

/// The memory family measured again, now, for `threads` threads: copy and XOR of a 64 MiB
/// buffer, [`TRIES`] tries of 100 ms each (under a second in all), with their spread and the
/// stalls they ran under. A stored memory ceiling is only as good as the quiet it was measured
/// in, and this one can be had in a second, so a result that lands above its memory bound is
/// judged against the machine as it is now (`explain::judge_result`): each ceiling of that
/// thread count becomes the better of the stored and the fresh one, the copy levels scaled by
/// the same factor, and the family's spread and stalls are the fresh tries'.
pub fn refresh_memory(p: &mut Profile, threads: usize) {
    let src_bytes = 64usize << 20;
    if crate::engine::setup::mem_available_bytes().unwrap_or(0) < (src_bytes as u64) * 8 {
        return;
    }
    let threads = threads.max(1);
    let mut src = vec![0u8; src_bytes];
    crate::pattern::fill(crate::pattern::DEFAULT_SEED, 0, &mut src);
    let watch = StallWatch::start();
    let (fresh, sp) = memory_ceiling(&src, threads, Duration::from_millis(100) * TRIES);
    let stall = watch.finish();
    let Some(m) = p.memory.iter_mut().find(|m| m.threads == threads) else {
        return;
    };
    let gain = ((fresh.copy_mib_s / m.copy_mib_s.max(1e-9))
        .min(fresh.xor_mib_s / m.xor_mib_s.max(1e-9)))
    .max(1.0);
    m.copy_mib_s = m.copy_mib_s.max(fresh.copy_mib_s);
    m.xor_mib_s = m.xor_mib_s.max(fresh.xor_mib_s);
    for l in &mut m.read_levels {
        l.copy_xor_mib_s *= gain;
    }
    if let Some(s) = p.spread.as_mut() {
        s.memory_pct = sp;
        let stalls = s.stalls.get_or_insert_with(Stalls::default);
        stalls.memory = stall;
    }
}

/// What reading a cached file costs per byte, beyond the call, at three block sizes: one whose
/// buffer stays in L2 (64 KiB), two that fit the last-level cache with the data streaming
/// through it easily (LLC / 8 / threads) or hardly (LLC / 2 / threads), and one far beyond it
/// (4 × LLC / threads). Measured with the `read` engine on a warm file, the
/// kernel's own copy included, best of [`TRIES`]; the per-call cost `t_call_s` is taken out
/// so the model can add it back at any block size. Levels the file is too small for are left out.
/// Every size is measured into plain 4 KiB-page buffers and into transparent huge pages (the
/// kernel's copy into one and the other differ by up to 3×, issue 20); each level records the
/// memory the run obtained, and a huge-page pass that got plain pages adds nothing.
/// Returns the levels and the largest spread of their tries.
pub(super) fn read_levels(
    path: &Path,
    file_bytes: u64,
    threads: usize,
    t_call_s: f64,
    d: Duration,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<(Vec<MemoryLevel>, f64)> {
    let (_, llc) = cache_sizes();
    let per_thread_file = file_bytes / threads as u64;
    let t = threads as u64;
    let mut sizes = vec![
        64u64 << 10,
        (llc / 8 / t).max(128 << 10),
        (llc / 2 / t).max(256 << 10),
        (4 * llc / t).max(1 << 20),
    ];
    sizes.sort_unstable();
    sizes.dedup();
    let mut levels: Vec<MemoryLevel> = Vec::new();
    let mut spread: f64 = 0.0;
    let sizes: Vec<u64> = sizes
        .into_iter()
        .filter(|&b| b * 4 <= per_thread_file)
        .collect();
    for want in [Buffers::Plain, Buffers::Thp] {
        for &bs in &sizes {
            let mut s = timed(path, Method::Read, bs, d / TRIES);
            s.setup.threads = threads;
            s.setup.cache = CacheMode::Warm;
            s.setup.buffers = want;
            let mut tries = Vec::new();
            let mut got = want;
            for _ in 0..TRIES {
                let r = run_read(&s, stop)?;
                got = r.setup.buffers.known().unwrap_or(want);
                tries.push(r.figures.mib_s);
            }
            let known = levels
                .iter()
                .any(|l| l.buffer_bytes == bs && same_memory(l.buffers, got));
            if known {
                continue;
            }
            if let Some(level) = level_of(&tries, bs, threads, t_call_s, got, &mut spread) {
                levels.push(level);
            }
        }
    }
    levels.sort_by_key(|l| (l.buffers != Buffers::Plain, l.buffer_bytes));
    Ok((levels, spread))
}

/// The level of one buffer size and memory from the throughput of its tries (None when none
/// moved a byte); widens `spread` by theirs.
pub(super) fn level_of(
    tries: &[f64],
    bs: u64,
    threads: usize,
    t_call_s: f64,
    buffers: Buffers,
    spread: &mut f64,
) -> Option<MemoryLevel> {
    let (best_mib_s, level_spread) = best_and_spread(tries);
    if best_mib_s <= 0.0 {
        return None;
    }
    *spread = spread.max(level_spread);
    let per_thread_bytes_s = best_mib_s * 1024.0 * 1024.0 / threads as f64;
    let t_op = bs as f64 / per_thread_bytes_s;
    let t_mem = (t_op - t_call_s).max(t_op * 0.05);
    Some(MemoryLevel {
        buffer_bytes: bs,
        copy_xor_mib_s: threads as f64 * bs as f64 / t_mem / (1024.0 * 1024.0),
        buffers,
    })
}
