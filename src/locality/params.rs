//! Settings of the locality lab: command-line flags and sweep-file keys are one struct,
//! [`LocalityParams`] (clap `Args` and serde `Deserialize` at once), and become one validated
//! [`Params`] through [`LocalityParams::validate`], so `--file-size 0` and `file_size = 0` are
//! rejected by the same check, each named the way the user wrote it.

use crate::config::{CacheMode, UsageError};
use crate::size::parse_size;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use std::path::PathBuf;

/// Most small files one layout may hold.
pub const MAX_FILES: u64 = 1_000_000;
/// Largest small file (the read buffer holds one).
pub const MAX_FILE_SIZE_BYTES: u64 = 64 << 20;
/// Most repetitions.
pub const MAX_REPS: u64 = 1000;
/// Largest directory fan-out (ids map to `k mod fanout`).
pub const MAX_FANOUT: u64 = 1_000_000;

/// The order in which ids are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// Ids 0, 1, 2, ...
    Sequential,
    /// Every id once, freshly shuffled each repetition.
    Random,
    /// The ids of a trace (a user's file or a synthetic one), repeats included.
    Trace,
}

impl Order {
    pub const ALL: [Order; 3] = [Order::Sequential, Order::Random, Order::Trace];

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Sequential => "sequential",
            Order::Random => "random",
            Order::Trace => "trace",
        }
    }

    pub fn parse(text: &str, what: &str) -> Result<Self, UsageError> {
        let t = text.trim().to_ascii_lowercase();
        Order::ALL
            .into_iter()
            .find(|o| o.as_str() == t)
            .ok_or_else(|| {
                UsageError::new(
                    what,
                    format!("unknown order '{text}'; use sequential, random or trace"),
                )
            })
    }
}

/// The order of the small files' contents inside the packed file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackOrder {
    /// By id, as the study did.
    Id,
    /// In the trace's first-access order, then the ids the trace never reads.
    Trace,
}

impl PackOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            PackOrder::Id => "id",
            PackOrder::Trace => "trace",
        }
    }

    pub fn parse(text: &str, what: &str) -> Result<Self, UsageError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "id" => Ok(PackOrder::Id),
            "trace" => Ok(PackOrder::Trace),
            _ => Err(UsageError::new(
                what,
                format!("unknown pack order '{text}'; use id or trace"),
            )),
        }
    }
}

/// Validated settings of one locality experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Directory that holds the tree, the packed file, its index and the manifest.
    pub dir: PathBuf,
    pub files: u32,
    pub file_size_bytes: u64,
    /// Orders to measure, each once, in the order given.
    pub orders: Vec<Order>,
    /// A user's trace file; `None` means a synthetic trace.
    pub trace: Option<PathBuf>,
    pub reps: u32,
    /// Cache modes to measure, each once, in the order given.
    pub caches: Vec<CacheMode>,
    pub pack_order: PackOrder,
    pub fanout: u32,
    /// Seed of the shuffles and of the synthetic trace.
    pub seed: u64,
}

impl Params {
    /// Whether a trace (user or synthetic) is needed at all.
    pub fn needs_trace(&self) -> bool {
        self.orders.contains(&Order::Trace) || self.pack_order == PackOrder::Trace
    }
}

/// The default place of the layout: reused across runs, removed by `--clean`.
pub fn default_dir() -> PathBuf {
    std::env::temp_dir().join("diskscope-locality")
}

/// How settings are spelled in messages: `--file-size` on the command line, `file_size` in TOML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Cli,
    Toml,
}

impl Syntax {
    pub fn name(self, key: &str) -> String {
        match self {
            Syntax::Cli => format!("--{}", key.replace('_', "-")),
            Syntax::Toml => key.to_string(),
        }
    }
}

/// Default values, shared by the flags (see [`LocalityParams`]) and the sweep keys.
pub const DEFAULT_FILES: &str = "10000";
pub const DEFAULT_FILE_SIZE: &str = "14K";
pub const DEFAULT_ORDERS: &str = "sequential,random,trace";
pub const DEFAULT_REPS: u64 = 5;
pub const DEFAULT_CACHE: &str = "warm";
pub const DEFAULT_FANOUT: u64 = 250;
pub const DEFAULT_SEED: u64 = 1;

