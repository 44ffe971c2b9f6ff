//! Inputs that cannot hang the run: [`check_input`] refuses FIFOs, sockets, character devices
//! and `/proc` or `/sys` pseudo-files before any `open`; [`open_then_check`] opens with
//! `O_NONBLOCK` and checks the descriptor itself (the path may have changed meanwhile);
//! [`reopen`] goes through `/proc/self/fd`; text inputs are read with a byte cap.

use super::quote::*;
use rustix::fs::OFlags;
use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

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
pub(super) fn kind_refusal(meta: &Metadata, path: &Path) -> Option<&'static str> {
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
pub(super) fn is_descriptor_path(path: &Path) -> bool {
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
pub(super) fn is_sysctl(path: &Path) -> bool {
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
pub(super) fn is_pseudo_fs(path: &Path) -> bool {
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
