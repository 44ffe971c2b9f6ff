//! The timeline CSV: one row per interval of each run (`run --timeline FILE.csv`, a batch's
//! `<experiment>-timeline.csv`), each row the run's setup columns (named as in the results CSV:
//! experiment, operation, method, ..., rep) followed by the interval's columns
//! ([`IntervalRow`]: time, bytes, rates, latency percentiles, device and CPU). Floats are
//! rounded and unknown figures left empty as in every CSV diskscope writes.

use crate::config::{usage, RecordedSetup};
use crate::fsguard::Created;
use crate::measure::columns::Part;
use crate::measure::timeline::{parse_interval, IntervalRow};
use crate::measure::RunResult;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The setup columns of a run, repeated on each of its intervals: its experiment, the settings
/// every table shows (`RecordedSetup::shown`), its repetition and the device of its counters.
#[derive(Debug, Clone, Default)]
pub struct RunKey {
    pub experiment: String,
    pub setup: RecordedSetup,
    pub rep: u32,
    /// The device whose counters the row's `dev_` columns are (empty: no device).
    pub device: String,
}

impl Serialize for RunKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let shown = RecordedSetup::SHOWN_COLUMNS;
        let mut st = s.serialize_struct("RunKey", shown.len() + 3)?;
        st.serialize_field("experiment", &self.experiment)?;
        Part::of(Some(&self.setup)).emit(&mut st, shown.last().copied())?;
        st.serialize_field("rep", &self.rep)?;
        st.serialize_field("device", &self.device)?;
        st.end()
    }
}

impl RunKey {
    /// The key of `r` (the device is its timeline's).
    pub fn of(r: &RunResult) -> RunKey {
        RunKey {
            experiment: crate::text::csv_cell(&r.identity.experiment).into_owned(),
            setup: r.setup.shown(),
            rep: r.identity.rep,
            device: r
                .timeline
                .as_ref()
                .and_then(|t| t.device.clone())
                .unwrap_or_default(),
        }
    }
}

/// Every interval row of `runs` (runs without a timeline add none), with its run's key.
pub fn timeline_rows(runs: &[&RunResult]) -> Vec<(RunKey, IntervalRow)> {
    let mut out = Vec::new();
    for r in runs {
        let Some(t) = &r.timeline else { continue };
        let key = RunKey::of(r);
        out.extend(t.rows.iter().map(|row| (key.clone(), row.clone())));
    }
    out
}

/// The `timeline` of a sweep's JSON document: per run with a timeline, its key and timeline.
pub fn timeline_json(runs: &[&RunResult]) -> anyhow::Result<serde_json::Value> {
    let mut out = Vec::new();
    for r in runs {
        if let Some(t) = &r.timeline {
            out.push(serde_json::json!({ "run": RunKey::of(r), "timeline": timeline_value(t)? }));
        }
    }
    Ok(serde_json::Value::Array(out))
}

/// The response-time columns of an open-loop interval (`--rate`): intended start →
/// completion, microseconds; empty where the interval completed no operation or its run was
/// closed loop.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RespColumns {
    pub resp_p50_us: f64,
    pub resp_p99_us: f64,
    pub resp_p999_us: f64,
}

impl Default for RespColumns {
    /// Floats (so the CSV writer rounds them), unknown: NaN, an empty cell.
    fn default() -> Self {
        RespColumns {
            resp_p50_us: 0.0,
            resp_p99_us: 0.0,
            resp_p999_us: 0.0,
        }
    }
}

impl RespColumns {
    fn of(row: &IntervalRow) -> RespColumns {
        match &row.resp {
            Some(l) if row.ops > 0 => RespColumns {
                resp_p50_us: l.p50_us,
                resp_p99_us: l.p99_us,
                resp_p999_us: l.p999_us,
            },
            _ => RespColumns {
                resp_p50_us: f64::NAN,
                resp_p99_us: f64::NAN,
                resp_p999_us: f64::NAN,
            },
        }
    }
}

