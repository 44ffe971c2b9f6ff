//! Sweep file -> [`Plan`]: the file to use, and for each experiment the cartesian product of its
//! axes as validated [`RunSpec`]s. Everything that can be wrong with a sweep is found here, before
//! any I/O, and reported with the key and line (`RunSpec::validate` does the value checks, so a
//! sweep rejects exactly what the command line rejects).
//!
//! A point's work is bounded by time: reads loop over the file until `seconds` is up (cold reads
//! stop at the end of the file instead, since a second pass would be served from the cache), writes
//! cover the file once or stop at the time bound.

use super::files::FilePlan;
use super::schema::{Axis, Section, Source, SweepDoc};
use super::values::{one_size, Ctx};
use crate::config::{CacheMode, Method, Op, Pattern, RunSpec, TOML_NAMES};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What an experiment measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Throughput,
    Syscalls,
    Command,
    Locality,
}

impl Kind {
    const NAMES: &'static str = "throughput, syscalls, command, locality";

    fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "throughput" => Kind::Throughput,
            "syscalls" => Kind::Syscalls,
            "command" => Kind::Command,
            "locality" => Kind::Locality,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Throughput => "throughput",
            Kind::Syscalls => "syscalls",
            Kind::Command => "command",
            Kind::Locality => "locality",
        }
    }

    /// Keys an experiment of this kind may set (besides `name` and `kind`).
    fn keys(self) -> &'static [&'static str] {
        match self {
            Kind::Throughput => &[
                "reps",
                "seconds",
                "block_size",
                "threads",
                "method",
                "cache",
                "direct",
                "queue_depth",
                "operation",
                "pattern",
                "one_pass",
            ],
            Kind::Command => &[
                "reps",
                "command",
                "block_size",
                "block_count",
                "cache",
                "bytes",
                "timeout",
            ],
            Kind::Syscalls => &["reps", "seconds"],
            Kind::Locality => &["params"],
        }
    }
}

/// The external command of a `command` experiment.
#[derive(Debug, Clone)]
pub struct CommandPlan {
    pub template: String,
    pub bytes: Option<u64>,
    pub timeout: Duration,
}

/// One experiment, ready to run.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub name: String,
    pub kind: Kind,
    pub reps: u32,
    /// Time budget of one repetition (per system call for `syscalls`).
    pub seconds: f64,
    /// Points in run order (throughput and command kinds).
    pub points: Vec<RunSpec>,
    pub command: Option<CommandPlan>,
    pub params: toml::Table,
    /// What the planner changed or skipped, for the printed plan.
    pub notes: Vec<String>,
    /// The estimate is an upper bound (runs may end at the end of the file first).
    pub upper_bound: bool,
}

impl Experiment {
    /// Runs of this experiment (points x repetitions).
    pub fn runs(&self) -> usize {
        match self.kind {
            Kind::Throughput | Kind::Command => self.points.len() * self.reps as usize,
            Kind::Syscalls => self.reps as usize,
            Kind::Locality => 1,
        }
    }

    /// Estimated seconds, when the time bound makes it predictable.
    pub fn estimate_s(&self) -> Option<f64> {
        match self.kind {
            Kind::Throughput => Some(self.runs() as f64 * self.seconds),
            Kind::Syscalls => Some(self.runs() as f64 * 8.0 * self.seconds),
            Kind::Command | Kind::Locality => None,
        }
    }
}

/// A whole sweep, ready to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub description: String,
    pub file: Option<FilePlan>,
    pub experiments: Vec<Experiment>,
    /// Where the CSVs and figures go.
    pub out_dir: PathBuf,
    /// Experiments drawn together in `compare.svg`.
    pub compare: Vec<String>,
}

const DEFAULT_REPS: i64 = 5;
const DEFAULT_SECONDS: f64 = 2.0;
const DEFAULT_SYSCALL_SECONDS: f64 = 0.25;
const DEFAULT_TIMEOUT_S: f64 = 60.0;

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        && !s.starts_with('.')
}

/// The span of `key` in a section, if set there.
fn key_span(s: &Section, key: &str) -> Option<Range<usize>> {
    let axis = |a: &Axis| a.as_ref().map(|v| v.span());
    match key {
        "name" => s.name.as_ref().map(|v| v.span()),
        "kind" => s.kind.as_ref().map(|v| v.span()),
        "reps" => s.reps.as_ref().map(|v| v.span()),
        "seconds" => s.seconds.as_ref().map(|v| v.span()),
        "command" => s.command.as_ref().map(|v| v.span()),
        "bytes" => s.bytes.as_ref().map(|v| v.span()),
        "timeout" => s.timeout.as_ref().map(|v| v.span()),
        "params" => s.params.as_ref().map(|v| v.span()),
        "one_pass" => s.one_pass.as_ref().map(|v| v.span()),
        _ => axis(axis_of(s, key)?),
    }
}

