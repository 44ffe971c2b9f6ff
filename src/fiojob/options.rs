//! fio's option names and values: which options diskscope reads (and which it refuses
//! whatever their value), the aliases fio accepts for them, the lookup of a job's options (the
//! last one written wins), and sizes and times as fio reads them.

use super::error::FioError;
use super::parse::{Job, Opt};
use std::time::Duration;

/// An option as a plan's note names it: `key=value (file:line)`, escaped.
pub fn from(o: &Opt) -> String {
    format!(
        "{}={} ({})",
        crate::text::shown(&o.key),
        crate::text::shown(&o.value),
        o.loc
    )
}

/// Every option diskscope reads, by its fio name (aliases resolved by [`canonical`]).
pub const KNOWN: &[&str] = &[
    "rw",
    "bs",
    "size",
    "filesize",
    "filename",
    "directory",
    "ioengine",
    "iodepth",
    "numjobs",
    "direct",
    "buffered",
    "runtime",
    "time_based",
    "ramp_time",
    "loops",
    "fsync",
    "fdatasync",
    "end_fsync",
    "sync",
    "invalidate",
    "stonewall",
    "new_group",
    "wait_for",
    "group_reporting",
    "rwmixread",
    "rate_iops",
    "rate_process",
    "rwmixwrite",
    "iomem",
    "kb_base",
    "name",
    "description",
    "thread",
    "fixedbufs",
    "iodepth_batch_submit",
    "iodepth_batch_complete_min",
    "norandommap",
    "randrepeat",
    "randseed",
    "number_ios",
    "offset",
    "offset_increment",
    "fallocate",
    "nrfiles",
];

/// Options refused whatever their value, with the reason and the fix.
pub const REFUSED: &[(&str, &str)] = &[
    ("rate", "a byte rate is not read by diskscope; give the same rate as operations per second with rate_iops (rate / bs)"),
    ("rate_min", "a minimum rate (fio stops a job below it) is not implemented in diskscope; remove it (the timeline flags a level shift instead)"),
    ("rate_iops_min", "a minimum rate (fio stops a job below it) is not implemented in diskscope; remove it (the timeline flags a level shift instead)"),
    ("rate_cycle", "rate_cycle (the window of rate_min) is not implemented in diskscope; remove it"),
];

/// fio's name of an option written under another of its names.
pub fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "timeout" => "runtime",
        "wait_on_last" => "stonewall",
        "mem" => "iomem",
        "iodepth_batch" => "iodepth_batch_submit",
        "iodepth_batch_complete" => "iodepth_batch_complete_min",
        "rate_iops" | "rateiops" => "rate_iops",
        "ratemin" => "rate_min",
        k => k,
    }
}

/// A job's options, looked up by their fio names: the last one written wins.
pub struct Opts<'a> {
    pub job: &'a Job,
    /// `kb_base`: 1024 (fio's default) or 1000.
    pub kb_base: u64,
}

impl<'a> Opts<'a> {
    pub fn get(&self, key: &str) -> Option<&'a Opt> {
        self.job
            .opts
            .iter()
            .rev()
            .find(|o| canonical(&o.key) == key)
    }

    pub fn bool(&self, key: &str) -> Result<Option<(bool, &'a Opt)>, FioError> {
        let Some(o) = self.get(key) else {
            return Ok(None);
        };
        let v = match o.value.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => true,
            "0" | "false" | "no" | "off" => false,
            _ => return Err(FioError::bad_value(&o.loc, &o.key, "write 1 or 0")),
        };
        Ok(Some((v, o)))
    }

    pub fn int(&self, key: &str) -> Result<Option<(u64, &'a Opt)>, FioError> {
        let Some(o) = self.get(key) else {
            return Ok(None);
        };
        let v = o.value.trim().parse::<u64>().map_err(|_| {
            FioError::bad_value(
                &o.loc,
                &o.key,
                &format!("'{}' is not a whole number", crate::text::shown(&o.value)),
            )
        })?;
        Ok(Some((v, o)))
    }

    pub fn size(&self, key: &str) -> Result<Option<(u64, &'a Opt)>, FioError> {
        let Some(o) = self.get(key) else {
            return Ok(None);
        };
        let v = fio_size(&o.value, self.kb_base)
            .map_err(|m| FioError::bad_value(&o.loc, &o.key, &m))?;
        Ok(Some((v, o)))
    }
}

