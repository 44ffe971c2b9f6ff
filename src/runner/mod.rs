//! The runner: the one run lifecycle. Every measurement of a file — the CLI's `run` and `run2`,
//! each repetition of a sweep, each pass of the explorer (UI), the explain layer's ceilings, a
//! fleet rank's share — goes through [`Run`], so preparing, starting, collecting, stopping and
//! deciding whether a run can be trusted are written once:
//!
//! 1. **prepare** ([`prepare`]): check and open the file (one descriptor per worker), create a
//!    write's output without ever replacing a file unasked, apply the cache mode, measure
//!    residency, fit the buffers to the memory budget and make them — all before any clock.
//! 2. **start** ([`Run::start`], or [`Run::start_prepared`] after a fleet's barrier): one OS
//!    thread per worker, each recording into its own [`crate::measure::WorkerCtx`] and sending a
//!    [`Snapshot`] every [`SNAPSHOT_INTERVAL`] over one channel.
//! 3. **collect**: the caller takes snapshots — blocking ([`Run::run_to_end`]) or stepping
//!    ([`Run::poll`], [`Run::try_next`]) — and the run folds each into its [`Aggregate`].
//!    [`Run::stop`] ends it early (a worker that fails raises the same flag).
//! 4. **end** ([`Run::end`] / [`Run::finish`]): join the workers, fsync a write, check that a
//!    read run's file did not change ([`FileChanged`]) and a write run's file is still at its
//!    path ([`FileReplaced`]), then the verdict, decided in one place (`error.rs`): a worker's
//!    error first, then a changed or replaced file, each a [`RunFailed`] carrying the bytes done
//!    and planned and the I/O error kind (a full disk is told by its kind, never its words).
//! 5. **result** ([`make_result`]): the one [`crate::measure::RunResult`] record.
//!
//! How the front ends use it:
//! - the CLI (`lab/throughput/run_command.rs`, `run2_command.rs`): [`Run::start`] then [`Run::run_to_end`]
//!   ([`run_blocking`] is that, as one call);
//! - the sweep (`sweep/exec.rs`): warms the file outside the clock, [`Run::start`], then
//!   [`Run::poll`] while watching Ctrl-C, [`Run::stop`] on it, and [`Run::finish`];
//! - the UI (`tui/session.rs`): a session thread [`Run::poll`]s a short while between looks at
//!   the UI's commands and forwards each snapshot; a cold read that is not looping is chained —
//!   when one [`Run`] ends, the next pass is a new [`Run`] (preparing it evicts the file again)
//!   whose times are shifted to the first pass's origin ([`Run::started`]).
//!
//! The per-operation state lives below, in [`crate::measure::WorkerCtx`], so the engines record
//! through it without knowing this module; only snapshots leave a worker thread, so measuring
//! costs one clock read and one histogram increment per I/O and no shared writes.

mod budget;
mod error;
mod prepare;
mod result;
mod run;
mod watch;
mod workers;

pub use crate::measure::{NO_LATENCY_ENV, SNAPSHOT_INTERVAL};
pub use budget::{
    buffer_bytes, check_budget, describe_fits, fitted, limit_of, mem_available_bytes,
    BudgetExceeded, Share,
};
pub use error::{FailureCause, FileReplaced, RunError, RunFailed};
pub use prepare::{prepare, test_hook, Prepared, PreparedMeta, DEFAULT_WRITE_SPAN};
pub use result::{host_name, make_result, optional_columns, setup_result};
pub use run::{Ended, Run, RunOutcome, Step};
pub use watch::{FileChanged, FileWatch};

use crate::config::spec::RunSpec;
use crate::measure::{Aggregate, Snapshot};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs `spec` to the end on the calling thread ([`Run::start`] then [`Run::run_to_end`]),
/// calling `on_snapshot` for every snapshot. Fails if a worker failed (a [`RunFailed`] naming the
/// operation and offset and the bytes done so far, reachable with `downcast_ref`).
pub fn run_blocking(
    spec: &RunSpec,
    experiment: &str,
    stop: Arc<AtomicBool>,
    on_snapshot: impl FnMut(&Snapshot, &Aggregate),
) -> anyhow::Result<RunOutcome> {
    Run::start(spec, experiment, stop)?
        .run_to_end(on_snapshot)
        .map_err(RunError::into_anyhow)
}
