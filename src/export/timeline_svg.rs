//! The timeline figure of an experiment (`<name>-timeline.svg`): three panels on one time axis —
//! latency percentiles (p50 thin, p99 thick, p99.9 dashed; log scale), throughput (MiB/s) and
//! the device's util % — one colour per run (point and repetition), a level shift marked by a
//! vertical line. A [`Figure`] drawn by the one renderer, like every other figure.

use super::axis::{linear_ticks, log_ticks};
use super::figure::{Axis, Band, Color, Figure, Legend, Line, Panel, Rule, Ticks};
use crate::measure::timeline::IntervalRow;
use crate::measure::RunResult;

/// Width of the figure and height of each of its three plots, pixels.
pub const SIZE_PX: (u32, u32) = (1000, 220);

/// One run's line label: `4K t1 rep 2`.
fn run_label(r: &RunResult) -> String {
    let mut s = format!(
        "{} {} t{}",
        r.method,
        crate::size::format_size(r.block_size_bytes),
        r.threads
    );
    if r.queue_depth > 1 {
        s += &format!(" qd{}", r.queue_depth);
    }
    if let Some(rate) = r.rate_iops_asked {
        s += &format!(" @{rate:.0}/s");
    }
    s = format!("{s} rep {}", r.rep);
    // A fleet's row: which rank, and how far apart the ranks started (the time axis is the
    // fleet's clock, from the earliest rank's start).
    if let Some(rank) = &r.rank {
        s = format!("rank {} {s}", crate::text::shown(rank));
        if let Some(skew) = r.start_skew_us.flatten().filter(|v| *v > 0.0) {
            s += &format!(
                " (start skew {})",
                super::axis::fmt_us(skew, super::axis::UsStyle::Fixed)
            );
        }
    }
    s
}

/// The SVG of the runs' timelines, titled `title`; `None` when no run has a timeline row.
pub fn render(title: &str, runs: &[&RunResult]) -> anyhow::Result<Option<String>> {
    Ok(figure(title, runs).map(|f| f.to_svg()))
}

