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

use super::settings::Settings;
use crate::config::{Op, Pattern};
use crate::measure::aggregate::SERIES_BIN_NS;
use crate::measure::{Aggregate, RunResult, Snapshot, SnapshotKind};
use crate::runner::{make_result, PreparedMeta};

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
    let per_s = 1e9 / SERIES_BIN_NS as f64 / (1024.0 * 1024.0);
    let v: Vec<f64> = bins.iter().map(|b| *b as f64 * per_s).collect();
    if v.is_empty() {
        return Figures::default();
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let peak = v.iter().copied().fold(0.0f64, f64::max);
    let spread_pct = (v.len() >= 2 && mean > 0.0).then(|| {
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        var.sqrt() / mean * 100.0
    });
    Figures {
        mean_mib_s: mean,
        peak_mib_s: peak,
        spread_pct,
        bins: v.len(),
    }
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
}

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
    /// Complete bins already copied into the sparkline history.
    pub(super) bins_seen: usize,
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
            warmup: Warmup::of(&settings),
            steady: Aggregate::new(0),
            full_passes: 0,
            backlog_by_worker: Vec::new(),
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
        if self.warmup != Warmup::Running {
            return;
        }
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
        self.steady = Aggregate::new(self.worker_at_ns.len());
    }

    /// Whether the warm-up ended and the steady part has operations.
    pub fn has_steady(&self) -> bool {
        matches!(self.warmup, Warmup::Over { .. }) && self.steady.ops > 0
    }

    /// Complete 100 ms bins so far: those every worker has reported past.
    pub fn complete_bins(&self) -> usize {
        let at = self.worker_at_ns.iter().copied().min().unwrap_or(0);
        ((at / SERIES_BIN_NS) as usize).min(self.agg.series_bytes.len())
    }

    /// The figures over the complete bins after the warm-up (all of them while warming or
    /// without one), with the bins a run `ended` is known to have completed.
    pub fn figures(&self, ended: bool) -> Figures {
        let complete = if ended {
            ((self.agg.last_at_ns / SERIES_BIN_NS) as usize).min(self.agg.series_bytes.len())
        } else {
            self.complete_bins()
        };
        let first = match self.warmup {
            Warmup::Over { end_ns } if self.steady.ops > 0 => {
                end_ns.div_ceil(SERIES_BIN_NS) as usize
            }
            _ => 0,
        };
        figures_of(&self.agg.series_bytes[first.min(complete)..complete])
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
