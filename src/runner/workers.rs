//! The worker threads of one run: one OS thread per job, started together behind a [`Gate`]
//! once every thread exists, each recording through its own [`WorkerCtx`] and sending [`Snapshot`]s over one channel. The
//! channel disconnects when the last worker exits; that is how [`super::Run`] learns the run
//! ended. Only [`super::Run`] uses this: it owns what comes before (preparing) and after
//! (fsync, the end-of-run checks, the result).

use crate::engine::{descriptor_lost, dispose_job, engine_for, WorkerJob};
use crate::measure::{Clock, OpSpan, Snapshot, WorkerCtx};
use anyhow::Context;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
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
    /// User-space CPU time of the worker threads themselves, ns, added by each as it ends:
    /// diskscope's own code (the loop, the clock, the histogram, the XOR). Not their system time,
    /// which is the kernel doing the I/O the run measures (the call, the copy, a buffered read's
    /// page-cache work, completions), nor the collecting thread's or io_uring's kernel workers'
    /// (`iou-wrk-*`). See `explain::verdict`'s generator_bound.
    pub(super) user_cpu_ns: Arc<AtomicU64>,
    /// Time the worker threads spent runnable but waiting for a CPU, ns (`schedstat`'s
    /// `run_delay`), added by each as it ends: the run's own share of CPU contention.
    pub(super) wait_cpu_ns: Arc<AtomicU64>,
    /// Time the worker threads spent on a CPU, ns (`schedstat`'s `sum_exec_runtime`: user and
    /// system), added by each as it ends: how CPU-bound the run was, which decides whether time
    /// the hypervisor stole could have cost it anything.
    pub(super) on_cpu_ns: Arc<AtomicU64>,
}

/// The calling thread's time on a CPU and its time spent waiting on a run queue, ns
/// (`/proc/thread-self/schedstat`, its first two fields); None without schedstats.
fn thread_schedstat_ns() -> Option<(u64, u64)> {
    crate::facts::pressure::parse_schedstat(
        &std::fs::read_to_string("/proc/thread-self/schedstat").ok()?,
    )
}

/// The calling thread's user-space CPU time, ns; None if it cannot be read.
fn thread_user_ns() -> Option<u64> {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage into `ru`, which lives for the call.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return None;
    }
    Some(ru.ru_utime.tv_sec as u64 * 1_000_000_000 + ru.ru_utime.tv_usec as u64 * 1000)
}

/// Where the workers wait until every one of them exists, so they start together: opened with
/// `true` to run, or with `false` when one could not be spawned, and the others must not run.
#[derive(Default)]
struct Gate {
    state: Mutex<Option<bool>>,
    opened: Condvar,
}

impl Gate {
    /// Waits until the gate is opened; whether to run.
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(go) = *state {
                return go;
            }
            state = self.opened.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn open(&self, go: bool) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(go);
        self.opened.notify_all();
    }
}

/// `builder.spawn(f)`; in unit tests, fails once [`tests::FAIL_SPAWN_AFTER`] threads were
/// spawned on this thread, as a process at its thread limit does.
fn spawn_thread<T: Send + 'static>(
    builder: std::thread::Builder,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<JoinHandle<T>> {
    #[cfg(test)]
    if tests::FAIL_SPAWN_AFTER.with(|n| {
        let left = n.get();
        n.set(left.saturating_sub(1));
        left == 0
    }) {
        return Err(std::io::Error::from_raw_os_error(libc::EAGAIN));
    }
    builder.spawn(f)
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
        pace: Option<(f64, crate::config::Arrival)>,
    ) -> anyhow::Result<Workers> {
        let (tx, rx) = channel();
        // Calibrate the clock here, before any worker starts: its one-time calibration can take
        // ~200 ms and must not land in the first run of the process.
        let clock = Clock::get();
        // The run's time origin: taken once here, before any worker can start, for both the
        // snapshots (`at_ns`) and `started`, so the two agree.
        let (epoch_raw, started) = (clock.raw(), Instant::now());
        let count = jobs.len();
        let gate = Arc::new(Gate::default());
        let engine = engine_for(method);
        let mut threads = Vec::with_capacity(count);
        let user_cpu_ns = Arc::new(AtomicU64::new(0));
        let wait_cpu_ns = Arc::new(AtomicU64::new(0));
        let on_cpu_ns = Arc::new(AtomicU64::new(0));
        for mut job in jobs {
            let tx: Sender<Snapshot> = tx.clone();
            let stop = stop.clone();
            let gate_w = gate.clone();
            let cpu_w = user_cpu_ns.clone();
            let wait_w = wait_cpu_ns.clone();
            let on_w = on_cpu_ns.clone();
            let spawned = spawn_thread(
                std::thread::Builder::new().name(format!("diskscope-worker-{}", job.worker)),
                move || {
                    if !gate_w.wait() {
                        // Another worker could not be started: this one does nothing.
                        dispose_job(job, false);
                        return None;
                    }
                    let cpu_start = thread_user_ns();
                    let sched_start = thread_schedstat_ns();
                    let mut ctx =
                        WorkerCtx::new(epoch_raw, job.worker, stop, tx, duration, job.block_size());
                    if let Some((rate_iops, arrival)) = pace {
                        // Open loop: this thread's share of the schedule, from the run's origin.
                        let pacer = crate::measure::pacer::Pacer::new(
                            Clock::get(),
                            epoch_raw,
                            rate_iops,
                            arrival,
                            job.worker,
                            count,
                        );
                        ctx.pace(pacer);
                    }
                    if job.setup.mix_read_pct.is_some() {
                        ctx.mix();
                    }
                    ctx.checksum(job.setup.checksum);
                    let outcome = engine.run(&mut job, &mut ctx);
                    if let (Some(a), Some(b)) = (cpu_start, thread_user_ns()) {
                        cpu_w.fetch_add(b.saturating_sub(a), Ordering::Relaxed);
                    }
                    if let (Some(a), Some(b)) = (sched_start, thread_schedstat_ns()) {
                        on_w.fetch_add(b.0.saturating_sub(a.0), Ordering::Relaxed);
                        wait_w.fetch_add(b.1.saturating_sub(a.1), Ordering::Relaxed);
                    }
                    let span = ctx.finish(&outcome);
                    dispose_job(job, descriptor_lost(&outcome));
                    span
                },
            );
            match spawned {
                Ok(t) => threads.push(t),
                Err(e) => {
                    // The workers already started wait at the gate: let them go home, never
                    // leave them waiting for ones that will not come.
                    gate.open(false);
                    for t in threads {
                        let _ = t.join();
                    }
                    return Err(e).context("spawning a worker thread");
                }
            }
        }
        drop(tx);
        gate.open(true);
        Ok(Workers {
            rx,
            stop,
            threads,
            started,
            clock,
            count,
            user_cpu_ns,
            wait_cpu_ns,
            on_cpu_ns,
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
        // Workers that moved to descriptor tables of their own left their first descriptors in
        // the shared one, which this thread is on.
        crate::engine::close_shared_leftovers();
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

#[cfg(test)]
pub(super) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Spawns that succeed on this thread before the next one fails (unit tests only).
        pub(in crate::runner) static FAIL_SPAWN_AFTER: Cell<usize> = const { Cell::new(usize::MAX) };
    }
}
