//! `buffered`: the `fread`/`fwrite` analogue. A user-space buffer of the file's preferred I/O size
//! (`st_blksize`, 4 KiB on ext4, as glibc's stdio uses) sits in front of the calls, so small blocks
//! cost a memcpy instead of a syscall, and blocks at least as large as the buffer bypass it — the
//! same trade stdio makes.

use super::caps::Caps;
use super::failure::complete_read;
use super::job::{fill_from, write_at_position, Engine, WorkerJob};
use crate::config::{Method, Op};
use crate::measure::WorkerCtx;
use anyhow::Context;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;

pub struct BufferedEngine;

const NO_STDIO_IN_FIO: &str = "fio has no stdio-style engine: diskscope's buffered method adds a \
     user-space buffer of st_blksize in front of read(2)/write(2)";

/// What `buffered` can do (registered in `engine::caps`).
pub const CAPS: Caps = Caps {
    method: Method::Buffered,
    engine: &BufferedEngine,
    probe: None,
    queued: false,
    copies_through_cache: true,
    maps_file: false,
    slots_per_depth: 1,
    // The stdio-like buffer in front of the calls, at most a few pages.
    extra_buffer_bytes: 64 * 1024,
    fio_engine: "sync",
    fio_read_caveat: Some(NO_STDIO_IN_FIO),
    fio_write_caveat: Some(NO_STDIO_IN_FIO),
    write_call: "buffered",
};

impl Engine for BufferedEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        let blksize = job
            .file
            .metadata()
            .map(|m| m.blksize())
            .unwrap_or(4096)
            .max(512) as usize;
        let mut buf = job.take_buffer();
        let mut cursor = job.cursor();
        match job.setup.op {
            Op::Read => {
                let mut pos = u64::MAX;
                let mut reader = BufReader::with_capacity(blksize, &job.file);
                for b in cursor.by_ref() {
                    let t0 = ctx.start();
                    if pos != b.offset {
                        reader
                            .seek(SeekFrom::Start(b.offset))
                            .with_context(|| format!("seek to offset {}", b.offset))?;
                    }
                    let got = fill_from(&mut buf[..b.len], |s, _| reader.read(s))
                        .with_context(|| format!("buffered read at offset {}", b.offset))?;
                    let t1 = ctx.now();
                    pos = b.offset + got as u64;
                    let n = complete_read(job, &b, got)?;
                    ctx.xor(b.offset, b.first_pass, &buf[..n]);
                    if !ctx.record(n as u64, t0, t1) || n == 0 {
                        break;
                    }
                }
            }
            Op::Write => {
                let mut writer = BufWriter::with_capacity(blksize, &job.file);
                write_at_position(
                    &mut writer,
                    job,
                    &mut cursor,
                    &mut buf,
                    ctx,
                    "seek",
                    "buffered write",
                )?;
                writer.flush().context("flushing the write buffer")?;
            }
        }
        Ok(cursor.completed_pass())
    }
}
