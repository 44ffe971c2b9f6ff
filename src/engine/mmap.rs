//! `mmap`: the file is mapped and each block is read in place (XOR straight from the mapping, no
//! copy) or written in place; an operation's latency is the time to touch its pages, page faults
//! included. The mapping covers the whole file so every worker sees the same offsets.
//!
//! With `--checksum none` a read cannot skip the touch, since the I/O of a mapping *is* its page
//! faults: it reads one byte of every page of the block ([`touch_pages`]), which faults each page
//! in as the XOR would, and folds nothing.
//!
//! Each mapping is registered with a [`crate::sigbus::Guard`]: if the file shrinks under a reader
//! (or a write fault finds the filesystem full) the kernel's SIGBUS is absorbed by an anonymous
//! zero page and the worker fails with the offset after the block it was on, never dies on the
//! signal. A mapping shorter than the planned range (the file shrank before this worker mapped
//! it) is the same error as a short read.
//!
//! The mapping comes from memmap2, whose `map`/`map_mut` are `unsafe` because another process
//! may change or truncate the file under it: the SIGBUS guard above is this module's answer.

use super::caps::Caps;
use super::failure::complete_read;
use super::job::Block;
use super::job::{Engine, WorkerJob};
use crate::config::{Method, Op};
use crate::measure::WorkerCtx;
use crate::sigbus::Guard;
use crate::xor::xor_at;
use anyhow::Context;
use memmap2::{Mmap, MmapMut};

/// Reads one byte of every page that `map[start..end]` (a block of the page-aligned mapping,
/// `page` the page size) holds part of: its first byte, then the first byte of each page that
/// begins inside it. Returns them XOR-ed, so the loads cannot be left out: each page is faulted
/// in (the mapping's I/O) without the block's data going through the CPU (`--checksum none`).
#[inline(always)]
fn touch_pages(map: &[u8], start: usize, end: usize, page: usize) -> u8 {
    if start >= end {
        return 0;
    }
    let page = page.max(1);
    let mut acc = map[start];
    let mut at = (start / page + 1) * page;
    while at < end {
        acc ^= map[at];
        at += page;
    }
    acc
}

/// Guards a fresh mapping; a mapping that cannot be guarded is not used.
fn guard_of(ptr: *const u8, len: usize) -> anyhow::Result<Guard> {
    Guard::new(ptr, len).context("guarding the mapping against SIGBUS")
}

/// Turns a SIGBUS seen while touching block `b` into the error a short transfer gives. A write
/// fault is a full disk only while the file still covers the page: past its end now, another
/// process truncated it.
#[inline(always)]
fn check(guard: &Guard, b: &Block, op: Op, file: &std::fs::File) -> anyhow::Result<()> {
    let Err(fault) = guard.check() else {
        return Ok(());
    };
    let at = fault.offset_bytes;
    Err(match op {
        Op::Read => anyhow::anyhow!(
            "the file shrank while being read: the page at offset {at} (block at offset {}) is \
             past the file's end now (SIGBUS on the mapping); another process truncated it, so no \
             XOR is reported",
            b.offset
        ),
        Op::Write => match file.metadata().map(|m| m.len()) {
            Ok(len) if len <= at => anyhow::anyhow!(
                "mmap write at offset {at}: the file was truncated by another process during the \
                 run (it is {len} bytes long now; SIGBUS on the mapping)"
            ),
            // A fault is no errno: say it is a full disk by its kind, so the caller can tell.
            _ => anyhow::Error::new(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                format!(
                    "mmap write at offset {at}: No space left on device (the filesystem could \
                     not back the page, SIGBUS on the mapping)"
                ),
            )),
        },
    })
}

pub struct MmapEngine;

