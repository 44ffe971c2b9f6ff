//! [`Run`]: one run of a [`RunSpec`] from its start to its verdict, the lifecycle every front
//! end drives (see the module doc of `runner`).

use super::error::{verdict, EndFailure, FileReplaced, RunError};
use super::workers::Workers;
use super::{make_result, prepare, test_hook, FileWatch, Prepared, PreparedMeta};
use crate::config::RunSpec;
use crate::fsguard::Created;
use crate::measure::{Aggregate, RunResult, Snapshot};
use std::fs::File;
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
}

/// What a finished run gives back.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub result: RunResult,
    pub aggregate: Aggregate,
    pub notes: Vec<String>,
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
        let spawned = Workers::spawn(
            prepared.jobs,
            prepared.spec.method,
            prepared.spec.duration,
            stop,
        );
        let workers = match spawned {
            Ok(w) => w,
            // Nothing ran: a write's file is removed again (inode-checked), as when preparing
            // fails.
            Err(e) => match prepared.created.filter(|c| c.remove()) {
                Some(c) => {
                    let removed = format!(
                        "removed {} again, which this run had created",
                        c.path.display()
                    );
                    return Err(e.context(removed));
                }
                None => return Err(e),
            },
        };
        Ok(Run {
            experiment: experiment.to_string(),
            meta,
            notes: prepared.notes,
            aggregate: Aggregate::new(workers.count),
            workers,
            drained: false,
            sync_file: prepared.sync_file,
            watch: prepared.watch,
            created: prepared.created,
        })
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

    /// Asks every worker to stop; they do within one operation. Their last snapshots still come.
    pub fn stop(&self) {
        self.workers.stop();
    }

    fn take(&mut self, got: Result<Snapshot, bool>) -> Step {
        match got {
            Ok(s) => {
                self.aggregate.add(&s);
                Step::Snapshot(Box::new(s))
            }
            Err(true) => {
                self.drained = true;
                Step::Ended
            }
            Err(false) => Step::Pending,
        }
    }

    /// Waits at most `timeout` for the next snapshot.
    pub fn poll(&mut self, timeout: Duration) -> Step {
        if self.drained {
            return Step::Ended;
        }
        let got = self.workers.rx.recv_timeout(timeout).map_err(|e| match e {
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
        match self.workers.rx.recv() {
            Ok(s) => {
                self.aggregate.add(&s);
                Some(Box::new(s))
            }
            Err(_) => {
                self.drained = true;
                None
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
        let (elapsed, failure) = join(
            self.workers,
            self.meta.spec.fsync,
            self.sync_file.as_ref(),
            self.watch.as_ref(),
            self.created.as_ref(),
        );
        Ended {
            verdict: verdict(&self.aggregate, failure, self.meta.total),
            experiment: self.experiment,
            meta: self.meta,
            aggregate: self.aggregate,
            notes: self.notes,
            elapsed,
        }
    }
}

/// Joins the workers, fsyncs a write (with `fsync`), checks the file: the run's time and what
/// went wrong.
fn join(
    workers: Workers,
    fsync: bool,
    sync_file: Option<&File>,
    watch: Option<&FileWatch>,
    created: Option<&Created>,
) -> (Option<Duration>, Option<EndFailure>) {
    let ops = match workers.join() {
        Ok(d) => d,
        Err(p) => return (None, Some(EndFailure::Panicked(p))),
    };
    let sync_started = Instant::now();
    if let Some(f) = sync_file.filter(|_| fsync) {
        if let Err(e) = f.sync_all() {
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
        make_result(
            &self.meta,
            &self.experiment,
            &self.aggregate,
            self.elapsed.unwrap_or_default(),
        )
    }

    /// The outcome of a run that can be trusted, or why it cannot.
    pub fn into_outcome(self) -> Result<RunOutcome, RunError> {
        let result = self.result();
        self.verdict?;
        Ok(RunOutcome {
            result,
            aggregate: self.aggregate,
            notes: self.notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Op;
    use std::time::Duration;

    #[test]
    fn a_worker_that_cannot_be_spawned_ends_the_started_ones_and_removes_the_created_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut spec = RunSpec::new(&path);
        spec.op = Op::Write;
        spec.block_size_bytes = 4096;
        spec.block_count = Some(64);
        spec.threads = 4;
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
