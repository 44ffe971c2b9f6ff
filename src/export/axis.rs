//! Axis ticks shared by the figures: round steps (1, 2, 5 × 10^k) on linear axes, decades on log
//! axes, and labels without `.0` noise (`2000`, `2k`, `0.5`, `1.5M`); and [`fmt_us`], the one
//! formatter of a time in µs (the explorer's columns, the knee's figure, a fleet's skew).

/// A tick label: integers without decimals, thousands as `k`, millions as `M` where that is
/// exact enough; small values with up to three significant digits.
pub fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e9 {
        trim(format!("{:.2}", v / 1e9)) + "G"
    } else if a >= 1e6 {
        trim(format!("{:.2}", v / 1e6)) + "M"
    } else if a >= 1e4 {
        trim(format!("{:.1}", v / 1e3)) + "k"
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else {
        let digits = (-a.log10().floor()) as usize + 2;
        trim(format!("{v:.digits$}"))
    }
}

/// How [`fmt_us`] writes its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsStyle {
    /// Three significant digits and no space (`9.87µs`, `12.3ms`, `1.50s`): the explorer's
    /// narrow columns. The unit is chosen after rounding, so 999.7 µs reads `1.00ms`.
    Compact,
    /// An axis label's number ([`fmt_tick`]) and a space (`500 µs`, `1.5 ms`): the knee's
    /// figure and lines.
    Tick,
    /// Whole µs, tenths of a ms, hundredths of a s, and a space (`840 µs`, `2.5 ms`, `1.25 s`):
    /// a fleet's start skew.
    Fixed,
}

/// A time given in microseconds, in the unit that reads best: µs below a millisecond, ms below
/// a second, s above. The one formatter of such times; `style` is how the number is written.
pub fn fmt_us(us: f64, style: UsStyle) -> String {
    let (ms_from, s_from) = match style {
        UsStyle::Compact => (999.5, 999_500.0),
        UsStyle::Tick | UsStyle::Fixed => (1e3, 1e6),
    };
    let unit = if style == UsStyle::Tick {
        // A figure's label: what is not past a bound (NaN) stays in µs.
        if us >= s_from {
            "s"
        } else if us >= ms_from {
            "ms"
        } else {
            "µs"
        }
    } else if us < ms_from {
        "µs"
    } else if us < s_from {
        "ms"
    } else {
        "s"
    };
    let v = match unit {
        "µs" => us,
        "ms" => us / 1e3,
        _ => us / 1e6,
    };
    match style {
        UsStyle::Compact if unit == "s" || v < 10.0 => format!("{v:.2}{unit}"),
        UsStyle::Compact if v < 100.0 => format!("{v:.1}{unit}"),
        UsStyle::Compact => format!("{v:.0}{unit}"),
        UsStyle::Tick => format!("{} {unit}", fmt_tick(v)),
        UsStyle::Fixed => match unit {
            "µs" => format!("{v:.0} µs"),
            "ms" => format!("{v:.1} ms"),
            _ => format!("{v:.2} s"),
        },
    }
}

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
