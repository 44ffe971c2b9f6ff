//! The explorer's keys and mouse: each key, as the key table (`keys::KEYS`) names it, changes
//! the settings or the view and returns the [`Action`] the event loop carries out (start a run,
//! save, export, quit). A key goes to the first active part of the explorer (`keys::Part`:
//! anywhere for Ctrl keys, a screen too small, the entry line (`b`, `R`, `W`), an overlay (help,
//! the KDiskMark card), a running KDiskMark set, the main view), and only through that part's
//! table. No terminal type beyond crossterm's key event.

use super::app::{Action, App, Entry, MIN_ROW_OPS, MIN_ROW_SECONDS};
use super::baseline::{Baseline, BaselineRecord};
use super::keys::{Cmd, Part};
use super::settings::{Settings, WriteSync};
use crate::config::Op;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

impl App {
    /// Takes one mouse event, given where the results table is on screen (`table`, from
    /// [`ui::areas`](super::ui::areas), which the event loop asks: the state does not lay out
    /// the screen): the wheel moves the table's cursor (the table scrolls with it), a click on
    /// a table row selects it. Elsewhere, and while an overlay is open, the mouse does nothing.
    pub fn handle_mouse(&mut self, m: crossterm::event::MouseEvent, table: ratatui::layout::Rect) {
        use crossterm::event::{MouseButton, MouseEventKind};
        if self.view.show_help || self.kdm.show || self.view.entry.is_some() {
            return;
        }
        let last = super::widgets::results::row_count(self).saturating_sub(1);
        let c = self.view.table_cursor.min(last);
        match m.kind {
            MouseEventKind::ScrollDown => self.view.table_cursor = (c + 1).min(last),
            MouseEventKind::ScrollUp => self.view.table_cursor = c.saturating_sub(1),
            MouseEventKind::Down(MouseButton::Left) => {
                // Below the top border and the header.
                let first_y = table.y + 2;
                let inside = m.column > table.x
                    && m.column < table.right().saturating_sub(1)
                    && m.row >= first_y
                    && m.row < table.bottom().saturating_sub(1);
                if !inside {
                    return;
                }
                let visible = table.height.saturating_sub(3) as usize;
                let offset = super::widgets::results::table_offset(c, visible);
                let at = offset + (m.row - first_y) as usize;
                if at <= last {
                    self.view.table_cursor = at;
                }
            }
            _ => {}
        }
    }

    /// Takes one key: its effect, and its message into the event log.
    pub fn handle_key(&mut self, key: KeyEvent) -> Action {
        let action = self.take_key(key);
        self.sync_log();
        action
    }

