//! `pread`: positioned `pread(2)` / `pwrite(2)`, one syscall per block and no shared file
//! position, the natural method for threads and random offsets.

use super::{drain_to, fill_from, AlignedBuf, Engine, WorkerCtx, WorkerJob};
use crate::config::Op;
use anyhow::Context;
use std::os::unix::fs::FileExt;

pub struct PreadEngine;

impl Engine for PreadEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        let mut buf = AlignedBuf::new(job.block_size);
        let file = &job.file;
        let mut cursor = job.cursor();
        for b in cursor.by_ref() {
            let data = &mut buf[..b.len];
            let n = match job.op {
                Op::Read => {
                    let t0 = ctx.now();
                    let n = fill_from(data, |s, done| file.read_at(s, b.offset + done as u64))
                        .with_context(|| format!("pread at offset {}", b.offset))?;
                    let t1 = ctx.now();
                    ctx.xor(&b, &data[..n]);
                    if !ctx.record(n as u64, t0, t1) {
                        break;
                    }
                    n
                }
                Op::Write => {
                    crate::pattern::fill(job.seed, b.offset, data);
                    let t0 = ctx.now();
                    drain_to(data, |s, done| file.write_at(s, b.offset + done as u64))
                        .with_context(|| format!("pwrite at offset {}", b.offset))?;
                    let t1 = ctx.now();
                    ctx.xor(&b, data);
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
