//! Preparing a run: checks and opens the file (one descriptor per worker, O_DIRECT / O_DSYNC as
//! asked), creates the output of a write without ever replacing a file unasked, applies cache
//! control, measures residency, and splits the work into per-worker jobs.

use super::budget::{self, Share};
use super::error::{FailureCause, RunFailed};
use super::watch::FileWatch;
use crate::cache::{self, Residency};
use crate::config::spec::RunSpec;
use crate::config::{usage, Op, Pattern};
use crate::engine::setup::PreallocFailed;
use crate::engine::{BufferLayout, WorkerJob};
use crate::fsguard::Created;
use anyhow::{anyhow, bail, Context};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};

/// Size of the region a time-bounded write without a block count cycles through.
pub const DEFAULT_WRITE_SPAN: u64 = 1 << 30;

/// A run ready to start: files opened, cache prepared, residency measured.
pub struct Prepared {
    pub spec: RunSpec,
    /// File size when prepared (for writes: the size the run will write).
    pub file_size: u64,
    /// Bytes the run covers (sequential) or draws offsets from (random).
    pub total: u64,
    /// `None` when it cannot be known (see [`cache::residency_of`]).
    pub residency_before: Option<Residency>,
    /// Notes for the user (end of file reached early, cold run not cold, ...).
    pub notes: Vec<String>,
    pub(super) jobs: Vec<WorkerJob>,
    /// Descriptor kept for the final fsync of writes.
    pub(super) sync_file: Option<File>,
    /// A read run's file, checked for changes when the run ends.
    pub(super) watch: Option<FileWatch>,
    /// The file a write run created (or with --force replaced): its partial file is removed
    /// only while the path still names that inode.
    pub(super) created: Option<Created>,
    /// Where the O_DIRECT slots lie in physical memory, for the verdict (`split_requests`).
    pub(super) buffer_layout: Option<BufferLayout>,
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
    pub residency_before: Option<Residency>,
}

impl Prepared {
    pub fn meta(&self) -> PreparedMeta {
        let mut spec = self.spec.clone();
        // The spec of what runs: the memory the buffers got (`auto` resolved).
        if let Some(b) = self.jobs.first().and_then(|j| j.slots.as_ref()) {
            spec.setup.buffers = b.kind().setting();
        }
        PreparedMeta {
            spec,
            file_size: self.file_size,
            total: self.total,
            residency_before: self.residency_before,
        }
    }
}

fn open_error(path: &std::path::Path, e: std::io::Error, direct: bool) -> anyhow::Error {
    let p = crate::text::shown_path(path);
    let parent = path.parent().filter(|d| !d.as_os_str().is_empty());
    match e.raw_os_error() {
        Some(libc::ENOENT) if parent.is_some_and(|d| !d.is_dir()) => {
            let d = parent.unwrap_or(path);
            usage(format!(
                "FILE: the directory {} does not exist; create it first (mkdir -p {})",
                crate::text::shown_path(d),
                crate::fsguard::shell_quote_path(d)
            ))
        }
        // A FILE that cannot be used as given is bad usage (exit 2), as every other argument
        // is: nothing was measured. A run that started and failed is exit 1.
        Some(libc::ENOENT) => usage(format!(
            "FILE: {p} does not exist; check the path or create it with `run {} -w 1M 1024`",
            crate::fsguard::shell_quote_path(path)
        )),
        Some(libc::ELOOP) => usage(format!(
            "FILE: {p} is a symbolic link loop (or a chain too long); point it at a file"
        )),
        Some(libc::EEXIST) => usage(format!(
            "FILE: {p} already exists (a dangling symbolic link counts); remove it or pick another name"
        )),
        Some(libc::EACCES) | Some(libc::EPERM) => usage(format!(
            "FILE: permission denied opening {p}; check its permissions or pick another file"
        )),
        Some(libc::EISDIR) => usage(format!("FILE: {p} is a directory; give a regular file")),
        Some(libc::EINVAL) if direct => usage(format!(
            "--direct: the filesystem of {p} refuses O_DIRECT; run without --direct"
        )),
        _ => anyhow!("FILE: cannot open {p}: {e}"),
    }
}

