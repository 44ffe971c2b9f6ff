//! `mpirun -n N diskscope --batch SWEEP.toml` (built with `--features mpi`): every rank runs
//! every repetition of every point of the sweep's throughput experiments at the same moment
//! ([`point::run_point`]), each on its own copy of the test file (`file-per-process`) or on its
//! share of one (`shared-file`), as the sweep's `fleet` key says:
//!
//! ```toml
//! fleet = { layout = "shared-file", stonewall = true, timeout_s = 60 }
//! ```
//!
//! It is the sweep's [`FleetRunner`]: the one executor ([`super::run::run`]) drives it as it
//! drives a local sweep, so rank 0 takes the same `--out` lock, checks the same outputs and
//! writes the same files: `<experiment>.csv` with one row per rank per repetition and one
//! `rank = all` row (the aggregate), then the summaries, figures, timelines, `-fio.txt` (the fio
//! line of one client per point), `context.json`, `sweep.json` and the table of the aggregate
//! rows. The other ranks print nothing unless they cannot reach rank 0.

use super::experiment::{Experiment, Row};
use super::files::{self, FilePlan};
use super::plan::Plan;
use super::progress::Progress;
use super::runner::{Columns, PointRunner, Prepared};
use super::schema::{FleetDef, Source};
use crate::config::{usage, Op};
use crate::export::RunResult;
use crate::fleet::point::{self, rank_file, PointEnd};
use crate::fleet::{Fleet, FleetError, FleetOptions, Layout};
use anyhow::Context as _;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// The fleet's [`PointRunner`]: every repetition of every point runs on every rank at the same
/// moment ([`point::run_point`]); rank 0 gets the reports and emits the rows, one per rank
/// ([`Row::Detail`]) and the aggregate (`rank = all`, [`Row::Run`]). The executor
/// ([`super::run::run`]) does the rest on rank 0 as for a local sweep: the cap, the `--out`
/// lock, the output checks, the CSVs and every exporter. The other ranks write nothing.
pub struct FleetRunner {
    fleet: RefCell<Fleet>,
    /// The point sequence number, across experiments (barriers are numbered by it).
    seq: Cell<u64>,
    /// This rank's copy of the sweep's file plan, once prepared.
    mine: RefCell<Option<FilePlan>>,
    /// The rank the fleet lost, which ended the sweep.
    lost: RefCell<Option<FleetError>>,
}

impl FleetRunner {
    pub fn new(fleet: Fleet) -> FleetRunner {
        FleetRunner {
            fleet: RefCell::new(fleet),
            seq: Cell::new(0),
            mine: RefCell::new(None),
            lost: RefCell::new(None),
        }
    }

    fn lead(&self) -> bool {
        self.fleet.borrow().rank() == 0
    }

    /// Whether this rank makes (and restores) a test file: each rank its own copy, or rank 0
    /// the shared one.
    fn makes_file(&self) -> bool {
        self.fleet.borrow().options.layout == Layout::FilePerProcess || self.lead()
    }
}

impl PointRunner for FleetRunner {
    fn writes_outputs(&self) -> bool {
        self.lead()
    }

    fn check(&self, plan: &Plan) -> anyhow::Result<()> {
        if let Some(x) = plan
            .experiments
            .iter()
            .find(|x| !x.kind.traits().fleet_capable)
        {
            return Err(usage(format!(
                "experiment `{}`: kind {} cannot run as a fleet (only throughput experiments \
                 do); run it without mpirun, or remove it",
                x.name,
                x.kind.name()
            )));
        }
        if let Some(x) = plan
            .experiments
            .iter()
            .find(|x| x.points.iter().any(|s| s.setup.rate().is_some()))
        {
            // The ranks' rows are merged into a point's `all` row by their service-time
            // histograms; their schedules and response times are not merged (yet).
            return Err(usage(format!(
                "experiment `{}`: an open-loop point (`rate`) cannot run as a fleet; run it \
                 without mpirun, or remove `rate`",
                x.name
            )));
        }
        if plan.file.is_none() {
            return Err(usage("a fleet sweep needs a [file] table"));
        }
        Ok(())
    }

    fn describe(&self) -> String {
        let fleet = self.fleet.borrow();
        let mut hosts = fleet.hosts().to_vec();
        hosts.sort();
        hosts.dedup();
        format!(
            "fleet: {} ranks on {} host(s), {}{}\n",
            fleet.size(),
            hosts.len(),
            fleet.options.layout.as_str(),
            if fleet.options.stonewall {
                ", stonewall"
            } else {
                ""
            }
        )
    }

    fn refuse(&self, why: &str) {
        // The other ranks wait at the setup barrier: they learn the point will not run, and
        // end quietly while rank 0 reports `why`.
        let _ = self.fleet.borrow_mut().barrier(0, Err(why.to_string()));
    }

