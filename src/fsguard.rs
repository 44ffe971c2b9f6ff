//! Guards around every file diskscope creates, removes or opens as input, so the promises
//! "never overwrites", "removes only its own files" and "never hangs on a file that cannot end"
//! hold by construction rather than by care at each call site:
//!
//! * [`create_exclusive`] makes a new file with `O_CREAT|O_EXCL|O_NOFOLLOW`: it never opens a
//!   file (or a symlink) that was already there, and returns a [`Created`] record of the inode it
//!   made. [`Created::remove`] unlinks the path only while it still names that same inode, so a
//!   file the user put in its place later is left alone.
//! * [`free_bytes`] / [`ensure_free`] check the file system has room before a large write, on the
//!   nearest existing ancestor (so nothing is created just to be refused).
//! * [`DirLock`] is an exclusive `flock` on a lock file in an output directory: a second batch
//!   writing to the same `--out` is refused with the first one's pid instead of interleaving rows.
//! * [`check_input`] refuses, before any `open`, inputs that would block or never end: FIFOs,
//!   sockets, character devices (`/dev/zero`), and `/proc` or `/sys` pseudo-files. Since a path
//!   can change between that look and the `open`, [`open_then_check`] opens with `O_NONBLOCK`
//!   and checks the descriptor itself before clearing the flag, and [`reopen`] makes further
//!   descriptors of an open file through `/proc/self/fd`, never through the path.

use rustix::fs::{flock, FlockOperation, OFlags};
use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The extended attribute that marks a file as one diskscope made (the explorer's scratch
/// files: `tui::scratch`), so that a later run can prove a leftover its own.
pub const MARK_XATTR: &str = "user.diskscope";

/// Sets `file`'s [`MARK_XATTR`] to `value`; returns whether it did. A file system without user
/// extended attributes keeps no mark: such a file then has no proof of being ours.
pub fn mark(file: &File, value: &str) -> bool {
    rustix::fs::fsetxattr(
        file,
        MARK_XATTR,
        value.as_bytes(),
        rustix::fs::XattrFlags::empty(),
    )
    .is_ok()
}

/// The [`MARK_XATTR`] value of a test file made by diskscope (a batch's `[file] create`, a fio
/// job's file, `run -w`'s output): the device and inode it was created as, so that a copy of it
/// (`cp -a` keeps extended attributes) or a file renamed into its place carries no proof.
pub fn test_file_mark(dev: u64, ino: u64) -> String {
    format!("test-file dev={dev} ino={ino}")
}

/// Marks the new `file` as a test file diskscope made ([`test_file_mark`]); returns whether the
/// file system kept the mark.
pub fn mark_test_file(file: &File) -> bool {
    file.metadata()
        .is_ok_and(|m| mark(file, &test_file_mark(m.dev(), m.ino())))
}

/// `file`'s [`MARK_XATTR`] value, if it has one (at most 128 bytes are read: ours are short).
pub fn mark_of(file: &File) -> Option<String> {
    let mut buf = [0u8; 128];
    let n = rustix::fs::fgetxattr(file, MARK_XATTR, &mut buf[..]).ok()?;
    Some(String::from_utf8_lossy(&buf[..n.min(buf.len())]).into_owned())
}

/// Whether the open `file` carries the test-file mark of its own device and inode: the record
/// made when diskscope created it. Only half the proof that a file is diskscope's to rewrite;
/// the other half is that its content is still what diskscope wrote (`sweep::files`).
pub fn has_test_file_mark(file: &File) -> bool {
    let Ok(m) = file.metadata() else { return false };
    mark_of(file).as_deref() == Some(test_file_mark(m.dev(), m.ino()).as_str())
}

/// Files a batch writes into in place (its test file, or the user's file with `write = true`),
/// each with the device and inode it had when the batch checked it. Every descriptor a run opens
/// by one of these paths is compared ([`check_registered`]): a file renamed over the path
/// between two experiments is refused, never written.
static REGISTERED: std::sync::Mutex<Vec<(PathBuf, u64, u64)>> = std::sync::Mutex::new(Vec::new());

/// Records that `path` must keep naming the file `file` is open on (see [`check_registered`]).
pub fn register_file(path: &Path, file: &File) -> std::io::Result<()> {
    let m = file.metadata()?;
    if let Ok(mut list) = REGISTERED.lock() {
        list.retain(|(p, _, _)| p != path);
        list.push((path.to_path_buf(), m.dev(), m.ino()));
    }
    Ok(())
}

/// Forgets `path` (the batch is done with it).
pub fn unregister_file(path: &Path) {
    if let Ok(mut list) = REGISTERED.lock() {
        list.retain(|(p, _, _)| p != path);
    }
}

/// Checks that `file`, just opened by `path`, is the file registered for that path (same device
/// and inode); a path nobody registered passes. The error says what was found instead.
pub fn check_registered(path: &Path, file: &File) -> Result<(), SwappedFile> {
    let expected = REGISTERED.lock().ok().and_then(|list| {
        list.iter()
            .find(|(p, _, _)| p == path)
            .map(|&(_, d, i)| (d, i))
    });
    let Some((dev, ino)) = expected else {
        return Ok(());
    };
    let found = file.metadata().map(|m| (m.dev(), m.ino())).ok();
    if found == Some((dev, ino)) {
        return Ok(());
    }
    Err(SwappedFile {
        path: path.to_path_buf(),
        expected: (dev, ino),
        found,
    })
}

/// [`check_registered`]'s refusal: `path` now names another file than the one checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} is no longer the file this batch checked (inode {} expected, {} found: another file was \
     renamed over it); nothing was written to it",
    crate::text::shown_path(.path),
    .expected.1,
    .found.map_or("none".to_string(), |f| f.1.to_string())
)]
pub struct SwappedFile {
    pub path: PathBuf,
    /// Device and inode when the batch checked it.
    pub expected: (u64, u64),
    /// Device and inode of what the path names now.
    pub found: Option<(u64, u64)>,
}

