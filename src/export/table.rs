//! The summary table printed on stdout at the end of a sweep: one line per point.

use super::csv::{RunSummary, SyscallSummary};
use crate::size::format_size;

/// Aligned text table of point summaries (MiB/s statistics over repetitions).
pub fn runs_table(rows: &[RunSummary]) -> String {
    let mut s = format!(
        "{:<16} {:<5} {:<9} {:<10} {:<8} {:>6} {:>3} {:>4} {:>5} {:>10} {:>10} {:>10} {:>10} {:>9}\n",
        "experiment", "op", "method", "pattern", "cache", "block", "thr", "qd", "reps", "mean MiB/s", "median", "min", "max", "stddev"
    );
    for r in rows {
        s += &format!(
            "{:<16} {:<5} {:<9} {:<10} {:<8} {:>6} {:>3} {:>4} {:>5} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>9.1}{}{}{}\n",
            r.experiment,
            r.setup.op,
            r.setup.method,
            r.setup.pattern,
            format!("{}{}", r.setup.cache, if r.setup.direct { "+D" } else { "" }),
            format_size(r.setup.block_size_bytes),
            r.setup.threads,
            r.setup.queue_depth,
            r.stats.reps,
            r.stats.mean_mib_s,
            r.stats.median_mib_s,
            r.stats.min_mib_s,
            r.stats.max_mib_s,
            r.stats.stddev_mib_s,
            // Settings the columns do not show, where the points differ in them.
            match r.settings_note() {
                n if n.is_empty() => n,
                n => format!("  {n}"),
            },
            if r.stats.failed > 0 { format!("  {} failed", r.stats.failed) } else { String::new() },
            if r.stats.error.is_empty() { String::new() } else { format!(": {}", r.stats.error) },
        );
    }
    s
}

/// Aligned text table of system-call summaries.
pub fn syscalls_table(rows: &[SyscallSummary]) -> String {
    let mut s = format!(
        "{:<16} {:<20} {:>5} {:>10} {:>10} {:>10} {:>10} {:>14}\n",
        "experiment", "syscall", "reps", "mean ns", "median", "min", "max", "calls/s"
    );
    for r in rows {
        s += &format!(
            "{:<16} {:<20} {:>5} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>14.0}\n",
            r.experiment,
            r.syscall,
            r.reps,
            r.mean_ns_per_call,
            r.median_ns_per_call,
            r.min_ns_per_call,
            r.max_ns_per_call,
            r.mean_calls_per_s
        );
    }
    s
}
