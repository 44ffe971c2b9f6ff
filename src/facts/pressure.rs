//! Who else ran: pressure stall information (`Documentation/accounting/psi.rst`) and the CPU
//! time the hypervisor stole.
//!
//! `/proc/pressure/{cpu,io,memory}` keep, since boot, the microseconds during which at least one
//! task (`some`) or every non-idle task (`full`) was stalled waiting for that resource. The
//! difference of the totals over exactly the run's interval, divided by the interval, is the
//! share of the run during which something waited: for the CPU, a runnable task that had no CPU
//! (another process's or one of the run's own when it has more threads than cores); for memory,
//! a task in reclaim or refaulting. PSI is the machine's (no cgroup here), so it says that the
//! run shared the machine, and how much; whether the run itself lost time is the judge's
//! business with the run's own figures beside it.
//!
//! Steal is the `steal` column of `/proc/stat`'s `cpu` line: ticks a virtual CPU was ready but
//! the host ran something else.

use serde::{Deserialize, Serialize};

/// Stall totals since boot, µs (`None`: the kernel has no PSI, or it is off: `psi=0`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pressure {
    pub cpu_some_us: Option<u64>,
    pub io_some_us: Option<u64>,
    pub io_full_us: Option<u64>,
    pub memory_some_us: Option<u64>,
    pub memory_full_us: Option<u64>,
}

/// The `total=` of a pressure file's `some` and `full` lines.
pub fn parse_totals(text: &str) -> (Option<u64>, Option<u64>) {
    let total = |kind: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(kind))?
            .split_whitespace()
            .find_map(|w| w.strip_prefix("total="))?
            .parse()
            .ok()
    };
    (total("some"), total("full"))
}

impl Pressure {
    /// The totals now.
    pub fn now() -> Pressure {
        let read = |r: &str| {
            std::fs::read_to_string(format!("/proc/pressure/{r}"))
                .map(|t| parse_totals(&t))
                .unwrap_or((None, None))
        };
        let (cpu_some_us, _) = read("cpu");
        let (io_some_us, io_full_us) = read("io");
        let (memory_some_us, memory_full_us) = read("memory");
        Pressure {
            cpu_some_us,
            io_some_us,
            io_full_us,
            memory_some_us,
            memory_full_us,
        }
    }
}

/// Share of `interval_us` that a total grew by from `a` to `b`, percent (`None` when either
/// is unknown or the interval is empty).
pub fn share_pct(a: Option<u64>, b: Option<u64>, interval_us: f64) -> Option<f64> {
    let (a, b) = (a?, b?);
    (interval_us > 0.0).then(|| (100.0 * b.saturating_sub(a) as f64 / interval_us).min(100.0))
}

/// `/proc/stat`'s `cpu` line: steal and every tick (user … steal), since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTicks {
    pub steal: u64,
    pub total: u64,
}

impl CpuTicks {
    /// Parses `/proc/stat` text (its `cpu ` line; fewer than 8 fields: no steal column).
    pub fn parse(text: &str) -> Option<CpuTicks> {
        let line = text.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|w| w.parse().ok())
            .collect::<Option<_>>()?;
        if v.len() < 8 {
            return None;
        }
        // guest and guest_nice (fields 9, 10) are already in user and nice.
        Some(CpuTicks {
            steal: v[7],
            total: v.iter().take(8).sum(),
        })
    }

    pub fn now() -> Option<CpuTicks> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Share of the CPUs' time stolen from `self` to `later`, percent.
    pub fn steal_pct(&self, later: &CpuTicks) -> Option<f64> {
        let total = later.total.saturating_sub(self.total);
        (total > 0).then(|| 100.0 * later.steal.saturating_sub(self.steal) as f64 / total as f64)
    }
}

/// A thread's `schedstat` (`/proc/thread-self/schedstat`, `/proc/self/task/TID/schedstat`):
/// ns on a CPU (`sum_exec_runtime`) and ns runnable but waiting for one (`run_delay`), its first
/// two fields.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace().map(|v| v.parse::<u64>().ok());
    Some((f.next()??, f.next()??))
}

