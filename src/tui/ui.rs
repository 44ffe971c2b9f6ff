//! The screen: `impl Widget for &App`, a pure function of the state (tested with
//! `TestBackend`). Layout, top to bottom: a status line (with the file's filesystem and device),
//! settings beside throughput (with the "why" line: the model's bound and how close the run
//! comes), from 27 rows the full why line and context, then latency
//! above the results table (beside it from [`SIDE_BY_SIDE_WIDTH`] columns on), then the XOR and
//! message line and the key footer. Everything fits in [`MIN_WIDTH`]×[`MIN_HEIGHT`]; below that
//! the screen says the terminal is too small instead of cutting numbers (a cut `2683` reads
//! `268`), and larger terminals give the sparkline, histogram and table more room.

use super::app::App;
use super::widgets::{
    device, help, kdm_card, kernel, latency, log, panel, results, throughput, why,
};
use crate::text::{shown, shown_path};
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

pub use super::widgets::{MIN_HEIGHT, MIN_WIDTH};
/// From this width on, latency and results sit side by side.
pub const SIDE_BY_SIDE_WIDTH: u16 = super::kernel_view::SHOWN_FROM_WIDTH;

impl Widget for &App {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
            too_small(area, buf);
            return;
        }
        let a = areas(self, area);
        Paragraph::new(status_line(self, a.status.width as usize)).render(a.status, buf);
        panel::render(self, a.settings, buf);
        device::render(self, a.device, buf);
        throughput::render(self, a.throughput, buf);
        if a.why.height > 0 {
            why::render_detail(self, a.why, buf);
        }
        let (lat, res, info, footer) = (a.latency, a.results, a.info, a.footer);
        latency::render(self, lat, buf);
        let log_area = kernel::render_over_log(self, a.log, buf);
        log::render(self, log_area, buf);
        results::render(self, res, buf);
        info_line(self, info, buf);
        // Generated from the key table, as many labels as fit.
        Paragraph::new(Line::styled(
            super::keys::footer(footer.width as usize),
            Style::default().fg(Color::DarkGray),
        ))
        .render(footer, buf);
        if self.kdm.show {
            kdm_card::render(self, area, buf);
        }
        if self.view.show_help {
            help::render(self, area, buf);
        }
        no_controls_in(area, buf);
        if self.view.no_color {
            for y in area.top()..area.bottom() {
                for x in area.left()..area.right() {
                    let cell = &mut buf[(x, y)];
                    cell.set_fg(Color::Reset).set_bg(Color::Reset);
                }
            }
        }
    }
}

/// The last line of defence: a cell whose symbol still holds a control character (a panel that
/// drew outside text unescaped) is drawn as `?`, so no escape sequence reaches the terminal
/// whatever a widget forgot. Outside text is escaped where it is drawn ([`shown`]); this only
/// catches what slipped through.
fn no_controls_in(area: Rect, buf: &mut Buffer) {
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            let cell = &mut buf[(x, y)];
            if cell.symbol().chars().any(crate::text::is_unsafe_char) {
                cell.set_symbol("?");
            }
        }
    }
}

/// Where each panel goes on a screen of `area` (at least [`MIN_WIDTH`]×[`MIN_HEIGHT`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Areas {
    /// The status line.
    pub status: Rect,
    /// The settings panel (left of the chart).
    pub settings: Rect,
    /// The device panel under the settings (zero height until the band has
    /// [`DEVICE_MIN_HEIGHT`] rows to spare for it).
    pub device: Rect,
    /// The throughput panel: figures, chart, time axis.
    pub throughput: Rect,
    /// The full "why" line and context (zero height below [`why::DETAIL_MIN_HEIGHT`]).
    pub why: Rect,
    /// The latency histogram.
    pub latency: Rect,
    /// The results table.
    pub results: Rect,
    /// The event log (zero width below [`SIDE_BY_SIDE_WIDTH`]).
    pub log: Rect,
    /// The XOR and message line.
    pub info: Rect,
    /// The key footer.
    pub footer: Rect,
}

/// Height of the settings-and-throughput band at 80×24.
pub const UPPER_MIN_HEIGHT: u16 = 8;
/// Least height of the device panel (two lines and borders).
pub const DEVICE_MIN_HEIGHT: u16 = 4;
/// Height of the device panel with its four main lines.
pub const DEVICE_LINES_HEIGHT: u16 = 6;
/// Height of the device panel with its lines, its history (util, await, aqu-sz) and the CPUs.
pub const DEVICE_FULL_HEIGHT: u16 = 11;
/// Least height of the latency panel when the table is stacked under it.
pub const LATENCY_MIN_HEIGHT: u16 = 6;
/// Least height of the band under the charts (the latency panel and the table) at 80×24.
pub const LOWER_MIN_HEIGHT: u16 = 13;

