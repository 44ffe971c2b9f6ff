//! The "why" of a number: which limit the run is up against (the model's bound, its value and
//! how close the run comes, updated with every snapshot and every knob), and where the file
//! lives (filesystem, device) with a warning when it lives in RAM or across a network. A number
//! without them invites the wrong conclusion: 5 GiB/s "from a disk" that is really a tmpfs, or
//! 30% of a bound blamed on the disk when another process took the CPU.
//!
//! Three places, so an 80×24 screen loses nothing it had: a short why line inside the
//! throughput panel ([`short_line`]), the storage in the status line ([`status_spans`]), and,
//! from [`DETAIL_MIN_HEIGHT`] rows, two full-width rows under the panels ([`render_detail`]):
//! the one-liner with what to look at below half the bound, and the full context.
//!
//! A run above its bound by more than the profile's error gets the ⚠ too, and the one-liner
//! says that the profile does not explain it (see `explain::model`) instead of a share over
//! 100%. Every string from outside (file name, filesystem, device, warnings) is escaped.

use crate::text::{shown, shown_path};
use crate::tui::app::{App, Why};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

/// Rows of the detail panel.
pub const DETAIL_HEIGHT: u16 = 3;
/// From this terminal height on, the detail rows are shown.
pub const DETAIL_MIN_HEIGHT: u16 = super::MIN_HEIGHT + DETAIL_HEIGHT;

/// What to do without a profile (fits the throughput panel at 80 columns).
pub const NO_PROFILE: &str = "no profile: run `diskscope limits FILE`";

fn warn() -> Style {
    Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}

/// The why line of the throughput panel: `why memory-bound 4.0 GiB/s · 74%`.
pub fn short_line(app: &App) -> Line<'static> {
    let dim = Style::default().fg(Color::DarkGray);
    let mut spans = vec![Span::styled("why ", dim)];
    match app.why() {
        Why::NoProfile => spans.push(Span::styled(NO_PROFILE, Style::default().fg(Color::Yellow))),
        Why::Predicted(s) | Why::NotModelled(s) => spans.push(Span::styled(s, dim)),
        Why::Measured { short, low, .. } => {
            if low {
                spans.push(Span::styled(format!("⚠ {short}"), warn()));
            } else {
                spans.push(Span::styled(
                    short,
                    Style::default().add_modifier(Modifier::BOLD),
                ));
            }
        }
    }
    Line::from(spans)
}

/// The storage for the status line: `│ ext4 on vda`, warnings first (`│ ⚠ tmpfs …`).
pub fn status_spans(app: &App) -> Vec<Span<'static>> {
    let Some(ctx) = &app.context else {
        return Vec::new();
    };
    let mut spans = Vec::new();
    for w in &ctx.warnings {
        spans.push(Span::styled(format!(" │ ⚠ {}", shown(w)), warn()));
    }
    let fs = ctx
        .filesystem
        .as_ref()
        .map_or("filesystem unknown".into(), |f| shown(&f.fs_type));
    let on = ctx
        .device
        .as_ref()
        .map(|d| format!(" on {}", shown(&d.chain.join("→"))))
        .unwrap_or_default();
    spans.push(Span::styled(
        format!(" │ {fs}{on}"),
        Style::default().fg(Color::DarkGray),
    ));
    spans
}

/// The full-width rows: the one-liner (wrapping into its second row for what to look at) and
/// the context line.
pub fn render_detail(app: &App, area: Rect, buf: &mut Buffer) {
    let dim = Style::default().fg(Color::DarkGray);
    let mut why = vec![Span::styled("why   ", dim)];
    match app.why() {
        Why::NoProfile => why.push(Span::styled(
            format!(
                "no profile: run `diskscope limits {}` (once, under a minute)",
                shown_path(&app.file)
            ),
            Style::default().fg(Color::Yellow),
        )),
        Why::Predicted(s) | Why::NotModelled(s) => why.push(Span::styled(s, dim)),
        Why::Measured { line, hint, .. } => {
            why.push(Span::styled(
                line,
                Style::default().add_modifier(Modifier::BOLD),
            ));
            if let Some(h) = hint {
                why.push(Span::styled(" ⚠ below half its bound; look at: ", warn()));
                why.push(Span::raw(h));
            }
        }
    }
    let why_area = Rect {
        height: area.height.min(DETAIL_HEIGHT - 1),
        ..area
    };
    Paragraph::new(Line::from(why))
        .wrap(Wrap { trim: true })
        .render(why_area, buf);
    if area.height < DETAIL_HEIGHT {
        return;
    }
    let ctx_area = Rect {
        y: area.y + DETAIL_HEIGHT - 1,
        height: 1,
        ..area
    };
    let mut line = vec![Span::styled("where ", dim)];
    match &app.context {
        Some(ctx) => {
            for w in &ctx.warnings {
                line.push(Span::styled(format!("⚠ {} │ ", shown(w)), warn()));
            }
            line.push(Span::raw(ctx.storage_summary()));
            if let Some((_, Some(doubt))) = &app.profile {
                line.push(Span::styled(format!(" │ ⚠ {}", shown(doubt)), warn()));
            }
        }
        None => line.push(Span::styled("context not collected", dim)),
    }
    Paragraph::new(Line::from(line)).render(ctx_area, buf);
}
