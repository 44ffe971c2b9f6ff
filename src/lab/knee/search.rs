//! The knee search, as pure logic over a [`Probe`]: which offered rates to measure, in what
//! order, when to stop, and how sure the answer is. It knows nothing of files or engines (the
//! real probe, `RunProbe` in `probe.rs`, runs `runner::Run`s; the unit tests script one), so
//! the search is tested exactly and the command, the sweep kind and the bench share it.
//!
//! The search:
//! 1. one closed-loop run finds the ceiling `C` (operations per second as fast as it goes);
//!    no open-loop rate above it can be sustained, so the knee lies in `(0, C]`;
//! 2. the first open-loop point is at `C/2`; while every point fails (response p99 above the
//!    target, or the run fell behind its schedule), the next is half the lowest failing rate;
//! 3. once a passing rate `lo` and a failing rate `hi` bracket the knee, each next point is
//!    where log(p99) crosses log(target), interpolated linearly in rate between the ends (the
//!    rule of [`Knee::crossing_iops`], on the p99 of the run that decided each end), clamped
//!    into the bracket's middle half `[lo + w/4, hi - w/4]` (`w = hi - lo`), until
//!    `(hi - lo) / hi` is within the tolerance. The clamp shrinks the bracket by at least a quarter each point: a
//!    queue's p99 rises ever faster, so the interpolation lands below the knee and, unclamped,
//!    would creep up from the bottom a little each point. When an end has no usable p99 (the
//!    top fell behind its schedule, a p99 missing or not positive) the point is the middle.
//!    On the scripted M/M/1 queue this takes 4.9 points on average where bisection takes 6.1
//!    (ten knees from 5% to 95% of the ceiling), and the answer
//!    lands closer (worst 3.3% under the knee, 3.8% bisecting). While every point passes, the
//!    bracket's top is the ceiling (whose closed-loop p99 is a service time, not a response
//!    time: the step is the middle), and when the bracket is within the tolerance of `C` the
//!    ceiling itself is measured open loop (a device whose p99 stays under the target at its
//!    own ceiling has its knee there);
//! 4. a point within a quarter of the tolerance of one already measured is not measured again:
//!    the measured one is reused. Every point, reused or not, is on the plot;
//! 5. a run that misses the target only because of one burst (its response p99 without the
//!    run's worst tenth, `measure::burst`, meets the target, and it kept up or the burst
//!    reached its end, leaving the backlog) is measured again
//!    at once, and the second run decides its rate; a second miss, burst or not, fails it.
//!    Every other run decides its rate alone. Why: on a shared machine one stall of the host
//!    (tens of milliseconds with no completion) holds more than 1% of a 3 s run's operations at
//!    any rate, so it sets the p99 however far below the knee the rate is: one stall below the
//!    knee ended searches 20-50% low on the lab VM (docs/openloop.md). A stall is one event and
//!    does not repeat; a rate past its knee misses all along and gets no second run. The rules
//!    before (a second and third run of the converged bracket's top, voted by majority) caught
//!    a stall only at the top, and cost one or two runs in every search. A point limit or
//!    Ctrl-C before the second run leaves the rate failed (the answer stays a rate measured to
//!    pass). `bench/knee.sh`'s brute force applies the same rule.
//!
//! The answer is `lo`, the highest rate that passed below the lowest that failed,
//! with its bracket and why the search stopped. p99 from `n` operations is itself uncertain: its
//! 95% interval (the order statistics around rank `0.99 n`) is kept with each point, and the
//! answer says when an end of the bracket was judged on a p99 whose interval straddles the
//! target, or when a rate above the bracket passed (noise: the curve measured is not monotone).

use std::sync::atomic::{AtomicBool, Ordering};

/// How the search runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The response-time p99 a rate must stay under, microseconds.
    pub target_p99_us: f64,
    /// Stop when the bracket's width is at most this share of its top (0.05: 5%).
    pub tolerance: f64,
    /// Most open-loop points to measure (the closed-loop run not counted).
    pub max_points: usize,
}

/// The closed-loop run that bounds the search.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Ceiling {
    /// Operations per second, closed loop.
    pub iops: f64,
    /// Service-time p99 of the closed-loop run, microseconds.
    pub lat_p99_us: f64,
}

