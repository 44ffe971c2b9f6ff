//! `read`: plain `read(2)` / `write(2)` on the descriptor's file position, the lab's baseline.
//! Sequential runs seek once (and again when a looping range starts over); random runs pay an
//! `lseek` per operation, which is what a `read`-based program has to do.
//!
//! Reads go through [`sys_read`], the bare system call: glibc's `read` wrapper is a thread
//! cancellation point, and in a process with more than one thread (ours: the workers plus the
//! collecting thread) it brackets every call with cancellation bookkeeping that costs ~10% of a
//! 1-byte cached read. A single-threaded C loop never pays it, so neither should we.
//!
//! For the same reason a reading worker gives itself a private descriptor table ([`privatize`]):
//! while threads share one table, every `read(2)` takes a reference on the open file and, since
//! the file is then referenced twice, locks its `f_pos` mutex, ~10% of a 1-byte read. With a
//! private table holding the only reference to a fresh open file description, the kernel skips
//! both, as it does for a single-threaded program.
//!
//! What stays `unsafe` here: `unshare(CLONE_FILES)` (rustix's wrapper is `unsafe` too, since a
//! thread that leaves the shared table must not use descriptors of the other threads, which
//! [`privatize`] sees to) and taking over the shared table's entry as an `OwnedFd`.

use super::caps::Caps;
use super::failure::complete_read;
use super::job::{fill_from, write_at_position, Engine, WorkerJob};
use crate::config::{Method, Op};
use crate::measure::WorkerCtx;
use anyhow::Context;
use rustix::fs::{fcntl_getfl, openat, Mode, OFlags, CWD};
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;

/// `read(2)` as a bare system call (no cancellation-point wrapper, no call into libc): rustix's
/// `read`, an inline `syscall` instruction with no other work, as the hand-written assembly here
/// was before it.
#[inline(always)]
pub(crate) fn sys_read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> std::io::Result<usize> {
    Ok(rustix::io::read(fd, buf)?)
}

/// A new open file description of the file `fd` is open on in this thread's own descriptor
/// table, read-only (with `O_DIRECT` if `flags` has it), checked to be `meta`'s file. It goes
/// through `/proc/thread-self/fd/N`, which names the open file itself, never through the text
/// the link reads as: that text is only a name, and once the file was renamed or unlinked (it
/// then reads `PATH (deleted)`) it may name anything another process put there, a FIFO whose
/// `open` would wait forever.
fn reopen_own(fd: RawFd, flags: OFlags, meta: &std::fs::Metadata) -> Option<File> {
    #[cfg(test)]
    if tests::fail_this_open() {
        return None;
    }
    let open_flags = OFlags::RDONLY | OFlags::CLOEXEC | (flags & OFlags::DIRECT);
    let new_fd = openat(
        CWD,
        format!("/proc/thread-self/fd/{fd}"),
        open_flags,
        Mode::empty(),
    )
    .ok()?;
    let f = File::from(new_fd);
    let m = f.metadata().ok()?;
    (m.dev() == meta.dev() && m.ino() == meta.ino()).then_some(f)
}

/// Moves this worker thread onto a descriptor table of its own (`unshare(CLONE_FILES)`) and
/// replaces `job.file` with a fresh open file description that only this table references, so
/// `read(2)` needs neither a file reference nor the `f_pos` lock. Returns whether it did.
///
/// After the unshare the job's descriptor number is open in both tables, on the same open file
/// description. This table's entry is the job's (closed when `job.file` is replaced or
/// dropped); the shared table's entry can only be closed by a thread still using that table,
/// so it is handed over ([`super::leave_for_shared_table`]) and the runner closes it once the
/// workers are joined. If the reopen fails, the job reads through its own copy of the
/// descriptor, correct but without the speed-up.
fn privatize(job: &mut WorkerJob) -> anyhow::Result<bool> {
    let fd = job.file.as_raw_fd();
    let Ok(meta) = job.file.metadata() else {
        return Ok(false);
    };
    let Ok(flags) = fcntl_getfl(&job.file) else {
        return Ok(false);
    };
    if !meta.is_file() {
        return Ok(false);
    }
    // SAFETY: unshare(CLONE_FILES) only affects the calling thread's descriptor table.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        return Ok(false);
    }
    // SAFETY: `fd` is open in the shared table, where the job owned it; from here the job owns
    // only this table's entry (through `job.file`), so the shared entry gets this one owner,
    // which closes it from a thread of the shared table.
    super::failure::leave_for_shared_table(unsafe { OwnedFd::from_raw_fd(fd) });
    if let Some(fresh) = reopen_own(fd, flags, &meta) {
        // Dropping the old `File` closes this table's copy of `fd`.
        job.file = fresh;
    }
    Ok(true)
}

pub struct ReadEngine;

/// What `read` can do (registered in `engine::caps`).
pub const CAPS: Caps = Caps {
    method: Method::Read,
    engine: &ReadEngine,
    probe: None,
    queued: false,
    copies_through_cache: true,
    maps_file: false,
    slots_per_depth: 1,
    extra_buffer_bytes: 0,
    fio_engine: "sync",
    fio_read_caveat: None,
    fio_write_caveat: None,
    write_call: "write",
};

