//! Live throughput: current, mean and peak, IOPS, and a sparkline of up to the last minute
//! (across setting changes so the effect of a key is visible as a step).
//!
//! The history holds one point per 100 ms. A panel narrower than the history bins it (each bar
//! the mean of a few points) so the sparkline still covers the minute; the title states the window
//! the bars cover and the time per bar, and a left gutter gives the y scale (the top bar's value
//! and 0), so "last minute" is never claimed for the 4 s an 80-column panel used to show.
//!
//! Where a setting changed, a `▼` marks the bar its first point falls in (with its settings
//! when the top row is free there) and `┊` runs down the empty cells below it, so a step is
//! tied to the key that made it. From 4 chart rows on, with a device under the file, a one-row
//! strip under the bars shows the device's util % (0–100, fixed scale, aligned at now).

use super::{fmt_mib_s, fmt_rate, frame};
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline, Widget};

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

/// `last 60 s, 0.85 s per bar` for `n` bars of `per` 100 ms points.
pub fn window_title(n: usize, per: f64) -> String {
    let secs = n as f64 * per * 0.1;
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
    format!("last {} s, {} s per bar", s(secs), s(per * 0.1))
}

/// A time axis under `bars` bars covering `secs` seconds: `└` ticks about every 10 columns,
/// labelled with the seconds before now (`-45s`), ending in `now`.
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
        let label = format!(
            "┴-{}s",
            if ago >= 10.0 {
                format!("{ago:.0}")
            } else {
                format!("{ago:.1}")
            }
        );
        put(&mut row, x, &label);
        x += step;
    }
    row.into_iter().collect()
}

/// Draws the throughput panel.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let points = app.history.points(app.span);
    let history: Vec<f64> = points.iter().map(|p| app.in_unit(p.mib_s)).collect();
    let bars = area.width.saturating_sub(2 + GUTTER) as usize;
    let (visible, per) = binned(&history, bars);
    let window = window_title(visible.len(), per);
    let short_window = window.replace(" s per bar", " s/bar");
    let room = area.width.saturating_sub(2) as usize;
    let title = [
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
    let [figures, spark_row] =
        Layout::vertical([Constraint::Length(3), Constraint::Min(0)]).areas(inner);
    // From 3 chart rows on, the last is a time axis; from 4, with a device, a util strip.
    let axis_h = u16::from(spark_row.height >= 3);
    let util_h =
        u16::from(spark_row.height >= 4 && !app.device_history.is_empty() && !visible.is_empty());
    let [spark_row, util_row, axis_row] = Layout::vertical([
        Constraint::Min(0),
        Constraint::Length(util_h),
        Constraint::Length(axis_h),
    ])
    .areas(spark_row);
    if util_h > 0 {
        let [label, strip] =
            Layout::horizontal([Constraint::Length(GUTTER), Constraint::Min(0)]).areas(util_row);
        let util: Vec<f64> = app
            .device_history
            .points(app.span)
            .iter()
            .map(|v| v[0])
            .collect();
        let take = util.len().min(history.len().max(1));
        let (u, _) = binned(&util[util.len() - take..], visible.len());
        Paragraph::new(Line::styled(
            " util%┤",
            Style::default().fg(Color::DarkGray),
        ))
        .render(label, buf);
        Paragraph::new(Line::styled(
            util_strip(&u),
            Style::default().fg(Color::Cyan),
        ))
        .render(
            Rect {
                x: strip.x + (visible.len().saturating_sub(u.len())) as u16,
                ..strip
            },
            buf,
        );
    }
    let [gutter, spark] =
        Layout::horizontal([Constraint::Length(GUTTER), Constraint::Min(0)]).areas(spark_row);
    if axis_h > 0 && !visible.is_empty() {
        let [_, axis] =
            Layout::horizontal([Constraint::Length(GUTTER), Constraint::Min(0)]).areas(axis_row);
        let secs = visible.len() as f64 * per * 0.1;
        Paragraph::new(Line::styled(
            time_axis(visible.len(), secs),
            Style::default().fg(Color::DarkGray),
        ))
        .render(axis, buf);
    }
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
            let now = app.history.last().map_or(mean, |p| p.mib_s);
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
            let second = |warm: &str| {
                vec![
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
                ]
            };
            vec![
                super::first_fitting(vec![first(true), first(false)], w),
                super::first_fitting(
                    vec![
                        second(&warm),
                        second(&warm.replace(" left out", "").replace("warming up", "wu")),
                        second(""),
                    ],
                    w,
                ),
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
    draw_marks(app, history.len(), visible.len(), spark, buf);
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

/// The setting-change marks over the chart: `▼` on the top row (its settings after it when
/// those cells are free), `┊` down the empty cells below.
fn draw_marks(app: &App, n: usize, bars: usize, spark: Rect, buf: &mut Buffer) {
    if n == 0 || spark.height == 0 {
        return;
    }
    let style = Style::default().fg(Color::Yellow);
    let xs: Vec<(u16, &str)> = app
        .history
        .marks(app.span)
        .into_iter()
        .map(|(at, label)| (bar_of(at, n, bars) as u16, label))
        .filter(|(x, _)| *x < spark.width)
        .collect();
    for (k, (x, label)) in xs.iter().enumerate() {
        let col = spark.x + x;
        buf[(col, spark.y)].set_symbol("▼").set_style(style);
        for y in spark.y + 1..spark.bottom() {
            let cell = &mut buf[(col, y)];
            if cell.symbol() == " " {
                cell.set_symbol("┊").set_style(style);
            }
        }
        // The label, where the top row is free up to the next mark.
        let end = xs.get(k + 1).map_or(spark.width, |(nx, _)| *nx);
        let room = end.saturating_sub(x + 2) as usize;
        let len = label.chars().count();
        let free = (0..len as u16)
            .all(|i| x + 1 + i < spark.width && buf[(col + 1 + i, spark.y)].symbol() == " ");
        if len <= room && free {
            for (i, ch) in label.chars().enumerate() {
                buf[(col + 1 + i as u16, spark.y)]
                    .set_symbol(&ch.to_string())
                    .set_style(style);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minute_of_history_is_binned_to_the_width_and_titled_with_its_window() {
        let h: Vec<f64> = (0..600).map(|i| i as f64).collect();
        let (v, per) = binned(&h, 71);
        assert_eq!(v.len(), 71, "the whole width is used");
        assert_eq!(window_title(v.len(), per), "last 60 s, 0.85 s per bar");
        assert!(
            (v[70] - 595.5).abs() < 1.0,
            "the newest points end the last bar"
        );
        let (v, per) = binned(&h[..40], 71);
        assert_eq!((v.len(), per), (40, 1.0));
        assert_eq!(window_title(v.len(), per), "last 4 s, 0.1 s per bar");
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
    }
}
