//! The latency histogram of the current setting: percentiles, then one bar per log-spaced
//! bucket, merged from the interval histograms (never rebuilt from samples).
//!
//! The buckets cover the range that holds the central 99.9% of operations (p0.05 to p99.95)
//! at one bucket per octave at least, and as fine as the room allows (two, four, eight per
//! octave, [`core_buckets`]); what lies below and above that range gets a bucket each, so no
//! operation is left out and an outlier does not spread the scale. Where the panel is too short
//! for one row per octave (80×24, with a wide range), the buckets stand as columns across its
//! width instead of rows ([`draw_columns`]), so the resolution never drops below an octave (a
//! histogram of 2 buckets, 0.51 µs–262 µs and 262 µs–134 ms, said nothing). Counts are drawn
//! linearly or, with `l`, on a log scale: linearly a bucket of 2 and an empty one look alike
//! next to one of 5619; on the log scale both the tail and the body are visible. The buckets
//! that hold the p50 and the p99 are marked.
//!
//! Two histograms (an open loop's service and response times, a mix's reads and writes) sit
//! side by side when each half has room for readable bars, and are stacked one above the other
//! when the panel is narrow but tall. A narrow histogram labels each bucket by its upper edge
//! only, then drops the counts, so the bars and the marks keep their room.

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

/// The range holding the central 99.9% of `h`'s operations (p0.05 to p99.95), ns.
pub fn core_range(h: &hdrhistogram::Histogram<u64>) -> (u64, u64) {
    let lo = h.lowest_equivalent(h.value_at_quantile(0.0005)).max(1);
    let hi = h.highest_equivalent(h.value_at_quantile(0.9995)).max(lo);
    (lo, hi)
}

/// Buckets of `h` with `steps` per octave over [`core_range`] (from the power of two at or
/// below its start), then one bucket below it and one above it when they hold operations: every
/// operation is in one, and the range that holds 99.9% has `steps` buckets per octave.
pub fn core_buckets(h: &hdrhistogram::Histogram<u64>, steps: u32) -> Vec<LogBucket> {
    if h.is_empty() {
        return Vec::new();
    }
    let (lo, hi) = core_range(h);
    let start = 1u64 << (63 - lo.leading_zeros());
    let mut out = Vec::new();
    if h.min() < start {
        out.push(LogBucket {
            lo_ns: h.min(),
            hi_ns: start,
            count: h.count_between(0, start - 1),
        });
    }
    let (mut edge, mut i) = (start, 1u32);
    while edge <= hi {
        let next =
            ((start as f64 * 2f64.powf(i as f64 / steps as f64)).round() as u64).max(edge + 1);
        out.push(LogBucket {
            lo_ns: edge,
            hi_ns: next,
            count: h.count_between(edge, next - 1),
        });
        edge = next;
        i += 1;
    }
    if h.max() >= edge {
        out.push(LogBucket {
            lo_ns: edge,
            hi_ns: h.max() + 1,
            count: h.count_between(edge, u64::MAX),
        });
    }
    // The tail buckets are there for their operations, and an empty bucket at either end says
    // nothing (the range's power of two may start below its first operation).
    let first = out.iter().position(|b| b.count > 0).unwrap_or(0);
    let last = out.iter().rposition(|b| b.count > 0).unwrap_or(0);
    out[first..=last.max(first)].to_vec()
}

/// The finest [`core_buckets`] (8, 4, 2 or 1 per octave) that fit in `rows`; None when even
/// one per octave does not (then the buckets go across the width, [`draw_columns`]).
pub fn buckets_in_rows(h: &hdrhistogram::Histogram<u64>, rows: usize) -> Option<Vec<LogBucket>> {
    [8, 4, 2, 1]
        .into_iter()
        .map(|steps| core_buckets(h, steps))
        .find(|b| b.len() <= rows.max(1))
}

/// Rows the latency panel wants for the live segment's histogram(s): two per octave over the
/// range that holds 99.9% of the operations, the tails, the percentiles and the borders (at
/// least [`WANT_MIN_ROWS`], at most [`WANT_MAX_ROWS`]); two histograms stacked want twice.
pub fn rows_wanted(app: &App, width: u16) -> u16 {
    rows_for(app, width, 2)
}

/// Rows the latency panel can use at most: [`rows_wanted`] at eight buckets per octave.
pub fn rows_usable(app: &App, width: u16) -> u16 {
    rows_for(app, width, 8)
}

