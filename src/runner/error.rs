//! How a run ends in error, decided in one place ([`verdict`]) for the CLI, the sweep and the UI.
//!
//! The order is the user's: a worker's own error (the first short read, a full disk) explains
//! more than an end-of-run check, so it wins; then a read run's file that changed
//! ([`FileChanged`]) and a write run's file that was replaced ([`FileReplaced`]). All three are a
//! [`RunFailed`] with the bytes done and planned; anything else (the final fsync, a panicked
//! worker) stays an error of its own ([`RunError::Other`]). The I/O error kind travels from the
//! worker's snapshot into [`RunFailed::io_kind`], so a full disk is known by its kind, never by
//! the words of its message.

use super::watch::FileChanged;
use crate::measure::Aggregate;
use std::path::PathBuf;

/// The path a write run created no longer names the file it wrote: another process renamed or
/// linked something over it during the run. Every descriptor of the run refers to the created
/// inode, so nothing else was written, but the data is not where the user will look for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} was replaced during the run (another process renamed or linked something over it); the \
     run wrote only to the file it created, which is no longer at that path, and touched nothing \
     else",
    crate::text::shown_path(.path)
)]
pub struct FileReplaced {
    pub path: PathBuf,
}

/// What made a run fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureCause {
    /// A worker stopped on an error (the snapshot it sent says which).
    Worker,
    /// The file a read run read changed under it ([`FileChanged`]).
    FileChanged,
    /// The file a write run created was replaced at its path ([`FileReplaced`]).
    FileReplaced,
    /// The write run's blocks could not be reserved before it started (`--prealloc native`).
    Preallocation,
}

/// A run that failed: the one-line message, what it was, the I/O error kind under it, and how
/// far it got.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({bytes_done} of {bytes_planned} bytes done)")]
pub struct RunFailed {
    pub message: String,
    pub cause: FailureCause,
    /// The kind of the I/O error that caused it, if one did.
    pub io_kind: Option<std::io::ErrorKind>,
    pub bytes_done: u64,
    pub bytes_planned: u64,
}

impl RunFailed {
    /// Whether the failure was a full disk (`ENOSPC`, or a mapping the filesystem could not
    /// back), told by the I/O error's kind.
    pub fn is_disk_full(&self) -> bool {
        self.io_kind == Some(std::io::ErrorKind::StorageFull)
    }
}

