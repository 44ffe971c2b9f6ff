//! The empirical roofline: which measured ceiling bounds a point, what it predicts, and how close
//! the measurement came (after "An Empirical Roofline Model for Extreme-Scale I/O Workload
//! Analysis", IPDPSW 2023, applied to one machine and one file).
//!
//! A roofline takes `min(ops/s ceiling × block size, memory ceiling, device ceiling)`. One thread
//! doing synchronous reads pays those costs one after the other, not side by side: each call
//! costs its fixed overhead *and then* copies its bytes. So where the work is serial the model adds
//! times (per operation: `1 / ops_per_s + bytes / copy_xor_bw(bytes)`), which is the
//! roofline with its corner rounded; it equals the `min` far from the corner and is up to 2×
//! lower at it, where a plain `min` would call every measurement "50% of bound". Where costs
//! overlap (several threads, requests in flight on the device) the slowest stage sets the pace,
//! as in the plain roofline. The bound named is the term that takes the most time.
//!
//! The device is modelled as `t(bytes) = latency + bytes / bandwidth` per request, fitted through
//! the two measured points (random 4 KiB and sequential 1 MiB, O_DIRECT) at queue depth 1 and at
//! 32, interpolated on a log scale in between.
//!
//! Writes are not modelled (the profile measures reads only): [`predict`] returns None for them.
//!
//! A prediction carries the profile's error (the spread of the tries behind the ceilings it
//! used). A measurement above its bound by no more than that error is within the profile's
//! error and said so (`104%, within the profile's ±10%`); one above by more is not explained by
//! the profile (measured on another file, under load, or the machine changed since), and the
//! line says that with the way out ([`NOT_EXPLAINED`]) instead of a percentage over 100. A
//! profile stored before its spread was kept has an unknown error: any share over 100% is then
//! not explained, and the line says the error is unknown.
//!
//! Threads run at once on at most the cores of the machine: the fewer of the profile's CPU count
//! and the cores this process has now ([`Profile::cores_now`]).
//!
//! A point carries the memory of its buffers ([`Point::buffers`]) and is bounded only by
//! ceilings measured with the same memory (`profile::same_memory`): the copy from the page
//! cache into 4 KiB pages and into 2 MiB pages, or an O_DIRECT request into either, differ by
//! up to 3× on the lab VM. Where the profile has no ceiling for it, [`predict`] makes no
//! prediction and [`missing_ceiling`] says which memory is missing and which the profile has.

use super::profile::{memory_words, resolved, Profile};
use crate::config::spec::RunSpec;
use crate::config::{Buffers, CacheMode, Op, Pattern, Setup};
use crate::measure::RunResult;
use crate::size::format_size;
use serde::{Deserialize, Serialize};
use std::fmt;

const MIB: f64 = 1024.0 * 1024.0;

/// Below this share of its bound a point is flagged with what to look at.
pub const LOW_PCT: f64 = 50.0;

/// What a run above its bound by more than the profile's error is told.
pub const NOT_EXPLAINED: &str =
    "the profile does not explain this run: `diskscope limits --refresh`";

/// What limits a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Bound {
    /// The fixed cost of each system call (or page fault) dominates.
    #[serde(rename = "syscall-bound")]
    Syscall,
    /// Copying and XORing the bytes in memory dominates.
    #[serde(rename = "memory-bound")]
    Memory,
    /// The device's transfer rate dominates.
    #[serde(rename = "device-bound (bandwidth)")]
    DeviceBandwidth,
    /// The device's per-request latency dominates.
    #[serde(rename = "device-bound (IOPS)")]
    DeviceIops,
    /// Readahead from the device into the page cache dominates.
    #[serde(rename = "device-bound (readahead)")]
    Readahead,
}

