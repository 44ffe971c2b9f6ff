//! The comparison as text: an aligned terminal table (default), Markdown, or CSV. Pure functions
//! of a [`Comparison`], so the HTML report and the tests read the same numbers.
//!
//! Every name in a point's label (experiment, method, pattern, ...) was read from the input
//! files, which anyone may have written: the terminal table passes each cell through
//! [`shown`] (an escape sequence is printed as text, a newline as `\n`), the Markdown table
//! through [`md_cell`] (and `|` cannot end a cell), and the CSV through [`csv_cell`] (a cell that
//! begins like a formula gets a leading `'`; numbers stay numbers).

use super::diff::{Comparison, MetricDiff, Outlier, PointDiff, Verdict};
use super::load::Point;
use crate::config::{Label, RecordedSetup};
use crate::measure::columns::Part;
use crate::text::{csv_cell, md_cell, shown};
use serde::Serialize;
use std::borrow::Cow;

/// How the verdicts are reached, in one paragraph (the HTML report prints it under its table).
pub const METHOD_NOTE: &str = "Each metric is compared on the logarithms of the repetitions, so a change is a ratio: Δ% is the Hodges–Lehmann estimate (the median of the pairwise NEW/OLD ratios, minus one) with its distribution-free 95% interval, which stays above −100%. The verdict is faster or slower when the Mann–Whitney U test rejects \"no change\" at the 5% level (exact for small samples) and the interval excludes zero; no change when the whole interval lies inside the margin (±5% unless --margin says otherwise: an equivalence test); otherwise inconclusive, with why: too few repetitions (and about how many would decide) or a spread too wide for the margin; too few repetitions when no outcome could reach 5% (3 against 3). A repetition the outlier rule (modified z-score > 3.5) flags is left out of the verdict and named, at most a quarter of a side and from 5 repetitions up. Ranks are used because one outlying repetition must not hide a change where every NEW repetition is below every OLD one.";

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
pub fn cells(p: &PointDiff, m: &MetricDiff) -> [String; 9] {
    let measured = m.verdict != Verdict::NotMeasured;
    let v = |x: f64| if measured { num(x) } else { "-".into() };
    [
        p.label(),
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
        p.judgement(m),
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
        .flat_map(|p| p.metrics().map(|m| cells(p, m)))
        .collect()
}

/// Lines listing the points found on one side only (for chosen pairs: those without a partner).
pub fn unmatched_lines(c: &Comparison) -> Vec<String> {
    let (a, b) = if c.pairing.is_some() {
        ("A without a partner in B", "B without a partner in A")
    } else {
        ("only in OLD", "only in NEW")
    };
    let mut v = Vec::new();
    for s in &c.only_old {
        v.push(format!("{a}: {}", s.label()));
    }
    for s in &c.only_new {
        v.push(format!("{b}: {}", s.label()));
    }
    v
}

/// `rep 3 = 1110`.
fn outlier_text(o: &Outlier) -> String {
    format!("{} = {}", o.name(), num(o.value))
}

/// `5.2`, or `∞ (MAD 0)` when more than half the side is one value.
fn z_text(z: f64) -> String {
    if z.is_finite() {
        format!("{z:.1}")
    } else {
        "∞ (more than half the side is one value)".into()
    }
}

/// The outlier rule's lines: each repetition it left out of the spread, named (`outlier: x: …:
/// MiB/s: OLD rep 8 = 1110 (modified z-score 66.8 > 3.5, of 8 repetitions): left out of the
/// spread; …`), and, hyperfine style, one line per side for outliers it kept because there were
/// too many or too few repetitions to leave any out.
pub fn warning_lines(c: &Comparison) -> Vec<String> {
    let mut v = Vec::new();
    for p in &c.matched {
        for m in p.metrics() {
            if m.verdict == Verdict::NotMeasured {
                continue;
            }
            for (side, list, n) in [
                ("OLD", &m.outliers_old, m.old.n),
                ("NEW", &m.outliers_new, m.new.n),
            ] {
                if list.is_empty() {
                    continue;
                }
                if list.iter().all(|o| o.dropped) {
                    for o in list.iter() {
                        v.push(format!(
                            "outlier: {}: {}: {side} {} (modified z-score {} > 3.5, of {n} repetitions): left out of the spread; kept in Δ and its interval, which ranks protect from it",
                            p.label(),
                            m.metric.unit(),
                            outlier_text(o),
                            z_text(o.z),
                        ));
                    }
                    continue;
                }
                let values: Vec<String> = list.iter().map(outlier_text).collect();
                let why = if n < super::diff::MIN_REPS_TO_DROP {
                    format!(
                        "kept: fewer than {} repetitions",
                        super::diff::MIN_REPS_TO_DROP
                    )
                } else {
                    "kept: more than a quarter of the side, which is then not one steady condition"
                        .into()
                };
                v.push(format!(
                    "warning: {}: {}: {side} has {} outlier{} of {n} repetitions ({}; modified z-score > 3.5), {why}: something else ran or the cache state changed during the run",
                    p.label(),
                    m.metric.unit(),
                    list.len(),
                    if list.len() == 1 { "" } else { "s" },
                    values.join(", ")
                ));
            }
        }
    }
    v
}

/// Notes on the trust of each point (issues 22, 23): sides whose verdicts differ, a side that
/// is suspect, a side whose timeline shows a level shift (its mean is then of two levels).
pub fn note_lines(c: &Comparison) -> Vec<String> {
    let mut v = Vec::new();
    for p in &c.matched {
        let label = p.label();
        if let Some(d) = p.verdicts_differ() {
            v.push(format!(
                "note: {label}: {d}: a change between them may be what made one suspect, not what you changed"
            ));
        } else if let Some(s) = p.verdict_old.as_ref().filter(|s| s.starts_with("suspect")) {
            v.push(format!(
                "note: {label}: OLD and NEW are both {s}: neither figure is the disk's alone"
            ));
        }
        for (side, shifts) in [("OLD", &p.shifts_old), ("NEW", &p.shifts_new)] {
            for (rep, what) in shifts {
                let rep = if *rep > 0 {
                    format!(" (rep {rep})")
                } else {
                    String::new()
                };
                v.push(format!(
                    "note: {label}: {side}'s timeline shows a level shift{rep}: {what}; its mean is of two levels"
                ));
            }
        }
    }
    v
}

/// One line counting verdicts (of each point's throughput and p99 latency), and the points that
/// need more repetitions.
pub fn tally(c: &Comparison) -> String {
    let count = |v: Verdict| {
        c.matched
            .iter()
            .flat_map(|p| p.metrics())
            .filter(|m| m.verdict == v)
            .count()
    };
    let inconclusive = match count(Verdict::Inconclusive) {
        0 => String::new(),
        n => format!(", {n} inconclusive"),
    };
    let margin = c
        .matched
        .first()
        .map(|p| super::diff::margin_text(p.mib_s.margin_pct))
        .unwrap_or_else(|| super::diff::margin_text(super::diff::DEFAULT_MARGIN_PCT));
    let few = c
        .matched
        .iter()
        .filter(|p| p.metrics().iter().any(|m| m.wants_more_reps()))
        .count();
    let few = match few {
        0 => String::new(),
        n => format!("; {n} of them with too few repetitions"),
    };
    format!(
        "{} matched points: {} faster, {} slower, {} no change (within {margin}){inconclusive} (throughput and p99 latency; Mann–Whitney U at 5%, Hodges–Lehmann 95% CI){few}; {} only in OLD, {} only in NEW",
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
    let rows: Vec<[String; 9]> = rows(c)
        .into_iter()
        .map(|r| r.map(|cell| shown(&cell).into_owned()))
        .collect();
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
    let mut out = String::new();
    if let Some(h) = &c.pairing {
        out += &shown(h);
        out.push('\n');
    }
    out += &line(&HEADER.map(String::from));
    let mut last = String::new();
    for mut r in rows {
        if r[0] == last {
            r[0] = String::new();
        } else {
            last = r[0].clone();
        }
        out += &line(&r);
    }
    for l in warning_lines(c)
        .into_iter()
        .chain(note_lines(c))
        .chain(unmatched_lines(c))
    {
        out += &shown(&l);
        out.push('\n');
    }
    out += &tally(c);
    out.push('\n');
    out
}

/// A GitHub-flavoured Markdown table (every cell through [`md_cell`]).
pub fn markdown(c: &Comparison) -> String {
    let esc = |s: &str| md_cell(s).into_owned();
    let mut out = match &c.pairing {
        Some(h) => format!("{}\n\n", esc(h)),
        None => String::new(),
    };
    out += &format!("| {} |\n", HEADER.join(" | "));
    out += "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    for r in rows(c) {
        let mut r: Vec<String> = r.iter().map(|c| esc(c)).collect();
        if r[8].starts_with("faster") || r[8].starts_with("slower") {
            r[8] = format!("**{}**", r[8]);
        }
        out += &format!("| {} |\n", r.join(" | "));
    }
    let un: Vec<String> = warning_lines(c)
        .into_iter()
        .chain(note_lines(c))
        .chain(unmatched_lines(c))
        .collect();
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
/// `only_new` in the verdict column and empty numbers. Written flat: the point's experiment and
/// kind, its setup in the order compare lists points ([`Point::COLUMNS`]), then the figures.
struct CsvRow<'a> {
    /// The point, its text made safe for a spreadsheet.
    point: Point,
    figures: CsvFigures<'a>,
}

impl Serialize for CsvRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let setup = Part::of(Some(&self.point.setup));
        let mut figures = Part::of(Some(&self.figures));
        let len = 2 + Point::COLUMNS.len() + figures.present();
        let mut st = s.serialize_struct("CsvRow", len)?;
        st.serialize_field("experiment", &self.point.experiment)?;
        st.serialize_field("kind", self.point.kind().as_str())?;
        for c in Point::COLUMNS {
            setup.emit_one(&mut st, c, true)?;
        }
        figures.emit(&mut st, None)?;
        st.end()
    }
}

