//! Matching OLD and NEW point by point and judging each difference.
//!
//! A point of OLD matches the point of NEW with the same [`Setup`]; points found on one side only
//! are kept in [`Comparison::only_old`] / [`Comparison::only_new`] so the report can list them. For
//! each matched point and each metric (throughput, p99 latency) the verdict comes from Welch's 95 %
//! interval of mean(NEW) − mean(OLD) ([`super::stats`]): it is significant only when the interval
//! excludes zero. Δ% and its interval are relative to the OLD mean.

use super::load::{Record, Setup};
use super::stats::{welch_interval, DiffInterval};
use crate::measure::stats::Stats;

/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// The metrics compared at each point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// Throughput, MiB/s (higher is better).
    MibS,
    /// p99 latency of single operations, µs (lower is better).
    P99Us,
}

impl Metric {
    pub const ALL: [Metric; 2] = [Metric::MibS, Metric::P99Us];

    pub fn better(self) -> Better {
        match self {
            Metric::MibS => Better::Higher,
            Metric::P99Us => Better::Lower,
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Metric::MibS => "MiB/s",
            Metric::P99Us => "p99 µs",
        }
    }

    /// Column text in CSV output.
    pub fn key(self) -> &'static str {
        match self {
            Metric::MibS => "mib_s",
            Metric::P99Us => "lat_p99_us",
        }
    }

    /// Compared as a ratio (Welch's t on ln values) rather than a difference of means: tail
    /// latencies are skewed, and one stalled repetition (2 ms among 100 µs) would otherwise
    /// widen the interval enough to hide a hundredfold change.
    pub fn log_scale(self) -> bool {
        matches!(self, Metric::P99Us)
    }

    pub fn samples(self, r: &Record) -> &[f64] {
        match self {
            Metric::MibS => &r.mib_s,
            Metric::P99Us => &r.lat_p99_us,
        }
    }
}

/// The judgement on one metric of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    NoChange,
    /// Fewer than two successful repetitions on a side: no interval can be computed.
    TooFewReps,
    /// The metric is not measured for this point (e.g. latency of an external command).
    NotMeasured,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no significant change",
            Verdict::TooFewReps => "too few repetitions",
            Verdict::NotMeasured => "not measured",
        }
    }
}

/// One metric of one matched point.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricDiff {
    pub metric: Metric,
    pub old: Stats,
    pub new: Stats,
    /// 100 × (mean NEW − mean OLD) / mean OLD; for a [`Metric::log_scale`] metric, the change
    /// of the geometric mean, 100 × (geomean NEW / geomean OLD − 1).
    pub delta_pct: f64,
    /// Welch's interval of Δ%, when both sides have at least two repetitions.
    pub ci_pct: Option<(f64, f64)>,
    /// The interval in the metric's unit (of ln values for a log-scale metric).
    pub interval: Option<DiffInterval>,
    pub verdict: Verdict,
}

/// A point measured in both OLD and NEW.
#[derive(Debug, Clone, PartialEq)]
pub struct PointDiff {
    pub setup: Setup,
    pub mib_s: MetricDiff,
    pub p99: MetricDiff,
    pub failed_old: usize,
    pub failed_new: usize,
}

impl PointDiff {
    pub fn metrics(&self) -> [&MetricDiff; 2] {
        [&self.mib_s, &self.p99]
    }
}

/// OLD vs NEW, point by point.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub matched: Vec<PointDiff>,
    pub only_old: Vec<Setup>,
    pub only_new: Vec<Setup>,
}

impl Comparison {
    /// Metrics significantly worse by more than `pct` percent (throughput down, latency up).
    pub fn regressions(&self, pct: f64) -> Vec<(&Setup, &MetricDiff)> {
        self.matched
            .iter()
            .flat_map(|p| p.metrics().map(|m| (&p.setup, m)))
            .filter(|(_, m)| m.verdict == Verdict::Slower && m.delta_pct.abs() > pct)
            .collect()
    }
}

