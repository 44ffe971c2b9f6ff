//! The one SVG renderer: a [`Figure`] in, a self-contained SVG document out (no fonts or files
//! needed; text is SVG `<text>` laid out by the viewer). Written directly rather than through a
//! plotting library so that every layout rule lives here and can be tested: text widths are
//! estimated per character class, the legend goes where it covers no data (else in wrapped rows
//! under the plot, and the image grows), category labels turn or thin out before they overlap,
//! a long axis label wraps, value labels are left out where their bar is too narrow, and labels
//! placed at data points move up rather than overwrite each other. Data layers are clipped to
//! their plot by a nested viewport: the document has no ids and references nothing, so several
//! figures can share one HTML page.

mod axes;
#[cfg(test)]
mod check;
mod layers;
mod legend;
mod text;

#[cfg(test)]
pub(crate) use check::check;
pub use text::{esc, text_width};

use super::model::{Anchor, Color, Figure, Layer, Panel, Ticks};
use axes::{data_of, has_data, resolve, x_labels, Frame, Rect};
use layers::{label_text, layer, table};
use legend::{legend_entries, place_legend, swatch, LegendAt};
use std::fmt::Write;
use text::{n, text, wrap, EDGE_PX, LEGEND_ROW_PX, SMALL};

impl Figure {
    /// The SVG document.
    pub fn to_svg(&self) -> String {
        render(self)
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
    // The data, clipped to the plot: a nested viewport in the same coordinates (no id to
    // reference, so figures sharing a page cannot mix up their clips).
    let (w, h) = (n(f.right - f.left), n(f.bottom - f.top));
    let _ = writeln!(
        out,
        "<svg x=\"{}\" y=\"{}\" width=\"{w}\" height=\"{h}\" viewBox=\"{} {} {w} {h}\" overflow=\"hidden\">",
        n(f.left),
        n(f.top),
        n(f.left),
        n(f.top)
    );
    let mut placed: Vec<Rect> = Vec::new();
    if has_data(p) {
        for l in &p.layers {
            layer(out, l, &f, &mut placed);
        }
    }
    let _ = writeln!(out, "</svg>");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::figure::{Axis, Bar, Bars, Line, Panel};
    use axes::resolve;
    use check::attr;

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

    /// A small figure, drawn: the renderer's output is pinned, so a change to it is a choice.
    fn small() -> Figure {
        Figure::new("t").subtitle("s").panel(
            Panel::new(
                Axis::linear("x").range(0.0, 2.0),
                Axis::linear("y").range(0.0, 10.0).grid(),
            )
            .height(100.0)
            .layer(Line::new(Color::BLUE, vec![(0.0, 1.0), (2.0, 9.0)]).name("a"))
            .layer(Bars {
                name: None,
                color: Color::RED,
                opacity: 1.0,
                bars: vec![Bar {
                    label: Some("5".into()),
                    ..Bar::new(0.5, 1.5, 5.0)
                }],
            }),
        )
    }

    #[test]
    fn a_small_figure_renders_to_this_exact_svg() {
        let svg = render(&small());
        check(&svg).unwrap();
        assert_eq!(svg, SMALL_SVG, "{svg}");
    }

    const SMALL_SVG: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="239" viewBox="0 0 1000 239" font-family="sans-serif">
<rect width="1000" height="239" fill="white"/>
<text x="500" y="32" font-size="22" text-anchor="middle">t</text>
<text x="500" y="52" font-size="13" text-anchor="middle" fill="#555555">s</text>
<line x1="56" y1="173" x2="976" y2="173" stroke="#dddddd"/>
<text x="50" y="177" font-size="12" text-anchor="end">0</text>
<line x1="56" y1="153" x2="976" y2="153" stroke="#dddddd"/>
<text x="50" y="157" font-size="12" text-anchor="end">2</text>
<line x1="56" y1="133" x2="976" y2="133" stroke="#dddddd"/>
<text x="50" y="137" font-size="12" text-anchor="end">4</text>
<line x1="56" y1="113" x2="976" y2="113" stroke="#dddddd"/>
<text x="50" y="117" font-size="12" text-anchor="end">6</text>
<line x1="56" y1="93" x2="976" y2="93" stroke="#dddddd"/>
<text x="50" y="97" font-size="12" text-anchor="end">8</text>
<line x1="56" y1="73" x2="976" y2="73" stroke="#dddddd"/>
<text x="50" y="77" font-size="12" text-anchor="end">10</text>
<svg x="56" y="73" width="920" height="100" viewBox="56 73 920 100" overflow="hidden">
<polyline points="56,163 976,83" fill="none" stroke="#1f77b4" stroke-width="1.5" stroke-linejoin="round"/>
<rect x="286" y="123" width="460" height="50" fill="#d62728"/>
<text x="516" y="120" font-size="11" text-anchor="middle" fill="#282828">5</text>
</svg>
<line x1="56" y1="73" x2="56" y2="173" stroke="black"/>
<line x1="56" y1="173" x2="976" y2="173" stroke="black"/>
<text x="56" y="189" font-size="12" text-anchor="middle">0</text>
<text x="286" y="189" font-size="12" text-anchor="middle">0.5</text>
<text x="516" y="189" font-size="12" text-anchor="middle">1</text>
<text x="746" y="189" font-size="12" text-anchor="middle">1.5</text>
<text x="976" y="189" font-size="12" text-anchor="middle">2</text>
<text x="516" y="207" font-size="12" text-anchor="middle">x</text>
<text x="22" y="123" font-size="12" text-anchor="middle" transform="rotate(-90 22 123)">y</text>
<g class="legend"><rect x="64" y="81" width="49.2" height="28" fill="white" fill-opacity="0.85" stroke="#bbbbbb"/>
<line x1="72" y1="95" x2="90" y2="95" stroke="#1f77b4" stroke-width="1.5" stroke-opacity="1"/>
<text x="96" y="99" font-size="12">a</text>
</g>
</svg>
"##;

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
