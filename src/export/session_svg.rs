//! The explorer's session as one SVG page (`e`): the session's throughput over the chart's span
//! with its setting changes, one row's whole run (throughput, and latency p50 and p99 on a log
//! axis) with its verdict, the latency histogram of the current setting, and the results table
//! — what a screenshot shows, but scalable, with exact numbers and a subtitle and context line
//! saying where and when it was measured. A [`Figure`] drawn by
//! the one renderer, a pure function of [`SessionFigure`], so it is testable without a
//! terminal.

use super::axis::{fmt_tick, linear_ticks, log_ticks};
use super::figure::{Axis, Bar, Bars, Color, Figure, Legend, Line, Panel, Rule, Table, Ticks};

/// Everything the page shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionFigure {
    pub title: String,
    /// Host, file, size, date.
    pub subtitle: String,
    /// Throughput per bin, oldest first, in `unit`.
    pub series: Vec<f64>,
    pub bin_s: f64,
    pub unit: String,
    /// Where a setting changed: the index in `series` of its first point and its settings;
    /// drawn as dashed vertical lines with the label.
    pub marks: Vec<(usize, String)>,
    /// Latency buckets: label and operation count.
    pub histogram: Vec<(String, u64)>,
    /// Header first.
    pub table: Vec<Vec<String>>,
    /// Where the file lives: filesystem, device and warnings (one line).
    pub context: String,
    /// One row's whole run, when one is kept.
    pub row: Option<RowFigure>,
}

/// One row over its whole run, at the resolution it was kept at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowFigure {
    /// The row's setting (`pread 1M`), and `live` while it runs.
    pub label: String,
    /// Seconds per point.
    pub bin_s: f64,
    /// Throughput per point, in the figure's unit.
    pub series: Vec<f64>,
    /// Latency p50 and p99 per point, µs (NaN where a point had no operations).
    pub p50_us: Vec<f64>,
    pub p99_us: Vec<f64>,
    /// `ok`, or `suspect (codes): sentences`; empty when not judged.
    pub verdict: String,
}

/// The SVG document.
pub fn render(f: &SessionFigure) -> String {
    figure(f).to_svg()
}

