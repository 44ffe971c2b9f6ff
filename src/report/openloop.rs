//! The open-loop part of the batch report (issue 25): for every point run at a rate (a sweep's
//! `rate`, `run --rate`), the asked and achieved rate, the backlog at the end, and the
//! **response** percentiles (intended start → completion, what the disk's users waited) beside
//! the **service** percentiles (issue → completion, what closed-loop tools report), medians over
//! the repetitions; and for every open-loop run with a timeline, its worst interval of each.
//!
//! Built from the sweep's typed rows ([`RunResult`]), not from `compare`'s records: those group
//! a sweep's rows by their setup, which knows no rate, so rows at 0 and at 500 IOPS would be
//! averaged into one point. [`records_by_rate`] gives the summary table one record per rate
//! for the same reason.

use crate::compare::load::Record;
use crate::export::html::Page;
use crate::measure::result::Schedule;
use crate::measure::stats::Stats;
use crate::measure::RunResult;

/// One open-loop point of an experiment, medians over its successful repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenLoopPoint {
    /// `exp: read pread 4K random warm T1 @500/s`.
    pub label: String,
    pub reps: usize,
    pub asked_iops: f64,
    pub achieved_iops: f64,
    /// The largest backlog any repetition ended with, operations.
    pub backlog_ops_max: u64,
    /// Repetitions that fell behind their schedule (see `RunResult::fell_behind`).
    pub fell_behind: usize,
    /// Repetitions that completed no operation (an empty range, or stopped first): they
    /// neither kept up nor fell behind.
    pub idle: usize,
    /// Service time p50, p99, p99.9, µs.
    pub service_us: [f64; 3],
    /// Response time p50, p99, p99.9, µs.
    pub response_us: [f64; 3],
}

/// The worst interval of one open-loop run's timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct WorstInterval {
    /// `exp: read pread 4K ... @500/s rep 2`.
    pub run: String,
    /// The highest interval service p99, µs, and where that interval starts, seconds.
    pub service_p99_us: f64,
    pub service_at_s: f64,
    /// The highest interval response p99, µs, and where that interval starts, seconds.
    pub response_p99_us: f64,
    pub response_at_s: f64,
}

/// A row's point without its rate, in the words of the summary table's labels.
fn setup_label(r: &RunResult) -> String {
    crate::compare::rows::Point::of_result(r).label()
}

/// `@500/s`: the rate a label carries.
fn rate_suffix(iops: f64) -> String {
    format!("@{iops:.0}/s")
}

/// The open-loop points of `runs` in the order they first ran; empty for a closed-loop
/// experiment. Failed repetitions are left out.
pub fn points(runs: &[RunResult]) -> Vec<OpenLoopPoint> {
    let mut groups: Vec<(String, f64, Vec<&RunResult>)> = Vec::new();
    for r in runs.iter().filter(|r| r.figures.error.is_empty()) {
        let Some(asked) = r.setup.rate() else {
            continue;
        };
        let label = format!("{} {}", setup_label(r), rate_suffix(asked));
        match groups
            .iter_mut()
            .find(|(l, a, _)| *l == label && a.to_bits() == asked.to_bits())
        {
            Some((_, _, rows)) => rows.push(r),
            None => groups.push((label, asked, vec![r])),
        }
    }
    groups
        .into_iter()
        .map(|(label, asked_iops, rows)| {
            let median = |f: &dyn Fn(&RunResult) -> Option<f64>| {
                let v: Vec<f64> = rows.iter().filter_map(|r| f(r)).collect();
                if v.is_empty() {
                    f64::NAN
                } else {
                    Stats::of(&v).median
                }
            };
            OpenLoopPoint {
                label,
                reps: rows.len(),
                asked_iops,
                achieved_iops: median(&|r| r.open_loop.as_ref().map(|o| o.rate_iops_achieved)),
                backlog_ops_max: rows
                    .iter()
                    .filter_map(|r| r.open_loop.as_ref().map(|o| o.backlog_ops))
                    .max()
                    .unwrap_or(0),
                fell_behind: rows
                    .iter()
                    .filter(|r| r.fell_behind() == Some(true))
                    .count(),
                idle: rows
                    .iter()
                    .filter(|r| r.schedule() == Some(Schedule::Idle))
                    .count(),
                service_us: [
                    median(&|r| Some(r.figures.lat_p50_us)),
                    median(&|r| Some(r.figures.lat_p99_us)),
                    median(&|r| Some(r.figures.lat_p999_us)),
                ],
                response_us: [
                    median(&|r| r.open_loop.as_ref().map(|o| o.resp_p50_us)),
                    median(&|r| r.open_loop.as_ref().map(|o| o.resp_p99_us)),
                    median(&|r| r.open_loop.as_ref().map(|o| o.resp_p999_us)),
                ],
            }
        })
        .collect()
}

