//! The baseline every results row is compared with (Δ%).
//!
//! Two sources, one shape: a row of this session pinned with `B`, or a list of records supplied
//! from outside (a previous run's results, e.g. `diskscope --baseline RESULTS` through the compare
//! module). A record says what a *setup* achieved: a [`SetupKey`] (the settings every table shows,
//! operation to queue depth, as the rows record them) so a row finds its own
//! reference in a list; a pinned row is the reference of every row. The list keeps an index by
//! setup ([`BaselineRecords`]), so a baseline of a million saved points costs one hash look-up
//! per row drawn, not a scan of the list.

use crate::config::RecordedSetup;
use crate::measure::RunResult;
use std::collections::HashMap;
use std::fmt;

/// What one setup achieved before: the reference of rows with the same [`SetupKey`].
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineRecord {
    pub setup: SetupKey,
    pub mib_s: f64,
    pub p99_us: f64,
}

impl BaselineRecord {
    /// The record of a finished row.
    pub fn of(r: &RunResult) -> Self {
        BaselineRecord {
            setup: setup_key(r),
            mib_s: r.figures.mib_s,
            p99_us: r.figures.lat_p99_us,
        }
    }
}

impl BaselineRecord {
    /// The record of a point loaded by the compare module, keyed like a row of this session
    /// (the experiment name does not take part: a row matches a setup, not a sweep).
    fn of_compared(r: &crate::compare::Record) -> Option<Self> {
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        Some(BaselineRecord {
            setup: SetupKey(r.point.setup.shown()),
            mib_s: mean(&r.mib_s)?,
            p99_us: mean(&r.lat_p99_us).unwrap_or(0.0),
        })
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
    Records(BaselineRecords),
}

/// Records from outside, in their order, with an index of the last record of each setup (the
/// newest repetition wins). Reads as a slice of [`BaselineRecord`].
#[derive(Debug, Clone, Default)]
pub struct BaselineRecords {
    list: Vec<BaselineRecord>,
    last_of_setup: HashMap<SetupKey, usize>,
}

impl BaselineRecords {
    /// The record of `key`: the last one with that setup.
    pub fn get(&self, key: &SetupKey) -> Option<&BaselineRecord> {
        self.last_of_setup.get(key).map(|&i| &self.list[i])
    }
}

impl From<Vec<BaselineRecord>> for BaselineRecords {
    fn from(list: Vec<BaselineRecord>) -> Self {
        let last_of_setup = list
            .iter()
            .enumerate()
            .map(|(i, r)| (r.setup.clone(), i))
            .collect();
        BaselineRecords {
            list,
            last_of_setup,
        }
    }
}

impl std::ops::Deref for BaselineRecords {
    type Target = [BaselineRecord];
    fn deref(&self) -> &[BaselineRecord] {
        &self.list
    }
}

impl PartialEq for BaselineRecords {
    fn eq(&self, other: &Self) -> bool {
        self.list == other.list
    }
}

/// The setup a row measured: rows and records match on the settings every table shows
/// ([`RecordedSetup::shown`]). Shown (status line, exports) as `read pread sequential as-is
/// buffered 1M t1 qd1`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SetupKey(pub RecordedSetup);

impl fmt::Display for SetupKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.0;
        write!(
            f,
            "{} {} {} {} {} {} t{} qd{}",
            s.op,
            s.method,
            s.pattern,
            s.cache,
            if s.direct { "direct" } else { "buffered" },
            crate::size::format_size(s.block_size_bytes),
            s.threads,
            s.queue_depth
        )
    }
}

impl serde::Serialize for SetupKey {
    /// The text it is shown as (the session's JSON document).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The setup a row measured.
pub fn setup_key(r: &RunResult) -> SetupKey {
    SetupKey(r.setup.shown())
}

impl Baseline {
    /// The records of a saved run (`diskscope --baseline RESULTS`): a batch result directory, a
    /// per-repetition CSV or rows saved with `s`, read by the compare module. Each setup's
    /// reference is the mean of its successful repetitions.
    pub fn from_saved(path: &std::path::Path) -> Result<Baseline, crate::compare::LoadError> {
        let records = crate::compare::load(path)?;
        Ok(Baseline::Records(
            records
                .iter()
                .filter_map(BaselineRecord::of_compared)
                .collect::<Vec<_>>()
                .into(),
        ))
    }

