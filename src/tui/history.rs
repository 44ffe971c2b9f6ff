//! What the explorer remembers over time, in constant memory however long it runs: the chart's
//! throughput and latency (p50, p99) and the device's util, await and queue, each at three
//! resolutions — 100 ms points for the last minute, 1 s points for the last 10 minutes, 10 s
//! points for the last hour ([`Span`], the chart's `v`) — and, per row, its whole run at a
//! resolution that halves as it grows ([`RowSeries`], what `e` exports).
//!
//! A coarse point is exact, not a mean of means: its throughput is the mean of its 100 ms
//! points (equal spans, so the mean of rates is the rate), and its latency quantiles come from
//! the merged histogram of its operations (one accumulating histogram per coarse tier, reset
//! when its point is complete). So a 10 s point's p99 is the p99 of those 10 s. Only
//! [`RowSeries`], which merges neighbouring points when it is full and keeps no histograms,
//! approximates: a merged point's p99 is the higher of its halves' (an upper bound) and its
//! p50 their mean.
//!
//! A row of hours costs what a row of a minute does: 600 + 600 + 360 points of three figures,
//! two histograms, and [`ROW_POINTS`] points per row series; the tests hold the byte count.

use hdrhistogram::Histogram;
use std::collections::VecDeque;

/// The span of one base point: the throughput series' 100 ms bins.
pub const BASE_S: f64 = crate::measure::aggregate::SERIES_BIN_NS as f64 / 1e9;

/// Most setting-change marks kept (the oldest go first; marks older than the hour go anyway).
pub const MAX_MARKS: usize = 1000;

/// What the chart shows: the last minute, 10 minutes or hour (`v` steps through them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Span {
    #[default]
    Minute,
    TenMinutes,
    Hour,
}

impl Span {
    /// Every span, finest first.
    pub const ALL: [Span; 3] = [Span::Minute, Span::TenMinutes, Span::Hour];

    /// Base (100 ms) points per point of this span.
    pub fn per(self) -> u64 {
        match self {
            Span::Minute => 1,
            Span::TenMinutes => 10,
            Span::Hour => 100,
        }
    }

    /// Points kept.
    pub fn capacity(self) -> usize {
        match self {
            Span::Minute | Span::TenMinutes => 600,
            Span::Hour => 360,
        }
    }

    /// Seconds per point.
    pub fn point_s(self) -> f64 {
        self.per() as f64 * BASE_S
    }

