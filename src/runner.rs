//! The runner: opens the file once per thread, applies cache control, measures residency, starts
//! one OS thread per worker and streams [`Snapshot`]s over a channel until the workers finish or a
//! stop flag is raised.
//!
//! Per-operation state (counters, the latency histogram, the XOR) lives in each worker's
//! [`WorkerCtx`] and leaves the thread only as a snapshot every [`SNAPSHOT_INTERVAL`], so the
//! measurement costs one clock read and one histogram increment per I/O and no shared writes. The
//! channel disconnects when the last worker exits; that is how consumers learn the run ended.

use crate::cache::{self, Residency};
use crate::config::{usage, Op, Pattern, RunSpec};
use crate::engine::{engine_for, Block, WorkerJob};
use crate::measure::clock::TickTally;
use crate::measure::{
    new_latency_histogram, Aggregate, Clock, LatencySummary, RunResult, Snapshot, SnapshotKind,
};
use crate::xor::{format_xor, xor_at};
use anyhow::{anyhow, bail, Context};
use hdrhistogram::Histogram;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a worker sends a snapshot.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(100);

/// Environment variable that turns per-operation timing off (any value but `0`): no clock reads
/// and no latency histogram, only bytes and operations. For measuring what timing costs
/// (`bench/compare.sh`); results then have empty latency columns.
pub const NO_LATENCY_ENV: &str = "DISKSCOPE_NO_LATENCY";

/// Without timing, the clock is read every this many operations to send snapshots on time.
const UNTIMED_CLOCK_EVERY_OPS: u64 = 64;

/// Size of the region a time-bounded write without a block count cycles through.
pub const DEFAULT_WRITE_SPAN: u64 = 1 << 30;

/// Per-worker measurement state handed to engines.
pub struct WorkerCtx {
    worker: usize,
    clock: Clock,
    start_raw: u64,
    last_flush_raw: u64,
    next_event_raw: u64,
    flush_every_raw: u64,
    deadline_raw: u64,
    stop: Arc<AtomicBool>,
    tx: Sender<Snapshot>,
    /// Per-operation latencies in raw ticks, moved into `hist` when a snapshot is sent.
    tally: TickTally,
    hist: Histogram<u64>,
    /// Whether operations are timed (see [`NO_LATENCY_ENV`]).
    timing: bool,
    bytes: u64,
    ops: u64,
    xor: u32,
}

impl WorkerCtx {
    fn new(
        worker: usize,
        stop: Arc<AtomicBool>,
        tx: Sender<Snapshot>,
        duration: Option<Duration>,
    ) -> Self {
        let clock = Clock::get();
        let start_raw = clock.raw();
        let flush_every_raw = clock.ticks_for_ns(SNAPSHOT_INTERVAL.as_nanos() as u64);
        let deadline_raw = duration
            .map(|d| start_raw.saturating_add(clock.ticks_for_ns(d.as_nanos() as u64)))
            .unwrap_or(u64::MAX);
        WorkerCtx {
            worker,
            start_raw,
            last_flush_raw: start_raw,
            next_event_raw: (start_raw + flush_every_raw).min(deadline_raw),
            flush_every_raw,
            deadline_raw,
            clock,
            stop,
            tx,
            tally: TickTally::default(),
            hist: new_latency_histogram(),
            timing: std::env::var_os(NO_LATENCY_ENV).is_none_or(|v| v == "0"),
            bytes: 0,
            ops: 0,
            xor: 0,
        }
    }

    /// A timestamp in raw clock ticks, for [`WorkerCtx::record`] (0 when timing is off).
    #[inline(always)]
    pub fn now(&self) -> u64 {
        if self.timing {
            self.clock.raw()
        } else {
            0
        }
    }

    /// Folds `data`, read or written at the block's offset, into this worker's XOR (first pass
    /// only, so looping runs keep the range's checksum).
    #[inline(always)]
    pub fn xor(&mut self, block: &Block, data: &[u8]) {
        if block.first_pass {
            self.xor ^= xor_at(block.offset, data);
        }
    }

    /// Like [`WorkerCtx::xor`] for an already computed contribution.
    #[inline(always)]
    pub fn xor_value(&mut self, block: &Block, x: u32) {
        if block.first_pass {
            self.xor ^= x;
        }
    }