/// The figure of the runs' timelines; `None` when no run has a timeline row.
pub fn figure(title: &str, runs: &[&RunResult]) -> Option<Figure> {
    let runs: Vec<&RunResult> = runs
        .iter()
        .copied()
        .filter(|r| r.timeline.as_ref().is_some_and(|t| !t.rows.is_empty()))
        .collect();
    if runs.is_empty() {
        return None;
    }
    let timelines: Vec<_> = runs.iter().filter_map(|r| r.timeline.clone()).collect();
    let rows = || timelines.iter().flat_map(|t| t.rows.iter());
    let x1 = rows().map(|r| r.t_end_s).fold(0.0, f64::max).max(0.1);
    let (x_ticks, _) = linear_ticks(x1);
    let time = || {
        Axis::linear("seconds since the run started")
            .range(0.0, x1)
            .ticks(Ticks::At(
                x_ticks
                    .iter()
                    .copied()
                    .filter(|t| *t <= x1 + 1e-9)
                    .collect(),
            ))
    };
    let mid = |r: &IntervalRow| (r.t_start_s + r.t_end_s) / 2.0;
    let height = f64::from(SIZE_PX.1);

    // Latency, log scale.
    let lat = rows().filter(|r| r.ops > 0).flat_map(|r| {
        let resp = r.resp.map_or([f64::NAN; 2], |l| [l.p99_us, l.p999_us]);
        [r.lat_p50_us, r.lat_p99_us, r.lat_p999_us, resp[0], resp[1]]
    });
    let (lmin, lmax) = lat
        .filter(|v| *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let (lmin, lmax) = if lmin.is_finite() {
        (lmin, lmax)
    } else {
        (1.0, 10.0)
    };
    let ticks = log_ticks(lmin, lmax);
    let top = (lmax * 1.5).max(ticks[ticks.len() - 1]);
    let mut latency = Panel::new(
        time(),
        Axis::log("µs — log scale")
            .range(ticks[0], top)
            .ticks(Ticks::At(ticks))
            .grid(),
    )
    .height(height)
    .caption(if rows().any(|r| r.resp.is_some()) {
        "latency: service p50 thin, p99 thick, p99.9 dashed; open loop: response (from the \
         intended start) p99 pale thick"
    } else {
        "latency: p50 thin, p99 thick, p99.9 dashed"
    });
    for (i, (r, t)) in runs.iter().zip(&timelines).enumerate() {
        let color = Color::series(i);
        let pts = |f: fn(&IntervalRow) -> f64| {
            t.rows
                .iter()
                .filter(|row| row.ops > 0 && f(row) > 0.0)
                .map(|row| (mid(row), f(row)))
                .collect::<Vec<_>>()
        };
        latency = latency
            .layer(Line::new(color, pts(|r| r.lat_p50_us)).width(1.0))
            .layer(
                Line::new(color, pts(|r| r.lat_p99_us))
                    .width(3.0)
                    .name(run_label(r)),
            )
            .layer(
                Line::new(color, pts(|r| r.lat_p999_us))
                    .width(1.0)
                    .dashed(6.0, 4.0),
            );
        // Open loop: the response time p99, pale under the service times it contains.
        let resp: Vec<(f64, f64)> = t
            .rows
            .iter()
            .filter_map(|row| match row.resp {
                Some(l) if row.ops > 0 && l.p99_us > 0.0 => Some((mid(row), l.p99_us)),
                _ => None,
            })
            .collect();
        if !resp.is_empty() {
            latency = latency.layer(
                Line::new(color, resp)
                    .width(5.0)
                    .opacity(0.45)
                    .name(format!("{} response p99", run_label(r))),
            );
        }
    }

    // Throughput.
    let tmax = rows().map(|r| r.mib_s).fold(0.0, f64::max);
    let (ticks, top) = linear_ticks(if tmax > 0.0 { tmax * 1.1 } else { 1.0 });
    let mut throughput = Panel::new(
        time(),
        Axis::linear("MiB/s")
            .range(0.0, top)
            .ticks(Ticks::At(ticks))
            .grid(),
    )
    .height(height)
    .legend(Legend::Hidden)
    .caption(if runs.iter().any(|r| r.rank.is_some()) {
        "throughput (a vertical line: level shift; shaded from 0: the ranks' start skew, time 0 \
         is the first rank's start)"
    } else {
        "throughput (a vertical line: level shift)"
    });
    for (i, (r, t)) in runs.iter().zip(&timelines).enumerate() {
        let color = Color::series(i);
        // A fleet's start skew, shaded on the time axis from 0 to the last rank's start.
        if let Some(skew_s) = r.start_skew_us.flatten().map(|v| v / 1e6) {
            throughput = throughput.layer(Band {
                x: Some((0.0, skew_s.min(x1))),
                y: Some((0.0, top * 0.04)),
                color,
                opacity: 0.5,
            });
        }
        throughput = throughput
            .layer(Line::new(color, t.rows.iter().map(|r| (mid(r), r.mib_s)).collect()).width(2.0));
        if let Some(s) = &t.reading.level_shift {
            throughput = throughput.layer(Rule::vertical(s.at_s, color));
        }
    }

    // Device util %.
    let (ticks, _) = linear_ticks(100.0);
    let mut util = Panel::new(
        time(),
        Axis::linear("util %")
            .range(0.0, 105.0)
            .ticks(Ticks::At(ticks))
            .grid(),
    )
    .height(height)
    .legend(Legend::Hidden)
    .caption(match timelines.iter().find_map(|t| t.device.clone()) {
        Some(d) => format!("device {d}: util %"),
        None => "no device under the file (tmpfs, overlay, network)".to_string(),
    })
    .empty_text("no device counters");
    for (i, t) in timelines.iter().enumerate() {
        util = util.layer(
            Line::new(
                Color::series(i),
                t.rows
                    .iter()
                    .filter(|r| r.dev_util_pct.is_finite())
                    .map(|r| (mid(r), r.dev_util_pct))
                    .collect(),
            )
            .width(2.0),
        );
    }
    Some(
        Figure::new(title)
            .panel(latency)
            .panel(throughput)
            .panel(util),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Op;
    use crate::measure::device::Sampler;
    use crate::measure::{new_latency_histogram, Snapshot, SnapshotKind, TimelineBuilder};
    use std::time::Duration;

    #[test]
    fn a_timeline_figure_has_the_three_panels_and_one_legend_entry_per_run() {
        let mut b = TimelineBuilder::new(Duration::from_millis(100), Sampler { device: None });
        for i in 1..=30u64 {
            let mut latency = new_latency_histogram();
            latency
                .record_n(if i < 15 { 20_000 } else { 90_000 }, 10)
                .unwrap();
            b.add(&Snapshot {
                worker: 0,
                at_ns: i * 100_000_000,
                interval_ns: 100_000_000,
                bytes: if i < 15 { 40 << 20 } else { 10 << 20 },
                ops: 10,
                latency,
                ops_log: Vec::new(),
                paced: None,
                mixed: None,
                kind: SnapshotKind::Interval,
            });
        }
        let mut r = RunResult {
            block_size_bytes: 4096,
            threads: 1,
            rep: 1,
            ..Default::default()
        };
        r.timeline = Some(std::sync::Arc::new(b.finish(
            3_000_000_000,
            Op::Read,
            false,
            1 << 30,
        )));
        let svg = render("exp", &[&r]).unwrap().expect("a figure");
        for text in [
            "latency: p50",
            "throughput",
            "no device",
            "rep 1",
            "µs — log scale",
        ] {
            assert!(svg.contains(text), "no {text:?}");
        }
        assert!(render("none", &[&RunResult::default()]).unwrap().is_none());
    }
}
