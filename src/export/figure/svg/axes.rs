//! Axes: a panel's data resolved into ranges and round ticks, the pixel mapping of its plot
//! area ([`Frame`]), rectangles, and how the x tick labels fit (straight, turned, thinned).

use super::super::model::{Axis, Layer, Panel, RuleAt, Scale, Ticks};
use super::text::{text_width, SMALL};
use crate::export::axis::{fmt_tick, linear_ticks, log_ticks, nice_step};

/// An axis resolved against its data: the range in axis units (log10 on a log axis) and the
/// ticks (value in axis units, label).
#[derive(Debug, Clone)]
pub(super) struct Resolved {
    pub(super) log: bool,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<(f64, String)>,
    pub(super) hidden: bool,
}

impl Resolved {
    /// Axis units of a data value (a value at or below zero on a log axis: the start).
    pub(super) fn t(&self, v: f64) -> f64 {
        if self.log {
            if v > 0.0 {
                v.log10()
            } else {
                self.lo
            }
        } else {
            v
        }
    }
}

pub(super) fn resolve(axis: &Axis, data: &[f64]) -> Resolved {
    let hidden = axis.ticks == Ticks::Hidden;
    let finite: Vec<f64> = data.iter().copied().filter(|v| v.is_finite()).collect();
    let log = axis.scale == Scale::Log;
    let (lo, hi) = if log {
        let pos: Vec<f64> = finite.iter().copied().filter(|v| *v > 0.0).collect();
        match axis.range {
            Some((a, b)) => (a.max(f64::MIN_POSITIVE).log10(), b.max(a).log10()),
            None if pos.is_empty() => (0.0, 1.0),
            None => {
                let min = pos.iter().copied().fold(f64::INFINITY, f64::min);
                let max = pos.iter().copied().fold(0.0, f64::max);
                let d = log_ticks(min, max);
                (d[0].log10(), d[d.len() - 1].log10())
            }
        }
    } else {
        match axis.range {
            Some(r) => r,
            None => {
                let min = finite.iter().copied().fold(0.0, f64::min);
                let max = finite.iter().copied().fold(0.0, f64::max);
                if min >= 0.0 {
                    let (_, top) = linear_ticks(if max > 0.0 { max * 1.05 } else { 1.0 });
                    (0.0, top)
                } else {
                    let step = nice_step((max - min) * 1.05);
                    ((min / step).floor() * step, (max / step).ceil() * step)
                }
            }
        }
    };
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let inside = |t: f64| t >= lo - 1e-9 * (hi - lo).abs() && t <= hi + 1e-9 * (hi - lo).abs();
    let ticks = match &axis.ticks {
        Ticks::Hidden => Vec::new(),
        Ticks::Labels(l) => l
            .iter()
            .map(|(v, s)| (if log { v.log10() } else { *v }, s.clone()))
            .collect(),
        Ticks::At(v) => v
            .iter()
            .map(|v| (if log { v.log10() } else { *v }, fmt_tick(*v)))
            .filter(|(t, _)| inside(*t))
            .collect(),
        Ticks::Auto if log => {
            let mut t: Vec<(f64, String)> = (lo.ceil() as i32..=hi.floor() as i32)
                .map(|k| (k as f64, fmt_tick(10f64.powi(k))))
                .collect();
            if t.len() < 2 {
                // Less than a decade: 1, 2 and 5 steps.
                t = (lo.floor() as i32..=hi.ceil() as i32)
                    .flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(k)))
                    .map(|v| (v.log10(), fmt_tick(v)))
                    .filter(|(t, _)| inside(*t))
                    .collect();
            }
            t
        }
        Ticks::Auto => {
            let step = nice_step(hi - lo);
            let first = (lo / step).ceil() as i64;
            let last = (hi / step + 1e-9).floor() as i64;
            (first..=last)
                .map(|i| i as f64 * step)
                .map(|v| (v, fmt_tick(v)))
                .collect()
        }
    };
    Resolved {
        log,
        lo,
        hi,
        ticks,
        hidden,
    }
}