/// The parameters of the locality lab, as written: the flags of `diskscope locality` and the
/// keys of a sweep's `params = { ... }` are this one struct (clap and serde), so a flag and a key
/// cannot drift apart. Sizes and counts stay text so `10K` and `14K` work; lists are
/// comma-separated text on the command line and a string or an array in TOML.
#[derive(Debug, Clone, clap::Args, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LocalityParams {
    /// Directory for the tree, the packed file and its index (default: <temp dir>/diskscope-locality);
    /// reused while the parameters match
    #[arg(long, value_name = "DIR")]
    #[serde(deserialize_with = "path")]
    pub dir: Option<PathBuf>,
    /// Number of small files (ids 0..N)
    #[arg(long, default_value = DEFAULT_FILES, value_name = "N")]
    #[serde(deserialize_with = "size_text")]
    pub files: String,
    /// Size of each small file: 14K, 4096, 1M
    #[arg(long, default_value = DEFAULT_FILE_SIZE, value_name = "SIZE")]
    #[serde(deserialize_with = "size_text")]
    pub file_size: String,
    /// Orders to measure, comma-separated: sequential, random, trace
    #[arg(long, default_value = DEFAULT_ORDERS, value_name = "ORDERS")]
    #[serde(deserialize_with = "list_text")]
    pub order: String,
    /// Trace to replay: one id per line, or a Common Log Format access log (default: synthetic)
    #[arg(long, value_name = "FILE")]
    #[serde(deserialize_with = "path")]
    pub trace: Option<PathBuf>,
    /// Repetitions of each order
    #[arg(long, default_value_t = DEFAULT_REPS, value_name = "N")]
    #[serde(deserialize_with = "count")]
    pub reps: u64,
    /// Page cache before each repetition, comma-separated: warm, cold (evict every file),
    /// cold-all (root: also drop directory entries and inodes), as-is
    #[arg(long, default_value = DEFAULT_CACHE, value_name = "MODES")]
    #[serde(deserialize_with = "list_text")]
    pub cache: String,
    /// Order of the contents in the packed file: id, or trace (first-access order of the trace)
    #[arg(long, default_value = "id", value_name = "ORDER")]
    #[serde(deserialize_with = "pack_order_text")]
    pub pack_order: String,
    /// Directory fan-out: file k lives under the digits of k mod FANOUT
    #[arg(long, default_value_t = DEFAULT_FANOUT, value_name = "N")]
    #[serde(deserialize_with = "count")]
    pub fanout: u64,
    /// Seed of the shuffles and of the synthetic trace
    #[arg(long, default_value_t = DEFAULT_SEED, value_name = "N")]
    #[serde(deserialize_with = "count")]
    pub seed: u64,
    /// Remove the layout in --dir and exit
    #[arg(long)]
    #[serde(skip)]
    pub clean: bool,
    /// Print one JSON document (context, setup, every pass's figures and latency percentiles,
    /// the summary rows) on stdout; the table then goes to stderr
    #[arg(long)]
    #[serde(skip)]
    pub json: bool,
    /// Every pass as CSV (--export-csv), the --json document (--export-json), the figure of
    /// layout × order (--export-svg) or a page with both (--export-html), each into a new file
    #[command(flatten)]
    #[serde(skip)]
    pub export: crate::export::manager::ExportArgs,
    /// Replace existing --export-* files
    #[arg(long)]
    #[serde(skip)]
    pub force: bool,
}

impl Default for LocalityParams {
    fn default() -> Self {
        LocalityParams {
            dir: None,
            files: DEFAULT_FILES.into(),
            file_size: DEFAULT_FILE_SIZE.into(),
            order: DEFAULT_ORDERS.into(),
            trace: None,
            reps: DEFAULT_REPS,
            cache: DEFAULT_CACHE.into(),
            pack_order: "id".into(),
            fanout: DEFAULT_FANOUT,
            seed: DEFAULT_SEED,
            clean: false,
            json: false,
            export: Default::default(),
            force: false,
        }
    }
}

/// A size or count: a non-negative integer or a string such as "14K".
fn size_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum T {
        N(u64),
        S(String),
    }
    match T::deserialize(d) {
        Ok(T::N(n)) => Ok(n.to_string()),
        Ok(T::S(s)) => Ok(s),
        Err(_) => Err(D::Error::custom(
            "expected a number or a size such as \"14K\"",
        )),
    }
}

/// `"id"` or `"trace"` (checked by [`PackOrder::parse`] with the rest).
fn pack_order_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    String::deserialize(d).map_err(|_| D::Error::custom("expected \"id\" or \"trace\""))
}

/// A non-negative whole number.
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    u64::deserialize(d).map_err(|_| D::Error::custom("expected a non-negative integer"))
}

