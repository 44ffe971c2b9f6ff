//! Batch mode: `diskscope --batch SWEEP.toml [--out DIR] [--dry-run]` runs the lab's experiments
//! headless and writes CSVs, summaries and SVG figures.
//!
//! One pipeline, in order: read and parse the sweep ([`schema`]), check everything and expand the
//! axes into points ([`plan`]), then one executor ([`run::run`]) for a local sweep and a fleet
//! alike: print the plan, refuse a plan over the cap, lock `--out` and check every output, make
//! the test file ready ([`files`]), run each experiment through a [`PointRunner`] (locally:
//! [`exec`], [`command`] for external commands; under mpirun: [`fleet`]) writing every repetition
//! to `<experiment>.csv` as it ends, then every exporter of the typed [`SweepOutcome`]
//! ([`output::EXPORTERS`], built on [`crate::export`]) and the summary table. The command line
//! maps the outcome to the exit status; `--report` is one more exporter of it.
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
pub mod outcome;
pub mod output;
pub mod plan;
pub mod points;
pub mod presets;
pub mod progress;
pub mod run;
pub mod runner;
pub mod schema;
pub mod text;
pub mod values;
pub mod wait;

use crate::config::usage;
use plan::Plan;
use schema::Source;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use crate::config::EXIT_INTERRUPTED;
pub use outcome::{Ended, SweepOutcome};
pub use progress::format_secs;
pub use runner::PointRunner;
pub use text::plan_text;

// Reading and planning `--batch FILE` is `crate::batch::read`: a preset or a sweep file
// ([`preset`], [`read_input`], [`plan_file`]) or a fio job file, which `crate::fiojob` plans into
// the same [`Plan`]; this module knows no other format.

/// A built-in preset by name (`--batch kdiskmark`) when no file of that name exists, planned,
/// with its `fleet` options; None when `sweep_path` is not a preset's name.
pub fn preset(
    sweep_path: &Path,
    out: Option<&Path>,
    force: bool,
) -> anyhow::Result<Option<(Plan, Option<crate::fleet::FleetOptions>)>> {
    let Some(preset) = presets::resolve(sweep_path).map_err(usage)? else {
        return Ok(None);
    };
    let src = Source {
        display: format!("preset:{}", preset.name),
        text: preset.text.to_string(),
    };
    let doc = src.parse()?;
    let plan = plan::build_with(&src, &doc, preset.name, out, force)?;
    let fleet = doc
        .fleet
        .as_ref()
        .map(|f| f.get_ref().options(&src))
        .transpose()?;
    Ok(Some((plan, fleet)))
}

/// The text of the file `--batch` names: checked to be a readable regular file and read with a
/// size limit (a huge or sparse file named by mistake is refused by its size, at once).
pub fn read_input(sweep_path: &Path) -> anyhow::Result<String> {
    crate::fsguard::check_input(sweep_path, "SWEEP.toml").map_err(|e| usage(e.to_string()))?;
    crate::fsguard::read_text_bounded(sweep_path, crate::fsguard::MAX_TEXT_INPUT_BYTES).map_err(
        |e| {
            let p = crate::text::shown_path(sweep_path);
            usage(match e {
                crate::fsguard::TextReadError::NotUtf8 { line, byte } => format!(
                    "--batch: {p}:{line}: not UTF-8 text (byte 0x{byte:02x}); a sweep or fio \
                     job file is text"
                ),
                crate::fsguard::TextReadError::Io(e) => {
                    format!("--batch: cannot read {p}: {e}; check the path")
                }
                e => format!("--batch: {p} {e}"),
            })
        },
    )
}

/// Plans the sweep file `sweep_path` whose text is `text`, and reads its `fleet` options,
/// checked (in every build, so a misspelt layout is an error even before the first mpirun), or
/// None when it has no `fleet` key. The file is parsed once.
pub fn plan_file(
    sweep_path: &Path,
    text: String,
    out: Option<&Path>,
    force: bool,
) -> anyhow::Result<(Plan, Option<crate::fleet::FleetOptions>)> {
    let src = Source {
        display: crate::text::shown_path(sweep_path).to_string(),
        text,
    };
    let doc = src.parse()?;
    let stem = sweep_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into());
    let plan = plan::build_with(&src, &doc, &stem, out, force)?;
    let fleet = doc
        .fleet
        .as_ref()
        .map(|f| f.get_ref().options(&src))
        .transpose()?;
    Ok((plan, fleet))
}

/// The process's stop flag (`crate::interrupt`), with the sweep's reaction to signals.
fn stop_flag() -> Arc<AtomicBool> {
    // The first signal stops the sweep; a second one (GNU `timeout` signals both the group
    // and the child, so two arrive together) keeps stopping gracefully; only a third quits
    // at once, still removing the lock and the test file this run created.
    crate::interrupt::on_signal(|n| match n {
        0 | 1 => {}
        2 => eprintln!(
            "stopping: writing what finished; a third Ctrl-C quits at once (no summaries)"
        ),
        _ => {
            files::remove_registered();
            std::process::exit(EXIT_INTERRUPTED);
        }
    });
    crate::interrupt::stop_flag()
}

/// `--batch SWEEP`: runs a loaded plan (`crate::batch::read`) through the one executor ([`run::run`]) with the
/// local runner, or under mpirun (a build with `--features mpi`) with the fleet's. Returns the
/// outcome, or None for `--dry-run` (the plan printed, nothing created); the command line maps
/// the outcome to the exit status ([`SweepOutcome::exit_code`]). With `json` the sweep's JSON
/// document goes to stdout, the plan and the summary table to stderr.
pub fn execute(
    plan: Plan,
    fleet_options: Option<crate::fleet::FleetOptions>,
    dry_run: bool,
    json: bool,
) -> anyhow::Result<Option<SweepOutcome>> {
    // Under mpirun/srun (built with `--features mpi`): every rank runs the sweep, src/fleet/.
    #[cfg(feature = "mpi")]
    if !dry_run {
        if let Some(fleet) = crate::fleet::join(fleet_options.unwrap_or_default())? {
            let stop = stop_flag();
            stop.store(false, Ordering::SeqCst);
            return run::run(plan, &fleet::FleetRunner::new(fleet), &stop, json).map(Some);
        }
    }
    if fleet_options.is_some() && !(cfg!(feature = "mpi") && crate::fleet::launched_by_mpi()) {
        eprintln!(
            "note: the sweep's `fleet` key applies under mpirun/srun with a diskscope built \
             with --features mpi; running as one process"
        );
    }
    if dry_run {
        // With --json the document owns stdout; the plan goes to stderr.
        let text = plan_text(&plan);
        if json {
            crate::eprint_shown!("{text}");
        } else {
            crate::text::write_stdout(crate::text::shown_lines(&text).as_bytes())?;
        }
        if let Some(why) = run::over_cap(&plan) {
            crate::eprintln_shown!("note: {why}");
        }
        return Ok(None);
    }
    let stop = stop_flag();
    stop.store(false, Ordering::SeqCst);
    run::run(plan, &runner::LocalRunner, &stop, json).map(Some)
}
