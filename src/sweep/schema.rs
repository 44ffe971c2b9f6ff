//! The sweep file as written: serde structs that mirror the TOML one to one, with
//! `deny_unknown_fields` so a misspelt key is an error, and [`Spanned`] values so every later
//! check can point at the line of the key it rejects.
//!
//! Axes (`block_size`, `threads`, ...) may be one value or a list; [`OneOrMany`] keeps them as raw
//! TOML values and `plan` converts them itself, because serde's messages for untagged enums
//! ("data did not match any variant") would not tell a user what to write instead.

use crate::config::{usage, UsageError};
use serde::Deserialize;
use std::ops::Range;
use toml::Spanned;

/// The whole sweep file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepDoc {
    /// Sweep name: the default output directory is `diskscope-results/<name>/`.
    pub name: Option<Spanned<String>>,
    pub description: Option<String>,
    /// Experiments (throughput or command) to draw together in `compare.svg`.
    pub compare: Option<Spanned<Vec<String>>>,
    /// y axis of the figures: "auto" (log when values span > ~50×), "linear" or "log".
    pub y_scale: Option<Spanned<String>>,
    /// The file the experiments read (or write, or that diskscope creates).
    pub file: Option<Spanned<FileDef>>,
    /// Values every experiment inherits unless it sets its own.
    pub defaults: Option<Spanned<Section>>,
    /// `[[experiment]]` tables, run in order.
    #[serde(default)]
    pub experiment: Vec<Spanned<Section>>,
    /// Fleet runs under mpirun (`--features mpi`): `fleet = { layout, stonewall, timeout_s }`.
    pub fleet: Option<Spanned<FleetDef>>,
}

/// The sweep's `fleet = { ... }` key, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetDef {
    /// `file-per-process` (default) or `shared-file`.
    pub layout: Option<Spanned<String>>,
    /// Stop all ranks when the first one finishes a repetition.
    pub stonewall: Option<Spanned<bool>>,
    /// Seconds a rank may be late to a barrier or silent before the point stops, naming it.
    pub timeout_s: Option<Spanned<f64>>,
}

/// `[file]`: name a file, or ask for a test file of a given size.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDef {
    pub path: Option<Spanned<String>>,
    /// Size of a test file to create (`"1G"`); removed afterwards unless `keep = true`.
    pub create: Option<Spanned<toml::Value>>,
    pub keep: Option<Spanned<bool>>,
    /// Allow write experiments on this file (a created test file is always writable).
    pub write: Option<Spanned<bool>>,
}

/// One value or a list of values of an axis.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    Many(Vec<toml::Value>),
    One(toml::Value),
}

impl OneOrMany {
    /// The values as a list.
    pub fn values(&self) -> Vec<toml::Value> {
        match self {
            OneOrMany::Many(v) => v.clone(),
            OneOrMany::One(v) => vec![v.clone()],
        }
    }
}

/// A sweep axis as written.
pub type Axis = Option<Spanned<OneOrMany>>;

/// `[defaults]` and each `[[experiment]]`: the same keys, so an experiment can override any
/// default. `name`, `kind`, `command` and `params` belong to experiments only.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    pub name: Option<Spanned<String>>,
    pub kind: Option<Spanned<String>>,
    pub reps: Option<Spanned<i64>>,
    /// Time budget of one repetition of a point (per system call for `syscalls`), seconds.
    pub seconds: Option<Spanned<f64>>,
    pub block_size: Axis,
    pub block_count: Axis,
    pub threads: Axis,
    pub method: Axis,
    pub cache: Axis,
    pub direct: Axis,
    pub queue_depth: Axis,
    /// The memory behind the I/O buffers (`auto`, `plain`, `malloc`, `thp`, `hugetlb`).
    pub buffers: Axis,
    pub operation: Axis,
    /// `throughput` kind: a mixed workload, the percent of operations that read (`mix = 70`,
    /// fio's `rwmixread`; a list makes one point each); it writes, so it needs a writable file,
    /// and takes the place of `operation`.
    pub mix: Axis,
    pub pattern: Axis,
    /// io_uring submission policy (`batch` or `each`), one per experiment.
    pub submit: Axis,
    /// `throughput` kind: open loop, like `run --rate`: operations per second over all threads
    /// (`2000`) or a throughput (`"50 MiB/s"`, divided by each point's block size); `0` is the
    /// closed loop. A list makes one point each (`rate = [0, 1000, 5000]`).
    pub rate: Axis,
    /// `throughput` kind, with `rate`: how the intended starts are spaced, `constant` or
    /// `poisson` (like `run --arrival`); a list makes one point each.
    pub arrival: Axis,
    /// `throughput` kind: whether the runs XOR their data, `xor` (the default) or `none` (like
    /// `run --checksum`: moved, never read back, no XOR); a list makes one point each.
    pub checksum: Axis,
    /// `throughput` kind: read the file once per repetition (like dd) instead of looping over it
    /// until `seconds` is up; `seconds` still bounds it.
    pub one_pass: Option<Spanned<bool>>,
    /// `throughput` kind: the kernel view, like `run --kernel`: `process` (the run's own block
    /// requests) or `device` (every request to the file's disk), timed in the block layer and
    /// the device (needs root; without it each run says why and is otherwise unchanged). One
    /// per experiment: it observes the points, it is not one of their settings.
    pub kernel: Option<Spanned<String>>,
    /// `command` kind: shell command with `{file}`, `{block_size}`, `{block_count}`.
    pub command: Option<Spanned<String>>,
    /// `command` kind: bytes the command moves (default: the file size).
    pub bytes: Option<Spanned<toml::Value>>,
    /// `command` kind: seconds after which the command is killed and the repetition fails.
    pub timeout: Option<Spanned<f64>>,
    /// `locality` kind: parameters handed to the locality lab as they are.
    pub params: Option<Spanned<toml::Table>>,
}

