//! Matching OLD and NEW point by point and judging each difference.
//!
//! A point of OLD matches the point of NEW with the same [`Point`] (a hash map of NEW's points,
//! so matching a million points costs a million look-ups, not a million squared); points found
//! on one side only are kept in [`Comparison::only_old`] / [`Comparison::only_new`] in their
//! input order so the report can list them. Two chosen points of different setups are compared
//! the same way through [`compare_pairs`] (see [`super::pair`]).
//!
//! For each matched point and each metric (throughput, p99 latency) the verdict answers two
//! questions from the same rank statistics ([`super::rank`]): the Hodges–Lehmann estimate of the
//! shift of ln(values), with its distribution-free 95 % interval, as a percentage
//! 100 · (exp(shift) − 1) that cannot leave (−100 %, +∞).
//! * **Did it change?** When the Mann–Whitney U test rejects at 5 % and the interval lies
//!   entirely on one side of zero: faster or slower.
//! * **Is it the same?** When the whole interval lies inside ±[`Settings::margin_pct`] (an
//!   equivalence test, TOST, done with the 95 % interval: each one-sided test at 2.5 %, stricter
//!   than the usual 90 % interval): no change (within ±X %).
//! * Neither: inconclusive, with why: too few repetitions (and about how many would decide at
//!   this spread) or a spread too wide for the margin (the spread given).
//!
//! Outliers (modified z-score > 3.5, [`Outlier`]) are named with their repetition, value and
//! score, and left out of the *spread* a verdict gives as its reason (max / min, which one value
//! decides) — at most a quarter of a side and from five repetitions up; more than that are kept:
//! a side that is a quarter outliers is not one steady condition, and its spread says so. They
//! are never left out of the test or the interval: ranks already bound what one value can do
//! (one of eight moves at most 8 of the 64 pairwise ratios), and trimming one side's extremes
//! shifts its ranks: over the property test's 2000 A/A pairs of 8, dropping the rule's outliers
//! before the test raised the false alarms from 97 (4.9 %) to 147 (7.4 %).

use super::load::{Point, Record};
use super::rank;
use crate::measure::stats::Stats;
use std::collections::HashMap;

/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;

/// The default equivalence margin, percent: "no change" means the 95 % interval of Δ lies inside
/// ±5 %. Why 5: with 8 repetitions a side the interval's half-width is about the repetitions'
/// own relative spread (σ), so ±5 % is reachable on a quiet machine (warm reads repeat within
/// 1–3 %, cold ones within 2–5 %) while a margin of 1 % would need σ below 1 % or a hundred
/// repetitions and so never say "no change"; and a change under 5 % is below what a storage
/// setting (read-ahead, scheduler, block size, O_DIRECT) is worth acting on — those move
/// throughput by tens of percent. A real change smaller than the margin is still called
/// faster/slower when its interval excludes zero.
pub const DEFAULT_MARGIN_PCT: f64 = 5.0;

/// From this many repetitions a side up, the outlier rule may leave repetitions out of the spread.
pub const MIN_REPS_TO_DROP: usize = 5;

/// At most this share of a side's repetitions is left out of the spread as outliers.
pub const MAX_DROPPED_SHARE: f64 = 0.25;

/// Above this many repetitions a side, "more repetitions" is no longer the advice: the spread is
/// what to fix (a quieter machine, longer repetitions).
pub const PRACTICAL_REPS: usize = 30;

/// How compare judges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// "No change" when the interval of Δ lies inside ±this, percent.
    pub margin_pct: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            margin_pct: DEFAULT_MARGIN_PCT,
        }
    }
}

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

/// The judgement on one metric of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    /// The whole interval of Δ lies inside ±[`MetricDiff::margin_pct`]: equivalent.
    NoChange,
    /// Neither a change nor equivalence: the interval spans zero and reaches past the margin.
    /// [`MetricDiff::verdict_text`] says why (too few repetitions, or the spread).
    Inconclusive,
    /// Fewer repetitions than the test needs to reach its level on any outcome (fewer than two
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
            Verdict::NoChange => "no change",
            Verdict::Inconclusive => "inconclusive",
            Verdict::TooFewReps => "too few repetitions",
            Verdict::NotMeasured => "not measured",
        }
    }
}

