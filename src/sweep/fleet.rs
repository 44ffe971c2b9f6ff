//! `mpirun -n N diskscope --batch SWEEP.toml` (built with `--features mpi`): every rank runs
//! every repetition of every point of the sweep's throughput experiments at the same moment
//! ([`point::run_point`]), each on its own copy of the test file (`file-per-process`) or on its
//! share of one (`shared-file`), as the sweep's `fleet` key says:
//!
//! ```toml
//! fleet = { layout = "shared-file", stonewall = true, timeout_s = 60 }
//! ```
//!
//! Rank 0 alone prints and writes: `<experiment>.csv` with one row per rank per repetition and
//! one `rank = all` row (the aggregate), then the summaries, figures and table of the aggregate
//! rows. The other ranks print nothing unless they cannot reach rank 0.

use super::files::{self, FilePlan};
use super::output::{self, Collected};
use super::plan::Plan;
use super::schema::{FleetDef, Source};
use crate::config::{usage, Op};
use crate::export::{CsvSink, RunResult};
use crate::fleet::point::{self, rank_file, PointEnd};
use crate::fleet::{Fleet, FleetError, FleetOptions, Layout};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

impl FleetDef {
    /// The validated options; errors are `SWEEP.toml:LINE: key ...`.
    pub fn options(&self, src: &Source) -> anyhow::Result<FleetOptions> {
        let mut o = FleetOptions::default();
        if let Some(l) = &self.layout {
            o.layout = Layout::parse(l.get_ref(), "layout")
                .map_err(|e| src.key_error(l.span(), "layout", &e.message))?;
        }
        if let Some(s) = &self.stonewall {
            o.stonewall = *s.get_ref();
        }
        if let Some(t) = &self.timeout_s {
            o.timeout = crate::config::check_seconds(*t.get_ref(), "timeout_s")
                .map_err(|e| src.key_error(t.span(), "timeout_s", &e.message))?;
        }
        Ok(o)
    }
}

/// The fleet options of the sweep at `path`, checked (in every build, so a misspelt layout is
/// an error even before the first mpirun), or None when it has no `fleet` key.
pub fn options_of(path: &Path) -> anyhow::Result<Option<FleetOptions>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("SWEEP.toml: cannot read {}: {e}", path.display())))?;
    let src = Source {
        display: path.display().to_string(),
        text,
    };
    let doc = src.parse()?;
    doc.fleet.map(|f| f.get_ref().options(&src)).transpose()
}

/// This rank's copy of the sweep's file plan.
fn rank_file_plan(plan: &FilePlan, layout: Layout, rank: usize) -> FilePlan {
    let mut p = plan.clone();
    if layout == Layout::FilePerProcess {
        p.path = rank_file(&plan.path, rank);
        if !plan.create {
            // The user's own per-rank file: after a write it is restored to its own size, never
            // cut to the size of the file the sweep names.
            if let Ok(m) = std::fs::metadata(&p.path) {
                p.size_bytes = m.len();
            }
        }
    }
    p
}

