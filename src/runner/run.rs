//! [`Run`]: one run of a [`RunSpec`] from its start to its verdict, the lifecycle every front
//! end drives (see the module doc of `runner`). Around the timed part it takes the run's own
//! facts (`crate::facts`): the first look just before the workers start, the second right
//! after they end (and a write's fsync); the result carries them. Whether the figures can be
//! trusted is judged by the front ends from the result (`explain::judge_result`), not here.

use super::error::{verdict, EndFailure, FileReplaced, RunError};
use super::prepare::{prepare, test_hook, Prepared, PreparedMeta};
use super::result::make_result;
use super::watch::FileWatch;
use super::workers::Workers;
use crate::config::spec::RunSpec;
use crate::fsguard::Created;
use crate::measure::device::Sampler;
use crate::measure::kernel::KernelTrack;
use crate::measure::timeline::DEFAULT_INTERVAL;
use crate::measure::{Aggregate, RunResult, Snapshot, Timeline, TimelineBuilder};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A started run: its workers are running, and their snapshots are folded into the run's
/// [`Aggregate`] as the caller takes them ([`Run::poll`], [`Run::try_next`],
/// [`Run::next_snapshot`]). It ends with [`Run::end`] or [`Run::finish`], which wait for the
/// workers, fsync a write, check the file, and decide the verdict.
pub struct Run {
    experiment: String,
    meta: PreparedMeta,
    notes: Vec<String>,
    workers: Workers,
    aggregate: Aggregate,
    /// Whether the workers' channel closed (every worker exited).
    drained: bool,
    sync_file: Option<File>,
    /// A read run's file, checked for changes when the run ends.
    watch: Option<FileWatch>,
    /// The file a write run created (or with --force replaced), checked to be still at its path.
    created: Option<Created>,
    /// The run cut into intervals, with the device's counters sampled here (never by a worker).
    timeline: TimelineBuilder,
    /// Where the per-operation log goes (`--log-ops`), and the first error writing it.
    ops_log: Option<OpsLog>,
    /// The run's facts: the first look, taken before the workers started.
    facts: crate::facts::Gatherer,
    /// Where the O_DIRECT slots lie in physical memory (for the verdict).
    buffer_layout: Option<crate::engine::BufferLayout>,
}

/// The per-operation log's file: `worker,end_ns,latency_ns`, one operation a line.
struct OpsLog {
    out: std::io::BufWriter<Box<dyn Write + Send>>,
    error: Option<std::io::Error>,
}

/// What one look at a running run found.
#[derive(Debug)]
pub enum Step {
    /// A worker's snapshot, already added to [`Run::aggregate`].
    Snapshot(Box<Snapshot>),
    /// Nothing arrived in time; the workers are still running.
    Pending,
    /// Every worker has exited and every snapshot was taken: call [`Run::end`] or
    /// [`Run::finish`].
    Ended,
}

/// A run whose workers have exited, with what it measured and its verdict.
#[derive(Debug)]
pub struct Ended {
    pub experiment: String,
    pub meta: PreparedMeta,
    pub aggregate: Aggregate,
    pub notes: Vec<String>,
    /// The run's time: from the earliest start of any worker's first operation to the latest end
    /// of any worker's last one, plus the final fsync. `None` when it could not be known (a
    /// worker panicked, the fsync failed).
    pub elapsed: Option<Duration>,
    /// `Ok` when the run's figures (and XOR) can be trusted.
    pub verdict: Result<(), RunError>,
    /// The run's timeline (also in [`Ended::result`]'s `timeline`).
    pub timeline: Arc<Timeline>,
    /// Why the per-operation log ([`Run::log_ops_to`]) is incomplete, if it is.
    pub ops_log_error: Option<String>,
    /// The run's own facts, before and after (also in [`Ended::result`]'s `facts`).
    pub facts: Arc<crate::facts::Facts>,
}

/// What a finished run gives back.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub result: RunResult,
    pub aggregate: Aggregate,
    pub notes: Vec<String>,
    /// Why the per-operation log ([`Run::log_ops_to`]) is incomplete, if it is.
    pub ops_log_error: Option<String>,
}