/// The kernel view's columns of an interval (`--kernel`, `crate::kernel`): the requests
/// issued to the driver, the block layer's queue time and the device's time (p50, p99,
/// microseconds), the mean size as issued (bytes), merges and splits; empty where the run had
/// no view (or it was absent) and, for the times and size, where the interval had no request.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct KernelColumns {
    pub kernel_requests: Option<u64>,
    pub kernel_queue_p50_us: f64,
    pub kernel_queue_p99_us: f64,
    pub kernel_device_p50_us: f64,
    pub kernel_device_p99_us: f64,
    pub kernel_issued_mean_bytes: f64,
    pub kernel_merges: Option<u64>,
    pub kernel_splits: Option<u64>,
}

impl KernelColumns {
    fn of(row: &IntervalRow) -> KernelColumns {
        match &row.kernel {
            Some(k) => KernelColumns {
                kernel_requests: Some(k.requests),
                kernel_queue_p50_us: k.queue_p50_us,
                kernel_queue_p99_us: k.queue_p99_us,
                kernel_device_p50_us: k.device_p50_us,
                kernel_device_p99_us: k.device_p99_us,
                kernel_issued_mean_bytes: k.issued_mean_bytes,
                kernel_merges: Some(k.merges),
                kernel_splits: Some(k.splits),
            },
            None => KernelColumns {
                kernel_queue_p50_us: f64::NAN,
                kernel_queue_p99_us: f64::NAN,
                kernel_device_p50_us: f64::NAN,
                kernel_device_p99_us: f64::NAN,
                kernel_issued_mean_bytes: f64::NAN,
                ..Default::default()
            },
        }
    }
}

/// The timeline CSV of `runs`; empty when none has a timeline. When some run is open loop
/// (`--rate`), every row also has the `resp_p50_us`, `resp_p99_us`, `resp_p999_us` columns
/// (empty for a closed-loop run's rows); when some run has the kernel view (`--kernel`), the
/// `kernel_*` columns ([`KernelColumns`]) follow; otherwise the header is the plain one.
pub fn to_timeline_csv(runs: &[&RunResult]) -> anyhow::Result<String> {
    let rows = timeline_rows(runs);
    let open_loop = runs.iter().any(|r| r.setup.rate().is_some());
    let kernel = runs
        .iter()
        .any(|r| r.timeline.as_ref().is_some_and(|t| t.kernel.is_some()));
    match (open_loop, kernel) {
        (false, false) => super::csv::to_csv_tidy(&rows),
        (true, false) => {
            let rows: Vec<(RunKey, IntervalRow, RespColumns)> = rows
                .into_iter()
                .map(|(k, row)| {
                    let resp = RespColumns::of(&row);
                    (k, row, resp)
                })
                .collect();
            super::csv::to_csv_tidy(&rows)
        }
        (false, true) => {
            let rows: Vec<(RunKey, IntervalRow, KernelColumns)> = rows
                .into_iter()
                .map(|(k, row)| {
                    let kernel = KernelColumns::of(&row);
                    (k, row, kernel)
                })
                .collect();
            super::csv::to_csv_tidy(&rows)
        }
        (true, true) => {
            let rows: Vec<(RunKey, IntervalRow, RespColumns, KernelColumns)> = rows
                .into_iter()
                .map(|(k, row)| {
                    let (resp, kernel) = (RespColumns::of(&row), KernelColumns::of(&row));
                    (k, row, resp, kernel)
                })
                .collect();
            super::csv::to_csv_tidy(&rows)
        }
    }
}

/// The timeline outputs of one `run` command line, checked and opened before the run: the
/// `--timeline` CSV must not exist (it is written after the run), the `--log-ops` CSV is created
/// now (exclusively, never through a link) and removed again if the run does not finish.
pub struct TimelineOutputs {
    pub interval: Duration,
    csv: Option<PathBuf>,
    log: Option<(std::fs::File, Created)>,
    /// The log file, kept once the run finished.
    log_created: Option<Created>,
}

