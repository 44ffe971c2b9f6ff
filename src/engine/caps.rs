//! What an I/O method can do, in one record per method: the facts that the planner, the memory
//! budget, the model, the fio translation and the explorer ask about a method, instead of each
//! comparing it with `Method::IoUring` or `Method::Mmap` in its own words.
//!
//! The shape is fio's `ioengine_ops` with its flags: each engine module declares its own
//! [`Caps`] (`read::CAPS`, `uring::CAPS`, ...) beside the code the facts describe, and
//! `engine::caps` (in `engine/mod.rs`) is the one registration, an exhaustive match from
//! [`Method`] to those records, so a method added to the enum without a record does not compile.
//! This file holds only the record's type and the questions derived from it; it imports no engine
//! module, so every engine can name it without an import cycle.
//!
//! One fact is not stored here: whether a method can use O_DIRECT. `RunSpec::validate`
//! (`config.rs`, below the engine) refuses `--direct` for a method that cannot, so the fact lives
//! there (`Method::supports_direct`, an exhaustive match) and [`Caps::direct`] reads it.

use super::job::Engine;
use crate::config::{Method, Op};

/// The capabilities of one I/O method. Each engine module declares one as `CAPS`.
pub struct Caps {
    /// The method these facts describe.
    pub method: Method,
    /// The engine that runs it.
    pub engine: &'static dyn Engine,
    /// Checks that the method can run on this machine (a kernel feature it needs), with a
    /// message naming another method when it cannot; `None` where it always can.
    pub probe: Option<fn() -> Result<(), String>>,
    /// Keeps a queue of operations in flight per worker, so `queue_depth` applies; the other
    /// methods have one operation in flight per worker, whatever depth was asked.
    pub queued: bool,
    /// A read copies the data out of the page cache into a buffer (the `read(2)` family) unless
    /// the file is opened with O_DIRECT; false for a method that reads the cache in place.
    pub copies_through_cache: bool,
    /// Maps the file into memory: an operation is a touch of its pages, not a call, and a file
    /// written this way must have its final length before the run.
    pub maps_file: bool,
    /// Block-sized I/O buffers (slots) a worker uses per unit of queue depth (one unit for a
    /// method that is not queued): 0 for a method that moves data through no buffer of its own.
    pub slots_per_depth: usize,
    /// Bytes of buffer a worker holds beyond its slots (the stdio-like buffer of `buffered`).
    pub extra_buffer_bytes: u64,
    /// fio's `ioengine` closest to the method (`bench/fio`, `-fio.txt`).
    pub fio_engine: &'static str,
    /// What fio's engine does differently from ours on reads, when it does (a caveat printed
    /// beside the translated job).
    pub fio_read_caveat: Option<&'static str>,
    /// The same on writes.
    pub fio_write_caveat: Option<&'static str>,
    /// The system call a write is made with (`read` writes with `write(2)`, `pread` with
    /// `pwrite(2)`); the method's own name where it covers both directions.
    pub write_call: &'static str,
}

impl Caps {
    /// Whether the method can use O_DIRECT (see the module doc for why config holds this fact).
    pub fn direct(&self) -> bool {
        self.method.supports_direct()
    }

    /// The queue depth a worker runs at when `asked` was asked: `asked` for a queued method, 1
    /// for the others (one operation in flight per thread).
    pub fn queue_depth(&self, asked: u32) -> u32 {
        if self.queued {
            asked
        } else {
            1
        }
    }

    /// I/O slots one worker uses at queue depth `queue_depth`.
    pub fn slots(&self, queue_depth: u32) -> usize {
        let depth = if self.queued {
            queue_depth.max(1) as usize
        } else {
            1
        };
        self.slots_per_depth * depth
    }

    /// Whether a read with `direct` copies its data out of the page cache into the buffer.
    pub fn copies(&self, direct: bool) -> bool {
        self.copies_through_cache && !direct
    }

    /// The name of the call doing `op`: the write call for writes, the method's name for reads.
    pub fn call_name(&self, op: Op) -> &'static str {
        match op {
            Op::Write => self.write_call,
            Op::Read => self.method.as_str(),
        }
    }

    /// fio's caveat for this method doing `op`, if any.
    pub fn fio_caveat(&self, op: Op) -> Option<&'static str> {
        match op {
            Op::Read => self.fio_read_caveat,
            Op::Write => self.fio_write_caveat,
        }
    }
}
