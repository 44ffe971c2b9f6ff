//! The results table: the live setting on top, then each finished setting's figures (newest
//! first), so block sizes or methods can be compared side by side. Flags: W = write,
//! D = O_DIRECT, C = cold, R = random offsets. Rows already saved to CSV are marked with `✓`.

use super::{fmt_mib_s, fmt_rate, fmt_us, frame};
use crate::measure::RunResult;
use crate::size::format_size;
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Row, Table, Widget};

fn flags(r: &RunResult) -> String {
    let mut f = String::new();
    if r.operation == "write" {
        f.push('W');
    }
    if r.direct {
        f.push('D');
    }
    if r.cache == "cold" {
        f.push('C');
    }
    if r.pattern == "random" {
        f.push('R');
    }
    f
}

fn row(mark: &str, r: &RunResult) -> Row<'static> {
    Row::new(vec![
        format!("{mark}{} {}", r.method, format_size(r.block_size_bytes)),
        r.threads.to_string(),
        flags(r),
        fmt_mib_s(r.mib_s),
        fmt_rate(r.iops),
        fmt_us(r.lat_p99_us),
    ])
}

/// Draws the results table.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let title = format!(" results ({} rows, s saves) ", app.rows.len());
    let block = frame(&title);
    let mut rows = Vec::new();
    if let Some(live) = &app.live {
        if let Some(r) = live.result("tui-live", live.seconds()) {
            if r.ops > 0 {
                rows.push(row("▶", &r).style(Style::default().fg(Color::Green)));
            }
        }
    }
    for (i, r) in app.rows.iter().enumerate().rev() {
        rows.push(row(if i < app.rows_saved { "✓" } else { " " }, r));
    }
    let header = Row::new(vec!["setting", "thr", "flg", "MiB/s", "IOPS", "p99"])
        .style(Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED));
    Table::new(
        rows,
        [
            Constraint::Min(13),
            Constraint::Length(3),
            Constraint::Length(3),
            Constraint::Length(6),
            Constraint::Length(5),
            Constraint::Length(6),
        ],
    )
    .header(header)
    .column_spacing(1)
    .block(block)
    .render(area, buf);
}
