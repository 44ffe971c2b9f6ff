//! `io_uring`: a real submission queue of `queue_depth` entries kept full. Buffers are registered
//! with the ring (fixed buffers, which spare the kernel a page pin per I/O) when the kernel allows,
//! with plain reads as the fallback. An operation's latency runs from just before the submitting
//! `io_uring_enter` to the reaping of its completion, like fio's clat+slat.
//!
//! Two submission policies ([`SubmitPolicy`]): `batch` queues an operation in every free slot and
//! enters the kernel once to submit them all and wait; `each` enters the kernel to submit every
//! operation as soon as it is queued (fio's `iodepth_batch_submit=1`) and once more to wait when
//! no slot is free. [`SlotRing`] owns the ring and the memory lent to the kernel; `fast`'s direct
//! road uses it too.
//!
//! The `unsafe` left here is the io-uring crate's contract, not a raw call rustix could take over:
//! registering buffers and pushing an entry promise the kernel that the memory they name lives
//! until the completion is reaped, which each `SAFETY:` note shows.

use super::buffer::{BufferKind, SlotBufs};
use super::caps::Caps;
use super::job::{Block, Engine, WorkerJob, WriteData};
use crate::config::{Method, Op, SubmitPolicy};
use crate::measure::WorkerCtx;
use anyhow::anyhow;
use io_uring::{opcode, squeue, types, IoUring};
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

pub struct UringEngine;

/// What `io_uring` can do (registered in `engine::caps`).
pub const CAPS: Caps = Caps {
    method: Method::IoUring,
    engine: &UringEngine,
    probe: Some(probe),
    queued: true,
    copies_through_cache: true,
    maps_file: false,
    slots_per_depth: 1,
    extra_buffer_bytes: 0,
    fio_engine: "io_uring",
    fio_read_caveat: None,
    fio_write_caveat: None,
    write_call: "io_uring",
};

/// Checks that this process can create a ring.
pub fn probe() -> Result<(), String> {
    IoUring::new(2).map(|_| ()).map_err(|e| {
        format!(
            "io_uring is not available here ({e}); use --method pread (or read, mmap, buffered)"
        )
    })
}

/// Set (to anything but `0`) to make rings without the task-run flags below, to measure what
/// they change (`bench/`), as fio's plain setup would.
pub const PLAIN_RING_ENV: &str = "DISKSCOPE_URING_PLAIN";

/// A ring of `entries` for one thread: `SINGLE_ISSUER` (only the creating thread submits, as in
/// both users here), `COOP_TASKRUN` (no interrupt of the thread to run completion work) and
/// `DEFER_TASKRUN` (completion work runs when the thread waits in `io_uring_enter`, which every
/// wait here does), as fio sets up its rings on kernels that have them. On two vCPUs this keeps
/// completion work from stealing the submitting thread's CPU at random moments. Kernels before
/// 6.1 refuse the flags; then the ring is made plain.
fn new_ring(entries: u32) -> std::io::Result<IoUring> {
    let plain = std::env::var_os(PLAIN_RING_ENV).is_some_and(|v| v != "0");
    if !plain {
        if let Ok(ring) = IoUring::builder()
            .setup_single_issuer()
            .setup_coop_taskrun()
            .setup_defer_taskrun()
            .build(entries)
        {
            return Ok(ring);
        }
    }
    IoUring::new(entries)
}

/// One io_uring with the memory it lends to the kernel: `count` I/O slots and, for writes, the
/// pre-generated data. Used by the io_uring engine and by `fast`'s direct road, so the reasoning
/// about memory shared with the kernel lives here once:
///
/// - a slot is lent when an operation on it is queued and returned when its completion is
///   reaped; [`SlotRing::slot`] and [`SlotRing::slot_mut`] refuse (panic) while it is lent;
/// - the slots are registered as fixed buffers when the kernel allows (sparing a page pin per
///   I/O), with plain reads and writes as the fallback;
/// - if the ring is dropped (or fails) with operations still in flight, nothing can reap them,
///   so the memory they point to is leaked (kept for the rest of the process) instead of freed
///   under the kernel.
pub(crate) struct SlotRing {
    ring: ManuallyDrop<IoUring>,
    bufs: ManuallyDrop<SlotBufs>,
    data: ManuallyDrop<Option<Arc<WriteData>>>,
    fixed: bool,
    lent: Vec<bool>,
    inflight: usize,
}