/// A repetition the outlier rule flags.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    /// Which repetition: its `rep` number where the input numbers its repetitions uniquely,
    /// else its place in the input (1-based).
    pub rep: u32,
    /// Whether `rep` is the place in the input rather than the `rep` column.
    pub rep_is_position: bool,
    /// Its value, in the metric's unit.
    pub value: f64,
    /// Its modified z-score (∞ when more than half the side is one value).
    pub z: f64,
    /// Left out of the spread (max / min) the verdict gives; never out of the test or interval.
    pub dropped: bool,
}

impl Outlier {
    /// `rep 3`, or `#3 in input order` where the input does not number its repetitions.
    pub fn name(&self) -> String {
        if self.rep_is_position {
            format!("#{} in input order", self.rep)
        } else {
            format!("rep {}", self.rep)
        }
    }
}

/// One metric of one matched point.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricDiff {
    pub metric: Metric,
    /// Every successful repetition of each side (outliers included): what was measured and
    /// judged.
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
    /// Repetitions of each side the outlier rule flags (|modified z| > 3.5), with whether they
    /// were left out of the spread.
    pub outliers_old: Vec<Outlier>,
    pub outliers_new: Vec<Outlier>,
    /// max / min of each side's repetitions, the dropped outliers left out (∞ when a value is 0;
    /// NaN when empty).
    pub spread_old: f64,
    pub spread_new: f64,
    /// The equivalence margin the verdict used, percent.
    pub margin_pct: f64,
    /// For an inconclusive verdict: about how many repetitions a side would decide it (a change
    /// or no change), if the estimate and the spread stay as they are.
    pub reps_to_decide: Option<usize>,
    pub verdict: Verdict,
}

/// `1.3×`, `15×`, `unbounded`.
fn spread_text(x: f64) -> String {
    if x.is_finite() && x < 10.0 {
        format!("{x:.1}×")
    } else if x.is_finite() {
        format!("{x:.0}×")
    } else {
        "unbounded".into()
    }
}

/// `±5%`, `±2.5%`.
pub fn margin_text(pct: f64) -> String {
    format!("±{pct}%")
}

impl MetricDiff {
    /// The outliers left out of the spread, OLD's then NEW's, with their side.
    pub fn dropped(&self) -> impl Iterator<Item = (&'static str, &Outlier)> + '_ {
        self.outliers_old
            .iter()
            .map(|o| ("OLD", o))
            .chain(self.outliers_new.iter().map(|o| ("NEW", o)))
            .filter(|(_, o)| o.dropped)
    }

    /// Whether more repetitions are what this metric needs: too few to reach the level at all,
    /// or inconclusive where about [`PRACTICAL_REPS`] a side or fewer would decide.
    pub fn wants_more_reps(&self) -> bool {
        match self.verdict {
            Verdict::TooFewReps => true,
            Verdict::Inconclusive => self.reps_to_decide.is_some_and(|n| n <= PRACTICAL_REPS),
            _ => false,
        }
    }

    /// The verdict as shown: `no change (within ±5%)`; `inconclusive: too few repetitions (8 a
    /// side; about 18 would decide; spread OLD 1.2×, NEW 1.3×)`; `inconclusive: spread too wide
    /// for ±5% (OLD 1.9×, NEW 2.3×; about 120 repetitions a side would be needed)`; `faster
    /// (but within ±5%)` for a real change smaller than the margin.
    pub fn verdict_text(&self) -> String {
        let margin = margin_text(self.margin_pct);
        let inside = self
            .ci_pct
            .is_some_and(|(lo, hi)| lo >= -self.margin_pct && hi <= self.margin_pct);
        let spreads = format!(
            "OLD {}, NEW {}",
            spread_text(self.spread_old),
            spread_text(self.spread_new)
        );
        let reps = if self.old.n == self.new.n {
            format!("{} a side", self.old.n)
        } else {
            format!("{} and {}", self.old.n, self.new.n)
        };
        match self.verdict {
            Verdict::Faster | Verdict::Slower if inside => {
                format!("{} (but within {margin})", self.verdict.as_str())
            }
            Verdict::NoChange => format!("no change (within {margin})"),
            Verdict::Inconclusive => match self.reps_to_decide {
                Some(n) if n <= PRACTICAL_REPS => format!(
                    "inconclusive: too few repetitions ({reps}; about {n} would decide; spread {spreads})"
                ),
                Some(n) if n > 1000 => format!(
                    "inconclusive: spread too wide for {margin} ({spreads}; more than 1000 repetitions a side would be needed)"
                ),
                Some(n) => format!(
                    "inconclusive: spread too wide for {margin} ({spreads}; about {n} repetitions a side would be needed)"
                ),
                None => format!("inconclusive: spread {spreads}"),
            },
            Verdict::TooFewReps => format!(
                "too few repetitions ({reps}; 4 a side is the least that can decide at 5%)"
            ),
            v => v.as_str().into(),
        }
    }
}

/// A point measured in both OLD and NEW (or, for a pair, OLD's point and its partner in NEW).
#[derive(Debug, Clone, PartialEq)]
pub struct PointDiff {
    pub point: Point,
    /// NEW's setup where it differs from OLD's (a chosen pair, [`compare_pairs`]).
    pub new_point: Option<Point>,
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

