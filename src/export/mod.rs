//! Exporters: CSV files, per-point summaries, SVG plots and the summary table, all pure functions
//! of the result rows (except [`csv::CsvSink`], which appends and flushes one row at a time so a
//! crash or Ctrl-C loses only the run in progress). Batch mode is their first user; anything that
//! holds a `&[RunResult]` can call them.
//!
//! Every output of a finished measurement that is written whole is an [`Exporter`] of its
//! outcome (hyperfine's `Exporter`): a pure function from the typed result to named files, which
//! the caller creates exclusively. The outcome type is the caller's (the sweep's `SweepOutcome`,
//! a layer above this one), so the trait is generic over it and this layer names no front end.
//!
//! Every figure is a [`figure::Figure`] (title, panels with linear or log axes, lines, points,
//! bars with whiskers, bands, rules, text, a legend that fits, notes) drawn by the one renderer
//! ([`figure::svg`]); a sweep's bars are built from one data model ([`chart::Chart`]: categories
//! on x, one bar per series with mean bar, median dot and min–max whisker), so every bar figure
//! of the lab is the same builder fed by a different grouping.

pub mod axis;
pub mod chart;
pub mod csv;
pub mod figure;
pub mod html;
pub mod manager;
pub mod session_svg;
pub mod svg;
pub mod table;
pub mod timeline;
pub mod timeline_svg;

pub use self::csv::{
    summarize_runs, summarize_syscalls, CsvSink, RunSummary, SyscallRow, SyscallSummary,
};
pub use crate::measure::RunResult;

/// One output of a finished measurement, computed from its typed outcome `O` without reading
/// anything back (hyperfine's `Exporter`). Pure: it returns the files and writes nothing, so
/// the caller creates every file the same way (exclusively, never through a link, an old one
/// replaced only with `--force`) and an exporter can be checked without a directory.
pub trait Exporter<O: ?Sized>: Sync {
    /// What it writes, for messages (`summary CSV`, `figures`).
    fn name(&self) -> &'static str;
    /// The files of `outcome`, in the order they are written.
    fn export(&self, outcome: &O) -> anyhow::Result<Vec<Export>>;
}

/// A file an [`Exporter`] made: its name (relative to the output directory, or absolute) and
/// its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub name: std::path::PathBuf,
    pub bytes: Vec<u8>,
}

impl Export {
    pub fn new(name: impl Into<std::path::PathBuf>, bytes: impl Into<Vec<u8>>) -> Export {
        Export {
            name: name.into(),
            bytes: bytes.into(),
        }
    }
}

/// `YYYYMMDD-HHMMSS` for seconds since the Unix epoch (UTC).
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Now, UTC, as `2026-11-22 06:50 UTC`.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let s = utc_stamp(secs); // YYYYMMDD-HHMMSS
    format!(
        "{}-{}-{} {}:{} UTC",
        &s[0..4],
        &s[4..6],
        &s[6..8],
        &s[9..11],
        &s[11..13]
    )
}
