//! From a run's settings and totals to the one [`RunResult`] record. [`setup_result`] fills the
//! columns that describe the setup, so a run that failed before it started (batch mode records
//! those too) has the same setup columns as one that finished.

use super::prepare::PreparedMeta;
use crate::config::spec::RunSpec;
use crate::config::RecordedSetup;
use crate::config::{Arrival, Checksum, Op, Pattern, Prealloc, SubmitPolicy, WriteSync};
use crate::measure::result::{Figures, Identity};
use crate::measure::{Aggregate, LatencySummary, RunResult};
use crate::xor::format_xor;
use std::time::Duration;

pub use crate::measure::result::host_name;

/// The setup `spec` ran with, as its result records it: the effective queue depth, and the
/// settings a default run does not show `None` at the default or where they do not apply (see
/// [`crate::config::Setup`]). The open loop's rate and a mix's share are recorded with their
/// figures ([`RunResult::set_open_loop`], [`RunResult::set_mixed`]), so a run that failed
/// before it started has no such cell.
pub fn recorded_setup(spec: &RunSpec) -> RecordedSetup {
    let s = &spec.setup;
    let caps = crate::engine::caps(s.method);
    RecordedSetup {
        op: s.op.into(),
        method: s.method.into(),
        pattern: s.pattern.into(),
        cache: s.cache.into(),
        direct: s.direct,
        block_size_bytes: s.block_size_bytes,
        threads: s.threads,
        // Synchronous methods have one operation in flight per thread, whatever was asked.
        queue_depth: caps.queue_depth(s.queue_depth),
        buffers: s.buffers.into(),
        rate_iops: None,
        mix_read_pct: None,
        write_sync: Some(spec.write_sync()).filter(|w| *w != WriteSync::None),
        submit: (caps.queued && s.submit != SubmitPolicy::DEFAULT).then_some(s.submit),
        prealloc: (s.op == Op::Write && s.prealloc != Prealloc::Native).then_some(s.prealloc),
        arrival: (s.rate_iops.is_some() && s.arrival != Arrival::Constant).then_some(s.arrival),
        checksum: (s.checksum != Checksum::DEFAULT).then_some(s.checksum),
    }
}

/// A record with the setup columns of `spec` filled in and no measurement yet.
pub fn setup_result(spec: &RunSpec, file_size_bytes: u64) -> RunResult {
    RunResult {
        identity: Identity {
            host: host_name(),
            file: spec.target.path.display().to_string(),
            file_size_bytes,
            rep: 1,
            ..Default::default()
        },
        setup: recorded_setup(spec),
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
                if let Some(m) = &mut r.mix {
                    m.mix_read_pct_done = Some(0.0);
                }
            }
            if let Some(asked) = spec.setup.rate() {
                r.set_open_loop(asked, 0, &LatencySummary::default());
                // Filled after the run, from its timeline (`runner::Ended::result`).
                if let Some(o) = &mut r.open_loop {
                    o.resp_p99_no_burst_us = Some(0.0);
                }
            }
            // Every run carries its facts (`runner::Ended::result`).
            r.facts = Some(crate::facts::Section::with_every_column());
            if let Some(by) = spec.kernel {
                // Filled after the run, from its timeline (`runner::Ended::result`).
                r.set_kernel(&crate::measure::kernel::KernelSection::absent_of(by));
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
    let mut r = setup_result(spec, prepared_meta.file_size);
    r.identity.experiment = experiment.to_string();
    r.figures = Figures {
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
        ..Default::default()
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
            (
                r.setup.write_sync,
                r.setup.submit,
                r.setup.prealloc,
                r.setup.arrival
            ),
            (None, None, None, None)
        );
        w.setup.write_sync = WriteSync::DsyncAndFsync;
        w.setup.prealloc = Prealloc::None;
        w.setup.rate_iops = Some(crate::config::Iops(100.0));
        w.setup.arrival = Arrival::Poisson;
        let r = setup_result(&w, 0);
        assert_eq!(r.setup.write_sync, Some(WriteSync::DsyncAndFsync));
        assert_eq!(r.setup.prealloc, Some(Prealloc::None));
        assert_eq!(r.setup.arrival, Some(Arrival::Poisson));
        // A read has no write sync; a pread has no submission policy.
        let mut read = RunSpec::new("/x");
        read.setup.write_sync = WriteSync::FsyncAtEnd;
        read.setup.submit = SubmitPolicy::Batch;
        let r = setup_result(&read, 0);
        assert_eq!((r.setup.write_sync, r.setup.submit), (None, None));
        read.setup.method = Method::IoUring;
        assert_eq!(
            setup_result(&read, 0).setup.submit,
            Some(SubmitPolicy::Batch)
        );
    }

    #[test]
    fn points_name_the_optional_columns_their_rows_will_write() {
        let pread = RunSpec::new("/x");
        let facts = optional_columns(std::slice::from_ref(&pread));
        assert_eq!(facts.first().map(String::as_str), Some("run_read_bytes"));
        let mut uring = pread.clone();
        uring.setup.method = Method::IoUring;
        uring.setup.submit = SubmitPolicy::Batch;
        assert_eq!(
            optional_columns(&[pread.clone(), uring]),
            [vec!["submit".to_string()], facts.clone()].concat()
        );
        let mut mixed = pread.clone();
        mixed.setup.op = Op::Write;
        mixed.setup.mix_read_pct = Some(70);
        assert_eq!(
            optional_columns(&[pread, mixed]),
            [RunResult::mixed_columns(), facts].concat()
        );
    }
}