/// A size as fio reads it: `k`, `m`, `g`, `t`, `p` (optionally with `b`) are powers of
/// `kb_base` (1024 by default, so `4k` is 4096); `kib`, `mib`, ... are the other base (fio's
/// own rule: with the default kb_base=1024 they mean 1000). Percentages and ranges are refused.
pub fn fio_size(text: &str, kb_base: u64) -> Result<u64, String> {
    let t = text.trim();
    let shown = crate::text::shown(t);
    if t.contains('%') {
        return Err(format!(
            "'{shown}': sizes in percent are not implemented in diskscope; write bytes such as 1g"
        ));
    }
    if t.contains([',', ':']) || t.get(1..).is_some_and(|r| r.contains('-')) {
        return Err(format!(
            "'{shown}': ranges and per-direction values are not implemented in diskscope (one size per job); write one value such as 4k"
        ));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{shown}' is not a size; write bytes or 4k, 1m, 1g"
        ));
    }
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{shown}' is too large to be a size"))?;
    let s = suffix.to_ascii_lowercase();
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (base, pow) = match s.as_str() {
        "" | "b" => (kb_base, 0),
        "kib" => (other, 1),
        "mib" => (other, 2),
        "gib" => (other, 3),
        "tib" => (other, 4),
        "pib" => (other, 5),
        "k" | "kb" => (kb_base, 1),
        "m" | "mb" => (kb_base, 2),
        "g" | "gb" => (kb_base, 3),
        "t" | "tb" => (kb_base, 4),
        "p" | "pb" => (kb_base, 5),
        _ => {
            return Err(format!(
            "'{shown}' has an unknown suffix; use k, m, g, t (powers of kb_base, 1024 by default)"
        ))
        }
    };
    (0..pow)
        .try_fold(n, |acc, _| acc.checked_mul(base))
        .ok_or_else(|| format!("'{shown}' is too large to be a size"))
}

/// A time as fio reads it: a number with `us`, `ms`, `s`, `m`, `h` or `d`; seconds without one.
pub fn fio_time(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let shown = crate::text::shown(t);
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{shown}' is not a time; write seconds or 500ms, 2m, 1h"))?;
    let us_per = match suffix.to_ascii_lowercase().as_str() {
        "us" | "usec" => 1,
        "ms" | "msec" => 1_000,
        "" | "s" | "sec" => 1_000_000,
        "m" | "min" => 60_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        _ => {
            return Err(format!(
                "'{shown}' has an unknown unit; use us, ms, s, m, h or d"
            ))
        }
    };
    n.checked_mul(us_per)
        .map(Duration::from_micros)
        .ok_or_else(|| format!("'{shown}' is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio_and_kb_base() {
        assert_eq!(fio_size("4k", 1024), Ok(4096));
        assert_eq!(fio_size("4K", 1024), Ok(4096));
        assert_eq!(fio_size("1m", 1024), Ok(1 << 20));
        assert_eq!(fio_size("1mb", 1024), Ok(1 << 20));
        // fio's own rule: with the default kb_base the IEC names mean powers of 1000.
        assert_eq!(fio_size("4kib", 1024), Ok(4000));
        assert_eq!(fio_size("4k", 1000), Ok(4000));
        assert_eq!(fio_size("4kib", 1000), Ok(4096));
        assert_eq!(fio_size("10g", 1024), Ok(10 << 30));
        assert!(fio_size("50%", 1024).unwrap_err().contains("percent"));
        assert!(fio_size("4k,8k", 1024).unwrap_err().contains("one value"));
        assert!(fio_size("4k-8k", 1024).is_err());
    }

    #[test]
    fn times_are_seconds_unless_a_unit_says_otherwise() {
        assert_eq!(fio_time("30"), Ok(Duration::from_secs(30)));
        assert_eq!(fio_time("2000ms"), Ok(Duration::from_millis(2000)));
        assert_eq!(fio_time("2m"), Ok(Duration::from_secs(120)));
        assert!(fio_time("soon").is_err());
    }
}