/// How a started run can end in error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A worker failed, or the file changed or was replaced under the run.
    #[error(transparent)]
    Failed(#[from] RunFailed),
    /// Anything else: the final fsync failed, a worker thread panicked.
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

impl RunError {
    /// As an `anyhow::Error` whose chain holds the [`RunFailed`] itself (or the other error's
    /// own chain), so callers can `downcast_ref::<RunFailed>()`.
    pub fn into_anyhow(self) -> anyhow::Error {
        match self {
            RunError::Failed(f) => anyhow::Error::new(f),
            RunError::Other(e) => e,
        }
    }

    /// The [`RunFailed`], if that is what it is.
    pub fn failed(&self) -> Option<&RunFailed> {
        match self {
            RunError::Failed(f) => Some(f),
            RunError::Other(_) => None,
        }
    }
}

/// What went wrong after the workers' channel closed: joining them, the final fsync, or the
/// end-of-run checks of the file.
#[derive(Debug)]
pub(super) enum EndFailure {
    Panicked(super::workers::WorkerPanicked),
    Fsync(std::io::Error),
    Changed(FileChanged),
    Replaced(FileReplaced),
}

/// The one conversion of a run's end into its verdict: a worker's error first, then a changed
/// or replaced file (each a [`RunFailed`] with `aggregate.bytes` of `bytes_planned` done), then
/// anything else.
pub(super) fn verdict(
    aggregate: &Aggregate,
    end: Option<EndFailure>,
    bytes_planned: u64,
) -> Result<(), RunError> {
    let failed = |message: String, cause, io_kind| {
        RunError::Failed(RunFailed {
            message,
            cause,
            io_kind,
            bytes_done: aggregate.bytes,
            bytes_planned,
        })
    };
    if let Some(e) = aggregate.errors.first() {
        return Err(failed(e.message.clone(), FailureCause::Worker, e.io_kind));
    }
    match end {
        None => Ok(()),
        Some(EndFailure::Changed(c)) => Err(failed(c.to_string(), FailureCause::FileChanged, None)),
        Some(EndFailure::Replaced(r)) => {
            Err(failed(r.to_string(), FailureCause::FileReplaced, None))
        }
        Some(EndFailure::Panicked(p)) => Err(RunError::Other(p.into())),
        Some(EndFailure::Fsync(e)) => Err(RunError::Other(
            anyhow::Error::new(e).context("fsync at the end of the write"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{new_latency_histogram, Snapshot, SnapshotKind, WorkerError};

    fn aggregate_with(kind: SnapshotKind, bytes: u64) -> Aggregate {
        let mut a = Aggregate::new(1);
        a.add(&Snapshot {
            worker: 0,
            at_ns: 1,
            interval_ns: 1,
            bytes,
            ops: 1,
            latency: new_latency_histogram(),
            ops_log: Vec::new(),
            paced: None,
            mixed: None,
            kind,
        });
        a
    }

    fn changed() -> EndFailure {
        EndFailure::Changed(FileChanged {
            size_before_bytes: 10,
            size_after_bytes: 5,
            opened_for_writing: false,
        })
    }

    #[test]
    fn a_worker_error_beats_a_file_that_changed_and_says_how_far_the_run_got() {
        let worker = WorkerError {
            message: "read at offset 4096: Input/output error (os error 5)".into(),
            io_kind: Some(std::io::ErrorKind::Other),
        };
        let agg = aggregate_with(SnapshotKind::Failed(worker), 4096);
        let e = verdict(&agg, Some(changed()), 8192).unwrap_err();
        let f = e.failed().expect("a RunFailed");
        assert_eq!(f.cause, FailureCause::Worker);
        assert_eq!(
            e.to_string(),
            "read at offset 4096: Input/output error (os error 5) (4096 of 8192 bytes done)"
        );
        assert!(!f.is_disk_full());
    }

    #[test]
    fn a_changed_file_fails_a_run_whose_workers_did_not() {
        let fin = SnapshotKind::Final {
            xor: Some(1),
            full_pass: true,
        };
        let agg = aggregate_with(fin, 8192);
        let e = verdict(&agg, Some(changed()), 8192).unwrap_err();
        let f = e.failed().expect("a RunFailed");
        assert_eq!((f.cause, f.bytes_done), (FailureCause::FileChanged, 8192));
        assert!(
            f.message.starts_with("the file shrank while being read"),
            "{f}"
        );
        assert!(verdict(&agg, None, 8192).is_ok());
    }

    #[test]
    fn disk_full_is_recognised_by_the_error_kind_not_the_words() {
        // Words that say "full disk" but no kind: not a full disk.
        let words = WorkerError {
            message: "write at offset 0: No space left on device (os error 28)".into(),
            io_kind: None,
        };
        let agg = aggregate_with(SnapshotKind::Failed(words), 0);
        assert!(!verdict(&agg, None, 1)
            .unwrap_err()
            .failed()
            .unwrap()
            .is_disk_full());
        // The kind, whatever the words.
        let kind = WorkerError {
            message: "io_uring Write at offset 0: something".into(),
            io_kind: Some(std::io::ErrorKind::StorageFull),
        };
        let agg = aggregate_with(SnapshotKind::Failed(kind), 0);
        assert!(verdict(&agg, None, 1)
            .unwrap_err()
            .failed()
            .unwrap()
            .is_disk_full());
    }

    #[test]
    fn an_fsync_error_is_not_a_run_failure_and_keeps_its_words() {
        let fin = SnapshotKind::Final {
            xor: Some(1),
            full_pass: true,
        };
        let agg = aggregate_with(fin, 1);
        let io = std::io::Error::from_raw_os_error(libc::EIO);
        let e = verdict(&agg, Some(EndFailure::Fsync(io)), 1).unwrap_err();
        assert!(e.failed().is_none());
        assert!(
            format!("{:#}", e.into_anyhow()).starts_with("fsync at the end of the write: "),
            "fsync message"
        );
    }
}