    /// `60 s`, `10 min`, `1 h`.
    pub fn label(self) -> &'static str {
        match self {
            Span::Minute => "60 s",
            Span::TenMinutes => "10 min",
            Span::Hour => "1 h",
        }
    }

    /// The next span (`v`), back to the minute after the hour.
    pub fn next(self) -> Span {
        match self {
            Span::Minute => Span::TenMinutes,
            Span::TenMinutes => Span::Hour,
            Span::Hour => Span::Minute,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One point of the chart.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    /// Throughput over the point's span, MiB/s.
    pub mib_s: f64,
    /// Median latency of its operations, µs; NaN when it had none.
    pub p50_us: f64,
    /// 99th percentile latency of its operations, µs; NaN when it had none.
    pub p99_us: f64,
}

/// The p50 and p99 of `h` in µs (NaN for an empty histogram).
pub fn quantiles_us(h: Option<&Histogram<u64>>) -> (f64, f64) {
    match h.filter(|h| !h.is_empty()) {
        Some(h) => (
            h.value_at_quantile(0.50) as f64 / 1e3,
            h.value_at_quantile(0.99) as f64 / 1e3,
        ),
        None => (f64::NAN, f64::NAN),
    }
}

/// Means of `N` figures over `per` pushed values, the last `cap` of them.
#[derive(Debug, Clone)]
struct MeanTier<const N: usize> {
    per: u64,
    cap: usize,
    points: VecDeque<[f64; N]>,
    sum: [f64; N],
    n: u64,
}

impl<const N: usize> MeanTier<N> {
    fn new(span: Span) -> Self {
        MeanTier {
            per: span.per(),
            cap: span.capacity(),
            points: VecDeque::with_capacity(span.capacity()),
            sum: [0.0; N],
            n: 0,
        }
    }

    /// Adds a value; true when it completed a point.
    fn push(&mut self, v: [f64; N]) -> bool {
        for (s, x) in self.sum.iter_mut().zip(v) {
            *s += if x.is_finite() { x } else { 0.0 };
        }
        self.n += 1;
        if self.n < self.per {
            return false;
        }
        let mean = self.partial().unwrap_or([0.0; N]);
        if self.points.len() == self.cap {
            self.points.pop_front();
        }
        self.points.push_back(mean);
        self.sum = [0.0; N];
        self.n = 0;
        true
    }

    /// The point being filled, as it stands.
    fn partial(&self) -> Option<[f64; N]> {
        (self.n > 0).then(|| self.sum.map(|s| s / self.n as f64))
    }

    fn clear(&mut self) {
        self.points.clear();
        self.sum = [0.0; N];
        self.n = 0;
    }
}

/// `N` figures over time at the three [`Span`]s: the device panel's history (util %, await,
/// queue), one value per device sample.
#[derive(Debug, Clone)]
pub struct Tiers<const N: usize> {
    tiers: [MeanTier<N>; 3],
    pushed: u64,
}

impl<const N: usize> Default for Tiers<N> {
    fn default() -> Self {
        Tiers {
            tiers: Span::ALL.map(MeanTier::new),
            pushed: 0,
        }
    }
}

impl<const N: usize> Tiers<N> {
    /// Adds one value of each figure.
    pub fn push(&mut self, v: [f64; N]) {
        for t in &mut self.tiers {
            t.push(v);
        }
        self.pushed += 1;
    }

    /// The points of `span`, oldest first; the coarse spans end with their partial point.
    pub fn points(&self, span: Span) -> Vec<[f64; N]> {
        let t = &self.tiers[span.index()];
        let mut v: Vec<[f64; N]> = t.points.iter().copied().collect();
        v.extend(t.partial());
        v
    }

    /// Whether nothing was pushed since the last clear.
    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }

    pub fn clear(&mut self) {
        self.tiers.iter_mut().for_each(MeanTier::clear);
        self.pushed = 0;
    }

    /// Bytes it holds (points and their containers), for the memory tests.
    pub fn heap_bytes(&self) -> usize {
        self.tiers
            .iter()
            .map(|t| t.points.capacity() * std::mem::size_of::<[f64; N]>())
            .sum()
    }
}

/// The chart's history across settings: throughput and latency quantiles at the three spans,
/// and where a setting changed.
#[derive(Debug, Clone)]
pub struct History {
    /// Throughput per point (its mean over the point).
    mib_s: Tiers<1>,
    /// Latency quantiles (p50, p99 in µs) per point of each span.
    latency: [VecDeque<(f64, f64)>; 3],
    /// The merged histograms of the coarse spans' points being filled (10 min, 1 h).
    acc: [Option<Histogram<u64>>; 2],
    /// Where a setting changed: the base index of its first point, and its settings.
    marks: VecDeque<(u64, String)>,
}

impl Default for History {
    fn default() -> Self {
        History {
            mib_s: Tiers::default(),
            latency: Span::ALL.map(|s| VecDeque::with_capacity(s.capacity())),
            acc: [None, None],
            marks: VecDeque::new(),
        }
    }
}

