//! The data behind a figure: categories on the x axis and, per series, the statistics of each
//! category. Builders pick the grouping from the rows themselves: the x axis is the preferred
//! setting that varies (block size on a log2 axis for most lab figures), and every other setting
//! that varies within a category becomes a series. So "throughput vs block size", "cold vs warm
//! side by side" and "block size x threads" are the same builder on different sweeps.
//!
//! When the front end knows a `diskscope limits` profile for the measured file's device (its
//! [`Provenance`], handed in: nothing here reads the machine), block-size charts also carry the
//! model's prediction per series ([`ModelLine`]), drawn as a line over the bars: where it bends
//! the bound changes (syscall- to memory- or device-bound), and a bar far below it is a point
//! worth a second look.

use super::csv::SyscallRow;
use crate::config::{CacheMode, Op, Pattern};
use crate::explain::provenance::Provenance;
use crate::measure::result::{Label, MethodLabel};
use crate::measure::stats::Stats;
use crate::measure::RunResult;
use crate::size::format_size;

/// A setting of a result row that a figure can group by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dim {
    Experiment,
    Operation,
    Method,
    Pattern,
    Cache,
    Direct,
    BlockSize,
    Threads,
    QueueDepth,
    /// The open loop's asked rate (`--rate`, a sweep's `rate`); closed loop where a row has none.
    Rate,
}

impl Dim {
    /// Every dimension, in the order series labels list them.
    pub const ALL: [Dim; 10] = [
        Dim::Experiment,
        Dim::Operation,
        Dim::Method,
        Dim::Pattern,
        Dim::Cache,
        Dim::Direct,
        Dim::BlockSize,
        Dim::Threads,
        Dim::QueueDepth,
        Dim::Rate,
    ];

    /// The row's value of this dimension.
    fn of(self, r: &RunResult) -> Value {
        match self {
            Dim::Experiment => Value::Experiment(r.identity.experiment.clone()),
            Dim::Operation => Value::Operation(r.setup.op.clone()),
            Dim::Method => Value::Method(r.setup.method.clone()),
            Dim::Pattern => Value::Pattern(r.setup.pattern.clone()),
            Dim::Cache => Value::Cache(r.setup.cache.clone()),
            Dim::Direct => Value::Direct(r.setup.direct),
            Dim::BlockSize => Value::BlockSize(r.setup.block_size_bytes),
            Dim::Threads => Value::Threads(r.setup.threads),
            Dim::QueueDepth => Value::QueueDepth(r.setup.queue_depth),
            Dim::Rate => Value::Rate(r.setup.rate().map_or(0, |v| v.round() as u64)),
        }
    }

    fn axis_label(self) -> &'static str {
        match self {
            Dim::Experiment => "experiment",
            Dim::Operation => "operation",
            Dim::Method => "method",
            Dim::Pattern => "order",
            Dim::Cache => "cache",
            Dim::Direct => "O_DIRECT",
            Dim::BlockSize => "block size (log2 scale)",
            Dim::Threads => "threads",
            Dim::QueueDepth => "queue depth",
            Dim::Rate => "offered rate, operations per second (0: closed loop)",
        }
    }
}

/// A row's setting in one dimension: rows group by the setting itself (the enum), and its text
/// is only the label drawn.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// The one category of a chart whose x axis does not vary.
    All,
    Experiment(String),
    Operation(Label<Op>),
    Method(MethodLabel),
    Pattern(Label<Pattern>),
    Cache(Label<CacheMode>),
    Direct(bool),
    BlockSize(u64),
    Threads(usize),
    QueueDepth(u32),
    /// Operations per second asked for; 0 is the closed loop.
    Rate(u64),
}

impl Value {
    /// The label drawn on the axis or in a series name.
    fn label(&self) -> String {
        match self {
            Value::All => String::new(),
            Value::Experiment(name) => name.clone(),
            Value::Operation(v) => v.to_string(),
            Value::Method(v) => v.to_string(),
            Value::Pattern(v) => v.to_string(),
            Value::Cache(v) => v.to_string(),
            Value::Direct(true) => "O_DIRECT".into(),
            Value::Direct(false) => "page cache".into(),
            Value::BlockSize(b) => format_size(*b),
            Value::Threads(t) => format!("{t} thread{}", if *t == 1 { "" } else { "s" }),
            Value::QueueDepth(q) => format!("QD{q}"),
            Value::Rate(0) => "closed loop".into(),
            Value::Rate(r) => format!("{r} IOPS"),
        }
    }

