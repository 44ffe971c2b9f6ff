//! CSV: the per-repetition files (columns are the fields of the row types, via serde) and the
//! per-point summaries (mean, median, min, max and standard deviation over repetitions).
//!
//! Every record goes through [`tidy`] on its way out: floats are rounded to
//! [`SIGNIFICANT_DIGITS`] significant digits (`1.5624820879999999` is timer noise, not
//! precision), and latency that was not measured — an external command like `dd` has no
//! per-operation latency, so all its `lat_*` columns are zero — is left empty rather than
//! written as a `0.0` that reads like a real measurement.

use crate::config::RecordedSetup;
use crate::measure::columns::Part;
use crate::measure::stats::Stats;
use crate::measure::RunResult;
use serde::Serialize;
use std::fs::File;
use std::path::Path;

/// One repetition of the syscall lab: one system call measured for a time budget.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SyscallRow {
    pub experiment: String,
    pub host: String,
    pub file: String,
    /// What was called (`read 1 B`, `getpid`, ...).
    pub syscall: String,
    /// Repetition number, 1-based.
    pub rep: u32,
    pub calls: u64,
    pub seconds: f64,
    pub calls_per_s: f64,
    pub ns_per_call: f64,
    /// Error message when the repetition failed, else empty.
    pub error: String,
    /// Can the figure be trusted as this call's cost (issue 23, `lab::syscalls::judge_call`):
    /// `ok` or `suspect`, with the reason codes and their sentences; empty for a failed one.
    pub verdict: String,
    pub reasons: String,
    pub why: String,
}

/// Significant digits kept in CSV floats: more than any measurement here resolves.
pub const SIGNIFICANT_DIGITS: usize = 6;

/// `v` rounded to [`SIGNIFICANT_DIGITS`] significant digits, in its shortest form (`2683.5`,
/// `1.56248`, `0.000123457`); NaN (not measured, not known) is empty.
pub fn round_float(v: f64) -> String {
    if v.is_nan() {
        // Not known (e.g. residency of a file this user may not write): an empty cell, never a
        // made-up number.
        return String::new();
    }
    if !v.is_finite() || v == 0.0 {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    let rounded: f64 = format!("{v:.*e}", SIGNIFICANT_DIGITS - 1)
        .parse()
        .unwrap_or(v);
    rounded.to_string()
}

/// Which columns of `T` hold floats: a default `T` writes `0.0` there (integers write `0`).
fn float_columns<T: Serialize + Default>() -> anyhow::Result<Vec<bool>> {
    Ok(record_of(&T::default())?
        .iter()
        .map(|f| f == "0.0")
        .collect())
}

/// One row serialized as a CSV record (no header).
fn record_of<T: Serialize>(row: &T) -> anyhow::Result<Vec<String>> {
    let mut w = ::csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.serialize(row)?;
    let bytes = w.into_inner()?;
    let mut r = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes.as_slice());
    let rec = r
        .records()
        .next()
        .ok_or_else(|| anyhow::anyhow!("a row serialized to nothing"))??;
    Ok(rec.iter().map(|c| cell(c).into_owned()).collect())
}

/// Every cell of every CSV diskscope writes passes through here ([`record_of`], [`to_csv`]):
/// a text that a spreadsheet would run as a formula (a path `=1+2.bin`, a fio job named
/// `@SUM(A1)`, a cell starting with `+`, `-`, a tab or a carriage return) gets a leading `'`,
/// and control characters are escaped ([`crate::text::csv_cell`]). Numbers stay numbers.
pub fn cell(text: &str) -> std::borrow::Cow<'_, str> {
    crate::text::csv_cell(text)
}

