//! From the ranks' reports of one point to CSV rows, computed as IOR does:
//!
//! * throughput = total bytes of all ranks / (latest end − earliest start), so a slow rank
//!   stretches the interval instead of being averaged away — the figure a shared filesystem
//!   gave the whole fleet;
//! * the spread: slowest and fastest rank (MiB/s of its own interval) and which host the slowest
//!   ran on, plus the start skew (latest − earliest start after the barrier), which bounds how
//!   "at the same moment" the point really was;
//! * latency percentiles of the merged histogram (every operation of every rank), never an
//!   average of per-rank percentiles, which has no meaning;
//! * a mixed point (issue 26) the same way, direction by direction: the reads' and the writes'
//!   bytes and operations summed, their MiB/s and IOPS over the same span as the whole, the
//!   share of reads done from the summed operations, and each direction's percentiles from its
//!   merged histogram ([`super::wire::MixedLatency`]).
//!
//! Pure functions of the reports, so the arithmetic is tested without MPI.

use super::options::Layout;
use super::wire::RankReport;
use crate::measure::histogram::new_latency_histogram;
use crate::measure::result::FleetRow;
use crate::measure::{LatencySummary, RunResult};
use crate::xor::format_xor;
use std::sync::Arc;

/// Every rank's row (by rank), then the aggregate row (`rank = all`). A rank's row carries its
/// timeline on the fleet's clock and, in `start_skew_us`, how much later than the earliest rank
/// it started; the aggregate row carries the merged timeline ([`super::timeline::merged`]) and
/// the largest skew.
pub fn rows(reports: &[RankReport], clients: usize, layout: Layout) -> Vec<RunResult> {
    let start = reports.iter().map(|r| r.start_unix_ns).min().unwrap_or(0);
    let mut out: Vec<RunResult> = reports
        .iter()
        .map(|r| {
            let mut row = r.result.clone();
            mark(&mut row, &r.rank.to_string(), clients, layout);
            let offset_ns = r.start_unix_ns.saturating_sub(start);
            if let Some(f) = &mut row.fleet {
                f.stopped_early = !r.stopped_by.is_empty();
                f.start_skew_us = Some(offset_ns as f64 / 1000.0);
            }
            row.timeline = r
                .timeline
                .as_ref()
                .map(|t| Arc::new(super::timeline::shifted(t, offset_ns)));
            row
        })
        .collect();
    let all = aggregate_row(reports, clients, layout);
    out.push(all);
    out
}

/// Fills the fleet columns of an aggregate (`rank = all`) row, empty where there is no value.
pub fn mark_all(row: &mut RunResult, clients: usize, layout: Layout) {
    mark(row, "all", clients, layout);
}

fn mark(row: &mut RunResult, rank: &str, clients: usize, layout: Layout) {
    row.fleet = Some(FleetRow {
        rank: rank.to_string(),
        clients: clients as u32,
        layout,
        ..Default::default()
    });
}

