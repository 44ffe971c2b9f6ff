//! The worker threads of one run: one OS thread per job, started together behind a barrier,
//! each recording through its own [`WorkerCtx`] and sending [`Snapshot`]s over one channel. The
//! channel disconnects when the last worker exits; that is how [`super::Run`] learns the run
//! ended. Only [`super::Run`] uses this: it owns what comes before (preparing) and after
//! (fsync, the end-of-run checks, the result).

use crate::engine::{descriptor_lost, dispose_job, engine_for, WorkerJob};
use crate::measure::{Clock, OpSpan, Snapshot, WorkerCtx};
use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Started workers.
pub(super) struct Workers {
    pub(super) rx: Receiver<Snapshot>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Option<OpSpan>>>,
    /// The run's time origin (just before the workers were started): snapshots' `at_ns` count
    /// from the same instant.
    pub(super) started: Instant,
    clock: Clock,
    pub(super) count: usize,
}

/// A worker thread panicked: the run has no trustworthy span or totals.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("a worker thread panicked")]
pub(super) struct WorkerPanicked;

impl Workers {
    /// Starts one thread per job, running `spec.method`'s engine. `stop` may be shared with a
    /// signal handler or a UI; a failing worker raises it too.
    pub(super) fn spawn(
        jobs: Vec<WorkerJob>,
        method: crate::config::Method,
        duration: Option<Duration>,
        stop: Arc<AtomicBool>,
    ) -> anyhow::Result<Workers> {
        let (tx, rx) = channel();
        // Calibrate the clock here, before any worker starts: its one-time calibration can take
        // ~200 ms and must not land in the first run of the process.
        let clock = Clock::get();
        // The run's time origin: taken once here, before any worker can start, for both the
        // snapshots (`at_ns`) and `started`, so the two agree.
        let (epoch_raw, started) = (clock.raw(), Instant::now());
        let count = jobs.len();
        let barrier = Arc::new(Barrier::new(count + 1));
        let engine = engine_for(method);
        let mut threads = Vec::with_capacity(count);
        for mut job in jobs {
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
                    let span = ctx.finish(&outcome);
                    dispose_job(job, descriptor_lost(&outcome));
                    span
                })
                .context("spawning a worker thread")?;
            threads.push(t);
        }
        drop(tx);
        barrier.wait();
        Ok(Workers {
            rx,
            stop,
            threads,
            started,
            clock,
            count,
        })
    }

    /// Asks every worker to stop; they do within one operation.
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits for the workers (the channel must be drained first or concurrently) and returns
    /// when their operations ran: from the earliest start of any worker's first operation to the
    /// latest end of any worker's last one (each worker's own stamps, so thread start-up, buffer
    /// setup and the main thread's wake-up are not in it).
    pub(super) fn join(self) -> Result<Duration, WorkerPanicked> {
        let mut first = u64::MAX;
        let mut last = 0u64;
        let mut panicked = false;
        for t in self.threads {
            match t.join() {
                Ok(Some(s)) => {
                    first = first.min(s.first_start_raw);
                    last = last.max(s.last_end_raw);
                }
                Ok(None) => {}
                Err(_) => panicked = true,
            }
        }
        if panicked {
            return Err(WorkerPanicked);
        }
        Ok(if first == u64::MAX {
            Duration::ZERO
        } else {
            Duration::from_nanos(self.clock.delta_ns(first, last))
        })
    }
}
