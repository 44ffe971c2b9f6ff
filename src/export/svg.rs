//! A sweep's bar chart ([`Chart`]) as a [`Figure`], drawn by the one renderer
//! ([`super::figure::render`]). Each category gets a group of bars, one per series: the bar is
//! the mean, the dark dot the median, the whisker spans min to max, and the mean is written
//! above the whisker where the bar is wide enough for it; a suspect bar is hollow, its reasons
//! in a note. Over block-size bars the model's prediction is a dark line per series, the bound
//! named where each stretch starts.
//!
//! The y axis is linear, or log10 when asked or when the means span more than ~50×
//! ([`YScale::Auto`]): block-size sweeps from 1 B to 128 MiB span four decades, and on a linear
//! axis the small blocks' bars are invisible. Ticks are round numbers without `.0` noise
//! (`2000`, `20k`; decades on a log axis).

use super::axis::{fmt_tick, linear_ticks, log_ticks, wants_log};
use super::chart::{Chart, YScale};
use super::figure::{Axis, Bar, Bars, Color, Corner, Figure, Legend, Line, Panel, Text, Ticks};

/// Width of the figure and height of its plot, pixels.
pub const SIZE_PX: (u32, u32) = (1000, 400);

/// The SVG document of `chart`.
pub fn render(chart: &Chart) -> anyhow::Result<String> {
    Ok(figure(chart).to_svg())
}

