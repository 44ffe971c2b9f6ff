//! One experiment of a sweep, planned: its kind, its points (validated [`RunSpec`]s) and the
//! limits on how many there may be. A leaf of the sweep: the planner (`plan`, `points`) builds
//! these, the executor (`exec`) and the writers (`output`) read them.

use crate::config::RunSpec;
use std::time::Duration;

/// What an experiment measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Throughput,
    Syscalls,
    Command,
    Locality,
}

impl Kind {
    pub const NAMES: &'static str = "throughput, syscalls, command, locality";

    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "throughput" => Kind::Throughput,
            "syscalls" => Kind::Syscalls,
            "command" => Kind::Command,
            "locality" => Kind::Locality,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Throughput => "throughput",
            Kind::Syscalls => "syscalls",
            Kind::Command => "command",
            Kind::Locality => "locality",
        }
    }

    /// Keys an experiment of this kind may set (besides `name` and `kind`).
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            Kind::Throughput => &[
                "reps",
                "seconds",
                "block_size",
                "threads",
                "method",
                "cache",
                "direct",
                "queue_depth",
                "operation",
                "pattern",
                "submit",
                "one_pass",
            ],
            Kind::Command => &[
                "reps",
                "command",
                "block_size",
                "block_count",
                "cache",
                "bytes",
                "timeout",
            ],
            Kind::Syscalls => &["reps", "seconds"],
            Kind::Locality => &["params"],
        }
    }
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
    /// What the planner changed or skipped, for the printed plan.
    pub notes: Vec<String>,
    /// The estimate is an upper bound (runs may end at the end of the file first).
    pub upper_bound: bool,
}

impl Experiment {
    /// Runs of this experiment (points x repetitions).
    pub fn runs(&self) -> usize {
        match self.kind {
            Kind::Throughput | Kind::Command => self.points.len() * self.reps as usize,
            Kind::Syscalls => self.reps as usize,
            Kind::Locality => 1,
        }
    }

    /// Estimated seconds, when the time bound makes it predictable.
    pub fn estimate_s(&self) -> Option<f64> {
        match self.kind {
            Kind::Throughput => Some(self.runs() as f64 * self.seconds),
            Kind::Syscalls => Some(self.runs() as f64 * 8.0 * self.seconds),
            Kind::Command | Kind::Locality => None,
        }
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
    ];
    if kind == Kind::Throughput {
        v.push(format!("{name}-fio.txt"));
    }
    v
}
