//! The baseline every results row is compared with (Δ%).
//!
//! Two sources, one shape: a row of this session pinned with `B`, or a list of records supplied
//! from outside (a previous run's results, e.g. `diskscope --baseline RESULTS` through the compare
//! module). A record says what a *setup* achieved: [`setup_key`] names the setup of a row
//! (operation, method, order, cache, O_DIRECT, block size, threads, queue depth) so a row finds
//! its own reference in a list; a pinned row is the reference of every row.

use crate::measure::RunResult;

/// What one setup achieved before: the reference of rows with the same [`setup_key`].
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineRecord {
    /// [`setup_key`] of the setup.
    pub setup: String,
    pub mib_s: f64,
    pub p99_us: f64,
}

impl BaselineRecord {
    /// The record of a finished row.
    pub fn of(r: &RunResult) -> Self {
        BaselineRecord {
            setup: setup_key(r),
            mib_s: r.mib_s,
            p99_us: r.lat_p99_us,
        }
    }
}

/// The reference rows are compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Baseline {
    /// Row `index` of the session's results table (pinned with `B`): every row is compared
    /// with it.
    Pinned {
        index: usize,
        record: BaselineRecord,
    },
    /// Records from outside: each row is compared with the record of its own setup, if any.
    Records(Vec<BaselineRecord>),
}

/// The setup a row measured, as a stable text key:
/// `read pread sequential as-is buffered 1M t1 qd1`.
pub fn setup_key(r: &RunResult) -> String {
    format!(
        "{} {} {} {} {} {} t{} qd{}",
        r.operation,
        r.method,
        r.pattern,
        r.cache,
        if r.direct { "direct" } else { "buffered" },
        crate::size::format_size(r.block_size_bytes),
        r.threads,
        r.queue_depth
    )
}

impl Baseline {
    /// The records of finished rows (failed ones left out), for supplying a baseline from a
    /// results file.
    pub fn from_results(rows: &[RunResult]) -> Baseline {
        Baseline::Records(
            rows.iter()
                .filter(|r| r.error.is_empty() && r.ops > 0)
                .map(BaselineRecord::of)
                .collect(),
        )
    }

    /// The record `r` is compared with.
    pub fn reference(&self, r: &RunResult) -> Option<&BaselineRecord> {
        match self {
            Baseline::Pinned { record, .. } => Some(record),
            Baseline::Records(list) => {
                let key = setup_key(r);
                // The last record of a setup wins (the newest repetition).
                list.iter().rev().find(|b| b.setup == key)
            }
        }
    }

    /// Throughput of `r` relative to its reference, percent (`+12.0` = 12% faster).
    pub fn delta_pct(&self, r: &RunResult) -> Option<f64> {
        let b = self.reference(r)?;
        (b.mib_s > 0.0).then(|| (r.mib_s / b.mib_s - 1.0) * 100.0)
    }

    /// A one-line description for the status line and the exports.
    pub fn describe(&self) -> String {
        match self {
            Baseline::Pinned { record, .. } => format!("baseline: {}", record.setup),
            Baseline::Records(list) => format!("baseline: {} records from outside", list.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(bs: u64, mib_s: f64) -> RunResult {
        RunResult {
            operation: "read".into(),
            method: "pread".into(),
            pattern: "sequential".into(),
            cache: "as-is".into(),
            block_size_bytes: bs,
            threads: 1,
            queue_depth: 1,
            mib_s,
            ops: 10,
            ..Default::default()
        }
    }

    #[test]
    fn a_pinned_row_is_every_rows_reference() {
        let b = Baseline::Pinned {
            index: 0,
            record: BaselineRecord::of(&row(4096, 100.0)),
        };
        assert_eq!(b.delta_pct(&row(1 << 20, 150.0)), Some(50.0));
        assert_eq!(b.delta_pct(&row(4096, 100.0)), Some(0.0));
    }

    #[test]
    fn records_from_outside_match_rows_by_setup() {
        let b = Baseline::from_results(&[row(4096, 100.0), row(1 << 20, 1000.0)]);
        assert_eq!(
            b.delta_pct(&row(1 << 20, 900.0)).map(f64::round),
            Some(-10.0)
        );
        assert_eq!(b.delta_pct(&row(8192, 900.0)), None);
        assert_eq!(
            setup_key(&row(4096, 1.0)),
            "read pread sequential as-is buffered 4K t1 qd1"
        );
    }
}
