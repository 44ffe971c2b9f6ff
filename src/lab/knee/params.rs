//! The knee's parameters and their checks: [`KneeParams`] (the `knee` command's flags and a
//! sweep's `params = { ... }`, one struct for both, so a flag and a key cannot drift) and the
//! checked [`Plan`] they make: the search's settings and the spec every point starts from.

use super::search::Settings;
use crate::config::spec::RunSpec;
use crate::config::{parse_block_size, Arrival, Method, Pattern, Setup, UsageError};
use crate::lab::flags::SetupFlags;
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// How a parameter is named in messages: a command-line flag or a sweep key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Flag,
    Key,
}

impl Syntax {
    /// `p99` as `--p99` or `p99`; a key's underscores are the flag's dashes.
    pub fn name(self, key: &str) -> String {
        match self {
            Syntax::Flag => format!("--{}", key.replace('_', "-")),
            Syntax::Key => key.to_string(),
        }
    }
}

fn d_block() -> String {
    "4K".into()
}
fn d_arrival() -> String {
    "poisson".into()
}
fn d_seconds() -> f64 {
    2.0
}
fn d_min_ops() -> u64 {
    2000
}
fn d_tolerance() -> f64 {
    5.0
}
fn d_max_points() -> usize {
    10
}

/// The knee's parameters: the command's flags and a sweep's `params = { ... }`.
// Unknown keys are refused by `from_toml` (serde's `deny_unknown_fields` does not combine with
// the flattened setup).
#[derive(Debug, Clone, clap::Args, Deserialize)]
#[command(mut_args(|a| crate::lab::flags::show_default(a, &knee_base(), &[])))]
pub struct KneeParams {
    /// The response-time p99 a rate must stay under: 2ms, 500us, 0.5ms, 1s
    // allow_hyphen_values: `--p99 -1ms` reaches the target's own check, not clap's
    // "unexpected argument '-1'".
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub p99: String,
    /// Bytes per read: 4K, 64K, 1M
    #[arg(long, alias = "block", default_value = "4K", value_name = "SIZE")]
    #[serde(default = "d_block", alias = "block")]
    pub block_size: String,
    /// The setup's flags, as `run`'s (the knee's defaults: [`knee_base`]).
    #[command(flatten)]
    #[serde(flatten)]
    pub setup: SetupFlags,
    /// How the intended starts are spaced: poisson (independent users) or constant
    #[arg(long, default_value = "poisson", value_name = "ARRIVAL")]
    #[serde(default = "d_arrival")]
    pub arrival: String,
    /// Seconds each point runs at least (longer at low rates, to reach --min-ops; the closed-loop
    /// ceiling run, half of it)
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    #[serde(default = "d_seconds")]
    pub seconds: f64,
    /// Operations each point aims for, so its p99 rests on at least 1% of them (20 by default)
    #[arg(long, default_value_t = 2000, value_name = "N")]
    #[serde(default = "d_min_ops")]
    pub min_ops: u64,
    /// Stop when the bracket around the knee is at most this wide, percent of its top
    #[arg(long, default_value_t = 5.0, value_name = "PERCENT")]
    #[serde(default = "d_tolerance")]
    pub tolerance: f64,
    /// Most open-loop points to measure (the closed-loop run not counted)
    #[arg(long, default_value_t = 10, value_name = "N")]
    #[serde(default = "d_max_points")]
    pub max_points: usize,
}

/// The knee's starting setup: random 4 KiB preads, one thread (a queue depth of 8 for io_uring),
/// Poisson arrivals; every setting a flag or key leaves alone.
pub fn knee_base() -> Setup {
    Setup {
        method: Method::Pread,
        pattern: Pattern::Random,
        queue_depth: 8,
        block_size_bytes: 4096,
        arrival: Arrival::Poisson,
        ..Setup::default()
    }
}

/// The shortest `--seconds` a search takes: a point shorter than this holds too few operations
/// for a p99 (`1e-9` made single-operation points and printed a knee from them).
pub const MIN_POINT_SECONDS: f64 = 0.1;

/// Longest a point runs, whatever `--min-ops` asks at a low rate: ten times `--seconds`.
const POINT_STRETCH: f64 = 10.0;
/// The closed-loop run's share of `--seconds`.
const CEILING_SHARE: f64 = 0.5;

/// A checked plan: the search's settings and the spec every point starts from.
#[derive(Debug, Clone)]
pub struct Plan {
    pub settings: Settings,
    /// The point's spec, closed loop (`rate_iops` None), time-bounded, looping over the range.
    pub base: RunSpec,
    pub seconds: f64,
    pub min_ops: u64,
}