impl Bound {
    /// The family of ceilings that sets this bound.
    pub fn family(self) -> super::profile::Family {
        use super::profile::Family;
        match self {
            Bound::Syscall => Family::Methods,
            Bound::Memory => Family::Memory,
            Bound::DeviceBandwidth | Bound::DeviceIops => Family::Device,
            Bound::Readahead => Family::Readahead,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Syscall => "syscall-bound",
            Bound::Memory => "memory-bound",
            Bound::DeviceBandwidth => "device-bound (bandwidth)",
            Bound::DeviceIops => "device-bound (IOPS)",
            Bound::Readahead => "device-bound (readahead)",
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The settings of a point that the model looks at: its setup (queue depth as run, the
/// buffers' memory resolved as a run resolves `auto`) and whether its data was cold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub setup: Setup,
    /// The data is not in the page cache (cold) when read.
    pub cold: bool,
}

impl Point {
    /// The point of a spec (cold when the spec asks for cold or cold-all).
    pub fn of_spec(spec: &RunSpec) -> Point {
        let s = &spec.setup;
        Point {
            setup: Setup {
                queue_depth: crate::engine::caps(s.method).queue_depth(s.queue_depth),
                buffers: resolved(s.buffers, s.direct),
                ..*s
            },
            cold: matches!(s.cache, CacheMode::Cold | CacheMode::ColdAll),
        }
    }

    /// The point of a measured result: warm or cold as asked; with `as-is`, cold when less than
    /// half the file was cached before. (A warm run over part of a file has a low residency
    /// of the whole file, so residency alone would call it cold.)
    ///
    /// `None` for a run that did not XOR its data (`--checksum none`): every memory ceiling of
    /// the profile includes the XOR, so it would bound such a run too low and call its figure
    /// faster than the machine goes. `None` too for a command's program or a locality layout,
    /// which are not methods the model knows.
    pub fn of_result(r: &RunResult) -> Option<Point> {
        let s = &r.setup;
        if s.checksum == Some(crate::config::Checksum::None) {
            return None;
        }
        let cold = match s.cache.known() {
            Some(CacheMode::Warm) => false,
            Some(CacheMode::Cold | CacheMode::ColdAll) => true,
            Some(CacheMode::AsIs) | None => r.figures.residency_before_pct < 50.0,
        };
        Some(Point {
            setup: Setup {
                // A command's program, a locality layout or a mix is not what the model knows.
                op: s.op.known()?,
                method: s.method.known()?,
                pattern: s.pattern.known().unwrap_or(Pattern::Sequential),
                block_size_bytes: s.block_size_bytes,
                threads: s.threads.max(1),
                queue_depth: s.queue_depth.max(1),
                direct: s.direct,
                // A result written before the column: the memory `auto` gave then.
                buffers: resolved(s.buffers.known().unwrap_or(Buffers::Auto), s.direct),
                ..Setup::default()
            },
            cold,
        })
    }

    /// Whether its offsets are random.
    pub fn random(&self) -> bool {
        self.setup.pattern == Pattern::Random
    }
}

/// What the model predicts for a point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    pub bound: Bound,
    /// Predicted throughput, MiB/s: what the point should reach if nothing else is in the way.
    pub bound_mib_s: f64,
    /// Predicted operations per second (all threads): `bound_mib_s` = this × block size.
    #[serde(rename = "bound_ops_per_s")]
    pub ops_per_s: f64,
    /// The block size the prediction is for, bytes.
    pub block_size_bytes: u64,
    /// The profile's error for this prediction: the largest spread of the tries behind the
    /// ceilings it used, percent; None when the profile did not keep it (unknown error).
    #[serde(rename = "profile_error_pct")]
    pub error_pct: Option<f64>,
    /// Why the bound's family of ceilings cannot be trusted (`Profile::family_doubt`: tries
    /// spread wide, measured under load); None when it can. A bound in doubt bounds nothing:
    /// a result above it says so about the profile, never about the data.
    #[serde(rename = "profile_doubt", skip_serializing_if = "Option::is_none")]
    pub doubt: Option<String>,
    /// The ceilings the prediction was made from, for the explanation line.
    #[serde(skip)]
    detail: Detail,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Detail {
    /// Concurrent workers (threads, or requests in flight for the device).
    parallel: f64,
    /// Threads asked for (more than `parallel` when there are fewer cores).
    threads: usize,
    /// Memory bandwidth of copy + XOR together at this thread count, MiB/s.
    memory_mib_s: f64,
    /// Device rate used, MiB/s, and requests in flight.
    device_mib_s: f64,
    device_qd: f64,
}

/// A prediction next to a measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    #[serde(flatten)]
    pub prediction: Prediction,
    pub measured_mib_s: f64,
    /// measured / predicted, percent.
    pub pct_of_bound: f64,
    /// False when the measurement is above its bound by more than the profile's error (or
    /// above it at all, when the error is unknown): the profile does not explain the run.
    pub explained: bool,
    /// What to look at when the point is far below its bound.
    pub hint: Option<String>,
    /// The one-line explanation.
    pub line: String,
}

/// Seconds per request of the device for `bytes`, with `qd` requests in flight (aggregate: the
/// device completes one such request every this many seconds).
fn device_seconds_per_op(p: &Profile, pt: &Point, bytes: f64, qd: f64) -> Option<(f64, Bound)> {
    let d = device_of(p, pt)?;
    let fit = |iops: f64, seq_mib_s: f64| -> Option<(f64, f64)> {
        if iops <= 0.0 || seq_mib_s <= 0.0 {
            return None;
        }
        let t4k = 1.0 / iops;
        let t1m = MIB / (seq_mib_s * MIB);
        let per_byte = ((t1m - t4k) / (MIB - 4096.0)).max(1.0 / (seq_mib_s * MIB) * 0.5);
        let latency = (t4k - 4096.0 * per_byte).max(0.0);
        Some((latency, per_byte))
    };
    let one = fit(d.rand4k_qd1_iops, d.seq_qd1_mib_s)?;
    let deep = fit(d.rand4k_qd32_iops, d.seq_qd32_mib_s).unwrap_or(one);
    let w = (qd.clamp(1.0, 32.0).ln() / 32f64.ln()).clamp(0.0, 1.0);
    let lerp_log = |a: f64, b: f64| {
        if a <= 0.0 || b <= 0.0 {
            a + (b - a) * w
        } else {
            (a.ln() + (b.ln() - a.ln()) * w).exp()
        }
    };
    let latency = lerp_log(one.0, deep.0);
    let per_byte = lerp_log(one.1, deep.1);
    let bound = if latency > bytes * per_byte {
        Bound::DeviceIops
    } else {
        Bound::DeviceBandwidth
    };
    Some((latency + bytes * per_byte, bound))
}

/// The device figures that bound `pt`: for O_DIRECT those measured with the point's buffer
/// memory; for cached reads (the kernel reads into its own pages) any.
fn device_of<'a>(p: &'a Profile, pt: &Point) -> Option<&'a super::profile::DeviceCeiling> {
    if pt.setup.direct {
        p.device_for(pt.setup.buffers)
    } else {
        p.devices.first()
    }
}

