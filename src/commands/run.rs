//! `run FILE -r|-w BLOCK_SIZE BLOCK_COUNT`: the lab's first program. Prints the XOR of the data on
//! stdout, alone; throughput and the setup on stderr. With `--checksum none` stdout stays empty
//! (the data was never read back, so there is no XOR to print) and stderr says so.

use crate::config::spec::RunSpec;
use crate::config::Op;
use crate::fsguard::Created;
use crate::lab::println_stdout;
use crate::lab::throughput::{spec_of, summary_line, RunArgs};
use crate::runner::{Run, RunError, RunFailed};
use crate::xor::format_xor;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::config::EXIT_INTERRUPTED;

pub fn execute(a: &RunArgs) -> anyhow::Result<i32> {
    // Under mpirun/srun (built with `--features mpi`): the point on every rank, src/fleet/.
    #[cfg(feature = "mpi")]
    if let Some(fleet) = crate::fleet::join(a.fleet.options()?)? {
        return super::fleet_run::execute(a, fleet);
    }
    #[cfg(not(feature = "mpi"))]
    a.fleet.refuse_any()?;
    let spec = spec_of(a)?;
    let t = &a.timeline;
    let mut timeline = crate::export::timeline::TimelineOutputs::open(
        t.timeline_csv.as_deref(),
        &t.interval,
        t.log_ops.as_deref(),
    )?;
    let existed = spec.target.path.exists();
    let size_before = std::fs::metadata(&spec.target.path)
        .map(|m| m.len())
        .unwrap_or(0);
    let stop = Arc::new(AtomicBool::new(false));
    // Ctrl-C (and SIGTERM, SIGHUP) stops the workers within one operation; the run then ends
    // here, where a write's partial file is removed (or kept with --keep-partial) and said so.
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let (stop, interrupted) = (stop.clone(), interrupted.clone());
        // Replaces an earlier run's reaction (tests calling this twice in one process).
        crate::interrupt::on_signal(move |_| {
            interrupted.store(true, Ordering::SeqCst);
            stop.store(true, Ordering::SeqCst);
        });
    }
    let mut created = None;
    let result = Run::start(&spec, "run", stop).and_then(|mut run| {
        created = run.created().cloned();
        run.set_timeline_interval(timeline.interval);
        if let Some(log) = timeline.take_log() {
            run.log_ops_to(log);
        }
        run.run_to_end(|_, _| {}).map_err(RunError::into_anyhow)
    });
    // Only a run that started (its workers ran, so its output file is the one it created or,
    // with --force, replaced) has a partial file to deal with; a run that failed before that
    // reports its own error and touches nothing.
    let started = match &result {
        Ok(_) => true,
        Err(e) => e.downcast_ref::<RunFailed>().is_some(),
    };
    if interrupted.load(Ordering::SeqCst) && started {
        let msg = interrupted_message(&spec, created.as_ref(), existed, a.keep_partial);
        eprintln!("{msg}");
        return Ok(EXIT_INTERRUPTED);
    }
    let outcome = match result {
        Ok(o) => o,
        Err(e) => return Err(cleanup_failed_write(&spec, created.as_ref(), existed, e)),
    };
    for n in &outcome.notes {
        eprintln!("{n}");
    }
    let r = &outcome.result;
    // `None` only with `--checksum none`: no worker folded an XOR, so none is printed.
    let xor = outcome
        .aggregate
        .xor()
        .or_else(|| outcome.aggregate.xor_of_read_data());
    if a.json {
        let doc = crate::explain::json::run_document("run", &spec, r, &outcome.notes)?;
        println_stdout(&crate::export::timeline::with_timeline(&doc, r)?)?;
    } else if let Some(mix) = crate::lab::throughput::mix_answer(r) {
        // A mix has no XOR that means anything (see `mix_answer`): its answer is the mix done.
        println_stdout(&mix)?;
    } else if let Some(x) = xor {
        println_stdout(&format_xor(x))?;
    }
    eprintln!("{}", summary_line(&spec, r));
    if !spec.setup.checksum.xors() {
        eprintln!("{}", crate::lab::throughput::CHECKSUM_NONE_LINE);
    }
    for line in crate::lab::throughput::mix_lines(r) {
        eprintln!("{line}");
    }
    for line in crate::lab::throughput::open_loop_lines(r) {
        eprintln!("{line}");
    }
    if a.fio {
        let total = crate::fio::total_bytes_of(&spec, size_before);
        eprintln!("{}", crate::fio::fio_command(&spec, total));
    }
    for line in crate::explain::stderr_lines(&spec.target.path, r) {
        eprintln!("{line}");
    }
    for line in crate::explain::verdict::lines_of(r) {
        eprintln!("{line}");
    }
    for line in timeline.finish(r, outcome.ops_log_error.as_deref())? {
        eprintln!("{line}");
    }
    Ok(0)
}

/// What happened to the output of a run stopped by a signal: a write's partial file (the one
/// this run created or, with --force, replaced, while the path still names it) is removed unless
/// `keep_partial`; a read prints no XOR since it did not cover the file.
fn interrupted_message(
    spec: &RunSpec,
    created: Option<&Created>,
    existed: bool,
    keep_partial: bool,
) -> String {
    let p = spec.target.path.display();
    if spec.setup.op != Op::Write {
        return format!("interrupted: stopped reading {p} before the end; no XOR is printed");
    }
    let Some(created) = created else {
        // A device or batch mode's kept test file: never removed.
        return format!("interrupted: stopped writing {p}");
    };
    if !created.is_intact() {
        return format!(
            "interrupted: stopped writing {p}; the path no longer names the file this run \
             created (another process replaced it), so it was left alone"
        );
    }
    let replaced = if existed {
        " (it replaced an existing file)"
    } else {
        ""
    };
    if keep_partial {
        return format!("interrupted: kept the partial file {p}{replaced} (--keep-partial)");
    }
    if created.remove() {
        format!(
            "interrupted: removed the partial file {p}{replaced}; pass --keep-partial to keep it"
        )
    } else {
        format!(
            "interrupted: could not remove the partial file {p} (or it was replaced meanwhile); \
             left alone"
        )
    }
}

/// After a failed write, removes the partial file this run made (only while the path still
/// names it) and says so in the error, so a full disk never leaves a silent half-written file.
fn cleanup_failed_write(
    spec: &RunSpec,
    created: Option<&Created>,
    existed: bool,
    e: anyhow::Error,
) -> anyhow::Error {
    if spec.setup.op != Op::Write {
        return e;
    }
    let Some(failed) = e.downcast_ref::<RunFailed>() else {
        return e;
    };
    let what = if failed.is_disk_full() {
        "disk full"
    } else {
        "write failed"
    };
    let Some(created) = created else {
        return anyhow::anyhow!("{what} writing {}: {failed}", spec.target.path.display());
    };
    let fate = if !created.is_intact() {
        "the path no longer names the file this run created, so it was left alone"
    } else if created.remove() {
        "removed the partial file"
    } else {
        "could not remove the partial file"
    };
    let replaced = if existed {
        " (it replaced an existing file)"
    } else {
        ""
    };
    anyhow::anyhow!(
        "{what} writing {}: {}; {} bytes of {} were written; {fate}{replaced}",
        spec.target.path.display(),
        failed.message,
        failed.bytes_done,
        failed.bytes_planned
    )
}
