//! From the ranks' reports of one point to CSV rows, computed as IOR does:
//!
//! * throughput = total bytes of all ranks / (latest end − earliest start), so a slow rank
//!   stretches the interval instead of being averaged away — the figure a shared filesystem
//!   gave the whole fleet;
//! * the spread: slowest and fastest rank (MiB/s of its own interval) and which host the slowest
//!   ran on, plus the start skew (latest − earliest start after the barrier), which bounds how
//!   "at the same moment" the point really was;
//! * latency percentiles of the merged histogram (every operation of every rank), never an
//!   average of per-rank percentiles, which has no meaning.
//!
//! Pure functions of the reports, so the arithmetic is tested without MPI.

use super::options::Layout;
use super::wire::RankReport;
use crate::measure::histogram::new_latency_histogram;
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
            row.stopped_early = Some(!r.stopped_by.is_empty());
            let offset_ns = r.start_unix_ns.saturating_sub(start);
            row.start_skew_us = Some(Some(offset_ns as f64 / 1000.0));
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
    row.rank = Some(rank.to_string());
    row.clients = Some(clients as u32);
    row.layout = Some(layout);
    row.stopped_early = Some(false);
    row.rank_min_mib_s = Some(None);
    row.rank_max_mib_s = Some(None);
    row.slowest = Some(String::new());
    row.start_skew_us = Some(None);
}