fn open_for(spec: &RunSpec, write: bool) -> anyhow::Result<File> {
    if !write {
        // Before `open`: a FIFO blocks in open, a character device never ends, /proc lies.
        crate::fsguard::check_input(&spec.target.path, "FILE").map_err(|e| usage(e.to_string()))?;
    }
    let mut flags = 0;
    if spec.setup.direct {
        flags |= libc::O_DIRECT;
    }
    if write {
        // Never through a symbolic link (one put at the path after the checks included).
        flags |= libc::O_NOFOLLOW;
        if spec.setup.write_sync.dsync() {
            flags |= libc::O_DSYNC;
        }
    }
    test_hook("before-open");
    // O_NONBLOCK, then a look at the descriptor: a FIFO renamed over the path since the check
    // fails here instead of blocking the open forever. A write opens an existing path only for a
    // character device (/dev/null) or a batch's kept test file.
    let f = crate::fsguard::open_then_check(
        OpenOptions::new().read(true).write(write),
        &spec.target.path,
        flags,
        "FILE",
        write,
    )
    .map_err(|e| match e {
        crate::fsguard::OpenError::Io(e) => open_error(&spec.target.path, e, spec.setup.direct),
        crate::fsguard::OpenError::Refused(refused) => usage(refused.to_string()),
    })?;
    // A batch's file: still the inode the batch checked, not one renamed over the path since.
    crate::fsguard::check_registered(&spec.target.path, &f)?;
    Ok(f)
}

/// Another descriptor of the file `anchor` is open on, with the run's flags (O_DIRECT,
/// O_DSYNC). It goes through `/proc/self/fd`, never through the path again: whatever another
/// process renames over the path after `anchor` was opened (a symbolic link to a file of the
/// user's, say), every descriptor of the run refers to the inode the run created or checked.
/// The inode is compared anyway, and a mismatch is an error, never a write elsewhere.
fn reopen(anchor: &File, spec: &RunSpec, write: bool) -> anyhow::Result<File> {
    let mut flags = libc::O_CLOEXEC;
    if spec.setup.direct {
        flags |= libc::O_DIRECT;
    }
    if write && spec.setup.write_sync.dsync() {
        flags |= libc::O_DSYNC;
    }
    let proc_path = format!("/proc/self/fd/{}", anchor.as_raw_fd());
    let p = crate::text::shown_path(&spec.target.path);
    let f = OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(&proc_path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) if spec.setup.direct => usage(format!(
                "--direct: the filesystem of {p} refuses O_DIRECT; run without --direct"
            )),
            _ => anyhow!("FILE: cannot open another descriptor of {p} (through {proc_path}): {e}"),
        })?;
    let (a, b) = (anchor.metadata()?, f.metadata()?);
    if (a.dev(), a.ino()) != (b.dev(), b.ino()) {
        bail!(
            "FILE: a second descriptor of {p} refers to another file (is /proc mounted?); \
             nothing was written"
        );
    }
    Ok(f)
}

/// Test hook: with `DISKSCOPE_TEST_HOOK_DIR` set and `DISKSCOPE_TEST_HOOK_POINT` = `point`, a
/// run that reaches `point` creates `DIR/POINT.reached` and waits (at most 30 s) until
/// `DIR/POINT.go` exists. Tests use it to do what another process could do at exactly that
/// moment (swap the path, rewrite the file) instead of racing the run for it. Without the
/// variables it costs one `getenv`. Only in builds with debug assertions (the `dev` and `test`
/// profiles `cargo test` builds its binaries with) or the `test-hooks` feature: a release build
/// (`cargo build --release`, `cargo install`) has the empty function below, so no environment
/// can make an installed diskscope wait or touch a file. The `.reached` file is created
/// exclusively: even a debug build never replaces a file that is there.
#[cfg(any(debug_assertions, feature = "test-hooks"))]
pub fn test_hook(point: &str) {
    let Some(dir) = std::env::var_os("DISKSCOPE_TEST_HOOK_DIR") else {
        return;
    };
    if std::env::var_os("DISKSCOPE_TEST_HOOK_POINT").is_none_or(|p| p != point) {
        return;
    }
    let dir = std::path::PathBuf::from(dir);
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dir.join(format!("{point}.reached")));
    let go = dir.join(format!("{point}.go"));
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !go.exists() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The test hook of a release build: nothing.
#[cfg(not(any(debug_assertions, feature = "test-hooks")))]
#[inline(always)]
pub fn test_hook(_point: &str) {}

/// The output of a write run: the descriptor every other descriptor of the run is reopened
/// from, and the record of the file this run created or (with --force) replaced, for an
/// inode-checked removal of a partial file (`None`: a device or batch mode's kept test file,
/// never removed).
struct Output {
    anchor: File,
    created: Option<Created>,
}

