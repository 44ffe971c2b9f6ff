//! An open loop (issue 25: `R`, a rate) that the device cannot keep up with must say so: the
//! rate asked, the rate done and the backlog — operations whose intended start has passed
//! without being issued. Without it a run at 1M IOPS on a disk that does 40k reads like a fast
//! closed loop with large response times, and nothing on screen says the rate was never met.
//!
//! The live line comes from the segment (its per-worker backlog at their latest snapshots,
//! [`Segment::backlog_now`]); a finished row's detail from its [`RunResult`] columns
//! (`rate_iops_asked`, `rate_iops_achieved`, `backlog_ops`: what the CSV holds), judged by
//! [`RunResult::fell_behind`], the rule `run` and the sweep use. Nothing here reads the app's
//! state: the callers pass the segment or the row.

use super::fmt_rate;
use crate::measure::result::Schedule;
use crate::measure::RunResult;
use crate::tui::segment::Segment;
use crate::tui::settings::per_s;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

/// Whether a backlog of `backlog` operations at `asked_iops` is falling behind, by the rule
/// of [`RunResult::fell_behind`] (more than its schedule's [`FELL_BEHIND_BACKLOG_S`]).
///
/// [`FELL_BEHIND_BACKLOG_S`]: crate::measure::result::FELL_BEHIND_BACKLOG_S
pub fn is_behind(asked_iops: f64, backlog: u64) -> bool {
    RunResult {
        setup: crate::config::RecordedSetup {
            rate_iops: Some(crate::config::Iops(asked_iops)),
            ..Default::default()
        },
        open_loop: Some(crate::measure::result::OpenLoop {
            backlog_ops: backlog,
            ..Default::default()
        }),
        ..Default::default()
    }
    .fell_behind()
        == Some(true)
}

/// The throughput panel's last line for an open-loop segment, the longest form that fits
/// `width`: `rate 2000/s asked, 1850/s done, 412 behind` (bold red when behind; `on schedule`
/// when not), with a typed throughput both ways (`rate 50.0 MiB/s = 50/s asked, …`). None
/// for a closed loop.
pub fn live_line(seg: &Segment, width: usize) -> Option<Line<'static>> {
    let rate = seg.settings.rate?;
    let bs = seg.settings.setup.block_size_bytes;
    let asked_iops = rate.iops_at(bs);
    let dim = Style::default().fg(Color::DarkGray);
    let backlog = seg.backlog_now();
    let done = if seg.agg.ops > 0 {
        per_s(seg.iops())
    } else {
        "-".into()
    };
    let behind = backlog.is_some_and(|b| is_behind(asked_iops, b));
    let (state, style) = match backlog {
        Some(b) if behind => (
            format!("{} behind", fmt_rate(b as f64)),
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
        Some(_) => ("on schedule".to_string(), Style::default().fg(Color::Cyan)),
        None => ("starting".to_string(), dim),
    };
    let figure = if behind {
        style
    } else {
        Style::default().fg(Color::Cyan)
    };
    let typed = match rate {
        crate::tui::settings::Rate::BytesPerSec(_) => {
            format!("{} = {}", rate.short(bs), per_s(asked_iops))
        }
        crate::tui::settings::Rate::Iops(_) => per_s(asked_iops),
    };
    let line = |asked: &str, named: bool, long: bool| {
        let (a, d) = if long {
            (" asked, ", " done, ")
        } else {
            (" ask ", " done ")
        };
        vec![
            Span::styled(if named { "rate " } else { "" }, dim),
            Span::styled(asked.to_string(), Style::default().fg(Color::Cyan)),
            Span::styled(a, dim),
            Span::styled(done.clone(), figure),
            Span::styled(d, dim),
            Span::styled(state.clone(), style),
        ]
    };
    Some(super::first_fitting(
        vec![
            line(&typed, true, true),
            line(&per_s(asked_iops), true, true),
            line(&per_s(asked_iops), false, true),
            line(&per_s(asked_iops), false, false),
        ],
        width,
    ))
}

/// An open-loop row's rates and backlog, for the message line when it ends and the summary
/// at exit: `2000/s asked, 1850/s done, 412 behind at the end: fell behind (the device cannot
/// keep up; response times include the wait)`, or `…, on schedule`. None for a closed loop.
pub fn row_detail(r: &RunResult) -> Option<String> {
    let asked = r.setup.rate()?;
    let done = r
        .open_loop
        .as_ref()
        .map(|o| o.rate_iops_achieved)
        .unwrap_or(r.figures.iops);
    let backlog = r.open_loop.as_ref().map(|o| o.backlog_ops).unwrap_or(0);
    let head = format!(
        "open loop {} asked, {} done, {} behind at the end",
        per_s(asked),
        per_s(done),
        fmt_rate(backlog as f64)
    );
    Some(match r.schedule()? {
        Schedule::Idle => format!("{head}: no operation completed, so no rate was kept"),
        Schedule::FellBehind => format!(
            "{head}: fell behind (the device cannot keep up at this rate; response times \
             include the wait)"
        ),
        Schedule::KeptUp => format!("{head}: on schedule"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_that_fell_behind_says_so_with_both_rates_and_its_backlog() {
        let mut r = RunResult::default();
        assert_eq!(row_detail(&r), None);
        r.figures.ops = 41_234;
        r.setup.rate_iops = Some(crate::config::Iops(1e6));
        r.open_loop = Some(crate::measure::result::OpenLoop {
            rate_iops_achieved: 41_234.0,
            backlog_ops: 3_200_000,
            ..Default::default()
        });
        let d = row_detail(&r).unwrap();
        assert!(
            d.starts_with(
                "open loop 1.00M/s asked, 41.2k/s done, 3.20M behind at the end: fell behind"
            ),
            "{d}"
        );
        r.setup.rate_iops = Some(crate::config::Iops(2000.0));
        r.open_loop = Some(crate::measure::result::OpenLoop {
            rate_iops_achieved: 1999.0,
            backlog_ops: 3,
            ..Default::default()
        });
        assert!(row_detail(&r).unwrap().ends_with("on schedule"));
        // A run that completed nothing neither kept up nor fell behind.
        r.figures.ops = 0;
        r.open_loop.as_mut().unwrap().backlog_ops = 0;
        let d = row_detail(&r).unwrap();
        assert!(
            d.ends_with("no operation completed, so no rate was kept"),
            "{d}"
        );
        assert!(!is_behind(2000.0, 20) && is_behind(2000.0, 21));
    }
}
