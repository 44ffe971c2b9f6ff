//! Runs one experiment of a plan and hands every finished repetition to a callback, which writes
//! it to the CSV at once. A failed repetition becomes a row with its error and the sweep goes on;
//! the global stop flag (Ctrl-C) ends the run in progress within ~100 ms and that unfinished
//! repetition is dropped, so the CSV holds only complete runs.

use super::files::{self, FilePlan};
use super::plan::{CommandPlan, Experiment, Kind};
use super::progress::Progress;
use super::wait::{spawn_result, wait_or_stop, warm_interruptibly, POLL};
use crate::config::{CacheMode, Op, RunSpec};
use crate::export::SyscallRow;
use crate::measure::result::Label;
use crate::measure::RunResult;
use crate::runner::{host_name, FailureCause, Run, RunError, RunFailed, Step};
use anyhow::{anyhow, Context};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A finished repetition. (A `RunResult` is much bigger than a `SyscallRow`, and rows are few:
/// boxing would buy nothing.)
#[allow(clippy::large_enum_variant)]
pub enum Row {
    Run(RunResult),
    Syscall(SyscallRow),
}

/// Whether the experiment ran to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Completed,
    Interrupted,
}

/// Runs `x`, calling `emit` for every repetition as it finishes.
pub fn run_experiment(
    x: &Experiment,
    file: Option<&FilePlan>,
    stop: &Arc<AtomicBool>,
    progress: &mut Progress,
    emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
) -> anyhow::Result<Ended> {
    match x.kind {
        Kind::Throughput | Kind::Command => {
            let file = file.context("a throughput or command experiment needs a file")?;
            for spec in &x.points {
                let label = point_label(&x.name, spec, x.kind);
                for rep in 1..=x.reps {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(Ended::Interrupted);
                    }
                    progress.begin(&format!("{label} rep {rep}/{}", x.reps));
                    let mut warnings = Vec::new();
                    let outcome = match &x.command {
                        Some(cmd) => super::command::run_command(spec, cmd, file, stop),
                        None => run_point(spec, &x.name, stop, &mut warnings),
                    };
                    if spec.op == Op::Write {
                        files::after_write(file, &AtomicBool::new(false))
                            .context("restoring the file after a write")?;
                    }
                    let mut r = match outcome {
                        Ok(Some(r)) => r,
                        Ok(None) => return Ok(Ended::Interrupted),
                        Err(e) => failed_result(spec, file, x.command.as_ref(), e),
                    };
                    r.experiment = x.name.clone();
                    r.rep = rep;
                    for w in warnings {
                        progress.note(&format!("{label} rep {rep}: {w}"));
                    }
                    progress.finish_run(&format!("{label} rep {rep}/{}", x.reps), &run_outcome(&r));
                    crate::explain::annotate(&mut r); // bound columns, empty without a profile
                    emit(Row::Run(r))?;
                }
            }
        }
        Kind::Syscalls => {
            let file = file.context("the syscalls experiment needs a file")?;
            for rep in 1..=x.reps {
                progress.begin(&format!("{} rep {rep}/{}", x.name, x.reps));
                // The kind's own parameters: the sweep is an adapter over `lab::syscalls`.
                let params = crate::lab::syscalls::SyscallsParams {
                    file: Some(file.path.clone()),
                    seconds: x.seconds,
                    csv: false,
                    json: false,
                };
                let rx = spawn_result(move || crate::lab::syscalls::run(&params).map(|(_, v)| v));
                let Some(result) = wait_or_stop(&rx, stop) else {
                    return Ok(Ended::Interrupted);
                };
                let rows = match result {
                    Ok(v) => v,
                    Err(e) => {
                        let r = SyscallRow {
                            experiment: x.name.clone(),
                            rep,
                            error: format!("{e:#}"),
                            ..Default::default()
                        };
                        progress.finish_run(
                            &format!("{} rep {rep}", x.name),
                            &format!("FAILED: {}", r.error),
                        );
                        emit(Row::Syscall(r))?;
                        continue;
                    }
                };
                progress.finish_run(
                    &format!("{} rep {rep}/{}", x.name, x.reps),
                    &format!("{} calls measured", rows.len()),
                );
                for s in rows {
                    emit(Row::Syscall(SyscallRow {
                        experiment: x.name.clone(),
                        host: host_name(),
                        file: file.path.display().to_string(),
                        syscall: s.syscall,
                        rep,
                        calls: s.calls,
                        seconds: s.seconds,
                        calls_per_s: s.calls_per_s,
                        ns_per_call: s.ns_per_call,
                        error: String::new(),
                    }))?;
                }
            }
        }
        Kind::Locality => {
            progress.begin(&x.name);
            let mut emit_run = |r: RunResult| emit(Row::Run(r));
            if let Err(e) = crate::locality::run_sweep_experiment(
                &x.name,
                x.locality
                    .as_ref()
                    .context("the locality experiment was not planned")?,
                stop,
                &mut emit_run,
            ) {
                if stop.load(Ordering::Relaxed) {
                    return Ok(Ended::Interrupted);
                }
                let r = RunResult {
                    experiment: x.name.clone(),
                    host: host_name(),
                    error: format!("{e:#}"),
                    ..Default::default()
                };
                progress.finish_run(&x.name, &format!("FAILED: {}", r.error));
                emit(Row::Run(r))?;
            } else {
                progress.finish_run(&x.name, "done");
            }
        }
    }
    Ok(if stop.load(Ordering::Relaxed) {
        Ended::Interrupted
    } else {
        Ended::Completed
    })
}

