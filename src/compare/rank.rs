//! Rank statistics for two small samples: the Mann–Whitney U test, the Hodges–Lehmann estimate
//! of the shift between them with its distribution-free confidence interval, and outliers by the
//! modified z-score.
//!
//! Why ranks and not Welch's t: repetitions of a benchmark are not normal. One repetition that
//! ran while something else flushed the page cache (1110 MiB/s among ~120) inflates a variance
//! enough to hide a 91 % slowdown where every NEW repetition was below every OLD one, and a
//! difference of means can put an interval below −100 %, which no throughput can reach. Ranks
//! see "every NEW below every OLD" as exactly that, whatever the outlier's size.
//!
//! * [`mann_whitney`] counts the pairs (OLD, NEW) where NEW is larger (ties count one half). Its
//!   p-value is exact (the distribution of U over all arrangements, the coefficients of a
//!   Gaussian binomial) for up to [`EXACT_MAX_N`] values in all and no ties, and the normal
//!   approximation with a continuity and a tie correction otherwise.
//! * [`hodges_lehmann`] is the median of the pairwise differences NEW − OLD, and its interval is
//!   the pair of order statistics of those differences the U distribution picks (Lehmann 1975,
//!   *Nonparametrics*, §2.6): it excludes zero exactly when the test rejects. The k-th difference
//!   is found without listing the m·n differences (bisection over the order of `f64` with a
//!   two-pointer count), so a point with a million repetitions costs O((m+n)·64).
//! * [`outliers`] flags values whose modified z-score 0.6745·(x − median)/MAD exceeds 3.5
//!   (Iglewicz and Hoaglin, the rule hyperfine warns with).
//!
//! Callers pass ln(values) so that the shift is a ratio: exp(shift) − 1 is the change in percent,
//! which stays inside (−100 %, +∞).

/// Up to this many values in all (and no ties) the p-value and interval are exact; beyond, the
/// counts of the U distribution outgrow the integers an `f64` holds exactly and the normal
/// approximation is within a fraction of a percent anyway.
pub const EXACT_MAX_N: usize = 50;

/// The modified z-score beyond which a value is an outlier.
pub const OUTLIER_Z: f64 = 3.5;

/// Standard normal CDF Φ(z), from a Chebyshev fit of erfc (Numerical Recipes' `erfcc`,
/// fractional error below 1.2e-7 everywhere).
pub fn normal_cdf(z: f64) -> f64 {
    let x = -z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let poly = -x * x - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    let erfc = if x >= 0.0 { erfc } else { 2.0 - erfc };
    0.5 * erfc
}

