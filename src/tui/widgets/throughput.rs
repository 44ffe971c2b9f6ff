//! Live throughput: current, mean and peak, IOPS, and a sparkline of up to the last minute
//! (across setting changes so the effect of a key is visible as a step).
//!
//! The history holds one point per 100 ms. A panel narrower than the history bins it (each bar
//! the mean of a few points) so the sparkline still covers the minute; the title states the window
//! the bars cover and the time per bar, and a left gutter gives the y scale (the top bar's value
//! and 0), so "last minute" is never claimed for the 4 s an 80-column panel used to show.

use super::{fmt_mib_s, fmt_rate, frame};
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline, Widget};

/// Width of the sparkline's y-scale gutter.
pub const GUTTER: u16 = 7;

/// The history binned to at most `bars` bars: `(values, points per bar)`. The newest points
/// always end the last bar; an incomplete oldest bin is dropped rather than drawn low.
pub fn binned(history: &[f64], bars: usize) -> (Vec<f64>, usize) {
    let bars = bars.max(1);
    let per = history.len().div_ceil(bars).max(1);
    let whole = history.len() / per * per;
    let start = history.len() - whole;
    let v = history[start..]
        .chunks(per)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    (v, per)
}

/// `last 60 s, 0.8 s per bar` for `n` bars of `per` 100 ms points.
pub fn window_title(n: usize, per: usize) -> String {
    let secs = (n * per) as f64 * 0.1;
    let s = |v: f64| {
        if v >= 10.0 || v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    };
    format!("last {} s, {} s per bar", s(secs), s(per as f64 * 0.1))
}

/// Draws the throughput panel.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let history: Vec<f64> = app.history.iter().map(|v| app.in_unit(*v)).collect();
    let bars = area.width.saturating_sub(2 + GUTTER) as usize;
    let (visible, per) = binned(&history, bars);
    let title = format!(
        " throughput {}, {} ",
        app.unit(),
        window_title(visible.len(), per)
    );
    let block = frame(&title);
    let inner = block.inner(area);
    block.render(area, buf);
    let [figures, spark_row] =
        Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).areas(inner);
    let [gutter, spark] =
        Layout::horizontal([Constraint::Length(GUTTER), Constraint::Min(0)]).areas(spark_row);
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
            let u = |v: f64| fmt_mib_s(app.in_unit(v));
            vec![
                Line::from(vec![
                    Span::styled("now ", dim),
                    Span::styled(format!("{} {}", u(now), app.unit()), big),
                    Span::styled("  mean ", dim),
                    Span::styled(u(seg.mean_mib_s()), bold),
                    Span::styled("  peak ", dim),
                    Span::styled(u(seg.peak_mib_s.max(now)), bold),
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
    let mut lines = lines;
    while lines.len() < 2 {
        lines.push(Line::raw(""));
    }
    lines.push(super::why::short_line(app));
    Paragraph::new(lines).render(figures, buf);
    // Scaled to the visible window, so a slow setting is not flattened by a fast one that has
    // already scrolled out.
    let peak = visible.iter().copied().fold(0.0f64, f64::max);
    if gutter.height >= 1 && !visible.is_empty() {
        let mut scale = vec![Line::styled(format!("{:>6}┤", fmt_mib_s(peak)), dim)];
        for _ in 2..gutter.height {
            scale.push(Line::styled("      │", dim));
        }
        if gutter.height >= 2 {
            scale.push(Line::styled("     0┤", dim));
        }
        Paragraph::new(scale).render(gutter, buf);
    }
    let data: Vec<u64> = visible.iter().map(|v| (v * 10.0).round() as u64).collect();
    Sparkline::default()
        .data(data)
        .max(((peak * 10.0).ceil() as u64).max(1))
        .style(Style::default().fg(Color::Green))
        .render(spark, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minute_of_history_is_binned_to_the_width_and_titled_with_its_window() {
        let h: Vec<f64> = (0..600).map(|i| i as f64).collect();
        let (v, per) = binned(&h, 71);
        assert_eq!((v.len(), per), (66, 9));
        assert_eq!(window_title(v.len(), per), "last 59 s, 0.9 s per bar");
        let (v, per) = binned(&h[..40], 71);
        assert_eq!((v.len(), per), (40, 1));
        assert_eq!(window_title(v.len(), per), "last 4 s, 0.1 s per bar");
        assert_eq!(*v.last().unwrap(), 39.0);
    }
}
