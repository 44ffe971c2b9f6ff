//! What the results table reads of the explorer's state: [`TableView`], the finished rows and
//! their extras, the live segment, the baseline, the hidden rows, the sort and the cursor, and
//! the unit throughput is shown in.
//!
//! The table's widget (`widgets::results`) lays out and draws a `&dyn TableView`; the state
//! (`app::App`) implements it and asks the widget for its rows (the cursor's bounds, the row
//! under it, the sort's column names). With the view here, below both, the widget never names
//! the state, so the two files do not import each other (tests/architecture.rs sees no cycle).

use super::baseline::Baseline;
use super::segment::{RowExtra, Segment};
use crate::measure::RunResult;
use std::collections::BTreeSet;

/// The explorer's state as the results table reads it.
pub trait TableView {
    /// Finished rows, oldest first.
    fn rows(&self) -> &[RunResult];
    /// What the table shows of each finished row beside its result (same order as `rows`).
    fn row_extra(&self) -> &[RowExtra];
    /// How many of the first rows are saved already (`s`).
    fn rows_saved(&self) -> usize;
    /// The setting running now, if any.
    fn live(&self) -> Option<&Segment>;
    /// What every row is compared with (`B`, `--baseline`).
    fn baseline(&self) -> Option<&Baseline>;
    /// Indices of the rows hidden (`h`).
    fn hidden_rows(&self) -> &BTreeSet<usize>;
    /// The column the finished rows are sorted by (`o`); `None`: newest first.
    fn table_sort(&self) -> Option<usize>;
    /// The cursor's line in the table's body.
    fn table_cursor(&self) -> usize;
    /// The throughput unit shown: `MiB/s` or `MB/s`.
    fn unit(&self) -> &'static str;
    /// A MiB/s figure in the unit shown.
    fn in_unit(&self, mib_s: f64) -> f64;
    /// Δ% of `r` against the baseline, if it has a reference.
    fn delta_pct(&self, r: &RunResult) -> Option<f64>;
}