/// Compares one metric of two samples.
pub fn diff_metric(metric: Metric, old: &[f64], new: &[f64]) -> MetricDiff {
    let (so, sn) = (Stats::of(old), Stats::of(new));
    let measured = |v: &[f64]| v.iter().any(|x| *x > 0.0);
    let all_positive = |v: &[f64]| !v.is_empty() && v.iter().all(|x| *x > 0.0);
    let (delta_pct, interval, ci_pct) =
        if metric.log_scale() && all_positive(old) && all_positive(new) {
            // Ratio of geometric means: Welch on ln(values), turned back into percentages.
            let ln = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
            let (lo, ln_new) = (ln(old), ln(new));
            let geo = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let pct = |d: f64| 100.0 * (d.exp() - 1.0);
            let interval = welch_interval(&lo, &ln_new, LEVEL);
            (
                pct(geo(&ln_new) - geo(&lo)),
                interval,
                interval.map(|i| (pct(i.low), pct(i.high))),
            )
        } else {
            let interval = welch_interval(old, new, LEVEL);
            if so.mean != 0.0 {
                (
                    100.0 * (sn.mean - so.mean) / so.mean,
                    interval,
                    interval.map(|i| (100.0 * i.low / so.mean, 100.0 * i.high / so.mean)),
                )
            } else {
                (f64::NAN, interval, None)
            }
        };
    let verdict = if !measured(old) || !measured(new) {
        Verdict::NotMeasured
    } else {
        match interval {
            None => Verdict::TooFewReps,
            Some(i) if i.low > 0.0 => match metric.better() {
                Better::Higher => Verdict::Faster,
                Better::Lower => Verdict::Slower,
            },
            Some(i) if i.high < 0.0 => match metric.better() {
                Better::Higher => Verdict::Slower,
                Better::Lower => Verdict::Faster,
            },
            Some(_) => Verdict::NoChange,
        }
    };
    MetricDiff {
        metric,
        old: so,
        new: sn,
        delta_pct,
        ci_pct,
        interval,
        verdict,
    }
}

/// Matches `old` and `new` on their setups (both sorted by setup, as [`super::load()`] returns).
pub fn compare(old: &[Record], new: &[Record]) -> Comparison {
    let mut matched = Vec::new();
    let mut only_old = Vec::new();
    for o in old {
        match new.iter().find(|n| n.setup == o.setup) {
            Some(n) => matched.push(PointDiff {
                setup: o.setup.clone(),
                mib_s: diff_metric(Metric::MibS, &o.mib_s, &n.mib_s),
                p99: diff_metric(Metric::P99Us, &o.lat_p99_us, &n.lat_p99_us),
                failed_old: o.failed_reps,
                failed_new: n.failed_reps,
            }),
            None => only_old.push(o.setup.clone()),
        }
    }
    let only_new = new
        .iter()
        .filter(|n| !old.iter().any(|o| o.setup == n.setup))
        .map(|n| n.setup.clone())
        .collect();
    Comparison {
        matched,
        only_old,
        only_new,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halved_throughput_is_slower_and_halved_latency_is_faster() {
        let old = [100.0, 104.0, 98.0, 101.0, 97.0];
        let half: Vec<f64> = old.iter().map(|v| v / 2.0).collect();
        let t = diff_metric(Metric::MibS, &old, &half);
        assert_eq!(t.verdict, Verdict::Slower);
        assert!((t.delta_pct + 50.0).abs() < 1e-9);
        let (lo, hi) = t.ci_pct.unwrap();
        assert!(lo < -50.0 && hi > -50.0 && hi < 0.0, "{lo} {hi}");
        assert_eq!(
            diff_metric(Metric::P99Us, &old, &half).verdict,
            Verdict::Faster
        );
    }

    #[test]
    fn a_latency_drop_behind_one_stalled_repetition_is_still_seen() {
        // p99 µs of cold 16 KiB reads, read_ahead_kb 128 vs 4096 (measured on the dev VM): every
        // NEW value is below every OLD one, but one 2.4 ms repetition makes the arithmetic
        // interval [-250%, +51%].
        let old = [2392.063, 688.127, 117.247, 305.151, 333.823];
        let new = [2.111, 1.711, 2.031, 3.567, 3.791];
        let m = diff_metric(Metric::P99Us, &old, &new);
        assert_eq!(m.verdict, Verdict::Faster, "{m:?}");
        let (lo, hi) = m.ci_pct.unwrap();
        assert!(
            -100.0 < lo && lo < m.delta_pct && m.delta_pct < hi && hi < 0.0,
            "{m:?}"
        );
    }

    #[test]
    fn overlapping_noise_is_no_significant_change() {
        let old = [100.0, 110.0, 90.0, 105.0, 95.0];
        let new = [102.0, 93.0, 108.0, 99.0, 101.0];
        assert_eq!(
            diff_metric(Metric::MibS, &old, &new).verdict,
            Verdict::NoChange
        );
    }

    #[test]
    fn one_repetition_or_no_latency_is_said_so() {
        assert_eq!(
            diff_metric(Metric::MibS, &[1.0], &[2.0, 2.0]).verdict,
            Verdict::TooFewReps
        );
        assert_eq!(
            diff_metric(Metric::P99Us, &[0.0, 0.0], &[0.0, 0.0]).verdict,
            Verdict::NotMeasured
        );
    }

    #[test]
    fn a_regression_must_exceed_the_threshold() {
        let rec = |v: Vec<f64>| Record::sample(4096, v, 1.0);
        let c = compare(
            &[rec(vec![100.0, 101.0, 99.0])],
            &[rec(vec![95.0, 94.0, 96.0])],
        );
        assert_eq!(c.matched[0].mib_s.verdict, Verdict::Slower);
        assert_eq!(c.regressions(10.0).len(), 0);
        assert_eq!(c.regressions(4.0).len(), 1);
    }
}
