//! The event log: every message the line at the bottom showed — each key's effect, notes,
//! warnings and errors — timestamped (seconds since the explorer started), newest at the bottom,
//! wrapped rather than cut. The message line shows only the latest and a note that follows a key
//! within milliseconds (O_DIRECT's, for one) replaces it there; here both stay.

use super::frame;
use crate::text::shown;
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

/// One entry as drawn: `  12.3 text`.
pub fn entry_text(at_s: f64, message: &str) -> String {
    format!("{at_s:>6.1} {}", shown(message))
}

/// Draws the log: as many of the newest entries as fit, each wrapped whole.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.height < 3 || area.width < 10 {
        return;
    }
    let block = frame(" log ");
    let inner = block.inner(area);
    block.render(area, buf);
    let width = inner.width as usize;
    let mut rows = inner.height as usize;
    let mut shown_entries = Vec::new();
    for (at, m) in app.log.iter().rev() {
        let text = entry_text(*at, m);
        let need = text.chars().count().div_ceil(width).max(1);
        if need > rows {
            break;
        }
        rows -= need;
        shown_entries.push((*at, text));
    }
    let dim = Style::default().fg(Color::DarkGray);
    let lines: Vec<Line> = shown_entries
        .into_iter()
        .rev()
        .map(|(_, t)| {
            let (stamp, rest) = t.split_at(6);
            Line::from(vec![
                Span::styled(stamp.to_string(), dim),
                Span::raw(rest.to_string()),
            ])
        })
        .collect();
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}
