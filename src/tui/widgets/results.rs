//! The results table: the live setting on top, then each finished setting's figures (newest
//! first), so block sizes or methods can be compared side by side.
//!
//! A row names what differs between settings: the method as it was used (`pwrite` for writes),
//! the block size, the io_uring queue depth (`q32`) or the KDiskMark test, and flags: W = write,
//! D = O_DIRECT, C = cold, R = random offsets, F = fsync at the end, S = O_DSYNC. Columns: threads,
//! throughput, Δ% against the baseline (`B`), IOPS, p50 and p99 latency, duration and operation
//! count (so a 0.2 s row is not mistaken for a 60 s one). Rows already saved are marked `✓`, the
//! baseline `◆` (listed right after the live row so it stays in view).
//!
//! Every column is as wide as its widest cell: a figure is never cut (cutting `941.4k` to
//! `941.4` would change its value). When the panel is too narrow, whole columns are dropped,
//! least important first; [`table_text`] lays out the same cells for the summary printed on exit.

use super::{fmt_delta_pct, fmt_mib_s, fmt_rate, fmt_secs, fmt_us, frame};
use crate::config::{CacheMode, Op, Pattern, WriteSync};
use crate::measure::RunResult;
use crate::size::format_size;
use crate::tui::baseline::Baseline;
use crate::tui::kdiskmark;
use crate::tui::rows::TableView;
use crate::tui::segment::RowExtra;
use crate::tui::settings::method_label;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Row, StatefulWidget, Table, TableState};

/// `WDCRFS`: what the setting name does not say.
pub fn flags(r: &RunResult) -> String {
    let mut f = String::new();
    if r.setup.op == Op::Write {
        f.push('W');
    }
    if r.setup.direct {
        f.push('D');
    }
    if r.setup.cache == CacheMode::Cold {
        f.push('C');
    }
    if r.setup.pattern == Pattern::Random {
        f.push('R');
    }
    let sync = r.setup.write_sync.unwrap_or(WriteSync::None);
    if sync.fsync() {
        f.push('F');
    }
    if sync.dsync() {
        f.push('S');
    }
    f
}

/// `pread 1M`, `pwrite 4K`, `io_uring 16K q32`, `SEQ1M Q8T1`.
pub fn setting_label(r: &RunResult) -> String {
    if let Some(name) = kdiskmark::test_name(r) {
        return name.to_string();
    }
    // Only read and write exist; an unknown operation (no row of the explorer) reads as read.
    let op = r.setup.op.known().unwrap_or(Op::Read);
    // A block larger than the file moves the file's size per operation: the label says what
    // was done (`pread 4K<1M`: 4 KiB per operation where 1 MiB was asked).
    let per_op = r.figures.bytes.checked_div(r.figures.ops).unwrap_or(0);
    let size = if per_op > 0
        && per_op * 2 <= r.setup.block_size_bytes
        && !r
            .setup
            .method
            .known()
            .is_some_and(|m| crate::engine::caps(m).maps_file)
    {
        format!(
            "{}<{}",
            format_size(per_op),
            format_size(r.setup.block_size_bytes)
        )
    } else {
        format_size(r.setup.block_size_bytes)
    };
    let mut s = format!(
        "{} {size}",
        r.setup.method.known().map_or("?", |m| method_label(op, m))
    );
    if r.setup
        .method
        .known()
        .is_some_and(|m| crate::engine::caps(m).queued)
    {
        s.push_str(&format!(" q{}", r.setup.queue_depth));
    }
    // A mix (issue 26): its share of reads; its directions are told apart by `mix::row_detail`.
    if let Some(pct) = r.setup.mix_read_pct {
        s.push_str(&format!(" mix{pct}"));
    }
    // An open loop (issue 25): the rate asked, so rows at 2000/s and 200/s differ.
    if let Some(asked) = r.setup.rate() {
        s.push_str(&format!(" @{}", crate::tui::settings::per_s(asked)));
    }
    s
}

