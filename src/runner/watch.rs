//! Watching the file a read run reads, so an XOR is only ever printed for data that was the
//! file's at one moment. Two guards, both taken when the run is prepared and checked when it
//! ends:
//!
//! * **A read lease** (`fcntl(F_SETLEASE, F_RDLCK)`): the kernel grants it only while no process
//!   has the file open for writing (a shared writable mapping keeps its descriptor's file open,
//!   so it counts), and tells us (a signal) when one opens it or truncates it. The handler hands
//!   the lease back at once, so the writer is never kept waiting, and the run ends as an error.
//!   This is what catches writes that move nothing else: pages of a `MAP_SHARED` mapping that are
//!   already dirty are written to without any fault, so neither mtime nor ctime moves. Where no
//!   lease can be had (another process has the file open for writing already; a file system
//!   without leases, such as NFS or FUSE; a file that belongs to another user, for a user
//!   without `CAP_LEASE`; a descriptor of this process open for writing on it),
//!   [`FileWatch::unguarded`] says so in one line and the run goes on: changes through such a
//!   writer cannot be detected.
//! * **Size, times and inode**: its size, modification and status-change times and inode are
//!   compared. The ctime matters: `touch -m -r` (or `utimensat`) puts the mtime back after an
//!   in-place rewrite, but no user can set the ctime, and every write or `utimensat` moves it. A
//!   read that comes back short already fails the worker (the file shrank); this catches what a
//!   short read cannot see: a file truncated and extended again, one that grew, or one
//!   rewritten in place while the run read it.
//!
//! Each change means the XOR is of data that was never the file's at any one moment, so the run
//! fails instead of printing it.

use std::fs::File;
use std::os::unix::fs::MetadataExt;

/// What a change to a file's data moves: size, modification and status-change times, and the
/// inode (constant through one descriptor; compared so a watch built on a path would notice a
/// swap too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size_bytes: u64,
    mtime_s: i64,
    mtime_ns: i64,
    ctime_s: i64,
    ctime_ns: i64,
    dev: u64,
    ino: u64,
}

fn stamp_of(m: &std::fs::Metadata) -> Stamp {
    Stamp {
        size_bytes: m.len(),
        mtime_s: m.mtime(),
        mtime_ns: m.mtime_nsec(),
        ctime_s: m.ctime(),
        ctime_ns: m.ctime_nsec(),
        dev: m.dev(),
        ino: m.ino(),
    }
}

/// A regular file under watch, through its own descriptor.
#[derive(Debug)]
pub struct FileWatch {
    /// Released before `file` is closed (fields drop in order).
    lease: Result<lease::Lease, lease::Refused>,
    file: File,
    before: Stamp,
}

/// The file a read run read changed during the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(self))]
pub struct FileChanged {
    pub size_before_bytes: u64,
    pub size_after_bytes: u64,
    /// Its size, times and inode did not move, but another process opened the file for writing
    /// (or truncated it) during the run: its read lease was broken. Writes through pages of a
    /// shared mapping that were already dirty move neither size nor times.
    pub opened_for_writing: bool,
}

fn describe(c: &FileChanged) -> String {
    let (before, after) = (c.size_before_bytes, c.size_after_bytes);
    if !c.opened_for_writing {
        format!(
            "the file {} while being read (size {before} bytes before the run, {after} after); \
             another process changed it, so no XOR is reported",
            how(&before, &after)
        )
    } else {
        "the file changed during the run: another process opened it for writing while it was \
         being read, so its data may have changed even though its size and times did not (a \
         write through a shared mapping moves neither); no XOR is reported"
            .to_string()
    }
}

/// What a change of size from `before` to `after` bytes is called.
fn how(before: &u64, after: &u64) -> &'static str {
    match after.cmp(before) {
        std::cmp::Ordering::Less => "shrank",
        std::cmp::Ordering::Greater => "grew",
        std::cmp::Ordering::Equal => "was modified",
    }
}

impl FileWatch {
    /// Starts watching `file` (its descriptor is kept; it must be open read-only): takes a read
    /// lease on it, then its stamp. `None` for anything but a regular file with data
    /// (pseudo-files report size 0 and times that move on their own).
    pub fn new(file: File) -> Option<FileWatch> {
        let m = file.metadata().ok()?;
        if !(m.is_file() && m.len() > 0) {
            return None;
        }
        // The lease first: a writer that opens the file after this breaks it, so the stamp
        // taken next is of a file no writer had open.
        let lease = lease::Lease::take(&file);
        let m = file.metadata().ok()?;
        Some(FileWatch {
            lease,
            before: stamp_of(&m),
            file,
        })
    }

