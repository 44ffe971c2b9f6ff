//! Comparing two chosen points of different setups: "which of these two settings is faster?"
//!
//! `compare` normally pairs each point of OLD with the point of NEW of the same setup. Two other
//! pairings answer the A-vs-B question with the same statistics:
//! * **Two single-point results** (each input holds one point): compared whatever their setups
//!   differ in, the differing settings named ([`differences`]).
//! * **A named pairing**, `--pair A B`, where A and B are selectors `KEY=VALUE[,KEY=VALUE…]`
//!   naming the same settings (`--pair block_size=4K block_size=64K`): every point of OLD that A
//!   selects is paired with the point of NEW that B selects and that agrees with it on every
//!   other setting. From one input both sides come from it (a sweep's 4K against its 64K, per
//!   method and cache); from two, A from OLD and B from NEW. Like benchstat's `-col`, the named
//!   settings are what varies; everything else must match.
//!
//! The settings are the result rows' column names (`block_size_bytes`, `queue_depth`, …), with
//! the short names users type (`block_size`, `bs`, `qd`, `op`). The key list lives in
//! [`Key`] alone, so a setting added to the setup is one arm here.

use super::load::{Point, Record};
use std::collections::HashMap;

/// A setting a pairing can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Experiment,
    Operation,
    Method,
    BlockSize,
    Pattern,
    Cache,
    Threads,
    QueueDepth,
    Direct,
}

impl Key {
    pub const ALL: [Key; 9] = [
        Key::Experiment,
        Key::Operation,
        Key::Method,
        Key::BlockSize,
        Key::Pattern,
        Key::Cache,
        Key::Threads,
        Key::QueueDepth,
        Key::Direct,
    ];

    /// The name shown (the short one a user types).
    pub fn name(self) -> &'static str {
        match self {
            Key::Experiment => "experiment",
            Key::Operation => "operation",
            Key::Method => "method",
            Key::BlockSize => "block_size",
            Key::Pattern => "pattern",
            Key::Cache => "cache",
            Key::Threads => "threads",
            Key::QueueDepth => "queue_depth",
            Key::Direct => "direct",
        }
    }

    /// The key a user typed: the short name, the CSV column, or a common abbreviation.
    pub fn parse(text: &str) -> Option<Key> {
        let t = text.trim().to_ascii_lowercase().replace('-', "_");
        Some(match t.as_str() {
            "experiment" | "exp" => Key::Experiment,
            "operation" | "op" => Key::Operation,
            "method" => Key::Method,
            "block_size" | "block_size_bytes" | "bs" => Key::BlockSize,
            "pattern" => Key::Pattern,
            "cache" => Key::Cache,
            "threads" | "thread" => Key::Threads,
            "queue_depth" | "qd" | "iodepth" => Key::QueueDepth,
            "direct" | "o_direct" => Key::Direct,
            _ => return None,
        })
    }

    /// The setting's value in `s`, as shown (`64K`, `warm`, `true`).
    pub fn value(self, s: &Point) -> String {
        match self {
            Key::Experiment => s.experiment.clone(),
            Key::Operation => s.setup.op.as_str().to_string(),
            Key::Method => s.setup.method.as_str().to_string(),
            Key::BlockSize => crate::size::format_size(s.setup.block_size_bytes),
            Key::Pattern => s.setup.pattern.as_str().to_string(),
            Key::Cache => s.setup.cache.as_str().to_string(),
            Key::Threads => s.setup.threads.to_string(),
            Key::QueueDepth => s.setup.queue_depth.to_string(),
            Key::Direct => s.setup.direct.to_string(),
        }
    }
}

/// A setting in which two setups differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub key: &'static str,
    pub old: String,
    pub new: String,
}

/// The settings `new` differs from `old` in, in [`Key::ALL`]'s order.
pub fn differences(old: &Point, new: &Point) -> Vec<Difference> {
    Key::ALL
        .iter()
        .filter_map(|k| {
            let (o, n) = (k.value(old), k.value(new));
            (o != n).then(|| Difference {
                key: k.name(),
                old: o,
                new: n,
            })
        })
        .collect()
}

