//! `diskscope limits [FILE]`: measures, once, the ceilings that bound every read of a file on
//! this machine, and stores them as a [`Profile`] for the model to explain later runs with.
//!
//! Every I/O figure goes through the same runner and engines as `run` ([`RunSpec`] →
//! [`run_blocking`]), so a ceiling and a measurement share their per-operation overhead (clock
//! reads, histogram, XOR). Only the memory ceilings are measured here directly, because they are
//! not I/O: `memcpy` from a large buffer into a small one (what `read(2)` does with cached pages)
//! and the XOR of a large buffer, on 1..=nproc threads at once. A ceiling is the best the
//! machine does, so the CPU-bound figures are the best of [`TRIES`] short tries: on a shared
//! machine one try can lose half its time to another process.
//!
//! Every ceiling keeps the spread of its tries (`(best − worst) / best`, stored as the profile's
//! [`Spread`]), so the model knows how far to trust it, and the profile records its
//! [`Provenance`]: the file read, `--quick` or not, the load average, and the share of the CPUs
//! that other processes used and the hypervisor stole while it ran (from `/proc/stat` less this
//! process's own CPU time). A profile measured under load is stored but marked, and says so
//! wherever it is used. `--quick` does not replace a full profile that still holds (fresh, quiet);
//! it prints its figures and says how to measure a full one.
//!
//! Without FILE, a test file is created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`) in the current
//! directory and removed at the end, on error and on Ctrl-C too. With FILE, the file is only read
//! (its page-cache pages are dropped for the cold-readahead figure, which changes no data).
//!
//! System calls go through rustix's safe wrappers where it has one (the clock tick rate); this
//! process's CPU time is read with libc's `getrusage`, the one `unsafe` left here, because rustix
//! has no `getrusage`.

use super::context::Context;
use super::profile::{
    self, memory_words, now_unix_s, same_memory, DeviceCeiling, MemoryCeiling, MemoryLevel,
    MethodCost, Profile, Provenance, Spread, Stall, Stalls, PROFILE_VERSION,
};
use crate::config::spec::RunSpec;
use crate::config::{usage, Buffers, CacheMode, Method, Pattern};
use crate::measure::RunResult;
use crate::runner::run_blocking;
use crate::text::{shown, shown_path};
use anyhow::{bail, Context as _};
use indicatif::{ProgressBar, ProgressStyle};
use std::hint::black_box;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// How long each measurement step runs, and the size of the test file.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub per_op_step: Duration,
    pub memory_step: Duration,
    pub device_step: Duration,
    pub test_file_bytes: u64,
    /// Source buffer of the memory measurements (larger than the CPU caches).
    pub memory_src_bytes: usize,
    /// The `--quick` budget (recorded in the profile's provenance).
    pub quick: bool,
}

/// The default: about 20 s on a 2-core machine, under a minute on 16 cores.
pub const FULL: Budget = Budget {
    per_op_step: Duration::from_millis(400),
    memory_step: Duration::from_millis(400),
    device_step: Duration::from_millis(1500),
    test_file_bytes: 512 << 20,
    memory_src_bytes: 256 << 20,
    quick: false,
};

/// `--quick`: a few seconds, less precise (for tests and a first look).
pub const QUICK: Budget = Budget {
    per_op_step: Duration::from_millis(100),
    memory_step: Duration::from_millis(100),
    device_step: Duration::from_millis(300),
    test_file_bytes: 32 << 20,
    memory_src_bytes: 64 << 20,
    quick: true,
};

/// Arguments of `diskscope limits`.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitsArgs {
    /// File whose device to measure, read only (default: a test file made and removed in the
    /// current directory)
    pub file: Option<PathBuf>,
    /// Measure again even when a profile is stored
    #[arg(long)]
    pub refresh: bool,
    /// Print the profile as JSON on stdout instead of a table
    #[arg(long)]
    pub json: bool,
    /// Shorter steps and a 32 MiB test file: a few seconds, less precise
    #[arg(long)]
    pub quick: bool,
}

/// Stop flag raised by Ctrl-C (the process's, `crate::interrupt`).
fn stop_flag() -> Arc<AtomicBool> {
    crate::interrupt::stop_flag()
}

