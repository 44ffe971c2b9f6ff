//! Axis ticks shared by the figures: round steps (1, 2, 5 × 10^k) on linear axes, decades on log
//! axes; their labels ([`fmt_tick`]) and the one formatter of a time in µs ([`fmt_us`]) live in
//! `crate::units`, below every layer, and are re-exported here.

pub use crate::units::{fmt_tick, fmt_us, UsStyle};

/// A round step near `span / 5`: 1, 2 or 5 × 10^k.
pub fn nice_step(span: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f < 1.5 {
        1.0
    } else if f < 3.5 {
        2.0
    } else if f < 7.5 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Ticks from 0 to at least `max` on a linear axis, and the axis top (the last tick).
pub fn linear_ticks(max: f64) -> (Vec<f64>, f64) {
    let step = nice_step(max);
    let n = (max / step).ceil().max(1.0) as usize;
    let ticks: Vec<f64> = (0..=n).map(|i| i as f64 * step).collect();
    let top = ticks[ticks.len() - 1];
    (ticks, top)
}

/// Decade ticks covering `min..=max` (both > 0) on a log axis.
pub fn log_ticks(min: f64, max: f64) -> Vec<f64> {
    let lo = min.max(f64::MIN_POSITIVE).log10().floor() as i32;
    let hi = max.max(min).log10().ceil() as i32;
    (lo..=hi.max(lo + 1)).map(|k| 10f64.powi(k)).collect()
}

/// Whether values spanning `min..max` need a log axis to show the smallest: more than ~50×.
pub fn wants_log(min: f64, max: f64) -> bool {
    min > 0.0 && max / min > 50.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_time_in_us_reads_in_its_unit_in_each_style() {
        let all = |style| {
            [
                0.4,
                9.876,
                12.34,
                123.4,
                999.7,
                1500.0,
                12_345.0,
                999_700.0,
                1.25e6,
                f64::NAN,
            ]
            .map(|us| fmt_us(us, style))
        };
        assert_eq!(
            all(UsStyle::Compact),
            [
                "0.40µs", "9.88µs", "12.3µs", "123µs", "1.00ms", "1.50ms", "12.3ms", "1.00s",
                "1.25s", "NaNs"
            ]
        );
        assert_eq!(
            all(UsStyle::Fixed),
            [
                "0 µs", "10 µs", "12 µs", "123 µs", "1000 µs", "1.5 ms", "12.3 ms", "999.7 ms",
                "1.25 s", "NaN s"
            ]
        );
        assert_eq!(fmt_us(500.0, UsStyle::Tick), "500 µs");
        assert_eq!(fmt_us(1500.0, UsStyle::Tick), "1.5 ms");
        assert_eq!(fmt_us(2.5e6, UsStyle::Tick), "2.5 s");
    }

    use super::*;

    #[test]
    fn tick_labels_have_no_dot_zero_noise() {
        assert_eq!(fmt_tick(2000.0), "2000");
        assert_eq!(fmt_tick(20000.0), "20k");
        assert_eq!(fmt_tick(12500.0), "12.5k");
        assert_eq!(fmt_tick(1.5e6), "1.5M");
        assert_eq!(fmt_tick(0.5), "0.5");
        assert_eq!(fmt_tick(0.001), "0.001");
        assert_eq!(fmt_tick(100.0), "100");
        assert_eq!(fmt_tick(0.0), "0");
    }

    #[test]
    fn linear_ticks_are_round_and_reach_the_maximum() {
        let (t, top) = linear_ticks(8745.0);
        assert_eq!(t[1], 2000.0);
        assert!((8745.0..12000.0).contains(&top));
        assert_eq!(
            log_ticks(0.4, 9000.0),
            vec![0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]
        );
        assert!(wants_log(1.0, 51.0) && !wants_log(1.0, 49.0));
    }
}
