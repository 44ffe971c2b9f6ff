//! The classic lab commands. Each turns its arguments into a [`RunSpec`](crate::config::RunSpec)
//! through `config`, runs it through the runner, and prints: the answer alone on stdout (so
//! scripts can capture it), everything else on stderr.

pub mod fast;
pub mod run;
pub mod run2;
pub mod syscalls;

use crate::cli::IoOpts;
use crate::config::{CacheMode, Method, Op, Pattern, RunSpec};
use crate::measure::RunResult;
use crate::size::format_bytes_approx;
use std::io::Write;

/// Applies the shared I/O options to a spec (names in errors are the CLI flags).
pub fn apply_io_opts(spec: &mut RunSpec, io: &IoOpts) -> anyhow::Result<()> {
    spec.method = Method::parse(&io.method, "--method")?;
    spec.cache = CacheMode::parse(&io.cache, "--cache")?;
    spec.pattern = Pattern::parse(&io.pattern, "--pattern")?;
    spec.threads = io.threads;
    spec.direct = io.direct;
    spec.queue_depth = io.queue_depth;
    spec.max_memory_bytes = io
        .max_memory
        .as_deref()
        .map(crate::config::parse_max_memory)
        .transpose()?;
    spec.submit = crate::config::SubmitPolicy::parse(&io.submit, "--submit")?;
    Ok(())
}

/// Prints one line on stdout; a closed pipe surfaces as a BrokenPipe error (exit 0 upstream).
pub fn println_stdout(line: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
}

/// The one-line human summary of a result, for stderr.
pub fn summary_line(r: &RunResult) -> String {
    format!(
        "{} {} in {:.4} s: {:.1} MiB/s, {} ops, {:.0} IOPS | latency p50 {:.2} µs, p99 {:.2} µs, max {:.1} µs | {}, {} thread{}, {}{}, cache {} ({})",
        if r.operation == Op::Write { "wrote" } else { "read" },
        format_bytes_approx(r.bytes),
        r.seconds,
        r.mib_s,
        r.ops,
        r.iops,
        r.lat_p50_us,
        r.lat_p99_us,
        r.lat_max_us,
        r.method,
        r.threads,
        if r.threads == 1 { "" } else { "s" },
        crate::size::format_size(r.block_size_bytes),
        if r.direct { " O_DIRECT" } else { "" },
        r.cache,
        if r.residency_before_pct.is_nan() {
            "residency unknown".to_string()
        } else {
            format!("{:.1}% resident before", r.residency_before_pct)
        },
    )
}