/// CSV text (header first) with every cell below the header through [`cell`].
pub fn guarded(bytes: &[u8]) -> anyhow::Result<String> {
    let mut r = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut w = ::csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for (i, rec) in r.records().enumerate() {
        let rec = rec?;
        if i == 0 {
            w.write_record(&rec)?;
        } else {
            w.write_record(rec.iter().map(|c| cell(c).into_owned()))?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The record of `row` as written: floats rounded, unmeasured latency empty.
pub fn tidy<T: Serialize + Default>(row: &T) -> anyhow::Result<Vec<String>> {
    let header = header_of::<T>()?;
    let floats = float_columns::<T>()?;
    let mut rec = record_of(row)?;
    let latency: Vec<usize> = (0..header.len())
        .filter(|&i| header[i].contains("lat_") && floats.get(i) == Some(&true))
        .collect();
    let unmeasured = !latency.is_empty()
        && latency
            .iter()
            .all(|&i| rec[i].parse::<f64>().is_ok_and(|v| v == 0.0));
    for (i, field) in rec.iter_mut().enumerate() {
        if unmeasured && latency.contains(&i) {
            field.clear();
        } else if floats.get(i) == Some(&true) {
            if let Ok(v) = field.parse::<f64>() {
                *field = round_float(v);
            }
        }
    }
    Ok(rec)
}

/// A CSV file written one row at a time. Each row goes to the kernel in one `write` of the
/// whole record; when that fails (a full disk) the file is cut back to the last complete row, so
/// the file never ends in half a row, and the error names the file.
pub struct CsvSink {
    file: File,
    path: std::path::PathBuf,
    /// Length of the file after the last complete row.
    len_bytes: u64,
    /// Columns of the header past `T`'s own (see [`CsvSink::create_with`]): a row without them
    /// gets empty cells there.
    extra_columns: usize,
    /// The header written, and whether a row followed it.
    header: Vec<String>,
    rows: u64,
}

impl CsvSink {
    /// Creates `path` (exclusively, never through a symlink; an existing regular file is replaced
    /// only with `force`) and writes the header of `T`'s columns at once, so even a sweep stopped
    /// before its first row leaves a valid CSV.
    pub fn create<T: Serialize + Default>(path: &Path, force: bool) -> anyhow::Result<Self> {
        Self::create_with::<T>(path, force, Vec::new())
    }

    /// Like [`CsvSink::create`], with `extra` columns after `T`'s own: the optional columns
    /// (left out of a default `T`) that some rows of this file will have, such as a sweep's
    /// mixed points' per-direction columns (`RunResult::mixed_columns`). The header names them
    /// all, and a row without them gets empty cells there, so every row has the header's length.
    pub fn create_with<T: Serialize + Default>(
        path: &Path,
        force: bool,
        extra: Vec<String>,
    ) -> anyhow::Result<Self> {
        let (file, _) =
            crate::fsguard::create_output(path, force, "--out").map_err(anyhow::Error::new)?;
        let mut header = header_of::<T>()?;
        let extra_columns = extra.len();
        header.extend(extra);
        let mut sink = CsvSink {
            file,
            path: path.to_path_buf(),
            len_bytes: 0,
            extra_columns,
            header: header.clone(),
            rows: 0,
        };
        sink.append(header)?;
        Ok(sink)
    }

    /// Appends one row (see [`tidy`]). With extra columns, each cell goes under its own name
    /// (empty under the names the row does not have) and the extra ones are rounded too. A
    /// first row with more columns than the default row's header (an open-loop run's `rate_*`
    /// and `resp_*` columns, left out of a closed-loop record) rewrites the header, still alone
    /// in this file made by this run, to its own columns; a later row with a column the header
    /// lacks is refused rather than written under the wrong names.
    pub fn write<T: Serialize + Default>(&mut self, row: &T) -> anyhow::Result<()> {
        let mut record = tidy(row)?;
        if self.extra_columns > 0 || record.len() != self.header.len() {
            let own = header_of_row(row)?;
            if self.extra_columns > 0 && own.iter().all(|c| self.header.contains(c)) {
                record = place(
                    &own,
                    record,
                    &self.header,
                    self.header.len() - self.extra_columns,
                );
            } else if self.rows == 0 && self.extra_columns == 0 && own.len() == record.len() {
                use std::io::Seek;
                self.file.set_len(0)?;
                self.file.seek(std::io::SeekFrom::Start(0))?;
                self.len_bytes = 0;
                self.header = own.clone();
                self.append(own)?;
            } else {
                anyhow::bail!(
                    "{}: a row with {} columns under a header of {} (an open-loop and a \
                     closed-loop run in one experiment); put them in two experiments",
                    crate::text::shown_path(&self.path),
                    record.len(),
                    self.header.len()
                );
            }
        }
        self.rows += 1;
        self.append(record)
    }

    fn append(&mut self, record: Vec<String>) -> anyhow::Result<()> {
        use std::io::Write;
        let mut w = ::csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.write_record(&record)?;
        let bytes = w.into_inner()?;
        if let Err(e) = self.file.write_all(&bytes) {
            // Ours, made by this run: cutting it back to the last full row loses nothing.
            use std::io::Seek;
            let cut = self
                .file
                .set_len(self.len_bytes)
                .and_then(|_| self.file.seek(std::io::SeekFrom::Start(self.len_bytes)));
            anyhow::bail!(
                "writing {}: {e}{}",
                crate::text::shown_path(&self.path),
                if cut.is_ok() {
                    "; the file keeps the rows written before"
                } else {
                    ""
                }
            );
        }
        self.len_bytes += bytes.len() as u64;
        Ok(())
    }
}

/// The cells of `record` (columns `own`) under `header`'s names, empty under a name the row
/// does not have; a float past the first `base` columns (the optional ones, which [`tidy`] does
/// not see) is rounded as [`tidy`] rounds.
fn place(own: &[String], record: Vec<String>, header: &[String], base: usize) -> Vec<String> {
    header
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let cell = own
                .iter()
                .position(|c| c == name)
                .and_then(|j| record.get(j).cloned())
                .unwrap_or_default();
            match cell.parse::<f64>() {
                Ok(v) if i >= base && cell.contains(['.', 'e']) => round_float(v),
                _ => cell,
            }
        })
        .collect()
}

/// The record of `row` as [`tidy`] writes it, laid out under `header` (the default header of
/// `T` and then optional columns, see [`CsvSink::create_with`]): each cell under its own name,
/// empty where the row has none. An error when the row has a column the header lacks.
pub fn tidy_under<T: Serialize + Default>(
    row: &T,
    header: &[String],
) -> anyhow::Result<Vec<String>> {
    let own = header_of_row(row)?;
    if let Some(c) = own.iter().find(|c| !header.contains(c)) {
        anyhow::bail!("a row with a column `{c}` the file's header lacks");
    }
    let base = header_of::<T>()?.len();
    Ok(place(&own, tidy(row)?, header, base))
}

/// The column names of one row as serde writes it (a field skipped when `None` is absent; a
/// nested section's fields in its place, `crate::measure::columns`).
pub fn header_of_row<T: Serialize>(row: &T) -> anyhow::Result<Vec<String>> {
    Ok(crate::measure::columns::names(row)?)
}

/// The column names of `T` (from serde).
pub fn header_of<T: Serialize + Default>() -> anyhow::Result<Vec<String>> {
    header_of_row(&T::default())
}

/// Serializes rows to CSV text (header first), as serde writes them.
pub fn to_csv<T: Serialize>(rows: &[T]) -> anyhow::Result<String> {
    let mut w = ::csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    if let Some(first) = rows.first() {
        // The first row's names (a nested section's in place), which the csv crate cannot give.
        w.write_record(header_of_row(first)?)?;
    }
    for r in rows {
        w.serialize(r)?;
    }
    guarded(&w.into_inner()?)
}

/// Serializes rows to CSV text (header first, records as [`tidy`] writes them); empty for no
/// rows. Batch mode's files are written this way. The header is `T`'s default one; where rows
/// have optional columns (left out of a default `T`, as a summary's settings columns), they
/// follow it in the order the rows first name them, and each row's cells go under their names
/// (empty under the ones it lacks).
pub fn to_csv_tidy<T: Serialize + Default>(rows: &[T]) -> anyhow::Result<String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    if rows.is_empty() {
        return Ok(String::from_utf8(w.into_inner()?)?);
    }
    let base = header_of::<T>()?;
    let mut header = base.clone();
    let mut records = Vec::with_capacity(rows.len());
    for r in rows {
        let record = tidy(r)?;
        let own = if record.len() == base.len() {
            None
        } else {
            let own = header_of_row(r)?;
            for c in &own {
                if !header.contains(c) {
                    header.push(c.clone());
                }
            }
            Some(own)
        };
        records.push((own, record));
    }
    w.write_record(&header)?;
    for (own, record) in records {
        if header.len() == base.len() {
            w.write_record(record)?;
        } else {
            let own = own.as_deref().unwrap_or(&base);
            w.write_record(place(own, record, &header, base.len()))?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// Summary of one point of a throughput or command experiment over its repetitions: the point
/// (its experiment and setup) and its statistics. Written as one flat row: the experiment, the
/// settings every table shows (operation to queue depth), the statistics, then the settings
/// columns this summary needs ([`RunSummary::settings_columns`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    pub experiment: String,
    /// The point's setup, as its repetitions recorded it.
    pub setup: RecordedSetup,
    pub stats: PointStats,
    /// The setup's columns past the ones every table shows that this summary writes, the same
    /// on every row (issue 18): `buffers` when the points' buffers tell points apart that are
    /// alike in every other setting, each other setting when a point has a value there (a
    /// setting away from its default, an open-loop or a mixed point); then every row has the
    /// column, empty where its point has none. So a summary of default points keeps its header.
    pub settings_columns: Vec<&'static str>,
}

/// The statistics of one point over its repetitions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PointStats {
    /// Repetitions that succeeded (the statistics are over these).
    pub reps: usize,
    /// Repetitions that failed.
    pub failed: usize,
    pub mean_mib_s: f64,
    pub median_mib_s: f64,
    pub min_mib_s: f64,
    pub max_mib_s: f64,
    pub stddev_mib_s: f64,
    pub mean_iops: f64,
    pub median_lat_p50_us: f64,
    /// First error of a failed repetition.
    pub error: String,
}

/// The order of a summary's settings columns, as they came to be written; a setting not named
/// here follows them in the setup's order.
const SUMMARY_SETTINGS_ORDER: &[&str] = &[
    "buffers",
    "write_sync",
    "submit",
    "prealloc",
    "rate_iops_asked",
    "arrival",
    "mix_read_pct_asked",
    "checksum",
];

/// How the summary table names a settings column in its note (`sync=fsync`).
fn short_name(column: &str) -> &str {
    match column {
        "write_sync" => "sync",
        "rate_iops_asked" => "rate",
        "mix_read_pct_asked" => "mix",
        other => other,
    }
}

impl Serialize for RunSummary {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut setup = Part::of(Some(&self.setup));
        let mut stats = Part::of(Some(&self.stats));
        let shown = RecordedSetup::SHOWN_COLUMNS;
        let len = 1 + shown.len() + stats.present() + self.settings_columns.len();
        let mut st = s.serialize_struct("RunSummary", len)?;
        st.serialize_field("experiment", &self.experiment)?;
        setup.emit(&mut st, shown.last().copied())?;
        stats.emit(&mut st, None)?;
        for c in &self.settings_columns {
            setup.emit_one(&mut st, c, true)?;
        }
        st.end()
    }
}