/// Why the profile `p` cannot bound `pt` for lack of a ceiling measured with the point's buffer
/// memory: `the limits profile has no O_DIRECT ceiling with plain 4 KiB-page buffers (it was
/// measured with huge-page buffers only; ...)`. None when the memory is covered, or when the
/// point needs no buffer ceiling (mmap, writes) or lacks something else.
pub fn missing_ceiling(p: &Profile, pt: &Point) -> Option<String> {
    if pt.setup.op != Op::Read || crate::engine::caps(pt.setup.method).maps_file {
        return None;
    }
    let have = |list: Vec<Buffers>| -> String {
        let words: Vec<&str> = list.into_iter().map(memory_words).collect();
        if words.is_empty() {
            "no buffers".into()
        } else {
            format!("{} buffers only", words.join(" and "))
        }
    };
    let (what, measured) = if pt.setup.direct || (pt.cold && pt.random()) {
        if !pt.setup.direct || p.devices.is_empty() || p.device_for(pt.setup.buffers).is_some() {
            return None;
        }
        (
            "O_DIRECT ceiling",
            have(p.devices.iter().map(|d| d.buffers).collect()),
        )
    } else {
        let cpus = p.context.cpu_count.max(1);
        let mem = p.memory_for(pt.setup.threads.max(1).min(cpus))?;
        if mem
            .copy_xor_mib_s(pt.setup.block_size_bytes, pt.setup.buffers)
            .is_some()
        {
            return None;
        }
        ("page-cache copy ceiling", have(mem.level_memories()))
    };
    Some(format!(
        "no bound: the limits profile has no {what} with {} buffers (it was measured with {measured}, and a ceiling measured with one memory does not bound a run with another); pass a `--buffers` it has, or run `diskscope limits --refresh` to measure both",
        memory_words(pt.setup.buffers)
    ))
}

/// The cores the profile was measured with, and no more than this process has now: the most
/// threads its ceilings can speak for.
fn usable_cpus(p: &Profile) -> usize {
    p.context
        .cpu_count
        .max(1)
        .min(p.cores_now.unwrap_or(usize::MAX).max(1))
}

/// Predicts the bound of `pt` from the ceilings in `p`; None when the profile lacks what the
/// point needs (a write, a direct read without device figures).
pub fn predict(p: &Profile, pt: &Point) -> Option<Prediction> {
    if pt.setup.op != Op::Read || pt.setup.block_size_bytes == 0 {
        return None;
    }
    let bytes = pt.setup.block_size_bytes as f64;
    let cpus = usable_cpus(p);
    let threads = pt.setup.threads.max(1);
    let running = threads.min(cpus) as f64;
    let mem = p.memory_for(threads.min(cpus))?;
    // Per thread: the memory ceilings are sums over the threads measured together.
    let per_thread = |total_mib_s: f64| total_mib_s * MIB / mem.threads.max(1) as f64;
    let t_call = 1.0 / p.ops_per_s(pt.setup.method)?;
    // read(2) and friends copy from the cache into the buffer, then XOR it (fast while the
    // buffer fits a CPU cache); mmap and O_DIRECT reads only XOR, from memory.
    let copies = crate::engine::caps(pt.setup.method).copies(pt.setup.direct);
    let memory_mib_s = if copies {
        mem.copy_xor_mib_s(pt.setup.block_size_bytes, pt.setup.buffers)?
    } else {
        mem.xor_mib_s
    };
    let t_mem = bytes / per_thread(memory_mib_s);
    let t_xor = bytes / per_thread(mem.xor_mib_s);
    // CPU time of one operation on one thread.
    let t_cpu = t_call + t_mem;
    let mut bound = if t_call >= t_mem {
        Bound::Syscall
    } else {
        Bound::Memory
    };
    let cpu_ops_per_s = running / t_cpu;
    let mut detail = Detail {
        parallel: running,
        threads,
        memory_mib_s,
        ..Default::default()
    };
    // The profile's error: the spread of every family of ceilings this prediction used.
    let spread = p.spread.as_ref();
    let cpu_error = spread.map(|s| s.methods_pct.max(s.memory_pct));
    let with = |other: Option<Option<f64>>| match (cpu_error, other.flatten()) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    };
    let mut error_pct = cpu_error;
    let ops_per_s = if pt.setup.direct || (pt.cold && pt.random()) {
        error_pct = with(spread.map(|s| s.device_pct));
        let per_thread_qd = if crate::engine::caps(pt.setup.method).queued {
            pt.setup.queue_depth.max(1) as f64
        } else {
            1.0
        };
        let qd = threads as f64 * per_thread_qd;
        let (t_dev, dev_bound) = device_seconds_per_op(p, pt, bytes.max(4096.0), qd)?;
        detail.device_qd = qd;
        detail.device_mib_s = bytes / t_dev / MIB;
        if qd <= 1.0 {
            // One synchronous request at a time: the device latency (which already holds the
            // call's cost, as the QD 1 figures were measured with pread) then the XOR.
            let t = t_dev + t_xor;
            if t_dev >= t_xor {
                bound = dev_bound;
            }
            1.0 / t
        } else {
            let dev_ops_per_s = 1.0 / t_dev;
            if dev_ops_per_s < cpu_ops_per_s {
                bound = dev_bound;
            }
            dev_ops_per_s.min(cpu_ops_per_s)
        }
    } else if pt.cold {
        let ra = p.cold_readahead_mib_s?;
        error_pct = with(spread.map(|s| s.readahead_pct));
        detail.device_mib_s = ra;
        let ra_ops_per_s = ra * MIB / bytes;
        if ra_ops_per_s < cpu_ops_per_s {
            bound = Bound::Readahead;
        }
        ra_ops_per_s.min(cpu_ops_per_s)
    } else {
        cpu_ops_per_s
    };
    Some(Prediction {
        bound,
        bound_mib_s: ops_per_s * bytes / MIB,
        ops_per_s,
        block_size_bytes: pt.setup.block_size_bytes,
        error_pct,
        doubt: p.family_doubt(bound.family()),
        detail,
    })
}