impl Engine for ReadEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        if job.setup.op == Op::Write {
            return write_run(job, ctx);
        }
        privatize(job)?;
        let mut buf = job.take_buffer();
        let mut file = &job.file;
        let fd = job.file.as_fd();
        let mut pos = u64::MAX;
        let mut cursor = job.cursor();
        for b in cursor.by_ref() {
            let data = &mut buf[..b.len];
            let t0 = ctx.start();
            if pos != b.offset {
                file.seek(SeekFrom::Start(b.offset))
                    .with_context(|| format!("lseek to offset {}", b.offset))?;
            }
            let got = fill_from(data, |s, _| sys_read(fd, s))
                .with_context(|| format!("read at offset {}", b.offset))?;
            let t1 = ctx.now();
            pos = b.offset + got as u64;
            let n = complete_read(job, &b, got)?;
            ctx.xor(b.offset, b.first_pass, &buf[..n]);
            if !ctx.record(n as u64, t0, t1) || n == 0 {
                break;
            }
        }
        Ok(cursor.completed_pass())
    }
}

/// Writes with `write(2)` on the file position: the bytes come pre-generated (or are generated
/// before the clock is read), so only the system calls are timed.
fn write_run(job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
    let mut buf = job.take_buffer();
    let mut file = &job.file;
    let mut cursor = job.cursor();
    write_at_position(&mut file, job, &mut cursor, &mut buf, ctx, "lseek", "write")?;
    Ok(cursor.completed_pass())
}

#[cfg(test)]
mod tests {
    use crate::config::spec::RunSpec;
    use crate::config::Method;
    use std::cell::Cell;

    thread_local! {
        /// Opens to let through before the next ones fail (`u32::MAX`: none fail).
        static OPENS_BEFORE_FAILING: Cell<u32> = const { Cell::new(u32::MAX) };
    }

    /// Fault injection for `privatize`'s opens, per thread: whether this open must fail.
    pub(super) fn fail_this_open() -> bool {
        OPENS_BEFORE_FAILING.with(|n| match n.get() {
            0 => true,
            u32::MAX => false,
            k => {
                n.set(k - 1);
                false
            }
        })
    }

    #[test]
    fn a_worker_reads_its_own_file_even_when_the_path_names_something_else_by_then() {
        // A thread of its own: privatize gives it a private descriptor table.
        std::thread::spawn(|| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f");
            std::fs::write(&path, b"data").unwrap();
            let mut job = crate::engine::tests_support::read_job(&path);
            // The file is unlinked and a FIFO is put where its link text points.
            std::fs::remove_file(&path).unwrap();
            let planted = dir.path().join("f (deleted)");
            rustix::fs::mkfifoat(
                rustix::fs::CWD,
                &planted,
                rustix::fs::Mode::from_raw_mode(0o600),
            )
            .unwrap();
            assert!(super::privatize(&mut job).unwrap());
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut &job.file, &mut data).unwrap();
            assert_eq!(data, b"data");
            crate::engine::dispose_job(job, false);
        })
        .join()
        .unwrap();
        crate::engine::close_shared_leftovers();
    }

    #[test]
    fn a_failed_reopen_keeps_reading_the_jobs_own_descriptor() {
        std::thread::spawn(|| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f");
            std::fs::write(&path, b"data").unwrap();
            let mut job = crate::engine::tests_support::read_job(&path);
            OPENS_BEFORE_FAILING.with(|n| n.set(0));
            let r = super::privatize(&mut job);
            OPENS_BEFORE_FAILING.with(|n| n.set(u32::MAX));
            assert!(
                r.unwrap(),
                "the table is private even when the reopen failed"
            );
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut &job.file, &mut data).unwrap();
            assert_eq!(data, b"data");
            crate::engine::dispose_job(job, false);
        })
        .join()
        .unwrap();
        crate::engine::close_shared_leftovers();
    }

    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn open_descriptors() -> usize {
        std::fs::read_dir("/proc/self/fd").unwrap().count()
    }

    #[test]
    fn reading_workers_leave_no_descriptor_behind_and_read_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..100_003u32).map(|i| (i * 7 + 1) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mut spec = RunSpec::new(&path);
        spec.setup.method = Method::Read;
        spec.setup.block_size_bytes = 4096;
        spec.setup.threads = 3;
        let before = open_descriptors();
        for _ in 0..20 {
            let stop = Arc::new(AtomicBool::new(false));
            let out = crate::runner::run_blocking(&spec, "t", stop, |_, _| {}).unwrap();
            assert_eq!(out.aggregate.xor(), Some(crate::xor::xor_aligned(&data)));
        }
        // Other tests of this binary run in parallel and open files too; 20 runs of 3 leaked
        // workers each would add 60.
        assert!(
            open_descriptors() < before + 20,
            "{before} -> {}",
            open_descriptors()
        );
    }
}