/// Runs `plan` on every rank of `fleet`. Returns the exit status (0, 1 failed runs, 130).
pub fn execute(plan: &Plan, mut fleet: Fleet, stop: &AtomicBool) -> anyhow::Result<i32> {
    let rank = fleet.rank();
    let layout = fleet.options.layout;
    let lead = rank == 0;
    if let Some(x) = plan
        .experiments
        .iter()
        .find(|x| !x.kind.traits().fleet_capable)
    {
        if !lead {
            return Ok(0); // rank 0 says why and sets the status (see `follower_status`)
        }
        return Err(usage(format!(
            "experiment `{}`: kind {} cannot run as a fleet (only throughput experiments do); \
             run it without mpirun, or remove it",
            x.name,
            x.kind.name()
        )));
    }
    let Some(file) = &plan.file else {
        return Err(usage("a fleet sweep needs a [file] table"));
    };
    let mine = rank_file_plan(file, layout, rank);
    let dir = &plan.out_dir;
    let mut stdout = std::io::stdout().lock();
    if lead {
        write!(stdout, "{}", super::text::plan_text(plan))?;
        writeln!(
            stdout,
            "fleet: {} ranks on {} host(s), {}{}",
            fleet.size(),
            {
                let mut h = fleet.hosts().to_vec();
                h.sort();
                h.dedup();
                h.len()
            },
            layout.as_str(),
            if fleet.options.stonewall {
                ", stonewall"
            } else {
                ""
            }
        )?;
        stdout.flush()?;
        std::fs::create_dir_all(dir).map_err(|e| {
            usage(format!(
                "--out: cannot create {}: {e}; pick another directory",
                dir.display()
            ))
        })?;
    }
    // Test files: each rank its own copy, or rank 0 the shared one; then everyone waits.
    let makes_file = layout == Layout::FilePerProcess || lead;
    let mut setup: Result<(), String> = Ok(());
    let mut _guard = None;
    if makes_file {
        if mine.create {
            match fleet.while_alive(|| files::materialize(&mine, stop)) {
                Ok(g) => _guard = g,
                Err(e) => setup = Err(format!("{e:#}")),
            }
        } else if !mine.path.is_file() {
            setup = Err(format!(
                "{} does not exist; with the file-per-process layout every rank needs its own \
                 copy FILE.RANK (or use create = \"SIZE\")",
                mine.path.display()
            ));
        }
    }
    if let Err(e) = fleet.barrier(0, setup) {
        fleet.note_error(&e);
        return fleet_failed(lead, e);
    }

    let mut collected: Vec<Collected> = Vec::new();
    let mut written = Vec::new();
    let mut failed = 0usize;
    let mut seq = 0u64;
    let mut broken: Option<FleetError> = None;
    // Every rank's and the `all` timeline of each experiment (`<name>-ranks-timeline.csv`).
    let mut rank_timelines: Vec<(&str, Vec<RunResult>)> = Vec::new();
    'experiments: for x in &plan.experiments {
        rank_timelines.push((&x.name, Vec::new()));
        let mut sink = None;
        if lead {
            let csv_path = dir.join(format!("{}.csv", x.name));
            sink = Some(CsvSink::create::<FleetCsvRow>(&csv_path, plan.force)?);
            written.push(csv_path);
        }
        let mut rows = Collected::default();
        for spec in &x.points {
            for rep in 1..=x.reps {
                if stop.load(Ordering::Relaxed) {
                    collected.push(rows);
                    break 'experiments;
                }
                seq += 1;
                let label = super::exec::point_label(&x.name, spec);
                let end = point::run_point(&mut fleet, seq, spec, &x.name, stop);
                if spec.op == Op::Write && makes_file {
                    fleet.while_alive(|| files::after_write(&mine, &AtomicBool::new(false)))?;
                }
                if stop.load(Ordering::Relaxed) {
                    collected.push(rows);
                    break 'experiments;
                }
                let out: Vec<RunResult> = match end {
                    Ok(PointEnd { reports, .. }) => {
                        let mut out = fleet.rows_of(&reports);
                        for r in &mut out {
                            r.experiment = x.name.clone();
                            r.rep = rep;
                        }
                        out
                    }
                    Err((e, _)) => {
                        fleet.note_error(&e);
                        let mut r = crate::runner::setup_result(spec, file.size_bytes);
                        crate::fleet::aggregate::mark_all(&mut r, fleet.size(), layout);
                        r.experiment = x.name.clone();
                        r.rep = rep;
                        r.error = e.to_string();
                        if e.is_lost() {
                            broken = Some(e);
                        }
                        vec![r]
                    }
                };
                if let (Some(sink), Some(all)) = (sink.as_mut(), out.last()) {
                    for r in &out {
                        sink.write(&FleetCsvRow(r.clone()))?;
                    }
                    if let Some((_, t)) = rank_timelines.last_mut() {
                        t.extend(out.iter().filter(|r| r.timeline.is_some()).cloned());
                    }
                    if !all.error.is_empty() {
                        failed += 1;
                        eprintln!("{label} rep {rep}/{}: FAILED: {}", x.reps, all.error);
                    } else {
                        eprintln!(
                            "{label} rep {rep}/{}: {:.1} MiB/s from {} ranks (ranks {:.1}..{:.1})",
                            x.reps,
                            all.mib_s,
                            fleet.size(),
                            all.rank_min_mib_s.flatten().unwrap_or(0.0),
                            all.rank_max_mib_s.flatten().unwrap_or(0.0),
                        );
                    }
                    rows.runs.push(all.clone());
                }
                if broken.is_some() {
                    // A rank is gone: every later barrier would wait out the timeout again.
                    collected.push(rows);
                    break 'experiments;
                }
            }
        }
        collected.push(rows);
    }
    if !lead {
        return Ok(broken.as_ref().map_or(0, crate::fleet::follower_status));
    }
    let done: Vec<(&super::plan::Experiment, &Collected)> =
        plan.experiments.iter().zip(&collected).collect();
    // No fio companions: a fleet point is many clients at once, which one fio line cannot say.
    written.extend(output::write_results(dir, plan, &done, false)?);
    for (name, rows) in &rank_timelines {
        written.extend(crate::fleet::timeline::write_ranks(
            dir, name, rows, plan.force,
        )?);
    }
    writeln!(stdout)?;
    write!(stdout, "{}", output::summary_text(&done))?;
    stdout.flush()?;
    eprintln!("wrote {} files to {}/", written.len(), dir.display());
    if stop.load(Ordering::Relaxed) {
        eprintln!("interrupted: the CSVs hold the runs that finished before Ctrl-C");
        return Ok(crate::config::EXIT_INTERRUPTED);
    }
    if let Some(e) = broken {
        return Err(anyhow::anyhow!("{e}; the sweep stopped there"));
    }
    if failed > 0 {
        eprintln!(
            "{failed} point{} failed; see the error column of the CSVs",
            if failed == 1 { "" } else { "s" }
        );
        return Ok(1);
    }
    Ok(0)
}