/// The prediction for the same point at each block size (for the model line over block-size
/// plots): `(block_size_bytes, prediction)`, sizes the model cannot predict left out.
pub fn predict_curve(p: &Profile, base: &Point, block_sizes: &[u64]) -> Vec<(u64, Prediction)> {
    block_sizes
        .iter()
        .filter_map(|&bs| {
            let pt = Point {
                setup: Setup {
                    block_size_bytes: bs,
                    ..base.setup
                },
                ..*base
            };
            predict(p, &pt).map(|pr| (bs, pr))
        })
        .collect()
}

/// Predicts and compares with a measured throughput.
pub fn explain(p: &Profile, pt: &Point, measured_mib_s: f64) -> Option<Explanation> {
    let prediction = predict(p, pt)?;
    let pct = if prediction.bound_mib_s > 0.0 {
        100.0 * measured_mib_s / prediction.bound_mib_s
    } else {
        0.0
    };
    let hint = (pct < LOW_PCT).then(|| hint_for(p, pt));
    let line = one_liner(&prediction, pt, measured_mib_s, pct, hint.as_deref());
    Some(Explanation {
        explained: is_explained(&prediction, pct),
        prediction,
        measured_mib_s,
        pct_of_bound: pct,
        hint,
        line,
    })
}

/// Whether a share of the bound is explained by the profile: at most 100% plus the profile's
/// error (at most 100% when the error is unknown).
fn is_explained(pr: &Prediction, pct: f64) -> bool {
    pct.is_finite() && pct <= 100.0 + pr.error_pct.unwrap_or(0.0)
}

impl Explanation {
    /// The short form for a narrow panel: `memory-bound 4.0 GiB/s · 74%`; above the bound
    /// within the profile's error `· 104% (±10%)`; beyond it `· over it: limits --refresh`.
    pub fn short(&self) -> String {
        let pr = &self.prediction;
        let head = format!(
            "{} {}",
            pr.bound,
            format_mib_s(pr.bound_mib_s, pr.bound_mib_s, true)
        );
        match (self.explained, self.pct_of_bound > 100.0, pr.error_pct) {
            (false, _, _) if pr.doubt.is_some() => {
                format!("{head} · over it; profile untrusted: limits --refresh")
            }
            (false, _, _) => format!("{head} · over it: limits --refresh"),
            (true, true, Some(err)) => format!("{head} · {:.0}% (±{err:.0}%)", self.pct_of_bound),
            _ => format!("{head} · {:.0}%", self.pct_of_bound),
        }
    }
}

/// How far above its predicted bound `r` can be before it is faster than the machine goes,
/// as a factor (1 where nothing is interpolated): a page-cache copy whose block size lies
/// between two measured buffer sizes is predicted from a log-linear estimate between their
/// levels, and only the smaller size's level is a ceiling
/// ([`crate::explain::profile::MemoryCeiling::copy_xor_upper_mib_s`]). The bound's own time
/// per call does not scale with it, so the factor overstates the headroom a little: an upper
/// bound may, a false alarm may not.
pub fn memory_headroom(p: &Profile, r: &RunResult) -> f64 {
    let Some(pt) = Point::of_result(r) else {
        return 1.0;
    };
    if pt.setup.op != Op::Read || !crate::engine::caps(pt.setup.method).copies(pt.setup.direct) {
        return 1.0;
    }
    let Some(mem) = p.memory_for(pt.setup.threads.max(1).min(usable_cpus(p))) else {
        return 1.0;
    };
    let (bs, buffers) = (pt.setup.block_size_bytes, pt.setup.buffers);
    match (
        mem.copy_xor_mib_s(bs, buffers),
        mem.copy_xor_upper_mib_s(bs, buffers),
    ) {
        (Some(estimate), Some(upper)) if estimate > 0.0 => (upper / estimate).max(1.0),
        _ => 1.0,
    }
}

/// Explains a measured result (None without a usable point or prediction).
pub fn explain_result(p: &Profile, r: &RunResult) -> Option<Explanation> {
    if !r.figures.error.is_empty() || r.figures.seconds <= 0.0 {
        return None;
    }
    explain(p, &Point::of_result(r)?, r.figures.mib_s)
}