/// The page as a figure.
pub fn figure(f: &SessionFigure) -> Figure {
    // Throughput over time.
    let n = f.series.len();
    let total_s = n as f64 * f.bin_s;
    let max = f.series.iter().copied().fold(0.0f64, f64::max);
    let (ticks, top) = linear_ticks(if max > 0.0 { max } else { 1.0 });
    let (x_ticks, _) = linear_ticks(if total_s > 0.0 { total_s } else { 1.0 });
    let mut throughput = Panel::new(
        Axis::linear("seconds (oldest shown = 0)")
            .range(0.0, if total_s > 0.0 { total_s } else { 1.0 })
            .ticks(Ticks::At(
                x_ticks.into_iter().filter(|t| *t <= total_s).collect(),
            )),
        Axis::linear("")
            .range(0.0, top)
            .ticks(Ticks::At(ticks))
            .grid(),
    )
    .height(220.0)
    .legend(Legend::Hidden)
    .caption(format!(
        "throughput over time ({}, one point per {} s)",
        f.unit,
        fmt_tick(f.bin_s)
    ))
    .empty_text("no throughput recorded");
    if n > 0 {
        let at = |i: usize| (i as f64 + 0.5) * f.bin_s;
        throughput = throughput.layer(Line::new(
            Color::BLUE,
            f.series
                .iter()
                .enumerate()
                .map(|(i, v)| (at(i), *v))
                .collect(),
        ));
        for (i, label) in f.marks.iter().filter(|(i, _)| *i < n) {
            throughput = throughput.layer(
                Rule::vertical(at(*i), Color::RED)
                    .dashed(4.0, 3.0)
                    .label(label.clone(), 0.0),
            );
        }
    }
    // Latency histogram.
    let most = f.histogram.iter().map(|b| b.1).max().unwrap_or(0);
    let nb = f.histogram.len();
    let mut histogram = Panel::new(
        Axis::linear("")
            .range(0.0, nb.max(1) as f64)
            .ticks(Ticks::Labels(
                f.histogram
                    .iter()
                    .enumerate()
                    .map(|(i, (label, _))| (i as f64 + 0.5, label.clone()))
                    .collect(),
            )),
        // 88% of the height: the tallest bar's label stays inside.
        Axis::linear("")
            .range(0.0, most.max(1) as f64 / 0.88)
            .ticks(Ticks::Hidden),
    )
    .height(180.0)
    .legend(Legend::Hidden)
    .caption(
        "latency per operation of the current setting (operations per bucket; buckets named by \
         their lower bound)",
    )
    .empty_text("no operations in the current setting");
    if most > 0 {
        histogram = histogram.layer(Bars {
            name: None,
            color: Color(148, 103, 189),
            opacity: 1.0,
            bars: f
                .histogram
                .iter()
                .enumerate()
                .map(|(i, (_, count))| Bar {
                    label: Some(fmt_tick(*count as f64)),
                    ..Bar::new(i as f64 + 0.1, i as f64 + 0.9, *count as f64)
                })
                .collect(),
        });
    }
    let mut fig = Figure::new(f.title.clone()).subtitle(f.subtitle.clone());
    // The context, wrapped between words so a long one stays on the page.
    for line in wrap(&f.context, CONTEXT_CHARS) {
        fig = fig.subtitle(line);
    }
    fig = fig.panel(throughput);
    if let Some(row) = &f.row {
        for p in row_panels(row, &f.unit) {
            fig = fig.panel(p);
        }
        if !row.verdict.is_empty() {
            let color = if row.verdict == "ok" {
                Color::GREEN
            } else {
                Color::RED
            };
            fig = fig.note(format!("verdict of {}: {}", row.label, row.verdict), color);
        }
    }
    fig = fig.panel(histogram);
    // Results table, monospace, columns as wide as their widest cell.
    fig.table = Some(Table {
        caption: "results".into(),
        rows: f.table.clone(),
        left_columns: 3,
    });
    fig
}

/// Characters of the context per line (11 px sans-serif on a 1000 px page).
const CONTEXT_CHARS: usize = 160;

