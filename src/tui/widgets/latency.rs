//! The latency histogram of the current setting: percentiles, then one bar per log-spaced
//! bucket, merged from the interval histograms (never rebuilt from samples).
//!
//! The buckets are as fine as the panel's height allows: eight, four or two per octave when
//! there is room ([`fine_buckets`]), one per octave, then wider (4×, 16×, …) when there is not,
//! so a tall panel shows the shape of the distribution instead of three bars. Counts are drawn
//! linearly or, with `l`, on a log scale: linearly a bucket of 2 and an empty one look alike
//! next to one of 5619; on the log scale both the tail and the body are visible. The buckets
//! that hold the p50 and the p99 are marked.
//!
//! Two histograms (an open loop's service and response times, a mix's reads and writes) sit
//! side by side when each half has room for readable bars, and are stacked one above the other
//! when the panel is narrow but tall (a 46-column panel split in two left 1-column bars, cut
//! counts and no p50/p99 marks). A narrow histogram labels each bucket by its upper edge only,
//! then drops the counts, so the bars and the marks keep their room.

use super::{fmt_rate, fmt_us, frame};
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

/// Buckets of `h` with `steps` per octave from the power of two below its minimum to its
/// maximum (edges rounded to whole ns and strictly increasing), empty ones at both ends left
/// out.
pub fn octave_buckets(h: &hdrhistogram::Histogram<u64>, steps: u32) -> Vec<LogBucket> {
    if h.is_empty() {
        return Vec::new();
    }
    let min = h.min().max(1);
    let start = 1u64 << (63 - min.leading_zeros());
    let top = h.max();
    let mut out = Vec::new();
    let mut lo = start;
    let mut i = 1u32;
    while lo <= top {
        let edge = (start as f64 * 2f64.powf(i as f64 / steps as f64)).round() as u64;
        let hi = edge.max(lo + 1);
        out.push(LogBucket {
            lo_ns: lo,
            hi_ns: hi,
            count: h.count_between(lo, hi - 1),
        });
        lo = hi;
        i += 1;
    }
    let first = out.iter().position(|b| b.count > 0).unwrap_or(0);
    let last = out.iter().rposition(|b| b.count > 0).unwrap_or(0);
    out[first..=last.max(first)].to_vec()
}

/// The finest buckets that fit in `rows`: 8, 4, 2 or 1 per octave, else [`fitting_buckets`].
pub fn fine_buckets(h: &hdrhistogram::Histogram<u64>, rows: usize) -> Vec<LogBucket> {
    for steps in [8, 4, 2, 1] {
        let b = octave_buckets(h, steps);
        if b.len() <= rows.max(1) {
            return b;
        }
    }
    fitting_buckets(h, rows)
}

/// A bar's length in `width` columns for `count` of `most`: linear, or log (`ln(1+count)`)
/// with `log`. A bucket with any count gets at least one column.
pub fn bar_len(count: u64, most: u64, width: usize, log: bool) -> usize {
    if count == 0 {
        return 0;
    }
    let share = if log {
        (count as f64).ln_1p() / (most.max(1) as f64).ln_1p()
    } else {
        count as f64 / most.max(1) as f64
    };
    ((share * width as f64).round() as usize).clamp(1, width)
}

/// Whether the live segment shows two histograms (an open loop, a mix): the screen then gives
/// the latency panel more width.
pub fn shows_two(app: &App) -> bool {
    app.live
        .as_ref()
        .filter(|s| s.agg.ops > 0)
        .is_some_and(|s| super::mix::live_directions(s).is_some() || s.agg.response.is_some())
}

/// Columns a bucket row needs besides its bar with the full `lo-hi` label.
const FULL_FIXED_W: usize = 14 + 7 + 8 + 1;
/// Least bar length that reads as a distribution; below it, labels shrink first.
const MIN_BAR_W: usize = 12;
/// Rows each of two stacked histograms needs at least: heading, two percentile lines and four
/// buckets.
const STACKED_MIN_ROWS: u16 = 7;

/// Where two histograms go in `inner`: side by side when each half has room for the full
/// labels and [`MIN_BAR_W`], else one above the other when the height allows
/// [`STACKED_MIN_ROWS`] each, else side by side anyway (narrow labels).
pub fn split_two(inner: Rect) -> [Rect; 2] {
    use ratatui::layout::{Constraint, Layout};
    let half_w = (inner.width / 2).saturating_sub(1) as usize;
    if half_w < FULL_FIXED_W + MIN_BAR_W && inner.height >= 2 * STACKED_MIN_ROWS {
        let [top, bottom] =
            Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(inner);
        return [top, bottom];
    }
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(inner);
    [
        Rect {
            width: left.width.saturating_sub(1),
            ..left
        },
        right,
    ]
}

/// Draws the latency panel.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let title = if app.latency_log {
        " latency per operation, log counts (l) "
    } else {
        " latency per operation (l: log counts) "
    };
    let title = if title.chars().count() + 2 > area.width as usize {
        " latency "
    } else {
        title
    };
    let block = frame(title);
    let inner = block.inner(area);
    block.render(area, buf);
    let dim = Style::default().fg(Color::DarkGray);
    let Some(seg) = app.live.as_ref().filter(|s| s.agg.ops > 0) else {
        Paragraph::new(Line::styled("no operations yet", dim)).render(inner, buf);
        return;
    };
    // A mix (`w`, `W`): the reads' histogram beside the writes', each headed by its own
    // throughput and IOPS (the whole would hide a slow direction behind a fast one).
    if let Some([(rn, r), (wn, w)]) = super::mix::live_directions(seg) {
        let [left, right] = split_two(inner);
        let secs = seg.seconds();
        let rh = super::mix::heading(app.units_mb, rn, r, secs);
        let wh = super::mix::heading(app.units_mb, wn, w, secs);
        draw(app, &r.latency, Some(rh.as_str()), left, buf);
        draw(app, &w.latency, Some(wh.as_str()), right, buf);
        return;
    }
    // An open-loop run (`R`): the service time (the call) beside the response time (from the
    // intended start), so queueing behind a slow device shows as the gap between the two.
    match &seg.agg.response {
        Some(response) => {
            let [left, right] = split_two(inner);
            draw(app, &seg.agg.latency, Some("service"), left, buf);
            draw(app, response, Some("response"), right, buf);
        }
        None => draw(app, &seg.agg.latency, None, inner, buf),
    }
}

