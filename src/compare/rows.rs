//! What compare reads into: the records of sweep points ([`Record`], keyed by [`Point`]), the
//! per-repetition rows every input format is turned into ([`Row`]), the checks a row must pass and
//! how a row joins its point, and the one error type of reading ([`LoadError`]). The readers
//! (`load` for diskscope's CSVs and JSON, `fio` for fio's JSON) both build on this module and on
//! nothing of each other's, so the files import each other without a cycle.

use crate::config::{CacheMode, Op, Pattern, RecordedSetup};
use crate::measure::columns::{CellError, Cells};
use crate::measure::result::{Label, MethodLabel};
use crate::text::{shown, shown_path};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// Why an input cannot be compared. Every message names the file (and line) and the fix.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: cannot read: {source}; check the path", shown_path(.path))]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{}: not a regular file or directory; pass a batch result directory or a .csv file",
        shown_path(.path)
    )]
    NotAFile { path: PathBuf },
    #[error("{}: unsupported input; pass a batch result directory, a per-repetition .csv, or a .json document of `run --json` / `--batch --json` (sweep.json) / `fio --output-format=json`", shown_path(.path))]
    Unsupported { path: PathBuf },
    #[error("{}: {}; pass a document written by `run --json`, `--batch --json`, a sweep's sweep.json or `fio --output-format=json`", shown_path(.path), shown(.message))]
    Json { path: PathBuf, message: String },
    #[error("{}: no per-repetition CSVs here (empty directory?); pass the --out directory of a batch run or a .csv file", shown_path(.path))]
    Empty { path: PathBuf },
    #[error("{}: a summary CSV (one row per point) has no repetitions; pass the per-repetition `{}.csv` next to it", shown_path(.path), shown(.stem))]
    Summary { path: PathBuf, stem: String },
    #[error("{}: system-call measurements (the syscalls kind) cannot be compared yet; pass a throughput or command CSV", shown_path(.path))]
    Syscalls { path: PathBuf },
    #[error("{}: not a diskscope results CSV (no `{column}` column); pass a CSV written by --batch or the explorer's `s`", shown_path(.path))]
    Foreign { path: PathBuf, column: &'static str },
    #[error("{}:{line}: {}; the file is not a well-formed diskscope CSV", shown_path(.path), shown(.message))]
    Row {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("{}: no result rows (a CSV header only, or an empty `results` array); nothing to compare", shown_path(.path))]
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
    /// One JSON document: `run --json`, `--batch --json` on stdout, or a sweep's `sweep.json`.
    JsonDocument,
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
            Some(e) if e.eq_ignore_ascii_case("json") => Ok(InputKind::JsonDocument),
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
    pub fn of_method(method: &MethodLabel) -> Self {
        match method {
            Label::Known(_) => Kind::Throughput,
            Label::Other(_) => Kind::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Throughput => "throughput",
            Kind::Other => "other",
        }
    }
}

/// A point across two runs: its experiment and the settings every table shows
/// ([`RecordedSetup::shown`]; the setup's other columns are absent from files written before
/// they existed, so they take no part). The settings are the result rows' labels. Points sort as
/// compare has always listed them: by experiment, kind, method, block size, threads, queue
/// depth, cache, O_DIRECT, operation, pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Point {
    pub experiment: String,
    pub setup: RecordedSetup,
}

impl Point {
    /// The setup's columns in the order compare lists them (its CSV's columns after
    /// `experiment` and `kind`).
    pub const COLUMNS: [&'static str; 8] = [
        "method",
        "block_size_bytes",
        "threads",
        "queue_depth",
        "cache",
        "direct",
        "operation",
        "pattern",
    ];

    /// The point a sweep's typed row belongs to (the report labels its rows the same way).
    pub fn of_result(r: &crate::measure::RunResult) -> Point {
        Point {
            experiment: r.identity.experiment.clone(),
            setup: r.setup.shown(),
        }
    }

    /// What kind of experiment measured it (from its method).
    pub fn kind(&self) -> Kind {
        Kind::of_method(&self.setup.method)
    }

