//! `mmap`: the file is mapped and each block is read in place (XOR straight from the mapping, no
//! copy) or written in place; an operation's latency is the time to touch its pages, page faults
//! included. The mapping covers the whole file so every worker sees the same offsets.

use super::{Engine, WorkerCtx, WorkerJob};
use crate::config::Op;
use crate::xor::xor_at;
use anyhow::Context;
use memmap2::{Mmap, MmapMut};

pub struct MmapEngine;

impl Engine for MmapEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        let mut cursor = job.cursor();
        if job.range.is_empty() && job.span == 0 {
            return Ok(true);
        }
        match job.op {
            Op::Read => {
                // SAFETY: the mapping is read-only and private to this worker; diskscope never
                // writes a file it reads, and a concurrent truncation by another process would at
                // worst raise SIGBUS, the documented hazard of any mmap reader.
                let map = unsafe { Mmap::map(&job.file) }.context("mmap of the file")?;
                for b in cursor.by_ref() {
                    let end = (b.offset as usize + b.len).min(map.len());
                    let start = (b.offset as usize).min(end);
                    let t0 = ctx.now();
                    let x = xor_at(b.offset, &map[start..end]);
                    let t1 = ctx.now();
                    ctx.xor_value(&b, std::hint::black_box(x));
                    if !ctx.record((end - start) as u64, t0, t1) || end == start {
                        break;
                    }
                }
            }
            Op::Write => {
                // SAFETY: the file was created (and sized) by this run for writing; workers write
                // disjoint ranges of the mapping.
                let mut map = unsafe { MmapMut::map_mut(&job.file) }.context("mmap of the file")?;
                for b in cursor.by_ref() {
                    let end = (b.offset as usize + b.len).min(map.len());
                    let start = (b.offset as usize).min(end);
                    let t0 = ctx.now();
                    match job.write_data.as_deref() {
                        Some(d) if d.covers(b.offset, end - start) => {
                            map[start..end].copy_from_slice(d.at(b.offset, end - start))
                        }
                        _ => crate::pattern::fill(job.seed, b.offset, &mut map[start..end]),
                    }
                    let t1 = ctx.now();
                    ctx.xor(&b, &map[start..end]);
                    if !ctx.record((end - start) as u64, t0, t1) || end == start {
                        break;
                    }
                }
            }
        }
        Ok(cursor.completed_pass())
    }
}
