//! The one sweep executor: [`run`] takes a [`Plan`] and a [`PointRunner`] and returns a typed
//! [`SweepOutcome`]. A local sweep ([`LocalRunner`]: each kind runs its own experiments in this
//! process) and a fleet sweep (`sweep::fleet::FleetRunner`: every rank of an MPI job runs each
//! point at once) differ only in how a point is measured; everything around the points is
//! written once, here, for both:
//!
//! 1. the printed plan and the 24 h cap (refused without `--force`);
//! 2. the output directory: created, locked (one batch per directory, `fsguard::DirLock`), and
//!    every file the sweep may write checked before the first run, so an old file is refused
//!    before minutes of measuring and not when the experiment that writes it ends;
//! 3. the test file, made ready by the runner;
//! 4. each experiment's repetitions, streamed to `<experiment>.csv` as they end (a crash or
//!    Ctrl-C loses only the run in progress);
//! 5. the rest of the outputs, each an [`Exporter`](crate::export::Exporter) of the outcome
//!    ([`super::output::EXPORTERS`]): summaries, figures, timelines, fio commands, JSON
//!    documents; then the summary table.
//!
//! The outcome says how the sweep ended ([`Ended`]); the command line maps that to the exit
//! status ([`SweepOutcome::exit_code`]) and the HTML report is one more exporter of it.

use super::experiment::{Collected, Experiment, Plan, Row};
use super::files;
use super::output;
use super::progress::Progress;
use crate::config::usage;
use crate::explain::context::Context;
use crate::explain::provenance::Provenance;
use crate::export::{CsvSink, Export, RunResult, SyscallRow};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use super::outcome::{Ended, SweepOutcome};
pub use super::runner::{Columns, LocalRunner, PointRunner, Prepared};

/// The reason a plan is refused without `--force`: it measures for longer than the cap.
pub fn over_cap(plan: &Plan) -> Option<String> {
    let estimate_s: f64 = plan.experiments.iter().filter_map(|x| x.estimate_s()).sum();
    (estimate_s > super::plan::MAX_ESTIMATE_S && !plan.force).then(|| {
        format!(
            "--force: the plan measures for about {}, over the {} cap; shorten the lists, \
             lower reps or seconds, or pass --force to run it anyway",
            super::progress::format_secs(estimate_s),
            super::progress::format_secs(super::plan::MAX_ESTIMATE_S)
        )
    })
}

/// `rmdir`s a directory this run created when dropped, which succeeds only if it is empty.
struct RemoveIfEmpty(Option<PathBuf>);

