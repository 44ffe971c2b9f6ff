//! Welch's t interval for the difference of two means, with a Student t quantile of our own.
//!
//! `compare` judges with ranks now ([`super::rank`]); this stays for callers of the interval.
//!
//! Why Welch and not a bootstrap: a sweep point has few repetitions (3 to 10 is typical). A
//! percentile bootstrap over 5 values can only ever produce a handful of distinct resampled means,
//! so its 95 % interval is too narrow and claims differences that are noise; Welch's interval is
//! exact for normal data, keeps its coverage well for small samples, and does not assume the two
//! runs have the same spread (a cold read is noisier than a warm one). The t quantile is computed
//! from the regularized incomplete beta function (Lentz's continued fraction, as in Numerical
//! Recipes) and inverted by bisection, so fractional Welch–Satterthwaite degrees of freedom are
//! handled exactly rather than rounded to a table entry.

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, 9 terms; ~15 significant digits).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(π x).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=500 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b).
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0, may be fractional).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, x);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom, for 0.5 ≤ p < 1 (bisection on
/// [`t_cdf`] to 1e-12; the CDF is monotonic, so this cannot fail to converge). NaN outside that
/// domain (a NaN `df` from overflowing variances included), never a panic.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !((0.5..1.0).contains(&p) && df > 0.0) {
        return f64::NAN;
    }
    let mut hi = 1.0;
    while t_cdf(hi, df) < p {
        hi *= 2.0;
        if hi > 1e12 {
            return f64::INFINITY;
        }
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Mean, sample variance and count of a sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    pub n: usize,
    pub mean: f64,
    /// Sample variance (n - 1 in the denominator).
    pub var: f64,
}

impl Moments {
    pub fn of(values: &[f64]) -> Self {
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n.max(1) as f64;
        let var = if n > 1 {
            values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Moments { n, mean, var }
    }
}

/// A confidence interval of NEW − OLD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffInterval {
    /// Difference of the means, NEW − OLD.
    pub diff: f64,
    pub low: f64,
    pub high: f64,
    /// Welch–Satterthwaite degrees of freedom (infinite when both samples are constant).
    pub df: f64,
}

/// Welch's two-sided `level` (e.g. 0.95) confidence interval of mean(new) − mean(old); `None`
/// when either sample has fewer than two values (no spread, no interval).
pub fn welch_interval(old: &[f64], new: &[f64], level: f64) -> Option<DiffInterval> {
    let (o, n) = (Moments::of(old), Moments::of(new));
    if o.n < 2 || n.n < 2 {
        return None;
    }
    let diff = n.mean - o.mean;
    let (vo, vn) = (o.var / o.n as f64, n.var / n.n as f64);
    let se = (vo + vn).sqrt();
    if se == 0.0 {
        // Both samples are constant: the difference is known exactly.
        return Some(DiffInterval {
            diff,
            low: diff,
            high: diff,
            df: f64::INFINITY,
        });
    }
    let df = (vo + vn).powi(2) / (vo * vo / (o.n - 1) as f64 + vn * vn / (n.n - 1) as f64);
    let t = t_quantile(0.5 + level / 2.0, df);
    Some(DiffInterval {
        diff,
        low: diff - t * se,
        high: diff + t * se,
        df,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn t_quantiles_match_the_published_table() {
        // Two-sided 95 % (p = 0.975) and 99 % (p = 0.995) critical values.
        let table = [
            (0.975, 1.0, 12.706_204_736),
            (0.975, 2.0, 4.302_652_730),
            (0.975, 3.0, 3.182_446_305),
            (0.975, 4.0, 2.776_445_105),
            (0.975, 5.0, 2.570_581_836),
            (0.975, 10.0, 2.228_138_852),
            (0.975, 30.0, 2.042_272_456),
            (0.975, 1e7, 1.959_964_2),
            (0.995, 4.0, 4.604_094_871),
            (0.995, 1.0, 63.656_741_163),
            (0.5, 7.0, 0.0),
        ];
        for (p, df, want) in table {
            let got = t_quantile(p, df);
            assert!(close(got, want, 1e-7), "t({p}, {df}) = {got}, want {want}");
        }
    }

    #[test]
    fn the_t_cdf_agrees_with_integrating_the_density() {
        // Independent check, fractional df included: Simpson's rule over the t density.
        for df in [1.0, 2.5, 4.7, 9.0, 23.3] {
            let c = (ln_gamma((df + 1.0) / 2.0)
                - ln_gamma(df / 2.0)
                - 0.5 * (df * std::f64::consts::PI).ln())
            .exp();
            let pdf = |x: f64| c * (1.0 + x * x / df).powf(-(df + 1.0) / 2.0);
            for t in [0.3, 1.0, 2.0, 3.5] {
                let steps = 20_000;
                let h = t / steps as f64;
                let mut s = pdf(0.0) + pdf(t);
                for i in 1..steps {
                    s += pdf(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
                }
                let want = 0.5 + s * h / 3.0;
                let got = t_cdf(t, df);
                assert!(
                    close(got, want, 1e-9),
                    "cdf({t}, {df}) = {got}, want {want}"
                );
                assert!(close(t_cdf(-t, df), 1.0 - want, 1e-9));
            }
        }
    }

    #[test]
    fn fractional_degrees_of_freedom_fall_between_their_neighbours() {
        let (a, b, c) = (
            t_quantile(0.975, 5.0),
            t_quantile(0.975, 5.5),
            t_quantile(0.975, 6.0),
        );
        assert!(a > b && b > c, "{a} {b} {c}");
    }

    #[test]
    fn welch_interval_by_hand() {
        // old: mean 3, var 2.5; new: mean 6, var 10; se = sqrt(0.5 + 2) ; df = 6.25 / 1.0625.
        let old = [1.0, 2.0, 3.0, 4.0, 5.0];
        let new = [2.0, 4.0, 6.0, 8.0, 10.0];
        let ci = welch_interval(&old, &new, 0.95).unwrap();
        let se = 2.5f64.sqrt();
        let df = 6.25 / 1.0625;
        let t = t_quantile(0.975, df);
        assert!(close(ci.df, df, 1e-12));
        assert!(close(ci.diff, 3.0, 1e-12));
        assert!(close(ci.low, 3.0 - t * se, 1e-12) && close(ci.high, 3.0 + t * se, 1e-12));
    }

    #[test]
    fn constant_samples_and_single_values() {
        let ci = welch_interval(&[5.0, 5.0], &[7.0, 7.0, 7.0], 0.95).unwrap();
        assert_eq!((ci.low, ci.high), (2.0, 2.0));
        assert!(welch_interval(&[5.0], &[7.0, 7.0], 0.95).is_none());
        // Values whose variance overflows: no panic (issue 21 #15: t_quantile(0.975, NaN)).
        let _ = welch_interval(&[1e308, 1e307], &[1e308, 1e308, 1e307], 0.95);
        assert!(t_quantile(0.975, f64::NAN).is_nan());
    }
}
