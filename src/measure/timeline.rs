//! A run as a timeline: per interval (1 s for the command lines and batch, 100 ms in the
//! explorer) the bytes, operations, rates and latency percentiles, and on the same clock what the
//! device under the file and the CPUs did; per run, the bytes the device moved against the bytes
//! the run moved, read in plain words, a level shift if the throughput moved and stayed, and when
//! the run became steady.
//!
//! The interval figures come from the same snapshots as the run's totals: each snapshot's
//! histogram is added (HDR add, exact) into the interval that holds the snapshot's middle, so the
//! intervals' histograms add up to the run's, and a percentile is always read from a merged
//! histogram, never averaged. Workers cut their snapshots on one grid (every 100 ms from the
//! run's origin, see `worker.rs`), so an interval boundary splits no snapshot except for the one
//! operation per worker that was running across it.
//!
//! The device counters ([`super::device`]) are sampled by the thread that collects the snapshots
//! (the runner's [`TimelineBuilder::sample_due`]), once per interval boundary, never by a worker.

use super::burst::{Burst, BurstBins};
use super::device::{cpu_delta, disk_delta, CpuDelta, DeviceDelta, Sample, Sampler};
use super::histogram::new_latency_histogram;
use super::histogram::LatencySummary;
use super::kernel::{KernelSection, KernelTrack};
use super::snapshot::Snapshot;
use crate::config::Op;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The interval of `run`, `run2` and batch timelines.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);
/// The interval of the explorer's timeline.
pub const EXPLORER_INTERVAL: Duration = Duration::from_millis(100);

/// Environment variable that turns the timeline off (any value but `0`): no device or CPU
/// samples, no per-interval histograms, and the collecting thread wakes only for snapshots. For
/// measuring what the timeline costs (`bench/timeline-overhead.sh`); runs then have an empty
/// timeline.
pub const NO_TIMELINE_ENV: &str = "DISKSCOPE_NO_TIMELINE";

/// A throughput change counts as a level shift beyond this factor (30%).
pub const LEVEL_SHIFT_FACTOR: f64 = 1.3;
/// Steady state: every interval in the window within this share of the window's mean (fio's
/// `ss=bw:10%`).
pub const STEADY_RANGE: f64 = 0.10;
/// Steady state window, at least (fio's `ss_dur`); never fewer than 3 intervals.
pub const STEADY_WINDOW: Duration = Duration::from_secs(5);

/// Shortest and longest timeline interval: the workers' snapshots (every 100 ms) are the finest
/// grain there is.
pub const INTERVAL_RANGE: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_secs(3600));

/// Parses an interval (`1s`, `200ms`, `0.5` seconds) for `flag`, between 100 ms and 1 h, rounded
/// to a multiple of the workers' 100 ms snapshots (so no snapshot straddles two intervals).
pub fn parse_interval(text: &str, flag: &str) -> anyhow::Result<Duration> {
    let t = text.trim();
    let (num, scale) = if let Some(ms) = t.strip_suffix("ms") {
        (ms, 1e-3)
    } else {
        (t.strip_suffix('s').unwrap_or(t), 1.0)
    };
    let secs = num.trim().parse::<f64>().ok().map(|v| v * scale);
    let (lo, hi) = INTERVAL_RANGE;
    match secs {
        Some(s) if s >= lo.as_secs_f64() && s <= hi.as_secs_f64() => {
            let grain = super::worker::SNAPSHOT_INTERVAL.as_secs_f64();
            Ok(Duration::from_secs_f64((s / grain).round() * grain))
        }
        _ => Err(crate::config::usage(format!(
            "{flag}: {:?} is not an interval from 100ms to 3600s; write it as 1s, 200ms or 0.5",
            crate::text::shown(text)
        ))),
    }
}