impl SlotRing {
    /// A ring with room for every slot of `bufs`; `data` is memory writes may come from.
    pub fn new(mut bufs: SlotBufs, data: Option<Arc<WriteData>>) -> std::io::Result<Self> {
        let count = bufs.count().max(1);
        let ring = new_ring((count as u32).next_power_of_two())?;
        let iovecs = bufs.iovecs();
        // SAFETY: the slots stay allocated and unmoved while the ring exists: `SlotRing` owns
        // both, unregisters before freeing, and leaks the slots if it cannot (see `Drop`).
        let fixed = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        Ok(SlotRing {
            ring: ManuallyDrop::new(ring),
            bufs: ManuallyDrop::new(bufs),
            data: ManuallyDrop::new(data),
            fixed,
            lent: vec![false; count],
            inflight: 0,
        })
    }

    /// The memory behind the slots.
    pub fn kind(&self) -> BufferKind {
        self.bufs.kind()
    }

    /// Operations queued or submitted and not yet reaped.
    pub fn inflight(&self) -> usize {
        self.inflight
    }

    /// Slot `i`; panics while the kernel may write it.
    pub fn slot(&self, i: usize) -> &[u8] {
        assert!(!self.lent[i], "slot {i} is in flight");
        self.bufs.slot(i)
    }

    /// Slot `i`, to fill before a write; panics while the kernel may use it.
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        assert!(!self.lent[i], "slot {i} is in flight");
        self.bufs.slot_mut(i)
    }

    /// The start of slot `slot`, checked to hold `len` bytes (`what` names the operation).
    fn slot_ptr(&mut self, slot: usize, len: usize, what: &str) -> *mut u8 {
        let buf = self.bufs.slot_mut(slot);
        assert!(
            len <= buf.len(),
            "{what} {len} bytes with a {}-byte slot",
            buf.len()
        );
        buf.as_mut_ptr()
    }

    /// Queues a read of `len` bytes at file `offset` into slot `slot`.
    pub fn queue_read(
        &mut self,
        fd: types::Fd,
        slot: usize,
        len: usize,
        offset: u64,
    ) -> anyhow::Result<()> {
        let ptr = self.slot_ptr(slot, len, "read of");
        let entry = if self.fixed {
            opcode::ReadFixed::new(fd, ptr, len as u32, slot as u16)
                .offset(offset)
                .build()
        } else {
            opcode::Read::new(fd, ptr, len as u32)
                .offset(offset)
                .build()
        };
        self.push(slot, entry)
    }

    /// Queues a write of the first `len` bytes of slot `slot` at file `offset`.
    pub fn queue_write_slot(
        &mut self,
        fd: types::Fd,
        slot: usize,
        len: usize,
        offset: u64,
    ) -> anyhow::Result<()> {
        let ptr = self.slot_ptr(slot, len, "write of");
        let entry = if self.fixed {
            opcode::WriteFixed::new(fd, ptr, len as u32, slot as u16)
                .offset(offset)
                .build()
        } else {
            opcode::Write::new(fd, ptr, len as u32)
                .offset(offset)
                .build()
        };
        self.push(slot, entry)
    }

    /// Queues a write of the pre-generated bytes at `offset..offset + len` to the same file
    /// offset; `slot` only names the operation. Falls back to the slot (filled now) when the
    /// ring holds no data covering the range.
    pub fn queue_write_data(
        &mut self,
        fd: types::Fd,
        slot: usize,
        len: usize,
        offset: u64,
        seed: u64,
    ) -> anyhow::Result<()> {
        let ptr = match self.data.as_deref() {
            Some(d) if d.covers(offset, len) => d.at(offset, len).as_ptr(),
            _ => {
                crate::pattern::fill(seed, offset, &mut self.slot_mut(slot)[..len]);
                return self.queue_write_slot(fd, slot, len, offset);
            }
        };
        let entry = opcode::Write::new(fd, ptr, len as u32)
            .offset(offset)
            .build();
        self.push(slot, entry)
    }

    fn push(&mut self, slot: usize, entry: squeue::Entry) -> anyhow::Result<()> {
        assert!(!self.lent[slot], "slot {slot} is already in flight");
        let entry = entry.user_data(slot as u64);
        // SAFETY: the entry points into a slot or into the write data, both owned by `self` and
        // kept (or leaked) until its completion is reaped; the slot is marked lent so no `&mut`
        // to it is handed out meanwhile. The ring has an entry per slot, so at most `count`
        // operations are queued.
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            return Err(anyhow!("io_uring submission queue unexpectedly full"));
        }
        self.lent[slot] = true;
        self.inflight += 1;
        Ok(())
    }

    /// Hands what is queued to the kernel without waiting. An interrupted call leaves it queued
    /// for the next one.
    pub fn submit(&mut self) -> anyhow::Result<()> {
        match self.ring.submit() {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(anyhow::Error::new(e).context("io_uring_enter")),
        }
    }

    /// Submits what is queued, waits for at least one completion and moves every completion into
    /// `done` as `(slot, result)`, returning the slots. An interrupted wait leaves `done` empty
    /// (the caller loops).
    pub fn submit_and_reap(&mut self, done: &mut Vec<(usize, i32)>) -> anyhow::Result<()> {
        done.clear();
        if let Err(e) = self.ring.submit_and_wait(1) {
            if e.kind() == std::io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(anyhow::Error::new(e).context("io_uring_enter"));
        }
        for c in self.ring.completion() {
            let slot = c.user_data() as usize;
            if let Some(l) = self.lent.get_mut(slot) {
                if *l {
                    *l = false;
                    self.inflight -= 1;
                }
            }
            done.push((slot, c.result()));
        }
        Ok(())
    }
}

