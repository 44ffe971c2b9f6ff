//! Text in an SVG: its estimated width, escaping, numbers in attributes, one `<text>`
//! element, and wrapping to a width.

use super::super::model::{Anchor, Color};
use std::fmt::Write;

/// Space between the image's edge and anything on it, pixels.
pub(super) const EDGE_PX: f64 = 12.0;
/// Height of one legend row, pixels.
pub(super) const LEGEND_ROW_PX: f64 = 18.0;
/// Font size of tick labels, axis labels and the legend.
pub(super) const SMALL: f64 = 12.0;

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
pub(super) fn n(v: f64) -> String {
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
pub(super) fn text(
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
pub(super) fn wrap(s: &str, size: f64, max_px: f64) -> Vec<String> {
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