fn fleet_failed(lead: bool, e: FleetError) -> anyhow::Result<i32> {
    if lead {
        Err(anyhow::anyhow!("{e}"))
    } else {
        Ok(crate::fleet::follower_status(&e))
    }
}

/// A fleet CSV row: a [`RunResult`] whose header (from `Default`) has the fleet columns.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct FleetCsvRow(pub RunResult);

impl Default for FleetCsvRow {
    fn default() -> Self {
        let mut r = RunResult::default();
        crate::fleet::aggregate::mark_all(&mut r, 0, Layout::FilePerProcess);
        FleetCsvRow(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_per_rank_file_keeps_its_own_size() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("f");
        std::fs::write(&base, vec![0u8; 100]).unwrap();
        std::fs::write(rank_file(&base, 1), vec![0u8; 300]).unwrap();
        let plan = FilePlan {
            path: base.clone(),
            size_bytes: 100,
            create: false,
            keep: true,
            writable: true,
        };
        let mine = rank_file_plan(&plan, Layout::FilePerProcess, 1);
        assert_eq!((mine.path, mine.size_bytes), (rank_file(&base, 1), 300));
        let shared = rank_file_plan(&plan, Layout::SharedFile, 1);
        assert_eq!(shared, plan);
    }

    fn options(text: &str) -> anyhow::Result<FleetOptions> {
        let src = Source {
            display: "s.toml".into(),
            text: text.into(),
        };
        let doc = src.parse()?;
        doc.fleet.expect("a fleet key").get_ref().options(&src)
    }

    #[test]
    fn the_fleet_key_sets_layout_stonewall_and_timeout() {
        let o =
            options("fleet = { layout = \"shared-file\", stonewall = true, timeout_s = 2.5 }\n")
                .unwrap();
        assert_eq!(o.layout, Layout::SharedFile);
        assert!(o.stonewall);
        assert_eq!(o.timeout, std::time::Duration::from_millis(2500));
    }

    #[test]
    fn a_bad_fleet_value_names_the_line_and_the_key() {
        let e = options("name = \"x\"\nfleet = { layout = \"striped\" }\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "s.toml:2: key `layout`: unknown layout 'striped'; use file-per-process or shared-file"
        );
        let e = options("fleet = { timeout_s = -1 }\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.toml:1: key `timeout_s`: must be a number of seconds above 0"),
            "{e}"
        );
        let e = options("fleet = { layuot = \"shared-file\" }\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.toml:1: key `layuot`: unknown key"), "{e}");
    }
}
