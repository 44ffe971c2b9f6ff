//! Renders a [`Chart`] to SVG text with plotters' SVG backend (no font files needed: text is
//! written as SVG `<text>` and laid out by the viewer). Each category gets a group of bars, one
//! per series: the bar is the mean, the dark dot the median, the whisker spans min to max, and
//! the mean is written above the whisker where the bar is wide enough for it.
//!
//! The y axis is linear, or log10 when asked or when the means span more than ~50×
//! ([`YScale::Auto`]): block-size sweeps from 1 B to 128 MiB span four decades, and on a linear
//! axis the small blocks' bars are invisible. Ticks are drawn here rather than by plotters so
//! they are round numbers without `.0` noise (`2000`, `20k`; decades on a log axis).

use super::axis::{fmt_tick, linear_ticks, log_ticks, wants_log};
use super::chart::{Chart, YScale};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Image size, pixels.
pub const SIZE_PX: (u32, u32) = (1000, 560);

/// Height of the title and subtitle band, pixels.
const HEADER_PX: u32 = 58;

/// The series colours of every figure (matplotlib's tab10), so a run keeps its colour across
/// the bar and timeline figures.
pub(super) const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// The SVG document of `chart`.
pub fn render(chart: &Chart) -> anyhow::Result<String> {
    let mut out = String::new();
    draw(chart, &mut out).map_err(|e| anyhow::anyhow!("drawing {}: {e}", chart.title))?;
    Ok(out)
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

fn draw(chart: &Chart, out: &mut String) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, SIZE_PX).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, body) = root.split_vertically(HEADER_PX);
    let centre = |size: u32| {
        TextStyle::from(("sans-serif", size).into_font()).pos(Pos::new(HPos::Center, VPos::Top))
    };
    header.draw(&Text::new(
        chart.title.clone(),
        (SIZE_PX.0 as i32 / 2, 8),
        centre(22).color(&BLACK),
    ))?;
    if !chart.subtitle.is_empty() {
        header.draw(&Text::new(
            chart.subtitle.clone(),
            (SIZE_PX.0 as i32 / 2, 36),
            centre(13).color(&RGBColor(85, 85, 85)),
        ))?;
    }
    let mut pos: Vec<f64> = chart.categories.iter().map(|c| c.pos).collect();
    pos.sort_by(f64::total_cmp);
    let gap = pos
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let gap = if gap.is_finite() { gap } else { 1.0 };
    let (x0, x1) = (pos[0] - 0.6 * gap, pos[pos.len() - 1] + 0.6 * gap);
    let y = YAxis::of(chart);
    let labels: Vec<(f64, String)> = chart
        .categories
        .iter()
        .map(|c| (c.pos, c.label.clone()))
        .collect();
    let y_desc = if y.log {
        format!("{} — log scale", chart.y_label)
    } else {
        chart.y_label.clone()
    };
    // Suspect bars' footnote (issue 23), below the plot.
    let footnote = chart.suspect_footnote(150);
    let footer_px = if footnote.is_empty() {
        0
    } else {
        8 + 16 * footnote.len() as u32
    };
    let (body, footer) = body.split_vertically(SIZE_PX.1 - HEADER_PX - footer_px);
    for (i, line) in footnote.iter().enumerate() {
        footer.draw(&Text::new(
            line.clone(),
            (14, 2 + 16 * i as i32),
            TextStyle::from(("sans-serif", 12).into_font())
                .color(&RGBColor(150, 30, 30))
                .pos(Pos::new(HPos::Left, VPos::Top)),
        ))?;
    }
    let mut cc = ChartBuilder::on(&body)
        .margin(12)
        .margin_top(4)
        .x_label_area_size(48)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y.lo..y.hi)?;
    // Ticks and labels are drawn below: x labels exactly under the categories, y ticks round.
    cc.configure_mesh()
        .disable_x_mesh()
        .disable_y_mesh()
        .x_labels(0)
        .y_labels(0)
        .x_desc(&chart.x_label)
        .y_desc(&y_desc)
        .label_style(("sans-serif", 12))
        .draw()?;
    let tick_style = TextStyle::from(("sans-serif", 12).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for t in &y.ticks {
        let at = y.at(*t);
        cc.draw_series(std::iter::once(PathElement::new(
            vec![(x0, at), (x1, at)],
            RGBColor(221, 221, 221).stroke_width(1),
        )))?;
        let (px, py) = cc.backend_coord(&(x0, at));
        body.draw(&Text::new(
            fmt_tick(*t),
            (px - 6, py - HEADER_PX as i32),
            tick_style.clone(),
        ))?;
    }
    let label_style = TextStyle::from(("sans-serif", 12).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (p, l) in &labels {
        let (px, py) = cc.backend_coord(&(*p, y.lo));
        body.draw(&Text::new(
            l.clone(),
            (px, py + 6 - HEADER_PX as i32),
            label_style.clone(),
        ))?;
    }
    let value_style = TextStyle::from(("sans-serif", 11).into_font())
        .color(&RGBColor(40, 40, 40))
        .pos(Pos::new(HPos::Center, VPos::Bottom));
    let n = chart.series.len().max(1) as f64;
    let bar_w = 0.8 * gap / n;
    let bar_px = {
        let (a, _) = cc.backend_coord(&(x0, y.lo));
        let (b, _) = cc.backend_coord(&(x0 + bar_w, y.lo));
        (b - a) as f64
    };
    for (si, s) in chart.series.iter().enumerate() {
        let color = COLORS[si % COLORS.len()];
        let left = |c: f64| c - 0.4 * gap + si as f64 * bar_w;
        let cells: Vec<(f64, crate::measure::stats::Stats)> = chart
            .categories
            .iter()
            .zip(&s.cells)
            .filter_map(|(c, cell)| cell.map(|st| (c.pos, st)))
            .collect();
        // A suspect bar is hollow: its outline in the series' colour, no fill.
        let hollow: Vec<bool> = chart
            .categories
            .iter()
            .enumerate()
            .zip(&s.cells)
            .filter(|(_, cell)| cell.is_some())
            .map(|((ci, _), _)| chart.suspect_at(si, ci).is_some())
            .collect();
        cc.draw_series(cells.iter().zip(&hollow).map(|((c, st), hollow)| {
            let style = if *hollow {
                color.stroke_width(2)
            } else {
                color.mix(0.75).filled()
            };
            Rectangle::new(
                [
                    (left(*c) + bar_w * 0.06, y.lo),
                    (left(*c) + bar_w * 0.94, y.at(st.mean)),
                ],
                style,
            )
        }))?
        .label(s.name.clone())
        .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
        cc.draw_series(cells.iter().flat_map(|(c, st)| {
            let mid = left(*c) + bar_w / 2.0;
            let cap = bar_w * 0.2;
            let (lo, hi) = (y.at(st.min), y.at(st.max));
            [
                PathElement::new(vec![(mid, lo), (mid, hi)], BLACK.stroke_width(1)),
                PathElement::new(
                    vec![(mid - cap, lo), (mid + cap, lo)],
                    BLACK.stroke_width(1),
                ),
                PathElement::new(
                    vec![(mid - cap, hi), (mid + cap, hi)],
                    BLACK.stroke_width(1),
                ),
            ]
        }))?;
        cc.draw_series(cells.iter().map(|(c, st)| {
            Circle::new((left(*c) + bar_w / 2.0, y.at(st.median)), 3, BLACK.filled())
        }))?;
        // Value labels where the bar is wide enough (plotters writes 11 px as ~8.9 px: about
        // 5 px per digit).
        for (c, st) in &cells {
            let text = fmt_value(st.mean);
            if (text.chars().count() as f64) * 5.0 + 2.0 > bar_px {
                continue;
            }
            let (px, py) = cc.backend_coord(&(left(*c) + bar_w / 2.0, y.at(st.max.max(st.mean))));
            body.draw(&Text::new(
                text,
                (px, py - 3 - HEADER_PX as i32),
                value_style.clone(),
            ))?;
        }
    }
    draw_model(chart, &mut cc, &body, &y, gap, bar_w)?;
    if !chart.model.is_empty()
        || chart.series.len() > 1
        || chart.series.first().is_some_and(|s| s.name != "all")
    {
        cc.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .label_font(("sans-serif", 13))
            // Block-size bars rise to the right; with a model line the upper left is free.
            .position(if chart.model.is_empty() {
                SeriesLabelPosition::UpperRight
            } else {
                SeriesLabelPosition::UpperLeft
            })
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// The model's prediction over each series' bars: a line through the bars' centres (dark, in
/// the series' colour), the bound named where each stretch starts, so the bend from
/// syscall- to memory- or device-bound reads off the plot.
fn draw_model<DB: DrawingBackend>(
    chart: &Chart,
    cc: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    body: &DrawingArea<DB, plotters::coord::Shift>,
    y: &YAxis,
    gap: f64,
    bar_w: f64,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let label_style = TextStyle::from(("sans-serif", 11).into_font())
        .color(&RGBColor(20, 20, 20))
        .pos(Pos::new(HPos::Left, VPos::Bottom));
    for m in &chart.model {
        let shift = -0.4 * gap + (m.series as f64 + 0.5) * bar_w;
        let color = COLORS[m.series % COLORS.len()];
        let dark = RGBColor(color.0 / 2, color.1 / 2, color.2 / 2);
        let pts: Vec<(f64, f64)> = m
            .points
            .iter()
            .map(|(x, v, _)| (x + shift, y.at(*v)))
            .collect();
        let name = match chart.series.get(m.series) {
            Some(s) if chart.model.len() > 1 => format!("model: {}", s.name),
            _ => "model (limits profile)".to_string(),
        };
        cc.draw_series(std::iter::once(PathElement::new(
            pts.clone(),
            dark.stroke_width(2),
        )))?
        .label(name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], dark.stroke_width(2)));
        // The bound at the start of each stretch.
        let mut last = None;
        for ((_, v, bound), p) in m.points.iter().zip(&pts) {
            if last == Some(*bound) {
                continue;
            }
            last = Some(*bound);
            let (px, py) = cc.backend_coord(p);
            let text = format!("{bound} ({} MiB/s)", fmt_value(*v));
            // Above the line, on a light box so bars and whiskers do not cross the words
            // (plotters writes 11 px text at about 5 px per character).
            let (tx, ty) = (px + 4, py - 6 - HEADER_PX as i32);
            let w = text.chars().count() as i32 * 5 + 6;
            body.draw(&Rectangle::new(
                [(tx - 2, ty - 13), (tx + w, ty + 2)],
                WHITE.mix(0.85).filled(),
            ))?;
            body.draw(&Text::new(text, (tx, ty), label_style.clone()))?;
        }
    }
    Ok(())
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
            svg.contains("\n1.5\n") && svg.contains("\n5\n"),
            "value labels"
        );
        assert!(!svg.contains(".0\n</text>"), "tick noise");
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
            svg.contains("log scale") && svg.contains("\n10k\n"),
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
            !svg.contains("\n12345\n"),
            "a 5-digit label cannot fit a 6 px bar"
        );
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
        use crate::export::chart::{throughput_chart_with, Dim};
        let rows = block_size_rows();
        let chart = throughput_chart_with("part 3", &rows, &[Dim::BlockSize], &|_| {
            Some(crate::explain::profile::Profile::synthetic_example())
        })
        .unwrap();
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
        let plain = throughput_chart_with("part 3", &rows, &[Dim::BlockSize], &|_| None).unwrap();
        assert!(plain.model.is_empty());
        let svg = render(&plain).unwrap();
        assert!(!svg.contains("model (limits profile)") && !svg.contains("-bound ("));
    }
}
