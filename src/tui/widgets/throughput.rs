//! Live throughput: current, mean and peak MiB/s, IOPS, and a sparkline of the last minute
//! (one bar per 100 ms, across setting changes so the effect of a key is visible as a step).

use super::{fmt_mib_s, fmt_rate, frame};
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline, Widget};

/// Draws the throughput panel.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let block = frame(" throughput MiB/s (last minute) ");
    let inner = block.inner(area);
    block.render(area, buf);
    let [figures, spark] =
        Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(inner);
    let dim = Style::default().fg(Color::DarkGray);
    let big = Style::default()
        .fg(Color::Green)
        .add_modifier(Modifier::BOLD);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let lines = match &app.live {
        Some(seg) if seg.agg.ops > 0 => {
            let now = app
                .history
                .back()
                .copied()
                .unwrap_or_else(|| seg.mean_mib_s());
            vec![
                Line::from(vec![
                    Span::styled("now ", dim),
                    Span::styled(format!("{} MiB/s", fmt_mib_s(now)), big),
                    Span::styled("  mean ", dim),
                    Span::styled(fmt_mib_s(seg.mean_mib_s()), bold),
                    Span::styled("  peak ", dim),
                    Span::styled(fmt_mib_s(seg.peak_mib_s.max(now)), bold),
                ]),
                Line::from(vec![
                    Span::styled("IOPS ", dim),
                    Span::styled(fmt_rate(seg.iops()), bold),
                    Span::styled(
                        format!(
                            "  {:.1} s, {} ops",
                            seg.seconds(),
                            fmt_rate(seg.agg.ops as f64)
                        ),
                        dim,
                    ),
                ]),
            ]
        }
        Some(_) if !app.paused => vec![Line::styled("starting…", dim)],
        _ if app.paused => vec![Line::styled("paused: space resumes", dim)],
        _ => vec![Line::styled("stopped: change a setting to start", dim)],
    };
    Paragraph::new(lines).render(figures, buf);
    let width = spark.width as usize;
    let skip = app.history.len().saturating_sub(width);
    // Scaled to the visible window, so a slow setting is not flattened by a fast one that has
    // already scrolled out.
    let visible: Vec<f64> = app.history.iter().skip(skip).copied().collect();
    let peak = visible.iter().copied().fold(0.0f64, f64::max);
    let data: Vec<u64> = visible.iter().map(|v| (v * 10.0).round() as u64).collect();
    Sparkline::default()
        .data(data)
        .max(((peak * 10.0).ceil() as u64).max(1))
        .style(Style::default().fg(Color::Green))
        .render(spark, buf);
}