/// One measured open-loop point.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct Point {
    /// The rate asked for, operations per second.
    pub offered_iops: f64,
    /// Operations over the point's time.
    pub achieved_iops: f64,
    /// Response time (intended start → completion) percentiles, microseconds.
    pub resp_p50_us: f64,
    pub resp_p99_us: f64,
    pub resp_p999_us: f64,
    /// The 95% interval of `resp_p99_us`, microseconds (order statistics of the point's ops).
    pub resp_p99_low_us: f64,
    pub resp_p99_high_us: f64,
    /// The response p99 without the run's worst burst (`measure::burst`), microseconds;
    /// `None` when the run was too short to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resp_p99_no_burst_us: Option<f64>,
    /// Service time (issue → completion) p99, microseconds.
    pub lat_p99_us: f64,
    /// Operations measured.
    pub ops: u64,
    /// Seconds the point ran.
    pub seconds: f64,
    /// The run ended further behind its schedule than the target (see `probe::point_of`).
    pub fell_behind: bool,
    /// The run's worst burst reached its end (`measure::burst::Burst::at_end`), so a backlog
    /// at the end is the burst's, not a rate the device cannot keep.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub burst_at_end: bool,
    /// Set by the search: whether the point meets the target.
    pub passed: bool,
    /// Set by the search: the point missed the target only because of one burst (step 5 of
    /// the module doc). A first run so is measured again, unless the point limit or Ctrl-C
    /// came first; a second run so fails its rate.
    pub burst: bool,
}

impl Point {
    /// Whether this point meets `target_us`: kept up, and response p99 at most the target.
    pub fn meets(&self, target_us: f64) -> bool {
        !self.fell_behind && self.resp_p99_us <= target_us
    }

    /// Whether this point misses `target_us` only because of one burst: its p99 misses, its
    /// p99 without the run's worst tenth meets the target and is at most half the whole run's
    /// ([`RERUN_BURST_RATIO`]), and it kept up (or the backlog at its end is that burst's: a
    /// stall in its last moments leaves operations due).
    pub fn misses_on_a_burst(&self, target_us: f64) -> bool {
        (!self.fell_behind || self.burst_at_end)
            && self.resp_p99_us > target_us
            && self
                .resp_p99_no_burst_us
                .is_some_and(|p| p <= target_us && p * RERUN_BURST_RATIO <= self.resp_p99_us)
    }

    /// Whether the pass or fail of this point could go the other way within its p99's 95%
    /// interval (a point that fell behind is a clear fail).
    pub fn marginal(&self, target_us: f64) -> bool {
        !self.fell_behind && self.resp_p99_low_us <= target_us && target_us <= self.resp_p99_high_us
    }
}

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// The bracket is within the tolerance.
    Converged,
    /// The ceiling itself, run open loop, meets the target: the knee is the ceiling.
    CeilingMeetsTarget,
    /// Every point failed down to a 64th of the ceiling.
    NothingMeetsTarget,
    /// `max_points` were measured before the bracket narrowed to the tolerance.
    PointLimit,
    /// Stopped by the user (Ctrl-C).
    Interrupted,
}

impl Stop {
    /// The reason, in words.
    pub fn describe(self, tolerance: f64) -> String {
        match self {
            Stop::Converged => format!("the bracket is within {:.0}%", tolerance * 100.0),
            Stop::CeilingMeetsTarget => {
                "the closed-loop ceiling itself, run open loop, meets the target".to_string()
            }
            Stop::NothingMeetsTarget => {
                "no rate down to a 64th of the ceiling meets the target".to_string()
            }
            Stop::PointLimit => "the point limit was reached first".to_string(),
            Stop::Interrupted => "interrupted".to_string(),
        }
    }
}

/// The answer of a search.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Knee {
    pub settings_target_p99_us: f64,
    pub tolerance: f64,
    pub ceiling: Ceiling,
    /// Every point, by offered rate.
    pub points: Vec<Point>,
    /// The highest rate that met the target below the lowest that failed (a rate's last run
    /// decides; step 5 of the module doc); `None` when no rate met it.
    pub knee_iops: Option<f64>,
    /// The lowest rate measured to fail; `None` when every rate met the target.
    pub fail_iops: Option<f64>,
    pub stop: Stop,
    /// Points measured (the closed-loop run not counted), points reused, and points measured
    /// again after a miss on one burst (step 5; counted in `measured` too).
    pub measured: usize,
    pub reused: usize,
    pub remeasured: usize,
    /// A rate above the bracket met the target: the measured curve is not
    /// monotone (noise, or another load on the device), and the answer is the lower one.
    pub not_monotone: bool,
    /// An end of the bracket was judged on a p99 whose 95% interval holds the target (any of
    /// its runs).
    pub marginal: bool,
}

impl Knee {
    /// The bracket's width as a share of its top, when both ends are known.
    pub fn bracket_share(&self) -> Option<f64> {
        Some((self.fail_iops? - self.knee_iops?) / self.fail_iops?)
    }