/// Column headers; the throughput one carries the unit shown.
pub fn headers(app: &dyn TableView) -> Vec<String> {
    [
        "setting",
        "thr",
        "flg",
        app.unit(),
        "Δ%",
        "IOPS",
        "p50",
        "p99",
        "time",
        "ops",
        "p90",
        "p99.9",
        "max",
        "%bound",
        "±",
        "wu",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect()
}

/// Column importance: lower stays longer when the panel is narrow.
/// p90, p99.9, max and the bound's % appear only when the panel is wide.
const PRIORITY: [u8; 16] = [0, 2, 1, 0, 1, 1, 4, 2, 3, 3, 6, 6, 5, 5, 2, 4];

/// The order columns are drawn in (indices of [`headers`]): the spread `±` beside the
/// throughput it qualifies, the warm-up `wu` beside the time it was taken from.
pub const DISPLAY_ORDER: [usize; 16] = [0, 1, 2, 3, 14, 4, 5, 6, 7, 8, 15, 9, 10, 11, 12, 13];

/// Columns of the summary printed on exit (the wide-only ones left out).
pub const SUMMARY_COLUMNS: usize = 10;

/// Columns `o` sorts the finished rows by, in turn (then back to newest first): throughput,
/// IOPS, p99 latency, duration.
pub const SORT_COLUMNS: [usize; 4] = [3, 5, 7, 8];

/// The value a row is sorted by in column `c` (of [`SORT_COLUMNS`]).
fn sort_value(r: &RunResult, c: usize) -> f64 {
    match c {
        3 => r.figures.mib_s,
        5 => r.figures.iops,
        7 => r.figures.lat_p99_us,
        _ => r.figures.seconds,
    }
}

/// `±3.2%`: the spread of a row's 100 ms samples.
pub fn spread_text(pct: Option<f64>) -> String {
    match pct {
        Some(p) if p < 9.95 => format!("±{p:.1}%"),
        Some(p) => format!("±{p:.0}%"),
        None => String::new(),
    }
}

/// The warm-up left out of a row: `1.20s`; `all` when it never ended (the figures include it);
/// empty for rows without one (cold, O_DIRECT, writes).
pub fn warmup_text(extra: Option<&RowExtra>) -> String {
    match extra.and_then(|e| e.warmup_s.map(|s| (s, e.warmup_over))) {
        Some((s, true)) => fmt_secs(s),
        Some((_, false)) => "all".into(),
        None => String::new(),
    }
}

/// The flags of a row with its verdict: `!` ends them when it is suspect.
pub fn flags_with_verdict(r: &RunResult) -> String {
    let mut f = flags(r);
    if r.judgement.verdict == "suspect" {
        f.push('!');
    }
    f
}

/// The cells of one row, in [`headers`] order.
pub fn cells(
    app: &dyn TableView,
    mark: &str,
    r: &RunResult,
    extra: Option<&RowExtra>,
) -> Vec<String> {
    vec![
        format!("{mark}{}", setting_label(r)),
        r.setup.threads.to_string(),
        flags_with_verdict(r),
        fmt_mib_s(app.in_unit(r.figures.mib_s)),
        app.delta_pct(r).map(fmt_delta_pct).unwrap_or_default(),
        fmt_rate(r.figures.iops),
        fmt_us(r.figures.lat_p50_us),
        fmt_us(r.figures.lat_p99_us),
        fmt_secs(r.figures.seconds),
        fmt_rate(r.figures.ops as f64),
        fmt_us(r.figures.lat_p90_us),
        fmt_us(r.figures.lat_p999_us),
        fmt_us(r.figures.lat_max_us),
        r.judgement
            .bound_mib_s
            .filter(|b| *b > 0.0)
            .map(|b| format!("{:.0}%", r.figures.mib_s / b * 100.0))
            .unwrap_or_default(),
        spread_text(extra.and_then(|e| e.spread_pct)),
        warmup_text(extra),
    ]
}

/// The mark before finished row `i`: baseline `◆`, saved `✓`.
pub fn mark(app: &dyn TableView, i: usize) -> &'static str {
    match app.baseline() {
        Some(Baseline::Pinned { index, .. }) if *index == i => "◆",
        _ if i < app.rows_saved() => "✓",
        _ => " ",
    }
}

