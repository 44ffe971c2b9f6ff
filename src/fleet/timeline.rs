//! The fleet's timelines (issue 22): every rank's own timeline placed on the fleet's clock, and
//! the `all` timeline of the point, whose intervals are the ranks' intervals merged exactly.
//!
//! Why it is shaped so:
//! * The fleet's clock starts at the earliest rank's start (CLOCK_REALTIME of each rank, see
//!   [`super::wire::RankReport`]); a rank that started `skew` later has its intervals shifted by
//!   `skew` on that clock, so the start skew is on the time axis of the per-rank timelines and
//!   in their `start_skew_us` column.
//! * An `all` interval is the sum of whole rank intervals, never a re-cut of one: rank r's
//!   interval k is added into the fleet's interval `k + round(skew_r / interval)`. Bytes and
//!   operations add; latency histograms add (HDR add, every histogram has the same bounds), so
//!   a fleet percentile is read from the union of the operations, never averaged. What this
//!   costs is placement, not figures: a rank's interval sits in the fleet's interval nearest to
//!   where it ran, up to half an interval off (the skew after a barrier is microseconds to
//!   milliseconds against 1 s intervals; the `all` row's `start_skew_us` says how much).
//! * Device and CPU columns are per host: the `all` timeline carries them only when every rank
//!   ran on one host against one device (then any rank's counters are the whole device's, and
//!   rank 0's are taken); across hosts they stay empty rather than be summed into a device that
//!   does not exist.
//!
//! Pure functions of timelines, so the arithmetic is tested without MPI.

use crate::config::Op;
use crate::export::timeline::RunKey;
use crate::measure::histogram::{new_latency_histogram, LatencySummary};
use crate::measure::timeline::{
    level_shift, ratio_meaning, steady_state, BytesRatio, IntervalRow, Reading, Timeline,
};
use crate::measure::RunResult;
use hdrhistogram::Histogram;
use serde::Serialize;

/// One rank's timeline with where it sits on the fleet's clock.
#[derive(Debug, Clone, Copy)]
pub struct Placed<'a> {
    pub rank: usize,
    pub host: &'a str,
    /// Start of the rank's run after the earliest rank's, ns.
    pub offset_ns: u64,
    pub timeline: &'a Timeline,
}

/// `t`, moved `offset_ns` later on the time axis (every row's start and end); the figures, the
/// histograms and the reading stay as the rank measured them (a level shift's time moves too).
pub fn shifted(t: &Timeline, offset_ns: u64) -> Timeline {
    let dt = offset_ns as f64 / 1e9;
    let mut out = t.clone();
    for r in &mut out.rows {
        r.t_start_s += dt;
        r.t_end_s += dt;
    }
    if let Some(s) = &mut out.reading.level_shift {
        s.at_s += dt;
    }
    out
}

/// The fleet's interval that rank interval `k` of a rank `offset_ns` late is added into.
fn slot(k: usize, offset_ns: u64, interval_ns: u64) -> usize {
    k + ((offset_ns as f64 / interval_ns as f64).round() as usize)
}