/// The `rank = all` row of a point.
pub fn aggregate_row(reports: &[RankReport], clients: usize, layout: Layout) -> RunResult {
    let Some(first) = reports.first() else {
        let mut r = RunResult::default();
        mark(&mut r, "all", clients, layout);
        r.figures.error = "no rank reported".into();
        return r;
    };
    let mut row = first.result.clone();
    mark(&mut row, "all", clients, layout);
    row.identity.host = distinct_hosts(reports);
    if layout == Layout::FilePerProcess {
        row.identity.file = format!(
            "{}.{{rank}}",
            strip_rank(&first.result.identity.file, first.rank)
        );
    }
    row.figures.bytes = reports.iter().map(|r| r.result.figures.bytes).sum();
    row.figures.ops = reports.iter().map(|r| r.result.figures.ops).sum();
    row.figures.block_count = reports.iter().map(|r| r.result.figures.block_count).sum();
    row.identity.file_size_bytes = match layout {
        Layout::SharedFile => reports
            .iter()
            .map(|r| r.result.identity.file_size_bytes)
            .max()
            .unwrap_or(0),
        Layout::FilePerProcess => reports
            .iter()
            .map(|r| r.result.identity.file_size_bytes)
            .sum(),
    };
    let start = reports.iter().map(|r| r.start_unix_ns).min().unwrap_or(0);
    let end = reports.iter().map(|r| r.end_unix_ns).max().unwrap_or(0);
    let latest_start = reports.iter().map(|r| r.start_unix_ns).max().unwrap_or(0);
    row.figures.seconds = end.saturating_sub(start) as f64 / 1e9;
    row.set_rates();
    let mut merged = new_latency_histogram();
    for r in reports {
        // Same bounds everywhere (the wire rebuilds with new_latency_histogram), so this adds.
        let _ = merged.add(&r.latency);
    }
    row.set_latency(&LatencySummary::of(&merged));
    mix_all(&mut row, reports);
    row.figures.residency_before_pct = reports
        .iter()
        .map(|r| r.result.figures.residency_before_pct)
        .sum::<f64>()
        / reports.len() as f64;
    row.figures.xor = combined_xor(reports, layout)
        .map(format_xor)
        .unwrap_or_default();
    row.figures.error = reports
        .iter()
        .find(|r| !r.result.figures.error.is_empty())
        .map(|r| {
            format!(
                "rank {} ({}): {}",
                r.rank, r.result.identity.host, r.result.figures.error
            )
        })
        .unwrap_or_default();
    let stopped_early = reports.iter().any(|r| !r.stopped_by.is_empty());
    let slowest = reports
        .iter()
        .min_by(|a, b| a.result.figures.mib_s.total_cmp(&b.result.figures.mib_s))
        .expect("at least one report");
    let fastest = reports
        .iter()
        .max_by(|a, b| a.result.figures.mib_s.total_cmp(&b.result.figures.mib_s))
        .expect("at least one report");
    if let Some(f) = &mut row.fleet {
        f.stopped_early = stopped_early;
        f.rank_min_mib_s = Some(slowest.result.figures.mib_s);
        f.rank_max_mib_s = Some(fastest.result.figures.mib_s);
        f.slowest = format!("{}#{}", slowest.result.identity.host, slowest.rank);
        f.start_skew_us = Some(latest_start.saturating_sub(start) as f64 / 1000.0);
    }
    let placed: Vec<super::timeline::Placed> = reports
        .iter()
        .filter_map(|r| {
            Some(super::timeline::Placed {
                rank: r.rank,
                host: &r.result.identity.host,
                offset_ns: r.start_unix_ns.saturating_sub(start),
                timeline: r.timeline.as_ref()?,
            })
        })
        .collect();
    let op = row.setup.op.known().unwrap_or(crate::config::Op::Read);
    row.timeline =
        super::timeline::merged(&placed, op, row.setup.direct, row.figures.bytes).map(Arc::new);
    super::verdict::fill_all(&mut row, reports);
    row
}

/// Fills a mixed point's per-direction columns of the `all` row (after its `seconds` and
/// rates): the ranks' bytes and operations summed by direction, rates over the fleet's span,
/// percentiles of the merged histograms. A rank whose report has no histograms by direction
/// (sent by a build without them) leaves the percentiles empty rather than merged from part of
/// the operations. Nothing for a pure point.
fn mix_all(row: &mut RunResult, reports: &[RankReport]) {
    use crate::measure::snapshot::{DirectionShare, MixedSnapshot};
    let Some(asked) = reports.iter().find_map(|r| r.result.setup.mix_read_pct) else {
        return;
    };
    let mut merged = MixedSnapshot::new();
    let mut whole = true;
    for r in reports {
        let m = r.result.mix.clone().unwrap_or_default();
        let (read_lat, write_lat) = match &r.mixed_latency {
            Some(m) => (m.read.clone(), m.write.clone()),
            None => {
                whole &= m.read_ops + m.write_ops == 0;
                (new_latency_histogram(), new_latency_histogram())
            }
        };
        merged.add(&MixedSnapshot {
            read: DirectionShare {
                bytes: m.read_bytes,
                ops: m.read_ops,
                latency: read_lat,
            },
            write: DirectionShare {
                bytes: m.write_bytes,
                ops: m.write_ops,
                latency: write_lat,
            },
        });
    }
    row.set_mixed(asked, &merged);
    if let Some(m) = row.mix.as_mut().filter(|_| !whole) {
        // Not known: empty cells (NaN).
        for v in [
            &mut m.read_lat_p50_us,
            &mut m.read_lat_p90_us,
            &mut m.read_lat_p99_us,
            &mut m.read_lat_p999_us,
            &mut m.read_lat_max_us,
            &mut m.write_lat_p50_us,
            &mut m.write_lat_p90_us,
            &mut m.write_lat_p99_us,
            &mut m.write_lat_p999_us,
            &mut m.write_lat_max_us,
        ] {
            *v = f64::NAN;
        }
    }
}