/// The entry point of `diskscope limits`.
pub fn execute(a: &LimitsArgs) -> anyhow::Result<i32> {
    let where_ = match &a.file {
        Some(f) => {
            let m = std::fs::metadata(f).map_err(|e| {
                usage(format!(
                    "FILE: cannot read {}: {e}; give an existing file",
                    shown_path(f)
                ))
            })?;
            if !m.is_file() {
                return Err(usage(format!(
                    "FILE: {} is not a regular file; give a file on the device to measure",
                    shown_path(f)
                )));
            }
            f.clone()
        }
        None => std::env::current_dir().context("finding the current directory")?,
    };
    let ctx = Context::collect(&where_);
    let path = profile::profile_path(&ctx);
    let stored = profile::load_for(&ctx);
    if !a.refresh {
        if let Some(p) = &stored {
            print_profile(p, a.json)?;
            crate::eprintln_shown!(
                "limits: stored profile {} (measured {} s ago); --refresh measures again",
                path.as_deref().map(shown_path).unwrap_or_default(),
                now_unix_s().saturating_sub(p.measured_unix_s)
            );
            if let Some(s) = p.doubts(&ctx, now_unix_s()) {
                crate::eprintln_shown!("warning: {s}");
            }
            return Ok(0);
        }
    }
    for w in &ctx.warnings {
        crate::eprintln_shown!("warning: {}", shown(w));
    }
    let budget = if a.quick { QUICK } else { FULL };
    let stop = stop_flag();
    let started = Instant::now();
    let p = match measure(a.file.as_deref(), &where_, ctx.clone(), budget, &stop) {
        Ok(p) => p,
        // Ctrl-C: the test file is already removed (dropped with the error) and nothing was
        // stored; exit as batch mode does.
        Err(_) if stop.load(Ordering::SeqCst) => {
            eprintln!("limits: interrupted; no profile stored, the test file was removed");
            return Ok(crate::config::EXIT_INTERRUPTED);
        }
        Err(e) => return Err(e),
    };
    let kept = stored.filter(|old| !quick_may_replace(old, &p, &ctx));
    print_profile(&p, a.json)?;
    if let Some(old) = kept {
        crate::eprintln_shown!("limits: measured in {:.1} s; --quick did not replace the full profile {} (measured {} s ago, quiet and fresh): run `diskscope limits --refresh` without --quick to measure it again",
            started.elapsed().as_secs_f64(),
            path.as_deref().map(shown_path).unwrap_or_default(),
            now_unix_s().saturating_sub(old.measured_unix_s));
        return Ok(0);
    }
    let path = profile::store(&p)?;
    crate::eprintln_shown!(
        "limits: measured in {:.1} s, stored {}",
        started.elapsed().as_secs_f64(),
        shown_path(&path)
    );
    if let Some(s) = p.doubts(&ctx, now_unix_s()) {
        crate::eprintln_shown!("warning: {s}");
    }
    Ok(0)
}

/// Whether the new profile `new` may replace the stored `old`: always, unless `new` is a
/// `--quick` one and `old` is a full one that still holds (fresh, measured on a quiet machine).
/// When a quick one does replace a full one, it says so on stderr.
fn quick_may_replace(old: &Profile, new: &Profile, now: &Context) -> bool {
    let quick = |p: &Profile| p.provenance.as_ref().is_some_and(|pv| pv.quick);
    if !quick(new) || quick(old) {
        return true;
    }
    let Some(pv) = &old.provenance else {
        eprintln!("limits: --quick replaces a profile of unknown precision (stored before limits kept its provenance)");
        return true;
    };
    let why = match (old.staleness(now, now_unix_s()), pv.under_load()) {
        (Some(_), _) => "stale",
        (None, true) => "measured under load",
        (None, false) => return false,
    };
    crate::eprintln_shown!(
        "limits: --quick replaces the full profile, which was {why}; its figures are less precise"
    );
    true
}

/// A test file we created; removed on drop.
struct OwnedFile(PathBuf);

impl Drop for OwnedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Creates the test file exclusively in `dir` with the deterministic pattern, synced to disk.
fn create_test_file(dir: &Path, bytes: u64, stop: &AtomicBool) -> anyhow::Result<OwnedFile> {
    let free = crate::fsguard::free_bytes(dir).unwrap_or(u64::MAX);
    if free < bytes.saturating_mul(2) {
        bail!(
            "not enough free space in {} for a {} MiB test file ({} MiB free); free some space or give FILE",
            crate::text::shown_path(dir),
            bytes >> 20,
            free >> 20
        );
    }
    let path = dir.join(format!(".diskscope-limits-{}.bin", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .with_context(|| format!("creating the test file {}", crate::text::shown_path(&path)))?;
    let owned = OwnedFile(path);
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0;
    while off < bytes {
        if stop.load(Ordering::Relaxed) {
            bail!("interrupted");
        }
        let n = (buf.len() as u64).min(bytes - off) as usize;
        crate::pattern::fill(crate::pattern::DEFAULT_SEED, off, &mut buf[..n]);
        f.write_all_at(&buf[..n], off).with_context(|| {
            format!(
                "writing the test file {}",
                crate::text::shown_path(&owned.0)
            )
        })?;
        off += n as u64;
    }
    f.sync_all().context("syncing the test file")?;
    Ok(owned)
}

/// One read run through the library's runner; stops early when `stop` is raised.
fn run_read(spec: &RunSpec, stop: &Arc<AtomicBool>) -> anyhow::Result<RunResult> {
    if stop.load(Ordering::Relaxed) {
        bail!("interrupted");
    }
    Ok(run_blocking(spec, "limits", stop.clone(), |_, _| {})?.result)
}

/// A time-bound read spec of the file.
fn timed(path: &Path, method: Method, bs: u64, d: Duration) -> RunSpec {
    let mut s = RunSpec::new(path);
    s.setup.method = method;
    s.setup.block_size_bytes = bs;
    s.target.duration = Some(d);
    s.target.loop_range = true;
    s
}

/// Thread counts for the memory ceiling: every count up to 8, then powers of two, then nproc
/// (so a 128-core machine still measures in about a minute).
fn thread_counts(nproc: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=nproc.min(8)).collect();
    let mut t = 16;
    while t < nproc {
        v.push(t);
        t *= 2;
    }
    if nproc > 8 {
        v.push(nproc);
    }
    v
}

/// Sizes of the L2 and last-level caches of CPU 0, bytes (sysfs), with common defaults.
pub fn cache_sizes() -> (u64, u64) {
    let mut l2 = 0;
    let mut llc = 0;
    for i in 0..8 {
        let d = PathBuf::from(format!("/sys/devices/system/cpu/cpu0/cache/index{i}"));
        let read = |f: &str| std::fs::read_to_string(d.join(f)).ok();
        let (Some(level), Some(size)) = (read("level"), read("size")) else {
            continue;
        };
        if read("type").is_some_and(|t| t.trim() == "Instruction") {
            continue;
        }
        let Ok(bytes) = crate::size::parse_size(size.trim()) else {
            continue;
        };
        match level.trim() {
            "2" => l2 = bytes,
            "3" | "4" => llc = llc.max(bytes),
            _ => {}
        }
    }
    let l2 = if l2 == 0 { 1 << 20 } else { l2 };
    (l2, llc.max(l2 * 4))
}

/// What one memory measurement does with each piece of its source.
#[derive(Debug, Clone, Copy)]
enum MemWork {
    /// memcpy into a buffer of this many bytes.
    Copy(usize),
    /// XOR the source in place, 1 MiB at a time.
    Xor,
}

/// Short tries per ceiling: a ceiling is the best the machine does, so the best try counts (a
/// try slowed by another process's burst says nothing about the ceiling).
pub const TRIES: u32 = 3;

/// The best of some tries and how much they spread: `(best, (best − worst) / best in percent)`
/// (0 spread for a single try or none above zero).
pub fn best_and_spread(tries: &[f64]) -> (f64, f64) {
    let best = tries.iter().copied().fold(0.0, f64::max);
    let worst = tries.iter().copied().fold(f64::INFINITY, f64::min);
    if best <= 0.0 || !worst.is_finite() {
        return (best.max(0.0), 0.0);
    }
    (
        best,
        (100.0 * (best - worst.max(0.0)) / best).clamp(0.0, 100.0),
    )
}

/// The best of [`TRIES`] measurements of `work`, each a third of `d`, and their spread.
fn memory_rate_mib_s(src: &[u8], threads: usize, work: MemWork, d: Duration) -> (f64, f64) {
    let tries: Vec<f64> = (0..TRIES)
        .map(|_| memory_rate_once(src, threads, work, d / TRIES))
        .collect();
    best_and_spread(&tries)
}

/// CPU time of the whole machine, from the first line of `/proc/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTicks {
    /// user + nice + system + irq + softirq (guest time is inside user).
    pub busy: u64,
    /// Stolen by the hypervisor.
    pub steal: u64,
    /// Everything: busy, idle, iowait and steal.
    pub total: u64,
}

