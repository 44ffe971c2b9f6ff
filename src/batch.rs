//! `--batch FILE`: what the file is and who plans it. A built-in preset's name or a sweep file
//! (TOML) is `sweep`'s; a fio job file (`*.fio`, `*.job`, `*.ini`, or text starting with
//! `[global]`) or fio command lines (a `-fio.txt` companion) are `fiojob`'s, which plans them
//! into the sweep's own [`Plan`]. Then one executor runs the plan (`sweep::execute`).
//!
//! Why a module of its own: the sweep knows nothing of fio's formats and `fiojob` builds on the
//! sweep's plan, so the choice between them sits above both (before, the sweep handed fio files
//! to `fiojob`, an import against the grain of its layer).

use crate::fleet::FleetOptions;
use crate::sweep::plan::Plan;
use crate::sweep::SweepOutcome;
use std::path::Path;

/// Reads and plans `path` (a preset's name, a sweep file, a fio job file or fio command lines)
/// without running anything, with the sweep's `fleet` options (None for a fio job file, which
/// has none).
pub fn read(
    path: &Path,
    out: Option<&Path>,
    force: bool,
) -> anyhow::Result<(Plan, Option<FleetOptions>)> {
    if let Some(loaded) = crate::sweep::preset(path, out, force)? {
        return Ok(loaded);
    }
    let text = crate::sweep::read_input(path)?;
    if let Some(format) = crate::fiojob::format_of(path, &text) {
        return Ok((crate::fiojob::load(path, &text, format, out, force)?, None));
    }
    crate::sweep::plan_file(path, text, out, force)
}

/// [`read`]'s plan alone.
pub fn load(path: &Path, out: Option<&Path>, force: bool) -> anyhow::Result<Plan> {
    Ok(read(path, out, force)?.0)
}

/// `--batch FILE`: plans it and runs the plan (`sweep::execute`); None for `--dry-run`.
pub fn execute(
    path: &Path,
    out: Option<&Path>,
    dry_run: bool,
    force: bool,
    json: bool,
) -> anyhow::Result<Option<SweepOutcome>> {
    let (plan, fleet) = read(path, out, force)?;
    crate::sweep::execute(plan, fleet, dry_run, json)
}