impl Run {
    /// Prepares `spec` (opens or creates the file, applies its cache mode, makes the buffers)
    /// and starts its workers. `stop` may be shared with a signal handler; a failing worker
    /// raises it too. Results are labelled `experiment`.
    pub fn start(spec: &RunSpec, experiment: &str, stop: Arc<AtomicBool>) -> anyhow::Result<Run> {
        Run::start_prepared(prepare(spec)?, experiment, stop)
    }

    /// Starts the workers of a run prepared earlier (by [`prepare`]), for a caller that must do
    /// something between the two, such as a fleet's barrier.
    pub fn start_prepared(
        prepared: Prepared,
        experiment: &str,
        stop: Arc<AtomicBool>,
    ) -> anyhow::Result<Run> {
        let meta = prepared.meta();
        let mut notes = prepared.notes;
        // The kernel view is attached before the clock (loading takes milliseconds); its first
        // read, like the device's first sample, is time 0 of the run.
        let kernel = meta.spec.kernel.map(|by| kernel_track(&meta.spec, by));
        if let Some(why) = kernel.as_ref().and_then(KernelTrack::absent_reason) {
            notes.push(format!("kernel view: absent: {why}"));
        }
        // The facts' first look, then the device's first sample (time 0 of the run), just
        // before the workers start.
        let facts = crate::facts::Gatherer::start(&meta.spec.target.path);
        let mut timeline =
            TimelineBuilder::from_env(DEFAULT_INTERVAL, Sampler::for_file(&meta.spec.target.path));
        if let Some(k) = kernel {
            timeline.set_kernel(k);
        }
        let spawned = Workers::spawn(
            prepared.jobs,
            prepared.spec.setup.method,
            prepared.spec.target.duration,
            stop,
            prepared
                .spec
                .setup
                .rate()
                .map(|r| (r, prepared.spec.setup.arrival)),
        );
        let workers = match spawned {
            Ok(w) => w,
            // Nothing ran: a write's file is removed again (inode-checked), as when preparing
            // fails.
            Err(e) => match prepared.created.filter(|c| c.remove()) {
                Some(c) => {
                    let removed = format!(
                        "removed {} again, which this run had created",
                        crate::text::shown_path(&c.path)
                    );
                    return Err(e.context(removed));
                }
                None => return Err(e),
            },
        };
        Ok(Run {
            experiment: experiment.to_string(),
            meta,
            notes,
            aggregate: Aggregate::new(workers.count),
            workers,
            drained: false,
            sync_file: prepared.sync_file,
            watch: prepared.watch,
            created: prepared.created,
            timeline,
            ops_log: None,
            facts,
            buffer_layout: prepared.buffer_layout,
        })
    }

    /// Keeps no timeline and no throughput series, so the run's memory stays the same however
    /// long it runs (the explorer's runs go on for hours; a timeline keeps one latency histogram,
    /// ~32 KB, per interval). Its [`Ended::timeline`] is then empty. Before the first snapshot.
    pub fn keep_no_history(&mut self) {
        self.timeline.disable();
        self.aggregate = Aggregate::without_series(self.aggregate.workers);
    }

    /// What the run's kernel view (`spec.kernel`) counted since the last call
    /// ([`KernelTrack::read_live`]): for the explorer's panel, whose runs keep no timeline.
    /// None: the run has no view.
    pub fn kernel_read(&mut self) -> Option<Result<crate::kernel::Counts, String>> {
        self.timeline.kernel_mut().map(KernelTrack::read_live)
    }

    /// Sets the timeline's interval (default 1 s; the explorer's is 100 ms). Only before the
    /// first snapshot is taken; later it is ignored.
    pub fn set_timeline_interval(&mut self, interval: Duration) {
        self.timeline.set_interval(interval);
    }

    /// Writes every operation (`worker,end_ns,latency_ns`) to `out` as the snapshots are taken,
    /// for workers started with [`crate::measure::log_ops`] on. The header goes first; errors
    /// writing end the log, never the run, and are told in [`Ended::ops_log_error`].
    pub fn log_ops_to(&mut self, out: Box<dyn Write + Send>) {
        let mut out = std::io::BufWriter::new(out);
        let error = writeln!(out, "worker,end_ns,latency_ns").err();
        self.ops_log = Some(OpsLog { out, error });
    }

