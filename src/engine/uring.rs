//! `io_uring`: a real submission queue of `queue_depth` entries kept full. Buffers are registered
//! with the ring (fixed buffers, which spare the kernel a page pin per I/O) when the kernel allows,
//! with plain reads as the fallback. An operation's latency runs from just before the submitting
//! `io_uring_enter` to the reaping of its completion, like fio's clat+slat.

use super::{AlignedBuf, Block, Engine, WorkerCtx, WorkerJob};
use crate::config::Op;
use anyhow::anyhow;
use io_uring::{opcode, types, IoUring};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

pub struct UringEngine;

/// Registers `bufs` with `ring` as fixed buffers (index i = `bufs[i]`), sparing the kernel a page
/// pin per I/O. Returns whether the kernel accepted them (it may refuse, e.g. over the memlock
/// limit); callers then fall back to plain reads and writes.
///
/// # Safety
/// Every buffer must stay allocated and unmoved while the ring can use it: until the ring is
/// dropped (or the buffers unregistered) with no operation in flight.
pub(crate) unsafe fn register_buffers(ring: &IoUring, bufs: &mut [AlignedBuf]) -> bool {
    let iovecs: Vec<libc::iovec> = bufs
        .iter_mut()
        .map(|b| libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: b.len(),
        })
        .collect();
    // SAFETY: the caller keeps the buffers alive and in place for as long as the ring uses them.
    unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok()
}

/// Checks that this process can create a ring.
pub fn probe() -> Result<(), String> {
    IoUring::new(2).map(|_| ()).map_err(|e| {
        format!(
            "io_uring is not available here ({e}); use --method pread (or read, mmap, buffered)"
        )
    })
}

/// Submits what is queued, waits for at least one completion and moves every completion into
/// `done` as `(user_data, result)`. An interrupted wait leaves `done` empty (the caller loops).
/// On any other failure operations may still be in flight and nothing can reap them, so `bufs`
/// is leaked (kept alive for the rest of the process) rather than freed under the kernel.
pub(crate) fn submit_and_reap(
    ring: &mut IoUring,
    bufs: &mut Vec<AlignedBuf>,
    done: &mut Vec<(usize, i32)>,
) -> anyhow::Result<()> {
    done.clear();
    if let Err(e) = ring.submit_and_wait(1) {
        if e.kind() == std::io::ErrorKind::Interrupted {
            return Ok(());
        }
        std::mem::forget(std::mem::take(bufs));
        return Err(anyhow::Error::new(e).context("io_uring_enter"));
    }
    done.extend(
        ring.completion()
            .map(|c| (c.user_data() as usize, c.result())),
    );
    Ok(())
}

struct Slot {
    block: Option<Block>,
    t0: u64,
}

