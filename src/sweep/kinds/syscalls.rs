//! `kind = "syscalls"`: the cost of a system call, measured by the lab kind `lab::syscalls` on
//! the sweep's file, `seconds` per call and repetition. The sweep only adapts: it builds the
//! kind's own [`SyscallsParams`] and turns each measured call into a CSV row.

use crate::explain::provenance::Provenance;
use crate::export::chart::{syscalls_chart, Chart};
use crate::export::csv::to_csv_tidy;
use crate::export::{summarize_syscalls, SyscallRow};
use crate::lab::syscalls::SyscallsParams;
use crate::runner::host_name;
use crate::sweep::experiment::{Collected, Experiment, Row, SweepKind, Traits};
use crate::sweep::files::FilePlan;
use crate::sweep::layered::Layered;
use crate::sweep::progress::Progress;
use crate::sweep::wait::{spawn_result, wait_or_stop};
use anyhow::{anyhow, Context};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Debug)]
pub struct Syscalls;

impl SweepKind for Syscalls {
    fn name(&self) -> &'static str {
        "syscalls"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["reps", "seconds"]
    }

    fn traits(&self) -> Traits {
        Traits {
            syscall_rows: true,
            ..Traits::default()
        }
    }

    fn default_seconds(&self) -> f64 {
        0.25
    }

    fn plan(&self, _: &Layered, _: Option<&FilePlan>, _: &mut Experiment) -> anyhow::Result<()> {
        Ok(()) // reps and seconds are all it takes, checked by the planner
    }

    fn estimate_s(&self, x: &Experiment) -> Option<f64> {
        // Eight calls are measured, `seconds` each.
        Some(self.runs(x) as f64 * 8.0 * x.seconds)
    }

    fn run(
        &self,
        x: &Experiment,
        file: Option<&FilePlan>,
        stop: &Arc<AtomicBool>,
        progress: &mut Progress,
        emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let file = file.context("the syscalls experiment needs a file")?;
        for rep in 1..=x.reps {
            progress.begin(&format!("{} rep {rep}/{}", x.name, x.reps));
            let params = SyscallsParams {
                file: Some(file.path.clone()),
                seconds: x.seconds,
                csv: false,
                json: false,
                export: Default::default(),
                force: false,
            };
            let rx = spawn_result(move || crate::lab::syscalls::run(&params).map(|(_, v)| v));
            let Some(result) = wait_or_stop(&rx, stop) else {
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                return Err(anyhow!(
                    "the system call measurement ended without a result"
                ));
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
                    verdict: s.verdict,
                    reasons: s.reasons,
                    why: s.why,
                }))?;
            }
        }
        Ok(())
    }

    fn summary(
        &self,
        x: &Experiment,
        rows: &Collected,
        _known: &Provenance,
    ) -> anyhow::Result<(String, Option<Chart>)> {
        Ok((
            to_csv_tidy(&summarize_syscalls(&rows.syscalls))?,
            syscalls_chart(
                &format!("{}: cost of a system call", x.name),
                &rows.syscalls,
            ),
        ))
    }
}
