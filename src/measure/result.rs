//! [`RunResult`]: the one record per measured run. The CSV columns are its fields (serde), so a
//! column cannot drift from the struct; the TUI's results table, batch summaries and `run`'s stderr
//! report all read it.
//!
//! The settings columns (`operation`, `method`, `pattern`, `cache`) keep diskscope's enums as
//! [`Label`]s, so a record is built and compared with `Op::Write`, never with `"write"`; the
//! enums' serde names are the column text. A label also holds text from outside its enum
//! verbatim: the program of a `command` experiment (`dd`) and the layout of a locality pass
//! (`dir`, `packed`) in `method`, the locality order `trace` in `pattern`, and the empty cells of
//! a row whose setup was never known (a locality experiment that failed before its first pass,
//! a fleet point no rank reported). So every CSV and JSON document written so far reads back,
//! and writes out again, with the same text.

use crate::config::{
    Arrival, Buffers, CacheMode, Checksum, Layout, Method, Op, Pattern, Prealloc, SubmitPolicy,
    WriteSync,
};
pub use crate::config::{Label, MethodLabel, Named, MIX_OPERATION};
use serde::{Deserialize, Serialize};

/// The name of this machine, as results and contexts record it.
pub fn host_name() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

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
    pub operation: Label<Op>,
    /// I/O method: read, pread, mmap, io_uring, buffered; or the program of a `command`
    /// experiment (`dd`), or the layout of a locality pass (`dir`, `packed`).
    pub method: Label<Method>,
    /// `sequential` or `random` offsets; or the locality order `trace`.
    pub pattern: Label<Pattern>,
    /// Cache mode asked for: as-is, warm, cold, cold-all. A sweep's warm read is recorded as
    /// `warm` though the sweep warms the file itself and runs it as-is.
    pub cache: Label<CacheMode>,
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
    /// The memory the I/O buffers had (`--buffers`): plain, malloc, thp or hugetlb, what the
    /// setting obtained (`auto` resolved, a `thp` the kernel could not give recorded as plain);
    /// the setting itself where no buffer was made (mmap, a run that failed first). Empty in
    /// files written before the column existed.
    #[serde(default)]
    pub buffers: Label<Buffers>,
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
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
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
    /// Can this number be trusted (issue 23, `explain::verdict`): `ok` or `suspect`; empty
    /// when not judged (a failed run, files written before the column existed).
    #[serde(default)]
    pub verdict: String,
    /// The reasons of a `suspect` verdict: stable codes, `;`-separated (docs/explain.md lists
    /// them); empty when ok.
    #[serde(default)]
    pub reasons: String,
    /// Each reason's sentence with its measured figures, ` | `-separated.
    #[serde(default)]
    pub why: String,
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
    pub layout: Option<Layout>,
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
    /// Open-loop runs (`--rate`, see `measure::pacer`) only; `None` in a closed-loop run and
    /// then left out of the CSV, so a closed-loop CSV keeps its header. The `lat_*` columns of
    /// an open-loop run are service times (issue → completion); these are the asked and
    /// achieved rates, operations per second, the operations the workers were behind at the
    /// end, and the response-time percentiles (intended start → completion), microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops_asked: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops_achieved: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog_ops: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resp_p50_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resp_p90_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resp_p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resp_p999_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resp_max_us: Option<f64>,
    /// Open-loop runs of at least a second: the response p99 without the run's worst burst
    /// (the contiguous tenth of its time whose operations, left out, lower the p99 most;
    /// `measure::burst`), microseconds; NaN (empty) in a shorter open-loop run. Far below
    /// `resp_p99_us`, one stall set the p99.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resp_p99_no_burst_us: Option<f64>,
    /// Mixed workloads (`--mix`, fio's `rw=randrw`) only; `None` in a pure run and then left
    /// out of the CSV, so a pure run's CSV keeps its header (a sweep with a mixed point writes
    /// them on every row, empty on the pure ones). The share of reads asked for and done,
    /// percent of operations (70 asked, 69.8 done); then each direction's bytes, operations,
    /// throughput (MiB/s and IOPS over the run's `seconds`, as fio counts them) and latency
    /// percentiles (microseconds). The two directions add up to `bytes`, `ops` and the `lat_*`
    /// histogram. `operation` of a mixed run is `mix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix_read_pct_asked: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix_read_pct_done: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ops: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_mib_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lat_p50_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lat_p90_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lat_p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lat_p999_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_lat_max_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_ops: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_mib_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_lat_p50_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_lat_p90_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_lat_p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_lat_p999_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_lat_max_us: Option<f64>,
    /// The settings a run with the defaults does not show (issue 18: a result holds every
    /// setting it ran with): each `None`, and then left out of the CSV, where the run used the
    /// default or the setting does not apply, so a default run's CSV keeps its header; a sweep
    /// whose points differ in one writes its column on every row (see
    /// `runner::optional_columns`). How writes were made durable (`fsync`, `dsync`,
    /// `dsync+fsync`; writes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_sync: Option<WriteSync>,
    /// io_uring's submission policy when not the default `each` (queued methods only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit: Option<SubmitPolicy>,
    /// Preallocation of a written file when not the default `native` (writes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prealloc: Option<Prealloc>,
    /// How an open-loop run's starts were spaced when not the default `constant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
    /// `none` when the run did not XOR its data (`--checksum none`: moved, never read back by
    /// the CPU, so `xor` is empty); left out at the default `xor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<Checksum>,
    /// The run as a timeline (per-interval figures, device counters, the bytes ratio); not a
    /// column: written as its own CSV (`--timeline`, `<experiment>-timeline.csv`).
    #[serde(skip)]
    pub timeline: Option<std::sync::Arc<super::timeline::Timeline>>,
}

