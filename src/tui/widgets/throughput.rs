//! Live throughput: current, mean and peak, IOPS, and the chart of the last minute, 10
//! minutes or hour (`v`), across setting changes so the effect of a key is visible as a step.
//!
//! The history holds one point per 100 ms, 1 s or 10 s by span (see `tui::history`). A panel
//! narrower than the points bins them (each bar the mean of a few points) so the chart still
//! covers its span; the title states the window the bars cover and the time per bar. The bars
//! stand on an auto-scaled axis with round ticks and a dotted grid line at each (zero only when
//! the data comes near it, see [`super::chart::y_axis`]), so a change between two high levels
//! is a step, not a faint dip.
//!
//! Where a setting changed, a `▼` on a row of its own above the bars marks the bar its first
//! point falls in (with its settings when the row is free there), and `┊` runs down the empty
//! cells below it, so a step is tied to the key that made it. From 5 spare rows the latency
//! p50 and p99 over time are drawn under the bars on a log axis (a column's highest p99 and
//! mean p50), as oha does; the figures' second line names their colours with the newest
//! values. The last row is the time axis, ending in `now`.

use super::{fmt_mib_s, fmt_rate, frame};
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// Width of the sparkline's y-scale gutter.
pub const GUTTER: u16 = 7;

/// The history binned to exactly `bars` bars (fewer only while there are fewer points than
/// bars): bar `j` is the mean of points `j·n/bars .. (j+1)·n/bars`, so a minute of history fills
/// the whole width instead of the whole multiple of points that fits (which left up to 45% of a
/// wide panel blank). Returns the values and the points per bar (fractional).
pub fn binned(history: &[f64], bars: usize) -> (Vec<f64>, f64) {
    let bars = bars.max(1);
    let n = history.len();
    if n <= bars {
        return (history.to_vec(), 1.0);
    }
    let v = (0..bars)
        .map(|j| {
            let (lo, hi) = (j * n / bars, ((j + 1) * n / bars).max(j * n / bars + 1));
            let c = &history[lo..hi];
            c.iter().sum::<f64>() / c.len() as f64
        })
        .collect();
    (v, n as f64 / bars as f64)
}

/// `last 60 s, 0.85 s per bar` for `n` bars of `per` points of `point_s` seconds; from two
/// minutes on the window is said in minutes (`last 10 min, 1 s per bar`).
pub fn window_title(n: usize, per: f64, point_s: f64) -> String {
    let secs = n as f64 * per * point_s;
    let s = |v: f64| {
        if v >= 10.0 || (v - v.round()).abs() < 0.005 {
            format!("{v:.0}")
        } else if v >= 1.0 {
            format!("{v:.1}")
        } else {
            let t = format!("{v:.2}");
            t.trim_end_matches('0').to_string()
        }
    };
    let window = if secs >= 120.0 {
        format!("{} min", s(secs / 60.0))
    } else {
        format!("{} s", s(secs))
    };
    format!("last {window}, {} s per bar", s(per * point_s))
}

/// `-45s`, `-9.5m`, `-58m`: a time before now on the axis.
fn ago_text(ago: f64) -> String {
    if ago >= 120.0 {
        let m = ago / 60.0;
        if m >= 10.0 {
            format!("-{m:.0}m")
        } else {
            format!("-{m:.1}m")
        }
    } else if ago >= 10.0 {
        format!("-{ago:.0}s")
    } else {
        format!("-{ago:.1}s")
    }
}

/// A time axis under `bars` bars covering `secs` seconds: `┴` ticks about every 12 columns,
/// labelled with the time before now (`-45s`, `-9.5m`), ending in `now`.
pub fn time_axis(bars: usize, secs: f64) -> String {
    let mut row: Vec<char> = vec!['─'; bars];
    if bars < 8 {
        return row.into_iter().collect();
    }
    let put = |row: &mut Vec<char>, at: usize, text: &str| {
        for (i, ch) in text.chars().enumerate() {
            if let Some(c) = row.get_mut(at + i) {
                *c = ch;
            }
        }
    };
    let now = "now";
    put(&mut row, bars - now.len(), now);
    let step = 12usize;
    let mut x = 0usize;
    while x + step + now.len() < bars {
        let ago = secs * (bars - x) as f64 / bars as f64;
        put(&mut row, x, &format!("┴{}", ago_text(ago)));
        x += step;
    }
    row.into_iter().collect()
}

