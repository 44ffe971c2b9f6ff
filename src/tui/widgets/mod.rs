//! The panels of the screen, each a pure function of [`App`](super::app::App) state drawn into a
//! buffer area, plus the number formats they share (so the same figure reads the same
//! everywhere).

pub mod help;
pub mod latency;
pub mod panel;
pub mod results;
pub mod throughput;

use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, BorderType, Borders};

/// A titled panel frame.
pub fn frame(title: &str) -> Block<'_> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(Color::DarkGray))
        .title(title)
        .title_style(Style::default().add_modifier(Modifier::BOLD))
}

/// Throughput in MiB/s with precision that fits the size: `12.34`, `123.4`, `5123`.
pub fn fmt_mib_s(v: f64) -> String {
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Operations per second, shortened: `950`, `12.3k`, `1.20M`.
pub fn fmt_rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// A latency given in microseconds, at most 6 characters: `0.85µs`, `12.3µs`, `668µs`,
/// `4.56ms`, `45.6ms`, `1.20s`.
pub fn fmt_us(us: f64) -> String {
    let three = |v: f64, unit: &str| {
        if v < 10.0 {
            format!("{v:.2}{unit}")
        } else if v < 100.0 {
            format!("{v:.1}{unit}")
        } else {
            format!("{v:.0}{unit}")
        }
    };
    if us < 999.5 {
        three(us, "µs")
    } else if us < 999_500.0 {
        three(us / 1e3, "ms")
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// A bucket bound given in nanoseconds, at most 5 characters: `512ns`, `4µs`, `4.2ms`, `268ms`,
/// `1.1s`.
pub fn fmt_ns(ns: u64) -> String {
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{}µs", ns / 1_000)
    } else if ns < 10_000_000 {
        format!("{:.1}ms", ns as f64 / 1e6)
    } else if ns < 1_000_000_000 {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{:.1}s", ns as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_short_and_keep_their_units() {
        assert_eq!(fmt_mib_s(5123.44), "5123");
        assert_eq!(fmt_mib_s(2.345), "2.35");
        assert_eq!(fmt_rate(12_345.0), "12.3k");
        assert_eq!(fmt_us(4560.0), "4.56ms");
        assert_eq!(fmt_us(667.6), "668µs");
        assert_eq!(fmt_us(999.9), "1.00ms");
        assert_eq!(fmt_ns(2048), "2µs");
        assert_eq!(fmt_ns(268_435_456), "268ms");
        assert_eq!(fmt_ns(1_073_741_824), "1.1s");
    }
}