/// The worst interval of each open-loop run that has a timeline with response times.
pub fn worst_intervals(runs: &[RunResult]) -> Vec<WorstInterval> {
    let mut out = Vec::new();
    for r in runs.iter().filter(|r| r.figures.error.is_empty()) {
        let (Some(asked), Some(t)) = (r.setup.rate(), r.timeline.as_ref()) else {
            continue;
        };
        let worst = |f: &dyn Fn(&crate::measure::timeline::IntervalRow) -> Option<f64>| {
            t.rows
                .iter()
                .filter_map(|row| f(row).filter(|v| v.is_finite()).map(|v| (v, row.t_start_s)))
                .max_by(|a, b| a.0.total_cmp(&b.0))
        };
        let (Some(service), Some(response)) = (
            worst(&|row| Some(row.lat_p99_us)),
            worst(&|row| row.resp.map(|l| l.p99_us)),
        ) else {
            continue;
        };
        out.push(WorstInterval {
            run: format!(
                "{} {} rep {}",
                setup_label(r),
                rate_suffix(asked),
                r.identity.rep
            ),
            service_p99_us: service.0,
            service_at_s: service.1,
            response_p99_us: response.0,
            response_at_s: response.1,
        });
    }
    out
}

/// The records of the summary table, one per point and rate: the rows of each rate are read
/// into records apart, and an open-loop record's label names its rate (`@500/s`).
pub fn records_by_rate(runs: &[RunResult]) -> Vec<Record> {
    let mut groups: Vec<(Option<u64>, Vec<RunResult>)> = Vec::new();
    for r in runs {
        let key = r.setup.rate().map(f64::to_bits);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, rows)) => rows.push(r.clone()),
            None => groups.push((key, vec![r.clone()])),
        }
    }
    groups
        .into_iter()
        .flat_map(|(key, rows)| {
            let mut recs = crate::compare::load::records_of(&rows).unwrap_or_default();
            if let Some(bits) = key {
                for rec in &mut recs {
                    rec.point.experiment = format!(
                        "{} {}",
                        rec.point.experiment,
                        rate_suffix(f64::from_bits(bits))
                    );
                }
            }
            recs
        })
        .collect()
}

/// A figure in µs, `-` where there is none.
fn us(v: f64) -> String {
    if v.is_finite() {
        crate::compare::render::num(v)
    } else {
        "-".into()
    }
}

/// The open-loop table: a row per point, the response percentiles beside the service ones.
pub fn table(page: &mut Page, pts: &[OpenLoopPoint]) {
    if pts.is_empty() {
        return;
    }
    let rows: Vec<Vec<(String, &str)>> = pts
        .iter()
        .map(|p| {
            let kept = if p.idle == p.reps {
                ("no operation completed".to_string(), "slower")
            } else if p.fell_behind == 0 && p.idle == 0 {
                ("kept up".to_string(), "")
            } else if p.fell_behind == 0 {
                (
                    format!("kept up; {} of {} completed nothing", p.idle, p.reps),
                    "slower",
                )
            } else {
                (
                    format!("fell behind in {} of {}", p.fell_behind, p.reps),
                    "slower",
                )
            };
            vec![
                (p.label.clone(), ""),
                (p.reps.to_string(), ""),
                (format!("{:.0}", p.asked_iops), ""),
                (
                    if p.achieved_iops.is_finite() {
                        format!("{:.0}", p.achieved_iops)
                    } else {
                        "-".into()
                    },
                    "",
                ),
                (p.backlog_ops_max.to_string(), ""),
                (us(p.service_us[0]), ""),
                (us(p.response_us[0]), ""),
                (us(p.service_us[1]), ""),
                (us(p.response_us[1]), ""),
                (us(p.service_us[2]), ""),
                (us(p.response_us[2]), ""),
                kept,
            ]
        })
        .collect();
    page.para(
        "note",
        "open loop: each operation had an intended start on the schedule; service = issue → completion (what closed-loop tools report), response = intended start → completion (what the disk's users waited, coordinated omission corrected; docs/openloop.md). Medians over repetitions, µs.",
    );
    page.table(
        &[
            "open-loop point",
            "reps",
            "asked IOPS",
            "achieved IOPS",
            "backlog (max)",
            "service p50",
            "response p50",
            "service p99",
            "response p99",
            "service p99.9",
            "response p99.9",
            "schedule",
        ],
        &[0, 11],
        &rows,
    );
}

