//! The cold road, chosen by measuring both: `O_DIRECT` through one deep io_uring, or buffered
//! `pread` streams with the kernel's readahead.
//!
//! Which is faster depends on the device and on what sits between it and us, not on anything
//! `fast` can look up: on a bare NVMe disk O_DIRECT saves the page cache's copy and wins; on a VM
//! whose host caches the disk image the host's own readahead can make buffered streams faster
//! than any O_DIRECT depth (issue 20 saw a C buffered 2-thread loop at 2.69 GiB/s against fio's
//! best O_DIRECT 2.37). And on a VM that gives free memory back to its host (virtio-balloon free
//! page reporting, [`crate::explain::context::Context::free_page_reporting`]) the buffered road's
//! speed depends on the memory the page cache is filled into: right after another big file was
//! evicted it is still backed (lab VM: 2.2–2.5 GiB/s), a few seconds later it is not and every
//! page is faulted in by the host (0.7–0.8 GiB/s), while O_DIRECT into reused buffers ran at
//! 2.1–2.6 once the host had taken the memory back, and at 340–1000 MiB/s while it did (5–15 s
//! after a 4 GiB eviction): so the probes can disagree with the rest of the file right after a
//! large eviction, and a benchmark must wait for the host (bench/compare.sh, `SETTLE_S`); `fast`
//! does not race on such a VM. Elsewhere a cold file large enough to be worth it is read as a
//! race: the first [`probe_bytes`] with the direct road, the next as many with the buffered road,
//! each timed, and the rest with the one that moved more bytes per second.
//!
//! The buffered probe is stopped the moment it has lost: once it has run longer than the direct
//! probe took for the same bytes (less [`BUFFERED_MARGIN`]), it cannot be faster, so each stream
//! stops after the read in hand and the direct road reads what they left (on the lab VM's
//! settled memory it stopped after 112–195 MiB of its 256). The buffered probe gives each stream at least
//! [`STREAM_PROBE_BYTES`] (fewer streams on a small probe, and the rest read with as many): a
//! readahead window grows to its full size over the first megabytes of a stream, so a stream of
//! 8 MiB measures the ramp, not the road (seen on the lab VM: 163 MiB/s for 4 streams of 8 MiB,
//! loaded). O_DIRECT wins a tie within [`BUFFERED_MARGIN`], as it costs less CPU and leaves the
//! page cache alone. Nothing is read twice: every range is XOR-ed once, rotated by its offset, so
//! the answer does not depend on the winner.
//!
//! The figures and the choice are in the report's reason (and `fast -v`), so a user sees why.

use super::direct::{direct_ranges, Direct};
use super::roads;
use crate::engine::BufferKind;
use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

/// Files smaller than this are not raced: the direct road is taken (the probes would be most of
/// the file, and their setup a large share of the time).
pub const RACE_MIN_FILE_BYTES: u64 = 512 << 20;
/// Least bytes each buffered stream reads in the probe.
pub const STREAM_PROBE_BYTES: u64 = 64 << 20;
/// Buffered reads win only when faster than O_DIRECT by more than this share.
pub const BUFFERED_MARGIN: f64 = 0.02;

/// Bytes each contender reads in the race: an eighth of the file, between 64 and 256 MiB, at
/// most half the file, in whole chunks (so every range starts O_DIRECT-aligned); 0 for a file
/// under two chunks.
pub fn probe_bytes(len_bytes: u64) -> u64 {
    let p = (len_bytes / 8)
        .clamp(64 << 20, 256 << 20)
        .min(len_bytes / 2);
    p / roads::CHUNK_BYTES * roads::CHUNK_BYTES
}

/// How the cold roads read: bytes per read, reads in flight on the direct road, streams of each.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub block_bytes: usize,
    pub queue_depth: u32,
    pub direct_streams: usize,
    pub buffered_streams: usize,
}

/// The road that won the race (the parent's `Road` has more; this module does not import it,
/// so the parent and the race do not import each other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Winner {
    Direct,
    Buffered,
}

impl Winner {
    /// The road's name, as `--road` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Winner::Direct => "direct",
            Winner::Buffered => "buffered",
        }
    }
}

/// What the race did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub xor: u32,
    /// The road that read the rest.
    pub winner: Winner,
    /// The direct probe's rate, MiB/s (None: O_DIRECT or io_uring refused here).
    pub direct_mib_s: Option<f64>,
    /// The buffered probe's rate, MiB/s, over the bytes it read before it won or was stopped
    /// (0 where it did not run).
    pub buffered_mib_s: f64,
    /// Streams the buffered road read with (in the probe, and the rest where it won).
    pub buffered_streams: usize,
    /// The memory of the direct road's buffers, when it ran.
    pub direct_buffers: Option<BufferKind>,
    /// The race in words, for the report's reason.
    pub note: String,
}

