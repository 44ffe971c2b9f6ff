//! Reading results back: batch result directories, per-repetition CSVs and rows saved from the
//! explorer (`s` writes `diskscope-results/tui-*.csv` with batch mode's columns), grouped into one
//! [`Record`] per sweep point.
//!
//! Inputs are an enum ([`InputKind`]) picked from the path, so a new format (a JSON document once
//! one exists) is one variant and one reader. CSVs are read by column name, never by position, and
//! must carry batch mode's per-repetition columns: a summary CSV, a syscall CSV or any other file
//! is refused with a message saying which file to pass instead.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why an input cannot be compared. Every message names the file (and line) and the fix.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: cannot read: {source}; check the path")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path}: not a regular file or directory; pass a batch result directory or a .csv file"
    )]
    NotAFile { path: PathBuf },
    #[error("{path}: unsupported input; pass a batch result directory or a per-repetition .csv (JSON documents are not written by diskscope yet)")]
    Unsupported { path: PathBuf },
    #[error("{path}: no per-repetition CSVs here (empty directory?); pass the --out directory of a batch run or a .csv file")]
    Empty { path: PathBuf },
    #[error("{path}: a summary CSV (one row per point) has no repetitions; pass the per-repetition `{stem}.csv` next to it")]
    Summary { path: PathBuf, stem: String },
    #[error("{path}: system-call measurements (the syscalls kind) cannot be compared yet; pass a throughput or command CSV")]
    Syscalls { path: PathBuf },
    #[error("{path}: not a diskscope results CSV (no `{column}` column); pass a CSV written by --batch or the explorer's `s`")]
    Foreign { path: PathBuf, column: &'static str },
    #[error("{path}:{line}: {message}; the file is not a well-formed diskscope CSV")]
    Row {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{path}: the CSV has a header but no rows; nothing to compare")]
    NoRows { path: PathBuf },
}

/// The kinds of input `compare` (and the explorer's baseline) accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// The `--out` directory of a batch run (or `diskscope-results/` holding `tui-*.csv`): every
    /// per-repetition CSV in it, summaries and syscall CSVs skipped.
    ResultDir,
    /// One per-repetition CSV (`<experiment>.csv` of a batch run, `tui-*.csv` of the explorer).
    RepetitionCsv,
}

impl InputKind {
    /// The kind of `path`, from what it is on disk and its extension.
    pub fn detect(path: &Path) -> Result<Self, LoadError> {
        let meta = std::fs::metadata(path).map_err(|source| LoadError::Read {
            path: path.into(),
            source,
        })?;
        if meta.is_dir() {
            return Ok(InputKind::ResultDir);
        }
        if !meta.is_file() {
            // A FIFO or a device would block or never end; only regular files are read.
            return Err(LoadError::NotAFile { path: path.into() });
        }
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => Ok(InputKind::RepetitionCsv),
            _ => Err(LoadError::Unsupported { path: path.into() }),
        }
    }
}

/// What kind of experiment produced a point. The CSV has no kind column, so it is inferred: an
/// I/O method of diskscope's engines means a throughput point; anything else (a program such as
/// `dd`, a locality layout) is an external or lab measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Kind {
    #[serde(rename = "throughput")]
    Throughput,
    #[serde(rename = "other")]
    Other,
}

impl Kind {
    pub fn of_method(method: &str) -> Self {
        if ["read", "pread", "mmap", "io_uring", "buffered"].contains(&method) {
            Kind::Throughput
        } else {
            Kind::Other
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Throughput => "throughput",
            Kind::Other => "other",
        }
    }
}

/// The setup that identifies a point across two runs: everything the sweep varies.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Setup {
    pub experiment: String,
    pub kind: Kind,
    pub method: String,
    pub block_size_bytes: u64,
    pub threads: usize,
    pub queue_depth: u32,
    pub cache: String,
    pub direct: bool,
    pub operation: String,
    pub pattern: String,
}

