//! What a sweep leaves in its output directory besides the per-repetition CSVs, each an
//! [`Exporter`] of the [`SweepOutcome`] ([`EXPORTERS`]): the summary CSVs, the SVG figures, the
//! timelines (`<name>-timeline.csv`, `.svg`), the fio commands (`-fio.txt`) and the JSON
//! documents; and the summary table printed on stdout. Exporters are pure (the outcome in,
//! named bytes out): the executor creates the files, the HTML report reuses the figures.

use super::experiment::Experiment;
use crate::explain::provenance::Provenance;
use crate::export::chart::{throughput_chart, Chart, Dim, YScale};
use crate::export::csv::to_csv_tidy as to_csv;
use crate::export::table::{runs_table, syscalls_table};
use crate::export::timeline::to_timeline_csv;
use crate::export::{summarize_runs, summarize_syscalls, svg, RunResult, SyscallRow};
use crate::export::{Export, Exporter};

pub use super::experiment::Collected;
use super::outcome::SweepOutcome;

/// Preferred x axes of a throughput or command figure: a swept rate first (the throughput an
/// open loop reached at each offered rate; the other settings become series).
const X_PREF: [Dim; 9] = [
    Dim::Rate,
    Dim::BlockSize,
    Dim::Threads,
    Dim::QueueDepth,
    Dim::Cache,
    Dim::Method,
    Dim::Operation,
    Dim::Pattern,
    Dim::Direct,
];

/// Every exporter of a finished sweep, in the order they write into `--out` (the
/// per-repetition CSVs are streamed while it runs, see [`super::run`]). Adding an output is one
/// exporter here and its names in [`output_names`] (checked before the first run).
pub const EXPORTERS: &[&dyn Exporter<SweepOutcome>] =
    &[&SummaryCsv, &Figures, &Timelines, &FioCommands, &Documents];

/// `<name>-summary.csv` of each experiment that ran: one row per point (mean, median, spread).
pub struct SummaryCsv;

impl Exporter<SweepOutcome> for SummaryCsv {
    fn name(&self) -> &'static str {
        "summary CSV"
    }

    fn export(&self, o: &SweepOutcome) -> anyhow::Result<Vec<Export>> {
        let mut files = Vec::new();
        for (x, rows) in o.done() {
            let (csv, _) = x.kind.summary(x, rows, &o.known)?;
            if !csv.is_empty() {
                files.push(Export::new(format!("{}-summary.csv", x.name), csv));
            }
        }
        Ok(files)
    }
}

/// `<name>.svg` of each experiment that ran, then `compare.svg` (see [`compare_svg`]).
pub struct Figures;

impl Exporter<SweepOutcome> for Figures {
    fn name(&self) -> &'static str {
        "figures"
    }

    fn export(&self, o: &SweepOutcome) -> anyhow::Result<Vec<Export>> {
        let mut files = Vec::new();
        for (x, rows) in o.done() {
            if let (_, Some(mut chart)) = x.kind.summary(x, rows, &o.known)? {
                chart.y_scale = o.plan.y_scale;
                files.push(Export::new(format!("{}.svg", x.name), svg::render(&chart)?));
            }
        }
        files.extend(compare_svg(
            &o.plan.name,
            &o.plan.compare,
            &o.done(),
            o.plan.y_scale,
            &o.known,
        )?);
        Ok(files)
    }
}

/// `<name>-timeline.csv` and `<name>-timeline.svg` of each experiment with timelines.
pub struct Timelines;

impl Exporter<SweepOutcome> for Timelines {
    fn name(&self) -> &'static str {
        "timelines"
    }

    fn export(&self, o: &SweepOutcome) -> anyhow::Result<Vec<Export>> {
        let mut files = Vec::new();
        for (x, rows) in o.done() {
            files.extend(timeline(x, rows)?);
            // A fleet's: every rank's timeline and the merged (`all`) one.
            if !rows.details.is_empty() {
                let all: Vec<&RunResult> = rows.details.iter().chain(&rows.runs).collect();
                if let Some(csv) = crate::fleet::timeline::ranks_csv(&all)? {
                    files.push(Export::new(format!("{}-ranks-timeline.csv", x.name), csv));
                }
            }
        }
        Ok(files)
    }
}

