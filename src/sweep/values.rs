//! Converts raw axis values (one TOML value or a list) into typed lists, with errors that name the
//! key, its line and what to write instead. Block sizes may be doubling ranges: `"1..128M"` is
//! 1, 2, 4, ... 128M.

use super::schema::{OneOrMany, Source};
use crate::config::{check_block_size, UsageError};
use crate::size::parse_size;
use toml::{Spanned, Value};

/// Everything a conversion needs to report an error.
pub struct Ctx<'a> {
    pub src: &'a Source,
    pub key: &'static str,
    pub axis: &'a Spanned<OneOrMany>,
}

impl Ctx<'_> {
    fn err(&self, msg: impl AsRef<str>) -> anyhow::Error {
        self.src.key_error(self.axis.span(), self.key, msg.as_ref())
    }

    fn values(&self) -> anyhow::Result<Vec<Value>> {
        let v = self.axis.get_ref().values();
        if v.is_empty() {
            return Err(self.err("the list is empty; give at least one value"));
        }
        Ok(v)
    }

    /// Sizes: integers, `"4K"`, `"1MiB"`, and (when `ranges`) `"1..128M"` doubling ranges.
    pub fn sizes(&self, ranges: bool) -> anyhow::Result<Vec<u64>> {
        let mut out = Vec::new();
        for v in self.values()? {
            match &v {
                Value::Integer(n) if *n >= 1 => out.push(*n as u64),
                Value::Integer(n) => {
                    return Err(self.err(format!("{n} is not a size; use at least 1")))
                }
                Value::String(s) if ranges && s.contains("..") => out.extend(self.range(s)?),
                Value::String(s) => out.push(parse_size(s).map_err(|e| self.err(e))?),
                other => {
                    return Err(self.err(format!(
                        "{} is not a size; write a number of bytes or a string such as \"4K\"{}",
                        other.type_str(),
                        if ranges {
                            ", \"1M\" or a doubling range \"1..128M\""
                        } else {
                            " or \"1M\""
                        }
                    )))
                }
            }
        }
        Ok(out)
    }

    /// `"LOW..HIGH"`: LOW, 2 LOW, 4 LOW, ... up to HIGH.
    fn range(&self, text: &str) -> anyhow::Result<Vec<u64>> {
        let (lo, hi) = text.split_once("..").unwrap_or((text, ""));
        let lo = parse_size(lo).map_err(|e| self.err(format!("range start: {e}")))?;
        let hi = parse_size(hi).map_err(|e| self.err(format!("range end: {e}")))?;
        if lo == 0 || lo > hi {
            return Err(self.err(format!(
                "range \"{text}\" must go up from at least 1, e.g. \"1..128M\""
            )));
        }
        check_block_size(hi, self.key).map_err(|e| self.err(strip_key(&e)))?;
        let mut v = Vec::new();
        let mut x = lo;
        while x <= hi {
            v.push(x);
            x *= 2;
        }
        Ok(v)
    }

    /// Whole numbers of at least 1.
    pub fn counts(&self) -> anyhow::Result<Vec<u64>> {
        let mut out = Vec::new();
        for v in self.values()? {
            match v {
                Value::Integer(n) if n >= 1 => out.push(n as u64),
                Value::Integer(n) => return Err(self.err(format!("must be at least 1, got {n}"))),
                other => {
                    return Err(self.err(format!(
                        "{} is not a whole number; write a number such as 4 or a list such as [1, 2, 4]",
                        other.type_str()
                    )))
                }
            }
        }
        Ok(out)
    }

    /// true / false.
    pub fn bools(&self) -> anyhow::Result<Vec<bool>> {
        self.values()?
            .into_iter()
            .map(|v| match v {
                Value::Boolean(b) => Ok(b),
                other => Err(self.err(format!(
                    "{} is not true or false; write true, false or [false, true]",
                    other.type_str()
                ))),
            })
            .collect()
    }

    /// The `rate` axis: `0` (closed loop), operations per second (`2000`, `2000.5`, `"2000
    /// IOPS"`) or a throughput (`"50 MiB/s"`, resolved per point by [`Rate::iops`], since it
    /// depends on the block size). A text is read here, so a misspelt unit fails the plan.
    pub fn rates(&self) -> anyhow::Result<Vec<Rate>> {
        self.values()?
            .into_iter()
            .map(|v| match v {
                Value::Integer(0) => Ok(Rate::Closed),
                Value::Integer(n) if n > 0 => self.iops(n as f64),
                Value::Float(0.0) => Ok(Rate::Closed),
                Value::Float(f) if f > 0.0 => self.iops(f),
                Value::Integer(_) | Value::Float(_) => Err(self.err(format!(
                    "{} is not a rate; write operations per second above 0 such as 2000, or 0 \
                     for the closed loop",
                    v
                ))),
                Value::String(s) if s.trim() == "0" => Ok(Rate::Closed),
                Value::String(s) => {
                    // The syntax is checked once here (at the largest block size, so any
                    // throughput is a positive rate); the range per point, at its block size.
                    crate::measure::pacer::parse_rate(&s, crate::config::MAX_BLOCK_SIZE, self.key)
                        .map_err(|e| self.err(strip_flag(&e, self.key)))?;
                    Ok(Rate::Text(s))
                }
                other => Err(self.err(format!(
                    "{} is not a rate; write operations per second such as 2000 (0: closed \
                     loop) or a string such as \"50 MiB/s\"",
                    other.type_str()
                ))),
            })
            .collect()
    }

    fn iops(&self, n: f64) -> anyhow::Result<Rate> {
        crate::measure::pacer::parse_rate(&n.to_string(), 1, self.key)
            .map(Rate::Iops)
            .map_err(|e| self.err(strip_flag(&e, self.key)))
    }

    /// Names parsed by one of `config`'s enums (its message lists the valid names).
    pub fn names<T>(
        &self,
        parse: impl Fn(&str, &str) -> Result<T, UsageError>,
    ) -> anyhow::Result<Vec<T>> {
        self.values()?
            .into_iter()
            .map(|v| match v {
                Value::String(s) => parse(&s, self.key).map_err(|e| self.err(strip_key(&e))),
                other => Err(self.err(format!(
                    "{} is not a name; write a string in quotes or a list of them",
                    other.type_str()
                ))),
            })
            .collect()
    }
}

