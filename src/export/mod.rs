//! Exporters: CSV files, per-point summaries, SVG plots and the summary table, all pure functions
//! of the result rows (except [`csv::CsvSink`], which appends and flushes one row at a time so a
//! crash or Ctrl-C loses only the run in progress). Batch mode is their first user; anything that
//! holds a `&[RunResult]` can call them.
//!
//! Plots go through one data model ([`chart::Chart`]: categories on x, one bar per series with
//! mean bar, median dot and min–max whisker) so every figure of the lab is the same renderer fed
//! by a different grouping.

pub mod axis;
pub mod chart;
pub mod csv;
pub mod session_svg;
pub mod svg;
pub mod table;

pub use self::csv::{
    summarize_runs, summarize_syscalls, CsvSink, RunSummary, SyscallRow, SyscallSummary,
};
pub use crate::measure::RunResult;