impl Engine for UringEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        let qd = job.queue_depth.max(1);
        // `bufs` is declared before `ring`, so the ring is always dropped first.
        let mut bufs: Vec<AlignedBuf> = (0..qd).map(|_| AlignedBuf::new(job.block_size)).collect();
        let mut ring = IoUring::new(qd.next_power_of_two())
            .map_err(|e| anyhow!("io_uring is not available here ({e}); use --method pread"))?;
        // Failures stop new submissions and the loop reaps what is in flight before returning the
        // error; if the ring itself fails, the buffers are leaked instead of freed.
        // SAFETY: the buffers stay allocated and unmoved until the ring (declared after `bufs`) is
        // dropped, and nothing is in flight when this function returns (see above).
        let fixed = unsafe { register_buffers(&ring, &mut bufs) };
        let fd = types::Fd(job.file.as_raw_fd());
        let mut slots: Vec<Slot> = (0..qd).map(|_| Slot { block: None, t0: 0 }).collect();
        let mut free: Vec<usize> = (0..qd as usize).rev().collect();
        let mut cursor = job.cursor();
        let mut inflight = 0usize;
        let mut stopping = false;
        let mut exhausted = false;
        let mut fresh: Vec<usize> = Vec::with_capacity(qd as usize);
        let mut done: Vec<(usize, i32)> = Vec::with_capacity(qd as usize);
        // The first failure; set, it stops new submissions while in-flight operations are reaped.
        let mut failure: Option<anyhow::Error> = None;
        loop {
            while !stopping && !exhausted {
                let Some(&slot) = free.last() else { break };
                let Some(b) = cursor.next() else {
                    exhausted = true;
                    break;
                };
                free.pop();
                let buf = &mut bufs[slot][..b.len];
                let ptr = buf.as_mut_ptr();
                let len = b.len as u32;
                let entry = match (job.op, fixed) {
                    (Op::Read, true) => opcode::ReadFixed::new(fd, ptr, len, slot as u16)
                        .offset(b.offset)
                        .build(),
                    (Op::Read, false) => opcode::Read::new(fd, ptr, len).offset(b.offset).build(),
                    (Op::Write, _) => {
                        crate::pattern::fill(job.seed, b.offset, buf);
                        ctx.xor(&b, buf);
                        if fixed {
                            opcode::WriteFixed::new(fd, ptr, len, slot as u16)
                                .offset(b.offset)
                                .build()
                        } else {
                            opcode::Write::new(fd, ptr, len).offset(b.offset).build()
                        }
                    }
                }
                .user_data(slot as u64);
                // SAFETY: the entry points into `bufs[slot]`, which stays alive and untouched
                // until its completion is reaped below; the queue has room because at most `qd`
                // slots are in flight and the ring has at least `qd` entries.
                if unsafe { ring.submission().push(&entry) }.is_err() {
                    free.push(slot);
                    failure = Some(anyhow!("io_uring submission queue unexpectedly full"));
                    stopping = true;
                    break;
                }
                slots[slot].block = Some(b);
                fresh.push(slot);
                inflight += 1;
            }
            if inflight == 0 {
                break;
            }
            let t0 = ctx.now();
            for &s in &fresh {
                slots[s].t0 = t0;
            }
            fresh.clear();
            submit_and_reap(&mut ring, &mut bufs, &mut done)?;
            let t1 = ctx.now();
            for &(slot, res) in &done {
                inflight -= 1;
                free.push(slot);
                let b = slots[slot]
                    .block
                    .take()
                    .expect("completed slot was in flight");
                let n = match complete(job, &mut bufs[slot], &b, res) {
                    Ok(n) => n,
                    Err(e) => {
                        failure.get_or_insert(e);
                        stopping = true;
                        continue;
                    }
                };
                if job.op == Op::Read {
                    ctx.xor(&b, &bufs[slot][..n]);
                }
                if !ctx.record(n as u64, slots[slot].t0, t1) {
                    stopping = true;
                }
            }
        }
        if fixed {
            let _ = ring.submitter().unregister_buffers();
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
fn complete(job: &WorkerJob, buf: &mut [u8], b: &Block, res: i32) -> anyhow::Result<usize> {
    if res < 0 {
        let err = std::io::Error::from_raw_os_error(-res);
        return Err(anyhow::Error::new(err)
            .context(format!("io_uring {:?} at offset {}", job.op, b.offset)));
    }
    let mut n = res as usize;
    if n < b.len && n > 0 && job.op == Op::Read && !job.direct {
        let rest = &mut buf[n..b.len];
        n += super::fill_from(rest, |s, d| job.file.read_at(s, b.offset + (n + d) as u64))?;
    }
    if job.op == Op::Read {
        // A read short of what the file held at the start: it shrank (never counted as an op).
        n = crate::runner::complete_read(job, b, n)?;
    } else if n < b.len && job.op == Op::Write {
        let rest = &buf[n..b.len];
        super::drain_to(rest, |s, d| job.file.write_at(s, b.offset + (n + d) as u64))?;
        n = b.len;
    }
    Ok(n)
}
