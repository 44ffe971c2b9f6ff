//! `compare --report` / `--export-html`: the comparison as one self-contained page — the verdict
//! table, the notes, the figures inline (SVG), where each side was measured, and each side's
//! summary. Built from the same records and comparison the terminal output uses, and from what
//! the front end hands in (the machine it was made on): it reads nothing itself. The summary
//! table and the "measured on" facts are shared with the sweep's page (`report`).

use super::diff::{Comparison, Metric, Verdict};
use super::load::Record;
use super::render;
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
pub fn measured_on(label: &str, recs: &[Record]) -> Vec<(String, String)> {
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
pub fn summary_table(page: &mut Page, recs: &[Record]) {
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
            crate::export::now_utc(),
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
