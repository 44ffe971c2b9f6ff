//! How the points of a sweep are measured: the [`PointRunner`] the executor
//! ([`super::run::run`]) drives, and the [`LocalRunner`] (each kind runs its experiments in
//! this process). The fleet's runner is `super::fleet::FleetRunner`. A runner decides how a
//! point is measured and who writes; it never sees the lock, the output checks or the
//! exporters, so no runner can skip them.

use super::experiment::{Experiment, Plan, Row};
use super::files::{self, FilePlan, TestFile};
use super::progress::Progress;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the runner made ready before the first point.
pub enum Prepared {
    /// The test file is ready; the guard removes what was created for the sweep when dropped.
    Ready(Option<TestFile>),
    /// Stopped (Ctrl-C) while making it.
    Interrupted,
    /// Another process (a fleet's rank 0) failed or refused the setup and reports it; this one
    /// ends with this status.
    Abandoned(i32),
}

/// The columns of an experiment's per-repetition CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// [`crate::measure::RunResult`]'s, with every optional column the experiment's points
    /// will write (a mixed point's per-direction columns, an open-loop point's, a non-default
    /// setting's: `runner::optional_columns`) on every row, empty where a row has none.
    Runs,
    /// [`SyscallRow`]'s.
    Syscalls,
    /// [`crate::measure::RunResult`]'s with the fleet's columns (rank, clients, layout, the
    /// ranks' spread).
    FleetRuns,
    /// [`FleetRuns`](Columns::FleetRuns)' and a mixed point's per-direction columns, on every
    /// row (a failed point's row has them empty).
    FleetMixedRuns,
}

/// How the points of a sweep are measured: in this process, or by every rank of a fleet. The
/// executor ([`run`]) does everything else the same way for both.
pub trait PointRunner {
    /// Whether this process prints the plan and the summary and writes `--out` (a local sweep:
    /// yes; a fleet: rank 0, while the other ranks measure and send it their reports). A process
    /// that writes nothing reports no refusal either: the one that writes does.
    fn writes_outputs(&self) -> bool {
        true
    }
    /// Refuses a plan this runner cannot run, before anything is created.
    fn check(&self, _plan: &Plan) -> anyhow::Result<()> {
        Ok(())
    }
    /// Lines printed below the plan (a fleet: its ranks, hosts and layout).
    fn describe(&self) -> String {
        String::new()
    }
    /// The output directory was refused (`why`) after `check`: tells whoever waits on this
    /// process (a fleet's other ranks, at their first barrier) that nothing will run.
    fn refuse(&self, _why: &str) {}
    /// Makes the test file ready (creating it when the plan asks), once `--out` is locked and
    /// checked.
    fn prepare(&self, plan: &Plan, stop: &AtomicBool) -> anyhow::Result<Prepared>;
    /// The columns of `x`'s per-repetition CSV.
    fn columns(&self, x: &Experiment) -> Columns {
        if x.kind.traits().syscall_rows {
            Columns::Syscalls
        } else {
            Columns::Runs
        }
    }
    /// Runs experiment `x`, handing every finished repetition to `emit` as it ends. Returns
    /// early (Ok) when `stop` is raised; `Some(why)` when the sweep cannot go on.
    fn run_experiment(
        &self,
        x: &Experiment,
        file: Option<&FilePlan>,
        stop: &Arc<AtomicBool>,
        progress: &mut Progress,
        emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
    ) -> anyhow::Result<Option<String>>;
    /// What a failed row is, for the closing line (`run`, `point`).
    fn unit(&self) -> &'static str {
        "run"
    }
    /// The exit status of a process that writes nothing, once the sweep ended (a fleet rank
    /// other than 0: 0, or 1 when rank 0 is gone and nobody else will report).
    fn status(&self) -> i32 {
        0
    }
}

/// Every experiment in this process: each kind runs its own (`SweepKind::run`).
#[derive(Debug, Default)]
pub struct LocalRunner;

impl PointRunner for LocalRunner {
    fn prepare(&self, plan: &Plan, stop: &AtomicBool) -> anyhow::Result<Prepared> {
        let Some(f) = &plan.file else {
            return Ok(Prepared::Ready(None));
        };
        // `materialize` says "creating the test file …" when it creates one (not when it
        // reuses one).
        match files::materialize(f, stop) {
            Ok(g) => Ok(Prepared::Ready(g)),
            Err(_) if stop.load(Ordering::SeqCst) => Ok(Prepared::Interrupted),
            Err(e) => Err(e),
        }
    }

    fn run_experiment(
        &self,
        x: &Experiment,
        file: Option<&FilePlan>,
        stop: &Arc<AtomicBool>,
        progress: &mut Progress,
        emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
    ) -> anyhow::Result<Option<String>> {
        x.kind.run(x, file, stop, progress, emit)?;
        Ok(None)
    }
}
