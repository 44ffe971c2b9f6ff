//! The cold road: `O_DIRECT` reads through one io_uring kept `queue_depth` deep, straight from the
//! disk into registered buffers of physically contiguous memory where the system offers it
//! (hugetlb, then transparent huge pages: a 1 MiB read into scattered 4 KiB pages is split into
//! two device requests on a virtio disk; see `engine::buffer`), XOR-ed as they complete. The ring
//! and its slots are the engine's [`SlotRing`], which holds the reasoning about memory lent to
//! the kernel.
//!
//! Why this and not buffered reads: for a file that is not cached the disk is the limit, and the
//! page cache only adds a copy and the work of filling (and later evicting) it. One ring on one
//! thread keeps the device queue full; XOR-ing 1 MiB takes far less time than the disk needs to
//! deliver it, so no second thread is needed. A read that comes back short before the end of the
//! file is finished with a plain `pread`, so the XOR never skips bytes.

use crate::engine::job::fill_from;
use crate::engine::{BufferKind, SlotBufs, SlotRing};
use crate::xor::xor_at;
use anyhow::{anyhow, bail, Context};
use io_uring::types;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Alignment of offsets, lengths and buffers for O_DIRECT.
const DIRECT_ALIGN: usize = 4096;

/// What the direct road did.
pub enum Direct {
    /// The XOR of the file, and the memory its buffers were made of.
    Done(u32, BufferKind),
    /// O_DIRECT or io_uring cannot be used here (the reason); take another road.
    Unsupported(String),
}

/// XOR of the first `len_bytes` of the file at `path` (also open as `file`, without O_DIRECT),
/// read as `streams` contiguous parts served round-robin: the device (and, in a VM, the host's
/// own readahead) sees that many sequential streams instead of one.
pub fn direct_road(
    path: &Path,
    file: &File,
    len_bytes: u64,
    block_bytes: usize,
    queue_depth: u32,
    streams: usize,
) -> anyhow::Result<Direct> {
    let block = block_bytes.next_multiple_of(DIRECT_ALIGN) as u64;
    let blocks = len_bytes.div_ceil(block);
    let streams = (streams.max(1) as u64).min(blocks.max(1));
    let ranges: Vec<(u64, u64)> = (0..streams)
        .map(|i| {
            let start = (blocks * i / streams * block).min(len_bytes);
            let end = (blocks * (i + 1) / streams * block).min(len_bytes);
            (start, end)
        })
        .filter(|(a, b)| a < b)
        .collect();
    direct_ranges(path, file, ranges, block_bytes, queue_depth)
}

/// XOR of the `(start, end)` byte ranges of the file (starts 4 KiB-aligned), served round-robin
/// by one ring.
pub fn direct_ranges(
    path: &Path,
    file: &File,
    ranges: Vec<(u64, u64)>,
    block_bytes: usize,
    queue_depth: u32,
) -> anyhow::Result<Direct> {
    let block_bytes = block_bytes.next_multiple_of(DIRECT_ALIGN);
    // The file already open, through /proc/self/fd (never the path again): see `roads::reopen`.
    let _ = path;
    let direct = match super::roads::reopen(file, libc::O_DIRECT) {
        Ok(f) => f,
        Err(e) => return Ok(Direct::Unsupported(format!("O_DIRECT open failed: {e}"))),
    };
    let blocks: u64 = ranges
        .iter()
        .map(|(a, b)| (b - a).div_ceil(block_bytes as u64))
        .sum();
    if blocks == 0 {
        return Ok(Direct::Done(0, BufferKind::Pages));
    }
    let qd = (queue_depth.max(1) as u64).min(blocks) as usize;
    // Physically contiguous slots where the system offers them: a 1 MiB read into scattered
    // 4 KiB pages is split into two device requests (see engine::buffer).
    let bufs = SlotBufs::new(qd, block_bytes, true);
    let mut ring = match SlotRing::new(bufs, None) {
        Ok(r) => r,
        Err(e) => return Ok(Direct::Unsupported(format!("io_uring unavailable: {e}"))),
    };
    let kind = ring.kind();
    let fd = types::Fd(direct.as_raw_fd());
    let mut offsets = vec![0u64; qd];
    let mut wants = vec![0usize; qd];
    let mut cursors = ranges;
    let mut turn = 0usize;
    let mut inflight = 0usize;
    let mut free: Vec<usize> = (0..qd).rev().collect();
    let mut x = 0u32;
    let mut got_data = false;
    let mut done: Vec<(usize, i32)> = Vec::with_capacity(qd);
    // Set when the run must end early; we still reap every read in flight before returning, so
    // the kernel never writes into a buffer we have freed.
    let mut outcome: Option<anyhow::Result<Direct>> = None;
    loop {
        while outcome.is_none() && !cursors.is_empty() {
            let Some(slot) = free.pop() else { break };
            turn = (turn + 1) % cursors.len();
            let (next_off, end) = cursors[turn];
            let want = (block_bytes as u64).min(end - next_off) as usize;
            let req = want.next_multiple_of(DIRECT_ALIGN) as u32;
            // A failure here cannot happen (at most `qd` in flight); if it did, the ring keeps
            // the memory of what is in flight alive when it is dropped.
            ring.queue_read(fd, slot, req as usize, next_off)?;
            offsets[slot] = next_off;
            wants[slot] = want;
            if next_off + want as u64 >= end {
                cursors.swap_remove(turn);
            } else {
                cursors[turn].0 += want as u64;
            }
            inflight += 1;
        }
        if inflight == 0 {
            break;
        }
        ring.submit_and_reap(&mut done)?;
        for &(slot, res) in &done {
            inflight -= 1;
            free.push(slot);
            if outcome.is_some() {
                continue;
            }
            let (off, want) = (offsets[slot], wants[slot]);
            if res < 0 {
                let err = std::io::Error::from_raw_os_error(-res);
                outcome = Some(if !got_data && res == -libc::EINVAL {
                    Ok(Direct::Unsupported(format!("O_DIRECT read refused: {err}")))
                } else {
                    Err(anyhow!("O_DIRECT read at offset {off}: {err}"))
                });
                continue;
            }
            got_data = true;
            match finish_block(file, ring.slot_mut(slot), off, res as usize, want) {
                Ok(()) => x ^= xor_at(off, &ring.slot(slot)[..want]),
                Err(e) => outcome = Some(Err(e)),
            }
        }
    }
    drop(ring);
    outcome.unwrap_or(Ok(Direct::Done(x, kind)))
}

/// Completes a block of which the kernel returned `got` of `want` bytes: a short read before the
/// end we measured is finished through the page cache, and a file that shrank is an error.
fn finish_block(
    file: &File,
    buf: &mut [u8],
    off: u64,
    got: usize,
    want: usize,
) -> anyhow::Result<()> {
    let mut n = got.min(want);
    if n < want {
        let more = fill_from(&mut buf[n..want], |s, d| {
            file.read_at(s, off + (n + d) as u64)
        })
        .with_context(|| format!("pread at offset {}", off + n as u64))?;
        n += more;
        if n < want {
            bail!(
                "the file shrank while being read (end of file at {})",
                off + n as u64
            );
        }
    }
    Ok(())
}
