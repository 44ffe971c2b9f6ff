//! `kind = "knee"`: the knee search (`lab::knee`) as a sweep experiment on the sweep's file. Its
//! `params = { p99 = "2ms", ... }` are the `knee` command's own [`KneeParams`] (serde form,
//! unknown keys refused), checked at plan time — a bad key fails `--dry-run` naming
//! `FILE:LINE: key params.KEY` — and carried to the run as the lab's checked [`Plan`].
//!
//! Rows: one per open-loop point (a `RunResult` with the `rate_iops_asked` and `resp_*`
//! columns), so `<name>.csv` holds the whole curve; the closed-loop ceiling is not a row (its
//! record has no open-loop columns, and one CSV has one header) but is in the summary.
//! `<name>-summary.csv` is the answer: the knee, its bracket, why the search stopped; the
//! figure is response p50 / p99 / p99.9 by offered rate. The answer reaches the summary as a
//! typed row of its own ([`Row::Knee`], kept in `Collected::knee`), so it is part of the
//! sweep's outcome that every writer and the HTML report read (the report draws the search's
//! own figure from it, the knee marked).

use crate::explain::provenance::Provenance;
use crate::export::chart::{Category, Chart, Series};
use crate::lab::knee::{KneeParams, Outcome, Plan, Syntax};
use crate::measure::stats::Stats;
use crate::measure::RunResult;
use crate::runner::host_name;
use crate::sweep::experiment::{Collected, Experiment, Row, SweepKind, Traits};
use crate::sweep::files::FilePlan;
use crate::sweep::layered::{key_span, Layered};
use crate::sweep::progress::Progress;
use anyhow::Context;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Debug)]
pub struct Knee;

/// The summary row of a knee experiment.
#[derive(Debug, Serialize)]
struct Summary {
    experiment: String,
    target_p99_us: f64,
    knee_iops: Option<f64>,
    fail_iops: Option<f64>,
    bracket_pct: Option<f64>,
    stop: String,
    ceiling_iops: f64,
    points_measured: usize,
    points_reused: usize,
    marginal: bool,
    not_monotone: bool,
    seconds: f64,
    error: String,
}

