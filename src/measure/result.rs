//! [`RunResult`]: the one record per measured run, in parts: who and where ([`Identity`]), the
//! setup it ran with ([`RecordedSetup`], the same type a run is made from, as recorded), what
//! it measured ([`Figures`]), how it is judged ([`Judgement`]), and the sections only some runs
//! have (a fleet's [`FleetRow`], an open loop's [`OpenLoop`], a mix's [`MixFigures`]). A CSV row
//! has no nesting, so the record writes its parts as one flat row (`measure::columns`), in the
//! column order every file written so far has: the columns are the parts' fields (serde), so a
//! column cannot drift from the struct; the TUI's results table, batch summaries and `run`'s
//! stderr report all read it.
//!
//! The settings columns (`operation`, `method`, `pattern`, `cache`, `buffers`) keep diskscope's
//! enums as [`Label`]s, so a record is built and compared with `Op::Write`, never with
//! `"write"`; the enums' serde names are the column text. A label also holds text from outside
//! its enum verbatim: the program of a `command` experiment (`dd`) and the layout of a locality
//! pass (`dir`, `packed`) in `method`, the locality order `trace` in `pattern`, and the empty
//! cells of a row whose setup was never known (a locality experiment that failed before its
//! first pass, a fleet point no rank reported). So every CSV and JSON document written so far
//! reads back, and writes out again, with the same text.

use super::columns::{flat_serialize, Cells};
use crate::config::{Arrival, Layout, Prealloc, RecordedSetup, SubmitPolicy, WriteSync};
pub use crate::config::{Label, MethodLabel, Named, MIX_OPERATION};
use serde::{Deserialize, Serialize};

/// The name of this machine, as results and contexts record it.
pub fn host_name() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

/// One measured run (one repetition of one sweep point).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunResult {
    /// Which run of which experiment, where.
    pub identity: Identity,
    /// The setup it ran with (see [`crate::config::Setup`]; recorded: labels, and the settings
    /// a default run does not show left out at their default).
    pub setup: RecordedSetup,
    /// What it measured.
    pub figures: Figures,
    /// Its bound and verdict.
    pub judgement: Judgement,
    /// Fleet runs (MPI, see `src/fleet/`) only: `None` outside a fleet, and then no column, so
    /// a single-process CSV keeps its header.
    pub fleet: Option<FleetRow>,
    /// Open-loop runs (`--rate`, see `measure::pacer`) only; `None` in a closed-loop run, and
    /// then no column. The `lat_*` figures of an open-loop run are service times (issue →
    /// completion); these are the achieved rate and the response times (intended start →
    /// completion). The asked rate is the setup's `rate_iops`.
    pub open_loop: Option<OpenLoop>,
    /// Mixed workloads (`--mix`, fio's `rw=randrw`) only; `None` in a pure run, and then no
    /// column (a sweep with a mixed point writes them on every row, empty on the pure ones).
    /// The share asked is the setup's `mix_read_pct`; the record's `operation` is `mix`.
    pub mix: Option<MixFigures>,
    /// The kernel view (`--kernel`, `crate::kernel`) only; `None` without it, and then no
    /// column, so a run without the view keeps its header.
    pub kernel: Option<KernelFigures>,
    /// The run's own facts (`crate::facts`, issue 36): its own I/O, the others' on its device,
    /// what the file is made of, what the cache held, who else ran, the device chain. Its
    /// columns follow the others (their own names, `crate::facts::Section`); `None` (no
    /// columns) for a row that was not measured by the runner.
    pub facts: Option<crate::facts::Section>,
    /// The run as a timeline (per-interval figures, device counters, the bytes ratio); not a
    /// column: written as its own CSV (`--timeline`, `<experiment>-timeline.csv`).
    pub timeline: Option<std::sync::Arc<super::timeline::Timeline>>,
}

/// Which run a record is, and of what.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// Experiment name (batch), or the command that produced it (`run`, `tui`).
    pub experiment: String,
    /// Host name of the machine.
    pub host: String,
    /// File measured.
    pub file: String,
    /// Size of that file, bytes, when the run started.
    pub file_size_bytes: u64,
    /// Repetition number, 1-based.
    pub rep: u32,
}

/// What a run measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Blocks transferred.
    pub block_count: u64,
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
}

/// How a run is judged: what bounds it and whether its number can be trusted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
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
}

