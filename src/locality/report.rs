//! The locality table: per cache mode and order, the total time of a repetition (mean ± sample
//! standard deviation over repetitions), per-access latency p50 / p99 over all repetitions, and
//! the dir / packed ratio of the mean totals. A pure function of the measured passes, so it is
//! the same whether the run finished or was stopped.

use super::experiment::Measured;
use crate::measure::stats::Stats;
use crate::measure::{new_latency_histogram, LatencySummary};
use std::fmt::Write;

/// Summary of one layout under one cache mode and order.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cache: String,
    pub order: String,
    pub layout: String,
    pub reps: usize,
    pub accesses_per_rep: u64,
    pub total_ms: Stats,
    pub p50_us: f64,
    pub p99_us: f64,
    pub mib_s_mean: f64,
}

/// Groups passes into rows, in the order the groups first appear.
pub fn rows(passes: &[Measured]) -> Vec<Row> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for m in passes {
        let k = (
            m.result.setup.cache.to_string(),
            m.result.setup.pattern.to_string(),
            m.result.setup.method.to_string(),
        );
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    // Groups in the order they were measured; inside a group, dir before packed.
    keys.sort_by_key(|(c, o, l)| (keys_pos(passes, c, o), l.clone()));
    keys.into_iter()
        .map(|(cache, order, layout)| {
            let group: Vec<&Measured> = passes
                .iter()
                .filter(|m| {
                    m.result.setup.cache.as_str() == cache
                        && m.result.setup.pattern.as_str() == order
                        && m.result.setup.method.as_str() == layout
                })
                .collect();
            let mut hist = new_latency_histogram();
            for m in &group {
                hist.add(&m.hist)
                    .expect("latency histograms share their bounds");
            }
            let lat = LatencySummary::of(&hist);
            let ms: Vec<f64> = group
                .iter()
                .map(|m| m.result.figures.seconds * 1e3)
                .collect();
            let mib: Vec<f64> = group.iter().map(|m| m.result.figures.mib_s).collect();
            Row {
                cache,
                order,
                layout,
                reps: group.len(),
                accesses_per_rep: group.first().map_or(0, |m| m.result.figures.ops),
                total_ms: Stats::of(&ms),
                p50_us: lat.p50_us,
                p99_us: lat.p99_us,
                mib_s_mean: Stats::of(&mib).mean,
            }
        })
        .collect()
}

fn keys_pos(passes: &[Measured], cache: &str, order: &str) -> usize {
    passes
        .iter()
        .position(|m| {
            m.result.setup.cache.as_str() == cache && m.result.setup.pattern.as_str() == order
        })
        .unwrap_or(usize::MAX)
}

fn ratio(rows: &[Row], cache: &str, order: &str) -> Option<f64> {
    let mean = |layout: &str| {
        rows.iter()
            .find(|r| r.cache == cache && r.order == order && r.layout == layout)
            .map(|r| r.total_ms.mean)
    };
    match (mean("dir"), mean("packed")) {
        (Some(d), Some(p)) if p > 0.0 => Some(d / p),
        _ => None,
    }
}

/// The tables, one per cache mode × order, then a one-line-per-group summary.
pub fn table(passes: &[Measured], file_size_bytes: u64) -> String {
    let rows = rows(passes);
    let mut out = String::new();
    let mut groups: Vec<(String, String)> = Vec::new();
    for r in &rows {
        let g = (r.cache.clone(), r.order.clone());
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    for (cache, order) in &groups {
        let in_group: Vec<&Row> = rows
            .iter()
            .filter(|r| &r.cache == cache && &r.order == order)
            .collect();
        let first = in_group[0];
        let _ = writeln!(
            out,
            "order {order}, cache {cache}: {} accesses of {} per repetition, {} repetition{}",
            first.accesses_per_rep,
            crate::size::format_size(file_size_bytes),
            first.reps,
            if first.reps == 1 { "" } else { "s" }
        );
        let _ = writeln!(
            out,
            "  {:<8} {:>24} {:>10} {:>10} {:>10}",
            "layout", "total ms (mean ± sd)", "p50 µs", "p99 µs", "MiB/s"
        );
        for r in &in_group {
            let _ = writeln!(
                out,
                "  {:<8} {:>13.2} ± {:>8.2} {:>10.2} {:>10.2} {:>10.1}",
                r.layout, r.total_ms.mean, r.total_ms.stddev, r.p50_us, r.p99_us, r.mib_s_mean
            );
        }
        if let Some(x) = ratio(&rows, cache, order) {
            let _ = writeln!(out, "  dir / packed: {x:.2}× the time");
        }
        out.push('\n');
    }
    if groups.len() > 1 {
        let _ = writeln!(out, "summary: mean total ms per repetition");
        let _ = writeln!(
            out,
            "  {:<9} {:<11} {:>12} {:>12} {:>14}",
            "cache", "order", "dir", "packed", "dir / packed"
        );
        for (cache, order) in &groups {
            let ms = |layout: &str| {
                rows.iter()
                    .find(|r| &r.cache == cache && &r.order == order && r.layout == layout)
                    .map_or("-".to_string(), |r| format!("{:.2}", r.total_ms.mean))
            };
            let x = ratio(&rows, cache, order).map_or("-".to_string(), |x| format!("{x:.2}×"));
            let _ = writeln!(
                out,
                "  {:<9} {:<11} {:>12} {:>12} {:>14}",
                cache,
                order,
                ms("dir"),
                ms("packed"),
                x
            );
        }
    }
    out
}

/// `locality --json`: one document (see `explain::json`) with the context of the layout's
/// directory, the parameters, every pass as a result row (the batch CSV's columns, latency
/// percentiles included) and the summary rows of the table under `summary`.
pub fn json_document(
    p: &super::params::Params,
    passes: &[Measured],
    completed: bool,
) -> anyhow::Result<String> {
    let ctx = crate::explain::context::Context::collect(&p.dir);
    let setup = serde_json::json!({
        "dir": p.dir.display().to_string(),
        "files": p.files,
        "file_size_bytes": p.file_size_bytes,
        "orders": p.orders.iter().map(|o| format!("{o:?}").to_lowercase()).collect::<Vec<_>>(),
        "trace": p.trace.as_ref().map(|t| t.display().to_string()),
        "reps": p.reps,
        "caches": p.caches.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        "pack_order": format!("{:?}", p.pack_order).to_lowercase(),
        "fanout": p.fanout,
        "seed": p.seed,
        "completed": completed,
    });
    let results: Vec<&crate::measure::RunResult> = passes.iter().map(|m| &m.result).collect();
    let summary: Vec<serde_json::Value> = rows(passes)
        .iter()
        .map(|r| {
            serde_json::json!({
                "cache": r.cache, "order": r.order, "layout": r.layout, "reps": r.reps,
                "accesses_per_rep": r.accesses_per_rep,
                "total_ms_mean": r.total_ms.mean, "total_ms_stddev": r.total_ms.stddev,
                "total_ms_min": r.total_ms.min, "total_ms_max": r.total_ms.max,
                "lat_p50_us": r.p50_us, "lat_p99_us": r.p99_us, "mib_s_mean": r.mib_s_mean,
            })
        })
        .collect();
    let doc = crate::explain::json::document(
        "locality",
        &ctx,
        setup,
        &results,
        &vec![None; results.len()],
        &["locality passes are not modelled: many small files, not one block size".to_string()],
    )?;
    let mut v: serde_json::Value = serde_json::from_str(&doc)?;
    v["summary"] = serde_json::Value::Array(summary);
    Ok(serde_json::to_string_pretty(&v)?)
}