    /// Flushes the per-operation log; its first error, if any.
    fn ops_log_error(&mut self) -> Option<std::io::Error> {
        let log = self.ops_log.as_mut()?;
        if log.error.is_none() {
            log.error = log.out.flush().err();
        }
        log.error.take()
    }

    /// The timeline of the run so far (for a live view: the explorer redraws it as snapshots
    /// come); the last interval ends now. The same computation as the finished run's.
    pub fn timeline_so_far(&self) -> Timeline {
        let spec = &self.meta.spec;
        self.timeline.clone().finish(
            self.now_ns(),
            spec.setup.op,
            spec.setup.direct,
            self.aggregate.bytes,
        )
    }

    /// Nanoseconds since the run's origin.
    fn now_ns(&self) -> u64 {
        self.workers.started.elapsed().as_nanos() as u64
    }

    /// How long until the timeline's next device sample is due.
    fn until_sample(&self) -> Duration {
        Duration::from_nanos(self.timeline.next_sample_ns().saturating_sub(self.now_ns()))
    }

    /// Folds a snapshot into the totals and the timeline, and logs its operations.
    fn add(&mut self, s: &Snapshot) {
        self.aggregate.add(s);
        self.timeline.add(s);
        if let Some(log) = self.ops_log.as_mut().filter(|l| l.error.is_none()) {
            for op in &s.ops_log {
                if let Err(e) = writeln!(log.out, "{},{},{}", s.worker, op.end_ns, op.latency_ns) {
                    log.error = Some(e);
                    break;
                }
            }
        }
    }

    /// The run's settings and what preparing it found.
    pub fn meta(&self) -> &PreparedMeta {
        &self.meta
    }

