//! `--report FILE.html`: one self-contained page to attach to a ticket — the machine, the plan or
//! the inputs, summary tables, the figures inline (SVG), and for `compare` the verdict table.
//!
//! The page is built from the same records the terminal output uses ([`crate::compare`]), so the
//! two cannot disagree, and from what the front end hands in (the machine it was made on): it
//! reads nothing itself. It is written through the one export path
//! ([`crate::export::manager`]): created with O_CREAT|O_EXCL|O_NOFOLLOW, and an existing file is
//! replaced only with `--force` (and never through a symbolic link).

pub mod batch;
pub mod context;
#[cfg(test)]
mod gallery;
pub mod openloop;

use crate::compare::diff::{Comparison, Metric, Verdict};
use crate::compare::load::Record;
use crate::compare::render;
use crate::export::html::Page;
use crate::measure::stats::Stats;
use std::path::Path;

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        _ => "same",
    }
}

/// Facts about where the records were measured (hosts and files named in the CSVs).
fn measured_on(label: &str, recs: &[Record]) -> Vec<(String, String)> {
    let mut hosts: Vec<&str> = recs
        .iter()
        .flat_map(|r| r.hosts.iter().map(String::as_str))
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut files: Vec<&str> = recs
        .iter()
        .flat_map(|r| r.files.iter().map(String::as_str))
        .collect();
    files.sort_unstable();
    files.dedup();
    let reps: usize = recs.iter().map(|r| r.mib_s.len()).sum();
    let failed: usize = recs.iter().map(|r| r.failed_reps).sum();
    vec![
        (format!("{label} host"), hosts.join(", ")),
        (format!("{label} file"), files.join(", ")),
        (
            format!("{label} points"),
            format!("{} points, {reps} repetitions, {failed} failed", recs.len()),
        ),
    ]
}

/// The bound cell of a point: `memory-bound 23.1 GiB/s · 88%`, with the profile's hint appended
/// when the point reached less than half of its bound; empty where the rows carry no bound.
pub fn bound_cell(r: &Record) -> String {
    let Some(b) = &r.bound else {
        return String::new();
    };
    let mut s = format!(
        "{} {}",
        b.bound,
        crate::explain::model::format_mib_s(b.bound_mib_s, b.bound_mib_s, true)
    );
    if let Some(pct) = r.pct_of_bound() {
        s += &format!(" · {pct:.0}%");
        if pct < 50.0 {
            if let Some(h) = &b.hint {
                s += &format!(" — {h}");
            }
        }
    }
    s
}

/// The per-point summary table of a set of records; a `bound` column (the explanation of each
/// point by the `diskscope limits` profile) when any point carries one.
fn summary_table(page: &mut Page, recs: &[Record]) {
    let with_bound = recs.iter().any(|r| r.bound.is_some());
    let with_verdict = recs.iter().any(|r| r.verdicts.judged > 0);
    let rows: Vec<Vec<(String, &str)>> = recs
        .iter()
        .map(|r| {
            let s = Stats::of(&r.mib_s);
            let p99 = Stats::of(&r.lat_p99_us);
            let mut row = vec![
                (r.point.label(), ""),
                (s.n.to_string(), ""),
                (render::num(s.mean), ""),
                (render::num(s.median), ""),
                (render::num(s.min), ""),
                (render::num(s.max), ""),
                (render::num(s.stddev), ""),
                (
                    if p99.max > 0.0 {
                        render::num(p99.median)
                    } else {
                        "-".into()
                    },
                    "",
                ),
                (r.failed_reps.to_string(), ""),
            ];
            if with_bound {
                row.push((bound_cell(r), ""));
            }
            if with_verdict {
                let v = r.verdicts.text().unwrap_or_default();
                let class = if v.starts_with("suspect") {
                    "slower"
                } else {
                    ""
                };
                row.push((v, class));
            }
            row
        })
        .collect();
    let mut header = vec![
        "point",
        "reps",
        "MiB/s mean",
        "median",
        "min",
        "max",
        "sd",
        "p99 µs median",
        "failed",
    ];
    let mut left = vec![0];
    if with_bound {
        header.push("bound");
        left.push(header.len() - 1);
    }
    if with_verdict {
        header.push("verdict (reasons)");
        left.push(header.len() - 1);
    }
    page.table(&header, &left, &rows);
    if with_verdict {
        page.para(
            "note",
            "verdict: whether each repetition's number can be trusted as the disk's (ok), or is suspect, with the reason codes (docs/explain.md lists each, what it measures and its threshold); the per-repetition sentences are in the CSV's why column.",
        );
    }
    if with_bound {
        page.para(
            "note",
            "bound: what limits the point according to this machine's `diskscope limits` profile (the model's predicted throughput, and the measured mean as a share of it); below 50% the profile's hint says what to look at.",
        );
    }
}