/// Creates (or with `force`, replaces) the output file of a write run, after checking there is
/// room for `need_bytes`.
fn create_output(spec: &RunSpec, need_bytes: u64) -> anyhow::Result<Output> {
    let p = crate::text::shown_path(&spec.target.path);
    // lstat, not stat: a symbolic link is never written through, even with --force (the file it
    // points to is not the one the user named).
    if let Ok(m) = std::fs::symlink_metadata(&spec.target.path) {
        if m.file_type().is_symlink() {
            return Err(usage(format!(
                "FILE: {p} is a symbolic link; diskscope does not write through links, give the \
                 real path"
            )));
        }
    }
    let existing_file = std::fs::symlink_metadata(&spec.target.path).is_ok_and(|m| m.is_file());
    let existing = match std::fs::metadata(&spec.target.path) {
        Ok(m) if m.is_dir() => {
            return Err(usage(format!(
                "FILE: {p} is a directory; give a file name to write"
            )))
        }
        Ok(m) if m.file_type().is_block_device() => {
            return Err(usage(format!(
                "FILE: {p} is a block device; diskscope does not write to devices"
            )))
        }
        Ok(_) if !spec.safety.force => {
            return Err(usage(format!(
                "FILE: {p} already exists; pass --force to replace it"
            )))
        }
        Ok(m) if m.file_type().is_fifo() || m.file_type().is_socket() => {
            return Err(usage(format!(
                "FILE: {p} is a {}; a write run needs a regular file (or a device such as \
                 /dev/null with --force); give a file name",
                if m.file_type().is_fifo() {
                    "FIFO"
                } else {
                    "socket"
                }
            )))
        }
        Ok(m) if !m.is_file() || spec.safety.overwrite_in_place => {
            // A character device (/dev/null with --force): written as is. Batch mode's kept
            // test file: overwritten in place, keeping its blocks. Neither is ever removed.
            return Ok(Output {
                anchor: open_for(spec, true)?,
                created: None,
            });
        }
        // --force replaces only the user's own files: unlinking needs only the directory's
        // permission, so without this a user could replace a file of someone else's that they
        // may not even write (and root anybody's).
        Ok(m) if m.is_file() && m.uid() != rustix::process::geteuid().as_raw() => {
            return Err(usage(format!(
                "FILE: {p} belongs to another user (uid {}); --force replaces only your own \
                 files: remove it yourself or pick another path",
                m.uid()
            )))
        }
        // With --force, the file is replaced below (unlinked, then made anew): its blocks are
        // freed only where no other hard link keeps them.
        Ok(m) if m.nlink() == 1 => m.len(),
        Ok(_) => 0,
        Err(_) => 0,
    };
    // Before anything is created: a write that cannot fit fails here, not at a full disk.
    let key = format!("FILE {p}");
    crate::fsguard::ensure_free(&spec.target.path, need_bytes.saturating_sub(existing), &key)
        .map_err(|e| anyhow!("{e}"))?;
    if spec.safety.force && existing_file {
        // Replaced like a batch's outputs, never truncated in place: a truncation would write
        // through every other hard link of the file (`ln precious.txt out.bin`) and into a file
        // another process has open. Unlinking removes only this name; what another link names
        // keeps its data.
        std::fs::remove_file(&spec.target.path)
            .map_err(|e| anyhow!("FILE: --force: cannot replace {p}: {e}"))?;
    }
    // O_CREAT|O_EXCL|O_NOFOLLOW: only a file this run makes is ever written, whatever another
    // process put at the path since the checks.
    let anchor = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&spec.target.path)
        .map_err(|e| open_error(&spec.target.path, e, false))?;
    // First, before the layout's long writes: a process killed from here on leaves a marked
    // file. A file system without user extended attributes keeps no mark (no proof then).
    match &spec.safety.mark_created {
        Some(mark) => crate::fsguard::mark(&anchor, mark),
        // The record that diskscope made this file: a batch reuses it as its test file only
        // with it (and only while every byte is still the pattern, `sweep::files`).
        None => crate::fsguard::mark_test_file(&anchor),
    };
    let created = crate::fsguard::created_of_open(&spec.target.path, &anchor)
        .with_context(|| format!("FILE: reading back {p}"))?;
    Ok(Output {
        anchor,
        created: Some(created),
    })
}