/// The worst intervals of the open-loop runs' timelines, under the timeline figure.
pub fn worst_table(page: &mut Page, worst: &[WorstInterval]) {
    if worst.is_empty() {
        return;
    }
    let rows: Vec<Vec<(String, &str)>> = worst
        .iter()
        .map(|w| {
            vec![
                (w.run.clone(), ""),
                (us(w.service_p99_us), ""),
                (format!("{:.1}", w.service_at_s), ""),
                (us(w.response_p99_us), ""),
                (format!("{:.1}", w.response_at_s), ""),
            ]
        })
        .collect();
    page.para(
        "note",
        "the timeline's worst interval of each open-loop run: a stall shows in the service p99 of one interval, and in the response p99 of it and of the intervals whose operations waited behind it.",
    );
    page.table(
        &[
            "open-loop run",
            "worst service p99 µs",
            "at s",
            "worst response p99 µs",
            "at s",
        ],
        &[0],
        &rows,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(rate: Option<f64>, rep: u32, lat_p99: f64, resp_p99: f64) -> RunResult {
        let mut r = RunResult {
            identity: crate::measure::result::Identity {
                experiment: "x".into(),
                rep,
                ..Default::default()
            },
            setup: crate::config::RecordedSetup {
                block_size_bytes: 4096,
                threads: 1,
                queue_depth: 1,
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                lat_p50_us: 10.0,
                lat_p99_us: lat_p99,
                lat_p999_us: lat_p99 * 2.0,
                iops: rate.unwrap_or(1000.0),
                mib_s: 1.0,
                ops: 1000,
                ..Default::default()
            },
            ..Default::default()
        };
        if let Some(asked) = rate {
            let resp = crate::measure::LatencySummary {
                p50_us: 12.0,
                p99_us: resp_p99,
                p999_us: resp_p99 * 3.0,
                ..Default::default()
            };
            r.set_open_loop(asked, 0, &resp);
        }
        r
    }

    #[test]
    fn open_loop_points_are_one_per_rate_with_response_medians_beside_service_ones() {
        let runs = vec![
            row(None, 1, 50.0, 0.0),
            row(Some(500.0), 1, 40.0, 100.0),
            row(Some(500.0), 2, 60.0, 300.0),
            row(Some(500.0), 3, 50.0, 200.0),
            row(Some(2000.0), 1, 80.0, 9000.0),
        ];
        let pts = points(&runs);
        assert_eq!(pts.len(), 2, "{pts:?}");
        assert!(pts[0].label.ends_with("@500/s"), "{}", pts[0].label);
        assert_eq!((pts[0].reps, pts[0].asked_iops), (3, 500.0));
        assert_eq!(pts[0].service_us[1], 50.0);
        assert_eq!(pts[0].response_us[1], 200.0);
        assert_eq!(pts[1].response_us[2], 27000.0);
        // The summary table's records: the closed loop and each rate apart.
        let recs = records_by_rate(&runs);
        assert_eq!(recs.len(), 3, "{recs:?}");
        assert!(recs.iter().any(|r| r.point.experiment == "x @2000/s"));
        assert!(recs.iter().any(|r| r.point.experiment == "x"));
        let mut page = Page::new("t", "s");
        table(&mut page, &pts);
        let html = page.finish("t");
        assert!(
            html.contains("<th>service p99</th><th>response p99</th>"),
            "{html}"
        );
        assert!(
            html.contains("<td>200</td>") || html.contains("<td>200.0</td>"),
            "{html}"
        );
    }

    #[test]
    fn an_open_loop_point_that_completed_nothing_is_not_said_to_have_kept_up() {
        let mut idle = row(Some(500.0), 1, 40.0, 100.0);
        idle.figures.ops = 0;
        let pts = points(&[idle.clone()]);
        assert_eq!(pts[0].idle, 1);
        let mut page = Page::new("t", "s");
        table(&mut page, &pts);
        let html = page.finish("t");
        assert!(html.contains("no operation completed"), "{html}");
        assert!(!html.contains("kept up"), "{html}");
        let pts = points(&[idle, row(Some(500.0), 2, 40.0, 100.0)]);
        let mut page = Page::new("t", "s");
        table(&mut page, &pts);
        assert!(page
            .finish("t")
            .contains("kept up; 1 of 2 completed nothing"));
    }

    #[test]
    fn a_closed_loop_experiment_has_no_open_loop_table() {
        let runs = vec![row(None, 1, 50.0, 0.0)];
        assert!(points(&runs).is_empty());
        assert!(worst_intervals(&runs).is_empty());
        let mut page = Page::new("t", "s");
        table(&mut page, &[]);
        assert!(!page.finish("t").contains("open-loop point"));
    }
}