    /// Numeric dimensions sort by value (and block sizes sit on a log2 axis); None for the rest.
    fn number(&self) -> Option<u64> {
        match self {
            Value::BlockSize(b) => Some(*b),
            Value::Threads(t) => Some(*t as u64),
            Value::QueueDepth(q) => Some(u64::from(*q)),
            Value::Rate(r) => Some(*r),
            _ => None,
        }
    }
}

/// One x position.
#[derive(Debug, Clone, PartialEq)]
pub struct Category {
    pub label: String,
    /// Position on the x axis: log2 of the block size, or the index.
    pub pos: f64,
}

/// One series: a bar per category (None where the series has no data there).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub cells: Vec<Option<Stats>>,
}

/// How the y axis is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum YScale {
    /// Log when the values span more than ~50× (so a 1 B bar is not invisible next to a
    /// 128 MiB one), linear otherwise.
    #[default]
    Auto,
    Linear,
    Log,
}

impl YScale {
    /// Parses the sweep file's `y_scale` value.
    pub fn parse(text: &str) -> Result<YScale, String> {
        match text {
            "auto" => Ok(YScale::Auto),
            "linear" => Ok(YScale::Linear),
            "log" => Ok(YScale::Log),
            _ => Err(format!(
                "unknown value '{text}'; use \"auto\", \"linear\" or \"log\""
            )),
        }
    }
}

/// A grouped bar chart with mean bars, median dots and min–max whiskers.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    /// Where and when: host, file, size, repetitions, date.
    pub subtitle: String,
    pub y_scale: YScale,
    pub x_label: String,
    pub y_label: String,
    pub categories: Vec<Category>,
    pub series: Vec<Series>,
    /// The model's predicted throughput drawn over block-size bars, one line per series that a
    /// `limits` profile covers; empty without a profile or on other axes.
    pub model: Vec<ModelLine>,
    /// Bars with suspect repetitions (issue 23): drawn hollow, their reason codes in a footnote.
    pub suspect: Vec<SuspectMark>,
}

/// A bar some of whose repetitions were judged suspect (`verdict = suspect`).
#[derive(Debug, Clone, PartialEq)]
pub struct SuspectMark {
    /// Index of the series in [`Chart::series`] and of the category in [`Chart::categories`].
    pub series: usize,
    pub category: usize,
    /// Suspect repetitions of the bar, of `reps`.
    pub suspect: usize,
    pub reps: usize,
    /// Their reason codes, each once.
    pub codes: Vec<String>,
}

impl Chart {
    /// The suspect mark of a bar, if it has one.
    pub fn suspect_at(&self, series: usize, category: usize) -> Option<&SuspectMark> {
        self.suspect
            .iter()
            .find(|m| m.series == series && m.category == category)
    }

    /// The footnote of the suspect bars: `hollow bars: suspect results (reasons in
    /// docs/explain.md): cache_not_disk: 4K, 8K (2 of 3 reps) · too_short: 1M`, cut into lines
    /// of at most `width` characters. Empty when no bar is suspect.
    pub fn suspect_footnote(&self, width: usize) -> Vec<String> {
        let mut by_code: Vec<(String, Vec<String>)> = Vec::new();
        for m in &self.suspect {
            let mut bar = self
                .categories
                .get(m.category)
                .map(|c| c.label.clone())
                .unwrap_or_default();
            if self.series.len() > 1 {
                if let Some(s) = self.series.get(m.series) {
                    bar = format!("{} {bar}", s.name).trim().to_string();
                }
            }
            if m.suspect < m.reps {
                bar += &format!(" ({} of {} reps)", m.suspect, m.reps);
            }
            if bar.is_empty() {
                bar = "all".into();
            }
            for c in &m.codes {
                match by_code.iter_mut().find(|(k, _)| k == c) {
                    Some((_, bars)) => bars.push(bar.clone()),
                    None => by_code.push((c.clone(), vec![bar.clone()])),
                }
            }
        }
        if by_code.is_empty() {
            return Vec::new();
        }
        let parts: Vec<String> = by_code
            .into_iter()
            .map(|(code, bars)| format!("{code}: {}", bars.join(", ")))
            .collect();
        let mut lines =
            vec!["hollow bars: suspect results (reason codes: docs/explain.md):".to_string()];
        for p in parts {
            let last = lines.last_mut().expect("one line");
            if last.chars().count() + p.chars().count() + 3 <= width {
                if !last.ends_with(':') {
                    last.push_str(" ·");
                }
                last.push(' ');
                last.push_str(&p);
            } else {
                lines.push(p);
            }
        }
        lines
    }
}