    /// Notes for the user from preparing it (end of file reached early, cold run not cold, ...).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.workers.count
    }

    /// The run's time origin (just before the workers were started): snapshots' `at_ns` count
    /// from the same instant.
    pub fn started(&self) -> Instant {
        self.workers.started
    }

    /// The file a write run created (or with --force replaced), by inode: remove a partial file
    /// only through [`Created::remove`], which leaves anything put at the path since alone.
    pub fn created(&self) -> Option<&Created> {
        self.created.as_ref()
    }

    /// The totals of every snapshot taken so far.
    pub fn aggregate(&self) -> &Aggregate {
        &self.aggregate
    }

    /// The run's facts from its first look until now, the workers still running (the
    /// explorer's live verdict, once a second; a few procfs and sysfs reads and one
    /// `cachestat`, never the extent map). Each worker adds its CPU times up itself only when
    /// it ends, so their wait for a CPU so far is read from the live workers' `schedstat`, and
    /// their user CPU time is left unknown (the rule that reads it waits for the end).
    /// [`Ended::facts`] is the whole run's.
    pub fn facts_so_far(&self) -> crate::facts::Facts {
        let layout = self.buffer_layout.clone().unwrap_or_default();
        // The workers' thread names, `diskscope-worker-N`, as the kernel keeps them.
        let times = crate::facts::pressure::threads_sched_times("diskscope-worke");
        self.facts.so_far(crate::facts::RunSide {
            worker_user_cpu_s: None,
            worker_cpu_wait_s: times.map(|t| t.wait_s),
            worker_on_cpu_s: times.map(|t| t.on_cpu_s),
            buffer_slot_bytes: layout.slot_bytes as u64,
            buffer_pieces: layout.pieces,
        })
    }

    /// Asks every worker to stop; they do within one operation. Their last snapshots still come.
    pub fn stop(&self) {
        self.workers.stop();
    }

    fn take(&mut self, got: Result<Snapshot, bool>) -> Step {
        match got {
            Ok(s) => {
                self.add(&s);
                self.timeline.sample_due(self.now_ns());
                Step::Snapshot(Box::new(s))
            }
            Err(true) => {
                self.drained = true;
                Step::Ended
            }
            Err(false) => Step::Pending,
        }
    }

    /// Waits at most `timeout` for the next snapshot (less when the timeline's next device
    /// sample is due first).
    pub fn poll(&mut self, timeout: Duration) -> Step {
        if self.drained {
            return Step::Ended;
        }
        self.timeline.sample_due(self.now_ns());
        let wait = timeout.min(self.until_sample());
        let got = self.workers.rx.recv_timeout(wait).map_err(|e| match e {
            RecvTimeoutError::Timeout => false,
            RecvTimeoutError::Disconnected => true,
        });
        self.take(got)
    }

    /// The next snapshot if one is waiting, without blocking.
    pub fn try_next(&mut self) -> Step {
        if self.drained {
            return Step::Ended;
        }
        self.timeline.sample_due(self.now_ns());
        let got = self.workers.rx.try_recv().map_err(|e| match e {
            TryRecvError::Empty => false,
            TryRecvError::Disconnected => true,
        });
        self.take(got)
    }

    /// Waits for the next snapshot; `None` once every worker has exited.
    pub fn next_snapshot(&mut self) -> Option<Box<Snapshot>> {
        if self.drained {
            return None;
        }
        loop {
            // Wake for the timeline's device samples between snapshots too.
            match self.workers.rx.recv_timeout(self.until_sample()) {
                Ok(s) => {
                    self.add(&s);
                    self.timeline.sample_due(self.now_ns());
                    return Some(Box::new(s));
                }
                Err(RecvTimeoutError::Timeout) => self.timeline.sample_due(self.now_ns()),
                Err(RecvTimeoutError::Disconnected) => {
                    self.drained = true;
                    return None;
                }
            }
        }
    }

    /// Takes every snapshot until the workers end, calling `on_snapshot` with each and the
    /// totals so far, then [`Run::finish`]es.
    pub fn run_to_end(
        mut self,
        mut on_snapshot: impl FnMut(&Snapshot, &Aggregate),
    ) -> Result<RunOutcome, RunError> {
        while let Some(s) = self.next_snapshot() {
            on_snapshot(&s, &self.aggregate);
        }
        self.finish()
    }

    /// [`Run::end`], then the result of a run that can be trusted, or why it cannot.
    pub fn finish(self) -> Result<RunOutcome, RunError> {
        self.end().into_outcome()
    }

    /// Waits for the workers (taking the snapshots still coming: the final ones carry the XOR),
    /// fsyncs a write, checks that a read run's file did not change and a write run's file is
    /// still at its path, and decides the verdict (see `error.rs`). It does not stop the
    /// workers: [`Run::stop`] first to end a run early.
    pub fn end(mut self) -> Ended {
        while self.next_snapshot().is_some() {}
        let ops_log_error = self.ops_log_error().map(|e| e.to_string());
        let started = self.workers.started;
        let worker_user_ns = self.workers.user_cpu_ns.clone();
        let worker_wait_ns = self.workers.wait_cpu_ns.clone();
        let worker_on_cpu_ns = self.workers.on_cpu_ns.clone();
        let timeline = &mut self.timeline;
        // The device and CPU samples go on through a write's fsync, which another thread makes.
        let mut sample = |wait: Duration| {
            timeline.sample_due(started.elapsed().as_nanos() as u64);
            let until = timeline
                .next_sample_ns()
                .saturating_sub(started.elapsed().as_nanos() as u64);
            Duration::from_nanos(until).min(wait)
        };
        let (elapsed, failure) = join(
            self.workers,
            self.meta.spec.setup.write_sync.fsync(),
            self.sync_file.as_ref(),
            self.watch.as_ref(),
            self.created.as_ref(),
            &mut sample,
        );
        // The facts' second look, right after the workers ended and a write's fsync.
        let layout = self.buffer_layout.unwrap_or_default();
        let facts = Arc::new(self.facts.finish(crate::facts::RunSide {
            // The workers' own user-space CPU time: diskscope's code, not the kernel's I/O
            // work, nor io_uring's kernel threads, nor the collecting thread.
            worker_user_cpu_s: Some(
                worker_user_ns.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9,
            ),
            worker_cpu_wait_s: Some(
                worker_wait_ns.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9,
            ),
            worker_on_cpu_s: Some(
                worker_on_cpu_ns.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e9,
            ),
            buffer_slot_bytes: layout.slot_bytes as u64,
            buffer_pieces: layout.pieces,
        }));
        // The last sample after the workers ended and a write's fsync: both are the run's I/O.
        let mut timeline = self.timeline.finish(
            started.elapsed().as_nanos() as u64,
            self.meta.spec.setup.op,
            self.meta.spec.setup.direct,
            self.aggregate.bytes,
        );
        // The device's counters read beside the run's own bytes, so a line never says "every
        // byte went to the device" of bytes another process read.
        if let Some(io) = facts.run_io() {
            timeline.with_own_bytes(self.meta.spec.setup.op, io.read_bytes);
        }
        let timeline = Arc::new(timeline);
        Ended {
            ops_log_error,
            facts,
            timeline,
            verdict: verdict(&self.aggregate, failure, self.meta.total),
            experiment: self.experiment,
            meta: self.meta,
            aggregate: self.aggregate,
            notes: self.notes,
            elapsed,
        }
    }
}

