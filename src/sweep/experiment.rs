//! One experiment of a sweep, planned: its kind ([`SweepKind`], the interface every kind of
//! `sweep::kinds` implements), its points (validated [`RunSpec`]s), the limits on how many there
//! may be, and the rows it produces. Below the kinds: the planner (`plan`, `points`) builds
//! experiments, the kinds run them, the writers (`output`) read them.

use super::files::FilePlan;
use super::layered::Layered;
use super::progress::Progress;
use crate::config::spec::RunSpec;
use crate::export::chart::Chart;
use crate::export::SyscallRow;
use crate::measure::RunResult;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// One kind of experiment (`kind = "..."` in a sweep file): the keys it takes, how its points
/// are planned, how it runs and what it writes. Each kind is one module of `sweep::kinds`,
/// listed once in [`super::kinds::ALL`]; nothing else in the sweep matches on kinds.
pub trait SweepKind: Sync + std::fmt::Debug {
    /// Its name in the sweep file.
    fn name(&self) -> &'static str;
    /// Keys an experiment of this kind may set (besides `name` and `kind`).
    fn keys(&self) -> &'static [&'static str];
    /// What it needs and writes (see [`Traits`]).
    fn traits(&self) -> Traits;
    /// `seconds` when neither the experiment nor `[defaults]` sets it.
    fn default_seconds(&self) -> f64 {
        2.0
    }
    /// Repetitions, from `reps` (a kind that repeats inside its own run says 1).
    fn reps(&self, l: &Layered) -> anyhow::Result<u32> {
        l.reps()
    }
    /// Fills in the experiment's points or parameters from its keys. Every problem of the
    /// experiment is found here, before any I/O, and names its `FILE:LINE: key`.
    fn plan(&self, l: &Layered, file: Option<&FilePlan>, x: &mut Experiment) -> anyhow::Result<()>;
    /// Runs of the experiment (what the progress bar counts).
    fn runs(&self, x: &Experiment) -> usize {
        if self.traits().has_points {
            x.points.len() * x.reps as usize
        } else {
            x.reps as usize
        }
    }
    /// Estimated seconds, when the time bound makes it predictable.
    fn estimate_s(&self, _x: &Experiment) -> Option<f64> {
        None
    }
    /// Runs the experiment, calling `emit` for every repetition as it finishes. Returns early
    /// (Ok) when `stop` is raised; the caller tells an interrupted run by the flag.
    fn run(
        &self,
        x: &Experiment,
        file: Option<&FilePlan>,
        stop: &Arc<AtomicBool>,
        progress: &mut Progress,
        emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
    ) -> anyhow::Result<()>;
    /// The summary CSV text and the figure of a finished experiment; `known` is where its rows
    /// were measured (the storage, the `limits` profile), for the figure.
    fn summary(
        &self,
        x: &Experiment,
        rows: &Collected,
        known: &crate::explain::provenance::Provenance,
    ) -> anyhow::Result<(String, Option<Chart>)>;
}

/// What a kind of experiment needs and writes, beyond its keys.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traits {
    /// It measures the sweep's `[file]` (a test file is made for it when none is named).
    pub needs_file: bool,
    /// Its experiments have points (a `RunSpec` each), counted in the printed plan.
    pub has_points: bool,
    /// It can be drawn in `compare.svg` (its rows are throughput at a block size).
    pub comparable: bool,
    /// It runs as a fleet under mpirun (`sweep::fleet`).
    pub fleet_capable: bool,
    /// It writes a `-fio.txt` companion (the fio command line of each point).
    pub fio_companion: bool,
    /// Its rows are [`SyscallRow`]s (else [`RunResult`]s).
    pub syscall_rows: bool,
}

/// The kind of an experiment: one of [`super::kinds::ALL`].
pub type Kind = &'static dyn SweepKind;

