//! A mixed workload (issue 26: the third step of `w`, its share typed with `W`) told apart by
//! direction: the share of reads asked and done, and each direction's throughput, IOPS and
//! p99 latency. A mix's whole-run figures (the table's columns, the chart) add both directions
//! up, which says nothing of how the reads fared beside the writes; these say it.
//!
//! The live segment's directions come from its aggregate's per-direction tallies (the same
//! merge of the workers' snapshots as the whole); a finished row's from its [`RunResult`]
//! columns (`mix_read_pct_*`, `read_*`, `write_*`), which are what the CSV holds, so the
//! message line and a saved file say the same figures. Nothing here reads the app's state
//! (the app asks for a row's detail, so this module must not depend on it back): the callers
//! pass the segment, the row and the unit.

use super::{fmt_mib_s, fmt_rate, fmt_us};
use crate::measure::snapshot::DirectionShare;
use crate::measure::{LatencySummary, RunResult};
use crate::tui::segment::Segment;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

/// The live segment's two directions (`read`, `write`), when it mixes and has measured.
pub fn live_directions(seg: &Segment) -> Option<[(&'static str, &DirectionShare); 2]> {
    let m = seg.agg.mixed.as_ref()?;
    Some([("read", &m.read), ("write", &m.write)])
}

/// One direction's heading over its histogram: `read 12.3 MiB/s 3.1k IOPS`, over `seconds`
/// (the segment's), in MB/s with `units_mb` (the screen's `u`), else MiB/s.
pub fn heading(units_mb: bool, name: &str, d: &DirectionShare, seconds: f64) -> String {
    let (mib_s, iops) = if seconds > 0.0 {
        (
            d.bytes as f64 / (1024.0 * 1024.0) / seconds,
            d.ops as f64 / seconds,
        )
    } else {
        (0.0, 0.0)
    };
    let (v, unit) = if units_mb {
        (mib_s * 1.048_576, "MB/s")
    } else {
        (mib_s, "MiB/s")
    };
    format!("{name} {} {unit} {} IOPS", fmt_mib_s(v), fmt_rate(iops))
}

/// The share of reads done so far against the share asked: `mix reads 49.8% of ops (50%
/// asked)`, for the throughput panel's last line; None when the segment does not mix.
pub fn done_line(seg: &Segment) -> Option<Line<'static>> {
    let asked = seg
        .settings
        .setup
        .mix_read_pct
        .filter(|_| seg.settings.is_mixed())?;
    let dim = Style::default().fg(Color::DarkGray);
    let [(_, r), (_, w)] = live_directions(seg)?;
    let ops = r.ops + w.ops;
    let done = if ops > 0 {
        format!("{:.1}%", r.ops as f64 * 100.0 / ops as f64)
    } else {
        "-".into()
    };
    Some(Line::from(vec![
        Span::styled("mix reads ", dim),
        Span::styled(done, Style::default().fg(Color::Cyan)),
        Span::styled(format!(" of ops ({asked}% asked)"), dim),
    ]))
}

/// A mixed row's directions apart, for the message line and the summary at exit:
/// `reads 49.8% of ops (50% asked): 12.3 MiB/s, 3.1k IOPS, p99 87.0µs │ writes: 12.1 MiB/s,
/// 3.1k IOPS, p99 1.20ms`. None for a row that does not mix.
pub fn row_detail(r: &RunResult) -> Option<String> {
    let asked = r.setup.mix_read_pct?;
    let done = r
        .mix
        .as_ref()
        .and_then(|m| m.mix_read_pct_done)
        .map_or("-".to_string(), |d| format!("{d:.1}%"));
    let side = |mib_s: Option<f64>, iops: Option<f64>, p99: Option<f64>| {
        format!(
            "{} MiB/s, {} IOPS, p99 {}",
            fmt_mib_s(mib_s.unwrap_or(0.0)),
            fmt_rate(iops.unwrap_or(0.0)),
            fmt_us(p99.unwrap_or(0.0))
        )
    };
    Some(format!(
        "reads {done} of ops ({asked}% asked): {} │ writes: {}",
        side(
            r.mix.as_ref().map(|m| m.read_mib_s),
            r.mix.as_ref().map(|m| m.read_iops),
            r.mix.as_ref().map(|m| m.read_lat_p99_us)
        ),
        side(
            r.mix.as_ref().map(|m| m.write_mib_s),
            r.mix.as_ref().map(|m| m.write_iops),
            r.mix.as_ref().map(|m| m.write_lat_p99_us)
        )
    ))
}

/// p99 of one direction, µs.
pub fn p99_us(d: &DirectionShare) -> f64 {
    LatencySummary::of(&d.latency).p99_us
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mixed_rows_detail_names_the_share_asked_and_done_and_each_direction() {
        let mut r = RunResult {
            figures: crate::measure::result::Figures {
                seconds: 2.0,
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(row_detail(&r), None);
        let mut m = crate::measure::snapshot::MixedSnapshot::new();
        m.read.ops = 700;
        m.read.bytes = 700 << 12;
        m.read.latency.record(80_000).unwrap();
        m.write.ops = 300;
        m.write.bytes = 300 << 12;
        m.write.latency.record(1_200_000).unwrap();
        r.set_mixed(70, &m);
        let d = row_detail(&r).unwrap();
        assert!(
            d.starts_with("reads 70.0% of ops (70% asked): 1.37 MiB/s, 350 IOPS, p99 80"),
            "{d}"
        );
        assert!(
            d.contains("│ writes: 0.59 MiB/s, 150 IOPS, p99 1.20ms"),
            "{d}"
        );
        let p99 = p99_us(&m.write);
        assert!((p99 - 1200.0).abs() < 12.0, "{p99}");
    }
}
