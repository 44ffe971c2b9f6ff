//! `pread`: positioned `pread(2)` / `pwrite(2)`, one syscall per block and no shared file
//! position, the natural method for threads and random offsets. Reads use the bare system call
//! [`sys_pread`] for the reason given in the `read` engine (no cancellation-point wrapper):
//! rustix's `pread`, an inline `syscall` instruction with no call into libc and no other work.

use super::caps::Caps;
use super::failure::complete_read;
use super::job::{drain_to, fill_from, Engine, WorkerJob};
use crate::config::{Method, Op};
use crate::measure::WorkerCtx;
use anyhow::Context;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileExt;

/// `pread(2)` as a bare system call (no cancellation-point wrapper, no call into libc).
#[inline(always)]
pub(crate) fn sys_pread(fd: BorrowedFd<'_>, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    Ok(rustix::io::pread(fd, buf, offset)?)
}

pub struct PreadEngine;

/// What `pread` can do (registered in `engine::caps`).
pub const CAPS: Caps = Caps {
    method: Method::Pread,
    engine: &PreadEngine,
    probe: None,
    queued: false,
    copies_through_cache: true,
    maps_file: false,
    slots_per_depth: 1,
    extra_buffer_bytes: 0,
    fio_engine: "psync",
    fio_read_caveat: None,
    fio_write_caveat: None,
    write_call: "pwrite",
};

impl Engine for PreadEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        let mut buf = job.take_buffer();
        let file = &job.file;
        let fd = file.as_fd();
        let mut cursor = job.cursor();
        for b in cursor.by_ref() {
            let data = &mut buf[..b.len];
            // A mixed workload's direction was drawn with the block, before the clock.
            ctx.direction(b.op);
            let n = match b.op {
                Op::Read => {
                    let t0 = ctx.start();
                    let got = fill_from(data, |s, done| sys_pread(fd, s, b.offset + done as u64))
                        .with_context(|| format!("pread at offset {}", b.offset))?;
                    let t1 = ctx.now();
                    let n = complete_read(job, &b, got)?;
                    ctx.xor(b.offset, b.first_pass, &data[..n]);
                    if !ctx.record(n as u64, t0, t1) {
                        break;
                    }
                    n
                }
                Op::Write => {
                    let data = job.write_bytes(&b, data);
                    let t0 = ctx.issue();
                    drain_to(data, |s, done| file.write_at(s, b.offset + done as u64))
                        .with_context(|| format!("pwrite at offset {}", b.offset))?;
                    let t1 = ctx.now();
                    ctx.xor(b.offset, b.first_pass, data);
                    if !ctx.record(b.len as u64, t0, t1) {
                        break;
                    }
                    b.len
                }
            };
            if n == 0 {
                break;
            }
        }
        Ok(cursor.completed_pass())
    }
}