/// A compare CSV row's figures.
#[derive(Debug, Default, Serialize)]
struct CsvFigures<'a> {
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
    /// Mann–Whitney two-sided p-value.
    p_value: Option<f64>,
    /// Outlying repetitions of each side (modified z-score > 3.5).
    old_outliers: Option<usize>,
    new_outliers: Option<usize>,
    /// max / min of each side's repetitions.
    old_spread: Option<f64>,
    new_spread: Option<f64>,
    /// Each side's verdict (issue 23), empty where its rows carry none.
    old_verdict: Cow<'a, str>,
    new_verdict: Cow<'a, str>,
    /// `verdicts differ: ...` and level shifts in a side's timeline, `; `-separated.
    note: String,
    /// The equivalence margin of `no change`, percent.
    margin_pct: Option<f64>,
    /// For `inconclusive`: about how many repetitions a side would decide.
    reps_to_decide: Option<usize>,
    /// Repetitions the outlier rule left out of the spread: `rep 8 = 1110 (z 66.8)`, `; `-separated.
    old_dropped: String,
    new_dropped: String,
    /// For a chosen pair of different setups: what NEW's point differs in (`block_size 4K → 64K`).
    pair: Cow<'a, str>,
}

impl<'a> CsvRow<'a> {
    /// The row of point `p` (its text made safe for a spreadsheet) with `figures`.
    fn of(p: &Point, figures: CsvFigures<'a>) -> Self {
        let safe = |l: &str| csv_cell(l).into_owned();
        let s = &p.setup;
        CsvRow {
            point: Point {
                experiment: safe(&p.experiment),
                setup: RecordedSetup {
                    op: Label::of_text(&safe(s.op.as_str())),
                    method: Label::of_text(&safe(s.method.as_str())),
                    pattern: Label::of_text(&safe(s.pattern.as_str())),
                    cache: Label::of_text(&safe(s.cache.as_str())),
                    ..s.clone()
                },
            },
            figures,
        }
    }
}