/// A file this process created, identified by its inode so removal can prove it is still ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    pub path: PathBuf,
    dev: u64,
    ino: u64,
}

impl Created {
    /// A record of the regular file now at `path` (not through a link), for a file proved ours
    /// by other means (a kept test file recognised by its pattern).
    pub fn of_existing(path: &Path) -> Option<Created> {
        let m = std::fs::symlink_metadata(path).ok()?;
        m.file_type().is_file().then(|| Created {
            path: path.to_path_buf(),
            dev: m.dev(),
            ino: m.ino(),
        })
    }

    /// Whether `path` still names the file we created (same inode, not replaced by a symlink).
    pub fn is_intact(&self) -> bool {
        std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| m.file_type().is_file() && m.dev() == self.dev && m.ino() == self.ino)
    }

    /// Whether the open `file` is the file we created (same device and inode).
    pub fn is_same(&self, file: &File) -> bool {
        file.metadata()
            .is_ok_and(|m| m.dev() == self.dev && m.ino() == self.ino)
    }

    /// Unlinks the path if it still names the file we created. Returns whether it was removed;
    /// anything else now at that path is left untouched.
    pub fn remove(&self) -> bool {
        self.is_intact() && std::fs::remove_file(&self.path).is_ok()
    }
}

/// Creates `path` as a new, empty regular file open for reading and writing. Fails with
/// `AlreadyExists` if anything (a file, a directory, a symlink, dangling or not) is there.
pub fn create_exclusive(path: &Path) -> std::io::Result<(File, Created)> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let m = f.metadata()?;
    let created = Created {
        path: path.to_path_buf(),
        dev: m.dev(),
        ino: m.ino(),
    };
    Ok((f, created))
}

/// One line saying why an exclusive creation failed, naming the path and what to do.
pub fn create_error(path: &Path, e: &std::io::Error) -> String {
    let p = crate::text::shown_path(path);
    match e.raw_os_error() {
        Some(libc::EEXIST) => {
            format!("{p} already exists; diskscope never replaces a file it did not create: remove it or pick another path")
        }
        Some(libc::ELOOP) => format!("{p} is a symbolic link; diskscope never writes through one: remove it or pick another path"),
        Some(libc::ENOENT) => format!(
            "the directory of {p} does not exist; create it first (mkdir -p {})",
            shell_quote_path(path.parent().unwrap_or(Path::new(".")))
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            format!("permission denied creating {p}; pick a directory you can write to")
        }
        Some(libc::ENOSPC) => format!("no space left creating {p}; free some space or pick another directory"),
        _ => format!("cannot create {p}: {e}"),
    }
}

/// Quotes `s` for a shell when it holds anything but plain path characters, so a suggested
/// command can be pasted as is. Text with a control character (an escape sequence in a file
/// name) is written in ANSI-C quotes (`$'a\033]0;x'`, bash, zsh, ksh, busybox and dash 0.5.12
/// read them), so the quoted word reproduces the text and never carries a raw control to the
/// terminal it is printed on.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        s.to_string()
    } else if s.chars().any(crate::text::is_unsafe_char) {
        ansi_c_quote(s.as_bytes())
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// [`shell_quote`] for a path, whose bytes need not be UTF-8: such a path is written in ANSI-C
/// quotes with its bytes as `\xNN`, so the word names exactly that file.
pub fn shell_quote_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    match path.to_str() {
        Some(s) => shell_quote(s),
        None => ansi_c_quote(path.as_os_str().as_bytes()),
    }
}

/// `$'...'` with every byte that is not printable ASCII as `\xNN` (so every unsafe character,
/// and any byte of a multi-byte one, stays text), `\` and `'` escaped.
fn ansi_c_quote(bytes: &[u8]) -> String {
    let mut out = String::from("$'");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('\'');
    out
}

/// The nearest ancestor of `path` (itself included) that exists; `.` for a relative path with
/// no existing prefix.
pub fn existing_ancestor(path: &Path) -> PathBuf {
    let mut p = path;
    loop {
        if std::fs::symlink_metadata(p).is_ok() {
            return p.to_path_buf();
        }
        match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => p = parent,
            _ => return PathBuf::from("."),
        }
    }
}