    /// The part of the explorer that takes `key` now (the first active one in the order of
    /// [`keys::PARTS`](super::keys::PARTS)).
    pub(super) fn part_for(&self, key: KeyEvent) -> Part {
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            Part::Anywhere
        } else if self.too_small() {
            // A screen too small to show the settings shows no key's effect either.
            Part::TooSmall
        } else if self.view.entry.is_some() {
            Part::Entry
        } else if self.view.show_help || self.kdm.show {
            // Closed by any key, and that key does nothing else: `?` then `c` must not evict
            // the file the user was only reading about.
            Part::Overlay
        } else if self.kdm_running() {
            Part::KDiskMark
        } else {
            Part::Main
        }
    }

    pub(super) fn take_key(&mut self, key: KeyEvent) -> Action {
        // Every key is declared once, with its help text, in its part's table (`keys::PARTS`).
        let part = self.part_for(key);
        let Some(cmd) = super::keys::command_in(part, key) else {
            return Action::None;
        };
        match part {
            Part::Main => match self.view_key(cmd) {
                Some(action) => action,
                None => self.setting_key(cmd),
            },
            Part::Entry => self.take_entry_key(cmd, key.code),
            Part::Anywhere | Part::TooSmall | Part::Overlay | Part::KDiskMark => {
                self.part_key(part, cmd)
            }
        }
    }

    /// A key of the small parts: quit, close an overlay, cancel a running set, or say why the
    /// key does nothing now.
    fn part_key(&mut self, part: Part, cmd: Cmd) -> Action {
        match cmd {
            Cmd::Quit => self.quit_action(),
            Cmd::CloseOverlay => {
                self.view.show_help = false;
                self.kdm.show = false;
                Action::None
            }
            Cmd::CancelSet => self.cancel_kdiskmark(),
            Cmd::Help => {
                self.view.show_help = true;
                Action::None
            }
            _ => {
                match part {
                    Part::TooSmall => {
                        self.message = "terminal too small: enlarge it, or q to quit".into()
                    }
                    Part::KDiskMark => {
                        self.message = format!(
                            "KDiskMark set running: {}",
                            super::keys::hint(Part::KDiskMark)
                        )
                    }
                    _ => {}
                }
                Action::None
            }
        }
    }

    /// A key that changes a setting: the run restarts with it (unless paused), or the message
    /// says why the change was refused.
    fn setting_key(&mut self, cmd: Cmd) -> Action {
        let s = &mut self.settings;
        let changed: Result<String, String> = match cmd {
            Cmd::BlockUp => s.step_block_size(true).map(|_| block_note(s)),
            Cmd::BlockDown => s.step_block_size(false).map(|_| block_note(s)),
            Cmd::ThreadUp => s
                .step_threads(true)
                .map(|_| format!("threads {}", s.setup.threads)),
            Cmd::ThreadDown => s
                .step_threads(false)
                .map(|_| format!("threads {}", s.setup.threads)),
            Cmd::QueueUp => s
                .step_queue_depth(true)
                .map(|_| format!("queue depth {}", s.setup.queue_depth)),
            Cmd::QueueDown => s
                .step_queue_depth(false)
                .map(|_| format!("queue depth {}", s.setup.queue_depth)),
            Cmd::Method => Ok(match s.cycle_method() {
                Some(note) => format!("method {}; {note}", s.setup.method),
                None => format!("method {}", s.setup.method),
            }),
            Cmd::Direct => s
                .toggle_direct()
                .map(|_| format!("O_DIRECT {}", on_off(s.setup.direct))),
            Cmd::Buffers => s.cycle_buffers().map(|_| {
                format!(
                    "buffers {} (the row records the memory obtained)",
                    s.setup.buffers
                )
            }),
            Cmd::Cold => {
                s.set_cold(!s.cold());
                Ok(match (s.cold(), s.setup.op) {
                    (true, Op::Write) => "cold: applies to reads (w switches back)".into(),
                    (true, Op::Read) => "cold: file evicted now and before every pass".into(),
                    (false, _) => {
                        "cache as is: not evicted, not pre-read (the gauge shows how much is cached)"
                            .into()
                    }
                })
            }
            Cmd::Write => {
                let skipped = s.cycle_op(self.runs.mix_share_pct);
                Ok(match (s.setup.op, skipped) {
                    (Op::Write, _) if s.is_mixed() => mix_note(s, &self.explored.scratch),
                    (Op::Write, _) => {
                        format!(
                            "writing to {}",
                            crate::text::shown_path(&self.explored.scratch)
                        )
                    }
                    (Op::Read, skipped) => format!(
                        "reading the file (the scratch file is removed in the background){}",
                        skipped.map(|n| format!("; {n}")).unwrap_or_default()
                    ),
                })
            }
            Cmd::Pattern => {
                s.toggle_pattern();
                Ok(format!("offsets {}", s.setup.pattern))
            }
            Cmd::Sync => {
                s.cycle_sync();
                let what = match s.setup.write_sync {
                    WriteSync::None => "writes: plain (may be page-cache speed)",
                    WriteSync::FsyncAtEnd => "writes: fsync at the end, timed",
                    WriteSync::Dsync => "writes: O_DSYNC, every write durable",
                    WriteSync::DsyncAndFsync => "writes: O_DSYNC and fsync at the end",
                };
                let when = if s.setup.op == Op::Read {
                    " (applies once w switches to writes)"
                } else {
                    ""
                };
                Ok(format!("{what}{when}"))
            }
            _ => return Action::None,
        };
        self.after_change(changed)
    }

    /// A key while an entry line (`b`, `R`, `W`) is open: typing, Backspace, Enter applies,
    /// Esc cancels; nothing else acts.
    fn take_entry_key(&mut self, cmd: Cmd, code: KeyCode) -> Action {
        let Some(text) = &mut self.view.entry else {
            return Action::None;
        };
        let kind = self.view.entry_kind;
        let rate = kind == Entry::Rate;
        let what = kind.name();
        match (cmd, code) {
            (Cmd::EntryCancel, _) => {
                self.view.entry = None;
                self.message = format!("{what} unchanged");
                Action::None
            }
            (Cmd::EntryErase, _) => {
                text.pop();
                Action::None
            }
            (Cmd::EntryType, KeyCode::Char(c))
                if (c.is_ascii_alphanumeric() || rate && matches!(c, '.' | '/' | ' '))
                    && text.len() < 16 =>
            {
                text.push(c);
                Action::None
            }
            (Cmd::EntryApply, _) => {
                let text = self.view.entry.take().unwrap_or_default();
                let changed = match kind {
                    Entry::Rate => self
                        .settings
                        .set_rate_text(&text)
                        .map(|_| rate_note(&self.settings)),
                    Entry::BlockSize => self
                        .settings
                        .set_block_size_text(&text)
                        .map(|_| block_note(&self.settings)),
                    Entry::MixShare => self.settings.set_mix_text(&text).map(|pct| {
                        self.runs.mix_share_pct = pct;
                        mix_note(&self.settings, &self.explored.scratch)
                    }),
                };
                self.after_change(changed)
            }
            _ => Action::None,
        }
    }

    /// A key that acts on the view, the rows or the session (not a setting): the action, or
    /// None for a setting's key.
    fn view_key(&mut self, cmd: Cmd) -> Option<Action> {
        match cmd {
            Cmd::Rate => {
                self.view.entry = Some(String::new());
                self.view.entry_kind = Entry::Rate;
                self.message = "rate: ops/s (2000) or a throughput (50M/s), 0 = closed loop; \
                                Enter applies, Esc cancels"
                    .into();
                Some(Action::None)
            }
            Cmd::MixShare => {
                self.view.entry = Some(String::new());
                self.view.entry_kind = Entry::MixShare;
                self.message = format!(
                    "mix: type the percent of operations that read (1-99, now {}; fio's \
                     rwmixread default is 50), Enter mixes, Esc cancels",
                    self.runs.mix_share_pct
                );
                Some(Action::None)
            }
            Cmd::BlockType => {
                self.view.entry_kind = Entry::BlockSize;
                self.view.entry = Some(String::new());
                self.message =
                    "block size: type e.g. 12K or 3 (1 B to 1G), Enter applies, Esc cancels".into();
                Some(Action::None)
            }
            Cmd::Pin => {
                self.pin_row_under_cursor();
                Some(Action::None)
            }
            Cmd::Delete => {
                self.delete_row_under_cursor();
                Some(Action::None)
            }
            Cmd::Units => {
                self.view.units_mb = !self.view.units_mb;
                self.message = format!("throughput in {}", self.unit());
                Some(Action::None)
            }
            Cmd::Export => Some(Action::Export),
            Cmd::KDiskMark => Some(Action::KDiskMark),
            Cmd::CursorDown
            | Cmd::CursorUp
            | Cmd::PageDown
            | Cmd::PageUp
            | Cmd::Home
            | Cmd::End => {
                self.move_cursor(cmd);
                self.say_mix_of_row_under_cursor();
                Some(Action::None)
            }
            Cmd::Transient => {
                self.view.keep_transient = !self.view.keep_transient;
                self.message = if self.view.keep_transient {
                    format!("rows under {MIN_ROW_SECONDS} s or {MIN_ROW_OPS} ops are kept too")
                } else {
                    format!("rows under {MIN_ROW_SECONDS} s or {MIN_ROW_OPS} ops are not kept")
                };
                Some(Action::None)
            }
            Cmd::LogCounts => {
                self.view.latency_log = !self.view.latency_log;
                self.message = if self.view.latency_log {
                    "latency counts on a log scale (small buckets visible)".into()
                } else {
                    "latency counts on a linear scale".into()
                };
                Some(Action::None)
            }
            Cmd::Sort => {
                self.cycle_sort();
                Some(Action::None)
            }
            Cmd::Span => {
                self.view.span = self.view.span.next();
                self.message = format!(
                    "chart: the last {} ({} s per point; v: the last {})",
                    self.view.span.label(),
                    self.view.span.point_s(),
                    self.view.span.next().label()
                );
                Some(Action::None)
            }
            Cmd::Kernel => Some(self.toggle_kernel()),
            Cmd::Hide => {
                self.hide_row_under_cursor();
                Some(Action::None)
            }
            Cmd::ShowHidden => {
                let n = self.view.hidden_rows.len();
                self.view.hidden_rows.clear();
                self.message = format!("{n} hidden rows shown again");
                Some(Action::None)
            }
            Cmd::Quit => Some(self.quit_action()),
            Cmd::Help => {
                self.view.show_help = true;
                Some(Action::None)
            }
            Cmd::Pause => Some(self.toggle_pause()),
            Cmd::Reset => Some(self.reset()),
            Cmd::Save => Some(Action::Save),
            _ => None,
        }
    }

    /// Restarts after a successful change (unless paused), or shows why it was refused.
    pub(super) fn after_change(&mut self, changed: Result<String, String>) -> Action {
        match changed {
            Ok(note) => {
                self.message = note;
                if self.runs.paused {
                    self.message.push_str(" (paused: space resumes)");
                    Action::None
                } else {
                    self.start()
                }
            }
            Err(why) => {
                self.message = why;
                Action::None
            }
        }
    }

    /// Handles one key press.
    /// Moves the results-table cursor: `J`/`K` one row, PgDn/PgUp ten, Home/End to the ends.
    pub(super) fn move_cursor(&mut self, cmd: Cmd) {
        let last = super::widgets::results::row_count(self).saturating_sub(1);
        let c = self.view.table_cursor.min(last);
        self.view.table_cursor = match cmd {
            Cmd::CursorDown => c + 1,
            Cmd::CursorUp => c.saturating_sub(1),
            Cmd::PageDown => c + 10,
            Cmd::PageUp => c.saturating_sub(10),
            Cmd::Home => 0,
            _ => last,
        }
        .min(last);
    }

    /// `o`: sorts the finished rows by the next column of
    /// [`SORT_COLUMNS`](super::widgets::results::SORT_COLUMNS), then back to newest first.
    pub(super) fn cycle_sort(&mut self) {
        use super::widgets::results::SORT_COLUMNS;
        self.view.table_sort = match self.view.table_sort {
            None => Some(SORT_COLUMNS[0]),
            Some(c) => SORT_COLUMNS
                .iter()
                .position(|&x| x == c)
                .and_then(|p| SORT_COLUMNS.get(p + 1).copied()),
        };
        self.message = match self.view.table_sort {
            None => "rows: newest first".into(),
            Some(c) => format!(
                "rows sorted by {}",
                super::widgets::results::headers(self)[c]
            ),
        };
    }

    /// After the cursor moved: a mixed row's directions apart on the message line (the table's
    /// columns hold the whole run); nothing for other rows.
    pub(super) fn say_mix_of_row_under_cursor(&mut self) {
        let body = super::widgets::results::body(self);
        let at = self.view.table_cursor.min(body.len().saturating_sub(1));
        let row = match body.get(at).map(|(_, _, i)| *i) {
            Some(Some(i)) => self.rows.get(i).cloned(),
            Some(None) => self
                .live
                .as_ref()
                .and_then(|l| l.result(&l.experiment, l.seconds())),
            None => None,
        };
        let live = matches!(body.get(at).map(|(_, _, i)| *i), Some(None));
        if let Some(r) = row {
            let detail = super::widgets::mix::row_detail(&r).or_else(|| {
                // The live row's backlog is as of now, not at an end.
                super::widgets::openloop::row_detail(&r).map(|d| {
                    if live {
                        d.replace("behind at the end", "behind now")
                    } else {
                        d
                    }
                })
            });
            if let Some(detail) = detail {
                self.message = format!(
                    "{}: {detail}",
                    crate::tui::widgets::results::setting_label(&r)
                );
            }
        }
    }

    /// `h`: hides the finished row under the cursor from the table (not from saving/export).
    pub(super) fn hide_row_under_cursor(&mut self) {
        let body = super::widgets::results::body(self);
        let at = self.view.table_cursor.min(body.len().saturating_sub(1));
        match body.get(at).and_then(|(_, _, i)| *i) {
            Some(i) if matches!(&self.baseline, Some(Baseline::Pinned { index, .. }) if *index == i) =>
            {
                // The pinned row is always listed (right under the live one): hiding it would
                // say "hidden" and change nothing.
                self.message =
                    "the baseline row stays in view: B on it unpins it, then h hides it".into();
            }
            Some(i) => {
                self.view.hidden_rows.insert(i);
                self.message = format!(
                    "row {} hidden ({} hidden, H shows them)",
                    crate::text::shown(body[at].0[0].trim()),
                    self.view.hidden_rows.len()
                );
            }
            None => self.message = "the live row cannot be hidden".into(),
        }
    }

    /// `B`: pins the finished row under the cursor as the baseline (again on the pinned row:
    /// none). On the live row it pins the newest finished row, then the next older one.
    pub(super) fn pin_row_under_cursor(&mut self) {
        match self.row_under_cursor() {
            Some(i) if matches!(&self.baseline, Some(Baseline::Pinned { index, .. }) if *index == i) =>
            {
                self.baseline = None;
                self.message = "no baseline".into();
            }
            Some(index) => {
                let b = Baseline::Pinned {
                    index,
                    record: BaselineRecord::of(&self.rows[index]),
                };
                self.message = b.describe();
                self.baseline = Some(b);
                // The pinned row is listed right after the live row: the cursor follows it.
                self.view.table_cursor = usize::from(self.live_row_shown());
            }
            None => self.cycle_baseline(),
        }
    }

    /// `x`: deletes the finished row under the cursor from the table, the summary and later
    /// saves (a row already saved stays in the CSV file, which is never rewritten).
    pub(super) fn delete_row_under_cursor(&mut self) {
        let Some(i) = self.row_under_cursor() else {
            self.message = "the live row cannot be deleted (r discards its figures)".into();
            return;
        };
        let r = self.rows.remove(i);
        if i < self.runs.row_extra.len() {
            self.runs.row_extra.remove(i);
        }
        let saved = i < self.runs.rows_saved;
        if saved {
            self.runs.rows_saved -= 1;
        }
        self.view.hidden_rows = self
            .view
            .hidden_rows
            .iter()
            .filter(|&&h| h != i)
            .map(|&h| if h > i { h - 1 } else { h })
            .collect();
        match &mut self.baseline {
            Some(Baseline::Pinned { index, .. }) if *index == i => self.baseline = None,
            Some(Baseline::Pinned { index, .. }) if *index > i => *index -= 1,
            _ => {}
        }
        self.message = format!(
            "row {} deleted{}",
            super::widgets::results::setting_label(&r),
            if saved {
                " (it stays in the CSV file it was saved to)"
            } else {
                ""
            }
        );
    }

    /// `B` on the live row: pins the newest row as the baseline; pressed again, the next older
    /// one; after the oldest, none.
    pub(super) fn cycle_baseline(&mut self) {
        let next = match &self.baseline {
            _ if self.rows.is_empty() => {
                self.message = "no finished row to pin yet: change a setting first".into();
                return;
            }
            Some(Baseline::Pinned { index, .. }) if *index == 0 => None,
            Some(Baseline::Pinned { index, .. }) => Some(index - 1),
            _ => Some(self.rows.len() - 1),
        };
        match next {
            Some(index) => {
                let b = Baseline::Pinned {
                    index,
                    record: BaselineRecord::of(&self.rows[index]),
                };
                self.message = format!("{} (B: next older row)", b.describe());
                self.baseline = Some(b);
            }
            None => {
                self.baseline = None;
                self.message = "no baseline".into();
            }
        }
    }

    pub(super) fn quit_action(&mut self) -> Action {
        self.runs.quit = true;
        Action::Quit
    }

    pub(super) fn toggle_pause(&mut self) -> Action {
        if self.runs.paused {
            self.message = "resumed".into();
            self.start()
        } else {
            self.runs.paused = true;
            self.message = "paused: space resumes".into();
            self.retire_live();
            Action::Stop
        }
    }

    /// `r`: forget the current segment's figures (no row) and the sparkline; start afresh.
    pub(super) fn reset(&mut self) -> Action {
        if let Some(live) = &mut self.live {
            live.keep = false;
        }
        self.history.clear();
        self.message = "statistics reset".into();
        if self.runs.paused {
            Action::None
        } else {
            self.start()
        }
    }
}

