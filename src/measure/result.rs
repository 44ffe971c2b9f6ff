//! [`RunResult`]: the one record per measured run. The CSV columns are its fields (serde), so a
//! column cannot drift from the struct; the TUI's results table, batch summaries and `run`'s stderr
//! report all read it.

use serde::{Deserialize, Serialize};

/// One measured run (one repetition of one sweep point).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Experiment name (batch), or the command that produced it (`run`, `tui`).
    pub experiment: String,
    /// Host name of the machine.
    pub host: String,
    /// File measured.
    pub file: String,
    /// Size of that file, bytes, when the run started.
    pub file_size_bytes: u64,
    /// `read` or `write`.
    pub operation: String,
    /// I/O method: read, pread, mmap, io_uring, buffered (or the command kind).
    pub method: String,
    /// `sequential` or `random` offsets.
    pub pattern: String,
    /// Cache mode asked for: as-is, warm, cold, cold-all.
    pub cache: String,
    /// O_DIRECT used.
    pub direct: bool,
    /// Bytes per operation.
    pub block_size_bytes: u64,
    /// Blocks transferred.
    pub block_count: u64,
    /// Worker threads.
    pub threads: usize,
    /// io_uring queue depth (1 for synchronous methods).
    pub queue_depth: u32,
    /// Repetition number, 1-based.
    pub rep: u32,
    /// Bytes transferred.
    pub bytes: u64,
    /// Wall time of the measured part, seconds.
    pub seconds: f64,
    /// Throughput, MiB/s (2^20 bytes per second).
    pub mib_s: f64,
    /// Operations completed.
    pub ops: u64,
    /// Operations per second.
    pub iops: f64,
    /// Latency percentiles of single operations, microseconds.
    pub lat_p50_us: f64,
    pub lat_p90_us: f64,
    pub lat_p99_us: f64,
    pub lat_p999_us: f64,
    pub lat_max_us: f64,
    /// Share of the file in the page cache just before the run, percent (after cache control);
    /// NaN, an empty CSV cell, when it cannot be known (a file this user may not write).
    #[serde(serialize_with = "nan_as_empty")]
    pub residency_before_pct: f64,
    /// XOR of the data (8 hex digits), empty when the run did not cover its range.
    pub xor: String,
    /// Error message when the run failed, else empty.
    pub error: String,
    /// What limits this point (`syscall-bound`, `memory-bound`, `device-bound (...)`), from the
    /// `diskscope limits` profile; empty without one (see `explain::model`).
    pub bound: Option<String>,
    /// The model's predicted throughput for this point, MiB/s; empty without a profile.
    pub bound_mib_s: Option<f64>,
    /// Measured throughput as a share of `bound_mib_s`, percent; empty without a profile.
    pub pct_of_bound: Option<f64>,
    /// Below half the bound: what to look at (misaligned blocks, split requests, page cache
    /// churn, another process); empty otherwise or without a profile.
    pub bound_hint: Option<String>,
    /// Fleet runs (MPI, see `src/fleet/`) only: the columns below are `None` outside a fleet and
    /// then left out of the CSV, so a single-process CSV keeps its header. A fleet CSV has them
    /// all; `Some(None)` is an empty cell.
    /// MPI rank of the row (`0`, `1`, ...) or `all` for the aggregate row of a point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<String>,
    /// Ranks (clients) that ran the point together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// `file-per-process` or `shared-file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// True when this rank was stopped before its end (stonewalling, or another rank failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<bool>,
    /// Aggregate row: the slowest and fastest rank's throughput, MiB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_min_mib_s: Option<Option<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank_max_mib_s: Option<Option<f64>>,
    /// Aggregate row: `host#rank` of the slowest rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowest: Option<String>,
    /// Aggregate row: latest minus earliest start of the ranks after the barrier, microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_us: Option<Option<f64>>,
}

impl RunResult {
    /// Fills the derived throughput fields from bytes, ops and seconds.
    pub fn set_rates(&mut self) {
        if self.seconds > 0.0 {
            self.mib_s = self.bytes as f64 / (1024.0 * 1024.0) / self.seconds;
            self.iops = self.ops as f64 / self.seconds;
        } else {
            self.mib_s = 0.0;
            self.iops = 0.0;
        }
    }

    /// Copies the latency percentiles in.
    pub fn set_latency(&mut self, s: &super::LatencySummary) {
        self.lat_p50_us = s.p50_us;
        self.lat_p90_us = s.p90_us;
        self.lat_p99_us = s.p99_us;
        self.lat_p999_us = s.p999_us;
        self.lat_max_us = s.max_us;
    }
}

/// Writes NaN (an unknown value) as an empty cell.
fn nan_as_empty<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_nan() {
        s.serialize_none()
    } else {
        s.serialize_f64(*v)
    }
}
