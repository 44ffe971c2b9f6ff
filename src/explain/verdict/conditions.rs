//! The rules about the conditions of the run rather than its bytes: CPU and memory contention,
//! a timeline that shifts, wobbles or bursts, a run too short to say anything, requests split
//! below the block size, and a test area the read-ahead swallows whole.

use super::input::*;
use super::thresholds::*;
use crate::text::shown;

pub(super) fn cpu_contended(i: &Input) -> Option<Finding> {
    let f = i.facts?;
    // The run's own shares of its workers' time in the run: waiting on a run queue, on a CPU.
    let share = |s: Option<f64>| {
        s.filter(|_| i.r.figures.seconds > 0.0)
            .map(|w| w / (i.r.figures.seconds * i.r.setup.threads.max(1) as f64))
    };
    let wait = share(f.run.worker_cpu_wait_s);
    let steal = f.steal_pct().map(|pct| Steal {
        pct,
        own_cpu_share: share(f.run.worker_on_cpu_s).map(|s| s.min(1.0)),
    });
    contention(f.psi_cpu_some_pct(), wait, steal).map(Finding::Suspect)
}

/// CPU time the hypervisor stole during a run, and how much of the run's own time its workers
/// spent on a CPU (user and system; None where `schedstat` could not be read).
#[derive(Debug, Clone, Copy)]
pub struct Steal {
    pub pct: f64,
    pub own_cpu_share: Option<f64>,
}

impl Steal {
    /// The share of the run's time the steal can have cost, percent: stolen time slows only a
    /// worker that wanted a CPU, so a run that waited for its device lost nothing to it. Where
    /// the workers' CPU time is unknown, the steal alone.
    fn cost_pct(&self) -> f64 {
        self.pct * self.own_cpu_share.unwrap_or(1.0)
    }
}

