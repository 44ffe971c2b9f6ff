//! The device beside the file: what the block device under the running file did over the last
//! second, in iostat's terms and units (`iostat -x`: `r/s`, `rMB/s`, `r_await`, `%util`,
//! `aqu-sz`, `areq-sz`), the CPUs' usr/sys/iowait shares, and the ratio of the bytes the file
//! moved to the bytes the device moved in the same span. That ratio is what tells "served from
//! cache" (the device moved nothing), "read-ahead doubled the reads" (0.5×) or a plain
//! O_DIRECT read (1.00×). Under them, as room allows, a short history of util, await and
//! aqu-sz over the chart's span (`v`).
//!
//! iostat's definitions, from the deltas of `/sys/block/<dev>/stat` over the span: await is the
//! ticks of the requests completed over their count (queue included); `%util` the share of the
//! span with a request in flight (`io_ticks`); `aqu-sz` the *time-averaged* queue, the weighted
//! `time_in_queue` over the span — not the requests in flight at one instant, which read 0 or 6
//! while the averaged queue was 2.9; `areq-sz` the sectors over the requests.
//!
//! The counters are read by the session thread at the throughput samples' cadence
//! ([`Update::Device`](crate::tui::session::Update::Device)), never by the UI thread; they are
//! the whole device's, so another process's I/O to it counts too. Beside each sample the
//! session reads this process's own I/O accounting (`/proc/self/io`,
//! [`Update::OwnIo`](crate::tui::session::Update::OwnIo)), which [`Split`] sets against the
//! device's: this run's storage MiB/s beside the others' (the device's less the run's), and
//! `file/dev` against the run's own storage bytes, so a neighbour reading the disk never makes
//! a run served from the page cache read `454×`. A file on tmpfs, overlay or a network
//! filesystem has no device, and the panel says so.

use super::{fmt_mib_s, fmt_rate, frame};
use crate::measure::device::{cpu_delta, disk_delta};
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

/// A mean request size (iostat's `areq-sz`) with its unit: `512 KiB`, `1.46 MiB`, `-` for none.
pub fn req_text(bytes: f64) -> String {
    let kib = bytes / 1024.0;
    if bytes.round() <= 0.0 {
        "-".into()
    } else if kib < 9.95 {
        format!("{kib:.1} KiB")
    } else if kib < 1023.5 {
        format!("{kib:.0} KiB")
    } else {
        format!("{:.2} MiB", kib / 1024.0)
    }
}

/// What one direction did over the span: requests per second, MiB/s and its await (ms).
fn direction(
    name: &'static str,
    ops: u64,
    bytes: u64,
    ticks_ms: u64,
    secs: f64,
    width: usize,
) -> Line<'static> {
    let dim = Style::default().fg(Color::DarkGray);
    let rate = fmt_rate(ops as f64 / secs);
    let mib = fmt_mib_s(bytes as f64 / secs / (1u64 << 20) as f64);
    let wait = if ops > 0 {
        format!("{:.2} ms", ticks_ms as f64 / ops as f64)
    } else {
        "- ms".into()
    };
    let full = vec![
        Span::styled(format!("{name:<6}"), dim),
        Span::raw(format!("{rate:>6}/s ")),
        Span::raw(format!("{mib:>6} MiB/s ")),
        Span::raw(wait),
    ];
    let mut short = full.clone();
    short.pop();
    super::first_fitting(vec![full, short], width)
}

/// Bytes of one second split into this run's and the others' (`crate::facts::taskio`): what
/// this process caused the storage layer to move (`/proc/self/io`) against what the device
/// moved, each direction apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    /// This run's storage reads, bytes: `read_bytes`, counted as they are submitted.
    pub run_read: u64,
    /// This run's storage writes, bytes: its written bytes (`write_bytes` less the cancelled,
    /// counted when a page is dirtied or an O_DIRECT write submitted) that the device can have
    /// written in the span, at most the device's own (a buffered write dirties pages now and
    /// the device writes them later, or never during the run).
    pub run_write: u64,
    /// The device's bytes that were not this run's (its total less this run's, never below 0):
    /// another process's, the filesystem's journal and metadata, write-back of older writes.
    pub others_read: u64,
    pub others_write: u64,
}

