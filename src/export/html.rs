//! A tiny HTML writer for every page diskscope writes (`--export-html`, `--report`): everything
//! inline (CSS, SVG), nothing fetched, every piece of text escaped. The style sheet reads well on a laptop screen (one column of at most
//! ~72 rem, tables scroll sideways rather than overflow) and prints cleanly (no shadows, figures
//! and tables kept whole on a page, colours kept for verdicts).

/// Escapes text for HTML element content and attribute values. Control characters other than
/// newline and tab (an ESC or BEL in a fio job name, a path) are written out as `\u{1b}` text
/// (`text::shown_lines`), never put in the page raw.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c != '\n' && c != '\t' && crate::text::is_unsafe_char(c) => {
                o.extend(c.escape_default())
            }
            c => o.push(c),
        }
    }
    o
}

const CSS: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  margin: 0; color: #1d2228; background: #fff; line-height: 1.45; }
main { max-width: 72rem; margin: 0 auto; padding: 1.5rem 1.25rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .6rem; padding-bottom: .2rem; border-bottom: 1px solid #d8dde3; }
.sub { color: #5a6570; margin: 0 0 1rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .86rem; font-variant-numeric: tabular-nums; }
th, td { padding: .3rem .55rem; border-bottom: 1px solid #e4e8ec; text-align: right; white-space: nowrap; }
th { background: #f3f5f7; font-weight: 600; position: sticky; top: 0; }
td.t, th.t { text-align: left; }
td.t:first-child { white-space: normal; min-width: 11rem; }
td.t:last-child { white-space: normal; min-width: 6.5rem; }
dl.ctx { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
dl.ctx dt { color: #5a6570; } dl.ctx dd { margin: 0; word-break: break-all; }
pre { background: #f6f8fa; padding: .75rem; overflow-x: auto; font-size: .8rem; border-radius: 4px; }
figure { margin: 1rem 0; }
figure svg { width: 100%; max-width: 60rem; height: auto; display: block; border: 1px solid #e4e8ec; }
figcaption { color: #5a6570; font-size: .85rem; margin-top: .3rem; }
.faster { color: #1e8232; font-weight: 600; }
.slower { color: #c81e1e; font-weight: 600; }
.same { color: #5a6570; }
.note { color: #5a6570; font-size: .88rem; }
.summary { font-size: 1.05rem; padding: .6rem .8rem; background: #f3f5f7; border-left: 4px solid #78909c; }
@media print {
  main { max-width: none; padding: 0; }
  body { font-size: 10pt; }
  h2 { break-after: avoid; }
  figure, table, dl { break-inside: avoid; }
  .scroll { overflow: visible; }
  table { width: 100%; font-size: 7.5pt; }
  th, td { white-space: normal; padding: .15rem .3rem; }
  td.t:first-child { min-width: 0; }
  th { position: static; }
  pre { white-space: pre-wrap; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"#;

/// A page under construction.
#[derive(Debug, Default)]
pub struct Page {
    body: String,
}

impl Page {
    pub fn new(title: &str, subtitle: &str) -> Self {
        Page {
            body: format!(
                "<h1>{}</h1>\n<p class=\"sub\">{}</p>\n",
                esc(title),
                esc(subtitle)
            ),
        }
    }

    pub fn h2(&mut self, text: &str) {
        self.body += &format!("<h2>{}</h2>\n", esc(text));
    }

    pub fn para(&mut self, class: &str, text: &str) {
        self.body += &format!("<p class=\"{}\">{}</p>\n", esc(class), esc(text));
    }

    pub fn pre(&mut self, text: &str) {
        self.body += &format!("<pre>{}</pre>\n", esc(text));
    }

    /// A definition list of (name, value) pairs.
    pub fn facts(&mut self, facts: &[(String, String)]) {
        self.body += "<dl class=\"ctx\">\n";
        for (k, v) in facts {
            self.body += &format!("<dt>{}</dt><dd>{}</dd>\n", esc(k), esc(v));
        }
        self.body += "</dl>\n";
    }

    /// A table; `left` lists the columns aligned left (text), and each cell may carry a class.
    pub fn table(&mut self, header: &[&str], left: &[usize], rows: &[Vec<(String, &str)>]) {
        let cls = |i: usize, extra: &str| {
            let mut c = String::new();
            if left.contains(&i) {
                c.push('t');
            }
            if !extra.is_empty() {
                if !c.is_empty() {
                    c.push(' ');
                }
                c += extra;
            }
            if c.is_empty() {
                String::new()
            } else {
                format!(" class=\"{}\"", esc(&c))
            }
        };
        self.body += "<div class=\"scroll\"><table>\n<thead><tr>";
        for (i, h) in header.iter().enumerate() {
            self.body += &format!("<th{}>{}</th>", cls(i, ""), esc(h));
        }
        self.body += "</tr></thead>\n<tbody>\n";
        for r in rows {
            self.body += "<tr>";
            for (i, (text, class)) in r.iter().enumerate() {
                self.body += &format!("<td{}>{}</td>", cls(i, class), esc(text));
            }
            self.body += "</tr>\n";
        }
        self.body += "</tbody></table></div>\n";
    }

    /// An inline SVG figure. `svg` must be an SVG document of our own making (the figure
    /// renderer's output, or a figure batch mode wrote); the XML prolog, if any, is dropped and a
    /// viewBox added where it has none, so the figure scales to the column.
    pub fn figure(&mut self, svg: &str, caption: &str) {
        self.body += &format!(
            "<figure>{}<figcaption>{}</figcaption></figure>\n",
            scalable_svg(svg),
            esc(caption)
        );
    }

    /// The whole document.
    pub fn finish(self, title: &str) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n{}</main>\n</body>\n</html>\n",
            esc(title),
            self.body
        )
    }
}

/// Strips an XML prolog and gives the root `<svg>` a viewBox from its width and height.
pub fn scalable_svg(svg: &str) -> String {
    let start = svg.find("<svg").unwrap_or(0);
    let svg = &svg[start..];
    let Some(end) = svg.find('>') else {
        return String::new();
    };
    let open = &svg[..end];
    if open.contains("viewBox") {
        return svg.to_string();
    }
    let attr = |name: &str| {
        let key = format!(" {name}=\"");
        open.find(&key).and_then(|i| {
            let rest = &open[i + key.len()..];
            rest.find('"').map(|j| rest[..j].to_string())
        })
    };
    match (attr("width"), attr("height")) {
        (Some(w), Some(h)) => format!("<svg viewBox=\"0 0 {w} {h}\"{}", &svg[4..]),
        _ => svg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_svgs_get_a_viewbox() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        let s = scalable_svg(
            "<?xml version=\"1.0\"?>\n<svg width=\"10\" height=\"20\" xmlns=\"x\"></svg>",
        );
        assert!(
            s.starts_with("<svg viewBox=\"0 0 10 20\" width=\"10\""),
            "{s}"
        );
        let mut p = Page::new("t<", "s");
        p.table(&["a"], &[0], &[vec![("<b>".into(), "slower")]]);
        let html = p.finish("t<");
        assert!(
            html.contains("<td class=\"t slower\">&lt;b&gt;</td>"),
            "{html}"
        );
        assert!(!html.contains("http"), "no external references");
    }
}