/// The `note` cell of a point: differing verdicts, then each side's level shifts.
fn csv_note(p: &PointDiff) -> String {
    let mut parts: Vec<String> = p.verdicts_differ().into_iter().collect();
    for (side, shifts) in [("OLD", &p.shifts_old), ("NEW", &p.shifts_new)] {
        for (rep, what) in shifts {
            parts.push(format!("{side} rep {rep} level shift: {what}"));
        }
    }
    parts.join("; ")
}

/// The dropped outliers of a side as a cell: `rep 8 = 1110 (z 66.8)`.
fn dropped_cell(list: &[Outlier]) -> String {
    let v: Vec<String> = list
        .iter()
        .filter(|o| o.dropped)
        .map(|o| format!("{} (z {})", outlier_text(o), z_text(o.z)))
        .collect();
    v.join("; ")
}

/// CSV text, header first.
pub fn csv(c: &Comparison) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for row in csv_rows(c) {
        w.serialize(row)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The rows of [`csv`] as JSON objects, each under the CSV's column names (cells that could
/// start a spreadsheet formula are neutralised the same way).
pub fn json_rows(c: &Comparison) -> anyhow::Result<serde_json::Value> {
    Ok(serde_json::to_value(csv_rows(c))?)
}

fn csv_rows(c: &Comparison) -> Vec<CsvRow<'_>> {
    let mut rows = Vec::new();
    for p in &c.matched {
        for m in p.metrics() {
            rows.push(CsvRow::of(
                &p.point,
                CsvFigures {
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
                    p_value: m.p_value,
                    old_outliers: Some(m.outliers_old.len()),
                    new_outliers: Some(m.outliers_new.len()),
                    old_spread: Some(m.spread_old).filter(|v| v.is_finite()),
                    new_spread: Some(m.spread_new).filter(|v| v.is_finite()),
                    old_verdict: csv_cell(p.verdict_old.as_deref().unwrap_or("")),
                    new_verdict: csv_cell(p.verdict_new.as_deref().unwrap_or("")),
                    note: csv_cell(&csv_note(p)).into_owned(),
                    margin_pct: Some(m.margin_pct),
                    reps_to_decide: m.reps_to_decide,
                    old_dropped: dropped_cell(&m.outliers_old),
                    new_dropped: dropped_cell(&m.outliers_new),
                    pair: match &p.new_point {
                        Some(n) => Cow::Owned(
                            csv_cell(&super::pair::differences_text(&super::pair::differences(
                                &p.point, n,
                            )))
                            .into_owned(),
                        ),
                        None => Cow::Borrowed(""),
                    },
                },
            ));
        }
    }
    for (side, list) in [("only_old", &c.only_old), ("only_new", &c.only_new)] {
        for s in list {
            rows.push(CsvRow::of(
                s,
                CsvFigures {
                    verdict: side,
                    ..Default::default()
                },
            ));
        }
    }
    rows
}
