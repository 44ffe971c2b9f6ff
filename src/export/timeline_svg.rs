//! The timeline figure of an experiment (`<name>-timeline.svg`): how each point's runs went
//! over time. One series per point (its repetitions drawn in the same colour, one legend entry
//! named by what tells points apart: read or write, warm or cold, method, block size, threads,
//! queue depth, rate), and only runs long enough to have a line: at least [`MIN_INTERVALS`]
//! intervals (a sweep's 1 s runs have one, which drew empty axes).
//!
//! Up to [`MAX_SERIES_IN_ONE`] points share three panels on one time axis — latency percentiles
//! (p50 thin, p99 thick, p99.9 dashed; log scale), throughput (MiB/s) and the device's util % —
//! a level shift marked by a vertical line. More points are drawn as small multiples: one small
//! throughput panel per point, every panel on the same axes, named by its point (48 lines in one
//! panel were a tangle whatever the legend). A [`Figure`] drawn by the one renderer, like every
//! other figure.

use super::axis::{linear_ticks, log_ticks};
use super::figure::{Axis, Band, Color, Figure, Legend, Line, Panel, Rule, Ticks};
use crate::measure::timeline::IntervalRow;
use crate::measure::RunResult;

/// Width of the figure and height of each of its three plots, pixels.
pub const SIZE_PX: (u32, u32) = (1000, 220);

/// Fewest intervals a run needs to be drawn: fewer make a dot or a segment, not a timeline.
pub const MIN_INTERVALS: usize = 3;

/// Most points drawn in the three shared panels (one colour each); more become small multiples.
pub const MAX_SERIES_IN_ONE: usize = 8;

/// Height of one small multiple's panel, pixels.
const CELL_HEIGHT_PX: f64 = 110.0;

/// A point's name in the figure: `read cold pread 4K t1`, `write direct io_uring 1M t1 qd8`,
/// with the rate of an open loop and a fleet's rank; repetitions share it.
pub fn point_label(r: &RunResult) -> String {
    use crate::config::CacheMode;
    let mut s = r.setup.op.to_string();
    if r.setup.cache.known() != Some(CacheMode::AsIs) {
        s += &format!(" {}", r.setup.cache);
    }
    if r.setup.direct {
        s += " direct";
    }
    s += &format!(
        " {} {} t{}",
        r.setup.method,
        crate::size::format_size(r.setup.block_size_bytes),
        r.setup.threads
    );
    if r.setup.queue_depth > 1 {
        s += &format!(" qd{}", r.setup.queue_depth);
    }
    if let Some(rate) = r.setup.rate() {
        s += &format!(" @{rate:.0}/s");
    }
    // A fleet's row: which rank, and how far apart the ranks started (the time axis is the
    // fleet's clock, from the earliest rank's start).
    if let Some(rank) = r.fleet.as_ref().map(|f| &f.rank) {
        s = format!("rank {} {s}", crate::text::shown(rank));
        if let Some(skew) = r
            .fleet
            .as_ref()
            .and_then(|f| f.start_skew_us)
            .filter(|v| *v > 0.0)
        {
            s += &format!(
                " (start skew {})",
                super::axis::fmt_us(skew, super::axis::UsStyle::Fixed)
            );
        }
    }
    crate::text::shown(&s).into_owned()
}

/// The runs of one point, in the order they ran.
struct Series<'a> {
    label: String,
    runs: Vec<&'a RunResult>,
}

/// The runs grouped by point, in order of each point's first run.
fn series_of<'a>(runs: &[&'a RunResult]) -> Vec<Series<'a>> {
    let mut out: Vec<Series<'a>> = Vec::new();
    for r in runs {
        let label = point_label(r);
        match out.iter_mut().find(|s| s.label == label) {
            Some(s) => s.runs.push(r),
            None => out.push(Series {
                label,
                runs: vec![r],
            }),
        }
    }
    out
}

/// Whether `r` has enough of a timeline to draw ([`MIN_INTERVALS`]).
pub fn drawable(r: &RunResult) -> bool {
    r.timeline
        .as_ref()
        .is_some_and(|t| t.rows.len() >= MIN_INTERVALS)
}

