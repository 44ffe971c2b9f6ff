//! The timeline figure of an experiment (`<name>-timeline.svg`): how each point's runs went
//! over time. One series per point (its repetitions drawn in the same colour, one legend entry
//! named by what tells points apart: read or write, warm or cold, method, block size, threads,
//! queue depth, rate), and only runs long enough to have a line: at least [`MIN_INTERVALS`]
//! intervals (a sweep's 1 s runs have one, which drew empty axes).
//!
//! Up to [`MAX_SERIES_IN_ONE`] points share three panels on one time axis — latency percentiles
//! (p50 thin, p99 thick, p99.9 dashed; log scale), throughput (MiB/s) and the device's util % —
//! with a legend that fits. More points are drawn as small multiples: one small throughput panel
//! per point, every panel on the same axes, named by its point (48 lines in one panel were a
//! tangle whatever the legend). Drawn with plotters' SVG backend like [`super::svg`], ticks placed
//! by hand so they are round (decades on the log axis).

use super::axis::{fmt_tick, linear_ticks, log_ticks};
use super::svg::COLORS;
use crate::measure::RunResult;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Image size of the three-panel figure, pixels.
pub const SIZE_PX: (u32, u32) = (1000, 900);

/// Fewest intervals a run needs to be drawn: fewer make a dot or a segment, not a timeline.
pub const MIN_INTERVALS: usize = 3;

/// Most points drawn in the three shared panels (one colour each); more become small multiples.
pub const MAX_SERIES_IN_ONE: usize = COLORS.len();

/// Small multiples: panels per row, and each panel's height in pixels.
const GRID_COLUMNS: usize = 4;
const CELL_HEIGHT_PX: u32 = 200;

