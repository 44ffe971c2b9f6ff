//! Folds the snapshot stream into totals: bytes, ops, the merged latency histogram, a throughput
//! series in fixed 100 ms bins, and the combined XOR. The TUI and batch mode use this same type, so
//! a figure on screen and a figure in a CSV are one computation.

use super::histogram::new_latency_histogram;
use super::snapshot::{MixedSnapshot, Snapshot, SnapshotKind, WorkerError};
use hdrhistogram::Histogram;

/// Width of one bin of the throughput series.
pub const SERIES_BIN_NS: u64 = 100_000_000;

/// Running totals of one run.
#[derive(Debug, Clone)]
pub struct Aggregate {
    pub workers: usize,
    pub bytes: u64,
    pub ops: u64,
    /// Latency of every operation so far, ns.
    pub latency: Histogram<u64>,
    /// Bytes per 100 ms bin since the start (bin i covers [i*100ms, (i+1)*100ms)).
    pub series_bytes: Vec<u64>,
    /// Latest `at_ns` seen from any worker.
    pub last_at_ns: u64,
    finished: usize,
    full_pass: usize,
    xor: u32,
    /// A worker finished without an XOR (`--checksum none`): the run has none.
    xor_absent: bool,
    /// Failed workers' errors, in the order they arrived.
    pub errors: Vec<WorkerError>,
    /// Open-loop runs (`--rate`) only: response time (intended start → completion) of every
    /// operation so far, ns; `latency` then holds the service times.
    pub response: Option<Histogram<u64>>,
    /// Open-loop runs: operations the finished workers were behind at their end.
    pub backlog_ops: u64,
    /// Mixed workloads only: the reads and the writes so far, apart (they add up to `bytes`,
    /// `ops` and `latency`).
    pub mixed: Option<MixedSnapshot>,
    /// Whether `series_bytes` is kept. A run of hours would grow it by 80 bytes a second; the
    /// explorer, which bins its own series and keeps it bounded, turns it off
    /// ([`Aggregate::without_series`]).
    keep_series: bool,
}

impl Aggregate {
    pub fn new(workers: usize) -> Self {
        Aggregate {
            workers,
            bytes: 0,
            ops: 0,
            latency: new_latency_histogram(),
            series_bytes: Vec::new(),
            last_at_ns: 0,
            finished: 0,
            full_pass: 0,
            xor: 0,
            xor_absent: false,
            errors: Vec::new(),
            response: None,
            backlog_ops: 0,
            mixed: None,
            keep_series: true,
        }
    }

    /// An aggregate that keeps no `series_bytes` (its size then stays the same however long the
    /// run): for a caller that bins the throughput itself.
    pub fn without_series(workers: usize) -> Self {
        Aggregate {
            keep_series: false,
            ..Aggregate::new(workers)
        }
    }

    /// Adds one snapshot.
    pub fn add(&mut self, s: &Snapshot) {
        self.bytes += s.bytes;
        self.ops += s.ops;
        // Same bounds everywhere, so adding cannot fail; ignore the impossible error.
        let _ = self.latency.add(&s.latency);
        self.last_at_ns = self.last_at_ns.max(s.at_ns);
        self.add_to_series(s);
        if let Some(m) = &s.mixed {
            self.mixed.get_or_insert_with(MixedSnapshot::new).add(m);
        }
        if let Some(p) = &s.paced {
            let _ = self
                .response
                .get_or_insert_with(new_latency_histogram)
                .add(&p.response);
            if !matches!(s.kind, SnapshotKind::Interval) {
                self.backlog_ops += p.backlog_ops;
            }
        }
        match &s.kind {
            SnapshotKind::Interval => {}
            SnapshotKind::Final { xor, full_pass } => {
                self.finished += 1;
                match xor {
                    Some(x) => self.xor ^= x,
                    None => self.xor_absent = true,
                }
                if *full_pass {
                    self.full_pass += 1;
                }
            }
            SnapshotKind::Failed(e) => {
                self.finished += 1;
                self.errors.push(e.clone());
            }
        }
    }