/// A fleet row's columns (see `src/fleet/`); `None` figures are empty cells.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FleetRow {
    /// MPI rank of the row (`0`, `1`, ...) or `all` for the aggregate row of a point.
    pub rank: String,
    /// Ranks (clients) that ran the point together.
    pub clients: u32,
    /// `file-per-process` or `shared-file`.
    pub layout: Layout,
    /// True when this rank was stopped before its end (stonewalling, or another rank failed).
    pub stopped_early: bool,
    /// Aggregate row: the slowest and fastest rank's throughput, MiB/s.
    pub rank_min_mib_s: Option<f64>,
    pub rank_max_mib_s: Option<f64>,
    /// Aggregate row: `host#rank` of the slowest rank.
    pub slowest: String,
    /// Latest minus earliest start of the ranks after the barrier (the aggregate row), or this
    /// rank's start after the earliest, microseconds.
    pub start_skew_us: Option<f64>,
}

/// An open-loop run's own figures: the achieved rate (operations per second), the operations
/// the workers were behind at the end, and the response-time percentiles (intended start →
/// completion), microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpenLoop {
    pub rate_iops_achieved: f64,
    pub backlog_ops: u64,
    pub resp_p50_us: f64,
    pub resp_p90_us: f64,
    pub resp_p99_us: f64,
    pub resp_p999_us: f64,
    pub resp_max_us: f64,
    /// Open-loop runs of at least a second: the response p99 without the run's worst burst
    /// (the contiguous tenth of its time whose operations, left out, lower the p99 most;
    /// `measure::burst`), microseconds; NaN (empty) in a shorter open-loop run. Far below
    /// `resp_p99_us`, one stall set the p99.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resp_p99_no_burst_us: Option<f64>,
}

/// The kernel view's figures of a run (`--kernel`, `crate::kernel`): whose requests were
/// counted (`process`: the run's own; `device`: every request to the file's disk), then the
/// run's requests as issued to the driver, the block layer's queue time (the bio's entry to the
/// issue) and the device's time (issue to completion) as p50 and p99, microseconds, the mean
/// size of a request as issued, bytes, merges and splits; and the software's share: the run's
/// `lat_p50_us` minus the queue's and the device's p50s, microseconds. Empty cells where the
/// view was asked for but absent (why: the timeline's `kernel.absent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelFigures {
    pub kernel_filter: crate::kernel::FilterBy,
    #[serde(default)]
    pub kernel_requests: Option<u64>,
    #[serde(deserialize_with = "empty_as_nan")]
    pub kernel_queue_p50_us: f64,
    #[serde(deserialize_with = "empty_as_nan")]
    pub kernel_queue_p99_us: f64,
    #[serde(deserialize_with = "empty_as_nan")]
    pub kernel_device_p50_us: f64,
    #[serde(deserialize_with = "empty_as_nan")]
    pub kernel_device_p99_us: f64,
    #[serde(deserialize_with = "empty_as_nan")]
    pub kernel_issued_mean_bytes: f64,
    #[serde(default)]
    pub kernel_merges: Option<u64>,
    #[serde(default)]
    pub kernel_splits: Option<u64>,
    #[serde(deserialize_with = "empty_as_nan")]
    pub kernel_software_p50_us: f64,
}

/// A mixed run's own figures: the share of reads done (percent of operations; `None` when no
/// operation completed), then each direction's bytes, operations, throughput (MiB/s and IOPS
/// over the run's `seconds`, as fio counts them) and latency percentiles (microseconds). The
/// two directions add up to `bytes`, `ops` and the `lat_*` histogram.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MixFigures {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix_read_pct_done: Option<f64>,
    pub read_bytes: u64,
    pub read_ops: u64,
    pub read_mib_s: f64,
    pub read_iops: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub read_lat_p50_us: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub read_lat_p90_us: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub read_lat_p99_us: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub read_lat_p999_us: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub read_lat_max_us: f64,
    pub write_bytes: u64,
    pub write_ops: u64,
    pub write_mib_s: f64,
    pub write_iops: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub write_lat_p50_us: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub write_lat_p90_us: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub write_lat_p99_us: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub write_lat_p999_us: f64,
    #[serde(serialize_with = "nan_as_empty", deserialize_with = "empty_as_nan")]
    pub write_lat_max_us: f64,
}

impl Serialize for RunResult {
    /// One flat row, in the column order of every file written so far: the identity and the
    /// setup interleave at its head, the setup's open-loop rate and mix share sit at the head
    /// of their sections, the settings a default run does not show come next, the run's facts last.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        flat_serialize!(s, "RunResult", {
            id: Some(&self.identity),
            setup: Some(&self.setup),
            figures: Some(&self.figures),
            judgement: Some(&self.judgement),
            fleet: self.fleet.as_ref(),
            open_loop: self.open_loop.as_ref(),
            mix: self.mix.as_ref(),
            kernel: self.kernel.as_ref(),
            facts: self.facts.as_ref(),
        }, [
            id => "file_size_bytes",
            setup => "block_size_bytes",
            figures => "block_count",
            setup => "buffers",
            id,
            figures,
            judgement,
            fleet,
            setup => "rate_iops_asked",
            open_loop,
            setup => "mix_read_pct_asked",
            mix,
            setup,
            kernel,
            facts,
        ])
    }
}