/// `text` broken between words into lines of at most `max` characters (a longer word alone).
fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        match lines.last_mut() {
            Some(cur) if cur.chars().count() + 1 + word.chars().count() <= max => {
                cur.push(' ');
                cur.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Latency p50 and p99 colours of a row (apart from the throughput's blue).
const P50: Color = Color(227, 119, 194);
const P99: Color = Color(23, 190, 207);

/// The finite stretches of `v` as lines (a point without operations breaks a line instead of
/// dropping it to zero), at `x(i)`.
fn stretches(v: &[f64], x: impl Fn(usize) -> f64, color: Color, name: &str) -> Vec<Line> {
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for (i, val) in v.iter().enumerate() {
        if val.is_finite() && *val > 0.0 {
            out.last_mut().expect("one").push((x(i), *val));
        } else if !out.last().expect("one").is_empty() {
            out.push(Vec::new());
        }
    }
    out.into_iter()
        .filter(|p| !p.is_empty())
        .enumerate()
        .map(|(i, p)| {
            let l = Line::new(color, p).width(2.0);
            if i == 0 {
                l.name(name)
            } else {
                l
            }
        })
        .collect()
}

/// The row's section: its throughput over its whole run, and its latency p50 and p99 (log
/// axis), captioned by the row and the run's length.
fn row_panels(row: &RowFigure, unit: &str) -> Vec<Panel> {
    let n = row.series.len();
    let total_s = (n as f64 * row.bin_s).max(row.bin_s).max(1e-9);
    let at = |i: usize| (i as f64 + 0.5) * row.bin_s;
    let (x_ticks, _) = linear_ticks(total_s);
    let time = || {
        Axis::linear("seconds since the row started")
            .range(0.0, total_s)
            .ticks(Ticks::At(
                x_ticks.iter().copied().filter(|t| *t <= total_s).collect(),
            ))
    };
    let max = row.series.iter().copied().fold(0.0f64, f64::max);
    let (ticks, top) = linear_ticks(if max > 0.0 { max } else { 1.0 });
    let mut tp = Panel::new(
        time(),
        Axis::linear(unit.to_string())
            .range(0.0, top)
            .ticks(Ticks::At(ticks))
            .grid(),
    )
    .height(150.0)
    .legend(Legend::Hidden)
    .caption(format!(
        "the row {} over its whole run ({} s, one point per {} s)",
        row.label,
        fmt_tick(n as f64 * row.bin_s),
        fmt_tick(row.bin_s)
    ))
    .empty_text("no throughput recorded");
    if n > 0 {
        tp = tp.layer(Line::new(
            Color::BLUE,
            row.series
                .iter()
                .enumerate()
                .map(|(i, v)| (at(i), *v))
                .collect(),
        ));
    }
    let lat = row
        .p50_us
        .iter()
        .chain(&row.p99_us)
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = lat.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (lo, hi) = if lo.is_finite() {
        (lo, hi)
    } else {
        (1.0, 10.0)
    };
    let lt = log_ticks(lo, hi);
    let mut lp = Panel::new(
        time(),
        Axis::log("µs — log scale")
            .range(lt[0], (hi * 1.5).max(lt[lt.len() - 1]))
            .ticks(Ticks::At(lt))
            .grid(),
    )
    .height(150.0)
    .caption(format!("the row {}: latency p50 and p99", row.label))
    .empty_text("no operations");
    for l in stretches(&row.p50_us, at, P50, "p50")
        .into_iter()
        .chain(stretches(&row.p99_us, at, P99, "p99"))
    {
        lp = lp.layer(l);
    }
    vec![tp, lp]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_the_three_parts_and_escapes_text() {
        let f = SessionFigure {
            title: "diskscope session".into(),
            subtitle: "host a & b".into(),
            series: vec![10.0, 20.0, 15.0],
            bin_s: 0.1,
            unit: "MiB/s".into(),
            marks: vec![(1, "read pread 4K".into())],
            histogram: vec![("1µs".into(), 5), ("2µs".into(), 10)],
            table: vec![
                vec!["setting".into(), "MiB/s".into()],
                vec!["pread 1M".into(), "15".into()],
            ],
            context: "ext4 on vda".into(),
            row: None,
        };
        let svg = render(&f);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("host a &amp; b"));
        assert!(svg.contains("<polyline"));
        assert_eq!(svg.matches("fill=\"#9467bd\"").count(), 2);
        crate::export::figure::svg::check(&svg).unwrap();
        assert!(svg.contains("pread 1M"));
        assert!(svg.contains("stroke-dasharray=\"4 3\"") && svg.contains("read pread 4K"));
    }

    #[test]
    fn a_rows_section_draws_its_throughput_and_p50_and_p99_lines_and_its_verdict() {
        let f = SessionFigure {
            unit: "MiB/s".into(),
            row: Some(RowFigure {
                label: "pwrite 1M".into(),
                bin_s: 0.24,
                series: vec![3000.0, 3100.0, 2900.0, 3000.0, 3050.0],
                p50_us: vec![200.0, 205.0, f64::NAN, 210.0, 215.0],
                p99_us: vec![900.0, 950.0, f64::NAN, 1200.0, 1100.0],
                verdict: "suspect (writes_in_page_cache): buffered writes".into(),
            }),
            ..Default::default()
        };
        let svg = render(&f);
        assert!(
            svg.contains("the row pwrite 1M over its whole run (1.2 s"),
            "{svg}"
        );
        assert!(svg.contains("verdict of pwrite 1M: suspect (writes_in_page_cache)"));
        assert!(svg.contains("#e377c2") && svg.contains("#17becf"));
        crate::export::figure::svg::check(&svg).unwrap();
        // A point without operations breaks the latency lines instead of dropping to zero:
        // the throughput line and two stretches each of p50 and p99.
        assert_eq!(
            svg.matches("<polyline").count(),
            5,
            "throughput and two latency lines in two stretches: {svg}"
        );
    }
}
