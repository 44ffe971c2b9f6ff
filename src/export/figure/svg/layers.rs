//! Drawing the layers of a panel: bands, lines, points, bars with whiskers and value labels,
//! rules, text placed where it overlaps nothing, and the monospace table.

use super::super::model::{Anchor, Bar, Color, Layer, RuleAt, Table, Text};
use super::axes::{Frame, Rect};
use super::text::{n, text, text_width, SMALL};
use std::fmt::Write;

pub(super) fn stroke_attrs(
    color: Color,
    width: f64,
    dash: Option<(f64, f64)>,
    opacity: f64,
) -> String {
    let mut s = format!(" stroke=\"{}\" stroke-width=\"{}\"", color.hex(), n(width));
    if let Some((d, g)) = dash {
        let _ = write!(s, " stroke-dasharray=\"{} {}\"", n(d), n(g));
    }
    if opacity < 1.0 {
        let _ = write!(s, " stroke-opacity=\"{}\"", n(opacity));
    }
    s
}

/// Draws one layer (texts are drawn after, outside the clip: see [`label_text`]).
pub(super) fn layer(out: &mut String, l: &Layer, f: &Frame, placed: &mut Vec<Rect>) {
    match l {
        Layer::Band(b) => {
            let (x0, x1) = b.x.map_or((f.left, f.right), |(a, c)| (f.px(a), f.px(c)));
            let (y0, y1) = b.y.map_or((f.top, f.bottom), |(a, c)| (f.py(c), f.py(a)));
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"{}\"/>",
                n(x0.min(x1)),
                n(y0.min(y1)),
                n((x1 - x0).abs()),
                n((y1 - y0).abs()),
                b.color.hex(),
                n(b.opacity)
            );
        }
        Layer::Line(l) => {
            let attrs = stroke_attrs(l.color, l.width, l.dash, l.opacity);
            // A value that cannot be drawn (NaN, or not above zero on a log axis) breaks the line.
            let mut run: Vec<String> = Vec::new();
            let flush = |out: &mut String, run: &mut Vec<String>| {
                if run.len() >= 2 {
                    let _ = writeln!(
                        out,
                        "<polyline points=\"{}\" fill=\"none\"{attrs} stroke-linejoin=\"round\"/>",
                        run.join(" ")
                    );
                } else if let Some((x, y)) = run.first().and_then(|p| p.split_once(',')) {
                    // A point alone (a run of one interval) is a dot, not nothing.
                    let _ = writeln!(
                        out,
                        "<circle cx=\"{x}\" cy=\"{y}\" r=\"{}\" fill=\"{}\" fill-opacity=\"{}\"/>",
                        n((l.width * 1.2).max(2.5)),
                        l.color.hex(),
                        n(l.opacity)
                    );
                }
                run.clear();
            };
            for (x, y) in &l.points {
                let ok = x.is_finite() && y.is_finite() && (!f.y.log || *y > 0.0);
                if ok {
                    run.push(format!("{},{}", n(f.px(*x)), n(f.py(*y))));
                } else {
                    flush(out, &mut run);
                }
            }
            flush(out, &mut run);
        }
        Layer::Points(pt) => {
            for m in &pt.marks {
                if !(m.x.is_finite() && m.y.is_finite()) {
                    continue;
                }
                let (x, y) = (f.px(m.x), f.py(m.y));
                if let Some((a, b)) = m.interval {
                    if a.is_finite() && b.is_finite() {
                        let _ = writeln!(
                            out,
                            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"{}/>",
                            n(x),
                            n(f.py(a)),
                            n(x),
                            n(f.py(b)),
                            stroke_attrs(pt.color, 1.0, None, 1.0)
                        );
                    }
                }
                let fill = if m.hollow {
                    format!("fill=\"white\"{}", stroke_attrs(pt.color, 2.0, None, 1.0))
                } else {
                    format!("fill=\"{}\"", pt.color.hex())
                };
                let _ = writeln!(
                    out,
                    "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {fill}/>",
                    n(x),
                    n(y),
                    n(pt.radius)
                );
            }
        }
        Layer::Bars(b) => {
            for bar in &b.bars {
                draw_bar(out, bar, b.color, b.opacity, f, placed);
            }
        }
        Layer::Rule(r) => {
            let attrs = stroke_attrs(r.color, r.width, r.dash, 1.0);
            let (x0, y0, x1, y1) = match r.at {
                RuleAt::X(x) => (f.px(x), f.top, f.px(x), f.bottom),
                RuleAt::Y(y) => (f.left, f.py(y), f.right, f.py(y)),
            };
            let _ = writeln!(
                out,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"{attrs}/>",
                n(x0),
                n(y0),
                n(x1),
                n(y1)
            );
            if let Some(label) = &r.label {
                let (tx, ty, anchor) = match r.at {
                    RuleAt::X(_) => {
                        let ty = f.top + r.label_down * (f.bottom - f.top) + SMALL;
                        // Near the right edge the label goes left of its line, so it is not cut.
                        if x0 + 4.0 + text_width(label, SMALL) > f.right {
                            (x0 - 4.0, ty, Anchor::End)
                        } else {
                            (x0 + 4.0, ty, Anchor::Start)
                        }
                    }
                    RuleAt::Y(_) => (f.left + 4.0, y0 - 4.0, Anchor::Start),
                };
                let w = text_width(label, SMALL);
                let b = Rect {
                    x: if anchor == Anchor::End {
                        tx - w - 2.0
                    } else {
                        tx - 2.0
                    },
                    y: ty - SMALL,
                    w: w + 4.0,
                    h: SMALL + 3.0,
                };
                placed.push(b);
                let _ = writeln!(
                    out,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"white\" fill-opacity=\"0.8\"/>",
                    n(b.x),
                    n(b.y),
                    n(b.w),
                    n(b.h)
                );
                text(out, tx, ty, SMALL, anchor, r.color, "", label);
            }
        }
        Layer::Text(_) => {}
    }
}