/// The `cpu` line of `/proc/stat`; None when it is missing or malformed.
pub fn parse_proc_stat(text: &str) -> Option<CpuTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    let (user, nice, system, idle, iowait, irq, softirq, steal) =
        (at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7));
    let busy = user + nice + system + irq + softirq;
    Some(CpuTicks {
        busy,
        steal,
        total: busy + idle + iowait + steal,
    })
}

/// The 1-minute load average from the text of `/proc/loadavg`.
pub fn parse_load_avg_1m(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// User and system CPU time of this process (all its threads), seconds.
fn self_cpu_s() -> f64 {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the rusage we own; RUSAGE_SELF is a valid `who`.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The pressure stalls from a start (`since`) to now: what a family of ceilings was measured
/// under (`profile::Stall`). A kernel without PSI gives none.
struct StallWatch {
    pressure: crate::facts::pressure::Pressure,
    started: Instant,
}

impl StallWatch {
    fn start() -> StallWatch {
        StallWatch {
            pressure: crate::facts::pressure::Pressure::now(),
            started: Instant::now(),
        }
    }

    fn finish(&self) -> Option<Stall> {
        use crate::facts::pressure::share_pct;
        let now = crate::facts::pressure::Pressure::now();
        let us = self.started.elapsed().as_secs_f64() * 1e6;
        let a = &self.pressure;
        Some(Stall {
            cpu_some_pct: share_pct(a.cpu_some_us, now.cpu_some_us, us)?,
            io_some_pct: share_pct(a.io_some_us, now.io_some_us, us).unwrap_or(0.0),
            memory_some_pct: share_pct(a.memory_some_us, now.memory_some_us, us).unwrap_or(0.0),
        })
    }
}

/// What the machine did while `limits` measured: a snapshot at the start, compared at the end.
struct LoadWatch {
    ticks: Option<CpuTicks>,
    self_cpu_s: f64,
    load_avg_1m: f64,
    started: Instant,
}

impl LoadWatch {
    fn start() -> LoadWatch {
        LoadWatch {
            ticks: std::fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|t| parse_proc_stat(&t)),
            self_cpu_s: self_cpu_s(),
            load_avg_1m: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|t| parse_load_avg_1m(&t))
                .unwrap_or(0.0),
            started: Instant::now(),
        }
    }

    /// The provenance of a profile measured since [`LoadWatch::start`] on `file`.
    fn finish(&self, file: &Path, file_bytes: u64, quick: bool) -> Provenance {
        let now = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|t| parse_proc_stat(&t));
        let hz = rustix::param::clock_ticks_per_second().max(1) as f64;
        let (others_cpu_pct, steal_pct) = match (self.ticks, now) {
            (Some(a), Some(b)) => others_and_steal_pct(a, b, hz, self_cpu_s() - self.self_cpu_s),
            _ => (0.0, 0.0),
        };
        Provenance {
            file: file.display().to_string(),
            file_bytes,
            quick,
            load_avg_1m: self.load_avg_1m,
            others_cpu_pct,
            steal_pct,
            seconds: self.started.elapsed().as_secs_f64(),
        }
    }
}

