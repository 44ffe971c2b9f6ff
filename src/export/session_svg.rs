//! The explorer's session as one SVG page (`e`): the session's throughput over the chart's span
//! with its setting changes, one row's whole run (throughput, and latency p50 and p99 on a log
//! axis) with its verdict, the latency histogram of the current setting, and the results table
//! — what a screenshot shows, but scalable, with exact numbers and a subtitle and context line
//! saying where and when it was measured. Written by hand (plain `<path>`, `<rect>` and
//! `<text>`), a pure function of [`SessionFigure`], so it is testable without a terminal.

use super::axis::{fmt_tick, fmt_us, linear_ticks, log_ticks, UsStyle};
use std::fmt::Write;

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

const W: f64 = 1000.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG document.
pub fn render(f: &SessionFigure) -> String {
    let table_h = 22.0 * f.table.len() as f64 + 40.0;
    let row_h = if f.row.is_some() { ROW_SECTION_H } else { 0.0 };
    // The context, wrapped between words so a long one stays on the page.
    let context = wrap(&f.context, CONTEXT_CHARS);
    let head_h = 14.0 * context.len().saturating_sub(1) as f64 + 8.0;
    let h = 90.0 + head_h + 260.0 + 40.0 + row_h + 240.0 + 40.0 + table_h;
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif">
<rect width="{W}" height="{h}" fill="white"/>
<text x="{}" y="32" font-size="22" text-anchor="middle">{}</text>
<text x="{}" y="56" font-size="13" fill="#555" text-anchor="middle">{}</text>
"##,
        W / 2.0,
        esc(&f.title),
        W / 2.0,
        esc(&f.subtitle),
    );
    for (i, line) in context.iter().enumerate() {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" font-size="11" fill="#777" text-anchor="middle">{}</text>"##,
            W / 2.0,
            72.0 + 14.0 * i as f64,
            esc(line)
        );
    }
    // Throughput over time.
    let (x0, y0, pw, ph) = (80.0, 90.0 + head_h, W - 120.0, 220.0);
    let _ = writeln!(
        s,
        r#"<text x="{x0}" y="{}" font-size="15">throughput over time ({}, one point per {} s)</text>"#,
        y0 - 8.0,
        esc(&f.unit),
        fmt_tick(f.bin_s)
    );
    let max = f.series.iter().copied().fold(0.0f64, f64::max);
    let (ticks, top) = linear_ticks(if max > 0.0 { max } else { 1.0 });
    for t in &ticks {
        let y = y0 + ph - t / top * ph;
        let _ = writeln!(
            s,
            "<line x1=\"{x0}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
            x0 + pw,
            x0 - 6.0,
            y + 4.0,
            fmt_tick(*t)
        );
    }
    let n = f.series.len();
    if n > 0 {
        let total_s = n as f64 * f.bin_s;
        let mut d = String::new();
        for (i, v) in f.series.iter().enumerate() {
            let x = x0 + (i as f64 + 0.5) / n as f64 * pw;
            let y = y0 + ph - v / top * ph;
            let _ = write!(d, "{}{x:.1},{y:.1} ", if i == 0 { "M" } else { "L" });
        }
        let _ = writeln!(
            s,
            "<path d=\"{d}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\"/>"
        );
        for (i, label) in f.marks.iter().filter(|(i, _)| *i < n) {
            let x = x0 + (*i as f64 + 0.5) / n as f64 * pw;
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y0}\" y2=\"{}\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"11\" fill=\"#d62728\">{}</text>",
                y0 + ph,
                x + 3.0,
                y0 + 12.0,
                esc(label)
            );
        }
        let (xt, _) = linear_ticks(total_s);
        for t in xt.iter().filter(|t| **t <= total_s) {
            let x = x0 + t / total_s * pw;
            let _ = writeln!(
                s,
                "<text x=\"{x:.1}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
                y0 + ph + 16.0,
                fmt_tick(*t)
            );
        }
    } else {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"13\" fill=\"#555\" text-anchor=\"middle\">no throughput recorded</text>",
            x0 + pw / 2.0,
            y0 + ph / 2.0
        );
    }
    let _ = writeln!(
        s,
        "<line x1=\"{x0}\" x2=\"{x0}\" y1=\"{y0}\" y2=\"{}\" stroke=\"black\"/><line x1=\"{x0}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"black\"/><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">seconds (oldest shown = 0)</text>",
        y0 + ph,
        x0 + pw,
        y0 + ph,
        y0 + ph,
        x0 + pw / 2.0,
        y0 + ph + 34.0
    );
    if let Some(row) = &f.row {
        row_section(&mut s, row, &f.unit, y0 + ph + 70.0);
    }
    // Latency histogram.
    let hy = y0 + ph + 80.0 + row_h;
    let hh = 180.0;
    let _ = writeln!(
        s,
        "<text x=\"{x0}\" y=\"{}\" font-size=\"15\">latency per operation of the current setting (operations per bucket; buckets named by their lower bound)</text>",
        hy - 8.0
    );
    let most = f.histogram.iter().map(|b| b.1).max().unwrap_or(0);
    let nb = f.histogram.len();
    if nb > 0 && most > 0 {
        let bw = pw / nb as f64;
        for (i, (label, count)) in f.histogram.iter().enumerate() {
            // 88% of the height: the tallest bar's label stays below the section title.
            let bh = *count as f64 / most as f64 * hh * 0.88;
            let x = x0 + i as f64 * bw;
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#9467bd\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
                x + bw * 0.1,
                hy + hh - bh,
                bw * 0.8,
                x + bw / 2.0,
                hy + hh + 14.0,
                esc(label),
                x + bw / 2.0,
                hy + hh - bh - 3.0,
                fmt_tick(*count as f64)
            );
        }
    } else {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"13\" fill=\"#555\" text-anchor=\"middle\">no operations in the current setting</text>",
            x0 + pw / 2.0,
            hy + hh / 2.0
        );
    }
    // Results table, monospace, columns as wide as their widest cell.
    let ty = hy + hh + 60.0;
    let _ = writeln!(
        s,
        "<text x=\"{x0}\" y=\"{}\" font-size=\"15\">results</text>",
        ty - 8.0
    );
    let cols = f.table.first().map(Vec::len).unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            f.table
                .iter()
                .map(|r| r.get(c).map(|v| v.chars().count()).unwrap_or(0))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (ri, row) in f.table.iter().enumerate() {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c <= 2 {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        let weight = if ri == 0 { " font-weight=\"bold\"" } else { "" };
        let _ = writeln!(
            s,
            "<text x=\"{x0}\" y=\"{:.1}\" font-size=\"13\" font-family=\"monospace\" xml:space=\"preserve\"{weight}>{}</text>",
            ty + 14.0 + 22.0 * ri as f64,
            esc(&line.join("  "))
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Characters of the context per line (11 px sans-serif on a 1000 px page).
const CONTEXT_CHARS: usize = 160;

/// `text` broken between words into lines of at most `max` characters (a longer word alone).
fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let cur = lines.last_mut().expect("one line at least");
        if cur.is_empty() {
            cur.push_str(word);
        } else if cur.chars().count() + 1 + word.chars().count() <= max {
            cur.push(' ');
            cur.push_str(word);
        } else {
            lines.push(word.to_string());
        }
    }
    lines
}

/// Height of the row's section: its title and verdict, the throughput and the latency plots.
const ROW_SECTION_H: f64 = 420.0;

/// A polyline through the finite values of `v` (NaN breaks it), `x` and `y` mapping index and
/// value to the page.
fn polyline(v: &[f64], x: impl Fn(usize) -> f64, y: impl Fn(f64) -> f64) -> String {
    let mut d = String::new();
    let mut pen_up = true;
    for (i, val) in v.iter().enumerate() {
        if !val.is_finite() {
            pen_up = true;
            continue;
        }
        let _ = write!(
            d,
            "{}{:.1},{:.1} ",
            if pen_up { "M" } else { "L" },
            x(i),
            y(*val)
        );
        pen_up = false;
    }
    d
}

/// The row's section at `top`: a title with its verdict, its throughput over its whole run, and
/// its latency p50 and p99 (log axis).
fn row_section(s: &mut String, row: &RowFigure, unit: &str, top: f64) {
    let (x0, pw) = (80.0, W - 120.0);
    let n = row.series.len();
    let _ = writeln!(
        s,
        r#"<text x="{x0}" y="{top}" font-size="15">the row {} over its whole run ({} s, one point per {} s)</text>"#,
        esc(&row.label),
        fmt_tick(n as f64 * row.bin_s),
        fmt_tick(row.bin_s)
    );
    let ok = row.verdict == "ok";
    let color = if ok { "#2ca02c" } else { "#d62728" };
    if !row.verdict.is_empty() {
        let _ = writeln!(
            s,
            r#"<text x="{x0}" y="{}" font-size="12" fill="{color}">verdict: {}</text>"#,
            top + 18.0,
            esc(&row.verdict)
        );
    }
    if n == 0 {
        return;
    }
    let x = |i: usize| x0 + (i as f64 + 0.5) / n as f64 * pw;
    // Throughput.
    let (ty, th) = (top + 36.0, 150.0);
    let max = row.series.iter().copied().fold(0.0f64, f64::max);
    let (ticks, axis_top) = linear_ticks(if max > 0.0 { max } else { 1.0 });
    for t in &ticks {
        let y = ty + th - t / axis_top * th;
        let _ = writeln!(
            s,
            "<line x1=\"{x0}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
            x0 + pw,
            x0 - 6.0,
            y + 4.0,
            fmt_tick(*t)
        );
    }
    let d = polyline(&row.series, x, |v| ty + th - v / axis_top * th);
    let _ = writeln!(
        s,
        "<path d=\"{d}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\"/><text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#1f77b4\">{}</text>",
        x0 + 4.0,
        ty + 12.0,
        esc(unit)
    );
    // Latency, log axis.
    let (ly, lh) = (ty + th + 30.0, 150.0);
    let finite: Vec<f64> = row
        .p50_us
        .iter()
        .chain(&row.p99_us)
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(0.0f64, f64::max);
    if finite.is_empty() {
        return;
    }
    let decades = log_ticks(lo, hi);
    let (l0, l1) = (
        decades[0].log10(),
        decades[decades.len() - 1]
            .log10()
            .max(decades[0].log10() + 1.0),
    );
    let ly_of = |v: f64| ly + lh - (v.log10() - l0) / (l1 - l0) * lh;
    for t in &decades {
        let y = ly_of(*t);
        let _ = writeln!(
            s,
            "<line x1=\"{x0}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
            x0 + pw,
            x0 - 6.0,
            y + 4.0,
            esc(&fmt_us(*t, UsStyle::Tick))
        );
    }
    for (values, color) in [(&row.p50_us, "#17becf"), (&row.p99_us, "#e377c2")] {
        let d = polyline(values, x, ly_of);
        let _ = writeln!(
            s,
            "<path d=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\"/>"
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" font-size=\"12\"><tspan fill=\"#17becf\">p50</tspan> <tspan fill=\"#e377c2\">p99</tspan> latency per point (log scale)</text>",
        x0 + 4.0,
        ly - 6.0
    );
    let (xt, _) = linear_ticks(n as f64 * row.bin_s);
    for t in xt.iter().filter(|t| **t <= n as f64 * row.bin_s) {
        let xx = x0 + t / (n as f64 * row.bin_s) * pw;
        let _ = writeln!(
            s,
            "<text x=\"{xx:.1}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
            ly + lh + 16.0,
            fmt_tick(*t)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">seconds since the row began</text>",
        x0 + pw / 2.0,
        ly + lh + 32.0
    );
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
        assert!(svg.contains("<path d=\"M"));
        assert_eq!(svg.matches("fill=\"#9467bd\"").count(), 2);
        assert!(svg.contains("pread 1M"));
        assert!(svg.contains("stroke-dasharray=\"4 3\"") && svg.contains("read pread 4K"));
    }

    #[test]
    fn a_rows_section_draws_its_throughput_and_p50_and_p99_lines_and_its_verdict() {
        let f = SessionFigure {
            unit: "MiB/s".into(),
            row: Some(RowFigure {
                label: "pwrite 1M".into(),
                bin_s: 0.4,
                series: vec![3000.0, 3100.0, 2900.0],
                p50_us: vec![200.0, f64::NAN, 210.0],
                p99_us: vec![900.0, f64::NAN, 1200.0],
                verdict: "suspect (writes_in_page_cache): buffered writes".into(),
            }),
            ..Default::default()
        };
        let svg = render(&f);
        assert!(
            svg.contains("the row pwrite 1M over its whole run (1.2 s"),
            "{svg}"
        );
        assert!(svg.contains("verdict: suspect (writes_in_page_cache)"));
        assert!(svg.contains("stroke=\"#e377c2\"") && svg.contains("stroke=\"#17becf\""));
        // A point without operations breaks the latency lines instead of dropping to zero.
        assert_eq!(
            svg.matches("<path d=\"M").count(),
            3,
            "throughput and two latency lines: {svg}"
        );
        assert!(
            svg.contains(" M"),
            "the p99 line starts again after its gap: {svg}"
        );
    }
}
