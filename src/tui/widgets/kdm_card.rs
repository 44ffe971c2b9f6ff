//! The KDiskMark card: the set's results as KDiskMark shows them, one line per test with read
//! and write side by side, in the unit chosen with `u` (KDiskMark users think in MB/s), with
//! IOPS beside the random tests. Drawn over the screen when the set ends; any key closes it.

use super::{fmt_mib_s, fmt_rate, frame};
use crate::config::Op;
use crate::tui::app::App;
use crate::tui::kdiskmark::{KdmRun, TESTS};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph, Widget};

/// The card's lines (also used by the export and tests).
pub fn card_lines(app: &App, k: &KdmRun) -> Vec<String> {
    let cell = |op: Op, ti: usize| -> String {
        let steps = KdmRun::steps();
        let Some(i) = steps
            .iter()
            .position(|(o, t)| *o == op && t.name == TESTS[ti].name)
        else {
            return String::new();
        };
        match k.results.get(i) {
            Some(Some(r)) => {
                let v = fmt_mib_s(app.in_unit(r.figures.mib_s));
                if TESTS[ti].block_size_bytes < 1 << 20 {
                    format!("{v:>7} {:>5} IOPS", fmt_rate(r.figures.iops))
                } else {
                    format!("{v:>7}")
                }
            }
            Some(None) => format!("{:>7}", "failed"),
            None if i == k.step && !k.done() => format!("{:>7}", "…"),
            None => format!("{:>7}", "-"),
        }
    };
    let mut lines = vec![format!(
        "{:<12} {:<18} {:<18}",
        "",
        format!("Read {}", app.unit()),
        format!("Write {}", app.unit())
    )];
    for (ti, test) in TESTS.iter().enumerate() {
        lines.push(format!(
            "{:<12} {:<18} {:<18}",
            test.name,
            cell(Op::Read, ti),
            cell(Op::Write, ti)
        ));
    }
    lines.push(match k.caveat() {
        Some(c) => format!("note: {c}"),
        None => "io_uring, O_DIRECT, 1 thread, as KDiskMark".into(),
    });
    lines
}

/// Draws the card centred in `area`.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(k) = &app.kdm.run else { return };
    let mut lines: Vec<Line> = card_lines(app, k)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                Line::styled(l, Style::default().add_modifier(Modifier::BOLD))
            } else {
                Line::raw(l)
            }
        })
        .collect();
    lines.push(Line::raw(
        "rows added to results; any key closes, k runs it again",
    ));
    let w = area.width.min(62);
    let h = area.height.min(lines.len() as u16 + 2);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    Clear.render(popup, buf);
    let title = format!(
        " KDiskMark set, {} s per test ",
        crate::export::axis::fmt_tick(k.seconds)
    );
    Paragraph::new(lines)
        .block(frame(&title))
        .render(popup, buf);
}