/// `block_size 4K → 64K, cache warm → cold`.
pub fn differences_text(d: &[Difference]) -> String {
    d.iter()
        .map(|d| format!("{} {} → {}", d.key, d.old, d.new))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One side of `--pair`: settings and the values they must have.
#[derive(Debug, Clone, PartialEq)]
pub struct Selector {
    /// What the user typed (shown in messages and the heading).
    pub text: String,
    terms: Vec<(Key, Value)>,
}

/// A value to match: sizes and numbers by value (`4K` is `4096`), labels by text, any case.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Bytes(u64),
    Count(u64),
    Flag(bool),
    Text(String),
}

/// Why a `--pair` cannot be used; each message names the flag and the fix.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PairError {
    #[error("--pair: '{0}' is not KEY=VALUE; e.g. --pair block_size=4K block_size=64K")]
    NotKeyValue(String),
    #[error("--pair: unknown setting '{key}' in '{text}'; use one of {}", Key::ALL.map(Key::name).join(", "))]
    UnknownKey { key: String, text: String },
    #[error("--pair: {key}={value}: {why}")]
    BadValue {
        key: &'static str,
        value: String,
        why: String,
    },
    #[error("--pair: '{0}' names {1} twice; name each setting once")]
    Twice(String, &'static str),
    #[error("--pair: A names {a} but B names {b}; name the same settings on both sides, e.g. --pair {example}")]
    DifferentKeys {
        a: String,
        b: String,
        example: String,
    },
    #[error("--pair: A and B select the same points ('{0}'); give B another value")]
    Same(String),
    #[error("--pair: no point of {side} has {selector}; its points have {key} {present}")]
    NoneSelected {
        side: &'static str,
        selector: String,
        key: &'static str,
        present: String,
    },
    #[error("--pair: no point with {a} has a partner with {b} that agrees on every other setting; {hint}")]
    NoPartner { a: String, b: String, hint: String },
}

impl Selector {
    /// Parses `block_size=4K,cache=warm`.
    pub fn parse(text: &str) -> Result<Selector, PairError> {
        let shown = crate::text::shown(text).into_owned();
        let mut terms: Vec<(Key, Value)> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((k, v)) = part.split_once('=') else {
                return Err(PairError::NotKeyValue(shown));
            };
            let key = Key::parse(k).ok_or_else(|| PairError::UnknownKey {
                key: crate::text::shown(k.trim()).into_owned(),
                text: shown.clone(),
            })?;
            if terms.iter().any(|(t, _)| *t == key) {
                return Err(PairError::Twice(shown, key.name()));
            }
            let v = v.trim();
            let bad = |why: String| PairError::BadValue {
                key: key.name(),
                value: crate::text::shown(v).into_owned(),
                why,
            };
            let value = match key {
                Key::BlockSize => Value::Bytes(crate::size::parse_size(v).map_err(bad)?),
                Key::Threads | Key::QueueDepth => Value::Count(
                    v.parse()
                        .map_err(|_| bad("not a whole number; e.g. 1, 4, 32".into()))?,
                ),
                Key::Direct => Value::Flag(match v.to_ascii_lowercase().as_str() {
                    "true" | "yes" | "1" | "on" => true,
                    "false" | "no" | "0" | "off" => false,
                    _ => return Err(bad("not true or false".into())),
                }),
                _ if v.is_empty() => return Err(bad("empty; name a value".into())),
                _ => Value::Text(v.to_string()),
            };
            terms.push((key, value));
        }
        if terms.is_empty() {
            return Err(PairError::NotKeyValue(shown));
        }
        Ok(Selector { text: shown, terms })
    }

    /// The settings it names, sorted.
    fn keys(&self) -> Vec<Key> {
        let mut k: Vec<Key> = self.terms.iter().map(|(k, _)| *k).collect();
        k.sort();
        k
    }

    /// Whether `s` has every value the selector names.
    pub fn selects(&self, s: &Point) -> bool {
        self.terms.iter().all(|(k, v)| match v {
            Value::Bytes(b) => s.setup.block_size_bytes == *b,
            Value::Count(n) => match k {
                Key::Threads => s.setup.threads as u64 == *n,
                _ => u64::from(s.setup.queue_depth) == *n,
            },
            Value::Flag(f) => s.setup.direct == *f,
            Value::Text(t) => k.value(s).eq_ignore_ascii_case(t),
        })
    }
}

/// Every other setting of `s` than `named`: the key two points of a pair agree on.
fn rest(s: &Point, named: &[Key]) -> Vec<String> {
    Key::ALL
        .iter()
        .filter(|k| !named.contains(k))
        .map(|k| k.value(s))
        .collect()
}