fn axis_of<'a>(s: &'a Section, key: &str) -> Option<&'a Axis> {
    Some(match key {
        "block_size" => &s.block_size,
        "block_count" => &s.block_count,
        "threads" => &s.threads,
        "method" => &s.method,
        "cache" => &s.cache,
        "direct" => &s.direct,
        "queue_depth" => &s.queue_depth,
        "operation" => &s.operation,
        "pattern" => &s.pattern,
        _ => return None,
    })
}

const ALL_KEYS: [&str; 18] = [
    "one_pass",
    "name",
    "kind",
    "reps",
    "seconds",
    "block_size",
    "block_count",
    "threads",
    "method",
    "cache",
    "direct",
    "queue_depth",
    "operation",
    "pattern",
    "command",
    "bytes",
    "timeout",
    "params",
];

/// An experiment's section with the defaults behind it.
struct Layered<'a> {
    src: &'a Source,
    exp: &'a Section,
    exp_span: Range<usize>,
    defaults: &'a Section,
}

impl<'a> Layered<'a> {
    fn span(&self, key: &str) -> Range<usize> {
        key_span(self.exp, key)
            .or_else(|| key_span(self.defaults, key))
            .unwrap_or(self.exp_span.clone())
    }

    fn axis(&self, key: &'static str) -> Option<Ctx<'a>> {
        let a = axis_of(self.exp, key)?
            .as_ref()
            .or(axis_of(self.defaults, key)?.as_ref())?;
        Some(Ctx {
            src: self.src,
            key,
            axis: a,
        })
    }

    fn list<T>(
        &self,
        key: &'static str,
        default: T,
        conv: impl Fn(&Ctx<'a>) -> anyhow::Result<Vec<T>>,
    ) -> anyhow::Result<Vec<T>> {
        match self.axis(key) {
            Some(c) => conv(&c),
            None => Ok(vec![default]),
        }
    }

    fn reps(&self) -> anyhow::Result<u32> {
        let r = self.exp.reps.as_ref().or(self.defaults.reps.as_ref());
        let n = r.map(|r| *r.get_ref()).unwrap_or(DEFAULT_REPS);
        if !(1..=1000).contains(&n) {
            return Err(self.src.key_error(
                self.span("reps"),
                "reps",
                &format!("must be between 1 and 1000, got {n}"),
            ));
        }
        Ok(n as u32)
    }

    fn seconds(&self, key: &'static str, default: f64) -> anyhow::Result<f64> {
        let v = match key {
            "seconds" => self.exp.seconds.as_ref().or(self.defaults.seconds.as_ref()),
            _ => self.exp.timeout.as_ref().or(self.defaults.timeout.as_ref()),
        };
        let s = v.map(|v| *v.get_ref()).unwrap_or(default);
        if !(s.is_finite() && s > 0.0 && s <= 86_400.0) {
            return Err(self.src.key_error(
                self.span(key),
                key,
                &format!("must be a number of seconds above 0 and at most 86400, got {s}"),
            ));
        }
        Ok(s)
    }
}

/// Builds the plan of a parsed sweep file. `default_name` is the file stem.
/// `out`: the `--out` directory (default `diskscope-results/<name>/`).
pub fn build(
    src: &Source,
    doc: &SweepDoc,
    default_name: &str,
    out: Option<&Path>,
) -> anyhow::Result<Plan> {
    let name = match &doc.name {
        Some(n) if !valid_name(n.get_ref()) => {
            return Err(src.key_error(n.span(), "name", "use letters, digits, '.', '_' and '-' only (it names the output directory)"))
        }
        Some(n) => n.get_ref().clone(),
        None if valid_name(default_name) => default_name.to_string(),
        None => {
            return Err(crate::config::usage(format!(
                "{}:1: key `name`: the file name is not usable as a sweep name; add name = \"my-sweep\"",
                src.display
            )))
        }
    };
    let out_dir = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new("diskscope-results").join(&name));
    let empty = Section::default();
    let defaults = doc.defaults.as_ref().map(|d| d.get_ref()).unwrap_or(&empty);
    for key in ["name", "kind", "command", "params"] {
        if let Some(span) = key_span(defaults, key) {
            return Err(src.key_error(
                span,
                key,
                "belongs in an [[experiment]], not in [defaults]; move it",
            ));
        }
    }
    if doc.experiment.is_empty() {
        return Err(crate::config::usage(format!(
            "{}:1: no experiments; add an [[experiment]] table with a `name` and a `kind`",
            src.display
        )));
    }
    let needs_file = doc.experiment.iter().any(|e| {
        matches!(
            e.get_ref().kind.as_ref().map(|k| k.get_ref().as_str()),
            Some("throughput" | "command") | None
        )
    });
    let file = super::files::plan_file(src, doc.file.as_ref(), needs_file, &out_dir)?;
    let mut experiments: Vec<Experiment> = Vec::new();
    for e in &doc.experiment {
        let layered = Layered {
            src,
            exp: e.get_ref(),
            exp_span: e.span(),
            defaults,
        };
        let x = experiment(&layered, file.as_ref())?;
        if experiments.iter().any(|o| o.name == x.name) {
            return Err(src.key_error(
                layered.span("name"),
                "name",
                &format!(
                "experiment `{}` is defined twice; names must be unique (they name the CSV files)",
                x.name
            ),
            ));
        }
        experiments.push(x);
    }
    let compare = match &doc.compare {
        None => Vec::new(),
        Some(c) => {
            for n in c.get_ref() {
                match experiments.iter().find(|x| &x.name == n) {
                    Some(x) if matches!(x.kind, Kind::Throughput | Kind::Command) => {}
                    Some(_) => {
                        return Err(src.key_error(
                            c.span(),
                            "compare",
                            &format!(
                                "`{n}` is not a throughput or command experiment; list only those"
                            ),
                        ))
                    }
                    None => {
                        return Err(src.key_error(
                            c.span(),
                            "compare",
                            &format!("no experiment is named `{n}`; list experiment names"),
                        ))
                    }
                }
            }
            if c.get_ref().len() < 2 {
                return Err(src.key_error(
                    c.span(),
                    "compare",
                    "list at least two experiments to draw together",
                ));
            }
            c.get_ref().clone()
        }
    };
    Ok(Plan {
        compare,
        name,
        description: doc.description.clone().unwrap_or_default(),
        file,
        experiments,
        out_dir,
    })
}

fn experiment(l: &Layered, file: Option<&FilePlan>) -> anyhow::Result<Experiment> {
    let src = l.src;
    let name = match &l.exp.name {
        None => {
            return Err(src.key_error(
                l.exp_span.clone(),
                "name",
                "missing; every [[experiment]] needs a name",
            ))
        }
        Some(n) if !valid_name(n.get_ref()) => {
            return Err(src.key_error(
                n.span(),
                "name",
                "use letters, digits, '.', '_' and '-' only (it names the CSV file)",
            ))
        }
        Some(n) => n.get_ref().clone(),
    };
    let kind = match &l.exp.kind {
        None => {
            return Err(src.key_error(
                l.span("name"),
                "kind",
                &format!(
                    "missing; add kind = \"throughput\" (or one of {})",
                    Kind::NAMES
                ),
            ))
        }
        Some(k) => Kind::parse(k.get_ref()).ok_or_else(|| {
            src.key_error(
                k.span(),
                "kind",
                &format!("unknown kind '{}'; use one of {}", k.get_ref(), Kind::NAMES),
            )
        })?,
    };
    for key in ALL_KEYS.iter().filter(|k| !["name", "kind"].contains(k)) {
        if !kind.keys().contains(key) {
            if let Some(span) = key_span(l.exp, key) {
                return Err(src.key_error(
                    span,
                    key,
                    &format!(
                        "does not apply to kind {}; remove it (that kind takes: {})",
                        kind.as_str(),
                        kind.keys().join(", ")
                    ),
                ));
            }
        }
    }
    let mut x = Experiment {
        name,
        kind,
        reps: if kind == Kind::Locality { 1 } else { l.reps()? },
        seconds: l.seconds(
            "seconds",
            if kind == Kind::Syscalls {
                DEFAULT_SYSCALL_SECONDS
            } else {
                DEFAULT_SECONDS
            },
        )?,
        points: Vec::new(),
        command: None,
        params: l
            .exp
            .params
            .as_ref()
            .map(|p| p.get_ref().clone())
            .unwrap_or_default(),
        notes: Vec::new(),
        upper_bound: false,
    };
    match kind {
        Kind::Throughput => throughput_points(l, file.expect("planned"), &mut x)?,
        Kind::Command => command_points(l, file.expect("planned"), &mut x)?,
        Kind::Syscalls | Kind::Locality => {}
    }
    Ok(x)
}

fn throughput_points(l: &Layered, file: &FilePlan, x: &mut Experiment) -> anyhow::Result<()> {
    let sizes = l.list("block_size", 1 << 20, |c| c.sizes(true))?;
    let threads = l.list("threads", 1, |c| c.counts())?;
    let methods = l.list("method", Method::Pread, |c| c.names(Method::parse))?;
    let caches = l.list("cache", CacheMode::Warm, |c| c.names(CacheMode::parse))?;
    let directs = l.list("direct", false, |c| c.bools())?;
    let depths = l.list("queue_depth", 1, |c| c.counts())?;
    let ops = l.list("operation", Op::Read, |c| c.names(Op::parse))?;
    let patterns = l.list("pattern", Pattern::Sequential, |c| c.names(Pattern::parse))?;
    if ops.contains(&Op::Write) && !file.writable {
        return Err(l.src.key_error(l.span("operation"), "operation", &format!(
            "write would overwrite {}; add `write = true` under [file] to allow it, or use `create`",
            file.path.display()
        )));
    }
    let size = file.size_bytes;
    let one_pass_all = l
        .exp
        .one_pass
        .as_ref()
        .or(l.defaults.one_pass.as_ref())
        .is_some_and(|v| *v.get_ref());
    x.upper_bound = one_pass_all;
    let mut skipped_direct = 0;
    for &op in &ops {
        for &method in &methods {
            for &cache in &caches {
                for &direct in &directs {
                    if direct && !method.supports_direct() {
                        skipped_direct += 1;
                        continue;
                    }
                    for &t in &threads {
                        for &qd in &depths {
                            for &pattern in &patterns {
                                for &bs in &sizes {
                                    let mut s = RunSpec::new(&file.path);
                                    s.op = op;
                                    s.method = method;
                                    s.cache = if op == Op::Write {
                                        CacheMode::AsIs
                                    } else {
                                        cache
                                    };
                                    s.direct = direct;
                                    s.threads = usize::try_from(t).unwrap_or(usize::MAX);
                                    s.queue_depth = if method == Method::IoUring {
                                        u32::try_from(qd).unwrap_or(u32::MAX)
                                    } else {
                                        1
                                    };
                                    s.pattern = pattern;
                                    s.block_size_bytes = bs;
                                    s.duration = Some(Duration::from_secs_f64(x.seconds));
                                    let one_pass = one_pass_all
                                        || op == Op::Write
                                        || (pattern == Pattern::Sequential
                                            && matches!(
                                                cache,
                                                CacheMode::Cold | CacheMode::ColdAll
                                            ));
                                    s.block_count = one_pass.then(|| size.div_ceil(bs).max(1));
                                    s.force = op == Op::Write;
                                    s.overwrite_in_place = op == Op::Write;
                                    s.validate(&TOML_NAMES)
                                        .map_err(|e| l.src.spec_error(e, |k| l.span(k)))?;
                                    if !x.points.contains(&s) {
                                        x.points.push(s);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if skipped_direct > 0 {
        x.notes.push(format!("skipped {skipped_direct} method x direct combinations: O_DIRECT applies to read, pread and io_uring only"));
    }
    if depths.len() > 1 && methods.iter().any(|m| *m != Method::IoUring) {
        x.notes
            .push("queue_depth applies to io_uring only; other methods run at depth 1".into());
    }
    if ops.contains(&Op::Write) && caches.len() > 1 {
        x.notes
            .push("cache applies to reads only; writes run once per other setting".into());
    }
    if x.points.is_empty() {
        return Err(l.src.key_error(
            l.span("direct"),
            "direct",
            "no point is left to run: O_DIRECT needs method read, pread or io_uring",
        ));
    }
    Ok(())
}

fn command_points(l: &Layered, file: &FilePlan, x: &mut Experiment) -> anyhow::Result<()> {
    let src = l.src;
    let Some(cmd) = &l.exp.command else {
        return Err(src.key_error(l.span("name"), "command", "missing; e.g. command = \"dd if={file} of=/dev/null bs={block_size} count={block_count}\""));
    };
    if cmd.get_ref().trim().is_empty() {
        return Err(src.key_error(
            cmd.span(),
            "command",
            "is empty; give the shell command to time",
        ));
    }
    let bytes = match &l.exp.bytes {
        Some(b) => Some(one_size(src, b, "bytes")?),
        None => None,
    };
    x.command = Some(CommandPlan {
        template: cmd.get_ref().clone(),
        bytes,
        timeout: Duration::from_secs_f64(l.seconds("timeout", DEFAULT_TIMEOUT_S)?),
    });
    let sizes = l.list("block_size", 1 << 20, |c| c.sizes(true))?;
    let caches = l.list("cache", CacheMode::Warm, |c| c.names(CacheMode::parse))?;
    let counts: Vec<Option<u64>> = match l.axis("block_count") {
        Some(c) => c.counts()?.into_iter().map(Some).collect(),
        None => vec![None],
    };
    for &cache in &caches {
        for &count in &counts {
            for &bs in &sizes {
                let mut s = RunSpec::new(&file.path);
                s.method = Method::Read;
                s.cache = cache;
                s.block_size_bytes = bs;
                s.block_count = Some(count.unwrap_or(file.size_bytes.div_ceil(bs).max(1)));
                s.validate(&TOML_NAMES)
                    .map_err(|e| src.spec_error(e, |k| l.span(k)))?;
                x.points.push(s);
            }
        }
    }
    Ok(())
}
