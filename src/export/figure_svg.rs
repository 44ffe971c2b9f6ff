//! The one SVG renderer: a [`Figure`] in, a self-contained SVG document out (no fonts or files
//! needed; text is SVG `<text>` laid out by the viewer). Written directly rather than through a
//! plotting library so that every layout rule lives here and can be tested: text widths are
//! estimated per character class, the legend goes where it covers no data (else in wrapped rows
//! under the plot, and the image grows), category labels turn or thin out before they overlap,
//! a long axis label wraps, value labels are left out where their bar is too narrow, and labels
//! placed at data points move up rather than overwrite each other. Data layers are clipped to
//! their plot. Ids are unique per geometry, so several figures can share one HTML page.

use super::axis::{fmt_tick, linear_ticks, log_ticks, nice_step};
use super::figure::{
    Anchor, Axis, Bar, Color, Corner, Figure, Layer, Legend, Panel, RuleAt, Scale, Ticks,
};
use std::fmt::Write;

/// Space between the image's edge and anything on it, pixels.
const EDGE_PX: f64 = 12.0;
/// Height of one legend row, pixels.
const LEGEND_ROW_PX: f64 = 18.0;
/// Font size of tick labels, axis labels and the legend.
const SMALL: f64 = 12.0;

/// The estimated width of `s` at `size` px in a sans-serif font (DejaVu Sans, Arial), by
/// character class; a little wide rather than narrow, so what is checked to fit does fit.
pub fn text_width(s: &str, size: f64) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '|' | '!' | '\'' | ' ' => 0.32,
            'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '/' | '-' | 'I' => 0.42,
            '0'..='9' => 0.64,
            'm' | 'w' | 'M' | 'W' | '%' | '@' | '—' | '–' => 0.9,
            'A'..='Z' => 0.72,
            _ => 0.6,
        })
        .sum();
    em * size
}

/// Text for SVG: `& < > " '` as entities, and every control character (not allowed in XML
/// 1.0) as U+FFFD, so a name from a file cannot break the document.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

