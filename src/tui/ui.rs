//! The screen: `impl Widget for &App`, a pure function of the state (tested with
//! `TestBackend`). Layout, top to bottom: a status line, settings beside throughput, latency
//! beside results, then the XOR and message line and the key footer. Everything essential fits
//! in 80×24; larger terminals give the sparkline, histogram and table more room.

use super::app::App;
use super::widgets::{help, latency, panel, results, throughput};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// The one-line key summary at the bottom.
pub const FOOTER: &str =
    "←→ block ↑↓ threads m method c cold d direct w write ␣ pause r reset s save ? q";

impl Widget for &App {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let [top, upper, lower, info, footer] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(8),
            Constraint::Min(6),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(area);
        status_line(self, top, buf);
        let [settings, tput] =
            Layout::horizontal([Constraint::Length(34), Constraint::Min(20)]).areas(upper);
        panel::render(self, settings, buf);
        throughput::render(self, tput, buf);
        let [lat, res] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(lower);
        latency::render(self, lat, buf);
        results::render(self, res, buf);
        info_line(self, info, buf);
        Paragraph::new(Line::styled(FOOTER, Style::default().fg(Color::DarkGray)))
            .render(footer, buf);
        if self.show_help {
            help::render(self, area, buf);
        }
    }
}

fn status_line(app: &App, area: Rect, buf: &mut Buffer) {
    let (state, color) = if app.paused {
        ("PAUSED", Color::Yellow)
    } else if app.live.as_ref().is_some_and(|l| l.meta.is_some()) {
        ("RUNNING", Color::Green)
    } else if app.live.is_some() {
        ("STARTING", Color::Yellow)
    } else {
        ("STOPPED", Color::Red)
    };
    let target = match app.settings.op {
        crate::config::Op::Read => app.file.display().to_string(),
        crate::config::Op::Write => format!("writing {}", app.scratch.display()),
    };
    Paragraph::new(Line::from(vec![
        Span::styled(
            " diskscope ",
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ),
        Span::styled(
            format!(" {state} "),
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        ),
        Span::raw(target),
    ]))
    .render(area, buf);
}

fn info_line(app: &App, area: Rect, buf: &mut Buffer) {
    let dim = Style::default().fg(Color::DarkGray);
    let mut spans = vec![Span::styled("XOR ", dim)];
    match &app.xor {
        Some(x) if x.mismatch.is_some() => spans.push(Span::styled(
            format!(
                "{} MISMATCH {} ",
                x.xor,
                x.mismatch.as_deref().unwrap_or_default()
            ),
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        )),
        Some(x) => spans.push(Span::styled(
            format!("{} ({}×) ", x.xor, x.agreeing),
            Style::default().add_modifier(Modifier::BOLD),
        )),
        None => spans.push(Span::styled("pending (shown when a run stops) ", dim)),
    }
    spans.push(Span::raw("│ "));
    spans.push(Span::raw(app.message.as_str()));
    Paragraph::new(Line::from(spans)).render(area, buf);
}
