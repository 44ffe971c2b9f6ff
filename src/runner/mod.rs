//! The runner: opens the file once per thread, applies cache control, measures residency, starts
//! one OS thread per worker and streams [`Snapshot`]s over a channel until the workers finish or a
//! stop flag is raised.
//!
//! Per-operation state (counters, the latency histogram, the XOR) lives in each worker's
//! [`WorkerCtx`] and leaves the thread only as a snapshot every [`SNAPSHOT_INTERVAL`], so the
//! measurement costs one clock read and one histogram increment per I/O and no shared writes. The
//! channel disconnects when the last worker exits; that is how consumers learn the run ended.

mod budget;
mod prepare;
mod result;
mod watch;
mod worker;

pub use budget::{
    buffer_bytes, check_budget, describe_fits, fitted, limit_of, mem_available_bytes,
    BudgetExceeded, Share,
};
pub use prepare::{prepare, test_hook, Prepared, PreparedMeta, DEFAULT_WRITE_SPAN};
pub use result::{host_name, make_result, setup_result};
pub use watch::{FileChanged, FileWatch};
use worker::OpSpan;
pub use worker::{
    complete_read, descriptor_lost, dispose_job, wanted_len, DescriptorLost, FileShrank, WorkerCtx,
    NO_LATENCY_ENV, SNAPSHOT_INTERVAL,
};

use crate::config::RunSpec;
use crate::engine::engine_for;
use crate::fsguard::Created;
use crate::measure::{Aggregate, Clock, RunResult, Snapshot};
use anyhow::{anyhow, Context};
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A started run.
pub struct RunHandle {
    pub rx: Receiver<Snapshot>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Option<OpSpan>>>,
    started: Instant,
    clock: Clock,
    workers: usize,
    sync_file: Option<File>,
    fsync: bool,
    /// The file a read run reads, to check it did not change under the run.
    watch: Option<FileWatch>,
    /// The file a write run created (or replaced with --force), checked to be still at its path.
    created: Option<Created>,
}

impl RunHandle {
    /// Asks every worker to stop; they do within one operation.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The file a write run created (or with --force replaced), by inode: remove a partial file
    /// only through [`Created::remove`], which leaves anything put at the path since alone.
    pub fn created(&self) -> Option<&Created> {
        self.created.as_ref()
    }

    /// The run's time origin (just before the workers were started): snapshots' `at_ns` count
    /// from the same instant.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Waits for the workers (the channel must be drained by the caller first or concurrently),
    /// then runs the final fsync of writes. Returns the run's time: from the earliest start of
    /// any worker's first operation to the latest end of any worker's last one (each worker's
    /// own stamps, so thread start-up, buffer setup and the main thread's wake-up are not in
    /// it), plus the final fsync.
    pub fn join(self) -> anyhow::Result<Duration> {
        let mut first = u64::MAX;
        let mut last = 0u64;
        for t in self.threads {
            let span = t.join().map_err(|_| anyhow!("a worker thread panicked"))?;
            if let Some(s) = span {
                first = first.min(s.first_start_raw);
                last = last.max(s.last_end_raw);
            }
        }
        let ops_ns = if first == u64::MAX {
            0
        } else {
            self.clock.delta_ns(first, last)
        };
        let sync_started = Instant::now();
        if self.fsync {
            if let Some(f) = &self.sync_file {
                f.sync_all().context("fsync at the end of the write")?;
            }
        }
        let sync = if self.fsync {
            sync_started.elapsed()
        } else {
            Duration::ZERO
        };
        test_hook("before-check");
        if let Some(w) = &self.watch {
            w.check_unchanged()?;
        }
        if let Some(c) = &self.created {
            if !c.is_intact() {
                return Err(FileReplaced {
                    path: c.path.clone(),
                }
                .into());
            }
        }
        Ok(Duration::from_nanos(ops_ns) + sync)
    }
}

/// Starts the workers of a prepared run. `stop` may be shared with a signal handler or a UI.
pub fn start(prepared: Prepared, stop: Arc<AtomicBool>) -> anyhow::Result<RunHandle> {
    let (tx, rx) = channel();
    // Calibrate the clock here, before any worker starts: its one-time calibration can take
    // ~200 ms and must not land in the first run of the process.
    let clock = Clock::get();
    // The run's time origin: taken once here, before any worker can start, for both the
    // snapshots (`at_ns`) and `RunHandle::started`, so the two agree.
    let (epoch_raw, started) = (clock.raw(), Instant::now());
    let workers = prepared.jobs.len();
    let barrier = Arc::new(Barrier::new(workers + 1));
    let engine = engine_for(prepared.spec.method);
    let duration = prepared.spec.duration;
    let mut threads = Vec::with_capacity(workers);
    for mut job in prepared.jobs {
        let tx: Sender<Snapshot> = tx.clone();
        let stop = stop.clone();
        let barrier = barrier.clone();
        let t = std::thread::Builder::new()
            .name(format!("diskscope-worker-{}", job.worker))
            .spawn(move || {
                barrier.wait();
                let mut ctx =
                    WorkerCtx::new(epoch_raw, job.worker, stop, tx, duration, job.block_size);
                let outcome = engine.run(&mut job, &mut ctx);
                let lost = descriptor_lost(&outcome);
                let span = ctx.finish(outcome);
                dispose_job(job, lost);
                span
            })
            .context("spawning a worker thread")?;
        threads.push(t);
    }
    drop(tx);
    barrier.wait();
    Ok(RunHandle {
        rx,
        stop,
        threads,
        started,
        clock,
        workers,
        watch: prepared.watch,
        created: prepared.created,
        sync_file: prepared.sync_file,
        fsync: prepared.spec.fsync,
    })
}

