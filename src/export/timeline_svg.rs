//! The timeline figure of an experiment (`<name>-timeline.svg`): three panels on one time axis —
//! latency percentiles (p50 thin, p99 thick, p99.9 dashed; log scale), throughput (MiB/s) and
//! the device's util % — one colour per run (point and repetition), a level shift marked by a
//! vertical line. Drawn with plotters' SVG backend like [`super::svg`], ticks placed by hand so
//! they are round (decades on the log axis).

use super::axis::{fmt_tick, linear_ticks, log_ticks};
use super::svg::COLORS;
use crate::measure::RunResult;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Image size, pixels.
pub const SIZE_PX: (u32, u32) = (1000, 900);

/// One run's line label: `4K t1 rep 2`.
fn run_label(r: &RunResult) -> String {
    let mut s = format!(
        "{} {} t{}",
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
    s = format!("{s} rep {}", r.identity.rep);
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
    s
}

/// The SVG of the runs' timelines, titled `title`; `None` when no run has a timeline row.
pub fn render(title: &str, runs: &[&RunResult]) -> anyhow::Result<Option<String>> {
    let runs: Vec<&RunResult> = runs
        .iter()
        .copied()
        .filter(|r| r.timeline.as_ref().is_some_and(|t| !t.rows.is_empty()))
        .collect();
    if runs.is_empty() {
        return Ok(None);
    }
    let mut out = String::new();
    draw(title, &runs, &mut out).map_err(|e| anyhow::anyhow!("drawing {title}: {e}"))?;
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
    runs: &[&RunResult],
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
    let timelines: Vec<_> = runs.iter().filter_map(|r| r.timeline.clone()).collect();
    let rows = || timelines.iter().flat_map(|t| t.rows.iter());
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
    for (i, (r, t)) in runs.iter().zip(&timelines).enumerate() {
        let color = COLORS[i % COLORS.len()];
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
        cc.draw_series(LineSeries::new(
            pts(|r| r.lat_p99_us),
            color.stroke_width(3),
        ))?
        .label(run_label(r))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(3)));
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
            cc.draw_series(LineSeries::new(resp, color.mix(0.45).stroke_width(5)))?
                .label(format!("{} response p99", run_label(r)))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.mix(0.45).stroke_width(5))
                });
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
            if runs.iter().any(|r| r.fleet.is_some()) {
                "throughput (a vertical line: level shift; shaded from 0: the ranks' start skew, \
                 time 0 is the first rank's start)"
            } else {
                "throughput (a vertical line: level shift)"
            },
            ("sans-serif", 14),
        )
        .build_cartesian_2d(0.0..x1, 0.0..top)?;
    frame(&mut cc, &panels[1], &ticks, false, x, "MiB/s")?;
    for (i, (r, t)) in runs.iter().zip(&timelines).enumerate() {
        let color = COLORS[i % COLORS.len()];
        // A fleet's start skew, shaded on the time axis from 0 to the last rank's start.
        if let Some(skew_s) = r
            .fleet
            .as_ref()
            .and_then(|f| f.start_skew_us)
            .map(|v| v / 1e6)
        {
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
            match timelines.iter().find_map(|t| t.device.clone()) {
                Some(d) => format!("device {d}: util %"),
                None => "no device under the file (tmpfs, overlay, network)".to_string(),
            },
            ("sans-serif", 14),
        )
        .build_cartesian_2d(0.0..x1, 0.0..105.0)?;
    frame(&mut cc, &panels[2], &ticks, false, x, "util %")?;
    for (i, t) in timelines.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
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
            identity: crate::measure::result::Identity {
                rep: 1,
                ..Default::default()
            },
            setup: crate::config::RecordedSetup {
                block_size_bytes: 4096,
                threads: 1,
                ..Default::default()
            },
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