impl<'de> Deserialize<'de> for RunResult {
    /// A flat row (CSV, JSON, CBOR) back into its parts; a section is there when one of its
    /// columns is.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::of_cells(&Cells::deserialize(d)?)
    }
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
    /// A record from the cells of one flat row (see [`Cells`]): a CSV record read as text
    /// ([`Cells::of_record`]), or a JSON or CBOR row.
    pub fn of_cells<E: serde::de::Error>(c: &Cells) -> Result<Self, E> {
        Ok(RunResult {
            identity: c.part()?,
            setup: c.part()?,
            figures: c.part()?,
            judgement: c.part()?,
            fleet: c.section()?,
            open_loop: c.section()?,
            mix: c.section()?,
            kernel: c.section()?,
            facts: c.section()?,
            timeline: None,
        })
    }

    /// Fills the derived throughput fields from bytes, ops and seconds.
    pub fn set_rates(&mut self) {
        let f = &mut self.figures;
        if f.seconds > 0.0 {
            f.mib_s = f.bytes as f64 / (1024.0 * 1024.0) / f.seconds;
            f.iops = f.ops as f64 / f.seconds;
        } else {
            f.mib_s = 0.0;
            f.iops = 0.0;
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
        self.setup.rate_iops = Some(crate::config::Iops(asked_iops));
        let no_burst = self.open_loop.as_ref().and_then(|o| o.resp_p99_no_burst_us);
        self.open_loop = Some(OpenLoop {
            rate_iops_achieved: self.figures.iops,
            backlog_ops,
            resp_p50_us: response.p50_us,
            resp_p90_us: response.p90_us,
            resp_p99_us: response.p99_us,
            resp_p999_us: response.p999_us,
            resp_max_us: response.max_us,
            resp_p99_no_burst_us: no_burst,
        });
    }

    /// Whether an open-loop run fell behind its schedule: a backlog at the end of more than
    /// [`FELL_BEHIND_BACKLOG_S`] of the schedule (a few operations late is a scheduling hiccup,
    /// not a device that cannot keep up). Not the achieved rate: over a short run, Poisson
    /// arrivals alone make it miss the asked one by several percent. `None` in a closed-loop run.
    pub fn fell_behind(&self) -> Option<bool> {
        let asked = self.setup.rate()?;
        let backlog = self.open_loop.as_ref().map_or(0, |o| o.backlog_ops) as f64;
        Some(backlog > (asked * FELL_BEHIND_BACKLOG_S).max(1.0))
    }

    /// How an open-loop run ended against its schedule; `None` in a closed-loop run. A run
    /// that completed no operation (an empty range, or stopped first) is [`Schedule::Idle`]:
    /// it neither kept up nor fell behind, whatever its backlog.
    pub fn schedule(&self) -> Option<Schedule> {
        let behind = self.fell_behind()?;
        Some(if self.figures.ops == 0 {
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
        self.setup.op = Label::Other(MIX_OPERATION.into());
        self.setup.mix_read_pct = Some(read_pct_asked);
        let ops = mixed.read.ops + mixed.write.ops;
        let secs = self.figures.seconds;
        let rate = |n: u64, per: f64| {
            if secs > 0.0 {
                n as f64 / per / secs
            } else {
                0.0
            }
        };
        let (r, w) = (&mixed.read, &mixed.write);
        let (rl, wl) = (
            LatencySummary::of(&r.latency),
            LatencySummary::of(&w.latency),
        );
        self.mix = Some(MixFigures {
            mix_read_pct_done: (ops > 0).then(|| r.ops as f64 * 100.0 / ops as f64),
            read_bytes: r.bytes,
            read_ops: r.ops,
            read_mib_s: rate(r.bytes, 1024.0 * 1024.0),
            read_iops: rate(r.ops, 1.0),
            read_lat_p50_us: rl.p50_us,
            read_lat_p90_us: rl.p90_us,
            read_lat_p99_us: rl.p99_us,
            read_lat_p999_us: rl.p999_us,
            read_lat_max_us: rl.max_us,
            write_bytes: w.bytes,
            write_ops: w.ops,
            write_mib_s: rate(w.bytes, 1024.0 * 1024.0),
            write_iops: rate(w.ops, 1.0),
            write_lat_p50_us: wl.p50_us,
            write_lat_p90_us: wl.p90_us,
            write_lat_p99_us: wl.p99_us,
            write_lat_p999_us: wl.p999_us,
            write_lat_max_us: wl.max_us,
        });
    }

    /// The mixed-workload columns' names, in order (a sweep with a mixed point writes them on
    /// every row).
    pub fn mixed_columns() -> Vec<String> {
        let mut r = RunResult::default();
        r.set_mixed(50, &super::snapshot::MixedSnapshot::new());
        // No operations, no share done: set it, so its column is named too.
        if let Some(m) = &mut r.mix {
            m.mix_read_pct_done = Some(0.0);
        }
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
        if let Some(m) = &mut r.mix {
            m.mix_read_pct_done = Some(0.0);
        }
        r.set_open_loop(1.0, 0, &Default::default());
        r.setup.write_sync = Some(WriteSync::FsyncAtEnd);
        r.setup.submit = Some(SubmitPolicy::Batch);
        r.setup.prealloc = Some(Prealloc::None);
        r.setup.arrival = Some(Arrival::Poisson);
        // Not `checksum`: the explorer always XORs, so its saved file's header (made from
        // these) has no such column; a sweep with a `none` point gets it after these.
        r.facts = Some(crate::facts::Section::with_every_column());
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
        // A fleet's columns come before these in the row; the full row has none of them.
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

    /// Fills the kernel view's columns from its section of the run (after
    /// [`RunResult::set_latency`]: the software's share is taken from `lat_p50_us`); empty
    /// cells where the view was absent or saw no request.
    pub fn set_kernel(&mut self, k: &super::kernel::KernelSection) {
        let t = k.total.filter(|t| t.requests > 0 || t.completed > 0);
        let f = |get: fn(&crate::kernel::Summary) -> f64| t.as_ref().map_or(f64::NAN, get);
        self.kernel = Some(KernelFigures {
            kernel_filter: k.filter,
            kernel_requests: t.map(|t| t.requests),
            kernel_queue_p50_us: f(|t| t.queue_p50_us),
            kernel_queue_p99_us: f(|t| t.queue_p99_us),
            kernel_device_p50_us: f(|t| t.device_p50_us),
            kernel_device_p99_us: f(|t| t.device_p99_us),
            kernel_issued_mean_bytes: f(|t| t.issued_mean_bytes),
            kernel_merges: t.map(|t| t.merges),
            kernel_splits: t.map(|t| t.splits),
            kernel_software_p50_us: self.figures.lat_p50_us
                - f(|t| t.queue_p50_us)
                - f(|t| t.device_p50_us),
        });
    }

    /// The kernel view's columns, in order (for a header declared before the run).
    pub fn kernel_columns() -> Vec<String> {
        let mut r = RunResult::default();
        r.set_kernel(&super::kernel::KernelSection::absent_of(
            crate::kernel::FilterBy::Process,
        ));
        Self::optional_columns_of(&[r])
    }

    /// Copies the latency percentiles in.
    pub fn set_latency(&mut self, s: &super::histogram::LatencySummary) {
        let f = &mut self.figures;
        f.lat_p50_us = s.p50_us;
        f.lat_p90_us = s.p90_us;
        f.lat_p99_us = s.p99_us;
        f.lat_p999_us = s.p999_us;
        f.lat_max_us = s.max_us;
    }
}

/// The CSV column names `r` serializes to (its `None` optional columns left out), from serde.
fn column_names(r: &RunResult) -> Vec<String> {
    super::columns::names(r).unwrap_or_default()
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
    use crate::config::{Checksum, Iops, Op};

    const HEAD: &str = "experiment,host,file,file_size_bytes,operation,method,pattern,cache,\
        direct,block_size_bytes,block_count,threads,queue_depth,buffers,rep,bytes,seconds,mib_s,\
        ops,iops,lat_p50_us,lat_p90_us,lat_p99_us,lat_p999_us,lat_max_us,residency_before_pct,\
        xor,error,bound,bound_mib_s,pct_of_bound,bound_hint,verdict,reasons,why";
    const FLEET: &str = "rank,clients,layout,stopped_early,rank_min_mib_s,rank_max_mib_s,\
        slowest,start_skew_us";
    const OPEN_LOOP: &str = "rate_iops_asked,rate_iops_achieved,backlog_ops,resp_p50_us,\
        resp_p90_us,resp_p99_us,resp_p999_us,resp_max_us,resp_p99_no_burst_us";
    const MIX: &str = "mix_read_pct_asked,mix_read_pct_done,read_bytes,read_ops,read_mib_s,\
        read_iops,read_lat_p50_us,read_lat_p90_us,read_lat_p99_us,read_lat_p999_us,\
        read_lat_max_us,write_bytes,write_ops,write_mib_s,write_iops,write_lat_p50_us,\
        write_lat_p90_us,write_lat_p99_us,write_lat_p999_us,write_lat_max_us";
    const SETTINGS: &str = "write_sync,submit,prealloc,arrival,checksum";
    const FACTS: &str = "run_read_bytes,run_write_bytes,others_read_bytes,others_write_bytes,\
        below_read_bytes,below_write_bytes,hole_bytes,unwritten_bytes,encoded_bytes,shared_bytes,\
        cached_before_pct,cached_after_pct,dirty_after_bytes,psi_cpu_some_pct,psi_io_some_pct,\
        psi_memory_some_pct,steal_pct,device_chain,read_ahead_kb";

    fn header(r: &RunResult) -> String {
        column_names(r).join(",")
    }

    #[test]
    fn the_kernel_view_writes_its_columns_after_the_settings_and_before_the_facts() {
        use crate::kernel::FilterBy;
        assert_eq!(
            RunResult::kernel_columns().join(","),
            "kernel_filter,kernel_requests,kernel_queue_p50_us,kernel_queue_p99_us,\
             kernel_device_p50_us,kernel_device_p99_us,kernel_issued_mean_bytes,kernel_merges,\
             kernel_splits,kernel_software_p50_us"
        );
        let mut r = RunResult::default();
        r.setup.checksum = Some(Checksum::None);
        r.set_kernel(&super::super::kernel::KernelSection::absent_of(
            FilterBy::Device,
        ));
        r.facts = Some(crate::facts::Section::with_every_column());
        let names = column_names(&r);
        let at = |c: &str| names.iter().position(|n| n == c).unwrap();
        assert!(at("checksum") < at("kernel_filter"));
        assert!(at("kernel_software_p50_us") < at("run_read_bytes"));
        // An absent view: its filter, and no figure (NaN, read back as NaN).
        let text = crate::export::csv::to_csv(std::slice::from_ref(&r)).unwrap();
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let h = rd.headers().unwrap().clone();
        let rec = rd.records().next().unwrap().unwrap();
        let back: RunResult =
            RunResult::of_cells::<serde::de::value::Error>(&Cells::of_record(&h, &rec)).unwrap();
        let k = back.kernel.expect("the kernel section reads back");
        assert_eq!(
            (k.kernel_filter, k.kernel_requests),
            (FilterBy::Device, None)
        );
        assert!(k.kernel_queue_p50_us.is_nan());
        let json = serde_json::to_string(&r).unwrap();
        let back: RunResult = serde_json::from_str(&json).unwrap();
        assert!(back.kernel.is_some_and(|k| k.kernel_device_p99_us.is_nan()));
    }

    #[test]
    fn the_parts_write_the_columns_of_every_file_written_so_far_in_their_order() {
        assert_eq!(header(&RunResult::default()), HEAD);
        let mut every = RunResult::with_every_optional_column();
        every.setup.checksum = Some(Checksum::None);
        every.open_loop.as_mut().unwrap().resp_p99_no_burst_us = Some(f64::NAN);
        every.fleet = Some(FleetRow::default());
        assert_eq!(
            header(&every),
            [HEAD, FLEET, OPEN_LOOP, MIX, SETTINGS, FACTS].join(",")
        );
        // Read back from its own CSV, JSON and CBOR, it is the same record.
        let mut r = every.clone();
        r.open_loop.as_mut().unwrap().resp_p99_no_burst_us = Some(12.5);
        r.identity.experiment = "0012".into();
        r.figures.xor = "00001234".into();
        r.setup.op = Op::Write.into();
        r.setup.rate_iops = Some(Iops(2500.0));
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<RunResult>(&json).unwrap(), r);
        let mut cbor = Vec::new();
        ciborium::into_writer(&r, &mut cbor).unwrap();
        assert_eq!(
            ciborium::from_reader::<RunResult, _>(cbor.as_slice()).unwrap(),
            r
        );
        let text = crate::export::csv::to_csv(std::slice::from_ref(&r)).unwrap();
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let h = rd.headers().unwrap().clone();
        let rec = rd.records().next().unwrap().unwrap();
        let back: RunResult =
            RunResult::of_cells::<serde::de::value::Error>(&Cells::of_record(&h, &rec)).unwrap();
        assert_eq!(back, r);
    }
}