/// A number in an attribute: two decimals at most, no `-0`.
fn n(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    if r == 0.0 {
        "0".into()
    } else {
        let s = format!("{r:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// One `<text>` element.
#[allow(clippy::too_many_arguments)]
fn text(
    out: &mut String,
    x: f64,
    y: f64,
    size: f64,
    anchor: Anchor,
    color: Color,
    extra: &str,
    content: &str,
) {
    let anchor = match anchor {
        Anchor::Start => "",
        Anchor::Middle => " text-anchor=\"middle\"",
        Anchor::End => " text-anchor=\"end\"",
    };
    let fill = if color == Color::BLACK {
        String::new()
    } else {
        format!(" fill=\"{}\"", color.hex())
    };
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" font-size=\"{}\"{anchor}{fill}{extra}>{}</text>",
        n(x),
        n(y),
        n(size),
        esc(content)
    );
}

/// Cuts `s` into lines of at most `max_px` at `size`, at spaces.
fn wrap(s: &str, size: f64, max_px: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in s.split(' ') {
        let candidate = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if !cur.is_empty() && text_width(&candidate, size) > max_px {
            lines.push(std::mem::take(&mut cur));
            cur = word.to_string();
        } else {
            cur = candidate;
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// An axis resolved against its data: the range in axis units (log10 on a log axis) and the
/// ticks (value in axis units, label).
#[derive(Debug, Clone)]
struct Resolved {
    log: bool,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
    hidden: bool,
}

impl Resolved {
    /// Axis units of a data value (a value at or below zero on a log axis: the start).
    fn t(&self, v: f64) -> f64 {
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

fn resolve(axis: &Axis, data: &[f64]) -> Resolved {
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
fn data_of(p: &Panel) -> (Vec<f64>, Vec<f64>) {
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

fn has_data(p: &Panel) -> bool {
    p.layers.iter().any(|l| match l {
        Layer::Line(l) => l.points.iter().any(|(x, y)| x.is_finite() && y.is_finite()),
        Layer::Points(pt) => !pt.marks.is_empty(),
        Layer::Bars(b) => !b.bars.is_empty(),
        _ => false,
    })
}

/// Pixel mapping of one panel's plot area.
struct Frame {
    x: Resolved,
    y: Resolved,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        let t = self.x.t(x);
        self.left + (t - self.x.lo) / (self.x.hi - self.x.lo) * (self.right - self.left)
    }
    fn py(&self, y: f64) -> f64 {
        let t = self.y.t(y);
        self.bottom - (t - self.y.lo) / (self.y.hi - self.y.lo) * (self.bottom - self.top)
    }
    /// `py` kept inside the plot (a bar past the top ends at the top).
    fn py_clamped(&self, y: f64) -> f64 {
        self.py(y).clamp(self.top, self.bottom)
    }
}

/// A rectangle in pixels: x, y (top), width, height.
#[derive(Debug, Clone, Copy)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Rect {
    fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
    /// Whether the segment from a to b crosses the rectangle (Liang–Barsky clipping).
    fn crosses(&self, a: (f64, f64), b: (f64, f64)) -> bool {
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

/// A legend entry: its name and how its swatch is drawn.
enum Swatch {
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

fn legend_entries(p: &Panel) -> Vec<(String, Swatch)> {
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

fn swatch(out: &mut String, s: &Swatch, x: f64, y_mid: f64) {
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
enum LegendAt {
    None,
    Box(Rect),
    /// Rows under the plot: (entry index, x) per row.
    Below(Vec<Vec<(usize, f64)>>),
}

/// What lies in the plot area, in pixels: segments, rectangles and points the legend must
/// not cover.
#[derive(Default)]
struct Occupied {
    segments: Vec<((f64, f64), (f64, f64))>,
    rects: Vec<Rect>,
}

impl Occupied {
    fn hits(&self, r: &Rect) -> usize {
        self.segments
            .iter()
            .filter(|(a, b)| r.crosses(*a, *b))
            .count()
            + self.rects.iter().filter(|o| o.overlaps(r)).count()
    }
}

fn occupied(p: &Panel, f: &Frame) -> Occupied {
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

fn place_legend(p: &Panel, f: &Frame, entries: &[(String, Swatch)]) -> LegendAt {
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

/// How the x tick labels are written: straight, or turned by `angle` degrees (and every
/// `step`-th shown).
struct XLabels {
    angle: f64,
    step: usize,
    /// Pixels they take under the plot.
    height: f64,
}

fn x_labels(f: &Frame) -> XLabels {
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

/// The SVG document of `fig`.
pub fn render(fig: &Figure) -> String {
    let w = fig.width_px;
    let mut body = String::new();
    let mut y = EDGE_PX;
    if !fig.title.is_empty() {
        for line in wrap(&fig.title, 22.0, w - 2.0 * EDGE_PX) {
            text(
                &mut body,
                w / 2.0,
                y + 20.0,
                22.0,
                Anchor::Middle,
                Color::BLACK,
                "",
                &line,
            );
            y += 28.0;
        }
    }
    for sub in &fig.subtitle {
        for line in wrap(sub, 13.0, w - 2.0 * EDGE_PX) {
            text(
                &mut body,
                w / 2.0,
                y + 12.0,
                13.0,
                Anchor::Middle,
                Color::DARK_GREY,
                "",
                &line,
            );
            y += 17.0;
        }
    }
    y += 8.0;
    let left = left_margin(fig);
    for p in &fig.panels {
        y = panel(&mut body, p, left, w - 24.0, y);
    }
    for note in &fig.notes {
        for line in wrap(&note.text, SMALL, w - 2.0 * EDGE_PX - 4.0) {
            text(
                &mut body,
                EDGE_PX + 2.0,
                y + 12.0,
                SMALL,
                Anchor::Start,
                note.color,
                "",
                &line,
            );
            y += 16.0;
        }
    }
    if let Some(t) = &fig.table {
        y = table(&mut body, t, left, y + 10.0);
    }
    let h = (y + EDGE_PX).ceil();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" font-family=\"sans-serif\">\n<rect width=\"{}\" height=\"{}\" fill=\"white\"/>\n{body}</svg>\n",
        n(w),
        n(h),
        n(w),
        n(h),
        n(w),
        n(h)
    )
}

/// The y axis label's lines: one, or two when one line is longer than the plot is high.
fn y_label_lines(p: &Panel) -> Vec<String> {
    if p.y.label.is_empty() {
        return Vec::new();
    }
    if text_width(&p.y.label, SMALL) <= p.height_px {
        return vec![p.y.label.clone()];
    }
    wrap(
        &p.y.label,
        SMALL,
        p.height_px.max(text_width(&p.y.label, SMALL) / 2.0 + 20.0),
    )
}

/// The left edge of every plot area: room for the widest y tick label and the y axis label, the
/// same for all panels so their time axes line up.
fn left_margin(fig: &Figure) -> f64 {
    fig.panels
        .iter()
        .map(|p| {
            let (_, ys) = data_of(p);
            let y = resolve(&p.y, &ys);
            let ticks = y
                .ticks
                .iter()
                .map(|(_, l)| text_width(l, SMALL))
                .fold(0.0, f64::max);
            EDGE_PX + 16.0 * y_label_lines(p).len() as f64 + ticks + 10.0
        })
        .fold(56.0, f64::max)
}

/// Draws one panel from `top`; returns the y under it.
fn panel(out: &mut String, p: &Panel, left: f64, right: f64, top: f64) -> f64 {
    let mut y = top;
    if !p.caption.is_empty() {
        for line in wrap(&p.caption, 14.0, right - left) {
            text(
                out,
                left,
                y + 14.0,
                14.0,
                Anchor::Start,
                Color::BLACK,
                "",
                &line,
            );
            y += 19.0;
        }
        y += 2.0;
    }
    let (xs, ys) = data_of(p);
    let mut f = Frame {
        x: resolve(&p.x, &xs),
        y: resolve(&p.y, &ys),
        left,
        right,
        top: y + 8.0,
        bottom: y + 8.0 + p.height_px,
    };
    let xl = x_labels(&f);
    // Turned labels lean left: the first ones must not leave the image.
    if xl.angle > 0.0 {
        let lean = xl.angle.to_radians().cos();
        let need =
            f.x.ticks
                .iter()
                .map(|(t, l)| {
                    let v = if f.x.log { 10f64.powf(*t) } else { *t };
                    text_width(l, SMALL) * lean - f.px(v) + EDGE_PX
                })
                .fold(0.0, f64::max);
        if need > 0.0 {
            f.left += need;
        }
    }
    let clip = format!(
        "clip-{}-{}-{}-{}",
        n(f.left).replace('.', "_"),
        n(f.top).replace('.', "_"),
        n(f.right - f.left).replace('.', "_"),
        n(f.bottom - f.top).replace('.', "_")
    );
    let _ = writeln!(
        out,
        "<defs><clipPath id=\"{clip}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath></defs>",
        n(f.left),
        n(f.top),
        n(f.right - f.left),
        n(f.bottom - f.top)
    );
    // Grid and y ticks.
    for (t, label) in &f.y.ticks {
        let py = f.bottom - (t - f.y.lo) / (f.y.hi - f.y.lo) * (f.bottom - f.top);
        if p.y.grid || p.y.ticks != Ticks::Hidden {
            let _ = writeln!(
                out,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#dddddd\"/>",
                n(f.left),
                n(py),
                n(f.right),
                n(py)
            );
        }
        text(
            out,
            f.left - 6.0,
            py + 4.0,
            SMALL,
            Anchor::End,
            Color::BLACK,
            "",
            label,
        );
    }
    let entries = legend_entries(p);
    let legend = place_legend(p, &f, &entries);
    // The data, clipped to the plot.
    let _ = writeln!(out, "<g clip-path=\"url(#{clip})\">");
    let mut placed: Vec<Rect> = Vec::new();
    if has_data(p) {
        for l in &p.layers {
            layer(out, l, &f, &mut placed);
        }
    }
    let _ = writeln!(out, "</g>");
    // Texts outside the clip, so a label near an edge is not cut (they are kept inside).
    if has_data(p) {
        let mut texts = Vec::new();
        for l in &p.layers {
            if let Layer::Text(t) = l {
                label_text(out, t, &f, &mut placed, &mut texts);
            }
        }
    } else {
        text(
            out,
            (f.left + f.right) / 2.0,
            (f.top + f.bottom) / 2.0,
            13.0,
            Anchor::Middle,
            Color::DARK_GREY,
            "",
            &p.empty_text,
        );
    }
    // Axes.
    if !f.y.hidden {
        let _ = writeln!(
            out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>",
            n(f.left),
            n(f.top),
            n(f.left),
            n(f.bottom)
        );
    }
    if !f.x.hidden {
        let _ = writeln!(
            out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>",
            n(f.left),
            n(f.bottom),
            n(f.right),
            n(f.bottom)
        );
    }
    for (i, (t, label)) in f.x.ticks.iter().enumerate() {
        if i % xl.step != 0 {
            continue;
        }
        let v = if f.x.log { 10f64.powf(*t) } else { *t };
        let px = f.px(v);
        if xl.angle > 0.0 {
            let (tx, ty) = (px + 4.0, f.bottom + 14.0);
            let extra = format!(
                " transform=\"rotate(-{} {} {})\"",
                n(xl.angle),
                n(tx),
                n(ty)
            );
            text(out, tx, ty, SMALL, Anchor::End, Color::BLACK, &extra, label);
        } else {
            text(
                out,
                px,
                f.bottom + 16.0,
                SMALL,
                Anchor::Middle,
                Color::BLACK,
                "",
                label,
            );
        }
    }
    let mut y = f.bottom + xl.height;
    if !p.x.label.is_empty() {
        text(
            out,
            (f.left + f.right) / 2.0,
            y + 16.0,
            SMALL,
            Anchor::Middle,
            Color::BLACK,
            "",
            &p.x.label,
        );
        y += 22.0;
    }
    let lines = y_label_lines(p);
    for (i, line) in lines.iter().enumerate() {
        let lx = EDGE_PX + 10.0 + 16.0 * i as f64;
        let ly = (f.top + f.bottom) / 2.0;
        let extra = format!(" transform=\"rotate(-90 {} {})\"", n(lx), n(ly));
        text(
            out,
            lx,
            ly,
            SMALL,
            Anchor::Middle,
            Color::BLACK,
            &extra,
            line,
        );
    }
    match legend {
        LegendAt::None => {}
        LegendAt::Box(r) => {
            let _ = writeln!(
                out,
                "<g class=\"legend\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"white\" fill-opacity=\"0.85\" stroke=\"#bbbbbb\"/>",
                n(r.x),
                n(r.y),
                n(r.w),
                n(r.h)
            );
            for (i, (name, s)) in entries.iter().enumerate() {
                let mid = r.y + 5.0 + LEGEND_ROW_PX * (i as f64 + 0.5);
                swatch(out, s, r.x + 8.0, mid);
                text(
                    out,
                    r.x + 32.0,
                    mid + 4.0,
                    SMALL,
                    Anchor::Start,
                    Color::BLACK,
                    "",
                    name,
                );
            }
            let _ = writeln!(out, "</g>");
        }
        LegendAt::Below(rows) => {
            let _ = writeln!(out, "<g class=\"legend\">");
            y += 4.0;
            for row in rows {
                let mid = y + LEGEND_ROW_PX / 2.0;
                for (i, x) in row {
                    let (name, s) = &entries[i];
                    swatch(out, s, x, mid);
                    text(
                        out,
                        x + 24.0,
                        mid + 4.0,
                        SMALL,
                        Anchor::Start,
                        Color::BLACK,
                        "",
                        name,
                    );
                }
                y += LEGEND_ROW_PX;
            }
            let _ = writeln!(out, "</g>");
        }
    }
    y + 14.0
}

fn stroke_attrs(color: Color, width: f64, dash: Option<(f64, f64)>, opacity: f64) -> String {
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
fn layer(out: &mut String, l: &Layer, f: &Frame, placed: &mut Vec<Rect>) {
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

fn draw_bar(
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
fn label_text(
    out: &mut String,
    t: &super::figure::Text,
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
fn table(out: &mut String, t: &super::figure::Table, left: f64, top: f64) -> f64 {
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

/// Checks for tests: the SVG is well-formed XML (every tag closed in order, attributes quoted,
/// only known entities), and every text lies inside the image (by the same width estimate
/// the layout uses). Returns what is wrong.
#[cfg(test)]
pub(crate) fn check(svg: &str) -> Result<(), String> {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    let size = |name: &str| -> Option<f64> {
        let open = &svg[svg.find("<svg")?..];
        let open = &open[..open.find('>')?];
        attr(open, name)?.parse().ok()
    };
    let (w, h) = (
        size("width").ok_or("no width")?,
        size("height").ok_or("no height")?,
    );
    while let Some(i) = rest.find('<') {
        check_text(&rest[..i])?;
        rest = &rest[i..];
        let end = rest.find('>').ok_or("an unclosed tag")?;
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name.trim() => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name = tag
            .split_whitespace()
            .next()
            .ok_or("an empty tag")?
            .to_string();
        // Attributes: name="value", values without < and with known entities only.
        let mut attrs = tag[name.len()..].trim();
        while !attrs.is_empty() {
            let eq = attrs
                .find("=\"")
                .ok_or(format!("unquoted attribute in <{tag}>"))?;
            let after = &attrs[eq + 2..];
            let close = after
                .find('"')
                .ok_or(format!("unclosed attribute in <{tag}>"))?;
            check_text(&after[..close])?;
            attrs = after[close + 1..].trim_start();
        }
        if name == "text" {
            let close = rest.find("</text>").ok_or("a text without </text>")?;
            let content = &rest[..close];
            check_text_inside(tag, content, w, h)?;
        }
        if !self_closing {
            stack.push(name);
        }
    }
    check_text(rest)?;
    if !stack.is_empty() {
        return Err(format!("unclosed elements: {stack:?}"));
    }
    Ok(())
}

#[cfg(test)]
fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let rest = &tag[i..];
    Some(rest[..rest.find('"')?].to_string())
}

#[cfg(test)]
fn check_text(t: &str) -> Result<(), String> {
    let mut rest = t;
    while let Some(i) = rest.find('&') {
        let after = &rest[i + 1..];
        let end = after.find(';').ok_or(format!("a bare & in {t:?}"))?;
        let entity = &after[..end];
        let known = ["amp", "lt", "gt", "quot", "apos"].contains(&entity)
            || (entity.starts_with('#') && entity[1..].parse::<u32>().is_ok());
        if !known {
            return Err(format!("unknown entity &{entity}; in {t:?}"));
        }
        rest = &after[end..];
    }
    if t.chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
    {
        return Err(format!("a control character in {t:?}"));
    }
    Ok(())
}

/// Whether a `<text>` lies inside a `w` × `h` image (horizontal, or turned by its transform).
#[cfg(test)]
fn check_text_inside(tag: &str, content: &str, w: f64, h: f64) -> Result<(), String> {
    let num = |k: &str| attr(tag, k).and_then(|v| v.parse::<f64>().ok());
    let (x, y, size) = (
        num("x").ok_or("text without x")?,
        num("y").ok_or("text without y")?,
        num("font-size").unwrap_or(12.0),
    );
    let plain = content
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'");
    let tw = text_width(&plain, size);
    let anchor = attr(tag, "text-anchor").unwrap_or_default();
    let along = match anchor.as_str() {
        "middle" => (-tw / 2.0, tw / 2.0),
        "end" => (-tw, 0.0),
        _ => (0.0, tw),
    };
    let angle: f64 = attr(tag, "transform")
        .and_then(|t| {
            t.strip_prefix("rotate(")
                .and_then(|r| r.split_whitespace().next().map(str::to_string))
        })
        .and_then(|a| a.parse().ok())
        .unwrap_or(0.0);
    let (c, s) = (angle.to_radians().cos(), angle.to_radians().sin());
    // The text's box (along the baseline, from `size` above it to a fifth below), turned.
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for a in [along.0, along.1] {
        for b in [-size, size * 0.2] {
            xs.push(x + a * c - b * s);
            ys.push(y + a * s + b * c);
        }
    }
    let (x0, x1) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let (y0, y1) = (
        ys.iter().copied().fold(f64::INFINITY, f64::min),
        ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    if x0 < -0.5 || x1 > w + 0.5 || y0 < -0.5 || y1 > h + 0.5 {
        return Err(format!(
            "text {plain:?} at ({x0:.0}..{x1:.0}, {y0:.0}..{y1:.0}) leaves the {w}×{h} image"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::figure::{Bars, Line, Panel};

    #[test]
    fn text_from_outside_cannot_break_the_document() {
        assert_eq!(
            esc("a<b>&\"c'\u{1b}[31m"),
            "a&lt;b&gt;&amp;&quot;c&#39;\u{FFFD}[31m"
        );
        let fig = Figure::new("disk <\u{7}> & co").panel(
            Panel::new(Axis::linear("x"), Axis::linear("y"))
                .layer(Line::new(Color::BLUE, vec![(0.0, 1.0), (1.0, 2.0)]).name("a\u{0}b")),
        );
        let svg = render(&fig);
        check(&svg).unwrap();
        assert!(svg.contains("disk &lt;\u{FFFD}&gt; &amp; co"), "{svg}");
        assert!(
            check("<svg width=\"1\" height=\"1\"><text x=\"0\" y=\"1\">a & b</text></svg>")
                .is_err()
        );
        assert!(check("<svg width=\"1\" height=\"1\"><g></svg>").is_err());
    }

    #[test]
    fn a_legend_with_many_entries_goes_under_the_plot_and_the_image_grows() {
        let panel = |series: usize| {
            let mut p = Panel::new(Axis::linear("x"), Axis::linear("MiB/s")).height(300.0);
            for i in 0..series {
                p = p.layer(Bars {
                    name: Some(format!("series number {i} with a long name")),
                    color: Color::series(i),
                    opacity: 0.75,
                    bars: vec![Bar::new(i as f64, i as f64 + 0.8, 10.0 + i as f64)],
                });
            }
            Figure::new("t").panel(p)
        };
        let few = render(&panel(2));
        let many = render(&panel(24));
        check(&few).unwrap();
        check(&many).unwrap();
        let height = |s: &str| -> f64 {
            attr(&s[..s.find('>').unwrap()], "height")
                .unwrap()
                .parse()
                .unwrap()
        };
        assert!(
            height(&many) > height(&few) + 100.0,
            "{} vs {}",
            height(&many),
            height(&few)
        );
        assert_eq!(many.matches("series number").count(), 24);
    }

    #[test]
    fn ticks_are_round_and_log_axes_use_decades() {
        let a = resolve(&Axis::linear(""), &[0.0, 8745.0]);
        assert_eq!(a.ticks[1].1, "2000");
        let l = resolve(&Axis::log(""), &[0.4, 9000.0]);
        let labels: Vec<&str> = l.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["0.1", "1", "10", "100", "1000", "10k"]);
        let narrow = resolve(&Axis::log(""), &[]).ticks.len();
        assert!(narrow >= 2);
    }
}
