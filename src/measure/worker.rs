//! Per-worker measurement state: counters, the latency tally and histogram, the XOR, and the
//! 100 ms snapshot clock. Engines call [`WorkerCtx::now`] and [`WorkerCtx::record`] once per
//! operation; everything else happens once per snapshot, off the hot path.
//!
//! It lives here, below the engines, because it is what they record *into*: an engine knows
//! this type and nothing of the runner that starts its thread. The runner makes one per worker
//! ([`WorkerCtx::new`]), hands it to the engine, and ends it with [`WorkerCtx::finish`], which
//! sends the worker's last snapshot (its XOR share, or its error with the I/O error kind kept,
//! see [`WorkerError`]).
//!
//! The XOR is the lab's checksum, and it is not free: folding a warm 1 MiB block costs ~20 µs,
//! about a fifth of what a page-cache `pread` of it takes. A run with `--checksum none`
//! ([`WorkerCtx::checksum`]) folds nothing: [`WorkerCtx::xor`] returns at once (one predictable
//! branch), engines that compute the XOR themselves ask [`WorkerCtx::xors`] first, and the
//! final snapshot carries no XOR (`None`), so no run that never read its data back can report
//! one.

use super::clock::Clock;
use super::clock::TickTally;
use super::histogram::new_latency_histogram;
use super::pacer::Pacer;
use super::snapshot::{DirectionShare, LoggedOp, MixedSnapshot, PacedSnapshot, WorkerError};
use super::snapshot::{Snapshot, SnapshotKind};
use crate::config::{Checksum, Op};
use crate::xor::xor_at;
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

/// How often a worker sends a snapshot.
pub const SNAPSHOT_INTERVAL: Duration = Duration::from_millis(100);

/// Environment variable that turns per-operation timing off (any value but `0`): no clock reads
/// and no latency histogram, only bytes and operations. For measuring what timing costs
/// (`bench/compare.sh`); results then have empty latency columns.
pub const NO_LATENCY_ENV: &str = "DISKSCOPE_NO_LATENCY";

/// Whether workers started from now on keep every operation's end and latency (`--log-ops`),
/// see [`log_ops`].
static LOG_OPS: AtomicBool = AtomicBool::new(false);

/// Makes the workers started from now on in this process keep a record of every operation
/// ([`LoggedOp`]), sent with each snapshot (`Snapshot::ops_log`) and written by whoever collects
/// them, never by the worker. Per operation it costs one push of 16 bytes into a vector the
/// worker owns (no lock, no syscall); the vector is handed over every 100 ms. Process-wide,
/// because the command line that asks for it runs one run at a time.
pub fn log_ops(on: bool) {
    LOG_OPS.store(on, Ordering::Relaxed);
}

/// Without timing, the clock is read every this many operations to send snapshots on time.
const UNTIMED_CLOCK_EVERY_OPS: u64 = 64;

/// Reads of at most this many bytes chain their timestamps (see [`WorkerCtx::start`]).
pub const CHAIN_MAX_BLOCK_BYTES: usize = 64;

/// Per-worker measurement state handed to engines.
pub struct WorkerCtx {
    worker: usize,
    clock: Clock,
    /// The run's time origin, raw ticks, shared with the runner's start instant: snapshots'
    /// `at_ns` count from it, so a front end that chains runs (the explorer's cold passes) sees
    /// times that never go back, whatever each thread's wake-up delay.
    epoch_raw: u64,
    start_raw: u64,
    last_flush_raw: u64,
    next_event_raw: u64,
    /// The snapshot grid's step, ns.
    flush_every_ns: u64,
    deadline_raw: u64,
    stop: Arc<AtomicBool>,
    tx: Sender<Snapshot>,
    /// Per-operation latencies in raw ticks, moved into `hist` when a snapshot is sent.
    tally: TickTally,
    hist: Histogram<u64>,
    /// Whether operations are timed (see [`NO_LATENCY_ENV`]).
    timing: bool,
    /// Whether an operation starts where the previous one ended (tiny blocks).
    chain: bool,
    /// End of the previous operation, raw ticks; 0 when the chain is broken.
    last_end_raw: u64,
    bytes: u64,
    ops: u64,
    xor: u32,
    /// Whether the data is folded into `xor` (`--checksum xor`, the default); `false`: the
    /// worker never reads the data back and its final snapshot has no XOR.
    xors: bool,
    /// Start of this worker's first operation, raw ticks (0: none yet).
    first_op_raw: u64,
    /// End of its latest operation, raw ticks.
    last_op_raw: u64,
    /// With [`log_ops`]: every operation since the last snapshot, (end, duration) in raw ticks.
    ops_log: Option<Vec<(u64, u64)>>,
    /// Open loop (`--rate`, see [`super::pacer`]): the schedule and the response times; `None`
    /// in a closed-loop run, where it costs one branch per operation.
    paced: Option<Box<Paced>>,
    /// A mixed workload (`--mix`): each direction's counts and latencies apart; `None` in a
    /// pure run, where it costs one branch per operation.
    mixed: Option<Box<Mixed>>,
}