impl Split {
    /// The split of the device's `dev_read`/`dev_write` bytes given this process's I/O
    /// accounting `own` over the same span.
    pub fn of(own: &crate::facts::taskio::TaskIo, dev_read: u64, dev_write: u64) -> Split {
        let run_write = own.net_write_bytes().min(dev_write);
        Split {
            run_read: own.read_bytes,
            run_write,
            others_read: dev_read.saturating_sub(own.read_bytes),
            others_write: dev_write.saturating_sub(run_write),
        }
    }

    /// This run's bytes and the others' in `op`'s direction (a mix: both).
    fn in_direction(&self, op: crate::config::Op, mixed: bool) -> (u64, u64) {
        match (op, mixed) {
            (_, true) => (
                self.run_read + self.run_write,
                self.others_read + self.others_write,
            ),
            (crate::config::Op::Write, false) => (self.run_write, self.others_write),
            (crate::config::Op::Read, false) => (self.run_read, self.others_read),
        }
    }
}

/// The split of the panel's span (its first and last samples), when both carry this process's
/// I/O accounting.
pub fn split(app: &App, d: &crate::measure::device::DeviceDelta) -> Option<Split> {
    let (_, _, Some(a)) = app.device.samples.front()? else {
        return None;
    };
    let (_, _, Some(b)) = app.device.samples.back()? else {
        return None;
    };
    Some(Split::of(&b.since(a), d.dev_read_bytes, d.dev_write_bytes))
}

/// The ratio line: the file's bytes against the storage bytes this run moved in its direction
/// (its own accounting, so another process's I/O on the device never makes a run served from
/// the page cache read `454×`: it reads `∞ (cache)`), then this run's storage MiB/s beside the
/// others'. Without the run's own accounting, against the whole device's, and it says so.
pub fn run_share_line(
    app: &App,
    file_bytes: u64,
    d: &crate::measure::device::DeviceDelta,
    secs: f64,
    width: usize,
) -> Line<'static> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let dim = Style::default().fg(Color::DarkGray);
    let (op, mixed) = (app.settings.setup.op, app.settings.is_mixed());
    let Some(sp) = split(app, d) else {
        let dev_bytes = match (op, mixed) {
            // A mix moves the file's bytes both ways.
            (_, true) => d.dev_read_bytes + d.dev_write_bytes,
            (crate::config::Op::Write, false) => d.dev_write_bytes,
            // Against the device's bytes in the run's direction: another process's writes (a
            // build, a log) do not dilute a read's ratio.
            (crate::config::Op::Read, false) => d.dev_read_bytes,
        };
        let ratio = Span::styled(ratio_text(file_bytes, dev_bytes), bold);
        return super::first_fitting(
            vec![
                vec![ratio.clone(), Span::styled("  (device: all I/O)", dim)],
                vec![ratio.clone(), Span::styled(" (all I/O)", dim)],
                vec![ratio],
            ],
            width,
        );
    };
    let (run, others) = sp.in_direction(op, mixed);
    let mib = |b: u64| fmt_mib_s(b as f64 / secs.max(1e-9) / (1u64 << 20) as f64);
    let ratio = Span::styled(ratio_text(file_bytes, run), bold);
    super::first_fitting(
        vec![
            vec![
                ratio.clone(),
                Span::styled("  this run ", dim),
                Span::raw(mib(run)),
                Span::styled(", others ", dim),
                Span::raw(mib(others)),
                Span::styled(" MiB/s", dim),
            ],
            vec![
                ratio.clone(),
                Span::styled(" run ", dim),
                Span::raw(mib(run)),
                Span::styled(" others ", dim),
                Span::raw(mib(others)),
                Span::styled(" MiB/s", dim),
            ],
            vec![
                ratio.clone(),
                Span::styled(" run ", dim),
                Span::raw(mib(run)),
                Span::styled(" oth ", dim),
                Span::raw(mib(others)),
            ],
            vec![ratio],
        ],
        width,
    )
}

