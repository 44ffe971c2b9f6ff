//! Room before a large write: the free bytes of the file system that would hold a path,
//! asked of its nearest existing ancestor so nothing is created just to be refused.

use std::path::{Path, PathBuf};

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