/// A bar's value label: three significant digits (four below 10 000), no `.0` noise (`8031`,
/// `10.5k`, `12.5`, `0.0421`).
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if a >= 9999.5 {
        return fmt_tick(format!("{:.3e}", v).parse().unwrap_or(v));
    }
    let s = if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a > 0.0 {
        let digits = (-a.log10().floor()) as usize + 2;
        format!("{v:.digits$}")
    } else {
        "0".into()
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The y mapping of a chart: value → axis coordinate, the axis range and its ticks.
pub struct YAxis {
    pub log: bool,
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
}

impl YAxis {
    /// The axis for `chart`'s values (means, medians, whiskers).
    pub fn of(chart: &Chart) -> YAxis {
        let cells: Vec<_> = chart
            .series
            .iter()
            .flat_map(|s| s.cells.iter().flatten())
            .collect();
        // The model line must fit too: a bar far below its bound still shows the bound.
        let model = chart
            .model
            .iter()
            .flat_map(|m| m.points.iter().map(|p| p.1))
            .filter(|v| v.is_finite() && *v > 0.0);
        let max = cells
            .iter()
            .map(|c| c.max)
            .chain(model.clone())
            .fold(0.0, f64::max);
        let min_pos = cells
            .iter()
            .flat_map(|c| [c.mean, c.min])
            .chain(model)
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let min_mean = cells
            .iter()
            .map(|c| c.mean)
            .filter(|v| *v > 0.0)
            .fold(f64::INFINITY, f64::min);
        let log = match chart.y_scale {
            YScale::Linear => false,
            YScale::Log => max > 0.0 && min_pos.is_finite(),
            YScale::Auto => min_mean.is_finite() && wants_log(min_mean, max),
        };
        if log {
            let ticks = log_ticks(min_pos, max);
            let lo = ticks[0].log10();
            // Room above the tallest whisker for its label.
            let hi = (max * 1.6).log10().max(ticks[ticks.len() - 1].log10());
            let ticks = ticks.into_iter().filter(|t| t.log10() <= hi).collect();
            YAxis { log, lo, hi, ticks }
        } else {
            let (ticks, top) = linear_ticks(if max > 0.0 { max * 1.1 } else { 1.0 });
            YAxis {
                log,
                lo: 0.0,
                hi: top,
                ticks,
            }
        }
    }

    /// Axis coordinate of `v` (values at or below zero sit on the bottom of a log axis).
    pub fn at(&self, v: f64) -> f64 {
        if self.log {
            if v > 0.0 {
                v.log10().max(self.lo)
            } else {
                self.lo
            }
        } else {
            v
        }
    }
}

/// The figure of `chart`.
pub fn figure(chart: &Chart) -> Figure {
    let mut pos: Vec<f64> = chart.categories.iter().map(|c| c.pos).collect();
    pos.sort_by(f64::total_cmp);
    let gap = pos
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let gap = if gap.is_finite() { gap } else { 1.0 };
    let (x0, x1) = match (pos.first(), pos.last()) {
        (Some(a), Some(b)) => (a - 0.6 * gap, b + 0.6 * gap),
        _ => (0.0, 1.0),
    };
    let y = YAxis::of(chart);
    let y_desc = if y.log {
        format!("{} — log scale", chart.y_label)
    } else {
        chart.y_label.clone()
    };
    let (lo, hi) = if y.log {
        (10f64.powf(y.lo), 10f64.powf(y.hi))
    } else {
        (y.lo, y.hi)
    };
    let y_axis = if y.log {
        Axis::log(y_desc)
    } else {
        Axis::linear(y_desc)
    }
    .range(lo, hi)
    .ticks(Ticks::At(y.ticks.clone()))
    .grid();
    let x_axis = Axis::linear(chart.x_label.clone())
        .range(x0, x1)
        .ticks(Ticks::Labels(
            chart
                .categories
                .iter()
                .map(|c| (c.pos, c.label.clone()))
                .collect(),
        ));
    let with_legend = !chart.model.is_empty()
        || chart.series.len() > 1
        || chart.series.first().is_some_and(|s| s.name != "all");
    // Block-size bars rise to the right; with a model line the upper left is free.
    let legend = match (with_legend, chart.model.is_empty()) {
        (false, _) => Legend::Hidden,
        (true, true) => Legend::Prefer(Corner::UpperRight),
        (true, false) => Legend::Prefer(Corner::UpperLeft),
    };
    let mut panel = Panel::new(x_axis, y_axis)
        .height(f64::from(SIZE_PX.1))
        .legend(legend);
    let n = chart.series.len().max(1) as f64;
    let bar_w = 0.8 * gap / n;
    for (si, s) in chart.series.iter().enumerate() {
        let left = |c: f64| c - 0.4 * gap + si as f64 * bar_w;
        let bars = chart
            .categories
            .iter()
            .enumerate()
            .zip(&s.cells)
            .filter_map(|((ci, c), cell)| cell.map(|st| (ci, c.pos, st)))
            .map(|(ci, c, st)| Bar {
                base: None,
                // A suspect bar is hollow: its outline in the series' colour, no fill.
                hollow: chart.suspect_at(si, ci).is_some(),
                whisker: Some((st.min, st.max)),
                dot: Some(st.median),
                label: Some(fmt_value(st.mean)),
                ..Bar::new(left(c) + bar_w * 0.06, left(c) + bar_w * 0.94, st.mean)
            })
            .collect();
        panel = panel.layer(Bars {
            name: Some(s.name.clone()),
            color: Color::series(si),
            opacity: 0.75,
            bars,
        });
    }
    for m in &chart.model {
        panel = model(panel, chart, m, gap, bar_w);
    }
    let mut fig = Figure::new(chart.title.clone())
        .subtitle(chart.subtitle.clone())
        .panel(panel);
    // Suspect bars' footnote (issue 23), below the plot.
    for line in chart.suspect_footnote(130) {
        fig = fig.note(line, Color::WARN);
    }
    fig
}

/// The model's prediction over a series' bars: a line through the bars' centres (dark, in
/// the series' colour), the bound named where each stretch starts, so the bend from
/// syscall- to memory- or device-bound reads off the plot.
fn model(
    mut panel: Panel,
    chart: &Chart,
    m: &super::chart::ModelLine,
    gap: f64,
    bar_w: f64,
) -> Panel {
    let shift = -0.4 * gap + (m.series as f64 + 0.5) * bar_w;
    let dark = Color::series(m.series).darker();
    let name = match chart.series.get(m.series) {
        Some(s) if chart.model.len() > 1 => format!("model: {}", s.name),
        _ => "model (limits profile)".to_string(),
    };
    panel = panel.layer(
        Line::new(
            dark,
            m.points.iter().map(|(x, v, _)| (x + shift, *v)).collect(),
        )
        .width(2.0)
        .name(name),
    );
    // The bound at the start of each stretch, above the line on a light box so bars and
    // whiskers do not cross the words.
    let mut last = None;
    for (x, v, bound) in &m.points {
        if last == Some(*bound) {
            continue;
        }
        last = Some(*bound);
        panel = panel.layer(
            Text::new(x + shift, *v, format!("{bound} ({} MiB/s)", fmt_value(*v)))
                .offset(4.0, -6.0)
                .boxed(),
        );
    }
    panel
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::chart::{Category, Series};
    use crate::measure::stats::Stats;

    #[test]
    fn a_chart_renders_to_svg_with_its_title_labels_and_bars() {
        let chart = Chart {
            title: "block sizes".into(),
            subtitle: "host · f (1.00 GiB) · 3 repetitions per point · 2026-11-22".into(),
            y_scale: YScale::Auto,
            x_label: "block size".into(),
            y_label: "MiB/s".into(),
            categories: vec![
                Category {
                    label: "4K".into(),
                    pos: 12.0,
                },
                Category {
                    label: "8K".into(),
                    pos: 13.0,
                },
            ],
            series: vec![
                Series {
                    name: "warm".into(),
                    cells: vec![Some(Stats::of(&[1.0, 2.0])), None],
                },
                Series {
                    name: "cold".into(),
                    cells: vec![Some(Stats::of(&[3.0])), Some(Stats::of(&[4.0, 6.0]))],
                },
            ],
            model: Vec::new(),
            suspect: Vec::new(),
        };
        let svg = render(&chart).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        for text in ["block sizes", "4K", "8K", "warm", "cold"] {
            assert!(svg.contains(text), "missing {text}");
        }
        assert!(svg.matches("<circle").count() >= 3);
        assert!(svg.contains("3 repetitions per point"));
        // Value labels of the means; ticks without ".0".
        assert!(
            svg.contains(">1.5</text>") && svg.contains(">5</text>"),
            "value labels"
        );
        assert!(!svg.contains(".0</text>"), "tick noise");
        crate::export::figure::svg::check(&svg).unwrap();
    }

    #[test]
    fn a_suspect_bar_is_hollow_and_its_reasons_are_in_a_footnote() {
        let mut c = one_series(&[(100.0, "4K"), (200.0, "8K")]);
        let filled = render(&c).unwrap();
        assert!(!filled.contains("hollow bars"));
        c.suspect.push(crate::export::chart::SuspectMark {
            series: 0,
            category: 1,
            suspect: 2,
            reps: 3,
            codes: vec!["cache_not_disk".into(), "too_short".into()],
        });
        let svg = render(&c).unwrap();
        assert!(svg.contains("hollow bars: suspect results"), "{svg}");
        assert!(
            svg.contains("cache_not_disk: 8K (2 of 3 reps) · too_short: 8K (2 of 3 reps)"),
            "{svg}"
        );
        // One bar fewer filled, one outlined.
        let fills = |t: &str| t.matches("<rect").filter(|_| true).count();
        assert_eq!(fills(&svg), fills(&filled));
        assert!(
            svg.contains("fill=\"none\"") || svg.contains("fill-opacity=\"0\""),
            "{svg}"
        );
    }

    fn one_series(values: &[(f64, &str)]) -> Chart {
        Chart {
            title: "t".into(),
            subtitle: String::new(),
            y_scale: YScale::Auto,
            x_label: "block size".into(),
            y_label: "MiB/s".into(),
            categories: values
                .iter()
                .enumerate()
                .map(|(i, (_, l))| Category {
                    label: l.to_string(),
                    pos: i as f64,
                })
                .collect(),
            series: vec![Series {
                name: "all".into(),
                cells: values.iter().map(|(v, _)| Some(Stats::of(&[*v]))).collect(),
            }],
            model: Vec::new(),
            suspect: Vec::new(),
        }
    }

    #[test]
    fn values_spanning_more_than_50x_get_a_log_axis_unless_the_sweep_says_linear() {
        let mut c = one_series(&[(0.8, "1"), (95.0, "4K"), (9000.0, "1M")]);
        let y = YAxis::of(&c);
        assert!(y.log);
        assert_eq!(y.ticks, vec![0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]);
        let svg = render(&c).unwrap();
        assert!(
            svg.contains("log scale") && svg.contains(">10k</text>"),
            "decade ticks"
        );
        c.y_scale = YScale::Linear;
        assert!(!YAxis::of(&c).log);
        let near = one_series(&[(100.0, "a"), (4000.0, "b")]);
        assert!(!YAxis::of(&near).log);
        assert_eq!(YScale::parse("log"), Ok(YScale::Log));
        assert!(YScale::parse("logarithmic")
            .unwrap_err()
            .contains("\"auto\""));
    }

    #[test]
    fn value_labels_are_left_out_where_bars_are_too_narrow() {
        let many: Vec<(f64, String)> = (0..120)
            .map(|i| (12345.0 + i as f64, i.to_string()))
            .collect();
        let refs: Vec<(f64, &str)> = many.iter().map(|(v, l)| (*v, l.as_str())).collect();
        let svg = render(&one_series(&refs)).unwrap();
        assert!(
            !svg.contains(">12.3k</text>"),
            "a 5-character label cannot fit a 6 px bar"
        );
        crate::export::figure::svg::check(&svg).unwrap();
        assert_eq!(fmt_value(8031.12), "8031");
        assert_eq!(fmt_value(10_512.0), "10.5k");
        assert_eq!(fmt_value(12.51), "12.5");
        assert_eq!(fmt_value(0.04213), "0.0421");
    }

    /// Warm `read` rows of a block-size sweep, 1 B to 64 MiB, at 60% of the synthetic model.
    fn block_size_rows() -> Vec<crate::measure::RunResult> {
        let p = crate::explain::profile::Profile::synthetic_example();
        (0..=26)
            .step_by(2)
            .map(|k| {
                let mut r = crate::measure::RunResult {
                    identity: crate::measure::result::Identity {
                        experiment: "block-size".into(),
                        file: "/nonexistent/diskscope-test.bin".into(),
                        rep: 1,
                        ..Default::default()
                    },
                    setup: crate::config::RecordedSetup {
                        op: crate::config::Op::Read.into(),
                        method: crate::config::Method::Read.into(),
                        pattern: crate::config::Pattern::Sequential.into(),
                        cache: crate::config::CacheMode::Warm.into(),
                        block_size_bytes: 1 << k,
                        threads: 1,
                        queue_depth: 1,
                        ..Default::default()
                    },
                    figures: crate::measure::result::Figures {
                        seconds: 1.0,
                        ..Default::default()
                    },
                    ..Default::default()
                };
                let pt = crate::explain::model::Point::of_result(&r).unwrap();
                r.figures.mib_s =
                    0.6 * crate::explain::model::predict(&p, &pt).unwrap().bound_mib_s;
                r
            })
            .collect()
    }

    #[test]
    fn a_block_size_plot_draws_the_model_over_the_bars_and_names_where_the_bound_turns() {
        use crate::explain::provenance::Provenance;
        use crate::export::chart::{throughput_chart, Dim};
        let rows = block_size_rows();
        let known = Provenance::everywhere(
            None,
            Some(crate::explain::profile::Profile::synthetic_example()),
        );
        let chart = throughput_chart("part 3", &rows, &[Dim::BlockSize], &known).unwrap();
        assert_eq!(chart.model.len(), 1);
        let bounds: Vec<_> = chart.model[0].points.iter().map(|p| p.2).collect();
        use crate::explain::model::Bound;
        assert_eq!(bounds.first(), Some(&Bound::Syscall));
        assert_eq!(bounds.last(), Some(&Bound::Memory));
        let svg = render(&chart).unwrap();
        assert!(svg.contains("model (limits profile)"), "legend");
        assert!(
            svg.contains("syscall-bound ("),
            "the first stretch is named"
        );
        assert!(svg.contains("memory-bound ("), "where it turns is named");
        // The line is one polyline through every predicted point.
        let longest = svg
            .lines()
            .filter(|l| l.contains("<polyline"))
            .map(|l| l.matches(',').count())
            .max()
            .unwrap_or(0);
        assert!(
            longest >= chart.model[0].points.len(),
            "no polyline with {} points",
            chart.model[0].points.len()
        );
        // Without a profile: the same bars, no model.
        let plain =
            throughput_chart("part 3", &rows, &[Dim::BlockSize], &Provenance::none()).unwrap();
        assert!(plain.model.is_empty());
        let svg = render(&plain).unwrap();
        assert!(!svg.contains("model (limits profile)") && !svg.contains("-bound ("));
    }
}