/// A name, comma-separated names, or an array of names, as comma-separated text.
fn list_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum L {
        One(String),
        Many(Vec<String>),
    }
    match L::deserialize(d) {
        Ok(L::One(s)) => Ok(s),
        Ok(L::Many(v)) => Ok(v.join(",")),
        Err(_) => Err(D::Error::custom("expected a name or a list of names")),
    }
}

/// A non-empty path.
fn path<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    match String::deserialize(d) {
        Ok(s) if !s.is_empty() => Ok(Some(PathBuf::from(s))),
        _ => Err(D::Error::custom("expected a path")),
    }
}

/// Splits `a,b, c` into trimmed non-empty parts.
pub fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn in_range(v: u64, lo: u64, hi: u64, name: &str) -> Result<u64, UsageError> {
    if v < lo || v > hi {
        return Err(UsageError::new(
            name,
            format!("must be between {lo} and {hi}, got {v}"),
        ));
    }
    Ok(v)
}

impl LocalityParams {
    /// Checks every setting; the first problem is returned as a one-line usage error.
    pub fn validate(&self, syntax: Syntax) -> Result<Params, UsageError> {
        let n = |k: &str| syntax.name(k);
        let files =
            parse_size(&self.files).map_err(|e| UsageError::new(n("files"), e.to_string()))?;
        let files = in_range(files, 1, MAX_FILES, &n("files"))? as u32;
        let file_size = parse_size(&self.file_size)
            .map_err(|e| UsageError::new(n("file_size"), e.to_string()))?;
        let file_size_bytes = in_range(file_size, 1, MAX_FILE_SIZE_BYTES, &n("file_size"))?;
        let order_names = split_list(&self.order);
        if order_names.is_empty() {
            return Err(UsageError::new(
                n("order"),
                "give at least one of sequential, random, trace",
            ));
        }
        let mut orders = Vec::new();
        for o in &order_names {
            let o = Order::parse(o, &n("order"))?;
            if !orders.contains(&o) {
                orders.push(o);
            }
        }
        let cache_names = split_list(&self.cache);
        if cache_names.is_empty() {
            return Err(UsageError::new(
                n("cache"),
                "give at least one of warm, cold, cold-all, as-is",
            ));
        }
        let mut caches = Vec::new();
        for c in &cache_names {
            let c = CacheMode::parse(c.trim(), &n("cache"))?;
            if !caches.contains(&c) {
                caches.push(c);
            }
        }
        let reps = in_range(self.reps, 1, MAX_REPS, &n("reps"))? as u32;
        let fanout = in_range(self.fanout, 1, MAX_FANOUT, &n("fanout"))? as u32;
        let pack_order = PackOrder::parse(&self.pack_order, &n("pack_order"))?;
        if let Some(t) = &self.trace {
            if !t.is_file() {
                return Err(UsageError::new(
                    n("trace"),
                    format!(
                        "{} is not a readable file; give a file of ids or a Common Log Format \
                     access log",
                        crate::text::shown_path(t)
                    ),
                ));
            }
        }
        if self.trace.is_some() && !orders.contains(&Order::Trace) && pack_order != PackOrder::Trace
        {
            return Err(UsageError::new(
                n("trace"),
                format!(
                    "the trace would not be used; add trace to {} or use {} trace",
                    n("order"),
                    n("pack_order")
                ),
            ));
        }
        let dir = self.dir.clone().unwrap_or_else(default_dir);
        if dir.exists() && !dir.is_dir() {
            return Err(UsageError::new(
                n("dir"),
                format!(
                    "{} exists and is not a directory; give a new or empty directory",
                    crate::text::shown_path(&dir)
                ),
            ));
        }
        Ok(Params {
            dir,
            files,
            file_size_bytes,
            orders,
            trace: self.trace.clone(),
            reps,
            caches,
            pack_order,
            fanout,
            seed: self.seed,
        })
    }