impl Drop for SlotRing {
    fn drop(&mut self) {
        if self.fixed && self.inflight == 0 {
            let _ = self.ring.submitter().unregister_buffers();
        }
        // SAFETY: each field is taken exactly once, here; the ring goes first.
        unsafe {
            ManuallyDrop::drop(&mut self.ring);
            if self.inflight == 0 {
                ManuallyDrop::drop(&mut self.bufs);
                ManuallyDrop::drop(&mut self.data);
            }
            // Otherwise operations may still use the memory: leave it allocated.
        }
    }
}

impl Engine for UringEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        let qd = job.setup.queue_depth.max(1) as usize;
        let bufs = job.take_slots(qd);
        let mut ring = SlotRing::new(bufs, job.write_data.clone())
            .map_err(|e| anyhow!("io_uring is not available here ({e}); use --method pread"))?;
        let fd = types::Fd(job.file.as_raw_fd());
        let each = job.setup.submit == SubmitPolicy::Each;
        let mut blocks: Vec<Option<Block>> = vec![None; qd];
        let mut t0s = vec![0u64; qd];
        // Open loop (`--rate`): each slot's intended start, for its response time.
        let mut intended = vec![0u64; qd];
        let mut free: Vec<usize> = (0..qd).rev().collect();
        let mut cursor = job.cursor();
        let mut stopping = false;
        let mut exhausted = false;
        let mut fresh: Vec<usize> = Vec::with_capacity(qd);
        let mut done: Vec<(usize, i32)> = Vec::with_capacity(qd);
        // The first failure; set, it stops new submissions while in-flight operations are reaped.
        let mut failure: Option<anyhow::Error> = None;
        loop {
            while !stopping && !exhausted {
                let Some(&slot) = free.last() else { break };
                // Open loop: while operations are in flight, submit the next one only once its
                // intended start has come; until then, reap.
                if ring.inflight() > 0 && !ctx.due() {
                    break;
                }
                let Some(b) = cursor.next() else {
                    exhausted = true;
                    break;
                };
                free.pop();
                let queued = match b.op {
                    Op::Read => ring.queue_read(fd, slot, b.len, b.offset),
                    Op::Write => {
                        // Pre-generated data is XOR-ed here; a slot filled now is XOR-ed when
                        // its write completes (below).
                        if let Some(d) = job
                            .write_data
                            .as_deref()
                            .filter(|d| d.covers(b.offset, b.len))
                        {
                            ctx.xor(b.offset, b.first_pass, d.at(b.offset, b.len));
                        }
                        ring.queue_write_data(fd, slot, b.len, b.offset, job.seed)
                    }
                };
                if let Err(e) = queued {
                    free.push(slot);
                    failure = Some(e);
                    stopping = true;
                    break;
                }
                blocks[slot] = Some(b);
                if each {
                    t0s[slot] = ctx.issue();
                    intended[slot] = ctx.intended();
                    if let Err(e) = ring.submit() {
                        failure.get_or_insert(e);
                        stopping = true;
                    }
                } else {
                    if ctx.paced() {
                        ctx.issue();
                        intended[slot] = ctx.intended();
                    }
                    fresh.push(slot);
                }
            }
            if ring.inflight() == 0 {
                break;
            }
            let t0 = ctx.now();
            for &s in &fresh {
                t0s[s] = t0;
            }
            fresh.clear();
            ring.submit_and_reap(&mut done)?;
            let t1 = ctx.now();
            for &(slot, res) in &done {
                free.push(slot);
                let b = blocks[slot].take().expect("completed slot was in flight");
                let n = match complete(job, &mut ring, slot, &b, res) {
                    Ok(n) => n,
                    Err(e) => {
                        failure.get_or_insert(e);
                        stopping = true;
                        continue;
                    }
                };
                let from_data = b.op == Op::Write
                    && job
                        .write_data
                        .as_deref()
                        .is_some_and(|d| d.covers(b.offset, b.len));
                if !from_data {
                    ctx.xor(b.offset, b.first_pass, &ring.slot(slot)[..n]);
                }
                ctx.direction(b.op);
                if !ctx.record_intended(n as u64, t0s[slot], intended[slot], t1) {
                    stopping = true;
                }
            }
        }
        drop(ring);
        match failure {
            Some(e) => Err(e),
            None => Ok(cursor.completed_pass()),
        }
    }
}

