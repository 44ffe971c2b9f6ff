//! Open-loop pacing (`--rate`, `--arrival`): every operation has an intended start on a schedule,
//! and its latency is counted twice: the **service time** (issue → completion, what every
//! closed-loop tool reports) and the **response time** (intended start → completion, what the
//! disk's users wait).
//!
//! Why: a closed-loop worker issues the next operation when the last one ends, so a 100 ms stall
//! delays one operation's record and silently removes the ~100 operations a real application
//! would have issued during it, each of which would have waited too ("coordinated omission").
//! With a schedule, an operation whose intended start has passed is issued at once and its
//! response time keeps the wait since that intended start: the backlog shows up in the
//! percentiles (see docs/openloop.md).
//!
//! The schedule ([`Schedule`]) is pure arithmetic on nanoseconds from the run's origin, so the
//! worker's [`Pacer`] and the unit tests ([`response_times`], a scripted engine) use the same
//! intended starts, and the test's answer is exact.

use super::clock::Clock;
use crate::config::Arrival;
use std::sync::atomic::{AtomicBool, Ordering};

/// Below this many ns to the intended start the pacer spins; above it, it sleeps (most of the
/// gap: a sleep overshoots by tens of µs, so it wakes this much early and spins the rest).
const SPIN_NS: u64 = 50_000;
/// Longest single sleep, so a stop request (Ctrl-C, the time bound) is seen within it.
const MAX_SLEEP_NS: u64 = 20_000_000;

/// One thread's intended starts, ns since the run's origin: constant spacing, or exponential
/// gaps (a Poisson process) from a seeded xorshift generator, so a run's schedule is repeatable.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Mean gap between two intended starts, ns.
    gap_ns: f64,
    arrival: Arrival,
    rng: u64,
    /// The next intended start, ns since the origin (fractional: no drift over long runs).
    next_ns: f64,
}

impl Schedule {
    /// A schedule of `rate_per_s` operations per second whose first intended start is
    /// `phase_ns` after the origin. `seed` picks the Poisson gaps (any value; 0 is remapped).
    pub fn new(rate_per_s: f64, arrival: Arrival, seed: u64, phase_ns: f64) -> Schedule {
        Schedule {
            gap_ns: 1e9 / rate_per_s,
            arrival,
            rng: seed | 1,
            next_ns: phase_ns.max(0.0),
        }
    }

    /// The next intended start (ns since the origin), not yet taken.
    pub fn peek_ns(&self) -> u64 {
        self.next_ns as u64
    }

    /// How many intended starts are at or before `ns` and not yet taken: the operations the
    /// worker is behind by then (for Poisson arrivals, the expected number).
    pub fn behind_at(&self, ns: u64) -> u64 {
        if self.next_ns > ns as f64 {
            return 0;
        }
        ((ns as f64 - self.next_ns) / self.gap_ns) as u64 + 1
    }

    /// Takes the next intended start (ns since the origin) and moves on to the one after.
    pub fn take_ns(&mut self) -> u64 {
        let now = self.next_ns;
        self.next_ns += match self.arrival {
            Arrival::Constant => self.gap_ns,
            Arrival::Poisson => -self.uniform_open().ln() * self.gap_ns,
        };
        now as u64
    }

    /// A uniform number in (0, 1] from xorshift64*.
    fn uniform_open(&mut self) -> f64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        (r as f64 + 1.0) / (1u64 << 53) as f64
    }
}

/// The response times (ns) of a synchronous worker that issues operation `i` at
/// `max(intended_ns[i], end of operation i-1)` and takes `service_ns[i]` for it: completion minus
/// intended start. This is what [`Pacer`] does on a real clock; the unit tests use it as the
/// scripted engine.
pub fn response_times(intended_ns: &[u64], service_ns: &[u64]) -> Vec<u64> {
    let mut end = 0u64;
    intended_ns
        .iter()
        .zip(service_ns)
        .map(|(&intended, &service)| {
            let issue = intended.max(end);
            end = issue + service;
            end - intended
        })
        .collect()
}

/// A worker's pacer: waits for each operation's intended start on its [`Schedule`], in raw
/// clock ticks from the run's origin.
pub struct Pacer {
    clock: Clock,
    origin_raw: u64,
    /// Raw ticks per ns.
    ticks_per_ns: f64,
    schedule: Schedule,
}

