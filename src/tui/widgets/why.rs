//! The "why" of a number: which limit the run is up against (the model's bound, its value and
//! how close the run comes, updated with every snapshot and every knob), and where the file
//! lives (filesystem, device) with a warning when it lives in RAM or across a network. A number
//! without them invites the wrong conclusion: 5 GiB/s "from a disk" that is really a tmpfs, or
//! 30% of a bound blamed on the disk when another process took the CPU.
//!
//! Three places, so an 80×24 screen loses nothing it had: a short why line inside the
//! throughput panel ([`short_line`]), the storage in the status line ([`status_parts`]), and,
//! from [`DETAIL_MIN_HEIGHT`] rows, two full-width rows under the panels ([`render_detail`]):
//! the one-liner with what to look at below half the bound, and the full context.
//!
//! A run above its bound by more than the profile's error gets the ⚠ too, and the one-liner
//! says that the profile does not explain it (see `explain::model`) instead of a share over
//! 100%. Every string from outside (file name, filesystem, device, warnings) is escaped.

use crate::text::{shown, shown_path};
use crate::tui::app::{App, Why};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

/// Most rows of the detail panel (the why line and the where line, wrapped).
pub const DETAIL_HEIGHT: u16 = 4;
/// From this terminal height on, the detail rows are shown.
pub const DETAIL_MIN_HEIGHT: u16 = super::MIN_HEIGHT + 3;

/// Rows the detail panel takes at `width`: the why line's and the where line's, each wrapped
/// between words, at most [`DETAIL_HEIGHT`] (the where line then says its warnings briefly),
/// at least two. No blank row is left between them.
pub fn detail_rows(app: &App, width: usize) -> u16 {
    let (why, full_where, brief_where) = (
        why_spans(app),
        where_spans(app, false),
        where_spans(app, true),
    );
    let rows = |spans: &[Span]| {
        let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
        super::wrap_words(&text, width, width).len() as u16
    };
    let w = rows(&why);
    let full = rows(&full_where);
    if w + full <= DETAIL_HEIGHT {
        w + full
    } else {
        (w + rows(&brief_where)).min(DETAIL_HEIGHT)
    }
}

/// What to do without a profile (fits the throughput panel at 80 columns).
pub const NO_PROFILE: &str = "no profile: run `diskscope limits FILE`";

fn warn() -> Style {
    Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}

/// The why line of the throughput panel: `why memory-bound 4.0 GiB/s · 74%`, said shorter
/// (never cut) when `width` is narrower: a prediction without "for these settings", a bound
/// without what to refresh.
pub fn short_line(app: &App, width: usize) -> Line<'static> {
    let dim = Style::default().fg(Color::DarkGray);
    let why = || Span::styled("why ", dim);
    let texts: Vec<(String, Style)> = match app.why() {
        Why::NoProfile => vec![
            (NO_PROFILE.to_string(), Style::default().fg(Color::Yellow)),
            (
                "no profile: see `diskscope limits`".into(),
                Style::default().fg(Color::Yellow),
            ),
            ("no profile".into(), Style::default().fg(Color::Yellow)),
        ],
        Why::Predicted(s) => {
            let brief = s.replace(" for these settings", "");
            let bound = brief.split(':').next().unwrap_or(&brief).to_string();
            vec![(s, dim), (brief, dim), (bound, dim)]
        }
        Why::NotModelled(s) => {
            let brief = match s.find(" (") {
                Some(i) => s[..i].to_string(),
                None => "not modelled: see `diskscope limits`".into(),
            };
            vec![(s, dim), (brief, dim), ("not modelled".into(), dim)]
        }
        Why::Measured { short, low, .. } => {
            let style = if low {
                warn()
            } else {
                Style::default().add_modifier(Modifier::BOLD)
            };
            let mark = if low { "⚠ " } else { "" };
            let brief = short.replace(" · over it: limits --refresh", " · over it");
            let pct = short.rsplit(" · ").next().unwrap_or(&short).to_string();
            vec![
                (format!("{mark}{short}"), style),
                (format!("{mark}{brief}"), style),
                (format!("{mark}{pct}"), style),
            ]
        }
    };
    super::first_fitting(
        texts
            .into_iter()
            .map(|(t, st)| vec![why(), Span::styled(t, st)])
            .collect(),
        width,
    )
}

/// The status line's parts: each warning whole and as its first clause (`the file is on
/// tmpfs, in RAM`), and the storage (`│ ext4 on vda`).
pub fn status_parts(app: &App) -> (Vec<(String, String)>, Vec<Span<'static>>) {
    let Some(ctx) = &app.explored.context else {
        return (Vec::new(), Vec::new());
    };
    let warnings = ctx
        .warnings
        .iter()
        .map(|w| {
            let w = shown(w).into_owned();
            let brief = w.split(':').next().unwrap_or(&w).trim().to_string();
            (w, brief)
        })
        .collect();
    let fs = ctx
        .filesystem
        .as_ref()
        .map_or("filesystem unknown".into(), |f| shown(&f.fs_type));
    let on = ctx
        .device
        .as_ref()
        .map(|d| format!(" on {}", shown(&d.chain.join("→"))))
        .unwrap_or_default();
    let storage = vec![Span::styled(
        format!(" │ {fs}{on}"),
        Style::default().fg(Color::DarkGray),
    )];
    (warnings, storage)
}