/// One interval of a run. Columns are named like the results CSV's; the device and CPU columns
/// are empty (`None`, NaN) where there is no device (tmpfs, overlay, network) or no sample.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IntervalRow {
    /// Start and end of the interval, seconds since the run's origin.
    pub t_start_s: f64,
    pub t_end_s: f64,
    pub bytes: u64,
    pub ops: u64,
    pub mib_s: f64,
    pub iops: f64,
    pub lat_p50_us: f64,
    pub lat_p90_us: f64,
    pub lat_p99_us: f64,
    pub lat_p999_us: f64,
    pub lat_max_us: f64,
    pub dev_read_ops: Option<u64>,
    pub dev_read_bytes: Option<u64>,
    pub dev_read_merges: Option<u64>,
    pub dev_write_ops: Option<u64>,
    pub dev_write_bytes: Option<u64>,
    pub dev_write_merges: Option<u64>,
    pub dev_avg_req_bytes: f64,
    pub dev_in_flight: Option<u64>,
    pub dev_await_ms: f64,
    pub dev_util_pct: f64,
    pub cpu_usr_pct: f64,
    pub cpu_sys_pct: f64,
    pub cpu_iowait_pct: f64,
    /// Open-loop runs (`--rate`) only: the interval's response-time percentiles (intended
    /// start → completion; the `lat_*` columns are then service times). Not a serde field: the
    /// timeline CSV adds `resp_p50_us`, `resp_p99_us`, `resp_p999_us` columns when some run is
    /// open loop (`export::timeline`), so a closed-loop timeline keeps its header.
    #[serde(skip)]
    pub resp: Option<LatencySummary>,
    /// Runs with the kernel view (`--kernel`): the block layer's figures over the interval
    /// (`crate::kernel`). Not a serde field, as `resp`: the timeline CSV adds its `kernel_*`
    /// columns when some run has the view (`export::timeline`).
    #[serde(skip)]
    pub kernel: Option<crate::kernel::Summary>,
}

impl IntervalRow {
    /// A row with nothing measured and no device or CPU figures.
    pub fn blank() -> IntervalRow {
        IntervalRow {
            dev_avg_req_bytes: f64::NAN,
            dev_await_ms: f64::NAN,
            dev_util_pct: f64::NAN,
            cpu_usr_pct: f64::NAN,
            cpu_sys_pct: f64::NAN,
            cpu_iowait_pct: f64::NAN,
            ..Default::default()
        }
    }

    fn set_device(&mut self, d: Option<DeviceDelta>) {
        let Some(d) = d else { return };
        self.dev_read_ops = Some(d.dev_read_ops);
        self.dev_read_bytes = Some(d.dev_read_bytes);
        self.dev_read_merges = Some(d.dev_read_merges);
        self.dev_write_ops = Some(d.dev_write_ops);
        self.dev_write_bytes = Some(d.dev_write_bytes);
        self.dev_write_merges = Some(d.dev_write_merges);
        self.dev_avg_req_bytes = d.dev_avg_req_bytes;
        self.dev_in_flight = Some(d.dev_in_flight);
        self.dev_await_ms = d.dev_await_ms;
        self.dev_util_pct = d.dev_util_pct;
    }

    fn set_cpu(&mut self, c: Option<CpuDelta>) {
        let Some(c) = c else { return };
        self.cpu_usr_pct = c.cpu_usr_pct;
        self.cpu_sys_pct = c.cpu_sys_pct;
        self.cpu_iowait_pct = c.cpu_iowait_pct;
    }
}

/// The bytes the device moved against the bytes the run moved, in the run's direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BytesRatio {
    /// The device's kernel name.
    pub device: String,
    pub file_bytes: u64,
    pub device_bytes: u64,
    /// `device_bytes / file_bytes`.
    pub ratio: f64,
    /// What the ratio means: "served from the page cache", "every byte went to the device".
    pub meaning: String,
}

/// A throughput that moved by more than [`LEVEL_SHIFT_FACTOR`] and stayed there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelShift {
    /// When it happened: the start of the first interval at the new level, seconds.
    pub at_s: f64,
    /// Median throughput before and after, MiB/s.
    pub before_mib_s: f64,
    pub after_mib_s: f64,
}

/// When a run became steady (fio's `ss=bw:10%` over a window of `window_s`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    /// Start of the first steady window, seconds; `None`: never steady.
    pub after_s: Option<f64>,
    pub window_s: f64,
    /// The run's length the judgement covered, seconds.
    pub span_s: f64,
}

/// What a timeline says, per run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// `None` without a device (tmpfs, overlay, network) or bytes.
    pub bytes_ratio: Option<BytesRatio>,
    pub level_shift: Option<LevelShift>,
    pub steady: Steady,
    /// Open-loop runs of at least a second: the worst burst of response times and the p99
    /// without it (`measure::burst`); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<Burst>,
}

