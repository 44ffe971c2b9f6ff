//! Whether a profile's numbers may be used at all: every rate finite, positive and below a
//! physical bound, every count and share within its range ([`Profile::validate`]). A profile is
//! outside input like any other file, so a hand-edited `1e308` or `NaN` is refused here, with
//! its key, before the model or a front end prints it.

use super::records::*;

/// Why a stored profile was not used.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    #[error("it is a symbolic link, which is never followed there")]
    Symlink,
    #[error("it is not a regular file ({0})")]
    NotRegular(&'static str),
    #[error("it is larger than 1 MiB ({0} bytes): not a profile")]
    TooLarge(u64),
    #[error("it is not a profile: {0}")]
    Parse(String),
    #[error("{0}")]
    Invalid(#[from] InvalidValue),
}

/// A value of a profile outside its bounds.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{key}` = {value} is not {expected}")]
pub struct InvalidValue {
    /// Where in the profile: `device.seq_qd1_mib_s`, `methods[read].ops_per_s`.
    pub key: String,
    /// The value as read.
    pub value: String,
    /// What it must be.
    pub expected: &'static str,
}

/// A number for an error message: plain when short, scientific when huge or tiny.
pub(super) fn number(v: f64) -> String {
    if v != 0.0 && v.is_finite() && (v.abs() >= 1e9 || v.abs() < 1e-3) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Checks `value` against `(0, max]` (or `[0, max]` when `zero_ok`).
pub(super) fn check_rate(
    key: impl FnOnce() -> String,
    value: f64,
    max: f64,
    zero_ok: bool,
    expected: &'static str,
) -> Result<(), InvalidValue> {
    let ok = value.is_finite() && value <= max && (value > 0.0 || (zero_ok && value == 0.0));
    if ok {
        Ok(())
    } else {
        Err(InvalidValue {
            key: key(),
            value: number(value),
            expected,
        })
    }
}

pub(super) fn check_count(
    key: impl FnOnce() -> String,
    value: u64,
    min: u64,
    max: u64,
) -> Result<(), InvalidValue> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(InvalidValue {
            key: key(),
            value: value.to_string(),
            expected: "a count in its range (threads 1 to 65536, buffers 1 byte to 1 TiB)",
        })
    }
}

pub(super) const RATE: &str = "a rate in (0, 1e9] MiB/s";

pub(super) const OPS: &str = "a rate in (0, 1e12] operations per second";

pub(super) const IOPS: &str = "a rate in (0, 1e9] IOPS";

pub(super) const IOPS_OR_ZERO: &str = "0 (not measured) or a rate in (0, 1e9] IOPS";

pub(super) const RATE_OR_ZERO: &str = "0 (not measured) or a rate in (0, 1e9] MiB/s";

pub(super) const PCT: &str = "a share in [0, 100] percent";

impl Profile {
    /// Checks every number the model or a front end uses: rates finite, above zero and below
    /// [`MAX_MIB_S`], [`MAX_OPS_PER_S`] or [`MAX_IOPS`]; counts within their range; shares of
    /// time within 0–100%. The first value out of bounds is returned with its key.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        let cpus = self.context.cpu_count as u64;
        check_count(|| "context.cpu_count".into(), cpus, 0, MAX_THREADS as u64)?;
        for m in &self.methods {
            let key = || format!("methods[{}].ops_per_s", m.method.as_str());
            check_rate(key, m.ops_per_s, MAX_OPS_PER_S, false, OPS)?;
        }
        for m in &self.memory {
            let t = m.threads;
            let at = |k: &str| format!("memory[threads={t}].{k}");
            check_count(|| at("threads"), t as u64, 1, MAX_THREADS as u64)?;
            check_rate(|| at("copy_mib_s"), m.copy_mib_s, MAX_MIB_S, false, RATE)?;
            check_rate(|| at("xor_mib_s"), m.xor_mib_s, MAX_MIB_S, false, RATE)?;
            for (i, l) in m.read_levels.iter().enumerate() {
                let lk = |k: &str| at(&format!("read_levels[{i}].{k}"));
                check_count(|| lk("buffer_bytes"), l.buffer_bytes, 1, MAX_BUFFER_BYTES)?;
                check_rate(
                    || lk("copy_xor_mib_s"),
                    l.copy_xor_mib_s,
                    MAX_MIB_S,
                    false,
                    RATE,
                )?;
            }
        }
        for d in &self.devices {
            let k = |f: &str| format!("devices[{}].{f}", d.buffers.as_str());
            check_rate(
                || k("seq_qd1_mib_s"),
                d.seq_qd1_mib_s,
                MAX_MIB_S,
                false,
                RATE,
            )?;
            check_rate(
                || k("seq_qd32_mib_s"),
                d.seq_qd32_mib_s,
                MAX_MIB_S,
                true,
                RATE_OR_ZERO,
            )?;
            check_rate(
                || k("rand4k_qd1_iops"),
                d.rand4k_qd1_iops,
                MAX_IOPS,
                false,
                IOPS,
            )?;
            check_rate(
                || k("rand4k_qd32_iops"),
                d.rand4k_qd32_iops,
                MAX_IOPS,
                true,
                IOPS_OR_ZERO,
            )?;
        }
        if let Some(ra) = self.cold_readahead_mib_s {
            check_rate(|| "cold_readahead_mib_s".into(), ra, MAX_MIB_S, false, RATE)?;
        }
        let pct = |key: String, v: f64| check_rate(|| key, v, 100.0, true, PCT);
        if let Some(sp) = &self.spread {
            pct("spread.methods_pct".into(), sp.methods_pct)?;
            pct("spread.memory_pct".into(), sp.memory_pct)?;
            if let Some(v) = sp.device_pct {
                pct("spread.device_pct".into(), v)?;
            }
            if let Some(v) = sp.readahead_pct {
                pct("spread.readahead_pct".into(), v)?;
            }
        }
        if let Some(pv) = &self.provenance {
            pct("provenance.others_cpu_pct".into(), pv.others_cpu_pct)?;
            pct("provenance.steal_pct".into(), pv.steal_pct)?;
            let load = || "provenance.load_avg_1m".to_string();
            check_rate(
                load,
                pv.load_avg_1m,
                1e6,
                true,
                "a load average in [0, 1e6]",
            )?;
            let secs = || "provenance.seconds".to_string();
            check_rate(secs, pv.seconds, 1e7, true, "a duration in [0, 1e7] s")?;
        }
        Ok(())
    }
}