/// A finished repetition. (A `RunResult` is much bigger than a `SyscallRow`, and rows are few:
/// boxing would buy nothing.)
#[allow(clippy::large_enum_variant)]
pub enum Row {
    /// A repetition: written to the CSV and summarized.
    Run(RunResult),
    /// A row written to the CSV beside the repetition's own, not summarized (a fleet rank's
    /// share of a point, before the point's `rank = all` row).
    Detail(RunResult),
    Syscall(SyscallRow),
    /// A knee search's answer (`kind = "knee"`): not a CSV row; the experiment's summary, its
    /// figure and the HTML report read it from [`Collected::knee`].
    Knee(crate::lab::knee::Outcome),
}

/// Rows of one experiment.
#[derive(Debug, Default)]
pub struct Collected {
    pub runs: Vec<RunResult>,
    pub syscalls: Vec<SyscallRow>,
    /// A fleet's per-rank rows ([`Row::Detail`]), in the order they came: the `all` rows in
    /// `runs` are made from them; kept for the ranks' timeline file.
    pub details: Vec<RunResult>,
    /// A knee experiment's answer ([`Row::Knee`]); None for other kinds, or when the search
    /// was interrupted before it ended.
    pub knee: Option<crate::lab::knee::Outcome>,
}

/// The external command of a `command` experiment.
#[derive(Debug, Clone)]
pub struct CommandPlan {
    pub template: String,
    pub bytes: Option<u64>,
    pub timeout: Duration,
}

/// One experiment, ready to run.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub name: String,
    pub kind: Kind,
    pub reps: u32,
    /// Time budget of one repetition (per system call for `syscalls`).
    pub seconds: f64,
    /// Points in run order (throughput and command kinds).
    pub points: Vec<RunSpec>,
    pub command: Option<CommandPlan>,
    /// The `locality` kind's parameters, parsed and checked at plan time (`params = { ... }`).
    pub locality: Option<crate::locality::params::Params>,
    /// The `knee` kind's checked plan (`params = { ... }`).
    pub knee: Option<crate::lab::knee::Plan>,
    /// What the planner changed or skipped, for the printed plan.
    pub notes: Vec<String>,
    /// The estimate is a guess within a bound (runs may end at the end of the file first, or
    /// when their command does): shown with ≈, see `sweep::estimate`.
    pub upper_bound: bool,
}

impl Experiment {
    /// Runs of this experiment (points x repetitions).
    pub fn runs(&self) -> usize {
        self.kind.runs(self)
    }

    /// Estimated seconds, when the time bound makes it predictable.
    pub fn estimate_s(&self) -> Option<f64> {
        self.kind.estimate_s(self)
    }
}

/// Most points one experiment may have without `--force` (the lists' product): past this a
/// plan is almost surely a mistake, and building it alone takes seconds.
pub const MAX_POINTS: u64 = 100_000;
/// Most points even with `--force`: every point is held in memory while planning.
pub const MAX_POINTS_FORCED: u64 = 10_000_000;
/// The file names an experiment of `kind` called `name` may write into `--out`.
pub fn output_names(name: &str, kind: Kind) -> Vec<String> {
    let mut v = vec![
        format!("{name}.csv"),
        format!("{name}-summary.csv"),
        format!("{name}.svg"),
        format!("{name}-timeline.csv"),
        format!("{name}-timeline.svg"),
        format!("{name}-ranks-timeline.csv"),
    ];
    if kind.traits().fio_companion {
        v.push(format!("{name}-fio.txt"));
    }
    v
}

/// A whole sweep, ready to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub description: String,
    pub file: Option<FilePlan>,
    pub experiments: Vec<Experiment>,
    /// Where the CSVs and figures go.
    pub out_dir: std::path::PathBuf,
    /// Experiments drawn together in `compare.svg`.
    pub compare: Vec<String>,
    /// y axis of the figures (`y_scale`).
    pub y_scale: crate::export::chart::YScale,
    /// `--force`: output files already in `--out` are replaced (regular files only, never
    /// through a link); without it they are refused.
    pub force: bool,
}