/// The share of all CPU time that other processes used and that was stolen between two
/// `/proc/stat` snapshots, percent, given this process's own CPU seconds in between.
pub fn others_and_steal_pct(a: CpuTicks, b: CpuTicks, hz: f64, self_cpu_s: f64) -> (f64, f64) {
    let total = b.total.saturating_sub(a.total) as f64;
    if total <= 0.0 {
        return (0.0, 0.0);
    }
    let busy = b.busy.saturating_sub(a.busy) as f64;
    let steal = b.steal.saturating_sub(a.steal) as f64;
    let others = (busy - self_cpu_s * hz).max(0.0);
    (
        (100.0 * others / total).clamp(0.0, 100.0),
        (100.0 * steal / total).clamp(0.0, 100.0),
    )
}

/// MiB per second of `threads` threads doing `work` over disjoint parts of `src`, summed.
fn memory_rate_once(src: &[u8], threads: usize, work: MemWork, d: Duration) -> f64 {
    let barrier = Barrier::new(threads);
    let chunk = src.len() / threads;
    let piece_bytes = match work {
        MemWork::Copy(b) => b.min(chunk).max(1),
        MemWork::Xor => (1 << 20).min(chunk).max(1),
    };
    let bytes_per_s: f64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let mine = &src[t * chunk..(t + 1) * chunk];
                let barrier = &barrier;
                s.spawn(move || {
                    let mut dst = match work {
                        MemWork::Xor => Vec::new(),
                        _ => vec![1u8; piece_bytes],
                    };
                    barrier.wait();
                    let start = Instant::now();
                    let mut done = 0u64;
                    let mut acc = 0u32;
                    while start.elapsed() < d {
                        for piece in mine.chunks(piece_bytes) {
                            match work {
                                MemWork::Xor => acc ^= crate::xor::xor_aligned(piece),
                                MemWork::Copy(_) => {
                                    dst[..piece.len()].copy_from_slice(piece);
                                    black_box(&mut dst);
                                }
                            }
                            done += piece.len() as u64;
                        }
                    }
                    black_box(acc);
                    (done, start.elapsed())
                })
            })
            .collect();
        // All bytes over the longest thread's time: summing per-thread rates would count twice
        // the bandwidth of threads that took turns on a busy machine instead of running together.
        let (bytes, longest) = hs
            .into_iter()
            .map(|h| h.join().unwrap_or((0, Duration::ZERO)))
            .fold((0u64, Duration::ZERO), |(b, l), (d, e)| (b + d, l.max(e)));
        bytes as f64 / longest.as_secs_f64().max(1e-9)
    });
    bytes_per_s / (1024.0 * 1024.0)
}

/// Copy and XOR apart for `threads` threads, from memory to a buffer that fits L2 (the
/// buffer-size levels are measured through the page cache by [`read_levels`]), with the larger
/// spread of the two.
fn memory_ceiling(src: &[u8], threads: usize, d: Duration) -> (MemoryCeiling, f64) {
    let (l2, _) = cache_sizes();
    let small = (l2 / 2).min((src.len() / threads) as u64);
    let (copy_mib_s, copy_spread) =
        memory_rate_mib_s(src, threads, MemWork::Copy(small as usize), d);
    let (xor_mib_s, xor_spread) = memory_rate_mib_s(src, threads, MemWork::Xor, d);
    let m = MemoryCeiling {
        threads,
        copy_mib_s,
        xor_mib_s,
        read_levels: Vec::new(),
    };
    (m, copy_spread.max(xor_spread))
}

/// The memory family measured again, now, for `threads` threads: copy and XOR of a 64 MiB
/// buffer, [`TRIES`] tries of 100 ms each (under a second in all), with their spread and the
/// stalls they ran under. A stored memory ceiling is only as good as the quiet it was measured
/// in, and this one can be had in a second, so a result that lands above its memory bound is
/// judged against the machine as it is now (`explain::judge_result`): each ceiling of that
/// thread count becomes the better of the stored and the fresh one, the copy levels scaled by
/// the same factor, and the family's spread and stalls are the fresh tries'.
pub fn refresh_memory(p: &mut Profile, threads: usize) {
    let src_bytes = 64usize << 20;
    if crate::engine::setup::mem_available_bytes().unwrap_or(0) < (src_bytes as u64) * 8 {
        return;
    }
    let threads = threads.max(1);
    let mut src = vec![0u8; src_bytes];
    crate::pattern::fill(crate::pattern::DEFAULT_SEED, 0, &mut src);
    let watch = StallWatch::start();
    let (fresh, sp) = memory_ceiling(&src, threads, Duration::from_millis(100) * TRIES);
    let stall = watch.finish();
    let Some(m) = p.memory.iter_mut().find(|m| m.threads == threads) else {
        return;
    };
    let gain = ((fresh.copy_mib_s / m.copy_mib_s.max(1e-9))
        .min(fresh.xor_mib_s / m.xor_mib_s.max(1e-9)))
    .max(1.0);
    m.copy_mib_s = m.copy_mib_s.max(fresh.copy_mib_s);
    m.xor_mib_s = m.xor_mib_s.max(fresh.xor_mib_s);
    for l in &mut m.read_levels {
        l.copy_xor_mib_s *= gain;
    }
    if let Some(s) = p.spread.as_mut() {
        s.memory_pct = sp;
        let stalls = s.stalls.get_or_insert_with(Stalls::default);
        stalls.memory = stall;
    }
}