/// The panel's lines, most important first (a short panel shows the first ones): reads and
/// writes, util/aqu-sz/areq-sz, the file-to-device ratio, then the CPUs. Empty while no device
/// figure is known (the state is said by [`status_line`]).
pub fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    let Some(Some(_)) = &app.device.name else {
        return Vec::new();
    };
    let (Some((a, fa, _)), Some((b, fb, _))) =
        (app.device.samples.front(), app.device.samples.back())
    else {
        return Vec::new();
    };
    let (Some(d), Some(x), Some(y)) = (
        disk_delta(a, b).filter(|_| b.at_ns > a.at_ns),
        a.disk,
        b.disk,
    ) else {
        return Vec::new();
    };
    let secs = (b.at_ns - a.at_ns) as f64 / 1e9;
    let mut out = vec![
        direction(
            "read",
            d.dev_read_ops,
            d.dev_read_bytes,
            y.read_ticks_ms.saturating_sub(x.read_ticks_ms),
            secs,
            width,
        ),
        direction(
            "write",
            d.dev_write_ops,
            d.dev_write_bytes,
            y.write_ticks_ms.saturating_sub(x.write_ticks_ms),
            secs,
            width,
        ),
        super::first_fitting(
            vec![
                vec![
                    Span::styled("util ", dim),
                    Span::raw(format!("{:.0}%", d.dev_util_pct)),
                    Span::styled("  aqu-sz ", dim),
                    Span::raw(format!("{:.2}", d.dev_aqu_sz)),
                    Span::styled("  areq-sz ", dim),
                    Span::raw(req_text(d.dev_avg_req_bytes)),
                ],
                vec![
                    Span::styled("util ", dim),
                    Span::raw(format!("{:.0}%", d.dev_util_pct)),
                    Span::styled(" aqu-sz ", dim),
                    Span::raw(format!("{:.2}", d.dev_aqu_sz)),
                    Span::styled(" areq-sz ", dim),
                    Span::raw(req_text(d.dev_avg_req_bytes)),
                ],
                vec![
                    Span::styled("util ", dim),
                    Span::raw(format!("{:.0}%", d.dev_util_pct)),
                    Span::styled(" aqu-sz ", dim),
                    Span::raw(format!("{:.2}", d.dev_aqu_sz)),
                    Span::styled(" req ", dim),
                    Span::raw(req_text(d.dev_avg_req_bytes)),
                ],
                vec![
                    Span::styled("util ", dim),
                    Span::raw(format!("{:.0}%", d.dev_util_pct)),
                    Span::styled(" aqu-sz ", dim),
                    Span::raw(format!("{:.2}", d.dev_aqu_sz)),
                ],
            ],
            width,
        ),
        run_share_line(app, fb - fa, &d, secs, width),
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

/// The panel's one line while it has no figures: before the first samples, without a device.
fn status_line(app: &App) -> Vec<Line<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    match &app.device.name {
        None => vec![Line::styled("sampled while a run is on", dim)],
        Some(None) => vec![
            Line::styled("no block device under this file", dim),
            Line::styled("(tmpfs, overlay or network)", dim),
        ],
        Some(Some(_)) => vec![Line::styled("sampling…", dim)],
    }
}

/// Rows of a sparkline of `values` (0 at the bottom, `top` at the top) `rows` tall.
pub fn spark_rows(values: &[f64], top: f64, rows: usize) -> Vec<String> {
    const LEVELS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let full = rows * 8;
    let eighths: Vec<usize> = values
        .iter()
        .map(|v| {
            if top <= 0.0 || !v.is_finite() || *v <= 0.0 {
                0
            } else {
                ((v / top * full as f64).round() as usize).clamp(1, full)
            }
        })
        .collect();
    (0..rows)
        .map(|r| {
            let below = (rows - 1 - r) * 8;
            eighths
                .iter()
                .map(|e| LEVELS[e.saturating_sub(below).min(8)])
                .collect()
        })
        .collect()
}