/// `(start, end)` of `start..end` cut into `streams` parts for the direct road: at multiples of
/// `block` rounded up to a page, since O_DIRECT needs every start 4 KiB-aligned (a 6K block cut
/// into 2 streams started one at 8191.5 pages).
fn split(start: u64, end: u64, streams: usize, block: u64) -> Vec<(u64, u64)> {
    let block = block.max(1).next_multiple_of(roads::STOP_ALIGN);
    let blocks = (end - start).div_ceil(block);
    let n = (streams.max(1) as u64).min(blocks.max(1));
    (0..n)
        .map(|i| {
            let a = (start + blocks * i / n * block).min(end);
            let b = (start + blocks * (i + 1) / n * block).min(end);
            (a, b)
        })
        .filter(|(a, b)| a < b)
        .collect()
}

fn mib_s(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / (1024.0 * 1024.0) / took.as_secs_f64().max(1e-9)
}

/// Races the direct and buffered roads on `probe` bytes each, then reads the rest of the file
/// with the faster (see the module doc). `log` gets the figures as they come.
pub fn run(
    path: &Path,
    file: &File,
    len_bytes: u64,
    probe: u64,
    plan: Plan,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<Outcome> {
    let probe = probe.min(len_bytes / 2) / roads::CHUNK_BYTES * roads::CHUNK_BYTES;
    let block = plan.block_bytes.max(1);
    let (qd, ds) = (plan.queue_depth, plan.direct_streams);
    // Streams of at least STREAM_PROBE_BYTES each in the probe, and as many for the rest.
    let bs = (probe / STREAM_PROBE_BYTES).clamp(1, plan.buffered_streams.max(1) as u64) as usize;
    if probe == 0 {
        // Too small to race: the direct road reads it all.
        return whole_direct(path, file, len_bytes, plan, log);
    }
    // 1. O_DIRECT on the first probe.
    let t = Instant::now();
    let first = direct_ranges(path, file, split(0, probe, ds, block as u64), block, qd)?;
    let direct_took = t.elapsed();
    let (mut x, direct_mib_s, direct_buffers) = match first {
        Direct::Done(x, kind) => (x, Some(mib_s(probe, direct_took)), Some(kind)),
        Direct::Unsupported(why) => {
            // Nothing was XOR-ed (a refusal comes before any data): everything is buffered.
            log(&format!("{why}; reading everything buffered"));
            let x = roads::buffered_range(path, file, 0, len_bytes, plan.buffered_streams, block)?;
            return Ok(Outcome {
                xor: x,
                winner: Winner::Buffered,
                direct_mib_s: None,
                buffered_mib_s: 0.0,
                buffered_streams: roads::useful_threads(len_bytes, plan.buffered_streams),
                direct_buffers: None,
                note: why,
            });
        }
    };
    // 2. Buffered streams with readahead on the next, stopped the moment they have lost: past
    //    the direct probe's time (less the margin), buffered cannot be faster on these bytes, and
    //    what it left is read by the direct road below.
    let direct = direct_mib_s.unwrap_or(0.0);
    let t = Instant::now();
    let deadline = t + direct_took.div_f64(1.0 + BUFFERED_MARGIN);
    let probe_end = 2 * probe;
    let part =
        roads::buffered_range_until(path, file, probe, probe_end, bs, block, Some(deadline))?;
    let buffered_read = probe - part.left_bytes();
    let buffered_mib_s = mib_s(buffered_read, t.elapsed());
    x ^= part.xor;
    let buffered_wins = part.left.is_empty() && buffered_mib_s > direct * (1.0 + BUFFERED_MARGIN);
    let winner = if buffered_wins {
        Winner::Buffered
    } else {
        Winner::Direct
    };
    let stopped = if part.left.is_empty() {
        String::new()
    } else {
        format!(
            ", stopped after {} as it could no longer win",
            crate::size::format_bytes_approx(buffered_read)
        )
    };
    let note = format!(
        "race on {} each: O_DIRECT QD {qd} {:.0} MiB/s ({} buffers), buffered readahead on {bs} stream{} {:.0} MiB/s{stopped}: {} {}",
        crate::size::format_bytes_approx(probe),
        direct,
        direct_buffers.map_or("no", |k| k.as_str()),
        if bs == 1 { "" } else { "s" },
        buffered_mib_s,
        winner.as_str(),
        if buffered_wins {
            "(readahead beats O_DIRECT here)"
        } else if direct > buffered_mib_s * (1.0 + BUFFERED_MARGIN) {
            "(O_DIRECT beats readahead here)"
        } else {
            "(a tie within 2%: O_DIRECT, less CPU and no page cache)"
        }
    );
    log(&note);
    // 3. The rest with the winner. Buffered won only with nothing left in its probe; direct
    //    reads what the buffered probe left, then the file past the probes.
    let mut rest = part.left;
    if probe_end < len_bytes {
        match winner {
            Winner::Buffered => {
                x ^= roads::buffered_range(path, file, probe_end, len_bytes, bs, block)?;
            }
            Winner::Direct => rest.extend(split(probe_end, len_bytes, ds, block as u64)),
        }
    }
    if !rest.is_empty() {
        x ^= match direct_ranges(path, file, rest.clone(), block, qd)? {
            Direct::Done(x, _) => x,
            // Refused after it worked once (cannot happen on the same descriptor's file); read
            // the rest buffered rather than fail, on as many streams as the probe had.
            Direct::Unsupported(_) => rest.iter().try_fold(0u32, |x, &(a, b)| {
                anyhow::Ok(x ^ roads::buffered_range(path, file, a, b, bs, block)?)
            })?,
        };
    }
    Ok(Outcome {
        xor: x,
        winner,
        direct_mib_s,
        buffered_mib_s,
        buffered_streams: bs,
        direct_buffers,
        note,
    })
}

/// The direct road over the whole file (buffered where O_DIRECT is refused), for a file too
/// small to race.
fn whole_direct(
    path: &Path,
    file: &File,
    len_bytes: u64,
    plan: Plan,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<Outcome> {
    let block = plan.block_bytes.max(1);
    let ranges = split(0, len_bytes, plan.direct_streams, block as u64);
    let note = "too small to race: O_DIRECT".to_string();
    log(&note);
    Ok(
        match direct_ranges(path, file, ranges, block, plan.queue_depth)? {
            Direct::Done(x, kind) => Outcome {
                xor: x,
                winner: Winner::Direct,
                direct_mib_s: None,
                buffered_mib_s: 0.0,
                buffered_streams: 0,
                direct_buffers: Some(kind),
                note,
            },
            Direct::Unsupported(why) => Outcome {
                xor: roads::buffered_range(path, file, 0, len_bytes, plan.buffered_streams, block)?,
                winner: Winner::Buffered,
                direct_mib_s: None,
                buffered_mib_s: 0.0,
                buffered_streams: roads::useful_threads(len_bytes, plan.buffered_streams),
                direct_buffers: None,
                note: why,
            },
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn probes_are_whole_chunks_between_64_and_256_mib_and_at_most_half_the_file() {
        assert_eq!(probe_bytes(4 << 30), 256 << 20);
        assert_eq!(probe_bytes(1 << 30), 128 << 20);
        assert_eq!(probe_bytes(512 << 20), 64 << 20);
        // A forced race on a small file: at most half of it, whole chunks, 0 under two chunks.
        assert_eq!(probe_bytes((72 << 20) + 3), 32 << 20);
        assert_eq!(probe_bytes(15 << 20), 0);
        assert_eq!(probe_bytes(900 << 20) % roads::CHUNK_BYTES, 0);
    }

    #[test]
    fn split_starts_every_part_on_a_page_whatever_the_block() {
        let parts = split(0, 64 << 20, 2, 6 << 10);
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|(a, _)| a % 4096 == 0), "{parts:?}");
        assert_eq!((parts[0].0, parts[1].1), (0, 64 << 20));
        assert_eq!(parts[0].1, parts[1].0);
    }

    #[test]
    fn split_covers_the_range_once_at_block_multiples() {
        let parts = split(16 << 20, (40 << 20) + 5, 3, 1 << 20);
        assert_eq!(parts.first().unwrap().0, 16 << 20);
        assert_eq!(parts.last().unwrap().1, (40 << 20) + 5);
        for w in parts.windows(2) {
            assert_eq!(w[0].1, w[1].0);
            assert_eq!(w[0].1 % (1 << 20), 0);
        }
    }

    #[test]
    fn the_race_xors_every_byte_once_whichever_road_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let len: u64 = (40 << 20) + 12_345;
        let mut data = vec![0u8; len as usize];
        crate::pattern::fill(crate::pattern::DEFAULT_SEED, 0, &mut data);
        File::create(&path).unwrap().write_all(&data).unwrap();
        let want = crate::xor::xor_at(0, &data);
        let file = File::open(&path).unwrap();
        crate::cache::evict_file(&file).unwrap();
        let plan = Plan {
            block_bytes: 1 << 20,
            queue_depth: 8,
            direct_streams: 1,
            buffered_streams: 2,
        };
        let mut lines = Vec::new();
        let out = run(&path, &file, len, 8 << 20, plan, &mut |l| {
            lines.push(l.to_string())
        })
        .unwrap();
        assert_eq!(out.xor, want, "{out:?}");
        match out.direct_mib_s {
            Some(d) => {
                assert!(d > 0.0 && out.buffered_mib_s > 0.0, "{out:?}");
                assert!(out.note.contains("race on 8.00 MiB each"), "{}", out.note);
                assert!(lines.iter().any(|l| l == &out.note), "{lines:?}");
                let faster = out.buffered_mib_s > d * (1.0 + BUFFERED_MARGIN);
                assert_eq!(out.winner == Winner::Buffered, faster);
            }
            None => eprintln!("O_DIRECT refused here: {}", out.note),
        }
    }
}