    /// Records one operation of `bytes` that ran from `t0` to `t1` (raw ticks). Returns `false`
    /// when the worker must stop (stop flag or time bound).
    #[inline(always)]
    pub fn record(&mut self, bytes: u64, t0: u64, t1: u64) -> bool {
        self.bytes += bytes;
        self.ops += 1;
        let now = if self.timing {
            self.tally.record(t1.saturating_sub(t0));
            t1
        } else if self.ops.is_multiple_of(UNTIMED_CLOCK_EVERY_OPS) {
            self.clock.raw()
        } else {
            0
        };
        if now >= self.next_event_raw {
            return self.on_event(now);
        }
        !self.stop.load(Ordering::Relaxed)
    }

    #[cold]
    fn on_event(&mut self, now: u64) -> bool {
        if now >= self.deadline_raw {
            return false;
        }
        self.send(now, SnapshotKind::Interval);
        self.next_event_raw = (now + self.flush_every_raw).min(self.deadline_raw);
        !self.stop.load(Ordering::Relaxed)
    }

    fn send(&mut self, now: u64, kind: SnapshotKind) {
        self.tally.drain_into(&self.clock, &mut self.hist);
        let latency = self.hist.clone();
        self.hist.reset();
        let snap = Snapshot {
            worker: self.worker,
            at_ns: self.clock.delta_ns(self.start_raw, now),
            interval_ns: self.clock.delta_ns(self.last_flush_raw, now),
            bytes: std::mem::take(&mut self.bytes),
            ops: std::mem::take(&mut self.ops),
            latency,
            kind,
        };
        self.last_flush_raw = now;
        // A dropped receiver means nobody listens any more; the stop flag ends us soon.
        let _ = self.tx.send(snap);
    }

    fn finish(mut self, outcome: anyhow::Result<bool>) {
        let now = self.clock.raw();
        let kind = match outcome {
            Ok(full_pass) => SnapshotKind::Final {
                xor: self.xor,
                full_pass,
            },
            Err(e) => {
                self.stop.store(true, Ordering::Relaxed);
                SnapshotKind::Failed(format!("{e:#}"))
            }
        };
        self.send(now, kind);
    }
}

/// A run ready to start: files opened, cache prepared, residency measured.
pub struct Prepared {
    pub spec: RunSpec,
    /// File size when prepared (for writes: the size the run will write).
    pub file_size: u64,
    /// Bytes the run covers (sequential) or draws offsets from (random).
    pub total: u64,
    pub residency_before: Residency,
    /// Notes for the user (end of file reached early, cold run not cold, ...).
    pub notes: Vec<String>,
    jobs: Vec<WorkerJob>,
    /// Descriptor kept for the final fsync of writes.
    sync_file: Option<File>,
}

impl Prepared {
    /// Number of workers that will run.
    pub fn workers(&self) -> usize {
        self.jobs.len()
    }
}

fn open_error(path: &std::path::Path, e: std::io::Error, direct: bool) -> anyhow::Error {
    let p = path.display();
    match e.raw_os_error() {
        Some(libc::ENOENT) => anyhow!(
            "FILE: {p} does not exist; check the path or create it with `run {p} -w 1M 1024`"
        ),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            anyhow!(
                "FILE: permission denied opening {p}; check its permissions or pick another file"
            )
        }
        Some(libc::EISDIR) => anyhow!("FILE: {p} is a directory; give a regular file"),
        Some(libc::EINVAL) if direct => usage(format!(
            "--direct: the filesystem of {p} refuses O_DIRECT; run without --direct"
        )),
        _ => anyhow!("FILE: cannot open {p}: {e}"),
    }
}

fn open_for(spec: &RunSpec, write: bool) -> anyhow::Result<File> {
    let mut flags = 0;
    if spec.direct {
        flags |= libc::O_DIRECT;
    }
    if write && spec.dsync {
        flags |= libc::O_DSYNC;
    }
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(&spec.path)
        .map_err(|e| open_error(&spec.path, e, spec.direct))
}

