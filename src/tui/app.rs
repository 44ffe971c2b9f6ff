//! The explorer's state and its key handling. No drawing and no threads here: keys become
//! [`Action`]s for the event loop to carry out, and [`Update`]s from the session fold into the
//! state, so both are unit-testable without a terminal or a disk.
//!
//! Each run the session starts is a *segment* with an id. The live segment is drawn; a segment
//! that was asked to stop waits in `ending` until its last snapshots and its `Stopped` arrive,
//! then becomes a row of the results table (unless it was reset or never got going).

use super::baseline::{Baseline, BaselineRecord};
use super::kdiskmark::{KdmCaps, KdmRun};
use super::keys::Cmd;
pub use super::segment::{Segment, XorSeen};
use super::session::Update;
use super::settings::{Settings, WriteSync};
use crate::cache::Residency;
use crate::config::spec::RunSpec;
use crate::config::{Op, Pattern};
use crate::measure::{Aggregate, RunResult, SnapshotKind};
use crate::xor::format_xor;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::collections::VecDeque;
use std::path::PathBuf;

/// The `experiment` column of rows made by the explorer.
pub const EXPERIMENT: &str = "tui";
/// The `experiment` column of a row saved while its run was still going.
pub const EXPERIMENT_LIVE: &str = "tui-live";

/// What a typed entry sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `b`: an exact block size.
    BlockSize,
    /// `R`: an open-loop rate.
    Rate,
    /// `W`: the mix's share of reads, percent.
    MixShare,
}

impl Entry {
    /// What the prompt calls it.
    pub fn name(self) -> &'static str {
        match self {
            Entry::BlockSize => "block size",
            Entry::Rate => "rate",
            Entry::MixShare => "mix % reads",
        }
    }
}

/// What the event loop must do after a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Nothing beyond redrawing.
    None,
    /// Start run `id` (stopping the current one first).
    Start { id: u64, spec: RunSpec },
    /// Stop the engine (pause).
    Stop,
    /// Append the results table to the CSV file.
    Save,
    /// Write the session as SVG and JSON.
    Export,
    /// Start the KDiskMark set: the event loop checks what the machine allows and calls
    /// [`App::begin_kdiskmark`].
    KDiskMark,
    /// Leave the explorer.
    Quit,
}

/// Everything the screen shows.
/// A finished segment shorter than this is transient: not kept as a row unless asked (`t`).
pub const MIN_ROW_SECONDS: f64 = 1.0;
/// A finished segment with fewer operations than this is transient too.
pub const MIN_ROW_OPS: u64 = 100;

/// Whether a finished row is too short to compare (under [`MIN_ROW_SECONDS`] or
/// [`MIN_ROW_OPS`]).
pub fn is_transient(r: &RunResult) -> bool {
    r.figures.seconds < MIN_ROW_SECONDS || r.figures.ops < MIN_ROW_OPS
}

/// Event-log entries kept.
pub const LOG_ENTRIES: usize = 500;

/// Device samples kept for the device panel: one second at the 100 ms cadence, plus the first.
pub const DEVICE_WINDOW_SAMPLES: usize = 11;

#[derive(Debug, Clone)]
pub struct App {
    pub file: PathBuf,
    pub file_size_bytes: u64,
    pub scratch: PathBuf,
    pub csv_path: PathBuf,
    pub settings: Settings,
    pub residency: Option<Residency>,
    pub paused: bool,
    pub show_help: bool,
    pub quit: bool,
    pub live: Option<Segment>,
    pub ending: Vec<Segment>,
    pub rows: Vec<RunResult>,
    /// What the table shows beside each row of `rows` (same index): warm-up, spread, verdict.
    pub row_extra: Vec<super::segment::RowExtra>,
    /// Rows of `rows` already appended to the CSV file.
    pub rows_saved: usize,
    /// Lines appended to the CSV file in this session (a live row saved with `s` included), so
    /// `s` and the summary at exit count the same thing.
    pub csv_rows_written: usize,
    /// Throughput and latency over time across segments, at three resolutions, with where a
    /// setting changed (see [`super::history`]).
    pub history: super::history::History,
    /// What the chart shows: the last minute, 10 minutes or hour (`v`).
    pub span: super::history::Span,
    /// The device's util %, await (ms) and time-averaged queue between consecutive device
    /// samples, at three resolutions (the sparklines under the panels).
    pub device_history: super::history::Tiers<3>,
    pub xor: Option<XorSeen>,
    /// One-line status: the last change, error or note.
    pub message: String,
    /// Show throughput in MB/s (10^6 bytes, as KDiskMark) instead of MiB/s.
    pub units_mb: bool,
    /// What rows are compared with (Δ%).
    pub baseline: Option<Baseline>,
    /// Text typed after `b` (exact block size entry), `R` (rate) or `W` (the mix's share of
    /// reads), while entering.
    pub entry: Option<String>,
    /// What the entry is.
    pub entry_kind: Entry,
    /// The share of reads, percent, of the mix `w` steps to (`W` sets it; fio's default 50).
    pub mix_share_pct: u32,
    /// The KDiskMark set in progress, or the last one (for its card).
    pub kdm: Option<KdmRun>,
    /// Segment id of the KDiskMark test running now.
    kdm_id: Option<u64>,
    /// Show the KDiskMark card (any key closes it).
    pub show_kdm: bool,
    /// Seconds per KDiskMark test.
    pub kdm_seconds: f64,
    /// The `limits` profile of the explored file's device and, when it may be out of date, why;
    /// loaded once at start ([`App::load_explain`]), None without one.
    pub profile: Option<crate::explain::Loaded>,
    /// Where the explored file lives (filesystem, device, RAM/network warnings), collected at
    /// start; None until then.
    pub context: Option<crate::explain::context::Context>,
    /// Scratch files being removed in the background, with their progress.
    pub removing: Vec<super::discard::Removal>,
    /// `q` (or a signal) was taken: the explorer leaves once the run stopped and every scratch
    /// file is removed, showing that progress meanwhile.
    pub quitting: bool,
    /// When the explorer began to leave (`quitting`): what the screen counts the wait from.
    pub quit_since: Option<std::time::Instant>,
    /// The results-table row under the cursor (position in
    /// [`results::body`](super::widgets::results::body)); the table scrolls to keep it in view.
    pub table_cursor: usize,
    /// The column (of [`results::SORT_COLUMNS`](super::widgets::results::SORT_COLUMNS)) the
    /// finished rows are sorted by; None: newest first.
    pub table_sort: Option<usize>,
    /// Finished rows hidden from the table with `h` (indices into `rows`; `H` shows them again).
    /// Hidden rows are still saved and exported.
    pub hidden_rows: std::collections::BTreeSet<usize>,
    /// The device under the running file, as the session last resolved it: None before the
    /// first sample, `Some(None)` when the file has no block device (tmpfs, overlay, NFS).
    pub device_name: Option<Option<String>>,
    /// The last second of device/CPU samples, each with the bytes the file had moved by then
    /// ([`App::file_bytes_moved`]) and this process's own I/O accounting read just before it
    /// ([`Update::OwnIo`]; None where `/proc/self/io` cannot be read), oldest first.
    pub device_samples: VecDeque<(
        crate::measure::device::Sample,
        u64,
        Option<crate::facts::taskio::TaskIo>,
    )>,
    /// This process's I/O accounting as the session last read it, for the next device sample.
    pub own_io: Option<crate::facts::taskio::TaskIo>,
    /// Bytes the explorer's runs have moved through the file, all runs together: set against the
    /// bytes the device moved in the same span.
    pub file_bytes_moved: u64,
    /// The terminal's size as last drawn (columns, rows), set by the event loop; None until
    /// the first frame (and in tests that never draw).
    pub screen_size: Option<(u16, u16)>,
    /// Draw without colours (the `NO_COLOR` environment variable, <https://no-color.org>):
    /// bold and reverse stay, so the live row and the cursor still stand out.
    pub no_color: bool,
    /// Draw the latency histogram's counts on a log scale (`l` toggles).
    pub latency_log: bool,
    /// Keep transient rows ([`is_transient`]) too (`t` toggles).
    pub keep_transient: bool,
    /// Every message the line at the bottom showed (key effects, notes, warnings, errors), with
    /// the seconds since the explorer started, oldest first; the last [`LOG_ENTRIES`].
    pub log: VecDeque<(f64, String)>,
    /// When the explorer started: the log's clock.
    pub clock: std::time::Instant,
    /// The kernel panel (`L`): on or off, and what the live run's kernel view counted.
    pub kernel: super::kernel_view::KernelPanel,
    /// An action the event loop must carry out without a key (the set's next test).
    pending: Option<Action>,
    next_id: u64,
}