/// Rows for the live segment's histogram(s) at `steps` buckets per octave.
fn rows_for(app: &App, width: u16, steps: u32) -> u16 {
    let one = |h: &hdrhistogram::Histogram<u64>, heading: usize| {
        core_buckets(h, steps).len() + 2 + heading
    };
    let Some(seg) = app.live.as_ref().filter(|s| s.agg.ops > 0) else {
        return WANT_MIN_ROWS;
    };
    let two: Option<[(&hdrhistogram::Histogram<u64>, usize); 2]> =
        match (super::mix::live_directions(seg), &seg.agg.response) {
            (Some([(_, r), (_, w)]), _) => Some([(&r.latency, 1), (&w.latency, 1)]),
            (None, Some(resp)) => Some([(&seg.agg.latency, 1), (resp, 1)]),
            _ => None,
        };
    let inner = match two {
        None => one(&seg.agg.latency, 0),
        Some([(a, ha), (b, hb)]) => {
            let (x, y) = (one(a, ha), one(b, hb));
            let half_w = (width.saturating_sub(2) / 2).saturating_sub(1) as usize;
            if half_w < FULL_FIXED_W + MIN_BAR_W {
                x + y
            } else {
                x.max(y)
            }
        }
    };
    ((inner + 2) as u16).clamp(WANT_MIN_ROWS, WANT_MAX_ROWS)
}