    /// The point's label: OLD's setup, and for a pair the settings NEW differs in
    /// (`x: read pread 4K sequential warm T1 vs block_size 64K`).
    pub fn label(&self) -> String {
        match &self.new_point {
            Some(n) => {
                let d: Vec<String> = super::pair::differences(&self.point, n)
                    .into_iter()
                    .map(|d| format!("{} {}", d.key, d.new))
                    .collect();
                format!("{} vs {}", self.point.label(), d.join(", "))
            }
            None => self.point.label(),
        }
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
    /// For chosen pairs of different setups: what A and B are (`A = block_size 4K (OLD), B =
    /// block_size 64K (NEW)`), printed above the table.
    pub pairing: Option<String>,
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

/// One side of a metric: its clean values, the outliers the rule flags (named), and the values
/// its spread is taken over.
struct Side {
    values: Vec<f64>,
    outliers: Vec<Outlier>,
    spread_values: Vec<f64>,
}

impl Side {
    /// Values that are not finite numbers ≥ 0 are left out (the loader refuses them; other
    /// callers may not). `reps` names each value (the `rep` column); when it does not, or its
    /// numbers repeat (several inputs pooled), a value is named by its place.
    fn of(values: &[f64], reps: &[u32]) -> Side {
        let named = reps.len() == values.len() && {
            let mut r: Vec<u32> = reps.to_vec();
            r.sort_unstable();
            r.dedup();
            r.len() == reps.len() && r.first().is_some_and(|x| *x > 0)
        };
        let (values, names): (Vec<f64>, Vec<(u32, bool)>) = values
            .iter()
            .enumerate()
            .filter(|(_, x)| x.is_finite() && **x >= 0.0)
            .map(|(i, x)| {
                let name = if named {
                    (reps[i], false)
                } else {
                    (i as u32 + 1, true)
                };
                (*x, name)
            })
            .unzip();
        let scores = rank::outlier_scores(&values);
        let n = values.len();
        let drop = n >= MIN_REPS_TO_DROP
            && !scores.is_empty()
            && scores.len() as f64 <= MAX_DROPPED_SHARE * n as f64;
        let outliers: Vec<Outlier> = scores
            .iter()
            .map(|&(i, z)| Outlier {
                rep: names[i].0,
                rep_is_position: names[i].1,
                value: values[i],
                z,
                dropped: drop,
            })
            .collect();
        let spread_values = values
            .iter()
            .enumerate()
            .filter(|(i, _)| !drop || !scores.iter().any(|(j, _)| j == i))
            .map(|(_, x)| *x)
            .collect();
        Side {
            values,
            outliers,
            spread_values,
        }
    }
}

/// Compares one metric of two samples (repetitions, in the metric's unit) with the default
/// settings and the repetitions named by their place.
pub fn diff_metric(metric: Metric, old: &[f64], new: &[f64]) -> MetricDiff {
    judge(metric, (old, &[]), (new, &[]), &Settings::default())
}

/// About how many repetitions a side would make an interval of half-width `w` around `c`
/// (percent) decide, at margin `x`: the half-width shrinks as √(1/m + 1/n); it decides when it
/// excludes zero (w′ < |c|) or fits inside ±x (w′ ≤ x − |c|), whichever is wider.
fn reps_to_decide(c: f64, lo: f64, hi: f64, x: f64, m: usize, n: usize) -> Option<usize> {
    let w = (hi - lo) / 2.0;
    let target = (x - c.abs()).max(c.abs());
    if !(w > 0.0 && target > 0.0 && w.is_finite() && c.is_finite()) {
        return None;
    }
    let inv = 1.0 / m as f64 + 1.0 / n as f64;
    let need = 2.0 / (inv * (target / w).powi(2));
    let floor = m.max(n) + 1;
    Some(if need.is_finite() && need < 1e6 {
        (need.ceil() as usize).max(floor)
    } else {
        1_000_000
    })
}

/// Compares one metric of two sides, each `(values, rep numbers)` (the rep numbers may be empty).
pub fn judge(
    metric: Metric,
    old: (&[f64], &[u32]),
    new: (&[f64], &[u32]),
    settings: &Settings,
) -> MetricDiff {
    let (side_old, side_new) = (Side::of(old.0, old.1), Side::of(new.0, new.1));
    let (old, new) = (&side_old.values, &side_new.values);
    let (so, sn) = (Stats::of(old), Stats::of(new));
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
        outliers_old: side_old.outliers.clone(),
        outliers_new: side_new.outliers.clone(),
        spread_old: spread(&side_old.spread_values),
        spread_new: spread(&side_new.spread_values),
        margin_pct: settings.margin_pct,
        reps_to_decide: None,
        verdict: Verdict::NotMeasured,
    };
    if !measured(old) || !measured(new) {
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
    let log = all_positive(old) && all_positive(new);
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
    let x = settings.margin_pct;
    d.verdict = match d.ci_pct {
        _ if rank::min_p_value(old.len(), new.len()) > alpha => Verdict::TooFewReps,
        None => Verdict::TooFewReps,
        Some((lo, hi)) => {
            let (up, down) = match metric.better() {
                Better::Higher => (Verdict::Faster, Verdict::Slower),
                Better::Lower => (Verdict::Slower, Verdict::Faster),
            };
            if test.p_value <= alpha && lo > 0.0 {
                up
            } else if test.p_value <= alpha && hi < 0.0 {
                down
            } else if lo >= -x && hi <= x {
                Verdict::NoChange
            } else {
                d.reps_to_decide = reps_to_decide(d.delta_pct, lo, hi, x, old.len(), new.len());
                Verdict::Inconclusive
            }
        }
    };
    d
}

/// Judges one point of OLD against one of NEW (the same setup, or a chosen pair).
fn diff_point(o: &Record, n: &Record, settings: &Settings) -> PointDiff {
    PointDiff {
        point: o.point.clone(),
        new_point: (o.point != n.point).then(|| n.point.clone()),
        mib_s: judge(
            Metric::MibS,
            (&o.mib_s, &o.reps),
            (&n.mib_s, &n.reps),
            settings,
        ),
        p99: judge(
            Metric::P99Us,
            (&o.lat_p99_us, &o.reps),
            (&n.lat_p99_us, &n.reps),
            settings,
        ),
        failed_old: o.failed_reps,
        failed_new: n.failed_reps,
        verdict_old: o.verdicts.text(),
        verdict_new: n.verdicts.text(),
        shifts_old: o.level_shifts.clone(),
        shifts_new: n.level_shifts.clone(),
    }
}

/// Matches `old` and `new` on their setups with the default settings.
pub fn compare(old: &[Record], new: &[Record]) -> Comparison {
    compare_with(old, new, &Settings::default())
}

/// Matches `old` and `new` on their setups: matched points and points only in OLD in OLD's
/// order, points only in NEW in NEW's order.
pub fn compare_with(old: &[Record], new: &[Record], settings: &Settings) -> Comparison {
    let new_by_setup: HashMap<&Point, &Record> = new.iter().map(|n| (&n.point, n)).collect();
    let mut matched = Vec::new();
    let mut only_old = Vec::new();
    for o in old {
        match new_by_setup.get(&o.point) {
            Some(n) => matched.push(diff_point(o, n, settings)),
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
        pairing: None,
    }
}

/// Judges chosen pairs of points (OLD's point, its partner in NEW) whose setups may differ;
/// `pairing` says what the two sides are.
pub fn compare_pairs(
    pairs: &[(&Record, &Record)],
    only_old: Vec<Point>,
    only_new: Vec<Point>,
    pairing: String,
    settings: &Settings,
) -> Comparison {
    Comparison {
        matched: pairs
            .iter()
            .map(|(o, n)| diff_point(o, n, settings))
            .collect(),
        only_old,
        only_new,
        pairing: Some(pairing),
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
    fn overlapping_noise_wider_than_the_margin_is_inconclusive_saying_how_many_reps_would_decide() {
        let old = [100.0, 105.0, 95.0, 102.5, 97.5];
        let new = [101.0, 97.0, 104.0, 99.0, 100.5];
        let m = diff_metric(Metric::MibS, &old, &new);
        assert_eq!(m.verdict, Verdict::Inconclusive, "{m:?}");
        let n = m.reps_to_decide.unwrap();
        assert!((6..=PRACTICAL_REPS).contains(&n), "{m:?}");
        assert!(m.wants_more_reps());
        assert_eq!(
            m.verdict_text(),
            format!("inconclusive: too few repetitions (5 a side; about {n} would decide; spread OLD 1.1×, NEW 1.1×)")
        );
        // Wider noise with as few repetitions: the spread is the reason.
        let old = [100.0, 110.0, 90.0, 105.0, 95.0];
        let new = [102.0, 93.0, 108.0, 99.0, 101.0];
        let m = diff_metric(Metric::MibS, &old, &new);
        assert!(
            m.verdict_text()
                .starts_with("inconclusive: spread too wide for ±5% (OLD 1.2×, NEW 1.2×; about "),
            "{m:?}"
        );
    }

    /// `n` repetitions around `median`, each within ±`pct` % (a fixed pattern, no randomness).
    fn steady(n: usize, median: f64, pct: f64) -> Vec<f64> {
        (0..n)
            .map(|i| {
                median * (1.0 + pct / 100.0 * ((i * 5 % n) as f64 / (n - 1) as f64 * 2.0 - 1.0))
            })
            .collect()
    }

    #[test]
    fn a_stable_a_a_is_no_change_within_the_margin_and_a_tighter_margin_is_inconclusive() {
        let (a, b) = (steady(8, 100.0, 1.0), steady(8, 100.2, 1.0));
        let m = diff_metric(Metric::MibS, &a, &b);
        assert_eq!(m.verdict, Verdict::NoChange, "{m:?}");
        assert_eq!(m.verdict_text(), "no change (within ±5%)");
        let (lo, hi) = m.ci_pct.unwrap();
        assert!(-5.0 <= lo && hi <= 5.0 && lo < 0.0 && hi > 0.0, "{m:?}");
        // The same data, asked to within ±0.5 %: not enough to say so.
        let tight = judge(
            Metric::MibS,
            (&a, &[]),
            (&b, &[]),
            &Settings { margin_pct: 0.5 },
        );
        assert_eq!(tight.verdict, Verdict::Inconclusive, "{tight:?}");
        assert!(tight.verdict_text().contains("±0.5%") || tight.verdict_text().contains("too few"));
    }

    #[test]
    fn a_real_change_smaller_than_the_margin_is_still_faster_and_says_so() {
        let m = diff_metric(Metric::MibS, &steady(8, 100.0, 0.2), &steady(8, 102.0, 0.2));
        assert_eq!(m.verdict, Verdict::Faster, "{m:?}");
        assert_eq!(m.verdict_text(), "faster (but within ±5%)");
        let m = diff_metric(Metric::MibS, &steady(8, 100.0, 1.0), &steady(8, 110.0, 1.0));
        assert_eq!(m.verdict_text(), "faster");
    }

    #[test]
    fn the_reps_to_decide_scale_the_interval_by_the_square_root_of_the_counts() {
        // Centred, ±10 % with 8 a side; ±5 % needs half the width: 4× the repetitions.
        assert_eq!(reps_to_decide(0.0, -10.0, 10.0, 5.0, 8, 8), Some(32));
        // Centred on −8 % with ±10 %: excluding zero needs w′ < 8, i.e. (10/8)² × 8 = 12.5.
        assert_eq!(reps_to_decide(-8.0, -18.0, 2.0, 5.0, 8, 8), Some(13));
        // Never fewer than one more than there are.
        assert_eq!(reps_to_decide(0.0, -5.1, 5.1, 5.0, 8, 8), Some(9));
        assert_eq!(reps_to_decide(0.0, 0.0, 0.0, 5.0, 8, 8), None);
    }

    #[test]
    fn an_outlier_is_named_by_its_rep_and_left_out_of_the_spread_unless_a_quarter_of_the_side_is() {
        let old = [120.0, 118.0, 121.0, 119.0, 30.0, 122.0, 120.5, 119.5];
        let new = [119.0, 121.0, 120.0, 118.5, 121.5, 119.5, 120.5, 120.0];
        let reps: Vec<u32> = (11..=18).collect();
        let m = judge(
            Metric::MibS,
            (&old, &reps),
            (&new, &reps),
            &Settings::default(),
        );
        assert_eq!(m.outliers_old.len(), 1, "{m:?}");
        let o = &m.outliers_old[0];
        assert_eq!(
            (o.rep, o.rep_is_position, o.value, o.dropped),
            (15, false, 30.0, true)
        );
        assert!(o.z > rank::OUTLIER_Z && o.name() == "rep 15", "{o:?}");
        // The 30 is not in the spread; ranks keep it in the test and the sides are still the
        // same within the margin.
        assert!(m.spread_old < 1.1, "{m:?}");
        assert_eq!(m.verdict, Verdict::NoChange, "{m:?}");
        // Repeated rep numbers (pooled inputs) name it by its place.
        let m = judge(
            Metric::MibS,
            (&old, &[1; 8]),
            (&new, &[]),
            &Settings::default(),
        );
        assert_eq!(m.outliers_old[0].name(), "#5 in input order");
        // Three of eight: too many to drop, kept, and the spread shows them.
        let old = [120.0, 30.0, 121.0, 119.0, 30.0, 122.0, 30.5, 119.5];
        let old = [
            old[0], old[2], old[3], old[5], old[7], 120.2, 30.0, 30.5, 31.0,
        ];
        let m = judge(Metric::MibS, (&old, &[]), (&new, &[]), &Settings::default());
        assert!(m.outliers_old.iter().all(|o| !o.dropped), "{m:?}");
        assert!(m.spread_old > 3.0, "{m:?}");
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
        let o = &m.outliers_old[0];
        assert_eq!(
            (m.outliers_old.len(), o.value, o.dropped),
            (1, 1110.0, true)
        );
        assert_eq!(o.name(), "#8 in input order");
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
        let n = m.reps_to_decide.unwrap();
        assert!(n > 1000 && !m.wants_more_reps(), "{m:?}");
        assert_eq!(
            m.verdict_text(),
            "inconclusive: spread too wide for ±5% (OLD 15×, NEW 1.2×; more than 1000 repetitions a side would be needed)"
        );
        // Half that spread: a count to aim for, past what more repetitions should fix.
        let old = [40.0, 80.0, 55.0, 70.0, 45.0, 75.0];
        let m = diff_metric(Metric::MibS, &old, &new);
        let n = m.reps_to_decide.unwrap();
        assert!((PRACTICAL_REPS + 1..=1000).contains(&n), "{m:?}");
        assert_eq!(
            m.verdict_text(),
            format!("inconclusive: spread too wide for ±5% (OLD 2.0×, NEW 1.2×; about {n} repetitions a side would be needed)")
        );
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

    #[test]
    fn over_generated_samples_no_change_is_said_of_a_steady_a_a_and_rarely_of_a_shift_at_the_margin(
    ) {
        // The equivalence side of the verdict, 2000 pairs of 8 against 8 per case, log-normal
        // with 2 % spread (a quiet machine's warm reads). A true shift of exactly the margin
        // (±5 %) is where "no change" must be rare: each one-sided test is at 2.5 %, so at most
        // 2.5 % of the pairs (50 of 2000; Binomial sd 7, the bound 80 is 4 sd above). With no
        // shift it should be the usual answer (this seed: see the eprintln; the bound asks 90 %).
        const CASES: usize = 2000;
        let mut rng = Rng(0xE0_1BA1_A9CE);
        let mut reps = |n: usize, median: f64| -> Vec<f64> {
            (0..n)
                .map(|_| median * (0.02 * rng.normal()).exp())
                .collect()
        };
        let (mut same, mut at_margin) = (0, 0);
        for _ in 0..CASES {
            let a = reps(8, 100.0);
            if diff_metric(Metric::MibS, &a, &reps(8, 100.0)).verdict == Verdict::NoChange {
                same += 1;
            }
            for median in [105.0, 95.0] {
                let m = diff_metric(Metric::MibS, &a, &reps(8, median));
                if m.verdict == Verdict::NoChange {
                    at_margin += 1;
                }
            }
        }
        eprintln!(
            "A/A no change {same} of {CASES}; shifted by the margin, no change {at_margin} of {}",
            2 * CASES
        );
        assert!(same >= CASES * 90 / 100, "{same} of {CASES}");
        assert!(at_margin <= 2 * 80, "{at_margin} of {}", 2 * CASES);
    }
}