impl Pacer {
    /// Worker `worker` of `threads`' share of `rate_iops` for a run whose origin is `origin_raw`:
    /// each thread runs `rate_iops / threads`, the constant schedules shifted by a fraction of a
    /// gap each so the threads interleave, the Poisson ones seeded apart.
    pub fn new(
        clock: Clock,
        origin_raw: u64,
        rate_iops: f64,
        arrival: Arrival,
        worker: usize,
        threads: usize,
    ) -> Pacer {
        let threads = threads.max(1);
        let per_thread = rate_iops / threads as f64;
        let phase_ns = match arrival {
            Arrival::Constant => 1e9 / rate_iops * worker as f64,
            Arrival::Poisson => 0.0,
        };
        let seed = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(worker as u64 + 1);
        let ticks_per_ns = clock.ticks_for_ns(1 << 30) as f64 / (1u64 << 30) as f64;
        Pacer {
            clock,
            origin_raw,
            ticks_per_ns,
            schedule: Schedule::new(per_thread, arrival, seed, phase_ns),
        }
    }

    fn raw_of(&self, ns: u64) -> u64 {
        self.origin_raw + (ns as f64 * self.ticks_per_ns) as u64
    }

    /// The operations this worker is behind `at_ns` after the origin (see
    /// [`Schedule::behind_at`]).
    pub fn behind_at(&self, at_ns: u64) -> u64 {
        self.schedule.behind_at(at_ns)
    }

    /// Whether the next operation's intended start has come at `now_raw`.
    #[inline]
    pub fn due(&self, now_raw: u64) -> bool {
        now_raw >= self.raw_of(self.schedule.peek_ns())
    }

