//! I/O engines: one file per method behind one trait.
//!
//! The job says *what* to move (a range or random offsets of one file, a block size, read or
//! write); the engine decides *how* (which syscalls, which buffers, how many in flight). Engines
//! know nothing of threads, channels or the UI: they pull [`Block`]s from a [`Cursor`], time each
//! operation with [`WorkerCtx::now`] and hand bytes and latency to [`WorkerCtx::record`], which
//! also tells them when to stop. [`WorkerCtx`] lives below, in `measure`: an engine never
//! imports the code that starts its thread. A short read or a lost descriptor is the engine's
//! to notice (`failure.rs`).
//!
//! What costs time but is not I/O happens before the run, in [`setup`]: each job arrives with its
//! I/O slots already made ([`SlotBufs`], physically contiguous for O_DIRECT, see `buffer.rs`) and,
//! for writes, the pattern bytes already generated ([`WriteData`]).

mod buffer;
mod buffered;
mod failure;
mod mmap;
mod pread;
mod read;
pub mod room;
pub mod setup;
mod uring;

use crate::config::{Method, Op, Pattern, SubmitPolicy};
pub use crate::measure::WorkerCtx;
use crate::pattern::Rng;
pub use buffer::{
    hugetlb_free_bytes, predicted_kind as buffer_kind_predicted, thp_mode, AlignedBuf, BufferError,
    BufferKind, SlotBufs, BUF_ALIGN, HUGE_PAGE_BYTES, MALLOC_OFFSET_BYTES,
};
#[cfg(test)]
pub(crate) use failure::tests_support;
pub use failure::{
    close_shared_leftovers, complete_read, descriptor_lost, dispose_job, leave_for_shared_table,
    wanted_len, DescriptorLost, FileShrank,
};
use std::fs::File;
use std::ops::Range;
use std::sync::Arc;
pub(crate) use uring::SlotRing;

/// One worker's share of a run.
pub struct WorkerJob {
    pub worker: usize,
    /// This worker's own descriptor (one fd per thread).
    pub file: File,
    pub op: Op,
    pub block_size: usize,
    /// Sequential range of this worker.
    pub range: Range<u64>,
    /// Random pattern: offsets are drawn from `0..span` (the run's whole range).
    pub span: u64,
    pub pattern: Pattern,
    /// Start over at the beginning of the range when it ends (time-bounded runs).
    pub loop_range: bool,
    /// Random pattern: number of operations to do, if bounded by count.
    pub max_ops: Option<u64>,
    pub queue_depth: u32,
    /// Seed of the data pattern (writes) and of random offsets.
    pub seed: u64,
    /// O_DIRECT: lengths must stay aligned, so the last block of a file is asked for in full
    /// and comes back short at end of file.
    pub direct: bool,
    /// io_uring: when queued operations are handed to the kernel.
    pub submit: SubmitPolicy,
    /// I/O buffers made before the run starts (see [`WorkerJob::take_slots`]).
    pub buffers: Option<SlotBufs>,
    /// Writes: the pattern bytes of the whole span, generated before the run starts; `None`
    /// when they did not fit in memory (then each block is generated just before its write).
    pub write_data: Option<Arc<WriteData>>,
}

impl WorkerJob {
    /// The job's I/O slots (`count` of `block_size` bytes), made before the clock started, or
    /// made now if the job came without them: contiguous memory for O_DIRECT.
    pub fn take_slots(&mut self, count: usize) -> SlotBufs {
        match self.buffers.take() {
            Some(b) if b.count() >= count && b.slot_bytes() >= self.block_size => b,
            _ => SlotBufs::new(count, self.block_size, self.direct),
        }
    }

    /// The job's one I/O buffer (engines with one operation in flight).
    pub fn take_buffer(&mut self) -> AlignedBuf {
        self.take_slots(1).into_single(self.block_size)
    }