/// Which columns fit in `width` (column widths from the cells, one space between): the least
/// important are dropped until the rest fit; Δ% is left out without a baseline.
pub fn fitting_columns(widths: &[usize], width: usize, has_baseline: bool) -> Vec<usize> {
    let mut keep: Vec<usize> = (0..widths.len())
        .filter(|&c| has_baseline || c != 4)
        .collect();
    loop {
        let need: usize = keep.iter().map(|&c| widths[c]).sum::<usize>() + keep.len() - 1;
        if need <= width || keep.len() <= 1 {
            return keep;
        }
        let worst = keep
            .iter()
            .enumerate()
            .max_by_key(|(pos, &c)| (PRIORITY[c], *pos))
            .map(|(pos, _)| pos)
            .unwrap_or(0);
        if PRIORITY[keep[worst]] == 0 {
            return keep;
        }
        keep.remove(worst);
    }
}

fn widths_of(rows: &[Vec<String>]) -> Vec<usize> {
    let n = rows.first().map(Vec::len).unwrap_or(0);
    (0..n)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect()
}

/// The table as aligned text (header first): the summary printed when the explorer ends.
pub fn table_text(app: &dyn TableView) -> String {
    let mut all = vec![headers(app)];
    for (i, r) in app.rows().iter().enumerate() {
        all.push(cells(app, mark(app, i), r, app.row_extra().get(i)));
    }
    let widths = widths_of(&all);
    let keep: Vec<usize> = (0..widths.len().min(SUMMARY_COLUMNS))
        .filter(|&c| app.baseline().is_some() || c != 4)
        .collect();
    let mut out = String::new();
    for row in &all {
        let line: Vec<String> = keep
            .iter()
            .map(|&c| {
                if c <= 2 {
                    format!("{:<w$}", row[c], w = widths[c])
                } else {
                    format!("{:>w$}", row[c], w = widths[c])
                }
            })
            .collect();
        out.push_str(line.join(" ").trim_end());
        out.push('\n');
    }
    out
}

/// How many body rows the table shows now ([`body`]).
pub fn row_count(app: &dyn TableView) -> usize {
    body(app).len()
}

/// The table's body rows in display order: the live row (once it has operations), the pinned
/// baseline, then the finished rows not hidden (`h`), newest first or sorted (`o`, best first:
/// highest throughput or IOPS, lowest p99, longest). Each with its style and the index in
/// `app.rows()` (None for the live row).
pub fn body(app: &dyn TableView) -> Vec<(Vec<String>, Style, Option<usize>)> {
    let mut body = Vec::new();
    if let Some(live) = app.live() {
        if let Some(mut r) = live.result(&live.experiment, live.seconds()) {
            // Its verdict as of the latest facts (once a second): `!` while suspect.
            if let Some(v) = &live.verdict {
                v.fill(&mut r);
            }
            if r.figures.ops > 0 {
                let extra = live.extra(false);
                body.push((
                    cells(app, "▶", &r, Some(&extra)),
                    Style::default().fg(Color::Green),
                    None,
                ));
            }
        }
    }
    // The pinned baseline comes right after the live row, so it stays in view however many
    // rows follow; then the others.
    let pinned = match app.baseline() {
        Some(Baseline::Pinned { index, .. }) => app.rows().get(*index).map(|r| (*index, r)),
        _ => None,
    };
    if let Some((i, r)) = pinned {
        body.push((
            cells(app, mark(app, i), r, app.row_extra().get(i)),
            Style::default().fg(Color::Cyan),
            Some(i),
        ));
    }
    let mut order: Vec<usize> = (0..app.rows().len())
        .rev()
        .filter(|&i| pinned.is_none_or(|(p, _)| p != i) && !app.hidden_rows().contains(&i))
        .collect();
    if let Some(c) = app.table_sort() {
        let lower_is_better = c == 7;
        order.sort_by(|&a, &b| {
            let (x, y) = (sort_value(&app.rows()[a], c), sort_value(&app.rows()[b], c));
            let o = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
            if lower_is_better {
                o
            } else {
                o.reverse()
            }
        });
    }
    for i in order {
        body.push((
            cells(app, mark(app, i), &app.rows()[i], app.row_extra().get(i)),
            Style::default(),
            Some(i),
        ));
    }
    body
}