/// The `rank = all` row of a point.
pub fn aggregate_row(reports: &[RankReport], clients: usize, layout: Layout) -> RunResult {
    let Some(first) = reports.first() else {
        let mut r = RunResult::default();
        mark(&mut r, "all", clients, layout);
        r.error = "no rank reported".into();
        return r;
    };
    let mut row = first.result.clone();
    mark(&mut row, "all", clients, layout);
    row.host = distinct_hosts(reports);
    if layout == Layout::FilePerProcess {
        row.file = format!("{}.{{rank}}", strip_rank(&first.result.file, first.rank));
    }
    row.bytes = reports.iter().map(|r| r.result.bytes).sum();
    row.ops = reports.iter().map(|r| r.result.ops).sum();
    row.block_count = reports.iter().map(|r| r.result.block_count).sum();
    row.file_size_bytes = match layout {
        Layout::SharedFile => reports
            .iter()
            .map(|r| r.result.file_size_bytes)
            .max()
            .unwrap_or(0),
        Layout::FilePerProcess => reports.iter().map(|r| r.result.file_size_bytes).sum(),
    };
    let start = reports.iter().map(|r| r.start_unix_ns).min().unwrap_or(0);
    let end = reports.iter().map(|r| r.end_unix_ns).max().unwrap_or(0);
    let latest_start = reports.iter().map(|r| r.start_unix_ns).max().unwrap_or(0);
    row.seconds = end.saturating_sub(start) as f64 / 1e9;
    row.set_rates();
    let mut merged = new_latency_histogram();
    for r in reports {
        // Same bounds everywhere (the wire rebuilds with new_latency_histogram), so this adds.
        let _ = merged.add(&r.latency);
    }
    row.set_latency(&LatencySummary::of(&merged));
    row.residency_before_pct = reports
        .iter()
        .map(|r| r.result.residency_before_pct)
        .sum::<f64>()
        / reports.len() as f64;
    row.xor = combined_xor(reports, layout)
        .map(format_xor)
        .unwrap_or_default();
    row.error = reports
        .iter()
        .find(|r| !r.result.error.is_empty())
        .map(|r| format!("rank {} ({}): {}", r.rank, r.result.host, r.result.error))
        .unwrap_or_default();
    row.stopped_early = Some(reports.iter().any(|r| !r.stopped_by.is_empty()));
    let slowest = reports
        .iter()
        .min_by(|a, b| a.result.mib_s.total_cmp(&b.result.mib_s))
        .expect("at least one report");
    let fastest = reports
        .iter()
        .max_by(|a, b| a.result.mib_s.total_cmp(&b.result.mib_s))
        .expect("at least one report");
    row.rank_min_mib_s = Some(Some(slowest.result.mib_s));
    row.rank_max_mib_s = Some(Some(fastest.result.mib_s));
    row.slowest = Some(format!("{}#{}", slowest.result.host, slowest.rank));
    row.start_skew_us = Some(Some(latest_start.saturating_sub(start) as f64 / 1000.0));
    let placed: Vec<super::timeline::Placed> = reports
        .iter()
        .filter_map(|r| {
            Some(super::timeline::Placed {
                rank: r.rank,
                host: &r.result.host,
                offset_ns: r.start_unix_ns.saturating_sub(start),
                timeline: r.timeline.as_ref()?,
            })
        })
        .collect();
    let op = row.operation.known().unwrap_or(crate::config::Op::Read);
    row.timeline = super::timeline::merged(&placed, op, row.direct, row.bytes).map(Arc::new);
    super::verdict::fill_all(&mut row, reports);
    row
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
    let mut hosts: Vec<&str> = reports.iter().map(|r| r.result.host.as_str()).collect();
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
            host: host.into(),
            file: format!("/d/f.{rank}"),
            bytes,
            ops: lat.len() as u64,
            seconds: (end_ns - start_ns) as f64 / 1e9,
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
            timeline: None,
        }
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
        assert_eq!(all.rank.as_deref(), Some("all"));
        assert_eq!(all.bytes, 200 * mib);
        assert!((all.seconds - 4.0).abs() < 1e-9);
        assert!((all.mib_s - 50.0).abs() < 1e-9, "{}", all.mib_s);
        assert_eq!(all.slowest.as_deref(), Some("b#1"));
        assert!((all.rank_max_mib_s.unwrap().unwrap() - 100.0).abs() < 1e-9);
        assert!((all.start_skew_us.unwrap().unwrap() - 100_000.0).abs() < 1e-6);
        assert_eq!(all.file, "/d/f.{rank}");
        assert_eq!(all.host, "a b");
        assert_eq!(rows[1].rank.as_deref(), Some("1"));
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
        assert!(all.lat_p99_us < 11.0, "{}", all.lat_p99_us);
        assert!(all.lat_max_us > 49_000.0, "{}", all.lat_max_us);
        assert_eq!(all.ops, 100);
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
        reps[1].result.error = "pread at offset 4096: Input/output error".into();
        let all = aggregate_row(&reps, 2, Layout::FilePerProcess);
        assert_eq!(
            all.error,
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
        assert_eq!(rows[0].start_skew_us, Some(Some(0.0)));
        assert_eq!(rows[1].start_skew_us, Some(Some(3000.0)));
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
            r.result.verdict = "ok".into();
        }
        let rows_ok = rows(&reps, 3, Layout::FilePerProcess);
        assert_eq!(rows_ok[3].verdict, "ok", "{}", rows_ok[3].why);
        for r in [0, 2] {
            reps[r].result.verdict = "suspect".into();
            reps[r].result.reasons = "cache_not_disk".into();
            reps[r].result.why = format!("served from memory on {r}");
        }
        reps[2].result.reasons = "cache_not_disk;too_short".into();
        reps[2].result.why = "served from memory on 2 | 0.010 s is short".into();
        let rows = rows(&reps, 3, Layout::FilePerProcess);
        let all = &rows[3];
        assert_eq!(all.verdict, "suspect");
        assert_eq!(all.reasons, "cache_not_disk;too_short");
        assert!(
            all.why.starts_with(
                "2 ranks (rank 0 (h), rank 2 (h)); the first: served from memory on 0 | rank 2 (h): 0.010 s"
            ),
            "{}",
            all.why
        );
        // The ranks' own rows keep their own verdicts.
        assert_eq!(rows[1].verdict, "ok");
        assert_eq!(rows[2].reasons, "cache_not_disk;too_short");
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