/// A finished run's timeline.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    pub interval_s: f64,
    /// The device sampled (its kernel name); `None`: no device under the file.
    pub device: Option<String>,
    pub rows: Vec<IntervalRow>,
    /// Each row's merged latency histogram (ns), for merging timelines exactly.
    #[serde(skip)]
    pub latency: Vec<Histogram<u64>>,
    pub reading: Reading,
    /// The kernel view of the run (`--kernel`): its filter, the run's figures, or why it is
    /// absent; `None` when it was not asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelSection>,
}

/// Equal when every figure is (an unknown one, NaN, equals an unknown one) and so is every
/// interval's histogram.
impl PartialEq for Timeline {
    fn eq(&self, other: &Timeline) -> bool {
        self.latency == other.latency
            && serde_json::to_string(self).ok() == serde_json::to_string(other).ok()
    }
}

/// One interval being filled.
#[derive(Debug, Clone)]
struct Bin {
    bytes: u64,
    ops: u64,
    latency: Histogram<u64>,
    /// Open-loop runs: the response times, ns.
    response: Option<Histogram<u64>>,
}

/// Builds a [`Timeline`] from a run's snapshots and counter samples as they come.
#[derive(Debug, Clone)]
pub struct TimelineBuilder {
    interval_ns: u64,
    bins: Vec<Bin>,
    sampler: Sampler,
    /// Samples taken at interval boundaries: (index k of the boundary k × interval, sample).
    samples: Vec<(u64, Sample)>,
    /// False with [`NO_TIMELINE_ENV`]: nothing is kept or sampled.
    enabled: bool,
    /// Open-loop runs: the response times in 100 ms bins, for the worst burst.
    burst: BurstBins,
    /// The kernel view's reads, taken with the device's samples (`--kernel`).
    kernel: Option<KernelTrack>,
}

impl TimelineBuilder {
    /// A builder of `interval` (at least 1 ms) that samples with `sampler`; takes the first
    /// sample now, as time 0 of the run.
    pub fn new(interval: Duration, sampler: Sampler) -> TimelineBuilder {
        let first = sampler.sample(0);
        TimelineBuilder {
            interval_ns: (interval.as_nanos() as u64).max(1_000_000),
            bins: Vec::new(),
            sampler,
            samples: vec![(0, first)],
            enabled: true,
            burst: BurstBins::default(),
            kernel: None,
        }
    }

    /// [`TimelineBuilder::new`], or one that keeps nothing when [`NO_TIMELINE_ENV`] is set.
    pub fn from_env(interval: Duration, sampler: Sampler) -> TimelineBuilder {
        if std::env::var_os(NO_TIMELINE_ENV).is_none_or(|v| v == "0") {
            return TimelineBuilder::new(interval, sampler);
        }
        let sampler = Sampler { device: None };
        TimelineBuilder {
            samples: vec![(0, sampler.sample(0))],
            enabled: false,
            ..TimelineBuilder::new(interval, sampler)
        }
    }

    /// Keeps nothing from now on (as with [`NO_TIMELINE_ENV`]): no intervals, no device samples.
    /// For a run that is stopped only when told (the explorer's), whose timeline would grow by
    /// an interval's histogram (~32 KB) every interval for as long as it runs.
    pub fn disable(&mut self) {
        self.enabled = false;
        self.bins = Vec::new();
        self.samples.truncate(1);
        self.sampler = Sampler { device: None };
    }

    /// Changes the interval; only before the first snapshot (later calls are ignored).
    pub fn set_interval(&mut self, interval: Duration) {
        if self.bins.is_empty() && self.samples.len() == 1 {
            self.interval_ns = (interval.as_nanos() as u64).max(1_000_000);
        }
    }

    /// Reads `track`'s view at every sample from now on (its first read was its start).
    pub fn set_kernel(&mut self, track: KernelTrack) {
        self.kernel = Some(track);
    }

    /// The kernel view's track, for reads between the samples (the explorer's panel:
    /// [`KernelTrack::read_live`]).
    pub fn kernel_mut(&mut self) -> Option<&mut KernelTrack> {
        self.kernel.as_mut()
    }

    pub fn interval(&self) -> Duration {
        Duration::from_nanos(self.interval_ns)
    }