/// The kernel view of a run of `spec`, filtered `by` process or device and by the run's
/// direction: started now, or absent with its reason.
fn kernel_track(spec: &RunSpec, by: crate::kernel::FilterBy) -> KernelTrack {
    use crate::config::Op;
    use crate::kernel::{Direction, Filter, FilterBy, KernelView};
    let mut filter = match by {
        FilterBy::Process => Filter::process(&spec.target.path),
        FilterBy::Device => Filter::device(&spec.target.path),
    };
    // The run's direction only (a mix: both).
    filter.direction = match (spec.setup.op, spec.is_mixed()) {
        (_, true) => None,
        (Op::Read, false) => Some(Direction::Read),
        (Op::Write, false) => Some(Direction::Write),
    };
    let how = match std::env::var(crate::kernel::ATTACH_ENV).as_deref() {
        Ok("perf") => Some(crate::kernel::Attach::PerfTracepoint),
        Ok("raw") => Some(crate::kernel::Attach::RawTracepoint),
        _ => None,
    };
    match KernelView::start_with(&filter, how) {
        Ok(view) => KernelTrack::new(view),
        Err(why) => KernelTrack::absent(by, why.to_string()),
    }
}

/// Joins the workers, fsyncs a write (with `fsync`), checks the file: the run's time and what
/// went wrong. The fsync runs on a thread of its own while this one keeps calling `sample`
/// (which takes the timeline's samples that are due and says how long it may wait, at most the
/// time it is given), so the intervals a long fsync spans have their device and CPU figures.
fn join(
    workers: Workers,
    fsync: bool,
    sync_file: Option<&File>,
    watch: Option<&FileWatch>,
    created: Option<&Created>,
    sample: &mut dyn FnMut(Duration) -> Duration,
) -> (Option<Duration>, Option<EndFailure>) {
    let ops = match workers.join() {
        Ok(d) => d,
        Err(p) => return (None, Some(EndFailure::Panicked(p))),
    };
    let sync_started = Instant::now();
    if let Some(f) = sync_file.filter(|_| fsync) {
        let synced = std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::channel();
            s.spawn(move || {
                let _ = tx.send(f.sync_all());
            });
            loop {
                match rx.recv_timeout(sample(Duration::from_millis(50))) {
                    Ok(done) => break done,
                    Err(RecvTimeoutError::Timeout) => {}
                    // The thread ended without a word: it panicked inside sync_all.
                    Err(RecvTimeoutError::Disconnected) => {
                        break Err(std::io::Error::other("the fsync thread panicked"))
                    }
                }
            }
        });
        if let Err(e) = synced {
            return (None, Some(EndFailure::Fsync(e)));
        }
    }
    let sync = if fsync {
        sync_started.elapsed()
    } else {
        Duration::ZERO
    };
    let elapsed = Some(ops + sync);
    test_hook("before-check");
    if let Some(Err(changed)) = watch.map(FileWatch::check_unchanged) {
        return (elapsed, Some(EndFailure::Changed(changed)));
    }
    if let Some(c) = created.filter(|c| !c.is_intact()) {
        let replaced = FileReplaced {
            path: c.path.clone(),
        };
        return (elapsed, Some(EndFailure::Replaced(replaced)));
    }
    (elapsed, None)
}