/// The values `records` have for `key`, each once, first seen first: `4K, 64K, 1M`.
fn present(records: &[Record], key: Key) -> String {
    let mut seen: Vec<String> = Vec::new();
    for r in records {
        let v = key.value(&r.point);
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    crate::text::shown(&seen.join(", ")).into_owned()
}

/// The pairs `--pair A B` makes: each point of `old` that `a` selects with the point of `new`
/// that `b` selects and that agrees with it on every setting neither names, in OLD's order;
/// then the selected points left without a partner on each side.
pub struct Pairing<'r> {
    pub pairs: Vec<(&'r Record, &'r Record)>,
    pub only_old: Vec<Point>,
    pub only_new: Vec<Point>,
    /// `A = block_size=4K (OLD), B = block_size=64K (NEW): Δ is B against A`.
    pub heading: String,
}

/// Pairs the points of `old` selected by `a` with those of `new` selected by `b`.
pub fn by_selectors<'r>(
    old: &'r [Record],
    new: &'r [Record],
    a: &Selector,
    b: &Selector,
    one_input: bool,
) -> Result<Pairing<'r>, PairError> {
    let keys = a.keys();
    if keys != b.keys() {
        let names = |s: &Selector| s.keys().iter().map(|k| k.name()).collect::<Vec<_>>();
        let mut all: Vec<&str> = names(a);
        for k in names(b) {
            if !all.contains(&k) {
                all.push(k);
            }
        }
        let example = all
            .iter()
            .map(|k| format!("{k}=…"))
            .collect::<Vec<_>>()
            .join(",");
        return Err(PairError::DifferentKeys {
            a: names(a).join(", "),
            b: names(b).join(", "),
            example: format!("{example} {example}"),
        });
    }
    if one_input && a.terms == b.terms {
        return Err(PairError::Same(a.text.clone()));
    }
    let chosen = |records: &'r [Record], sel: &Selector, side: &'static str| {
        let v: Vec<&'r Record> = records.iter().filter(|r| sel.selects(&r.point)).collect();
        if v.is_empty() {
            // The first setting no point has the asked value of, with the values there are.
            let key = sel
                .terms
                .iter()
                .map(|(k, _)| *k)
                .find(|k| {
                    let one = Selector {
                        text: String::new(),
                        terms: sel.terms.iter().filter(|(t, _)| t == k).cloned().collect(),
                    };
                    !records.iter().any(|r| one.selects(&r.point))
                })
                .unwrap_or(sel.terms[0].0);
            return Err(PairError::NoneSelected {
                side,
                selector: sel.text.clone(),
                key: key.name(),
                present: present(records, key),
            });
        }
        Ok(v)
    };
    let (old_side, new_side) = if one_input {
        ("the input", "the input")
    } else {
        ("OLD", "NEW")
    };
    let a_points = chosen(old, a, old_side)?;
    let b_points = chosen(new, b, new_side)?;
    let mut by_rest: HashMap<Vec<String>, &'r Record> = HashMap::new();
    for r in &b_points {
        by_rest.entry(rest(&r.point, &keys)).or_insert(r);
    }
    let mut pairs = Vec::new();
    let mut only_old = Vec::new();
    let mut used = std::collections::HashSet::new();
    for r in &a_points {
        match by_rest.get(&rest(&r.point, &keys)) {
            Some(n) => {
                used.insert(rest(&n.point, &keys));
                pairs.push((*r, *n));
            }
            None => only_old.push(r.point.clone()),
        }
    }
    let only_new = b_points
        .iter()
        .filter(|r| !used.contains(&rest(&r.point, &keys)))
        .map(|r| r.point.clone())
        .collect();
    if pairs.is_empty() {
        let named: Vec<&str> = keys.iter().map(|k| k.name()).collect();
        return Err(PairError::NoPartner {
            a: a.text.clone(),
            b: b.text.clone(),
            hint: format!(
                "A's first point is {}, B's is {}; name every setting they differ in besides {}",
                crate::text::shown(&a_points[0].point.label()),
                crate::text::shown(&b_points[0].point.label()),
                named.join(", ")
            ),
        });
    }
    let mut heading = if one_input {
        format!(
            "A = {}, B = {}: Δ is B against A (OLD columns are A, NEW columns B; faster means B is faster)",
            a.text, b.text
        )
    } else {
        format!(
            "A = {} of OLD, B = {} of NEW: Δ is B against A (faster means B is faster)",
            a.text, b.text
        )
    };
    if keys.contains(&Key::BlockSize) {
        heading += P99_NOTE;
    }
    Ok(Pairing {
        pairs,
        only_old,
        only_new,
        heading,
    })
}