impl TimelineOutputs {
    /// Checks the flags (`--timeline`, `--interval`, `--log-ops`) and creates the log; turns the
    /// workers' per-operation log on when one is asked for.
    /// `measured`: the run's FILE, which neither output may be.
    pub fn open(
        csv: Option<&Path>,
        interval: &str,
        log_ops: Option<&Path>,
        measured: &Path,
    ) -> anyhow::Result<TimelineOutputs> {
        let interval = parse_interval(interval, "--interval")?;
        // Everything that would keep the CSV (written after the run) from being written is
        // found now, before the measuring: a missing or read-only directory, a directory name,
        // a full file system, a file already there, the measured file itself.
        if let Some(p) = csv {
            if crate::fsguard::same_place(p, measured) {
                return Err(usage(format!(
                    "--timeline: {} is the file the run measures; give the timeline another name",
                    crate::text::shown_path(p)
                )));
            }
            if std::fs::symlink_metadata(p).is_ok() && !p.is_dir() {
                return Err(usage(format!(
                    "--timeline: {} already exists; give a new file name (diskscope does not \
                     replace it)",
                    crate::text::shown_path(p)
                )));
            }
            if let Some(refusal) =
                crate::fsguard::check_new_output(p, false, "--timeline", Some(measured))
            {
                return Err(usage(refusal));
            }
        }
        let log = match log_ops {
            Some(p) if csv.is_some_and(|c| crate::fsguard::same_place(c, p)) => {
                return Err(usage("--log-ops: give it another file than --timeline"))
            }
            Some(p) if crate::fsguard::same_place(p, measured) => {
                return Err(usage(format!(
                    "--log-ops: {} is the file the run measures; give the log another name",
                    crate::text::shown_path(p)
                )))
            }
            Some(p) => Some(
                crate::fsguard::create_output(p, false, "--log-ops")
                    .map_err(|e| usage(e.to_string()))?,
            ),
            None => None,
        };
        crate::measure::log_ops(log.is_some());
        Ok(TimelineOutputs {
            interval,
            csv: csv.map(Path::to_path_buf),
            log_created: log.as_ref().map(|(_, c)| c.clone()),
            log,
        })
    }

    /// The per-operation log's file, for `Run::log_ops_to` (once).
    pub fn take_log(&mut self) -> Option<Box<dyn std::io::Write + Send>> {
        self.log
            .take()
            .map(|(f, _)| Box::new(f) as Box<dyn std::io::Write + Send>)
    }

    /// After a finished run: writes the `--timeline` CSV of `r` and keeps the log; returns the
    /// lines for stderr (the timeline's reading, the files written).
    pub fn finish(mut self, r: &RunResult, log_error: Option<&str>) -> anyhow::Result<Vec<String>> {
        let mut lines = r
            .timeline
            .as_ref()
            .map(|t| t.reading_lines_for_stderr())
            .unwrap_or_default();
        crate::measure::log_ops(false);
        if let Some(p) = &self.csv {
            crate::fsguard::write_output_with(
                p,
                to_timeline_csv(&[r])?.as_bytes(),
                false,
                "--timeline",
                usage,
            )?;
            lines.push(format!("timeline: {}", crate::text::shown_path(p)));
        }
        if let Some(c) = self.log_created.take() {
            match log_error {
                Some(e) => lines.push(format!(
                    "--log-ops: {} is incomplete: {e}",
                    crate::text::shown_path(&c.path)
                )),
                None => lines.push(format!("operations: {}", crate::text::shown_path(&c.path))),
            }
        }
        Ok(lines)
    }
}

impl Drop for TimelineOutputs {
    /// A run that did not finish leaves no half log behind.
    fn drop(&mut self) {
        crate::measure::log_ops(false);
        if let Some(c) = self.log_created.take() {
            c.remove();
        }
    }
}