/// Draws the throughput panel.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let points = app.history.points(app.view.span);
    let history: Vec<f64> = points.iter().map(|p| app.in_unit(p.mib_s)).collect();
    let bars = area.width.saturating_sub(2 + GUTTER) as usize;
    let (visible, per) = binned(&history, bars);
    let window = window_title(visible.len(), per, app.view.span.point_s());
    let short_window = window.replace(" s per bar", " s/bar");
    let next = format!("v: {}", app.view.span.next().label());
    let room = area.width.saturating_sub(2) as usize;
    let title = [
        format!(" throughput {}, {window} ({next}) ", app.unit()),
        format!(" throughput {}, {window} ", app.unit()),
        format!(" throughput {}, {short_window} ", app.unit()),
        format!(" {}, {short_window} ", app.unit()),
        format!(" {} ", app.unit()),
    ]
    .into_iter()
    .find(|t| t.chars().count() <= room)
    .unwrap_or_else(|| format!(" {} ", app.unit()));
    let block = frame(&title);
    let inner = block.inner(area);
    block.render(area, buf);
    let [figures, chart] =
        Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).areas(inner);
    // The chart's rows: the marks' row (from 4 rows; with 3, the marks are `▲` on the time
    // axis), the bars, the latency lines (from 5 spare rows) and the time axis.
    let rest = chart.height;
    let axis_h = u16::from(rest >= 3);
    let marks_h = u16::from(rest >= 4);
    let avail = rest - axis_h - marks_h;
    let lat_h = if avail >= 5 {
        (avail * 2 / 5).max(2)
    } else {
        0
    };
    let [marks_row, bars_row, lat_row, axis_row] = Layout::vertical([
        Constraint::Length(marks_h),
        Constraint::Min(0),
        Constraint::Length(lat_h),
        Constraint::Length(axis_h),
    ])
    .areas(chart);
    let split = |r: Rect| -> [Rect; 2] {
        Layout::horizontal([Constraint::Length(GUTTER), Constraint::Min(0)]).areas(r)
    };
    let dim = Style::default().fg(Color::DarkGray);
    let shows_latency = lat_h > 0 && !visible.is_empty();
    figures_lines(app, figures, shows_latency, buf);
    if visible.is_empty() {
        return;
    }
    let [bar_gutter, bar_area] = split(bars_row);
    let lo = visible.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = visible.iter().copied().fold(0.0f64, f64::max);
    // Scaled to the visible window, so a slow setting is not flattened by a fast one that has
    // already scrolled out.
    let axis = super::chart::y_axis(lo, hi, bar_area.height as usize);
    super::chart::draw_bars(&visible, &axis, bar_gutter, bar_area, buf);
    if shows_latency {
        let [lat_gutter, lat_area] = split(lat_row);
        let cols = super::chart::latency_columns(&points, bars);
        super::chart::draw_latency(&cols, lat_gutter, lat_area, buf);
    }
    if axis_h > 0 {
        let [_, axis_area] = split(axis_row);
        let secs = visible.len() as f64 * per * app.view.span.point_s();
        Paragraph::new(Line::styled(time_axis(visible.len(), secs), dim)).render(axis_area, buf);
    }
    let [_, marks_area] = split(marks_row);
    let n = history.len();
    let xs: Vec<(u16, &str)> = app
        .history
        .marks(app.view.span)
        .into_iter()
        .map(|(at, label)| (bar_of(at, n, visible.len()) as u16, label))
        .collect();
    let mut below = bar_area;
    if shows_latency {
        below.height += lat_row.height;
    }
    if marks_h > 0 {
        super::chart::draw_marks(&xs, marks_area, below, buf);
    } else if axis_h > 0 {
        let [_, axis_area] = split(axis_row);
        super::chart::draw_marks_on_axis(&xs, axis_area, below, buf);
    }
}