impl RunSummary {
    /// The settings columns this row has, as `name=value` (empty cells left out), for the
    /// summary table: what tells two of its lines apart when the columns it prints agree.
    pub fn settings_note(&self) -> String {
        let setup = Part::of(Some(&self.setup));
        self.settings_columns
            .iter()
            .filter_map(|c| Some(format!("{}={}", short_name(c), setup.text_of(c)?)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The setup columns past the ones every table shows, in a summary's order.
fn settings_columns() -> Vec<&'static str> {
    let all = Part::of(Some(&RecordedSetup::default()))
        .fields()
        .collect::<Vec<_>>();
    let past: Vec<&'static str> = all
        .into_iter()
        .filter(|c| !RecordedSetup::SHOWN_COLUMNS.contains(c))
        .collect();
    let mut order: Vec<&'static str> = SUMMARY_SETTINGS_ORDER
        .iter()
        .copied()
        .filter(|c| past.contains(c))
        .collect();
    let rest: Vec<&'static str> = past.into_iter().filter(|c| !order.contains(c)).collect();
    order.extend(rest);
    order
}

/// Groups rows by point (first-seen order) and summarises each; the settings columns are
/// there when some point has them (see [`RunSummary::settings_columns`]).
pub fn summarize_runs(rows: &[RunResult]) -> Vec<RunSummary> {
    let (keys, mut s) = summarize_points(rows);
    // The buffers' memory is a column where it tells points apart: two points alike in every
    // other setting. Where it follows another column (`auto` gives O_DIRECT points other
    // memory than buffered ones), that column says it already, and a default sweep keeps its
    // header.
    let alike = |k: &(&str, &RecordedSetup)| {
        (
            k.0.to_string(),
            RecordedSetup {
                buffers: Default::default(),
                ..k.1.clone()
            },
        )
    };
    let apart = keys
        .iter()
        .enumerate()
        .any(|(i, a)| keys[i + 1..].iter().any(|b| alike(a) == alike(b)));
    let used: Vec<&'static str> = settings_columns()
        .into_iter()
        .filter(|c| {
            if *c == "buffers" {
                apart
            } else {
                s.iter()
                    .any(|r| Part::of(Some(&r.setup)).names().any(|n| n == *c))
            }
        })
        .collect();
    for r in &mut s {
        r.settings_columns = used.clone();
    }
    s
}

/// One summary per point (the key: its experiment and setup), no settings column yet.
fn summarize_points(rows: &[RunResult]) -> (Vec<(&str, &RecordedSetup)>, Vec<RunSummary>) {
    let mut groups: Vec<((&str, &RecordedSetup), Vec<&RunResult>)> = Vec::new();
    for r in rows {
        let k = (r.identity.experiment.as_str(), &r.setup);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, v)) => v.push(r),
            None => groups.push((k, vec![r])),
        }
    }
    let keys = groups.iter().map(|(k, _)| *k).collect();
    let summaries = groups
        .into_iter()
        .map(|(_, v)| {
            let ok: Vec<&&RunResult> = v.iter().filter(|r| r.figures.error.is_empty()).collect();
            let stat =
                |f: fn(&RunResult) -> f64| Stats::of(&ok.iter().map(|r| f(r)).collect::<Vec<_>>());
            let mib = stat(|r| r.figures.mib_s);
            let f = v[0];
            RunSummary {
                experiment: f.identity.experiment.clone(),
                setup: f.setup.clone(),
                stats: PointStats {
                    reps: ok.len(),
                    failed: v.len() - ok.len(),
                    mean_mib_s: mib.mean,
                    median_mib_s: mib.median,
                    min_mib_s: mib.min,
                    max_mib_s: mib.max,
                    stddev_mib_s: mib.stddev,
                    mean_iops: stat(|r| r.figures.iops).mean,
                    median_lat_p50_us: stat(|r| r.figures.lat_p50_us).median,
                    error: v
                        .iter()
                        .map(|r| r.figures.error.clone())
                        .find(|e| !e.is_empty())
                        .unwrap_or_default(),
                },
                settings_columns: Vec::new(),
            }
        })
        .collect();
    (keys, summaries)
}

