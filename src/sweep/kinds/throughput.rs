//! `kind = "throughput"`: diskscope's own runs of the sweep's file, one [`RunSpec`] per point of
//! the experiment's axes (block size × threads × method × cache × ...), each repetition one run
//! of the runner's lifecycle. Its points are the command line's `run` at those settings, checked
//! by the same `RunSpec::validate`.

use crate::config::spec::RunSpec;
use crate::explain::provenance::Provenance;
use crate::export::chart::Chart;
use crate::sweep::estimate;
use crate::sweep::exec::{point_label, run_point, run_points};
use crate::sweep::experiment::{Collected, Experiment, Row, SweepKind, Traits};
use crate::sweep::files::FilePlan;
use crate::sweep::layered::Layered;
use crate::sweep::output::runs_summary;
use crate::sweep::points::throughput_points;
use crate::sweep::progress::Progress;
use anyhow::Context;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Debug)]
pub struct Throughput;

impl SweepKind for Throughput {
    fn name(&self) -> &'static str {
        "throughput"
    }

    fn keys(&self) -> &'static [&'static str] {
        &[
            "reps",
            "seconds",
            "block_size",
            "threads",
            "method",
            "cache",
            "direct",
            "queue_depth",
            "buffers",
            "checksum",
            "operation",
            "mix",
            "pattern",
            "submit",
            "rate",
            "arrival",
            "one_pass",
            "kernel",
        ]
    }

    fn traits(&self) -> Traits {
        Traits {
            needs_file: true,
            has_points: true,
            comparable: true,
            fleet_capable: true,
            fio_companion: true,
            ..Traits::default()
        }
    }

    fn plan(&self, l: &Layered, file: Option<&FilePlan>, x: &mut Experiment) -> anyhow::Result<()> {
        throughput_points(l, file.context("a throughput experiment needs a file")?, x)?;
        if estimate::any_by_bytes(&x.points, None) {
            x.notes
                .push(estimate::note(&crate::sweep::progress::format_secs(
                    x.seconds,
                )));
        }
        Ok(())
    }

    fn estimate_s(&self, x: &Experiment) -> Option<f64> {
        let one_rep: f64 = x
            .points
            .iter()
            .map(|s| estimate::point_s(s, None, x.seconds))
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
        let label = |spec: &RunSpec| point_label(&x.name, spec);
        let measure = |spec: &RunSpec, _: &FilePlan, warnings: &mut Vec<String>| {
            run_point(spec, &x.name, stop, warnings)
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Args as _;

    /// The throughput kind's keys and the `run` command's I/O flags are the same settings: a
    /// flag added to one must be added to the other, or listed here with the reason it is not.
    #[test]
    fn every_io_flag_of_run_is_a_throughput_key_and_back() {
        let cmd = crate::lab::throughput::IoOpts::augment_args(clap::Command::new("run"));
        let flags: Vec<String> = cmd
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| l.replace('-', "_")))
            .collect();
        // On the command line only: a sweep's runs use the default memory budget.
        let cli_only = ["max_memory"];
        // In sweeps only: repetitions and time bounds, and what `run` takes as positional
        // arguments (BLOCK_SIZE) or as -r/-w (operation); `run`'s own flags beside its I/O
        // options (--mix, --rate, --arrival: run2 and fast have no open loop or mix).
        let sweep_only = [
            "reps",
            "seconds",
            "one_pass",
            "block_size",
            "operation",
            "mix",
            "rate",
            "arrival",
        ];
        let keys = Throughput.keys();
        for f in &flags {
            assert!(
                keys.contains(&f.as_str()) || cli_only.contains(&f.as_str()),
                "--{f} has no throughput key"
            );
        }
        for k in keys {
            assert!(
                flags.iter().any(|f| f == k) || sweep_only.contains(k),
                "key {k} has no flag of run"
            );
        }
    }
}