/// One histogram: its percentiles (under `label` when there are two), then its buckets.
fn draw(
    app: &App,
    h: &hdrhistogram::Histogram<u64>,
    label: Option<&str>,
    inner: Rect,
    buf: &mut Buffer,
) {
    let dim = Style::default().fg(Color::DarkGray);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let s = LatencySummary::of(h);
    let kv = |k: &'static str, v: f64| vec![Span::styled(k, dim), Span::styled(fmt_us(v), bold)];
    let mut lines = Vec::new();
    if let Some(l) = label {
        lines.push(Line::styled(
            l.to_string(),
            Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        ));
    }
    // A half-width panel (service beside response) drops p90 rather than cut a figure.
    let w = inner.width as usize;
    lines.push(super::first_fitting(
        vec![
            [
                kv("p50 ", s.p50_us),
                kv(" p90 ", s.p90_us),
                kv(" p99 ", s.p99_us),
            ]
            .concat(),
            [kv("p50 ", s.p50_us), kv(" p99 ", s.p99_us)].concat(),
        ],
        w,
    ));
    lines.push(super::first_fitting(
        vec![
            [kv("p99.9 ", s.p999_us), kv(" max ", s.max_us)].concat(),
            kv("max ", s.max_us),
        ],
        w,
    ));
    let rows = (inner.height as usize).saturating_sub(lines.len());
    let buckets = fine_buckets(h, rows);
    let most = buckets.iter().map(|b| b.count).max().unwrap_or(1).max(1);
    // Narrow: each bucket by its upper edge (`<1.20ms`), then without counts, so the bars and
    // the p50/p99 marks keep their room and nothing is cut at the edge.
    let w = inner.width as usize;
    let (label_w, count_w) = if w >= FULL_FIXED_W + MIN_BAR_W {
        (14usize, 7usize)
    } else if w >= FULL_FIXED_W - 6 + 4 {
        (8, 7)
    } else {
        (8, 0)
    };
    let mark_w = 8usize;
    let bar_w = w.saturating_sub(label_w + count_w + mark_w + 1).max(1);
    let p50_ns = h.value_at_quantile(0.50);
    let p99_ns = h.value_at_quantile(0.99);
    let holds = |b: &LogBucket, v: u64| {
        let v = h.median_equivalent(v);
        b.lo_ns <= v && v < b.hi_ns
    };
    for b in buckets.iter().take(rows) {
        let len = bar_len(b.count, most, bar_w, app.latency_log);
        let mark = match (holds(b, p50_ns), holds(b, p99_ns)) {
            (true, true) => " p50 p99",
            (true, false) => " p50",
            (false, true) => " p99",
            _ => "",
        };
        let bar_style = if mark.is_empty() {
            Style::default().fg(Color::Magenta)
        } else {
            Style::default()
                .fg(Color::Magenta)
                .add_modifier(Modifier::BOLD)
        };
        let label = if label_w == 14 {
            format!(
                "{:>6}-{:<6} ",
                fmt_us(b.lo_ns as f64 / 1e3),
                fmt_us(b.hi_ns as f64 / 1e3)
            )
        } else {
            format!("<{:<6} ", fmt_us(b.hi_ns as f64 / 1e3))
        };
        let count = if count_w > 0 {
            format!("{:>count_w$}", fmt_rate(b.count as f64))
        } else {
            String::new()
        };
        lines.push(Line::from(vec![
            Span::styled(label, dim),
            Span::styled("█".repeat(len), bar_style),
            Span::raw(" ".repeat(bar_w - len.min(bar_w) + usize::from(count_w > 0))),
            Span::styled(count, dim),
            Span::styled(mark.to_string(), Style::default().fg(Color::Yellow)),
        ]));
    }
    Paragraph::new(lines).render(inner, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values: &[(u64, u64)]) -> hdrhistogram::Histogram<u64> {
        let mut h = crate::measure::new_latency_histogram();
        for (v, n) in values {
            h.record_n(*v, *n).unwrap();
        }
        h
    }

    #[test]
    fn taller_panels_get_finer_buckets_and_every_operation_is_in_one() {
        let h = hist(&[(3_000, 5619), (5_000, 100), (40_000, 2)]);
        let coarse = fine_buckets(&h, 5);
        let fine = fine_buckets(&h, 40);
        assert!(
            coarse.len() <= 5 && fine.len() > 2 * coarse.len(),
            "{fine:?}"
        );
        for b in [&coarse, &fine] {
            assert_eq!(b.iter().map(|x| x.count).sum::<u64>(), 5721);
            assert!(b.windows(2).all(|w| w[0].hi_ns == w[1].lo_ns));
        }
    }

    #[test]
    fn the_log_scale_shows_a_bucket_of_2_beside_one_of_5619() {
        assert_eq!(bar_len(2, 5619, 40, false), 1);
        assert!(bar_len(2, 5619, 40, true) >= 5);
        assert_eq!(bar_len(5619, 5619, 40, true), 40);
        assert_eq!(bar_len(0, 5619, 40, true), 0);
    }
}