/// The first body row shown when `visible` rows fit and the cursor is on row `cursor`: the
/// table scrolls only as far as it must to keep the cursor in view.
pub fn table_offset(cursor: usize, visible: usize) -> usize {
    cursor.saturating_sub(visible.saturating_sub(1))
}

/// Draws the results table.
pub fn render(app: &dyn TableView, area: Rect, buf: &mut Buffer) {
    let title = format!(
        " results ({} rows{}, s saves, B baseline) ",
        app.rows().len(),
        match app.baseline() {
            Some(b @ Baseline::Records(_)) => format!(", {}", b.describe()),
            _ => String::new(),
        }
    );
    let block = frame(&title);
    let inner = block.inner(area);
    let body = body(app);
    let head = headers(app);
    let mut all = vec![head.clone()];
    all.extend(body.iter().map(|(c, _, _)| c.clone()));
    let widths = widths_of(&all);
    // A column no row fills (the bound's % without a profile) takes no room.
    let empty = |c: usize| body.iter().all(|(cells, _, _)| cells[c].is_empty());
    let widths: Vec<usize> = (0..widths.len())
        .map(|c| {
            if c >= SUMMARY_COLUMNS && empty(c) {
                0
            } else {
                widths[c]
            }
        })
        .collect();
    let fit = fitting_columns(&widths, inner.width as usize, app.baseline().is_some());
    let keep: Vec<usize> = DISPLAY_ORDER
        .iter()
        .copied()
        .filter(|c| fit.contains(c) && widths[*c] > 0)
        .collect();
    let pick = |row: &[String]| -> Vec<String> {
        keep.iter()
            .map(|&c| {
                if c <= 2 {
                    row[c].clone()
                } else {
                    format!("{:>w$}", row[c], w = widths[c])
                }
            })
            .collect()
    };
    let header = Row::new(pick(&head))
        .style(Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED));
    let rows: Vec<Row> = body
        .iter()
        .map(|(c, style, _)| Row::new(pick(c)).style(*style))
        .collect();
    let cursor = app.table_cursor().min(body.len().saturating_sub(1));
    let constraints: Vec<Constraint> = keep
        .iter()
        .map(|&c| Constraint::Length(widths[c] as u16))
        .collect();
    // The selected row is kept in view: the table scrolls to the cursor (the same offset a
    // click is read against).
    let visible = inner.height.saturating_sub(1) as usize;
    let mut state = TableState::default()
        .with_offset(table_offset(cursor, visible))
        .with_selected(Some(cursor));
    StatefulWidget::render(
        Table::new(rows, constraints)
            .header(header)
            .column_spacing(1)
            .row_highlight_style(Style::default().add_modifier(Modifier::REVERSED))
            .block(block),
        area,
        buf,
        &mut state,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Method;

    #[test]
    fn a_block_larger_than_the_file_is_labelled_with_what_each_operation_moved() {
        let mut r = RunResult {
            setup: crate::config::RecordedSetup {
                method: Method::Pread.into(),
                op: Op::Read.into(),
                block_size_bytes: 1 << 20,
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                bytes: 40 << 10,
                ops: 10,
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(setting_label(&r), "pread 4K<1M");
        r.figures.bytes = 10 << 20;
        assert_eq!(setting_label(&r), "pread 1M");
    }

    #[test]
    fn narrow_panels_drop_whole_columns_least_important_first() {
        let w = [14, 3, 3, 5, 4, 6, 6, 6, 5, 5, 6, 6, 6, 6];
        assert_eq!(fitting_columns(&w, 200, false).len(), 13);
        assert_eq!(fitting_columns(&w, 200, true).len(), 14);
        let k = fitting_columns(&w, 75, true);
        assert!(
            !k.contains(&10) && !k.contains(&11),
            "the wide-only go first: {k:?}"
        );
        let k = fitting_columns(&w, 45, true);
        assert!(!k.contains(&6), "p50 goes first: {k:?}");
        assert!(k.contains(&3) && k.contains(&0));
        let need: usize = k.iter().map(|&c| w[c]).sum::<usize>() + k.len() - 1;
        assert!(need <= 45);
    }
}