/// Every x and y value of a panel's layers, for the ranges.
pub(super) fn data_of(p: &Panel) -> (Vec<f64>, Vec<f64>) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for l in &p.layers {
        match l {
            Layer::Line(l) => {
                for (x, y) in &l.points {
                    xs.push(*x);
                    ys.push(*y);
                }
            }
            Layer::Points(pt) => {
                for m in &pt.marks {
                    xs.push(m.x);
                    ys.push(m.y);
                    if let Some((a, b)) = m.interval {
                        ys.extend([a, b]);
                    }
                }
            }
            Layer::Bars(b) => {
                for bar in &b.bars {
                    xs.extend([bar.x0, bar.x1]);
                    ys.push(bar.y);
                    ys.extend(bar.base);
                    if let Some((a, b)) = bar.whisker {
                        ys.extend([a, b]);
                    }
                }
            }
            Layer::Band(b) => {
                if let Some((a, c)) = b.x {
                    xs.extend([a, c]);
                }
                if let Some((a, c)) = b.y {
                    ys.extend([a, c]);
                }
            }
            Layer::Rule(r) => match r.at {
                RuleAt::X(x) => xs.push(x),
                RuleAt::Y(y) => ys.push(y),
            },
            Layer::Text(_) => {}
        }
    }
    (xs, ys)
}

pub(super) fn has_data(p: &Panel) -> bool {
    p.layers.iter().any(|l| match l {
        Layer::Line(l) => l.points.iter().any(|(x, y)| x.is_finite() && y.is_finite()),
        Layer::Points(pt) => !pt.marks.is_empty(),
        Layer::Bars(b) => !b.bars.is_empty(),
        _ => false,
    })
}

/// Pixel mapping of one panel's plot area.
pub(super) struct Frame {
    pub(super) x: Resolved,
    pub(super) y: Resolved,
    pub(super) left: f64,
    pub(super) right: f64,
    pub(super) top: f64,
    pub(super) bottom: f64,
}

impl Frame {
    pub(super) fn px(&self, x: f64) -> f64 {
        let t = self.x.t(x);
        self.left + (t - self.x.lo) / (self.x.hi - self.x.lo) * (self.right - self.left)
    }
    pub(super) fn py(&self, y: f64) -> f64 {
        let t = self.y.t(y);
        self.bottom - (t - self.y.lo) / (self.y.hi - self.y.lo) * (self.bottom - self.top)
    }
    /// `py` kept inside the plot (a bar past the top ends at the top).
    pub(super) fn py_clamped(&self, y: f64) -> f64 {
        self.py(y).clamp(self.top, self.bottom)
    }
}

/// A rectangle in pixels: x, y (top), width, height.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rect {
    pub(super) x: f64,
    pub(super) y: f64,
    pub(super) w: f64,
    pub(super) h: f64,
}

impl Rect {
    pub(super) fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
    /// Whether the segment from a to b crosses the rectangle (Liang–Barsky clipping).
    pub(super) fn crosses(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in [
            (-dx, a.0 - self.x),
            (dx, self.x + self.w - a.0),
            (-dy, a.1 - self.y),
            (dy, self.y + self.h - a.1),
        ] {
            if p == 0.0 {
                if q < 0.0 {
                    return false;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
                if t0 > t1 {
                    return false;
                }
            }
        }
        true
    }
}

/// How the x tick labels are written: straight, or turned by `angle` degrees (and every
/// `step`-th shown).
pub(super) struct XLabels {
    pub(super) angle: f64,
    pub(super) step: usize,
    /// Pixels they take under the plot.
    pub(super) height: f64,
}

pub(super) fn x_labels(f: &Frame) -> XLabels {
    let ticks: Vec<(f64, f64)> =
        f.x.ticks
            .iter()
            .map(|(t, l)| {
                let v = if f.x.log { 10f64.powf(*t) } else { *t };
                (f.px(v), text_width(l, SMALL))
            })
            .collect();
    if ticks.is_empty() {
        return XLabels {
            angle: 0.0,
            step: 1,
            height: 0.0,
        };
    }
    let mut xs: Vec<f64> = ticks.iter().map(|t| t.0).collect();
    xs.sort_by(f64::total_cmp);
    let spacing = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    let widest = ticks.iter().map(|t| t.1).fold(0.0, f64::max);
    if !spacing.is_finite() || widest + 6.0 <= spacing {
        return XLabels {
            angle: 0.0,
            step: 1,
            height: 18.0,
        };
    }
    // Turned as little as lets neighbours clear each other (a line and a quarter apart),
    // upright at most; past that, every step-th label.
    let line = SMALL * 1.25;
    let angle = [35.0f64, 50.0, 65.0, 90.0]
        .into_iter()
        .find(|a| spacing * a.to_radians().sin() >= line)
        .unwrap_or(90.0);
    let step = (line / (spacing * angle.to_radians().sin()))
        .ceil()
        .max(1.0) as usize;
    let (s, c) = (angle.to_radians().sin(), angle.to_radians().cos());
    XLabels {
        angle,
        step,
        height: widest * s + SMALL * c + 12.0,
    }
}