/// What reading a cached file costs per byte, beyond the call, at three block sizes: one whose
/// buffer stays in L2 (64 KiB), two that fit the last-level cache with the data streaming
/// through it easily (LLC / 8 / threads) or hardly (LLC / 2 / threads), and one far beyond it
/// (4 × LLC / threads). Measured with the `read` engine on a warm file, the
/// kernel's own copy included, best of [`TRIES`]; the per-call cost `t_call_s` is taken out
/// so the model can add it back at any block size. Levels the file is too small for are left out.
/// Every size is measured into plain 4 KiB-page buffers and into transparent huge pages (the
/// kernel's copy into one and the other differ by up to 3×, issue 20); each level records the
/// memory the run obtained, and a huge-page pass that got plain pages adds nothing.
/// Returns the levels and the largest spread of their tries.
fn read_levels(
    path: &Path,
    file_bytes: u64,
    threads: usize,
    t_call_s: f64,
    d: Duration,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<(Vec<MemoryLevel>, f64)> {
    let (_, llc) = cache_sizes();
    let per_thread_file = file_bytes / threads as u64;
    let t = threads as u64;
    let mut sizes = vec![
        64u64 << 10,
        (llc / 8 / t).max(128 << 10),
        (llc / 2 / t).max(256 << 10),
        (4 * llc / t).max(1 << 20),
    ];
    sizes.sort_unstable();
    sizes.dedup();
    let mut levels: Vec<MemoryLevel> = Vec::new();
    let mut spread: f64 = 0.0;
    let sizes: Vec<u64> = sizes
        .into_iter()
        .filter(|&b| b * 4 <= per_thread_file)
        .collect();
    for want in [Buffers::Plain, Buffers::Thp] {
        for &bs in &sizes {
            let mut s = timed(path, Method::Read, bs, d / TRIES);
            s.setup.threads = threads;
            s.setup.cache = CacheMode::Warm;
            s.setup.buffers = want;
            let mut tries = Vec::new();
            let mut got = want;
            for _ in 0..TRIES {
                let r = run_read(&s, stop)?;
                got = r.setup.buffers.known().unwrap_or(want);
                tries.push(r.figures.mib_s);
            }
            let known = levels
                .iter()
                .any(|l| l.buffer_bytes == bs && same_memory(l.buffers, got));
            if known {
                continue;
            }
            if let Some(level) = level_of(&tries, bs, threads, t_call_s, got, &mut spread) {
                levels.push(level);
            }
        }
    }
    levels.sort_by_key(|l| (l.buffers != Buffers::Plain, l.buffer_bytes));
    Ok((levels, spread))
}

/// The level of one buffer size and memory from the throughput of its tries (None when none
/// moved a byte); widens `spread` by theirs.
fn level_of(
    tries: &[f64],
    bs: u64,
    threads: usize,
    t_call_s: f64,
    buffers: Buffers,
    spread: &mut f64,
) -> Option<MemoryLevel> {
    let (best_mib_s, level_spread) = best_and_spread(tries);
    if best_mib_s <= 0.0 {
        return None;
    }
    *spread = spread.max(level_spread);
    let per_thread_bytes_s = best_mib_s * 1024.0 * 1024.0 / threads as f64;
    let t_op = bs as f64 / per_thread_bytes_s;
    let t_mem = (t_op - t_call_s).max(t_op * 0.05);
    Some(MemoryLevel {
        buffer_bytes: bs,
        copy_xor_mib_s: threads as f64 * bs as f64 / t_mem / (1024.0 * 1024.0),
        buffers,
    })
}

fn progress(steps: u64) -> ProgressBar {
    let pb = ProgressBar::new(steps);
    pb.set_style(
        ProgressStyle::with_template("limits [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// Measures every ceiling (see the module doc).
pub fn measure(
    file: Option<&Path>,
    where_: &Path,
    ctx: Context,
    budget: Budget,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<Profile> {
    let nproc = ctx.cpu_count.max(1);
    let counts = thread_counts(nproc);
    let steps = 1 + Method::ALL.len() as u64 + counts.len() as u64 + 8 + 1;
    let pb = progress(steps);
    let mut notes = Vec::new();
    let watch = LoadWatch::start();
    let mut spread = Spread {
        tries: TRIES,
        ..Default::default()
    };

    pb.set_message("creating the test file");
    let owned = match file {
        Some(_) => None,
        None => Some(create_test_file(where_, budget.test_file_bytes, stop)?),
    };
    let path: PathBuf = match (&owned, file) {
        (Some(o), _) => o.0.clone(),
        (None, Some(f)) => f.to_path_buf(),
        (None, None) => unreachable!("a test file is made when no FILE is given"),
    };
    let file_bytes = std::fs::metadata(&path)?.len();
    if file_bytes < 1 << 20 {
        return Err(usage(format!(
            "FILE: {} has {file_bytes} bytes; limits needs at least 1 MiB to read",
            crate::text::shown_path(&path)
        )));
    }
    pb.inc(1);

    let mut stalls = Stalls::default();
    // 1. Per-operation cost: 1-byte reads of the first MiB, cached.
    let watch_family = StallWatch::start();
    let mut methods = Vec::new();
    for &m in Method::ALL {
        pb.set_message(format!("{m}: 1-byte reads"));
        let mut s = timed(&path, m, 1, budget.per_op_step / TRIES);
        s.target.block_count = Some(1 << 20);
        s.setup.cache = CacheMode::Warm;
        let tries: anyhow::Result<Vec<f64>> = (0..TRIES + 2)
            .map(|_| run_read(&s, stop).map(|r| r.figures.iops))
            .collect();
        match tries.map(|t| best_and_spread(&t)) {
            Ok((ops_per_s, sp)) => {
                spread.methods_pct = spread.methods_pct.max(sp);
                methods.push(MethodCost {
                    method: m,
                    ops_per_s,
                })
            }
            Err(e) if stop.load(Ordering::Relaxed) => return Err(e),
            Err(e) => notes.push(format!("{m} per-operation cost not measured: {e:#}")),
        }
        pb.inc(1);
    }

    stalls.methods = watch_family.finish();

    // 2. Memory ceilings.
    let watch_family = StallWatch::start();
    let mut memory = Vec::new();
    let src_bytes = budget
        .memory_src_bytes
        .min((crate::engine::setup::mem_available_bytes().unwrap_or(0) / 8) as usize);
    if src_bytes < 16 << 20 {
        notes.push("memory ceiling not measured: less than 128 MiB of memory available".into());
        pb.inc(counts.len() as u64);
    } else {
        let mut src = vec![0u8; src_bytes];
        crate::pattern::fill(crate::pattern::DEFAULT_SEED, 0, &mut src);
        for &t in &counts {
            if stop.load(Ordering::Relaxed) {
                bail!("interrupted");
            }
            pb.set_message(format!("memory: copy and XOR on {t} thread(s)"));
            let (mut m, sp) = memory_ceiling(&src, t, budget.memory_step);
            let t_call_s = methods
                .iter()
                .find(|c| c.method == Method::Read)
                .map_or(0.0, |c| 1.0 / c.ops_per_s);
            let (levels, level_sp) =
                read_levels(&path, file_bytes, t, t_call_s, budget.memory_step, stop)?;
            m.read_levels = levels;
            spread.memory_pct = spread.memory_pct.max(sp).max(level_sp);
            memory.push(m);
            pb.inc(1);
        }
    }

    stalls.memory = watch_family.finish();

    // 3. The device with O_DIRECT, into huge-page buffers (what `auto` gives O_DIRECT) and
    // into plain pages (a 1 MiB request into 4 KiB pages may be split).
    let watch_family = StallWatch::start();
    let mut devices: Vec<DeviceCeiling> = Vec::new();
    for want in [Buffers::Auto, Buffers::Plain] {
        let d = device_ceiling(&path, budget, want, stop, &pb, &mut notes, &mut spread)?;
        match d {
            Some(d) if !devices.iter().any(|o| same_memory(o.buffers, d.buffers)) => {
                devices.push(d)
            }
            Some(_) => {}
            // O_DIRECT is refused here: the other memory would be refused too.
            None if devices.is_empty() => {
                pb.inc(4);
                break;
            }
            None => {}
        }
    }
    if devices.is_empty() {
        spread.device_pct = None;
    }
    stalls.device = watch_family.finish();

    // 4. Cold readahead: buffered sequential reads of a file just dropped from the cache, best
    // of the tries where the eviction held.
    pb.set_message("device: cold readahead (1M reads)");
    let watch_family = StallWatch::start();
    let mut s = RunSpec::new(&path);
    s.setup.method = Method::Read;
    s.setup.cache = CacheMode::Cold;
    s.target.block_count = Some(file_bytes.div_ceil(1 << 20));
    s.target.duration = Some(budget.device_step * 2 / TRIES);
    let mut readahead_tries = Vec::new();
    let mut readahead_note = None;
    for _ in 0..TRIES {
        match run_read(&s, stop) {
            Ok(r) if r.figures.residency_before_pct < 10.0 => readahead_tries.push(r.figures.mib_s),
            Ok(r) => {
                readahead_note = Some(format!(
                    "cold readahead not measured: {:.0}% of the file stayed cached after eviction",
                    r.figures.residency_before_pct
                ))
            }
            Err(e) if stop.load(Ordering::Relaxed) => return Err(e),
            Err(e) => readahead_note = Some(format!("cold readahead not measured: {e:#}")),
        }
    }
    stalls.readahead = watch_family.finish();
    spread.stalls = Some(stalls);
    let cold_readahead_mib_s = if readahead_tries.is_empty() {
        notes.extend(readahead_note);
        None
    } else {
        let (best, sp) = best_and_spread(&readahead_tries);
        spread.readahead_pct = Some(sp);
        Some(best)
    };
    pb.inc(1);
    pb.finish_and_clear();
    drop(owned);
    Ok(Profile {
        version: PROFILE_VERSION,
        measured_unix_s: now_unix_s(),
        context: ctx,
        methods,
        memory,
        devices,
        cold_readahead_mib_s,
        notes,
        spread: Some(spread),
        provenance: Some(watch.finish(&path, file_bytes, budget.quick)),
        cores_now: None,
    })
}

/// The four O_DIRECT figures of the device with buffers of `buffers` (`auto`: the most
/// contiguous memory offered), recording the memory the runs obtained; None when O_DIRECT is
/// refused or a figure the model needs could not be had (said in `notes`).
fn device_ceiling(
    path: &Path,
    budget: Budget,
    buffers: Buffers,
    stop: &Arc<AtomicBool>,
    pb: &ProgressBar,
    notes: &mut Vec<String>,
    spread: &mut Spread,
) -> anyhow::Result<Option<DeviceCeiling>> {
    let direct_specs = [
        (
            Method::Pread,
            1u64 << 20,
            1u32,
            Pattern::Sequential,
            "sequential 1M, QD 1",
        ),
        (
            Method::IoUring,
            1 << 20,
            32,
            Pattern::Sequential,
            "sequential 1M, QD 32",
        ),
        (Method::Pread, 4096, 1, Pattern::Random, "random 4K, QD 1"),
        (
            Method::IoUring,
            4096,
            32,
            Pattern::Random,
            "random 4K, QD 32",
        ),
    ];
    let mut dev = DeviceCeiling {
        seq_qd1_mib_s: 0.0,
        seq_qd32_mib_s: 0.0,
        rand4k_qd1_iops: 0.0,
        rand4k_qd32_iops: 0.0,
        buffers,
    };
    let words = match buffers {
        Buffers::Auto => "huge-page".to_string(),
        b => memory_words(b).to_string(),
    };
    for (i, (m, bs, qd, pat, what)) in direct_specs.into_iter().enumerate() {
        pb.set_message(format!("device: {what} (O_DIRECT, {words} buffers)"));
        let mut s = timed(path, m, bs, budget.device_step / TRIES);
        s.setup.direct = true;
        s.setup.queue_depth = qd;
        s.setup.pattern = pat;
        s.setup.buffers = buffers;
        // Best of the tries: a device shared with other guests has stalls that are not its
        // ceiling. Sequential figures are MiB/s, random ones IOPS.
        let tries: anyhow::Result<Vec<RunResult>> =
            (0..TRIES).map(|_| run_read(&s, stop)).collect();
        match tries {
            Ok(rs) => {
                let figures: Vec<f64> = rs
                    .iter()
                    .map(|r| {
                        if i < 2 {
                            r.figures.mib_s
                        } else {
                            r.figures.iops
                        }
                    })
                    .collect();
                let (best, sp) = best_and_spread(&figures);
                // The memory of the 1 MiB requests names the ceiling (a 4 KiB buffer is one
                // page whatever was asked).
                if i == 0 {
                    if let Some(b) = rs.last().and_then(|r| r.setup.buffers.known()) {
                        dev.buffers = b;
                    }
                }
                spread.device_pct = Some(spread.device_pct.unwrap_or(0.0).max(sp));
                match i {
                    0 => dev.seq_qd1_mib_s = best,
                    1 => dev.seq_qd32_mib_s = best,
                    2 => dev.rand4k_qd1_iops = best,
                    _ => dev.rand4k_qd32_iops = best,
                }
            }
            Err(e) if stop.load(Ordering::Relaxed) => return Err(e),
            Err(e) => {
                notes.push(format!(
                    "device {what} ({words} buffers) not measured: {e:#}"
                ));
                if i == 0 {
                    pb.inc(4);
                    return Ok(None);
                }
            }
        }
        pb.inc(1);
    }
    if dev.seq_qd1_mib_s <= 0.0 || dev.rand4k_qd1_iops <= 0.0 || dev.buffers == Buffers::Auto {
        return Ok(None);
    }
    if dev.seq_qd32_mib_s > 0.0 && dev.seq_qd32_mib_s < dev.seq_qd1_mib_s {
        notes.push(format!(
            "sequential 1M at QD 32 ({:.0} MiB/s) came out below QD 1 ({:.0} MiB/s) with {} buffers: the device was shared or busy; measure again on a quiet machine",
            dev.seq_qd32_mib_s, dev.seq_qd1_mib_s, memory_words(dev.buffers)
        ));
    }
    Ok(Some(dev))
}

/// The profile as a table (or JSON) on stdout.
pub fn print_profile(p: &Profile, json: bool) -> anyhow::Result<()> {
    let text = if json {
        serde_json::to_string_pretty(p)? + "\n"
    } else {
        crate::text::shown_lines(&table(p)).into_owned()
    };
    crate::text::write_stdout(text.as_bytes())
}

/// The human table of a profile.
pub fn table(p: &Profile) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "context: {}", p.context);
    match &p.provenance {
        Some(pv) => {
            let _ = writeln!(s, "{}", pv.summary());
        }
        None => {
            let _ = writeln!(
                s,
                "measured on an unknown file under unknown load (stored before limits kept it)"
            );
        }
    }
    match &p.spread {
        Some(sp) => {
            let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}%"));
            let _ = writeln!(
                s,
                "spread over {} tries (best − worst): per-operation {:.0}%, memory {:.0}%, device {}, readahead {}",
                sp.tries,
                sp.methods_pct,
                sp.memory_pct,
                opt(sp.device_pct),
                opt(sp.readahead_pct)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "spread unknown: stored before limits kept it, so its error is unknown"
            );
        }
    }
    let _ = writeln!(s, "\nper-operation cost (1-byte reads, cached, one thread)");
    let _ = writeln!(s, "  {:<10} {:>14} {:>10}", "method", "ops/s", "ns/op");
    for m in &p.methods {
        let _ = writeln!(
            s,
            "  {:<10} {:>14.0} {:>10.1}",
            m.method.as_str(),
            m.ops_per_s,
            1e9 / m.ops_per_s.max(1e-9)
        );
    }
    let _ = writeln!(
        s,
        "\nmemory ceiling (sum over threads; copy+XOR by buffer size per thread and buffer memory)"
    );
    let _ = writeln!(
        s,
        "  {:>7} {:>11} {:>11}  copy+XOR MiB/s",
        "threads", "copy MiB/s", "XOR MiB/s"
    );
    for m in &p.memory {
        let levels: Vec<String> = m
            .read_levels
            .iter()
            .map(|l| {
                format!(
                    "{:.0} @ {} {}",
                    l.copy_xor_mib_s,
                    crate::size::format_bytes_approx(l.buffer_bytes),
                    l.buffers
                )
            })
            .collect();
        let _ = writeln!(
            s,
            "  {:>7} {:>11.0} {:>11.0}  {}",
            m.threads,
            m.copy_mib_s,
            m.xor_mib_s,
            levels.join(", ")
        );
    }
    let _ = writeln!(s, "\ndevice (O_DIRECT)");
    if p.devices.is_empty() {
        let _ = writeln!(s, "  not measured");
    }
    for d in &p.devices {
        let _ = writeln!(s, "  {} buffers ({}):", memory_words(d.buffers), d.buffers);
        let _ = writeln!(
            s,
            "    sequential 1M: {:.0} MiB/s at QD 1, {:.0} MiB/s at QD 32",
            d.seq_qd1_mib_s, d.seq_qd32_mib_s
        );
        let _ = writeln!(
            s,
            "    random 4K:     {:.0} IOPS at QD 1, {:.0} IOPS at QD 32",
            d.rand4k_qd1_iops, d.rand4k_qd32_iops
        );
    }
    match p.cold_readahead_mib_s {
        Some(v) => {
            let _ = writeln!(s, "  cold readahead (buffered 1M reads): {v:.0} MiB/s");
        }
        None => {
            let _ = writeln!(s, "  cold readahead: not measured");
        }
    }
    for n in &p.notes {
        let _ = writeln!(s, "note: {}", shown(n));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_replaces_a_full_profile_only_when_it_is_stale_or_was_measured_under_load() {
        let full = Profile {
            measured_unix_s: now_unix_s(),
            ..Profile::synthetic_example()
        };
        let mut quick = full.clone();
        quick.provenance.as_mut().unwrap().quick = true;
        let now = full.context.clone();
        assert!(
            !quick_may_replace(&full, &quick, &now),
            "a fresh, quiet full one stays"
        );
        assert!(
            quick_may_replace(&full, &full, &now),
            "a full one replaces anything"
        );
        assert!(
            quick_may_replace(&quick, &quick, &now),
            "a quick one replaces a quick one"
        );
        let mut loaded = full.clone();
        loaded.provenance.as_mut().unwrap().steal_pct = 30.0;
        assert!(quick_may_replace(&loaded, &quick, &now));
        let old = Profile {
            measured_unix_s: 0,
            ..full.clone()
        };
        assert!(quick_may_replace(&old, &quick, &now), "a stale one goes");
        let unknown = Profile {
            provenance: None,
            ..full
        };
        assert!(quick_may_replace(&unknown, &quick, &now));
    }

    #[test]
    fn the_table_says_what_the_profile_was_measured_on_and_its_spread_or_that_both_are_unknown() {
        let p = Profile::synthetic_example();
        let t = table(&p);
        assert!(
            t.contains("measured on synthetic (512.00 MiB), full, in 20.0 s; load 0.1, other processes 1% of the CPUs, steal 0%"),
            "{t}"
        );
        assert!(
            t.contains("spread over 3 tries (best − worst): per-operation 10%, memory 10%, device 10%, readahead 10%"),
            "{t}"
        );
        let old = Profile {
            spread: None,
            provenance: None,
            ..p
        };
        let t = table(&old);
        assert!(
            t.contains("measured on an unknown file under unknown load"),
            "{t}"
        );
        assert!(t.contains("its error is unknown"), "{t}");
    }

    #[test]
    fn the_spread_of_tries_is_best_minus_worst_over_best() {
        assert_eq!(best_and_spread(&[80.0, 100.0, 90.0]), (100.0, 20.0));
        assert_eq!(best_and_spread(&[5.0]), (5.0, 0.0));
        assert_eq!(best_and_spread(&[]), (0.0, 0.0));
        assert_eq!(best_and_spread(&[0.0, 0.0]), (0.0, 0.0));
    }

    #[test]
    fn the_load_of_other_processes_is_the_machines_busy_time_less_our_own() {
        let a = parse_proc_stat("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n").unwrap();
        assert_eq!(
            a,
            CpuTicks {
                busy: 150,
                steal: 40,
                total: 1000
            }
        );
        // 1000 ticks later: 600 busy (of which our process used 2 s at 100 Hz), 100 stolen.
        let b = CpuTicks {
            busy: 750,
            steal: 140,
            total: 2000,
        };
        let (others, steal) = others_and_steal_pct(a, b, 100.0, 2.0);
        assert!((others - 40.0).abs() < 1e-9, "{others}");
        assert!((steal - 10.0).abs() < 1e-9, "{steal}");
        assert_eq!(others_and_steal_pct(a, a, 100.0, 0.0), (0.0, 0.0));
        assert_eq!(parse_proc_stat("intr 1 2"), None);
        assert_eq!(parse_load_avg_1m("2.53 1.90 1.20 3/512 999\n"), Some(2.53));
    }

    #[test]
    fn thread_counts_cover_every_small_count_and_the_core_count() {
        assert_eq!(thread_counts(1), vec![1]);
        assert_eq!(thread_counts(2), vec![1, 2]);
        let big = thread_counts(96);
        assert_eq!(&big[..3], &[1, 2, 3]);
        assert!(big.contains(&16) && big.contains(&64) && big.ends_with(&[96]));
    }

    #[test]
    fn the_memory_ceiling_is_positive_and_counts_every_thread() {
        let src = vec![7u8; 4 << 20];
        let (m, spread_pct) = memory_ceiling(&src, 2, Duration::from_millis(20));
        assert!((0.0..=100.0).contains(&spread_pct), "{spread_pct}");
        assert_eq!(m.threads, 2);
        assert!(m.copy_mib_s > 10.0 && m.xor_mib_s > 10.0, "{m:?}");
        assert!(
            m.read_levels.is_empty(),
            "levels are measured through the page cache"
        );
    }
}