/// The history under the lines: util (0–100 %), await and aqu-sz (each up to its highest in
/// the span, said at the right), each `rows` tall, over the chart's span.
fn sparklines(app: &App, area: Rect, buf: &mut Buffer) {
    let dim = Style::default().fg(Color::DarkGray);
    let points = app.device.history.points(app.view.span);
    let rows = (area.height / 3).max(1) as usize;
    let label_w = 7u16;
    let value_w = 8u16;
    let spark_w = area.width.saturating_sub(label_w + value_w) as usize;
    if spark_w < 4 || points.is_empty() {
        return;
    }
    let figures = [
        ("util", 0usize, Color::Cyan),
        ("await", 1, Color::Yellow),
        ("aqu-sz", 2, Color::Magenta),
    ];
    for (k, (name, i, color)) in figures.into_iter().enumerate() {
        let values: Vec<f64> = points.iter().map(|p| p[i]).collect();
        let (binned, _) = super::throughput::binned(&values, spark_w);
        let most = binned.iter().copied().fold(0.0f64, f64::max);
        let (top, scale) = match i {
            0 => (100.0, "100%".to_string()),
            1 => (most, format!("≤{}", fmt_ms(most))),
            _ => (most, format!("≤{most:.2}")),
        };
        let y0 = area.y + (k * rows) as u16;
        if y0 >= area.bottom() {
            break;
        }
        // From two rows each, a section's first row is its name and scale, so one figure's
        // bars never run into the next one's.
        let (bars_y, bars_h, label_y) = if rows >= 2 {
            (y0 + 1, rows - 1, y0)
        } else {
            (y0, 1, y0)
        };
        buf.set_stringn(area.x, label_y, name, label_w as usize, dim);
        for (r, line) in spark_rows(&binned, top, bars_h).into_iter().enumerate() {
            let y = bars_y + r as u16;
            if y < area.bottom() {
                buf.set_stringn(
                    area.x + label_w,
                    y,
                    &line,
                    spark_w,
                    Style::default().fg(color),
                );
            }
        }
        buf.set_stringn(
            area.x + label_w + spark_w as u16 + 1,
            label_y,
            &scale,
            value_w as usize - 1,
            dim,
        );
    }
}

/// `0.54ms`, `12.8ms`, `250ms`: an await.
fn fmt_ms(ms: f64) -> String {
    if ms >= 99.95 {
        format!("{ms:.0}ms")
    } else if ms >= 9.995 {
        format!("{ms:.1}ms")
    } else {
        format!("{ms:.2}ms")
    }
}