/// Lays the screen out by content (as btop and bottom do, with each panel's need first): at
/// 80×24 every panel has its least height. Beyond that the band under the charts gets what its
/// panels need — the histogram two rows per octave over the range that holds 99.9% of the
/// operations ([`latency::rows_wanted`]), the table its rows — and the band of the charts its
/// settings and a whole device panel; what is left is shared between the two bands, so space a
/// panel does not need goes to the chart and the histogram (a table of three rows does not keep
/// thirty). When both cannot have what they want, the device panel's four lines come first,
/// then the rows are shared by what each lacks. The left column is the settings and, under
/// them, the device panel down to the band's end (its history takes the rows it gets), so no
/// hole is left there; the "why"/"where" rows are as tall as their text.
pub fn areas(app: &App, area: Rect) -> Areas {
    let detail_h = if area.height >= why::DETAIL_MIN_HEIGHT {
        why::detail_rows(app, area.width as usize)
    } else {
        0
    };
    let info_h = info_lines(app, area.width as usize)
        .len()
        .clamp(1, INFO_MAX_ROWS) as u16;
    let side = area.width >= SIDE_BY_SIDE_WIDTH;
    let avail = area.height.saturating_sub(1 + detail_h + info_h + 1);
    let lat_w = if side {
        area.width * lat_pct(app) / 100
    } else {
        area.width
    };
    let lat_want = latency::rows_wanted(app, lat_w);
    let res_want = results::row_count(app) as u16 + 3;
    let lower_want = if side {
        lat_want.max(res_want)
    } else {
        lat_want + res_want
    }
    .max(LOWER_MIN_HEIGHT);
    let upper_want = UPPER_MIN_HEIGHT + DEVICE_FULL_HEIGHT;
    let lower_h = if upper_want + lower_want <= avail {
        // What neither needs is shared: the histogram's buckets get finer (as far as eight
        // per octave can use), the chart taller.
        let usable = latency::rows_usable(app, lat_w);
        let usable = if side { usable } else { usable + res_want };
        let extra = (avail - upper_want - lower_want) / 2;
        lower_want + extra.min(usable.saturating_sub(lower_want))
    } else {
        let spare = avail.saturating_sub(UPPER_MIN_HEIGHT + LOWER_MIN_HEIGHT);
        // The device panel's four lines first, then each band by what it lacks.
        let first = spare.min(DEVICE_LINES_HEIGHT);
        let rest = spare - first;
        let (du, dl) = (
            upper_want.saturating_sub(UPPER_MIN_HEIGHT + first),
            lower_want - LOWER_MIN_HEIGHT,
        );
        let to_upper = if du + dl == 0 {
            0
        } else {
            (rest as u32 * du as u32 / (du + dl) as u32) as u16
        };
        avail.saturating_sub(UPPER_MIN_HEIGHT + first + to_upper)
    }
    .max(LOWER_MIN_HEIGHT.min(avail.saturating_sub(UPPER_MIN_HEIGHT)));
    let upper_h = avail.saturating_sub(lower_h).max(UPPER_MIN_HEIGHT);
    let [status, upper, why_area, lower, info, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(upper_h),
        Constraint::Length(detail_h),
        Constraint::Min(0),
        Constraint::Length(info_h),
        Constraint::Length(1),
    ])
    .areas(area);
    // From 120 columns the left column is wider, so the device panel's lines are whole
    // (`read 10.0k/s 10000 MiB/s 0.50 ms`).
    let left_w = if area.width >= 120 { 40 } else { 34 };
    let [left, throughput] =
        Layout::horizontal([Constraint::Length(left_w), Constraint::Min(20)]).areas(upper);
    let device_h = match upper_h - UPPER_MIN_HEIGHT {
        h if h >= DEVICE_MIN_HEIGHT => h,
        _ => 0,
    };
    let [settings, device] = Layout::vertical([
        Constraint::Length(UPPER_MIN_HEIGHT),
        Constraint::Length(device_h),
    ])
    .areas(left);
    let [latency, results, log] = if side {
        let lat_pct = lat_pct(app);
        Layout::horizontal([
            Constraint::Percentage(lat_pct),
            Constraint::Percentage(78 - lat_pct),
            Constraint::Percentage(22),
        ])
        .areas(lower)
    } else {
        // The histogram keeps two fifths of the band (at least its least height); the table
        // gets its rows from the rest; what the table does not need goes to the histogram.
        let lat_floor = LATENCY_MIN_HEIGHT.max(lower.height * 2 / 5);
        let res_h = res_want
            .max(4)
            .min(lower.height.saturating_sub(lat_floor))
            .max(4);
        let [lat, res] =
            Layout::vertical([Constraint::Min(4), Constraint::Length(res_h)]).areas(lower);
        [lat, res, Rect::new(lower.x, lower.y, 0, 0)]
    };
    Areas {
        status,
        settings,
        device,
        throughput,
        why: why_area,
        latency,
        results,
        log,
        info,
        footer,
    }
}

