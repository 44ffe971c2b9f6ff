//! What can go wrong with a worker's job that is the engine's to notice: a read that comes back
//! short of what the file held when the run was prepared ([`FileShrank`], checked by
//! [`complete_read`]), a descriptor an engine had to give up ([`DescriptorLost`], after
//! which the job must be forgotten, never dropped: [`dispose_job`]), and the descriptors a worker
//! that moved to a descriptor table of its own left in the shared one, which only a thread on
//! that table can close ([`leave_for_shared_table`], [`close_shared_leftovers`]).
//!
//! These live with the engines, not with the code that starts their threads: the engines
//! raise them, and whoever ends a worker's thread only asks [`descriptor_lost`] and calls
//! [`dispose_job`].

use super::job::{Block, WorkerJob};
use crate::config::Pattern;

/// A read that got fewer bytes than the file held when the run was prepared: another process
/// truncated the file during the run. The XOR of what was read would not be the file's, so the
/// run fails instead of printing it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the file shrank while being read: {wanted_bytes} bytes at offset {offset} returned only \
     {got_bytes}{}; another process truncated it, so no XOR is reported",
    .size_now_bytes.map(|s| format!(" (it is {s} bytes long now)")).unwrap_or_default()
)]
pub struct FileShrank {
    /// Offset of the short read.
    pub offset: u64,
    /// Bytes the read had to return (the file held them when the run started).
    pub wanted_bytes: u64,
    /// Bytes it returned.
    pub got_bytes: u64,
    /// The file's size when the short read was seen, if it could be read.
    pub size_now_bytes: Option<u64>,
}

/// Bytes of block `b` a read of it must return: the whole block, except with O_DIRECT, where the
/// full aligned block is asked for at the tail and only the part before the planned end counts.
#[inline(always)]
pub fn wanted_len(job: &WorkerJob, b: &Block) -> usize {
    if job.setup.direct {
        let end = match job.setup.pattern {
            Pattern::Random => job.span,
            Pattern::Sequential => job.range.end,
        };
        (b.len as u64).min(end.saturating_sub(b.offset)) as usize
    } else {
        b.len
    }
}

/// Checks that a read of block `b` returned `got` bytes, enough for the block, and returns how
/// many of them belong to the run (an O_DIRECT read of a file that grew can return more).
#[inline(always)]
pub fn complete_read(job: &WorkerJob, b: &Block, got: usize) -> Result<usize, FileShrank> {
    let wanted = wanted_len(job, b);
    if got < wanted {
        return Err(FileShrank {
            offset: b.offset,
            wanted_bytes: wanted as u64,
            got_bytes: got as u64,
            size_now_bytes: job.file.metadata().ok().map(|m| m.len()),
        });
    }
    Ok(wanted)
}

/// An engine gave up a worker's descriptor without closing it cleanly: `WorkerJob::file` holds
/// a number that is no longer its own, so the job must be forgotten, never dropped (see
/// [`dispose_job`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the worker's descriptor was lost (no descriptor left to replace it)")]
pub struct DescriptorLost;

/// Whether an engine's `outcome` says the job's descriptor was lost ([`DescriptorLost`]).
pub fn descriptor_lost(outcome: &anyhow::Result<bool>) -> bool {
    matches!(outcome, Err(e) if e.downcast_ref::<DescriptorLost>().is_some())
}

/// Ends a worker's job: dropped (its descriptor closed), unless its descriptor was `lost`, in
/// which case the job is forgotten so its stale descriptor number — maybe another thread's
/// descriptor by now — is never closed.
pub fn dispose_job(job: WorkerJob, lost: bool) {
    if lost {
        std::mem::forget(job);
    } else {
        drop(job);
    }
}

/// Descriptors of the process's shared descriptor table that a worker which moved to a table of
/// its own (`unshare(CLONE_FILES)`, the `read` engine) can no longer close: only a thread still
/// on the shared table can. Closed by [`close_shared_leftovers`].
static SHARED_TABLE_LEFTOVERS: std::sync::Mutex<Vec<std::os::fd::OwnedFd>> =
    std::sync::Mutex::new(Vec::new());

/// Hands `fd`, a descriptor of the shared table, to the next [`close_shared_leftovers`]. Called
/// by a worker right after it left the shared table, so the descriptor number it had there is
/// never closed from its own table, where it means something else.
pub fn leave_for_shared_table(fd: std::os::fd::OwnedFd) {
    let mut left = SHARED_TABLE_LEFTOVERS
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    left.push(fd);
}

/// Closes the descriptors workers left in the shared table ([`leave_for_shared_table`]). Call
/// it only from a thread on the shared table (the runner does, when it joins workers).
pub fn close_shared_leftovers() {
    let left = std::mem::take(
        &mut *SHARED_TABLE_LEFTOVERS
            .lock()
            .unwrap_or_else(|e| e.into_inner()),
    );
    drop(left);
}

/// Builders for unit tests of the engines.
#[cfg(test)]
pub(crate) mod tests_support {
    use crate::config::{Op, Pattern, Setup};
    use crate::engine::WorkerJob;

    /// A one-worker sequential read job of the whole file at `path`.
    pub fn read_job(path: &std::path::Path) -> WorkerJob {
        let file = std::fs::File::open(path).unwrap();
        let len = file.metadata().unwrap().len();
        WorkerJob {
            worker: 0,
            file,
            setup: Setup {
                op: Op::Read,
                pattern: Pattern::Sequential,
                block_size_bytes: 4096,
                queue_depth: 1,
                ..Setup::default()
            },
            range: 0..len,
            span: len,
            loop_range: false,
            max_ops: None,
            seed: 1,
            slots: None,
            write_data: None,
        }
    }

    #[test]
    fn a_short_read_names_the_offset_and_the_size_now() {
        let shrank = super::super::FileShrank {
            offset: 8192,
            wanted_bytes: 4096,
            got_bytes: 100,
            size_now_bytes: Some(8292),
        };
        assert_eq!(
            shrank.to_string(),
            "the file shrank while being read: 4096 bytes at offset 8192 returned only 100 (it \
             is 8292 bytes long now); another process truncated it, so no XOR is reported"
        );
    }
}