/// Bytes an unprivileged user may still write on the file system holding `path` (or its nearest
/// existing ancestor). None when the file system gives no figure.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(existing_ancestor(path)).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Refuses (with a one-line message naming `key`) when writing `need_bytes` under `path` would
/// not fit in the free space. A file system with no figure passes: writing reports a full disk.
pub fn ensure_free(path: &Path, need_bytes: u64, key: &str) -> Result<(), NoRoom> {
    match free_bytes(path) {
        Some(free_bytes) if need_bytes > free_bytes => Err(NoRoom {
            key: key.to_string(),
            need_bytes,
            dir: existing_ancestor(path),
            free_bytes,
        }),
        _ => Ok(()),
    }
}

/// [`ensure_free`]'s refusal: writing `need_bytes` would not fit in `dir`'s `free_bytes`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{key}: needs {} but {} has only {} free; ask for less or use another directory",
    crate::size::format_bytes_approx(*.need_bytes),
    crate::text::shown_path(.dir),
    crate::size::format_bytes_approx(*.free_bytes)
)]
pub struct NoRoom {
    /// The flag or key that asked for the bytes.
    pub key: String,
    pub need_bytes: u64,
    /// The nearest existing directory, where the free space was read.
    pub dir: PathBuf,
    pub free_bytes: u64,
}

/// Name of the lock file a batch holds in its output directory.
pub const LOCK_NAME: &str = ".diskscope.lock";

/// What a lock file of ours holds: this line and nothing else. A lock file is taken over (as
/// left by a batch that was killed) only when it holds exactly this, is unlocked, has one link
/// and belongs to us; an empty, hard-linked or otherwise different file of that name is the
/// user's and is never changed or removed.
fn lock_text(pid: u32) -> String {
    format!("diskscope batch lock, pid {pid}\n")
}

/// The pid in a lock file of ours, None for any other content.
fn lock_pid(text: &str) -> Option<u32> {
    let pid = text
        .strip_prefix("diskscope batch lock, pid ")?
        .strip_suffix('\n')?;
    (!pid.is_empty() && pid.chars().all(|c| c.is_ascii_digit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Why [`DirLock::acquire`] did not take the lock; each names `key` (the flag that chose the
/// directory) and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lock file (or its temporary name) could not be made, written or read.
    #[error("{key}: cannot lock {}: {}", crate::text::shown_path(.dir), create_error(.path, .error))]
    Io {
        key: String,
        dir: PathBuf,
        path: PathBuf,
        error: std::io::Error,
    },
    /// Our own new lock file could not be locked.
    #[error("{key}: cannot lock {}", crate::text::shown_path(.dir))]
    NotLocked { key: String, dir: PathBuf },
    /// Another process holds the lock (`pid` from the lock file, when it is ours).
    #[error(
        "{key}: another diskscope {} {} (pid {}); wait for it to finish or pick another {key}",
        if .key == "--dir" { "locality run is using" } else { "batch is writing to" },
        crate::text::shown_path(.dir),
        .pid.map_or("unknown".to_string(), |p| p.to_string())
    )]
    Held {
        key: String,
        dir: PathBuf,
        pid: Option<u32>,
    },
    /// A file of the lock's name that is not provably ours; left untouched.
    #[error(
        "{key}: {} {why}, so it is not provably a diskscope lock file; it was left \
         untouched: remove it if it is a leftover, or pick another {key}",
        crate::text::shown_path(.path)
    )]
    NotOurs {
        key: String,
        path: PathBuf,
        why: &'static str,
    },
    /// The lock file was replaced under us again and again.
    #[error("{key}: could not lock {} (the lock file keeps changing)", crate::text::shown_path(.dir))]
    KeepsChanging { key: String, dir: PathBuf },
}

/// An exclusive `flock` on `DIR/.diskscope.lock`, held while a batch writes into `DIR`. The lock
/// file is removed on drop (while still locked, after checking the path still names the locked
/// inode, so a waiting process never locks an unlinked file).
#[derive(Debug)]
pub struct DirLock {
    /// Holds the lock; closed (so unlocked) after `Drop` unlinks the path.
    _file: File,
    created: Created,
}