/// The latency panel's share of the width side by side: more for two histograms (an open
/// loop's service and response, a mix's reads and writes), so each keeps readable bars.
fn lat_pct(app: &App) -> u16 {
    if latency::shows_two(app) {
        38
    } else {
        30
    }
}

/// What a terminal below 80×24 shows instead of cut figures.
fn too_small(area: Rect, buf: &mut Buffer) {
    let lines = vec![
        Line::styled(
            "terminal too small",
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Line::raw(format!(
            "{}×{}; diskscope needs {MIN_WIDTH}×{MIN_HEIGHT}",
            area.width, area.height
        )),
        Line::raw("enlarge it, or q to quit"),
    ];
    Paragraph::new(lines)
        .wrap(ratatui::widgets::Wrap { trim: true })
        .render(area, buf);
}

/// The status line: the badge, the state, what is read or written, warnings and the storage.
/// When it is wider than the terminal it says less, in this order, rather than being cut at
/// the edge: warnings shortened to their first clause (the why rows and the log have them
/// whole), the path shortened in its middle, the badge dropped, the storage dropped.
pub fn status_line(app: &App, width: usize) -> Line<'static> {
    let (state, color) = if app.runs.paused {
        ("PAUSED", Color::Yellow)
    } else if app.live.as_ref().is_some_and(|l| l.meta.is_some()) {
        ("RUNNING", Color::Green)
    } else if app.live.is_some() {
        ("STARTING", Color::Yellow)
    } else {
        ("STOPPED", Color::Red)
    };
    let path = match app.settings.setup.op {
        crate::config::Op::Read => shown_path(&app.file).into_owned(),
        crate::config::Op::Write => shown_path(&app.explored.scratch).into_owned(),
    };
    let before = match app.settings.setup.op {
        crate::config::Op::Read => String::new(),
        // A mix reads what it writes: the scratch file, never the explored one.
        crate::config::Op::Write if app.settings.is_mixed() => "mixing ".to_string(),
        crate::config::Op::Write => "writing ".to_string(),
    };
    let before = match (&app.kdm.run, app.kdm_running()) {
        (Some(k), true) => format!("KDiskMark {} │ {before}", k.step_name(k.step)),
        _ => before,
    };
    let badge = Span::styled(
        " diskscope ",
        Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED),
    );
    let state = Span::styled(
        format!(" {state} "),
        Style::default().fg(color).add_modifier(Modifier::BOLD),
    );
    let (warnings, storage) = why::status_parts(app);
    let build = |badge_on: bool, path_room: Option<usize>, short: bool, storage_on: bool| {
        let mut v = Vec::new();
        if badge_on {
            v.push(badge.clone());
        }
        v.push(state.clone());
        let p = match path_room {
            Some(room) => super::widgets::panel::shorten(&path, room),
            None => path.clone(),
        };
        v.push(Span::raw(format!("{before}{p}")));
        for (long, brief) in &warnings {
            v.push(Span::styled(
                format!(" │ ⚠ {}", if short { brief } else { long }),
                why::warn_style(),
            ));
        }
        if storage_on {
            v.extend(storage.clone());
        }
        v
    };
    let full = build(true, None, false, true);
    let fixed = super::widgets::spans_width(&full) - path.chars().count();
    let room = |w: usize| width.saturating_sub(w).max(12);
    let short = build(true, None, true, true);
    let fixed_short = super::widgets::spans_width(&short) - path.chars().count();
    let no_badge = build(false, None, true, true);
    let fixed_nb = super::widgets::spans_width(&no_badge) - path.chars().count();
    let bare = build(false, None, true, false);
    let fixed_bare = super::widgets::spans_width(&bare) - path.chars().count();
    super::widgets::first_fitting(
        vec![
            full,
            build(true, Some(room(fixed)), false, true),
            short,
            build(true, Some(room(fixed_short)), true, true),
            build(false, Some(room(fixed_nb)), true, true),
            build(false, Some(room(fixed_bare)), true, false),
        ],
        width,
    )
}

