//! What else the machine did while `limits` measured: the CPU time of the whole machine and of
//! this process (`/proc/stat`, `getrusage`), the load average, and the stalls of the memory
//! steps. Apart from the steps because it reads the machine, not the file, and its parsers are
//! pure functions tested on text.

use crate::explain::profile::{Provenance, Stall};
use std::path::Path;
use std::time::Instant;

/// CPU time of the whole machine, from the first line of `/proc/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTicks {
    /// user + nice + system + irq + softirq (guest time is inside user).
    pub busy: u64,
    /// Stolen by the hypervisor.
    pub steal: u64,
    /// Everything: busy, idle, iowait and steal.
    pub total: u64,
}

/// The `cpu` line of `/proc/stat`; None when it is missing or malformed.
pub fn parse_proc_stat(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let (user, nice, system, idle, iowait, irq, softirq, steal) =
        (at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7));
    let busy = user + nice + system + irq + softirq;
    Some(CpuTicks {
        busy,
        steal,
        total: busy + idle + iowait + steal,
    })
}

/// The 1-minute load average from the text of `/proc/loadavg`.
pub fn parse_load_avg_1m(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// User and system CPU time of this process (all its threads), seconds.
pub(super) fn self_cpu_s() -> f64 {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the rusage we own; RUSAGE_SELF is a valid `who`.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The pressure stalls from a start (`since`) to now: what a family of ceilings was measured
/// under (`profile::Stall`). A kernel without PSI gives none.
pub(super) struct StallWatch {
    pressure: crate::facts::pressure::Pressure,
    started: Instant,
}

impl StallWatch {
    pub(super) fn start() -> StallWatch {
        StallWatch {
            pressure: crate::facts::pressure::Pressure::now(),
            started: Instant::now(),
        }
    }

    pub(super) fn finish(&self) -> Option<Stall> {
        use crate::facts::pressure::share_pct;
        let now = crate::facts::pressure::Pressure::now();
        let us = self.started.elapsed().as_secs_f64() * 1e6;
        let a = &self.pressure;
        Some(Stall {
            cpu_some_pct: share_pct(a.cpu_some_us, now.cpu_some_us, us)?,
            io_some_pct: share_pct(a.io_some_us, now.io_some_us, us).unwrap_or(0.0),
            memory_some_pct: share_pct(a.memory_some_us, now.memory_some_us, us).unwrap_or(0.0),
        })
    }
}

/// What the machine did while `limits` measured: a snapshot at the start, compared at the end.
pub(super) struct LoadWatch {
    ticks: Option<CpuTicks>,
    self_cpu_s: f64,
    load_avg_1m: f64,
    started: Instant,
}

impl LoadWatch {
    pub(super) fn start() -> LoadWatch {
        LoadWatch {
            ticks: std::fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|t| parse_proc_stat(&t)),
            self_cpu_s: self_cpu_s(),
            load_avg_1m: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|t| parse_load_avg_1m(&t))
                .unwrap_or(0.0),
            started: Instant::now(),
        }
    }

    /// The provenance of a profile measured since [`LoadWatch::start`] on `file`.
    pub(super) fn finish(&self, file: &Path, file_bytes: u64, quick: bool) -> Provenance {
        let now = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|t| parse_proc_stat(&t));
        let hz = rustix::param::clock_ticks_per_second().max(1) as f64;
        let (others_cpu_pct, steal_pct) = match (self.ticks, now) {
            (Some(a), Some(b)) => others_and_steal_pct(a, b, hz, self_cpu_s() - self.self_cpu_s),
            _ => (0.0, 0.0),
        };
        Provenance {
            file: file.display().to_string(),
            file_bytes,
            quick,
            load_avg_1m: self.load_avg_1m,
            others_cpu_pct,
            steal_pct,
            seconds: self.started.elapsed().as_secs_f64(),
        }
    }
}

/// The share of all CPU time that other processes used and that was stolen between two
/// `/proc/stat` snapshots, percent, given this process's own CPU seconds in between.
pub fn others_and_steal_pct(a: CpuTicks, b: CpuTicks, hz: f64, self_cpu_s: f64) -> (f64, f64) {
    let total = b.total.saturating_sub(a.total) as f64;
    if total <= 0.0 {
        return (0.0, 0.0);
    }
    let busy = b.busy.saturating_sub(a.busy) as f64;
    let steal = b.steal.saturating_sub(a.steal) as f64;
    let others = (busy - self_cpu_s * hz).max(0.0);
    (
        (100.0 * others / total).clamp(0.0, 100.0),
        (100.0 * steal / total).clamp(0.0, 100.0),
    )
}