impl DirLock {
    /// Takes the lock or says who holds it: `Err` carries a one-line message naming `key`.
    /// The lock file is written under a temporary name, locked, and `link`ed into place (so it is
    /// never seen empty). A lock file left by a batch that was killed (our exact content,
    /// unlocked, one link, our uid) is removed and made anew; any other file of that name is
    /// refused, never changed.
    pub fn acquire(dir: &Path, key: &str) -> Result<DirLock, LockError> {
        let path = dir.join(LOCK_NAME);
        let cannot = |p: &Path, error: std::io::Error| LockError::Io {
            key: key.to_string(),
            dir: dir.to_path_buf(),
            path: p.to_path_buf(),
            error,
        };
        let tmp = dir.join(format!("{LOCK_NAME}.{}.new", std::process::id()));
        for _ in 0..100 {
            let (mut file, tmp_created) = create_exclusive(&tmp).map_err(|e| cannot(&tmp, e))?;
            let written = file.write_all(lock_text(std::process::id()).as_bytes());
            let locked = flock(&file, FlockOperation::NonBlockingLockExclusive);
            if let Err(e) = written {
                tmp_created.remove();
                return Err(cannot(&tmp, e));
            }
            if locked.is_err() {
                tmp_created.remove();
                return Err(LockError::NotLocked {
                    key: key.to_string(),
                    dir: dir.to_path_buf(),
                });
            }
            let mut linked = std::fs::hard_link(&tmp, &path);
            if linked
                .as_ref()
                .is_err_and(|e| matches!(e.raw_os_error(), Some(libc::EPERM | libc::EOPNOTSUPP)))
            {
                // A file system without hard links: rename is atomic too, but replaces, so only
                // when the name is free (only there can two batches race for the name).
                linked = if std::fs::symlink_metadata(&path).is_ok() {
                    Err(std::io::ErrorKind::AlreadyExists.into())
                } else {
                    std::fs::rename(&tmp, &path)
                };
            }
            tmp_created.remove();
            match linked {
                Ok(()) => {
                    let created = Created {
                        path: path.clone(),
                        dev: tmp_created.dev,
                        ino: tmp_created.ino,
                    };
                    return Ok(DirLock {
                        _file: file,
                        created,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(cannot(&path, e)),
            }
            drop(file);
            // Someone's file is there: inspect it read-only.
            let existing = match OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
                .open(&path)
            {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(cannot(&path, e)),
            };
            let Ok(m) = existing.metadata() else { continue };
            let mut text = String::new();
            if m.is_file() && m.len() < 64 {
                let _ = (&existing).read_to_string(&mut text);
            }
            let pid = lock_pid(&text).filter(|_| m.is_file());
            let free = flock(&existing, FlockOperation::NonBlockingLockExclusive).is_ok();
            if !free {
                return Err(LockError::Held {
                    key: key.to_string(),
                    dir: dir.to_path_buf(),
                    pid,
                });
            }
            let uid = rustix::process::geteuid().as_raw();
            let why = if !m.is_file() {
                Some("is not a regular file")
            } else if m.len() == 0 {
                Some("is empty")
            } else if m.nlink() != 1 {
                Some("has other hard links")
            } else if m.uid() != uid {
                Some("belongs to another user")
            } else if pid.is_none() {
                Some("holds something else")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(LockError::NotOurs {
                    key: key.to_string(),
                    path,
                    why,
                });
            }
            // A stale lock of ours (its batch was killed): remove it while we hold its lock and
            // it is still the file we inspected, then make a new one.
            let stale = Created {
                path: path.clone(),
                dev: m.dev(),
                ino: m.ino(),
            };
            stale.remove();
        }
        Err(LockError::KeepsChanging {
            key: key.to_string(),
            dir: dir.to_path_buf(),
        })
    }

    /// The lock file's record, for removal from a signal handler.
    pub fn created(&self) -> &Created {
        &self.created
    }
}

/// The pid written in `DIR/.diskscope.lock` while another process holds that lock; None when
/// nobody does (or there is no lock file).
pub fn lock_holder(dir: &Path) -> Option<String> {
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(dir.join(LOCK_NAME))
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    if flock(&f, FlockOperation::NonBlockingLockShared).is_ok() {
        return None; // free (closing the descriptor drops our shared lock)
    }
    let mut text = String::new();
    let _ = f.read_to_string(&mut text);
    Some(lock_pid(&text).map_or("unknown".to_string(), |p| p.to_string()))
}

/// Takes an exclusive `flock` on `file` without waiting; false when another descriptor holds one.
pub fn try_lock(file: &File) -> bool {
    flock(file, FlockOperation::NonBlockingLockExclusive).is_ok()
}

/// Creates the output file `path` (a CSV, a figure, a report) with `O_CREAT|O_EXCL|O_NOFOLLOW`.
/// With `force`, a regular file already there is unlinked first and a new one made; a symlink (or
/// anything not a regular file) is refused even then, so nothing is ever written through a link.
/// `flag` names the option that chose the path (`--out`, `--report`), for the messages.
pub fn create_output(path: &Path, force: bool, flag: &str) -> Result<(File, Created), OutputError> {
    let create = |error| OutputError::Create {
        path: path.to_path_buf(),
        error,
    };
    match create_exclusive(path) {
        Ok(x) => Ok(x),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if let Some(refusal) = output_refusal(path, force, flag) {
                return Err(OutputError::Refused(refusal));
            }
            std::fs::remove_file(path).map_err(|error| OutputError::Replace {
                path: path.to_path_buf(),
                error,
            })?;
            create_exclusive(path).map_err(create)
        }
        Err(e) => Err(create(e)),
    }
}

/// Why [`create_output`] made no file.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// Something is at the path that may not be replaced ([`output_refusal`]'s line).
    #[error("{0}")]
    Refused(String),
    /// `--force` could not remove the file there.
    #[error("--force: cannot replace {}: {error}", crate::text::shown_path(.path))]
    Replace {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The exclusive creation failed ([`create_error`]'s line).
    #[error("{}", create_error(.path, .error))]
    Create {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// What [`create_output`] would refuse at `path`, checked before measuring starts so an old
/// output is reported at once rather than after hours of measuring. None when it may be created.
pub fn output_refusal(path: &Path, force: bool, flag: &str) -> Option<String> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if m.file_type().is_symlink() {
        Some(format!(
            "{} is a symbolic link; diskscope never writes through one (not even with --force): \
             remove it or pick another {flag}",
            crate::text::shown_path(path)
        ))
    } else if !m.file_type().is_file() {
        Some(format!(
            "{} exists and is not a regular file; remove it or pick another {flag}",
            crate::text::shown_path(path)
        ))
    } else if !force {
        Some(format!(
            "{} already exists; pass --force to replace it, or pick another {flag}",
            crate::text::shown_path(path)
        ))
    } else {
        None
    }
}

/// Bytes an output written after a run is assumed to need when checked before it
/// ([`check_new_output`]): a file system with less free is full for it.
pub const OUTPUT_ROOM_BYTES: u64 = 64 << 10;

/// What would keep an output written *after* a run (a `--timeline` CSV, a `--svg` figure) from
/// being written, found *before* the run so no measuring is lost: the path names a directory
/// (it ends in `/`, or a directory is there), something is there already (a symbolic link
/// always; a regular file unless `force`), its directory is missing, not a directory, not
/// writable (permissions, a read-only file system), or its file system is full; or the path is
/// the file the run measures (`measured`). `None` when it may be written. `flag` names the
/// option, for the one-line message.
pub fn check_new_output(
    path: &Path,
    force: bool,
    flag: &str,
    measured: Option<&Path>,
) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let p = crate::text::shown_path(path);
    if path.as_os_str().as_bytes().ends_with(b"/") || path.is_dir() {
        return Some(format!(
            "{flag}: {p} is a directory (name); give a file name for it"
        ));
    }
    if measured.is_some_and(|m| same_place(m, path)) {
        return Some(format!(
            "{flag}: {p} is the file the run measures; give the {flag} output another name"
        ));
    }
    if let Some(refusal) = output_refusal(path, force, flag) {
        return Some(format!("{flag}: {refusal}"));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let d = crate::text::shown_path(dir);
    match std::fs::metadata(dir) {
        Err(_) => {
            return Some(format!(
                "{flag}: the directory {d} does not exist; create it first (mkdir -p {})",
                shell_quote_path(dir)
            ))
        }
        Ok(m) if !m.is_dir() => return Some(format!("{flag}: {d} is not a directory")),
        Ok(_) => {}
    }
    if let Err(e) = rustix::fs::access(
        dir,
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
    ) {
        let why = if e == rustix::io::Errno::ROFS {
            "is on a read-only file system".to_string()
        } else {
            format!("cannot be written ({})", std::io::Error::from(e))
        };
        return Some(format!(
            "{flag}: the directory {d} {why}; pick another place for {p}"
        ));
    }
    if let Some(free) = free_bytes(dir).filter(|f| *f < OUTPUT_ROOM_BYTES) {
        return Some(format!(
            "{flag}: the file system of {d} is full ({} free); free some space or pick another \
             place for {p}",
            crate::size::format_bytes_approx(free)
        ));
    }
    None
}

/// Whether `a` and `b` name the same file: the same inode when both exist, else the same name
/// in the same (canonical) directory.
pub fn same_place(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return (x.dev(), x.ino()) == (y.dev(), y.ino());
    }
    let place = |p: &Path| {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Some((
            std::fs::canonicalize(dir).ok()?,
            p.file_name()?.to_os_string(),
        ))
    };
    matches!((place(a), place(b)), (Some(x), Some(y)) if x == y)
}

/// Writes `bytes` to a new output file (see [`create_output`]); the message names the file. A
/// refusal is returned as `refused` makes it (a plain message, or a usage error).
pub fn write_output_with(
    path: &Path,
    bytes: &[u8],
    force: bool,
    flag: &str,
    refused: fn(String) -> anyhow::Error,
) -> anyhow::Result<()> {
    let (mut f, created) = create_output(path, force, flag).map_err(|e| refused(e.to_string()))?;
    if let Err(e) = f.write_all(bytes) {
        // A cut figure or summary is worse than none, and this file is ours to remove.
        created.remove();
        anyhow::bail!("writing {}: {e}", crate::text::shown_path(path));
    }
    Ok(())
}

/// [`write_output_with`] for batch outputs in `--out`.
pub fn write_output(path: &Path, bytes: &[u8], force: bool) -> anyhow::Result<()> {
    write_output_with(path, bytes, force, "--out", anyhow::Error::msg)
}

impl Drop for DirLock {
    fn drop(&mut self) {
        self.created.remove();
    }
}

/// What [`check_input`] found the input to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Regular,
    BlockDevice,
}

/// Checks, without opening it, that `path` can be read to an end: a regular file (not a `/proc`
/// or `/sys` pseudo-file) or a block device. FIFOs and sockets would block in `open`; character
/// devices such as `/dev/zero` never end. `key` names the argument in the message.
pub fn check_input(path: &Path, key: &str) -> Result<(InputKind, Metadata), InputError> {
    let refused = |problem| InputError {
        key: key.to_string(),
        path: path.to_path_buf(),
        problem,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            return Err(refused(match e.raw_os_error() {
                Some(libc::ENOENT) if std::fs::symlink_metadata(path).is_ok() => {
                    InputProblem::DanglingLink
                }
                Some(libc::ENOENT) => InputProblem::Missing,
                Some(libc::ELOOP) => InputProblem::LinkLoop,
                Some(libc::ENOTDIR) => InputProblem::NotADirectoryOnTheWay,
                Some(libc::EACCES) => InputProblem::PermissionDenied,
                _ => InputProblem::Other(e),
            }))
        }
    };
    if let Some(what) = kind_refusal(&meta, path) {
        return Err(refused(InputProblem::Kind(what)));
    }
    if meta.file_type().is_block_device() {
        return Ok((InputKind::BlockDevice, meta));
    }
    if is_pseudo_fs(path) {
        return Err(refused(InputProblem::PseudoFile));
    }
    Ok((InputKind::Regular, meta))
}

/// Why [`check_input`] refused an input: `key` names the argument, `path` the input.
#[derive(Debug, thiserror::Error)]
#[error("{key}: {}", .problem.line(.path))]
pub struct InputError {
    pub key: String,
    pub path: PathBuf,
    pub problem: InputProblem,
}

/// What is wrong with an input (see [`InputError`]).
#[derive(Debug)]
pub enum InputProblem {
    /// A symbolic link to nothing.
    DanglingLink,
    Missing,
    LinkLoop,
    /// A part of the path is not a directory.
    NotADirectoryOnTheWay,
    /// A directory on the way cannot be searched.
    PermissionDenied,
    /// Any other error of `stat`.
    Other(std::io::Error),
    /// Not a regular file nor a block device: what it is, in words.
    Kind(&'static str),
    /// A `/proc` or `/sys` pseudo-file.
    PseudoFile,
}

impl InputProblem {
    /// The message after `key: `, naming `path`.
    fn line(&self, path: &Path) -> String {
        let p = crate::text::shown_path(path);
        match self {
            InputProblem::DanglingLink => {
                format!("{p} is a symbolic link to nothing; point it at a file")
            }
            InputProblem::Missing => format!("{p} does not exist; check the path"),
            InputProblem::LinkLoop => format!("{p} is a symbolic link loop; point it at a file"),
            InputProblem::NotADirectoryOnTheWay => {
                format!("{p}: a part of the path is not a directory; check the path")
            }
            InputProblem::PermissionDenied => {
                format!("permission denied reaching {p}; check the directories' permissions")
            }
            InputProblem::Other(e) => format!("cannot use {p}: {e}"),
            InputProblem::Kind(what) => {
                format!("{p} is {what}; give a regular file (or a block device)")
            }
            InputProblem::PseudoFile => format!(
                "{p} is a /proc or /sys pseudo-file whose size is not its length; copy it \
                 to a regular file first (cp {} copy.bin)",
                shell_quote_path(path)
            ),
        }
    }
}

/// Why an input of type `meta` cannot be read to an end (a directory, a FIFO, a socket, a
/// character device), in words; None for a regular file or a block device.
fn kind_refusal(meta: &Metadata, path: &Path) -> Option<&'static str> {
    let ft = meta.file_type();
    let what = if ft.is_dir() {
        Some("a directory")
    } else if ft.is_fifo() {
        Some("a FIFO (named pipe), which has no size and can block forever")
    } else if ft.is_socket() {
        Some("a socket, which has no size and can block forever")
    } else if ft.is_char_device() {
        Some(if path == Path::new("/dev/null") {
            "a character device that is always empty"
        } else {
            "a character device, which has no fixed size (a device such as /dev/zero never ends)"
        })
    } else {
        None
    };
    what
}

/// Opens `path` through `opts` with `O_NONBLOCK` added, so that a FIFO put at the path after
/// [`check_input`] looked at it (a rename is atomic) cannot block the `open` waiting for a
/// writer; then checks what the descriptor really is (`fstat`, no second look at the path):
/// anything but a regular file or a block device is refused as [`check_input`] refuses it,
/// except a character device when `char_device_ok` (a write to `/dev/null`). Then clears
/// `O_NONBLOCK`, so reads and writes block as usual.
pub fn open_then_check(
    opts: &mut OpenOptions,
    path: &Path,
    flags: i32,
    key: &str,
    char_device_ok: bool,
) -> Result<File, OpenError> {
    let f = opts
        .custom_flags(flags | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let meta = f.metadata()?;
    // A directory cannot block; callers say what they say about one.
    let char_ok = char_device_ok && meta.file_type().is_char_device();
    if !char_ok && !meta.is_dir() {
        if let Some(what) = kind_refusal(&meta, path) {
            return Err(OpenError::Refused(InputError {
                key: key.to_string(),
                path: path.to_path_buf(),
                problem: InputProblem::Kind(what),
            }));
        }
    }
    clear_nonblock(&f)?;
    Ok(f)
}

/// Why [`open_then_check`] returned no file: the open (or a look at the descriptor) failed, which
/// each caller words itself, or the descriptor is of a kind [`check_input`] refuses.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Refused(InputError),
}

/// Clears `O_NONBLOCK` on `file`'s open file description.
pub fn clear_nonblock(file: &File) -> std::io::Result<()> {
    let fl = rustix::fs::fcntl_getfl(file)?;
    Ok(rustix::fs::fcntl_setfl(file, fl - OFlags::NONBLOCK)?)
}

/// [`check_input`] for a path that exists; a missing path passes, so the caller's `open` reports
/// it the way it always has (exit 1, "does not exist").
pub fn check_input_if_present(path: &Path, key: &str) -> Result<(), InputError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    check_input(path, key).map(drop)
}