/// `<name>-fio.txt` of each experiment that ran whose kind has fio companions.
pub struct FioCommands;

impl Exporter<SweepOutcome> for FioCommands {
    fn name(&self) -> &'static str {
        "fio commands"
    }

    fn export(&self, o: &SweepOutcome) -> anyhow::Result<Vec<Export>> {
        let size = o.plan.file.as_ref().map_or(0, |f| f.size_bytes);
        Ok(o.done()
            .into_iter()
            .filter(|(x, _)| x.kind.traits().fio_companion)
            .filter_map(|(x, _)| fio_companion(x, size))
            .collect())
    }
}

/// `context.json` and `sweep.json` (see [`super::json::documents`]).
pub struct Documents;

impl Exporter<SweepOutcome> for Documents {
    fn name(&self) -> &'static str {
        "JSON documents"
    }

    fn export(&self, o: &SweepOutcome) -> anyhow::Result<Vec<Export>> {
        super::json::documents(o)
    }
}

/// The summary CSV and the figure of an experiment whose rows are runs (throughput, command,
/// locality): `dims` are the figure's preferred x axes (default: block size, threads, ...).
pub fn runs_summary(
    title: &str,
    rows: &Collected,
    dims: Option<&[Dim]>,
    known: &Provenance,
) -> anyhow::Result<(String, Option<Chart>)> {
    Ok((
        to_csv(&summarize_runs(&rows.runs))?,
        throughput_chart(title, &rows.runs, dims.unwrap_or(&X_PREF), known),
    ))
}

/// `<name>-timeline.csv`: one row per interval of every repetition that has a timeline
/// (throughput experiments), columns named like the results CSV's; and `<name>-timeline.svg`,
/// their percentiles, throughput and device util % over time.
pub fn timeline(x: &Experiment, rows: &Collected) -> anyhow::Result<Vec<Export>> {
    let runs: Vec<&RunResult> = rows.runs.iter().filter(|r| r.timeline.is_some()).collect();
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let mut files = vec![Export::new(
        format!("{}-timeline.csv", x.name),
        to_timeline_csv(&runs)?,
    )];
    let title = format!("{}: timeline", x.name);
    if let Some(svg) = crate::export::timeline_svg::render(&title, &runs)? {
        files.push(Export::new(format!("{}-timeline.svg", x.name), svg));
    }
    Ok(files)
}

/// `compare.svg`: the experiments the sweep lists under `compare` in one figure (diskscope vs an
/// external command, or the KDiskMark table). The x axis is the block size when every one of
/// them sweeps block sizes, else the experiment.
pub fn compare_svg(
    sweep: &str,
    names: &[String],
    xs: &[(&Experiment, &Collected)],
    y_scale: YScale,
    known: &Provenance,
) -> anyhow::Result<Option<Export>> {
    let runs: Vec<&(&Experiment, &Collected)> = xs
        .iter()
        .filter(|(x, c)| names.contains(&x.name) && !c.runs.is_empty())
        .collect();
    if runs.len() < 2 {
        return Ok(None);
    }
    let all_sweep_sizes = runs.iter().all(|(x, _)| {
        let mut bs: Vec<u64> = x.points.iter().map(|p| p.setup.block_size_bytes).collect();
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
    let Some(mut chart) = throughput_chart(
        &format!("{sweep}: {}", names.join(" vs ")),
        &rows,
        pref,
        known,
    ) else {
        return Ok(None);
    };
    chart.y_scale = y_scale;
    Ok(Some(Export::new("compare.svg", svg::render(&chart)?)))
}

/// `<name>-fio.txt`: the fio commands of a throughput experiment's points (see [`crate::fio`]).
pub fn fio_companion(x: &Experiment, file_size_bytes: u64) -> Option<Export> {
    if x.points.is_empty() {
        return None;
    }
    let text = crate::fio::sweep_companion(&x.name, &x.points, file_size_bytes);
    Some(Export::new(format!("{}-fio.txt", x.name), text))
}

/// The documents every sweep writes into `--out` besides the experiments' files (see
/// [`Documents`]).
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