    /// Adds one snapshot into the interval that holds its middle.
    pub fn add(&mut self, s: &Snapshot) {
        if !self.enabled {
            return;
        }
        let mid = s.at_ns.saturating_sub(s.interval_ns / 2);
        let i = (mid / self.interval_ns) as usize;
        while self.bins.len() <= i {
            self.bins.push(Bin {
                bytes: 0,
                ops: 0,
                latency: new_latency_histogram(),
                response: None,
            });
        }
        let b = &mut self.bins[i];
        b.bytes += s.bytes;
        b.ops += s.ops;
        // Same bounds everywhere, so adding cannot fail.
        let _ = b.latency.add(&s.latency);
        if let Some(p) = &s.paced {
            let _ = b
                .response
                .get_or_insert_with(new_latency_histogram)
                .add(&p.response);
            self.burst.add(mid, &p.response);
        }
    }

    /// When the next sample is due, ns since the run's origin.
    pub fn next_sample_ns(&self) -> u64 {
        if !self.enabled {
            return u64::MAX;
        }
        let last = self.samples.last().map_or(0, |(k, _)| *k);
        (last + 1) * self.interval_ns
    }

    /// Takes a sample if a boundary passed since the last one (`now_ns` on the run's clock).
    pub fn sample_due(&mut self, now_ns: u64) {
        if now_ns >= self.next_sample_ns() {
            let k = now_ns / self.interval_ns;
            self.samples.push((k, self.sampler.sample(now_ns)));
            if let Some(t) = self.kernel.as_mut() {
                t.sample(k);
            }
        }
    }

    /// The timeline of a run that ended at `end_ns` (the last sample is taken now), moving
    /// `file_bytes` in direction `op`, with O_DIRECT when `direct`.
    pub fn finish(mut self, end_ns: u64, op: Op, direct: bool, file_bytes: u64) -> Timeline {
        // The kernel view's last read, beside the device's last sample.
        let kernel = self.kernel.as_mut().map(KernelTrack::finish);
        if !self.enabled {
            return Timeline {
                interval_s: self.interval_ns as f64 / 1e9,
                device: None,
                rows: Vec::new(),
                latency: Vec::new(),
                reading: Reading {
                    bytes_ratio: None,
                    level_shift: None,
                    steady: steady_state(&[], 1.0),
                    burst: None,
                },
                kernel,
            };
        }
        let last_bin_end = self.bins.len() as u64 * self.interval_ns;
        let end_ns = end_ns.max(last_bin_end.saturating_sub(self.interval_ns) + 1);
        let end_sample = self.sampler.sample(end_ns);
        let n = end_ns.div_ceil(self.interval_ns) as usize;
        self.bins.resize(
            n.max(self.bins.len()),
            Bin {
                bytes: 0,
                ops: 0,
                latency: new_latency_histogram(),
                response: None,
            },
        );
        // A last interval shorter than half of one (the workers' final snapshots, the join) joins
        // the one before, so no row has a rate over a few milliseconds.
        let n = self.bins.len();
        if n >= 2 && end_ns - (n as u64 - 1) * self.interval_ns < self.interval_ns / 2 {
            let last = self.bins.pop().expect("two bins");
            let b = self.bins.last_mut().expect("one bin");
            b.bytes += last.bytes;
            b.ops += last.ops;
            let _ = b.latency.add(&last.latency);
            if let Some(r) = &last.response {
                let _ = b.response.get_or_insert_with(new_latency_histogram).add(r);
            }
        }
        let last = self.bins.len() - 1;
        let sample_at = |k: u64| {
            if k as usize > last {
                return Some(end_sample);
            }
            self.samples.iter().find(|(i, _)| *i == k).map(|(_, s)| *s)
        };
        let mut rows = Vec::with_capacity(self.bins.len());
        for (i, b) in self.bins.iter().enumerate() {
            let t0 = i as u64 * self.interval_ns;
            let t1 = if i == last {
                end_ns.max(t0 + 1)
            } else {
                (i as u64 + 1) * self.interval_ns
            };
            let secs = (t1 - t0) as f64 / 1e9;
            let l = LatencySummary::of(&b.latency);
            let mut row = IntervalRow {
                t_start_s: t0 as f64 / 1e9,
                t_end_s: t1 as f64 / 1e9,
                bytes: b.bytes,
                ops: b.ops,
                mib_s: b.bytes as f64 / (1024.0 * 1024.0) / secs,
                iops: b.ops as f64 / secs,
                lat_p50_us: l.p50_us,
                lat_p90_us: l.p90_us,
                lat_p99_us: l.p99_us,
                lat_p999_us: l.p999_us,
                lat_max_us: l.max_us,
                resp: b.response.as_ref().map(LatencySummary::of),
                ..IntervalRow::blank()
            };
            if let (Some(a), Some(z)) = (sample_at(i as u64), sample_at(i as u64 + 1)) {
                row.set_device(disk_delta(&a, &z));
                row.set_cpu(cpu_delta(&a, &z));
            }
            row.kernel = self
                .kernel
                .as_ref()
                .and_then(|t| t.row(i as u64, last as u64 + 1));
            rows.push(row);
        }
        let total = disk_delta(&self.samples[0].1, &end_sample);
        let device = self.sampler.device.as_ref().map(|d| d.name.clone());
        let bytes_ratio = match (&device, total) {
            (Some(name), Some(t)) if file_bytes > 0 => {
                let device_bytes = if op == Op::Write {
                    t.dev_write_bytes
                } else {
                    t.dev_read_bytes
                };
                let ratio = device_bytes as f64 / file_bytes as f64;
                Some(BytesRatio {
                    device: name.clone(),
                    file_bytes,
                    device_bytes,
                    ratio,
                    meaning: ratio_meaning(op, direct, ratio),
                })
            }
            _ => None,
        };
        let interval_s = self.interval_ns as f64 / 1e9;
        let kernel = kernel.map(|k| {
            let mut all = new_latency_histogram();
            for b in &self.bins {
                let _ = all.add(&b.latency);
            }
            let ops = self.bins.iter().map(|b| b.ops).sum();
            k.with_run(ops, file_bytes, LatencySummary::of(&all).p50_us)
        });
        let series = full_intervals(active_rows(&rows), interval_s);
        let reading = Reading {
            bytes_ratio,
            level_shift: level_shift(&series, interval_s),
            steady: steady_state(&series, interval_s),
            burst: self.burst.worst(),
        };
        Timeline {
            interval_s,
            device,
            rows,
            latency: self.bins.into_iter().map(|b| b.latency).collect(),
            reading,
            kernel,
        }
    }
}