pub(super) fn draw_bar(
    out: &mut String,
    bar: &Bar,
    color: Color,
    opacity: f64,
    f: &Frame,
    placed: &mut Vec<Rect>,
) {
    let (x0, x1) = (f.px(bar.x0), f.px(bar.x1));
    let base = bar.base.map_or(f.bottom, |b| f.py_clamped(b));
    let top = f.py_clamped(bar.y);
    let (bx, bw) = (x0.min(x1), (x1 - x0).abs());
    let (by, bh) = (top.min(base), (base - top).abs());
    if bar.hollow {
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\"{}/>",
            n(bx + 1.0),
            n(by + 1.0),
            n((bw - 2.0).max(0.0)),
            n((bh - 1.0).max(0.0)),
            stroke_attrs(color, 2.0, None, 1.0)
        );
    } else {
        let op = if opacity < 1.0 {
            format!(" fill-opacity=\"{}\"", n(opacity))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{op}/>",
            n(bx),
            n(by),
            n(bw),
            n(bh),
            color.hex()
        );
    }
    let mid = bx + bw / 2.0;
    let mut label_at = top;
    if let Some((lo, hi)) = bar.whisker {
        let (plo, phi) = (f.py_clamped(lo), f.py_clamped(hi));
        let cap = (bw * 0.2).clamp(2.0, 10.0);
        let _ = writeln!(
            out,
            "<path d=\"M{} {}V{}M{} {}H{}M{} {}H{}\" stroke=\"black\" fill=\"none\"/>",
            n(mid),
            n(plo),
            n(phi),
            n(mid - cap),
            n(plo),
            n(mid + cap),
            n(mid - cap),
            n(phi),
            n(mid + cap)
        );
        label_at = label_at.min(phi);
    }
    if let Some(d) = bar.dot {
        if d.is_finite() {
            let _ = writeln!(
                out,
                "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"black\"/>",
                n(mid),
                n(f.py_clamped(d))
            );
        }
    }
    if let Some(label) = &bar.label {
        let w = text_width(label, 11.0);
        let ty = (label_at - 3.0).max(f.top + 11.0);
        let r = Rect {
            x: mid - w / 2.0,
            y: ty - 11.0,
            w,
            h: 12.0,
        };
        // Where the bar is wide enough for its value (a little into the gap is fine) and no
        // label is there already.
        if w <= bw * 1.6 + 2.0 && !placed.iter().any(|p| p.overlaps(&r)) {
            placed.push(r);
            text(
                out,
                mid,
                ty,
                11.0,
                Anchor::Middle,
                Color(40, 40, 40),
                "",
                label,
            );
        }
    }
}