impl App {
    pub fn new(file: PathBuf, file_size_bytes: u64, scratch: PathBuf, csv_path: PathBuf) -> Self {
        App {
            file,
            file_size_bytes,
            scratch,
            csv_path,
            settings: Settings::default(),
            residency: None,
            paused: false,
            show_help: false,
            quit: false,
            live: None,
            ending: Vec::new(),
            rows: Vec::new(),
            row_extra: Vec::new(),
            rows_saved: 0,
            csv_rows_written: 0,
            history: Default::default(),
            span: Default::default(),
            device_history: Default::default(),
            xor: None,
            message: String::from("press ? for help"),
            units_mb: false,
            baseline: None,
            entry: None,
            entry_kind: Entry::BlockSize,
            mix_share_pct: super::settings::DEFAULT_MIX_READ_PCT,
            kdm: None,
            kdm_id: None,
            show_kdm: false,
            kdm_seconds: super::kdiskmark::DEFAULT_SECONDS,
            table_cursor: 0,
            table_sort: None,
            hidden_rows: Default::default(),
            device_name: None,
            device_samples: VecDeque::new(),
            own_io: None,
            file_bytes_moved: 0,
            log: VecDeque::new(),
            keep_transient: false,
            latency_log: false,
            screen_size: None,
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            clock: std::time::Instant::now(),
            profile: None,
            context: None,
            removing: Vec::new(),
            quitting: false,
            quit_since: None,
            kernel: Default::default(),
            pending: None,
            next_id: 1,
        }
    }

    /// Loads what the "why" line and the context line need: the limits profile for the explored
    /// file's device (from the user's cache; never measured here) and the file's context.
    pub fn load_explain(&mut self) {
        self.profile = crate::explain::profile_for(&self.file);
        self.context = Some(crate::explain::context::Context::collect(&self.file));
    }

    /// The "why" line: the bound of the live run (or, before one has data, of the current
    /// settings), its value and how close the run comes, with what to look at when it is below
    /// half; or how to get a profile.
    pub fn why(&self) -> Why {
        let Some((profile, _)) = &self.profile else {
            return Why::NoProfile;
        };
        let settings = self.live.as_ref().map_or(self.settings, |l| l.settings);
        let spec = settings.spec(&self.file, &self.scratch, self.file_size_bytes);
        let pt = crate::explain::model::Point::of_spec(&spec);
        let measuring = self.live.as_ref().filter(|l| l.agg.ops > 0);
        match measuring {
            Some(seg) => match crate::explain::model::explain(profile, &pt, seg.shown_mean_mib_s())
            {
                Some(e) => Why::Measured {
                    short: e.short(),
                    low: e.hint.is_some() || !e.explained,
                    line: crate::explain::model::one_liner(
                        &e.prediction,
                        &pt,
                        e.measured_mib_s,
                        e.pct_of_bound,
                        None,
                    ),
                    hint: e.hint,
                },
                None => Why::NotModelled(not_modelled(&spec)),
            },
            None => match crate::explain::model::predict(profile, &pt) {
                Some(pr) => Why::Predicted(format!(
                    "{}: {} predicted for these settings",
                    pr.bound,
                    crate::explain::model::format_mib_s(pr.bound_mib_s, pr.bound_mib_s, true)
                )),
                None => Why::NotModelled(not_modelled(&spec)),
            },
        }
    }

    /// A write run's scratch file was claimed (a fresh name each run): the state and the message
    /// that named the scratch file before the claim name this one.
    pub fn scratch_claimed(&mut self, path: PathBuf) {
        let before = self.scratch.display().to_string();
        let after = path.display().to_string();
        if !before.is_empty() && before != after {
            self.message = self.message.replace(&before, &after);
        }
        self.scratch = path;
    }

    /// Moves the live segment to `ending`, where it waits for its last snapshots (no longer
    /// drawn, so it keeps no bins for the chart).
    fn retire_live(&mut self) {
        if let Some(mut old) = self.live.take() {
            self.take_complete_bins_of(&mut old);
            old.feeds_chart = false;
            old.take_ready();
            self.ending.push(old);
        }
    }

