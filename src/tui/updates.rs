//! What the session thread reports folds into the explorer's state here: snapshots into the live
//! segment and the chart's history, device samples into the device panel's window, a segment's
//! end into a row of the results table, judged from the run's facts by the same `judge` as
//! `run` (live once a second, finally on the whole segment).

use super::app::{
    is_transient, App, DEVICE_WINDOW_SAMPLES, EXPERIMENT, MIN_ROW_OPS, MIN_ROW_SECONDS,
};
use super::segment::{Segment, XorSeen};
use super::session::Update;
use super::settings::{Settings, WriteSync};
use crate::config::{Op, Pattern};
use crate::measure::{Aggregate, RunResult, SnapshotKind};
use crate::xor::format_xor;

impl App {
    /// Folds one update from the session or the residency watcher into the state.
    pub fn apply(&mut self, update: Update) {
        self.apply_update(update);
        self.sync_log();
    }

    pub(super) fn apply_update(&mut self, update: Update) {
        match update {
            Update::Residency(r) => self.explored.residency = Some(r),
            Update::Kernel { id, read } => {
                if self.kernel.on && self.live.as_ref().is_some_and(|l| l.id == id) {
                    self.kernel.add(id, read, std::time::Instant::now());
                }
            }
            Update::Device { device, sample } => {
                if self.device.name.as_ref() != Some(&device) {
                    self.device.samples.clear();
                    self.device.history.clear();
                }
                self.device.name = Some(device);
                if let Some(d) = self
                    .device
                    .samples
                    .back()
                    .and_then(|(prev, _, _)| crate::measure::device::disk_delta(prev, &sample))
                {
                    self.device
                        .history
                        .push([d.dev_util_pct, d.dev_await_ms, d.dev_aqu_sz]);
                }
                if self.device.samples.len() == DEVICE_WINDOW_SAMPLES {
                    self.device.samples.pop_front();
                }
                self.device.samples.push_back((
                    sample,
                    self.device.file_bytes_moved,
                    self.device.own_io.take(),
                ));
            }
            Update::OwnIo(io) => self.device.own_io = Some(io),
            Update::Facts { id, facts } => {
                let is_live = self.live.as_ref().is_some_and(|l| l.id == id);
                if let Some(seg) = self.segment_mut(id) {
                    seg.facts = Some(facts);
                }
                if is_live {
                    self.judge_live();
                }
            }
            Update::Removing(r) => match self.runs.removing.iter_mut().find(|x| x.path == r.path) {
                // The removal thread's first report of a file queued earlier: the wait is
                // counted from when it was queued.
                Some(known) => {
                    let started = known.started.min(r.started);
                    *known = super::discard::Removal { started, ..r };
                }
                None => self.runs.removing.push(r),
            },
            // The progress showed while it lasted; the message line keeps what the user did.
            // A file removed stays counted (nothing left) while others are still being
            // removed, so the total the screen says does not shrink under the user's eyes.
            Update::Removed { path, .. } => {
                if let Some(r) = self.runs.removing.iter_mut().find(|r| r.path == path) {
                    r.left_bytes = 0;
                    r.done = true;
                }
                if self.runs.removing.iter().all(|r| r.done) {
                    self.runs.removing.clear();
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
                    || self.runs.ending.iter().any(|l| l.id == id)
                {
                    self.device.file_bytes_moved += snapshot.bytes;
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

    pub(super) fn segment_mut(&mut self, id: u64) -> Option<&mut Segment> {
        self.live
            .iter_mut()
            .chain(self.runs.ending.iter_mut())
            .find(|s| s.id == id)
    }

    pub(super) fn remove_segment(&mut self, id: u64) -> Option<Segment> {
        if self.live.as_ref().is_some_and(|l| l.id == id) {
            return self.live.take();
        }
        let i = self.runs.ending.iter().position(|s| s.id == id)?;
        Some(self.runs.ending.remove(i))
    }

    /// Moves the live segment's newly completed 100 ms bins into the chart's history, marking
    /// where its setting begins with its first point.
    pub(super) fn take_complete_bins(&mut self) {
        if let Some(mut seg) = self.live.take() {
            self.take_complete_bins_of(&mut seg);
            self.live = Some(seg);
        }
    }

    pub(super) fn take_complete_bins_of(&mut self, seg: &mut Segment) {
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
    pub(super) fn segment_ended(&mut self, seg: Segment, seconds: f64) -> Option<RunResult> {
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
                if is_transient(&whole) && !self.view.keep_transient {
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
                self.runs.row_extra.push(extra);
                // Older rows give their series up: the session's memory grows with its rows,
                // never with their length.
                let old = self
                    .runs
                    .row_extra
                    .len()
                    .saturating_sub(super::segment::ROW_SERIES_KEPT);
                for e in &mut self.runs.row_extra[..old] {
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
    pub(super) fn judge(&mut self, row: &mut RunResult, _synced: bool) {
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
        let ctx = self.explored.context.as_ref()?;
        let facts = row.facts.as_ref().and_then(|s| s.full.as_deref());
        Some(crate::explain::verdict::judge(
            row,
            facts,
            ctx,
            self.explored.profile.as_ref().map(|(p, _)| p),
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
    pub(super) fn judge_live(&mut self) {
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
    pub(super) fn fill_bound(&self, r: &mut RunResult) {
        let e = self
            .explored
            .profile
            .as_ref()
            .and_then(|(p, _)| crate::explain::model::explain_result(p, r));
        crate::explain::fill_bound_columns(r, e.as_ref());
    }

    pub(super) fn note_xor(&mut self, xor: String, by: String) {
        match &mut self.runs.xor {
            Some(seen) if seen.xor == xor => seen.agreeing += 1,
            Some(seen) => seen.mismatch = Some(format!("{xor} by {by}")),
            None => {
                self.runs.xor = Some(XorSeen {
                    xor,
                    by,
                    agreeing: 1,
                    mismatch: None,
                })
            }
        }
    }
}

/// Why the model has nothing to say about `spec`.
/// The `facts` columns of `r`, a row of `seg`, from the segment's facts (the session's latest
/// look). A row that leaves its warm-up out covers less time than the facts: the workers' CPU
/// times, which cover the whole segment, are scaled to the row's share of it, so a warm read's
/// workers are not said to have waited 174% of its time.
pub(super) fn row_facts(seg: &Segment, r: &RunResult) -> Option<crate::facts::Section> {
    let f = seg.facts.as_ref()?;
    let whole = f.seconds();
    if whole > 0.0 && r.figures.seconds > 0.0 && r.figures.seconds < whole {
        let share = r.figures.seconds / whole;
        let mut scaled = (**f).clone();
        scaled.run.worker_user_cpu_s = scaled.run.worker_user_cpu_s.map(|s| s * share);
        scaled.run.worker_cpu_wait_s = scaled.run.worker_cpu_wait_s.map(|s| s * share);
        scaled.run.worker_on_cpu_s = scaled.run.worker_on_cpu_s.map(|s| s * share);
        return Some(std::sync::Arc::new(scaled).section());
    }
    Some(f.section())
}

/// A chart mark's label: the settings in short, with what `short` leaves out when it is on
/// (`read pread 2M random cold`).
pub(super) fn mark_label(s: &Settings) -> String {
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