    fn prepare(&self, plan: &Plan, stop: &AtomicBool) -> anyhow::Result<Prepared> {
        let file = plan
            .file
            .as_ref()
            .context("a fleet sweep needs a [file] table")?;
        let (rank, layout) = {
            let f = self.fleet.borrow();
            (f.rank(), f.options.layout)
        };
        let mine = rank_file_plan(file, layout, rank);
        // Test files: each rank its own copy, or rank 0 the shared one; then everyone waits.
        let mut setup: Result<(), String> = Ok(());
        let mut guard = None;
        if self.makes_file() {
            if mine.create {
                match self
                    .fleet
                    .borrow_mut()
                    .while_alive(|| files::materialize(&mine, stop))
                {
                    Ok(g) => guard = g,
                    Err(e) => setup = Err(format!("{e:#}")),
                }
            } else if !mine.path.is_file() {
                setup = Err(format!(
                    "{} does not exist; with the file-per-process layout every rank needs its \
                     own copy FILE.RANK (or use create = \"SIZE\")",
                    crate::text::shown_path(&mine.path)
                ));
            }
        }
        *self.mine.borrow_mut() = Some(mine);
        let mut fleet = self.fleet.borrow_mut();
        if let Err(e) = fleet.barrier(0, setup) {
            fleet.note_error(&e);
            return if rank == 0 {
                Err(anyhow::anyhow!("{e}"))
            } else {
                Ok(Prepared::Abandoned(crate::fleet::follower_status(&e)))
            };
        }
        Ok(Prepared::Ready(guard))
    }

    fn columns(&self, x: &Experiment) -> Columns {
        if x.points.iter().any(crate::config::spec::RunSpec::is_mixed) {
            Columns::FleetMixedRuns
        } else {
            Columns::FleetRuns
        }
    }

    fn run_experiment(
        &self,
        x: &Experiment,
        file: Option<&FilePlan>,
        stop: &Arc<AtomicBool>,
        progress: &mut Progress,
        emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
    ) -> anyhow::Result<Option<String>> {
        let file = file.context("a fleet sweep needs a [file] table")?;
        let mine = self
            .mine
            .borrow()
            .clone()
            .context("the fleet's test file is prepared before its first point")?;
        let makes_file = self.makes_file();
        let mut fleet = self.fleet.borrow_mut();
        let (lead, layout) = (fleet.rank() == 0, fleet.options.layout);
        for spec in &x.points {
            for rep in 1..=x.reps {
                if stop.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                self.seq.set(self.seq.get() + 1);
                let label = super::exec::point_label(&x.name, spec);
                if lead {
                    progress.begin(&format!("{label} rep {rep}/{}", x.reps));
                }
                let end = point::run_point(&mut fleet, self.seq.get(), spec, &x.name, stop);
                if spec.setup.op == Op::Write && makes_file {
                    fleet.while_alive(|| files::after_write(&mine, &AtomicBool::new(false)))?;
                }
                if stop.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let mut broken = None;
                let out: Vec<RunResult> = match end {
                    Ok(PointEnd { reports, .. }) => {
                        let mut out = fleet.rows_of(&reports);
                        for r in &mut out {
                            r.identity.experiment = x.name.clone();
                            r.identity.rep = rep;
                        }
                        out
                    }
                    Err((e, _)) => {
                        fleet.note_error(&e);
                        let mut r = crate::runner::setup_result(spec, file.size_bytes);
                        crate::fleet::aggregate::mark_all(&mut r, fleet.size(), layout);
                        r.identity.experiment = x.name.clone();
                        r.identity.rep = rep;
                        r.figures.error = e.to_string();
                        if e.is_lost() {
                            broken = Some(e);
                        }
                        vec![r]
                    }
                };
                if lead {
                    if let Some((all, ranks)) = out.split_last() {
                        for r in ranks {
                            emit(Row::Detail(r.clone()))?;
                        }
                        let said = if !all.figures.error.is_empty() {
                            format!("FAILED: {}", all.figures.error)
                        } else {
                            format!(
                                "{:.1} MiB/s from {} ranks (ranks {:.1}..{:.1})",
                                all.figures.mib_s,
                                fleet.size(),
                                all.fleet
                                    .as_ref()
                                    .and_then(|f| f.rank_min_mib_s)
                                    .unwrap_or(0.0),
                                all.fleet
                                    .as_ref()
                                    .and_then(|f| f.rank_max_mib_s)
                                    .unwrap_or(0.0),
                            )
                        };
                        progress.finish_run(&format!("{label} rep {rep}/{}", x.reps), &said);
                        emit(Row::Run(all.clone()))?;
                    }
                }
                if let Some(e) = broken {
                    // A rank is gone: every later barrier would wait out the timeout again.
                    let why = e.to_string();
                    self.lost.replace(Some(e));
                    return Ok(Some(why));
                }
            }
        }
        Ok(None)
    }

    fn unit(&self) -> &'static str {
        "point"
    }

    fn status(&self) -> i32 {
        self.lost
            .borrow()
            .as_ref()
            .map_or(0, crate::fleet::follower_status)
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
