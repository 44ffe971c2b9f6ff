//! The explorer's session as one SVG page (`e`): throughput over time, the latency histogram of
//! the current setting, and the results table — what a screenshot shows, but scalable, with
//! exact numbers and a subtitle saying where and when it was measured. A [`Figure`] drawn by
//! the one renderer, a pure function of [`SessionFigure`], so it is testable without a
//! terminal.

use super::axis::{fmt_tick, linear_ticks};
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
    let mut fig = Figure::new(f.title.clone())
        .subtitle(f.subtitle.clone())
        .panel(throughput)
        .panel(histogram);
    // Results table, monospace, columns as wide as their widest cell.
    fig.table = Some(Table {
        caption: "results".into(),
        rows: f.table.clone(),
        left_columns: 3,
    });
    fig
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
}