impl SweepKind for Knee {
    fn name(&self) -> &'static str {
        "knee"
    }

    fn keys(&self) -> &'static [&'static str] {
        &["params"]
    }

    fn traits(&self) -> Traits {
        Traits {
            needs_file: true,
            ..Traits::default()
        }
    }

    fn reps(&self, _: &Layered) -> anyhow::Result<u32> {
        Ok(1) // a search is one run; its points are its repetitions
    }

    fn plan(&self, l: &Layered, file: Option<&FilePlan>, x: &mut Experiment) -> anyhow::Result<()> {
        let src = l.src;
        let span = key_span(l.exp, "params").unwrap_or_else(|| l.span("name"));
        let table = l
            .exp
            .params
            .as_ref()
            .map(|p| p.get_ref().clone())
            .unwrap_or_default();
        let path = file.map_or_else(|| "file".into(), |f| f.path.clone());
        let plan = KneeParams::from_toml(&table)
            .and_then(|p| p.plan(&path, Syntax::Key))
            .map_err(|e| {
                let key = e
                    .key
                    .map_or("params".to_string(), |k| format!("params.{k}"));
                src.key_error(span, &key, &e.message)
            })?;
        x.seconds = plan.seconds;
        x.upper_bound = true;
        x.notes.push(format!(
            "knee: response p99 under {} µs, bracket {}%, at most {} points of {} s or more",
            plan.settings.target_p99_us,
            plan.settings.tolerance * 100.0,
            plan.settings.max_points,
            plan.seconds
        ));
        x.knee = Some(plan);
        Ok(())
    }

    fn runs(&self, _: &Experiment) -> usize {
        1
    }

    fn estimate_s(&self, x: &Experiment) -> Option<f64> {
        // At most: the closed-loop run and every point, each its seconds (longer at low rates).
        let plan = plan_of(x).ok()?;
        Some((plan.settings.max_points + 1) as f64 * plan.seconds)
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
        let plan = plan_of(x)?;
        let found = crate::lab::knee::run(&plan, &x.name, stop.clone(), &mut |_| {});
        let answer = match found {
            Err(_) if stop.load(Ordering::Relaxed) => return Ok(()),
            Err(e) => {
                let error = format!("{e:#}");
                progress.finish_run(&x.name, &format!("FAILED: {error}"));
                let r = RunResult {
                    identity: crate::measure::result::Identity {
                        experiment: x.name.clone(),
                        host: host_name(),
                        ..Default::default()
                    },
                    figures: crate::measure::result::Figures {
                        error: error.clone(),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                emit(Row::Run(r))?;
                Outcome {
                    knee: None,
                    error,
                    elapsed_s: 0.0,
                }
            }
            Ok((k, results, elapsed_s)) => {
                progress.finish_run(&x.name, &k.confidence_line());
                for r in results.into_iter().filter(|r| r.setup.rate().is_some()) {
                    emit(Row::Run(r))?;
                }
                Outcome {
                    knee: Some(k),
                    error: String::new(),
                    elapsed_s,
                }
            }
        };
        // The answer travels with the rows, typed: the summary, the figure and the report
        // read it from the sweep's outcome.
        emit(Row::Knee(answer))
    }

    fn summary(
        &self,
        x: &Experiment,
        rows: &Collected,
        _known: &Provenance,
    ) -> anyhow::Result<(String, Option<Chart>)> {
        let csv = rows
            .knee
            .as_ref()
            .map(|a| summary_of(x, a))
            .unwrap_or_default();
        Ok((csv, chart_of(x, &rows.runs)))
    }
}

/// The lab's plan of an experiment planned by this kind (its parameters were checked then).
fn plan_of(x: &Experiment) -> anyhow::Result<Plan> {
    x.knee
        .clone()
        .context("the knee experiment was not planned")
}

/// The summary CSV of a finished search: one row, the answer.
fn summary_of(x: &Experiment, answer: &Outcome) -> String {
    let k = answer.knee.as_ref();
    let (elapsed_s, error) = (answer.elapsed_s, answer.error.clone());
    let s = Summary {
        experiment: x.name.clone(),
        target_p99_us: k.map_or(f64::NAN, |k| k.settings_target_p99_us),
        knee_iops: k.and_then(|k| k.knee_iops).map(f64::round),
        fail_iops: k.and_then(|k| k.fail_iops).map(f64::round),
        bracket_pct: k
            .and_then(|k| k.bracket_share())
            .map(|b| (b * 1000.0).round() / 10.0),
        stop: k.map_or(String::new(), |k| k.stop.describe(k.tolerance)),
        ceiling_iops: k.map_or(f64::NAN, |k| k.ceiling.iops.round()),
        points_measured: k.map_or(0, |k| k.measured),
        points_reused: k.map_or(0, |k| k.reused),
        marginal: k.is_some_and(|k| k.marginal),
        not_monotone: k.is_some_and(|k| k.not_monotone),
        seconds: (elapsed_s * 1000.0).round() / 1000.0,
        error,
    };
    crate::export::csv::to_csv(&[s]).unwrap_or_default()
}

/// Response p50, p99 and p99.9 (µs) by offered rate.
fn chart_of(x: &Experiment, runs: &[RunResult]) -> Option<Chart> {
    let mut pts: Vec<&RunResult> = runs.iter().filter(|r| r.setup.rate().is_some()).collect();
    if pts.is_empty() {
        return None;
    }
    pts.sort_by(|a, b| {
        a.setup
            .rate()
            .unwrap_or(0.0)
            .total_cmp(&b.setup.rate().unwrap_or(0.0))
    });
    let series = |name: &str, f: fn(&RunResult) -> Option<f64>| Series {
        name: name.to_string(),
        cells: pts.iter().map(|r| f(r).map(|v| Stats::of(&[v]))).collect(),
    };
    Some(Chart {
        title: format!("{}: response time by offered rate", x.name),
        subtitle: crate::export::chart::subtitle_of(pts.iter().copied()),
        y_scale: crate::export::chart::YScale::Log,
        x_label: "offered rate, operations per second".into(),
        y_label: "response time (intended start → completion), µs".into(),
        categories: pts
            .iter()
            .enumerate()
            .map(|(i, r)| Category {
                label: format!("{:.0}", r.setup.rate().unwrap_or(0.0)),
                pos: i as f64,
            })
            .collect(),
        series: vec![
            series("p50", |r| r.open_loop.as_ref().map(|o| o.resp_p50_us)),
            series("p99", |r| r.open_loop.as_ref().map(|o| o.resp_p99_us)),
            series("p99.9", |r| r.open_loop.as_ref().map(|o| o.resp_p999_us)),
        ],
        model: Vec::new(),
        // A point judged suspect: its three bars hollow, its reasons in the footnote.
        suspect: pts
            .iter()
            .enumerate()
            .filter(|(_, r)| r.judgement.verdict == "suspect")
            .flat_map(|(c, r)| {
                let mut codes: Vec<String> = r
                    .judgement
                    .reasons
                    .split(';')
                    .filter(|c| !c.is_empty())
                    .map(String::from)
                    .collect();
                if codes.is_empty() {
                    codes.push("suspect".into());
                }
                (0..3).map(move |s| crate::export::chart::SuspectMark {
                    series: s,
                    category: c,
                    suspect: 1,
                    reps: 1,
                    codes: codes.clone(),
                })
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::knee::{Ceiling, Knee as Answer, Stop};

    fn experiment(name: &str) -> Experiment {
        Experiment {
            name: name.into(),
            kind: &Knee,
            reps: 1,
            seconds: 1.0,
            points: Vec::new(),
            command: None,
            locality: None,
            knee: None,
            notes: Vec::new(),
            upper_bound: true,
        }
    }

    #[test]
    fn the_summary_is_the_answer_the_experiments_own_rows_carry_and_nothing_else() {
        let answer = Answer {
            settings_target_p99_us: 2000.0,
            tolerance: 0.05,
            ceiling: Ceiling::default(),
            points: Vec::new(),
            knee_iops: Some(4321.4),
            fail_iops: Some(4500.0),
            stop: Stop::Converged,
            measured: 5,
            reused: 1,
            remeasured: 0,
            not_monotone: false,
            marginal: false,
        };
        let rows = Collected {
            knee: Some(Outcome {
                knee: Some(answer),
                error: String::new(),
                elapsed_s: 12.3456,
            }),
            ..Collected::default()
        };
        let (csv, _) = Knee
            .summary(&experiment("a"), &rows, &Provenance::none())
            .unwrap();
        let row = csv::Reader::from_reader(csv.as_bytes())
            .records()
            .next()
            .unwrap()
            .unwrap();
        let cells: Vec<&str> = row.iter().collect();
        let num = |i: usize| cells[i].parse::<f64>().unwrap();
        assert_eq!(cells[0], "a", "{csv}");
        assert_eq!(
            (num(1), num(2), num(3), num(4)),
            (2000.0, 4321.0, 4500.0, 4.0)
        );
        assert_eq!(cells[5], "the bracket is within 5%", "{csv}");
        assert_eq!((num(7), num(8), num(11)), (5.0, 1.0, 12.346), "{csv}");
        // Another experiment's rows without an answer (an interrupted search) summarize to
        // nothing: no answer is kept anywhere but in the rows.
        let (csv, chart) = Knee
            .summary(&experiment("b"), &Collected::default(), &Provenance::none())
            .unwrap();
        assert!(csv.is_empty() && chart.is_none(), "{csv}");
        // A failed search: its error, no answer.
        let failed = Collected {
            knee: Some(Outcome {
                knee: None,
                error: "cannot open".into(),
                elapsed_s: 0.0,
            }),
            ..Collected::default()
        };
        let (csv, _) = Knee
            .summary(&experiment("c"), &failed, &Provenance::none())
            .unwrap();
        assert!(
            csv.lines().nth(1).unwrap().ends_with(",cannot open"),
            "{csv}"
        );
    }
}