/// Most rows the message line may take (a longer message is whole in the log).
pub const INFO_MAX_ROWS: usize = 3;

/// The XOR and message lines for a screen `width` wide: the message is broken between words
/// into as many rows as it needs (up to [`INFO_MAX_ROWS`]), so a figure in it is never cut at
/// the edge of an 80-column terminal.
pub fn info_lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let busy = Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD);
    let now = std::time::Instant::now();
    let mut spans = Vec::new();
    let (text, style) = if app.runs.quitting {
        // Leaving waits for the run to stop and the scratch file to go, and says so.
        let waited = app
            .runs
            .quit_since
            .map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64());
        let writing = app
            .live
            .iter()
            .chain(&app.runs.ending)
            .any(|s| s.settings.setup.op == crate::config::Op::Write);
        let text = match app.removal_text(now, true) {
            Some(r) => format!("quitting after removing the scratch file: {r}"),
            // The run's end (its workers' last operations, a write's close) is on the session
            // thread: the screen says what it waits for and for how long.
            None if writing => format!(
                "quitting: ending the write run, {waited:.1} s (its scratch file is removed next)"
            ),
            None if app.live.is_some() || !app.runs.ending.is_empty() => {
                format!("quitting: stopping the run, {waited:.1} s")
            }
            None => format!("quitting, {waited:.1} s"),
        };
        (text, busy)
    } else {
        let dim = Style::default().fg(Color::DarkGray);
        // A scratch file being removed takes the XOR's place (the XOR is of reads; writes have
        // none to show), so the message keeps its room.
        if let Some(r) = app.removal_text(now, false) {
            spans.push(Span::styled(format!("removing scratch: {r} "), busy));
        } else {
            spans.push(Span::styled("XOR ", dim));
            match &app.runs.xor {
                Some(x) if x.mismatch.is_some() => spans.push(Span::styled(
                    format!(
                        "{} MISMATCH {} ",
                        x.xor,
                        x.mismatch.as_deref().unwrap_or_default()
                    ),
                    Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
                )),
                Some(x) => spans.push(Span::styled(
                    format!("{} ({}×) ", x.xor, x.agreeing),
                    Style::default().add_modifier(Modifier::BOLD),
                )),
                None => spans.push(Span::styled("pending (shown when a run stops) ", dim)),
            }
        }
        spans.push(Span::raw("│ "));
        match &app.view.entry {
            Some(text) => (
                format!(
                    "{} ▸ {text}▏ ({})",
                    app.view.entry_kind.name(),
                    crate::tui::keys::hint(crate::tui::keys::Part::Entry)
                ),
                Style::default()
                    .fg(Color::Yellow)
                    .add_modifier(Modifier::BOLD),
            ),
            // Messages carry paths and errors from outside: escaped where they are drawn.
            None => (shown(&app.message).into_owned(), Style::default()),
        }
    };
    let prefix = super::widgets::spans_width(&spans);
    let mut rows = super::widgets::wrap_words(&text, width.saturating_sub(prefix), width);
    if rows.len() > INFO_MAX_ROWS {
        rows.truncate(INFO_MAX_ROWS);
        if let Some(last) = rows.last_mut() {
            let keep = width.saturating_sub(2);
            let cut: String = last.chars().take(keep).collect();
            let cut = match cut.rfind(' ') {
                Some(i) if last.chars().count() > keep => cut[..i].to_string(),
                _ => cut,
            };
            *last = format!("{cut} …");
        }
    }
    let mut out = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        if i == 0 {
            let mut first = std::mem::take(&mut spans);
            first.push(Span::styled(row, style));
            out.push(Line::from(first));
        } else {
            out.push(Line::from(Span::styled(row, style)));
        }
    }
    out
}

fn info_line(app: &App, area: Rect, buf: &mut Buffer) {
    Paragraph::new(info_lines(app, area.width as usize)).render(area, buf);
}
