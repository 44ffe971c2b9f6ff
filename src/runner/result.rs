//! From a run's settings and totals to the one [`RunResult`] record. [`setup_result`] fills the
//! columns that describe the setup, so a run that failed before it started (batch mode records
//! those too) has the same setup columns as one that finished.

use super::prepare::PreparedMeta;
use crate::config::{Pattern, RunSpec};
use crate::measure::{Aggregate, LatencySummary, RunResult};
use crate::xor::format_xor;
use std::time::Duration;

pub use crate::measure::result::host_name;

/// A record with the setup columns of `spec` filled in and no measurement yet.
pub fn setup_result(spec: &RunSpec, file_size_bytes: u64) -> RunResult {
    RunResult {
        host: host_name(),
        file: spec.path.display().to_string(),
        file_size_bytes,
        operation: spec.op.into(),
        method: spec.method.into(),
        pattern: spec.pattern.into(),
        cache: spec.cache.into(),
        direct: spec.direct,
        block_size_bytes: spec.block_size_bytes,
        threads: spec.threads,
        // Synchronous methods have one operation in flight per thread, whatever was asked.
        queue_depth: crate::engine::caps(spec.method).queue_depth(spec.queue_depth),
        rep: 1,
        buffers: spec.buffers.into(),
        ..Default::default()
    }
}

/// Builds the result record of a finished run from its spec, totals and wall time.
pub fn make_result(
    prepared_meta: &PreparedMeta,
    experiment: &str,
    agg: &Aggregate,
    elapsed: Duration,
) -> RunResult {
    let spec = &prepared_meta.spec;
    let mut r = RunResult {
        experiment: experiment.to_string(),
        block_count: agg.ops,
        bytes: agg.bytes,
        seconds: elapsed.as_secs_f64(),
        ops: agg.ops,
        // NaN (an empty cell in summaries) when residency could not be known.
        residency_before_pct: prepared_meta
            .residency_before
            .map_or(f64::NAN, |r| r.percent()),
        xor: match (agg.xor(), spec.pattern) {
            // A mix reads data its own writes change under it: no XOR of it means anything.
            _ if spec.is_mixed() => String::new(),
            (Some(x), _) => format_xor(x),
            (None, Pattern::Random) if agg.all_finished() && agg.errors.is_empty() => {
                format_xor(agg.xor_of_read_data())
            }
            _ => String::new(),
        },
        error: agg
            .errors
            .first()
            .map(|e| e.message.clone())
            .unwrap_or_default(),
        ..setup_result(spec, prepared_meta.file_size)
    };
    r.set_rates();
    r.set_latency(&LatencySummary::of(&agg.latency));
    if let Some(pct) = spec.mix_read_pct {
        r.set_mixed(pct, &agg.mixed.clone().unwrap_or_default());
    }
    if let Some(asked) = spec.rate_iops {
        let response = agg.response.as_ref().map(LatencySummary::of);
        r.set_open_loop(asked, agg.backlog_ops, &response.unwrap_or_default());
    }
    r
}
