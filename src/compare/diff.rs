//! Matching OLD and NEW point by point and judging each difference.
//!
//! A point of OLD matches the point of NEW with the same [`Point`] (a hash map of NEW's points,
//! so matching a million points costs a million look-ups, not a million squared); points found
//! on one side only are kept in [`Comparison::only_old`] / [`Comparison::only_new`] in their
//! input order so the report can list them. For each matched point and each metric (throughput,
//! p99 latency) the verdict comes from ranks ([`super::rank`]): the Mann–Whitney U test decides
//! whether NEW differs from OLD at the 95 % level, and the Hodges–Lehmann estimate of the shift
//! of ln(values), with its distribution-free interval, says by how much, as a percentage
//! 100 · (exp(shift) − 1) that cannot leave (−100 %, +∞). A side whose repetitions spread over
//! [`SPREAD_INCONCLUSIVE`]× or more makes a non-significant result "inconclusive" rather than "no
//! significant change", and outliers of each side (modified z-score) are reported beside it.

use super::load::{Point, Record};
use super::rank;
use crate::measure::stats::Stats;
use std::collections::HashMap;

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

    /// Compared as a ratio (ranks of ln values, the shift as a percentage): throughput and tail
    /// latencies are both skewed, and one stalled repetition (2 ms among 100 µs, 1110 MiB/s
    /// among 120) must not hide a hundredfold change. Every metric is; kept for callers.
    pub fn log_scale(self) -> bool {
        true
    }

    pub fn samples(self, r: &Record) -> &[f64] {
        match self {
            Metric::MibS => &r.mib_s,
            Metric::P99Us => &r.lat_p99_us,
        }
    }
}

/// A side whose slowest and fastest repetitions differ by this ratio or more cannot show "no
/// significant change": its spread, not the change, decides the test.
pub const SPREAD_INCONCLUSIVE: f64 = 2.0;

/// The judgement on one metric of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    NoChange,
    /// Not significant, and a side's repetitions spread over [`SPREAD_INCONCLUSIVE`]× or more:
    /// the measurement cannot tell (see [`MetricDiff::verdict_text`] for which side).
    Inconclusive,
    /// Fewer repetitions than the test needs to reach its level on some outcome (fewer than two
    /// on a side, or 3 against 3, whose best p-value is 0.1).
    TooFewReps,
    /// The metric is not measured for this point (e.g. latency of an external command).
    NotMeasured,
}

impl Verdict {
    /// The verdict's word, as the CSV's `verdict` column writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no significant change",
            Verdict::Inconclusive => "inconclusive",
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
    /// The change, percent: the Hodges–Lehmann shift of ln(values) (the median of the pairwise
    /// ln(NEW / OLD)) as 100 × (exp(shift) − 1). NaN when not measured.
    pub delta_pct: f64,
    /// The distribution-free 95 % interval of Δ% (order statistics of the pairwise ratios),
    /// when the repetitions can reach that level.
    pub ci_pct: Option<(f64, f64)>,
    /// The Mann–Whitney two-sided p-value, when both sides have repetitions.
    pub p_value: Option<f64>,
    /// Repetitions of each side that are outliers by the modified z-score (|z| > 3.5).
    pub outliers_old: Vec<f64>,
    pub outliers_new: Vec<f64>,
    /// max / min of each side's repetitions (∞ when a value is 0; NaN when empty).
    pub spread_old: f64,
    pub spread_new: f64,
    pub verdict: Verdict,
}

impl MetricDiff {
    /// The verdict as shown: the word, and for an inconclusive one the side that made it so:
    /// `inconclusive: OLD's spread is 15×`.
    pub fn verdict_text(&self) -> String {
        match self.verdict {
            Verdict::Inconclusive => {
                let (side, x) = if self.spread_old >= self.spread_new {
                    ("OLD", self.spread_old)
                } else {
                    ("NEW", self.spread_new)
                };
                let x = if x.is_finite() && x < 10.0 {
                    format!("{x:.1}")
                } else if x.is_finite() {
                    format!("{x:.0}")
                } else {
                    "unbounded".into()
                };
                format!("inconclusive: {side}'s spread is {x}×")
            }
            v => v.as_str().into(),
        }
    }
}

