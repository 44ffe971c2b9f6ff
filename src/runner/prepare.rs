//! Preparing a run: checks and opens the file (one descriptor per worker, O_DIRECT / O_DSYNC as
//! asked), creates the output of a write without ever replacing a file unasked, applies cache
//! control, measures residency, and splits the work into per-worker jobs.

use crate::cache::{self, Residency};
use crate::config::{usage, Op, Pattern, RunSpec};
use crate::engine::WorkerJob;
use anyhow::{anyhow, bail, Context};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

/// Size of the region a time-bounded write without a block count cycles through.
pub const DEFAULT_WRITE_SPAN: u64 = 1 << 30;

/// A run ready to start: files opened, cache prepared, residency measured.
pub struct Prepared {
    pub spec: RunSpec,
    /// File size when prepared (for writes: the size the run will write).
    pub file_size: u64,
    /// Bytes the run covers (sequential) or draws offsets from (random).
    pub total: u64,
    pub residency_before: Residency,
    /// Notes for the user (end of file reached early, cold run not cold, ...).
    pub notes: Vec<String>,
    pub(super) jobs: Vec<WorkerJob>,
    /// Descriptor kept for the final fsync of writes.
    pub(super) sync_file: Option<File>,
}

impl Prepared {
    /// Number of workers that will run.
    pub fn workers(&self) -> usize {
        self.jobs.len()
    }
}

#[derive(Debug, Clone)]
pub struct PreparedMeta {
    pub spec: RunSpec,
    pub file_size: u64,
    pub total: u64,
    pub residency_before: Residency,
}

impl Prepared {
    pub fn meta(&self) -> PreparedMeta {
        PreparedMeta {
            spec: self.spec.clone(),
            file_size: self.file_size,
            total: self.total,
            residency_before: self.residency_before,
        }
    }
}

fn open_error(path: &std::path::Path, e: std::io::Error, direct: bool) -> anyhow::Error {
    let p = path.display();
    match e.raw_os_error() {
        Some(libc::ENOENT) => anyhow!(
            "FILE: {p} does not exist; check the path or create it with `run {p} -w 1M 1024`"
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            anyhow!(
                "FILE: permission denied opening {p}; check its permissions or pick another file"
            )
        }
        Some(libc::EISDIR) => anyhow!("FILE: {p} is a directory; give a regular file"),
        Some(libc::EINVAL) if direct => usage(format!(
            "--direct: the filesystem of {p} refuses O_DIRECT; run without --direct"
        )),
        _ => anyhow!("FILE: cannot open {p}: {e}"),
    }
}

fn open_for(spec: &RunSpec, write: bool) -> anyhow::Result<File> {
    let mut flags = 0;
    if spec.direct {
        flags |= libc::O_DIRECT;
    }
    if write && spec.dsync {
        flags |= libc::O_DSYNC;
    }
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(&spec.path)
        .map_err(|e| open_error(&spec.path, e, spec.direct))
}

