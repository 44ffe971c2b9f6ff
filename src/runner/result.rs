//! From a run's settings and totals to the one [`RunResult`] record. [`setup_result`] fills the
//! columns that describe the setup, so a run that failed before it started (batch mode records
//! those too) has the same setup columns as one that finished.

use super::prepare::PreparedMeta;
use crate::config::spec::RunSpec;
use crate::config::{Arrival, Checksum, Op, Pattern, Prealloc, SubmitPolicy, WriteSync};
use crate::measure::{Aggregate, LatencySummary, RunResult};
use crate::xor::format_xor;
use std::time::Duration;

pub use crate::measure::result::host_name;

/// A record with the setup columns of `spec` filled in and no measurement yet.
pub fn setup_result(spec: &RunSpec, file_size_bytes: u64) -> RunResult {
    RunResult {
        host: host_name(),
        file: spec.target.path.display().to_string(),
        file_size_bytes,
        operation: spec.setup.op.into(),
        method: spec.setup.method.into(),
        pattern: spec.setup.pattern.into(),
        cache: spec.setup.cache.into(),
        direct: spec.setup.direct,
        block_size_bytes: spec.setup.block_size_bytes,
        threads: spec.setup.threads,
        // Synchronous methods have one operation in flight per thread, whatever was asked.
        queue_depth: crate::engine::caps(spec.setup.method).queue_depth(spec.setup.queue_depth),
        rep: 1,
        buffers: spec.setup.buffers.into(),
        // The settings a default run does not show: `None` at the default or where the
        // setting does not apply (see `RunResult::write_sync`).
        write_sync: Some(spec.write_sync()).filter(|w| *w != WriteSync::None),
        submit: (crate::engine::caps(spec.setup.method).queued
            && spec.setup.submit != SubmitPolicy::DEFAULT)
            .then_some(spec.setup.submit),
        prealloc: (spec.setup.op == Op::Write && spec.setup.prealloc != Prealloc::Native)
            .then_some(spec.setup.prealloc),
        arrival: (spec.setup.rate().is_some() && spec.setup.arrival != Arrival::Constant)
            .then_some(spec.setup.arrival),
        checksum: (spec.setup.checksum != Checksum::DEFAULT).then_some(spec.setup.checksum),
        ..Default::default()
    }
}

/// The optional columns (`RunResult`'s, left out of a default row) that the rows of `specs`
/// will write, in column order: a file of these points declares them in its header up front,
/// so points that differ in them (an io_uring point with `submit = "batch"` beside a pread
/// one, a mixed point beside a pure one) share one header, empty where a row has no value.
pub fn optional_columns(specs: &[RunSpec]) -> Vec<String> {
    let rows: Vec<RunResult> = specs
        .iter()
        .map(|spec| {
            let mut r = setup_result(spec, 0);
            if let Some(pct) = spec.setup.mix_read_pct {
                r.set_mixed(pct, &crate::measure::snapshot::MixedSnapshot::new());
                r.mix_read_pct_done = Some(0.0);
            }
            if let Some(asked) = spec.setup.rate() {
                r.set_open_loop(asked, 0, &LatencySummary::default());
                // Filled after the run, from its timeline (`runner::Ended::result`).
                r.resp_p99_no_burst_us = Some(0.0);
            }
            r
        })
        .collect();
    RunResult::optional_columns_of(&rows)
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
        xor: match (agg.xor(), spec.setup.pattern) {
            // A mix reads data its own writes change under it: no XOR of it means anything.
            _ if spec.is_mixed() => String::new(),
            (Some(x), _) => format_xor(x),
            // `xor_of_read_data` is `None` with `--checksum none`: no XOR was folded.
            (None, Pattern::Random) if agg.all_finished() && agg.errors.is_empty() => {
                agg.xor_of_read_data().map(format_xor).unwrap_or_default()
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
    if let Some(pct) = spec.setup.mix_read_pct {
        r.set_mixed(pct, &agg.mixed.clone().unwrap_or_default());
    }
    if let Some(asked) = spec.setup.rate() {
        let response = agg.response.as_ref().map(LatencySummary::of);
        r.set_open_loop(asked, agg.backlog_ops, &response.unwrap_or_default());
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Method;

    #[test]
    fn a_result_records_the_settings_a_default_run_does_not_show() {
        let mut w = RunSpec::new("/x");
        w.setup.op = Op::Write;
        let r = setup_result(&w, 0);
        assert_eq!(
            (r.write_sync, r.submit, r.prealloc, r.arrival),
            (None, None, None, None)
        );
        w.setup.write_sync = WriteSync::DsyncAndFsync;
        w.setup.prealloc = Prealloc::None;
        w.setup.rate_iops = Some(crate::config::Iops(100.0));
        w.setup.arrival = Arrival::Poisson;
        let r = setup_result(&w, 0);
        assert_eq!(r.write_sync, Some(WriteSync::DsyncAndFsync));
        assert_eq!(r.prealloc, Some(Prealloc::None));
        assert_eq!(r.arrival, Some(Arrival::Poisson));
        // A read has no write sync; a pread has no submission policy.
        let mut read = RunSpec::new("/x");
        read.setup.write_sync = WriteSync::FsyncAtEnd;
        read.setup.submit = SubmitPolicy::Batch;
        let r = setup_result(&read, 0);
        assert_eq!((r.write_sync, r.submit), (None, None));
        read.setup.method = Method::IoUring;
        assert_eq!(setup_result(&read, 0).submit, Some(SubmitPolicy::Batch));
    }

    #[test]
    fn points_name_the_optional_columns_their_rows_will_write() {
        let pread = RunSpec::new("/x");
        assert!(optional_columns(std::slice::from_ref(&pread)).is_empty());
        let mut uring = pread.clone();
        uring.setup.method = Method::IoUring;
        uring.setup.submit = SubmitPolicy::Batch;
        assert_eq!(optional_columns(&[pread.clone(), uring]), ["submit"]);
        let mut mixed = pread.clone();
        mixed.setup.op = Op::Write;
        mixed.setup.mix_read_pct = Some(70);
        assert_eq!(
            optional_columns(&[pread, mixed]),
            RunResult::mixed_columns()
        );
    }
}
