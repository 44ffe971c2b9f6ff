//! A *segment*: one run of the engine with one set of settings, as the UI sees it — the
//! aggregate of its snapshots, which 100 ms bins are complete, its figures — and the XOR that
//! complete sequential reads agree on.
//!
//! **Warm-up.** A read with the cache left as is starts cold and warms as it goes: its first
//! pass comes from the disk and the next ones from memory, so a mean over everything (3891
//! MiB/s) describes neither (~5000 steady). Such a segment's figures leave out a warm-up —
//! the first whole pass of a sequential read, the first [`WARMUP_SECONDS`] of a random one —
//! and say so (`wu` on the row). Snapshots that start after it are added to a second
//! aggregate, [`Segment::steady`], from which the row is made. Cold reads (evicted before every
//! pass), O_DIRECT and writes have no warm-up.
//!
//! **Mean and peak from the same samples.** The panel's mean and peak, and the row's `±`
//! spread, are taken over the same complete 100 ms bins after the warm-up, so the mean can
//! never read above the peak (a mean over all bytes against a peak over complete bins could:
//! 1948 > 1943 after `r`).
//!
//! **Constant memory.** A segment may run for hours, so it keeps no series: its snapshots'
//! bytes and latencies go into the few 100 ms bins still open ([`Segment::add`]); a bin that
//! every worker has reported past is complete, folds into running figures (count, mean, sum of
//! squares, peak: Welford's) and into the row's [`RowSeries`], and is handed to the chart
//! ([`Segment::take_ready`]) with its latency histogram. The totals are the aggregate's merged
//! histograms. A worker that stalls keeps bins open; past [`MAX_OPEN_BINS`] the oldest is
//! completed anyway (its late bytes then count in the oldest open bin).

use super::history::{quantiles_us, Point, RowSeries};
use super::settings::Settings;
use crate::config::{Op, Pattern};
use crate::measure::aggregate::SERIES_BIN_NS;
use crate::measure::{Aggregate, RunResult, Snapshot, SnapshotKind};
use crate::runner::{make_result, PreparedMeta};
use hdrhistogram::Histogram;
use std::collections::VecDeque;

/// Most 100 ms bins a segment keeps open waiting for a slow worker (5 s): each may hold a
/// latency histogram (~32 KB).
pub const MAX_OPEN_BINS: usize = 50;

/// The warm-up of a random read with the cache as is (a sequential read's is its first pass).
pub const WARMUP_SECONDS: f64 = 2.0;

/// Where a segment stands with its warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Warmup {
    /// No warm-up to leave out (cold, O_DIRECT, writes).
    None,
    /// Warming: the first pass (or [`WARMUP_SECONDS`]) is not over yet.
    Running,
    /// Over at this time (ns since the segment's start); later snapshots count.
    Over { end_ns: u64 },
}

/// A segment's figures over its complete 100 ms bins after the warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    /// Mean of the bins, MiB/s.
    pub mean_mib_s: f64,
    /// Highest bin, MiB/s (never below the mean: the same bins).
    pub peak_mib_s: f64,
    /// Sample standard deviation of the bins as % of their mean (None under 2 bins).
    pub spread_pct: Option<f64>,
    /// Bins counted.
    pub bins: usize,
}

/// Figures of 100 ms bins of bytes.
pub fn figures_of(bins: &[u64]) -> Figures {
    let mut r = Running::default();
    for b in bins {
        r.add(mib_s_of(*b));
    }
    r.figures()
}

/// A 100 ms bin's bytes as MiB/s.
fn mib_s_of(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0) / (SERIES_BIN_NS as f64 / 1e9)
}

/// Running figures of a series (Welford's mean and sum of squares, and the peak), so a segment
/// of hours needs no series to give its mean, spread and peak.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Running {
    n: usize,
    mean: f64,
    m2: f64,
    peak: f64,
}