/// One value of the `rate` axis (see [`Ctx::rates`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Rate {
    /// `0`: the closed loop, as fast as it goes.
    Closed,
    /// Operations per second over all threads.
    Iops(f64),
    /// A rate as written (`"50 MiB/s"`), read at each point's block size.
    Text(String),
}

impl Rate {
    /// The point's `RunSpec::rate_iops` at block size `block_size_bytes` (None: closed loop),
    /// or the problem, without the key.
    pub fn iops(&self, block_size_bytes: u64, key: &str) -> Result<Option<f64>, String> {
        match self {
            Rate::Closed => Ok(None),
            Rate::Iops(n) => Ok(Some(*n)),
            Rate::Text(t) => crate::measure::pacer::parse_rate(t, block_size_bytes, key)
                .map(Some)
                .map_err(|e| {
                    format!(
                        "{} at block size {}",
                        strip_flag(&e, key),
                        crate::size::format_size(block_size_bytes)
                    )
                }),
        }
    }
}

/// `pacer::parse_rate`'s message without its leading `KEY: ` (the located error names it).
fn strip_flag(message: &str, key: &str) -> String {
    message
        .strip_prefix(&format!("{key}: "))
        .unwrap_or(message)
        .to_string()
}

/// The problem without the key (the located error names the key itself).
pub fn strip_key(e: &UsageError) -> String {
    e.message.clone()
}

/// A single size given as an integer or a string (`create`, `bytes`).
pub fn one_size(src: &Source, v: &Spanned<Value>, key: &str) -> anyhow::Result<u64> {
    let n = match v.get_ref() {
        Value::Integer(n) if *n >= 1 => *n as u64,
        Value::String(s) => parse_size(s).map_err(|e| src.key_error(v.span(), key, &e))?,
        _ => {
            return Err(src.key_error(
                v.span(),
                key,
                "not a size; write a number of bytes or a string such as \"1G\"",
            ))
        }
    };
    if n == 0 {
        return Err(src.key_error(v.span(), key, "must be at least 1 byte"));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(text: &str) -> Result<Vec<u64>, String> {
        let src = Source {
            display: "t.toml".into(),
            text: format!("x = {text}\n"),
        };
        #[derive(serde::Deserialize)]
        struct D {
            x: Spanned<OneOrMany>,
        }
        let d: D = toml::from_str(&src.text).unwrap();
        let ctx = Ctx {
            src: &src,
            key: "block_size",
            axis: &d.x,
        };
        ctx.sizes(true).map_err(|e| e.to_string())
    }

    #[test]
    fn doubling_ranges_and_suffixes_expand_to_block_sizes() {
        assert_eq!(sizes("\"1..8\"").unwrap(), vec![1, 2, 4, 8]);
        assert_eq!(sizes("\"4K..16K\"").unwrap(), vec![4096, 8192, 16384]);
        assert_eq!(
            sizes("[\"4K\", 512, \"1MiB\"]").unwrap(),
            vec![4096, 512, 1 << 20]
        );
        assert_eq!(sizes("\"1..128M\"").unwrap().len(), 28);
    }

    #[test]
    fn bad_sizes_name_the_key_and_line() {
        let e = sizes("\"8..1\"").unwrap_err();
        assert!(e.starts_with("t.toml:1: key `block_size`: range"), "{e}");
        assert!(sizes("\"4X\"").unwrap_err().contains("unknown suffix"));
        assert!(sizes("\"1..2G\"").unwrap_err().contains("1G maximum"));
        assert!(sizes("true").unwrap_err().contains("not a size"));
        assert!(sizes("[]").unwrap_err().contains("empty"));
    }
}