    /// The bytes to write at block `b`: the pre-generated data, or `scratch` filled now.
    #[inline]
    pub fn write_bytes<'a>(&'a self, b: &Block, scratch: &'a mut [u8]) -> &'a [u8] {
        match &self.write_data {
            Some(d) if d.covers(b.offset, b.len) => d.at(b.offset, b.len),
            _ => {
                let data = &mut scratch[..b.len];
                crate::pattern::fill(self.seed, b.offset, data);
                data
            }
        }
    }

    pub fn cursor(&self) -> Cursor {
        Cursor {
            next: self.range.start,
            range: self.range.clone(),
            span: self.span,
            block_size: self.block_size as u64,
            loop_range: self.loop_range,
            pass: 0,
            random: (self.pattern == Pattern::Random)
                .then(|| Rng::new(self.seed ^ (self.worker as u64 + 1).wrapping_mul(0x9E37))),
            left: self.max_ops,
            full_blocks: self.direct,
        }
    }
}

/// One operation to perform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub offset: u64,
    pub len: usize,
    /// Part of the first pass over the range: only these count towards the XOR, so looping runs
    /// still report the range's checksum.
    pub first_pass: bool,
}

/// Produces the offsets of a worker: sequential through its range (optionally looping), or
/// uniformly random block-aligned offsets in the run's span.
pub struct Cursor {
    next: u64,
    range: Range<u64>,
    span: u64,
    block_size: u64,
    loop_range: bool,
    pass: u64,
    random: Option<Rng>,
    left: Option<u64>,
    full_blocks: bool,
}

impl Cursor {
    /// Whether the range has been covered completely at least once.
    pub fn completed_pass(&self) -> bool {
        self.random.is_none() && (self.pass > 0 || self.next >= self.range.end)
    }
}

impl Cursor {
    /// Length of the block at `offset` when the data ends at `end`: clipped, except with
    /// O_DIRECT, where the full (aligned) block is asked for and the read returns short.
    #[inline]
    fn clip(&self, offset: u64, end: u64) -> usize {
        if self.full_blocks {
            self.block_size as usize
        } else {
            self.block_size.min(end - offset) as usize
        }
    }
}

impl Iterator for Cursor {
    type Item = Block;

    #[inline]
    fn next(&mut self) -> Option<Block> {
        if let Some(left) = &mut self.left {
            if *left == 0 {
                return None;
            }
            *left -= 1;
        }
        if let Some(rng) = &mut self.random {
            let blocks = self.span.div_ceil(self.block_size);
            if blocks == 0 {
                return None;
            }
            let offset = rng.below(blocks) * self.block_size;
            let len = self.clip(offset, self.span);
            return Some(Block {
                offset,
                len,
                first_pass: true,
            });
        }
        if self.next >= self.range.end {
            if !self.loop_range || self.range.is_empty() {
                return None;
            }
            self.next = self.range.start;
            self.pass += 1;
        }
        let offset = self.next;
        let len = self.clip(offset, self.range.end);
        self.next = (offset + len as u64).min(self.range.end);
        Some(Block {
            offset,
            len,
            first_pass: self.pass == 0,
        })
    }
}

/// The bytes `run -w` writes at offsets `0..len`, generated once before the run (the pattern is a
/// pure function of the offset, so every pass, block size and thread split writes these bytes).
pub struct WriteData {
    bytes: AlignedBuf,
}

impl WriteData {
    /// Generates the pattern of `seed` for `0..len_bytes` in memory backed as `backing` asks
    /// (`auto`: transparent huge pages where offered, without using up the small hugetlb pool
    /// the I/O slots may need); an error when the memory cannot be had.
    pub fn generate(
        seed: u64,
        len_bytes: usize,
        backing: crate::config::Buffers,
    ) -> Result<Self, BufferError> {
        let mut bytes = match backing {
            crate::config::Buffers::Auto => AlignedBuf::large(len_bytes)?,
            _ => AlignedBuf::allocate(len_bytes, backing, false)?,
        };
        crate::pattern::fill(seed, 0, &mut bytes);
        Ok(WriteData { bytes })
    }

    /// Whether `offset..offset + len` lies inside the generated bytes.
    pub fn covers(&self, offset: u64, len: usize) -> bool {
        offset
            .checked_add(len as u64)
            .is_some_and(|end| end <= self.bytes.len() as u64)
    }

