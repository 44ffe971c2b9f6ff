//! Batch mode: `diskscope --batch SWEEP.toml [--out DIR] [--dry-run]` runs the lab's experiments
//! headless and writes CSVs, summaries and SVG figures.
//!
//! One pipeline, in order: read and parse the sweep ([`schema`]), check everything and expand the
//! axes into points ([`plan`]), print the plan, create the test file if asked ([`files`]), run each
//! experiment ([`exec`], [`command`] for external commands) writing every repetition to `<experiment>.csv` as it ends, then write the
//! summaries and figures ([`output`], built on [`crate::export`]) and print the summary table.
//!
//! Ctrl-C (and SIGTERM) raise a stop flag: the run in progress stops within ~100 ms and is
//! dropped, summaries and figures of the finished runs are written, the test file is removed, and
//! the exit status is 130. A second signal is taken as the same request (GNU `timeout` sends two);
//! a third removes the lock and the test file this run created and exits at once.

pub mod command;
pub mod estimate;
pub mod exec;
pub mod experiment;
pub mod files;
pub mod fleet;
pub mod json;
pub mod kinds;
pub mod layered;
pub mod output;
pub mod plan;
pub mod points;
pub mod progress;
pub mod schema;
pub mod text;
pub mod values;
pub mod wait;

use crate::config::usage;
use crate::export::{CsvSink, RunResult, SyscallRow};
use crate::size::format_size;
use experiment::{Ended, Row};
use output::Collected;
use plan::Plan;
use schema::Source;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

pub use crate::config::EXIT_INTERRUPTED;
pub use progress::format_secs;
pub use text::plan_text;

/// Reads and plans a sweep file without running anything. A fio job file (`*.fio`, `*.job`,
/// `*.ini`, or text starting with `[global]`) or fio command lines (a `-fio.txt` companion) are
/// planned by [`crate::fiojob`] into the same plan.
pub fn load(sweep_path: &Path, out: Option<&Path>, force: bool) -> anyhow::Result<Plan> {
    crate::fsguard::check_input(sweep_path, "SWEEP.toml").map_err(usage)?;
    let text = std::fs::read_to_string(sweep_path).map_err(|e| {
        usage(format!(
            "SWEEP.toml: cannot read {}: {e}; check the path",
            sweep_path.display()
        ))
    })?;
    if let Some(format) = crate::fiojob::format_of(sweep_path, &text) {
        return crate::fiojob::load(sweep_path, &text, format, out, force);
    }
    let src = Source {
        display: sweep_path.display().to_string(),
        text,
    };
    let doc = src.parse()?;
    let stem = sweep_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    plan::build_with(&src, &doc, &stem, out, force)
}

/// The process-wide stop flag, raised by Ctrl-C / SIGTERM once the handler is installed.
/// `rmdir`s a directory this run created when dropped, which succeeds only if it is empty.
struct RemoveIfEmpty(Option<std::path::PathBuf>);

impl Drop for RemoveIfEmpty {
    fn drop(&mut self) {
        if let Some(d) = &self.0 {
            let _ = std::fs::remove_dir(d);
        }
    }
}

fn stop_flag() -> Arc<AtomicBool> {
    static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    static SIGNALS: AtomicUsize = AtomicUsize::new(0);
    STOP.get_or_init(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        // The first signal stops the sweep; a second one (GNU `timeout` signals both the group
        // and the child, so two arrive together) keeps stopping gracefully; only a third quits
        // at once, still removing the lock and the test file this run created.
        let installed = ctrlc::set_handler(move || {
            s.store(true, Ordering::SeqCst);
            match SIGNALS.fetch_add(1, Ordering::SeqCst) {
                0 => {}
                1 => eprintln!(
                    "stopping: writing what finished; a third Ctrl-C quits at once (no summaries)"
                ),
                _ => {
                    files::remove_registered();
                    std::process::exit(EXIT_INTERRUPTED);
                }
            }
        });
        if let Err(e) = installed {
            eprintln!("note: Ctrl-C will not stop the sweep cleanly: {e}");
        }
        stop
    })
    .clone()
}