/// A point's name in the figure: `read cold pread 4K t1`, `write direct io_uring 1M t1 qd8`,
/// with the rate of an open loop and a fleet's rank; repetitions share it.
pub fn point_label(r: &RunResult) -> String {
    use crate::config::CacheMode;
    let mut s = r.operation.to_string();
    if r.cache.known() != Some(CacheMode::AsIs) {
        s += &format!(" {}", r.cache);
    }
    if r.direct {
        s += " direct";
    }
    s += &format!(
        " {} {} t{}",
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
    let runs: Vec<&RunResult> = runs.iter().copied().filter(|r| drawable(r)).collect();
    if runs.is_empty() {
        return Ok(None);
    }
    let series = series_of(&runs);
    let mut out = String::new();
    let drawn = if series.len() <= MAX_SERIES_IN_ONE {
        draw(title, &series, &mut out)
    } else {
        draw_small_multiples(title, &series, &mut out)
    };
    drawn.map_err(|e| anyhow::anyhow!("drawing {title}: {e}"))?;
    Ok(Some(out))
}

type Panel<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draws the frame of a panel: y ticks at `ticks` (values; `log`: their log10 is the position),
/// x ticks every `x_step` seconds, and the axis labels.
fn frame(
    cc: &mut Panel<'_, '_>,
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    ticks: &[f64],
    log: bool,
    x: (f64, f64, f64),
    y_desc: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let (x0, x1, x_step) = x;
    cc.configure_mesh()
        .disable_x_mesh()
        .disable_y_mesh()
        .x_labels(0)
        .y_labels(0)
        .x_desc("seconds since the run started")
        .y_desc(y_desc)
        .label_style(("sans-serif", 12))
        .draw()?;
    let offset = area.get_base_pixel();
    let right = TextStyle::from(("sans-serif", 12).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for t in ticks {
        let at = if log { t.log10() } else { *t };
        cc.draw_series(std::iter::once(PathElement::new(
            vec![(x0, at), (x1, at)],
            RGBColor(221, 221, 221).stroke_width(1),
        )))?;
        let (px, py) = cc.backend_coord(&(x0, at));
        area.draw(&Text::new(
            fmt_tick(*t),
            (px - 6 - offset.0, py - offset.1),
            right.clone(),
        ))?;
    }
    let below = TextStyle::from(("sans-serif", 12).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let y_lo = cc.y_range().start;
    let mut t = 0.0;
    while t <= x1 + 1e-9 {
        let (px, py) = cc.backend_coord(&(t, y_lo));
        area.draw(&Text::new(
            fmt_tick(t),
            (px - offset.0, py + 4 - offset.1),
            below.clone(),
        ))?;
        t += x_step;
    }
    Ok(())
}

fn draw(
    title: &str,
    series: &[Series<'_>],
    out: &mut String,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, SIZE_PX).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, body) = root.split_vertically(40);
    header.draw(&Text::new(
        title.to_string(),
        (SIZE_PX.0 as i32 / 2, 10),
        TextStyle::from(("sans-serif", 20).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    let panels = body.split_evenly((3, 1));
    // (colour, run, its timeline) for every run, a point's runs in its colour.
    let lines: Vec<_> = series
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.runs.iter().enumerate().filter_map(move |(j, r)| {
                let t = r.timeline.clone()?;
                Some((COLORS[i % COLORS.len()], j == 0, &s.label, *r, t))
            })
        })
        .collect();
    let rows = || lines.iter().flat_map(|(.., t)| t.rows.iter());
    let x1 = rows().map(|r| r.t_end_s).fold(0.0, f64::max).max(0.1);
    let (x_ticks, _) = linear_ticks(x1);
    let x_step = if x_ticks.len() > 1 {
        x_ticks[1] - x_ticks[0]
    } else {
        x1
    };
    let x = (0.0, x1, x_step);
    let mid = |r: &crate::measure::timeline::IntervalRow| (r.t_start_s + r.t_end_s) / 2.0;

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
    let (lo, hi) = (
        ticks[0].log10(),
        (lmax * 1.5).log10().max(ticks[ticks.len() - 1].log10()),
    );
    let mut cc = ChartBuilder::on(&panels[0])
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .caption(
            if rows().any(|r| r.resp.is_some()) {
                "latency: service p50 thin, p99 thick, p99.9 dashed; open loop: response \
                 (from the intended start) p99 pale thick"
            } else {
                "latency: p50 thin, p99 thick, p99.9 dashed"
            },
            ("sans-serif", 14),
        )
        .build_cartesian_2d(0.0..x1, lo..hi)?;
    frame(&mut cc, &panels[0], &ticks, true, x, "µs — log scale")?;
    for (color, first, label, _, t) in &lines {
        let color = *color;
        let pts = |f: fn(&crate::measure::timeline::IntervalRow) -> f64| {
            t.rows
                .iter()
                .filter(|row| row.ops > 0 && f(row) > 0.0)
                .map(|row| (mid(row), f(row).log10()))
                .collect::<Vec<_>>()
        };
        cc.draw_series(LineSeries::new(
            pts(|r| r.lat_p50_us),
            color.stroke_width(1),
        ))?;
        let p99 = cc.draw_series(LineSeries::new(
            pts(|r| r.lat_p99_us),
            color.stroke_width(3),
        ))?;
        // One legend entry per point, on its first run's line.
        if *first {
            p99.label(label.as_str()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(3))
            });
        }
        cc.draw_series(DashedLineSeries::new(
            pts(|r| r.lat_p999_us),
            6,
            4,
            color.stroke_width(1),
        ))?;
        // Open loop: the response time p99, pale under the service times it contains.
        let resp: Vec<(f64, f64)> = t
            .rows
            .iter()
            .filter_map(|row| match row.resp {
                Some(l) if row.ops > 0 && l.p99_us > 0.0 => Some((mid(row), l.p99_us.log10())),
                _ => None,
            })
            .collect();
        if !resp.is_empty() {
            let drawn = cc.draw_series(LineSeries::new(resp, color.mix(0.45).stroke_width(5)))?;
            if *first {
                drawn
                    .label(format!("{label} response p99"))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], color.mix(0.45).stroke_width(5))
                    });
            }
        }
    }
    cc.configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .position(SeriesLabelPosition::UpperRight)
        .label_font(("sans-serif", 12))
        .draw()?;

    // Throughput.
    let tmax = rows().map(|r| r.mib_s).fold(0.0, f64::max);
    let (ticks, top) = linear_ticks(if tmax > 0.0 { tmax * 1.1 } else { 1.0 });
    let mut cc = ChartBuilder::on(&panels[1])
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .caption(
            if lines.iter().any(|(_, _, _, r, _)| r.rank.is_some()) {
                "throughput (a vertical line: level shift; shaded from 0: the ranks' start skew, \
                 time 0 is the first rank's start)"
            } else {
                "throughput (a vertical line: level shift)"
            },
            ("sans-serif", 14),
        )
        .build_cartesian_2d(0.0..x1, 0.0..top)?;
    frame(&mut cc, &panels[1], &ticks, false, x, "MiB/s")?;
    for (color, _, _, r, t) in &lines {
        let color = *color;
        // A fleet's start skew, shaded on the time axis from 0 to the last rank's start.
        if let Some(skew_s) = r.start_skew_us.flatten().map(|v| v / 1e6) {
            cc.draw_series(std::iter::once(Rectangle::new(
                [(0.0, 0.0), (skew_s.min(x1), top * 0.04)],
                color.mix(0.5).filled(),
            )))?;
        }
        cc.draw_series(LineSeries::new(
            t.rows.iter().map(|r| (mid(r), r.mib_s)),
            color.stroke_width(2),
        ))?;
        if let Some(s) = &t.reading.level_shift {
            cc.draw_series(std::iter::once(PathElement::new(
                vec![(s.at_s, 0.0), (s.at_s, top)],
                color.stroke_width(1),
            )))?;
        }
    }

    // Device util %.
    let (ticks, _) = linear_ticks(100.0);
    let mut cc = ChartBuilder::on(&panels[2])
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .caption(
            match lines.iter().find_map(|(.., t)| t.device.clone()) {
                Some(d) => format!("device {d}: util %"),
                None => "no device under the file (tmpfs, overlay, network)".to_string(),
            },
            ("sans-serif", 14),
        )
        .build_cartesian_2d(0.0..x1, 0.0..105.0)?;
    frame(&mut cc, &panels[2], &ticks, false, x, "util %")?;
    for (color, _, _, _, t) in &lines {
        cc.draw_series(LineSeries::new(
            t.rows
                .iter()
                .filter(|r| r.dev_util_pct.is_finite())
                .map(|r| (mid(r), r.dev_util_pct)),
            color.stroke_width(2),
        ))?;
    }
    root.present()?;
    Ok(())
}