    /// One line for the user when changes to the file cannot all be detected (no read lease
    /// could be had), naming `path`; None when they can.
    pub fn unguarded(&self, path: &std::path::Path) -> Option<String> {
        let why = self.lease.as_ref().err()?;
        Some(format!(
            "warning: {} {why}; changes made through {} during the run cannot be detected, so \
             the XOR may match no single version of the file",
            crate::text::shown_path(path),
            why.through()
        ))
    }

    /// `Err` if the file's size, mtime, ctime or inode moved since [`FileWatch::new`], or
    /// another process opened it for writing meanwhile (its read lease was broken).
    pub fn check_unchanged(&self) -> Result<(), FileChanged> {
        let broken = self.lease.as_ref().is_ok_and(|l| !l.held());
        let after = match self.file.metadata() {
            Ok(m) => stamp_of(&m),
            Err(_) if broken => self.before,
            Err(_) => return Ok(()),
        };
        if after == self.before && !broken {
            return Ok(());
        }
        Err(FileChanged {
            size_before_bytes: self.before.size_bytes,
            size_after_bytes: after.size_bytes,
            // Only the lease tells, when nothing else moved.
            opened_for_writing: broken && after == self.before,
        })
    }
}

/// Read leases (`fcntl(F_SETLEASE)`): taking one, and answering its break.
///
/// The kernel signals a lease break with `SIGIO` to the process that took the lease, then keeps
/// the writer's `open` waiting until the lease is given back (or `/proc/sys/fs/lease-break-time`,
/// 45 s by default, passed). The handler gives back every lease of ours whose break is pending
/// (`F_GETLEASE` then reads `F_UNLCK`), so the writer goes on at once; the run learns of it at
/// its end from `F_GETLEASE`, which stays `F_UNLCK` once the lease is gone. The descriptors with
/// a lease are listed in [`LEASED`] for the handler (async-signal-safe: atomics and `fcntl`).
mod lease {
    use std::fs::File;
    use std::os::fd::{AsRawFd, RawFd};
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::OnceLock;

