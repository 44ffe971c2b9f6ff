//! What a sweep leaves in its output directory besides the per-repetition CSVs: the summary CSVs,
//! the SVG figures, the timelines (`<name>-timeline.csv`), and the summary table printed on
//! stdout.

use super::experiment::Experiment;
use crate::export::chart::{throughput_chart, Chart, Dim, YScale};
use crate::export::csv::to_csv_tidy as to_csv;
use crate::export::table::{runs_table, syscalls_table};
use crate::export::timeline::to_timeline_csv;
use crate::export::{summarize_runs, summarize_syscalls, svg, RunResult, SyscallRow};
use crate::fsguard::write_output;
use std::path::{Path, PathBuf};

pub use super::experiment::Collected;

/// Preferred x axes of a throughput or command figure.
const X_PREF: [Dim; 8] = [
    Dim::BlockSize,
    Dim::Threads,
    Dim::QueueDepth,
    Dim::Cache,
    Dim::Method,
    Dim::Operation,
    Dim::Pattern,
    Dim::Direct,
];

/// Every file of a finished sweep: each experiment's CSVs and figures (and, with
/// `fio_companions`, its `-fio.txt`), then the cross-experiment comparisons. Returns the paths.
pub fn write_results(
    dir: &Path,
    plan: &super::experiment::Plan,
    done: &[(&Experiment, &Collected)],
    fio_companions: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (x, rows) in done {
        written.extend(write_experiment(dir, x, rows, plan.y_scale, plan.force)?);
        if fio_companions && x.kind.traits().fio_companion {
            let size = plan.file.as_ref().map_or(0, |f| f.size_bytes);
            written.extend(write_fio_companion(dir, x, size, plan.force)?);
        }
    }
    written.extend(write_compare(
        dir,
        &plan.name,
        &plan.compare,
        done,
        plan.y_scale,
        plan.force,
    )?);
    Ok(written)
}

/// The summary CSV and the figure of an experiment whose rows are runs (throughput, command,
/// locality): `dims` are the figure's preferred x axes (default: block size, threads, ...).
pub fn runs_summary(
    title: &str,
    rows: &Collected,
    dims: Option<&[Dim]>,
) -> anyhow::Result<(String, Option<Chart>)> {
    Ok((
        to_csv(&summarize_runs(&rows.runs))?,
        throughput_chart(title, &rows.runs, dims.unwrap_or(&X_PREF)),
    ))
}

/// Writes `<name>-summary.csv` and `<name>.svg` of one experiment; returns the files written.
pub fn write_experiment(
    dir: &Path,
    x: &Experiment,
    rows: &Collected,
    y_scale: YScale,
    force: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let summary = dir.join(format!("{}-summary.csv", x.name));
    let (csv, chart) = x.kind.summary(x, rows)?;
    if !csv.is_empty() {
        write_output(&summary, csv.as_bytes(), force)?;
        files.push(summary);
    }
    if let Some(mut chart) = chart {
        chart.y_scale = y_scale;
        let path = dir.join(format!("{}.svg", x.name));
        write_output(&path, svg::render(&chart)?.as_bytes(), force)?;
        files.push(path);
    }
    files.extend(write_timeline(dir, x, rows, force)?);
    Ok(files)
}

/// `<name>-timeline.csv`: one row per interval of every repetition that has a timeline
/// (throughput experiments), columns named like the results CSV's; and `<name>-timeline.svg`,
/// their percentiles, throughput and device util % over time.
pub fn write_timeline(
    dir: &Path,
    x: &Experiment,
    rows: &Collected,
    force: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    let runs: Vec<&RunResult> = rows.runs.iter().filter(|r| r.timeline.is_some()).collect();
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let path = dir.join(format!("{}-timeline.csv", x.name));
    write_output(&path, to_timeline_csv(&runs)?.as_bytes(), force)?;
    let mut files = vec![path];
    let title = format!("{}: timeline", x.name);
    if let Some(svg) = crate::export::timeline_svg::render(&title, &runs)? {
        let path = dir.join(format!("{}-timeline.svg", x.name));
        write_output(&path, svg.as_bytes(), force)?;
        files.push(path);
    }
    Ok(files)
}

/// `compare.svg`: the experiments the sweep lists under `compare` in one figure (diskscope vs an
/// external command, or the KDiskMark table). The x axis is the block size when every one of
/// them sweeps block sizes, else the experiment.
pub fn write_compare(
    dir: &Path,
    sweep: &str,
    names: &[String],
    xs: &[(&Experiment, &Collected)],
    y_scale: YScale,
    force: bool,
) -> anyhow::Result<Option<PathBuf>> {
    let runs: Vec<&(&Experiment, &Collected)> = xs
        .iter()
        .filter(|(x, c)| names.contains(&x.name) && !c.runs.is_empty())
        .collect();
    if runs.len() < 2 {
        return Ok(None);
    }
    let all_sweep_sizes = runs.iter().all(|(x, _)| {
        let mut bs: Vec<u64> = x.points.iter().map(|p| p.block_size_bytes).collect();
        bs.sort_unstable();
        bs.dedup();
        bs.len() > 1
    });
    let pref: &[Dim] = if all_sweep_sizes {
        &[Dim::BlockSize, Dim::Experiment]
    } else {
        &[Dim::Experiment]
    };
    let rows: Vec<RunResult> = runs
        .iter()
        .flat_map(|(_, c)| c.runs.iter().cloned())
        .collect();
    let Some(mut chart) =
        throughput_chart(&format!("{sweep}: {}", names.join(" vs ")), &rows, pref)
    else {
        return Ok(None);
    };
    chart.y_scale = y_scale;
    let path = dir.join("compare.svg");
    write_output(&path, svg::render(&chart)?.as_bytes(), force)?;
    Ok(Some(path))
}

/// `<name>-fio.txt`: the fio commands of a throughput experiment's points (see [`crate::fio`]),
/// created like every other output file.
pub fn write_fio_companion(
    dir: &Path,
    x: &Experiment,
    file_size_bytes: u64,
    force: bool,
) -> anyhow::Result<Option<PathBuf>> {
    if x.points.is_empty() {
        return Ok(None);
    }
    let path = dir.join(format!("{}-fio.txt", x.name));
    let text = crate::fio::sweep_companion(&x.name, &x.points, file_size_bytes);
    write_output(&path, text.as_bytes(), force)?;
    Ok(Some(path))
}

/// The documents every sweep writes into `--out` besides the experiments' files (see
/// [`super::json::write_sweep_documents`]).
pub const SWEEP_DOCUMENTS: [&str; 2] = ["context.json", "sweep.json"];

pub use super::experiment::output_names;

/// The summary table of every experiment, for stdout.
pub fn summary_text(xs: &[(&Experiment, &Collected)]) -> String {
    let runs: Vec<RunResult> = xs
        .iter()
        .flat_map(|(_, c)| c.runs.iter().cloned())
        .collect();
    let calls: Vec<SyscallRow> = xs
        .iter()
        .flat_map(|(_, c)| c.syscalls.iter().cloned())
        .collect();
    let mut s = String::new();
    if !runs.is_empty() {
        s += &runs_table(&summarize_runs(&runs));
    }
    if !calls.is_empty() {
        if !s.is_empty() {
            s.push('\n');
        }
        s += &syscalls_table(&summarize_syscalls(&calls));
    }
    s
}
