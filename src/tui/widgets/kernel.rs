//! The kernel panel (`L`): the block layer's clock for the live setting's own I/O — how long
//! its requests waited in the block layer (bio entry → issue to the driver) and in the device
//! (issue → completion), and what is left of the run's p50 above both (the software's share:
//! the system call, the filesystem, the copy, the wake-up). It is the same view as
//! `run --kernel` ([`crate::kernel`], filtered to this process's requests): with the panel on,
//! the explorer's runs start with `spec.kernel` set, so [`crate::runner::Run`] attaches it
//! before their clock as for the command line.
//!
//! **Never per event, never on the UI thread.** The view's counters are in-kernel histograms;
//! the session thread reads them once a second ([`KERNEL_READ_EVERY`]) and at a pass's end and
//! sends the difference ([`Update::Kernel`]). The UI adds those up per segment (a chained cold
//! read's passes are one segment, and their counts add), so the figures are the setting's since
//! it began, as a row's are; the request rate is the last read's.
//!
//! **Where it shows.** At the top of the log column (from
//! [`SHOWN_FROM_WIDTH`](crate::tui::kernel_view::SHOWN_FROM_WIDTH) columns, so at 200×60), which is
//! the one place with rows to spare; on a narrower screen it is hidden (the key's message says
//! so) and the layout is unchanged. A view that could not start (not root, no BTF or tracefs)
//! says why in one line.
//!
//! [`KERNEL_READ_EVERY`]: crate::tui::session::KERNEL_READ_EVERY
//! [`Update::Kernel`]: crate::tui::session::Update::Kernel

use super::{fmt_rate, fmt_us, frame};
use crate::measure::kernel::KernelSection;
use crate::text::shown;
use crate::tui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

/// The panel's title (the e2e test looks for it).
pub const TITLE: &str = " kernel view (L) ";

/// Rows the panel takes, borders included: four figures and [`CONTEXT_ROWS`] of context (what
/// the figures are, or what the view shows about the run).
pub const PANEL_HEIGHT: u16 = 6 + CONTEXT_ROWS as u16;

/// Rows of context under the figures.
pub const CONTEXT_ROWS: usize = 3;

/// Width of a figure's label (`software `).
const LABEL_W: usize = 9;

/// Rows the log keeps under the panel; below that the panel is not drawn.
pub const LOG_KEEPS_ROWS: u16 = 5;

/// Whether the view is on in `app`.
pub fn is_on(app: &App) -> bool {
    app.kernel.on
}

/// The live segment's section (its operations, bytes and p50 from its aggregate).
fn section_of(app: &App) -> KernelSection {
    let device = app.device.name.clone().flatten();
    let seg = app
        .live
        .as_ref()
        .filter(|l| app.kernel.segment() == Some(l.id));
    let (ops, bytes, p50) = match seg {
        Some(l) if l.agg.ops > 0 => (
            l.agg.ops,
            l.agg.bytes,
            Some(crate::measure::histogram::LatencySummary::of(&l.agg.latency).p50_us),
        ),
        _ => (0, 0, None),
    };
    app.kernel.section(device, ops, bytes, p50)
}

/// Draws the panel at the top of the log column `log` when the view is on and the column has
/// [`PANEL_HEIGHT`] + [`LOG_KEEPS_ROWS`] rows; returns what is left for the log.
pub fn render_over_log(app: &App, log: Rect, buf: &mut Buffer) -> Rect {
    if !is_on(app) || log.width < 24 || log.height < PANEL_HEIGHT + LOG_KEEPS_ROWS {
        return log;
    }
    let panel = Rect {
        height: PANEL_HEIGHT,
        ..log
    };
    let waiting = app.kernel.segment().is_none() || app.live.is_none();
    render_section(&section_of(app), app.kernel.per_s(), waiting, panel, buf);
    Rect {
        y: log.y + PANEL_HEIGHT,
        height: log.height - PANEL_HEIGHT,
        ..log
    }
}

/// A latency in µs as the panel writes it; `–` when there is none (no request completed).
fn us(v: f64) -> String {
    if !v.is_finite() {
        "–".into()
    } else if v < 0.0 {
        format!("-{}", fmt_us(-v))
    } else {
        fmt_us(v)
    }
}

