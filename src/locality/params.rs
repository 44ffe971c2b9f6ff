//! Settings of the locality lab: command-line flags and sweep-file keys become one validated
//! [`Params`]. Both paths go through [`Raw`] and [`Raw::validate`], so `--file-size 0` and
//! `file_size = 0` are rejected by the same check, each named the way the user wrote it.

use crate::config::{CacheMode, UsageError};
use crate::size::parse_size;
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

/// Settings as written, before checking. Sizes and counts stay text so `10K` and `14K` work.
#[derive(Debug, Clone)]
pub struct Raw {
    pub dir: Option<PathBuf>,
    pub files: String,
    pub file_size: String,
    pub orders: Vec<String>,
    pub trace: Option<PathBuf>,
    pub reps: u64,
    pub caches: Vec<String>,
    pub pack_order: String,
    pub fanout: u64,
    pub seed: u64,
}

/// Default values, shared by the flags (see `LocalityArgs`) and the sweep keys.
pub const DEFAULT_FILES: &str = "10000";
pub const DEFAULT_FILE_SIZE: &str = "14K";
pub const DEFAULT_ORDERS: &str = "sequential,random,trace";
pub const DEFAULT_REPS: u64 = 5;
pub const DEFAULT_CACHE: &str = "warm";
pub const DEFAULT_FANOUT: u64 = 250;
pub const DEFAULT_SEED: u64 = 1;

impl Default for Raw {
    fn default() -> Self {
        Raw {
            dir: None,
            files: DEFAULT_FILES.into(),
            file_size: DEFAULT_FILE_SIZE.into(),
            orders: split_list(DEFAULT_ORDERS),
            trace: None,
            reps: DEFAULT_REPS,
            caches: vec![DEFAULT_CACHE.into()],
            pack_order: "id".into(),
            fanout: DEFAULT_FANOUT,
            seed: DEFAULT_SEED,
        }
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

impl Raw {
    /// Checks every setting; the first problem is returned as a one-line usage error.
    pub fn validate(&self, syntax: Syntax) -> Result<Params, UsageError> {
        let n = |k: &str| syntax.name(k);
        let files =
            parse_size(&self.files).map_err(|e| UsageError::new(n("files"), e.to_string()))?;
        let files = in_range(files, 1, MAX_FILES, &n("files"))? as u32;
        let file_size = parse_size(&self.file_size)
            .map_err(|e| UsageError::new(n("file_size"), e.to_string()))?;
        let file_size_bytes = in_range(file_size, 1, MAX_FILE_SIZE_BYTES, &n("file_size"))?;
        if self.orders.is_empty() {
            return Err(UsageError::new(
                n("order"),
                "give at least one of sequential, random, trace",
            ));
        }
        let mut orders = Vec::new();
        for o in &self.orders {
            let o = Order::parse(o, &n("order"))?;
            if !orders.contains(&o) {
                orders.push(o);
            }
        }
        if self.caches.is_empty() {
            return Err(UsageError::new(
                n("cache"),
                "give at least one of warm, cold, cold-all, as-is",
            ));
        }
        let mut caches = Vec::new();
        for c in &self.caches {
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
                        t.display()
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
                    dir.display()
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

    /// Reads the keys of a sweep experiment (`[[experiment]] kind = "locality"`); keys mirror the
    /// flags with underscores. Unknown keys and wrong types are usage errors naming the key.
    pub fn from_toml(table: &toml::Table) -> Result<Raw, UsageError> {
        let mut raw = Raw::default();
        for (key, value) in table {
            let text = |v: &toml::Value| -> Result<String, UsageError> {
                match v {
                    toml::Value::String(s) => Ok(s.clone()),
                    toml::Value::Integer(i) if *i >= 0 => Ok(i.to_string()),
                    _ => Err(UsageError::new(
                        key,
                        format!("expected a number or a size such as \"14K\", got {v}"),
                    )),
                }
            };
            let list = |v: &toml::Value| -> Result<Vec<String>, UsageError> {
                match v {
                    toml::Value::String(s) => Ok(split_list(s)),
                    toml::Value::Array(items) => items
                        .iter()
                        .map(|i| match i {
                            toml::Value::String(s) => Ok(s.clone()),
                            _ => Err(UsageError::new(
                                key,
                                format!("expected a list of names, found {i}"),
                            )),
                        })
                        .collect(),
                    _ => Err(UsageError::new(
                        key,
                        format!("expected a name or a list of names, got {v}"),
                    )),
                }
            };
            let int = |v: &toml::Value| -> Result<u64, UsageError> {
                match v {
                    toml::Value::Integer(i) if *i >= 0 => Ok(*i as u64),
                    _ => Err(UsageError::new(
                        key,
                        format!("expected a non-negative integer, got {v}"),
                    )),
                }
            };
            let path = |v: &toml::Value| -> Result<PathBuf, UsageError> {
                match v {
                    toml::Value::String(s) if !s.is_empty() => Ok(PathBuf::from(s)),
                    _ => Err(UsageError::new(key, format!("expected a path, got {v}"))),
                }
            };
            match key.as_str() {
                "dir" => raw.dir = Some(path(value)?),
                "files" => raw.files = text(value)?,
                "file_size" => raw.file_size = text(value)?,
                "order" => raw.orders = list(value)?,
                "trace" => raw.trace = Some(path(value)?),
                "reps" => raw.reps = int(value)?,
                "cache" => raw.caches = list(value)?,
                "pack_order" => {
                    raw.pack_order = match value {
                        toml::Value::String(s) => s.clone(),
                        _ => return Err(UsageError::new(key, "expected \"id\" or \"trace\"")),
                    }
                }
                "fanout" => raw.fanout = int(value)?,
                "seed" => raw.seed = int(value)?,
                _ => {
                    return Err(UsageError::new(
                        key.as_str(),
                        "unknown key in a locality experiment; use dir, files, file_size, \
                         order, trace, reps, cache, pack_order, fanout or seed",
                    ))
                }
            }
        }
        Ok(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_mirror_the_issue() {
        let p = Raw::default().validate(Syntax::Cli).unwrap();
        assert_eq!(p.file_size_bytes, 14 * 1024);
        assert_eq!(p.orders, Order::ALL.to_vec());
        assert_eq!((p.reps, p.fanout), (5, 250));
        assert_eq!(p.caches, vec![CacheMode::Warm]);
    }

    #[test]
    fn errors_name_the_flag_or_the_key_as_written() {
        let raw = Raw {
            file_size: "0".into(),
            ..Raw::default()
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
        let raw = Raw {
            orders: vec!["zigzag".into()],
            ..Raw::default()
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
        let p = Raw::from_toml(&t).unwrap().validate(Syntax::Toml).unwrap();
        assert_eq!(p.files, 200);
        assert_eq!(p.orders, vec![Order::Random, Order::Trace]);
        assert_eq!(p.caches, vec![CacheMode::Cold]);
        let t: toml::Table = toml::from_str("filez = 3").unwrap();
        let e = Raw::from_toml(&t).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("filez"), "{e}");
        assert!(e.message.contains("unknown key"), "{e}");
        let t: toml::Table = toml::from_str("reps = \"many\"").unwrap();
        assert!(Raw::from_toml(&t)
            .unwrap_err()
            .to_string()
            .starts_with("reps"));
    }
}