impl Running {
    /// Adds one value.
    pub fn add(&mut self, v: f64) {
        self.n += 1;
        let d = v - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v - self.mean);
        self.peak = self.peak.max(v);
    }

    /// The figures so far.
    pub fn figures(&self) -> Figures {
        if self.n == 0 {
            return Figures::default();
        }
        let spread_pct = (self.n >= 2 && self.mean > 0.0)
            .then(|| (self.m2 / (self.n - 1) as f64).max(0.0).sqrt() / self.mean * 100.0);
        Figures {
            mean_mib_s: self.mean,
            peak_mib_s: self.peak,
            spread_pct,
            bins: self.n,
        }
    }
}

/// A 100 ms bin still open: its bytes and the latencies of the snapshots whose middle is in it.
#[derive(Debug, Clone, Default)]
struct OpenBin {
    bytes: u64,
    latency: Option<Histogram<u64>>,
}

/// A completed 100 ms bin, for the chart: its point and its operations' latencies.
#[derive(Debug, Clone)]
pub struct ReadyBin {
    pub point: Point,
    pub latency: Option<Histogram<u64>>,
}

/// What the table shows of a row beside its [`RunResult`]: the warm-up left out and the spread
/// of its 100 ms samples (its verdict is in the result's own `verdict` columns).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowExtra {
    /// Seconds of warm-up left out of the row's figures (None: no warm-up; `Some` of the whole
    /// time with `warmup_over` false: the warm-up never ended, nothing was left out).
    pub warmup_s: Option<f64>,
    /// Whether the warm-up ended (the row's figures are the steady part).
    pub warmup_over: bool,
    /// The spread of the row's 100 ms samples, % of their mean.
    pub spread_pct: Option<f64>,
    /// The row's whole run over time, for `e` (kept for the newest [`ROW_SERIES_KEPT`] rows).
    pub series: Option<RowSeries>,
}

/// Finished rows whose series over time are kept (each at most [`super::history::ROW_POINTS`]
/// points): what `e` can draw of a row under the cursor.
pub const ROW_SERIES_KEPT: usize = 32;

/// One run of the engine with one set of settings.
#[derive(Debug, Clone)]
pub struct Segment {
    pub id: u64,
    pub settings: Settings,
    /// The `experiment` column of its row (`tui`, `tui-kdiskmark SEQ1M Q8T1`).
    pub experiment: String,
    pub meta: Option<PreparedMeta>,
    pub agg: Aggregate,
    /// Whether it becomes a results row when it ends (`r` discards it).
    pub keep: bool,
    /// Latest `at_ns` of each worker, to know which 100 ms bins are complete.
    pub(super) worker_at_ns: Vec<u64>,
    /// Whether the chart has marked where this segment begins.
    pub(super) marked: bool,
    /// Whether completed bins are kept for the chart ([`Segment::take_ready`]): the live
    /// segment's; a segment that is ending is no longer drawn.
    pub(super) feeds_chart: bool,
    /// The first bin not completed yet.
    first_open: u64,
    /// The open bins from `first_open` on.
    open: VecDeque<OpenBin>,
    /// Completed bins the chart has not taken yet.
    ready: VecDeque<ReadyBin>,
    /// Figures over every completed bin.
    all_bins: Running,
    /// Figures over the completed bins after the warm-up.
    steady_bins: Running,
    /// The whole run, for `e`.
    pub series: RowSeries,
    pub peak_mib_s: f64,
    /// The warm-up's state.
    pub warmup: Warmup,
    /// Snapshots that started after the warm-up ended (empty until then).
    pub steady: Aggregate,
    /// Workers whose first pass ended whole (`Final { full_pass: true }`).
    full_passes: usize,
    /// Open loop: each worker's backlog (operations whose intended start passed unissued) at
    /// its latest snapshot. The aggregate counts backlogs at the end only; the screen needs
    /// them while the run goes.
    backlog_by_worker: Vec<u64>,
    /// The run's facts (`crate::facts`: its own I/O, the page cache, pressure, the extents)
    /// from its first look until the session's latest (once a second, and at its end).
    pub facts: Option<std::sync::Arc<crate::facts::Facts>>,
    /// The live row's verdict as of `facts`, by the judge `run` uses (its `!` in the table and
    /// its reasons on the why row); None before the first facts.
    pub verdict: Option<crate::explain::verdict::Verdict>,
}