/// Whether `path` names an already open descriptor (`/dev/stdin`, `/dev/fd/N`,
/// `/proc/self/fd/N`): a pipe reached that way belongs to a pipeline the user started.
fn is_descriptor_path(path: &Path) -> bool {
    let s = path.to_string_lossy();
    s == "/dev/stdin"
        || s.starts_with("/dev/fd/")
        || (s.starts_with("/proc/") && s.split('/').nth(3) == Some("fd"))
}

/// For readers that stream to the end without a size (`fast`): like [`check_input`], but also
/// accepts a pipe named through an open descriptor (`/dev/stdin`), and the kernel's settings
/// under `/proc/sys` (short texts that always end, and reading them changes nothing). Returns
/// whether the input is a pipe (open it with [`open_read`]). Named FIFOs, sockets, character
/// devices and every other `/proc` or `/sys` pseudo-file are refused by name: some never end
/// (`/proc/kmsg` waits for the next kernel message, and reading it takes the message from the
/// system log).
pub fn check_stream_input(path: &Path, key: &str) -> Result<bool, InputError> {
    match check_input(path, key) {
        Ok(_) => Ok(false),
        Err(e) => {
            let Ok(meta) = std::fs::metadata(path) else {
                return Err(e);
            };
            let ft = meta.file_type();
            if ft.is_fifo() && is_descriptor_path(path) {
                Ok(true)
            } else if ft.is_file() && is_sysctl(path) {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// Whether `path` resolves to a kernel setting under `/proc/sys` (on procfs).
fn is_sysctl(path: &Path) -> bool {
    std::fs::canonicalize(path).is_ok_and(|real| real.starts_with("/proc/sys/"))
        && is_pseudo_fs(path)
}

/// Opens `path` for reading; a pipe is opened with `O_NONBLOCK` (so `open` cannot wait for a
/// writer that is gone) and switched back to blocking reads, which then end at end of input.
pub fn open_read(path: &Path, pipe: bool) -> std::io::Result<File> {
    let flags = if pipe { libc::O_NONBLOCK } else { 0 };
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(flags | libc::O_CLOEXEC)
        .open(path)?;
    if pipe {
        clear_nonblock(&f)?;
    }
    Ok(f)
}

/// Another descriptor (its own file offset) of the file `file` is open on, read-only with
/// `flags` (e.g. `O_DIRECT`): through `/proc/self/fd`, never through the path again, so a path
/// renamed meanwhile cannot make a second descriptor name another file. The inode is compared
/// anyway.
pub fn reopen(file: &File, flags: i32) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(flags | libc::O_CLOEXEC)
        .open(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let (a, b) = (file.metadata()?, f.metadata()?);
    if (a.dev(), a.ino()) != (b.dev(), b.ino()) {
        return Err(std::io::Error::other(
            "a second descriptor refers to another file (is /proc mounted?)",
        ));
    }
    Ok(f)
}

/// Whether `path` lives on procfs or sysfs, whose files report sizes that are not their length.
fn is_pseudo_fs(path: &Path) -> bool {
    const PROC_SUPER_MAGIC: i64 = 0x9fa0;
    const SYSFS_MAGIC: i64 = 0x6265_6572;
    let Ok(st) = rustix::fs::statfs(path) else {
        return false;
    };
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between targets
    let t = st.f_type as i64;
    t == PROC_SUPER_MAGIC || t == SYSFS_MAGIC
}

/// The most bytes a text input (a sweep, a fio job file or one it includes) may hold: far more
/// than any real one, and little enough that reading it can never exhaust memory. A huge (or
/// sparse) file named by mistake is refused by its size before a byte is read.
pub const MAX_TEXT_INPUT_BYTES: u64 = 16 << 20;

/// Why [`read_text_bounded`] returned no text; the caller names the file (and flag).
#[derive(Debug, thiserror::Error)]
pub enum TextReadError {
    #[error(
        "is {}, more than the {} a text input may hold; is it the right file?",
        crate::size::format_bytes_approx(*.size_bytes),
        crate::size::format_bytes_approx(*.max_bytes)
    )]
    TooLarge { size_bytes: u64, max_bytes: u64 },
    /// Not UTF-8: the 1-based line holding the first bad byte, and the byte.
    #[error("not UTF-8 text (byte 0x{byte:02x} on line {line}); give a text file")]
    NotUtf8 { line: usize, byte: u8 },
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads the text file at `path`, at most `max_bytes` of it (its size is checked first, then the
/// read itself stops past the limit, for a file that grows): a file too large, or not UTF-8
/// (with the line of the first bad byte), is an error, never an allocation of its whole size.
pub fn read_text_bounded(path: &Path, max_bytes: u64) -> Result<String, TextReadError> {
    let f = File::open(path)?;
    let size_bytes = f.metadata()?.len();
    if size_bytes > max_bytes {
        return Err(TextReadError::TooLarge {
            size_bytes,
            max_bytes,
        });
    }
    let mut bytes = Vec::with_capacity(size_bytes as usize);
    f.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(TextReadError::TooLarge {
            size_bytes: bytes.len() as u64,
            max_bytes,
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        TextReadError::NotUtf8 {
            line: bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1,
            byte: bytes[at],
        }
    })
}

/// A record of `file`, which this process opened at `path` (created it, or with `--force`
/// validated and truncated it), so that removing `path` later proves it still names that inode.
/// Added for `run -w` (src/runner/prepare.rs): the partial-file cleanup is inode-checked.
pub fn created_of_open(path: &Path, file: &File) -> std::io::Result<Created> {
    let m = file.metadata()?;
    Ok(Created {
        path: path.to_path_buf(),
        dev: m.dev(),
        ino: m.ino(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_creation_refuses_an_existing_file_and_a_symlink() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, b"user data").unwrap();
        let err = create_exclusive(&target).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(create_exclusive(&link).is_err());
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(create_exclusive(&dangling).is_err());
        assert!(!d.path().join("nowhere").exists());
        assert_eq!(std::fs::read(&target).unwrap(), b"user data");
    }

    #[test]
    fn removal_leaves_a_file_that_replaced_ours() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let (_f, created) = create_exclusive(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, b"user").unwrap();
        assert!(!created.remove());
        assert_eq!(std::fs::read(&p).unwrap(), b"user");
        let q = d.path().join("g");
        let (_g, mine) = create_exclusive(&q).unwrap();
        assert!(mine.remove());
        assert!(!q.exists());
    }

    #[test]
    fn a_second_lock_on_the_same_directory_names_the_holder() {
        let d = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(d.path(), "--out").unwrap();
        let err = DirLock::acquire(d.path(), "--out").unwrap_err();
        assert!(
            matches!(err, LockError::Held { pid: Some(p), .. } if p == std::process::id()),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert_eq!(lock_holder(d.path()), Some(std::process::id().to_string()));
        drop(first);
        assert!(!d.path().join(LOCK_NAME).exists());
        assert_eq!(lock_holder(d.path()), None);
        let again = DirLock::acquire(d.path(), "--out");
        assert!(again.is_ok());
        drop(again);
        std::fs::write(d.path().join(LOCK_NAME), b"my notes about this run").unwrap();
        let err = DirLock::acquire(d.path(), "--out").unwrap_err();
        assert!(matches!(err, LockError::NotOurs { .. }), "{err:?}");
        let err = err.to_string();
        assert!(err.contains("not provably a diskscope lock file"), "{err}");
        assert_eq!(
            std::fs::read(d.path().join(LOCK_NAME)).unwrap(),
            b"my notes about this run"
        );
    }

    #[test]
    fn inputs_that_cannot_end_are_refused_by_name() {
        let err = check_input(Path::new("/dev/zero"), "FILE").unwrap_err();
        assert!(matches!(err.problem, InputProblem::Kind(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "FILE: /dev/zero is a character device, which has no fixed size (a device such as \
             /dev/zero never ends); give a regular file (or a block device)"
        );
        let err = err.to_string();
        assert!(
            err.contains("/dev/zero") && err.contains("character device"),
            "{err}"
        );
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let err = check_input(&fifo, "FILE").unwrap_err().to_string();
        assert!(err.contains("FIFO") && err.contains("pipe"), "{err}");
        let err = check_input(Path::new("/proc/self/status"), "FILE").unwrap_err();
        assert!(matches!(err.problem, InputProblem::PseudoFile), "{err:?}");
        let err = err.to_string();
        assert!(err.contains("pseudo-file"), "{err}");
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        assert_eq!(check_input(&f, "FILE").unwrap().0, InputKind::Regular);
        // Streaming readers take the kernel's settings, but never another pseudo-file (some
        // never end), a named FIFO or /dev/zero.
        if Path::new("/proc/sys/kernel/ostype").exists() {
            assert!(matches!(
                check_stream_input(Path::new("/proc/sys/kernel/ostype"), "FILE"),
                Ok(false)
            ));
        }
        assert!(check_stream_input(Path::new("/proc/self/status"), "FILE").is_err());
        assert!(check_stream_input(&fifo, "FILE").is_err());
        assert!(check_stream_input(Path::new("/dev/zero"), "FILE").is_err());
    }

    #[test]
    fn shell_quoting_leaves_plain_paths_and_quotes_the_rest() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(shell_quote("/tmp/a.bin"), "/tmp/a.bin");
        assert_eq!(shell_quote("my file"), "'my file'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("a\u{1b}]0;x\u{7}"), "$'a\\x1b]0;x\\x07'");
        let p = std::ffi::OsStr::from_bytes(b"o\xff'\\");
        assert_eq!(shell_quote_path(Path::new(p)), "$'o\\xff\\'\\\\'");
    }
}
