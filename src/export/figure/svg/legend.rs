//! The legend: its entries (the named layers), what the data occupies in the plot, and where
//! the legend goes — a corner that covers no data, else columns under the plot.

use super::super::model::{Anchor, Color, Corner, Layer, Legend, Panel, RuleAt};
use super::axes::{Frame, Rect};
use super::text::{n, text_width, LEGEND_ROW_PX, SMALL};
use std::fmt::Write;

/// A legend entry: its name and how its swatch is drawn.
pub(super) enum Swatch {
    Line {
        color: Color,
        width: f64,
        dash: Option<(f64, f64)>,
        opacity: f64,
    },
    Box {
        color: Color,
        opacity: f64,
    },
    Dot(Color),
}

pub(super) fn legend_entries(p: &Panel) -> Vec<(String, Swatch)> {
    let mut out: Vec<(String, Swatch)> = Vec::new();
    for l in &p.layers {
        let entry = match l {
            Layer::Line(l) => l.name.clone().map(|n| {
                (
                    n,
                    Swatch::Line {
                        color: l.color,
                        width: l.width,
                        dash: l.dash,
                        opacity: l.opacity,
                    },
                )
            }),
            Layer::Rule(r) => r.name.clone().map(|n| {
                (
                    n,
                    Swatch::Line {
                        color: r.color,
                        width: r.width,
                        dash: r.dash,
                        opacity: 1.0,
                    },
                )
            }),
            Layer::Bars(b) => b.name.clone().map(|n| {
                (
                    n,
                    Swatch::Box {
                        color: b.color,
                        opacity: b.opacity,
                    },
                )
            }),
            Layer::Points(pt) => pt.name.clone().map(|n| (n, Swatch::Dot(pt.color))),
            _ => None,
        };
        if let Some((name, s)) = entry {
            if !out.iter().any(|(k, _)| *k == name) {
                out.push((name, s));
            }
        }
    }
    out
}

pub(super) fn swatch(out: &mut String, s: &Swatch, x: f64, y_mid: f64) {
    match s {
        Swatch::Line {
            color,
            width,
            dash,
            opacity,
        } => {
            let dash = dash.map_or(String::new(), |(d, g)| {
                format!(" stroke-dasharray=\"{} {}\"", n(d), n(g))
            });
            let _ = writeln!(
                out,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\" stroke-opacity=\"{}\"{dash}/>",
                n(x),
                n(y_mid),
                n(x + 18.0),
                n(y_mid),
                color.hex(),
                n(width.min(5.0)),
                n(*opacity)
            );
        }
        Swatch::Box { color, opacity } => {
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"12\" fill=\"{}\" fill-opacity=\"{}\"/>",
                n(x + 2.0),
                n(y_mid - 6.0),
                color.hex(),
                n(*opacity)
            );
        }
        Swatch::Dot(color) => {
            let _ = writeln!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>",
                n(x + 9.0),
                n(y_mid),
                color.hex()
            );
        }
    }
}

/// Where the legend of a panel goes, decided before drawing.
pub(super) enum LegendAt {
    None,
    Box(Rect),
    /// Rows under the plot: (entry index, x) per row.
    Below(Vec<Vec<(usize, f64)>>),
}

/// What lies in the plot area, in pixels: segments, rectangles and points the legend must
/// not cover.
#[derive(Default)]
pub(super) struct Occupied {
    pub(super) segments: Vec<((f64, f64), (f64, f64))>,
    pub(super) rects: Vec<Rect>,
}

impl Occupied {
    pub(super) fn hits(&self, r: &Rect) -> usize {
        self.segments
            .iter()
            .filter(|(a, b)| r.crosses(*a, *b))
            .count()
            + self.rects.iter().filter(|o| o.overlaps(r)).count()
    }
}