impl Segment {
    pub(super) fn new(id: u64, settings: Settings, experiment: String) -> Self {
        Segment {
            id,
            settings,
            experiment,
            meta: None,
            agg: Aggregate::without_series(0),
            keep: true,
            worker_at_ns: Vec::new(),
            marked: false,
            feeds_chart: true,
            first_open: 0,
            open: VecDeque::new(),
            ready: VecDeque::new(),
            all_bins: Running::default(),
            steady_bins: Running::default(),
            series: RowSeries::default(),
            peak_mib_s: 0.0,
            warmup: Warmup::of(&settings),
            steady: Aggregate::without_series(0),
            full_passes: 0,
            backlog_by_worker: Vec::new(),
            facts: None,
            verdict: None,
        }
    }

    /// Open loop: the operations the workers are behind their schedule now (at their latest
    /// snapshots); None for a closed loop or before the first snapshot.
    pub fn backlog_now(&self) -> Option<u64> {
        self.settings.rate?;
        (!self.backlog_by_worker.is_empty()).then(|| self.backlog_by_worker.iter().sum())
    }

    /// Takes one snapshot: into the whole aggregate, and into the steady one once the warm-up
    /// is over (a snapshot that began during the warm-up stays out of it).
    pub fn add(&mut self, snapshot: &Snapshot) {
        self.agg.add(snapshot);
        self.add_to_bins(snapshot);
        if let Some(p) = &snapshot.paced {
            if self.backlog_by_worker.len() <= snapshot.worker {
                self.backlog_by_worker.resize(snapshot.worker + 1, 0);
            }
            self.backlog_by_worker[snapshot.worker] = p.backlog_ops;
        }
        if let Some(at) = self.worker_at_ns.get_mut(snapshot.worker) {
            *at = snapshot.at_ns;
        }
        let start = snapshot.at_ns.saturating_sub(snapshot.interval_ns);
        if let Warmup::Over { end_ns } = self.warmup {
            if start >= end_ns {
                self.steady.add(snapshot);
            }
        }
        if self.warmup == Warmup::Running {
            self.watch_warmup(snapshot);
        }
        let complete = self.complete_bins() as u64;
        while self.first_open < complete || self.open.len() > MAX_OPEN_BINS {
            self.complete_oldest();
        }
    }

    /// While warming up: whether `snapshot` ends the warm-up.
    fn watch_warmup(&mut self, snapshot: &Snapshot) {
        let workers = self.worker_at_ns.len().max(1);
        if let SnapshotKind::Final {
            full_pass: true, ..
        } = snapshot.kind
        {
            self.full_passes += 1;
        }
        let over = match self.settings.setup.pattern {
            // A looping read's first pass is over once it moved the file's bytes; a chained
            // (pass by pass) one says so with its final snapshots.
            Pattern::Sequential => {
                self.full_passes >= workers
                    || self
                        .meta
                        .as_ref()
                        .is_some_and(|m| m.total > 0 && self.agg.bytes >= m.total)
            }
            Pattern::Random => self.agg.last_at_ns as f64 / 1e9 >= WARMUP_SECONDS,
        };
        if over {
            self.end_warmup(self.agg.last_at_ns);
        }
    }

    /// Ends the warm-up at `end_ns`: later snapshots count.
    fn end_warmup(&mut self, end_ns: u64) {
        self.warmup = Warmup::Over { end_ns };
        self.steady = Aggregate::without_series(self.worker_at_ns.len());
    }