    /// Where the response p99 crosses the target inside the bracket, interpolated between its
    /// ends on a log scale of p99 (the p99 of the run that decided each end); `None` without both
    /// ends. The answer, `knee_iops`, is a rate measured to pass, so it sits up to the
    /// tolerance below the crossing; this is the point estimate a brute-force sweep with a fine
    /// step approaches. A top that fell behind its schedule has no useful p99, and the crossing
    /// is then the bottom.
    pub fn crossing_iops(&self) -> Option<f64> {
        let lo = self.knee_iops?;
        self.fail_iops?;
        Some(self.interpolated_crossing().unwrap_or(lo))
    }

    /// Where log(p99) crosses log(target), interpolated linearly in rate between the bracket's
    /// ends; `None` without a usable p99 at both ends (see `ends_p99_us`). `crossing_iops`
    /// reports it, and step 3 of the search aims its next point with it.
    fn interpolated_crossing(&self) -> Option<f64> {
        let (lo, hi) = (self.knee_iops?, self.fail_iops?);
        let (p_lo, p_hi) = self.ends_p99_us()?;
        let t = self.settings_target_p99_us;
        let share = ((t.ln() - p_lo.ln()) / (p_hi.ln() - p_lo.ln())).clamp(0.0, 1.0);
        Some(lo + (hi - lo) * share)
    }

    /// The p99 at the bracket's ends that `crossing_iops` interpolates between: the p99 of the
    /// run that decided each end (its last; step 5 of the module doc); `None` when an end is
    /// missing, the top fell behind, or the two do not rise.
    fn ends_p99_us(&self) -> Option<(f64, f64)> {
        let (lo, hi) = (self.knee_iops?, self.fail_iops?);
        let top = self.deciding(hi)?;
        if top.fell_behind {
            return None;
        }
        let p_lo = self.deciding(lo)?.resp_p99_us;
        let p_hi = top.resp_p99_us;
        (p_lo > 0.0 && p_hi > p_lo && p_hi.is_finite()).then_some((p_lo, p_hi))
    }

    /// The run that decides a rate: its last (a second run only follows a miss on one burst).
    fn deciding(&self, rate_iops: f64) -> Option<&Point> {
        self.runs(rate_iops).last()
    }

    /// Whether a rate met the target: its deciding run did.
    fn passes(&self, rate_iops: f64) -> bool {
        self.deciding(rate_iops).is_some_and(|p| p.passed)
    }

    /// The runs at one offered rate.
    fn runs(&self, rate_iops: f64) -> impl Iterator<Item = &Point> {
        self.points
            .iter()
            .filter(move |p| p.offered_iops == rate_iops)
    }

    /// How steeply the p99 rises across the bracket: the ratio of its relative change to the
    /// rate's (`ln(p_hi/p_lo) / ln(hi/lo)`). Below [`SHALLOW_SLOPE`] the curve is shallow
    /// there: a p99 that varies by 10-20% from run to run (a shared machine's) moves the
    /// crossing by more than the bracket, and the knee's rate is uncertain beyond it.
    pub fn slope(&self) -> Option<f64> {
        let (lo, hi) = (self.knee_iops?, self.fail_iops?);
        let (p_lo, p_hi) = self.ends_p99_us()?;
        (hi > lo).then(|| (p_hi / p_lo).ln() / (hi / lo).ln())
    }

    /// One line: the answer, its bracket and why the search stopped.
    pub fn confidence_line(&self) -> String {
        let stop = self.stop.describe(self.tolerance);
        let mut s = match (self.knee_iops, self.fail_iops) {
            (Some(lo), Some(hi)) => format!(
                "knee in [{lo:.0}, {hi:.0}) IOPS ({:.1}% wide): {lo:.0} met the target, {hi:.0} \
                 did not; stopped: {stop}",
                100.0 * (hi - lo) / hi
            ),
            (Some(lo), None) => {
                format!("knee at least {lo:.0} IOPS (every rate measured met the target); stopped: {stop}")
            }
            (None, Some(hi)) => {
                format!("no knee: even {hi:.0} IOPS misses the target; stopped: {stop}")
            }
            (None, None) => format!("no point measured; stopped: {stop}"),
        };
        if let Some(x) = self.crossing_iops() {
            s += &format!("; p99 crosses the target near {x:.0} IOPS (interpolated)");
        }
        if let Some(k) = self.slope().filter(|&k| k < SHALLOW_SLOPE) {
            s += &format!(
                "; shallow: p99 rises only {k:.1}x as fast as the rate across the bracket, so \
                 run-to-run noise in p99 moves the knee by more than the bracket (a higher \
                 --p99 target sits where the curve is steeper)"
            );
        }
        if self.marginal {
            s += "; marginal: an end of the bracket has a p99 whose 95% interval holds the target";
        }
        if self.not_monotone {
            s += "; not monotone: a rate above the bracket met the target (noise or other load)";
        }
        s
    }
}

