//! `read`: plain `read(2)` / `write(2)` on the descriptor's file position, the lab's baseline.
//! Sequential runs seek once (and again when a looping range starts over); random runs pay an
//! `lseek` per operation, which is what a `read`-based program has to do.

use super::{drain_to, fill_from, AlignedBuf, Engine, WorkerCtx, WorkerJob};
use crate::config::Op;
use anyhow::Context;
use std::io::{Read, Seek, SeekFrom, Write};

pub struct ReadEngine;

impl Engine for ReadEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        let mut buf = AlignedBuf::new(job.block_size);
        let mut file = &job.file;
        let mut pos = u64::MAX;
        let mut cursor = job.cursor();
        for b in cursor.by_ref() {
            let data = &mut buf[..b.len];
            if job.op == Op::Write {
                crate::pattern::fill(job.seed, b.offset, data);
            }
            let t0 = ctx.now();
            if pos != b.offset {
                file.seek(SeekFrom::Start(b.offset))
                    .with_context(|| format!("lseek to offset {}", b.offset))?;
            }
            let n = match job.op {
                Op::Read => fill_from(data, |s, _| file.read(s))
                    .with_context(|| format!("read at offset {}", b.offset))?,
                Op::Write => {
                    drain_to(data, |s, _| file.write(s))
                        .with_context(|| format!("write at offset {}", b.offset))?;
                    b.len
                }
            };
            let t1 = ctx.now();
            pos = b.offset + n as u64;
            ctx.xor(&b, &buf[..n]);
            if !ctx.record(n as u64, t0, t1) || n == 0 {
                break;
            }
        }
        Ok(cursor.completed_pass())
    }
}