/// Least rows [`rows_wanted`] asks for.
pub const WANT_MIN_ROWS: u16 = 6;
/// Most rows [`rows_wanted`] asks for.
pub const WANT_MAX_ROWS: u16 = 40;

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
    let title = if app.view.latency_log {
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
        let rh = super::mix::heading(app.view.units_mb, rn, r, secs);
        let wh = super::mix::heading(app.view.units_mb, wn, w, secs);
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
    let Some(buckets) = buckets_in_rows(h, rows) else {
        draw_columns(app, h, label, inner, buf);
        return;
    };
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
        let len = bar_len(b.count, most, bar_w, app.view.latency_log);
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

/// The histogram with its buckets as columns across `inner` (for a panel too short for a row
/// per octave): a heading line (`label` and the percentiles), the bars standing up, a line of
/// bucket bounds under them; the buckets holding the p50 and the p99 drawn in their colours
/// (cyan and magenta, as the chart's lines) and named under their columns.
pub fn draw_columns(
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
    let head = |with_label: bool, with_p90: bool| {
        let mut v = Vec::new();
        if let (true, Some(l)) = (with_label, label) {
            v.push(Span::styled(
                format!("{l} "),
                Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            ));
        }
        v.extend(kv("p50 ", s.p50_us));
        if with_p90 {
            v.extend(kv(" p90 ", s.p90_us));
        }
        v.extend(kv(" p99 ", s.p99_us));
        v.extend(kv(" p99.9 ", s.p999_us));
        v.extend(kv(" max ", s.max_us));
        v
    };
    let w = inner.width as usize;
    let spans_w = |v: &[Span]| v.iter().map(|s| s.content.chars().count()).sum::<usize>();
    // Two histograms side by side: a heading that does not fit beside the figures gets a row
    // of its own rather than be dropped (it says which half is which).
    let inner = match label {
        Some(l) if spans_w(&head(true, false)) > w && inner.height > 3 => {
            Paragraph::new(Line::styled(
                l.to_string(),
                Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            ))
            .render(Rect { height: 1, ..inner }, buf);
            Rect {
                y: inner.y + 1,
                height: inner.height - 1,
                ..inner
            }
        }
        _ => inner,
    };
    let line = super::first_fitting(
        vec![
            head(true, true),
            head(true, false),
            head(false, true),
            head(false, false),
        ],
        w,
    );
    Paragraph::new(line).render(Rect { height: 1, ..inner }, buf);
    let bar_rows = inner.height.saturating_sub(2) as usize;
    if bar_rows == 0 || w < 4 {
        return;
    }
    // The finest buckets whose columns are at least 2 wide (1 per octave at least; wider
    // still only when even that does not fit, which a 1 ns-100 s range at 80 columns does).
    let buckets = [8, 4, 2, 1]
        .into_iter()
        .map(|steps| core_buckets(h, steps))
        .find(|b| b.len() * 2 <= w)
        .unwrap_or_else(|| fitting_buckets(h, w / 2));
    let n = buckets.len().max(1);
    let col_w = (w / n).max(1);
    let most = buckets.iter().map(|b| b.count).max().unwrap_or(1).max(1);
    let p50_ns = h.median_equivalent(h.value_at_quantile(0.50));
    let p99_ns = h.median_equivalent(h.value_at_quantile(0.99));
    let top = inner.y + 1;
    let label_y = inner.y + 1 + bar_rows as u16;
    // The p50 and p99 under their buckets (the percentiles line has their values); the
    // bounds under the other columns where they fit without touching a mark or each other.
    let mut marks: Vec<(u16, &str)> = Vec::new();
    for (k, b) in buckets.iter().enumerate() {
        let x = inner.x + (k * col_w) as u16;
        let holds = |v: u64| b.lo_ns <= v && v < b.hi_ns;
        let color = if holds(p99_ns) {
            Color::Magenta
        } else if holds(p50_ns) {
            Color::Cyan
        } else {
            Color::Blue
        };
        let len = bar_len(b.count, most, bar_rows * 8, app.view.latency_log);
        let bar_w = col_w.saturating_sub(1).max(1);
        let rows = super::device::spark_rows(&[len as f64], (bar_rows * 8) as f64, bar_rows);
        for (r, row) in rows.iter().enumerate() {
            let cell = row.chars().next().unwrap_or(' ').to_string().repeat(bar_w);
            buf.set_stringn(x, top + r as u16, &cell, bar_w, Style::default().fg(color));
        }
        let mark = match (holds(p50_ns), holds(p99_ns)) {
            (true, true) => "p50 p99",
            (false, true) => "p99",
            (true, false) => "p50",
            _ => continue,
        };
        // A mark that would run into the previous one starts after it.
        let x = marks
            .last()
            .map_or(x, |(px, pm)| x.max(px + pm.chars().count() as u16 + 1));
        marks.push((x, mark));
    }
    let taken = |x: u16, w: u16| {
        marks
            .iter()
            .any(|(mx, m)| x < mx + m.chars().count() as u16 + 1 && *mx < x + w + 1)
    };
    let mut next_label_x = inner.x;
    for (k, b) in buckets.iter().enumerate() {
        let x = inner.x + (k * col_w) as u16;
        let text = super::fmt_ns(b.lo_ns);
        let w = text.chars().count() as u16;
        if x >= next_label_x && x + w <= inner.right() && !taken(x, w) {
            buf.set_stringn(x, label_y, &text, w as usize, dim);
            next_label_x = x + w + 1;
        }
    }
    for (x, mark) in marks.into_iter().filter(|(x, _)| *x < inner.right()) {
        let room = (inner.right() - x) as usize;
        buf.set_stringn(x, label_y, mark, room, Style::default().fg(Color::Yellow));
    }
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
        let coarse = buckets_in_rows(&h, 3).unwrap();
        let fine = buckets_in_rows(&h, 40).unwrap();
        // 3 rows: one per octave (and the tail); 40: eight per octave.
        assert!(coarse.len() <= 3 && fine.len() > coarse.len(), "{coarse:?}");
        assert_eq!(fine, core_buckets(&h, 8), "{fine:?}");
        for b in [&coarse, &fine] {
            assert_eq!(b.iter().map(|x| x.count).sum::<u64>(), 5721);
            assert!(b.windows(2).all(|w| w[0].hi_ns == w[1].lo_ns));
        }
    }

    #[test]
    fn the_range_of_99_9_percent_gets_a_bucket_per_octave_at_least_and_outliers_one_each() {
        // 0.5 µs to 260 µs for nearly all, and one at 134 ms: not two buckets 0.51-262 µs and
        // 262 µs-134 ms.
        let mut values = vec![(134_000_000, 1)];
        for k in 0..10u64 {
            values.push((500 << k, 2_000));
        }
        let h = hist(&values);
        let b = core_buckets(&h, 1);
        let (lo, hi) = core_range(&h);
        let octaves = ((hi as f64 / lo as f64).log2()).ceil() as usize;
        assert!(
            b.len() > octaves,
            "{} buckets for {octaves} octaves: {b:?}",
            b.len()
        );
        assert_eq!(
            b.iter().map(|x| x.count).sum::<u64>(),
            20_001,
            "every operation counted"
        );
        let last = b.last().unwrap();
        assert!(
            last.count == 1 && last.hi_ns > 134_000_000,
            "the outlier alone: {last:?}"
        );
        assert!(
            buckets_in_rows(&h, 4).is_none(),
            "too short for rows: columns then"
        );
        let fine = buckets_in_rows(&h, 40).expect("40 rows hold two per octave");
        assert!(fine.len() >= 2 * octaves, "{fine:?}");
    }

    #[test]
    fn the_log_scale_shows_a_bucket_of_2_beside_one_of_5619() {
        assert_eq!(bar_len(2, 5619, 40, false), 1);
        assert!(bar_len(2, 5619, 40, true) >= 5);
        assert_eq!(bar_len(5619, 5619, 40, true), 40);
        assert_eq!(bar_len(0, 5619, 40, true), 0);
    }
}