/// Draws the device panel (nothing when `area` is empty): its lines by priority, and the
/// history of util, await and aqu-sz when three rows are left for it (before the CPU line).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.height < 3 {
        return;
    }
    let title = match &app.device.name {
        Some(Some(n)) => format!(" device {}, last second ", shown(n)),
        _ => " device, last second ".to_string(),
    };
    let block = frame(&title);
    let inner = block.inner(area);
    block.render(area, buf);
    let mut lines = lines(app, inner.width as usize);
    if lines.is_empty() {
        Paragraph::new(status_line(app)).render(inner, buf);
        return;
    }
    let h = inner.height as usize;
    // The first four lines, then the history (from three rows), then the CPUs' line.
    let cpu = (lines.len() > 4).then(|| lines.pop()).flatten();
    let main = lines.len().min(h);
    let left = h - main;
    let cpu_h = usize::from(cpu.is_some() && left >= 1 && left != 3);
    let spark_h = left - cpu_h;
    // Without room for the history, the CPUs' line comes right under the others.
    let cpu_y = if spark_h >= 3 {
        inner.bottom().saturating_sub(1)
    } else {
        inner.y + main as u16
    };
    Paragraph::new(lines).render(
        Rect {
            height: main as u16,
            ..inner
        },
        buf,
    );
    if spark_h >= 3 {
        sparklines(
            app,
            Rect {
                y: inner.y + main as u16,
                height: spark_h as u16,
                ..inner
            },
            buf,
        );
    }
    if let (1, Some(c)) = (cpu_h, cpu) {
        Paragraph::new(c).render(
            Rect {
                y: cpu_y,
                height: 1,
                ..inner
            },
            buf,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::taskio::TaskIo;
    use crate::measure::device::{DiskStat, Sample};

    /// An app reading, with one second of device samples: the device reads `dev_mib` MiB in
    /// it, this process `own_mib` MiB of them, and the file moves `file_mib` MiB.
    fn app_with_second(file_mib: u64, dev_mib: u64, own_mib: Option<u64>) -> App {
        let mut a = App::new(
            "/data/big.bin".into(),
            1 << 30,
            "/data/.scratch".into(),
            "out.csv".into(),
        );
        a.device.name = Some(Some("vda".into()));
        for i in 0..=10u64 {
            let sample = Sample {
                at_ns: i * 100_000_000,
                disk: Some(DiskStat {
                    read_ios: i * dev_mib,
                    read_sectors: i * dev_mib * 2048 / 10,
                    io_ticks_ms: i * 50,
                    ..Default::default()
                }),
                cpu: None,
            };
            let own = own_mib.map(|m| TaskIo {
                read_bytes: 7 + i * m * (1 << 20) / 10,
                rchar: (i * file_mib) << 20,
                ..Default::default()
            });
            a.device
                .samples
                .push_back((sample, i * file_mib * (1 << 20) / 10, own));
        }
        a
    }

    fn share_line(a: &App) -> String {
        lines(a, 60)
            .iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .find(|l| l.starts_with("file/dev"))
            .expect("a ratio line")
    }

    #[test]
    fn another_process_reading_the_disk_is_the_others_and_never_sets_the_runs_ratio() {
        // A warm read at 3000 MiB/s served from the page cache while a neighbour reads 500
        // MiB/s from the disk: the device's counters alone said `file/dev 6× cache`, and with a
        // smaller neighbour `454×`. The run's own accounting says it read nothing.
        let a = app_with_second(3000, 500, Some(0));
        let line = share_line(&a);
        assert!(
            line.starts_with("file/dev ∞ (cache)  this run 0.00, others 500.0 MiB/s"),
            "{line}"
        );
        // Whatever the neighbour reads, a run that reads nothing from storage reads cache.
        for dev in [1, 7, 64, 5000] {
            let line = share_line(&app_with_second(3000, dev, Some(0)));
            assert!(line.starts_with("file/dev ∞ (cache)"), "{dev}: {line}");
        }
        // A cold read of 200 MiB/s beside a neighbour's 300: the ratio is the run's alone.
        let line = share_line(&app_with_second(200, 500, Some(200)));
        assert!(
            line.starts_with("file/dev 1.00×  this run 200.0, others 300.0 MiB/s"),
            "{line}"
        );
        // The run's read-ahead past the device's count (counted at submission): others at 0.
        let d = Split::of(
            &TaskIo {
                read_bytes: 600,
                write_bytes: 50,
                cancelled_write_bytes: 10,
                ..Default::default()
            },
            500,
            20,
        );
        assert_eq!(
            d,
            Split {
                run_read: 600,
                run_write: 20,
                others_read: 0,
                others_write: 0
            }
        );
        // Without the run's accounting the ratio is the device's, and says so.
        let line = share_line(&app_with_second(3000, 500, None));
        assert!(line.contains("6.00×") && line.contains("all I/O"), "{line}");
    }

    #[test]
    fn the_ratio_says_cache_when_the_device_moved_nothing() {
        assert_eq!(ratio_text(1 << 20, 1 << 20), "file/dev 1.00×");
        assert_eq!(ratio_text(1 << 20, 2 << 20), "file/dev 0.50×");
        assert_eq!(ratio_text(1 << 20, 0), "file/dev ∞ (cache)");
        assert_eq!(ratio_text(53_267 << 10, 1 << 10), "file/dev 53267× cache");
        assert_eq!(ratio_text(9 << 20, 1 << 20), "file/dev 9.00×");
        assert_eq!(ratio_text(0, 0), "file/dev -");
        assert_eq!(req_text(1_531_485.0), "1.46 MiB");
        assert_eq!(req_text(1_048_576.0), "1.00 MiB");
        assert_eq!(req_text(4096.0), "4.0 KiB");
        assert_eq!(req_text(524_288.0), "512 KiB");
        assert_eq!(spark_rows(&[0.0, 50.0, 100.0], 100.0, 1), vec![" ▄█"]);
        assert_eq!(
            spark_rows(&[25.0, 100.0], 100.0, 2),
            vec![" █".to_string(), "▄█".to_string()]
        );
    }
}