/// Opens files, applies cache control and measures residency.
pub fn prepare(spec: &RunSpec) -> anyhow::Result<Prepared> {
    if let Some(probe) = crate::engine::caps(spec.setup.method).probe {
        probe().map_err(usage)?;
    }
    let bs = spec.setup.block_size_bytes;
    let write = spec.setup.op == Op::Write;
    let mut notes = Vec::new();
    let (file_size, total, read_anchor) = if write {
        let total = match spec.target.block_count {
            Some(c) => bs * c,
            None => DEFAULT_WRITE_SPAN.next_multiple_of(bs),
        };
        (total, total, None)
    } else {
        let meta = std::fs::metadata(&spec.target.path)
            .map_err(|e| open_error(&spec.target.path, e, false))?;
        if meta.is_dir() {
            return Err(usage(format!(
                "FILE: {} is a directory; give a regular file",
                crate::text::shown_path(&spec.target.path)
            )));
        }
        let mut f = open_for(spec, false)?;
        let file_size = f.seek(SeekFrom::End(0)).context("finding the file size")?;
        // A fleet rank's share of a shared file starts at `range_start_bytes` (0 elsewhere).
        let size = file_size.saturating_sub(spec.target.range_start_bytes);
        let total = match spec.target.block_count {
            Some(c) if bs * c > size && spec.setup.pattern == Pattern::Sequential => {
                notes.push(format!(
                    "note: the file ends at {size} bytes, before {c} blocks of {bs}; read {size} bytes"
                ));
                size
            }
            Some(c) if spec.setup.pattern == Pattern::Sequential => bs * c,
            _ => size,
        };
        (file_size, total, Some(f))
    };
    // The buffers must fit before anything is created or read.
    let loop_range = spec.target.loop_range
        || (spec.target.duration.is_some() && spec.target.block_count.is_none());
    let shares = plan_shares(spec, total);
    let fits: Vec<(usize, u32)> = shares
        .iter()
        .map(|s| budget::fitted(spec, s, total, loop_range))
        .collect();
    budget::check_budget(spec, &fits, budget::mem_available_bytes())?;
    let plan = SharePlan {
        loop_range,
        shares,
        fits,
    };
    let (anchor, created) = match read_anchor {
        None => {
            let out = create_output(spec, spec.target.range_start_bytes + total)?;
            (out.anchor, out.created)
        }
        Some(f) => {
            cache::prepare_open(&f, spec.setup.cache, spec.target.range_start_bytes + total)?;
            (f, None)
        }
    };
    test_hook("after-create");
    // Past this point a failure removes the file this run created (inode-checked).
    let ready = prepare_opened(spec, write, &anchor, total, plan, notes);
    match ready {
        Ok((probe, residency_before, jobs, mut notes, buffer_layout)) => {
            let watch = if write {
                None
            } else {
                watch_input(&probe, spec, &mut notes)?
            };
            Ok(Prepared {
                spec: spec.clone(),
                file_size,
                total,
                residency_before,
                notes,
                jobs,
                watch,
                sync_file: write.then_some(probe),
                created,
                buffer_layout,
            })
        }
        Err(e) => {
            // A write whose blocks could not be reserved is a failed run (a full disk, said by
            // its error kind), like one that filled the disk while running.
            let e = match e.downcast::<PreallocFailed>() {
                Ok(p) => anyhow::Error::new(RunFailed {
                    message: p.to_string(),
                    cause: FailureCause::Preallocation,
                    io_kind: Some(p.error.kind()),
                    bytes_done: 0,
                    bytes_planned: p.len_bytes,
                }),
                Err(e) => e,
            };
            // Inode-checked: a file put at the path since is left alone.
            if !created.as_ref().is_some_and(|c| c.remove()) {
                return Err(e);
            }
            Err(match e.downcast::<RunFailed>() {
                Ok(mut failed) => {
                    failed.message.push_str("; removed the partial file");
                    failed.into()
                }
                Err(e) => e.context(format!(
                    "removed {} again, which this run had created",
                    crate::text::shown_path(&spec.target.path)
                )),
            })
        }
    }
}

/// The watch over a read run's input (a read lease, then its stamp: see [`FileWatch`]), taken
/// last, just before the workers may start; what it cannot see is said in `notes`, which every
/// front end shows.
fn watch_input(
    probe: &File,
    spec: &RunSpec,
    notes: &mut Vec<String>,
) -> anyhow::Result<Option<FileWatch>> {
    let watch = FileWatch::new(probe.try_clone()?);
    notes.extend(watch.as_ref().and_then(|w| w.unguarded(&spec.target.path)));
    if probe.metadata()?.file_type().is_block_device() {
        notes.push(format!(
            "note: {} is a block device: writes to it by other processes during the run cannot \
             be detected (leases exist only for regular files)",
            crate::text::shown_path(&spec.target.path)
        ));
    }
    Ok(watch)
}

