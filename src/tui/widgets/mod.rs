//! The panels of the screen, each a pure function of [`App`](super::app::App) state drawn into a
//! buffer area, plus the number formats they share (so the same figure reads the same
//! everywhere).

pub mod chart;
pub mod device;
pub mod help;
pub mod kdm_card;
pub mod kernel;
pub mod latency;
pub mod log;
pub mod mix;
pub mod openloop;
pub mod panel;
pub mod results;
pub mod throughput;
pub mod why;

/// Smallest terminal the screen is laid out for.
pub const MIN_WIDTH: u16 = 80;
/// Smallest terminal height the screen is laid out for.
pub const MIN_HEIGHT: u16 = 24;

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

/// A count or rate, shortened to at most 6 characters without losing its magnitude: `950`,
/// `12.3k`, `941k`, `1.20M`, `12.3M`, `123M`, `1.23G`. Cutting such a figure to fit a column
/// would change its value (`941.4k` cut to `941.4`), so widths are taken from [`fmt_rate`]'s
/// longest output, never the other way round.
pub fn fmt_rate(v: f64) -> String {
    // Each branch's bound is where its rounded form would reach the next unit.
    if v >= 999.5e6 {
        let g = v / 1e9;
        if g >= 99.95 {
            format!("{g:.0}G")
        } else if g >= 9.995 {
            format!("{g:.1}G")
        } else {
            format!("{g:.2}G")
        }
    } else if v >= 99.95e6 {
        format!("{:.0}M", v / 1e6)
    } else if v >= 9.995e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 999.5e3 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 99.95e3 {
        format!("{:.0}k", v / 1e3)
    } else if v >= 9999.5 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// A duration in seconds, at most 6 characters: `0.21s`, `12.3s`, `59s`, `12m`, `3.1h`.
pub fn fmt_secs(s: f64) -> String {
    if s < 9.995 {
        format!("{s:.2}s")
    } else if s < 99.95 {
        format!("{s:.1}s")
    } else if s < 599.5 {
        format!("{s:.0}s")
    } else if s < 99.5 * 60.0 {
        format!("{:.0}m", s / 60.0)
    } else {
        format!("{:.1}h", s / 3600.0)
    }
}

/// A relative difference in percent with its sign: `+12%`, `-3.4%`, `±0%`.
pub fn fmt_delta_pct(pct: f64) -> String {
    if !pct.is_finite() {
        return "n/a".into();
    }
    let a = pct.abs();
    let body = if a < 9.95 {
        format!("{a:.1}")
    } else {
        format!("{a:.0}")
    };
    if body == "0.0" {
        "±0%".into()
    } else if pct > 0.0 {
        format!("+{body}%")
    } else {
        format!("-{body}%")
    }
}

/// A latency given in microseconds, at most 6 characters: `0.85µs`, `12.3µs`, `668µs`,
/// `4.56ms`, `45.6ms`, `1.20s`.
pub fn fmt_us(us: f64) -> String {
    crate::export::axis::fmt_us(us, crate::export::axis::UsStyle::Compact)
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

/// Columns `spans` take on screen.
pub fn spans_width(spans: &[ratatui::text::Span]) -> usize {
    spans.iter().map(|s| s.width()).sum()
}

/// The first of `candidates` (longest first, each made of whole words and figures) that fits
/// in `width` columns, else the last: a line is shortened by saying less, never by cutting a
/// figure at the panel's edge (a cut `2683` reads `268`).
pub fn first_fitting(
    candidates: Vec<Vec<ratatui::text::Span<'static>>>,
    width: usize,
) -> ratatui::text::Line<'static> {
    let n = candidates.len();
    for (i, c) in candidates.into_iter().enumerate() {
        if i + 1 == n || spans_width(&c) <= width {
            return ratatui::text::Line::from(c);
        }
    }
    ratatui::text::Line::default()
}

/// `text` broken between words into lines of at most `first` columns (the first line) and
/// `rest` columns (the others); a word longer than a whole line is split, as nothing else can
/// show it. Widths are counted in characters.
pub fn wrap_words(text: &str, first: usize, rest: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    let room = |i: usize| if i == 0 { first } else { rest }.max(1);
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = word.chars().count();
        let cur = lines.last().map_or(0, |l| l.chars().count());
        let i = lines.len() - 1;
        if cur > 0 && cur + 1 + len <= room(i) {
            let l = lines.last_mut().expect("one line at least");
            l.push(' ');
            l.push_str(word);
            continue;
        }
        if cur > 0 || len > room(i) && i == 0 && first < rest {
            lines.push(String::new());
        }
        let mut chars: Vec<char> = word.chars().collect();
        loop {
            let i = lines.len() - 1;
            let take = chars.len().min(room(i));
            let l = lines.last_mut().expect("one line at least");
            l.extend(chars.drain(..take));
            if chars.is_empty() {
                break;
            }
            lines.push(String::new());
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    #[test]
    fn rates_keep_their_magnitude_in_at_most_6_characters() {
        for (v, want) in [
            (941_400.0, "941k"),
            (99_960.0, "100k"),
            (999_600.0, "1.00M"),
            (12_345_678.0, "12.3M"),
            (123_456_789.0, "123M"),
            (2.5e9, "2.50G"),
        ] {
            assert_eq!(super::fmt_rate(v), want);
        }
        let mut v = 1.0;
        while v < 1e12 {
            assert!(super::fmt_rate(v).chars().count() <= 6, "{v}");
            v *= 1.07;
        }
    }

    use super::*;

    #[test]
    fn words_wrap_whole_and_only_an_overlong_word_is_split() {
        assert_eq!(wrap_words("ab cd ef", 5, 5), ["ab cd", "ef"]);
        assert_eq!(wrap_words("ab 12345678", 4, 6), ["ab", "123456", "78"]);
        assert_eq!(wrap_words("", 4, 4), [""]);
        assert_eq!(wrap_words("abcdef gh", 3, 10), ["", "abcdef gh"]);
    }

    #[test]
    fn figures_are_short_and_keep_their_units() {
        assert_eq!(fmt_mib_s(5123.44), "5123");
        assert_eq!(fmt_mib_s(2.345), "2.35");
        assert_eq!(fmt_rate(12_345.0), "12.3k");
        assert_eq!(fmt_delta_pct(12.34), "+12%");
        assert_eq!(fmt_delta_pct(-3.44), "-3.4%");
        assert_eq!(fmt_secs(0.2), "0.20s");
        assert_eq!(fmt_secs(60.2), "60.2s");
        assert_eq!(fmt_us(4560.0), "4.56ms");
        assert_eq!(fmt_us(667.6), "668µs");
        assert_eq!(fmt_us(999.9), "1.00ms");
        assert_eq!(fmt_ns(2048), "2µs");
        assert_eq!(fmt_ns(268_435_456), "268ms");
        assert_eq!(fmt_ns(1_073_741_824), "1.1s");
    }
}