/// The `compare` report; `machine` is the machine it is made on, as (name, value) facts.
pub fn compare_page(
    old_path: &Path,
    new_path: &Path,
    old: &[Record],
    new: &[Record],
    c: &Comparison,
    machine: &[(String, String)],
) -> anyhow::Result<String> {
    let title = "diskscope compare";
    let mut page = Page::new(
        title,
        &format!(
            "OLD {} vs NEW {} — generated {} by diskscope {}",
            crate::text::shown_path(old_path),
            crate::text::shown_path(new_path),
            context::now_utc(),
            env!("CARGO_PKG_VERSION")
        ),
    );
    if let Some(h) = &c.pairing {
        page.para("summary", h);
    }
    page.para("summary", &render::tally(c));
    page.h2("Verdicts");
    let rows: Vec<Vec<(String, &str)>> = c
        .matched
        .iter()
        .flat_map(|p| {
            p.metrics().map(|m| {
                let cells = render::cells(p, m);
                let class = verdict_class(m.verdict);
                cells
                    .into_iter()
                    .enumerate()
                    .map(|(i, t)| (t, if i == 6 || i == 8 { class } else { "" }))
                    .collect()
            })
        })
        .collect();
    page.table(&render::HEADER, &[0, 1, 8], &rows);
    page.para("note", render::METHOD_NOTE);
    let notes = render::note_lines(c);
    if !notes.is_empty() {
        page.h2("Can these numbers be trusted?");
        for l in &notes {
            page.para("note", l);
        }
    }
    let unmatched = render::unmatched_lines(c);
    if !unmatched.is_empty() {
        page.h2("Points on one side only");
        for l in &unmatched {
            page.para("note", l);
        }
    }
    page.h2("Figures");
    for metric in Metric::ALL {
        let name = match metric {
            Metric::MibS => "throughput",
            Metric::P99Us => "p99 latency",
        };
        if let Some(svg) = crate::compare::plot::render(c, metric, &format!("OLD vs NEW: {name}"))?
        {
            page.figure(
                &svg,
                &format!("{name}: bar = mean, dot = median, whisker = min–max over repetitions; Δ% above each pair (green faster, red slower, grey no change or undecided)"),
            );
        }
    }
    page.h2("Context");
    let mut facts = measured_on("OLD", old);
    facts.extend(measured_on("NEW", new));
    facts.extend(
        machine
            .iter()
            .map(|(k, v)| (format!("report made on: {k}"), v.clone())),
    );
    page.facts(&facts);
    page.h2("OLD: summary");
    summary_table(&mut page, old);
    page.h2("NEW: summary");
    summary_table(&mut page, new);
    Ok(page.finish(title))
}

/// One experiment's output for the batch report.
pub struct BatchExperiment {
    pub name: String,
    /// Its per-repetition CSV, read back (empty for syscall experiments or failures to read).
    pub records: Vec<Record>,
    /// Figures batch mode wrote for it: (file name, SVG text), `<name>.svg` and
    /// `<name>-timeline.svg`.
    pub figures: Vec<(String, String)>,
    /// Only a figure (the sweep's `compare.svg`): no table expected.
    pub figure_only: bool,
    /// Its open-loop points (`rate`): response percentiles beside service ones.
    pub open_loop: Vec<openloop::OpenLoopPoint>,
    /// The worst timeline interval of each of its open-loop runs.
    pub worst_intervals: Vec<openloop::WorstInterval>,
}