    /// Waits for the next intended start (at once when it has passed: the worker is behind and
    /// the wait since then counts in the response time) and returns it with the issue time, both
    /// raw ticks. Gives up waiting when `stop` is raised or at `deadline_raw` (the run's time
    /// bound), so a slow schedule never holds a run past its end.
    pub fn wait(&mut self, stop: &AtomicBool, deadline_raw: u64) -> (u64, u64) {
        let intended_ns = self.schedule.take_ns();
        let intended = self.raw_of(intended_ns);
        loop {
            let now = self.clock.raw();
            if now >= intended {
                return (intended, now);
            }
            let left_ns = ((intended - now) as f64 / self.ticks_per_ns) as u64;
            if left_ns > SPIN_NS {
                if stop.load(Ordering::Relaxed) || now >= deadline_raw {
                    return (intended.min(now), now);
                }
                let nap = (left_ns - SPIN_NS).min(MAX_SLEEP_NS);
                std::thread::sleep(std::time::Duration::from_nanos(nap));
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// Parses `--rate`: operations per second (`2000`, `2000 IOPS`) or a throughput (`50 MiB/s`,
/// `512KiB/s`, `1 GiB/s`), which is divided by the block size. Returns IOPS, above 0.
pub fn parse_rate(text: &str, block_size_bytes: u64, flag: &str) -> Result<f64, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "{flag}: cannot read '{t}'; give operations per second (2000) or a throughput \
             (50 MiB/s)"
        )
    };
    let lower = t.to_ascii_lowercase();
    let (number, unit_bytes) = if let Some(per_s) = lower.strip_suffix("/s") {
        let split = per_s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(per_s.len());
        let unit = per_s[split..].trim();
        let bytes: f64 = match unit {
            "b" => 1.0,
            "k" | "kib" => 1024.0,
            "m" | "mib" => 1024.0 * 1024.0,
            "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
            _ => return Err(bad()),
        };
        (per_s[..split].trim(), Some(bytes))
    } else {
        (
            lower
                .strip_suffix("iops")
                .map(str::trim)
                .unwrap_or(lower.as_str()),
            None,
        )
    };
    let n: f64 = number.parse().map_err(|_| bad())?;
    let iops = match unit_bytes {
        Some(b) => n * b / block_size_bytes.max(1) as f64,
        None => n,
    };
    if !(iops.is_finite() && iops > 0.0 && iops <= 1e9) {
        return Err(format!(
            "{flag}: must be above 0 and at most 1e9 operations per second, got '{t}'"
        ));
    }
    Ok(iops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::new_latency_histogram;

    /// The exact quantile of sorted values as hdrhistogram defines it: the value at rank
    /// ceil(q × n).
    fn exact_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[rank - 1]
    }

    #[test]
    fn a_100ms_stall_every_10s_at_1000_iops_gives_the_analytic_response_p999_and_a_normal_service_p999(
    ) {
        // The scripted engine: 1000 IOPS on a constant schedule, 100 µs per operation, except
        // the operation intended at each 10 s mark, which stalls for 100 ms; 60 s, 60,000 ops.
        let (gap, service, stall) = (1_000_000u64, 100_000u64, 100_000_000u64);
        let mut sched = Schedule::new(1000.0, Arrival::Constant, 1, 0.0);
        let n = 60_000usize;
        let intended: Vec<u64> = (0..n).map(|_| sched.take_ns()).collect();
        assert_eq!(
            intended[10_000],
            10 * 1_000_000_000,
            "the schedule is exact"
        );
        let services: Vec<u64> = (0..n)
            .map(|i| if i % 10_000 == 0 { stall } else { service })
            .collect();
        let responses = response_times(&intended, &services);
        let (mut resp_h, mut serv_h) = (new_latency_histogram(), new_latency_histogram());
        for (&r, &s) in responses.iter().zip(&services) {
            resp_h.record(r).unwrap();
            serv_h.record(s).unwrap();
        }
        // Analytic: after a stall, the k-th queued operation (intended k ms later) ends at
        // 100 ms + k × 100 µs, so it waited 100 ms − k × 900 µs; the other operations wait
        // their 100 µs. Per 10 s, 0.1% is 10 operations: those above the p99.9 are k = 0..9,
        // so the p99.9 is operation k = 10's response, 100 ms − 10 × 0.9 ms = 91 ms.
        let analytic = stall - 10 * (gap - service);
        assert_eq!(analytic, 91_000_000);
        let mut sorted = responses.clone();
        sorted.sort_unstable();
        assert_eq!(exact_quantile(&sorted, 0.999), analytic);
        let measured = resp_h.value_at_quantile(0.999) as f64;
        assert!(
            (measured / analytic as f64 - 1.0).abs() < 0.01,
            "response p99.9 {measured} ns, analytic {analytic} ns"
        );
        // The service time sees one slow operation in 10,000: its p99.9 stays at 100 µs.
        let serv = serv_h.value_at_quantile(0.999) as f64;
        assert!(
            (serv / service as f64 - 1.0).abs() < 0.01,
            "service p99.9 {serv} ns"
        );
        // And the closed-loop view loses the ~110 delayed operations: its max is the stall.
        assert_eq!(serv_h.max(), resp_h.max());
        assert!(resp_h.value_at_quantile(0.99) > serv_h.value_at_quantile(0.99));
    }

    #[test]
    fn a_worker_that_keeps_up_has_response_times_equal_to_its_service_times() {
        let mut sched = Schedule::new(1000.0, Arrival::Poisson, 7, 0.0);
        let intended: Vec<u64> = (0..1000).map(|_| sched.take_ns()).collect();
        // Poisson gaps can be shorter than the service time: then the response is longer.
        let services = vec![1u64; 1000];
        let r = response_times(&intended, &services);
        assert!(r.iter().zip(&services).all(|(r, s)| r >= s));
        let on_time = r.iter().filter(|&&r| r == 1).count();
        assert!(
            on_time > 990,
            "{on_time} of 1000 waited only their service time"
        );
    }

    #[test]
    fn poisson_gaps_average_the_asked_rate_and_repeat_with_the_seed() {
        let mut a = Schedule::new(2000.0, Arrival::Poisson, 42, 0.0);
        let mut b = Schedule::new(2000.0, Arrival::Poisson, 42, 0.0);
        let n = 20_000;
        let last = (0..n).map(|_| a.take_ns()).last().unwrap();
        assert_eq!(
            (0..n).map(|_| b.take_ns()).last().unwrap(),
            last,
            "same seed, same schedule"
        );
        // 20,000 arrivals at 2000/s take ~10 s; the standard deviation is ~0.7%.
        let secs = last as f64 / 1e9;
        assert!((secs / 10.0 - 1.0).abs() < 0.05, "{secs} s");
    }

    #[test]
    fn rate_reads_iops_or_a_throughput_divided_by_the_block_size() {
        assert_eq!(parse_rate("2000", 4096, "--rate"), Ok(2000.0));
        assert_eq!(parse_rate("2000 IOPS", 4096, "--rate"), Ok(2000.0));
        assert_eq!(parse_rate("4 MiB/s", 4096, "--rate"), Ok(1024.0));
        assert_eq!(parse_rate("1m/s", 1 << 20, "--rate"), Ok(1.0));
        for bad in ["", "0", "-5", "fast", "3 parsecs/s", "nan"] {
            let e = parse_rate(bad, 4096, "--rate").unwrap_err();
            assert!(e.starts_with("--rate: "), "{bad}: {e}");
        }
    }

    #[test]
    fn the_pacer_never_issues_before_the_intended_start() {
        let clock = Clock::get();
        let stop = AtomicBool::new(false);
        let origin = clock.raw();
        let mut p = Pacer::new(clock.clone(), origin, 10_000.0, Arrival::Constant, 0, 1);
        for _ in 0..20 {
            let (intended, issued) = p.wait(&stop, u64::MAX);
            assert!(issued >= intended);
        }
        // 20 ops at 10,000/s: the last intended start is 1.9 ms after the origin.
        assert!(clock.delta_ns(origin, clock.raw()) >= 1_900_000);
    }
}