    /// A short human label: `exp: read pread 1M sequential warm T1` (+ `QD32`, `O_DIRECT` when set).
    pub fn label(&self) -> String {
        let s = &self.setup;
        let mut out = format!(
            "{}: {} {} {} {} {} T{}",
            self.experiment,
            s.op,
            s.method,
            crate::size::format_size(s.block_size_bytes),
            s.pattern,
            s.cache,
            s.threads
        );
        if s.queue_depth != 1 {
            out += &format!(" QD{}", s.queue_depth);
        }
        if s.direct {
            out += " O_DIRECT";
        }
        out
    }

    /// What it sorts by.
    #[allow(clippy::type_complexity)]
    fn order(
        &self,
    ) -> (
        &str,
        Kind,
        &MethodLabel,
        u64,
        usize,
        u32,
        &Label<CacheMode>,
        bool,
        &Label<Op>,
        &Label<Pattern>,
    ) {
        let s = &self.setup;
        (
            &self.experiment,
            self.kind(),
            &s.method,
            s.block_size_bytes,
            s.threads,
            s.queue_depth,
            &s.cache,
            s.direct,
            &s.op,
            &s.pattern,
        )
    }
}

impl PartialOrd for Point {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Point {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

/// One sweep point with its repetitions, in file order. Failed repetitions (non-empty `error`)
/// are counted, not sampled.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub point: Point,
    /// Throughput of each successful repetition, MiB/s.
    pub mib_s: Vec<f64>,
    /// The `rep` column of each successful repetition, beside `mib_s` (0 where the input has
    /// none), so a repetition the outlier rule leaves out can be named.
    pub reps: Vec<u32>,
    /// p99 latency of single operations of each successful repetition, microseconds.
    pub lat_p99_us: Vec<f64>,
    /// Repetitions that failed.
    pub failed_reps: usize,
    /// Hosts and files the repetitions were measured on (usually one each).
    pub hosts: Vec<String>,
    pub files: Vec<String>,
    /// What limits the point, from the `diskscope limits` profile the run found; `None` when the
    /// rows carry no bound (no profile, a command, an older CSV).
    pub bound: Option<Bound>,
    /// The verdicts of its successful repetitions (issue 23: can the number be trusted).
    pub verdicts: Verdicts,
    /// Level shifts its repetitions' timelines show: `(rep, what)`, e.g. `(2, "throughput went
    /// from 412.0 to 96.3 MiB/s at 7.0 s")`, each repetition once.
    pub level_shifts: Vec<(u32, String)>,
}

/// The verdicts (`ok` / `suspect` and reason codes, issue 23) of a point's successful
/// repetitions, as the rows' `verdict` and `reasons` columns say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdicts {
    /// Repetitions with a verdict (rows written before the column existed have none).
    pub judged: usize,
    /// Of those, the suspect ones.
    pub suspect: usize,
    /// The suspect repetitions' reason codes, each once, first seen first.
    pub codes: Vec<String>,
}

impl Verdicts {
    /// `ok`, `suspect (cache_not_disk)`, or `suspect in 2 of 5 repetitions (cache_not_disk,
    /// too_short)`; `None` when no repetition was judged.
    pub fn text(&self) -> Option<String> {
        if self.judged == 0 {
            return None;
        }
        if self.suspect == 0 {
            return Some("ok".into());
        }
        let codes = self.codes.join(", ");
        Some(if self.suspect == self.judged {
            format!("suspect ({codes})")
        } else {
            format!(
                "suspect in {} of {} repetitions ({codes})",
                self.suspect, self.judged
            )
        })
    }

    fn add(&mut self, verdict: &str, reasons: &str) {
        match verdict {
            "ok" => self.judged += 1,
            "suspect" => {
                self.judged += 1;
                self.suspect += 1;
                for c in reasons.split(';').map(str::trim).filter(|c| !c.is_empty()) {
                    if !self.codes.iter().any(|k| k == c) {
                        self.codes.push(c.to_string());
                    }
                }
            }
            _ => {}
        }
    }
}

/// The model's explanation of a point: its bound and, below half of it, what to look at.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// `syscall-bound`, `memory-bound`, `device-bound (...)`.
    pub bound: String,
    /// The predicted throughput, MiB/s.
    pub bound_mib_s: f64,
    /// What to look at when the point is far below its bound (the first row's hint).
    pub hint: Option<String>,
}

