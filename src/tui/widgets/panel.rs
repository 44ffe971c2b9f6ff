//! The settings panel: the file, its page-cache residency gauge and every knob with its value.

use super::frame;
use crate::size::{format_bytes_approx, format_size};
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Paragraph, Widget};

/// Draws the settings panel.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let block = frame(" settings ");
    let inner = block.inner(area);
    block.render(area, buf);
    let s = &app.settings;
    let key = Style::default().fg(Color::DarkGray);
    let val = Style::default().add_modifier(Modifier::BOLD);
    let pair = |k: &'static str, v: String| vec![Span::styled(k, key), Span::styled(v, val)];
    // A file name is outside text: escaped, so it can neither retitle the terminal nor shift
    // the panel.
    let name = app
        .file
        .file_name()
        .map(|n| crate::text::shown_os(n).into_owned())
        .unwrap_or_else(|| crate::text::shown_path(&app.file).into_owned());
    let size = format_bytes_approx(app.explored.size_bytes);
    let room = (inner.width as usize).saturating_sub(7 + 1 + size.chars().count());
    let mut lines = vec![
        Line::from(pair("file   ", format!("{} {size}", shorten(&name, room)))),
        Line::from(Vec::new()), // residency gauge drawn over this line
        Line::from(
            [
                pair("op     ", s.op_text()),
                pair("  ", s.setup.pattern.to_string()),
            ]
            .concat(),
        ),
        Line::from(
            [
                pair("method ", s.method_text()),
                pair(
                    "  qd ",
                    if crate::engine::caps(s.setup.method).queued {
                        s.setup.queue_depth.to_string()
                    } else {
                        "-".into()
                    },
                ),
            ]
            .concat(),
        ),
        Line::from(
            [
                pair("block  ", format_size(s.setup.block_size_bytes)),
                pair("  threads ", s.setup.threads.to_string()),
            ]
            .concat(),
        ),
        Line::from(
            [
                pair("direct ", if s.setup.direct { "on" } else { "off" }.into()),
                match (s.setup.op, s.setup.write_sync) {
                    (crate::config::Op::Write, sync) => pair("  sync ", sync.as_str().into()),
                    (_, crate::tui::settings::WriteSync::None) => pair("  sync ", "-".into()),
                    // Set with `f` while reading: said, so the next write's durability is not
                    // a surprise.
                    (_, sync) => vec![
                        Span::styled("  sync ", key),
                        Span::styled(format!("{} for w", sync.as_str()), key),
                    ],
                },
            ]
            .concat(),
        ),
    ];
    // The buffer memory (`M`) when it is not the default, where the method's line has room.
    if s.setup.buffers != crate::config::Buffers::DEFAULT {
        let extra = pair("  buf ", s.setup.buffers.to_string());
        if lines[3].width() + super::spans_width(&extra) <= inner.width as usize {
            lines[3].spans.extend(extra);
        }
    }
    // The open loop's rate as typed (`R`), on the first line of op, block or direct with room
    // (the throughput panel says it whole, with the rate done).
    if let Some(rate) = s.rate {
        let typed = rate.short(s.setup.block_size_bytes);
        for extra in [pair("  rate ", typed.clone()), pair("  @", typed)] {
            let w = super::spans_width(&extra);
            if let Some(l) = [2, 4, 5]
                .into_iter()
                .find(|&i| lines[i].width() + w <= inner.width as usize)
            {
                lines[l].spans.extend(extra);
                break;
            }
        }
    }
    lines.truncate(inner.height as usize);
    Paragraph::new(lines).render(inner, buf);
    if inner.height >= 2 {
        let [label, gauge] = Layout::horizontal([Constraint::Length(12), Constraint::Min(4)])
            .areas(Rect {
                y: inner.y + 1,
                height: 1,
                ..inner
            });
        // Not "warm": the explorer does not pre-read the file, so next to a 78% gauge "warm"
        // would claim what the gauge denies. "as is" is what the mode does (batch's `as-is`).
        let cache = if s.cold() { "cold" } else { "as is" };
        let cache_style = if s.cold() {
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD)
        };
        Paragraph::new(Line::from(vec![
            Span::styled("cache  ", key),
            Span::styled(cache, cache_style),
        ]))
        .render(label, buf);
        let pct = app.explored.residency.map(|r| r.percent()).unwrap_or(0.0);
        let text = match app.explored.residency {
            Some(_) => format!("{pct:.0}% cached"),
            None => "measuring".into(),
        };
        Gauge::default()
            .ratio((pct / 100.0).clamp(0.0, 1.0))
            .label(text)
            .gauge_style(Style::default().fg(Color::Green).bg(Color::Black))
            .render(gauge, buf);
    }
}

/// `name` cut to `max` characters with an ellipsis in the middle, keeping both ends readable.
pub fn shorten(name: &str, max: usize) -> String {
    let n = name.chars().count();
    if n <= max {
        return name.to_string();
    }
    if max < 3 {
        return name.chars().take(max).collect();
    }
    let head = (max - 1) / 2;
    let tail = max - 1 - head;
    let start: String = name.chars().take(head).collect();
    let end: String = name.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_keep_both_ends() {
        assert_eq!(shorten("diskscope-scratch-1G", 11), "disks…ch-1G");
        assert_eq!(shorten("short", 11), "short");
    }
}
