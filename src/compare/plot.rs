//! The comparison figure: for every matched point, an OLD and a NEW bar side by side (bar = mean,
//! dot = median, whisker = min–max over repetitions), with Δ% written above the pair in the colour
//! of its verdict. The y axis turns logarithmic when the values span more than
//! [`LOG_SPAN`]× (a 4 KiB and a 16 MiB block size on one figure), so small bars stay readable.
//!
//! Kept apart from `crate::export::svg` on purpose: that renderer draws one bar per series of a
//! sweep; this one draws pairs and verdicts, and neither should have to know the other's shape.

use super::diff::{Comparison, Metric, MetricDiff, Verdict};
use super::load::Point;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A y range wider than this ratio is drawn on a log axis.
pub const LOG_SPAN: f64 = 50.0;

const OLD_COLOR: RGBColor = RGBColor(120, 144, 176);
const NEW_COLOR: RGBColor = RGBColor(255, 127, 14);
const FASTER: RGBColor = RGBColor(30, 130, 50);
const SLOWER: RGBColor = RGBColor(200, 30, 30);
const NEUTRAL: RGBColor = RGBColor(90, 90, 90);

/// Labels that tell the points apart: only the settings that vary among them.
pub fn short_labels(setups: &[&Point]) -> Vec<String> {
    type Field = fn(&Point) -> String;
    let fields: [Field; 10] = [
        |s| s.experiment.clone(),
        |s| s.kind().as_str().into(),
        |s| s.setup.op.to_string(),
        |s| s.setup.method.to_string(),
        |s| crate::size::format_size(s.setup.block_size_bytes),
        |s| s.setup.pattern.to_string(),
        |s| s.setup.cache.to_string(),
        |s| format!("T{}", s.setup.threads),
        |s| format!("QD{}", s.setup.queue_depth),
        |s| (if s.setup.direct { "O_DIRECT" } else { "cached" }).into(),
    ];
    let varying: Vec<&Field> = fields
        .iter()
        .filter(|f| setups.iter().any(|s| f(s) != f(setups[0])))
        .collect();
    setups
        .iter()
        .map(|s| {
            let label = if varying.is_empty() {
                s.experiment.clone()
            } else {
                varying.iter().map(|f| f(s)).collect::<Vec<_>>().join(" ")
            };
            // The names come from the input files: no control character reaches the SVG.
            crate::text::shown(&label).into_owned()
        })
        .collect()
}

/// Whether `metric` has anything to draw.
pub fn has_data(c: &Comparison, metric: Metric) -> bool {
    c.matched.iter().any(|p| {
        let m = pick(p, metric);
        m.verdict != Verdict::NotMeasured && m.old.n > 0 && m.new.n > 0
    })
}

fn pick(p: &super::diff::PointDiff, metric: Metric) -> &MetricDiff {
    match metric {
        Metric::MibS => &p.mib_s,
        Metric::P99Us => &p.p99,
    }
}

/// The SVG of one metric, or `None` when no matched point measured it.
pub fn render(c: &Comparison, metric: Metric, title: &str) -> anyhow::Result<Option<String>> {
    if !has_data(c, metric) {
        return Ok(None);
    }
    let width = (200 + 110 * c.matched.len() as u32).clamp(720, 2400);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, 520)).into_drawing_area();
        draw(c, metric, title, &root).map_err(|e| anyhow::anyhow!("drawing {title}: {e}"))?;
    }
    Ok(Some(out))
}

fn draw(
    c: &Comparison,
    metric: Metric,
    title: &str,
    root: &DrawingArea<SVGBackend<'_>, Shift>,
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let diffs: Vec<&MetricDiff> = c.matched.iter().map(|p| pick(p, metric)).collect();
    let setups: Vec<&Point> = c.matched.iter().map(|p| &p.point).collect();
    let labels = short_labels(&setups);
    let values: Vec<f64> = diffs
        .iter()
        .flat_map(|m| [m.old.min, m.old.max, m.new.min, m.new.max])
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    let log = lo.is_finite() && hi / lo > LOG_SPAN;
    let n = diffs.len() as f64;
    let y_desc = format!(
        "{} ({}){}",
        metric.unit(),
        match metric.better() {
            super::diff::Better::Higher => "higher is better",
            super::diff::Better::Lower => "lower is better",
        },
        if log { ", log scale" } else { "" }
    );
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(72);
    if log {
        let mut cc = builder.build_cartesian_2d(-0.5..n - 0.5, (lo / 1.5..hi * 2.0).log_scale())?;
        cc.configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc(&y_desc)
            .y_label_formatter(&|v| super::render::num(*v))
            .light_line_style(RGBColor(242, 242, 242))
            .label_style(("sans-serif", 12))
            .draw()?;
        bars(&mut cc, root, &diffs, &labels, lo / 1.5, hi * 2.0)?;
    } else {
        let top = if hi > 0.0 { hi * 1.18 } else { 1.0 };
        let mut cc = builder.build_cartesian_2d(-0.5..n - 0.5, 0.0..top)?;
        cc.configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc(&y_desc)
            .y_label_formatter(&|v| super::render::num(*v))
            .light_line_style(RGBColor(242, 242, 242))
            .label_style(("sans-serif", 12))
            .draw()?;
        bars(&mut cc, root, &diffs, &labels, 0.0, top)?;
    }
    root.present()?;
    Ok(())
}