/// The style of a warning.
pub fn warn_style() -> Style {
    warn()
}

/// The why row: the one-liner (with what to look at below half the bound), and the reasons of
/// the row under the cursor when it is suspect.
fn why_spans(app: &App) -> Vec<Span<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    let mut why = vec![Span::styled("why   ", dim)];
    match app.why() {
        Why::NoProfile => why.push(Span::styled(
            format!(
                "no profile: run `diskscope limits {}` (once, under a minute)",
                shown_path(&app.file)
            ),
            Style::default().fg(Color::Yellow),
        )),
        Why::Predicted(s) | Why::NotModelled(s) => why.push(Span::styled(s, dim)),
        Why::Measured { line, hint, .. } => {
            why.push(Span::styled(
                line,
                Style::default().add_modifier(Modifier::BOLD),
            ));
            if let Some(h) = hint {
                why.push(Span::styled(" ⚠ below half its bound; look at: ", warn()));
                why.push(Span::raw(h));
            }
        }
    }
    // The row under the table's cursor, when its verdict is suspect: its reasons (issue 23).
    let body = super::results::body(app);
    let at = app.view.table_cursor.min(body.len().saturating_sub(1));
    let under = body.get(at).map(|(_, _, i)| *i);
    let live = app.live.as_ref().filter(|l| l.agg.ops > 0);
    // The live row (the first, without an index) as of its latest facts.
    let live_suspect = live
        .filter(|_| under == Some(None))
        .and_then(|l| Some((l, l.verdict.as_ref()?)))
        .filter(|(_, v)| v.verdict == crate::explain::verdict::Kind::Suspect)
        .and_then(|(l, v)| {
            let r = l.result(&l.experiment, l.seconds())?;
            let label = super::results::setting_label(&r);
            Some((format!("{label} (live)"), v.sentences()))
        });
    let row_suspect = under
        .flatten()
        .and_then(|i| app.rows.get(i))
        .filter(|r| r.judgement.verdict == "suspect")
        .map(|r| (super::results::setting_label(r), r.judgement.why.clone()));
    if let Some((label, why_text)) = live_suspect.or(row_suspect) {
        why.push(Span::styled(
            format!(" │ ⚠ {} suspect: {}", shown(&label), shown(&why_text)),
            warn(),
        ));
    }
    why
}

/// The where row: warnings (whole, or `brief`ly by their first clause), the storage, and what
/// is doubtful about the profile (with its fix, `diskscope limits --refresh`).
fn where_spans(app: &App, brief: bool) -> Vec<Span<'static>> {
    let dim = Style::default().fg(Color::DarkGray);
    let mut line = vec![Span::styled("where ", dim)];
    match &app.explored.context {
        Some(ctx) => {
            for w in &ctx.warnings {
                let w = shown(w).into_owned();
                let w = if brief {
                    w.split(':').next().unwrap_or(&w).trim().to_string()
                } else {
                    w
                };
                line.push(Span::styled(format!("⚠ {w} │ "), warn()));
            }
            line.push(Span::raw(ctx.storage_summary()));
            if let Some((_, Some(doubt))) = &app.explored.profile {
                line.push(Span::styled(format!(" │ ⚠ {}", shown(doubt)), warn()));
            }
        }
        None => line.push(Span::styled("context not collected", dim)),
    }
    line
}

/// The full-width rows: the why row, then the where row right under it, each wrapped between
/// words (their heights from [`detail_rows`], so neither is cut and no blank row is left).
pub fn render_detail(app: &App, area: Rect, buf: &mut Buffer) {
    let w = area.width as usize;
    let rows = |spans: &[Span]| {
        let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
        super::wrap_words(&text, w, w).len() as u16
    };
    let why = why_spans(app);
    let full_where = where_spans(app, false);
    let why_rows = rows(&why).min(area.height.saturating_sub(1)).max(1);
    let where_spans = if why_rows + rows(&full_where) <= area.height {
        full_where
    } else {
        where_spans(app, true)
    };
    let why_area = Rect {
        height: why_rows.min(area.height),
        ..area
    };
    Paragraph::new(Line::from(why))
        .wrap(Wrap { trim: true })
        .render(why_area, buf);
    let ctx_area = Rect {
        y: area.y + why_area.height,
        height: area.height.saturating_sub(why_area.height),
        ..area
    };
    Paragraph::new(Line::from(where_spans))
        .wrap(Wrap { trim: true })
        .render(ctx_area, buf);
}
