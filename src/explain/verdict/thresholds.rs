//! The judge's thresholds, one constant each with why it sits where it does. They are apart from
//! the rules so that a reader (and docs/explain.md) finds every number in one place, and so that
//! front ends that say a threshold (`MIN_OPS`, `MIN_SECONDS`) need not reach into the rules.

/// Below this many bytes moved, a run's byte counts say nothing (a few pages of metadata or
/// read-ahead are a large share of them): the bytes rules are not applied.
pub const MIN_JUDGED_BYTES: u64 = 4 << 20;
/// A cold or O_DIRECT read whose own storage reads were less than this share of the bytes the
/// device holds for it was served by a cache. A clean cold read reads ≥ 0.9× (read-ahead adds,
/// never removes); half is far below.
pub const CACHE_RATIO: f64 = 0.5;
/// A warm read that itself read more than this share of its bytes from storage: its file was
/// evicted under it. A clean warm run reads nothing from storage.
pub const WARM_DEVICE_RATIO: f64 = 0.1;
/// Holes or unwritten extents over this share of the file: a read gets that much as zeros made
/// in memory. A file written in full has none; a twentieth is no rounding.
pub const ZERO_SHARE: f64 = 0.05;
/// Encoded (compressed) extents over this share of the file.
pub const ENCODED_SHARE: f64 = 0.05;
/// A buffered write whose file still held this share of the run's bytes dirty (or under
/// writeback) at its end measured the page cache.
pub const DIRTY_SHARE: f64 = 0.5;
/// Other I/O on the run's device (both directions) beyond this share of the run's own storage
/// bytes: the run shared its device. Metadata and a journal add a few percent.
pub const OTHER_SHARE: f64 = 0.5;
/// ...and at least this many bytes (a small run's metadata is no neighbour).
pub const MIN_OTHER_BYTES: u64 = 16 << 20;
/// A loop device over a file (buffered) whose lower device moved less than this share of what
/// the loop read: its image came from the page cache below.
pub const BELOW_RATIO: f64 = 0.5;
/// The run's own storage bytes at least this share of its bytes: every byte went to the
/// device (the path the run claims is confirmed).
pub const CONFIRMED_RATIO: f64 = 0.9;
/// The run's own storage bytes below this share of its bytes: it never touched a device.
pub const NO_DEVICE_SHARE: f64 = 0.05;
/// CPU time per worker over the run's wall time at which the workers, not the device, set the
/// pace: a thread waiting on a device is off the CPU; one at 85% of a core hardly waits.
pub const CPU_BOUND_SHARE: f64 = 0.85;
/// A read whose workers slept (voluntary context switches, the collecting thread's included)
/// at most once per this many operations never waited for a device.
pub const NEVER_WAITED_OPS_PER_SLEEP: u64 = 1000;
/// ...judged over at least this many operations.
pub const NEVER_WAITED_MIN_OPS: u64 = 100_000;
/// Blocks smaller than a page measure per-call cost whatever the cache.
pub const SMALL_BLOCK_BYTES: u64 = 4096;
/// Some task waited for a CPU during more than this share of the run: it shared its CPUs.
/// One core busy with another process on a 2-core machine stays far below (each has a core);
/// three runnable tasks on two cores are at 100%.
pub const CPU_SOME_PCT: f64 = 50.0;
/// ...and the run's own workers waited for a CPU (run queue, `schedstat`) this share of their
/// time: PSI is the machine's, so a busy machine whose other cores were free cost the run
/// nothing. A worker alone on its core waits ~0; beside two busy loops on two cores, a third.
pub const WORKER_WAIT_SHARE: f64 = 0.2;
/// The hypervisor's steal counts when it can have cost the run more than this share of its
/// time, percent (the steal times the workers' share of their time on a CPU): the same bar as
/// the run's own wait on a run queue ([`WORKER_WAIT_SHARE`]), for time lost to other machines
/// instead of other processes. 10% flagged warm 4K reads under 13-14% steal whose figure moved
/// 6% (twice in 100 clean runs on the lab VM); a cloud VM's routine steal is part of its CPU.
pub const STEAL_PCT: f64 = WORKER_WAIT_SHARE * 100.0;
/// Some task stalled on memory (reclaim, refaults, thrashing) during more than this share of
/// the run. A clean run on a machine with room stalls ~0%.
pub const MEMORY_SOME_PCT: f64 = 10.0;
/// A run shorter than this is shorter than its warm-up: thread start, the first page faults
/// and the queue filling (~1 ms) are 2%, a loaded scheduler's 4 ms tick 8%.
pub const MIN_SECONDS: f64 = 0.05;
/// Fewer operations than this: the mean of n latencies with a CV of 1 is known to ±1.96/√n,
/// ±20% at 100.
pub const MIN_OPS: u64 = 100;
/// A run meant for the device (cold, O_DIRECT, synced writes) shorter than this is shorter than
/// the device's settle time: the queue filling, the read-ahead window growing from 128 KiB,
/// write-back starting, a virtual disk's host cache and a drive's own cache all move the first
/// few hundred milliseconds (a cold 1M read of 0.2 s is not a figure to bet on).
pub const DEVICE_SETTLE_S: f64 = 0.5;
/// ...that is, at least this many of the workers' 100 ms snapshot intervals.
pub const MIN_DEVICE_INTERVALS: u32 = 5;
/// At least this many full intervals before their spread is judged.
pub const MIN_INTERVALS: usize = 3;
/// Intervals whose coefficient of variation exceeds this are too unstable for one figure.
pub const MAX_INTERVAL_CV: f64 = 0.5;
/// At least this share of an O_DIRECT run's slots in more physical pieces than the device
/// takes in one request: their reads split (`engine/layout.rs`).
pub const SPLIT_SHARE: f64 = 0.25;
/// An open-loop run whose response p99 is at least this many times its p99 without its worst
/// tenth (`measure::burst`) has a p99 set by one burst.
pub const BURST_RATIO: f64 = 4.0;
/// ...and by at least this many microseconds.
pub const BURST_MIN_US: f64 = 1000.0;
