//! Numbers as people read them: a tick label without `.0` noise (`2000`, `2k`, `0.5`, `1.5M`)
//! and a time given in µs in the unit that reads best (the explorer's columns, the figures, the
//! verdict's sentences, a fleet's skew). Below every layer, so the judge and the exporters
//! write a time the same way without one importing the other; `export::axis` re-exports them.

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
