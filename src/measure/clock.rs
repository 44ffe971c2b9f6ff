//! The per-operation clock.
//!
//! A 1-byte `read(2)` costs a few hundred nanoseconds, so two `clock_gettime` calls per operation
//! would be a visible tax on exactly the measurement the syscall lab cares about. We read the TSC
//! through `quanta` (a few ns, calibrated against the OS clock) and convert to nanoseconds only when
//! recording. Where there is no usable TSC, quanta falls back to the OS monotonic clock.
//!
//! Even the conversion is too dear per operation, so workers tally raw tick counts in a
//! [`TickTally`] and convert whole buckets when they send a snapshot (every 100 ms).

use std::sync::OnceLock;

/// A cheap monotonic clock in raw ticks; shared calibration for the whole process.
#[derive(Clone)]
pub struct Clock {
    inner: quanta::Clock,
}

static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();

impl Clock {
    /// The process-wide clock (calibrated once).
    pub fn get() -> Self {
        Clock {
            inner: CLOCK.get_or_init(quanta::Clock::new).clone(),
        }
    }

    /// Raw ticks; only differences are meaningful.
    #[inline(always)]
    pub fn raw(&self) -> u64 {
        self.inner.raw()
    }

    /// Nanoseconds between two raw readings (0 if `end` precedes `start`).
    #[inline(always)]
    pub fn delta_ns(&self, start: u64, end: u64) -> u64 {
        if end <= start {
            return 0;
        }
        self.inner.delta_as_nanos(start, end)
    }

    /// How many raw ticks span `ns` nanoseconds (at least 1).
    pub fn ticks_for_ns(&self, ns: u64) -> u64 {
        // Measure the scale once from a wide span to keep the rounding error small.
        let probe = 1u64 << 40;
        let ns_per_probe = self.inner.delta_as_nanos(0, probe).max(1);
        ((ns as u128 * probe as u128) / ns_per_probe as u128).max(1) as u64
    }
}

/// Mantissa bits of a [`TickTally`] bucket: 128 sub-buckets per power of two, a relative
/// resolution of 1/128 to 1/256 like the 2-significant-digit latency histogram it feeds.
const TALLY_SUB_BITS: u32 = 7;
/// Longest latency tallied exactly, in raw ticks (2^40 ticks: minutes); longer ones are clamped.
const TALLY_MAX_TICKS: u64 = (1 << 40) - 1;
const TALLY_BUCKETS: usize = ((40 - TALLY_SUB_BITS as usize) + 2) << TALLY_SUB_BITS as usize;

/// Per-operation latency counts in raw clock ticks, the hot half of a worker's histogram.
///
/// Recording into the hdrhistogram directly costs a tick-to-nanosecond conversion, a function
/// call and min/max upkeep per operation. Here an operation costs a leading-zero count, a shift
/// and one counter increment, all inlined; [`TickTally::drain_into`] converts the (few) touched
/// buckets to nanoseconds and moves them into the histogram when the worker sends a snapshot.
pub struct TickTally {
    counts: Box<[u32]>,
    /// Whether any count is non-zero (saves the scan of idle workers' tallies).
    touched: bool,
}

impl Default for TickTally {
    fn default() -> Self {
        TickTally {
            counts: vec![0u32; TALLY_BUCKETS].into_boxed_slice(),
            touched: false,
        }
    }
}

impl TickTally {
    #[inline(always)]
    fn index(ticks: u64) -> usize {
        let t = ticks.min(TALLY_MAX_TICKS);
        let msb = 63 - (t | 1).leading_zeros();
        let bucket = msb.saturating_sub(TALLY_SUB_BITS);
        ((bucket as usize) << TALLY_SUB_BITS) + (t >> bucket) as usize
    }

    /// The smallest tick count that lands in bucket `index`, and the bucket's width.
    fn bounds(index: usize) -> (u64, u64) {
        let sub = 1usize << TALLY_SUB_BITS;
        if index < 2 * sub {
            return (index as u64, 1);
        }
        let bucket = (index >> TALLY_SUB_BITS) - 1;
        let mantissa = (index - (bucket << TALLY_SUB_BITS)) as u64;
        (mantissa << bucket, 1 << bucket)
    }

    /// Counts one operation that took `ticks` raw ticks.
    #[inline(always)]
    pub fn record(&mut self, ticks: u64) {
        let i = Self::index(ticks);
        // `index` is below TALLY_BUCKETS for every u64 (clamped above); the bounds check stays,
        // as one predictable branch.
        self.counts[i] = self.counts[i].saturating_add(1);
        self.touched = true;
    }

    /// Moves the counts into `hist` (nanoseconds, each bucket at its midpoint, at least 1 ns) and
    /// clears the tally.
    pub fn drain_into(&mut self, clock: &Clock, hist: &mut hdrhistogram::Histogram<u64>) {
        if !std::mem::take(&mut self.touched) {
            return;
        }
        for i in 0..TALLY_BUCKETS {
            let n = std::mem::take(&mut self.counts[i]);
            if n > 0 {
                let (lo, width) = Self::bounds(i);
                let ns = clock.delta_ns(0, lo + width / 2).max(1);
                hist.saturating_record_n(ns, n as u64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tick_count_lands_in_the_bucket_that_contains_it() {
        let mut samples: Vec<u64> = (0..5000).collect();
        samples
            .extend((8..40).flat_map(|p| [(1u64 << p) - 1, 1 << p, (1 << p) + 12345 % (1 << p)]));
        for t in samples {
            let i = TickTally::index(t);
            assert!(i < TALLY_BUCKETS, "{t}");
            let (lo, width) = TickTally::bounds(i);
            assert!(
                lo <= t && t < lo + width,
                "{t} -> bucket {i} = [{lo}, {})",
                lo + width
            );
            assert!(width == 1 || width * 128 <= lo, "{t}: bucket too wide");
        }
    }

    #[test]
    fn draining_moves_every_count_into_the_histogram_within_one_percent() {
        let clock = Clock::get();
        let mut tally = TickTally::default();
        let ticks = clock.ticks_for_ns(250_000);
        for _ in 0..10 {
            tally.record(ticks);
        }
        tally.record(3);
        let mut h = crate::measure::new_latency_histogram();
        tally.drain_into(&clock, &mut h);
        assert_eq!(h.len(), 11);
        let p99 = h.value_at_quantile(0.99) as f64;
        assert!((p99 / 250_000.0 - 1.0).abs() < 0.01, "p99 {p99}");
        let mut again = crate::measure::new_latency_histogram();
        tally.drain_into(&clock, &mut again);
        assert!(again.is_empty());
    }
}