/// An open-loop run whose backlog at the end exceeds this many seconds of its schedule fell
/// behind (see [`RunResult::fell_behind`]).
pub const FELL_BEHIND_BACKLOG_S: f64 = 0.010;

/// How an open-loop run ended against its schedule ([`RunResult::schedule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// It completed no operation.
    Idle,
    /// Its backlog at the end was within [`FELL_BEHIND_BACKLOG_S`] of the schedule.
    KeptUp,
    /// It ended further behind ([`RunResult::fell_behind`]).
    FellBehind,
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

    /// Fills the open-loop columns: the asked rate, the achieved one (from `ops` and
    /// `seconds`, so after [`RunResult::set_rates`]), the backlog and the response percentiles.
    pub fn set_open_loop(
        &mut self,
        asked_iops: f64,
        backlog_ops: u64,
        response: &super::histogram::LatencySummary,
    ) {
        self.rate_iops_asked = Some(asked_iops);
        self.rate_iops_achieved = Some(self.iops);
        self.backlog_ops = Some(backlog_ops);
        self.resp_p50_us = Some(response.p50_us);
        self.resp_p90_us = Some(response.p90_us);
        self.resp_p99_us = Some(response.p99_us);
        self.resp_p999_us = Some(response.p999_us);
        self.resp_max_us = Some(response.max_us);
    }

    /// Whether an open-loop run fell behind its schedule: a backlog at the end of more than
    /// [`FELL_BEHIND_BACKLOG_S`] of the schedule (a few operations late is a scheduling hiccup,
    /// not a device that cannot keep up). Not the achieved rate: over a short run, Poisson
    /// arrivals alone make it miss the asked one by several percent. `None` in a closed-loop run.
    pub fn fell_behind(&self) -> Option<bool> {
        let asked = self.rate_iops_asked?;
        let backlog = self.backlog_ops.unwrap_or(0) as f64;
        Some(backlog > (asked * FELL_BEHIND_BACKLOG_S).max(1.0))
    }

    /// How an open-loop run ended against its schedule; `None` in a closed-loop run. A run
    /// that completed no operation (an empty range, or stopped first) is [`Schedule::Idle`]:
    /// it neither kept up nor fell behind, whatever its backlog.
    pub fn schedule(&self) -> Option<Schedule> {
        let behind = self.fell_behind()?;
        Some(if self.ops == 0 {
            Schedule::Idle
        } else if behind {
            Schedule::FellBehind
        } else {
            Schedule::KeptUp
        })
    }

    /// Fills the mixed-workload columns from the run's two directions (`mixed`), after
    /// [`RunResult::set_rates`] (the rates are over `seconds`), and names the operation `mix`.
    pub fn set_mixed(&mut self, read_pct_asked: u32, mixed: &super::snapshot::MixedSnapshot) {
        use super::histogram::LatencySummary;
        self.operation = Label::Other(MIX_OPERATION.into());
        self.mix_read_pct_asked = Some(read_pct_asked);
        let ops = mixed.read.ops + mixed.write.ops;
        self.mix_read_pct_done = (ops > 0).then(|| mixed.read.ops as f64 * 100.0 / ops as f64);
        let secs = self.seconds;
        let rate = |n: u64, per: f64| {
            if secs > 0.0 {
                n as f64 / per / secs
            } else {
                0.0
            }
        };
        let d = &mixed.read;
        let l = LatencySummary::of(&d.latency);
        self.read_bytes = Some(d.bytes);
        self.read_ops = Some(d.ops);
        self.read_mib_s = Some(rate(d.bytes, 1024.0 * 1024.0));
        self.read_iops = Some(rate(d.ops, 1.0));
        self.read_lat_p50_us = Some(l.p50_us);
        self.read_lat_p90_us = Some(l.p90_us);
        self.read_lat_p99_us = Some(l.p99_us);
        self.read_lat_p999_us = Some(l.p999_us);
        self.read_lat_max_us = Some(l.max_us);
        let d = &mixed.write;
        let l = LatencySummary::of(&d.latency);
        self.write_bytes = Some(d.bytes);
        self.write_ops = Some(d.ops);
        self.write_mib_s = Some(rate(d.bytes, 1024.0 * 1024.0));
        self.write_iops = Some(rate(d.ops, 1.0));
        self.write_lat_p50_us = Some(l.p50_us);
        self.write_lat_p90_us = Some(l.p90_us);
        self.write_lat_p99_us = Some(l.p99_us);
        self.write_lat_p999_us = Some(l.p999_us);
        self.write_lat_max_us = Some(l.max_us);
    }

    /// The mixed-workload columns' names, in order (a sweep with a mixed point writes them on
    /// every row).
    pub fn mixed_columns() -> Vec<String> {
        let mut r = RunResult::default();
        r.set_mixed(50, &super::snapshot::MixedSnapshot::new());
        // No operations, no share done: set it, so its column is named too.
        r.mix_read_pct_done = Some(0.0);
        let pure = column_names(&RunResult::default());
        column_names(&r)
            .into_iter()
            .filter(|c| !pure.contains(c))
            .collect()
    }

    /// Every optional column (open loop, mix, the settings; not a fleet's) set: its header is
    /// their order.
    fn with_every_optional_column() -> RunResult {
        let mut r = RunResult::default();
        r.set_mixed(50, &super::snapshot::MixedSnapshot::new());
        r.mix_read_pct_done = Some(0.0);
        r.set_open_loop(1.0, 0, &Default::default());
        r.write_sync = Some(WriteSync::FsyncAtEnd);
        r.submit = Some(SubmitPolicy::Batch);
        r.prealloc = Some(Prealloc::None);
        r.arrival = Some(Arrival::Poisson);
        // Not `checksum`: the explorer always XORs, so its saved file's header (made from
        // these) has no such column; a sweep with a `none` point gets it after these.
        r
    }

    /// The optional columns (left out of a default row) that any of `rows` writes, in column
    /// order: what a file of these rows needs past the default header, so that each row has a
    /// cell, empty where it has no value, under every name.
    pub fn optional_columns_of(rows: &[RunResult]) -> Vec<String> {
        let pure = column_names(&RunResult::default());
        let mut used: Vec<String> = Vec::new();
        for r in rows {
            for c in column_names(r) {
                if !pure.contains(&c) && !used.contains(&c) {
                    used.push(c);
                }
            }
        }
        let mut order = column_names(&RunResult::with_every_optional_column());
        // A fleet's columns come before these in the struct; the full row has none of them.
        let rest: Vec<String> = used
            .iter()
            .filter(|c| !order.contains(c))
            .cloned()
            .collect();
        order.extend(rest);
        order.into_iter().filter(|c| used.contains(c)).collect()
    }

    /// Every optional column a row of the explorer can have (open loop, mix, the settings): the
    /// header of a file whose later rows are not known when it is made.
    pub fn every_optional_column() -> Vec<String> {
        Self::optional_columns_of(&[Self::with_every_optional_column()])
    }

    /// Copies the latency percentiles in.
    pub fn set_latency(&mut self, s: &super::histogram::LatencySummary) {
        self.lat_p50_us = s.p50_us;
        self.lat_p90_us = s.p90_us;
        self.lat_p99_us = s.p99_us;
        self.lat_p999_us = s.p999_us;
        self.lat_max_us = s.max_us;
    }
}