/// The batch report: machine (as (name, value) facts), plan, one summary table and figure per
/// experiment.
pub fn batch_page(
    sweep: &str,
    plan_text: &str,
    out_dir: &Path,
    machine: &[(String, String)],
    experiments: &[BatchExperiment],
    status: &str,
) -> anyhow::Result<String> {
    let title = format!("diskscope sweep {sweep}");
    let mut page = Page::new(
        &title,
        &format!(
            "results in {} — generated {} by diskscope {}",
            crate::text::shown_path(out_dir),
            context::now_utc(),
            env!("CARGO_PKG_VERSION")
        ),
    );
    page.para("summary", status);
    page.h2("Machine");
    page.facts(machine);
    page.h2("Plan");
    page.pre(plan_text);
    for x in experiments {
        page.h2(&format!("Experiment {}", x.name));
        if !x.records.is_empty() {
            let mut facts = measured_on("measured", &x.records);
            facts.truncate(2);
            page.facts(&facts);
            summary_table(&mut page, &x.records);
            openloop::table(&mut page, &x.open_loop);
        } else if !x.figure_only {
            page.para(
                "note",
                "no throughput rows to summarize (system calls, or no run finished); see the CSV in the results directory",
            );
        }
        for (name, svg) in &x.figures {
            let what = if name.ends_with("-timeline.svg") && !x.open_loop.is_empty() {
                "each run over time: service time p50 thin, p99 thick, p99.9 dashed, and for \
                 open-loop runs the response time p99 (pale, thick) beside them; throughput, \
                 device util %"
            } else if name.ends_with("-timeline.svg") {
                "each run over time: latency percentiles, throughput, device util %"
            } else if name.ends_with("-knee.svg") {
                "the knee search: response time p50 thin, p99 thick, p99.9 dashed against the \
                 offered rate; the target, the bracket and the knee marked, the closed-loop \
                 ceiling in grey"
            } else {
                "bar = mean, dot = median, whisker = min–max over repetitions"
            };
            page.figure(svg, &format!("{name}: {what}"));
            if name.ends_with("-timeline.svg") {
                openloop::worst_table(&mut page, &x.worst_intervals);
            }
        }
    }
    Ok(page.finish(&title))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::load::Bound;

    fn rec(mib_s: Vec<f64>, bound: Option<Bound>) -> Record {
        Record {
            bound,
            ..Record::sample(4096, mib_s, 0.0)
        }
    }

    #[test]
    fn the_bound_cell_names_the_bound_its_share_and_below_half_the_hint() {
        let b = |hint: Option<&str>| {
            Some(Bound {
                bound: "memory-bound".into(),
                bound_mib_s: 23.1 * 1024.0,
                hint: hint.map(String::from),
            })
        };
        let near = rec(vec![0.88 * 23.1 * 1024.0], b(None));
        assert_eq!(bound_cell(&near), "memory-bound 23.1 GiB/s · 88%");
        let far = rec(vec![0.1 * 23.1 * 1024.0], b(Some("misaligned blocks")));
        assert_eq!(
            bound_cell(&far),
            "memory-bound 23.1 GiB/s · 10% — misaligned blocks"
        );
        assert_eq!(bound_cell(&rec(vec![1.0], None)), "");

        let mut page = Page::new("t", "s");
        summary_table(&mut page, &[rec(vec![1.0], None)]);
        let html = page.finish("t");
        assert!(!html.contains(">bound</th>"), "no bound, no column");
        let mut page = Page::new("t", "s");
        summary_table(&mut page, &[rec(vec![1.0], None), far]);
        let html = page.finish("t");
        assert!(html.contains("<th class=\"t\">bound</th>"), "{html}");
        assert!(html.contains("10% — misaligned blocks"), "{html}");
    }
}