/// A mixed point's `all` row told by direction, for the fleet's summary on stderr:
/// `fleet mix: reads 69.9% of ops (70% asked): 12.3 MiB/s, 3150 IOPS, p99 87.0 µs | writes:
/// ...`; None for a pure point.
pub fn mix_line(all: &RunResult) -> Option<String> {
    let asked = all.setup.mix_read_pct?;
    let m = all.mix.clone().unwrap_or_default();
    let side = |mib_s: f64, iops: f64, p99: f64| {
        format!(
            "{mib_s:.1} MiB/s, {iops:.0} IOPS, p99 {}",
            if p99.is_nan() {
                "-".to_string()
            } else {
                format!("{p99:.1} µs")
            }
        )
    };
    Some(format!(
        "fleet mix: reads {} of ops ({asked}% asked): {} | writes: {}",
        m.mix_read_pct_done
            .map_or("-".to_string(), |d| format!("{d:.1}%")),
        side(m.read_mib_s, m.read_iops, m.read_lat_p99_us),
        side(m.write_mib_s, m.write_iops, m.write_lat_p99_us)
    ))
}

/// The XOR of the whole shared file: the ranks' XORs of their disjoint ranges (taken at absolute
/// offsets, see [`crate::xor`]) combine with plain XOR. Only when every rank covered its range;
/// None for file-per-process, where each rank's file has its own checksum.
pub fn combined_xor(reports: &[RankReport], layout: Layout) -> Option<u32> {
    if layout != Layout::SharedFile {
        return None;
    }
    reports
        .iter()
        .map(|r| r.xor_full)
        .try_fold(0u32, |acc, x| x.map(|x| acc ^ x))
}

fn distinct_hosts(reports: &[RankReport]) -> String {
    let mut hosts: Vec<&str> = reports
        .iter()
        .map(|r| r.result.identity.host.as_str())
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    hosts.join(" ")
}