/// What [`threads_sched_times`] reads: seconds on a CPU and seconds runnable but waiting for one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SchedTimes {
    pub on_cpu_s: f64,
    pub wait_s: f64,
}

/// The time this process's live threads named `name_prefix…` (their `comm`, which the kernel
/// cuts at 15 bytes) have spent on a CPU and runnable but waiting for one, seconds (the first
/// two fields of each `/proc/self/task/TID/schedstat`): a running run's workers' times so far,
/// which each worker adds up itself only when it ends. None when no such thread's could be read.
pub fn threads_sched_times(name_prefix: &str) -> Option<SchedTimes> {
    let (mut on_ns, mut wait_ns) = (0u64, 0u64);
    let mut any = false;
    for e in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let dir = e.path();
        // A thread may end between the listing and the reads: skip it.
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else {
            continue;
        };
        if !comm.trim_end().starts_with(name_prefix) {
            continue;
        }
        let times = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .and_then(|t| parse_schedstat(&t));
        if let Some((on, wait)) = times {
            on_ns += on;
            wait_ns += wait;
            any = true;
        }
    }
    any.then(|| SchedTimes {
        on_cpu_s: on_ns as f64 / 1e9,
        wait_s: wait_ns as f64 / 1e9,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sched_times_of_threads_by_name_count_only_those_threads() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
        // The new thread sets its own name as it starts: read the names once it runs.
        let t = std::thread::Builder::new()
            .name("dstest-delay-1".into())
            .spawn(move || {
                let _ = ready_tx.send(());
                let _ = rx.recv();
            })
            .unwrap();
        ready_rx.recv().unwrap();
        assert_eq!(parse_schedstat("1234 56 7\n"), Some((1234, 56)));
        assert_eq!(parse_schedstat("1234"), None);
        let found = threads_sched_times("dstest-delay-");
        assert_eq!(threads_sched_times("no-such-thread-name"), None);
        tx.send(()).unwrap();
        t.join().unwrap();
        if std::fs::metadata("/proc/self/task").is_ok()
            && std::fs::read_to_string("/proc/thread-self/schedstat").is_ok()
        {
            assert!(
                found.is_some_and(|s| s.wait_s >= 0.0 && s.on_cpu_s > 0.0),
                "{found:?}"
            );
        }
    }

    #[test]
    fn the_totals_of_some_and_full_are_read_and_a_delta_is_a_share_of_the_interval() {
        let text = "some avg10=96.86 avg60=92.81 avg300=47.83 total=209768054\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=12\n";
        assert_eq!(parse_totals(text), (Some(209768054), Some(12)));
        assert_eq!(parse_totals("nonsense"), (None, None));
        assert_eq!(share_pct(Some(1000), Some(251_000), 1e6), Some(25.0));
        assert_eq!(share_pct(Some(0), Some(5_000_000), 1e6), Some(100.0));
        assert_eq!(share_pct(None, Some(1), 1e6), None);
        assert_eq!(share_pct(Some(0), Some(1), 0.0), None);
    }

    #[test]
    fn steal_is_the_eighth_column_of_the_cpu_line() {
        let a = CpuTicks::parse("cpu  100 0 50 800 10 0 5 35 0 0\ncpu0 1 2 3\n").unwrap();
        assert_eq!((a.steal, a.total), (35, 1000));
        let b = CpuTicks {
            steal: 45,
            total: 1100,
        };
        assert_eq!(a.steal_pct(&b), Some(10.0));
        assert!(CpuTicks::parse("cpu  1 2 3 4 5 6 7\n").is_none());
    }

    #[test]
    fn this_kernels_pressure_files_are_read_when_it_has_them() {
        let p = Pressure::now();
        if std::path::Path::new("/proc/pressure/cpu").exists() {
            assert!(
                p.cpu_some_us.is_some() && p.memory_full_us.is_some(),
                "{p:?}"
            );
        } else {
            eprintln!("skipped: no /proc/pressure (a kernel without PSI)");
        }
    }
}
