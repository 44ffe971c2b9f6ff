//! fio's job files in: `diskscope --batch job.fio` plans and runs the jobs of a fio job file
//! (or of fio command lines, such as the `<experiment>-fio.txt` a sweep writes) as the sweep's
//! throughput experiments, one experiment per job, so everything after planning — the printed
//! plan, the runs, the CSVs and figures — is the sweep's own.
//!
//! The steps, each its own module: [`parse`] reads the text as fio does (sections, `[global]`
//! inheritance, comments, includes, substitutions), keeping the file and line of every option;
//! [`map`] turns each job's options (named and read by [`options`]) into a
//! [`RunSpec`](crate::config::spec::RunSpec) and refuses every option diskscope does not implement by
//! name, with its line and what to do: an option is never silently ignored; [`file`] picks the
//! one file of the batch; [`plan`] assembles the sweep's plan. Every error is a [`FioError`]
//! ([`error`]) that names its file and line. The printed plan says, for every setting, the fio option it came
//! from (docs/fio.md has the whole table).
//!
//! Which reader `--batch` uses ([`format_of`]): a file named `*.fio`, `*.job` or `*.ini` is a
//! job file; a file whose first line that is not blank or a `#`/`;` comment starts with `fio `
//! holds command lines; anything else is a TOML sweep. (A TOML sweep's first table can be
//! `[file]`, so a section header alone does not tell the two apart; `[global]` does, since no
//! sweep has such a table.)

pub mod error;
pub mod explorer;
pub mod file;
pub mod map;
pub mod options;
pub mod parse;
pub mod plan;
mod region;

pub use error::FioError;

use crate::sweep::plan::Plan;
use std::path::Path;

/// How a `--batch` file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// fio's INI job file.
    JobFile,
    /// `fio --opt=value ...` lines.
    CommandLines,
}

/// Which fio format `text` (read from `path`) is in, or None for a TOML sweep.
pub fn format_of(path: &Path, text: &str) -> Option<Format> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if matches!(ext.as_deref(), Some("fio" | "job" | "ini")) {
        return Some(Format::JobFile);
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(';'))?;
    if first == "fio" || first.starts_with("fio ") {
        Some(Format::CommandLines)
    } else if first == "[global]" {
        Some(Format::JobFile)
    } else {
        None
    }
}

/// Plans a fio job file (or command lines) read from `path` as a sweep.
pub fn load(
    path: &Path,
    text: &str,
    format: Format,
    out: Option<&Path>,
    force: bool,
) -> anyhow::Result<Plan> {
    let display = crate::text::shown_path(path).into_owned();
    let jobs = match format {
        Format::JobFile => parse::parse_ini_file(path, &display),
        Format::CommandLines => parse::parse_command_lines(text, &display),
    }
    .map_err(usage_of)?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fio".into());
    plan::plan(&jobs, &display, &stem, out, force).map_err(usage_of)
}

/// A [`FioError`] as the usage error the front end prints in one line (exit status 2).
fn usage_of(e: FioError) -> anyhow::Error {
    crate::config::usage(e.to_string())
}