/// The `cpu_contended` sentence, where it applies: some task waited for a CPU during more than
/// [`CPU_SOME_PCT`] of the measurement (`psi_some_pct`) and the measuring threads themselves
/// waited [`WORKER_WAIT_SHARE`] of their time or more (`own_wait_share`, when known), or the
/// hypervisor stole CPU time that can have cost the run more than [`STEAL_PCT`] of its time
/// (the steal times the workers' share of their time on a CPU: a run that waited for its device
/// while the host took the CPU lost nothing). Also the `syscalls` lab's rule.
pub fn contention(
    psi_some_pct: Option<f64>,
    own_wait_share: Option<f64>,
    steal: Option<Steal>,
) -> Option<String> {
    let some = psi_some_pct
        .filter(|p| *p > CPU_SOME_PCT && own_wait_share.is_none_or(|w| w >= WORKER_WAIT_SHARE));
    let steal = steal.filter(|s| s.cost_pct() > STEAL_PCT);
    if some.is_none() && steal.is_none() {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(p) = some {
        let own = own_wait_share.map_or(String::new(), |w| {
            format!(
                ", and the run's workers waited for one {:.0}% of their time",
                w * 100.0
            )
        });
        parts.push(format!(
            "some task waited for a CPU during {p:.0}% of the run (more than \
             {CPU_SOME_PCT:.0}%){own}"
        ));
    }
    if let Some(s) = steal {
        let own = s.own_cpu_share.map_or(String::new(), |c| {
            format!(
                " while the run's workers were on a CPU {:.0}% of their time",
                c * 100.0
            )
        });
        parts.push(format!(
            "the hypervisor stole {:.0}% of the CPU time{own}",
            s.pct
        ));
    }
    Some(format!(
        "{}: the run shared its CPUs with other work, so its figure includes waiting for them",
        parts.join(" and ")
    ))
}

pub(super) fn memory_pressure(i: &Input) -> Option<Finding> {
    let p = i.facts?.psi_memory_some_pct()?;
    (p > MEMORY_SOME_PCT).then(|| {
        Finding::Suspect(format!(
            "some task stalled on memory (reclaim, refaults) during {p:.0}% of the run (more \
             than {MEMORY_SOME_PCT:.0}%): the page cache and the run's buffers were under \
             pressure"
        ))
    })
}

/// A write through the page cache without O_DSYNC: its intervals measure the cache taking the
/// data in, then writeback throttling it, then the fsync writing the rest (an interval with no
/// write at all) — phases of the one figure (bytes over the time to durable or to the end), not
/// a figure that moved. The timeline rules leave such runs alone; the data rules judge them.
fn paced_by_the_page_cache(i: &Input) -> bool {
    i.write && !i.r.setup.direct && !i.r.setup.write_sync.is_some_and(|w| w.dsync())
}

pub(super) fn level_shift(i: &Input) -> Option<Finding> {
    if paced_by_the_page_cache(i) {
        return None;
    }
    let s = i.r.timeline.as_ref()?.reading.level_shift.clone()?;
    suspect(format!(
        "throughput went from {:.1} to {:.1} MiB/s at {:.1} s and stayed there: something \
         changed mid-run (another process, a cache filling or emptying, throttling)",
        s.before_mib_s, s.after_mib_s, s.at_s
    ))
}

pub(super) fn unstable(i: &Input) -> Option<Finding> {
    if paced_by_the_page_cache(i) {
        return None;
    }
    let t = i.r.timeline.as_ref()?;
    if t.reading.level_shift.is_some() {
        return None;
    }
    let full: Vec<f64> = crate::measure::timeline::active_rows(&t.rows)
        .iter()
        .filter(|row| row.t_end_s - row.t_start_s >= 0.9 * t.interval_s)
        .map(|row| row.mib_s)
        .collect();
    if full.len() < MIN_INTERVALS {
        return None;
    }
    let n = full.len() as f64;
    let mean = full.iter().sum::<f64>() / n;
    let var = full.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
    (cv > MAX_INTERVAL_CV).then(|| {
        Finding::Suspect(format!(
            "its {} intervals spread ±{:.0}% around their mean (more than ±{:.0}%): too \
             unstable for one figure",
            full.len(),
            cv * 100.0,
            MAX_INTERVAL_CV * 100.0
        ))
    })
}

pub(super) fn latency_burst(i: &Input) -> Option<Finding> {
    let b = i.r.timeline.as_ref()?.reading.burst?;
    (b.ratio() >= BURST_RATIO && b.p99_us - b.p99_without_us >= BURST_MIN_US).then(|| {
        Finding::Suspect(format!(
            "the response p99 ({}) is one burst's: {:.1}-{:.1} s held it, and without that \
             tenth of the run the p99 is {} ({:.0}x lower); one stall of the host or the \
             device, not the rate, so the p99 will not repeat: run again or longer before \
             trusting it",
            fmt_us(b.p99_us),
            b.start_s,
            b.end_s,
            fmt_us(b.p99_without_us),
            b.ratio()
        ))
    })
}

pub(super) fn too_short(i: &Input) -> Option<Finding> {
    let r = i.r;
    if r.figures.seconds < MIN_SECONDS {
        return suspect(format!(
            "{:.3} s is shorter than the {MIN_SECONDS} s warm-up (thread start, first faults, \
             the queue filling): use more blocks",
            r.figures.seconds
        ));
    }
    if r.figures.ops < MIN_OPS {
        return suspect(format!(
            "{} operations are too few for a stable figure (at least {MIN_OPS}: the mean of \
             fewer is uncertain by more than ±20%): use more or smaller blocks",
            r.figures.ops
        ));
    }
    let intervals =
        (r.figures.seconds / crate::measure::SNAPSHOT_INTERVAL.as_secs_f64()).floor() as u32;
    (i.meant_for_device() && !i.in_ram && r.figures.seconds < DEVICE_SETTLE_S).then(|| {
        Finding::Suspect(format!(
            "a run meant for the device of {:.2} s spans {intervals} of the workers' 100 ms \
             intervals, fewer than {MIN_DEVICE_INTERVALS}: shorter than the device's settle \
             time ({DEVICE_SETTLE_S} s: the queue, the read-ahead window and write-back \
             ramping up, a host's or a drive's cache), so not a figure to bet on; use more \
             blocks",
            r.figures.seconds
        ))
    })
}

pub(super) fn split_requests(i: &Input) -> Option<Finding> {
    let f = i.facts?;
    if !i.r.setup.direct || f.run.buffer_pieces.is_empty() {
        return None;
    }
    let (name, max) = f
        .chain
        .as_ref()
        .and_then(|c| {
            let top = c.top()?;
            Some((top.name.clone(), top.queue.max_segments?))
        })
        .or_else(|| {
            let d = i.ctx.device.as_ref()?;
            Some((d.name.clone(), d.max_segments?))
        })?;
    let l = crate::engine::BufferLayout {
        slot_bytes: f.run.buffer_slot_bytes as usize,
        pieces: f.run.buffer_pieces.clone(),
    };
    let split = l.split(max);
    let dir = if i.write { "write" } else { "read" };
    (split > 0 && split as f64 >= SPLIT_SHARE * l.pieces.len() as f64).then(|| {
        Finding::Suspect(format!(
            "{split} of the {} O_DIRECT buffers lie in more physical pieces than {} takes in \
             one request ({max}; the buffers: {}), so their {dir}s were split: the figure \
             depends on where the kernel put the pages and changes from run to run; --buffers \
             thp or hugetlb gives a repeatable one",
            l.pieces.len(),
            shown(&name),
            l.describe()
        ))
    })
}

pub(super) fn small_test_area(i: &Input) -> Option<Finding> {
    if !(i.read && i.cold && !i.r.setup.direct) {
        return None;
    }
    // The top device's read-ahead: the one the filesystem's reads go through.
    let ra_kb = i
        .facts
        .and_then(|f| f.chain.as_ref()?.top()?.queue.read_ahead_kb)
        .or_else(|| i.ctx.device.as_ref()?.read_ahead_kb)?;
    let ra = ra_kb * 1024;
    let size = i.r.identity.file_size_bytes;
    (size > 0 && size <= ra).then(|| {
        Finding::Suspect(format!(
            "a cold read of a {} file, within one read-ahead window of {} ({ra_kb} KiB): the \
             first read fetches it all, the rest come from memory",
            fmt_bytes(size),
            shown(&i.device())
        ))
    })
}
