//! The device beside the file: what the block device under the running file did over the last
//! second (read/write IOPS and MiB/s, average request size, requests in flight, await, util %),
//! the CPUs' usr/sys/iowait shares, and the ratio of the bytes the file moved to the bytes the
//! device moved in the same span. That ratio is what tells "served from cache" (the device moved
//! nothing), "read-ahead doubled the reads" (0.5×) or a plain O_DIRECT read (1.00×).
//!
//! The counters are read by the session thread at the throughput samples' cadence
//! ([`Update::Device`](crate::tui::session::Update::Device)), never by the UI thread; they are
//! the whole device's, so another process's I/O to it counts too. A file on tmpfs, overlay or a
//! network filesystem has no device, and the panel says so.

use super::{fmt_mib_s, fmt_rate, frame};
use crate::measure::device::{cpu_delta, disk_delta};
use crate::size::format_size;
use crate::text::shown;
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// `file/dev 1.00×`, or what a zero means: the device moved nothing for the file's bytes (page
/// cache), or the file moved nothing. From 10× up the device's bytes are background requests
/// beside a run served from the page cache: said so, in a whole number (`53267× cache`, not a
/// figure with decimals nobody reads).
pub fn ratio_text(file_bytes: u64, dev_bytes: u64) -> String {
    match (file_bytes, dev_bytes) {
        (0, 0) => "file/dev -".into(),
        (_, 0) => "file/dev ∞ (cache)".into(),
        (f, d) if f as f64 / d as f64 >= 10.0 => {
            format!("file/dev {:.0}× cache", f as f64 / d as f64)
        }
        (f, d) => format!("file/dev {:.2}×", f as f64 / d as f64),
    }
}

/// A mean request size: `1M` when whole, else KiB with one decimal (`1495.6K`), `-` for none.
pub fn req_text(bytes: f64) -> String {
    let b = bytes.round() as u64;
    if b == 0 {
        "-".into()
    } else if b.is_multiple_of(1024) {
        format_size(b)
    } else {
        format!("{:.1}K", bytes / 1024.0)
    }
}

/// The panel's lines, most important first (a short panel shows the first ones).
pub fn lines(app: &App) -> Vec<Line<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let name = match &app.device_name {
        None => return vec![Line::styled("sampled while a run is on", dim)],
        Some(None) => {
            return vec![
                Line::styled("no block device under this file", dim),
                Line::styled("(tmpfs, overlay or network)", dim),
            ]
        }
        Some(Some(n)) => shown(n).into_owned(),
    };
    let (Some((a, fa)), Some((b, fb))) = (app.device_samples.front(), app.device_samples.back())
    else {
        return vec![Line::styled(format!("{name}: sampling…"), dim)];
    };
    let Some(d) = disk_delta(a, b).filter(|_| b.at_ns > a.at_ns) else {
        return vec![Line::styled(format!("{name}: sampling…"), dim)];
    };
    let secs = (b.at_ns - a.at_ns) as f64 / 1e9;
    let mib = |bytes: u64| fmt_mib_s(bytes as f64 / secs / (1u64 << 20) as f64);
    let iops = |ops: u64| fmt_rate(ops as f64 / secs);
    let mut out = vec![
        Line::from(vec![
            Span::styled(format!("{name} "), bold),
            Span::styled("r ", dim),
            Span::raw(format!(
                "{} {} ",
                iops(d.dev_read_ops),
                mib(d.dev_read_bytes)
            )),
            Span::styled("w ", dim),
            Span::raw(format!(
                "{} {}",
                iops(d.dev_write_ops),
                mib(d.dev_write_bytes)
            )),
        ]),
        Line::from(vec![
            // Against the device's bytes in the run's direction: another process's writes
            // (a build, a log) do not dilute a read's ratio.
            Span::styled(
                ratio_text(
                    fb - fa,
                    match app.settings.setup.op {
                        // A mix moves the file's bytes both ways.
                        crate::config::Op::Write if app.settings.is_mixed() => {
                            d.dev_read_bytes + d.dev_write_bytes
                        }
                        crate::config::Op::Write => d.dev_write_bytes,
                        _ => d.dev_read_bytes,
                    },
                ),
                bold,
            ),
            Span::styled("  util ", dim),
            Span::raw(format!("{:.0}%", d.dev_util_pct)),
        ]),
        Line::from(vec![
            Span::styled("req ", dim),
            Span::raw(req_text(d.dev_avg_req_bytes)),
            Span::styled(" aqu ", dim),
            Span::raw(d.dev_in_flight.to_string()),
            Span::styled(" await ", dim),
            Span::raw(format!("{:.2}ms", d.dev_await_ms)),
        ]),
    ];
    if let Some(c) = cpu_delta(a, b) {
        out.push(Line::from(vec![
            Span::styled("cpu usr ", dim),
            Span::raw(format!("{:.0}%", c.cpu_usr_pct)),
            Span::styled(" sys ", dim),
            Span::raw(format!("{:.0}%", c.cpu_sys_pct)),
            Span::styled(" iowait ", dim),
            Span::raw(format!("{:.0}%", c.cpu_iowait_pct)),
        ]));
    }
    out
}

/// Draws the device panel (nothing when `area` is empty).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.height < 3 {
        return;
    }
    let block = frame(" device, last second ");
    let inner = block.inner(area);
    block.render(area, buf);
    Paragraph::new(lines(app)).render(inner, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_says_cache_when_the_device_moved_nothing() {
        assert_eq!(ratio_text(1 << 20, 1 << 20), "file/dev 1.00×");
        assert_eq!(ratio_text(1 << 20, 2 << 20), "file/dev 0.50×");
        assert_eq!(ratio_text(1 << 20, 0), "file/dev ∞ (cache)");
        assert_eq!(ratio_text(53_267 << 10, 1 << 10), "file/dev 53267× cache");
        assert_eq!(ratio_text(9 << 20, 1 << 20), "file/dev 9.00×");
        assert_eq!(ratio_text(0, 0), "file/dev -");
        assert_eq!(req_text(1_531_485.0), "1495.6K");
        assert_eq!(req_text(1_048_576.0), "1M");
    }
}
