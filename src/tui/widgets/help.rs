//! The `?` overlay: every key (generated from [`keys::KEYS`](crate::tui::keys::KEYS), where
//! each is declared once), and where results and scratch files go. Two columns when wide.

use super::frame;
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

/// Draws the help overlay centred in `area`.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let keys = crate::tui::keys::help_lines();
    let col_w = keys.iter().map(|k| k.chars().count()).max().unwrap_or(40) + 2;
    // Two columns when the screen has room for them, else one (wrapped when narrower).
    let columns = if area.width as usize >= 2 * col_w + 2 {
        2
    } else {
        1
    };
    let per_col = keys.len().div_ceil(columns);
    let mut lines: Vec<Line> = (0..per_col)
        .map(|r| {
            let left = &keys[r];
            match keys.get(r + per_col).filter(|_| columns == 2) {
                Some(right) => Line::raw(format!("{left:<col_w$}{right}")),
                None => Line::raw(left.clone()),
            }
        })
        .collect();
    lines.push(Line::raw(format!(
        "CSV:     {}",
        crate::text::shown_path(&app.explored.csv_path)
    )));
    lines.push(Line::raw(format!(
        "scratch: {}",
        crate::text::shown_path(&app.explored.scratch)
    )));
    lines.push(Line::raw(crate::tui::keys::hint(
        crate::tui::keys::Part::Overlay,
    )));
    let w = area
        .width
        .min((col_w * columns) as u16 + 2)
        .max(area.width.min(40));
    // A popup within a column or two of the screen's width takes all of it (no stray borders
    // of the panels under it at its edge).
    let w = if area.width - w < 4 { area.width } else { w };
    let h = area.height.min(lines.len() as u16 + 2);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(popup, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(frame(" keys "))
        .render(popup, buf);
}