    /// The open bin `bin` (opened, with the ones before it, when new); a bin already completed
    /// gives the oldest open one.
    fn open_bin(&mut self, bin: u64) -> &mut OpenBin {
        let i = bin.saturating_sub(self.first_open) as usize;
        if self.open.len() <= i {
            self.open.resize_with(i + 1, OpenBin::default);
        }
        &mut self.open[i]
    }

    /// Spreads the snapshot's bytes over the 100 ms bins its interval covers (as the batch
    /// series does) and adds its latencies to the bin that holds its middle. [`Segment::add`]
    /// then completes the bins every worker has reported past.
    fn add_to_bins(&mut self, s: &Snapshot) {
        let start = s.at_ns.saturating_sub(s.interval_ns);
        let end = s.at_ns.max(start + 1);
        if s.bytes > 0 {
            let (first, last) = (start / SERIES_BIN_NS, (end - 1) / SERIES_BIN_NS);
            let span = (end - start) as u128;
            let mut given = 0u64;
            for bin in first..=last {
                let lo = start.max(bin * SERIES_BIN_NS);
                let hi = end.min((bin + 1) * SERIES_BIN_NS);
                let share = if bin == last {
                    s.bytes - given
                } else {
                    (s.bytes as u128 * (hi - lo) as u128 / span) as u64
                };
                self.open_bin(bin).bytes += share;
                given += share;
            }
        }
        if s.ops > 0 {
            let mid = (start + end) / 2 / SERIES_BIN_NS;
            let b = self.open_bin(mid);
            match &mut b.latency {
                // Same bounds everywhere, so adding cannot fail.
                Some(h) => {
                    let _ = h.add(&s.latency);
                }
                None => b.latency = Some(s.latency.clone()),
            }
        }
    }

    /// Completes the oldest open bin: into the running figures, the row's series and (for the
    /// live segment) the chart.
    fn complete_oldest(&mut self) {
        let bin = self.open.pop_front().unwrap_or_default();
        let index = self.first_open;
        self.first_open += 1;
        let mib_s = mib_s_of(bin.bytes);
        self.all_bins.add(mib_s);
        if let Warmup::Over { end_ns } = self.warmup {
            if index >= end_ns.div_ceil(SERIES_BIN_NS) {
                self.steady_bins.add(mib_s);
            }
        }
        let (p50_us, p99_us) = quantiles_us(bin.latency.as_ref());
        let point = Point {
            mib_s,
            p50_us,
            p99_us,
        };
        self.series.push(point);
        self.peak_mib_s = self.figures(false).peak_mib_s;
        if self.feeds_chart {
            self.ready.push_back(ReadyBin {
                point,
                latency: bin.latency,
            });
        }
    }

    /// The completed bins the chart has not taken yet, oldest first.
    pub fn take_ready(&mut self) -> VecDeque<ReadyBin> {
        std::mem::take(&mut self.ready)
    }

    /// Bytes the segment holds beyond its fixed fields, for the memory tests: open bins and
    /// their histograms, bins not taken, its series.
    pub fn heap_bytes(&self) -> usize {
        let hist =
            |h: &Option<Histogram<u64>>| h.as_ref().map_or(0, super::history::histogram_bytes);
        self.open.capacity() * std::mem::size_of::<OpenBin>()
            + self.open.iter().map(|b| hist(&b.latency)).sum::<usize>()
            + self.ready.iter().map(|b| hist(&b.latency)).sum::<usize>()
            + self.series.heap_bytes()
    }

    /// Whether the warm-up ended and the steady part has operations.
    pub fn has_steady(&self) -> bool {
        matches!(self.warmup, Warmup::Over { .. }) && self.steady.ops > 0
    }

    /// Complete 100 ms bins so far: those every worker has reported past.
    pub fn complete_bins(&self) -> usize {
        let at = self.worker_at_ns.iter().copied().min().unwrap_or(0);
        (at / SERIES_BIN_NS) as usize
    }