/// What a finished run gives back.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub result: RunResult,
    pub aggregate: Aggregate,
    pub notes: Vec<String>,
}

/// Runs `spec` to the end on the calling thread, calling `on_snapshot` for every snapshot. Fails
/// if a worker failed (the message names the operation and offset and the bytes done so far).
pub fn run_blocking(
    spec: &RunSpec,
    experiment: &str,
    stop: Arc<AtomicBool>,
    on_snapshot: impl FnMut(&Snapshot, &Aggregate),
) -> anyhow::Result<RunOutcome> {
    run_blocking_created(spec, experiment, stop, on_snapshot, &mut None)
}

/// [`run_blocking`] that also gives back, in `created`, the file a write run created (or with
/// --force replaced), so the caller can remove a partial file by inode ([`Created::remove`]).
pub fn run_blocking_created(
    spec: &RunSpec,
    experiment: &str,
    stop: Arc<AtomicBool>,
    mut on_snapshot: impl FnMut(&Snapshot, &Aggregate),
    created: &mut Option<Created>,
) -> anyhow::Result<RunOutcome> {
    let prepared = prepare(spec)?;
    created.clone_from(&prepared.created);
    let meta = prepared.meta();
    let notes = prepared.notes.clone();
    let handle = start(prepared, stop)?;
    let mut agg = Aggregate::new(handle.workers());
    for snap in handle.rx.iter() {
        agg.add(&snap);
        on_snapshot(&snap, &agg);
    }
    // A worker's own error (the first short read, say) explains more than the end-of-run check.
    let joined = handle.join();
    if let Some(e) = agg.errors.first() {
        return Err(RunFailed {
            message: e.clone(),
            bytes_done: agg.bytes,
            bytes_planned: meta.total,
        }
        .into());
    }
    let failed = |message: String| -> anyhow::Error {
        RunFailed {
            message,
            bytes_done: agg.bytes,
            bytes_planned: meta.total,
        }
        .into()
    };
    let elapsed = joined.map_err(|e| match e.downcast::<FileChanged>() {
        Ok(changed) => failed(changed.to_string()),
        Err(e) => match e.downcast::<FileReplaced>() {
            Ok(replaced) => failed(replaced.to_string()),
            Err(e) => e,
        },
    })?;
    Ok(RunOutcome {
        result: make_result(&meta, experiment, &agg, elapsed),
        aggregate: agg,
        notes,
    })
}

/// The path a write run created no longer names the file it wrote: another process renamed or
/// linked something over it during the run. Every descriptor of the run refers to the created
/// inode, so nothing else was written, but the data is not where the user will look for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReplaced {
    pub path: std::path::PathBuf,
}

impl std::fmt::Display for FileReplaced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} was replaced during the run (another process renamed or linked something over \
             it); the run wrote only to the file it created, which is no longer at that path, and \
             touched nothing else",
            self.path.display()
        )
    }
}
impl std::error::Error for FileReplaced {}

/// A run that stopped because a worker failed.
#[derive(Debug, Clone)]
pub struct RunFailed {
    pub message: String,
    pub bytes_done: u64,
    pub bytes_planned: u64,
}

impl std::fmt::Display for RunFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({} of {} bytes done)",
            self.message, self.bytes_done, self.bytes_planned
        )
    }
}
impl std::error::Error for RunFailed {}

impl RunFailed {
    /// Whether the failure was a full disk.
    pub fn is_disk_full(&self) -> bool {
        self.message.contains("No space left on device") || self.message.contains("os error 28")
    }
}

/// Builders for unit tests of the engines.
#[cfg(test)]
pub(crate) mod tests_support {
    use crate::config::{Op, Pattern};
    use crate::engine::WorkerJob;

    /// A one-worker sequential read job of the whole file at `path`.
    pub fn read_job(path: &std::path::Path) -> WorkerJob {
        let file = std::fs::File::open(path).unwrap();
        let len = file.metadata().unwrap().len();
        WorkerJob {
            worker: 0,
            file,
            op: Op::Read,
            block_size: 4096,
            range: 0..len,
            span: len,
            pattern: Pattern::Sequential,
            loop_range: false,
            max_ops: None,
            queue_depth: 1,
            seed: 1,
            direct: false,
            submit: crate::config::SubmitPolicy::DEFAULT,
            buffers: None,
            write_data: None,
        }
    }
}