type Opened = (
    File,
    Option<Residency>,
    Vec<WorkerJob>,
    Vec<String>,
    Option<BufferLayout>,
);

/// How the run's range is split among its workers and what each worker's buffers were fitted
/// to: computed once, checked against the memory budget before anything is created, then used
/// to build the jobs.
struct SharePlan {
    loop_range: bool,
    shares: Vec<Share>,
    /// (block size, queue depth) per worker.
    fits: Vec<(usize, u32)>,
}

/// The part of [`prepare`] after the file is opened (or created): every descriptor is a reopen
/// of `anchor` (see [`reopen`]).
fn prepare_opened(
    spec: &RunSpec,
    write: bool,
    anchor: &File,
    total: u64,
    plan: SharePlan,
    mut notes: Vec<String>,
) -> anyhow::Result<Opened> {
    let SharePlan {
        loop_range,
        shares,
        fits,
    } = plan;
    let probe = reopen(anchor, spec, write)?;
    if write && crate::engine::caps(spec.setup.method).maps_file {
        // Never shrink: fleet ranks write their shares of one file (`range_start_bytes`).
        let end = spec.target.range_start_bytes + total;
        let len = probe.metadata().map(|m| m.len()).unwrap_or(0);
        probe
            .set_len(end.max(len))
            .context("sizing the file for mmap writes")?;
    }
    crate::engine::setup::preallocate(spec, &probe, total, &mut notes)?;
    let residency_before = cache::residency_of(&probe).ok();
    if !write {
        if let Some(w) = cache::cold_warning(spec.setup.cache, residency_before.as_ref()) {
            notes.push(w);
        }
    }
    let write_data = crate::engine::setup::write_data(spec, total, &mut notes);
    crate::engine::setup::lay_out_mix(spec, &probe, total, write_data.as_deref(), &mut notes)?;
    let jobs = plan_jobs(spec, anchor, total, shares, &fits, loop_range, write_data)?;
    let layout =
        crate::engine::setup::buffer_layout(spec, jobs.iter().filter_map(|j| j.slots.as_ref()));
    notes.extend(crate::engine::setup::buffer_note(
        spec,
        jobs.first().and_then(|j| j.slots.as_ref()),
        layout.as_ref(),
    ));
    Ok((probe, residency_before, jobs, notes, layout))
}

/// Splits the run between workers: contiguous, block-aligned ranges (sequential), or the whole
/// span with a share of the operations each (random).
fn plan_shares(spec: &RunSpec, total: u64) -> Vec<Share> {
    let bs = spec.setup.block_size_bytes;
    let blocks = total.div_ceil(bs);
    let threads = spec.setup.threads as u64;
    (0..threads)
        .map(|w| match spec.setup.pattern {
            Pattern::Sequential => {
                let first = blocks * w / threads;
                let last = blocks * (w + 1) / threads;
                let at = spec.target.range_start_bytes;
                Share {
                    range: at + (first * bs).min(total)..at + (last * bs).min(total),
                    max_ops: None,
                }
            }
            Pattern::Random => Share {
                range: 0..total,
                // A looping run (the explorer) goes on until stopped; the count only sizes the
                // range.
                max_ops: spec
                    .target
                    .block_count
                    .filter(|_| !spec.target.loop_range)
                    .map(|c| c * (w + 1) / threads - c * w / threads),
            },
        })
        .collect()
}

/// One job per share, each with its own descriptor and the block size and queue depth it was
/// fitted to (see [`budget::fitted`]).
fn plan_jobs(
    spec: &RunSpec,
    anchor: &File,
    total: u64,
    shares: Vec<Share>,
    fits: &[(usize, u32)],
    loop_range: bool,
    write_data: Option<std::sync::Arc<crate::engine::WriteData>>,
) -> anyhow::Result<Vec<WorkerJob>> {
    let mut jobs = Vec::with_capacity(shares.len());
    for (w, (share, &(block_size, queue_depth))) in shares.into_iter().zip(fits).enumerate() {
        jobs.push(WorkerJob {
            worker: w,
            file: reopen(anchor, spec, spec.setup.op == Op::Write)?,
            setup: crate::config::Setup {
                block_size_bytes: block_size as u64,
                queue_depth,
                ..spec.setup
            },
            range: share.range,
            span: total,
            loop_range,
            max_ops: share.max_ops,
            seed: spec.safety.seed,
            // Sized by what the budget fitted to this worker, never by the spec's raw values.
            slots: crate::engine::setup::worker_slots(spec, block_size, queue_depth)?,
            write_data: write_data.clone(),
        });
    }
    Ok(jobs)
}