/// A point measured in both OLD and NEW.
#[derive(Debug, Clone, PartialEq)]
pub struct PointDiff {
    pub point: Point,
    pub mib_s: MetricDiff,
    pub p99: MetricDiff,
    pub failed_old: usize,
    pub failed_new: usize,
    /// Each side's verdict (issue 23: `ok`, `suspect (codes)`, `suspect in 2 of 5 repetitions
    /// (codes)`); `None` where its rows carry none (written before the verdict existed).
    pub verdict_old: Option<String>,
    pub verdict_new: Option<String>,
    /// Level shifts in each side's timelines: `(rep, what)` (issue 22).
    pub shifts_old: Vec<(u32, String)>,
    pub shifts_new: Vec<(u32, String)>,
}

impl PointDiff {
    pub fn metrics(&self) -> [&MetricDiff; 2] {
        [&self.mib_s, &self.p99]
    }

    /// `verdicts differ: OLD ok, NEW suspect (cache_not_disk)` when both sides were judged and
    /// their verdicts differ: then a change between them may be the trap, not the change.
    pub fn verdicts_differ(&self) -> Option<String> {
        match (&self.verdict_old, &self.verdict_new) {
            (Some(o), Some(n)) if o != n => Some(format!("verdicts differ: OLD {o}, NEW {n}")),
            _ => None,
        }
    }

    /// The judgement of `m` as shown: [`MetricDiff::verdict_text`], and a significant change
    /// between sides whose verdicts differ says so (`slower, but verdicts differ: OLD ok, NEW
    /// suspect (cache_not_disk)`): compare never calls such a change significant silently.
    pub fn judgement(&self, m: &MetricDiff) -> String {
        match (m.verdict, self.verdicts_differ()) {
            (Verdict::Faster | Verdict::Slower, Some(d)) => {
                format!("{}, but {d}", m.verdict_text())
            }
            _ => m.verdict_text(),
        }
    }
}

/// OLD vs NEW, point by point.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub matched: Vec<PointDiff>,
    pub only_old: Vec<Point>,
    pub only_new: Vec<Point>,
}

impl Comparison {
    /// Metrics significantly worse by more than `pct` percent (throughput down, latency up).
    pub fn regressions(&self, pct: f64) -> Vec<(&Point, &MetricDiff)> {
        self.matched
            .iter()
            .flat_map(|p| p.metrics().map(|m| (&p.point, m)))
            .filter(|(_, m)| m.verdict == Verdict::Slower && m.delta_pct.abs() > pct)
            .collect()
    }
}

/// max / min of a sample of values ≥ 0.
fn spread(v: &[f64]) -> f64 {
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(*x), hi.max(*x))
        });
    if v.is_empty() {
        f64::NAN
    } else if lo > 0.0 {
        hi / lo
    } else if hi > 0.0 {
        f64::INFINITY
    } else {
        1.0
    }
}