/// Summary of one system call over repetitions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SyscallSummary {
    pub experiment: String,
    pub syscall: String,
    pub reps: usize,
    pub mean_ns_per_call: f64,
    pub median_ns_per_call: f64,
    pub min_ns_per_call: f64,
    pub max_ns_per_call: f64,
    pub stddev_ns_per_call: f64,
    pub mean_calls_per_s: f64,
}

/// Groups syscall rows by call (first-seen order) and summarises each.
pub fn summarize_syscalls(rows: &[SyscallRow]) -> Vec<SyscallSummary> {
    let mut names: Vec<(&str, &str)> = Vec::new();
    for r in rows.iter().filter(|r| r.error.is_empty()) {
        if !names.contains(&(&r.experiment, &r.syscall)) {
            names.push((&r.experiment, &r.syscall));
        }
    }
    names
        .into_iter()
        .map(|(exp, call)| {
            let v: Vec<&SyscallRow> = rows
                .iter()
                .filter(|r| r.experiment == exp && r.syscall == call && r.error.is_empty())
                .collect();
            let ns = Stats::of(&v.iter().map(|r| r.ns_per_call).collect::<Vec<_>>());
            let rate = Stats::of(&v.iter().map(|r| r.calls_per_s).collect::<Vec<_>>());
            SyscallSummary {
                experiment: exp.to_string(),
                syscall: call.to_string(),
                reps: v.len(),
                mean_ns_per_call: ns.mean,
                median_ns_per_call: ns.median,
                min_ns_per_call: ns.min,
                max_ns_per_call: ns.max,
                stddev_ns_per_call: ns.stddev,
                mean_calls_per_s: rate.mean,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Arrival, Buffers, Checksum, Label, Prealloc, SubmitPolicy, WriteSync};

    fn row(bs: u64, rep: u32, mib_s: f64) -> RunResult {
        RunResult {
            identity: crate::measure::result::Identity {
                experiment: "e".into(),
                rep,
                ..Default::default()
            },
            setup: crate::config::RecordedSetup {
                block_size_bytes: bs,
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                mib_s,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn summaries_group_repetitions_by_point_and_skip_failed_ones() {
        let mut failed = row(4096, 4, 0.0);
        failed.figures.error = "boom".into();
        let rows = vec![
            row(4096, 1, 10.0),
            row(4096, 2, 30.0),
            row(8192, 1, 5.0),
            row(4096, 3, 20.0),
            failed,
        ];
        let s = summarize_runs(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].stats.reps, s[0].stats.failed), (3, 1));
        assert_eq!(
            (
                s[0].stats.mean_mib_s,
                s[0].stats.median_mib_s,
                s[0].stats.min_mib_s,
                s[0].stats.max_mib_s
            ),
            (20.0, 20.0, 10.0, 30.0)
        );
        assert_eq!(s[0].stats.stddev_mib_s, 10.0);
        assert_eq!(s[0].stats.error, "boom");
        assert_eq!(s[1].setup.block_size_bytes, 8192);
    }

    #[test]
    fn points_that_differ_only_in_a_setting_no_column_shows_are_other_summary_rows() {
        let base = row(4096, 1, 10.0);
        let mut differ: Vec<(&str, RunResult)> = Vec::new();
        let mut r = base.clone();
        r.setup.buffers = Label::Known(Buffers::Malloc);
        differ.push(("buffers", r));
        let mut r = base.clone();
        r.setup.write_sync = Some(WriteSync::Dsync);
        differ.push(("write_sync", r));
        let mut r = base.clone();
        r.setup.submit = Some(SubmitPolicy::Batch);
        differ.push(("submit", r));
        let mut r = base.clone();
        r.setup.prealloc = Some(Prealloc::None);
        differ.push(("prealloc", r));
        let mut r = base.clone();
        r.setup.rate_iops = Some(crate::config::Iops(1000.0));
        differ.push(("rate_iops_asked", r));
        let mut r = base.clone();
        r.setup.arrival = Some(Arrival::Poisson);
        differ.push(("arrival", r));
        let mut r = base.clone();
        r.set_mixed(70, &crate::measure::snapshot::MixedSnapshot::new());
        differ.push(("mix_read_pct_asked", r));
        let mut r = base.clone();
        r.setup.checksum = Some(Checksum::None);
        differ.push(("checksum", r));
        let mut plain = base.clone();
        plain.setup.buffers = Label::Known(Buffers::Plain);
        for (column, other) in differ {
            let mut first = base.clone();
            if column == "buffers" {
                first = plain.clone();
            }
            let rows = [first.clone(), other.clone(), first];
            let s = summarize_runs(&rows);
            assert_eq!(s.len(), 2, "{column}: {s:?}");
            assert_eq!(s[0].stats.reps, 2, "{column}");
            let text = to_csv_tidy(&s).unwrap();
            let mut rd = ::csv::Reader::from_reader(text.as_bytes());
            let h = rd.headers().unwrap().clone();
            let at = h.iter().position(|c| c == column);
            assert!(at.is_some(), "{column} names its column: {text}");
            let cells: Vec<String> = rd
                .records()
                .map(|r| r.unwrap()[at.unwrap()].to_string())
                .collect();
            assert!(cells[0] != cells[1], "{column}: {text}");
        }
    }

    #[test]
    fn a_summary_of_default_points_keeps_its_header() {
        let rows = [row(4096, 1, 10.0), row(8192, 1, 20.0)];
        let text = to_csv_tidy(&summarize_runs(&rows)).unwrap();
        assert_eq!(
            text.lines().next().unwrap(),
            header_of::<RunSummary>().unwrap().join(",")
        );
        assert!(summarize_runs(&rows)
            .iter()
            .all(|s| s.settings_note().is_empty()));
    }

    #[test]
    fn a_sink_with_optional_columns_puts_each_cell_under_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        let mut uring = row(4096, 1, 1.0);
        uring.setup.submit = Some(SubmitPolicy::Batch);
        uring.setup.rate_iops = Some(crate::config::Iops(123.456789));
        let pread = row(4096, 2, 2.0);
        let extra = RunResult::optional_columns_of(&[uring.clone(), pread.clone()]);
        assert_eq!(
            extra.last().map(String::as_str),
            Some("submit"),
            "{extra:?}"
        );
        let mut sink = CsvSink::create_with::<RunResult>(&path, false, extra).unwrap();
        sink.write(&pread).unwrap();
        sink.write(&uring).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut rd = ::csv::Reader::from_reader(text.as_bytes());
        let h = rd.headers().unwrap().clone();
        let recs: Vec<::csv::StringRecord> = rd.records().map(Result::unwrap).collect();
        let col = |name: &str| h.iter().position(|c| c == name).unwrap();
        assert_eq!(&recs[0][col("submit")], "");
        assert_eq!(&recs[1][col("submit")], "batch");
        assert_eq!(&recs[1][col("rate_iops_asked")], "123.457");
        assert_eq!(&recs[1][col("rep")], "1");
    }

    /// What batch mode's sink writes for `rows`.
    fn through_sink(rows: &[RunResult]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        let mut sink = CsvSink::create::<RunResult>(&path, false).unwrap();
        for r in rows {
            sink.write(r).unwrap();
        }
        std::fs::read_to_string(&path).unwrap()
    }

    #[test]
    fn floats_are_rounded_to_meaningful_digits() {
        assert_eq!(round_float(1.5624820879999999), "1.56248");
        assert_eq!(round_float(2683.0), "2683");
        assert_eq!(round_float(8031.123456789), "8031.12");
        assert_eq!(round_float(0.000123456789), "0.000123457");
        assert_eq!(round_float(f64::NAN), "", "not known is an empty cell");
        let mut r = row(4096, 1, 1.5624820879999999);
        r.figures.seconds = 0.30000000000000004;
        r.figures.lat_p50_us = 12.345678901;
        let text = through_sink(&[r]);
        assert!(!text.contains("1.5624820879999999"), "{text}");
        assert!(
            text.contains(",1.56248,") && text.contains(",0.3,"),
            "{text}"
        );
        assert!(text.contains(",12.3457,"), "{text}");
    }

    #[test]
    fn latency_a_command_did_not_measure_is_empty_not_zero() {
        let mut dd = row(1 << 20, 1, 900.0);
        dd.setup.method = Label::of_text("dd");
        let text = through_sink(std::slice::from_ref(&dd));
        assert_eq!(text, to_csv_tidy(&[dd]).unwrap());
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        let h = r.headers().unwrap().clone();
        let rec = r.records().next().unwrap().unwrap();
        for name in [
            "lat_p50_us",
            "lat_p90_us",
            "lat_p99_us",
            "lat_p999_us",
            "lat_max_us",
        ] {
            let i = h.iter().position(|c| c == name).unwrap();
            assert_eq!(&rec[i], "", "{name} in {text}");
        }
        let i = h.iter().position(|c| c == "mib_s").unwrap();
        assert_eq!(&rec[i], "900");
    }

    #[test]
    fn the_header_lists_the_result_fields_in_order() {
        let h = header_of::<RunResult>().unwrap();
        assert_eq!(h.first().map(String::as_str), Some("experiment"));
        assert!(h.iter().any(|c| c == "lat_p999_us"));
        // The explanation columns (empty without a limits profile), then the verdict's, close
        // the row.
        assert_eq!(
            h[h.len() - 8..],
            [
                "error",
                "bound",
                "bound_mib_s",
                "pct_of_bound",
                "bound_hint",
                "verdict",
                "reasons",
                "why"
            ]
        );
        let text = to_csv(&[row(1, 1, 1.0)]).unwrap();
        assert_eq!(text.lines().next().unwrap(), h.join(","));
    }
}
