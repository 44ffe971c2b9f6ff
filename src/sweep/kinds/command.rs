//! `kind = "command"`: an external program (`dd`, `fio`, a script) timed on the same file at the
//! same points as a throughput experiment, so the two can be drawn side by side. Running and
//! killing the program (with everything it started) is `sweep::command`'s job.

use crate::config::spec::RunSpec;
use crate::explain::provenance::Provenance;
use crate::export::chart::Chart;
use crate::sweep::command::run_command;
use crate::sweep::estimate;
use crate::sweep::exec::run_points;
use crate::sweep::experiment::{Collected, Experiment, Row, SweepKind, Traits};
use crate::sweep::files::FilePlan;
use crate::sweep::layered::Layered;
use crate::sweep::output::runs_summary;
use crate::sweep::points::command_points;
use crate::sweep::progress::Progress;
use anyhow::Context;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Debug)]
pub struct Command;

impl SweepKind for Command {
    fn name(&self) -> &'static str {
        "command"
    }

    fn keys(&self) -> &'static [&'static str] {
        &[
            "reps",
            "command",
            "block_size",
            "block_count",
            "cache",
            "bytes",
            "timeout",
        ]
    }

    fn traits(&self) -> Traits {
        Traits {
            needs_file: true,
            has_points: true,
            comparable: true,
            ..Traits::default()
        }
    }

    fn plan(&self, l: &Layered, file: Option<&FilePlan>, x: &mut Experiment) -> anyhow::Result<()> {
        command_points(l, file.context("a command experiment needs a file")?, x)?;
        // Its runs end with the command, mostly long before the timeout: an estimate, not a
        // bound (shown with ≈).
        x.upper_bound = true;
        if let Some(c) = &x.command {
            let bound = crate::sweep::progress::format_secs(c.timeout.as_secs_f64());
            x.notes
                .push(format!("{} (its timeout)", estimate::note(&bound)));
        }
        Ok(())
    }

    fn estimate_s(&self, x: &Experiment) -> Option<f64> {
        let c = x.command.as_ref()?;
        let bound_s = c.timeout.as_secs_f64();
        let one_rep: f64 = x
            .points
            .iter()
            .map(|s| {
                (estimate::point_s(s, c.bytes, bound_s) + estimate::STATED_COMMAND_START_S)
                    .min(bound_s)
            })
            .sum();
        Some(one_rep * x.reps as f64)
    }

    fn run(
        &self,
        x: &Experiment,
        file: Option<&FilePlan>,
        stop: &Arc<AtomicBool>,
        progress: &mut Progress,
        emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let cmd = x.command.as_ref().context("the command was not planned")?;
        let label = |spec: &RunSpec| {
            let bs = crate::size::format_size(spec.setup.block_size_bytes);
            format!("{}: command {} bs {bs}", x.name, spec.setup.cache)
        };
        let measure = |spec: &RunSpec, file: &FilePlan, _: &mut Vec<String>| {
            run_command(spec, cmd, file, stop)
        };
        run_points(x, file, stop, progress, emit, &label, &measure)
    }

    fn summary(
        &self,
        x: &Experiment,
        rows: &Collected,
        known: &Provenance,
    ) -> anyhow::Result<(String, Option<Chart>)> {
        runs_summary(&format!("{}: throughput", x.name), rows, None, known)
    }
}