    /// Leases held at once at most (one per read run under way in this process).
    const SLOTS: usize = 64;
    /// Descriptors holding a lease of ours; -1 for a free slot.
    static LEASED: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];
    /// Whether the `SIGIO` handler is installed (tried once).
    static HANDLER: OnceLock<bool> = OnceLock::new();

    extern "C" fn on_lease_break(_sig: libc::c_int) {
        // SAFETY: __errno_location returns this thread's errno; saved and put back so the
        // interrupted code sees the errno it had.
        let errno = unsafe { *libc::__errno_location() };
        for slot in &LEASED {
            let fd = slot.load(Ordering::Acquire);
            // SAFETY: fcntl(2) is async-signal-safe; on a descriptor that is not (or no longer)
            // ours it fails or does nothing we rely on.
            unsafe {
                if fd >= 0 && libc::fcntl(fd, libc::F_GETLEASE) == libc::F_UNLCK {
                    libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK);
                }
            }
        }
        // SAFETY: as above.
        unsafe { *libc::__errno_location() = errno };
    }

    /// Installs [`on_lease_break`] for `SIGIO` unless another handler is there already (then
    /// no lease is taken: its break would reach code that does not expect it).
    fn install_handler() -> bool {
        *HANDLER.get_or_init(|| {
            // SAFETY: a zeroed sigaction is a valid value for the kernel to fill or read; the
            // handler only touches atomics, errno and fcntl (async-signal-safe).
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(libc::SIGIO, std::ptr::null(), &mut old) != 0 {
                    return false;
                }
                if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
                    return false;
                }
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_lease_break as *const () as usize;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(libc::SIGIO, &sa, std::ptr::null_mut()) == 0
            }
        })
    }

    /// A read lease held on a descriptor (given back on drop).
    #[derive(Debug)]
    pub struct Lease {
        slot: usize,
        fd: RawFd,
    }

    /// Why no lease could be had.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Refused {
        /// Another process has the file open for writing (`EAGAIN`).
        WriterOpen,
        /// This process has it open for writing, through another descriptor (`EAGAIN`).
        WriterOpenHere,
        /// The file belongs to another user and we lack `CAP_LEASE` (`EACCES`).
        NotOwner,
        /// The file system has no leases, or they are off (`/proc/sys/fs/leases-enable`).
        Unsupported,
        /// Something else holds `SIGIO`, or too many runs hold leases at once.
        Unavailable,
    }

    impl std::fmt::Display for Refused {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(match self {
                Refused::WriterOpen => "is open for writing by another process",
                Refused::WriterOpenHere => {
                    "is open for writing in this process too (another run's descriptor), so no \
                     read lease could be taken on it"
                }
                Refused::NotOwner => {
                    "belongs to another user, so no read lease could be taken on it"
                }
                Refused::Unsupported => "is on a file system without read leases",
                Refused::Unavailable => "could not be given a read lease",
            })
        }
    }

    impl Refused {
        /// Whose changes go unseen.
        pub fn through(&self) -> &'static str {
            match self {
                Refused::WriterOpen | Refused::WriterOpenHere => "it",
                _ => "a shared mapping by another process",
            }
        }
    }

    /// Whether a descriptor of this process other than `file`'s is open for writing on the
    /// same file (`/proc/self/fdinfo` says each descriptor's access mode).
    fn open_for_writing_here(file: &File) -> bool {
        use std::os::unix::fs::MetadataExt;
        let Ok(m) = file.metadata() else {
            return false;
        };
        let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
            return false;
        };
        fds.flatten().any(|e| {
            let same =
                std::fs::metadata(e.path()).is_ok_and(|o| (o.dev(), o.ino()) == (m.dev(), m.ino()));
            let info = std::path::Path::new("/proc/self/fdinfo").join(e.file_name());
            same && std::fs::read_to_string(info).is_ok_and(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("flags:"))
                    .and_then(|f| i32::from_str_radix(f.trim(), 8).ok())
                    .is_some_and(|f| f & libc::O_ACCMODE != libc::O_RDONLY)
            })
        })
    }

    impl Lease {
        /// Takes a read lease on `file` (open read-only).
        pub fn take(file: &File) -> Result<Lease, Refused> {
            if !install_handler() {
                return Err(Refused::Unavailable);
            }
            let fd = file.as_raw_fd();
            // Listed before it is taken, so a break that comes at once is answered.
            let slot = LEASED
                .iter()
                .position(|s| {
                    s.compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                })
                .ok_or(Refused::Unavailable)?;
            // SAFETY: fcntl(2) on a descriptor the caller owns; no memory involved.
            if unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) } == 0 {
                return Ok(Lease { slot, fd });
            }
            let e = std::io::Error::last_os_error();
            LEASED[slot].store(-1, Ordering::Release);
            Err(match e.raw_os_error() {
                Some(libc::EAGAIN) if open_for_writing_here(file) => Refused::WriterOpenHere,
                Some(libc::EAGAIN) => Refused::WriterOpen,
                Some(libc::EACCES) | Some(libc::EPERM) => Refused::NotOwner,
                Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => {
                    Refused::Unsupported
                }
                _ => Refused::Unavailable,
            })
        }

        /// Whether the lease is still held: false once a writer opened (or someone truncated)
        /// the file, whether or not the handler has given it back yet.
        pub fn held(&self) -> bool {
            // SAFETY: fcntl(2) on the descriptor the lease is on, still open (the watch owns it).
            unsafe { libc::fcntl(self.fd, libc::F_GETLEASE) == libc::F_RDLCK }
        }
    }

    impl Drop for Lease {
        fn drop(&mut self) {
            LEASED[self.slot].store(-1, Ordering::Release);
            // SAFETY: as in `held`; gives the lease back before the descriptor is closed.
            unsafe { libc::fcntl(self.fd, libc::F_SETLEASE, libc::F_UNLCK) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_in_this_process_is_named_as_such_not_as_another_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![1u8; 8192]).unwrap();
        let writer = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let watch = FileWatch::new(File::open(&path).unwrap()).unwrap();
        let line = watch
            .unguarded(&path)
            .expect("no lease while a writer is open");
        assert!(line.contains("in this process"), "{line}");
        drop(writer);
        // Without a writer the lease is taken, nothing is said, and the file is unchanged.
        let watch = FileWatch::new(File::open(&path).unwrap()).unwrap();
        if watch.unguarded(&path).is_none() {
            assert_eq!(watch.check_unchanged(), Ok(()));
        }
    }
}
