//! Runs the points of a throughput or command experiment and hands every finished repetition to
//! a callback, which writes it to the CSV at once. A failed repetition becomes a row with its
//! error and the sweep goes on; the global stop flag (Ctrl-C) ends the run in progress within
//! ~100 ms and that unfinished repetition is dropped, so the CSV holds only complete runs. One
//! repetition of a throughput point is one [`Run`] of the runner's lifecycle.

use super::experiment::{CommandPlan, Experiment, Row};
use super::files::{self, FilePlan};
use super::progress::Progress;
use super::wait::{warm_interruptibly, POLL};
use crate::config::spec::RunSpec;
use crate::config::{CacheMode, Op};
use crate::measure::result::Label;
use crate::measure::RunResult;
use crate::runner::{FailureCause, Run, RunError, RunFailed, Step};
use anyhow::{anyhow, Context};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Measures one repetition of a point on the file: its row, or None when the sweep was stopped
/// during it; warnings (a cold run that was not cold) go to the vector.
pub type MeasurePoint<'a> =
    dyn Fn(&RunSpec, &FilePlan, &mut Vec<String>) -> anyhow::Result<Option<RunResult>> + 'a;

/// Runs every point of a throughput or command experiment `x.reps` times, measuring each
/// repetition with `measure` and emitting its row as soon as it is done. A failed repetition
/// becomes a row with its error; a stopped one is dropped and the function returns.
#[allow(clippy::too_many_arguments)]
pub fn run_points(
    x: &Experiment,
    file: Option<&FilePlan>,
    stop: &Arc<AtomicBool>,
    progress: &mut Progress,
    emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
    label_of: &(dyn Fn(&RunSpec) -> String + '_),
    measure: &MeasurePoint<'_>,
) -> anyhow::Result<()> {
    let file = file.context("a throughput or command experiment needs a file")?;
    for spec in &x.points {
        let label = label_of(spec);
        for rep in 1..=x.reps {
            if stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            progress.begin(&format!("{label} rep {rep}/{}", x.reps));
            let mut warnings = Vec::new();
            let outcome = measure(spec, file, &mut warnings);
            if spec.setup.op == Op::Write {
                files::after_write(file, &AtomicBool::new(false))
                    .context("restoring the file after a write")?;
            }
            let mut r = match outcome {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(()),
                Err(e) => failed_result(spec, file, x.command.as_ref(), e),
            };
            r.identity.experiment = x.name.clone();
            r.identity.rep = rep;
            for w in warnings {
                progress.note(&format!("{label} rep {rep}: {w}"));
            }
            progress.finish_run(&format!("{label} rep {rep}/{}", x.reps), &run_outcome(&r));
            // The verdict from the run's own facts (rows the runner measured), then the bound
            // columns (empty without a profile).
            crate::explain::judge_result(&mut r);
            crate::explain::annotate(&mut r);
            emit(Row::Run(r))?;
        }
    }
    Ok(())
}

/// One repetition of a throughput point; None when the sweep was stopped during it.
/// Warnings of the runner (a cold run that was not cold) go to `warnings`.
pub fn run_point(
    spec: &RunSpec,
    experiment: &str,
    stop: &AtomicBool,
    warnings: &mut Vec<String>,
) -> anyhow::Result<Option<RunResult>> {
    // Warm here (interruptibly) and let the runner take the file as it is.
    let warm = spec.setup.op == Op::Read && spec.setup.cache == CacheMode::Warm;
    let mut spec = spec.clone();
    if warm {
        let len = std::fs::metadata(&spec.target.path)
            .map(|m| m.len())
            .unwrap_or(0);
        if !warm_interruptibly(&spec.target.path, len, stop)? {
            return Ok(None);
        }
        spec.setup.cache = CacheMode::AsIs;
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
        r.setup.cache = CacheMode::Warm.into();
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
    let mut r = crate::runner::setup_result(spec, file.size_bytes);
    if let Some(cmd) = command {
        r.setup.method = Label::of_text(&super::command::program_of(&cmd.template));
    }
    r.figures.error = format!("{e:#}").replace('\n', " ");
    r
}

/// `exp: read pread warm 4K x1` for progress lines.
pub fn point_label(exp: &str, s: &RunSpec) -> String {
    let bs = crate::size::format_size(s.setup.block_size_bytes);
    format!(
        "{exp}: {} {} {} {}{} bs {bs} t{}{}{}",
        // A mix is written through the write path: say the mix and its share, not `write`.
        match s.setup.mix_read_pct {
            Some(pct) => format!("mix {pct}/{}", 100 - pct),
            None => s.setup.op.to_string(),
        },
        s.setup.method,
        s.setup.pattern,
        s.setup.cache,
        if s.setup.direct { " direct" } else { "" },
        s.setup.threads,
        if crate::engine::caps(s.setup.method).queued {
            format!(" qd{}", s.setup.queue_depth)
        } else {
            String::new()
        },
        match s.setup.rate() {
            Some(r) => format!(" @{r:.0}/s {}", s.setup.arrival),
            None => String::new(),
        }
    )
}

fn run_outcome(r: &RunResult) -> String {
    if !r.figures.error.is_empty() {
        format!("FAILED: {}", r.figures.error)
    } else if let (Some(asked), Some(p99)) =
        (r.setup.rate(), r.open_loop.as_ref().map(|o| o.resp_p99_us))
    {
        // Open loop: the rate it kept and the response time its users waited.
        format!(
            "{:.1} MiB/s, {:.0} of {asked:.0} IOPS, response p99 {p99:.0} µs (service {:.0} µs){}",
            r.figures.mib_s,
            r.open_loop
                .as_ref()
                .map(|o| o.rate_iops_achieved)
                .unwrap_or(r.figures.iops),
            r.figures.lat_p99_us,
            if r.fell_behind() == Some(true) {
                ", fell behind"
            } else {
                ""
            }
        )
    } else {
        format!("{:.1} MiB/s, {:.0} IOPS", r.figures.mib_s, r.figures.iops)
    }
}