/// Creates (or with `force`, replaces) the output file of a write run.
fn create_output(spec: &RunSpec) -> anyhow::Result<()> {
    let p = spec.path.display();
    match std::fs::metadata(&spec.path) {
        Ok(m) if m.is_dir() => bail!("FILE: {p} is a directory; give a file name to write"),
        Ok(m) if m.file_type().is_block_device() => {
            bail!("FILE: {p} is a block device; diskscope does not write to devices")
        }
        Ok(_) if !spec.force => {
            return Err(usage(format!(
                "FILE: {p} already exists; pass --force to replace it"
            )))
        }
        Ok(m) if !m.is_file() => return Ok(()), // e.g. /dev/null with --force: write as is
        Ok(_) if spec.overwrite_in_place => return Ok(()), // batch mode: overwrite, keep the blocks
        _ => {}
    }
    let mut o = OpenOptions::new();
    o.write(true);
    if spec.force {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    o.open(&spec.path)
        .map(drop)
        .map_err(|e| open_error(&spec.path, e, false))
}

/// Opens files, applies cache control and measures residency.
pub fn prepare(spec: &RunSpec) -> anyhow::Result<Prepared> {
    if spec.method == crate::config::Method::IoUring {
        crate::engine::probe_io_uring().map_err(usage)?;
    }
    let bs = spec.block_size_bytes;
    let write = spec.op == Op::Write;
    let mut notes = Vec::new();
    let (file_size, total) = if write {
        create_output(spec)?;
        let total = match spec.block_count {
            Some(c) => bs * c,
            None => DEFAULT_WRITE_SPAN.next_multiple_of(bs),
        };
        (total, total)
    } else {
        let meta = std::fs::metadata(&spec.path).map_err(|e| open_error(&spec.path, e, false))?;
        if meta.is_dir() {
            bail!(
                "FILE: {} is a directory; give a regular file",
                spec.path.display()
            );
        }
        let mut f = open_for(spec, false)?;
        let size = f.seek(SeekFrom::End(0)).context("finding the file size")?;
        let total = match spec.block_count {
            Some(c) if bs * c > size && spec.pattern == Pattern::Sequential => {
                notes.push(format!(
                    "note: the file ends at {size} bytes, before {c} blocks of {bs}; read {size} bytes"
                ));
                size
            }
            Some(c) if spec.pattern == Pattern::Sequential => bs * c,
            _ => size,
        };
        (size, total)
    };
    if !write {
        cache::prepare(&spec.path, spec.cache, total)?;
    }
    let probe = open_for(spec, write)?;
    if write && spec.method == crate::config::Method::Mmap {
        probe
            .set_len(total)
            .context("sizing the file for mmap writes")?;
    }
    let residency_before = cache::residency_of(&probe).unwrap_or_default();
    if !write {
        if let Some(w) = cache::cold_warning(spec.cache, &residency_before) {
            notes.push(w);
        }
    }
    let jobs = plan_jobs(spec, total)?;
    Ok(Prepared {
        spec: spec.clone(),
        file_size,
        total,
        residency_before,
        notes,
        jobs,
        sync_file: write.then_some(probe),
    })
}

/// Splits the run between workers: contiguous, block-aligned ranges (sequential), or the whole
/// span with a share of the operations each (random).
fn plan_jobs(spec: &RunSpec, total: u64) -> anyhow::Result<Vec<WorkerJob>> {
    let bs = spec.block_size_bytes;
    let blocks = total.div_ceil(bs);
    let threads = spec.threads as u64;
    let mut jobs = Vec::with_capacity(spec.threads);
    for w in 0..threads {
        let (range, max_ops) = match spec.pattern {
            Pattern::Sequential => {
                let first = blocks * w / threads;
                let last = blocks * (w + 1) / threads;
                ((first * bs).min(total)..(last * bs).min(total), None)
            }
            Pattern::Random => {
                let ops = spec
                    .block_count
                    .map(|c| c * (w + 1) / threads - c * w / threads);
                (0..total, ops)
            }
        };
        jobs.push(WorkerJob {
            worker: w as usize,
            file: open_for(spec, spec.op == Op::Write)?,
            op: spec.op,
            block_size: bs as usize,
            range,
            span: total,
            pattern: spec.pattern,
            loop_range: spec.loop_range || (spec.duration.is_some() && spec.block_count.is_none()),
            max_ops,
            queue_depth: spec.queue_depth,
            seed: spec.seed,
            direct: spec.direct,
        });
    }
    Ok(jobs)
}

/// A started run.
pub struct RunHandle {
    pub rx: Receiver<Snapshot>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    started: Instant,
    workers: usize,
    sync_file: Option<File>,
    fsync: bool,
}

impl RunHandle {
    /// Asks every worker to stop; they do within one operation.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    pub fn workers(&self) -> usize {
        self.workers
    }

    /// When the workers were released.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Waits for the workers (the channel must be drained by the caller first or concurrently),
    /// then runs the final fsync of writes. Returns the run's wall time.
    pub fn join(self) -> anyhow::Result<Duration> {
        for t in self.threads {
            t.join().map_err(|_| anyhow!("a worker thread panicked"))?;
        }
        if self.fsync {
            if let Some(f) = &self.sync_file {
                f.sync_all().context("fsync at the end of the write")?;
            }
        }
        Ok(self.started.elapsed())
    }
}