/// The SVG of the runs' timelines, titled `title`; `None` when no run has [`MIN_INTERVALS`]
/// intervals (runs with fewer are left out of it; the timeline CSV still has them).
pub fn render(title: &str, runs: &[&RunResult]) -> anyhow::Result<Option<String>> {
    Ok(figure(title, runs).map(|f| f.to_svg()))
}

/// The figure of the runs' timelines; `None` when no run has [`MIN_INTERVALS`] intervals.
pub fn figure(title: &str, runs: &[&RunResult]) -> Option<Figure> {
    let runs: Vec<&RunResult> = runs.iter().copied().filter(|r| drawable(r)).collect();
    if runs.is_empty() {
        return None;
    }
    let series = series_of(&runs);
    // Each run's colour is its point's; its name goes on the legend once, with its first run.
    let color_of: Vec<Color> = runs
        .iter()
        .map(|r| {
            let label = point_label(r);
            Color::series(series.iter().position(|s| s.label == label).unwrap_or(0))
        })
        .collect();
    let named: Vec<Option<String>> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let label = point_label(r);
            let first = runs[..i].iter().all(|o| point_label(o) != label);
            first.then_some(label)
        })
        .collect();
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
    for (i, t) in timelines.iter().enumerate() {
        let color = color_of[i];
        let pts = |f: fn(&IntervalRow) -> f64| {
            t.rows
                .iter()
                .filter(|row| row.ops > 0 && f(row) > 0.0)
                .map(|row| (mid(row), f(row)))
                .collect::<Vec<_>>()
        };
        let mut p99 = Line::new(color, pts(|r| r.lat_p99_us)).width(3.0);
        if let Some(n) = &named[i] {
            p99 = p99.name(n.clone());
        }
        latency = latency
            .layer(Line::new(color, pts(|r| r.lat_p50_us)).width(1.0))
            .layer(p99)
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
            let mut line = Line::new(color, resp).width(5.0).opacity(0.45);
            if let Some(n) = &named[i] {
                line = line.name(format!("{n} response p99"));
            }
            latency = latency.layer(line);
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
    .caption(if runs.iter().any(|r| r.fleet.is_some()) {
        "throughput (a vertical line: level shift; shaded from 0: the ranks' start skew, time 0 \
         is the first rank's start)"
    } else {
        "throughput (a vertical line: level shift)"
    });
    if series.len() > MAX_SERIES_IN_ONE {
        return Some(small_multiples(title, &series, x1, top));
    }
    for (i, (r, t)) in runs.iter().zip(&timelines).enumerate() {
        let color = color_of[i];
        // A fleet's start skew, shaded on the time axis from 0 to the last rank's start.
        if let Some(skew_s) = r
            .fleet
            .as_ref()
            .and_then(|f| f.start_skew_us)
            .map(|v| v / 1e6)
        {
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
                color_of[i],
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

/// More points than colours: one throughput panel per point, on the same axes (time 0..`x1`,
/// MiB/s 0..`top`), captioned by the point; its repetitions share the panel.
fn small_multiples(title: &str, series: &[Series<'_>], x1: f64, top: f64) -> Figure {
    let (x_ticks, _) = linear_ticks(x1);
    let (y_ticks, _) = linear_ticks(top);
    let mut fig = Figure::new(title).subtitle(format!(
        "throughput, one panel per point ({} points, more than the {MAX_SERIES_IN_ONE} colours \
         one panel can tell apart); every panel on the same axes",
        series.len()
    ));
    for s in series {
        let mut p = Panel::new(
            Axis::linear("seconds since the run started")
                .range(0.0, x1)
                .ticks(Ticks::At(
                    x_ticks
                        .iter()
                        .copied()
                        .filter(|t| *t <= x1 + 1e-9)
                        .collect(),
                )),
            Axis::linear("MiB/s")
                .range(0.0, top)
                .ticks(Ticks::At(y_ticks.clone()))
                .grid(),
        )
        .height(CELL_HEIGHT_PX)
        .legend(Legend::Hidden)
        .caption(s.label.clone());
        for r in &s.runs {
            if let Some(t) = &r.timeline {
                let pts = t
                    .rows
                    .iter()
                    .map(|row| ((row.t_start_s + row.t_end_s) / 2.0, row.mib_s))
                    .collect();
                p = p.layer(Line::new(Color::series(0), pts).width(2.0));
                if let Some(shift) = &t.reading.level_shift {
                    p = p.layer(Rule::vertical(shift.at_s, Color::series(0)));
                }
            }
        }
        fig = fig.panel(p);
    }
    fig
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CacheMode, Method, Op};
    use crate::measure::device::Sampler;
    use crate::measure::{new_latency_histogram, Snapshot, SnapshotKind, TimelineBuilder};
    use std::time::Duration;

    /// A run of `intervals` 100 ms intervals (a level shift halfway).
    fn run(op: Op, cache: CacheMode, block_size_bytes: u64, rep: u32, intervals: u64) -> RunResult {
        let mut b = TimelineBuilder::new(Duration::from_millis(100), Sampler { device: None });
        for i in 1..=intervals {
            let mut latency = new_latency_histogram();
            latency
                .record_n(if i < intervals / 2 { 20_000 } else { 90_000 }, 10)
                .unwrap();
            b.add(&Snapshot {
                worker: 0,
                at_ns: i * 100_000_000,
                interval_ns: 100_000_000,
                bytes: if i < intervals / 2 {
                    40 << 20
                } else {
                    10 << 20
                },
                ops: 10,
                latency,
                ops_log: Vec::new(),
                paced: None,
                mixed: None,
                kind: SnapshotKind::Interval,
            });
        }
        let mut r = RunResult {
            identity: crate::measure::result::Identity {
                rep,
                ..Default::default()
            },
            setup: crate::config::RecordedSetup {
                block_size_bytes,
                threads: 1,
                op: op.into(),
                cache: cache.into(),
                method: Method::Pread.into(),
                ..Default::default()
            },
            ..Default::default()
        };
        r.timeline = Some(std::sync::Arc::new(b.finish(
            intervals * 100_000_000,
            op,
            false,
            1 << 30,
        )));
        r
    }

    #[test]
    fn a_timeline_figure_has_the_three_panels_and_one_legend_entry_per_point() {
        let (w1, w2) = (
            run(Op::Read, CacheMode::Warm, 4096, 1, 30),
            run(Op::Read, CacheMode::Warm, 4096, 2, 30),
        );
        let c1 = run(Op::Read, CacheMode::Cold, 4096, 1, 30);
        let wr = run(Op::Write, CacheMode::AsIs, 4096, 1, 30);
        let svg = render("exp", &[&w1, &w2, &c1, &wr])
            .unwrap()
            .expect("a figure");
        for text in [
            "latency: p50",
            "throughput",
            "no device",
            "µs — log scale",
            "read warm pread 4K t1",
            "read cold pread 4K t1",
            "write pread 4K t1",
        ] {
            assert!(svg.contains(text), "no {text:?}");
        }
        // Two repetitions of one point: one legend entry.
        assert_eq!(svg.matches("read warm pread 4K t1").count(), 1);
        assert!(!svg.contains("rep 1"));
        assert!(render("none", &[&RunResult::default()]).unwrap().is_none());
    }

    #[test]
    fn runs_of_too_few_intervals_are_not_drawn() {
        let short = run(Op::Read, CacheMode::Warm, 4096, 1, MIN_INTERVALS as u64 - 1);
        assert!(render("short", &[&short]).unwrap().is_none());
        let long = run(Op::Read, CacheMode::Cold, 4096, 1, 10);
        let svg = render("mixed", &[&short, &long]).unwrap().unwrap();
        assert!(svg.contains("read cold") && !svg.contains("read warm"));
    }

    #[test]
    fn more_points_than_colours_are_small_multiples_on_the_same_axes() {
        let runs: Vec<RunResult> = (0..12u64)
            .map(|i| run(Op::Read, CacheMode::Warm, 4096 << i, 1, 10))
            .collect();
        let refs: Vec<&RunResult> = runs.iter().collect();
        let svg = render("many", &refs).unwrap().unwrap();
        assert!(svg.contains("one panel per point (12 points"), "{svg}");
        for r in &runs {
            assert_eq!(
                svg.matches(&*point_label(r)).count(),
                1,
                "{}",
                point_label(r)
            );
        }
    }
}