pub fn execute(
    sweep_path: &Path,
    out: Option<&Path>,
    dry_run: bool,
    force: bool,
) -> anyhow::Result<i32> {
    let plan = load(sweep_path, out, force)?;
    // Under mpirun/srun (built with `--features mpi`): every rank runs the sweep, src/fleet/.
    // A fio job file has no `fleet` key (and is no TOML to look for one in).
    let is_fio = std::fs::read_to_string(sweep_path)
        .is_ok_and(|t| crate::fiojob::format_of(sweep_path, &t).is_some());
    let fleet_options = if is_fio {
        None
    } else {
        fleet::options_of(sweep_path)?
    };
    #[cfg(feature = "mpi")]
    if !dry_run {
        if let Some(fleet) = crate::fleet::join(fleet_options.unwrap_or_default())? {
            let stop = stop_flag();
            stop.store(false, Ordering::SeqCst);
            return fleet::execute(&plan, fleet, &stop);
        }
    }
    if fleet_options.is_some() && !(cfg!(feature = "mpi") && crate::fleet::launched_by_mpi()) {
        eprintln!(
            "note: the sweep's `fleet` key applies under mpirun/srun with a diskscope built \
             with --features mpi; running as one process"
        );
    }
    // With --json the document owns stdout; the plan and the summary table go to stderr.
    let mut stdout: Box<dyn Write> = if crate::explain::json::batch_json() {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout().lock())
    };
    write!(stdout, "{}", plan_text(&plan))?;
    stdout.flush()?;
    let estimate_s: f64 = plan.experiments.iter().filter_map(|x| x.estimate_s()).sum();
    if estimate_s > plan::MAX_ESTIMATE_S && !force {
        let why = format!(
            "--force: the plan measures for about {}, over the {} cap; shorten the lists, \
             lower reps or seconds, or pass --force to run it anyway",
            format_secs(estimate_s),
            format_secs(plan::MAX_ESTIMATE_S)
        );
        if dry_run {
            eprintln!("note: {why}");
            return Ok(0);
        }
        return Err(usage(why));
    }
    if dry_run {
        return Ok(0);
    }
    let stop = stop_flag();
    stop.store(false, Ordering::SeqCst);
    let dir = &plan.out_dir;
    // Removes the output directory again if this run created it and leaves it empty (a refusal
    // below must not leave an empty --out behind). Declared before the lock, so dropped after it.
    let _empty_out = RemoveIfEmpty(
        std::fs::symlink_metadata(dir)
            .is_err()
            .then(|| dir.to_path_buf()),
    );
    std::fs::create_dir_all(dir).map_err(|e| {
        usage(format!(
            "--out: cannot create {}: {e}; pick another directory",
            dir.display()
        ))
    })?;
    // One batch per output directory: a second would interleave rows in the same CSVs and
    // remove the first one's test file.
    let _lock = crate::fsguard::DirLock::acquire(dir, "--out").map_err(usage)?;
    files::register_cleanup(_lock.created().clone());
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
    let _test_file = match &plan.file {
        Some(f) => {
            if f.create {
                eprintln!(
                    "creating the test file {} ({})",
                    f.path.display(),
                    format_size(f.size_bytes)
                );
            }
            match files::materialize(f, &stop) {
                Ok(g) => g,
                Err(_) if stop.load(Ordering::SeqCst) => return Ok(EXIT_INTERRUPTED),
                Err(e) => return Err(e),
            }
        }
        None => None,
    };
    let total: usize = plan.experiments.iter().map(|x| x.runs()).sum();
    let mut progress = progress::Progress::new(total as u64);
    let mut collected: Vec<Collected> = Vec::new();
    let mut interrupted = false;
    let mut written = Vec::new();
    for x in &plan.experiments {
        let csv_path = dir.join(format!("{}.csv", x.name));
        let mut sink = if x.kind.traits().syscall_rows {
            CsvSink::create::<SyscallRow>(&csv_path, plan.force)?
        } else if x.points.iter().any(crate::config::RunSpec::is_mixed) {
            // A mixed point's per-direction columns, on every row (empty on pure ones).
            CsvSink::create_with::<RunResult>(&csv_path, plan.force, RunResult::mixed_columns())?
        } else {
            CsvSink::create::<RunResult>(&csv_path, plan.force)?
        };
        written.push(csv_path);
        let mut rows = Collected::default();
        x.kind
            .run(x, plan.file.as_ref(), &stop, &mut progress, &mut |row| {
                match row {
                    Row::Run(r) => {
                        sink.write(&r)?;
                        rows.runs.push(r);
                    }
                    Row::Syscall(r) => {
                        sink.write(&r)?;
                        rows.syscalls.push(r);
                    }
                }
                Ok(())
            })?;
        let ended = if stop.load(Ordering::SeqCst) {
            Ended::Interrupted
        } else {
            Ended::Completed
        };
        collected.push(rows);
        if ended == Ended::Interrupted {
            interrupted = true;
            break;
        }
    }
    progress.finish();
    let done: Vec<(&plan::Experiment, &Collected)> =
        plan.experiments.iter().zip(&collected).collect();
    written.extend(output::write_results(dir, &plan, &done, true)?);
    let failed = collected
        .iter()
        .flat_map(|c| &c.runs)
        .filter(|r| !r.error.is_empty())
        .count()
        + collected
            .iter()
            .flat_map(|c| &c.syscalls)
            .filter(|r| !r.error.is_empty())
            .count();
    let (docs, doc) = json::write_sweep_documents(dir, &plan, &done)?;
    written.extend(docs);
    writeln!(stdout)?;
    write!(stdout, "{}", output::summary_text(&done))?;
    stdout.flush()?;
    if crate::explain::json::batch_json() {
        crate::lab::println_stdout(&doc)?;
    }
    eprintln!("wrote {} files to {}/", written.len(), dir.display());
    if interrupted {
        eprintln!("interrupted: the CSVs hold the runs that finished before Ctrl-C");
        return Ok(EXIT_INTERRUPTED);
    }
    if failed > 0 {
        eprintln!(
            "{failed} run{} failed; see the error column of the CSVs",
            if failed == 1 { "" } else { "s" }
        );
        return Ok(1);
    }
    Ok(0)
}