    /// Makes the live segment for the current settings and the action that starts it; the
    /// previous live segment waits in `ending` for its last snapshots.
    pub fn start(&mut self) -> Action {
        self.retire_live();
        let id = self.next_id;
        self.next_id += 1;
        // The row's `write_sync` column says how its writes were made durable.
        self.live = Some(Segment::new(id, self.settings, EXPERIMENT.to_string()));
        self.paused = false;
        Action::Start {
            id,
            spec: self
                .settings
                .spec(&self.file, &self.scratch, self.file_size_bytes),
        }
    }

    /// Handles one key press.
    /// Moves the results-table cursor: `J`/`K` one row, PgDn/PgUp ten, Home/End to the ends.
    fn move_cursor(&mut self, cmd: Cmd) {
        let last = super::widgets::results::row_count(self).saturating_sub(1);
        let c = self.table_cursor.min(last);
        self.table_cursor = match cmd {
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
    fn cycle_sort(&mut self) {
        use super::widgets::results::SORT_COLUMNS;
        self.table_sort = match self.table_sort {
            None => Some(SORT_COLUMNS[0]),
            Some(c) => SORT_COLUMNS
                .iter()
                .position(|&x| x == c)
                .and_then(|p| SORT_COLUMNS.get(p + 1).copied()),
        };
        self.message = match self.table_sort {
            None => "rows: newest first".into(),
            Some(c) => format!(
                "rows sorted by {}",
                super::widgets::results::headers(self)[c]
            ),
        };
    }

    /// After the cursor moved: a mixed row's directions apart on the message line (the table's
    /// columns hold the whole run); nothing for other rows.
    fn say_mix_of_row_under_cursor(&mut self) {
        let body = super::widgets::results::body(self);
        let at = self.table_cursor.min(body.len().saturating_sub(1));
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
    fn hide_row_under_cursor(&mut self) {
        let body = super::widgets::results::body(self);
        let at = self.table_cursor.min(body.len().saturating_sub(1));
        match body.get(at).and_then(|(_, _, i)| *i) {
            Some(i) if matches!(&self.baseline, Some(Baseline::Pinned { index, .. }) if *index == i) =>
            {
                // The pinned row is always listed (right under the live one): hiding it would
                // say "hidden" and change nothing.
                self.message =
                    "the baseline row stays in view: B on it unpins it, then h hides it".into();
            }
            Some(i) => {
                self.hidden_rows.insert(i);
                self.message = format!(
                    "row {} hidden ({} hidden, H shows them)",
                    crate::text::shown(body[at].0[0].trim()),
                    self.hidden_rows.len()
                );
            }
            None => self.message = "the live row cannot be hidden".into(),
        }
    }

    /// Takes one mouse event, given where the results table is on screen (`table`, from
    /// [`ui::areas`](super::ui::areas), which the event loop asks: the state does not lay out
    /// the screen): the wheel moves the table's cursor (the table scrolls with it), a click on
    /// a table row selects it. Elsewhere, and while an overlay is open, the mouse does nothing.
    pub fn handle_mouse(&mut self, m: crossterm::event::MouseEvent, table: ratatui::layout::Rect) {
        use crossterm::event::{MouseButton, MouseEventKind};
        if self.show_help || self.show_kdm || self.entry.is_some() {
            return;
        }
        let last = super::widgets::results::row_count(self).saturating_sub(1);
        let c = self.table_cursor.min(last);
        match m.kind {
            MouseEventKind::ScrollDown => self.table_cursor = (c + 1).min(last),
            MouseEventKind::ScrollUp => self.table_cursor = c.saturating_sub(1),
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
                    self.table_cursor = at;
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

    /// Adds the message line to the event log when it changed since the last entry, so a note
    /// that replaces a key's feedback a moment later does not erase it from the log.
    pub fn sync_log(&mut self) {
        if self.log.back().is_some_and(|(_, m)| *m == self.message) || self.message.is_empty() {
            return;
        }
        if self.log.len() == LOG_ENTRIES {
            self.log.pop_front();
        }
        let at = self.clock.elapsed().as_secs_f64();
        self.log.push_back((at, self.message.clone()));
    }

    fn take_key(&mut self, key: KeyEvent) -> Action {
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return match key.code {
                KeyCode::Char('c') | KeyCode::Char('d') => self.quit_action(),
                _ => Action::None,
            };
        }
        // A screen too small to show the settings shows no key's effect either: only q acts
        // (the screen says so).
        if self.too_small() {
            if super::keys::command_of(key.code) == Some(Cmd::Quit) {
                return self.quit_action();
            }
            self.message = "terminal too small: enlarge it, or q to quit".into();
            return Action::None;
        }
        if let Some(text) = &mut self.entry {
            let kind = self.entry_kind;
            let rate = kind == Entry::Rate;
            let what = kind.name();
            return match key.code {
                KeyCode::Esc => {
                    self.entry = None;
                    self.message = format!("{what} unchanged");
                    Action::None
                }
                KeyCode::Backspace => {
                    text.pop();
                    Action::None
                }
                KeyCode::Char(c)
                    if (c.is_ascii_alphanumeric() || rate && matches!(c, '.' | '/' | ' '))
                        && text.len() < 16 =>
                {
                    text.push(c);
                    Action::None
                }
                KeyCode::Enter => {
                    let text = self.entry.take().unwrap_or_default();
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
                            self.mix_share_pct = pct;
                            mix_note(&self.settings, &self.scratch)
                        }),
                    };
                    self.after_change(changed)
                }
                _ => Action::None,
            };
        }
        // An overlay (help, the KDiskMark card) is closed by any key, and that key does
        // nothing else: `?` then `c` must not evict the file the user was only reading about.
        if self.show_help || self.show_kdm {
            self.show_help = false;
            self.show_kdm = false;
            return Action::None;
        }
        // Every key is declared once, with its help text, in `keys::KEYS`.
        let cmd = super::keys::command_of(key.code);
        if self.kdm_running() {
            return match cmd {
                Some(Cmd::Quit) => self.quit_action(),
                Some(Cmd::KDiskMark) => self.cancel_kdiskmark(),
                _ if key.code == KeyCode::Esc => self.cancel_kdiskmark(),
                Some(Cmd::Help) => {
                    self.show_help = true;
                    Action::None
                }
                _ => {
                    self.message = "KDiskMark set running: k cancels it".into();
                    Action::None
                }
            };
        }
        let Some(cmd) = cmd else {
            return Action::None;
        };
        match cmd {
            Cmd::Rate => {
                self.entry = Some(String::new());
                self.entry_kind = Entry::Rate;
                self.message = "rate: ops/s (2000) or a throughput (50M/s), 0 = closed loop; \
                                Enter applies, Esc cancels"
                    .into();
                return Action::None;
            }
            Cmd::MixShare => {
                self.entry = Some(String::new());
                self.entry_kind = Entry::MixShare;
                self.message = format!(
                    "mix: type the percent of operations that read (1-99, now {}; fio's \
                     rwmixread default is 50), Enter mixes, Esc cancels",
                    self.mix_share_pct
                );
                return Action::None;
            }
            Cmd::BlockType => {
                self.entry_kind = Entry::BlockSize;
                self.entry = Some(String::new());
                self.message =
                    "block size: type e.g. 12K or 3 (1 B to 1G), Enter applies, Esc cancels".into();
                return Action::None;
            }
            Cmd::Pin => {
                self.pin_row_under_cursor();
                return Action::None;
            }
            Cmd::Delete => {
                self.delete_row_under_cursor();
                return Action::None;
            }
            Cmd::Units => {
                self.units_mb = !self.units_mb;
                self.message = format!("throughput in {}", self.unit());
                return Action::None;
            }
            Cmd::Export => return Action::Export,
            Cmd::KDiskMark => return Action::KDiskMark,
            Cmd::CursorDown
            | Cmd::CursorUp
            | Cmd::PageDown
            | Cmd::PageUp
            | Cmd::Home
            | Cmd::End => {
                self.move_cursor(cmd);
                self.say_mix_of_row_under_cursor();
                return Action::None;
            }
            Cmd::Transient => {
                self.keep_transient = !self.keep_transient;
                self.message = if self.keep_transient {
                    format!("rows under {MIN_ROW_SECONDS} s or {MIN_ROW_OPS} ops are kept too")
                } else {
                    format!("rows under {MIN_ROW_SECONDS} s or {MIN_ROW_OPS} ops are not kept")
                };
                return Action::None;
            }
            Cmd::LogCounts => {
                self.latency_log = !self.latency_log;
                self.message = if self.latency_log {
                    "latency counts on a log scale (small buckets visible)".into()
                } else {
                    "latency counts on a linear scale".into()
                };
                return Action::None;
            }
            Cmd::Sort => {
                self.cycle_sort();
                return Action::None;
            }
            Cmd::Span => {
                self.span = self.span.next();
                self.message = format!(
                    "chart: the last {} ({} s per point; v: the last {})",
                    self.span.label(),
                    self.span.point_s(),
                    self.span.next().label()
                );
                return Action::None;
            }
            Cmd::Kernel => return self.toggle_kernel(),
            Cmd::Hide => {
                self.hide_row_under_cursor();
                return Action::None;
            }
            Cmd::ShowHidden => {
                let n = self.hidden_rows.len();
                self.hidden_rows.clear();
                self.message = format!("{n} hidden rows shown again");
                return Action::None;
            }
            Cmd::Quit => return self.quit_action(),
            Cmd::Help => {
                self.show_help = true;
                return Action::None;
            }
            Cmd::Pause => return self.toggle_pause(),
            Cmd::Reset => return self.reset(),
            Cmd::Save => return Action::Save,
            _ => {}
        }
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
                let skipped = s.cycle_op(self.mix_share_pct);
                Ok(match (s.setup.op, skipped) {
                    (Op::Write, _) if s.is_mixed() => mix_note(s, &self.scratch),
                    (Op::Write, _) => {
                        format!("writing to {}", crate::text::shown_path(&self.scratch))
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

    /// Restarts after a successful change (unless paused), or shows why it was refused.
    fn after_change(&mut self, changed: Result<String, String>) -> Action {
        match changed {
            Ok(note) => {
                self.message = note;
                if self.paused {
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

    /// The throughput unit shown: `MiB/s` or `MB/s`.
    pub fn unit(&self) -> &'static str {
        if self.units_mb {
            "MB/s"
        } else {
            "MiB/s"
        }
    }

    /// A MiB/s figure in the unit shown.
    pub fn in_unit(&self, mib_s: f64) -> f64 {
        if self.units_mb {
            mib_s * 1.048_576
        } else {
            mib_s
        }
    }

    /// The finished row under the table's cursor (its index in `rows`), None on the live row.
    pub fn row_under_cursor(&self) -> Option<usize> {
        let body = super::widgets::results::body(self);
        let at = self.table_cursor.min(body.len().saturating_sub(1));
        body.get(at).and_then(|(_, _, i)| *i)
    }

    /// `B`: pins the finished row under the cursor as the baseline (again on the pinned row:
    /// none). On the live row it pins the newest finished row, then the next older one.
    fn pin_row_under_cursor(&mut self) {
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
                self.table_cursor = usize::from(self.live_row_shown());
            }
            None => self.cycle_baseline(),
        }
    }

    /// Whether the table's first row is the live one.
    fn live_row_shown(&self) -> bool {
        self.live
            .as_ref()
            .is_some_and(|l| l.agg.ops > 0 && l.meta.is_some())
    }

    /// `x`: deletes the finished row under the cursor from the table, the summary and later
    /// saves (a row already saved stays in the CSV file, which is never rewritten).
    fn delete_row_under_cursor(&mut self) {
        let Some(i) = self.row_under_cursor() else {
            self.message = "the live row cannot be deleted (r discards its figures)".into();
            return;
        };
        let r = self.rows.remove(i);
        if i < self.row_extra.len() {
            self.row_extra.remove(i);
        }
        let saved = i < self.rows_saved;
        if saved {
            self.rows_saved -= 1;
        }
        self.hidden_rows = self
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
    fn cycle_baseline(&mut self) {
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

    /// Compares every row with `baseline` (e.g. records of an earlier run's results).
    pub fn set_baseline(&mut self, baseline: Baseline) {
        self.message = baseline.describe();
        self.baseline = Some(baseline);
    }

    /// Δ% of `r` against the baseline, if it has a reference.
    pub fn delta_pct(&self, r: &RunResult) -> Option<f64> {
        self.baseline.as_ref()?.delta_pct(r)
    }

    /// Whether a KDiskMark set is running.
    pub fn kdm_running(&self) -> bool {
        self.kdm.as_ref().is_some_and(|k| !k.done())
    }

    /// Starts the KDiskMark set with what the machine allows; returns the first test's start.
    pub fn begin_kdiskmark(&mut self, caps: KdmCaps) -> Action {
        let mut run = KdmRun::new(caps, self.kdm_seconds, self.settings);
        run.results.clear();
        self.kdm = Some(run);
        self.show_kdm = false;
        self.start_kdm_step()
    }

    fn start_kdm_step(&mut self) -> Action {
        let Some(k) = &self.kdm else {
            return Action::None;
        };
        let step = k.step;
        match k.settings(step) {
            Some(settings) => {
                let name = k.step_name(step);
                let experiment = k.experiment(step);
                let total = KdmRun::steps().len();
                self.retire_live();
                self.settings = settings;
                let id = self.next_id;
                self.next_id += 1;
                self.live = Some(Segment::new(id, settings, experiment));
                self.paused = false;
                self.kdm_id = Some(id);
                self.message = format!(
                    "KDiskMark {}/{total}: {name}, {:.0} s (k cancels)",
                    step + 1,
                    self.kdm_seconds
                );
                Action::Start {
                    id,
                    spec: settings.spec(&self.file, &self.scratch, self.file_size_bytes),
                }
            }
            None => {
                // Done: back to what was running before, card on screen.
                self.kdm_id = None;
                self.settings = k.resume;
                self.show_kdm = true;
                self.message = "KDiskMark set done: rows added (s saves, e exports)".into();
                self.start()
            }
        }
    }

    fn cancel_kdiskmark(&mut self) -> Action {
        let Some(k) = &mut self.kdm else {
            return Action::None;
        };
        self.settings = k.resume;
        self.kdm = None;
        self.kdm_id = None;
        // A test cut short is not a KDiskMark figure: no row for it.
        if let Some(live) = &mut self.live {
            live.keep = false;
        }
        self.message = "KDiskMark set cancelled".into();
        self.start()
    }

    /// A KDiskMark test ended (with a row, or None if it failed): on to the next one.
    fn kdm_step_ended(&mut self, id: u64, row: Option<RunResult>) {
        if self.kdm_id != Some(id) {
            return;
        }
        if let Some(k) = &mut self.kdm {
            k.results.push(row);
            k.step += 1;
        }
        self.pending = Some(self.start_kdm_step());
    }

    /// The action to carry out without a key press, if any (taken once).
    pub fn take_pending(&mut self) -> Option<Action> {
        self.pending.take()
    }

    fn quit_action(&mut self) -> Action {
        self.quit = true;
        Action::Quit
    }

    fn toggle_pause(&mut self) -> Action {
        if self.paused {
            self.message = "resumed".into();
            self.start()
        } else {
            self.paused = true;
            self.message = "paused: space resumes".into();
            self.retire_live();
            Action::Stop
        }
    }

    /// `r`: forget the current segment's figures (no row) and the sparkline; start afresh.
    fn reset(&mut self) -> Action {
        if let Some(live) = &mut self.live {
            live.keep = false;
        }
        self.history.clear();
        self.message = "statistics reset".into();
        if self.paused {
            Action::None
        } else {
            self.start()
        }
    }

    /// Folds one update from the session or the residency watcher into the state.
    pub fn apply(&mut self, update: Update) {
        self.apply_update(update);
        self.sync_log();
    }

    fn apply_update(&mut self, update: Update) {
        match update {
            Update::Residency(r) => self.residency = Some(r),
            Update::Kernel { id, read } => {
                if self.kernel.on && self.live.as_ref().is_some_and(|l| l.id == id) {
                    self.kernel.add(id, read, std::time::Instant::now());
                }
            }
            Update::Device { device, sample } => {
                if self.device_name.as_ref() != Some(&device) {
                    self.device_samples.clear();
                    self.device_history.clear();
                }
                self.device_name = Some(device);
                if let Some(d) = self
                    .device_samples
                    .back()
                    .and_then(|(prev, _, _)| crate::measure::device::disk_delta(prev, &sample))
                {
                    self.device_history
                        .push([d.dev_util_pct, d.dev_await_ms, d.dev_aqu_sz]);
                }
                if self.device_samples.len() == DEVICE_WINDOW_SAMPLES {
                    self.device_samples.pop_front();
                }
                self.device_samples
                    .push_back((sample, self.file_bytes_moved, self.own_io.take()));
            }
            Update::OwnIo(io) => self.own_io = Some(io),
            Update::Facts { id, facts } => {
                let is_live = self.live.as_ref().is_some_and(|l| l.id == id);
                if let Some(seg) = self.segment_mut(id) {
                    seg.facts = Some(facts);
                }
                if is_live {
                    self.judge_live();
                }
            }
            Update::Removing(r) => match self.removing.iter_mut().find(|x| x.path == r.path) {
                // The removal thread's first report of a file queued earlier: the wait is
                // counted from when it was queued.
                Some(known) => {
                    let started = known.started.min(r.started);
                    *known = super::discard::Removal { started, ..r };
                }
                None => self.removing.push(r),
            },
            // The progress showed while it lasted; the message line keeps what the user did.
            // A file removed stays counted (nothing left) while others are still being
            // removed, so the total the screen says does not shrink under the user's eyes.
            Update::Removed { path, .. } => {
                if let Some(r) = self.removing.iter_mut().find(|r| r.path == path) {
                    r.left_bytes = 0;
                    r.done = true;
                }
                if self.removing.iter().all(|r| r.done) {
                    self.removing.clear();
                }
            }
            Update::Started {
                id,
                meta,
                workers,
                notes,
            } => {
                if let Some(seg) = self.segment_mut(id) {
                    seg.meta = Some(*meta);
                    seg.agg = Aggregate::without_series(workers);
                    seg.worker_at_ns = vec![0; workers];
                }
                if let Some(n) = notes.into_iter().next() {
                    self.message = n;
                }
            }
            Update::Snapshot { id, snapshot } => {
                if self.live.as_ref().is_some_and(|l| l.id == id)
                    || self.ending.iter().any(|l| l.id == id)
                {
                    self.file_bytes_moved += snapshot.bytes;
                }
                let is_live = self.live.as_ref().is_some_and(|l| l.id == id);
                let Some(seg) = self.segment_mut(id) else {
                    return;
                };
                seg.add(&snapshot);
                if let SnapshotKind::Failed(msg) = &snapshot.kind {
                    self.message = format!("error: {msg}");
                }
                if is_live {
                    self.take_complete_bins();
                }
            }
            Update::Stopped { id, elapsed, error } => {
                let seg = self.remove_segment(id);
                if let Some(e) = error {
                    self.message = format!("error: {e}");
                }
                let row = seg.and_then(|seg| self.segment_ended(seg, elapsed.as_secs_f64()));
                self.kdm_step_ended(id, row);
            }
            Update::Failed { id, message } => {
                if self.remove_segment(id).is_some() {
                    self.message = format!("error: {message}");
                }
                self.kdm_step_ended(id, None);
            }
        }
    }

    fn segment_mut(&mut self, id: u64) -> Option<&mut Segment> {
        self.live
            .iter_mut()
            .chain(self.ending.iter_mut())
            .find(|s| s.id == id)
    }

    fn remove_segment(&mut self, id: u64) -> Option<Segment> {
        if self.live.as_ref().is_some_and(|l| l.id == id) {
            return self.live.take();
        }
        let i = self.ending.iter().position(|s| s.id == id)?;
        Some(self.ending.remove(i))
    }

    /// Moves the live segment's newly completed 100 ms bins into the chart's history, marking
    /// where its setting begins with its first point.
    fn take_complete_bins(&mut self) {
        if let Some(mut seg) = self.live.take() {
            self.take_complete_bins_of(&mut seg);
            self.live = Some(seg);
        }
    }

    fn take_complete_bins_of(&mut self, seg: &mut Segment) {
        let ready = seg.take_ready();
        if ready.is_empty() {
            return;
        }
        if !seg.marked {
            seg.marked = true;
            self.history.mark(mark_label(&seg.settings));
        }
        for b in ready {
            self.history.push(b.point.mib_s, b.latency.as_ref());
        }
    }

    /// A finished segment becomes a row (if it measured anything) and may give an XOR.
    /// Returns the row.
    fn segment_ended(&mut self, seg: Segment, seconds: f64) -> Option<RunResult> {
        if seg.meta.is_none() || seg.agg.ops == 0 {
            return None;
        }
        if let Some(e) = seg.agg.errors.first() {
            self.message = format!("error: {e}");
        }
        let s = seg.settings;
        if s.setup.op == Op::Read && s.setup.pattern == Pattern::Sequential {
            if let Some(x) = seg.agg.xor() {
                self.note_xor(format_xor(x), s.short());
            }
        }
        if seg.keep {
            if let Some(mut row) = seg.result(&seg.experiment, seconds) {
                // The whole segment's facts, from its first look to the one after its end.
                row.facts = row_facts(&seg, &row);
                // Judged on the segment's whole time: a warm-up left out of the figures does
                // not make a 1.5 s segment transient.
                let whole = RunResult {
                    figures: crate::measure::result::Figures {
                        seconds,
                        ops: seg.agg.ops,
                        ..Default::default()
                    },
                    ..Default::default()
                };
                if is_transient(&whole) && !self.keep_transient {
                    // A key pressed before the last one settled leaves a 0.01-0.09 s segment:
                    // too short to compare, so it is logged, not kept (or pinned by `B`).
                    self.message = format!(
                        "{} ran {:.2} s, {} ops: transient, not kept (under {MIN_ROW_SECONDS} s or {MIN_ROW_OPS} ops; t keeps such rows)",
                        crate::tui::widgets::results::setting_label(&row),
                        row.figures.seconds,
                        row.figures.ops
                    );
                    return None;
                }
                let mut detail_said = None;
                if let Some(detail) = super::widgets::openloop::row_detail(&row) {
                    // A run the device could not keep up with says so when it ends.
                    self.message = format!(
                        "{}: {detail}",
                        crate::tui::widgets::results::setting_label(&row)
                    );
                    self.sync_log();
                    detail_said = Some(self.message.clone());
                }
                if let Some(detail) = super::widgets::mix::row_detail(&row) {
                    // Its directions apart (the table has room for the whole only); a suspect
                    // verdict said next replaces it on the line, the log keeps both.
                    self.message = format!(
                        "{}: {detail}",
                        crate::tui::widgets::results::setting_label(&row)
                    );
                    self.sync_log();
                }
                self.fill_bound(&mut row);
                self.judge(
                    &mut row,
                    s.setup.op == Op::Write && s.setup.write_sync != WriteSync::None,
                );
                if let Some(said) = detail_said.filter(|_| row.judgement.verdict == "suspect") {
                    // The verdict's sentences go to the log; the line keeps what the row did
                    // (`fell behind`) with the verdict's codes after it.
                    self.sync_log();
                    self.message = format!(
                        "{said} │ suspect ({})",
                        row.judgement.reasons.replace(';', ", ")
                    );
                }
                self.rows.push(row.clone());
                let mut extra = seg.extra(true);
                extra.series = Some(seg.series.clone());
                self.row_extra.push(extra);
                // Older rows give their series up: the session's memory grows with its rows,
                // never with their length.
                let old = self
                    .row_extra
                    .len()
                    .saturating_sub(super::segment::ROW_SERIES_KEPT);
                for e in &mut self.row_extra[..old] {
                    e.series = None;
                }
                return Some(row);
            }
        }
        None
    }

    /// Gives a finished row its verdict (issue 23) with the function the `run` command uses,
    /// `explain::verdict::judge`, on the row's facts (its `facts` columns, which `s` saves)
    /// and what the explorer knows (the file's context and profile; no timeline). A suspect
    /// row says why on the message line and in the log.
    /// (Whether writes were synced, `_synced`, the row's `write_sync` column already says.)
    fn judge(&mut self, row: &mut RunResult, _synced: bool) {
        use crate::explain::verdict::Kind;
        let Some(v) = self.verdict_of(row) else {
            return;
        };
        v.fill(row);
        if v.verdict == Kind::Suspect {
            self.message = format!(
                "{} is suspect ({}): {}",
                crate::tui::widgets::results::setting_label(row),
                v.codes().replace(';', ", "),
                v.sentences()
            );
        }
    }

    /// The verdict of `row` by `explain::verdict::judge`, the function `run` uses, on the
    /// row's facts (`row.facts`, the run's own I/O, its file's extents, the page cache and
    /// pressure, as `run` gathers them; none yet, the rules that need them stay silent) and
    /// what the explorer knows: the file's context and profile (no timeline). `None` before
    /// the context is collected. Pure: the live row is judged with it too.
    pub fn verdict_of(&self, row: &RunResult) -> Option<crate::explain::verdict::Verdict> {
        let ctx = self.context.as_ref()?;
        let facts = row.facts.as_ref().and_then(|s| s.full.as_deref());
        Some(crate::explain::verdict::judge(
            row,
            facts,
            ctx,
            self.profile.as_ref().map(|(p, _)| p),
        ))
    }

    /// The live row as it stands, with its facts so far (the session's latest look), judged
    /// and with its bound columns, as `s` saves it.
    pub fn live_row(&self, experiment: &str) -> Option<RunResult> {
        let live = self.live.as_ref().filter(|l| l.agg.ops > 0)?;
        let mut r = live.result(experiment, live.seconds())?;
        r.facts = row_facts(live, &r);
        self.fill_bound(&mut r);
        if let Some(v) = self.verdict_of(&r) {
            v.fill(&mut r);
        }
        Some(r)
    }

    /// Judges the live row on its latest facts (once a second, as they come): its `!` and
    /// reasons on screen until it ends and is judged on the whole run's. A verdict that turns
    /// suspect says why on the message line once.
    fn judge_live(&mut self) {
        let Some(r) = self.live_row(EXPERIMENT) else {
            return;
        };
        let Some(v) = self.verdict_of(&r) else {
            return;
        };
        let was = self.live.as_ref().and_then(|l| l.verdict.as_ref());
        let newly = was.is_none_or(|w| w.codes() != v.codes());
        if newly && v.verdict == crate::explain::verdict::Kind::Suspect {
            self.message = format!(
                "{} (live) is suspect ({}): {}",
                crate::tui::widgets::results::setting_label(&r),
                v.codes().replace(';', ", "),
                v.sentences()
            );
        }
        if let Some(l) = self.live.as_mut() {
            l.verdict = Some(v);
        }
    }

    /// The row's `bound`, `bound_mib_s`, `pct_of_bound` and `bound_hint` from the profile the
    /// screen's why line uses (empty without one), so a saved row keeps what the screen showed.
    fn fill_bound(&self, r: &mut RunResult) {
        let e = self
            .profile
            .as_ref()
            .and_then(|(p, _)| crate::explain::model::explain_result(p, r));
        crate::explain::fill_bound_columns(r, e.as_ref());
    }

    fn note_xor(&mut self, xor: String, by: String) {
        match &mut self.xor {
            Some(seen) if seen.xor == xor => seen.agreeing += 1,
            Some(seen) => seen.mismatch = Some(format!("{xor} by {by}")),
            None => {
                self.xor = Some(XorSeen {
                    xor,
                    by,
                    agreeing: 1,
                    mismatch: None,
                })
            }
        }
    }

    /// The rows `s` appends: completed rows not saved yet, then the live segment as of now.
    pub fn rows_to_save(&self) -> Vec<RunResult> {
        let mut out: Vec<RunResult> = self.rows[self.rows_saved.min(self.rows.len())..].to_vec();
        if let Some(live) = &self.live {
            let experiment = live.experiment.replacen(EXPERIMENT, EXPERIMENT_LIVE, 1);
            out.extend(self.live_row(&experiment));
        }
        out
    }

    /// What the summary at exit says about saving, given what saving the rows made after the
    /// last `s` did at exit (`saved_at_exit`: how many were written then, or the error). It
    /// counts the lines in the CSV file, as `s` does ("saved 24 rows").
    pub fn exit_note(&self, saved_at_exit: Result<usize, String>) -> Option<String> {
        let written = self.csv_rows_written;
        let path = crate::text::shown_path(&self.csv_path);
        match saved_at_exit {
            Err(e) => {
                let unsaved = self.rows.len() - self.rows_saved.min(self.rows.len());
                Some(format!(
                    "{unsaved} row{} made after the last s not saved ({e}); {written} row{} \
                     saved to {path} before",
                    plural(unsaved),
                    plural(written)
                ))
            }
            Ok(_) if written == 0 => None,
            Ok(0) => Some(format!("{written} row{} saved to {path}", plural(written))),
            // Short enough for one line of an 80-column terminal.
            Ok(now) => Some(format!(
                "{written} row{} saved to {path} ({now} at exit)",
                plural(written)
            )),
        }
    }

    /// What the screen says about scratch files being removed: how much is left and for how
    /// long it has taken (counted from the start, so it moves while the kernel works), e.g.
    /// `removing scratch: 12.0 MiB left, 1.2 s`; with `of_total`, `12.0 MiB of 16.0 MiB left`.
    pub fn removal_text(&self, now: std::time::Instant, of_total: bool) -> Option<String> {
        if self.removing.is_empty() {
            return None;
        }
        let left: u64 = self.removing.iter().map(|r| r.left_bytes).sum();
        let total: u64 = self.removing.iter().map(|r| r.total_bytes).sum();
        let secs = self
            .removing
            .iter()
            .map(|r| now.saturating_duration_since(r.started).as_secs_f64())
            .fold(0.0, f64::max);
        let of = if of_total {
            format!(" of {}", crate::size::format_bytes_approx(total))
        } else {
            String::new()
        };
        Some(format!(
            "{} left, {secs:.1} s",
            crate::size::format_bytes_approx(left) + &of
        ))
    }

    /// Bytes of the state that could grow while one setting runs (the chart's history, the
    /// device's, the segments' open bins and series, the device samples, the log), for the
    /// tests that hold the explorer's memory flat over hours. Rows are left out: they grow with
    /// what the user does, not with time.
    pub fn heap_bytes(&self) -> usize {
        let log: usize = self
            .log
            .iter()
            .map(|(_, m)| std::mem::size_of::<(f64, String)>() + m.capacity())
            .sum();
        self.history.heap_bytes()
            + self.device_history.heap_bytes()
            + self
                .live
                .iter()
                .chain(&self.ending)
                .map(Segment::heap_bytes)
                .sum::<usize>()
            + self.device_samples.capacity()
                * std::mem::size_of::<(crate::measure::device::Sample, u64)>()
            + log
    }

    /// Whether the terminal, as last drawn, is below the least size the screen is laid out
    /// for (then it says so, and keys other than q do nothing).
    pub fn too_small(&self) -> bool {
        self.screen_size
            .is_some_and(|(w, h)| w < super::widgets::MIN_WIDTH || h < super::widgets::MIN_HEIGHT)
    }

    /// Whether the engine is (about to be) running.
    pub fn running(&self) -> bool {
        self.live.is_some() && !self.paused
    }

    /// Whether cold eviction should be active (cold mode and reading).
    pub fn wants_cold(&self) -> bool {
        self.settings.cold() && self.settings.setup.op == Op::Read
    }

    /// Whether cold mode needs periodic eviction: random reads loop instead of running pass by
    /// pass (see [`super::cache_watch`]).
    pub fn wants_periodic_eviction(&self) -> bool {
        self.wants_cold() && self.settings.setup.pattern == Pattern::Random
    }
}

/// What the "why" line says.
#[derive(Debug, Clone, PartialEq)]
pub enum Why {
    /// No `limits` profile for this device.
    NoProfile,
    /// The model's bound for the settings, before the run has data.
    Predicted(String),
    /// The bound next to the live run's mean, and what to look at below half of it.
    Measured {
        /// `memory-bound 4.0 GiB/s · 74%`, for the throughput panel.
        short: String,
        /// Below half the bound.
        low: bool,
        /// The one-liner every front end prints.
        line: String,
        hint: Option<String>,
    },
    /// The model does not cover the settings (writes; direct reads without device figures).
    NotModelled(String),
}

/// Why the model has nothing to say about `spec`.
/// The `facts` columns of `r`, a row of `seg`, from the segment's facts (the session's latest
/// look). A row that leaves its warm-up out covers less time than the facts: the workers' CPU
/// times, which cover the whole segment, are scaled to the row's share of it, so a warm read's
/// workers are not said to have waited 174% of its time.
fn row_facts(seg: &Segment, r: &RunResult) -> Option<crate::facts::Section> {
    let f = seg.facts.as_ref()?;
    let whole = f.seconds();
    if whole > 0.0 && r.figures.seconds > 0.0 && r.figures.seconds < whole {
        let share = r.figures.seconds / whole;
        let mut scaled = (**f).clone();
        scaled.run.worker_user_cpu_s = scaled.run.worker_user_cpu_s.map(|s| s * share);
        scaled.run.worker_cpu_wait_s = scaled.run.worker_cpu_wait_s.map(|s| s * share);
        return Some(std::sync::Arc::new(scaled).section());
    }
    Some(f.section())
}

fn not_modelled(spec: &RunSpec) -> String {
    if spec.setup.op == Op::Write {
        "writes are not modelled (the profile measures reads)".to_string()
    } else {
        "the profile lacks the ceilings these settings need (see `diskscope limits`)".to_string()
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// A chart mark's label: the settings in short, with what `short` leaves out when it is on
/// (`read pread 2M random cold`).
fn mark_label(s: &Settings) -> String {
    let mut l = s.short();
    for (on, word) in [
        (s.setup.pattern == Pattern::Random, " random"),
        (s.setup.direct, " direct"),
        (s.cold() && s.setup.op == Op::Read, " cold"),
    ] {
        if on {
            l.push_str(word);
        }
    }
    l
}

fn rate_note(s: &Settings) -> String {
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
fn mix_note(s: &Settings, scratch: &std::path::Path) -> String {
    format!(
        "{}: each operation reads or writes, drawn at {}% reads, on {} (laid out first, as fio \
         does); w: back to reads",
        s.op_text(),
        s.setup.mix_read_pct.unwrap_or_default(),
        crate::text::shown_path(scratch)
    )
}

/// The block size, and an open loop's rate at it (a throughput's ops/s follow the block).
fn block_note(s: &Settings) -> String {
    let rate = s
        .rate
        .map(|r| format!("; open loop {}", r.both(s.setup.block_size_bytes)))
        .unwrap_or_default();
    format!(
        "block size {}{rate}",
        crate::size::format_size(s.setup.block_size_bytes)
    )
}

/// The table's view of the state (see `tui::rows`): the results widget reads the state through
/// it, so it never imports this file back.
impl super::rows::TableView for App {
    fn rows(&self) -> &[RunResult] {
        &self.rows
    }
    fn row_extra(&self) -> &[super::segment::RowExtra] {
        &self.row_extra
    }
    fn rows_saved(&self) -> usize {
        self.rows_saved
    }
    fn live(&self) -> Option<&Segment> {
        self.live.as_ref()
    }
    fn baseline(&self) -> Option<&Baseline> {
        self.baseline.as_ref()
    }
    fn hidden_rows(&self) -> &std::collections::BTreeSet<usize> {
        &self.hidden_rows
    }
    fn table_sort(&self) -> Option<usize> {
        self.table_sort
    }
    fn table_cursor(&self) -> usize {
        self.table_cursor
    }
    fn unit(&self) -> &'static str {
        App::unit(self)
    }
    fn in_unit(&self, mib_s: f64) -> f64 {
        App::in_unit(self, mib_s)
    }
    fn delta_pct(&self, r: &RunResult) -> Option<f64> {
        App::delta_pct(self, r)
    }
}

impl App {
    /// `L`: turns the kernel view on or off for the current setting; a running setting restarts
    /// with it (a new row: the view is attached before the run's clock), a KDiskMark set's test
    /// keeps going and its next one has it.
    pub fn toggle_kernel(&mut self) -> Action {
        self.kernel.on = !self.kernel.on;
        self.kernel.clear();
        let narrow = self
            .screen_size
            .is_some_and(|(w, _)| w < super::kernel_view::SHOWN_FROM_WIDTH);
        self.message = match (self.kernel.on, narrow) {
            (true, false) => {
                "kernel view on: the block layer's and the device's times of this process's \
                              requests (needs root and BTF), above the log"
                    .into()
            }
            (true, true) => format!(
                "kernel view on: its panel shows from {} columns (above the log)",
                super::kernel_view::SHOWN_FROM_WIDTH
            ),
            (false, _) => "kernel view off".into(),
        };
        if self.paused || self.live.is_none() || self.kdm_running() {
            Action::None
        } else {
            self.start()
        }
    }
}