/// What the search measures with. The real one runs the file; tests script one.
pub trait Probe {
    /// The closed-loop run: the ceiling.
    fn closed_loop(&mut self) -> anyhow::Result<Ceiling>;
    /// One open-loop point at `rate_iops`.
    fn at(&mut self, rate_iops: f64) -> anyhow::Result<Point>;
}

/// A miss is one burst's only when the run's p99 is at least this many times its p99 without
/// the burst: a stall lowers it 10-100× (45 ms against 0.5 ms on the lab VM), while a rate just
/// past its knee, queueing in busy periods all along, lowers it by well under 2×. Without this a
/// rate that passes or fails from run to run near the knee would often get a second try, an
/// optimistic bias. (The verdict's `latency_burst` asks 4×: a false alarm on a figure costs
/// more than one more run of the search.)
pub const RERUN_BURST_RATIO: f64 = 2.0;

/// A bracket whose p99 rises less than this many times as fast as its rate is shallow (see
/// [`Knee::slope`]): with p99 noise of ±15% between runs of one rate, a slope of 3 moves the
/// crossing by ±5%, the default tolerance.
pub const SHALLOW_SLOPE: f64 = 3.0;

/// Lowest rate tried, as a share of the ceiling (six halvings of the first point).
const LOWEST_SHARE: f64 = 1.0 / 64.0;

/// How step 3 places a point inside the bracket. Only the search's own tests pick: bisection
/// is the baseline the interpolated step is measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The bracket's middle.
    Bisect,
    /// The interpolated crossing, safeguarded (see [`inside`]).
    Interpolate,
}

/// Runs the search (see the module doc). `on_point` sees each point as it is measured.
pub fn search(
    settings: &Settings,
    probe: &mut dyn Probe,
    stop: &AtomicBool,
    on_point: &mut dyn FnMut(&Point),
) -> anyhow::Result<Knee> {
    search_with(Step::Interpolate, settings, probe, stop, on_point)
}

/// [`search`], with step 3's rule chosen.
fn search_with(
    step: Step,
    settings: &Settings,
    probe: &mut dyn Probe,
    stop: &AtomicBool,
    on_point: &mut dyn FnMut(&Point),
) -> anyhow::Result<Knee> {
    let target = settings.target_p99_us;
    let ceiling = probe.closed_loop()?;
    let c = ceiling.iops;
    let mut k = Knee {
        settings_target_p99_us: target,
        tolerance: settings.tolerance,
        ceiling,
        points: Vec::new(),
        knee_iops: None,
        fail_iops: None,
        stop: Stop::PointLimit,
        measured: 0,
        reused: 0,
        remeasured: 0,
        not_monotone: false,
        marginal: false,
    };
    if c <= 0.0 {
        anyhow::bail!("the closed-loop run completed no operation; there is no rate to search");
    }
    let mut run = Search {
        settings,
        probe,
        stop,
        on_point,
        step,
    };
    let mut next = c / 2.0;
    k.stop = loop {
        if stop.load(Ordering::Relaxed) {
            break Stop::Interrupted;
        }
        let reuse = k
            .points
            .iter()
            .any(|p| (p.offered_iops - next).abs() <= next * settings.tolerance / 4.0);
        if reuse {
            k.reused += 1;
        } else if let Some(why) = run.measure(&mut k, next)? {
            break why;
        }
        bracket(&mut k);
        next = match run.next_rate(&k) {
            Ok(rate) => rate,
            Err(why) => break why,
        };
        if reuse && k.reused > settings.max_points {
            break Stop::PointLimit; // cannot happen with a shrinking bracket; a guard all the same
        }
    };
    // A point measured just before a stop (the point limit after a burst) counts too.
    bracket(&mut k);
    let marginal = [k.knee_iops, k.fail_iops]
        .iter()
        .flatten()
        .filter_map(|&r| k.deciding(r))
        .any(|p| p.marginal(target));
    k.marginal = marginal;
    Ok(k)
}

/// What one search measures with, and its state beyond the points.
struct Search<'a> {
    settings: &'a Settings,
    probe: &'a mut dyn Probe,
    stop: &'a AtomicBool,
    on_point: &'a mut dyn FnMut(&Point),
    step: Step,
}

