//! Latency histograms: hdrhistogram with settings shared by every worker so they merge.
//!
//! Two significant digits (1% resolution) keep each histogram around 40 KB, so the per-op record
//! touches one hot counter and the 100 ms clone-and-reset is cheap; the range covers 1 ns to 100 s.

use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest latency we track, in nanoseconds (100 s); slower operations are clamped to it.
pub const MAX_LATENCY_NS: u64 = 100_000_000_000;

/// A fresh latency histogram (values in nanoseconds).
pub fn new_latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, 2).expect("static histogram bounds are valid")
}

/// The percentiles every report shows, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
}

impl LatencySummary {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        LatencySummary {
            p50_us: us(h.value_at_quantile(0.50)),
            p90_us: us(h.value_at_quantile(0.90)),
            p99_us: us(h.value_at_quantile(0.99)),
            p999_us: us(h.value_at_quantile(0.999)),
            max_us: us(h.max()),
            mean_us: h.mean() / 1000.0,
        }
    }
}

/// One bar of a log-spaced latency histogram: operations with `lo_ns <= latency < hi_ns`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogBucket {
    pub lo_ns: u64,
    pub hi_ns: u64,
    pub count: u64,
}

/// Groups a histogram into power-of-`base` buckets (e.g. base 2 or 10) between its min and max,
/// for drawing. Empty histograms give no buckets.
pub fn log_buckets(h: &Histogram<u64>, base: u64) -> Vec<LogBucket> {
    if h.is_empty() || base < 2 {
        return Vec::new();
    }
    let mut lo = 1u64;
    while lo.saturating_mul(base) <= h.min().max(1) {
        lo *= base;
    }
    let mut out = Vec::new();
    while lo <= h.max() {
        let hi = lo.saturating_mul(base);
        let count = h.count_between(lo, hi.saturating_sub(1).max(lo));
        out.push(LogBucket {
            lo_ns: lo,
            hi_ns: hi,
            count,
        });
        if hi == u64::MAX {
            break;
        }
        lo = hi;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_reports_percentiles_in_microseconds() {
        let mut h = new_latency_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let s = LatencySummary::of(&h);
        assert!((s.p50_us - 500.0).abs() < 10.0, "{s:?}");
        assert!((s.p99_us - 990.0).abs() < 15.0, "{s:?}");
        assert!(s.max_us >= 990.0);
    }

    #[test]
    fn log_buckets_cover_every_recorded_value() {
        let mut h = new_latency_histogram();
        for v in [3u64, 40, 41, 500, 7000, 7001, 7002] {
            h.record(v).unwrap();
        }
        let b = log_buckets(&h, 10);
        assert_eq!(b.iter().map(|b| b.count).sum::<u64>(), 7);
        assert_eq!(b.first().unwrap().lo_ns, 1);
        assert!(b.last().unwrap().hi_ns > 7002);
    }
}
