//! `kind = "locality"`: the locality lab (many small files vs one packed file) as a sweep
//! experiment. Its `params = { ... }` are the `locality` command's own [`LocalityParams`] (serde
//! form, unknown keys refused), read and checked when the sweep is planned — a bad key fails
//! `--dry-run` naming `FILE:LINE: key params.KEY` — and carried to the run already validated.

use crate::explain::provenance::Provenance;
use crate::export::chart::{Chart, Dim};
use crate::locality::params::Syntax;
use crate::locality::LocalityParams;
use crate::measure::RunResult;
use crate::runner::host_name;
use crate::sweep::experiment::{Collected, Experiment, Row, SweepKind, Traits};
use crate::sweep::files::FilePlan;
use crate::sweep::layered::{key_span, Layered};
use crate::sweep::output::runs_summary;
use crate::sweep::progress::Progress;
use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Debug)]
pub struct Locality;

impl SweepKind for Locality {
    fn name(&self) -> &'static str {
        "locality"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["params"]
    }

    fn traits(&self) -> Traits {
        Traits::default() // its own directory, no file, rows are runs
    }

    fn reps(&self, _: &Layered) -> anyhow::Result<u32> {
        Ok(1) // its repetitions are `params.reps`, run inside the lab
    }

    fn plan(&self, l: &Layered, _: Option<&FilePlan>, x: &mut Experiment) -> anyhow::Result<()> {
        let src = l.src;
        let span = key_span(l.exp, "params").unwrap_or_else(|| l.span("name"));
        let table = l
            .exp
            .params
            .as_ref()
            .map(|p| p.get_ref().clone())
            .unwrap_or_default();
        let p = LocalityParams::from_toml(&table)
            .and_then(|r| r.validate(Syntax::Toml))
            .map_err(|e| {
                let key = e
                    .key
                    .map_or("params".to_string(), |k| format!("params.{k}"));
                src.key_error(span.clone(), &key, &e.message)
            })?;
        if !crate::locality::layout::is_ours(&p.dir) {
            crate::locality::layout::check_space_of(
                &p.dir,
                p.files,
                p.file_size_bytes,
                true,
                Syntax::Toml,
            )
            .map_err(|e| {
                let key = e
                    .key
                    .map_or("params".to_string(), |k| format!("params.{k}"));
                src.key_error(span, &key, &e.message)
            })?;
        }
        x.locality = Some(p);
        Ok(())
    }

    fn run(
        &self,
        x: &Experiment,
        _: Option<&FilePlan>,
        stop: &Arc<AtomicBool>,
        progress: &mut Progress,
        emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        progress.begin(&x.name);
        let mut emit_run = |r: RunResult| emit(Row::Run(r));
        let params = x
            .locality
            .as_ref()
            .context("the locality experiment was not planned")?;
        match crate::locality::run_sweep_experiment(&x.name, params, stop, &mut emit_run) {
            Err(_) if stop.load(Ordering::Relaxed) => {}
            Err(e) => {
                let r = RunResult {
                    identity: crate::measure::result::Identity {
                        experiment: x.name.clone(),
                        host: host_name(),
                        ..Default::default()
                    },
                    figures: crate::measure::result::Figures {
                        error: format!("{e:#}"),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                progress.finish_run(&x.name, &format!("FAILED: {}", r.figures.error));
                emit(Row::Run(r))?;
            }
            Ok(()) => progress.finish_run(&x.name, "done"),
        }
        Ok(())
    }

    fn summary(
        &self,
        x: &Experiment,
        rows: &Collected,
        known: &Provenance,
    ) -> anyhow::Result<(String, Option<Chart>)> {
        runs_summary(
            &format!("{}: layout x order", x.name),
            rows,
            Some(&[Dim::Pattern, Dim::Method]),
            known,
        )
    }
}
