//! The knee's real [`Probe`]: each point is one `runner::Run` of the plan's spec at a rate (or
//! closed loop for the ceiling), time-bounded and looping over the file, so preparing (opening,
//! the cache mode, the buffers) stays before each point's clock as in every other run. The
//! point's p99 interval is read from the run's merged response histogram.

use super::params::Plan;
use super::search::{Ceiling, Point, Probe};
use crate::measure::RunResult;
use crate::runner::{Run, RunError};
use hdrhistogram::Histogram;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Measures points of `plan` on its file; keeps every run's record (the sweep writes them as
/// rows) and the time spent.
pub struct RunProbe<'a> {
    plan: &'a Plan,
    experiment: String,
    stop: Arc<AtomicBool>,
    /// Every run's record, closed loop first, in the order measured.
    pub results: Vec<RunResult>,
    /// Seconds spent measuring, preparation included.
    pub elapsed_s: f64,
}

impl<'a> RunProbe<'a> {
    pub fn new(plan: &'a Plan, experiment: &str, stop: Arc<AtomicBool>) -> RunProbe<'a> {
        RunProbe {
            plan,
            experiment: experiment.to_string(),
            stop,
            results: Vec::new(),
            elapsed_s: 0.0,
        }
    }

    fn measure(
        &mut self,
        rate: Option<f64>,
    ) -> anyhow::Result<(RunResult, Option<Histogram<u64>>)> {
        let mut spec = self.plan.base.clone();
        spec.setup.rate_iops = rate.map(crate::config::Iops);
        spec.target.duration = Some(self.plan.point_duration(rate));
        let t = Instant::now();
        let outcome = Run::start(&spec, &self.experiment, self.stop.clone())?
            .run_to_end(|_, _| {})
            .map_err(RunError::into_anyhow);
        self.elapsed_s += t.elapsed().as_secs_f64();
        let mut outcome = outcome?;
        crate::explain::judge_result(&mut outcome.result);
        self.results.push(outcome.result.clone());
        Ok((outcome.result, outcome.aggregate.response))
    }
}

impl Probe for RunProbe<'_> {
    fn closed_loop(&mut self) -> anyhow::Result<Ceiling> {
        let (r, _) = self.measure(None)?;
        Ok(Ceiling {
            iops: r.figures.iops,
            lat_p99_us: r.figures.lat_p99_us,
        })
    }

    fn at(&mut self, rate_iops: f64) -> anyhow::Result<Point> {
        let (r, response) = self.measure(Some(rate_iops))?;
        let (low, high) = response
            .as_ref()
            .map(p99_interval_us)
            .unwrap_or((f64::NAN, f64::NAN));
        Ok(point_of(
            &r,
            rate_iops,
            (low, high),
            self.plan.settings.target_p99_us,
        ))
    }
}

/// A point from an open-loop run's record, judged against `target_us`: it fell behind when the
/// operations still due at its end would wait longer than the target (or 10 ms, the run's own
/// threshold, whichever is longer) — the wait of the last one, `backlog / rate`, already
/// misses. A backlog shorter than that is a late wake-up at the end, not a rate the device
/// cannot keep, and its p99 decides.
pub fn point_of(
    r: &RunResult,
    rate_iops: f64,
    (low_us, high_us): (f64, f64),
    target_us: f64,
) -> Point {
    let backlog_s = r.open_loop.as_ref().map(|o| o.backlog_ops).unwrap_or(0) as f64 / rate_iops;
    let allowed_s = (target_us / 1e6).max(crate::measure::result::FELL_BEHIND_BACKLOG_S);
    let burst_at_end = r
        .timeline
        .as_ref()
        .and_then(|t| t.reading.burst)
        .is_some_and(|b| b.at_end);
    Point {
        offered_iops: rate_iops,
        achieved_iops: r
            .open_loop
            .as_ref()
            .map(|o| o.rate_iops_achieved)
            .unwrap_or(r.figures.iops),
        resp_p50_us: r
            .open_loop
            .as_ref()
            .map(|o| o.resp_p50_us)
            .unwrap_or(f64::NAN),
        resp_p99_us: r
            .open_loop
            .as_ref()
            .map(|o| o.resp_p99_us)
            .unwrap_or(f64::INFINITY),
        resp_p999_us: r
            .open_loop
            .as_ref()
            .map(|o| o.resp_p999_us)
            .unwrap_or(f64::NAN),
        resp_p99_low_us: low_us,
        resp_p99_high_us: high_us,
        resp_p99_no_burst_us: r.open_loop.as_ref().and_then(|o| o.resp_p99_no_burst_us),
        lat_p99_us: r.figures.lat_p99_us,
        ops: r.figures.ops,
        seconds: r.figures.seconds,
        fell_behind: backlog_s > allowed_s,
        burst_at_end,
        passed: false,
        burst: false,
    }
}

/// The 95% interval of a histogram's p99, microseconds: the values at the ranks
/// `0.99 n ± 1.96 sqrt(0.99 × 0.01 × n)` (the normal approximation of the order statistic's
/// binomial rank; with 2000 operations, p98.56 to p99.44).
pub fn p99_interval_us(h: &Histogram<u64>) -> (f64, f64) {
    let n = h.len() as f64;
    if n == 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let half = 1.96 * (0.99 * 0.01 / n).sqrt();
    let q = |x: f64| h.value_at_quantile(x.clamp(0.0, 1.0)) as f64 / 1000.0;
    (q(0.99 - half), q(0.99 + half))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_p99_interval_holds_the_p99_and_narrows_with_more_operations() {
        let mut small = crate::measure::histogram::new_latency_histogram();
        let mut big = small.clone();
        for i in 1..=1_000u64 {
            small.record(i * 1000).unwrap();
        }
        for i in 1..=100_000u64 {
            big.record(i * 10).unwrap();
        }
        let (lo, hi) = p99_interval_us(&small);
        let p99 = small.value_at_quantile(0.99) as f64 / 1000.0;
        assert!(lo < p99 && p99 < hi, "{lo} {p99} {hi}");
        // 1000 ops: ranks 983.8..996.2 of 1000, so about 984 µs to 996 µs.
        assert!(
            (lo - 984.0).abs() < 15.0 && (hi - 996.0).abs() < 15.0,
            "{lo} {hi}"
        );
        let (blo, bhi) = p99_interval_us(&big);
        assert!((bhi - blo) / 1000.0 < (hi - lo) / 1000.0);
    }
}