    /// The bytes at `offset..offset + len` (panics outside; check with [`WriteData::covers`]).
    pub fn at(&self, offset: u64, len: usize) -> &[u8] {
        &self.bytes[offset as usize..offset as usize + len]
    }

    /// Generated bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether nothing was generated.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

/// One I/O method.
pub trait Engine: Sync {
    /// Runs one worker's job to the end of its cursor or until `ctx.record` says stop. Returns
    /// whether the worker covered its whole range at least once (so its XOR share is complete).
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool>;
}

/// The engine implementing `method`.
pub fn engine_for(method: Method) -> &'static dyn Engine {
    match method {
        Method::Read => &read::ReadEngine,
        Method::Pread => &pread::PreadEngine,
        Method::Mmap => &mmap::MmapEngine,
        Method::IoUring => &uring::UringEngine,
        Method::Buffered => &buffered::BufferedEngine,
    }
}

/// Checks that io_uring can be used here, with a message naming another method when it cannot.
pub fn probe_io_uring() -> Result<(), String> {
    uring::probe()
}

/// Reads until `buf` is full or end of file, with `f` doing one read call; returns bytes read.
#[inline]
pub(crate) fn fill_from(
    buf: &mut [u8],
    mut f: impl FnMut(&mut [u8], usize) -> std::io::Result<usize>,
) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f(&mut buf[done..], done) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Writes all of `buf`, with `f` doing one write call.
#[inline]
pub(crate) fn drain_to(
    buf: &[u8],
    mut f: impl FnMut(&[u8], usize) -> std::io::Result<usize>,
) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match f(&buf[done..], done) {
            Ok(0) => return Err(std::io::Error::from(std::io::ErrorKind::WriteZero)),
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The write loop of the engines that write at the file position (`read`'s `write(2)`,
/// `buffered`'s `BufWriter`): seek only when the next block does not start where the last one
/// ended, write it whole, then XOR and record it. The bytes come pre-generated (or are generated
/// before the clock is read), so only the calls are timed. `seek_what` and `write_what` name the
/// calls in errors (`lseek to offset N`, `write at offset N`).
pub(crate) fn write_at_position<W: std::io::Write + std::io::Seek>(
    out: &mut W,
    job: &WorkerJob,
    cursor: &mut Cursor,
    buf: &mut [u8],
    ctx: &mut WorkerCtx,
    seek_what: &str,
    write_what: &str,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let mut pos = u64::MAX;
    for b in cursor.by_ref() {
        let data = job.write_bytes(&b, buf);
        let t0 = ctx.issue();
        if pos != b.offset {
            out.seek(std::io::SeekFrom::Start(b.offset))
                .with_context(|| format!("{seek_what} to offset {}", b.offset))?;
        }
        drain_to(data, |s, _| out.write(s))
            .with_context(|| format!("{write_what} at offset {}", b.offset))?;
        let t1 = ctx.now();
        pos = b.offset + b.len as u64;
        ctx.xor(b.offset, b.first_pass, data);
        if !ctx.record(b.len as u64, t0, t1) {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(range: Range<u64>, bs: u64, looping: bool) -> Cursor {
        Cursor {
            next: range.start,
            span: range.end,
            range,
            block_size: bs,
            loop_range: looping,
            pass: 0,
            random: None,
            left: None,
            full_blocks: false,
        }
    }

    #[test]
    fn sequential_cursor_covers_the_range_exactly_once() {
        let blocks: Vec<Block> = cursor(10..35, 10, false).collect();
        let lens: Vec<usize> = blocks.iter().map(|b| b.len).collect();
        assert_eq!(lens, vec![10, 10, 5]);
        assert_eq!(blocks[2].offset, 30);
    }

    #[test]
    fn looping_cursor_marks_later_passes() {
        let blocks: Vec<Block> = cursor(0..20, 10, true).take(5).collect();
        let first: Vec<bool> = blocks.iter().map(|b| b.first_pass).collect();
        assert_eq!(first, vec![true, true, false, false, false]);
    }
}
