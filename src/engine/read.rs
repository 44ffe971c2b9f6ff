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

use super::{
    complete_read, fill_from, write_at_position, DescriptorLost, Engine, WorkerCtx, WorkerJob,
};
use crate::config::Op;
use anyhow::Context;
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;

/// `read(2)` as a bare system call (no cancellation-point wrapper, no call into libc).
#[inline(always)]
pub(crate) fn sys_read(fd: RawFd, buf: &mut [u8]) -> std::io::Result<usize> {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        let ret: isize;
        // SAFETY: the x86-64 Linux system call ABI: number in rax, arguments in rdi, rsi, rdx;
        // the kernel clobbers rcx and r11 and returns in rax. `buf` is valid for writes of
        // `buf.len()` bytes for the duration of the call.
        unsafe {
            std::arch::asm!(
                "syscall",
                inlateout("rax") libc::SYS_read as isize => ret,
                in("rdi") fd as isize,
                in("rsi") buf.as_mut_ptr(),
                in("rdx") buf.len(),
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack)
            );
        }
        if ret < 0 {
            Err(std::io::Error::from_raw_os_error(-ret as i32))
        } else {
            Ok(ret as usize)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    {
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the duration of the call.
        let n = unsafe { libc::syscall(libc::SYS_read, fd, buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

/// Opens `path` read-only (with `O_DIRECT` if `flags` has it) and checks it is still `meta`'s file.
fn reopen(path: &std::path::Path, flags: i32, meta: &std::fs::Metadata) -> Option<File> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let open_flags = libc::O_RDONLY | libc::O_CLOEXEC | (flags & libc::O_DIRECT);
    #[cfg(test)]
    if tests::fail_this_open() {
        return None;
    }
    // SAFETY: `c` is a NUL-terminated path; open has no other preconditions.
    let fd = unsafe { libc::open(c.as_ptr(), open_flags) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just returned by open and is owned by nobody else.
    let f = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let m = f.metadata().ok()?;
    (m.dev() == meta.dev() && m.ino() == meta.ino()).then_some(f)
}

/// Moves this worker thread onto a descriptor table of its own (`unshare(CLONE_FILES)`) and
/// replaces `job.file` with a fresh open file description that only this table references, so
/// `read(2)` needs neither a file reference nor the `f_pos` lock. The job's original descriptor
/// is closed while still in the shared table, so nothing leaks there. Returns whether it did;
/// files that cannot be reopened by path (not regular, renamed, deleted) keep the shared table.
fn privatize(job: &mut WorkerJob) -> anyhow::Result<bool> {
    let fd = job.file.as_raw_fd();
    let Ok(meta) = job.file.metadata() else {
        return Ok(false);
    };
    let Ok(path) = std::fs::read_link(format!("/proc/self/fd/{fd}")) else {
        return Ok(false);
    };
    // SAFETY: F_GETFL on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if !meta.is_file() || flags < 0 || reopen(&path, flags, &meta).is_none() {
        return Ok(false);
    }
    // SAFETY: closes the job's descriptor number in the shared table. `job.file` still holds that
    // number, so it is replaced below and the stale value forgotten, never closed a second time.
    unsafe { libc::close(fd) };
    // SAFETY: unshare(CLONE_FILES) only affects the calling thread's descriptor table.
    let private = unsafe { libc::unshare(libc::CLONE_FILES) } == 0;
    let fresh = reopen(&path, flags, &meta).with_context(|| {
        format!(
            "reopening {} (renamed or deleted during the run?)",
            path.display()
        )
    });
    match fresh {
        Ok(f) => {
            std::mem::forget(std::mem::replace(&mut job.file, f));
            Ok(private)
        }
        Err(e) => {
            // `job.file` still holds the number closed above; dropping it would close that
            // number again, and in a shared table another thread may own it by now. Hand the
            // job a descriptor it owns, or, if even that cannot be had, say so with
            // `DescriptorLost`, on which the job is forgotten instead of dropped.
            #[cfg(test)]
            let null = if tests::fail_this_open() {
                Err(std::io::Error::from_raw_os_error(libc::EMFILE))
            } else {
                File::open("/dev/null")
            };
            #[cfg(not(test))]
            let null = File::open("/dev/null");
            match null {
                Ok(null) => {
                    std::mem::forget(std::mem::replace(&mut job.file, null));
                    Err(e)
                }
                Err(_) => Err(e.context(DescriptorLost)),
            }
        }
    }
}

pub struct ReadEngine;

impl Engine for ReadEngine {
    fn run(&self, job: &mut WorkerJob, ctx: &mut WorkerCtx) -> anyhow::Result<bool> {
        if job.op == Op::Write {
            return write_run(job, ctx);
        }
        privatize(job)?;
        let mut buf = job.take_buffer();
        let mut file = &job.file;
        let fd = job.file.as_raw_fd();
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
    use crate::config::{Method, RunSpec};
    use std::cell::Cell;
    use std::os::fd::AsRawFd;

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

    fn is_open(fd: i32) -> bool {
        // SAFETY: F_GETFD only inspects the descriptor table.
        unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
    }

    #[test]
    fn a_failed_reopen_never_leaves_the_job_a_descriptor_it_does_not_own() {
        // A thread of its own: privatize gives it a private descriptor table.
        std::thread::spawn(|| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f");
            std::fs::write(&path, b"data").unwrap();
            let mut job = crate::engine::tests_support::read_job(&path);
            // The check open succeeds; every open after the job's descriptor is closed fails
            // (the reopen, and anything the error path tries), as when the file is deleted and
            // the descriptor limit is reached at once.
            OPENS_BEFORE_FAILING.with(|n| n.set(1));
            let r = super::privatize(&mut job);
            OPENS_BEFORE_FAILING.with(|n| n.set(u32::MAX));
            // Whatever this thread opens next may get the number the job's descriptor had.
            let other = std::fs::File::open(&path).unwrap();
            let other_fd = other.as_raw_fd();
            // What is done with a finished job.
            let r = r.map(|_| true);
            crate::engine::dispose_job(job, crate::engine::descriptor_lost(&r));
            assert!(
                is_open(other_fd),
                "dropping the job closed descriptor {other_fd}, which it did not own"
            );
            drop(other);
        })
        .join()
        .unwrap();
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
        spec.method = Method::Read;
        spec.block_size_bytes = 4096;
        spec.threads = 3;
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