impl Record {
    /// A warm sequential `pread` point of `block_size_bytes` with these repetitions (every p99
    /// `p99_us`), for the unit tests of the compare and report modules.
    #[cfg(test)]
    pub(crate) fn sample(block_size_bytes: u64, mib_s: Vec<f64>, p99_us: f64) -> Record {
        Record {
            point: Point {
                experiment: "x".into(),
                setup: RecordedSetup {
                    op: Op::Read.into(),
                    method: crate::config::Method::Pread.into(),
                    pattern: Pattern::Sequential.into(),
                    cache: CacheMode::Warm.into(),
                    direct: false,
                    block_size_bytes,
                    threads: 1,
                    queue_depth: 1,
                    ..Default::default()
                },
            },
            lat_p99_us: vec![p99_us; mib_s.len()],
            reps: (1..=mib_s.len() as u32).collect(),
            mib_s,
            failed_reps: 0,
            hosts: vec![],
            files: vec![],
            bound: None,
            verdicts: Verdicts::default(),
            level_shifts: vec![],
        }
    }

    /// The mean throughput as a share of the bound, percent.
    pub fn pct_of_bound(&self) -> Option<f64> {
        let b = self.bound.as_ref()?;
        if self.mib_s.is_empty() || b.bound_mib_s <= 0.0 {
            return None;
        }
        let mean = self.mib_s.iter().sum::<f64>() / self.mib_s.len() as f64;
        Some(100.0 * mean / b.bound_mib_s)
    }
}

/// The columns compare needs (serde ignores the others, so the CSV may grow): the setup as
/// [`RunResult`](crate::measure::RunResult) records it (text outside the enums, a program, a
/// locality layout or order, an empty cell, is kept as it was written), and the figures.
#[derive(Debug, Deserialize)]
pub(super) struct Row {
    pub(super) experiment: String,
    #[serde(default)]
    pub(super) host: String,
    #[serde(default)]
    pub(super) file: String,
    /// Read from the same cells ([`Row::of_cells`]).
    #[serde(skip)]
    pub(super) setup: RecordedSetup,
    /// Empty in a failed row.
    pub(super) mib_s: Option<f64>,
    /// Empty where latency was not measured (a `command` row): kept as 0, "not measured".
    pub(super) lat_p99_us: Option<f64>,
    #[serde(default)]
    pub(super) error: String,
    /// The bound columns, empty without a limits profile (and absent from older CSVs).
    #[serde(default)]
    pub(super) bound: Option<String>,
    #[serde(default)]
    pub(super) bound_mib_s: Option<f64>,
    #[serde(default)]
    pub(super) bound_hint: Option<String>,
    /// The repetition (1-based; 0 where the input has none).
    #[serde(default)]
    pub(super) rep: u32,
    /// `ok` / `suspect` and the reason codes with their sentences (empty in older files).
    #[serde(default)]
    pub(super) verdict: String,
    #[serde(default)]
    pub(super) reasons: String,
    #[serde(default)]
    pub(super) why: String,
    /// A fleet's rows: the rank (`0`, `1`, ... or `all`); only `all` rows are the fleet's figure.
    #[serde(default)]
    pub(super) rank: Option<String>,
    /// A mixed run's directions (issue 26; empty in a pure row and absent from older files;
    /// its share of reads asked is the setup's): such a row is compared per direction
    /// ([`directions`]), with these columns.
    #[serde(default)]
    pub(super) read_mib_s: Option<f64>,
    #[serde(default)]
    pub(super) read_lat_p99_us: Option<f64>,
    #[serde(default)]
    pub(super) write_mib_s: Option<f64>,
    #[serde(default)]
    pub(super) write_lat_p99_us: Option<f64>,
}

impl Row {
    /// The row of a JSON document's result (`run --json`, a sweep's `results`): its figures,
    /// and its setup from the same cells, whose shown columns must be there.
    pub(super) fn of_json(v: &serde_json::Value) -> Result<Row, String> {
        let mut row = Row::deserialize(v).map_err(|e| e.to_string())?;
        let cells = Cells::deserialize(v).map_err(|e| e.to_string())?;
        row.set_setup(&cells)?;
        Ok(row)
    }

    /// Reads the setup from the row's cells (its shown columns must be there).
    pub(super) fn set_setup(&mut self, c: &Cells) -> Result<(), String> {
        if let Some(missing) = RecordedSetup::SHOWN_COLUMNS.iter().find(|k| !c.has(k)) {
            return Err(format!("missing field `{missing}`"));
        }
        self.setup = c.part::<_, CellError>().map_err(|e| e.to_string())?;
        Ok(())
    }
}