/// What to look at when a point reaches less than half its bound.
fn hint_for(p: &Profile, pt: &Point) -> String {
    let dev = p.context.device.as_ref();
    let lbs = dev.and_then(|d| d.logical_block_size_bytes).unwrap_or(512);
    if pt.setup.direct && !pt.setup.block_size_bytes.is_multiple_of(lbs.max(4096)) {
        return format!(
            "misaligned requests: O_DIRECT blocks of {} are not a multiple of 4 KiB, so the device does read-modify or split work",
            format_size(pt.setup.block_size_bytes)
        );
    }
    if let Some(max_kb) = dev.and_then(|d| d.max_sectors_kb) {
        if (pt.setup.direct || pt.cold) && pt.setup.block_size_bytes > max_kb * 1024 {
            return format!(
                "split requests: {} blocks exceed max_sectors_kb ({max_kb} KiB), so each read becomes several device requests",
                format_size(pt.setup.block_size_bytes)
            );
        }
    }
    if pt.cold && !pt.setup.direct {
        return "page cache churn: readahead pages evicted before use (memory pressure) or another process reading the same device".to_string();
    }
    "another process competing for CPU or memory bandwidth (check top), CPU frequency scaling, or a misaligned buffer".to_string()
}

/// `1.9 M ops/s`, `850 k ops/s`, `420 ops/s`.
fn format_rate(v: f64, unit: &str) -> String {
    if v >= 1e6 {
        format!("{:.1} M {unit}", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0} k {unit}", v / 1e3)
    } else if v >= 1e3 {
        format!("{:.1} k {unit}", v / 1e3)
    } else {
        format!("{v:.0} {unit}")
    }
}

/// A throughput in GiB/s from 1 GiB/s, else MiB/s; `unit` false drops the unit (same scale).
pub fn format_mib_s(v: f64, scale_of: f64, unit: bool) -> String {
    let (x, u) = if scale_of >= 1024.0 {
        (v / 1024.0, "GiB/s")
    } else {
        (v, "MiB/s")
    };
    let num = if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    };
    if unit {
        format!("{num} {u}")
    } else {
        num
    }
}

/// What a result above a bound in doubt is told: the profile, not the data, is what to fix.
pub fn untrusted(doubt: &str) -> String {
    format!(
        "no trustworthy ceiling for this path ({doubt}), so the profile, not the run, is what \
         to doubt: `diskscope limits --refresh` on a quiet machine"
    )
}

