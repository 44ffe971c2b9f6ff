//! The snapshot: what a worker sends over the channel, every ~100 ms and once at the end.
//!
//! A snapshot carries the interval's counts and latency histogram, never single operations, so
//! the channel sees ~10 messages per second per thread whatever the I/O rate.

use hdrhistogram::Histogram;

/// Why a snapshot was sent.
#[derive(Debug, Clone, PartialEq)]
pub enum SnapshotKind {
    /// A periodic report; more follow.
    Interval,
    /// The worker finished. `xor` is its share of the checksum; `full_pass` says whether it read
    /// its whole range at least once (only then is the combined XOR the file's).
    Final { xor: u32, full_pass: bool },
    /// The worker stopped on an error; the message names what failed.
    Failed(String),
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
    pub kind: SnapshotKind,
}
