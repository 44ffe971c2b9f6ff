//! How far to trust a valid profile: whether it was measured under load or `--quick`, whether
//! its spread is wide for a family of figures, and whether it is stale (another kernel, device
//! or older than [`STALE_AFTER_DAYS`]). These decisions only add doubts beside a figure; they
//! never refuse a profile (that is `validate`'s part).

use super::records::*;
use crate::explain::context::Context;
use crate::text::shown;

/// A family of ceilings: the tries behind one kind of bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Per-operation costs (syscall-bound points).
    Methods,
    /// Copy and XOR (memory-bound points).
    Memory,
    /// O_DIRECT device figures.
    Device,
    /// Cold readahead.
    Readahead,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Methods => "per-operation",
            Family::Memory => "memory",
            Family::Device => "device",
            Family::Readahead => "readahead",
        }
    }
}

impl Provenance {
    /// Whether the machine was busy enough while measuring that the ceilings may be low.
    pub fn under_load(&self) -> bool {
        self.others_cpu_pct > LOADED_OTHERS_CPU_PCT || self.steal_pct > LOADED_STEAL_PCT
    }

    /// `under load (other processes used 63% of the CPUs, 12% stolen)`, or None when quiet.
    pub fn load_doubt(&self) -> Option<String> {
        self.under_load().then(|| {
            format!(
                "measured under load (other processes used {:.0}% of the CPUs, {:.0}% stolen by the hypervisor): its ceilings may be low",
                self.others_cpu_pct, self.steal_pct
            )
        })
    }

    /// One line for `limits`: `measured on /x/.diskscope-limits-1.bin (512 MiB), full, in 17.2 s;
    /// load 2.1, other processes 12% of the CPUs, steal 0%`.
    pub fn summary(&self) -> String {
        format!(
            "measured on {} ({}), {}, in {:.1} s; load {:.1}, other processes {:.0}% of the CPUs, steal {:.0}%",
            shown(&self.file),
            crate::size::format_bytes_approx(self.file_bytes),
            if self.quick { "--quick" } else { "full" },
            self.seconds,
            self.load_avg_1m,
            self.others_cpu_pct,
            self.steal_pct
        )
    }
}

impl Profile {
    /// Why the profile may not describe the machine now, beyond staleness: measured under load,
    /// a `--quick` one, an unknown error (stored before its spread was kept). None when there
    /// is nothing to doubt.
    pub fn provenance_doubts(&self) -> Vec<String> {
        let mut why = Vec::new();
        match &self.provenance {
            Some(pv) => {
                why.extend(pv.load_doubt());
                if pv.quick {
                    why.push("measured with --quick (short steps, less precise)".to_string());
                }
            }
            None => why.push("where and under what load it was measured is unknown".to_string()),
        }
        if self.spread.is_none() {
            why.push(
                "its error is unknown (stored before limits kept the spread of its tries)"
                    .to_string(),
            );
        }
        why
    }

    /// Everything that makes the profile doubtful now, in one warning: staleness (kernel,
    /// device, CPU count, age) and [`Profile::provenance_doubts`]; None when it is fresh and
    /// was measured on a quiet machine with its spread.
    pub fn doubts(&self, now: &Context, now_unix_s: u64) -> Option<String> {
        let stale = self.stale_reasons(now, now_unix_s);
        let other = self.provenance_doubts();
        let mut parts = Vec::new();
        if !stale.is_empty() {
            parts.push(format!("the limits profile is stale: {}", stale.join(", ")));
        }
        if !other.is_empty() {
            let lead = if stale.is_empty() {
                "the limits profile may not hold"
            } else {
                "it may not hold either"
            };
            parts.push(format!("{lead}: {}", other.join("; ")));
        }
        (!parts.is_empty())
            .then(|| format!("{}; run `diskscope limits --refresh`", parts.join("; ")))
    }

    /// Why the ceilings of `family` bound nothing, in words (`measured under load: CPU pressure
    /// 63% while it was measured`, `its device ceilings spread 74% over 3 tries`); None when
    /// they can be trusted: tries within [`WIDE_SPREAD_PCT`], measured with little pressure.
    /// A profile from before stalls were kept is judged by its load (`Provenance`); one from
    /// before spreads were kept has an unknown error and bounds nothing.
    pub fn family_doubt(&self, family: Family) -> Option<String> {
        let Some(spread) = &self.spread else {
            return Some("its error is unknown: stored before limits kept its spread".into());
        };
        let (pct, stall) = match family {
            Family::Methods => (
                Some(spread.methods_pct),
                spread.stalls.and_then(|s| s.methods),
            ),
            Family::Memory => (
                Some(spread.memory_pct),
                spread.stalls.and_then(|s| s.memory),
            ),
            Family::Device => (spread.device_pct, spread.stalls.and_then(|s| s.device)),
            Family::Readahead => (
                spread.readahead_pct,
                spread.stalls.and_then(|s| s.readahead),
            ),
        };
        let name = family.as_str();
        if let Some(pct) = pct.filter(|p| *p > WIDE_SPREAD_PCT) {
            return Some(format!(
                "its {name} ceilings spread {pct:.0}% over {} tries, more than {WIDE_SPREAD_PCT:.0}%",
                spread.tries
            ));
        }
        match (stall, &self.provenance) {
            (Some(st), _) if st.loaded() => Some(format!(
                "measured under load: while its {name} ceilings were measured, tasks waited                  for a CPU {:.0}% and for memory {:.0}% of the time",
                st.cpu_some_pct, st.memory_some_pct
            )),
            (Some(_), _) => None,
            (None, Some(pv)) if pv.under_load() => Some(format!(
                "measured under load: other processes used {:.0}% of the CPUs, {:.0}% stolen",
                pv.others_cpu_pct, pv.steal_pct
            )),
            (None, Some(_)) => None,
            (None, None) => Some("the load it was measured under is unknown".into()),
        }
    }

    /// Why this profile may not describe `now` any more; None when it is fresh.
    pub fn staleness(&self, now: &Context, now_unix_s: u64) -> Option<String> {
        let why = self.stale_reasons(now, now_unix_s);
        (!why.is_empty()).then(|| {
            format!(
                "the limits profile is stale: {}; run `diskscope limits --refresh`",
                why.join(", ")
            )
        })
    }

    /// What changed since the profile was measured (kernel, device, CPU count, a month).
    fn stale_reasons(&self, now: &Context, now_unix_s: u64) -> Vec<String> {
        let mut why = Vec::new();
        if self.context.kernel != now.kernel {
            why.push(format!(
                "kernel changed ({} → {})",
                shown(&self.context.kernel),
                shown(&now.kernel)
            ));
        }
        if self.context.device_key() != now.device_key() {
            why.push(format!(
                "device changed ({} → {})",
                shown(&self.context.device_key()),
                shown(&now.device_key())
            ));
        }
        if self.context.cpu_count != now.cpu_count {
            why.push(format!(
                "CPU count changed ({} → {})",
                self.context.cpu_count, now.cpu_count
            ));
        }
        let age_days = now_unix_s.saturating_sub(self.measured_unix_s) / 86_400;
        if age_days > STALE_AFTER_DAYS {
            why.push(format!("measured {age_days} days ago"));
        }
        why
    }
}
