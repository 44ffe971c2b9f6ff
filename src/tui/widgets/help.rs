//! The `?` overlay: every key, and where results and scratch files go.

use super::frame;
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

/// The key lines, shared with the docs.
pub const KEYS: &[&str] = &[
    "←/→      halve / double the block size",
    "b        type an exact block size (12K, 3, 1M: 1 B to 1G), Enter",
    "↑/↓ +/-  one thread more / less",
    "m        next method (read pread mmap io_uring buffered)",
    "[ ]      io_uring queue depth",
    "c        cold / as is (cold evicts now and before every pass)",
    "d        O_DIRECT on / off",
    "w        read / write (writes go to a scratch file)",
    "p        sequential / random offsets",
    "f        writes: plain / fsync at the end / O_DSYNC",
    "k        KDiskMark set (SEQ1M Q8T1 ... RND4K Q1T1, read+write)",
    "B        pin the newest row as baseline (again: older, none)",
    "u / e    MiB/s or MB/s / export the session as SVG and JSON",
    "space r t  pause / resume; reset; keep rows under 1 s or 100 ops too",
    "J/K PgDn/PgUp Home/End  move the results cursor (the table scrolls)",
    "o h H    sort rows (thr IOPS p99 time) / hide the row / show hidden",
    "s        append the results table to the CSV file",
    "q Ctrl-C quit",
];

/// Draws the help overlay centred in `area`.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let w = area.width.min(72);
    let h = area.height.min(KEYS.len() as u16 + 6);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(popup, buf);
    let mut lines: Vec<Line> = KEYS.iter().map(|k| Line::raw(*k)).collect();
    lines.push(Line::raw(format!(
        "CSV:     {}",
        crate::text::shown_path(&app.csv_path)
    )));
    lines.push(Line::raw(format!(
        "scratch: {}",
        crate::text::shown_path(&app.scratch)
    )));
    lines.push(Line::raw("any key closes this help"));
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .block(frame(" keys "))
        .render(popup, buf);
}
