//! The comparison figure: for every matched point, an OLD and a NEW bar side by side (bar = mean,
//! dot = median, whisker = min–max over repetitions), with Δ% written above the pair in the colour
//! of its verdict. The y axis turns logarithmic when the values span more than
//! [`LOG_SPAN`]× (a 4 KiB and a 16 MiB block size on one figure), so small bars stay readable.
//!
//! Its own builder, apart from a sweep's bar chart (`crate::export::svg`): that one draws one
//! bar per series of a sweep; this one draws pairs and verdicts. Both are
//! [`Figure`]s drawn by the one renderer.

use super::diff::{Comparison, Metric, MetricDiff, Verdict};
use super::load::Point;
use crate::export::figure::{
    Anchor, Axis, Bar, Bars, Color, Corner, Figure, Legend, Panel, Text, Ticks,
};

/// A y range wider than this ratio is drawn on a log axis.
pub const LOG_SPAN: f64 = 50.0;

const OLD_COLOR: Color = Color(120, 144, 176);
const NEW_COLOR: Color = Color(255, 127, 14);
const FASTER: Color = Color(30, 130, 50);
const SLOWER: Color = Color(200, 30, 30);
const NEUTRAL: Color = Color(90, 90, 90);

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
    Ok(figure(c, metric, title).map(|f| f.to_svg()))
}

/// The figure of one metric, or `None` when no matched point measured it.
pub fn figure(c: &Comparison, metric: Metric, title: &str) -> Option<Figure> {
    if !has_data(c, metric) {
        return None;
    }
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
    let (floor, top) = if log {
        (lo / 1.5, hi * 2.0)
    } else {
        (0.0, if hi > 0.0 { hi * 1.18 } else { 1.0 })
    };
    let y = if log {
        Axis::log(y_desc)
    } else {
        Axis::linear(y_desc)
    }
    .range(floor, top)
    .grid();
    let x = Axis::linear("").range(-0.5, n - 0.5).ticks(Ticks::Labels(
        labels
            .iter()
            .enumerate()
            .map(|(i, l)| (i as f64, l.clone()))
            .collect(),
    ));
    let w = 0.36;
    let side = |pick: fn(&MetricDiff) -> crate::measure::stats::Stats, offset: f64| -> Vec<Bar> {
        diffs
            .iter()
            .enumerate()
            .filter_map(|(i, m)| {
                let st = pick(m);
                if st.n == 0 || st.mean <= floor {
                    return None;
                }
                let mid = i as f64 + offset;
                Some(Bar {
                    whisker: Some((st.min.max(floor), st.max.min(top))),
                    dot: Some(st.median),
                    ..Bar::new(mid - w / 2.0, mid + w / 2.0, st.mean)
                })
            })
            .collect()
    };
    let mut panel = Panel::new(x, y)
        .height(400.0)
        .legend(Legend::Prefer(Corner::UpperLeft))
        .layer(Bars {
            name: Some("OLD".into()),
            color: OLD_COLOR,
            opacity: 1.0,
            bars: side(|m| m.old, -w / 2.0 - 0.02),
        })
        .layer(Bars {
            name: Some("NEW".into()),
            color: NEW_COLOR,
            opacity: 1.0,
            bars: side(|m| m.new, w / 2.0 + 0.02),
        });
    for (i, m) in diffs.iter().enumerate() {
        let color = match m.verdict {
            Verdict::Faster => FASTER,
            Verdict::Slower => SLOWER,
            _ => NEUTRAL,
        };
        let peak = m.old.max.max(m.new.max).min(top);
        if peak > floor && m.delta_pct.is_finite() {
            let mark = match m.verdict {
                Verdict::Faster => " ▲",
                Verdict::Slower => " ▼",
                _ => "",
            };
            panel = panel.layer(
                Text::new(i as f64, peak, format!("{:+.1}%{mark}", m.delta_pct))
                    .color(color)
                    .size(13.0)
                    .anchor(Anchor::Middle)
                    .offset(0.0, -4.0),
            );
        }
    }
    let width = (200.0 + 110.0 * n).clamp(720.0, 2400.0);
    Some(Figure {
        width_px: width,
        ..Figure::new(title).panel(panel)
    })
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
        crate::export::figure::svg::check(&svg).unwrap();
        assert!(svg.contains("log scale"));
        // No latency was measured: no latency figure.
        assert!(render(&wide, Metric::P99Us, "p99").unwrap().is_none());
    }
}