/// `--json`: the run's document with its timeline (rows and reading) added as `timeline`.
pub fn with_timeline(doc: &str, r: &RunResult) -> anyhow::Result<String> {
    let Some(t) = &r.timeline else {
        return Ok(doc.to_string());
    };
    let mut v: serde_json::Value = serde_json::from_str(doc)?;
    v["timeline"] = timeline_value(t)?;
    Ok(serde_json::to_string_pretty(&v)?)
}

/// A timeline as JSON: its serde form, with each open-loop interval's `resp_p50_us`,
/// `resp_p99_us` and `resp_p999_us` added to its row (they are not serde fields of the row, so
/// the CSV can add them as columns only where a run is open loop), and with the kernel view,
/// each interval's `kernel_*` figures ([`KernelColumns`]).
pub fn timeline_value(t: &crate::measure::timeline::Timeline) -> anyhow::Result<serde_json::Value> {
    let mut v = serde_json::to_value(t)?;
    if let Some(rows) = v["rows"].as_array_mut() {
        for (json, row) in rows.iter_mut().zip(&t.rows) {
            if t.kernel.is_some() {
                // NaN becomes null.
                if let serde_json::Value::Object(cols) =
                    serde_json::to_value(KernelColumns::of(row))?
                {
                    for (k, x) in cols {
                        json[k] = x;
                    }
                }
            }
            if row.resp.is_none() {
                continue;
            }
            let r = RespColumns::of(row);
            for (k, x) in [
                ("resp_p50_us", r.resp_p50_us),
                ("resp_p99_us", r.resp_p99_us),
                ("resp_p999_us", r.resp_p999_us),
            ] {
                json[k] =
                    serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, Into::into);
            }
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Op;
    use crate::measure::device::Sampler;
    use crate::measure::{new_latency_histogram, Snapshot, SnapshotKind, TimelineBuilder};
    use std::time::Duration;

    #[test]
    fn a_timeline_csv_has_the_setup_columns_then_one_row_per_interval() {
        let mut b = TimelineBuilder::new(Duration::from_secs(1), Sampler { device: None });
        let mut latency = new_latency_histogram();
        latency.record(12_345).unwrap();
        b.add(&Snapshot {
            worker: 0,
            at_ns: 1_500_000_000,
            interval_ns: 100_000_000,
            bytes: 4096,
            ops: 1,
            latency,
            ops_log: Vec::new(),
            paced: None,
            mixed: None,
            kind: SnapshotKind::Interval,
        });
        let mut r = RunResult {
            identity: crate::measure::result::Identity {
                experiment: "=x".into(),
                rep: 2,
                ..Default::default()
            },
            ..Default::default()
        };
        r.timeline = Some(std::sync::Arc::new(b.finish(
            2_000_000_000,
            Op::Read,
            false,
            4096,
        )));
        let csv = to_timeline_csv(&[&r]).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert!(
            lines[0].starts_with("experiment,operation,method,pattern,cache,direct,block_size_bytes,threads,queue_depth,rep,device,t_start_s,t_end_s,bytes,ops,mib_s,iops,lat_p50_us"),
            "{}",
            lines[0]
        );
        assert!(
            lines[0].contains("dev_util_pct,cpu_usr_pct"),
            "{}",
            lines[0]
        );
        assert_eq!(lines.len(), 3, "{csv}");
        // A formula-looking name is neutralised; no device: empty device cells.
        assert!(
            lines[2].starts_with("'=x,") && lines[2].contains(",2,,1,2,4096,1,"),
            "{}",
            lines[2]
        );
        assert!(lines[2].ends_with(",,,,,,,,,,,,,"), "{}", lines[2]);
        assert!(to_timeline_csv(&[&RunResult::default()])
            .unwrap()
            .is_empty());
    }
}