/// What `mmap` can do (registered in `engine::caps`).
pub const CAPS: Caps = Caps {
    method: Method::Mmap,
    engine: &MmapEngine,
    probe: None,
    queued: false,
    copies_through_cache: false,
    maps_file: true,
    slots_per_depth: 0,
    extra_buffer_bytes: 0,
    fio_engine: "mmap",
    fio_read_caveat: Some(
        "fio's mmap engine copies each block into a buffer; diskscope XORs the mapping in \
         place (no copy)",
    ),
    fio_write_caveat: None,
    write_call: "mmap",
};

impl Engine for MmapEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        let mut cursor = job.cursor();
        if job.range.is_empty() && job.span == 0 {
            return Ok(true);
        }
        match job.setup.op {
            Op::Read => {
                // SAFETY: the mapping is read-only and private to this worker; diskscope never
                // writes a file it reads. A concurrent truncation by another process raises
                // SIGBUS on access, which `guard` turns into an error (see `crate::sigbus`).
                let map = unsafe { Mmap::map(&job.file) }.context("mmap of the file")?;
                let guard = guard_of(map.as_ptr(), map.len())?;
                let page = rustix::param::page_size();
                let xors = ctx.xors();
                for b in cursor.by_ref() {
                    let end = (b.offset as usize + b.len).min(map.len());
                    let start = (b.offset as usize).min(end);
                    let t0 = ctx.issue();
                    let x = if xors {
                        xor_at(b.offset, &map[start..end])
                    } else {
                        u32::from(touch_pages(&map, start, end, page))
                    };
                    let t1 = ctx.now();
                    check(&guard, &b, Op::Read, &job.file)?;
                    complete_read(job, &b, end - start)?;
                    // With `none`, `xor_value` folds nothing; `black_box` keeps the loads.
                    ctx.xor_value(b.first_pass, std::hint::black_box(x));
                    if !ctx.record((end - start) as u64, t0, t1) || end == start {
                        break;
                    }
                }
            }
            Op::Write => {
                // SAFETY: the file was created (and sized) by this run for writing; workers write
                // disjoint ranges of the mapping. A page the filesystem cannot back raises
                // SIGBUS on the write fault, which `guard` turns into an error.
                let mut map = unsafe { MmapMut::map_mut(&job.file) }.context("mmap of the file")?;
                let guard = guard_of(map.as_ptr(), map.len())?;
                for b in cursor.by_ref() {
                    let end = (b.offset as usize + b.len).min(map.len());
                    let start = (b.offset as usize).min(end);
                    let t0 = ctx.issue();
                    match job.write_data.as_deref() {
                        Some(d) if d.covers(b.offset, end - start) => {
                            map[start..end].copy_from_slice(d.at(b.offset, end - start))
                        }
                        _ => crate::pattern::fill(job.seed, b.offset, &mut map[start..end]),
                    }
                    let t1 = ctx.now();
                    check(&guard, &b, Op::Write, &job.file)?;
                    ctx.xor(b.offset, b.first_pass, &map[start..end]);
                    if !ctx.record((end - start) as u64, t0, t1) || end == start {
                        break;
                    }
                }
            }
        }
        Ok(cursor.completed_pass())
    }
}

#[cfg(test)]
mod tests {
    use super::touch_pages;

    #[test]
    fn touching_a_block_reads_one_byte_of_every_page_it_holds_part_of() {
        // Pages of 16 bytes; byte i holds a bit only at the bytes that must be read.
        let mut map = vec![0u8; 64];
        for (i, bit) in [(10, 1u8), (16, 2), (32, 4), (48, 8)] {
            map[i] = bit;
        }
        // Bytes 10..40 span pages 0, 1 and 2: its first byte, then each page start inside it.
        assert_eq!(touch_pages(&map, 10, 40, 16), 1 | 2 | 4);
        // A block inside one page touches it once; an empty block touches nothing.
        assert_eq!(touch_pages(&map, 48, 50, 16), 8);
        assert_eq!(touch_pages(&map, 20, 20, 16), 0);
    }
}
