//! The explorer's state. No drawing and no threads here: keys become [`Action`]s for the event
//! loop to carry out (`input`), and [`Update`]s from the session fold into the state
//! (`updates`), so both are unit-testable without a terminal or a disk.
//!
//! Each run the session starts is a *segment* with an id. The live segment is drawn; a segment
//! that was asked to stop waits in `ending` until its last snapshots and its `Stopped` arrive,
//! then becomes a row of the results table (unless it was reset or never got going).

use super::baseline::Baseline;
use super::kdiskmark::{KdmCaps, KdmRun};
pub use super::segment::{Segment, XorSeen};
use super::settings::Settings;
pub use super::state::{DeviceWatch, Entry, Explored, Kdm, Runs, View};
use crate::config::spec::RunSpec;
use crate::config::{Op, Pattern};
use crate::measure::RunResult;
use std::collections::VecDeque;
use std::path::PathBuf;

/// The `experiment` column of rows made by the explorer.
pub const EXPERIMENT: &str = "tui";
/// The `experiment` column of a row saved while its run was still going.
pub const EXPERIMENT_LIVE: &str = "tui-live";

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

/// The explorer's state: the settings being run, the live run and the finished rows, what the
/// message line and the log say, and the groups of [`super::state`] (the explored file, the
/// view, the device panel's samples, the KDiskMark set, the runs' bookkeeping). It holds no
/// terminal type: the event loop turns keys into [`App::handle_key`] and updates from the
/// session thread into [`App::apply`]; `ui` draws it.
#[derive(Debug, Clone)]
pub struct App {
    /// The explored file (never written to).
    pub file: PathBuf,
    /// Its size, the scratch file writes go to, where `s` saves rows, and what is known of it.
    pub explored: Explored,
    pub settings: Settings,
    /// The running segment (the setting being measured now).
    pub live: Option<Segment>,
    /// Finished rows, oldest first.
    pub rows: Vec<RunResult>,
    /// What rows are compared with (Δ%).
    pub baseline: Option<Baseline>,
    /// One-line status: the last change, error or note.
    pub message: String,
    /// Every message the line at the bottom showed (key effects, notes, warnings, errors), with
    /// the seconds since the explorer started, oldest first; the last [`LOG_ENTRIES`].
    pub log: VecDeque<(f64, String)>,
    /// Throughput and latency over time across segments, at three resolutions, with where a
    /// setting changed (see [`super::history`]).
    pub history: super::history::History,
    /// The kernel panel (`L`): on or off, and what the live run's kernel view counted.
    pub kernel: super::kernel_view::KernelPanel,
    /// What is shown and how: overlays, the chart's span, the table's cursor, sort and hidden
    /// rows, units, the entry line.
    pub view: View,
    /// The device under the file as the session samples it (the device panel's figures).
    pub device: DeviceWatch,
    /// The KDiskMark set in progress or the last one.
    pub kdm: Kdm,
    /// The runs' bookkeeping: paused, ending segments, rows saved, the XOR seen, scratch files
    /// being removed, leaving.
    pub runs: Runs,
    /// An action the event loop must carry out without a key (the set's next test).
    pub(super) pending: Option<Action>,
    pub(super) next_id: u64,
}

impl App {
    pub fn new(file: PathBuf, file_size_bytes: u64, scratch: PathBuf, csv_path: PathBuf) -> Self {
        App {
            file,
            explored: Explored {
                size_bytes: file_size_bytes,
                scratch,
                csv_path,
                residency: None,
                profile: None,
                context: None,
            },
            settings: Settings::default(),
            live: None,
            rows: Vec::new(),
            baseline: None,
            message: String::from("press ? for help"),
            log: VecDeque::new(),
            history: Default::default(),
            kernel: Default::default(),
            view: View::new(),
            device: DeviceWatch::default(),
            kdm: Kdm::default(),
            runs: Runs::default(),
            pending: None,
            next_id: 1,
        }
    }

