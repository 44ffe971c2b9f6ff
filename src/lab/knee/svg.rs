//! The knee figure: response time (p50 thin, p99 thick, p99.9 dashed; log scale) against the
//! offered rate, one marker per measured point (hollow where the run fell behind its
//! schedule), the target as a horizontal line, the bracket shaded, the knee as a vertical line
//! with its rate, and the closed-loop ceiling as a grey vertical line. Drawn with plotters' SVG
//! backend like the other figures, ticks by hand (decades on the log axis, round rates).

use super::search::Knee;
use crate::export::axis::{fmt_tick, linear_ticks, log_ticks};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Image size, pixels.
pub const SIZE_PX: (u32, u32) = (1000, 600);

const BLUE: RGBColor = RGBColor(31, 119, 180);
const RED: RGBColor = RGBColor(214, 39, 40);
const GREEN: RGBColor = RGBColor(44, 160, 44);
const GREY: RGBColor = RGBColor(127, 127, 127);

/// The SVG of a search's points, titled `title` (the setup), `subtitle` below it.
pub fn render(title: &str, knee: &Knee) -> anyhow::Result<String> {
    let mut out = String::new();
    draw(title, knee, &mut out).map_err(|e| anyhow::anyhow!("drawing the knee figure: {e}"))?;
    Ok(out)
}

fn draw(title: &str, k: &Knee, out: &mut String) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, SIZE_PX).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, body) = root.split_vertically(58);
    let center = |size| {
        TextStyle::from(("sans-serif", size).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top))
    };
    header.draw(&Text::new(
        title.to_string(),
        (SIZE_PX.0 as i32 / 2, 8),
        center(20),
    ))?;
    header.draw(&Text::new(
        k.confidence_line(),
        (SIZE_PX.0 as i32 / 2, 34),
        center(12),
    ))?;
    let target = k.settings_target_p99_us;
    let pts: Vec<_> = k.points.iter().collect();
    let finite = |v: f64| v.is_finite() && v > 0.0;
    let values = pts
        .iter()
        .flat_map(|p| [p.resp_p50_us, p.resp_p99_us, p.resp_p999_us])
        .chain([target, k.ceiling.lat_p99_us])
        .filter(|v| finite(*v));
    let (ymin, ymax) = values.fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (ymin, ymax) = if ymin.is_finite() {
        (ymin, ymax)
    } else {
        (1.0, 10.0)
    };
    let ticks = log_ticks(ymin, ymax);
    let (lo, hi) = (
        ticks[0].log10(),
        (ymax * 1.5).log10().max(ticks[ticks.len() - 1].log10()),
    );
    let xmax = pts
        .iter()
        .map(|p| p.offered_iops)
        .fold(k.ceiling.iops, f64::max)
        * 1.05;
    let (xticks, x1) = linear_ticks(xmax.max(1.0));
    let mut cc = ChartBuilder::on(&body)
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(76)
        .build_cartesian_2d(0.0..x1, lo..hi)?;
    cc.configure_mesh()
        .disable_x_mesh()
        .disable_y_mesh()
        .x_labels(0)
        .y_labels(0)
        .x_desc("offered rate, operations per second")
        .y_desc("response time (intended start → completion), µs — log scale")
        .label_style(("sans-serif", 12))
        .draw()?;
    let offset = body.get_base_pixel();
    let style = |h, v| {
        TextStyle::from(("sans-serif", 12).into_font())
            .color(&BLACK)
            .pos(Pos::new(h, v))
    };
    for t in &ticks {
        cc.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, t.log10()), (x1, t.log10())],
            RGBColor(221, 221, 221).stroke_width(1),
        )))?;
        let (px, py) = cc.backend_coord(&(0.0, t.log10()));
        body.draw(&Text::new(
            fmt_tick(*t),
            (px - 6 - offset.0, py - offset.1),
            style(HPos::Right, VPos::Center),
        ))?;
    }
    for t in &xticks {
        let (px, py) = cc.backend_coord(&(*t, lo));
        body.draw(&Text::new(
            fmt_tick(*t),
            (px - offset.0, py + 4 - offset.1),
            style(HPos::Center, VPos::Top),
        ))?;
    }
    // The bracket, shaded; the knee and the ceiling as vertical lines.
    if let (Some(a), Some(b)) = (k.knee_iops, k.fail_iops) {
        cc.draw_series(std::iter::once(Rectangle::new(
            [(a, lo), (b, hi)],
            GREEN.mix(0.15).filled(),
        )))?;
    }
    let mut vlines = vec![(
        k.ceiling.iops,
        GREY,
        format!(" closed-loop ceiling {:.0}", k.ceiling.iops),
        0.02,
    )];
    if let Some(a) = k.knee_iops {
        vlines.push((a, GREEN, format!(" knee {a:.0} IOPS"), 0.07));
    }
    for (x, color, text, down) in vlines {
        let (px, py) = cc.backend_coord(&(x, hi - (hi - lo) * down));
        // Near the right edge the label goes left of its line, so it is not cut.
        let (h, text) = if x > 0.7 * x1 {
            (HPos::Right, format!("{} ", text.trim()))
        } else {
            (HPos::Left, text)
        };
        body.draw(&Text::new(
            text,
            (px - offset.0, py - offset.1),
            style(h, VPos::Top).color(&color),
        ))?;
        cc.draw_series(std::iter::once(PathElement::new(
            vec![(x, lo), (x, hi)],
            color.stroke_width(2),
        )))?;
    }
    // The target.
    cc.draw_series(DashedLineSeries::new(
        vec![(0.0, target.log10()), (x1, target.log10())],
        8,
        5,
        RED.stroke_width(2),
    ))?
    .label(format!("target p99 {}", fmt_us(target)))
    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED.stroke_width(2)));
    // The curves.
    let line = |f: fn(&super::search::Point) -> f64| -> Vec<(f64, f64)> {
        pts.iter()
            .filter(|p| finite(f(p)))
            .map(|p| (p.offered_iops, f(p).log10()))
            .collect()
    };
    cc.draw_series(LineSeries::new(
        line(|p| p.resp_p50_us),
        BLUE.stroke_width(1),
    ))?
    .label("p50")
    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLUE.stroke_width(1)));
    cc.draw_series(LineSeries::new(
        line(|p| p.resp_p99_us),
        BLUE.stroke_width(3),
    ))?
    .label("p99 (bar: its 95% interval)")
    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLUE.stroke_width(3)));
    cc.draw_series(DashedLineSeries::new(
        line(|p| p.resp_p999_us),
        6,
        4,
        BLUE.stroke_width(1),
    ))?
    .label("p99.9")
    .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLUE.stroke_width(1)));
    for p in pts.iter().filter(|p| finite(p.resp_p99_us)) {
        let y = p.resp_p99_us.log10();
        let marker = if p.fell_behind {
            Circle::new((p.offered_iops, y), 5, BLUE.stroke_width(2))
        } else {
            Circle::new((p.offered_iops, y), 5, BLUE.filled())
        };
        cc.draw_series(std::iter::once(marker))?;
        if finite(p.resp_p99_low_us) && finite(p.resp_p99_high_us) {
            cc.draw_series(std::iter::once(PathElement::new(
                vec![
                    (p.offered_iops, p.resp_p99_low_us.log10()),
                    (p.offered_iops, p.resp_p99_high_us.log10()),
                ],
                BLUE.stroke_width(1),
            )))?;
        }
    }
    cc.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(("sans-serif", 12))
        .draw()?;
    body.draw(&Text::new(
        "hollow marker: the run fell behind its schedule".to_string(),
        (SIZE_PX.0 as i32 - 20, SIZE_PX.1 as i32 - 58 - 18),
        style(HPos::Right, VPos::Bottom).color(&GREY),
    ))?;
    root.present()?;
    Ok(())
}

