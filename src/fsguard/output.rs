//! Output files: checked before anything is written ([`check_new_output`]: a new path in a
//! writable directory with room, never an existing file, never the input itself), then made
//! exclusively and written whole ([`create_output`], [`write_output_with`]).

use super::create::*;
use super::quote::*;
use super::space::*;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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