    /// Loads what the "why" line and the context line need: the limits profile for the explored
    /// file's device (from the user's cache; never measured here) and the file's context.
    pub fn load_explain(&mut self) {
        self.explored.profile = crate::explain::profile_for(&self.file);
        self.explored.context = Some(crate::explain::context::Context::collect(&self.file));
    }

    /// The "why" line: the bound of the live run (or, before one has data, of the current
    /// settings), its value and how close the run comes, with what to look at when it is below
    /// half; or how to get a profile.
    pub fn why(&self) -> Why {
        let Some((profile, _)) = &self.explored.profile else {
            return Why::NoProfile;
        };
        let settings = self.live.as_ref().map_or(self.settings, |l| l.settings);
        let spec = settings.spec(&self.file, &self.explored.scratch, self.explored.size_bytes);
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
        let before = self.explored.scratch.display().to_string();
        let after = path.display().to_string();
        if !before.is_empty() && before != after {
            self.message = self.message.replace(&before, &after);
        }
        self.explored.scratch = path;
    }

    /// Moves the live segment to `ending`, where it waits for its last snapshots (no longer
    /// drawn, so it keeps no bins for the chart).
    pub(super) fn retire_live(&mut self) {
        if let Some(mut old) = self.live.take() {
            self.take_complete_bins_of(&mut old);
            old.feeds_chart = false;
            old.take_ready();
            self.runs.ending.push(old);
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
        self.runs.paused = false;
        Action::Start {
            id,
            spec: self
                .settings
                .spec(&self.file, &self.explored.scratch, self.explored.size_bytes),
        }
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
        let at = self.view.clock.elapsed().as_secs_f64();
        self.log.push_back((at, self.message.clone()));
    }

    /// The throughput unit shown: `MiB/s` or `MB/s`.
    pub fn unit(&self) -> &'static str {
        if self.view.units_mb {
            "MB/s"
        } else {
            "MiB/s"
        }
    }

    /// A MiB/s figure in the unit shown.
    pub fn in_unit(&self, mib_s: f64) -> f64 {
        if self.view.units_mb {
            mib_s * 1.048_576
        } else {
            mib_s
        }
    }

    /// The finished row under the table's cursor (its index in `rows`), None on the live row.
    pub fn row_under_cursor(&self) -> Option<usize> {
        let body = super::widgets::results::body(self);
        let at = self.view.table_cursor.min(body.len().saturating_sub(1));
        body.get(at).and_then(|(_, _, i)| *i)
    }

    /// Whether the table's first row is the live one.
    pub(super) fn live_row_shown(&self) -> bool {
        self.live
            .as_ref()
            .is_some_and(|l| l.agg.ops > 0 && l.meta.is_some())
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
        self.kdm.run.as_ref().is_some_and(|k| !k.done())
    }

    /// Starts the KDiskMark set with what the machine allows; returns the first test's start.
    pub fn begin_kdiskmark(&mut self, caps: KdmCaps) -> Action {
        let mut run = KdmRun::new(caps, self.kdm.seconds, self.settings);
        run.results.clear();
        self.kdm.run = Some(run);
        self.kdm.show = false;
        self.start_kdm_step()
    }