/// The `all` timeline of the ranks' timelines, on the fleet's clock; `op`, `direct` and
/// `file_bytes` (every rank's bytes together) for the device ratio. `None` when no rank has a
/// timeline row, or when the ranks' intervals differ (they run one point with one setting, so
/// that is a fleet of mixed builds, whose intervals cannot be added).
pub fn merged(ranks: &[Placed<'_>], op: Op, direct: bool, file_bytes: u64) -> Option<Timeline> {
    let with_rows: Vec<&Placed> = ranks
        .iter()
        .filter(|p| !p.timeline.rows.is_empty())
        .collect();
    let first = with_rows.first()?;
    let interval_s = first.timeline.interval_s;
    if with_rows
        .iter()
        .any(|p| (p.timeline.interval_s - interval_s).abs() > 1e-9)
    {
        return None;
    }
    let interval_ns = ((interval_s * 1e9).round() as u64).max(1);
    let n = with_rows
        .iter()
        .map(|p| slot(p.timeline.rows.len(), p.offset_ns, interval_ns))
        .max()
        .unwrap_or(0);
    let mut bytes = vec![0u64; n];
    let mut ops = vec![0u64; n];
    let mut latency: Vec<Histogram<u64>> = (0..n).map(|_| new_latency_histogram()).collect();
    // The end of the fleet's last interval: the latest end of any rank on the fleet's clock.
    let mut end_s = 0.0f64;
    for p in &with_rows {
        let t = p.timeline;
        for (k, row) in t.rows.iter().enumerate() {
            let j = slot(k, p.offset_ns, interval_ns);
            bytes[j] += row.bytes;
            ops[j] += row.ops;
            if let Some(h) = t.latency.get(k) {
                // Same bounds everywhere (new_latency_histogram), so adding cannot fail.
                let _ = latency[j].add(h);
            }
        }
        let last = t.rows.last().map_or(0.0, |r| r.t_end_s);
        end_s = end_s.max(last + p.offset_ns as f64 / 1e9);
    }
    // Device and CPU columns: only when every rank ran on one host against one device.
    let one_device = {
        let mut hosts: Vec<&str> = ranks.iter().map(|p| p.host).collect();
        hosts.dedup();
        let mut devices: Vec<Option<&String>> =
            ranks.iter().map(|p| p.timeline.device.as_ref()).collect();
        devices.dedup();
        hosts.len() == 1 && devices.len() == 1
    };
    let device_of = with_rows.iter().find(|p| p.rank == 0).unwrap_or(first);
    let mut rows = Vec::with_capacity(n);
    for j in 0..n {
        let t0 = j as f64 * interval_s;
        let t1 = if j + 1 == n {
            end_s.max(t0 + 1e-9)
        } else {
            (j + 1) as f64 * interval_s
        };
        let secs = t1 - t0;
        let l = LatencySummary::of(&latency[j]);
        let mut row = IntervalRow {
            t_start_s: t0,
            t_end_s: t1,
            bytes: bytes[j],
            ops: ops[j],
            mib_s: bytes[j] as f64 / (1024.0 * 1024.0) / secs,
            iops: ops[j] as f64 / secs,
            lat_p50_us: l.p50_us,
            lat_p90_us: l.p90_us,
            lat_p99_us: l.p99_us,
            lat_p999_us: l.p999_us,
            lat_max_us: l.max_us,
            ..IntervalRow::blank()
        };
        if one_device {
            let k = j.checked_sub(slot(0, device_of.offset_ns, interval_ns));
            if let Some(src) = k.and_then(|k| device_of.timeline.rows.get(k)) {
                copy_counters(&mut row, src);
            }
        }
        rows.push(row);
    }
    let series: Vec<f64> = rows
        .iter()
        .filter(|r| r.t_end_s - r.t_start_s >= interval_s / 2.0)
        .map(|r| r.mib_s)
        .collect();
    let bytes_ratio = one_device
        .then_some(device_of.timeline.reading.bytes_ratio.as_ref())
        .flatten()
        .filter(|_| file_bytes > 0)
        .map(|b| {
            let ratio = b.device_bytes as f64 / file_bytes as f64;
            BytesRatio {
                device: b.device.clone(),
                file_bytes,
                device_bytes: b.device_bytes,
                ratio,
                meaning: ratio_meaning(op, direct, ratio),
            }
        });
    Some(Timeline {
        interval_s,
        device: if one_device {
            device_of.timeline.device.clone()
        } else {
            None
        },
        rows,
        latency,
        kernel: None,
        reading: Reading {
            bytes_ratio,
            level_shift: level_shift(&series, interval_s),
            steady: steady_state(&series, interval_s),
            // The ranks' response times are not kept per interval: no burst figure.
            burst: None,
        },
    })
}

/// The fleet columns of a timeline CSV row: which rank (`all` for the aggregate) and how much
/// later than the earliest rank it started (the aggregate: the largest such skew).
#[derive(Debug, Clone, Default, Serialize)]
pub struct FleetCols {
    pub rank: String,
    pub start_skew_us: Option<f64>,
}

impl FleetCols {
    fn of(r: &RunResult) -> FleetCols {
        FleetCols {
            rank: crate::text::csv_cell(
                r.fleet
                    .as_ref()
                    .map(|f| f.rank.clone())
                    .as_deref()
                    .unwrap_or(""),
            )
            .into_owned(),
            start_skew_us: r.fleet.as_ref().and_then(|f| f.start_skew_us),
        }
    }
}

/// The fleet's timeline CSV of `rows` (every rank's and the `all` rows of a point, as
/// [`super::aggregate::rows`] gives them): the local timeline CSV's columns with `rank` and
/// `start_skew_us` between the run's setup and the interval's figures. The per-rank rows' times
/// are on the fleet's clock (0 = the earliest rank's start). Empty when no row has a timeline.
pub fn timeline_csv(rows: &[&RunResult]) -> anyhow::Result<String> {
    let mut out: Vec<(RunKey, FleetCols, IntervalRow)> = Vec::new();
    for r in rows {
        let Some(t) = &r.timeline else { continue };
        let (key, cols) = (RunKey::of(r), FleetCols::of(r));
        out.extend(
            t.rows
                .iter()
                .map(|row| (key.clone(), cols.clone(), row.clone())),
        );
    }
    crate::export::csv::to_csv_tidy(&out)
}

/// The `timeline` of a fleet's JSON document: per row with a timeline, its key, rank, skew and
/// timeline (intervals and reading).
pub fn timeline_json(rows: &[&RunResult]) -> serde_json::Value {
    let runs: Vec<serde_json::Value> = rows
        .iter()
        .filter_map(|r| {
            let t = r.timeline.as_ref()?;
            Some(serde_json::json!({
                "run": RunKey::of(r),
                "rank": r.fleet.as_ref().map(|f| f.rank.clone()),
                "start_skew_us": r.fleet.as_ref().and_then(|f| f.start_skew_us),
                "timeline": &**t,
            }))
        })
        .collect();
    serde_json::Value::Array(runs)
}

/// The text of `<experiment>-ranks-timeline.csv` ([`timeline_csv`] of `rows`): every rank's
/// timeline and the `all` one of every point and repetition. None when no row has a timeline.
pub fn ranks_csv(rows: &[&RunResult]) -> anyhow::Result<Option<String>> {
    let refs: Vec<&RunResult> = rows
        .iter()
        .copied()
        .filter(|r| r.timeline.is_some())
        .collect();
    if refs.is_empty() {
        return Ok(None);
    }
    Ok(Some(timeline_csv(&refs)?))
}

/// The device and CPU columns of `src` into `row`.
fn copy_counters(row: &mut IntervalRow, src: &IntervalRow) {
    row.dev_read_ops = src.dev_read_ops;
    row.dev_read_bytes = src.dev_read_bytes;
    row.dev_read_merges = src.dev_read_merges;
    row.dev_write_ops = src.dev_write_ops;
    row.dev_write_bytes = src.dev_write_bytes;
    row.dev_write_merges = src.dev_write_merges;
    row.dev_avg_req_bytes = src.dev_avg_req_bytes;
    row.dev_in_flight = src.dev_in_flight;
    row.dev_await_ms = src.dev_await_ms;
    row.dev_util_pct = src.dev_util_pct;
    row.cpu_usr_pct = src.cpu_usr_pct;
    row.cpu_sys_pct = src.cpu_sys_pct;
    row.cpu_iowait_pct = src.cpu_iowait_pct;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::measure::device::Sampler;
    use crate::measure::{Snapshot, SnapshotKind, TimelineBuilder};
    use std::time::Duration;

    /// A 1 s timeline of `secs` intervals, each with `per_s` operations of `lat_ns` (the last
    /// `slow_from`.. intervals at a tenth of the bytes).
    pub(crate) fn timeline(secs: u64, lat_ns: u64, slow_from: Option<u64>) -> Timeline {
        let mut b = TimelineBuilder::new(Duration::from_secs(1), Sampler { device: None });
        for i in 1..=secs * 10 {
            let mut latency = new_latency_histogram();
            latency.record_n(lat_ns, 10).unwrap();
            let slow = slow_from.is_some_and(|s| i > s * 10);
            b.add(&Snapshot {
                worker: 0,
                at_ns: i * 100_000_000,
                interval_ns: 100_000_000,
                bytes: if slow { 1 << 20 } else { 10 << 20 },
                ops: 10,
                latency,
                ops_log: Vec::new(),
                paced: None,
                mixed: None,
                kind: SnapshotKind::Interval,
            });
        }
        b.finish(secs * 1_000_000_000, Op::Read, false, 1 << 30)
    }

    #[test]
    fn the_all_timeline_adds_the_ranks_intervals_and_merges_their_histograms() {
        let fast = timeline(4, 10_000, None);
        let slow = timeline(4, 1_000_000, None);
        let ranks = [
            Placed {
                rank: 0,
                host: "a",
                offset_ns: 0,
                timeline: &fast,
            },
            Placed {
                rank: 1,
                host: "b",
                offset_ns: 2_000_000,
                timeline: &slow,
            },
        ];
        let all = merged(&ranks, Op::Read, false, 80 << 20).unwrap();
        assert_eq!(all.rows.len(), 4);
        for (j, row) in all.rows.iter().enumerate() {
            assert_eq!(row.ops, fast.rows[j].ops + slow.rows[j].ops);
            assert_eq!(row.bytes, 200 << 20);
            // Half the operations at 10 µs, half at 1 ms: the union's p50 is the fast one, its
            // p99 the slow one; an average of the ranks' p99s would be ~505 µs.
            assert!(row.lat_p50_us < 11.0, "{row:?}");
            assert!(row.lat_p99_us > 990.0, "{row:?}");
        }
        // The last interval ends where the late rank ended.
        assert!((all.rows[3].t_end_s - 4.002).abs() < 1e-9);
        assert_eq!(
            all.total_latency().len(),
            fast.total_latency().len() + slow.total_latency().len()
        );
        // Two hosts: no device columns summed into a device that does not exist.
        assert_eq!(all.device, None);
        assert!(all.reading.bytes_ratio.is_none());
    }

    #[test]
    fn a_rank_that_started_an_interval_late_lands_one_interval_later() {
        let t = timeline(3, 10_000, None);
        let ranks = [
            Placed {
                rank: 0,
                host: "h",
                offset_ns: 0,
                timeline: &t,
            },
            Placed {
                rank: 1,
                host: "h",
                offset_ns: 1_000_000_000,
                timeline: &t,
            },
        ];
        let all = merged(&ranks, Op::Read, false, 1).unwrap();
        let ops: Vec<u64> = all.rows.iter().map(|r| r.ops).collect();
        assert_eq!(ops, [100, 200, 200, 100]);
        let moved = shifted(&t, 1_000_000_000);
        assert!((moved.rows[0].t_start_s - 1.0).abs() < 1e-9);
        assert_eq!(moved.rows[0].ops, t.rows[0].ops);
    }

    #[test]
    fn a_level_shift_of_the_whole_fleet_is_found_in_the_all_timeline() {
        let drops = timeline(10, 10_000, Some(5));
        let ranks: Vec<Placed> = (0..3)
            .map(|r| Placed {
                rank: r,
                host: "h",
                offset_ns: r as u64 * 1000,
                timeline: &drops,
            })
            .collect();
        let all = merged(&ranks, Op::Read, false, 1).unwrap();
        let s = all.reading.level_shift.expect("a shift");
        assert!((s.at_s - 5.0).abs() < 1e-9, "{s:?}");
        assert!((s.before_mib_s - 300.0).abs() < 1.0, "{s:?}");
        assert!(merged(&[], Op::Read, false, 1).is_none());
    }
}