impl Search<'_> {
    /// The next rate to measure from the bracket (steps 2 and 3 of the module doc), or why the
    /// search stops.
    fn next_rate(&self, k: &Knee) -> Result<f64, Stop> {
        let c = k.ceiling.iops;
        let tolerance = self.settings.tolerance;
        match (k.knee_iops, k.fail_iops) {
            (None, Some(hi)) if hi / 2.0 < c * LOWEST_SHARE => Err(Stop::NothingMeetsTarget),
            (None, Some(hi)) => Ok(hi / 2.0),
            (Some(lo), Some(hi)) if (hi - lo) / hi <= tolerance => Err(Stop::Converged),
            (Some(lo), Some(hi)) => Ok(inside(k, lo, hi, self.step)),
            (Some(lo), None) if (c - lo) / c <= tolerance / 4.0 => Err(Stop::CeilingMeetsTarget),
            (Some(lo), None) if (c - lo) / c <= tolerance => Ok(c),
            (Some(lo), None) => Ok((lo + c) / 2.0),
            (None, None) => unreachable!("a point was measured or reused"),
        }
    }

    /// Measures one open-loop point at `rate`, judges it against the target, shows it to
    /// `on_point` and adds it to the points (kept by offered rate); measures it once more when
    /// it missed on one burst (step 5 of the module doc). `Some` when the search must stop
    /// instead: the point limit was reached before it, or the user stopped it during it (a
    /// point cut short is not judged).
    fn measure(&mut self, k: &mut Knee, rate: f64) -> anyhow::Result<Option<Stop>> {
        let target = self.settings.target_p99_us;
        loop {
            if k.measured >= self.settings.max_points {
                return Ok(Some(Stop::PointLimit));
            }
            let mut p = self.probe.at(rate)?;
            if self.stop.load(Ordering::Relaxed) {
                return Ok(Some(Stop::Interrupted));
            }
            let first = k.runs(rate).next().is_none();
            p.passed = p.meets(target);
            p.burst = p.misses_on_a_burst(target);
            let again = first && p.burst;
            (self.on_point)(&p);
            k.measured += 1;
            if !first {
                k.remeasured += 1;
            }
            k.points.push(p);
            // Stable: the runs of one rate stay in the order measured.
            k.points
                .sort_by(|a, b| a.offered_iops.total_cmp(&b.offered_iops));
            if !again {
                return Ok(None);
            }
        }
    }
}

/// Step 3 of the module doc: where to measure inside the bracket `[lo, hi)`. The interpolated
/// crossing (log p99 linear in rate between the ends, `Knee::interpolated_crossing`), clamped
/// into the bracket's middle half so that it shrinks by at least a quarter whichever way the
/// point goes: a crossing interpolated on a convex curve (a queue's p99 rises ever faster)
/// lands below the knee, and unclamped it would creep up from the bottom a little each point.
/// The middle when an end has no usable p99.
fn inside(k: &Knee, lo: f64, hi: f64, step: Step) -> f64 {
    let mid = (lo + hi) / 2.0;
    if step == Step::Bisect {
        return mid;
    }
    let Some(x) = k.interpolated_crossing() else {
        return mid;
    };
    let w = hi - lo;
    x.clamp(lo + w / 4.0, hi - w / 4.0)
}