impl Setup {
    /// A short human label: `exp: read pread 1M sequential warm T1` (+ `QD32`, `O_DIRECT` when set).
    pub fn label(&self) -> String {
        let mut s = format!(
            "{}: {} {} {} {} {} T{}",
            self.experiment,
            self.operation,
            self.method,
            crate::size::format_size(self.block_size_bytes),
            self.pattern,
            self.cache,
            self.threads
        );
        if self.queue_depth != 1 {
            s += &format!(" QD{}", self.queue_depth);
        }
        if self.direct {
            s += " O_DIRECT";
        }
        s
    }
}

/// One sweep point with its repetitions, in file order. Failed repetitions (non-empty `error`)
/// are counted, not sampled.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub setup: Setup,
    /// Throughput of each successful repetition, MiB/s.
    pub mib_s: Vec<f64>,
    /// p99 latency of single operations of each successful repetition, microseconds.
    pub lat_p99_us: Vec<f64>,
    /// Repetitions that failed.
    pub failed_reps: usize,
    /// Hosts and files the repetitions were measured on (usually one each).
    pub hosts: Vec<String>,
    pub files: Vec<String>,
}

/// The columns compare needs (serde ignores the others, so the CSV may grow).
#[derive(Debug, Deserialize)]
struct Row {
    experiment: String,
    #[serde(default)]
    host: String,
    #[serde(default)]
    file: String,
    operation: String,
    method: String,
    pattern: String,
    cache: String,
    direct: bool,
    block_size_bytes: u64,
    threads: usize,
    queue_depth: u32,
    /// Empty in a failed row.
    mib_s: Option<f64>,
    /// Empty where latency was not measured (a `command` row): kept as 0, "not measured".
    lat_p99_us: Option<f64>,
    #[serde(default)]
    error: String,
}

const REQUIRED: [&str; 12] = [
    "experiment",
    "operation",
    "method",
    "pattern",
    "cache",
    "direct",
    "block_size_bytes",
    "threads",
    "queue_depth",
    "rep",
    "mib_s",
    "lat_p99_us",
];

/// Loads `path` (a result directory or a CSV) into one record per point, sorted by setup.
pub fn load(path: &Path) -> Result<Vec<Record>, LoadError> {
    let mut points: BTreeMap<Setup, Record> = BTreeMap::new();
    match InputKind::detect(path)? {
        InputKind::RepetitionCsv => read_csv(path, &mut points)?,
        InputKind::ResultDir => {
            let entries = std::fs::read_dir(path).map_err(|source| LoadError::Read {
                path: path.into(),
                source,
            })?;
            let mut csvs: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"))
                        && std::fs::metadata(p).is_ok_and(|m| m.is_file())
                })
                .collect();
            csvs.sort();
            for csv in &csvs {
                match read_csv(csv, &mut points) {
                    // A result directory holds summaries and syscall CSVs beside the repetitions.
                    Err(LoadError::Summary { .. } | LoadError::Syscalls { .. }) => {}
                    // A header written by a sweep stopped before its first run.
                    Err(LoadError::NoRows { .. }) => {}
                    r => r?,
                }
            }
        }
    }
    if points.is_empty() {
        return Err(LoadError::Empty { path: path.into() });
    }
    Ok(points.into_values().collect())
}

