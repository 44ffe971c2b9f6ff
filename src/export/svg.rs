//! Renders a [`Chart`] to SVG text with plotters' SVG backend (no font files needed: text is
//! written as SVG `<text>` and laid out by the viewer). Each category gets a group of bars, one
//! per series: the bar is the mean, the dark dot the median, the whisker spans min to max.

use super::chart::Chart;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Image size, pixels.
pub const SIZE_PX: (u32, u32) = (1000, 560);

const COLORS: [RGBColor; 8] = [
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

fn draw(chart: &Chart, out: &mut String) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, SIZE_PX).into_drawing_area();
    root.fill(&WHITE)?;
    let mut pos: Vec<f64> = chart.categories.iter().map(|c| c.pos).collect();
    pos.sort_by(f64::total_cmp);
    let gap = pos
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    let gap = if gap.is_finite() { gap } else { 1.0 };
    let (x0, x1) = (pos[0] - 0.6 * gap, pos[pos.len() - 1] + 0.6 * gap);
    let y_max = chart
        .series
        .iter()
        .flat_map(|s| s.cells.iter().flatten().map(|c| c.max))
        .fold(0.0, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.12 } else { 1.0 };
    let labels: Vec<(f64, String)> = chart
        .categories
        .iter()
        .map(|c| (c.pos, c.label.clone()))
        .collect();
    let mut cc = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y_max)?;
    // x labels sit exactly under the categories (plotters' own ticks are "nice" numbers).
    cc.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc(&chart.x_label)
        .y_desc(&chart.y_label)
        .label_style(("sans-serif", 12))
        .draw()?;
    let label_style = TextStyle::from(("sans-serif", 12).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (p, l) in &labels {
        let (px, py) = cc.backend_coord(&(*p, 0.0));
        root.draw(&Text::new(l.clone(), (px, py + 6), label_style.clone()))?;
    }
    let n = chart.series.len().max(1) as f64;
    let bar_w = 0.8 * gap / n;
    for (si, s) in chart.series.iter().enumerate() {
        let color = COLORS[si % COLORS.len()];
        let left = |c: f64| c - 0.4 * gap + si as f64 * bar_w;
        let cells: Vec<(f64, crate::measure::stats::Stats)> = chart
            .categories
            .iter()
            .zip(&s.cells)
            .filter_map(|(c, cell)| cell.map(|st| (c.pos, st)))
            .collect();
        cc.draw_series(cells.iter().map(|(c, st)| {
            Rectangle::new(
                [
                    (left(*c) + bar_w * 0.06, 0.0),
                    (left(*c) + bar_w * 0.94, st.mean),
                ],
                color.mix(0.75).filled(),
            )
        }))?
        .label(s.name.clone())
        .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
        cc.draw_series(cells.iter().flat_map(|(c, st)| {
            let mid = left(*c) + bar_w / 2.0;
            let cap = bar_w * 0.2;
            [
                PathElement::new(vec![(mid, st.min), (mid, st.max)], BLACK.stroke_width(1)),
                PathElement::new(
                    vec![(mid - cap, st.min), (mid + cap, st.min)],
                    BLACK.stroke_width(1),
                ),
                PathElement::new(
                    vec![(mid - cap, st.max), (mid + cap, st.max)],
                    BLACK.stroke_width(1),
                ),
            ]
        }))?;
        cc.draw_series(
            cells
                .iter()
                .map(|(c, st)| Circle::new((left(*c) + bar_w / 2.0, st.median), 3, BLACK.filled())),
        )?;
    }
    if chart.series.len() > 1 || chart.series.first().is_some_and(|s| s.name != "all") {
        cc.configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.4))
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
    }
    root.present()?;
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
        };
        let svg = render(&chart).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        for text in ["block sizes", "4K", "8K", "warm", "cold"] {
            assert!(svg.contains(text), "missing {text}");
        }
        assert!(svg.matches("<circle").count() >= 3);
    }
}