    /// The figures over the complete bins after the warm-up (all of them while warming or
    /// without one); with `ended`, the bins an ended run is known to have completed too.
    pub fn figures(&self, ended: bool) -> Figures {
        let steady = matches!(self.warmup, Warmup::Over { .. }) && self.steady.ops > 0;
        let mut r = if steady {
            self.steady_bins
        } else {
            self.all_bins
        };
        if ended {
            let complete = self.agg.last_at_ns / SERIES_BIN_NS;
            let first = match self.warmup {
                Warmup::Over { end_ns } if steady => end_ns.div_ceil(SERIES_BIN_NS),
                _ => 0,
            };
            for (i, b) in self.open.iter().enumerate() {
                let index = self.first_open + i as u64;
                if index < complete && index >= first {
                    r.add(mib_s_of(b.bytes));
                }
            }
        }
        r.figures()
    }

    /// The mean the panel shows: over the complete bins after the warm-up, or the running
    /// totals before the first bin.
    pub fn shown_mean_mib_s(&self) -> f64 {
        let f = self.figures(false);
        if f.bins > 0 {
            f.mean_mib_s
        } else {
            self.mean_mib_s()
        }
    }

    /// Seconds left out as warm-up (None without one).
    pub fn warmup_seconds(&self) -> Option<f64> {
        match self.warmup {
            Warmup::None => None,
            Warmup::Running => Some(self.seconds()),
            Warmup::Over { end_ns } => Some(end_ns as f64 / 1e9),
        }
    }

    /// The row's extras (warm-up, spread) as the segment stands.
    pub fn extra(&self, ended: bool) -> RowExtra {
        RowExtra {
            warmup_s: self.warmup_seconds(),
            warmup_over: self.has_steady(),
            spread_pct: self.figures(ended).spread_pct,
            series: None,
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

    /// Operations per second so far (after the warm-up, once it is over).
    pub fn iops(&self) -> f64 {
        let (ops, s) = match self.warmup {
            Warmup::Over { end_ns } if self.steady.ops > 0 => (
                self.steady.ops,
                self.agg.last_at_ns.saturating_sub(end_ns) as f64 / 1e9,
            ),
            _ => (self.agg.ops, self.seconds()),
        };
        if s > 0.0 {
            ops as f64 / s
        } else {
            0.0
        }
    }

    /// The segment as a results row, as if it ended now after `seconds`: after its warm-up
    /// when that ended (the row's time then counts from the warm-up's end; its XOR and the
    /// residency before are the whole segment's).
    pub fn result(&self, experiment: &str, seconds: f64) -> Option<RunResult> {
        let meta = self.meta.as_ref()?;
        let elapsed = std::time::Duration::from_secs_f64(seconds.max(0.0));
        let mut whole = make_result(meta, experiment, &self.agg, elapsed);
        // Live (not every worker ended): the backlog as of now, not the ended workers' alone.
        let live_backlog = self.backlog_now().filter(|_| !self.agg.all_finished());
        if let Some(b) = live_backlog.filter(|_| whole.setup.rate().is_some()) {
            if let Some(o) = &mut whole.open_loop {
                o.backlog_ops = b;
            }
        }
        match self.warmup {
            Warmup::Over { end_ns } if self.steady.ops > 0 => {
                let after = (seconds - end_ns as f64 / 1e9).max(1e-9);
                let mut r = make_result(
                    meta,
                    experiment,
                    &self.steady,
                    std::time::Duration::from_secs_f64(after),
                );
                r.figures.xor = whole.figures.xor;
                if let (Some(o), Some(w)) = (&mut r.open_loop, &whole.open_loop) {
                    o.backlog_ops = w.backlog_ops;
                }
                if r.figures.error.is_empty() {
                    r.figures.error = whole.figures.error;
                }
                Some(r)
            }
            _ => Some(whole),
        }
    }
}

impl Warmup {
    /// A read with the cache as is, through the page cache, warms up; nothing else does.
    pub fn of(s: &Settings) -> Self {
        if s.setup.op == Op::Read && !s.cold() && !s.setup.direct {
            Warmup::Running
        } else {
            Warmup::None
        }
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
