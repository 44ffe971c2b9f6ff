//! What a sweep did, typed: [`SweepOutcome`] (the plan, the rows of every experiment that ran,
//! where it ran, the files written) and how it ended ([`Ended`]). The executor
//! ([`super::run::run`]) returns it, every exporter ([`super::output::EXPORTERS`], the HTML
//! report) reads it, and the command line maps it to the exit status; its own file so that the
//! executor, the exporters and the runners all depend on it and on nothing of each other's.

use super::experiment::{Collected, Experiment, Plan};
use crate::explain::context::Context;
use crate::explain::provenance::Provenance;
use std::path::PathBuf;

/// How a sweep ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Every repetition ran and none failed.
    Complete,
    /// Ctrl-C or SIGTERM: the outputs hold what finished before.
    Interrupted,
    /// Every repetition ran; `rows` of them failed (their error is in the CSV's error column).
    /// `unit` names what a row is: a `run`, or a fleet's `point`.
    Failed { rows: usize, unit: &'static str },
    /// The sweep could not go on (a fleet lost a rank); the outputs hold what finished before.
    Broken(String),
    /// This process measured, another one reports (a fleet rank other than 0): it wrote
    /// nothing and ends with this status.
    Delegated(i32),
}

/// What a sweep did: the plan, the typed rows of every experiment that ran, where it ran, the
/// files it wrote and how it ended. The exporters and the HTML report read this, never the files.
#[derive(Debug)]
pub struct SweepOutcome {
    pub plan: Plan,
    /// Rows of the experiments that ran, in plan order (an interrupted sweep has fewer entries
    /// than `plan.experiments`; the last may be partial).
    pub rows: Vec<Collected>,
    /// Where it ran: the machine, the test file's filesystem and device (collected while the
    /// test file still exists). None in a process that writes nothing.
    pub context: Option<Context>,
    /// Where its rows were measured, as the exporters need it (the storage under the test
    /// file, the `limits` profile of its device), gathered with `context`; empty in a process
    /// that writes nothing.
    pub known: Provenance,
    /// Every file written into the output directory, in order.
    pub written: Vec<PathBuf>,
    pub ended: Ended,
}

impl SweepOutcome {
    /// Each experiment that ran with its rows.
    pub fn done(&self) -> Vec<(&Experiment, &Collected)> {
        self.plan.experiments.iter().zip(&self.rows).collect()
    }

    /// The exit status: 0 all ran, 1 some failed, 130 interrupted; a broken sweep is an error.
    /// Says on stderr why the status is not 0.
    pub fn exit_code(&self) -> anyhow::Result<i32> {
        match &self.ended {
            Ended::Complete => Ok(0),
            Ended::Interrupted => {
                if self.written.is_empty() {
                    eprintln!("interrupted before the first run; nothing written");
                } else {
                    eprintln!("interrupted: the CSVs hold the runs that finished before Ctrl-C");
                }
                Ok(crate::config::EXIT_INTERRUPTED)
            }
            Ended::Failed { rows, unit } => {
                crate::eprintln_shown!(
                    "{rows} {unit}{} failed; see the error column of the CSVs",
                    if *rows == 1 { "" } else { "s" }
                );
                Ok(1)
            }
            Ended::Broken(why) => Err(anyhow::anyhow!("{why}; the sweep stopped there")),
            Ended::Delegated(status) => Ok(*status),
        }
    }

    pub(crate) fn quiet(plan: Plan, ended: Ended) -> SweepOutcome {
        SweepOutcome {
            plan,
            rows: Vec::new(),
            context: None,
            known: Provenance::none(),
            written: Vec::new(),
            ended,
        }
    }
}
