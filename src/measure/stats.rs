//! Statistics over repetitions: mean, median, min, max, sample standard deviation.

use serde::Serialize;

/// Summary statistics of a sample (e.g. MiB/s over repetitions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Stats {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n - 1); 0 for fewer than two values.
    pub stddev: f64,
}

impl Stats {
    /// Statistics of `values`; NaNs are ignored. An empty sample gives all zeros.
    pub fn of(values: &[f64]) -> Self {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return Self::default();
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        // Mean and deviation of v / scale, times scale. Scale 1 is the plain computation; values
        // near f64::MAX (1e308 MiB/s in a hand-made CSV) overflow it to ∞, and are computed again
        // scaled by the largest magnitude, so they give finite figures.
        let moments = |scale: f64| {
            let mean = v.iter().map(|x| x / scale).sum::<f64>() / n as f64;
            let stddev = if n > 1 {
                (v.iter().map(|x| (x / scale - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
            } else {
                0.0
            };
            (mean * scale, stddev * scale)
        };
        let (mut mean, mut stddev) = moments(1.0);
        let largest = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if !(mean.is_finite() && stddev.is_finite()) && largest.is_finite() && largest > 0.0 {
            (mean, stddev) = moments(largest);
        }
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            let (a, b) = (v[n / 2 - 1], v[n / 2]);
            let mid = (a + b) / 2.0;
            if mid.is_finite() {
                mid
            } else {
                a / 2.0 + b / 2.0
            }
        };
        Stats {
            n,
            mean,
            median,
            min: v[0],
            max: v[n - 1],
            stddev,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_even_and_odd_samples() {
        assert_eq!(Stats::of(&[3.0, 1.0, 2.0]).median, 2.0);
        assert_eq!(Stats::of(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
        let s = Stats::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.mean, 5.0);
        assert!((s.stddev - 2.138).abs() < 0.001);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        assert_eq!(Stats::of(&[]).n, 0);
        let huge = Stats::of(&[1e308, 1e307, f64::MAX, 1e308]);
        assert!(
            huge.mean.is_finite() && huge.stddev.is_finite() && huge.median.is_finite(),
            "{huge:?}"
        );
    }
}
