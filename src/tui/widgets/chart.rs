//! The throughput panel's charts, drawn cell by cell so both share one time axis: the bars of
//! throughput on an auto-scaled axis (ticks on round values, a dotted grid line at each, zero
//! only when the data comes near it: 17.0 against 13.6 GB/s is a step, not a faint dip), the
//! setting-change marks on a row of their own above them, and the latency p50 and p99 over
//! time as lines on a log axis (as oha draws them), under the bars.

use super::fmt_us;
use crate::tui::history::Point;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Widget};

/// A y axis: the values at the bottom and the top of the chart, and its ticks (bottom first).
#[derive(Debug, Clone, PartialEq)]
pub struct YAxis {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
}

impl YAxis {
    /// The row (0 at the top, of `rows`) a tick of value `v` is labelled on.
    pub fn row_of(&self, v: f64, rows: usize) -> usize {
        let span = (self.hi - self.lo).max(f64::MIN_POSITIVE);
        (((self.hi - v) / span) * rows.saturating_sub(1) as f64)
            .round()
            .clamp(0.0, rows.saturating_sub(1) as f64) as usize
    }
}

/// The round step at or above `raw`: 1, 2, 2.5 or 5 × 10^k.
fn step_at_least(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag)
}

/// The axis for values from `min` to `max` on a chart `rows` tall: ticks on round values, as
/// many as the rows allow up to 6 (at least 3 from 3 rows on); starting at zero when the
/// values come within half their top of it, else just under their least, so a change between
/// two high levels fills the chart.
pub fn y_axis(min: f64, max: f64, rows: usize) -> YAxis {
    let want = (rows.div_ceil(2) + 1).clamp(2, 6).min(rows.max(2));
    let least = want.min(3);
    let max = if max.is_finite() { max.max(0.0) } else { 0.0 };
    let min = if min.is_finite() {
        min.clamp(0.0, max)
    } else {
        0.0
    };
    // A flat series (within 5%) stands on zero too: its level is the figure, not its ripple.
    let zero = max <= 0.0 || min <= 0.5 * max || max - min < 0.05 * max;
    if max <= 0.0 {
        return ticks_over(0.0, 1.0, want, least, rows.max(2), true);
    }
    let lo = if zero { 0.0 } else { min };
    ticks_over(lo, max, want, least, rows.max(2), zero)
}

/// Ticks from about `want` round steps over `lo..hi` (from 0 with `zero`), at least `least`
/// and at most `most` of them.
fn ticks_over(lo: f64, hi: f64, want: usize, least: usize, most: usize, zero: bool) -> YAxis {
    let mut step = step_at_least((hi - lo) / (want - 1) as f64);
    loop {
        let mut a = if zero {
            0.0
        } else {
            (lo / step).floor() * step
        };
        let mut b = (hi / step).ceil() * step;
        if b <= a {
            b = a + step;
        }
        let mut n = ((b - a) / step).round() as usize + 1;
        while n < least {
            if !zero && a - step >= 0.0 {
                a -= step;
            } else {
                b += step;
            }
            n += 1;
        }
        if n <= (want + 1).min(most) || n <= least {
            let ticks = (0..n).map(|i| a + i as f64 * step).collect();
            return YAxis {
                lo: a,
                hi: b,
                ticks,
            };
        }
        step = step_at_least(step * 1.01);
    }
}

/// A throughput tick's label: whole numbers as they are (`0`, `2500`, `17000`), others as
/// the figures' ticks write them (`12.5`, `1.25M`).
pub fn tick_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e6 {
        format!("{v:.0}")
    } else {
        crate::export::axis::fmt_tick(v)
    }
}

/// Eighths of a cell a bar of `v` fills on a chart of `rows` rows over `axis` (a value above
/// the bottom shows at least one eighth).
pub fn bar_eighths(v: f64, axis: &YAxis, rows: usize) -> usize {
    let span = (axis.hi - axis.lo).max(f64::MIN_POSITIVE);
    let full = rows * 8;
    let e = ((v - axis.lo) / span * full as f64).round();
    if e.is_nan() || e <= 0.0 {
        return usize::from(v > axis.lo && v > 0.0);
    }
    (e as usize).clamp(1, full)
}

const LEVELS: [&str; 9] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// Draws the throughput bars of `values` in `area` (one column each, from its left) over
/// `axis`, with the gutter's tick labels in `gutter` and a dotted line at each tick in the
/// cells the bars leave empty.
pub fn draw_bars(values: &[f64], axis: &YAxis, gutter: Rect, area: Rect, buf: &mut Buffer) {
    let rows = area.height as usize;
    if rows == 0 {
        return;
    }
    let dim = Style::default().fg(Color::DarkGray);
    let bar = Style::default().fg(Color::Green);
    for t in &axis.ticks {
        let r = axis.row_of(*t, rows) as u16;
        let y = area.y + r;
        let label = format!(
            "{:>w$}┤",
            tick_text(*t),
            w = gutter.width.saturating_sub(1) as usize
        );
        buf.set_stringn(gutter.x, y, &label, gutter.width as usize, dim);
        for x in area.left()..area.right() {
            buf[(x, y)].set_symbol("┄").set_style(dim);
        }
    }
    for y in area.top()..area.bottom() {
        let cell = &mut buf[(gutter.right().saturating_sub(1), y)];
        if cell.symbol() == " " {
            cell.set_symbol("│").set_style(dim);
        }
    }
    for (i, v) in values.iter().enumerate().take(area.width as usize) {
        let mut e = bar_eighths(*v, axis, rows);
        let x = area.x + i as u16;
        for r in (0..rows).rev() {
            if e == 0 {
                break;
            }
            let level = e.min(8);
            buf[(x, area.y + r as u16)]
                .set_symbol(LEVELS[level])
                .set_style(bar);
            e -= level;
        }
    }
}