/// The one line: `syscall-bound: 1.9 M ops/s × 4 KiB = 7.4 GiB/s; measured 6.5 (88%)`, with the
/// hint appended when there is one.
pub fn one_liner(
    pr: &Prediction,
    pt: &Point,
    measured_mib_s: f64,
    pct: f64,
    hint: Option<&str>,
) -> String {
    let d = &pr.detail;
    let pred = format_mib_s(pr.bound_mib_s, pr.bound_mib_s, true);
    let threads = if d.threads as f64 > d.parallel {
        format!(" on {:.0} cores ({} threads)", d.parallel, d.threads)
    } else if d.parallel > 1.0 {
        format!(" on {:.0} threads", d.parallel)
    } else {
        String::new()
    };
    let how = match pr.bound {
        Bound::Syscall => format!(
            "{} × {}{threads}",
            format_rate(pr.ops_per_s, "ops/s"),
            format_size(pt.setup.block_size_bytes)
        ),
        Bound::Memory => {
            let copies = crate::engine::caps(pt.setup.method).copies(pt.setup.direct);
            format!(
                "{} {}{threads} ({}{})",
                if copies { "copy + XOR at" } else { "XOR at" },
                format_mib_s(d.memory_mib_s, d.memory_mib_s, true),
                format_rate(pr.ops_per_s, "ops/s"),
                // Named where it is not the default (plain pages), to keep the usual line short.
                if copies && pt.setup.buffers != Buffers::Plain {
                    format!(", into {} buffers", memory_words(pt.setup.buffers))
                } else {
                    String::new()
                }
            )
        }
        Bound::DeviceIops | Bound::DeviceBandwidth => format!(
            "{} × {} at QD {:.0}{}",
            format_rate(pr.ops_per_s, "IOPS"),
            format_size(pt.setup.block_size_bytes),
            d.device_qd.max(1.0),
            if pt.setup.direct {
                format!(", {} buffers", memory_words(pt.setup.buffers))
            } else {
                String::new()
            }
        ),
        Bound::Readahead => format!(
            "cold readahead at {}",
            format_mib_s(d.device_mib_s, d.device_mib_s, true)
        ),
    };
    // In the bound's unit, unless that would print a far smaller figure as `0.0`.
    let measured = if pr.bound_mib_s >= 1024.0 && measured_mib_s < 102.4 {
        format_mib_s(measured_mib_s, measured_mib_s, true)
    } else {
        format_mib_s(measured_mib_s, pr.bound_mib_s, false)
    };
    let share = match (is_explained(pr, pct), pct > 100.0, pr.error_pct) {
        (false, _, _) if pr.doubt.is_some() => format!(
            "measured {measured}, above it: {}",
            untrusted(pr.doubt.as_deref().unwrap_or_default())
        ),
        (true, true, Some(err)) => {
            format!("measured {measured} ({pct:.0}%, within the profile's ±{err:.0}%)")
        }
        (true, _, _) => format!("measured {measured} ({pct:.0}%)"),
        (false, _, Some(err)) => format!(
            "measured {measured}, above it by more than the profile's ±{err:.0}%: {NOT_EXPLAINED}"
        ),
        (false, _, None) => format!(
            "measured {measured}, above it, and the profile's error is unknown (stored before limits kept it): {NOT_EXPLAINED}"
        ),
    };
    let mut s = format!("{}: {how} = {pred}; {share}", pr.bound);
    if let Some(h) = hint {
        s.push_str(&format!(" | below half the bound: {h}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Method;

    /// `Profile::synthetic_example`: 1 M read calls/s, copy 8 GiB/s and XOR 8 GiB/s on one
    /// thread (4 GiB/s together, 16 on 4), a device of 100 µs per 4 KiB request and 1 GiB/s at
    /// QD 1, 50k IOPS and 3 GiB/s at QD 32.
    fn synthetic() -> Profile {
        Profile::synthetic_example()
    }

    fn warm_read(bs: u64) -> Point {
        Point {
            setup: Setup {
                method: Method::Read,
                op: Op::Read,
                block_size_bytes: bs,
                threads: 1,
                queue_depth: 1,
                direct: false,
                pattern: Pattern::Sequential,
                buffers: Buffers::Plain,
                ..Setup::default()
            },
            cold: false,
        }
    }

    #[test]
    fn tiny_warm_reads_are_syscall_bound_at_the_call_rate() {
        let pr = predict(&synthetic(), &warm_read(1)).unwrap();
        assert_eq!(pr.bound, Bound::Syscall);
        // 1 byte per call at ~1 M calls/s (the copy of one byte is negligible).
        assert!((pr.ops_per_s - 1e6).abs() / 1e6 < 0.01, "{pr:?}");
    }

    #[test]
    fn large_warm_reads_are_memory_bound_at_copy_plus_xor() {
        let pr = predict(&synthetic(), &warm_read(64 << 20)).unwrap();
        assert_eq!(pr.bound, Bound::Memory);
        // copy 8 GiB/s then XOR 8 GiB/s: 4 GiB/s, less a hair for the call.
        assert!((pr.bound_mib_s - 4096.0).abs() < 5.0, "{pr:?}");
    }

    #[test]
    fn the_corner_is_rounded_where_call_and_copy_cost_the_same() {
        // At 4 KiB: 1 µs for the call, then ~0.95 µs to copy and XOR 4 KiB at 4 GiB/s.
        let pr = predict(&synthetic(), &warm_read(4096)).unwrap();
        let t = 1e-6 + 4096.0 / (4096.0 * MIB);
        let want = 4096.0 / t / MIB;
        assert!((pr.bound_mib_s - want).abs() / want < 0.001, "{pr:?}");
        assert_eq!(pr.bound, Bound::Syscall);
    }

    #[test]
    fn threads_multiply_the_call_rate_up_to_the_cpu_count() {
        let p = synthetic();
        let one = predict(&p, &warm_read(1)).unwrap().ops_per_s;
        let four = predict(
            &p,
            &Point {
                setup: Setup {
                    threads: 4,
                    ..warm_read(1).setup
                },
                ..warm_read(1)
            },
        )
        .unwrap()
        .ops_per_s;
        let eight = predict(
            &p,
            &Point {
                setup: Setup {
                    threads: 8,
                    ..warm_read(1).setup
                },
                ..warm_read(1)
            },
        )
        .unwrap()
        .ops_per_s;
        assert!((four / one - 4.0).abs() < 0.05, "{one} {four}");
        assert!((eight / four - 1.0).abs() < 0.01, "{four} {eight}");
    }

    #[test]
    fn direct_reads_name_the_device_iops_small_and_bandwidth_large() {
        let p = synthetic();
        let small = predict(
            &p,
            &Point {
                setup: Setup {
                    direct: true,
                    buffers: Buffers::Thp,
                    pattern: Pattern::Random,
                    ..warm_read(4096).setup
                },
                cold: true,
            },
        )
        .unwrap();
        assert_eq!(small.bound, Bound::DeviceIops);
        assert!(
            (small.ops_per_s - 10_000.0).abs() / 10_000.0 < 0.05,
            "{small:?}"
        );
        let big = predict(
            &p,
            &Point {
                setup: Setup {
                    direct: true,
                    buffers: Buffers::Thp,
                    ..warm_read(4 << 20).setup
                },
                cold: true,
            },
        )
        .unwrap();
        assert_eq!(big.bound, Bound::DeviceBandwidth);
        assert!(
            big.bound_mib_s < 1024.0 && big.bound_mib_s > 700.0,
            "{big:?}"
        );
        let deep = predict(
            &p,
            &Point {
                setup: Setup {
                    method: Method::IoUring,
                    direct: true,
                    buffers: Buffers::Thp,
                    pattern: Pattern::Random,
                    queue_depth: 32,
                    ..warm_read(4096).setup
                },
                cold: true,
            },
        )
        .unwrap();
        assert_eq!(deep.bound, Bound::DeviceIops);
        assert!(
            (deep.ops_per_s - 50_000.0).abs() / 50_000.0 < 0.05,
            "{deep:?}"
        );
    }

    #[test]
    fn cold_buffered_reads_are_bound_by_readahead() {
        let pr = predict(
            &synthetic(),
            &Point {
                cold: true,
                ..warm_read(1 << 20)
            },
        )
        .unwrap();
        assert_eq!(pr.bound, Bound::Readahead);
        assert!((pr.bound_mib_s - 900.0).abs() < 1.0);
    }

    #[test]
    fn writes_and_direct_reads_without_device_figures_are_not_predicted() {
        let mut p = synthetic();
        assert!(predict(
            &p,
            &Point {
                setup: Setup {
                    op: Op::Write,
                    ..warm_read(4096).setup
                },
                ..warm_read(4096)
            }
        )
        .is_none());
        p.devices.clear();
        assert!(predict(
            &p,
            &Point {
                setup: Setup {
                    direct: true,
                    buffers: Buffers::Thp,
                    ..warm_read(4096).setup
                },
                ..warm_read(4096)
            }
        )
        .is_none());
    }

    #[test]
    fn the_one_liner_reads_bound_rate_block_prediction_and_share() {
        let p = synthetic();
        let e = explain(&p, &warm_read(4096), 1800.0).unwrap();
        assert_eq!(
            e.line,
            "syscall-bound: 512 k ops/s × 4K = 2.0 GiB/s; measured 1.8 (90%)"
        );
        assert!(e.hint.is_none());
        let low = explain(&p, &warm_read(64 << 20), 1000.0).unwrap();
        assert!(low.pct_of_bound < 50.0);
        assert!(
            low.line
                .starts_with("memory-bound: copy + XOR at 4.0 GiB/s"),
            "{}",
            low.line
        );
        assert!(low.line.contains("below half the bound: another process"));
        let tiny = explain(&p, &warm_read(4096), 34.6).unwrap();
        assert!(
            tiny.line.contains("= 2.0 GiB/s; measured 34.6 MiB/s (2%)"),
            "{}",
            tiny.line
        );
    }

    #[test]
    fn a_warm_run_over_part_of_a_file_is_warm_whatever_the_whole_file_residency() {
        let r = RunResult {
            setup: crate::config::RecordedSetup {
                op: Op::Read.into(),
                method: Method::Read.into(),
                cache: CacheMode::Warm.into(),
                block_size_bytes: 1,
                threads: 1,
                queue_depth: 1,
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                residency_before_pct: 0.1,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(!Point::of_result(&r).unwrap().cold);
        let as_is = RunResult {
            setup: crate::config::RecordedSetup {
                cache: CacheMode::AsIs.into(),
                ..r.clone().setup
            },
            ..r.clone()
        };
        assert!(Point::of_result(&as_is).unwrap().cold);
        let cold = RunResult {
            setup: crate::config::RecordedSetup {
                cache: CacheMode::Cold.into(),
                ..r.setup.clone()
            },
            figures: crate::measure::result::Figures {
                residency_before_pct: 100.0,
                ..r.figures.clone()
            },
            ..r
        };
        assert!(Point::of_result(&cold).unwrap().cold);
        let mut unxored = cold.clone();
        unxored.setup.checksum = Some(crate::config::Checksum::None);
        assert_eq!(
            Point::of_result(&unxored),
            None,
            "no ceiling without the XOR"
        );
    }

    #[test]
    fn rates_keep_a_decimal_below_ten_thousand() {
        assert_eq!(format_rate(1536.0, "IOPS"), "1.5 k IOPS");
        assert_eq!(format_rate(27_000.0, "ops/s"), "27 k ops/s");
        assert_eq!(format_rate(1.9e6, "ops/s"), "1.9 M ops/s");
    }

    #[test]
    fn the_curve_turns_from_syscall_to_memory_bound() {
        let sizes: Vec<u64> = (0..28).map(|i| 1u64 << i).collect();
        let curve = predict_curve(&synthetic(), &warm_read(1), &sizes);
        assert_eq!(curve.len(), sizes.len());
        assert_eq!(curve[0].1.bound, Bound::Syscall);
        assert_eq!(curve.last().unwrap().1.bound, Bound::Memory);
        assert!(curve
            .windows(2)
            .all(|w| w[1].1.bound_mib_s >= w[0].1.bound_mib_s));
    }

    #[test]
    fn above_the_bound_within_the_profiles_spread_is_explained_and_said_so() {
        // 4 KiB warm: 2.0 GiB/s predicted; the synthetic profile's spread is 10%.
        let p = synthetic();
        let bound = predict(&p, &warm_read(4096)).unwrap().bound_mib_s;
        let e = explain(&p, &warm_read(4096), bound * 1.05).unwrap();
        assert!(e.explained);
        assert_eq!(e.prediction.error_pct, Some(10.0));
        assert!(
            e.line.ends_with("(105%, within the profile's ±10%)"),
            "{}",
            e.line
        );
        assert!(e.short().ends_with("· 105% (±10%)"), "{}", e.short());
    }

    #[test]
    fn above_the_bound_beyond_the_spread_the_profile_does_not_explain_the_run() {
        let p = synthetic();
        let bound = predict(&p, &warm_read(4096)).unwrap().bound_mib_s;
        let e = explain(&p, &warm_read(4096), bound * 2.94).unwrap();
        assert!(!e.explained && e.hint.is_none());
        assert!(
            !e.line.contains('%') || e.line.contains("±10%"),
            "{}",
            e.line
        );
        assert!(!e.line.contains("294"), "{}", e.line);
        assert!(
            e.line.ends_with(
                "above it by more than the profile's ±10%: the profile does not explain this run: `diskscope limits --refresh`"
            ),
            "{}",
            e.line
        );
        assert!(
            e.short().ends_with("over it: limits --refresh"),
            "{}",
            e.short()
        );
    }

    #[test]
    fn a_profile_without_spread_has_an_unknown_error_and_bounds_nothing_over_it() {
        let mut p = synthetic();
        p.spread = None;
        let e = explain(&p, &warm_read(4096), 1e6).unwrap();
        assert_eq!(e.prediction.error_pct, None);
        assert!(!e.explained);
        // Above a ceiling of unknown error, the line doubts the profile, never the run.
        assert!(
            e.line
                .contains("no trustworthy ceiling for this path (its error is unknown"),
            "{}",
            e.line
        );
        assert!(!e.line.contains(NOT_EXPLAINED), "{}", e.line);
        assert!(e.short().contains("profile untrusted"), "{}", e.short());
        let below = explain(&p, &warm_read(4096), 1000.0).unwrap();
        assert!(below.explained, "{}", below.line);
        assert!(!below.line.contains(NOT_EXPLAINED), "{}", below.line);
    }

    #[test]
    fn the_device_error_counts_for_device_bound_points() {
        let mut p = synthetic();
        p.spread.as_mut().unwrap().device_pct = Some(30.0);
        let direct = Point {
            setup: Setup {
                direct: true,
                buffers: Buffers::Thp,
                pattern: Pattern::Random,
                ..warm_read(4096).setup
            },
            cold: true,
        };
        assert_eq!(predict(&p, &direct).unwrap().error_pct, Some(30.0));
        assert_eq!(predict(&p, &warm_read(4096)).unwrap().error_pct, Some(10.0));
        p.spread.as_mut().unwrap().device_pct = None;
        assert_eq!(predict(&p, &direct).unwrap().error_pct, None);
    }

    #[test]
    fn threads_never_outnumber_the_cores_this_process_has_now() {
        // The profile was measured on 4 CPUs with memory ceilings at 1 and 4 threads; this
        // process has 2 cores: 2, 4 and 8 threads all run on 2, at the 1-thread ceiling per
        // thread (the largest measured count not above 2).
        let mut p = synthetic();
        p.cores_now = Some(2);
        let big = |threads| {
            predict(
                &p,
                &Point {
                    setup: Setup {
                        threads,
                        ..warm_read(64 << 20).setup
                    },
                    ..warm_read(64 << 20)
                },
            )
            .unwrap()
        };
        let one = big(1).bound_mib_s;
        for t in [2, 4, 8] {
            let pr = big(t);
            assert!((pr.bound_mib_s / one - 2.0).abs() < 0.01, "{t}: {pr:?}");
        }
        let e = explain(
            &p,
            &Point {
                setup: Setup {
                    threads: 8,
                    ..warm_read(64 << 20).setup
                },
                ..warm_read(64 << 20)
            },
            one,
        )
        .unwrap();
        assert!(e.line.contains("on 2 cores (8 threads)"), "{}", e.line);
    }

    #[test]
    fn a_run_whose_buffer_memory_has_no_ceiling_is_told_so_instead_of_bounded_by_another() {
        let p = synthetic();
        let direct = |buffers| Point {
            setup: Setup {
                method: Method::IoUring,
                queue_depth: 32,
                direct: true,
                buffers,
                ..warm_read(1 << 20).setup
            },
            cold: true,
        };
        // The synthetic device was measured with huge-page buffers only.
        assert!(predict(&p, &direct(Buffers::Thp)).is_some());
        assert!(predict(&p, &direct(Buffers::HugeTlb)).is_some());
        assert_eq!(missing_ceiling(&p, &direct(Buffers::Thp)), None);
        assert!(predict(&p, &direct(Buffers::Plain)).is_none());
        let why = missing_ceiling(&p, &direct(Buffers::Plain)).unwrap();
        assert!(
            why.contains("no O_DIRECT ceiling with plain 4 KiB-page buffers")
                && why.contains("measured with huge-page buffers only"),
            "{why}"
        );
        // A copy measured into plain pages does not bound a copy into huge pages.
        let mut p = synthetic();
        p.memory[0].read_levels = vec![super::super::profile::MemoryLevel {
            buffer_bytes: 1 << 16,
            copy_xor_mib_s: 2500.0,
            buffers: Buffers::Plain,
        }];
        let warm = |buffers| Point {
            setup: Setup {
                buffers,
                ..warm_read(1 << 20).setup
            },
            ..warm_read(1 << 20)
        };
        let plain = predict(&p, &warm(Buffers::Plain)).unwrap();
        assert!(plain.bound_mib_s < 2500.0, "{plain:?}");
        assert!(predict(&p, &warm(Buffers::Thp)).is_none());
        let why = missing_ceiling(&p, &warm(Buffers::Thp)).unwrap();
        assert!(
            why.contains("no page-cache copy ceiling with huge-page buffers")
                && why.contains("plain 4 KiB-page buffers only"),
            "{why}"
        );
        // mmap has no buffer: no ceiling is missing for it.
        let mmap = Point {
            setup: Setup {
                method: Method::Mmap,
                ..warm(Buffers::Thp).setup
            },
            ..warm(Buffers::Thp)
        };
        assert_eq!(missing_ceiling(&p, &mmap), None);
        assert!(predict(&p, &mmap).is_some());
    }
}