/// `/data/f.3` of rank 3 → `/data/f`.
fn strip_rank(file: &str, rank: usize) -> &str {
    file.strip_suffix(&format!(".{rank}")).unwrap_or(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xor::xor_at;

    const S: u64 = 1_000_000_000;

    fn report(
        rank: usize,
        host: &str,
        bytes: u64,
        start_ns: u64,
        end_ns: u64,
        lat: &[u64],
    ) -> RankReport {
        let mut latency = new_latency_histogram();
        for v in lat {
            latency.record(*v).unwrap();
        }
        let mut result = RunResult {
            identity: crate::measure::result::Identity {
                host: host.into(),
                file: format!("/d/f.{rank}"),
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                bytes,
                ops: lat.len() as u64,
                seconds: (end_ns - start_ns) as f64 / 1e9,
                ..Default::default()
            },
            ..Default::default()
        };
        result.set_rates();
        RankReport {
            rank,
            result,
            start_unix_ns: start_ns,
            end_unix_ns: end_ns,
            xor_full: None,
            stopped_by: String::new(),
            latency,
            mixed_latency: None,
            timeline: None,
        }
    }

    /// A rank's report of a mix: `reads` operations of 4 KiB at `read_ns`, `writes` at
    /// `write_ns`, over `start_ns..end_ns`.
    fn mixed_report(
        rank: usize,
        (start_ns, end_ns): (u64, u64),
        (reads, read_ns): (u64, u64),
        (writes, write_ns): (u64, u64),
    ) -> RankReport {
        use crate::measure::snapshot::MixedSnapshot;
        let lat = |n: u64, ns: u64| {
            let mut h = new_latency_histogram();
            if n > 0 {
                h.record_n(ns, n).unwrap();
            }
            h
        };
        let mut all = lat(reads, read_ns);
        all.add(lat(writes, write_ns)).unwrap();
        let mut r = report(rank, "h", (reads + writes) << 12, start_ns, end_ns, &[]);
        r.result.figures.ops = reads + writes;
        r.latency = all;
        let mut m = MixedSnapshot::new();
        m.read.ops = reads;
        m.read.bytes = reads << 12;
        m.read.latency = lat(reads, read_ns);
        m.write.ops = writes;
        m.write.bytes = writes << 12;
        m.write.latency = lat(writes, write_ns);
        r.result.set_rates();
        r.result.set_mixed(70, &m);
        r.mixed_latency = Some(super::super::wire::MixedLatency {
            read: m.read.latency.clone(),
            write: m.write.latency.clone(),
        });
        r
    }

    #[test]
    fn a_mixed_points_all_row_sums_each_direction_and_merges_its_histograms() {
        // Rank 0: 700 fast reads, 300 writes of 1 ms; rank 1: 690 reads, 10 slow writes of
        // 50 ms, ending later. The fleet's write p99 is the slow rank's tail only if the
        // histograms merge: 10 of 310 writes is over 1 %.
        let reps = vec![
            mixed_report(0, (0, S), (700, 10_000), (300, 1_000_000)),
            mixed_report(1, (0, 2 * S), (690, 10_000), (10, 50_000_000)),
        ];
        let rows = rows(&reps, 2, Layout::FilePerProcess);
        let all = &rows[2];
        assert_eq!(all.setup.op.as_str(), "mix");
        assert_eq!(all.setup.mix_read_pct, Some(70));
        assert_eq!(
            (
                all.mix.as_ref().map(|m| m.read_ops),
                all.mix.as_ref().map(|m| m.write_ops)
            ),
            (Some(1390), Some(310))
        );
        assert_eq!(all.mix.as_ref().map(|m| m.read_bytes), Some(1390 << 12));
        let done = all.mix.as_ref().and_then(|m| m.mix_read_pct_done).unwrap();
        assert!((done - 1390.0 * 100.0 / 1700.0).abs() < 1e-9, "{done}");
        // Over the fleet's span (2 s), as the whole row's MiB/s.
        assert!((all.mix.as_ref().map(|m| m.read_iops).unwrap() - 695.0).abs() < 1e-9);
        let mib = |b: u64| b as f64 / (1 << 20) as f64 / 2.0;
        assert!((all.mix.as_ref().map(|m| m.write_mib_s).unwrap() - mib(310 << 12)).abs() < 1e-12);
        assert!((all.figures.seconds - 2.0).abs() < 1e-12);
        let p99 = all.mix.as_ref().map(|m| m.write_lat_p99_us).unwrap();
        assert!(
            p99 > 49_000.0,
            "the slow rank's writes are in the tail: {p99}"
        );
        assert!(all.mix.as_ref().map(|m| m.read_lat_p99_us).unwrap() < 11.0);
        // Each rank's row keeps its own directions.
        assert_eq!(rows[0].mix.as_ref().map(|m| m.write_ops), Some(300));
        assert_eq!(rows[1].mix.as_ref().map(|m| m.read_ops), Some(690));
        // A report without the histograms by direction: sums stay, percentiles are left empty.
        let mut old = reps.clone();
        old[1].mixed_latency = None;
        let all = aggregate_row(&old, 2, Layout::FilePerProcess);
        assert_eq!(all.mix.as_ref().map(|m| m.write_ops), Some(310));
        assert!(all.mix.as_ref().unwrap().write_lat_p99_us.is_nan());
        // A pure point has no mixed columns.
        let pure = aggregate_row(&[report(0, "a", 1, 0, S, &[1])], 1, Layout::FilePerProcess);
        assert_eq!(pure.setup.mix_read_pct, None);
    }

    #[test]
    fn throughput_is_total_bytes_over_the_span_from_first_start_to_last_end() {
        let mib = 1 << 20;
        let reps = vec![
            report(0, "a", 100 * mib, 10 * S, 11 * S, &[1000]),
            report(1, "b", 100 * mib, 10 * S + S / 10, 14 * S, &[1000]),
        ];
        let rows = rows(&reps, 2, Layout::FilePerProcess);
        assert_eq!(rows.len(), 3);
        let all = &rows[2];
        assert_eq!(
            all.fleet.as_ref().map(|f| f.rank.clone()).as_deref(),
            Some("all")
        );
        assert_eq!(all.figures.bytes, 200 * mib);
        assert!((all.figures.seconds - 4.0).abs() < 1e-9);
        assert!(
            (all.figures.mib_s - 50.0).abs() < 1e-9,
            "{}",
            all.figures.mib_s
        );
        assert_eq!(
            all.fleet.as_ref().map(|f| f.slowest.clone()).as_deref(),
            Some("b#1")
        );
        assert!(
            (all.fleet
                .as_ref()
                .map(|f| f.rank_max_mib_s)
                .unwrap()
                .unwrap()
                - 100.0)
                .abs()
                < 1e-9
        );
        assert!(
            (all.fleet
                .as_ref()
                .map(|f| f.start_skew_us)
                .unwrap()
                .unwrap()
                - 100_000.0)
                .abs()
                < 1e-6
        );
        assert_eq!(all.identity.file, "/d/f.{rank}");
        assert_eq!(all.identity.host, "a b");
        assert_eq!(
            rows[1].fleet.as_ref().map(|f| f.rank.clone()).as_deref(),
            Some("1")
        );
    }

    #[test]
    fn percentiles_come_from_the_merged_histogram_not_an_average() {
        // Rank 0: 99 fast ops; rank 1: 1 slow op. The fleet's p99 is fast, its max slow; an
        // average of the ranks' p99s would be about half the slow value.
        let fast = vec![10_000u64; 99];
        let reps = vec![
            report(0, "a", 1, 0, S, &fast),
            report(1, "a", 1, 0, S, &[50_000_000]),
        ];
        let all = aggregate_row(&reps, 2, Layout::SharedFile);
        assert!(all.figures.lat_p99_us < 11.0, "{}", all.figures.lat_p99_us);
        assert!(
            all.figures.lat_max_us > 49_000.0,
            "{}",
            all.figures.lat_max_us
        );
        assert_eq!(all.figures.ops, 100);
    }

    #[test]
    fn a_shared_file_xor_combines_the_ranks_and_equals_the_whole_files() {
        let data: Vec<u8> = (0..1003u32).map(|i| (i * 13 + 5) as u8).collect();
        let cut = [0usize, 400, 404, 1003];
        let reps: Vec<RankReport> = (0..3)
            .map(|r| {
                let mut rep = report(r, "h", 1, 0, S, &[1]);
                rep.xor_full = Some(xor_at(cut[r] as u64, &data[cut[r]..cut[r + 1]]));
                rep
            })
            .collect();
        assert_eq!(
            combined_xor(&reps, Layout::SharedFile),
            Some(xor_at(0, &data))
        );
        assert_eq!(combined_xor(&reps, Layout::FilePerProcess), None);
        let mut partial = reps.clone();
        partial[1].xor_full = None;
        assert_eq!(combined_xor(&partial, Layout::SharedFile), None);
    }

    #[test]
    fn the_aggregate_row_names_the_rank_that_failed() {
        let mut reps = vec![report(0, "a", 1, 0, S, &[1]), report(1, "b", 1, 0, S, &[1])];
        reps[1].result.figures.error = "pread at offset 4096: Input/output error".into();
        let all = aggregate_row(&reps, 2, Layout::FilePerProcess);
        assert_eq!(
            all.figures.error,
            "rank 1 (b): pread at offset 4096: Input/output error"
        );
    }

    #[test]
    fn rank_rows_carry_their_skew_and_timeline_and_the_all_row_the_merged_one() {
        use crate::fleet::timeline::tests::timeline;
        let mut reps = vec![
            report(0, "a", 40 << 20, 10 * S, 14 * S, &[1000; 40]),
            report(1, "a", 40 << 20, 10 * S + 3_000_000, 14 * S, &[1000; 40]),
        ];
        reps[0].timeline = Some(timeline(4, 10_000, None));
        reps[1].timeline = Some(timeline(4, 10_000, None));
        let rows = rows(&reps, 2, Layout::FilePerProcess);
        assert_eq!(
            rows[0].fleet.as_ref().map(|f| f.start_skew_us),
            Some(Some(0.0))
        );
        assert_eq!(
            rows[1].fleet.as_ref().map(|f| f.start_skew_us),
            Some(Some(3000.0))
        );
        let t1 = rows[1].timeline.as_ref().unwrap();
        assert!(
            (t1.rows[0].t_start_s - 0.003).abs() < 1e-9,
            "{:?}",
            t1.rows[0]
        );
        let all = rows[2].timeline.as_ref().expect("the merged timeline");
        assert_eq!(all.rows.len(), 4);
        assert_eq!(all.rows[0].ops, 200);
    }

    #[test]
    fn the_all_row_is_suspect_when_a_rank_is_and_names_the_ranks() {
        let mut reps: Vec<RankReport> = (0..3)
            .map(|r| report(r, "h", 40 << 20, 0, S, &[1000; 500]))
            .collect();
        for r in &mut reps {
            r.result.judgement.verdict = "ok".into();
        }
        let rows_ok = rows(&reps, 3, Layout::FilePerProcess);
        assert_eq!(
            rows_ok[3].judgement.verdict, "ok",
            "{}",
            rows_ok[3].judgement.why
        );
        for r in [0, 2] {
            reps[r].result.judgement.verdict = "suspect".into();
            reps[r].result.judgement.reasons = "cache_not_disk".into();
            reps[r].result.judgement.why = format!("served from memory on {r}");
        }
        reps[2].result.judgement.reasons = "cache_not_disk;too_short".into();
        reps[2].result.judgement.why = "served from memory on 2 | 0.010 s is short".into();
        let rows = rows(&reps, 3, Layout::FilePerProcess);
        let all = &rows[3];
        assert_eq!(all.judgement.verdict, "suspect");
        assert_eq!(all.judgement.reasons, "cache_not_disk;too_short");
        assert!(
            all.judgement.why.starts_with(
                "2 ranks (rank 0 (h), rank 2 (h)); the first: served from memory on 0 | rank 2 (h): 0.010 s"
            ),
            "{}",
            all.judgement.why
        );
        // The ranks' own rows keep their own verdicts.
        assert_eq!(rows[1].judgement.verdict, "ok");
        assert_eq!(rows[2].judgement.reasons, "cache_not_disk;too_short");
    }

    #[test]
    fn fleet_rows_carry_every_fleet_column_and_plain_rows_none() {
        let reps = vec![report(0, "a", 1, 0, S, &[1])];
        let header = |r: &RunResult| {
            let text = crate::export::csv::to_csv(std::slice::from_ref(r)).unwrap();
            text.lines().next().unwrap().to_string()
        };
        let rows = rows(&reps, 1, Layout::FilePerProcess);
        assert_eq!(header(&rows[0]), header(&rows[1]));
        assert!(header(&rows[0]).ends_with(
            "error,bound,bound_mib_s,pct_of_bound,bound_hint,verdict,reasons,why,rank,clients,layout,stopped_early,rank_min_mib_s,rank_max_mib_s,slowest,start_skew_us"
        ));
        assert!(header(&RunResult::default())
            .ends_with(",xor,error,bound,bound_mib_s,pct_of_bound,bound_hint,verdict,reasons,why"));
    }
}