/// The panel's lines for `s` (`per_s`: the last read's requests per second; `waiting`: no
/// read of the live run yet).
pub fn lines(
    s: &KernelSection,
    per_s: Option<f64>,
    waiting: bool,
    width: usize,
) -> Vec<Line<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    if let Some(why) = &s.absent {
        return vec![Line::styled(
            format!("absent: {}", shown(why)),
            Style::default().fg(Color::Yellow),
        )];
    }
    let Some(t) = s.total.filter(|_| !waiting) else {
        return vec![Line::styled(
            "waiting for the running setting's first read (once a second)",
            dim,
        )];
    };
    let pair = |name: &str, p50: f64, p99: f64| {
        Line::from(vec![
            Span::styled(format!("{name:<LABEL_W$}"), dim),
            Span::raw("p50 "),
            Span::styled(format!("{:>6}", us(p50)), bold),
            Span::raw("  p99 "),
            Span::styled(format!("{:>6}", us(p99)), bold),
        ])
    };
    let mut out = vec![
        pair("queue", t.queue_p50_us, t.queue_p99_us),
        pair("device", t.device_p50_us, t.device_p99_us),
    ];
    let mut sw = vec![
        Span::styled(format!("{:<LABEL_W$}", "software"), dim),
        Span::raw("p50 "),
        Span::styled(
            format!("{:>6}", us(s.software_p50_us.unwrap_or(f64::NAN))),
            bold,
        ),
    ];
    if let Some(app) = s.app_p50_us {
        sw.push(Span::styled(format!("  of the run's {}", us(app)), dim));
    }
    out.push(Line::from(sw));
    let mut req = vec![
        Span::styled(format!("{:<LABEL_W$}", "requests"), dim),
        Span::styled(fmt_rate(t.requests as f64), bold),
    ];
    if let Some(r) = per_s {
        req.push(Span::raw(format!("  {}/s", fmt_rate(r))));
    }
    if t.requests > 0 {
        req.push(Span::raw(format!(
            "  {:.0} KiB each",
            t.issued_mean_bytes / 1024.0
        )));
    }
    out.push(Line::from(req));
    let context = match s.facts.first() {
        Some(f) => shown(&f.text).into_owned(),
        None => format!(
            "queue: bio → issue, device: issue → done; this process's requests to {}, since \
             the setting began",
            shown(s.device.as_deref().unwrap_or("its disk"))
        ),
    };
    let rows = super::wrap_words(&context, width, width);
    out.extend(
        rows.into_iter()
            .take(CONTEXT_ROWS)
            .map(|r| Line::styled(r, dim)),
    );
    out
}

/// Draws the panel for section `s` into `area`.
pub fn render_section(
    s: &KernelSection,
    per_s: Option<f64>,
    waiting: bool,
    area: Rect,
    buf: &mut Buffer,
) {
    let block = frame(TITLE);
    let inner = block.inner(area);
    block.render(area, buf);
    Paragraph::new(lines(s, per_s, waiting, inner.width as usize)).render(inner, buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::hist::bucket_of;
    use crate::kernel::{Counts, Word};
    use crate::tui::kernel_view::KernelPanel;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    use std::time::Instant;

    fn screen(s: &KernelSection, per_s: Option<f64>, w: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, PANEL_HEIGHT)).unwrap();
        t.draw(|f| render_section(s, per_s, false, f.area(), f.buffer_mut()))
            .unwrap();
        let buf = t.backend().buffer().clone();
        (0..PANEL_HEIGHT)
            .map(|y| {
                (0..w)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Counts of `n` requests, each `queue_ns` in the block layer and `device_ns` in the
    /// device, 64 KiB each.
    fn counts(n: u64, queue_ns: u64, device_ns: u64) -> Counts {
        let mut c = Counts::default();
        c.queue.buckets[bucket_of(queue_ns)] = n;
        c.device.buckets[bucket_of(device_ns)] = n;
        c.words[Word::Issued as usize] = n;
        c.words[Word::Requests as usize] = n;
        c.words[Word::IssuedBytes as usize] = n * 65536;
        c
    }

    #[test]
    fn the_panel_shows_the_split_of_a_synthetic_section() {
        let mut p = KernelPanel::default();
        p.on = true;
        let t0 = Instant::now();
        p.add(7, Ok(Box::new(counts(1000, 2_000, 480_000))), t0);
        p.add(
            7,
            Ok(Box::new(counts(500, 2_000, 480_000))),
            t0 + std::time::Duration::from_millis(1000),
        );
        let s = p.section(Some("vda".into()), 1500, 1500 * 65536, Some(530.0));
        let t = s.total.unwrap();
        assert_eq!(t.requests, 1500);
        let sw = s.software_p50_us.unwrap();
        assert!(
            (sw - (530.0 - t.queue_p50_us - t.device_p50_us)).abs() < 1e-9,
            "{sw}"
        );
        let text = screen(&s, p.per_s(), 60);
        assert!(text.contains("kernel view (L)"), "{text}");
        for want in [
            "queue    p50",
            &format!("p50 {:>6}", fmt_us(t.queue_p50_us)),
            &format!("p50 {:>6}", fmt_us(t.device_p50_us)),
            &format!("p99 {:>6}", fmt_us(t.device_p99_us)),
            &format!("p50 {:>6}", fmt_us(sw)),
            "of the run's 530µs",
            "requests 1500  500/s  64 KiB each",
            "to vda",
        ] {
            assert!(text.contains(want), "{want:?} missing in\n{text}");
        }
        // Device p50 near 480 µs (a bucket is a sixteenth of an octave).
        assert!((t.device_p50_us - 480.0).abs() < 480.0 / 8.0, "{t:?}");
    }

    #[test]
    fn an_absent_view_says_why_in_one_line() {
        let mut p = KernelPanel::default();
        p.add(
            3,
            Err("needs root (or CAP_BPF and CAP_PERFMON)\u{1b}[31m".into()),
            Instant::now(),
        );
        let s = p.section(None, 0, 0, None);
        let ls = lines(&s, None, false, 60);
        assert_eq!(ls.len(), 1);
        let text = screen(&s, None, 70);
        assert!(text.contains("absent: needs root (or CAP_BPF"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        // A read of the next segment starts afresh.
        p.add(4, Ok(Box::new(counts(10, 1_000, 1_000))), Instant::now());
        let s = p.section(None, 0, 0, None);
        assert_eq!((s.absent, s.total.map(|t| t.requests)), (None, Some(10)));
    }
}