/// The marks row: `▼` at each mark's column (`xs`, with its label where the row is free up to
/// the next mark), and `┊` down the cells of `bars` the bars left empty.
pub fn draw_marks(xs: &[(u16, &str)], row: Rect, bars: Rect, buf: &mut Buffer) {
    let style = Style::default().fg(Color::Yellow);
    for (k, (x, label)) in xs.iter().enumerate() {
        if *x >= row.width {
            continue;
        }
        let col = row.x + x;
        if row.height > 0 {
            buf[(col, row.y)].set_symbol("▼").set_style(style);
            let end = xs.get(k + 1).map_or(row.width, |(nx, _)| *nx);
            let room = end.saturating_sub(x + 2) as usize;
            if label.chars().count() <= room {
                buf.set_stringn(col + 1, row.y, label, room, style);
            }
        }
        for y in bars.top()..bars.bottom() {
            let cell = &mut buf[(col, y)];
            if matches!(cell.symbol(), " " | "┄") {
                cell.set_symbol("┊").set_style(style);
            }
        }
    }
}

/// The marks on a short chart: `▲` on the time axis row (`axis`) under each mark's column,
/// `┊` up the cells of `bars` the bars left empty.
pub fn draw_marks_on_axis(xs: &[(u16, &str)], axis: Rect, bars: Rect, buf: &mut Buffer) {
    let style = Style::default().fg(Color::Yellow);
    for (x, _) in xs.iter().filter(|(x, _)| *x < axis.width) {
        // The axis's labels win: a mark under one still shows as `┊` above.
        let cell = &mut buf[(axis.x + x, axis.y)];
        if matches!(cell.symbol(), "─" | "┴" | " ") {
            cell.set_symbol("▲").set_style(style);
        }
    }
    draw_marks(
        &xs.iter().map(|(x, _)| (*x, "")).collect::<Vec<_>>(),
        Rect { height: 0, ..axis },
        bars,
        buf,
    );
}

/// Per column of a chart `bars` wide over `points` (binned as the throughput bars are): the
/// highest p99 and the mean p50 of the points in it, µs (NaN where none had operations).
pub fn latency_columns(points: &[Point], bars: usize) -> Vec<(f64, f64)> {
    let n = points.len();
    let bars = bars.max(1);
    let cols = n.min(bars);
    (0..cols)
        .map(|j| {
            let (lo, hi) = if n <= bars {
                (j, j + 1)
            } else {
                (j * n / bars, ((j + 1) * n / bars).max(j * n / bars + 1))
            };
            let c = &points[lo..hi];
            let p99 = c
                .iter()
                .map(|p| p.p99_us)
                .filter(|v| v.is_finite())
                .fold(f64::NAN, f64::max);
            let p50s: Vec<f64> = c
                .iter()
                .map(|p| p.p50_us)
                .filter(|v| v.is_finite())
                .collect();
            let p50 = if p50s.is_empty() {
                f64::NAN
            } else {
                p50s.iter().sum::<f64>() / p50s.len() as f64
            };
            (p50, p99)
        })
        .collect()
}

/// The log axis of a latency chart for values from `min` to `max` µs: from the decade at or
/// below the least to the one at or above the most; ticks on the decades, with a 3× tick
/// between when only one decade is shown.
pub fn latency_axis(min: f64, max: f64) -> YAxis {
    let min = if min.is_finite() && min > 0.0 {
        min
    } else {
        1.0
    };
    let max = if max.is_finite() && max >= min {
        max
    } else {
        min
    };
    let lo = 10f64.powf(min.log10().floor());
    let mut hi = 10f64.powf(max.log10().ceil());
    if hi <= lo {
        hi = lo * 10.0;
    }
    let mut ticks: Vec<f64> = Vec::new();
    let mut t = lo;
    while t <= hi * 1.0001 {
        ticks.push(t);
        t *= 10.0;
    }
    if ticks.len() == 2 {
        ticks.insert(1, lo * 3.0);
    }
    YAxis { lo, hi, ticks }
}