/// Compares one metric of two samples (repetitions, in the metric's unit). Values that are not
/// finite numbers ≥ 0 are left out (the loader refuses them; other callers may not).
pub fn diff_metric(metric: Metric, old: &[f64], new: &[f64]) -> MetricDiff {
    let clean = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .copied()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .collect()
    };
    let (old, new) = (clean(old), clean(new));
    let (so, sn) = (Stats::of(&old), Stats::of(&new));
    let measured = |v: &[f64]| v.iter().any(|x| *x > 0.0);
    let all_positive = |v: &[f64]| v.iter().all(|x| *x > 0.0);
    let alpha = 1.0 - LEVEL;
    let mut d = MetricDiff {
        metric,
        old: so,
        new: sn,
        delta_pct: f64::NAN,
        ci_pct: None,
        p_value: None,
        outliers_old: rank::outliers(&old),
        outliers_new: rank::outliers(&new),
        spread_old: spread(&old),
        spread_new: spread(&new),
        verdict: Verdict::NotMeasured,
    };
    if !measured(&old) || !measured(&new) {
        return d;
    }
    if old.len() < 2 || new.len() < 2 {
        // No spread on a side: no test, no interval; Δ is the ratio of the medians.
        if so.median > 0.0 && sn.median > 0.0 {
            d.delta_pct = 100.0 * ((sn.median.ln() - so.median.ln()).exp_m1());
        }
        d.verdict = Verdict::TooFewReps;
        return d;
    }
    // Ranks of ln(values): the shift is a ratio. A zero among the values (a repetition that
    // moved nothing) has no logarithm; then the shift is taken on the values themselves, as a
    // share of OLD's median.
    let log = all_positive(&old) && all_positive(&new);
    let (xo, xn): (Vec<f64>, Vec<f64>) = if log {
        (
            old.iter().map(|x| x.ln()).collect(),
            new.iter().map(|x| x.ln()).collect(),
        )
    } else {
        (old.clone(), new.clone())
    };
    let pct = |shift: f64| {
        if log {
            100.0 * shift.exp_m1()
        } else if so.median > 0.0 {
            // Below −100 % would be less than nothing.
            (100.0 * shift / so.median).max(-100.0)
        } else {
            f64::NAN
        }
    };
    let test = rank::mann_whitney(&xo, &xn, LEVEL);
    let shift = rank::hodges_lehmann(&xo, &xn, test.k);
    d.delta_pct = pct(shift.estimate);
    d.ci_pct = shift.interval.map(|(lo, hi)| (pct(lo), pct(hi)));
    d.p_value = Some(test.p_value);
    d.verdict = if rank::min_p_value(old.len(), new.len()) > alpha {
        Verdict::TooFewReps
    } else {
        let up = |better: Better| match better {
            Better::Higher => Verdict::Faster,
            Better::Lower => Verdict::Slower,
        };
        let down = |better: Better| match better {
            Better::Higher => Verdict::Slower,
            Better::Lower => Verdict::Faster,
        };
        match shift.interval {
            Some((lo, _)) if test.p_value <= alpha && lo > 0.0 => up(metric.better()),
            Some((_, hi)) if test.p_value <= alpha && hi < 0.0 => down(metric.better()),
            _ if d.spread_old.max(d.spread_new) >= SPREAD_INCONCLUSIVE => Verdict::Inconclusive,
            _ => Verdict::NoChange,
        }
    };
    d
}

