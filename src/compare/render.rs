//! The comparison as text: an aligned terminal table (default), Markdown, or CSV. Pure functions
//! of a [`Comparison`], so the HTML report and the tests read the same numbers.

use super::diff::{Comparison, MetricDiff, Verdict};
use super::load::Setup;
use serde::Serialize;

/// Numbers with three significant digits or so: `1234`, `12.3`, `0.123`.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `+12.3%`.
pub fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.1}%")
    } else {
        "-".into()
    }
}

/// `[-3.1%, +4.0%]`.
pub fn ci(m: &MetricDiff) -> String {
    match m.ci_pct {
        Some((lo, hi)) => format!("[{}, {}]", pct(lo), pct(hi)),
        None => "-".into(),
    }
}

/// The cells of one row of any table: point, metric, OLD mean, OLD median, NEW mean, NEW median,
/// Δ%, 95 % CI, verdict.
pub fn cells(setup: &Setup, m: &MetricDiff) -> [String; 9] {
    let measured = m.verdict != Verdict::NotMeasured;
    let v = |x: f64| if measured { num(x) } else { "-".into() };
    [
        setup.label(),
        m.metric.unit().into(),
        v(m.old.mean),
        v(m.old.median),
        v(m.new.mean),
        v(m.new.median),
        if measured {
            pct(m.delta_pct)
        } else {
            "-".into()
        },
        ci(m),
        m.verdict.as_str().into(),
    ]
}

pub const HEADER: [&str; 9] = [
    "point",
    "metric",
    "OLD mean",
    "OLD median",
    "NEW mean",
    "NEW median",
    "Δ%",
    "95% CI of Δ",
    "verdict",
];

fn rows(c: &Comparison) -> Vec<[String; 9]> {
    c.matched
        .iter()
        .flat_map(|p| p.metrics().map(|m| cells(&p.setup, m)))
        .collect()
}

/// Lines listing the points found on one side only.
pub fn unmatched_lines(c: &Comparison) -> Vec<String> {
    let mut v = Vec::new();
    for s in &c.only_old {
        v.push(format!("only in OLD: {}", s.label()));
    }
    for s in &c.only_new {
        v.push(format!("only in NEW: {}", s.label()));
    }
    v
}

/// One line counting verdicts.
pub fn tally(c: &Comparison) -> String {
    let count = |v: Verdict| {
        c.matched
            .iter()
            .flat_map(|p| p.metrics())
            .filter(|m| m.verdict == v)
            .count()
    };
    format!(
        "{} matched points: {} faster, {} slower, {} no significant change (throughput and p99 latency; Welch's t, 95% CI); {} only in OLD, {} only in NEW",
        c.matched.len(),
        count(Verdict::Faster),
        count(Verdict::Slower),
        count(Verdict::NoChange),
        c.only_old.len(),
        c.only_new.len()
    )
}

/// The aligned terminal table (points with both metrics on consecutive lines).
pub fn table(c: &Comparison) -> String {
    let rows = rows(c);
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([HEADER[i].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..9).map(width).collect();
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(c.chars().count());
            // Text columns left-aligned, numbers right-aligned.
            if i < 2 || i == 8 {
                s += c;
                if i < 8 {
                    s += &" ".repeat(pad);
                }
            } else {
                s += &" ".repeat(pad);
                s += c;
            }
            if i < 8 {
                s += "  ";
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&HEADER.map(String::from));
    let mut last = String::new();
    for mut r in rows {
        if r[0] == last {
            r[0] = String::new();
        } else {
            last = r[0].clone();
        }
        out += &line(&r);
    }
    for l in unmatched_lines(c) {
        out += &l;
        out.push('\n');
    }
    out += &tally(c);
    out.push('\n');
    out
}

/// A GitHub-flavoured Markdown table (pipes in labels escaped).
pub fn markdown(c: &Comparison) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = format!("| {} |\n", HEADER.join(" | "));
    out += "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    for r in rows(c) {
        let mut r: Vec<String> = r.iter().map(|c| esc(c)).collect();
        if r[8] == "faster" || r[8] == "slower" {
            r[8] = format!("**{}**", r[8]);
        }
        out += &format!("| {} |\n", r.join(" | "));
    }
    let un = unmatched_lines(c);
    if !un.is_empty() {
        out.push('\n');
        for l in un {
            out += &format!("- {}\n", esc(&l));
        }
    }
    out += &format!("\n{}\n", tally(c));
    out
}

/// One CSV row per matched point and metric; unmatched points get a row with `only_old` /
/// `only_new` in the verdict column and empty numbers.
#[derive(Debug, Serialize)]
struct CsvRow<'a> {
    experiment: &'a str,
    kind: &'static str,
    method: &'a str,
    block_size_bytes: u64,
    threads: usize,
    queue_depth: u32,
    cache: &'a str,
    direct: bool,
    operation: &'a str,
    pattern: &'a str,
    metric: &'static str,
    old_n: Option<usize>,
    old_mean: Option<f64>,
    old_median: Option<f64>,
    new_n: Option<usize>,
    new_mean: Option<f64>,
    new_median: Option<f64>,
    delta_pct: Option<f64>,
    ci_low_pct: Option<f64>,
    ci_high_pct: Option<f64>,
    verdict: &'static str,
}

impl<'a> CsvRow<'a> {
    /// The setup columns, numbers empty.
    fn of(s: &'a Setup) -> Self {
        CsvRow {
            experiment: &s.experiment,
            kind: s.kind.as_str(),
            method: s.method.as_str(),
            block_size_bytes: s.block_size_bytes,
            threads: s.threads,
            queue_depth: s.queue_depth,
            cache: s.cache.as_str(),
            direct: s.direct,
            operation: s.operation.as_str(),
            pattern: s.pattern.as_str(),
            metric: "",
            old_n: None,
            old_mean: None,
            old_median: None,
            new_n: None,
            new_mean: None,
            new_median: None,
            delta_pct: None,
            ci_low_pct: None,
            ci_high_pct: None,
            verdict: "",
        }
    }
}

/// CSV text, header first.
pub fn csv(c: &Comparison) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for p in &c.matched {
        for m in p.metrics() {
            w.serialize(CsvRow {
                metric: m.metric.key(),
                old_n: Some(m.old.n),
                old_mean: Some(m.old.mean),
                old_median: Some(m.old.median),
                new_n: Some(m.new.n),
                new_mean: Some(m.new.mean),
                new_median: Some(m.new.median),
                delta_pct: Some(m.delta_pct).filter(|v| v.is_finite()),
                ci_low_pct: m.ci_pct.map(|c| c.0),
                ci_high_pct: m.ci_pct.map(|c| c.1),
                verdict: m.verdict.as_str(),
                ..CsvRow::of(&p.setup)
            })?;
        }
    }
    for (side, list) in [("only_old", &c.only_old), ("only_new", &c.only_new)] {
        for s in list {
            w.serialize(CsvRow {
                verdict: side,
                ..CsvRow::of(s)
            })?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