pub(super) fn rate_note(s: &Settings) -> String {
    match s.rate {
        Some(r @ super::settings::Rate::Iops(n)) => format!(
            "open loop at {n} ops/s ({} at {}): latency panel shows service (the call) beside \
             response (from the intended start)",
            super::settings::bytes_per_s_text(r.bytes_per_s_at(s.setup.block_size_bytes)),
            crate::size::format_size(s.setup.block_size_bytes)
        ),
        Some(r) => format!(
            "open loop at {}: kept as a throughput, its ops/s follow the block size; latency \
             panel shows service (the call) beside response (from the intended start)",
            r.both(s.setup.block_size_bytes)
        ),
        None => "closed loop: as fast as it goes".into(),
    }
}

/// What `w` or `W` says when a mix starts.
pub(super) fn mix_note(s: &Settings, scratch: &std::path::Path) -> String {
    format!(
        "{}: each operation reads or writes, drawn at {}% reads, on {} (laid out first, as fio \
         does); w: back to reads",
        s.op_text(),
        s.setup.mix_read_pct.unwrap_or_default(),
        crate::text::shown_path(scratch)
    )
}

/// The block size, and an open loop's rate at it (a throughput's ops/s follow the block).
pub(super) fn block_note(s: &Settings) -> String {
    let rate = s
        .rate
        .map(|r| format!("; open loop {}", r.both(s.setup.block_size_bytes)))
        .unwrap_or_default();
    format!(
        "block size {}{rate}",
        crate::size::format_size(s.setup.block_size_bytes)
    )
}

pub(super) fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}