/// Matches `old` and `new` on their setups: matched points and points only in OLD in OLD's
/// order, points only in NEW in NEW's order.
pub fn compare(old: &[Record], new: &[Record]) -> Comparison {
    let new_by_setup: HashMap<&Point, &Record> = new.iter().map(|n| (&n.point, n)).collect();
    let mut matched = Vec::new();
    let mut only_old = Vec::new();
    for o in old {
        match new_by_setup.get(&o.point) {
            Some(n) => matched.push(PointDiff {
                point: o.point.clone(),
                mib_s: diff_metric(Metric::MibS, &o.mib_s, &n.mib_s),
                p99: diff_metric(Metric::P99Us, &o.lat_p99_us, &n.lat_p99_us),
                failed_old: o.failed_reps,
                failed_new: n.failed_reps,
                verdict_old: o.verdicts.text(),
                verdict_new: n.verdicts.text(),
                shifts_old: o.level_shifts.clone(),
                shifts_new: n.level_shifts.clone(),
            }),
            None => only_old.push(o.point.clone()),
        }
    }
    let old_setups: std::collections::HashSet<&Point> = old.iter().map(|o| &o.point).collect();
    let only_new = new
        .iter()
        .filter(|n| !old_setups.contains(&n.point))
        .map(|n| n.point.clone())
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
            &[rec(vec![100.0, 101.0, 99.0, 100.5, 99.5])],
            &[rec(vec![95.0, 94.0, 96.0, 95.5, 94.5])],
        );
        assert_eq!(c.matched[0].mib_s.verdict, Verdict::Slower);
        assert_eq!(c.regressions(10.0).len(), 0);
        assert_eq!(c.regressions(4.0).len(), 1);
    }

    #[test]
    fn a_significant_change_between_different_verdicts_says_so() {
        let mut old = Record::sample(4096, vec![100.0, 101.0, 99.0, 100.5, 99.5], 1.0);
        let mut new = Record::sample(4096, vec![900.0, 901.0, 899.0, 900.5, 899.5], 1.0);
        old.verdicts = crate::compare::rows::Verdicts {
            judged: 5,
            suspect: 0,
            codes: vec![],
        };
        new.verdicts = crate::compare::rows::Verdicts {
            judged: 5,
            suspect: 5,
            codes: vec!["cache_not_disk".into()],
        };
        let c = compare(std::slice::from_ref(&old), std::slice::from_ref(&new));
        let p = &c.matched[0];
        assert_eq!(p.mib_s.verdict, Verdict::Faster);
        assert_eq!(
            p.judgement(&p.mib_s),
            "faster, but verdicts differ: OLD ok, NEW suspect (cache_not_disk)"
        );
        // Same verdicts, or a side never judged: the verdict alone.
        new.verdicts = old.verdicts.clone();
        let c = compare(std::slice::from_ref(&old), std::slice::from_ref(&new));
        assert_eq!(c.matched[0].judgement(&c.matched[0].mib_s), "faster");
        new.verdicts = Default::default();
        let c = compare(&[old], &[new]);
        assert_eq!(c.matched[0].verdicts_differ(), None);
    }

    /// The case of issue 19: 8 repetitions per side, OLD 74–1110 MiB/s with one outlier (median
    /// 119), NEW 15–29 MiB/s (median 21), every NEW below every OLD. Welch's t on the values said
    /// "-91.1% [-216.2%, +34.0%] no significant change".
    pub(crate) const ISSUE_19_OLD: [f64; 8] =
        [74.0, 96.0, 112.0, 117.0, 121.0, 126.0, 132.0, 1110.0];
    pub(crate) const ISSUE_19_NEW: [f64; 8] = [15.0, 17.0, 19.0, 20.0, 22.0, 22.0, 24.0, 29.0];

    #[test]
    fn a_91_percent_drop_behind_one_outlier_is_slower_and_its_interval_stays_above_minus_100() {
        let m = diff_metric(Metric::MibS, &ISSUE_19_OLD, &ISSUE_19_NEW);
        assert_eq!(m.verdict, Verdict::Slower, "{m:?}");
        let (lo, hi) = m.ci_pct.unwrap();
        assert!(
            -100.0 < lo && lo < m.delta_pct && m.delta_pct < hi && hi < 0.0,
            "{m:?}"
        );
        assert!(m.p_value.unwrap() < 0.001, "{m:?}");
        assert_eq!(m.outliers_old, vec![1110.0]);
        assert!(m.outliers_new.is_empty());
        // The mean of OLD is 236 (the outlier), its median 119: Δ follows the bulk, ~ -82 %.
        assert!((m.delta_pct + 82.0).abs() < 2.0, "{m:?}");
    }

    #[test]
    fn a_wide_spread_that_hides_the_answer_is_inconclusive_naming_the_side() {
        let old = [10.0, 150.0, 40.0, 90.0, 20.0, 120.0];
        let new = [60.0, 70.0, 65.0, 75.0, 68.0, 72.0];
        let m = diff_metric(Metric::MibS, &old, &new);
        assert_eq!(m.verdict, Verdict::Inconclusive, "{m:?}");
        assert_eq!(m.verdict_text(), "inconclusive: OLD's spread is 15×");
        // 3 against 3 can never reach p < 0.05: said so, not "no significant change".
        let m = diff_metric(Metric::MibS, &[1.0, 2.0, 3.0], &[7.0, 8.0, 9.0]);
        assert_eq!(m.verdict, Verdict::TooFewReps);
    }

    #[test]
    fn no_value_makes_the_comparison_panic_or_leave_minus_100_percent() {
        let odd = [
            1e308,
            1e307,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            0.0,
            f64::INFINITY,
            f64::NAN,
            -1.0,
        ];
        for a in odd {
            for b in odd {
                for metric in Metric::ALL {
                    let m = diff_metric(metric, &[a, b, 1.0, 2.0, 3.0], &[b, a, 4.0, 1e308, 2.0]);
                    if let Some((lo, hi)) = m.ci_pct {
                        assert!(lo >= -100.0 && lo <= hi, "{m:?}");
                    }
                    let _ = m.verdict_text();
                }
            }
        }
        let m = diff_metric(
            Metric::MibS,
            &[1e308, 1e307, 1e308],
            &[1e307, 1e308, 1e307, 1e308],
        );
        assert!(m.delta_pct.is_finite() && m.old.mean.is_finite(), "{m:?}");
    }

    /// A seeded generator (SplitMix64), so the property test below is the same on every run.
    struct Rng(u64);
    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn uniform(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform().max(1e-300), self.uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
        /// Repetitions of a benchmark: log-normal around `median` (10 % spread); a share
        /// `outlier_share` of them an outlier 2.7–12× off either way (a cache flush, a stalled
        /// device).
        fn reps(&mut self, n: usize, median: f64, outlier_share: f64) -> Vec<f64> {
            (0..n)
                .map(|_| {
                    let mut x = median * (0.10 * self.normal()).exp();
                    if self.uniform() < outlier_share {
                        let f = (1.0 + 1.5 * self.uniform()).exp();
                        x = if self.uniform() < 0.5 { x * f } else { x / f };
                    }
                    x
                })
                .collect()
        }
    }

    #[test]
    fn over_generated_samples_false_alarms_stay_at_the_level_and_a_30_percent_shift_is_found() {
        // 2000 pairs of 8 against 8 repetitions per case, without outliers and with one
        // repetition in ten an outlier. Under no change a verdict of faster/slower is a false
        // alarm: the exact test's size is 2·P(U ≤ 13) = 0.0499, so the count is
        // Binomial(2000, ≤ 0.05): mean ≤ 100, sd ≤ 9.75; the bound 130 is 3 sd above (exceeded
        // with probability < 0.2 % by any seed; this seed is fixed, so the test is
        // deterministic). A 30 % shift either way must be found in ≥ 95 % of the pairs without
        // outliers (this seed: 100 %), and in ≥ 75 % with them (this seed: 82 %): an outlier on
        // each side, in opposite directions, moves U by up to 16 of 64. Every pair where the
        // shift is not found must say "inconclusive", never "no significant change" or the
        // wrong direction.
        const CASES: usize = 2000;
        let mut rng = Rng(0x5EED_D15C_5C09_E000);
        for (outlier_share, found_at_least) in [(0.0, CASES * 95 / 100), (0.1, CASES * 75 / 100)] {
            let mut false_alarms = 0;
            let (mut slower, mut faster) = (0, 0);
            for _ in 0..CASES {
                let (a, b) = (
                    rng.reps(8, 100.0, outlier_share),
                    rng.reps(8, 100.0, outlier_share),
                );
                let m = diff_metric(Metric::MibS, &a, &b);
                if matches!(m.verdict, Verdict::Faster | Verdict::Slower) {
                    false_alarms += 1;
                }
                let (lo, hi) = m.ci_pct.unwrap();
                assert!(
                    -100.0 < lo && lo <= m.delta_pct && m.delta_pct <= hi,
                    "{m:?}"
                );
                for (median, want) in [(70.0, Verdict::Slower), (100.0 / 0.7, Verdict::Faster)] {
                    let shifted = rng.reps(8, median, outlier_share);
                    let m = diff_metric(Metric::MibS, &a, &shifted);
                    if m.verdict == want {
                        if want == Verdict::Slower {
                            slower += 1;
                        } else {
                            faster += 1;
                        }
                    } else {
                        assert_eq!(m.verdict, Verdict::Inconclusive, "{a:?} {shifted:?}");
                    }
                }
            }
            eprintln!("outliers {outlier_share}: false alarms {false_alarms}, 30% slower found {slower}, 30% faster found {faster} of {CASES}");
            assert!(
                false_alarms <= 130,
                "{false_alarms} false alarms of {CASES}"
            );
            assert!(slower >= found_at_least, "{slower} of {CASES}");
            assert!(faster >= found_at_least, "{faster} of {CASES}");
        }
    }
}