/// Starts the workers of a prepared run. `stop` may be shared with a signal handler or a UI.
pub fn start(prepared: Prepared, stop: Arc<AtomicBool>) -> anyhow::Result<RunHandle> {
    let (tx, rx) = channel();
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
                let mut ctx = WorkerCtx::new(job.worker, stop, tx, duration);
                let outcome = engine.run(&mut job, &mut ctx);
                ctx.finish(outcome);
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
        started: Instant::now(),
        workers,
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

/// The host name, for results.
pub fn host_name() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

/// Builds the result record of a run from its spec, totals and wall time.
pub fn make_result(
    prepared_meta: &PreparedMeta,
    experiment: &str,
    agg: &Aggregate,
    elapsed: Duration,
) -> RunResult {
    let spec = &prepared_meta.spec;
    let mut r = RunResult {
        experiment: experiment.to_string(),
        host: host_name(),
        file: spec.path.display().to_string(),
        file_size_bytes: prepared_meta.file_size,
        operation: spec.op.to_string(),
        method: spec.method.to_string(),
        pattern: spec.pattern.to_string(),
        cache: spec.cache.to_string(),
        direct: spec.direct,
        block_size_bytes: spec.block_size_bytes,
        block_count: agg.ops,
        threads: spec.threads,
        queue_depth: if spec.method == crate::config::Method::IoUring {
            spec.queue_depth
        } else {
            1
        },
        rep: 1,
        bytes: agg.bytes,
        seconds: elapsed.as_secs_f64(),
        ops: agg.ops,
        residency_before_pct: prepared_meta.residency_before.percent(),
        xor: match (agg.xor(), spec.pattern) {
            (Some(x), _) => format_xor(x),
            (None, Pattern::Random) if agg.all_finished() && agg.errors.is_empty() => {
                format_xor(agg.xor_of_read_data())
            }
            _ => String::new(),
        },
        error: agg.errors.first().cloned().unwrap_or_default(),
        ..Default::default()
    };
    r.set_rates();
    r.set_latency(&LatencySummary::of(&agg.latency));
    r
}

/// The parts of [`Prepared`] a result needs after the jobs have been handed to threads.
#[derive(Debug, Clone)]
pub struct PreparedMeta {
    pub spec: RunSpec,
    pub file_size: u64,
    pub total: u64,
    pub residency_before: Residency,
}

impl Prepared {
    pub fn meta(&self) -> PreparedMeta {
        PreparedMeta {
            spec: self.spec.clone(),
            file_size: self.file_size,
            total: self.total,
            residency_before: self.residency_before,
        }
    }
}

/// Runs `spec` to the end on the calling thread, calling `on_snapshot` for every snapshot. Fails
/// if a worker failed (the message names the operation and offset and the bytes done so far).
pub fn run_blocking(
    spec: &RunSpec,
    experiment: &str,
    stop: Arc<AtomicBool>,
    mut on_snapshot: impl FnMut(&Snapshot, &Aggregate),
) -> anyhow::Result<RunOutcome> {
    let prepared = prepare(spec)?;
    let meta = prepared.meta();
    let notes = prepared.notes.clone();
    let handle = start(prepared, stop)?;
    let mut agg = Aggregate::new(handle.workers());
    for snap in handle.rx.iter() {
        agg.add(&snap);
        on_snapshot(&snap, &agg);
    }
    let elapsed = handle.join()?;
    if let Some(e) = agg.errors.first() {
        return Err(RunFailed {
            message: e.clone(),
            bytes_done: agg.bytes,
            bytes_planned: meta.total,
        }
        .into());
    }
    Ok(RunOutcome {
        result: make_result(&meta, experiment, &agg, elapsed),
        aggregate: agg,
        notes,
    })
}

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