/// A text layer: placed at its point, moved up past any text already placed there, kept
/// inside the plot.
pub(super) fn label_text(
    out: &mut String,
    t: &Text,
    f: &Frame,
    placed: &mut Vec<Rect>,
    placed_texts: &mut Vec<(String, Rect)>,
) {
    if !(t.x.is_finite() && t.y.is_finite()) {
        return;
    }
    let w = text_width(&t.text, t.size);
    let mut x = f.px(t.x) + t.dx;
    let mut base = f.py(t.y) + t.dy + if t.above { 0.0 } else { t.size * 0.35 };
    let x_left = |x: f64| match t.anchor {
        Anchor::Start => x,
        Anchor::Middle => x - w / 2.0,
        Anchor::End => x - w,
    };
    // Inside the plot, left to right.
    let over = x_left(x) + w - f.right;
    if over > 0.0 {
        x -= over;
    }
    let under = f.left - x_left(x);
    if under > 0.0 {
        x += under;
    }
    let h = t.size + 3.0;
    let at = Rect {
        x: x_left(x) - 2.0,
        y: base - t.size - 1.0,
        w: w + 4.0,
        h,
    };
    // The same words already written close by say it once.
    if placed_texts.iter().any(|(words, p)| {
        *words == t.text && (p.x - at.x).abs() < 80.0 && (p.y - at.y).abs() < 80.0
    }) {
        return;
    }
    // The nearest free place straight up or down, within the plot; else where it was asked.
    let free =
        |r: &Rect| !placed.iter().any(|p| p.overlaps(r)) && r.y >= f.top && r.y + r.h <= f.bottom;
    let shift = (0..24)
        .flat_map(|k| [k as f64 * h, -(k as f64) * h])
        .find(|d| free(&Rect { y: at.y - d, ..at }))
        .unwrap_or(0.0);
    base -= shift;
    let mut r = Rect {
        y: at.y - shift,
        ..at
    };
    if r.y < f.top {
        base += f.top - r.y;
        r.y = f.top;
    }
    placed.push(r);
    placed_texts.push((t.text.clone(), r));
    if t.boxed {
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"white\" fill-opacity=\"0.85\"/>",
            n(r.x),
            n(r.y),
            n(r.w),
            n(r.h)
        );
    }
    text(out, x, base, t.size, t.anchor, t.color, "", &t.text);
}

/// A monospace table from `top`; returns the y under it.
pub(super) fn table(out: &mut String, t: &Table, left: f64, top: f64) -> f64 {
    let mut y = top;
    if !t.caption.is_empty() {
        text(
            out,
            left,
            y + 14.0,
            15.0,
            Anchor::Start,
            Color::BLACK,
            "",
            &t.caption,
        );
        y += 22.0;
    }
    let cols = t.rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            t.rows
                .iter()
                .map(|r| r.get(c).map_or(0, |v| v.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (ri, row) in t.rows.iter().enumerate() {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c < t.left_columns {
                    format!("{v:<w$}", w = widths[c])
                } else {
                    format!("{v:>w$}", w = widths[c])
                }
            })
            .collect();
        let weight = if ri == 0 { " font-weight=\"bold\"" } else { "" };
        let extra = format!(" font-family=\"monospace\" xml:space=\"preserve\"{weight}");
        text(
            out,
            left,
            y + 14.0,
            13.0,
            Anchor::Start,
            Color::BLACK,
            &extra,
            &line.join("  "),
        );
        y += 22.0;
    }
    y
}