/// The CSV column names `r` serializes to (its `None` optional columns left out), from serde.
fn column_names(r: &RunResult) -> Vec<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if w.serialize(r).is_err() {
        return Vec::new();
    }
    let bytes = w.into_inner().unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let first = text.lines().next().unwrap_or_default().to_string();
    csv::Reader::from_reader(format!("{first}\n").as_bytes())
        .headers()
        .map(|h| h.iter().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Writes NaN (an unknown value) as an empty cell.
/// Reads what [`nan_as_empty`] wrote: an empty cell (or JSON `null`) is NaN, not an error, so a
/// row with an unknown figure reads back (a fleet rank's report, `clients`).
fn empty_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn nan_as_empty<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_nan() {
        s.serialize_none()
    } else {
        s.serialize_f64(*v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_its_enum_value_for_the_enum_names_and_verbatim_text_otherwise() {
        assert_eq!(Label::<CacheMode>::of_text("cold-all"), CacheMode::ColdAll);
        assert_eq!(
            Label::<CacheMode>::of_text("cold-all").known(),
            Some(CacheMode::ColdAll)
        );
        assert_eq!(
            Label::<Method>::of_text("io_uring").known(),
            Some(Method::IoUring)
        );
        for other in ["dd", "packed", "", "IO_URING"] {
            let l = Label::<Method>::of_text(other);
            assert_eq!(l.known(), None, "{other}");
            assert_eq!(l.as_str(), other);
        }
        assert_eq!(
            Label::<Op>::default().as_str(),
            "",
            "unknown is an empty cell"
        );
    }

    #[test]
    fn labels_compare_with_their_enum_and_order_and_pad_like_their_text() {
        let write: Label<Op> = Op::Write.into();
        assert!(write == Op::Write && write != Op::Read);
        assert!(Label::<Pattern>::of_text("trace") != Pattern::Random);
        let mut v: Vec<MethodLabel> = ["pread", "dd", "buffered", "io_uring"]
            .into_iter()
            .map(Label::of_text)
            .collect();
        v.sort();
        let text: Vec<&str> = v.iter().map(|l| l.as_str()).collect();
        assert_eq!(text, ["buffered", "dd", "io_uring", "pread"]);
        // The summary table aligns its columns with `{:<9}`.
        assert_eq!(
            format!("[{:<9}]", Label::from(Method::Pread)),
            "[pread    ]"
        );
    }
}