impl Ended {
    /// The result record of the run as measured, whatever its verdict (a failed run's record
    /// carries the first worker's error; its time is zero when it could not be known).
    pub fn result(&self) -> RunResult {
        let mut r = make_result(
            &self.meta,
            &self.experiment,
            &self.aggregate,
            self.elapsed.unwrap_or_default(),
        );
        if r.open_loop.is_some() {
            // On every open-loop row, NaN (an empty cell, null in JSON) where the run was too
            // short to say, so the rows of one experiment share their columns.
            if let Some(o) = &mut r.open_loop {
                o.resp_p99_no_burst_us = Some(
                    self.timeline
                        .reading
                        .burst
                        .map_or(f64::NAN, |b| b.p99_without_us),
                );
            }
        }
        if let Some(k) = &self.timeline.kernel {
            r.set_kernel(k);
        }
        r.timeline = Some(self.timeline.clone());
        r.facts = Some(self.facts.section());
        r
    }

    /// The outcome of a run that can be trusted, or why it cannot.
    pub fn into_outcome(self) -> Result<RunOutcome, RunError> {
        let result = self.result();
        self.verdict?;
        Ok(RunOutcome {
            result,
            aggregate: self.aggregate,
            notes: self.notes,
            ops_log_error: self.ops_log_error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Op;
    use std::time::Duration;

    #[test]
    fn a_finished_runs_timeline_adds_up_to_its_totals() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, vec![7u8; 4 << 20]).unwrap();
        let mut spec = RunSpec::new(&path);
        spec.setup.block_size_bytes = 4096;
        spec.target.block_count = Some(1024);
        spec.setup.threads = 2;
        let mut run = Run::start(&spec, "t", Arc::new(AtomicBool::new(false))).unwrap();
        run.set_timeline_interval(Duration::from_millis(100));
        while !matches!(run.poll(Duration::from_millis(50)), Step::Ended) {}
        let so_far = run.timeline_so_far();
        let outcome = run.finish().unwrap();
        let t = outcome.result.timeline.as_ref().expect("a timeline");
        assert_eq!(
            so_far.rows.iter().map(|r| r.ops).sum::<u64>(),
            outcome.result.figures.ops
        );
        assert_eq!(t.interval_s, 0.1);
        assert_eq!(
            t.rows.iter().map(|r| r.ops).sum::<u64>(),
            outcome.result.figures.ops
        );
        assert_eq!(t.rows.iter().map(|r| r.bytes).sum::<u64>(), 4 << 20);
        assert_eq!(t.total_latency(), outcome.aggregate.latency);
    }

    #[test]
    fn a_worker_that_cannot_be_spawned_ends_the_started_ones_and_removes_the_created_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut spec = RunSpec::new(&path);
        spec.setup.op = Op::Write;
        spec.setup.block_size_bytes = 4096;
        spec.target.block_count = Some(64);
        spec.setup.threads = 4;
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        std::thread::spawn(move || {
            // The third spawn fails, as at the process's thread limit.
            super::super::workers::tests::FAIL_SPAWN_AFTER.with(|n| n.set(2));
            let started = Run::start(&spec, "t", Arc::new(AtomicBool::new(false)));
            let _ = tx.send(started.err().map(|e| format!("{e:#}")));
        });
        let error = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the start returned")
            .expect("the start failed");
        assert!(error.contains("spawning a worker thread"), "{error}");
        assert!(error.contains("removed"), "{error}");
        assert!(!p.exists(), "the created file was removed");
        // The workers that were started ended (none waits for the others, holding the file).
        let open: Vec<_> = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            // A removed file's link reads `PATH (deleted)`.
            .filter(|target| {
                target
                    .to_string_lossy()
                    .starts_with(&*path.to_string_lossy())
            })
            .collect();
        assert!(open.is_empty(), "descriptors still open: {open:?}");
    }
}
