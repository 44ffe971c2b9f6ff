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
pub mod caps;
mod failure;
pub mod job;
mod layout;
mod mmap;
mod pread;
mod read;
pub mod room;
pub mod setup;
mod uring;

use crate::config::Method;
pub use crate::measure::WorkerCtx;
pub use buffer::{
    hugetlb_free_bytes, predicted_kind as buffer_kind_predicted, thp_mode, AlignedBuf, BufferError,
    BufferKind, SlotBufs, BUF_ALIGN, HUGE_PAGE_BYTES, MALLOC_OFFSET_BYTES,
};
pub use caps::Caps;
#[cfg(test)]
pub(crate) use failure::tests_support;
pub use failure::{
    close_shared_leftovers, complete_read, descriptor_lost, dispose_job, leave_for_shared_table,
    wanted_len, DescriptorLost, FileShrank,
};
pub use job::{Block, Cursor, Engine, MixDraw, WorkerJob, WriteData};
pub use layout::Layout as BufferLayout;
pub(crate) use uring::SlotRing;

/// What `method` can do, and its engine: the one registration of each method's module (see
/// `caps.rs`). Adding a method is its module, its `mod` line above and its line here.
pub fn caps(method: Method) -> &'static Caps {
    match method {
        Method::Read => &read::CAPS,
        Method::Pread => &pread::CAPS,
        Method::Mmap => &mmap::CAPS,
        Method::IoUring => &uring::CAPS,
        Method::Buffered => &buffered::CAPS,
    }
}

/// The engine implementing `method`.
pub fn engine_for(method: Method) -> &'static dyn Engine {
    caps(method).engine
}

/// Checks that io_uring can be used here, with a message naming another method when it cannot.
pub fn probe_io_uring() -> Result<(), String> {
    uring::probe()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Range;

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
            op: crate::config::Op::Read,
            mix: None,
        }
    }

    #[test]
    fn every_method_is_registered_with_its_own_caps() {
        for &m in Method::ALL {
            assert_eq!(caps(m).method, m, "{m}");
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
    fn a_mixed_cursor_draws_each_blocks_direction_apart_from_its_offsets() {
        let job = |mix: Option<u32>| {
            let mut j = failure::tests_support::read_job(std::path::Path::new("/dev/null"));
            j.setup.op = crate::config::Op::Write;
            j.setup.pattern = crate::config::Pattern::Random;
            j.span = 1 << 20;
            j.max_ops = Some(10_000);
            j.setup.mix_read_pct = mix;
            j
        };
        let pure: Vec<Block> = job(None).cursor().collect();
        let mixed: Vec<Block> = job(Some(70)).cursor().collect();
        let again: Vec<Block> = job(Some(70)).cursor().collect();
        // The same offsets as a pure run, the same directions every time (seeded).
        let offsets = |v: &[Block]| v.iter().map(|b| b.offset).collect::<Vec<_>>();
        assert_eq!(offsets(&pure), offsets(&mixed));
        assert_eq!(mixed, again);
        assert!(pure.iter().all(|b| b.op == crate::config::Op::Write));
        let reads = mixed
            .iter()
            .filter(|b| b.op == crate::config::Op::Read)
            .count();
        assert!((6_800..=7_200).contains(&reads), "{reads} reads of 10000");
    }

    #[test]
    fn looping_cursor_marks_later_passes() {
        let blocks: Vec<Block> = cursor(0..20, 10, true).take(5).collect();
        let first: Vec<bool> = blocks.iter().map(|b| b.first_pass).collect();
        assert_eq!(first, vec![true, true, false, false, false]);
    }
}