/// The operation of one direction of a mix of `read_pct` percent reads: `mix70:read`,
/// `mix70:write`. A mix is compared direction by direction under these (the share in the name,
/// so a 70/30 and a 50/50 mix never pair), whether its rows are diskscope's (one row with
/// `read_*` and `write_*` columns) or fio's (a `read` and a `write` section per job).
pub fn mix_operation(read_pct: u32, direction: &str) -> Label<Op> {
    Label::Other(format!("mix{read_pct}:{direction}"))
}

/// Whether `op` is one direction of a mix ([`mix_operation`]).
pub fn is_mix_operation(op: &Label<Op>) -> bool {
    op.known().is_none() && op.as_str().starts_with("mix") && op.as_str().contains(':')
}

/// A row as the points it is compared as: a mixed row (`mix_read_pct_asked` set) as its two
/// directions ([`mix_operation`]), each with its own throughput and p99; any other row as it is.
pub(super) fn directions(r: Row) -> Vec<Row> {
    let Some(pct) = r.setup.mix_read_pct else {
        return vec![r];
    };
    let side = |direction: &str, mib_s: Option<f64>, p99: Option<f64>| Row {
        setup: RecordedSetup {
            op: mix_operation(pct, direction),
            mix_read_pct: None,
            ..r.setup.clone()
        },
        mib_s,
        lat_p99_us: p99,
        read_mib_s: None,
        read_lat_p99_us: None,
        write_mib_s: None,
        write_lat_p99_us: None,
        experiment: r.experiment.clone(),
        host: r.host.clone(),
        file: r.file.clone(),
        error: r.error.clone(),
        bound: r.bound.clone(),
        bound_mib_s: r.bound_mib_s,
        bound_hint: r.bound_hint.clone(),
        verdict: r.verdict.clone(),
        reasons: r.reasons.clone(),
        why: r.why.clone(),
        rank: r.rank.clone(),
        rep: r.rep,
    };
    vec![
        side("read", r.read_mib_s, r.read_lat_p99_us),
        side("write", r.write_mib_s, r.write_lat_p99_us),
    ]
}

impl Row {
    /// A fleet's per-rank row: its rank's share of a point, not a repetition of it (the point's
    /// figure is its `rank = all` row).
    pub(super) fn is_rank_share(&self) -> bool {
        self.rank
            .as_deref()
            .is_some_and(|r| !r.is_empty() && r != "all")
    }

    /// The point it belongs to.
    pub(super) fn point(&self) -> Point {
        Point {
            experiment: self.experiment.clone(),
            setup: self.setup.shown(),
        }
    }

    /// The `why` sentence of one of its reason codes.
    fn why_of(&self, code: &str) -> Option<&str> {
        let i = self.reasons.split(';').position(|c| c.trim() == code)?;
        self.why.split(" | ").nth(i)
    }
}