/// The rows in which the workers ran: all but the trailing ones with no operation, which a
/// write's final fsync spans (their figure is the device's, `dev_write_bytes`, not the run's
/// operations), so a clean write never reads as a drop to zero at its end.
pub fn active_rows(rows: &[IntervalRow]) -> &[IntervalRow] {
    let end = rows
        .iter()
        .rposition(|r| r.ops > 0 || r.bytes > 0)
        .map_or(0, |i| i + 1);
    &rows[..end]
}

/// Throughput of the intervals to judge: all but a last one shorter than half an interval.
fn full_intervals(rows: &[IntervalRow], interval_s: f64) -> Vec<f64> {
    let mut v: Vec<f64> = rows.iter().map(|r| r.mib_s).collect();
    if rows
        .last()
        .is_some_and(|r| r.t_end_s - r.t_start_s < interval_s / 2.0)
    {
        v.pop();
    }
    v
}

/// The plain-words reading of a device-to-file bytes ratio (of a run with O_DIRECT when
/// `direct`: then no page cache and no read-ahead stand between the run and the device).
pub fn ratio_meaning(op: Op, direct: bool, ratio: f64) -> String {
    if direct && ratio > 1.1 {
        return format!(
            "the device moved {ratio:.1}× what was asked: other I/O to the device (another \
             process, the filesystem's metadata) counts too"
        );
    }
    match (op, ratio) {
        (Op::Read, r) if r < 0.05 => "served from the page cache".into(),
        (Op::Read, r) if r < 0.9 => "partly served from the page cache".into(),
        (_, r) if (0.9..=1.1).contains(&r) => "every byte went to the device".into(),
        (Op::Read, r) => format!("read-ahead read {r:.1}× what was asked"),
        (Op::Write, r) if r < 0.05 => {
            "still in the page cache: not written back during the run".into()
        }
        (Op::Write, r) if r < 0.9 => "partly written back during the run".into(),
        (Op::Write, r) => format!(
            "the device wrote {r:.1}× what was asked (journal, metadata, read-modify-write)"
        ),
    }
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The lasting change of `mib_s` (one value per interval of `interval_s`): of the splits whose
/// medians before and after differ by more than [`LEVEL_SHIFT_FACTOR`], with at least 3
/// intervals on each side and at least 80% of each side's intervals on its own side of the
/// geometric middle of the two medians (so one spike or one dip is no shift), the one that fits
/// two flat levels best (least absolute deviation of the log throughput from each side's median).
pub fn level_shift(mib_s: &[f64], interval_s: f64) -> Option<LevelShift> {
    const MIN_SIDE: usize = 3;
    let n = mib_s.len();
    if n < 2 * MIN_SIDE {
        return None;
    }
    let floor = mib_s.iter().cloned().fold(0.0, f64::max) * 1e-6;
    let logs: Vec<f64> = mib_s.iter().map(|v| v.max(floor).max(1e-12).ln()).collect();
    let cost = |side: &[f64]| {
        let m = median(side);
        side.iter().map(|v| (v - m).abs()).sum::<f64>()
    };
    let mut best: Option<(f64, LevelShift)> = None;
    for k in MIN_SIDE..=n - MIN_SIDE {
        let (before, after) = (&mib_s[..k], &mib_s[k..]);
        let (mb, ma) = (median(before), median(after));
        let (lo, hi) = (mb.min(ma).max(floor), mb.max(ma));
        if hi <= 0.0 || hi / lo.max(1e-12) <= LEVEL_SHIFT_FACTOR {
            continue;
        }
        let middle = (lo * hi).sqrt();
        let share = |side: &[f64], high: bool| {
            side.iter().filter(|v| (**v > middle) == high).count() as f64 / side.len() as f64
        };
        if share(before, mb > ma) < 0.8 || share(after, ma > mb) < 0.8 {
            continue;
        }
        let c = cost(&logs[..k]) + cost(&logs[k..]);
        if best.as_ref().is_none_or(|(b, _)| c < *b) {
            let shift = LevelShift {
                at_s: k as f64 * interval_s,
                before_mib_s: mb,
                after_mib_s: ma,
            };
            best = Some((c, shift));
        }
    }
    best.map(|(_, s)| s)
}

/// fio's steady state (`ss=bw:10%`, `ss_dur`): the first window of [`STEADY_WINDOW`] (at least
/// 3 intervals) in which every interval's throughput is within [`STEADY_RANGE`] of the window's
/// mean.
pub fn steady_state(mib_s: &[f64], interval_s: f64) -> Steady {
    let w = ((STEADY_WINDOW.as_secs_f64() / interval_s).ceil() as usize).max(3);
    let span_s = mib_s.len() as f64 * interval_s;
    let after_s = (w <= mib_s.len())
        .then(|| {
            mib_s.windows(w).position(|win| {
                let mean = win.iter().sum::<f64>() / w as f64;
                mean > 0.0 && win.iter().all(|v| (v - mean).abs() <= STEADY_RANGE * mean)
            })
        })
        .flatten()
        .map(|i| i as f64 * interval_s);
    Steady {
        after_s,
        window_s: w as f64 * interval_s,
        span_s,
    }
}

impl Timeline {
    /// Reads the device's bytes ratio of a read against the bytes the run itself read from
    /// storage (`crate::facts`, its own I/O accounting): a device that moved every byte while
    /// the run read a tenth of them itself was moving another process's reads, and the line
    /// must not say "every byte went to the device" beside a verdict that says the page cache
    /// served the run.
    pub fn with_own_bytes(&mut self, op: Op, own_bytes: u64) {
        let Some(b) = self.reading.bytes_ratio.as_mut() else {
            return;
        };
        if op != Op::Read || b.file_bytes == 0 {
            return;
        }
        let own = own_bytes as f64 / b.file_bytes as f64;
        if own < 0.9 && b.ratio >= 0.9 {
            b.meaning = format!(
                "but the run itself read {own:.2}× its bytes from storage: the rest of the \
                 device's reads were another process's, and the run's bytes came from the page \
                 cache"
            );
        }
    }

    /// The per-run lines for stderr: the bytes ratio (or why there is none), a level shift,
    /// steady state.
    pub fn reading_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let r = &self.reading;
        match (&r.bytes_ratio, &self.device) {
            (Some(b), _) => out.push(format!(
                "device {}: moved {:.2}× the run's bytes ({} of {}): {}",
                b.device,
                b.ratio,
                crate::size::format_bytes_approx(b.device_bytes),
                crate::size::format_bytes_approx(b.file_bytes),
                b.meaning
            )),
            (None, None) => out.push(
                "no device: the file's filesystem has no block device under it (tmpfs, overlay, \
                 network), so there are no device counters"
                    .into(),
            ),
            (None, Some(_)) => {}
        }
        if let Some(k) = &self.kernel {
            out.extend(k.lines());
        }
        if let Some(s) = &r.level_shift {
            out.push(format!(
                "level shift at {:.1} s: throughput went from {:.1} to {:.1} MiB/s and stayed there",
                s.at_s, s.before_mib_s, s.after_mib_s
            ));
        }
        out.push(match r.steady.after_s {
            Some(t) => format!(
                "steady after {t:.1} s (throughput within ±{:.0}% of its mean over {:.1} s, fio ss=bw:{:.0}%)",
                STEADY_RANGE * 100.0,
                r.steady.window_s,
                STEADY_RANGE * 100.0
            ),
            None => format!(
                "never steady in {:.1} s (no {:.1} s window within ±{:.0}% of its mean)",
                r.steady.span_s,
                r.steady.window_s,
                STEADY_RANGE * 100.0
            ),
        });
        out
    }

    /// [`Timeline::reading_lines`] without the steady-state line of a run too short to judge
    /// (shorter than one window), which would only say so.
    pub fn reading_lines_for_stderr(&self) -> Vec<String> {
        if self.rows.is_empty() {
            // The timeline was off (or the run took no time): nothing to read.
            return Vec::new();
        }
        let mut lines = self.reading_lines();
        if self.reading.steady.span_s < self.reading.steady.window_s {
            lines.pop();
        }
        lines
    }

    /// The merged latency histogram of every interval (equal to the run's).
    pub fn total_latency(&self) -> Histogram<u64> {
        let mut h = new_latency_histogram();
        for l in &self.latency {
            let _ = h.add(l);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::SnapshotKind;

    fn snap(at_ms: u64, bytes: u64, lat_ns: &[u64]) -> Snapshot {
        let mut latency = new_latency_histogram();
        for v in lat_ns {
            latency.record(*v).unwrap();
        }
        Snapshot {
            worker: 0,
            at_ns: at_ms * 1_000_000,
            interval_ns: 100_000_000,
            bytes,
            ops: lat_ns.len() as u64,
            latency,
            ops_log: Vec::new(),
            paced: None,
            mixed: None,
            kind: SnapshotKind::Interval,
        }
    }

    fn no_device() -> Sampler {
        Sampler { device: None }
    }

    #[test]
    fn snapshots_land_in_the_interval_of_their_middle_and_add_up_to_the_run() {
        let mut b = TimelineBuilder::new(Duration::from_secs(1), no_device());
        for i in 1..=25u64 {
            b.add(&snap(i * 100, 1 << 20, &[1000 * i]));
        }
        let t = b.finish(2_500_000_000, Op::Read, false, 25 << 20);
        assert_eq!(t.rows.len(), 3);
        assert_eq!(
            t.rows.iter().map(|r| r.ops).collect::<Vec<_>>(),
            vec![10, 10, 5]
        );
        assert_eq!(t.rows.iter().map(|r| r.bytes).sum::<u64>(), 25 << 20);
        assert!((t.rows[0].mib_s - 10.0).abs() < 1e-9, "{:?}", t.rows[0]);
        assert!((t.rows[2].mib_s - 10.0).abs() < 1e-9, "{:?}", t.rows[2]);
        // The merged percentiles, not averaged ones: interval 1 holds 11..=20 µs.
        assert!((t.rows[1].lat_max_us - 20.0).abs() < 0.2, "{:?}", t.rows[1]);
        assert_eq!(t.total_latency().len(), 25);
        assert_eq!(t.device, None);
        assert_eq!(t.rows[0].dev_read_bytes, None);
        assert!(t.reading_lines()[0].starts_with("no device"));
    }

    #[test]
    fn a_drop_to_half_that_stays_is_a_level_shift_named_at_its_time() {
        let mut v = vec![100.0, 104.0, 97.0, 101.0, 99.0, 102.0, 98.0];
        v.extend([50.0, 52.0, 49.0, 51.0, 48.0, 50.0]);
        let s = level_shift(&v, 1.0).expect("a shift");
        assert_eq!(s.at_s, 7.0);
        assert!((s.before_mib_s - 100.0).abs() < 2.0 && (s.after_mib_s - 50.0).abs() < 2.0);
        // A rise is one too, at 100 ms intervals.
        let up: Vec<f64> = (0..40).map(|i| if i < 12 { 10.0 } else { 40.0 }).collect();
        assert!((level_shift(&up, 0.1).unwrap().at_s - 1.2).abs() < 1e-9);
    }

    #[test]
    fn noise_a_single_dip_and_a_small_step_are_no_level_shift() {
        let noisy: Vec<f64> = (0..30).map(|i| 100.0 + [0.0, 8.0, -7.0][i % 3]).collect();
        assert_eq!(level_shift(&noisy, 1.0), None);
        let mut dip = vec![100.0; 20];
        dip[10] = 10.0;
        dip[11] = 12.0;
        assert_eq!(level_shift(&dip, 1.0), None);
        let small: Vec<f64> = (0..20).map(|i| if i < 10 { 100.0 } else { 80.0 }).collect();
        assert_eq!(level_shift(&small, 1.0), None);
    }

    #[test]
    fn steady_state_is_the_first_window_within_ten_percent_or_never() {
        let mut v = vec![10.0, 40.0, 80.0, 95.0];
        v.extend([100.0, 103.0, 98.0, 101.0, 99.0, 100.0]);
        let s = steady_state(&v, 1.0);
        assert_eq!((s.after_s, s.window_s), (Some(3.0), 5.0));
        let ramp: Vec<f64> = (1..=10).map(|i| i as f64 * 10.0).collect();
        let never = steady_state(&ramp, 1.0);
        assert_eq!((never.after_s, never.span_s), (None, 10.0));
        assert!(steady_state(&[1.0, 1.0], 1.0).after_s.is_none());
    }

    #[test]
    fn a_last_interval_shorter_than_half_of_one_joins_the_one_before() {
        let mut b = TimelineBuilder::new(Duration::from_secs(1), no_device());
        for i in 1..=20u64 {
            b.add(&snap(i * 100, 1 << 20, &[1000]));
        }
        b.add(&snap(2_030, 1 << 20, &[5000]));
        let t = b.finish(2_040_000_000, Op::Read, false, 21 << 20);
        assert_eq!(t.rows.len(), 2);
        assert_eq!((t.rows[1].ops, t.rows[1].t_end_s), (11, 2.04));
        assert!((t.rows[1].lat_max_us - 5.0).abs() < 0.1);
    }

    #[test]
    fn intervals_are_read_in_seconds_or_milliseconds_and_out_of_range_ones_refused() {
        assert_eq!(
            parse_interval("1s", "--interval").unwrap(),
            Duration::from_secs(1)
        );
        assert_eq!(
            parse_interval("200ms", "--interval").unwrap(),
            Duration::from_millis(200)
        );
        assert_eq!(
            parse_interval("0.33", "--interval").unwrap(),
            Duration::from_millis(300)
        );
        assert_eq!(
            parse_interval("0.5", "--interval").unwrap(),
            Duration::from_millis(500)
        );
        for bad in ["0", "50ms", "2h", "fast", "-1s"] {
            let e = parse_interval(bad, "--interval").unwrap_err().to_string();
            assert!(e.starts_with("--interval: "), "{e}");
        }
    }

    #[test]
    fn the_ratio_is_read_in_words() {
        assert_eq!(
            ratio_meaning(Op::Read, false, 0.02),
            "served from the page cache"
        );
        assert_eq!(
            ratio_meaning(Op::Read, false, 1.0),
            "every byte went to the device"
        );
        assert_eq!(
            ratio_meaning(Op::Read, false, 2.0),
            "read-ahead read 2.0× what was asked"
        );
        assert!(ratio_meaning(Op::Write, false, 0.0).starts_with("still in the page cache"));
        assert!(ratio_meaning(Op::Read, true, 1.4).contains("other I/O"));
    }
}