/// A mixed worker's tallies, one per direction, and the direction of the operation being
/// recorded (set by the engine with [`WorkerCtx::direction`]).
struct Mixed {
    op: Op,
    read: DirectionTally,
    write: DirectionTally,
}

/// One direction's counts since the last snapshot.
#[derive(Default)]
struct DirectionTally {
    bytes: u64,
    ops: u64,
    tally: TickTally,
}

impl DirectionTally {
    /// The counts as a snapshot's share (latencies converted to ns), and a fresh start.
    fn take(&mut self, clock: &Clock) -> DirectionShare {
        let mut share = DirectionShare::new();
        self.tally.drain_into(clock, &mut share.latency);
        share.bytes = std::mem::take(&mut self.bytes);
        share.ops = std::mem::take(&mut self.ops);
        share
    }
}

/// A paced worker's schedule and its second histogram.
struct Paced {
    pacer: Pacer,
    /// Intended start of the operation being issued, raw ticks.
    intended_raw: u64,
    /// Response times (intended start → completion) in raw ticks, moved into `hist` per snapshot.
    tally: TickTally,
    hist: Histogram<u64>,
}

/// When a worker's operations ran, in raw ticks of the process clock: the first operation's start
/// and the last one's end. The run's time is the span from the earliest start to the latest end,
/// so neither thread start-up nor buffer setup lands in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpSpan {
    pub first_start_raw: u64,
    pub last_end_raw: u64,
}

/// The first point of the grid `epoch + k × every_ns` after `now` (raw ticks): workers send their
/// snapshots at the first operation that ends past it, so every worker's snapshots cut the run at
/// the same instants and a timeline's intervals (multiples of the snapshot interval) split no
/// snapshot but the one that holds the operation crossing the line.
///
/// Each grid point is converted from nanoseconds on its own, not as `k` times one interval's
/// ticks: that interval's rounding (up to a tick) would grow with `k`, and at 4.5 s an operation
/// the `--log-ops` file dates a few nanoseconds before a boundary was counted after it.
fn next_boundary(clock: &Clock, epoch: u64, now: u64, every_ns: u64) -> u64 {
    let k = clock.delta_ns(epoch, now) / every_ns + 1;
    (epoch + clock.ticks_for_ns(k * every_ns)).max(now + 1)
}

/// The last point of the same grid at or before `now` (raw ticks).
fn last_boundary(clock: &Clock, epoch: u64, now: u64, every_ns: u64) -> u64 {
    let k = clock.delta_ns(epoch, now) / every_ns;
    if k == 0 {
        return epoch;
    }
    (epoch + clock.ticks_for_ns(k * every_ns)).min(now)
}