/// The sweep file's text and name, for error messages that point at a line.
pub struct Source {
    pub display: String,
    pub text: String,
}

/// `text` with control characters (a newline inside a TOML string value) escaped, so an error
/// that quotes the user's value stays one line.
fn one_line(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_debug().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

impl Source {
    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    /// A usage error `SWEEP.toml:LINE: key `KEY`: MESSAGE`.
    pub fn key_error(&self, span: Range<usize>, key: &str, msg: &str) -> anyhow::Error {
        usage(format!(
            "{}:{}: key `{}`: {}",
            self.display,
            self.line_of(span.start),
            one_line(key),
            one_line(msg)
        ))
    }

    /// Turns a `RunSpec::validate` error into a located one, at the line of its key.
    pub fn spec_error(
        &self,
        e: UsageError,
        span_of: impl Fn(&str) -> Range<usize>,
    ) -> anyhow::Error {
        match &e.key {
            Some(key) => self.key_error(span_of(key), key, &e.message),
            None => usage(format!(
                "{}:{}: {}",
                self.display,
                self.line_of(span_of("").start),
                e.message
            )),
        }
    }

    /// Parses the document; a TOML or schema error becomes one located line.
    pub fn parse(&self) -> anyhow::Result<SweepDoc> {
        toml::from_str(&self.text).map_err(|e| self.toml_error(&e))
    }

    fn toml_error(&self, e: &toml::de::Error) -> anyhow::Error {
        let msg = e.message().trim().replace('\n', " ");
        let Some(span) = e.span() else {
            return usage(format!("{}: {msg}", self.display));
        };
        let line_no = self.line_of(span.start);
        let line = self.text.lines().nth(line_no - 1).unwrap_or("");
        if let Some(rest) = msg.strip_prefix("unknown field `") {
            let (key, expected) = rest.split_once('`').unwrap_or((rest, ""));
            let choices = expected
                .trim_start_matches(", expected one of ")
                .trim_start_matches(", expected ")
                .replace('`', "");
            return usage(format!(
                "{}:{line_no}: key `{key}`: unknown key; check the spelling or use one of {choices}",
                self.display
            ));
        }
        if let Some(rest) = msg.strip_prefix("missing field `") {
            let key = rest.split('`').next().unwrap_or(rest);
            return usage(format!(
                "{}:{line_no}: key `{key}`: missing; add it to this table",
                self.display
            ));
        }
        let key = line
            .split_once('=')
            .map(|(k, _)| k.trim().trim_matches('"').to_string())
            .filter(|k| !k.is_empty() && !k.starts_with('['));
        if line.trim_start().starts_with("[experiment]") {
            return usage(format!(
                "{}:{line_no}: key `experiment`: write [[experiment]] (double brackets) for each experiment",
                self.display
            ));
        }
        let schema = [
            "invalid type",
            "invalid value",
            "invalid length",
            "unknown variant",
        ]
        .iter()
        .any(|p| msg.starts_with(p));
        match key {
            Some(key) if schema => usage(format!(
                "{}:{line_no}: key `{key}`: {msg}; {}",
                self.display,
                hint(&key)
            )),
            _ if schema => usage(format!("{}:{line_no}: {msg}", self.display)),
            _ => usage(format!(
                "{}:{line_no}: TOML syntax error: {msg}; fix the TOML at or just before this line",
                self.display
            )),
        }
    }
}

/// What a key accepts, for type errors.
pub fn hint(key: &str) -> &'static str {
    match key {
        "name" | "kind" | "command" | "description" | "path" => "write a string in quotes",
        "reps" => "write a whole number such as 5",
        "seconds" | "timeout" => "write a number of seconds such as 2 or 0.5",
        "keep" | "write" => "write true or false",
        "params" => "write a table such as params = { files = 100 }",
        "rate" => "write operations per second such as 2000 (0: closed loop) or a string such as \"50 MiB/s\"",
        _ => "see docs/sweep.md for the keys of a sweep file",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> Source {
        Source {
            display: "s.toml".into(),
            text: text.into(),
        }
    }

    #[test]
    fn an_unknown_key_is_reported_with_its_line_and_the_valid_keys() {
        let e = src("name = \"x\"\n[[experiment]]\nname = \"a\"\nblok_size = 4\n")
            .parse()
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("s.toml:4: key `blok_size`: unknown key"),
            "{e}"
        );
        assert!(e.contains("block_size"), "{e}");
    }

    #[test]
    fn a_wrong_type_names_the_key_and_what_to_write() {
        let e = src("[[experiment]]\nname = \"a\"\nreps = \"five\"\n")
            .parse()
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("s.toml:3: key `reps`: invalid type"), "{e}");
        assert!(e.contains("whole number"), "{e}");
    }

    #[test]
    fn axes_take_one_value_or_a_list_and_keep_their_spans() {
        let s = src("[[experiment]]\nname = \"a\"\nthreads = [1, 2]\nmethod = \"read\"\n");
        let doc = s.parse().unwrap();
        let e = doc.experiment[0].get_ref();
        let t = e.threads.as_ref().unwrap();
        assert_eq!(t.get_ref().values().len(), 2);
        assert_eq!(s.line_of(t.span().start), 3);
        assert_eq!(e.method.as_ref().unwrap().get_ref().values().len(), 1);
    }
}
