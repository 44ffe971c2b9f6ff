//! Watching the file a read run reads: its size and modification time are taken when the run is
//! prepared and compared when it ends. A read that comes back short already fails the worker
//! (the file shrank); this catches what a short read cannot see: a file truncated and extended
//! again, one that grew, or one rewritten in place while the run read it. Each means the XOR is
//! of data that was never the file's at any one moment, so the run fails instead of printing it.

use std::fs::File;
use std::os::unix::fs::MetadataExt;

/// Size and modification time of a file (what a change to its data moves).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size_bytes: u64,
    mtime_s: i64,
    mtime_ns: i64,
}

fn stamp_of(m: &std::fs::Metadata) -> Stamp {
    Stamp {
        size_bytes: m.len(),
        mtime_s: m.mtime(),
        mtime_ns: m.mtime_nsec(),
    }
}

/// A regular file under watch, through its own descriptor.
#[derive(Debug)]
pub struct FileWatch {
    file: File,
    before: Stamp,
}

/// The file a read run read changed during the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChanged {
    pub size_before_bytes: u64,
    pub size_after_bytes: u64,
}

impl std::fmt::Display for FileChanged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = if self.size_after_bytes < self.size_before_bytes {
            "shrank"
        } else if self.size_after_bytes > self.size_before_bytes {
            "grew"
        } else {
            "was modified"
        };
        write!(
            f,
            "the file {how} while being read (size {} bytes before the run, {} after); another \
             process changed it, so no XOR is reported",
            self.size_before_bytes, self.size_after_bytes
        )
    }
}
impl std::error::Error for FileChanged {}

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

    /// `Err` if the file's size or modification time moved since [`FileWatch::new`].
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