impl Plan {
    /// How long a point at `rate_iops` runs: `seconds`, stretched to reach `min_ops` at a low
    /// rate, at most ten times `seconds`. The closed-loop run (`None`) runs half of `seconds`:
    /// it gives the ceiling, a mean rate that settles in far fewer operations than a p99, and
    /// the half it saves pays for re-measuring the bracket's top (`search`, step 5).
    pub fn point_duration(&self, rate_iops: Option<f64>) -> Duration {
        let s = match rate_iops {
            Some(r) if r > 0.0 => (self.min_ops as f64 / r)
                .max(self.seconds)
                .min(self.seconds * POINT_STRETCH),
            _ => self.seconds * CEILING_SHARE,
        };
        Duration::from_secs_f64(s)
    }
}

impl KneeParams {
    /// Reads a sweep's `params = { ... }` table: an unknown key, a missing `p99` or a value of
    /// the wrong type is an error naming its key.
    pub fn from_toml(table: &toml::Table) -> Result<KneeParams, UsageError> {
        // The keys are the flags' ids (the field names, the setup's flattened in): one
        // definition makes both.
        let cmd = <KneeParams as clap::Args>::augment_args(clap::Command::new("knee"));
        let known: Vec<&str> = cmd.get_arguments().map(|a| a.get_id().as_str()).collect();
        for (key, value) in table {
            // `block` and `qd` are the older spellings of `block_size` and `queue_depth` (one
            // name per setting).
            if !known.contains(&key.as_str()) && key != "block" && key != "qd" {
                return Err(UsageError::new(
                    key.as_str(),
                    format!("unknown key in a knee experiment; use {}", known.join(", ")),
                ));
            }
            // Each key alone beside a placeholder target, so a type error is pinned on its key.
            let mut one = toml::Table::from_iter([(key.clone(), value.clone())]);
            one.entry("p99").or_insert_with(|| "1ms".into());
            KneeParams::deserialize(one).map_err(|e| {
                UsageError::new(key.as_str(), format!("{}, got {value}", e.message()))
            })?;
        }
        if !table.contains_key("p99") {
            return Err(UsageError::new(
                "p99",
                "is required: the response-time p99 to stay under, as p99 = \"2ms\"",
            ));
        }
        KneeParams::deserialize(table.clone())
            .map_err(|e| UsageError::plain(e.message().to_string()))
    }

    /// Checks every parameter and builds the plan for `file`; errors name the flag or key.
    pub fn plan(&self, file: &Path, syn: Syntax) -> Result<Plan, UsageError> {
        let n = |k: &str| syn.name(k);
        let target_us = parse_time_us(&self.p99).map_err(|m| UsageError::new(n("p99"), m))?;
        let mut spec = RunSpec::new(file);
        spec.setup = knee_base();
        spec.setup.block_size_bytes = parse_block_size(&self.block_size, &n("block_size"))?;
        self.setup.apply(&mut spec.setup, n)?;
        crate::config::check_queue_depth(spec.setup.queue_depth, &n("queue_depth"))?;
        if !crate::engine::caps(spec.setup.method).queued {
            spec.setup.queue_depth = 1;
        }
        spec.setup.arrival = Arrival::parse(&self.arrival, &n("arrival"))?;
        let secs = crate::config::check_seconds(self.seconds, &n("seconds"))?;
        if self.seconds < MIN_POINT_SECONDS {
            return Err(UsageError::new(
                n("seconds"),
                format!(
                    "must be at least {MIN_POINT_SECONDS} s, got {}: a shorter point holds too \
                     few operations for a p99 (one in a hundred above it) at any rate but the \
                     highest",
                    self.seconds
                ),
            ));
        }
        spec.target.duration = Some(secs);
        spec.target.loop_range = true;
        if self.min_ops == 0 || self.min_ops > 10_000_000 {
            return Err(UsageError::new(
                n("min_ops"),
                format!("must be from 1 to 10000000, got {}", self.min_ops),
            ));
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.5 && self.tolerance <= 50.0) {
            return Err(UsageError::new(
                n("tolerance"),
                format!(
                    "must be a percentage from 0.5 to 50, got {}",
                    self.tolerance
                ),
            ));
        }
        if self.max_points == 0 || self.max_points > 100 {
            return Err(UsageError::new(
                n("max_points"),
                format!("must be from 1 to 100, got {}", self.max_points),
            ));
        }
        spec.validate(match syn {
            Syntax::Flag => &FLAG_NAMES,
            Syntax::Key => &KEY_NAMES,
        })?;
        Ok(Plan {
            settings: Settings {
                target_p99_us: target_us,
                tolerance: self.tolerance / 100.0,
                max_points: self.max_points,
            },
            base: spec,
            seconds: secs.as_secs_f64(),
            min_ops: self.min_ops,
        })
    }
}