impl History {
    /// Adds one 100 ms point: its throughput and, when it had operations, their latencies.
    pub fn push(&mut self, mib_s: f64, latency: Option<&Histogram<u64>>) {
        for acc in &mut self.acc {
            if let Some(h) = latency.filter(|h| !h.is_empty()) {
                match acc {
                    Some(a) => {
                        // Same bounds everywhere, so adding cannot fail.
                        let _ = a.add(h);
                    }
                    None => *acc = Some(h.clone()),
                }
            }
        }
        let pushed_before = self.mib_s.pushed;
        self.mib_s.push([mib_s]);
        let q0 = quantiles_us(latency);
        for (k, span) in Span::ALL.into_iter().enumerate() {
            // Did this push complete a point of `span`?
            let done = (pushed_before + 1).is_multiple_of(span.per());
            if !done {
                continue;
            }
            let q = match k {
                0 => q0,
                _ => {
                    let q = quantiles_us(self.acc[k - 1].as_ref());
                    if let Some(a) = &mut self.acc[k - 1] {
                        a.reset();
                    }
                    q
                }
            };
            let lat = &mut self.latency[k];
            if lat.len() == span.capacity() {
                lat.pop_front();
            }
            lat.push_back(q);
        }
        // Marks older than the hour's oldest point are of no view.
        let oldest = self.oldest_base(Span::Hour);
        while self.marks.front().is_some_and(|(at, _)| *at < oldest) {
            self.marks.pop_front();
        }
    }

    /// Marks the next point as where `label`'s setting begins.
    pub fn mark(&mut self, label: String) {
        if self.marks.len() == MAX_MARKS {
            self.marks.pop_front();
        }
        self.marks.push_back((self.mib_s.pushed, label));
    }

    /// Forgets everything (`r`).
    pub fn clear(&mut self) {
        *self = History::default();
    }

    /// Whether nothing was pushed since the last clear.
    pub fn is_empty(&self) -> bool {
        self.mib_s.is_empty()
    }

    /// 100 ms points pushed since the last clear.
    pub fn pushed(&self) -> u64 {
        self.mib_s.pushed
    }

    /// The base index of the oldest point `span` holds (its partial point included).
    fn oldest_base(&self, span: Span) -> u64 {
        let t = &self.mib_s.tiers[span.index()];
        let complete = self.mib_s.pushed / span.per();
        (complete - t.points.len() as u64) * span.per()
    }

    /// The points of `span`, oldest first (the coarse spans end with the point being filled).
    pub fn points(&self, span: Span) -> Vec<Point> {
        let k = span.index();
        let mut out: Vec<Point> = self.mib_s.tiers[k]
            .points
            .iter()
            .zip(&self.latency[k])
            .map(|(m, (p50, p99))| Point {
                mib_s: m[0],
                p50_us: *p50,
                p99_us: *p99,
            })
            .collect();
        if let Some(m) = self.mib_s.tiers[k].partial() {
            let (p50_us, p99_us) =
                quantiles_us(self.acc.get(k.wrapping_sub(1)).and_then(|a| a.as_ref()));
            out.push(Point {
                mib_s: m[0],
                p50_us,
                p99_us,
            });
        }
        out
    }

    /// The newest 100 ms point.
    pub fn last(&self) -> Option<Point> {
        let m = self.mib_s.tiers[0].points.back()?;
        let (p50_us, p99_us) = self.latency[0].back().copied()?;
        Some(Point {
            mib_s: m[0],
            p50_us,
            p99_us,
        })
    }

    /// The marks within `span`'s points: the index in [`History::points`] and the label.
    pub fn marks(&self, span: Span) -> Vec<(usize, &str)> {
        let first = self.oldest_base(span) / span.per();
        self.marks
            .iter()
            .filter(|(at, _)| *at / span.per() >= first)
            .map(|(at, l)| ((at / span.per() - first) as usize, l.as_str()))
            .collect()
    }

    /// Bytes it holds, for the memory tests: the points, the accumulating histograms and the
    /// marks.
    pub fn heap_bytes(&self) -> usize {
        self.mib_s.heap_bytes()
            + self
                .latency
                .iter()
                .map(|l| l.capacity() * std::mem::size_of::<(f64, f64)>())
                .sum::<usize>()
            + self
                .acc
                .iter()
                .flatten()
                .map(histogram_bytes)
                .sum::<usize>()
            + self
                .marks
                .iter()
                .map(|(_, l)| std::mem::size_of::<(u64, String)>() + l.capacity())
                .sum::<usize>()
    }
}