/// The `p` quantile of the standard normal distribution, 0 < p < 1 (bisection on
/// [`normal_cdf`]).
pub fn normal_quantile(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    let (mut lo, mut hi) = (-40.0, 40.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The number of arrangements of `m` OLD and `n` NEW values with each U = 0 ..= m·n (no ties):
/// the coefficients of the Gaussian binomial [m+n choose m]_q, built as
/// ∏ (1 − q^(n+i)) / (1 − q^i) for i = 1..=m.
fn u_counts(m: usize, n: usize) -> Vec<f64> {
    let (m, n) = (m.min(n), m.max(n));
    let mut c = vec![0.0; m * n + 1];
    c[0] = 1.0;
    let mut len = 1; // coefficients in use
    for i in 1..=m {
        // × (1 − q^(n+i))
        let a = n + i;
        let new_len = (len + a).min(c.len());
        for k in (a..new_len).rev() {
            c[k] -= c[k - a];
        }
        len = new_len;
        // ÷ (1 − q^i): a running sum with stride i
        for k in i..len {
            c[k] += c[k - i];
        }
    }
    c
}

/// The number of arrangements, C(m+n, m).
fn arrangements(m: usize, n: usize) -> f64 {
    let (k, t) = (m.min(n), m + n);
    (0..k).fold(1.0, |acc, i| acc * (t - i) as f64 / (i + 1) as f64)
}

/// The smallest two-sided p-value any outcome can reach with `m` and `n` values:
/// 2 / C(m+n, m). With 3 and 3 it is 0.1, so no difference can be significant at 5 %.
pub fn min_p_value(m: usize, n: usize) -> f64 {
    if m == 0 || n == 0 {
        return 1.0;
    }
    (2.0 / arrangements(m, n)).min(1.0)
}

/// The outcome of a Mann–Whitney U test of NEW against OLD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// Pairs (OLD, NEW) with NEW larger, ties counted one half; 0 ..= m·n.
    pub u: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Whether `p_value` is exact (small samples, no ties) or the normal approximation.
    pub exact: bool,
    /// Whether any value occurs in both samples or twice in one (the test then uses the normal
    /// approximation with the tie correction).
    pub ties: bool,
    /// `k` of the interval: the interval at `level` is [D(k), D(m·n + 1 − k)] of the ordered
    /// pairwise differences (1-based); 0 when no interval reaches the level.
    pub k: usize,
}

/// The Mann–Whitney U test of `new` against `old` (NaNs must be filtered out by the caller),
/// with the order statistic the two-sided `level` interval uses.
pub fn mann_whitney(old: &[f64], new: &[f64], level: f64) -> MannWhitney {
    let (m, n) = (old.len(), new.len());
    let alpha = 1.0 - level;
    let mut all: Vec<(f64, bool)> = old
        .iter()
        .map(|&v| (v, false))
        .chain(new.iter().map(|&v| (v, true)))
        .collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Mid-ranks, and Σ(t³ − t) over tie groups.
    let total = all.len();
    let mut rank_sum_new = 0.0;
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < total {
        let mut j = i + 1;
        while j < total && all[j].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i) as f64;
        let mid_rank = (i + 1 + j) as f64 / 2.0;
        rank_sum_new += mid_rank * all[i..j].iter().filter(|x| x.1).count() as f64;
        tie_term += t * t * t - t;
        i = j;
    }
    let ties = tie_term > 0.0;
    let u = rank_sum_new - (n * (n + 1)) as f64 / 2.0;
    if m == 0 || n == 0 {
        return MannWhitney {
            u,
            p_value: 1.0,
            exact: true,
            ties,
            k: 0,
        };
    }
    if !ties && total <= EXACT_MAX_N {
        let counts = u_counts(m, n);
        let all_arr = arrangements(m, n);
        let cdf = |x: usize| counts[..=x.min(counts.len() - 1)].iter().sum::<f64>() / all_arr;
        let ui = u.round() as usize;
        let lower = cdf(ui);
        let upper = 1.0 - if ui == 0 { 0.0 } else { cdf(ui - 1) };
        let p_value = (2.0 * lower.min(upper)).min(1.0);
        // k − 1 is the largest u with P(U ≤ u) ≤ α/2.
        let mut k = 0;
        let mut acc = 0.0;
        for (x, c) in counts.iter().enumerate() {
            acc += c;
            if acc / all_arr <= alpha / 2.0 + 1e-12 {
                k = x + 1;
            } else {
                break;
            }
        }
        return MannWhitney {
            u,
            p_value,
            exact: true,
            ties,
            k,
        };
    }
    let (p_value, k) = normal_approximation(u, m, n, tie_term, alpha);
    MannWhitney {
        u,
        p_value,
        exact: false,
        ties,
        k,
    }
}

/// The two-sided p-value of U and the interval's `k` by the normal approximation: mean m·n/2,
/// variance m·n/12 · ((N + 1) − Σ(t³ − t)/(N(N − 1))) over tie groups of size t, and a
/// continuity correction of ½.
fn normal_approximation(u: f64, m: usize, n: usize, tie_term: f64, alpha: f64) -> (f64, usize) {
    let mn = (m * n) as f64;
    let nn = (m + n) as f64;
    let var = mn / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
    if var.is_nan() {
        return (1.0, 0);
    }
    if var <= 0.0 {
        // Every value is the same: every pairwise difference is 0, and so is any interval.
        return (1.0, 1);
    }
    let sd = var.sqrt();
    let d = (u - mn / 2.0).abs();
    let z = (d - 0.5).max(0.0) / sd;
    let p = (2.0 * (1.0 - normal_cdf(z))).min(1.0);
    let zq = normal_quantile(1.0 - alpha / 2.0);
    // Consistent with the p-value: rejected exactly when U ≤ k − 1.
    let k = (mn / 2.0 - zq * sd + 0.5).floor();
    (p, if k >= 1.0 { k as usize } else { 0 })
}

/// Maps an `f64` to a `u64` in the same order (the IEEE total order), and back.
fn ord_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

fn from_ord_key(k: u64) -> f64 {
    if k >> 63 == 1 {
        f64::from_bits(k & !(1 << 63))
    } else {
        f64::from_bits(!k)
    }
}

