//! The knee figure: response time (p50 thin, p99 thick, p99.9 dashed; log scale) against the
//! offered rate, one marker per measured point (hollow where the run fell behind its
//! schedule), the target as a horizontal line, the bracket shaded, the knee as a vertical line
//! with its rate, and the closed-loop ceiling as a grey vertical line. A
//! [`Figure`](crate::export::figure::Figure) drawn by the one renderer, like every other figure.

use super::search::Knee;
use crate::export::axis::{linear_ticks, log_ticks};
use crate::export::figure::{
    Axis, Band, Color, Corner, Figure, Legend, Line, Mark, Panel, Points, Rule, Ticks,
};

/// Width of the figure and height of its plot, pixels.
pub const SIZE_PX: (u32, u32) = (1000, 440);

const BLUE: Color = Color::BLUE;
const RED: Color = Color::RED;
const GREEN: Color = Color::GREEN;
const GREY: Color = Color::GREY;

/// The SVG of a search's points, titled `title` (the setup).
pub fn render(title: &str, knee: &Knee) -> anyhow::Result<String> {
    Ok(figure(title, knee).to_svg())
}

/// The figure of a search's points, titled `title` (the setup), its confidence line below.
pub fn figure(title: &str, k: &Knee) -> Figure {
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
    let y_top = (ymax * 1.5).max(ticks[ticks.len() - 1]);
    let xmax = pts
        .iter()
        .map(|p| p.offered_iops)
        .fold(k.ceiling.iops, f64::max)
        * 1.05;
    let (xticks, x1) = linear_ticks(xmax.max(1.0));
    let mut panel = Panel::new(
        Axis::linear("offered rate, operations per second")
            .range(0.0, x1)
            .ticks(Ticks::At(xticks)),
        Axis::log("response time (intended start → completion), µs — log scale")
            .range(ticks[0], y_top)
            .ticks(Ticks::At(ticks))
            .grid(),
    )
    .height(f64::from(SIZE_PX.1))
    .legend(Legend::Prefer(Corner::UpperLeft));
    // The bracket, shaded; the knee and the ceiling as vertical lines.
    if let (Some(a), Some(b)) = (k.knee_iops, k.fail_iops) {
        panel = panel.layer(Band {
            x: Some((a, b)),
            y: None,
            color: GREEN,
            opacity: 0.15,
        });
    }
    panel = panel.layer(
        Rule::vertical(k.ceiling.iops, GREY)
            .width(2.0)
            .label(format!("closed-loop ceiling {:.0}", k.ceiling.iops), 0.02),
    );
    if let Some(a) = k.knee_iops {
        panel = panel.layer(
            Rule::vertical(a, GREEN)
                .width(2.0)
                .label(format!("knee {a:.0} IOPS"), 0.08),
        );
    }
    // The target.
    if finite(target) {
        panel = panel.layer(
            Rule::horizontal(target, RED)
                .width(2.0)
                .dashed(8.0, 5.0)
                .name(format!("target p99 {}", fmt_us(target))),
        );
    }
    // The curves.
    let line = |f: fn(&super::search::Point) -> f64| -> Vec<(f64, f64)> {
        pts.iter()
            .filter(|p| finite(f(p)))
            .map(|p| (p.offered_iops, f(p)))
            .collect()
    };
    panel = panel
        .layer(
            Line::new(BLUE, line(|p| p.resp_p50_us))
                .width(1.0)
                .name("p50"),
        )
        .layer(
            Line::new(BLUE, line(|p| p.resp_p99_us))
                .width(3.0)
                .name("p99 (bar: its 95% interval)"),
        )
        .layer(
            Line::new(BLUE, line(|p| p.resp_p999_us))
                .width(1.0)
                .dashed(6.0, 4.0)
                .name("p99.9"),
        )
        .layer(Points {
            name: None,
            color: BLUE,
            radius: 5.0,
            marks: pts
                .iter()
                .filter(|p| finite(p.resp_p99_us))
                .map(|p| Mark {
                    x: p.offered_iops,
                    y: p.resp_p99_us,
                    hollow: p.fell_behind,
                    interval: (finite(p.resp_p99_low_us) && finite(p.resp_p99_high_us))
                        .then_some((p.resp_p99_low_us, p.resp_p99_high_us)),
                })
                .collect(),
        });
    Figure::new(title)
        .subtitle(k.confidence_line())
        .panel(panel)
        .note("hollow marker: the run fell behind its schedule", GREY)
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
        crate::export::figure::svg::check(&svg).unwrap();
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