pub(super) fn occupied(p: &Panel, f: &Frame) -> Occupied {
    let mut o = Occupied::default();
    for l in &p.layers {
        match l {
            Layer::Line(l) => {
                let pts: Vec<(f64, f64)> = l
                    .points
                    .iter()
                    .filter(|(x, y)| x.is_finite() && y.is_finite() && (!f.y.log || *y > 0.0))
                    .map(|(x, y)| (f.px(*x), f.py(*y)))
                    .collect();
                for w in pts.windows(2) {
                    o.segments.push((w[0], w[1]));
                }
                if pts.len() == 1 {
                    o.segments.push((pts[0], pts[0]));
                }
            }
            Layer::Points(pt) => {
                for m in &pt.marks {
                    let (x, y) = (f.px(m.x), f.py(m.y));
                    o.rects.push(Rect {
                        x: x - pt.radius,
                        y: y - pt.radius,
                        w: 2.0 * pt.radius,
                        h: 2.0 * pt.radius,
                    });
                    if let Some((a, b)) = m.interval {
                        o.segments.push(((x, f.py(a)), (x, f.py(b))));
                    }
                }
            }
            Layer::Bars(b) => {
                for bar in &b.bars {
                    let top = bar.whisker.map_or(bar.y, |(lo, hi)| hi.max(lo).max(bar.y));
                    let label_px = if bar.label.is_some() { 14.0 } else { 0.0 };
                    let (x0, x1) = (f.px(bar.x0), f.px(bar.x1));
                    let y0 = f.py_clamped(top) - label_px;
                    o.rects.push(Rect {
                        x: x0.min(x1),
                        y: y0,
                        w: (x1 - x0).abs(),
                        h: (f.bottom - y0).max(0.0),
                    });
                }
            }
            Layer::Rule(r) => match r.at {
                RuleAt::X(x) => o.segments.push(((f.px(x), f.top), (f.px(x), f.bottom))),
                RuleAt::Y(y) => o.segments.push(((f.left, f.py(y)), (f.right, f.py(y)))),
            },
            Layer::Text(t) => {
                let w = text_width(&t.text, t.size);
                let x = f.px(t.x) + t.dx;
                o.rects.push(Rect {
                    x: match t.anchor {
                        Anchor::Start => x,
                        Anchor::Middle => x - w / 2.0,
                        Anchor::End => x - w,
                    },
                    y: f.py(t.y) + t.dy - t.size,
                    w,
                    h: t.size + 2.0,
                });
            }
            Layer::Band(_) => {}
        }
    }
    o
}

pub(super) fn place_legend(p: &Panel, f: &Frame, entries: &[(String, Swatch)]) -> LegendAt {
    if entries.is_empty() || p.legend == Legend::Hidden {
        return LegendAt::None;
    }
    let widest = entries
        .iter()
        .map(|(name, _)| text_width(name, SMALL))
        .fold(0.0, f64::max);
    let (w, h) = (widest + 42.0, entries.len() as f64 * LEGEND_ROW_PX + 10.0);
    let (pw, ph) = (f.right - f.left, f.bottom - f.top);
    let corners: Vec<Corner> = match p.legend {
        Legend::Below => Vec::new(),
        Legend::Prefer(c) => std::iter::once(c)
            .chain(
                [
                    Corner::UpperRight,
                    Corner::UpperLeft,
                    Corner::LowerRight,
                    Corner::LowerLeft,
                ]
                .into_iter()
                .filter(|k| *k != c),
            )
            .collect(),
        _ => vec![
            Corner::UpperRight,
            Corner::UpperLeft,
            Corner::LowerRight,
            Corner::LowerLeft,
        ],
    };
    if w <= pw * 0.6 && h <= ph * 0.8 {
        let o = occupied(p, f);
        for c in corners {
            let (x, y) = match c {
                Corner::UpperRight => (f.right - w - 8.0, f.top + 8.0),
                Corner::UpperLeft => (f.left + 8.0, f.top + 8.0),
                Corner::LowerRight => (f.right - w - 8.0, f.bottom - h - 8.0),
                Corner::LowerLeft => (f.left + 8.0, f.bottom - h - 8.0),
            };
            let r = Rect { x, y, w, h };
            if o.hits(&r) == 0 {
                return LegendAt::Box(r);
            }
        }
    }
    // Rows under the plot, in as many columns as the widest entry allows (a name too long
    // for the width is wrapped by no one: it gets a row of its own and may run to the edge).
    let col = widest + 24.0 + 18.0;
    let cols = ((pw + 18.0) / col).floor().max(1.0) as usize;
    let rows = entries
        .chunks(cols)
        .enumerate()
        .map(|(r, chunk)| {
            (0..chunk.len())
                .map(|c| (r * cols + c, f.left + c as f64 * col))
                .collect()
        })
        .collect();
    LegendAt::Below(rows)
}