/// How many differences `new[j] − old[i]` are ≤ `t` (both sorted ascending).
fn count_at_most(old: &[f64], new: &[f64], t: f64) -> usize {
    // For each OLD value (ascending), the NEW values with new − old ≤ t are a prefix that grows.
    let mut j = 0;
    let mut count = 0;
    for &o in old {
        while j < new.len() && new[j] - o <= t {
            j += 1;
        }
        count += j;
    }
    count
}

/// The k-th smallest (1-based) of the differences `new[j] − old[i]` (both sorted ascending,
/// finite), found by bisection over the order of `f64`: 64 counts of O(m+n) each.
pub fn kth_difference(old: &[f64], new: &[f64], k: usize) -> f64 {
    let lo_v = new[0] - old[old.len() - 1];
    let hi_v = new[new.len() - 1] - old[0];
    let (mut lo, mut hi) = (ord_key(lo_v), ord_key(hi_v));
    // Invariant: count(≤ from_ord_key(hi)) ≥ k; find the smallest such key.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if count_at_most(old, new, from_ord_key(mid)) >= k {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    from_ord_key(lo)
}

/// The Hodges–Lehmann estimate of the shift NEW − OLD and its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shift {
    /// The median of the m·n pairwise differences NEW − OLD.
    pub estimate: f64,
    /// The distribution-free interval [D(k), D(m·n + 1 − k)], when `k` ≥ 1.
    pub interval: Option<(f64, f64)>,
}

/// The Hodges–Lehmann shift of `new` against `old` (finite values, both non-empty) with the
/// interval of order `k` from [`mann_whitney`].
pub fn hodges_lehmann(old: &[f64], new: &[f64], k: usize) -> Shift {
    let sorted = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        v
    };
    let (o, n) = (sorted(old), sorted(new));
    let mn = o.len() * n.len();
    let estimate = if mn % 2 == 1 {
        kth_difference(&o, &n, mn / 2 + 1)
    } else {
        let a = kth_difference(&o, &n, mn / 2);
        let b = kth_difference(&o, &n, mn / 2 + 1);
        a / 2.0 + b / 2.0
    };
    let interval = (k >= 1 && k <= mn + 1 - k).then(|| {
        (
            kth_difference(&o, &n, k),
            kth_difference(&o, &n, mn + 1 - k),
        )
    });
    Shift { estimate, interval }
}

/// The median of a sample (any order; empty gives NaN).
fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        s[n / 2 - 1] / 2.0 + s[n / 2] / 2.0
    }
}

/// The values of `v` that are outliers by the modified z-score (|0.6745·(x − median)/MAD| >
/// [`OUTLIER_Z`]), in the order given. When more than half the values are equal (MAD = 0), every
/// value that differs from the median is one. Fewer than three values have no outliers.
pub fn outliers(v: &[f64]) -> Vec<f64> {
    outlier_scores(v).into_iter().map(|(i, _)| v[i]).collect()
}