fn bars<Y>(
    cc: &mut ChartContext<
        '_,
        SVGBackend<'_>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, Y>,
    >,
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    diffs: &[&MetricDiff],
    labels: &[String],
    floor: f64,
    top: f64,
) -> Result<(), Box<dyn std::error::Error>>
where
    Y: Ranged<ValueType = f64>,
{
    let label_style = TextStyle::from(("sans-serif", 12).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let delta_style = |color: &'static RGBColor| {
        TextStyle::from(("sans-serif", 13).into_font())
            .color(color)
            .pos(Pos::new(HPos::Center, VPos::Bottom))
    };
    let w = 0.36;
    for (i, (m, label)) in diffs.iter().zip(labels).enumerate() {
        let x = i as f64;
        let (px, py) = cc.backend_coord(&(x, floor));
        root.draw(&Text::new(label.clone(), (px, py + 6), label_style.clone()))?;
        let sides = [
            (m.old, x - w / 2.0 - 0.02, OLD_COLOR),
            (m.new, x + w / 2.0 + 0.02, NEW_COLOR),
        ];
        for (st, mid, color) in sides {
            if st.n == 0 || st.mean <= floor {
                continue;
            }
            cc.draw_series(std::iter::once(Rectangle::new(
                [(mid - w / 2.0, floor), (mid + w / 2.0, st.mean)],
                color.filled(),
            )))?;
            let cap = w * 0.2;
            let (lo, hi) = (st.min.max(floor), st.max.min(top));
            for path in [
                vec![(mid, lo), (mid, hi)],
                vec![(mid - cap, lo), (mid + cap, lo)],
                vec![(mid - cap, hi), (mid + cap, hi)],
            ] {
                cc.draw_series(std::iter::once(PathElement::new(
                    path,
                    BLACK.stroke_width(1),
                )))?;
            }
            cc.draw_series(std::iter::once(Circle::new(
                (mid, st.median),
                3,
                BLACK.filled(),
            )))?;
        }
        let color: &'static RGBColor = match m.verdict {
            Verdict::Faster => &FASTER,
            Verdict::Slower => &SLOWER,
            _ => &NEUTRAL,
        };
        let peak = m.old.max.max(m.new.max).min(top);
        if peak > floor && m.delta_pct.is_finite() {
            let (tx, ty) = cc.backend_coord(&(x, peak));
            let mark = match m.verdict {
                Verdict::Faster => " ▲",
                Verdict::Slower => " ▼",
                _ => "",
            };
            root.draw(&Text::new(
                format!("{:+.1}%{mark}", m.delta_pct),
                (tx, ty - 4),
                delta_style(color),
            ))?;
        }
    }
    // Legend: two swatches in the top-left corner of the plot area.
    let (lx, ly) = cc.backend_coord(&(-0.5, top));
    for (k, (name, color)) in [("OLD", OLD_COLOR), ("NEW", NEW_COLOR)].iter().enumerate() {
        let y = ly + 8 + 18 * k as i32;
        root.draw(&Rectangle::new(
            [(lx + 10, y), (lx + 24, y + 12)],
            color.filled(),
        ))?;
        root.draw(&Text::new(
            name.to_string(),
            (lx + 30, y),
            TextStyle::from(("sans-serif", 13).into_font()).color(&BLACK),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::diff::compare;
    use crate::compare::load::Record;

    fn rec(bs: u64, mib_s: Vec<f64>) -> Record {
        Record::sample(bs, mib_s, 0.0)
    }

    #[test]
    fn the_axis_turns_logarithmic_only_beyond_a_fifty_fold_span() {
        let narrow = compare(
            &[rec(4096, vec![100.0, 110.0]), rec(8192, vec![200.0, 210.0])],
            &[rec(4096, vec![120.0, 130.0]), rec(8192, vec![190.0, 220.0])],
        );
        let svg = render(&narrow, Metric::MibS, "narrow").unwrap().unwrap();
        assert!(!svg.contains("log scale") && svg.contains("4K") && svg.contains("8K"));
        let wide = compare(
            &[rec(4096, vec![10.0, 11.0]), rec(8192, vec![2000.0, 2100.0])],
            &[rec(4096, vec![12.0, 13.0]), rec(8192, vec![1900.0, 2200.0])],
        );
        let svg = render(&wide, Metric::MibS, "wide").unwrap().unwrap();
        assert!(svg.contains("log scale"));
        // No latency was measured: no latency figure.
        assert!(render(&wide, Metric::P99Us, "p99").unwrap().is_none());
    }
}
