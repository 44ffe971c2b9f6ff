//! Checks of a rendered figure, for tests: well-formed XML, and every text inside the image.

use super::text::text_width;

/// Checks for tests: the SVG is well-formed XML (every tag closed in order, attributes quoted,
/// only known entities), and every text lies inside the image (by the same width estimate
/// the layout uses). Returns what is wrong.
pub fn check(svg: &str) -> Result<(), String> {
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

pub(super) fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let rest = &tag[i..];
    Some(rest[..rest.find('"')?].to_string())
}

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