/// The model's prediction (see `explain::model`) over a block-size series: where the bars
/// should reach if nothing else is in the way, and which limit bounds each stretch.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelLine {
    /// Index of the series in [`Chart::series`] the line belongs to.
    pub series: usize,
    /// `(x position: log2 of the block size, predicted MiB/s, bound)`, ascending in x.
    pub points: Vec<(f64, f64, crate::explain::model::Bound)>,
}

/// Distinct values of `dim` in first-seen order.
fn distinct(rows: &[&RunResult], dim: Dim) -> Vec<Value> {
    let mut v: Vec<Value> = Vec::new();
    for r in rows {
        let x = dim.of(r);
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

/// Throughput (MiB/s) chart of result rows; failed rows are left out. `x_pref`: dimensions to
/// try for the x axis, in order. None when no row succeeded. `known` is where the rows were
/// measured, gathered by the front end: block-size charts get a model line per series its
/// `limits` profile covers, and the subtitle names the file's filesystem and device.
pub fn throughput_chart(
    title: &str,
    rows: &[RunResult],
    x_pref: &[Dim],
    known: &Provenance,
) -> Option<Chart> {
    let rows: Vec<&RunResult> = rows.iter().filter(|r| r.figures.error.is_empty()).collect();
    if rows.is_empty() {
        return None;
    }
    let varying: Vec<Dim> = Dim::ALL
        .into_iter()
        .filter(|d| distinct(&rows, *d).len() > 1)
        .collect();
    let x = x_pref
        .iter()
        .copied()
        .find(|d| varying.contains(d))
        .or(varying.first().copied());
    let mut cats: Vec<Value> = match x {
        Some(d) => distinct(&rows, d),
        None => vec![Value::All],
    };
    if cats.iter().all(|c| c.number().is_some()) {
        cats.sort_by_key(Value::number);
    }
    let x_of = |r: &RunResult| x.map_or(Value::All, |d| d.of(r));
    // Series: dimensions that still vary inside one category.
    let series_dims: Vec<Dim> = varying
        .iter()
        .copied()
        .filter(|d| Some(*d) != x)
        .filter(|d| {
            cats.iter().any(|c| {
                distinct(
                    &rows
                        .iter()
                        .copied()
                        .filter(|r| x_of(r) == *c)
                        .collect::<Vec<_>>(),
                    *d,
                )
                .len()
                    > 1
            })
        })
        .collect();
    let key_of = |r: &RunResult| series_dims.iter().map(|d| d.of(r)).collect::<Vec<_>>();
    let mut keys: Vec<Vec<Value>> = Vec::new();
    for r in &rows {
        let k = key_of(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let labels: Vec<Vec<String>> = keys
        .iter()
        .map(|k| k.iter().map(Value::label).collect())
        .collect();
    let names = short_names(&labels);
    let series = keys
        .iter()
        .zip(names)
        .map(|(k, name)| Series {
            name,
            cells: cats
                .iter()
                .map(|c| {
                    let v: Vec<f64> = rows
                        .iter()
                        .filter(|r| key_of(r) == *k && x_of(r) == *c)
                        .map(|r| r.figures.mib_s)
                        .collect();
                    (!v.is_empty()).then(|| Stats::of(&v))
                })
                .collect(),
        })
        .collect();
    let mut suspect = Vec::new();
    for (si, k) in keys.iter().enumerate() {
        for (ci, c) in cats.iter().enumerate() {
            let bar: Vec<&&RunResult> = rows
                .iter()
                .filter(|r| key_of(r) == *k && x_of(r) == *c)
                .collect();
            let sus: Vec<&&&RunResult> = bar
                .iter()
                .filter(|r| r.judgement.verdict == "suspect")
                .collect();
            if sus.is_empty() {
                continue;
            }
            let mut codes: Vec<String> = Vec::new();
            for r in &sus {
                for code in r.judgement.reasons.split(';').filter(|c| !c.is_empty()) {
                    if !codes.iter().any(|k| k == code) {
                        codes.push(code.to_string());
                    }
                }
            }
            if codes.is_empty() {
                codes.push("suspect".into());
            }
            suspect.push(SuspectMark {
                series: si,
                category: ci,
                suspect: sus.len(),
                reps: bar.len(),
                codes,
            });
        }
    }
    let log2 = x == Some(Dim::BlockSize);
    let model = if log2 {
        keys.iter()
            .enumerate()
            .filter_map(|(si, k)| {
                let first = rows.iter().find(|r| key_of(r) == *k)?;
                model_line(si, first, &cats, known.profile(&first.identity.file)?)
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut subtitle = subtitle_of(rows.iter().copied());
    if let Some(storage) = rows.first().and_then(|r| known.storage(&r.identity.file)) {
        subtitle = format!("{storage} · {subtitle}");
    }
    Some(Chart {
        title: title.to_string(),
        subtitle,
        y_scale: YScale::Auto,
        x_label: x.map(Dim::axis_label).unwrap_or("").to_string(),
        y_label: "MiB/s (bar: mean, dot: median, whisker: min–max)".into(),
        categories: cats
            .into_iter()
            .enumerate()
            .map(|(i, value)| Category {
                label: value.label(),
                pos: match value.number() {
                    Some(v) if log2 => (v as f64).log2(),
                    _ => i as f64,
                },
            })
            .collect(),
        series,
        model,
        suspect,
    })
}

/// The model line of one series: predictions at every block size from the smallest to the
/// largest category in steps of √2 (so the bend between two bars shows), None when the profile
/// does not cover the series (writes, direct reads without device figures).
fn model_line(
    series: usize,
    first: &RunResult,
    cats: &[Value],
    profile: &crate::explain::profile::Profile,
) -> Option<ModelLine> {
    let base = crate::explain::model::Point::of_result(first)?;
    let sizes: Vec<u64> = cats.iter().filter_map(Value::number).collect();
    let (lo, hi) = (*sizes.iter().min()?, *sizes.iter().max()?);
    let mut dense: Vec<u64> = sizes.clone();
    let mut v = lo as f64;
    while v < hi as f64 {
        dense.push(v.round() as u64);
        v *= std::f64::consts::SQRT_2;
    }
    dense.retain(|b| *b >= 1);
    dense.sort_unstable();
    dense.dedup();
    let points: Vec<(f64, f64, crate::explain::model::Bound)> =
        crate::explain::model::predict_curve(profile, &base, &dense)
            .into_iter()
            .map(|(bs, pr)| ((bs as f64).log2(), pr.bound_mib_s, pr.bound))
            .collect();
    (points.len() >= 2).then_some(ModelLine { series, points })
}

/// `host · file (size) · 5 reps · 2026-11-22` from the rows themselves: every distinct host
/// and file is named, repetitions are the most any point had; the date is today's (UTC).
pub fn subtitle_of<'a>(rows: impl Iterator<Item = &'a RunResult>) -> String {
    let mut hosts: Vec<&str> = Vec::new();
    let mut files: Vec<(&str, u64)> = Vec::new();
    let mut reps = 0u32;
    for r in rows {
        if !r.identity.host.is_empty() && !hosts.contains(&r.identity.host.as_str()) {
            hosts.push(&r.identity.host);
        }
        if !r.identity.file.is_empty() && !files.iter().any(|f| f.0 == r.identity.file) {
            files.push((&r.identity.file, r.identity.file_size_bytes));
        }
        reps = reps.max(r.identity.rep);
    }
    let mut parts: Vec<String> = Vec::new();
    if !hosts.is_empty() {
        parts.push(hosts.join(", "));
    }
    if !files.is_empty() {
        parts.push(
            files
                .iter()
                .map(|(f, size)| format!("{f} ({})", crate::size::format_bytes_approx(*size)))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    if reps > 0 {
        parts.push(format!(
            "{reps} repetition{} per point",
            if reps == 1 { "" } else { "s" }
        ));
    }
    parts.push(today_utc());
    parts.join(" · ")
}

/// Today's date, UTC, `YYYY-MM-DD`.
fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let s = super::utc_stamp(secs);
    format!("{}-{}-{}", &s[0..4], &s[4..6], &s[6..8])
}

/// Series labels: drops parts that are not needed to tell the series apart.
fn short_names(keys: &[Vec<String>]) -> Vec<String> {
    let n = keys.first().map(Vec::len).unwrap_or(0);
    let mut used: Vec<bool> = vec![true; n];
    for i in (0..n).rev() {
        used[i] = false;
        let labels: Vec<Vec<&String>> = keys
            .iter()
            .map(|k| {
                k.iter()
                    .enumerate()
                    .filter(|(j, _)| used[*j])
                    .map(|(_, s)| s)
                    .collect()
            })
            .collect();
        let unique = labels
            .iter()
            .enumerate()
            .all(|(a, la)| labels.iter().skip(a + 1).all(|lb| la != lb));
        if !unique {
            used[i] = true;
        }
    }
    keys.iter()
        .map(|k| {
            let parts: Vec<&str> = k
                .iter()
                .enumerate()
                .filter(|(j, _)| used[*j])
                .map(|(_, s)| s.as_str())
                .collect();
            if parts.is_empty() {
                "all".to_string()
            } else {
                parts.join(" · ")
            }
        })
        .collect()
}

/// Cost of each system call (ns per call over repetitions).
pub fn syscalls_chart(title: &str, rows: &[SyscallRow]) -> Option<Chart> {
    let summary = super::csv::summarize_syscalls(rows);
    if summary.is_empty() {
        return None;
    }
    let cells = summary
        .iter()
        .map(|s| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|r| r.syscall == s.syscall)
                .map(|r| r.ns_per_call)
                .collect();
            Some(Stats::of(&v))
        })
        .collect();
    Some(Chart {
        title: title.to_string(),
        subtitle: String::new(),
        y_scale: YScale::Auto,
        x_label: "system call".into(),
        y_label: "ns per call (bar: mean, dot: median, whisker: min–max)".into(),
        categories: summary
            .iter()
            .enumerate()
            .map(|(i, s)| Category {
                label: s.syscall.clone(),
                pos: i as f64,
            })
            .collect(),
        series: vec![Series {
            name: "ns per call".into(),
            cells,
        }],
        model: Vec::new(),
        suspect: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::Method;

    fn row(bs: u64, cache: CacheMode, mib_s: f64) -> RunResult {
        RunResult {
            identity: crate::measure::result::Identity {
                experiment: "e".into(),
                ..Default::default()
            },
            setup: crate::config::RecordedSetup {
                method: Method::Pread.into(),
                cache: cache.into(),
                block_size_bytes: bs,
                threads: 1,
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
    fn block_size_goes_on_a_log2_axis_and_cache_modes_become_series() {
        let rows = vec![
            row(4096, CacheMode::Warm, 1.0),
            row(1024, CacheMode::Warm, 2.0),
            row(4096, CacheMode::Cold, 3.0),
            row(4096, CacheMode::Cold, 5.0),
        ];
        let c = throughput_chart("t", &rows, &[Dim::BlockSize], &Provenance::none()).unwrap();
        assert_eq!(
            c.categories
                .iter()
                .map(|c| c.label.as_str())
                .collect::<Vec<_>>(),
            ["1K", "4K"]
        );
        assert_eq!(c.categories[1].pos, 12.0);
        assert_eq!(
            c.series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["warm", "cold"]
        );
        assert_eq!(c.series[1].cells[0], None);
        assert_eq!(c.series[1].cells[1].unwrap().mean, 4.0);
    }

    #[test]
    fn settings_fixed_by_the_x_value_do_not_split_series() {
        let mut a = row(1 << 20, CacheMode::Warm, 1.0);
        a.identity.experiment = "seq".into();
        let mut b = row(4096, CacheMode::Warm, 2.0);
        b.identity.experiment = "rnd".into();
        let c = throughput_chart("t", &[a, b], &[Dim::Experiment], &Provenance::none()).unwrap();
        assert_eq!(c.series.len(), 1);
        assert_eq!(c.categories.len(), 2);
    }
}