    /// Reads the keys of a sweep experiment (`[[experiment]] kind = "locality"`): the struct's
    /// own serde form, so the keys are the flags with underscores. An unknown key or a wrong type
    /// is a usage error whose `key` is the key at fault.
    pub fn from_toml(table: &toml::Table) -> Result<LocalityParams, UsageError> {
        let known = crate::config::serde_fields::<LocalityParams>();
        for (key, value) in table {
            if !known.contains(&key.as_str()) {
                return Err(UsageError::new(
                    key.as_str(),
                    format!(
                        "unknown key in a locality experiment; use {}",
                        known.join(", ")
                    ),
                ));
            }
            // Each key alone (the rest default), so a type error is pinned on its key.
            let one = toml::Table::from_iter([(key.clone(), value.clone())]);
            LocalityParams::deserialize(one).map_err(|e| {
                UsageError::new(key.as_str(), format!("{}, got {value}", e.message()))
            })?;
        }
        LocalityParams::deserialize(table.clone())
            .map_err(|e| UsageError::plain(e.message().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_mirror_the_issue() {
        let p = LocalityParams::default().validate(Syntax::Cli).unwrap();
        assert_eq!(p.file_size_bytes, 14 * 1024);
        assert_eq!(p.orders, Order::ALL.to_vec());
        assert_eq!((p.reps, p.fanout), (5, 250));
        assert_eq!(p.caches, vec![CacheMode::Warm]);
    }

    #[test]
    fn errors_name_the_flag_or_the_key_as_written() {
        let raw = LocalityParams {
            file_size: "0".into(),
            ..LocalityParams::default()
        };
        assert!(raw
            .validate(Syntax::Cli)
            .unwrap_err()
            .to_string()
            .starts_with("--file-size"));
        assert!(raw
            .validate(Syntax::Toml)
            .unwrap_err()
            .to_string()
            .starts_with("file_size"));
        let raw = LocalityParams {
            order: "zigzag".into(),
            ..LocalityParams::default()
        };
        assert!(raw
            .validate(Syntax::Cli)
            .unwrap_err()
            .to_string()
            .contains("zigzag"));
    }

    #[test]
    fn toml_keys_accept_lists_and_reject_unknown_keys() {
        let t: toml::Table = toml::from_str(
            "files = 200\nfile_size = \"4K\"\norder = [\"random\", \"trace\"]\ncache = \"cold\"",
        )
        .unwrap();
        let p = LocalityParams::from_toml(&t)
            .unwrap()
            .validate(Syntax::Toml)
            .unwrap();
        assert_eq!(p.files, 200);
        assert_eq!(p.orders, vec![Order::Random, Order::Trace]);
        assert_eq!(p.caches, vec![CacheMode::Cold]);
        let t: toml::Table = toml::from_str("filez = 3").unwrap();
        let e = LocalityParams::from_toml(&t).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("filez"), "{e}");
        assert!(e.message.contains("unknown key"), "{e}");
        let t: toml::Table = toml::from_str("reps = \"many\"").unwrap();
        assert!(LocalityParams::from_toml(&t)
            .unwrap_err()
            .to_string()
            .starts_with("reps"));
    }

    #[test]
    fn every_toml_key_is_a_flag_and_type_errors_name_their_key() {
        use clap::Args as _;
        let cmd = LocalityParams::augment_args(clap::Command::new("locality"));
        let flags: Vec<String> = cmd
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect();
        let keys = crate::config::serde_fields::<LocalityParams>();
        assert!(keys.len() >= 10, "{keys:?}");
        for k in keys {
            assert!(flags.contains(&k.replace('_', "-")), "{k} has no flag");
        }
        let t: toml::Table = toml::from_str("files = 10\nfile_size = true").unwrap();
        let e = LocalityParams::from_toml(&t).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("file_size"), "{e}");
        assert!(e.message.contains("size such as"), "{e}");
        assert!(e.message.ends_with("got true"), "{e}");
        for (text, key, says) in [
            (
                "reps = \"x\"",
                "reps",
                "expected a non-negative integer, got \"x\"",
            ),
            (
                "seed = -1",
                "seed",
                "expected a non-negative integer, got -1",
            ),
            (
                "pack_order = 3",
                "pack_order",
                "expected \"id\" or \"trace\", got 3",
            ),
            (
                "order = 3",
                "order",
                "expected a name or a list of names, got 3",
            ),
        ] {
            let t: toml::Table = toml::from_str(text).unwrap();
            let e = LocalityParams::from_toml(&t).unwrap_err();
            assert_eq!(e.key.as_deref(), Some(key), "{e}");
            assert_eq!(e.message, says, "{e}");
        }
        let t: toml::Table =
            toml::from_str("order = \"random\"\ncache = [\"cold\", \"warm\"]").unwrap();
        let p = LocalityParams::from_toml(&t)
            .unwrap()
            .validate(Syntax::Toml)
            .unwrap();
        assert_eq!(p.orders, vec![Order::Random]);
        assert_eq!(p.caches, vec![CacheMode::Cold, CacheMode::Warm]);
    }
}
