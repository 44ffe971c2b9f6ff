//! `diskscope clients --out clients.svg A.csv B.csv ...` (MPI builds): the "clients" figure. One
//! fleet sweep runs at one rank count, so scaling with the number of clients is a comparison of
//! several runs' CSVs: their aggregate rows (`rank = all`) go on an x axis of clients, one series
//! per point (operation, block size, method...), bars the mean over repetitions with min–max
//! whiskers. Drawn by the same chart code as every other figure.

use crate::config::usage;
use crate::export::chart::{Category, Chart, Series};
use crate::measure::stats::Stats;
use crate::measure::RunResult;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Arguments of `diskscope clients`.
#[derive(clap::Args, Debug, Clone)]
pub struct ClientsArgs {
    /// Fleet CSVs (`<experiment>.csv` of `mpirun ... diskscope --batch`), one per rank count
    #[arg(required = true, value_name = "CSV")]
    pub csvs: Vec<PathBuf>,
    /// The SVG to write (refuses an existing file without --force)
    #[arg(long, value_name = "SVG")]
    pub out: PathBuf,
    /// Replace an existing --out file
    #[arg(long)]
    pub force: bool,
}

/// Reads the aggregate rows of fleet CSVs; the error names the file and the fix.
pub fn aggregate_rows(paths: &[PathBuf]) -> anyhow::Result<Vec<RunResult>> {
    let mut rows = Vec::new();
    for p in paths {
        let mut rd = ::csv::Reader::from_path(p).map_err(|e| {
            usage(format!(
                "CSV: cannot read {}: {e}",
                crate::text::shown_path(p)
            ))
        })?;
        let mut any_fleet = false;
        for (i, r) in rd.deserialize::<RunResult>().enumerate() {
            let r = r.map_err(|e| {
                usage(format!(
                    "CSV: {}:{}: not a diskscope results row: {e}",
                    crate::text::shown_path(p),
                    i + 2
                ))
            })?;
            any_fleet |= r.fleet.is_some();
            if r.fleet.as_ref().is_some_and(|f| f.rank == "all") && r.figures.error.is_empty() {
                rows.push(r);
            }
        }
        if !any_fleet {
            return Err(usage(format!(
                "CSV: {} has no rank column; give the CSV of a fleet run (mpirun ... --batch)",
                crate::text::shown_path(p)
            )));
        }
    }
    Ok(rows)
}

/// What makes two aggregate rows the same point (everything but the rank count and results).
fn point_of(r: &RunResult) -> String {
    format!(
        "{} {} {} {} {}{} t{}",
        r.setup.op,
        r.setup.method,
        r.setup.pattern,
        crate::size::format_size(r.setup.block_size_bytes),
        r.setup.cache,
        if r.setup.direct { " direct" } else { "" },
        r.setup.threads
    )
}

/// The chart: x = clients, one series per point, MiB/s of the fleet.
pub fn clients_chart(rows: &[RunResult]) -> Option<Chart> {
    let mut clients: Vec<u32> = rows
        .iter()
        .filter_map(|r| r.fleet.as_ref().map(|f| f.clients))
        .collect();
    clients.sort_unstable();
    clients.dedup();
    if clients.is_empty() {
        return None;
    }
    let mut by_point: BTreeMap<String, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for r in rows {
        if let Some(c) = r.fleet.as_ref().map(|f| f.clients) {
            by_point
                .entry(point_of(r))
                .or_default()
                .entry(c)
                .or_default()
                .push(r.figures.mib_s);
        }
    }
    let categories = clients
        .iter()
        .enumerate()
        .map(|(i, c)| Category {
            label: c.to_string(),
            pos: i as f64,
        })
        .collect();
    let series = by_point
        .into_iter()
        .map(|(name, cells)| Series {
            name,
            cells: clients
                .iter()
                .map(|c| cells.get(c).map(|v| Stats::of(v)))
                .collect(),
        })
        .collect();
    Some(Chart {
        title: "fleet throughput by number of clients".into(),
        x_label: "clients (MPI ranks)".into(),
        y_label: "MiB/s (all ranks, first start to last end)".into(),
        subtitle: String::new(),
        y_scale: crate::export::chart::YScale::Auto,
        categories,
        series,
        model: Vec::new(),
        suspect: Vec::new(),
    })
}

pub fn execute(a: &ClientsArgs) -> anyhow::Result<i32> {
    let rows = aggregate_rows(&a.csvs)?;
    let Some(chart) = clients_chart(&rows) else {
        return Err(usage(
            "CSV: no successful aggregate (rank = all) rows in the given files",
        ));
    };
    crate::export::manager::write_file(
        &a.out,
        crate::export::svg::render(&chart)?.as_bytes(),
        a.force,
        "--out",
    )?;
    crate::eprintln_shown!(
        "wrote {} ({} points x {} client counts)",
        crate::text::shown_path(&a.out),
        chart.series.len(),
        chart.categories.len()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(clients: u32, bs: u64, mib_s: f64) -> RunResult {
        let mut r = RunResult {
            setup: crate::config::RecordedSetup {
                op: crate::config::Op::Read.into(),
                method: crate::config::Method::Pread.into(),
                block_size_bytes: bs,
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                mib_s,
                ..Default::default()
            },
            ..Default::default()
        };
        crate::fleet::aggregate::mark_all(
            &mut r,
            clients as usize,
            crate::fleet::Layout::SharedFile,
        );
        r
    }

    #[test]
    fn the_clients_chart_has_one_category_per_rank_count_and_one_series_per_point() {
        let rows = vec![
            row(4, 4096, 100.0),
            row(1, 4096, 30.0),
            row(1, 4096, 50.0),
            row(4, 1 << 20, 400.0),
        ];
        let c = clients_chart(&rows).unwrap();
        let labels: Vec<&str> = c.categories.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["1", "4"]);
        assert_eq!(c.series.len(), 2);
        let small = c.series.iter().find(|s| s.name.contains("4K")).unwrap();
        assert_eq!(small.cells[0].as_ref().unwrap().mean, 40.0);
        assert_eq!(small.cells[1].as_ref().unwrap().n, 1);
        let big = c.series.iter().find(|s| s.name.contains("1M")).unwrap();
        assert!(big.cells[0].is_none());
    }

    #[test]
    fn fleet_csvs_are_read_back_and_plain_csvs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fleet = dir.path().join("fleet.csv");
        let mut rank0 = row(2, 4096, 10.0);
        rank0.fleet.as_mut().unwrap().rank = "0".into();
        let text =
            crate::export::csv::to_csv(&[rank0, row(2, 4096, 20.0), row(2, 4096, 30.0)]).unwrap();
        std::fs::write(&fleet, text).unwrap();
        let rows = aggregate_rows(std::slice::from_ref(&fleet)).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].figures.mib_s, 30.0);
        let plain = dir.path().join("plain.csv");
        std::fs::write(
            &plain,
            crate::export::csv::to_csv(&[RunResult::default()]).unwrap(),
        )
        .unwrap();
        let e = aggregate_rows(&[plain]).unwrap_err().to_string();
        assert!(e.contains("has no rank column"), "{e}");
        let svg = dir.path().join("c.svg");
        let a = ClientsArgs {
            csvs: vec![fleet],
            out: svg.clone(),
            force: false,
        };
        assert_eq!(execute(&a).unwrap(), 0);
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
        let e = execute(&a).unwrap_err().to_string();
        assert!(e.contains("already exists; pass --force"), "{e}");
    }
}
