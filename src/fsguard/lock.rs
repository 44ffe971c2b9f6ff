//! [`DirLock`]: an exclusive `flock` on a lock file in an output directory, so a second batch
//! writing to the same `--out` is refused with the first one's pid instead of interleaving
//! rows; the lock file is made and removed through the creation records.

use super::create::*;
use rustix::fs::{flock, FlockOperation};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Name of the lock file a batch holds in its output directory.
pub const LOCK_NAME: &str = ".diskscope.lock";

/// What a lock file of ours holds: this line and nothing else. A lock file is taken over (as
/// left by a batch that was killed) only when it holds exactly this, is unlocked, has one link
/// and belongs to us; an empty, hard-linked or otherwise different file of that name is the
/// user's and is never changed or removed.
pub(super) fn lock_text(pid: u32) -> String {
    format!("diskscope batch lock, pid {pid}\n")
}

/// The pid in a lock file of ours, None for any other content.
pub(super) fn lock_pid(text: &str) -> Option<u32> {
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

impl Drop for DirLock {
    fn drop(&mut self) {
        self.created.remove();
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