/// Creates (or with `force`, replaces) the output file of a write run.
fn create_output(spec: &RunSpec) -> anyhow::Result<()> {
    let p = spec.path.display();
    match std::fs::metadata(&spec.path) {
        Ok(m) if m.is_dir() => bail!("FILE: {p} is a directory; give a file name to write"),
        Ok(m) if m.file_type().is_block_device() => {
            bail!("FILE: {p} is a block device; diskscope does not write to devices")
        }
        Ok(_) if !spec.force => {
            return Err(usage(format!(
                "FILE: {p} already exists; pass --force to replace it"
            )))
        }
        Ok(m) if !m.is_file() => return Ok(()), // e.g. /dev/null with --force: write as is
        Ok(_) if spec.overwrite_in_place => return Ok(()), // batch mode: overwrite, keep the blocks
        _ => {}
    }
    let mut o = OpenOptions::new();
    o.write(true);
    if spec.force {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    o.open(&spec.path)
        .map(drop)
        .map_err(|e| open_error(&spec.path, e, false))
}

/// Opens files, applies cache control and measures residency.
pub fn prepare(spec: &RunSpec) -> anyhow::Result<Prepared> {
    if spec.method == crate::config::Method::IoUring {
        crate::engine::probe_io_uring().map_err(usage)?;
    }
    let bs = spec.block_size_bytes;
    let write = spec.op == Op::Write;
    let mut notes = Vec::new();
    let (file_size, total) = if write {
        create_output(spec)?;
        let total = match spec.block_count {
            Some(c) => bs * c,
            None => DEFAULT_WRITE_SPAN.next_multiple_of(bs),
        };
        (total, total)
    } else {
        let meta = std::fs::metadata(&spec.path).map_err(|e| open_error(&spec.path, e, false))?;
        if meta.is_dir() {
            bail!(
                "FILE: {} is a directory; give a regular file",
                spec.path.display()
            );
        }
        let mut f = open_for(spec, false)?;
        let size = f.seek(SeekFrom::End(0)).context("finding the file size")?;
        let total = match spec.block_count {
            Some(c) if bs * c > size && spec.pattern == Pattern::Sequential => {
                notes.push(format!(
                    "note: the file ends at {size} bytes, before {c} blocks of {bs}; read {size} bytes"
                ));
                size
            }
            Some(c) if spec.pattern == Pattern::Sequential => bs * c,
            _ => size,
        };
        (size, total)
    };
    if !write {
        cache::prepare(&spec.path, spec.cache, total)?;
    }
    let probe = open_for(spec, write)?;
    if write && spec.method == crate::config::Method::Mmap {
        probe
            .set_len(total)
            .context("sizing the file for mmap writes")?;
    }
    crate::engine::setup::preallocate(spec, &probe, total, &mut notes)?;
    let residency_before = cache::residency_of(&probe).unwrap_or_default();
    if !write {
        if let Some(w) = cache::cold_warning(spec.cache, &residency_before) {
            notes.push(w);
        }
    }
    let write_data = crate::engine::setup::write_data(spec, total, &mut notes);
    let jobs = plan_jobs(spec, total, write_data)?;
    notes.extend(crate::engine::setup::buffer_note(
        spec,
        jobs.first().and_then(|j| j.buffers.as_ref()),
    ));
    Ok(Prepared {
        spec: spec.clone(),
        file_size,
        total,
        residency_before,
        notes,
        jobs,
        sync_file: write.then_some(probe),
    })
}

/// Splits the run between workers: contiguous, block-aligned ranges (sequential), or the whole
/// span with a share of the operations each (random).
fn plan_jobs(
    spec: &RunSpec,
    total: u64,
    write_data: Option<std::sync::Arc<crate::engine::WriteData>>,
) -> anyhow::Result<Vec<WorkerJob>> {
    let bs = spec.block_size_bytes;
    let blocks = total.div_ceil(bs);
    let threads = spec.threads as u64;
    let mut jobs = Vec::with_capacity(spec.threads);
    for w in 0..threads {
        let (range, max_ops) = match spec.pattern {
            Pattern::Sequential => {
                let first = blocks * w / threads;
                let last = blocks * (w + 1) / threads;
                ((first * bs).min(total)..(last * bs).min(total), None)
            }
            Pattern::Random => {
                let ops = spec
                    .block_count
                    .map(|c| c * (w + 1) / threads - c * w / threads);
                (0..total, ops)
            }
        };
        jobs.push(WorkerJob {
            worker: w as usize,
            file: open_for(spec, spec.op == Op::Write)?,
            op: spec.op,
            block_size: bs as usize,
            range,
            span: total,
            pattern: spec.pattern,
            loop_range: spec.loop_range || (spec.duration.is_some() && spec.block_count.is_none()),
            max_ops,
            queue_depth: spec.queue_depth,
            seed: spec.seed,
            direct: spec.direct,
            submit: spec.submit,
            buffers: crate::engine::setup::worker_slots(spec),
            write_data: write_data.clone(),
        });
    }
    Ok(jobs)
}