fn read_csv(path: &Path, points: &mut BTreeMap<Setup, Record>) -> Result<(), LoadError> {
    let file = std::fs::File::open(path).map_err(|source| LoadError::Read {
        path: path.into(),
        source,
    })?;
    let mut rdr = csv::Reader::from_reader(std::io::BufReader::new(file));
    let headers = rdr.headers().map_err(|e| row_error(path, &e))?.clone();
    let has = |c: &str| headers.iter().any(|h| h == c);
    if has("mean_mib_s") || (has("reps") && !has("rep")) {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().trim_end_matches("-summary").to_string())
            .unwrap_or_default();
        return Err(LoadError::Summary {
            path: path.into(),
            stem,
        });
    }
    if has("syscall") && has("ns_per_call") {
        return Err(LoadError::Syscalls { path: path.into() });
    }
    if let Some(column) = REQUIRED.iter().find(|c| !has(c)) {
        return Err(LoadError::Foreign {
            path: path.into(),
            column,
        });
    }
    let mut rows = 0usize;
    for row in rdr.deserialize::<Row>() {
        let r = row.map_err(|e| row_error(path, &e))?;
        rows += 1;
        let setup = Setup {
            experiment: r.experiment,
            kind: Kind::of_method(&r.method),
            method: r.method,
            block_size_bytes: r.block_size_bytes,
            threads: r.threads,
            queue_depth: r.queue_depth,
            cache: r.cache,
            direct: r.direct,
            operation: r.operation,
            pattern: r.pattern,
        };
        let rec = points.entry(setup.clone()).or_insert_with(|| Record {
            setup,
            mib_s: Vec::new(),
            lat_p99_us: Vec::new(),
            failed_reps: 0,
            hosts: Vec::new(),
            files: Vec::new(),
        });
        if !rec.hosts.contains(&r.host) {
            rec.hosts.push(r.host);
        }
        if !rec.files.contains(&r.file) {
            rec.files.push(r.file);
        }
        match r.mib_s {
            Some(mib_s) if r.error.is_empty() && mib_s.is_finite() => {
                rec.mib_s.push(mib_s);
                rec.lat_p99_us.push(r.lat_p99_us.unwrap_or(0.0));
            }
            _ => rec.failed_reps += 1,
        }
    }
    if rows == 0 {
        return Err(LoadError::NoRows { path: path.into() });
    }
    Ok(())
}

fn row_error(path: &Path, e: &csv::Error) -> LoadError {
    let line = e.position().map(|p| p.line()).unwrap_or(0);
    let message = match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(i) => format!("field {}: {}", i + 1, err.kind()),
            None => err.kind().to_string(),
        },
        _ => e.to_string(),
    };
    LoadError::Row {
        path: path.into(),
        line,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "experiment,host,file,file_size_bytes,operation,method,pattern,cache,direct,block_size_bytes,block_count,threads,queue_depth,rep,bytes,seconds,mib_s,ops,iops,lat_p50_us,lat_p90_us,lat_p99_us,lat_p999_us,lat_max_us,residency_before_pct,xor,error";

    fn row(exp: &str, bs: u64, rep: u32, mib_s: impl std::fmt::Display, error: &str) -> String {
        format!("{exp},h,/f,100,read,pread,sequential,warm,false,{bs},1,1,1,{rep},1,1,{mib_s},1,1,1,1,7.5,1,1,100,00000000,{error}")
    }

    #[test]
    fn repetitions_of_a_point_are_grouped_and_failures_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let text = [
            HEADER.to_string(),
            row("x", 4096, 1, 10.0, ""),
            row("x", 4096, 2, 12.0, ""),
            row("x", 4096, 3, 0.0, "EIO"),
            row("x", 8192, 1, 20.0, ""),
        ]
        .join("\n");
        std::fs::write(&path, text).unwrap();
        let recs = load(&path).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].setup.block_size_bytes, 4096);
        assert_eq!(recs[0].mib_s, vec![10.0, 12.0]);
        assert_eq!(recs[0].lat_p99_us, vec![7.5, 7.5]);
        assert_eq!(recs[0].failed_reps, 1);
        assert_eq!(recs[0].setup.kind, Kind::Throughput);
    }

    #[test]
    fn a_bad_number_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let text = format!(
            "{HEADER}\n{}\n{}\n",
            row("x", 1, 1, 1.0, ""),
            row("x", 1, 2, "fast", "")
        );
        std::fs::write(&path, text).unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains("x.csv:3:"), "{e}");
    }
}
