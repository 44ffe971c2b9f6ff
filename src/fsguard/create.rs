//! The files diskscope made, and removing only those: [`create_exclusive`] with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` and the [`Created`] record of the inode it made, the registry of
//! files this run owns (checked before any write or truncate), the xattr mark of a test file,
//! and [`Created::remove`], which unlinks a path only while it still names that inode.

use super::quote::*;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
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
pub(super) static REGISTERED: std::sync::Mutex<Vec<(PathBuf, u64, u64)>> =
    std::sync::Mutex::new(Vec::new());

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
    pub(super) dev: u64,
    pub(super) ino: u64,
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