/// A time in µs as `2 ms`, `500 µs`, `1.5 s`.
pub fn fmt_us(us: f64) -> String {
    crate::export::axis::fmt_us(us, crate::export::axis::UsStyle::Tick)
}

#[cfg(test)]
mod tests {
    use super::super::search::{Ceiling, Point, Stop};
    use super::*;

    #[test]
    fn the_figure_marks_the_target_the_knee_and_the_ceiling() {
        let p = |r: f64, p99: f64, passed: bool| Point {
            offered_iops: r,
            achieved_iops: r,
            resp_p50_us: p99 / 4.0,
            resp_p99_us: p99,
            resp_p999_us: p99 * 2.0,
            resp_p99_low_us: p99 * 0.9,
            resp_p99_high_us: p99 * 1.1,
            ops: 2000,
            passed,
            ..Point::default()
        };
        let k = Knee {
            settings_target_p99_us: 2000.0,
            tolerance: 0.05,
            ceiling: Ceiling {
                iops: 10_000.0,
                lat_p99_us: 400.0,
            },
            points: vec![
                p(5000.0, 900.0, true),
                p(7500.0, 1800.0, true),
                p(8750.0, 4000.0, false),
            ],
            knee_iops: Some(7500.0),
            fail_iops: Some(8750.0),
            stop: Stop::PointLimit,
            measured: 3,
            reused: 0,
            remeasured: 0,
            not_monotone: false,
            marginal: false,
        };
        let svg = render("pread 4K t1", &k).unwrap();
        for text in [
            "target p99 2 ms",
            "knee 7500 IOPS",
            "closed-loop ceiling 10000",
            "p99.9",
            "offered rate",
        ] {
            assert!(svg.contains(text), "no {text:?}");
        }
        assert_eq!(fmt_us(500.0), "500 µs");
        assert_eq!(fmt_us(1500.0), "1.5 ms");
    }
}