/// One repetition of a throughput point; None when the sweep was stopped during it.
/// Warnings of the runner (a cold run that was not cold) go to `warnings`.
fn run_point(
    spec: &RunSpec,
    experiment: &str,
    stop: &AtomicBool,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Option<RunResult>> {
    // Warm here (interruptibly) and let the runner take the file as it is.
    let warm = spec.op == Op::Read && spec.cache == CacheMode::Warm;
    let mut spec = spec.clone();
    if warm {
        let len = std::fs::metadata(&spec.path).map(|m| m.len()).unwrap_or(0);
        if !warm_interruptibly(&spec.path, len, stop)? {
            return Ok(None);
        }
        spec.cache = CacheMode::AsIs;
    }
    // The run gets its own flag: a failing worker raises it, and that must not look like Ctrl-C.
    let mut run = Run::start(&spec, experiment, Arc::new(AtomicBool::new(false)))?;
    warnings.extend(
        run.notes()
            .iter()
            .filter(|n| n.starts_with("warning"))
            .cloned(),
    );
    let mut interrupted = false;
    while !matches!(run.poll(POLL), Step::Ended) {
        if !interrupted && stop.load(Ordering::Relaxed) {
            run.stop();
            interrupted = true;
        }
    }
    let mut r = match run.finish() {
        // A stopped repetition is dropped, unless its file changed or was replaced under it.
        Ok(_)
        | Err(RunError::Failed(RunFailed {
            cause: FailureCause::Worker,
            ..
        })) if interrupted => return Ok(None),
        Ok(outcome) => outcome.result,
        // The row's error column has the message alone, as it always had.
        Err(RunError::Failed(failed)) => return Err(anyhow!("{}", failed.message)),
        Err(RunError::Other(e)) => return Err(e),
    };
    if warm {
        r.cache = CacheMode::Warm.into();
    }
    Ok(Some(r))
}

/// The row of a repetition that failed before or while running; a command's row names its
/// program as the method, like the rows of its runs that finished.
fn failed_result(
    spec: &RunSpec,
    file: &FilePlan,
    command: Option<&CommandPlan>,
    e: anyhow::Error,
) -> RunResult {
    let setup = crate::runner::setup_result(spec, file.size_bytes);
    RunResult {
        method: match command {
            Some(cmd) => Label::of_text(&super::command::program_of(&cmd.template)),
            None => setup.method.clone(),
        },
        error: format!("{e:#}").replace('\n', " "),
        ..setup
    }
}

/// `exp: read pread warm 4K x1` for progress lines.
pub fn point_label(exp: &str, s: &RunSpec, kind: Kind) -> String {
    let bs = crate::size::format_size(s.block_size_bytes);
    if kind == Kind::Command {
        return format!("{exp}: command {} bs {bs}", s.cache);
    }
    format!(
        "{exp}: {} {} {} {}{} bs {bs} t{}{}",
        s.op,
        s.method,
        s.pattern,
        s.cache,
        if s.direct { " direct" } else { "" },
        s.threads,
        if s.method == crate::config::Method::IoUring {
            format!(" qd{}", s.queue_depth)
        } else {
            String::new()
        }
    )
}

fn run_outcome(r: &RunResult) -> String {
    if r.error.is_empty() {
        format!("{:.1} MiB/s, {:.0} IOPS", r.mib_s, r.iops)
    } else {
        format!("FAILED: {}", r.error)
    }
}