/// Sets the bracket from the points: the lowest failing rate (a rate's last run decides; step
/// 5 of the module doc), and the highest passing rate below it; notes a passing rate above the
/// failing one.
fn bracket(k: &mut Knee) {
    let passes = |r: f64| k.passes(r);
    let hi = k
        .points
        .iter()
        .map(|p| p.offered_iops)
        .filter(|&r| !passes(r))
        .reduce(f64::min);
    let below = |r: f64| hi.is_none_or(|h| r < h);
    let passing = || {
        k.points
            .iter()
            .map(|p| p.offered_iops)
            .filter(|&r| passes(r))
    };
    let lo = passing().filter(|&r| below(r)).reduce(f64::max);
    let not_monotone = passing().any(|r| !below(r));
    k.knee_iops = lo;
    k.fail_iops = hi;
    k.not_monotone = not_monotone;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted device: response p99 rises with the offered rate as an M/M/1 queue's would
    /// (`s / (1 - rate/ceiling)`), so the knee for a target is known in closed form.
    struct Mm1 {
        ceiling: f64,
        service_us: f64,
        asked: Vec<f64>,
        /// Rates that pass whatever their p99 (to script noise).
        lucky: Vec<f64>,
        /// Rates whose first run stalls (a stall of the host: its p99 10x the queue's, and
        /// the queue's own without the burst), in a band `[from, to)`.
        stall_band: Option<(f64, f64)>,
        /// Every run in the stall band stalls, not only the first.
        stall_every_run: bool,
    }

    impl Mm1 {
        fn p99(&self, r: f64) -> f64 {
            let rho = r / self.ceiling;
            if rho >= 1.0 {
                1e9
            } else {
                // M/M/1 response time p99: -ln(0.01) / (mu - lambda).
                4.605 * self.service_us / (1.0 - rho)
            }
        }
        /// The rate where p99 equals `target`.
        fn knee(&self, target: f64) -> f64 {
            self.ceiling * (1.0 - 4.605 * self.service_us / target)
        }
    }

    impl Probe for Mm1 {
        fn closed_loop(&mut self) -> anyhow::Result<Ceiling> {
            Ok(Ceiling {
                iops: self.ceiling,
                lat_p99_us: 4.605 * self.service_us,
            })
        }
        fn at(&mut self, r: f64) -> anyhow::Result<Point> {
            self.asked.push(r);
            let lucky = self.lucky.iter().any(|l| (l - r).abs() < 1.0);
            let run = self.asked.iter().filter(|&&a| a == r).count();
            let in_band = |band: Option<(f64, f64)>| band.is_some_and(|(a, b)| a <= r && r < b);
            let stalled = (run == 1 || self.stall_every_run) && in_band(self.stall_band);
            let p99 = if lucky {
                0.0
            } else if stalled {
                self.p99(r) * 10.0
            } else {
                self.p99(r)
            };
            Ok(Point {
                offered_iops: r,
                achieved_iops: r.min(self.ceiling),
                resp_p99_us: p99,
                resp_p99_low_us: p99 * 0.9,
                resp_p99_high_us: p99 * 1.1,
                resp_p99_no_burst_us: Some(if lucky { 0.0 } else { self.p99(r) }),
                ops: 2000,
                fell_behind: r >= self.ceiling && !lucky,
                ..Point::default()
            })
        }
    }

    fn settings(target: f64) -> Settings {
        Settings {
            target_p99_us: target,
            tolerance: 0.05,
            max_points: 12,
        }
    }

    fn device() -> Mm1 {
        Mm1 {
            ceiling: 10_000.0,
            service_us: 100.0,
            asked: Vec::new(),
            lucky: Vec::new(),
            stall_band: None,
            stall_every_run: false,
        }
    }

    fn run(d: &mut Mm1, target: f64) -> Knee {
        search(&settings(target), d, &AtomicBool::new(false), &mut |_| {}).unwrap()
    }

    #[test]
    fn the_knee_of_a_queue_lands_in_a_bracket_within_the_tolerance_around_the_exact_answer() {
        for target in [600.0, 1000.0, 2000.0, 5000.0, 20_000.0] {
            let mut d = device();
            let truth = d.knee(target);
            let k = run(&mut d, target);
            let (lo, hi) = (k.knee_iops.unwrap(), k.fail_iops.unwrap());
            assert_eq!(k.stop, Stop::Converged, "{target}: {k:?}");
            assert!(
                lo <= truth && truth < hi,
                "{target}: {truth} not in [{lo}, {hi})"
            );
            assert!((hi - lo) / hi <= 0.05, "{target}: [{lo}, {hi})");
            // From C/2 (or below), the interpolated step within the bracket; no run twice.
            assert!(k.measured <= 7, "{target}: {} points", k.measured);
            assert_eq!(k.remeasured, 0, "{target}: {k:?}");
            assert!(k
                .points
                .iter()
                .all(|p| p.passed == (p.resp_p99_us <= target)));
        }
    }

    #[test]
    fn a_target_met_at_the_ceiling_measures_the_ceiling_and_says_so() {
        let mut d = device();
        d.ceiling = 1e6; // p99 at rate < C stays ~ 4.6 * 100 µs until very close to C
        let k = run(&mut d, 1e12);
        assert_eq!(k.stop, Stop::Converged, "{k:?}"); // C itself fell behind
        assert_eq!(k.fail_iops, Some(1e6));
        let mut d = device();
        d.lucky = vec![10_000.0]; // the ceiling, open loop, passes
        let k = run(&mut d, 1e12);
        assert_eq!(k.stop, Stop::CeilingMeetsTarget, "{k:?}");
        assert_eq!(k.knee_iops, Some(10_000.0));
        assert!(k.fail_iops.is_none());
    }

    #[test]
    fn a_target_below_the_service_time_halves_down_to_a_64th_of_the_ceiling_and_finds_nothing() {
        let mut d = device();
        let k = run(&mut d, 100.0); // p99 >= 460 µs at any rate
        assert_eq!(k.stop, Stop::NothingMeetsTarget);
        assert!(k.knee_iops.is_none());
        assert_eq!(d.asked, vec![5000.0, 2500.0, 1250.0, 625.0, 312.5, 156.25]);
        assert!(
            k.confidence_line().starts_with("no knee"),
            "{}",
            k.confidence_line()
        );
    }

    #[test]
    fn no_rate_is_measured_twice_and_the_point_limit_stops_the_search() {
        let mut d = device();
        let s = Settings {
            max_points: 3,
            ..settings(2000.0)
        };
        let k = search(&s, &mut d, &AtomicBool::new(false), &mut |_| {}).unwrap();
        assert_eq!(k.stop, Stop::PointLimit);
        assert_eq!(k.measured, 3);
        let mut asked = d.asked.clone();
        asked.dedup();
        assert_eq!(asked.len(), d.asked.len());
    }

    #[test]
    fn a_passing_rate_above_a_failing_one_is_flagged_and_the_lower_answer_kept() {
        let mut d = device();
        d.lucky = vec![9_375.0]; // (7500 + 10000) / 2 ... scripted: passes though past the knee
        let truth = d.knee(2000.0);
        let k = run(&mut d, 2000.0);
        if d.asked.contains(&9_375.0) {
            assert!(k.not_monotone, "{k:?}");
        }
        assert!(k.knee_iops.unwrap() <= truth, "{k:?}");
    }

    #[test]
    fn a_rate_past_its_knee_misses_all_along_and_is_not_measured_again() {
        let mut d = device();
        let truth = d.knee(2000.0);
        let k = run(&mut d, 2000.0);
        let hi = k.fail_iops.unwrap();
        assert_eq!(k.stop, Stop::Converged, "{k:?}");
        assert!(k.knee_iops.unwrap() <= truth && truth < hi, "{k:?}");
        assert_eq!(k.remeasured, 0, "{k:?}");
        let mut asked = d.asked.clone();
        asked.sort_by(f64::total_cmp);
        asked.dedup();
        assert_eq!(asked.len(), d.asked.len(), "{:?}", d.asked);
        assert!(k.points.iter().all(|p| !p.burst), "{k:?}");
    }

    #[test]
    fn a_stall_below_the_knee_is_measured_again_at_once_and_the_search_climbs_to_the_knee() {
        // Without step 5, the first point at 5000 (a stall: 10x its p99) would end the search
        // in [4688, 5000), 48% under the knee at 9079. It goes burst, pass.
        let mut d = device();
        let truth = d.knee(5000.0);
        d.stall_band = Some((4990.0, 5010.0));
        let k = run(&mut d, 5000.0);
        let (lo, hi) = (k.knee_iops.unwrap(), k.fail_iops.unwrap());
        assert_eq!(k.stop, Stop::Converged, "{k:?}");
        assert!(
            lo <= truth && truth < hi,
            "{truth} not in [{lo}, {hi}): {k:?}"
        );
        assert_eq!(k.remeasured, 1, "{k:?}");
        assert_eq!(&d.asked[..2], [5000.0, 5000.0], "at once: {:?}", d.asked);
        // The stalled run stays on the plot, failed and marked, beside the one that passed.
        let runs: Vec<(bool, bool)> = k.runs(5000.0).map(|p| (p.passed, p.burst)).collect();
        assert_eq!(runs, [(false, true), (true, false)], "{k:?}");
    }

    #[test]
    fn a_rate_that_stalls_twice_in_a_row_fails() {
        let mut d = device();
        let truth = d.knee(5000.0);
        d.stall_band = Some((4990.0, 5010.0));
        d.stall_every_run = true;
        let k = run(&mut d, 5000.0);
        assert_eq!(
            d.asked.iter().filter(|&&r| r == 5000.0).count(),
            2,
            "{:?}",
            d.asked
        );
        assert_eq!(k.fail_iops, Some(5000.0), "{k:?}");
        assert!(k.knee_iops.unwrap() < 5000.0 && 5000.0 < truth, "{k:?}");
    }

    #[test]
    fn a_backlog_at_the_end_is_a_burst_only_when_the_burst_reached_the_end() {
        let p = Point {
            resp_p99_us: 30_000.0,
            resp_p99_no_burst_us: Some(3_000.0),
            fell_behind: true,
            ..Point::default()
        };
        assert!(
            !p.misses_on_a_burst(5_000.0),
            "a backlog of its own: the rate's"
        );
        let at_end = Point {
            burst_at_end: true,
            ..p.clone()
        };
        assert!(at_end.misses_on_a_burst(5_000.0));
        assert!(!at_end.meets(5_000.0));
        // Without the burst it still misses: no second run.
        assert!(!Point {
            resp_p99_no_burst_us: Some(6_000.0),
            ..at_end
        }
        .misses_on_a_burst(5_000.0));
    }

    #[test]
    fn a_point_limit_before_the_second_run_leaves_the_rate_failed() {
        let mut d = device();
        d.stall_band = Some((4990.0, 5010.0));
        let s = Settings {
            max_points: 1,
            ..settings(5000.0)
        };
        let k = search(&s, &mut d, &AtomicBool::new(false), &mut |_| {}).unwrap();
        assert_eq!(k.stop, Stop::PointLimit, "{k:?}");
        assert_eq!(d.asked, [5000.0]);
        assert_eq!(k.fail_iops, Some(5000.0), "{k:?}");
        assert_eq!(k.knee_iops, None, "{k:?}");
    }

    #[test]
    fn the_interpolated_step_measures_fewer_points_than_bisection_and_lands_as_close() {
        // Ten targets whose knees spread from 5% to 95% of the ceiling.
        let mut points = [0; 2];
        let mut worst_error = [0.0f64; 2];
        for (i, step) in [Step::Bisect, Step::Interpolate].into_iter().enumerate() {
            for share in (0..10).map(|j| 0.05 + 0.1 * j as f64) {
                let mut d = device();
                let target = 4.605 * d.service_us / (1.0 - share);
                let truth = d.knee(target);
                let s = settings(target);
                let k =
                    search_with(step, &s, &mut d, &AtomicBool::new(false), &mut |_| {}).unwrap();
                let (lo, hi) = (k.knee_iops.unwrap(), k.fail_iops.unwrap());
                assert_eq!(k.stop, Stop::Converged, "{step:?} {share}: {k:?}");
                assert!(
                    lo <= truth && truth < hi && (hi - lo) / hi <= s.tolerance,
                    "{step:?} {share}: {truth} not in [{lo}, {hi})"
                );
                points[i] += k.measured;
                worst_error[i] = worst_error[i].max((truth - lo) / truth);
            }
        }
        let mean = points.map(|n| n as f64 / 10.0);
        eprintln!(
            "mean points: bisection {}, interpolated {}",
            mean[0], mean[1]
        );
        eprintln!("worst answer below the knee: {worst_error:?}");
        assert!(mean[1] <= mean[0] - 1.0, "{mean:?}");
        assert!(worst_error[1] <= worst_error[0], "{worst_error:?}");
    }

    #[test]
    fn the_step_is_the_middle_when_the_top_has_no_usable_p99() {
        let mut d = device();
        let k = run(&mut d, 2000.0);
        let (lo, hi) = (k.knee_iops.unwrap(), k.fail_iops.unwrap());
        let w = hi - lo;
        let x = inside(&k, lo, hi, Step::Interpolate);
        assert!(lo + w / 4.0 <= x && x <= hi - w / 4.0, "{lo} {x} {hi}");
        let mut behind = k.clone();
        for p in behind.points.iter_mut().filter(|p| p.offered_iops == hi) {
            p.fell_behind = true;
        }
        assert_eq!(inside(&behind, lo, hi, Step::Interpolate), (lo + hi) / 2.0);
        let mut zero = k.clone();
        for p in zero.points.iter_mut().filter(|p| p.offered_iops == lo) {
            p.resp_p99_us = 0.0;
        }
        assert_eq!(inside(&zero, lo, hi, Step::Interpolate), (lo + hi) / 2.0);
    }

    #[test]
    fn the_crossing_is_interpolated_inside_the_bracket_near_the_exact_knee() {
        for target in [1000.0, 2000.0, 5000.0] {
            let mut d = device();
            let truth = d.knee(target);
            let k = run(&mut d, target);
            let (lo, hi) = (k.knee_iops.unwrap(), k.fail_iops.unwrap());
            let x = k.crossing_iops().unwrap();
            assert!(lo <= x && x <= hi, "{lo} {x} {hi}");
            // Log-linear between two points of an M/M/1 curve: within 1% of the closed form.
            assert!((x - truth).abs() / truth < 0.01, "{target}: {x} vs {truth}");
            assert!(k.confidence_line().contains("crosses the target near"));
        }
        let mut d = device();
        d.ceiling = 1e6;
        let k = run(&mut d, 1e12); // the top fell behind: no p99 to interpolate with
        assert_eq!(k.crossing_iops(), k.knee_iops);
        assert_eq!(k.slope(), None);
    }

    #[test]
    fn a_bracket_where_p99_barely_rises_is_called_shallow_and_a_steep_one_is_not() {
        // M/M/1 at a target 1.3x the idle p99 (knee at 23% load): p99 rises slowly there.
        let mut d = device();
        let k = run(&mut d, 600.0);
        assert!(k.slope().unwrap() < SHALLOW_SLOPE, "{:?}", k.slope());
        assert!(
            k.confidence_line().contains("shallow"),
            "{}",
            k.confidence_line()
        );
        // At 20x the idle p99 (knee at 95% load) it is steep.
        let mut d = device();
        let k = run(&mut d, 9210.0);
        assert!(k.slope().unwrap() > SHALLOW_SLOPE, "{:?}", k.slope());
        assert!(!k.confidence_line().contains("shallow"));
    }

    #[test]
    fn a_raised_stop_flag_ends_the_search_as_interrupted() {
        let mut d = device();
        let stop = AtomicBool::new(false);
        let k = search(&settings(2000.0), &mut d, &stop, &mut |_| {
            stop.store(true, Ordering::Relaxed)
        })
        .unwrap();
        assert_eq!(k.stop, Stop::Interrupted);
        assert_eq!(k.measured, 1);
    }
}
