//! `diskscope --batch SWEEP.toml --report FILE.html`: runs the sweep as usual, then writes the
//! page from the sweep's outcome ([`crate::sweep::SweepOutcome`]): the rows the sweep measured,
//! typed, and the figures its exporters made. Nothing is read back (neither the sweep file a
//! second time nor the CSVs), so the page shows exactly what the CSVs were written from.

use super::{batch_page, openloop, BatchExperiment};
use crate::export::manager::{ExportManager, Format};
use crate::export::{Export, Exporter};
use crate::sweep::output::{Figures, Timelines};
use crate::sweep::{Ended, SweepOutcome};
use std::path::{Path, PathBuf};

/// The HTML report of a finished sweep, one self-contained page at `path`.
pub struct HtmlReport {
    pub path: PathBuf,
}

impl Exporter<SweepOutcome> for HtmlReport {
    fn name(&self) -> &'static str {
        "HTML report"
    }

    fn export(&self, o: &SweepOutcome) -> anyhow::Result<Vec<Export>> {
        let mut figures = Figures.export(o)?;
        figures.extend(Timelines.export(o)?);
        let svg_of = |name: &str| {
            figures.iter().find(|f| f.name == Path::new(name)).map(|f| {
                (
                    name.to_string(),
                    String::from_utf8_lossy(&f.bytes).into_owned(),
                )
            })
        };
        let plan = &o.plan;
        let mut experiments: Vec<BatchExperiment> = plan
            .experiments
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let runs: &[crate::measure::RunResult] =
                    o.rows.get(i).map_or(&[], |c| c.runs.as_slice());
                let mut figures: Vec<(String, String)> = [
                    format!("{}.svg", x.name),
                    format!("{}-timeline.svg", x.name),
                ]
                .iter()
                .filter_map(|n| svg_of(n))
                .collect();
                // A knee experiment: the search's own figure, the knee marked, from its answer.
                if let Some(fig) = o.rows.get(i).and_then(|c| knee_figure(x, c)) {
                    figures.insert(0, fig);
                }
                BatchExperiment {
                    name: x.name.clone(),
                    // One record per rate: compare's records know no rate.
                    records: openloop::records_by_rate(runs),
                    figures,
                    figure_only: false,
                    open_loop: openloop::points(runs),
                    worst_intervals: openloop::worst_intervals(runs),
                }
            })
            .collect();
        if !plan.compare.is_empty() {
            if let Some(compare) = svg_of("compare.svg") {
                experiments.push(BatchExperiment {
                    name: format!("comparison ({})", plan.compare.join(" vs ")),
                    records: Vec::new(),
                    figures: vec![compare],
                    figure_only: true,
                    open_loop: Vec::new(),
                    worst_intervals: Vec::new(),
                });
            }
        }
        let status = if o.ended == Ended::Complete {
            "every run succeeded".to_string()
        } else {
            "some runs failed: see the failed column and the error column of the CSVs".to_string()
        };
        // Where it ran, as collected by the executor (an exporter reads no machine).
        let machine = o
            .context
            .as_ref()
            .map(crate::explain::machine::facts_of)
            .unwrap_or_default();
        let html = batch_page(
            &plan.name,
            &crate::sweep::plan_text(plan),
            &plan.out_dir,
            &machine,
            &experiments,
            &status,
        )?;
        Ok(vec![Export::new(self.path.clone(), html)])
    }
}

/// `<name>-knee.svg`: the figure of a knee experiment's search (`lab::knee::svg`), drawn from
/// the answer in its rows; None for other kinds, or a search that ended without an answer.
fn knee_figure(
    x: &crate::sweep::experiment::Experiment,
    rows: &crate::sweep::experiment::Collected,
) -> Option<(String, String)> {
    let knee = rows.knee.as_ref()?.knee.as_ref()?;
    let title = match &x.knee {
        Some(plan) => format!("{}: {}", x.name, crate::lab::knee::setup_words(plan)),
        None => x.name.clone(),
    };
    match crate::lab::knee::svg::render(&title, knee) {
        Ok(svg) => Some((format!("{}-knee.svg", x.name), svg)),
        Err(e) => {
            crate::eprintln_shown!(
                "--report: the knee figure of {} was left out: {e:#}",
                x.name
            );
            None
        }
    }
}