/// Two single-point results of different setups: the heading naming what differs.
pub fn single_points_heading(old: &Point, new: &Point) -> String {
    format!(
        "OLD and NEW are single points of different setups, compared as A vs B: {}{}",
        crate::text::shown(&differences_text(&differences(old, new))),
        if old.setup.block_size_bytes != new.setup.block_size_bytes {
            P99_NOTE
        } else {
            ""
        }
    )
}

/// Said when the block sizes differ: a p99 compares single operations, here of different sizes.
const P99_NOTE: &str = " (p99 is per operation: here of different sizes)";

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(bs: u64, cache: crate::config::CacheMode) -> Record {
        let mut r = Record::sample(bs, vec![100.0, 101.0, 99.0, 100.5], 1.0);
        r.point.setup.cache = cache.into();
        r
    }

    #[test]
    fn a_selector_reads_sizes_numbers_flags_and_labels_and_refuses_what_it_cannot() {
        let s = Selector::parse("bs=4K, cache=WARM,qd=1,direct=false").unwrap();
        let r = Record::sample(4096, vec![1.0], 1.0);
        assert!(s.selects(&r.point));
        assert!(!Selector::parse("block_size_bytes=65536")
            .unwrap()
            .selects(&r.point));
        for (bad, want) in [
            ("block_size", "not KEY=VALUE"),
            ("blocksize=4K", "unknown setting 'blocksize'"),
            ("bs=4Q", "block_size=4Q"),
            ("qd=x", "not a whole number"),
            ("bs=4K,bs=8K", "names block_size twice"),
            ("", "not KEY=VALUE"),
        ] {
            let e = Selector::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("--pair: ") && e.contains(want), "{bad}: {e}");
        }
    }

    #[test]
    fn a_sweep_pairs_each_4k_point_with_the_64k_point_of_the_same_other_settings() {
        use crate::config::CacheMode::{Cold, Warm};
        let mut t4 = rec(8192, Warm);
        t4.point.setup.threads = 4;
        let sweep = [
            rec(4096, Warm),
            rec(4096, Cold),
            rec(65536, Warm),
            rec(65536, Cold),
            rec(1 << 20, Warm),
            t4,
        ];
        let (a, b) = (
            Selector::parse("block_size=4K").unwrap(),
            Selector::parse("block_size=64K").unwrap(),
        );
        let p = by_selectors(&sweep, &sweep, &a, &b, true).unwrap();
        assert_eq!(p.pairs.len(), 2);
        for (x, y) in &p.pairs {
            assert_eq!(x.point.setup.cache, y.point.setup.cache);
            assert_eq!(
                (
                    x.point.setup.block_size_bytes,
                    y.point.setup.block_size_bytes
                ),
                (4096, 65536)
            );
            let d = differences(&x.point, &y.point);
            assert_eq!(differences_text(&d), "block_size 4K → 64K");
        }
        assert!(p.only_old.is_empty() && p.only_new.is_empty());
        // Cold against warm at every block size: 1M and 8K have no cold point, so they are left over.
        let p = by_selectors(
            &sweep,
            &sweep,
            &Selector::parse("cache=warm").unwrap(),
            &Selector::parse("cache=cold").unwrap(),
            true,
        )
        .unwrap();
        assert_eq!((p.pairs.len(), p.only_old.len()), (2, 2));
        // Misuse: different settings named, the same selection, a value no point has.
        let e = |a: &str, b: &str| {
            by_selectors(
                &sweep,
                &sweep,
                &Selector::parse(a).unwrap(),
                &Selector::parse(b).unwrap(),
                true,
            )
            .err()
            .unwrap()
            .to_string()
        };
        assert!(e("bs=4K,cache=warm", "bs=64K").contains("name the same settings"));
        assert!(e("bs=4K", "block_size=4096").contains("select the same points"));
        let none = e("bs=16K", "bs=64K");
        assert!(
            none.contains("no point of the input has bs=16K") && none.contains("4K, 64K, 1M, 8K")
        );
        // 8K was measured with 4 threads only, 4K with 1: nothing agrees on the rest.
        assert!(e("bs=8K", "bs=4K").contains("no point with bs=8K has a partner"));
    }
}
