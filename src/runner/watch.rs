//! Watching the file a read run reads: its size, modification and status-change times and inode
//! are taken when the run is prepared and compared when it ends. The ctime matters: `touch -m -r`
//! (or `utimensat`) puts the mtime back after an in-place rewrite, but no user can set the ctime,
//! and every write or `utimensat` moves it. A read that comes back short already fails the worker
//! (the file shrank); this catches what a short read cannot see: a file truncated and extended
//! again, one that grew, or one rewritten in place while the run read it. Each means the XOR is
//! of data that was never the file's at any one moment, so the run fails instead of printing it.

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
    file: File,
    before: Stamp,
}

/// The file a read run read changed during the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the file {} while being read (size {size_before_bytes} bytes before the run, \
     {size_after_bytes} after); another process changed it, so no XOR is reported",
    how(.size_before_bytes, .size_after_bytes)
)]
pub struct FileChanged {
    pub size_before_bytes: u64,
    pub size_after_bytes: u64,
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
    /// Starts watching `file` (its descriptor is kept); `None` for anything but a regular file
    /// with data (pseudo-files report size 0 and times that move on their own).
    pub fn new(file: File) -> Option<FileWatch> {
        let m = file.metadata().ok()?;
        (m.is_file() && m.len() > 0).then(|| FileWatch {
            before: stamp_of(&m),
            file,
        })
    }

    /// `Err` if the file's size, mtime, ctime or inode moved since [`FileWatch::new`].
    pub fn check_unchanged(&self) -> Result<(), FileChanged> {
        let after = match self.file.metadata() {
            Ok(m) => stamp_of(&m),
            Err(_) => return Ok(()),
        };
        if after == self.before {
            return Ok(());
        }
        Err(FileChanged {
            size_before_bytes: self.before.size_bytes,
            size_after_bytes: after.size_bytes,
        })
    }
}