impl WorkerCtx {
    /// The state of worker `worker` of a run whose time origin is `epoch_raw` (raw ticks of
    /// [`Clock::get`]): snapshots go to `tx`, and [`WorkerCtx::record`] says stop once `stop` is
    /// raised or `duration` has passed.
    pub fn new(
        epoch_raw: u64,
        worker: usize,
        stop: Arc<AtomicBool>,
        tx: Sender<Snapshot>,
        duration: Option<Duration>,
        block_size: usize,
    ) -> Self {
        let clock = Clock::get();
        let timing = std::env::var_os(NO_LATENCY_ENV).is_none_or(|v| v == "0");
        let start_raw = clock.raw();
        let flush_every_ns = SNAPSHOT_INTERVAL.as_nanos() as u64;
        let deadline_raw = duration
            .map(|d| start_raw.saturating_add(clock.ticks_for_ns(d.as_nanos() as u64)))
            .unwrap_or(u64::MAX);
        WorkerCtx {
            epoch_raw,
            worker,
            start_raw,
            last_flush_raw: start_raw,
            next_event_raw: next_boundary(&clock, epoch_raw, start_raw, flush_every_ns)
                .min(deadline_raw),
            flush_every_ns,
            deadline_raw,
            clock,
            stop,
            tx,
            tally: TickTally::default(),
            hist: new_latency_histogram(),
            timing,
            chain: timing && block_size <= CHAIN_MAX_BLOCK_BYTES,
            last_end_raw: 0,
            bytes: 0,
            ops: 0,
            xor: 0,
            xors: true,
            first_op_raw: 0,
            last_op_raw: 0,
            ops_log: (timing && LOG_OPS.load(Ordering::Relaxed)).then(Vec::new),
            paced: None,
            mixed: None,
        }
    }

    /// Sets whether this worker XORs the data it moves (`--checksum`; `xor` unless told):
    /// with [`Checksum::None`] [`WorkerCtx::xor`] does nothing and the final snapshot says the
    /// worker has no XOR.
    pub fn checksum(&mut self, checksum: Checksum) {
        self.xors = checksum.xors();
    }

    /// Whether this worker folds its data into an XOR: an engine that computes the XOR itself
    /// (mmap reads it straight from the mapping) does something else when not.
    #[inline(always)]
    pub fn xors(&self) -> bool {
        self.xors
    }

    /// Counts this worker's reads and writes apart (a mixed workload): the engine says each
    /// operation's direction with [`WorkerCtx::direction`] before recording it, and every
    /// snapshot carries the two shares ([`MixedSnapshot`]).
    pub fn mix(&mut self) {
        self.mixed = Some(Box::new(Mixed {
            op: Op::Read,
            read: DirectionTally::default(),
            write: DirectionTally::default(),
        }));
    }

    /// The direction of the operation recorded next (a mixed workload's; nothing otherwise).
    #[inline(always)]
    pub fn direction(&mut self, op: Op) {
        if let Some(m) = &mut self.mixed {
            m.op = op;
        }
    }

    /// Runs this worker open-loop on `pacer`'s schedule (call it on the worker's thread): [`WorkerCtx::start`] and
    /// [`WorkerCtx::issue`] wait for each intended start, and [`WorkerCtx::record`] also counts
    /// the response time (intended start → completion). Timestamps are never chained then.
    pub fn pace(&mut self, pacer: Pacer) {
        self.chain = false;
        // The pacer sleeps for most of each gap; the default 50 µs of timer slack would make
        // every wake-up late by up to that much. Per thread; a refusal only costs precision.
        // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches only this thread's
        // timer slack; no pointer is passed.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        }
        self.paced = Some(Box::new(Paced {
            pacer,
            intended_raw: 0,
            tally: TickTally::default(),
            hist: new_latency_histogram(),
        }));
    }

    /// Waits for the next intended start; returns the issue time (raw ticks).
    #[cold]
    fn paced_start(&mut self) -> u64 {
        let p = self
            .paced
            .as_mut()
            .expect("paced_start runs only when paced");
        let (intended, issued) = p.pacer.wait(&self.stop, self.deadline_raw);
        p.intended_raw = intended;
        issued
    }

    /// The start timestamp of an operation that never chains (engines that read the clock
    /// themselves): in an open-loop run it first waits for the intended start.
    #[inline(always)]
    pub fn issue(&mut self) -> u64 {
        if self.paced.is_some() {
            return self.paced_start();
        }
        self.now()
    }

    /// Whether this worker runs open-loop (see [`WorkerCtx::pace`]).
    #[inline(always)]
    pub fn paced(&self) -> bool {
        self.paced.is_some()
    }

    /// Whether an open-loop run's next intended start has come (always true in a closed loop):
    /// io_uring submits the next operation only then while others are in flight, and reaps
    /// meanwhile.
    #[inline]
    pub fn due(&self) -> bool {
        self.paced
            .as_ref()
            .is_none_or(|p| p.pacer.due(self.clock.raw()))
    }

