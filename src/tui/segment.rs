//! A *segment*: one run of the engine with one set of settings, as the UI sees it — the
//! aggregate of its snapshots, which 100 ms bins are complete, its peak — and the XOR that
//! complete sequential reads agree on.

use super::settings::Settings;
use crate::measure::{Aggregate, RunResult};
use crate::runner::{make_result, PreparedMeta};

/// One run of the engine with one set of settings.
#[derive(Debug, Clone)]
pub struct Segment {
    pub id: u64,
    pub settings: Settings,
    /// The `experiment` column of its row (`tui`, `tui+fsync`, `tui-kdiskmark SEQ1M Q8T1`).
    pub experiment: String,
    pub meta: Option<PreparedMeta>,
    pub agg: Aggregate,
    /// Whether it becomes a results row when it ends (`r` discards it).
    pub keep: bool,
    /// Latest `at_ns` of each worker, to know which 100 ms bins are complete.
    pub(super) worker_at_ns: Vec<u64>,
    /// Complete bins already copied into the sparkline history.
    pub(super) bins_seen: usize,
    pub peak_mib_s: f64,
}

impl Segment {
    pub(super) fn new(id: u64, settings: Settings, experiment: String) -> Self {
        Segment {
            id,
            settings,
            experiment,
            meta: None,
            agg: Aggregate::new(0),
            keep: true,
            worker_at_ns: Vec::new(),
            bins_seen: 0,
            peak_mib_s: 0.0,
        }
    }

    /// Seconds measured so far (by the workers' clocks).
    pub fn seconds(&self) -> f64 {
        self.agg.last_at_ns as f64 / 1e9
    }

    /// Mean throughput so far, MiB/s.
    pub fn mean_mib_s(&self) -> f64 {
        let s = self.seconds();
        if s > 0.0 {
            self.agg.bytes as f64 / (1024.0 * 1024.0) / s
        } else {
            0.0
        }
    }

    /// Operations per second so far.
    pub fn iops(&self) -> f64 {
        let s = self.seconds();
        if s > 0.0 {
            self.agg.ops as f64 / s
        } else {
            0.0
        }
    }

    /// The segment as a results row, as if it ended now after `seconds`.
    pub fn result(&self, experiment: &str, seconds: f64) -> Option<RunResult> {
        let meta = self.meta.as_ref()?;
        let elapsed = std::time::Duration::from_secs_f64(seconds.max(0.0));
        Some(make_result(meta, experiment, &self.agg, elapsed))
    }
}

/// The last XOR a complete sequential read produced.
#[derive(Debug, Clone, PartialEq)]
pub struct XorSeen {
    pub xor: String,
    /// The settings that produced it (`read pread 1M`).
    pub by: String,
    /// How many completed reads agreed on it.
    pub agreeing: usize,
    /// A later read gave a different XOR (a bug or a file that changed under us).
    pub mismatch: Option<String>,
}