/// Bytes of a histogram's counts (what dominates its size).
pub fn histogram_bytes(h: &Histogram<u64>) -> usize {
    h.distinct_values() * std::mem::size_of::<u64>()
}

/// Points a [`RowSeries`] keeps before it halves its resolution.
pub const ROW_POINTS: usize = 720;

/// One row's whole run: its points from its start, at 100 ms while they fit in
/// [`ROW_POINTS`], then each time it fills, neighbours merged two by two (200 ms, 400 ms, …).
/// A merged point's throughput is the mean of its halves (equal spans), its p99 the higher of
/// theirs (an upper bound: the histograms are not kept), its p50 their mean.
#[derive(Debug, Clone, PartialEq)]
pub struct RowSeries {
    /// Base (100 ms) points per point.
    pub per: u64,
    /// Complete points, oldest first.
    pub points: Vec<Point>,
    /// The point being filled (`per` > 1) and the base points it holds.
    filling: Option<(Point, u64)>,
}

impl Default for RowSeries {
    fn default() -> Self {
        RowSeries {
            per: 1,
            points: Vec::with_capacity(ROW_POINTS),
            filling: None,
        }
    }
}

/// The two points as one: mean throughput and p50, the higher p99 (NaN where neither has one).
fn merge(a: Point, b: Point) -> Point {
    let mean = |x: f64, y: f64| match (x.is_nan(), y.is_nan()) {
        (true, true) => f64::NAN,
        (true, false) => y,
        (false, true) => x,
        (false, false) => (x + y) / 2.0,
    };
    Point {
        mib_s: (a.mib_s + b.mib_s) / 2.0,
        p50_us: mean(a.p50_us, b.p50_us),
        p99_us: match (a.p99_us.is_nan(), b.p99_us.is_nan()) {
            (true, _) => b.p99_us,
            (_, true) => a.p99_us,
            _ => a.p99_us.max(b.p99_us),
        },
    }
}

impl RowSeries {
    /// Adds one 100 ms point.
    pub fn push(&mut self, p: Point) {
        let (acc, n) = match self.filling.take() {
            // Weighted so the throughput stays the mean of the base points it holds.
            Some((acc, n)) => {
                let w = n as f64;
                let mut m = merge(acc, p);
                m.mib_s = (acc.mib_s * w + p.mib_s) / (w + 1.0);
                if acc.p50_us.is_finite() && p.p50_us.is_finite() {
                    m.p50_us = (acc.p50_us * w + p.p50_us) / (w + 1.0);
                }
                (m, n + 1)
            }
            None => (p, 1),
        };
        if n < self.per {
            self.filling = Some((acc, n));
            return;
        }
        self.points.push(acc);
        if self.points.len() == ROW_POINTS {
            let halves: Vec<Point> = self
                .points
                .chunks(2)
                .map(|c| {
                    if c.len() == 2 {
                        merge(c[0], c[1])
                    } else {
                        c[0]
                    }
                })
                .collect();
            self.points = halves;
            self.points.reserve_exact(ROW_POINTS - self.points.len());
            self.per *= 2;
        }
    }

    /// Seconds per point.
    pub fn point_s(&self) -> f64 {
        self.per as f64 * BASE_S
    }