    /// The intended start (raw ticks) of the operation last issued with [`WorkerCtx::start`] or
    /// [`WorkerCtx::issue`]; 0 in a closed loop. io_uring keeps it per slot for
    /// [`WorkerCtx::record_intended`].
    #[inline(always)]
    pub fn intended(&self) -> u64 {
        self.paced.as_ref().map_or(0, |p| p.intended_raw)
    }

    /// Like [`WorkerCtx::record`] for an operation whose intended start was `intended` (from
    /// [`WorkerCtx::intended`] when it was issued): operations in flight together each keep
    /// their own.
    #[inline(always)]
    pub fn record_intended(&mut self, bytes: u64, t0: u64, intended: u64, t1: u64) -> bool {
        if let Some(p) = &mut self.paced {
            p.intended_raw = intended;
        }
        self.record(bytes, t0, t1)
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

    /// The start timestamp of a read. For blocks of at most [`CHAIN_MAX_BLOCK_BYTES`] it is the
    /// previous operation's end: a clock read costs ~8 ns here, 5% of a 1-byte `read(2)`, and
    /// between two tiny reads there are only a few ns of bookkeeping (XOR of the byte, the tally
    /// increment), which then count towards the latency. The chain breaks after every snapshot,
    /// so the time spent sending one never lands in an operation. Larger blocks read the clock.
    #[inline(always)]
    pub fn start(&mut self) -> u64 {
        if self.paced.is_some() {
            return self.paced_start();
        }
        if self.last_end_raw != 0 {
            self.last_end_raw
        } else {
            self.now()
        }
    }

    /// Folds `data`, read or written at `offset`, into this worker's XOR when the block is part
    /// of the `first_pass` over the range (so looping runs keep the range's checksum). Does
    /// nothing, and never touches `data`, with `--checksum none`.
    #[inline(always)]
    pub fn xor(&mut self, offset: u64, first_pass: bool, data: &[u8]) {
        if first_pass && self.xors {
            self.xor ^= xor_at(offset, data);
        }
    }

    /// Like [`WorkerCtx::xor`] for an already computed contribution.
    #[inline(always)]
    pub fn xor_value(&mut self, first_pass: bool, x: u32) {
        if first_pass && self.xors {
            self.xor ^= x;
        }
    }

    /// Records one operation of `bytes` that ran from `t0` to `t1` (raw ticks). Returns `false`
    /// when the worker must stop (stop flag or time bound).
    #[inline(always)]
    pub fn record(&mut self, bytes: u64, t0: u64, t1: u64) -> bool {
        let now = if self.timing {
            t1
        } else if (self.ops + 1).is_multiple_of(UNTIMED_CLOCK_EVERY_OPS) {
            self.clock.raw()
        } else {
            0
        };
        // A snapshot that is due goes before this operation is counted: it holds exactly the
        // operations that ended before the grid point it was due at, and this one, which ended
        // past it, is the next snapshot's. So a timeline cut on the grid has every operation in
        // the interval it ended in.
        let event = now >= self.next_event_raw;
        let go = !event || self.on_event(now);
        self.bytes += bytes;
        self.ops += 1;
        if let Some(m) = &mut self.mixed {
            let d = match m.op {
                Op::Read => &mut m.read,
                Op::Write => &mut m.write,
            };
            d.bytes += bytes;
            d.ops += 1;
            if self.timing {
                d.tally.record(t1.saturating_sub(t0));
            }
        }
        if self.first_op_raw == 0 {
            self.first_op_raw = t0.max(1);
        }
        self.last_op_raw = t1;
        if self.timing {
            self.tally.record(t1.saturating_sub(t0));
            if let Some(log) = &mut self.ops_log {
                log.push((t1, t1.saturating_sub(t0)));
            }
            if let Some(p) = &mut self.paced {
                // An operation issued without a pacer wait (none yet) counts from its issue.
                let from = if p.intended_raw == 0 {
                    t0
                } else {
                    p.intended_raw.min(t0)
                };
                p.tally.record(t1.saturating_sub(from));
            }
            // After a snapshot the chain breaks, so sending it never lands in an operation.
            if self.chain && !event {
                self.last_end_raw = t1;
            }
        }
        go && !self.stop.load(Ordering::Relaxed)
    }

    #[cold]
    fn on_event(&mut self, now: u64) -> bool {
        if now >= self.deadline_raw {
            return false;
        }
        let due = self.next_event_raw;
        self.send(due, SnapshotKind::Interval);
        // An operation that spanned several grid points: the next snapshot starts at the last
        // one, since no operation ended in between.
        self.last_flush_raw =
            last_boundary(&self.clock, self.epoch_raw, now, self.flush_every_ns).max(due);
        self.last_end_raw = 0;
        self.next_event_raw = next_boundary(&self.clock, self.epoch_raw, now, self.flush_every_ns)
            .min(self.deadline_raw);
        !self.stop.load(Ordering::Relaxed)
    }

    /// Sends the operations counted so far as the snapshot of the interval from the last one to
    /// `now` (raw ticks).
    fn send(&mut self, now: u64, kind: SnapshotKind) {
        self.tally.drain_into(&self.clock, &mut self.hist);
        let latency = self.hist.clone();
        self.hist.reset();
        let ops_log = match &mut self.ops_log {
            Some(log) => {
                let taken = std::mem::replace(log, Vec::with_capacity(log.capacity()));
                taken
                    .into_iter()
                    .map(|(end, took)| LoggedOp {
                        end_ns: self.clock.delta_ns(self.epoch_raw, end),
                        latency_ns: self.clock.delta_ns(0, took),
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        let paced = self.paced.as_mut().map(|p| {
            p.tally.drain_into(&self.clock, &mut p.hist);
            let response = p.hist.clone();
            p.hist.reset();
            // The backlog of a worker's last snapshot is counted when its last operation ended:
            // what it was behind when it stopped, not what passed while it shut down.
            let at_raw = match kind {
                SnapshotKind::Interval => now,
                _ => self.last_op_raw.max(self.start_raw),
            };
            let at_ns = self.clock.delta_ns(self.epoch_raw, at_raw);
            Box::new(PacedSnapshot {
                response,
                backlog_ops: p.pacer.behind_at(at_ns),
            })
        });
        let mixed = self.mixed.as_mut().map(|m| {
            Box::new(MixedSnapshot {
                read: m.read.take(&self.clock),
                write: m.write.take(&self.clock),
            })
        });
        let snap = Snapshot {
            mixed,
            worker: self.worker,
            at_ns: self.clock.delta_ns(self.epoch_raw, now),
            interval_ns: self.clock.delta_ns(self.last_flush_raw, now),
            bytes: std::mem::take(&mut self.bytes),
            ops: std::mem::take(&mut self.ops),
            latency,
            ops_log,
            paced,
            kind,
        };
        self.last_flush_raw = now;
        // A dropped receiver means nobody listens any more; the stop flag ends us soon.
        let _ = self.tx.send(snap);
    }

    /// Sends the final snapshot and returns when this worker's operations ran (`None` if it did
    /// none). Without timing ([`NO_LATENCY_ENV`]) there are no stamps, and the span runs from
    /// the worker's start to now. A failed `outcome` raises the stop flag, so the other workers
    /// end too.
    pub fn finish(mut self, outcome: &anyhow::Result<bool>) -> Option<OpSpan> {
        let now = self.clock.raw();
        let span = if !self.timing {
            Some(OpSpan {
                first_start_raw: self.start_raw,
                last_end_raw: now,
            })
        } else {
            (self.first_op_raw != 0).then_some(OpSpan {
                first_start_raw: self.first_op_raw,
                last_end_raw: self.last_op_raw.max(self.first_op_raw),
            })
        };
        let kind = match outcome {
            Ok(full_pass) => SnapshotKind::Final {
                xor: self.xors.then_some(self.xor),
                full_pass: *full_pass,
            },
            Err(e) => {
                self.stop.store(true, Ordering::Relaxed);
                SnapshotKind::Failed(WorkerError::of(e))
            }
        };
        self.send(now, kind);
        span
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Arrival;
    use std::sync::mpsc::channel;

    #[test]
    fn a_paced_worker_counts_service_from_the_issue_and_response_from_the_intended_start() {
        let clock = Clock::get();
        let (tx, rx) = channel();
        let epoch = clock.raw();
        let stop = Arc::new(AtomicBool::new(false));
        let mut ctx = WorkerCtx::new(epoch, 0, stop, tx, None, 4096);
        ctx.pace(Pacer::new(
            clock.clone(),
            epoch,
            1000.0,
            Arrival::Constant,
            0,
            1,
        ));
        assert!(ctx.paced());
        // Scripted stamps, no waiting: each operation was due 5 ms before it was issued and
        // took 100 µs once issued.
        let (late, took) = (clock.ticks_for_ns(5_000_000), clock.ticks_for_ns(100_000));
        let base = clock.raw();
        for i in 0..10u64 {
            let intended = base + i * took * 2;
            let t0 = intended + late;
            assert!(ctx.record_intended(4096, t0, intended, t0 + took));
        }
        ctx.finish(&Ok(true));
        let last = rx.try_iter().last().expect("a final snapshot");
        let paced = last
            .paced
            .expect("a paced worker's snapshot carries its response times");
        let close = |ns: u64, want: f64| (ns as f64 / want - 1.0).abs() < 0.02;
        assert!(close(last.latency.value_at_quantile(0.5), 100_000.0));
        assert!(close(paced.response.value_at_quantile(0.5), 5_100_000.0));
        assert_eq!(paced.response.len(), 10);
    }

    /// The final XOR of a worker that moved `data` at offset 0 in 4 KiB blocks, with `checksum`.
    fn final_xor_of(data: &[u8], checksum: Checksum) -> Option<u32> {
        let clock = Clock::get();
        let (tx, rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let mut ctx = WorkerCtx::new(clock.raw(), 0, stop, tx, None, 4096);
        ctx.checksum(checksum);
        assert_eq!(ctx.xors(), checksum == Checksum::Xor);
        for (i, block) in data.chunks(4096).enumerate() {
            let t0 = clock.raw();
            ctx.xor(i as u64 * 4096, true, block);
            ctx.xor_value(true, 0xDEAD_BEEF);
            ctx.xor_value(true, 0xDEAD_BEEF);
            assert!(ctx.record(block.len() as u64, t0, clock.raw()));
        }
        ctx.finish(&Ok(true));
        match rx.try_iter().last().expect("a final snapshot").kind {
            SnapshotKind::Final { xor, full_pass } => {
                assert!(full_pass);
                xor
            }
            other => panic!("not a final snapshot: {other:?}"),
        }
    }

    #[test]
    fn a_worker_with_checksum_none_leaves_the_xor_absent_and_xor_keeps_it() {
        let data: Vec<u8> = (0..3 * 4096 + 5).map(|i| (i * 7 + 3) as u8).collect();
        assert_eq!(final_xor_of(&data, Checksum::None), None);
        let want = crate::xor::xor_aligned(&data);
        assert_ne!(want, 0, "a checksum that cannot be told from none");
        assert_eq!(final_xor_of(&data, Checksum::Xor), Some(want));
    }

    #[test]
    fn a_mixed_worker_counts_each_direction_apart_and_they_add_up_to_the_whole() {
        let clock = Clock::get();
        let (tx, rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let mut ctx = WorkerCtx::new(clock.raw(), 0, stop, tx, None, 4096);
        ctx.mix();
        let took = clock.ticks_for_ns(10_000);
        for i in 0..100u64 {
            let op = if i % 4 == 0 { Op::Write } else { Op::Read };
            ctx.direction(op);
            let t0 = clock.raw();
            assert!(ctx.record(4096, t0, t0 + took));
        }
        ctx.finish(&Ok(true));
        let (mut read, mut write, mut ops, mut lat) = (0, 0, 0, 0);
        for s in rx.try_iter() {
            let m = s
                .mixed
                .expect("a mixed worker's snapshots split the directions");
            assert_eq!(m.read.ops + m.write.ops, s.ops);
            assert_eq!(m.read.bytes + m.write.bytes, s.bytes);
            assert_eq!(
                m.read.latency.len() + m.write.latency.len(),
                s.latency.len()
            );
            (read, write, ops, lat) = (
                read + m.read.ops,
                write + m.write.ops,
                ops + s.ops,
                lat + s.latency.len(),
            );
        }
        assert_eq!((read, write, ops, lat), (75, 25, 100, 100));
    }
}
