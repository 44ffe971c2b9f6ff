//! The latency histogram of the current setting: percentiles, then one bar per log-spaced
//! bucket from [`log_buckets`], merged from the interval histograms (never rebuilt from
//! samples). The bucket base grows (2, 4, 8, 16, …) until the bars fit the panel's height.

use super::{fmt_ns, fmt_rate, fmt_us, frame};
use crate::measure::histogram::{log_buckets, LogBucket};
use crate::measure::LatencySummary;
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// Buckets of `h` in the smallest power-of-two base whose bars fit in `rows`.
pub fn fitting_buckets(h: &hdrhistogram::Histogram<u64>, rows: usize) -> Vec<LogBucket> {
    let mut base = 2;
    loop {
        let b = log_buckets(h, base);
        // Leading empty buckets carry no information.
        let first = b.iter().position(|x| x.count > 0).unwrap_or(0);
        let b = b[first..].to_vec();
        if b.len() <= rows.max(1) || base >= 1 << 20 {
            return b;
        }
        base *= 2;
    }
}

/// Draws the latency panel.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let block = frame(" latency per operation ");
    let inner = block.inner(area);
    block.render(area, buf);
    let dim = Style::default().fg(Color::DarkGray);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let Some(seg) = app.live.as_ref().filter(|s| s.agg.ops > 0) else {
        Paragraph::new(Line::styled("no operations yet", dim)).render(inner, buf);
        return;
    };
    let h = &seg.agg.latency;
    let s = LatencySummary::of(h);
    let kv = |k: &'static str, v: f64| vec![Span::styled(k, dim), Span::styled(fmt_us(v), bold)];
    let mut lines = vec![
        Line::from(
            [
                kv("p50 ", s.p50_us),
                kv(" p90 ", s.p90_us),
                kv(" p99 ", s.p99_us),
            ]
            .concat(),
        ),
        Line::from([kv("p99.9 ", s.p999_us), kv(" max ", s.max_us)].concat()),
    ];
    let rows = (inner.height as usize).saturating_sub(lines.len());
    let buckets = fitting_buckets(h, rows);
    let most = buckets.iter().map(|b| b.count).max().unwrap_or(1).max(1);
    let label_w = 14usize;
    let count_w = 7usize;
    let bar_w = (inner.width as usize)
        .saturating_sub(label_w + count_w + 1)
        .max(1);
    for b in buckets.iter().take(rows) {
        let len = ((b.count as f64 / most as f64) * bar_w as f64).round() as usize;
        let len = if b.count > 0 { len.max(1) } else { 0 };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{:>6}-{:<6} ", fmt_ns(b.lo_ns), fmt_ns(b.hi_ns)),
                dim,
            ),
            Span::styled("█".repeat(len), Style::default().fg(Color::Magenta)),
            Span::raw(" ".repeat(bar_w - len.min(bar_w) + 1)),
            Span::styled(format!("{:>count_w$}", fmt_rate(b.count as f64)), dim),
        ]));
    }
    Paragraph::new(lines).render(inner, buf);
}