    /// Bytes it holds, for the memory tests.
    pub fn heap_bytes(&self) -> usize {
        self.points.capacity() * std::mem::size_of::<Point>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(us: u64, n: u64) -> Histogram<u64> {
        let mut h = crate::measure::new_latency_histogram();
        h.record_n(us * 1000, n).unwrap();
        h
    }

    #[test]
    fn a_coarse_points_p99_is_that_of_its_operations_not_a_mean_of_p99s() {
        let mut h = History::default();
        // Nine points of 100 µs operations, one of 10 ms operations: 10% slow.
        for i in 0..10 {
            let lat = if i == 9 {
                hist(10_000, 100)
            } else {
                hist(100, 100)
            };
            h.push(100.0 + i as f64, Some(&lat));
        }
        let minute = h.points(Span::Minute);
        assert_eq!(minute.len(), 10);
        assert!((minute[0].p99_us - 100.0).abs() < 2.0, "{:?}", minute[0]);
        let ten = h.points(Span::TenMinutes);
        assert_eq!(ten.len(), 1, "one complete 1 s point");
        assert!(
            (ten[0].mib_s - 104.5).abs() < 1e-9,
            "the mean of its points"
        );
        assert!(
            (ten[0].p99_us - 10_000.0).abs() < 100.0,
            "p99 of the merged operations: {:?}",
            ten[0]
        );
        assert!((ten[0].p50_us - 100.0).abs() < 2.0);
        // The hour's point is being filled: shown as it stands.
        let hour = h.points(Span::Hour);
        assert_eq!(hour.len(), 1);
        assert!((hour[0].mib_s - 104.5).abs() < 1e-9);
    }

    #[test]
    fn each_span_keeps_its_capacity_and_marks_follow_their_points() {
        let mut h = History::default();
        let lat = hist(50, 10);
        for i in 0..10_000u64 {
            if i == 9_950 || i == 5_000 {
                h.mark(format!("at {i}"));
            }
            h.push(1.0, Some(&lat));
        }
        assert_eq!(h.points(Span::Minute).len(), 600);
        assert_eq!(h.points(Span::TenMinutes).len(), 600);
        assert_eq!(h.points(Span::Hour).len(), 100, "1000 s of 10 s points");
        // The mark at 9950 is 50 points from the end of the minute, 5 of the 10 minutes.
        assert_eq!(h.marks(Span::Minute), vec![(550, "at 9950")]);
        assert_eq!(
            h.marks(Span::TenMinutes),
            vec![(100, "at 5000"), (595, "at 9950")]
        );
        assert_eq!(h.marks(Span::Hour), vec![(50, "at 5000"), (99, "at 9950")]);
    }

    #[test]
    fn the_history_of_hours_costs_what_the_history_of_minutes_does() {
        let mut h = History::default();
        let lat = hist(50, 10);
        let mut sizes = Vec::new();
        for i in 0..(5 * 36_000u64) {
            if i % 600 == 0 {
                h.mark("read pread 1M".into());
            }
            // Latencies now and then: merging histograms is slow in a debug build.
            h.push(1.0, (i % 1000 == 0).then_some(&lat));
            if i == 36_000 || i == 5 * 36_000 - 1 {
                sizes.push(h.heap_bytes());
            }
        }
        // The same points; the marks of the last hour (one every minute) may differ by one.
        assert!(
            sizes[1].abs_diff(sizes[0]) <= 64,
            "one hour and five hold the same bytes: {sizes:?}"
        );
        assert!(sizes[1] < 200_000, "{}", sizes[1]);
    }

    #[test]
    fn a_row_series_halves_its_resolution_when_full_and_keeps_its_mean() {
        let mut r = RowSeries::default();
        let n = 10 * ROW_POINTS as u64;
        for i in 0..n {
            r.push(Point {
                mib_s: (i % 2) as f64 * 200.0,
                p50_us: 10.0,
                p99_us: if i == 77 { 5000.0 } else { 20.0 },
            });
        }
        assert!(r.points.len() <= ROW_POINTS);
        assert!(r.per >= 16, "{}", r.per);
        assert!(r.points.len() as u64 * r.per <= n && (r.points.len() as u64 + 1) * r.per > n);
        for p in &r.points {
            assert!((p.mib_s - 100.0).abs() < 1e-9, "{p:?}");
        }
        assert_eq!(
            r.points[(77 / r.per) as usize].p99_us,
            5000.0,
            "a merged p99 keeps the higher"
        );
        let bytes = r.heap_bytes();
        for _ in 0..n {
            r.push(Point::default());
        }
        assert_eq!(r.heap_bytes(), bytes);
    }
}