/// The settings `RunSpec::validate` names, as the knee's flags and keys.
const FLAG_NAMES: crate::config::spec::Names = crate::config::spec::Names {
    block_size: "--block-size",
    block_count: "--min-ops",
    threads: "--threads",
    queue_depth: "--queue-depth",
    direct: "--direct",
};
const KEY_NAMES: crate::config::spec::Names = crate::config::spec::Names {
    block_size: "block_size",
    block_count: "min_ops",
    threads: "threads",
    queue_depth: "queue_depth",
    direct: "direct",
};

/// Parses a time (`2ms`, `500us`, `500µs`, `0.5ms`, `1s`, `2000ns`) into microseconds; a
/// number without a unit is refused (is `2` seconds or milliseconds?).
pub fn parse_time_us(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    let scale = match unit {
        "ns" => 1e-3,
        "us" | "µs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        _ => {
            return Err(format!(
                "cannot read '{}'; give a time with its unit: 2ms, 500us, 1s",
                crate::text::shown(text)
            ))
        }
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * scale <= 100e6 => Ok(v * scale),
        _ => Err(format!(
            "'{}' is not a time above 0 and at most 100s; write it as 2ms, 500us or 1s",
            crate::text::shown(text)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_with_their_units_and_bare_numbers_are_refused() {
        assert_eq!(parse_time_us("2ms"), Ok(2000.0));
        assert_eq!(parse_time_us("500us"), Ok(500.0));
        assert_eq!(parse_time_us("500µs"), Ok(500.0));
        assert_eq!(parse_time_us(" 0.5 ms"), Ok(500.0));
        assert_eq!(parse_time_us("1s"), Ok(1e6));
        assert_eq!(parse_time_us("2000ns"), Ok(2.0));
        for bad in ["2", "ms", "-1ms", "0ms", "2 hours", "1e3ms", "200s"] {
            assert!(parse_time_us(bad).is_err(), "{bad}");
        }
    }

    fn params() -> KneeParams {
        let t: toml::Table = toml::from_str("p99 = \"2ms\"").unwrap();
        KneeParams::from_toml(&t).unwrap()
    }

    #[test]
    fn block_size_and_queue_depth_are_named_as_everywhere_and_the_old_spellings_still_read() {
        #[derive(clap::Parser)]
        struct Cmd {
            #[command(flatten)]
            params: KneeParams,
        }
        use clap::Parser;
        for args in [
            [
                "k",
                "--p99",
                "2ms",
                "--block-size",
                "64K",
                "--queue-depth",
                "4",
            ],
            ["k", "--p99", "2ms", "--block", "64K", "--qd", "4"],
        ] {
            let p = Cmd::try_parse_from(args).unwrap().params;
            assert_eq!(
                (p.block_size.as_str(), p.setup.queue_depth),
                ("64K", Some(4)),
                "{args:?}"
            );
        }
        for key in ["block_size", "block"] {
            let t: toml::Table =
                toml::from_str(&format!("p99 = \"2ms\"\n{key} = \"64K\"")).unwrap();
            assert_eq!(
                KneeParams::from_toml(&t).unwrap().block_size,
                "64K",
                "{key}"
            );
        }
        let mut p = params();
        p.block_size = "0".into();
        let e = p.plan(Path::new("f"), Syntax::Flag).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("--block-size"));
    }

    #[test]
    fn a_plan_names_the_flag_or_the_key_at_fault() {
        let mut p = params();
        p.tolerance = 0.0;
        let e = p.plan(Path::new("f"), Syntax::Flag).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("--tolerance"));
        p.tolerance = 5.0;
        p.max_points = 0;
        let e = p.plan(Path::new("f"), Syntax::Key).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("max_points"));
        p.max_points = 10;
        p.setup.method = Some("nope".into());
        let e = p.plan(Path::new("f"), Syntax::Flag).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("--method"));
        let t: toml::Table = toml::from_str("p99 = \"2ms\"\nrate = 3").unwrap();
        let e = KneeParams::from_toml(&t).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("rate"), "{e}");
    }

    #[test]
    fn a_point_runs_its_seconds_stretched_to_reach_its_operations_at_most_tenfold() {
        let plan = params().plan(Path::new("f"), Syntax::Flag).unwrap();
        assert_eq!(plan.settings.target_p99_us, 2000.0);
        assert_eq!(
            plan.base.setup.queue_depth, 1,
            "pread has one operation in flight"
        );
        assert_eq!(plan.point_duration(None).as_secs_f64(), 1.0);
        assert_eq!(plan.point_duration(Some(10_000.0)).as_secs_f64(), 2.0);
        assert_eq!(plan.point_duration(Some(500.0)).as_secs_f64(), 4.0);
        assert_eq!(plan.point_duration(Some(1.0)).as_secs_f64(), 20.0);
    }
}