    pub(super) fn start_kdm_step(&mut self) -> Action {
        let Some(k) = &self.kdm.run else {
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
                self.runs.paused = false;
                self.kdm.id = Some(id);
                self.message = format!(
                    "KDiskMark {}/{total}: {name}, {:.0} s (k cancels)",
                    step + 1,
                    self.kdm.seconds
                );
                Action::Start {
                    id,
                    spec: settings.spec(
                        &self.file,
                        &self.explored.scratch,
                        self.explored.size_bytes,
                    ),
                }
            }
            None => {
                // Done: back to what was running before, card on screen.
                self.kdm.id = None;
                self.settings = k.resume;
                self.kdm.show = true;
                self.message = "KDiskMark set done: rows added (s saves, e exports)".into();
                self.start()
            }
        }
    }

    pub(super) fn cancel_kdiskmark(&mut self) -> Action {
        let Some(k) = &mut self.kdm.run else {
            return Action::None;
        };
        self.settings = k.resume;
        self.kdm.run = None;
        self.kdm.id = None;
        // A test cut short is not a KDiskMark figure: no row for it.
        if let Some(live) = &mut self.live {
            live.keep = false;
        }
        self.message = "KDiskMark set cancelled".into();
        self.start()
    }

    /// A KDiskMark test ended (with a row, or None if it failed): on to the next one.
    pub(super) fn kdm_step_ended(&mut self, id: u64, row: Option<RunResult>) {
        if self.kdm.id != Some(id) {
            return;
        }
        if let Some(k) = &mut self.kdm.run {
            k.results.push(row);
            k.step += 1;
        }
        self.pending = Some(self.start_kdm_step());
    }

    /// The action to carry out without a key press, if any (taken once).
    pub fn take_pending(&mut self) -> Option<Action> {
        self.pending.take()
    }

    /// The rows `s` appends: completed rows not saved yet, then the live segment as of now.
    pub fn rows_to_save(&self) -> Vec<RunResult> {
        let mut out: Vec<RunResult> =
            self.rows[self.runs.rows_saved.min(self.rows.len())..].to_vec();
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
        let written = self.runs.csv_rows_written;
        let path = crate::text::shown_path(&self.explored.csv_path);
        match saved_at_exit {
            Err(e) => {
                let unsaved = self.rows.len() - self.runs.rows_saved.min(self.rows.len());
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
        if self.runs.removing.is_empty() {
            return None;
        }
        let left: u64 = self.runs.removing.iter().map(|r| r.left_bytes).sum();
        let total: u64 = self.runs.removing.iter().map(|r| r.total_bytes).sum();
        let secs = self
            .runs
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
            + self.device.history.heap_bytes()
            + self
                .live
                .iter()
                .chain(&self.runs.ending)
                .map(Segment::heap_bytes)
                .sum::<usize>()
            + self.device.samples.capacity()
                * std::mem::size_of::<(crate::measure::device::Sample, u64)>()
            + log
    }

    /// Whether the terminal, as last drawn, is below the least size the screen is laid out
    /// for (then it says so, and keys other than q do nothing).
    pub fn too_small(&self) -> bool {
        self.view
            .screen_size
            .is_some_and(|(w, h)| w < super::widgets::MIN_WIDTH || h < super::widgets::MIN_HEIGHT)
    }

    /// Whether the engine is (about to be) running.
    pub fn running(&self) -> bool {
        self.live.is_some() && !self.runs.paused
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

pub(super) fn not_modelled(spec: &RunSpec) -> String {
    if spec.setup.op == Op::Write {
        "writes are not modelled (the profile measures reads)".to_string()
    } else {
        "the profile lacks the ceilings these settings need (see `diskscope limits`)".to_string()
    }
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The table's view of the state (see `tui::rows`): the results widget reads the state through
/// it, so it never imports this file back.
impl super::rows::TableView for App {
    fn rows(&self) -> &[RunResult] {
        &self.rows
    }
    fn row_extra(&self) -> &[super::segment::RowExtra] {
        &self.runs.row_extra
    }
    fn rows_saved(&self) -> usize {
        self.runs.rows_saved
    }
    fn live(&self) -> Option<&Segment> {
        self.live.as_ref()
    }
    fn baseline(&self) -> Option<&Baseline> {
        self.baseline.as_ref()
    }
    fn hidden_rows(&self) -> &std::collections::BTreeSet<usize> {
        &self.view.hidden_rows
    }
    fn table_sort(&self) -> Option<usize> {
        self.view.table_sort
    }
    fn table_cursor(&self) -> usize {
        self.view.table_cursor
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
            .view
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
        if self.runs.paused || self.live.is_none() || self.kdm_running() {
            Action::None
        } else {
            self.start()
        }
    }
}
