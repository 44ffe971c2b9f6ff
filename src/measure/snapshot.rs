//! The snapshot: what a worker sends over the channel, every ~100 ms and once at the end.
//!
//! A snapshot carries the interval's counts and latency histogram, never single operations, so
//! the channel sees ~10 messages per second per thread whatever the I/O rate. A worker that
//! failed sends a [`WorkerError`]: the message the user reads and the [`std::io::ErrorKind`]
//! under it, so whoever ends the run decides "disk full" from the kind, never from the text.

use hdrhistogram::Histogram;

/// Why a snapshot was sent.
#[derive(Debug, Clone, PartialEq)]
pub enum SnapshotKind {
    /// A periodic report; more follow.
    Interval,
    /// The worker finished. `xor` is its share of the checksum, `None` when it folded no XOR
    /// (`--checksum none`: the data was never read back); `full_pass` says whether it read its
    /// whole range at least once (only then is the combined XOR the file's).
    Final { xor: Option<u32>, full_pass: bool },
    /// The worker stopped on an error.
    Failed(WorkerError),
}

/// A worker's error as it leaves the worker thread: the one-line message (every cause, as
/// `{:#}` prints an error chain) and the kind of the first OS error in its chain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WorkerError {
    /// What failed, naming the operation and offset.
    pub message: String,
    /// The kind of the I/O error that caused it (`StorageFull` for a full disk); `None` when no
    /// I/O error is in the chain (a file that shrank, say).
    pub io_kind: Option<std::io::ErrorKind>,
}

impl WorkerError {
    /// The message and I/O error kind of an engine's error.
    pub fn of(e: &anyhow::Error) -> WorkerError {
        WorkerError {
            message: format!("{e:#}"),
            io_kind: e
                .chain()
                .find_map(|c| c.downcast_ref::<std::io::Error>())
                .map(std::io::Error::kind),
        }
    }
}

/// One operation of the per-operation log (`--log-ops`), in ns on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedOp {
    /// When it ended, ns since the run's origin.
    pub end_ns: u64,
    /// How long it took, ns (the value its latency histogram counted).
    pub latency_ns: u64,
}

/// One worker's report for the interval since its previous snapshot.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Worker index, 0-based.
    pub worker: usize,
    /// End of the interval, in ns since the run started.
    pub at_ns: u64,
    /// Length of the interval in ns.
    pub interval_ns: u64,
    /// Bytes transferred in the interval.
    pub bytes: u64,
    /// Operations completed in the interval.
    pub ops: u64,
    /// Latency of the interval's operations, in ns.
    pub latency: Histogram<u64>,
    /// Every operation of the interval, when the per-operation log is on (`measure::log_ops`);
    /// empty (no allocation) otherwise.
    pub ops_log: Vec<LoggedOp>,
    /// Open-loop runs (`--rate`) only: the interval's response times and the backlog.
    pub paced: Option<Box<PacedSnapshot>>,
    /// Mixed workloads (`--mix`) only: the interval's operations split by direction; the two
    /// shares add up to `bytes`, `ops` and `latency`.
    pub mixed: Option<Box<MixedSnapshot>>,
    pub kind: SnapshotKind,
}

/// What a worker of a mixed workload adds to a snapshot: its reads and its writes apart.
#[derive(Debug, Clone)]
pub struct MixedSnapshot {
    pub read: DirectionShare,
    pub write: DirectionShare,
}

/// The operations of one direction in an interval (or, summed, a run).
#[derive(Debug, Clone)]
pub struct DirectionShare {
    /// Bytes moved.
    pub bytes: u64,
    /// Operations completed.
    pub ops: u64,
    /// Their latency, ns.
    pub latency: Histogram<u64>,
}

impl DirectionShare {
    /// Nothing yet.
    pub fn new() -> Self {
        DirectionShare {
            bytes: 0,
            ops: 0,
            latency: super::histogram::new_latency_histogram(),
        }
    }

    /// Adds `other` (same histogram bounds everywhere, so adding cannot fail).
    pub fn add(&mut self, other: &DirectionShare) {
        self.bytes += other.bytes;
        self.ops += other.ops;
        let _ = self.latency.add(&other.latency);
    }
}

impl Default for DirectionShare {
    fn default() -> Self {
        Self::new()
    }
}

impl MixedSnapshot {
    /// Nothing yet.
    pub fn new() -> Self {
        MixedSnapshot {
            read: DirectionShare::new(),
            write: DirectionShare::new(),
        }
    }

    /// Adds `other`, direction by direction.
    pub fn add(&mut self, other: &MixedSnapshot) {
        self.read.add(&other.read);
        self.write.add(&other.write);
    }
}

impl Default for MixedSnapshot {
    fn default() -> Self {
        Self::new()
    }
}

/// What an open-loop worker (see `measure::pacer`) adds to a snapshot.
#[derive(Debug, Clone)]
pub struct PacedSnapshot {
    /// Response times (intended start → completion) of the interval's operations, ns; the
    /// snapshot's `latency` holds their service times (issue → completion).
    pub response: Histogram<u64>,
    /// Operations whose intended start had passed without being issued at the snapshot's end.
    pub backlog_ops: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn a_worker_error_keeps_the_io_error_kind_under_its_context() {
        let e = Err::<(), _>(std::io::Error::from_raw_os_error(libc::ENOSPC))
            .context("write at offset 4096")
            .unwrap_err();
        let w = WorkerError::of(&e);
        assert_eq!(w.io_kind, Some(std::io::ErrorKind::StorageFull));
        assert!(w.message.starts_with("write at offset 4096: "), "{w}");
        let plain = WorkerError::of(&anyhow::anyhow!("the file shrank"));
        assert_eq!(
            (plain.io_kind, plain.message.as_str()),
            (None, "the file shrank")
        );
    }
}