/// The outliers of `v` as [`outliers`] finds them, by index in `v` with each one's modified
/// z-score |0.6745·(x − median)/MAD| (infinite when MAD = 0), so a caller can name the
/// repetition, its value and by how much it passed the rule.
pub fn outlier_scores(v: &[f64]) -> Vec<(usize, f64)> {
    if v.len() < 3 {
        return Vec::new();
    }
    let med = median(v);
    let dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&dev);
    dev.iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let z = if mad > 0.0 {
                0.6745 * d / mad
            } else if *d > 0.0 {
                f64::INFINITY
            } else {
                0.0
            };
            (z > OUTLIER_Z).then_some((i, z))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_u_distribution_matches_counting_every_arrangement() {
        // Brute force: every choice of which m of the m+n ranks are OLD.
        for (m, n) in [(1, 1), (2, 3), (3, 3), (4, 5), (5, 5)] {
            let total = m + n;
            let mut want = vec![0.0; m * n + 1];
            for mask in 0u32..(1 << total) {
                if mask.count_ones() as usize != m {
                    continue;
                }
                // U = pairs (old, new) with new above old.
                let mut u = 0;
                for a in 0..total {
                    for b in 0..total {
                        if mask >> a & 1 == 1 && mask >> b & 1 == 0 && b > a {
                            u += 1;
                        }
                    }
                }
                want[u] += 1.0;
            }
            assert_eq!(u_counts(m, n), want, "{m} {n}");
            assert_eq!(want.iter().sum::<f64>(), arrangements(m, n));
        }
    }

    #[test]
    fn critical_values_match_the_published_table() {
        // Two-sided α = 0.05: reject when U ≤ c (Mann–Whitney tables): n1 = n2 = 5: 2,
        // 8: 13, 10: 23; 6 and 9: 10. k − 1 is that c.
        for (m, n, c) in [(5, 5, 2), (8, 8, 13), (10, 10, 23), (6, 9, 10)] {
            let old: Vec<f64> = (0..m).map(|i| i as f64).collect();
            let new: Vec<f64> = (0..n).map(|i| 0.5 + i as f64).collect();
            let t = mann_whitney(&old, &new, 0.95);
            assert_eq!(t.k, c + 1, "{m} {n}");
        }
        // 3 and 3: no arrangement reaches 5 %.
        let t = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.95);
        assert_eq!(t.k, 0);
        assert!((t.p_value - 0.1).abs() < 1e-12, "{t:?}");
        assert!(min_p_value(3, 3) > 0.05 && min_p_value(4, 4) < 0.05);
    }

    #[test]
    fn separated_samples_give_the_smallest_p_and_the_normal_approximation_agrees_on_large_ones() {
        let old = [1.0, 2.0, 3.0, 4.0];
        let new = [5.0, 6.0, 7.0, 8.0];
        let t = mann_whitney(&old, &new, 0.95);
        assert_eq!(t.u, 16.0);
        assert!((t.p_value - 2.0 / 70.0).abs() < 1e-12 && t.exact);
        // 30 against 30: exact and approximate p agree to a few thousandths.
        let old: Vec<f64> = (0..30).map(|i| (i * 7 % 30) as f64).collect();
        let new: Vec<f64> = (0..30).map(|i| (i * 11 % 30) as f64 + 4.5).collect();
        let approx = mann_whitney(&old, &new, 0.95);
        assert!(!approx.exact);
        // 25 against 25 (exact) and the approximation of the same U agree closely, on p and k.
        let (o, n) = (&old[..25], &new[..25]);
        let e = mann_whitney(o, n, 0.95);
        let (p, k) = normal_approximation(e.u, 25, 25, 0.0, 0.05);
        assert!(e.exact);
        assert!((e.p_value - p).abs() < 0.005, "{e:?} {p}");
        assert!(e.k.abs_diff(k) <= 1, "{e:?} {k}");
        assert!((normal_cdf(1.959_963_985) - 0.975).abs() < 1e-6);
        // All values equal: no change, and an interval of exactly zero.
        let t = mann_whitney(&[7.5; 8], &[7.5; 8], 0.95);
        assert_eq!((t.p_value, t.k), (1.0, 1));
        let s = hodges_lehmann(&[7.5; 8], &[7.5; 8], t.k);
        assert_eq!((s.estimate, s.interval), (0.0, Some((0.0, 0.0))));
        assert!((normal_quantile(0.975) - 1.959_963_985).abs() < 1e-6);
    }

    #[test]
    fn the_kth_difference_is_the_kth_of_every_pairwise_difference() {
        let old = [1.5, -2.0, 3.25, 7.0, 7.0];
        let new = [0.0, 4.0, 4.0, 10.5];
        let mut all: Vec<f64> = old
            .iter()
            .flat_map(|o| new.iter().map(move |n| n - o))
            .collect();
        all.sort_by(|a, b| a.total_cmp(b));
        let mut o = old.to_vec();
        o.sort_by(|a, b| a.total_cmp(b));
        let mut n = new.to_vec();
        n.sort_by(|a, b| a.total_cmp(b));
        for k in 1..=all.len() {
            assert_eq!(kth_difference(&o, &n, k), all[k - 1], "k = {k}");
        }
        let s = hodges_lehmann(&old, &new, 3);
        assert_eq!(s.estimate, (all[9] + all[10]) / 2.0);
        assert_eq!(s.interval, Some((all[2], all[17])));
    }

    #[test]
    fn one_wild_value_is_an_outlier_and_ordinary_spread_is_not() {
        let old = [74.0, 96.0, 112.0, 117.0, 121.0, 126.0, 132.0, 1110.0];
        assert_eq!(outliers(&old), vec![1110.0]);
        assert!(outliers(&[100.0, 110.0, 90.0, 105.0, 95.0]).is_empty());
        assert_eq!(outliers(&[5.0, 5.0, 5.0, 9.0]), vec![9.0]);
        assert!(outliers(&[1.0, 100.0]).is_empty());
    }
}