/// Draws the latency p50 and p99 over time in `area` (one column each, as the bars above),
/// on a log axis with its labels in `gutter` (no grid: the lines are dots already).
pub fn draw_latency(columns: &[(f64, f64)], gutter: Rect, area: Rect, buf: &mut Buffer) {
    let rows = area.height as usize;
    if rows == 0 || area.width == 0 {
        return;
    }
    let finite = |v: &f64| v.is_finite() && *v > 0.0;
    let min = columns
        .iter()
        .flat_map(|(a, b)| [*a, *b])
        .filter(finite)
        .fold(f64::INFINITY, f64::min);
    let max = columns
        .iter()
        .flat_map(|(a, b)| [*a, *b])
        .filter(finite)
        .fold(0.0, f64::max);
    let dim = Style::default().fg(Color::DarkGray);
    if !min.is_finite() {
        buf.set_stringn(area.x, area.y, "no latencies yet", area.width as usize, dim);
        return;
    }
    let axis = latency_axis(min, max);
    let (llo, lhi) = (axis.lo.log10(), axis.hi.log10());
    // Log axis: rows by the logarithm.
    let log_axis = YAxis {
        lo: llo,
        hi: lhi,
        ticks: axis.ticks.iter().map(|t| t.log10()).collect(),
    };
    let mut used = Vec::new();
    for t in &axis.ticks {
        let r = log_axis.row_of(t.log10(), rows);
        if used.contains(&r) {
            continue;
        }
        used.push(r);
        let y = area.y + r as u16;
        let label = format!(
            "{:>w$}┤",
            fmt_us(*t),
            w = gutter.width.saturating_sub(1) as usize
        );
        buf.set_stringn(gutter.x, y, &label, gutter.width as usize, dim);
    }
    for y in area.top()..area.bottom() {
        let cell = &mut buf[(gutter.right().saturating_sub(1), y)];
        if cell.symbol() == " " {
            cell.set_symbol("│").set_style(dim);
        }
    }
    let line = |pick: fn(&(f64, f64)) -> f64| -> Vec<(f64, f64)> {
        columns
            .iter()
            .enumerate()
            .filter(|(_, c)| finite(&pick(c)))
            .map(|(i, c)| (i as f64 + 0.5, pick(c).log10()))
            .collect()
    };
    let (p50, p99) = (line(|c| c.0), line(|c| c.1));
    let width = area.width as f64;
    let datasets = vec![
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(Color::Cyan))
            .data(&p50),
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(Color::Magenta))
            .data(&p99),
    ];
    Chart::new(datasets)
        .x_axis(Axis::default().bounds([0.0, width]))
        .y_axis(Axis::default().bounds([llo, lhi]))
        .render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_axis_has_at_least_three_round_ticks_and_zero_only_when_the_data_comes_near_it() {
        let a = y_axis(13_600.0, 17_000.0, 7);
        assert!(a.lo > 10_000.0, "17.0 vs 13.6 GB/s fills the chart: {a:?}");
        assert!(a.ticks.len() >= 3 && a.ticks.len() <= 6, "{a:?}");
        assert!(a.lo <= 13_600.0 && a.hi >= 17_000.0);
        for t in &a.ticks {
            assert_eq!((t / 500.0).fract(), 0.0, "round: {a:?}");
        }
        let z = y_axis(100.0, 3000.0, 7);
        assert_eq!(z.lo, 0.0, "{z:?}");
        assert_eq!(y_axis(0.0, 0.0, 3).ticks.len(), 3);
        let flat = y_axis(4990.0, 5000.0, 5);
        assert!(flat.lo == 0.0 && flat.hi >= 5000.0, "{flat:?}");
        // Every tick on a row of its own.
        for rows in 3..20 {
            let a = y_axis(1234.0, 98_765.0, rows);
            let mut r: Vec<usize> = a.ticks.iter().map(|t| a.row_of(*t, rows)).collect();
            r.dedup();
            assert_eq!(r.len(), a.ticks.len(), "{rows} rows: {a:?}");
            assert!(a.ticks.len() >= 3, "{rows}: {a:?}");
        }
    }

    #[test]
    fn bars_fill_the_chart_from_the_axis_bottom() {
        let a = y_axis(13_600.0, 17_000.0, 4);
        assert_eq!(bar_eighths(a.hi, &a, 4), 32);
        assert_eq!(bar_eighths(a.lo, &a, 4), 0);
        let mid = bar_eighths((a.lo + a.hi) / 2.0, &a, 4);
        assert_eq!(mid, 16);
    }

    #[test]
    fn the_latency_axis_spans_whole_decades_with_a_middle_tick() {
        let a = latency_axis(180.0, 240.0);
        assert_eq!((a.lo, a.hi), (100.0, 1000.0));
        assert_eq!(a.ticks, vec![100.0, 300.0, 1000.0]);
        let b = latency_axis(50.0, 20_000.0);
        assert_eq!(b.ticks, vec![10.0, 100.0, 1000.0, 10_000.0, 100_000.0]);
        let cols = latency_columns(
            &[
                Point {
                    mib_s: 1.0,
                    p50_us: 10.0,
                    p99_us: 30.0,
                },
                Point {
                    mib_s: 1.0,
                    p50_us: 20.0,
                    p99_us: 90.0,
                },
            ],
            1,
        );
        assert_eq!(cols, vec![(15.0, 90.0)]);
    }
}