impl Drop for RemoveIfEmpty {
    fn drop(&mut self) {
        if let Some(d) = &self.0 {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// The output directory, created and locked, every output of the plan checked. Holds the
/// lock until dropped (then removes the directory again if this run created it and left it
/// empty: a refusal must not leave an empty `--out` behind).
struct OutDir {
    _lock: crate::fsguard::DirLock,
    _empty: RemoveIfEmpty,
}

fn claim_out_dir(plan: &Plan) -> anyhow::Result<OutDir> {
    let dir = &plan.out_dir;
    let empty = RemoveIfEmpty(
        std::fs::symlink_metadata(dir)
            .is_err()
            .then(|| dir.to_path_buf()),
    );
    std::fs::create_dir_all(dir).map_err(|e| {
        usage(format!(
            "--out: cannot create {}: {e}; pick another directory",
            crate::text::shown_path(dir)
        ))
    })?;
    // One batch per output directory: a second would interleave rows in the same CSVs and
    // remove the first one's test file.
    let lock = crate::fsguard::DirLock::acquire(dir, "--out").map_err(|e| usage(e.to_string()))?;
    files::register_cleanup(lock.created().clone());
    // Every output file is checked now: an old one found only when an experiment ends would
    // cost the runs before it.
    let mut outputs: Vec<String> = plan
        .experiments
        .iter()
        .flat_map(|x| output::output_names(&x.name, x.kind))
        .collect();
    if !plan.compare.is_empty() {
        outputs.push("compare.svg".into());
    }
    outputs.extend(output::SWEEP_DOCUMENTS.iter().map(|n| n.to_string()));
    if let Some(why) = outputs
        .iter()
        .find_map(|n| crate::fsguard::output_refusal(&dir.join(n), plan.force, "--out"))
    {
        return Err(usage(format!("--out: {why}")));
    }
    // Declared after the lock in `OutDir`, so the directory is removed after the lock is.
    Ok(OutDir {
        _lock: lock,
        _empty: empty,
    })
}

/// An experiment's per-repetition CSV, its header from [`Columns`].
struct RowSink {
    sink: CsvSink,
    columns: Columns,
}

impl RowSink {
    fn create(
        path: &Path,
        x: &Experiment,
        columns: Columns,
        force: bool,
    ) -> anyhow::Result<RowSink> {
        let sink = match columns {
            // The optional columns the points will write (a mixed point's, an open-loop
            // point's, a non-default setting's) are named up front, so points that differ in
            // them share the header.
            Columns::Runs => CsvSink::create_with::<RunResult>(
                path,
                force,
                crate::runner::optional_columns(&x.points),
            )?,
            Columns::Syscalls => CsvSink::create::<SyscallRow>(path, force)?,
            Columns::FleetRuns => CsvSink::create::<super::fleet::FleetCsvRow>(path, force)?,
            // A mixed point's columns, and every other optional column its rows write (the
            // run's facts), named up front as for a local sweep.
            Columns::FleetMixedRuns => CsvSink::create_with::<super::fleet::FleetCsvRow>(
                path,
                force,
                crate::runner::optional_columns(&x.points),
            )?,
        };
        Ok(RowSink { sink, columns })
    }

    fn write_run(&mut self, r: &RunResult) -> anyhow::Result<()> {
        match self.columns {
            Columns::FleetRuns | Columns::FleetMixedRuns => {
                self.sink.write(&super::fleet::FleetCsvRow(r.clone()))
            }
            _ => self.sink.write(r),
        }
    }
}

/// Runs `plan` with `runner`: the cap, the lock and the output checks, the experiments, and
/// the outputs (see the module doc). Stdout gets the plan and the summary table (stderr with
/// `--json`, whose document owns stdout). `stop` is the process's Ctrl-C flag.
pub fn run(
    plan: Plan,
    runner: &dyn PointRunner,
    stop: &Arc<AtomicBool>,
    json: bool,
) -> anyhow::Result<SweepOutcome> {
    let writes = runner.writes_outputs();
    if let Err(e) = runner.check(&plan) {
        return if writes {
            Err(e)
        } else {
            Ok(SweepOutcome::quiet(plan, Ended::Delegated(0)))
        };
    }
    let mut stdout: Box<dyn Write> = if !writes {
        Box::new(std::io::sink())
    } else if json {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout().lock())
    };
    write!(
        stdout,
        "{}",
        crate::text::shown_lines(&format!(
            "{}{}",
            super::text::plan_text(&plan),
            runner.describe()
        ))
    )
    .and_then(|()| stdout.flush())
    .map_err(|e| anyhow::Error::new(e).context("writing the plan to stdout"))?;
    if let Some(why) = over_cap(&plan) {
        return if writes {
            Err(usage(why))
        } else {
            Ok(SweepOutcome::quiet(plan, Ended::Delegated(0)))
        };
    }
    // Dropped after the test file (declared before it): the lock outlives the cleanup.
    let _out_dir = if writes {
        match claim_out_dir(&plan) {
            Ok(d) => Some(d),
            Err(e) => {
                runner.refuse(&format!("{e:#}"));
                return Err(e);
            }
        }
    } else {
        None
    };
    let _test_file = match runner.prepare(&plan, stop)? {
        Prepared::Ready(guard) => guard,
        Prepared::Interrupted => {
            return Ok(SweepOutcome::quiet(plan, Ended::Interrupted));
        }
        Prepared::Abandoned(status) => {
            return Ok(SweepOutcome::quiet(plan, Ended::Delegated(status)));
        }
    };
    let dir = plan.out_dir.clone();
    let total: usize = plan.experiments.iter().map(|x| x.runs()).sum();
    let mut progress = Progress::new(if writes { total as u64 } else { 0 });
    let mut rows: Vec<Collected> = Vec::new();
    let mut written = Vec::new();
    let mut broken = None;
    for x in &plan.experiments {
        let mut sink = None;
        if writes {
            let path = dir.join(format!("{}.csv", x.name));
            sink = Some(RowSink::create(&path, x, runner.columns(x), plan.force)?);
            written.push(path);
        }
        let mut got = Collected::default();
        broken = runner.run_experiment(x, plan.file.as_ref(), stop, &mut progress, &mut |row| {
            match row {
                Row::Run(r) => {
                    if let Some(s) = sink.as_mut() {
                        s.write_run(&r)?;
                    }
                    got.runs.push(r);
                }
                Row::Detail(r) => {
                    if let Some(s) = sink.as_mut() {
                        s.write_run(&r)?;
                    }
                    got.details.push(r);
                }
                Row::Syscall(r) => {
                    if let Some(s) = sink.as_mut() {
                        s.sink.write(&r)?;
                    }
                    got.syscalls.push(r);
                }
                Row::Knee(answer) => got.knee = Some(answer),
            }
            Ok(())
        })?;
        rows.push(got);
        if broken.is_some() || stop.load(Ordering::SeqCst) {
            break;
        }
    }
    progress.finish();
    let failed = rows
        .iter()
        .map(|c| {
            c.runs
                .iter()
                .filter(|r| !r.figures.error.is_empty())
                .count()
                + c.syscalls.iter().filter(|r| !r.error.is_empty()).count()
        })
        .sum();
    let ended = if stop.load(Ordering::SeqCst) {
        Ended::Interrupted
    } else if let Some(why) = broken {
        Ended::Broken(why)
    } else if failed > 0 {
        Ended::Failed {
            rows: failed,
            unit: runner.unit(),
        }
    } else {
        Ended::Complete
    };
    if !writes {
        return Ok(SweepOutcome {
            plan,
            rows,
            context: None,
            known: Provenance::none(),
            written,
            ended: Ended::Delegated(runner.status()),
        });
    }
    // Where it ran, while the test file still exists.
    let at = plan
        .file
        .as_ref()
        .map(|f| f.path.clone())
        .filter(|p| p.exists())
        .unwrap_or_else(|| dir.clone());
    // And what the exporters need to know of it, read once here (they read nothing).
    let known =
        crate::explain::provenance_of(rows.iter().flat_map(|c| c.runs.iter().chain(&c.details)));
    let mut outcome = SweepOutcome {
        plan,
        rows,
        context: Some(Context::collect(&at)),
        known,
        written,
        ended,
    };
    let mut document = None;
    for exporter in output::EXPORTERS {
        let files = exporter.export(&outcome)?;
        if json {
            document = document.or_else(|| sweep_document(&files));
        }
        outcome.written.extend(crate::export::manager::write_into(
            &dir,
            &files,
            outcome.plan.force,
        )?);
    }
    writeln!(stdout)
        .and_then(|()| {
            write!(
                stdout,
                "{}",
                crate::text::shown_lines(&output::summary_text(&outcome.done()))
            )
        })
        .and_then(|()| stdout.flush())
        .map_err(|e| anyhow::Error::new(e).context("writing the summary to stdout"))?;
    if let Some(doc) = document {
        crate::lab::println_stdout(&doc)?;
    }
    crate::eprintln_shown!(
        "wrote {} files to {}/",
        outcome.written.len(),
        crate::text::shown_path(&dir)
    );
    Ok(outcome)
}

/// The `--json` document: `sweep.json` without its closing newline.
fn sweep_document(files: &[Export]) -> Option<String> {
    let doc = files.iter().find(|e| e.name == Path::new("sweep.json"))?;
    let text = String::from_utf8_lossy(&doc.bytes);
    Some(text.strip_suffix('\n').unwrap_or(&text).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::experiment::Experiment;
    use crate::sweep::files::FilePlan;
    use crate::sweep::schema::Source;
    use std::cell::RefCell;

    /// The plan of sweep text `toml`, writing into `out`.
    fn plan_of(toml: &str, out: &Path) -> Plan {
        let src = Source {
            display: "s.toml".into(),
            text: toml.into(),
        };
        let doc = src.parse().unwrap();
        super::super::plan::build_with(&src, &doc, "s", Some(out), false).unwrap()
    }

    fn two_points(dir: &Path) -> String {
        format!(
            "name = \"m\"\n[file]\npath = \"{}\"\ncreate = \"1M\"\n\
             [[experiment]]\nname = \"x\"\nkind = \"throughput\"\nreps = 1\n\
             block_size = [\"4K\", \"64K\"]\n",
            dir.join("data.bin").display()
        )
    }

    /// A runner that measures nothing: each point's row is made up, the second one failed
    /// (hyperfine's mock executor: the executor is tested without real timing).
    #[derive(Default)]
    struct Mock {
        follower: bool,
        prepared: RefCell<bool>,
        refused: RefCell<Option<String>>,
    }

    impl PointRunner for Mock {
        fn writes_outputs(&self) -> bool {
            !self.follower
        }

        fn refuse(&self, why: &str) {
            *self.refused.borrow_mut() = Some(why.to_string());
        }

        fn prepare(&self, _plan: &Plan, _stop: &AtomicBool) -> anyhow::Result<Prepared> {
            *self.prepared.borrow_mut() = true;
            Ok(Prepared::Ready(None))
        }

        fn run_experiment(
            &self,
            x: &Experiment,
            _file: Option<&FilePlan>,
            _stop: &Arc<AtomicBool>,
            _progress: &mut Progress,
            emit: &mut dyn FnMut(Row) -> anyhow::Result<()>,
        ) -> anyhow::Result<Option<String>> {
            for (i, spec) in x.points.iter().enumerate() {
                let mut r = crate::runner::setup_result(spec, 1 << 20);
                r.identity.experiment = x.name.clone();
                r.identity.rep = 1;
                if i == 1 {
                    r.figures.error = "made to fail".into();
                } else {
                    r.figures.bytes = 1 << 20;
                    r.figures.seconds = 0.5;
                    r.figures.mib_s = 2.0;
                }
                emit(Row::Run(r))?;
            }
            Ok(None)
        }
    }

    #[test]
    fn the_executor_streams_the_rows_and_writes_every_export_of_the_outcome() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let plan = plan_of(&two_points(d.path()), &out);
        let o = run(
            plan,
            &Mock::default(),
            &Arc::new(AtomicBool::new(false)),
            false,
        )
        .unwrap();
        assert_eq!(
            o.ended,
            Ended::Failed {
                rows: 1,
                unit: "run"
            }
        );
        assert_eq!(o.rows.len(), 1);
        assert_eq!(o.rows[0].runs.len(), 2);
        let names: Vec<String> = o
            .written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for n in [
            "x.csv",
            "x-summary.csv",
            "x-fio.txt",
            "context.json",
            "sweep.json",
        ] {
            assert!(names.iter().any(|w| w == n), "{n} not in {names:?}");
            assert!(out.join(n).is_file(), "{n}");
        }
        let csv = std::fs::read_to_string(out.join("x.csv")).unwrap();
        assert_eq!(csv.lines().count(), 3, "header and two rows:\n{csv}");
        assert!(csv.contains("made to fail"));
        assert!(!out.join(".diskscope.lock").exists(), "the lock is removed");
        assert_eq!(o.exit_code().unwrap(), 1);
    }

    #[test]
    fn a_held_out_dir_is_refused_before_the_runner_prepares_anything() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let held = crate::fsguard::DirLock::acquire(&out, "--out").unwrap();
        let plan = plan_of(&two_points(d.path()), &out);
        let mock = Mock::default();
        let e = run(plan, &mock, &Arc::new(AtomicBool::new(false)), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("another diskscope batch is writing to"), "{e}");
        assert!(!*mock.prepared.borrow(), "nothing is prepared");
        assert_eq!(mock.refused.borrow().as_deref(), Some(e.as_str()));
        assert!(!out.join("x.csv").exists());
        drop(held);
    }

    #[test]
    fn an_old_output_is_refused_before_the_runner_prepares_anything() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(out.join("sweep.json"), "{}").unwrap();
        let mock = Mock::default();
        let e = run(
            plan_of(&two_points(d.path()), &out),
            &mock,
            &Arc::new(AtomicBool::new(false)),
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("--out: ") && e.contains("sweep.json"), "{e}");
        assert!(!*mock.prepared.borrow());
        assert_eq!(
            std::fs::read_to_string(out.join("sweep.json")).unwrap(),
            "{}"
        );
    }

    #[test]
    fn a_process_that_writes_nothing_measures_but_creates_no_out_dir() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let mock = Mock {
            follower: true,
            ..Mock::default()
        };
        let o = run(
            plan_of(&two_points(d.path()), &out),
            &mock,
            &Arc::new(AtomicBool::new(false)),
            false,
        )
        .unwrap();
        assert!(*mock.prepared.borrow());
        assert_eq!(o.ended, Ended::Delegated(0));
        assert_eq!(o.rows[0].runs.len(), 2, "it ran the points");
        assert!(o.written.is_empty());
        assert!(!out.exists(), "a follower writes nothing");
    }
}