/// Runs the sweep, then writes the report (unless it was interrupted, broken, or this process
/// is a fleet rank that writes nothing); returns the sweep's outcome.
pub fn run_with_report(
    sweep: &Path,
    out: Option<&Path>,
    report: &Path,
    force: bool,
) -> anyhow::Result<Option<SweepOutcome>> {
    // Refuse before minutes of measuring, not after.
    ExportManager::default()
        .forced(force)
        .with(Format::Html, Some(report), "--report")
        .check()?;
    let Some(outcome) = crate::batch::execute(sweep, out, false, force, false)? else {
        return Ok(None);
    };
    match outcome.ended {
        Ended::Complete | Ended::Failed { .. } => {}
        Ended::Interrupted => {
            eprintln!("--report: not written (interrupted)");
            return Ok(Some(outcome));
        }
        Ended::Broken(_) | Ended::Delegated(_) => return Ok(Some(outcome)),
    }
    let page = HtmlReport {
        path: report.to_path_buf(),
    };
    for file in page.export(&outcome)? {
        crate::export::manager::write_file(&file.name, &file.bytes, force, "--report")?;
    }
    crate::eprintln_shown!("wrote {}", crate::text::shown_path(report));
    Ok(Some(outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::experiment::Collected;
    use crate::sweep::schema::Source;

    #[test]
    fn the_report_is_made_from_the_outcome_alone_without_reading_any_file_back() {
        // The output directory does not exist: the page cannot have read anything from it.
        let d = tempfile::tempdir().unwrap();
        let src = Source {
            display: "s.toml".into(),
            text: format!(
                "name = \"m\"\n[file]\npath = \"{}\"\ncreate = \"1M\"\n\
                 [[experiment]]\nname = \"x\"\nkind = \"throughput\"\nreps = 2\n\
                 block_size = [\"4K\"]\n",
                d.path().join("data.bin").display()
            ),
        };
        let doc = src.parse().unwrap();
        let out = d.path().join("never-made");
        let plan = crate::sweep::plan::build_with(&src, &doc, "s", Some(&out), false).unwrap();
        let runs = [3.0, 5.0]
            .iter()
            .enumerate()
            .map(|(i, mib_s)| {
                let mut r = crate::runner::setup_result(&plan.experiments[0].points[0], 1 << 20);
                r.identity.experiment = "x".into();
                r.identity.rep = i as u32 + 1;
                (r.figures.mib_s, r.figures.bytes, r.figures.seconds) =
                    (*mib_s, 1 << 20, 1.0 / mib_s);
                r
            })
            .collect();
        let outcome = SweepOutcome {
            plan,
            rows: vec![Collected {
                runs,
                ..Collected::default()
            }],
            context: None,
            known: crate::explain::provenance::Provenance::none(),
            written: Vec::new(),
            ended: Ended::Complete,
        };
        let report = d.path().join("r.html");
        let files = HtmlReport {
            path: report.clone(),
        }
        .export(&outcome)
        .unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].name, report);
        let html = String::from_utf8(files[0].bytes.clone()).unwrap();
        assert!(html.contains("every run succeeded"), "{html}");
        assert!(
            html.contains("x: read pread 4K sequential"),
            "the point's row"
        );
        assert!(
            html.contains("<td>4.00</td>"),
            "the mean of 3 and 5 MiB/s:\n{html}"
        );
        assert!(html.contains("x.svg: bar = mean"), "the figure, inline");
        assert!(
            !out.exists() && !report.exists(),
            "an exporter writes nothing"
        );
    }
}