/// The panel's three lines of figures: now, mean and peak; IOPS, time and operations (with
/// the latency lines' legend when they are drawn); the why line (or a mix's or an open loop's
/// line).
fn figures_lines(app: &App, figures: Rect, legend: bool, buf: &mut Buffer) {
    let dim = Style::default().fg(Color::DarkGray);
    let big = Style::default()
        .fg(Color::Green)
        .add_modifier(Modifier::BOLD);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let lines = match &app.live {
        Some(seg) if seg.agg.ops > 0 => {
            // Mean, peak and spread over the same complete 100 ms bins after the warm-up, so
            // the mean never reads above the peak; before the first bin, the running totals.
            let f = seg.figures(false);
            let (mean, peak) = if f.bins > 0 {
                (f.mean_mib_s, Some(f.peak_mib_s))
            } else {
                (seg.mean_mib_s(), None)
            };
            let last = app.history.last();
            let now = last.map_or(mean, |p| p.mib_s);
            let u = |v: f64| fmt_mib_s(app.in_unit(v));
            let w = figures.width as usize;
            let first = |spread: bool| {
                let mut v = vec![
                    Span::styled("now ", dim),
                    Span::styled(format!("{} {}", u(now), app.unit()), big),
                    Span::styled("  mean ", dim),
                    Span::styled(u(mean), bold),
                ];
                if let (true, Some(p)) = (spread, f.spread_pct) {
                    v.push(Span::styled(
                        format!(" {}", super::results::spread_text(Some(p))),
                        dim,
                    ));
                }
                v.push(Span::styled("  peak ", dim));
                v.push(Span::styled(peak.map_or("-".into(), u), bold));
                v
            };
            let warm = match seg.warmup {
                crate::tui::segment::Warmup::None => String::new(),
                crate::tui::segment::Warmup::Running => "  warming up".into(),
                crate::tui::segment::Warmup::Over { end_ns } => {
                    format!("  wu {} left out", super::fmt_secs(end_ns as f64 / 1e9))
                }
            };
            let lat = |v: f64| {
                if v.is_finite() {
                    super::fmt_us(v)
                } else {
                    "-".into()
                }
            };
            let key = last.map(|p| {
                vec![
                    Span::styled("  now ", dim),
                    Span::styled("p50 ", Style::default().fg(Color::Cyan)),
                    Span::styled(lat(p.p50_us), bold),
                    Span::styled(" p99 ", Style::default().fg(Color::Magenta)),
                    Span::styled(lat(p.p99_us), bold),
                ]
            });
            let second = |warm: &str, with_key: bool| {
                let mut v = vec![
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
                    Span::styled(warm.to_string(), Style::default().fg(Color::Yellow)),
                ];
                if let (true, Some(k)) = (with_key && legend, &key) {
                    v.extend(k.iter().cloned());
                }
                v
            };
            let short_warm = warm.replace(" left out", "").replace("warming up", "wu");
            vec![
                super::first_fitting(vec![first(true), first(false)], w),
                super::first_fitting(
                    vec![
                        second(&warm, true),
                        second(&short_warm, true),
                        second("", true),
                        second(&warm, false),
                        second(&short_warm, false),
                        second("", false),
                    ],
                    w,
                ),
            ]
        }
        Some(_) if !app.runs.paused => vec![Line::styled("starting…", dim)],
        _ if app.runs.paused => vec![Line::styled("paused: space resumes", dim)],
        _ => vec![Line::styled("stopped: change a setting to start", dim)],
    };
    let mut lines = lines;
    while lines.len() < 2 {
        lines.push(Line::raw(""));
    }
    // A mix's last line is its share of reads done against the share asked (writes are not
    // modelled, so the why line has nothing to say of it; the detail rows keep it); an open
    // loop's is the rate asked, the rate done and the backlog, so a device that cannot keep up
    // is said, not left to be guessed from the response times.
    lines.push(
        app.live
            .as_ref()
            .and_then(|seg| {
                super::mix::done_line(seg)
                    .or_else(|| super::openloop::live_line(seg, figures.width as usize))
            })
            .unwrap_or_else(|| super::why::short_line(app, figures.width as usize)),
    );
    Paragraph::new(lines).render(figures, buf);
}

/// One row of util % (0–100): `▁` to `█`, a space for an idle device.
pub fn util_strip(util_pct: &[f64]) -> String {
    const LEVELS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    util_pct
        .iter()
        .map(|u| LEVELS[((u.clamp(0.0, 100.0) / 100.0 * 8.0).round() as usize).min(8)])
        .collect()
}

/// The bar (of `bars` over `n` points, binned as [`binned`]) that point `rel` falls in.
pub fn bar_of(rel: usize, n: usize, bars: usize) -> usize {
    if n <= bars {
        return rel;
    }
    (0..bars)
        .find(|j| (j + 1) * n / bars > rel)
        .unwrap_or(bars - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minute_of_history_is_binned_to_the_width_and_titled_with_its_window() {
        let h: Vec<f64> = (0..600).map(|i| i as f64).collect();
        let (v, per) = binned(&h, 71);
        assert_eq!(v.len(), 71, "the whole width is used");
        assert_eq!(window_title(v.len(), per, 0.1), "last 60 s, 0.85 s per bar");
        assert_eq!(window_title(600, 1.0, 1.0), "last 10 min, 1 s per bar");
        assert_eq!(window_title(100, 3.6, 10.0), "last 60 min, 36 s per bar");
        assert!(
            (v[70] - 595.5).abs() < 1.0,
            "the newest points end the last bar"
        );
        let (v, per) = binned(&h[..40], 71);
        assert_eq!((v.len(), per), (40, 1.0));
        assert_eq!(window_title(v.len(), per, 0.1), "last 4 s, 0.1 s per bar");
        assert_eq!(*v.last().unwrap(), 39.0);
    }

    #[test]
    fn a_point_falls_in_the_bar_that_holds_it_and_util_maps_to_eight_levels() {
        assert_eq!(bar_of(0, 600, 71), 0);
        assert_eq!(bar_of(599, 600, 71), 70);
        let (v, _) = binned(&(0..600).map(|i| i as f64).collect::<Vec<_>>(), 71);
        let j = bar_of(300, 600, 71);
        assert!(v[j] - 300.0 < 9.0 && 300.0 - v[j] < 9.0, "{}", v[j]);
        assert_eq!(bar_of(5, 40, 71), 5);
        assert_eq!(util_strip(&[0.0, 50.0, 100.0, 250.0]), " ▄██");
    }

    #[test]
    fn the_time_axis_ends_in_now_and_labels_earlier_ticks_in_seconds_before_it() {
        let a = time_axis(60, 60.0);
        assert_eq!(a.chars().count(), 60);
        assert!(a.ends_with("now"), "{a}");
        assert!(a.starts_with("┴-60s"), "{a}");
        assert!(a.contains("┴-48s"), "{a}");
        let h = time_axis(60, 3600.0);
        assert!(h.starts_with("┴-60m") && h.contains("┴-48m"), "{h}");
    }
}