/// Turns a completion of `res` for block `b` into the bytes done: an error for a negative result,
/// and a short transfer finished synchronously (with O_DIRECT the full block is asked for at the
/// tail of the file, so a short read there means end of file).
fn complete(
    job: &WorkerJob,
    ring: &mut SlotRing,
    slot: usize,
    b: &Block,
    res: i32,
) -> anyhow::Result<usize> {
    if res < 0 {
        let err = std::io::Error::from_raw_os_error(-res);
        return Err(
            anyhow::Error::new(err).context(format!("io_uring {:?} at offset {}", b.op, b.offset))
        );
    }
    let mut n = res as usize;
    if n < b.len && n > 0 && b.op == Op::Read && !job.setup.direct {
        let rest = &mut ring.slot_mut(slot)[n..b.len];
        n += super::job::fill_from(rest, |s, d| job.file.read_at(s, b.offset + (n + d) as u64))?;
    }
    if b.op == Op::Read {
        // A read short of what the file held at the start: it shrank (never counted as an op).
        n = super::failure::complete_read(job, b, n)?;
    } else if n < b.len && b.op == Op::Write {
        let rest = match job
            .write_data
            .as_deref()
            .filter(|d| d.covers(b.offset, b.len))
        {
            Some(d) => &d.at(b.offset, b.len)[n..],
            None => &ring.slot(slot)[n..b.len],
        };
        super::job::drain_to(rest, |s, d| job.file.write_at(s, b.offset + (n + d) as u64))?;
        n = b.len;
    }
    Ok(n)
}