    /// Spreads the snapshot's bytes over the 100 ms bins its interval covers.
    fn add_to_series(&mut self, s: &Snapshot) {
        if s.bytes == 0 || !self.keep_series {
            return;
        }
        let start = s.at_ns.saturating_sub(s.interval_ns);
        let end = s.at_ns.max(start + 1);
        let last_bin = ((end - 1) / SERIES_BIN_NS) as usize;
        if self.series_bytes.len() <= last_bin {
            self.series_bytes.resize(last_bin + 1, 0);
        }
        let span = (end - start) as u128;
        let mut given = 0u64;
        let first_bin = (start / SERIES_BIN_NS) as usize;
        for bin in first_bin..=last_bin {
            let lo = start.max(bin as u64 * SERIES_BIN_NS);
            let hi = end.min((bin as u64 + 1) * SERIES_BIN_NS);
            let share = if bin == last_bin {
                s.bytes - given
            } else {
                (s.bytes as u128 * (hi - lo) as u128 / span) as u64
            };
            self.series_bytes[bin] += share;
            given += share;
        }
    }

    /// True once every worker sent its final (or failed) snapshot.
    pub fn all_finished(&self) -> bool {
        self.finished >= self.workers
    }

    /// The combined XOR, if every worker covered its whole range (so it is the range's checksum)
    /// and XOR-ed its data (none with `--checksum none`).
    pub fn xor(&self) -> Option<u32> {
        (self.all_finished()
            && self.full_pass == self.workers
            && self.errors.is_empty()
            && !self.xor_absent)
            .then_some(self.xor)
    }

    /// The combined XOR of whatever was read (random runs, partial runs); `None` when a worker
    /// folded no XOR (`--checksum none`), so a run that never read its data back cannot print
    /// one.
    pub fn xor_of_read_data(&self) -> Option<u32> {
        (!self.xor_absent).then_some(self.xor)
    }

    /// Throughput of each complete 100 ms bin, MiB/s.
    pub fn series_mib_s(&self) -> Vec<f64> {
        let complete = (self.last_at_ns / SERIES_BIN_NS) as usize;
        self.series_bytes
            .iter()
            .take(complete)
            .map(|b| *b as f64 / (1024.0 * 1024.0) / (SERIES_BIN_NS as f64 / 1e9))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(worker: usize, at_ms: u64, int_ms: u64, bytes: u64, kind: SnapshotKind) -> Snapshot {
        let mut latency = new_latency_histogram();
        latency.record(1000).unwrap();
        Snapshot {
            worker,
            at_ns: at_ms * 1_000_000,
            interval_ns: int_ms * 1_000_000,
            bytes,
            ops: 1,
            latency,
            ops_log: Vec::new(),
            paced: None,
            mixed: None,
            kind,
        }
    }

    #[test]
    fn xor_is_reported_only_when_every_worker_covered_its_range() {
        let mut a = Aggregate::new(2);
        a.add(&snap(0, 100, 100, 10, SnapshotKind::Interval));
        a.add(&snap(
            0,
            150,
            50,
            10,
            SnapshotKind::Final {
                xor: Some(0xF0),
                full_pass: true,
            },
        ));
        assert_eq!(a.xor(), None);
        a.add(&snap(
            1,
            150,
            150,
            10,
            SnapshotKind::Final {
                xor: Some(0x0F),
                full_pass: true,
            },
        ));
        assert_eq!(a.xor(), Some(0xFF));
        assert_eq!((a.bytes, a.ops, a.latency.len()), (30, 3, 3));
    }

    #[test]
    fn one_worker_without_an_xor_leaves_the_run_without_one() {
        let mut a = Aggregate::new(2);
        let fin = |xor| SnapshotKind::Final {
            xor,
            full_pass: true,
        };
        a.add(&snap(0, 100, 100, 10, fin(Some(0xF0))));
        a.add(&snap(1, 100, 100, 10, fin(None)));
        assert!(a.all_finished());
        assert_eq!((a.xor(), a.xor_of_read_data()), (None, None));
    }

    #[test]
    fn series_spreads_bytes_over_bins_without_losing_any() {
        let mut a = Aggregate::new(1);
        a.add(&snap(0, 250, 250, 1000, SnapshotKind::Interval));
        assert_eq!(a.series_bytes.iter().sum::<u64>(), 1000);
        assert_eq!(a.series_bytes.len(), 3);
        assert_eq!(a.series_mib_s().len(), 2);
    }
}