    /// The records of finished rows (failed ones left out), for supplying a baseline from a
    /// results file.
    pub fn from_results(rows: &[RunResult]) -> Baseline {
        Baseline::Records(
            rows.iter()
                .filter(|r| r.figures.error.is_empty() && r.figures.ops > 0)
                .map(BaselineRecord::of)
                .collect::<Vec<_>>()
                .into(),
        )
    }

    /// The record `r` is compared with.
    pub fn reference(&self, r: &RunResult) -> Option<&BaselineRecord> {
        match self {
            Baseline::Pinned { record, .. } => Some(record),
            // The last record of a setup wins (the newest repetition).
            Baseline::Records(list) => list.get(&setup_key(r)),
        }
    }

    /// Throughput of `r` relative to its reference, percent (`+12.0` = 12% faster).
    pub fn delta_pct(&self, r: &RunResult) -> Option<f64> {
        let b = self.reference(r)?;
        (b.mib_s > 0.0).then(|| (r.figures.mib_s / b.mib_s - 1.0) * 100.0)
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
    use crate::config::{CacheMode, Method, Op, Pattern};

    fn row(bs: u64, mib_s: f64) -> RunResult {
        RunResult {
            setup: crate::config::RecordedSetup {
                op: Op::Read.into(),
                method: Method::Pread.into(),
                pattern: Pattern::Sequential.into(),
                cache: CacheMode::AsIs.into(),
                block_size_bytes: bs,
                threads: 1,
                queue_depth: 1,
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                mib_s,
                ops: 10,
                ..Default::default()
            },
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
        // The last record of a setup is its reference.
        let b = Baseline::from_results(&[row(4096, 100.0), row(4096, 200.0)]);
        assert_eq!(b.delta_pct(&row(4096, 300.0)), Some(50.0));
        assert_eq!(
            setup_key(&row(4096, 1.0)).to_string(),
            "read pread sequential as-is buffered 4K t1 qd1"
        );
    }

    #[test]
    fn rows_saved_with_s_come_back_as_the_baseline_of_the_same_setup() {
        let dir = std::env::temp_dir().join(format!("diskscope-baseline-{}", std::process::id()));
        let _ = std::fs::create_dir(&dir);
        let csv = dir.join("tui-saved.csv");
        let mut saved = vec![row(4096, 100.0), row(4096, 300.0), row(1 << 20, 800.0)];
        for (i, r) in saved.iter_mut().enumerate() {
            r.identity.experiment = "tui".into();
            r.identity.rep = i as u32 + 1;
            r.figures.lat_p99_us = 50.0;
        }
        crate::tui::save::append_rows(&csv, &saved).unwrap();
        let b = Baseline::from_saved(&csv);
        let _ = std::fs::remove_file(&csv);
        let _ = std::fs::remove_dir(&dir);
        let b = b.unwrap();
        // 4K: mean of 100 and 300 is the reference; 1M has its own.
        assert_eq!(b.delta_pct(&row(4096, 300.0)), Some(50.0));
        assert_eq!(b.delta_pct(&row(1 << 20, 400.0)), Some(-50.0));
        assert_eq!(b.delta_pct(&row(8192, 400.0)), None, "no such setup saved");
    }

    #[test]
    fn a_fio_json_document_is_a_baseline_of_its_jobs_setups() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fio/psync-seq-rand.json");
        let Baseline::Records(list) = Baseline::from_saved(&path).unwrap() else {
            panic!("records expected");
        };
        assert_eq!(list.len(), 2);
        let keys: Vec<String> = list.iter().map(|r| r.setup.to_string()).collect();
        assert!(
            keys.contains(&"read fio:psync sequential invalidate buffered 64K t1 qd1".to_string()),
            "{keys:?}"
        );
        assert!(list.iter().all(|r| r.mib_s > 0.0 && r.p99_us > 0.0));
    }
}