pub(super) const REQUIRED: [&str; 12] = [
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

/// A point being loaded: its record, and the hosts and files already listed in it.
pub(super) struct Gathered {
    pub(super) record: Record,
    hosts: Seen,
    files: Seen,
}

#[cfg(test)]
impl Gathered {
    /// A point of `record`, with the hosts and files it lists (for the tests of the readers).
    pub(super) fn of(record: Record) -> Gathered {
        let mut p = Gathered {
            record: Record {
                hosts: Vec::new(),
                files: Vec::new(),
                ..record.clone()
            },
            hosts: Seen::default(),
            files: Seen::default(),
        };
        for h in record.hosts {
            p.hosts.note(&mut p.record.hosts, h);
        }
        for f in record.files {
            p.files.note(&mut p.record.files, f);
        }
        p
    }
}

/// A set beside a short list: a point names one host and one file, which a scan of the list finds
/// at no cost; past [`Seen::SCAN_MAX`] names the set takes over, so a million rows with distinct
/// hosts cost a million look-ups, not a million squared (issue 21 #12).
#[derive(Default)]
struct Seen(Option<HashSet<String>>);

impl Seen {
    const SCAN_MAX: usize = 16;

    /// Appends `item` to `list` unless it is there already.
    fn note(&mut self, list: &mut Vec<String>, item: String) {
        match &mut self.0 {
            Some(set) => {
                if !set.contains(&item) {
                    set.insert(item.clone());
                    list.push(item);
                }
            }
            None => {
                if !list.contains(&item) {
                    list.push(item);
                    if list.len() > Self::SCAN_MAX {
                        self.0 = Some(list.iter().cloned().collect());
                    }
                }
            }
        }
    }
}

/// The points read so far, by setup (so they come out sorted).
pub(super) type Points = BTreeMap<Point, Gathered>;

/// Refuses numbers no measurement gives: a successful row whose `mib_s` or `lat_p99_us` (or any
/// row's `bound_mib_s`) is not a finite number ≥ 0 (`inf`, `NaN`, `1e309`, `-5`). Such a row was
/// edited or corrupted; judging it would print nonsense or, before this check, panic. Values
/// that are finite but huge (1e308) are accepted: the statistics work on their logarithms.
pub(super) fn check_row(r: &Row) -> Result<(), String> {
    let mut checked = vec![("bound_mib_s", r.bound_mib_s)];
    if r.error.is_empty() {
        checked.push(("mib_s", r.mib_s));
        checked.push(("lat_p99_us", r.lat_p99_us));
        checked.push(("read_mib_s", r.read_mib_s));
        checked.push(("read_lat_p99_us", r.read_lat_p99_us));
        checked.push(("write_mib_s", r.write_mib_s));
        checked.push(("write_lat_p99_us", r.write_lat_p99_us));
    }
    for (column, value) in checked {
        if let Some(v) = value {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "column {column}: {v} is not a finite number ≥ 0; correct the value or remove the row"
                ));
            }
        }
    }
    Ok(())
}

/// Adds one repetition to its point (a fleet's per-rank row is left out: see
/// [`Row::is_rank_share`]); a mixed row to its two directions' points ([`directions`]).
pub(super) fn add_row(points: &mut Points, r: Row) {
    if r.is_rank_share() {
        return;
    }
    for d in directions(r) {
        add_one(points, d);
    }
}

fn add_one(points: &mut Points, r: Row) {
    let shift = r.why_of("level_shift").map(str::to_string);
    let key = r.point();
    // The key is cloned only for a new point, not for each repetition.
    if !points.contains_key(&key) {
        let point = Gathered {
            record: Record {
                point: key.clone(),
                mib_s: Vec::new(),
                reps: Vec::new(),
                lat_p99_us: Vec::new(),
                failed_reps: 0,
                hosts: Vec::new(),
                files: Vec::new(),
                bound: None,
                verdicts: Verdicts::default(),
                level_shifts: Vec::new(),
            },
            hosts: Seen::default(),
            files: Seen::default(),
        };
        points.insert(key.clone(), point);
    }
    let Some(point) = points.get_mut(&key) else {
        return;
    };
    let rec = &mut point.record;
    // First-seen order in the record, a set for the look-up.
    point.hosts.note(&mut rec.hosts, r.host);
    point.files.note(&mut rec.files, r.file);
    if rec.bound.is_none() {
        if let (Some(bound), Some(bound_mib_s)) = (r.bound.filter(|b| !b.is_empty()), r.bound_mib_s)
        {
            rec.bound = Some(Bound {
                bound,
                bound_mib_s,
                hint: r.bound_hint.filter(|h| !h.is_empty()),
            });
        }
    }
    match r.mib_s {
        Some(mib_s) if r.error.is_empty() && mib_s.is_finite() => {
            rec.mib_s.push(mib_s);
            rec.reps.push(r.rep);
            rec.lat_p99_us.push(r.lat_p99_us.unwrap_or(0.0));
            rec.verdicts.add(&r.verdict, &r.reasons);
            if let Some(why) = shift {
                note_level_shift(rec, r.rep, why);
            }
        }
        _ => rec.failed_reps += 1,
    }
}

/// Notes a level shift of repetition `rep` (once per repetition, whichever input says it first:
/// the row's `level_shift` reason or its timeline).
pub(super) fn note_level_shift(rec: &mut Record, rep: u32, what: String) {
    if !rec.level_shifts.iter().any(|(r, _)| *r == rep) {
        rec.level_shifts.push((rep, what));
    }
}