/// More points than colours: one small throughput panel per point, [`GRID_COLUMNS`] to a row,
/// every panel on the same axes (time from 0 to the longest run, MiB/s from 0 to the highest
/// interval) so panels compare at a glance; a point's repetitions overlaid in one colour, a
/// level shift marked by a vertical line.
fn draw_small_multiples(
    title: &str,
    series: &[Series<'_>],
    out: &mut String,
) -> Result<(), Box<dyn std::error::Error>> {
    let grid_rows = series.len().div_ceil(GRID_COLUMNS);
    let header_px = 64;
    let size = (SIZE_PX.0, header_px + CELL_HEIGHT_PX * grid_rows as u32);
    let root = SVGBackend::with_string(out, size).into_drawing_area();
    root.fill(&WHITE)?;
    let (header, body) = root.split_vertically(header_px);
    header.draw(&Text::new(
        title.to_string(),
        (size.0 as i32 / 2, 8),
        TextStyle::from(("sans-serif", 20).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    header.draw(&Text::new(
        format!(
            "throughput (MiB/s) against seconds since the run started, one panel per point \
             ({} points; repetitions overlaid); the same axes in every panel",
            series.len()
        ),
        (size.0 as i32 / 2, 38),
        TextStyle::from(("sans-serif", 13).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    let rows = || {
        series
            .iter()
            .flat_map(|s| s.runs.iter())
            .filter_map(|r| r.timeline.as_ref())
            .flat_map(|t| t.rows.iter())
    };
    let x1 = rows().map(|r| r.t_end_s).fold(0.0, f64::max).max(0.1);
    let tmax = rows().map(|r| r.mib_s).fold(0.0, f64::max);
    let (_, top) = linear_ticks(if tmax > 0.0 { tmax * 1.1 } else { 1.0 });
    let mid = |r: &crate::measure::timeline::IntervalRow| (r.t_start_s + r.t_end_s) / 2.0;
    let cells = body.split_evenly((grid_rows, GRID_COLUMNS));
    for (i, (s, cell)) in series.iter().zip(cells.iter()).enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut cc = ChartBuilder::on(cell)
            .margin(6)
            .x_label_area_size(22)
            .y_label_area_size(44)
            .caption(&s.label, ("sans-serif", 12))
            .build_cartesian_2d(0.0..x1, 0.0..top)?;
        cc.configure_mesh()
            .disable_x_mesh()
            .disable_y_mesh()
            .x_labels(3)
            .y_labels(3)
            .x_label_formatter(&|v| fmt_tick(*v))
            .y_label_formatter(&|v| fmt_tick(*v))
            .label_style(("sans-serif", 10))
            .draw()?;
        for r in &s.runs {
            let Some(t) = &r.timeline else { continue };
            cc.draw_series(LineSeries::new(
                t.rows.iter().map(|r| (mid(r), r.mib_s)),
                color.stroke_width(2),
            ))?;
            if let Some(shift) = &t.reading.level_shift {
                cc.draw_series(std::iter::once(PathElement::new(
                    vec![(shift.at_s, 0.0), (shift.at_s, top)],
                    color.stroke_width(1),
                )))?;
            }
        }
    }
    root.present()?;
    Ok(())
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
            block_size_bytes,
            threads: 1,
            rep,
            operation: op.into(),
            cache: cache.into(),
            method: Method::Pread.into(),
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
        // Three rows of four panels, 200 px each, under the header.
        assert!(svg.contains("height=\"664\""), "{}", &svg[..200]);
    }
}
