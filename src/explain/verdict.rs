//! "Can I trust this number?" (issue 23): every result gets a verdict, `ok` or `suspect`, and
//! the reasons, each a short stable code with a sentence that carries the measured figures.
//!
//! Most complaints about disk benchmarks are numbers that were never the disk: dirty pages
//! (KDiskMark #154), a filesystem cache (#148), compression (#136), a generator that ran out of
//! CPU (#107), an SLC cache or a throttle that changed the level mid-run. diskscope already knows
//! the context (filesystem, device), the machine's ceilings (the limits profile), and with the
//! timeline what the device did on the run's clock, so it can judge every result.
//!
//! [`judge`] is pure: it reads a result, its timeline, its context, a profile and a few things
//! [`Observed`] around the run (CPU time, dirty bytes, what lies under a loop device or an
//! overlay), and never touches the file or the clock, so every rule is tested on synthetic
//! inputs. It runs after the timed section, in microseconds.
//!
//! Every threshold is conservative: a false alarm is as bad as a miss, so a rule fires only
//! where the measured figure is far from what a clean run gives (docs/explain.md, "reason codes",
//! lists each with its threshold and why).

use super::context::{Context, NET_FS, RAM_FS};
use super::model;
use super::profile::Profile;
use crate::config::{CacheMode, Op, Pattern};
use crate::measure::{RunResult, Timeline};
use crate::size::format_bytes_approx;
use crate::text::shown;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Below this many bytes moved, the device's counters (whole-device, sector-grained, shared with
/// every other process) say nothing about one run: the bytes rules are not applied.
pub const MIN_JUDGED_BYTES: u64 = 4 << 20;
/// A cold or O_DIRECT run whose device moved less than this share of the run's bytes was served
/// by a cache. A clean cold read moves ≥ 0.9× (read-ahead adds, never removes); half is far below.
pub const CACHE_RATIO: f64 = 0.5;
/// A cold read that starts with more than this share of the file cached (eviction failed).
pub const COLD_RESIDENT_PCT: f64 = 50.0;
/// A warm read whose device read more than this share of the run's bytes: the cache was evicted
/// under it. A clean warm run reads < 0.05× (the timeline's tests).
pub const WARM_DEVICE_RATIO: f64 = 0.1;
/// A buffered write whose device wrote less than this share of the run's bytes by the run's end
/// (or whose dirty bytes at the end are more than this share of them) ended in the page cache.
pub const DIRTY_SHARE: f64 = 0.5;
/// An O_DIRECT run whose device moved more than this many times the run's bytes: other I/O.
/// O_DIRECT moves exactly the run's bytes (1.00× in the timeline's tests), plus the
/// filesystem's metadata, which is a few percent.
pub const DIRECT_OTHER_RATIO: f64 = 1.5;
/// The same for a buffered sequential run (cold read, or write with fsync): read-ahead past the
/// end, a journal or metadata can add up to a window or a journal's copy; 3× is far beyond.
pub const BUFFERED_OTHER_RATIO: f64 = 3.0;
/// ...and the surplus must be at least this many bytes (a small run's metadata is no neighbour).
pub const MIN_OTHER_BYTES: u64 = 16 << 20;
/// CPU time per worker over the run's wall time at which the workers, not the device, set the
/// pace: a thread waiting on a device is off the CPU; one at 85% of a core hardly waits.
pub const CPU_BOUND_SHARE: f64 = 0.85;
/// A read whose workers slept (voluntary context switches, the collecting thread's included)
/// at most once per this many operations never waited for a device: CPU-bound however little
/// CPU a loaded machine gave it. A device read sleeps once per operation (or per queue's worth);
/// the collecting thread adds ~20 a second.
pub const NEVER_WAITED_OPS_PER_SLEEP: u64 = 1000;
/// ...judged over at least this many operations.
pub const NEVER_WAITED_MIN_OPS: u64 = 100_000;
/// Blocks smaller than a page measure per-call cost whatever the cache (the CPU-bound rule then
/// applies to warm reads too).
pub const SMALL_BLOCK_BYTES: u64 = 4096;
/// A run shorter than this is shorter than its warm-up: half a 100 ms snapshot interval, in
/// which thread start, the first page faults and the queue filling (~1 ms) are 2% and a loaded
/// scheduler's 4 ms tick 8%.
pub const MIN_SECONDS: f64 = 0.05;
/// Fewer operations than this: the mean of n latencies with a spread (CV) of 1 is known to
/// ±1.96/√n, ±20% at 100.
pub const MIN_OPS: u64 = 100;
/// At least this many full intervals before their spread is judged.
pub const MIN_INTERVALS: usize = 3;
/// Intervals whose coefficient of variation exceeds this are too unstable for one figure (a
/// clean run's intervals stay within ±10%, fio's steady-state criterion).
pub const MAX_INTERVAL_CV: f64 = 0.5;
/// At least this share of an O_DIRECT run's slots in more physical pieces than the device takes
/// in one request: their reads split. One slot in 32 split adds one small request per 32 and
/// changes nothing measurable; on the lab VM a quarter or more went with 1.0–1.7 GiB/s against
/// 2.0–2.8 unsplit, and every slot split with 0.7 (`engine/layout.rs`).
pub const SPLIT_SHARE: f64 = 0.25;
/// An open-loop run whose response p99 is at least this many times its p99 without its worst
/// tenth (`measure::burst`) has a p99 set by one burst. Leaving out a tenth of a clean run
/// lowers its p99 by a few percent, of a run near its knee (queueing all along) by well under
/// 2×; a 45 ms stall in a 3 s run at 0.5 ms lowers it ~90× (the lab VM, 2026-11-27).
pub const BURST_RATIO: f64 = 4.0;
/// ...and by at least this many microseconds: a jump from 40 to 200 µs is a burst too, but no
/// figure a user acts on.
pub const BURST_MIN_US: f64 = 1000.0;

/// `ok` or `suspect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Ok,
    Suspect,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Ok => "ok",
            Kind::Suspect => "suspect",
        }
    }
}

/// A reason's stable code (the CSV's `reasons` column, JSON, docs/explain.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// tmpfs, ramfs, a RAM block device, a loop device or overlay over RAM, a network FS.
    NotADisk,
    /// A cold or O_DIRECT run the device did not serve.
    CacheNotDisk,
    /// A warm run during which the device was busy reading.
    CacheEvicted,
    /// The filesystem compresses: the device moved fewer bytes than the file.
    Compressed,
    /// Buffered writes that ended in the page cache.
    WritesInPageCache,
    /// Above the machine's measured ceiling by more than the profile's error.
    AboveCeiling,
    /// The workers' CPU set the pace.
    GeneratorBound,
    /// The device moved far more than the run: another process.
    OtherIo,
    /// The throughput moved to another level mid-run and stayed.
    LevelShift,
    /// The intervals spread too widely for one figure.
    Unstable,
    /// Too short or too few operations.
    TooShort,
    /// A cold read of a file smaller than the read-ahead window.
    SmallTestArea,
    /// O_DIRECT buffers scattered over more physical pieces than the device takes in one
    /// request: reads split, at a rate set by where the kernel put the pages.
    SplitRequests,
    /// An open-loop run whose response p99 one burst (a stall) sets.
    LatencyBurst,
}

impl Code {
    pub const ALL: &'static [Code] = &[
        Code::NotADisk,
        Code::CacheNotDisk,
        Code::CacheEvicted,
        Code::Compressed,
        Code::WritesInPageCache,
        Code::AboveCeiling,
        Code::GeneratorBound,
        Code::OtherIo,
        Code::LevelShift,
        Code::Unstable,
        Code::TooShort,
        Code::SmallTestArea,
        Code::SplitRequests,
        Code::LatencyBurst,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::NotADisk => "not_a_disk",
            Code::CacheNotDisk => "cache_not_disk",
            Code::CacheEvicted => "cache_evicted",
            Code::Compressed => "compressed",
            Code::WritesInPageCache => "writes_in_page_cache",
            Code::AboveCeiling => "above_ceiling",
            Code::GeneratorBound => "generator_bound",
            Code::OtherIo => "other_io",
            Code::LevelShift => "level_shift",
            Code::Unstable => "unstable",
            Code::TooShort => "too_short",
            Code::SmallTestArea => "small_test_area",
            Code::SplitRequests => "split_requests",
            Code::LatencyBurst => "latency_burst",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One reason: its code and a sentence with the measured figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reason {
    pub code: Code,
    pub sentence: String,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.sentence)
    }
}

/// A result's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub verdict: Kind,
    pub reasons: Vec<Reason>,
}

impl Verdict {
    /// The `reasons` column: the codes, `;`-separated (empty when ok).
    pub fn codes(&self) -> String {
        let codes: Vec<&str> = self.reasons.iter().map(|r| r.code.as_str()).collect();
        codes.join(";")
    }

    /// The `why` column: each reason's sentence, ` | `-separated.
    pub fn sentences(&self) -> String {
        let s: Vec<&str> = self.reasons.iter().map(|r| r.sentence.as_str()).collect();
        s.join(" | ")
    }

    pub fn has(&self, code: Code) -> bool {
        self.reasons.iter().any(|r| r.code == code)
    }

    /// The stderr lines: `verdict: ok` or `verdict: suspect (codes)` and one line per reason.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![match self.verdict {
            Kind::Ok => "verdict: ok".to_string(),
            Kind::Suspect => format!("verdict: suspect ({})", self.codes().replace(';', ", ")),
        }];
        out.extend(self.reasons.iter().map(|r| format!("  {r}")));
        out
    }

    /// Writes the `verdict`, `reasons` and `why` columns of `r`.
    pub fn fill(&self, r: &mut RunResult) {
        r.judgement.verdict = self.verdict.as_str().to_string();
        r.judgement.reasons = self.codes();
        r.judgement.why = self.sentences();
    }
}

/// The stderr lines of a result's `verdict`, `reasons` and `why` columns (none when it was not
/// judged).
pub fn lines_of(r: &RunResult) -> Vec<String> {
    match r.judgement.verdict.as_str() {
        "" => vec![],
        "ok" => vec!["verdict: ok".to_string()],
        v => {
            let codes: Vec<&str> = r
                .judgement
                .reasons
                .split(';')
                .filter(|c| !c.is_empty())
                .collect();
            let mut out = vec![format!(
                "verdict: {} ({})",
                crate::text::shown(v),
                crate::text::shown(&codes.join(", "))
            )];
            let mut why = r.judgement.why.split(" | ");
            for c in codes {
                let s = why.next().unwrap_or("");
                out.push(format!(
                    "  {}: {}",
                    crate::text::shown(c),
                    crate::text::shown(s)
                ));
            }
            out
        }
    }
}

/// What was seen around a run besides its result and timeline (taken by the runner, outside the
/// timed section).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// The process's CPU time (user + system) over the run, seconds.
    pub cpu_s: Option<f64>,
    /// The process's voluntary context switches over the run (a thread going to sleep: waiting
    /// for a device, a lock, a timer).
    pub voluntary_switches: Option<u64>,
    /// `Dirty:` of /proc/meminfo at the run's end, bytes.
    pub dirty_end_bytes: Option<u64>,
    /// What lies in RAM under the file's device or overlay (`loop0 over /dev/shm/x.img`).
    pub ram_below: Option<String>,
    /// The write was fsynced at its end (`--fsync`) or written with O_DSYNC (`--dsync`).
    pub synced: bool,
    /// Where an O_DIRECT run's slots lie in physical memory (`engine/layout.rs`), when known.
    pub buffer_layout: Option<crate::engine::BufferLayout>,
}

impl Observed {
    /// What lies in RAM under `ctx`: a loop device's backing file on tmpfs, an overlay whose
    /// upper or lower directories are on tmpfs. Reads mountinfo once per path (sub-millisecond).
    pub fn ram_below(ctx: &Context) -> Option<String> {
        if let Some(d) = &ctx.device {
            for b in &d.backing_files {
                if super::context::is_in_ram(std::path::Path::new(b)) {
                    return Some(format!(
                        "{} is a loop device over {}, a file in RAM",
                        crate::text::shown(&d.chain.join("→")),
                        crate::text::shown(b)
                    ));
                }
            }
        }
        let fs = ctx.filesystem.as_ref()?;
        if fs.fs_type != "overlay" {
            return None;
        }
        fs.super_options
            .split(',')
            .filter_map(|o| o.split_once('='))
            .filter(|(k, _)| matches!(*k, "upperdir" | "lowerdir"))
            .flat_map(|(_, v)| v.split(':').map(str::to_string).collect::<Vec<_>>())
            .find(|dir| super::context::is_in_ram(std::path::Path::new(dir)))
            .map(|dir| format!("the overlay's layer {} is in RAM", crate::text::shown(&dir)))
    }
}

/// `Dirty:` of /proc/meminfo, bytes.
pub fn dirty_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("Dirty:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Whether the filesystem compresses what it stores: btrfs mounted with `compress` or
/// `compress-force`, or zfs (whose compression is a dataset property, on by default).
pub fn compresses(ctx: &Context) -> Option<String> {
    let fs = ctx.filesystem.as_ref()?;
    let opts = format!("{},{}", fs.mount_options, fs.super_options);
    let opt = opts
        .split(',')
        .find(|o| o.starts_with("compress"))
        .map(str::to_string);
    match (fs.fs_type.as_str(), opt) {
        ("btrfs", Some(o)) => Some(format!("btrfs mounted with {o}")),
        ("zfs", _) => Some("zfs (compression is a dataset property)".to_string()),
        _ => None,
    }
}

/// A latency in µs as the verdict's sentences give it (`480 µs`, `4.6 ms`, `45 ms`): the one
/// formatter of a time in µs, in the style of a figure's labels.
fn fmt_us(us: f64) -> String {
    crate::export::axis::fmt_us(us, crate::export::axis::UsStyle::Tick)
}

fn fmt_bytes(b: u64) -> String {
    format_bytes_approx(b)
}

/// The verdict of a finished result (an errored one is judged too; its caller decides whether
/// to show it). Pure: see the module doc.
pub fn judge(
    r: &RunResult,
    timeline: Option<&Timeline>,
    ctx: &Context,
    profile: Option<&Profile>,
    seen: &Observed,
) -> Verdict {
    // A file in RAM is always cached: not said again as a failed eviction.
    let in_ram = seen.ram_below.is_some()
        || ctx
            .filesystem
            .as_ref()
            .is_some_and(|f| RAM_FS.contains(&f.fs_type.as_str()))
        || ctx
            .device
            .as_ref()
            .is_some_and(|d| ["zram", "ram", "brd"].iter().any(|p| d.name.starts_with(p)));
    let mut reasons: Vec<Reason> = Vec::new();
    let mut say = |code: Code, sentence: String| {
        if !reasons.iter().any(|r| r.code == code) {
            reasons.push(Reason { code, sentence });
        }
    };
    let op = r.setup.op.known();
    let cache = r.setup.cache.known();
    let cold = matches!(cache, Some(CacheMode::Cold | CacheMode::ColdAll));
    let warm = cache == Some(CacheMode::Warm);
    let read = op == Some(Op::Read);
    let write = op == Some(Op::Write);
    let dir = if write { "write" } else { "read" };
    let ratio = timeline.and_then(|t| t.reading.bytes_ratio.as_ref());

    // Not a disk at all.
    if let Some(fs) = &ctx.filesystem {
        let t = fs.fs_type.as_str();
        if RAM_FS.contains(&t) {
            say(
                Code::NotADisk,
                format!("the file is on {}, in RAM: no disk was measured", shown(t)),
            );
        } else if NET_FS.iter().any(|n| t.starts_with(n)) || t.starts_with("fuse") {
            say(
                Code::NotADisk,
                format!(
                    "the file is on {}, a network or userspace filesystem: the figure is the \
                     network's and the server's, not a local disk's",
                    shown(t)
                ),
            );
        }
    }
    if let Some(d) = &ctx.device {
        let n = d.name.as_str();
        if n.starts_with("zram") || n.starts_with("ram") || n.starts_with("brd") {
            say(
                Code::NotADisk,
                format!("the device {n} is a RAM block device: no disk was measured"),
            );
        }
    }
    if let Some(below) = &seen.ram_below {
        say(Code::NotADisk, format!("{below}: no disk was measured"));
    }

    // Cache, not disk; compression.
    let compressing = compresses(ctx);
    if let Some(b) = ratio.filter(|b| b.file_bytes >= MIN_JUDGED_BYTES) {
        let meant_for_device = (read && (cold || r.setup.direct)) || (write && r.setup.direct);
        let short = b.ratio < CACHE_RATIO;
        if short && (meant_for_device || (write && seen.synced)) {
            if let Some(how) = &compressing {
                say(
                    Code::Compressed,
                    format!(
                        "the device {} moved {:.2}× the run's bytes ({} of {}) on {how}: the data \
                         compressed, so the figure is not the device's rate for such bytes",
                        b.device,
                        b.ratio,
                        fmt_bytes(b.device_bytes),
                        fmt_bytes(b.file_bytes)
                    ),
                );
            } else if meant_for_device {
                let what = if r.setup.direct { "O_DIRECT" } else { "cold" };
                say(
                    Code::CacheNotDisk,
                    format!(
                        "a {what} {dir} whose device {} moved {:.2}× the run's bytes ({} of {}): \
                         served from memory, not the disk (the file kept in the page cache by \
                         another process that maps or locks it, eviction refused, or O_DIRECT \
                         ignored by the filesystem)",
                        b.device,
                        b.ratio,
                        fmt_bytes(b.device_bytes),
                        fmt_bytes(b.file_bytes)
                    ),
                );
            }
        }
        if warm && read && !r.setup.direct && b.ratio > WARM_DEVICE_RATIO {
            say(
                Code::CacheEvicted,
                format!(
                    "a warm read during which the device {} read {:.2}× the run's bytes ({} of \
                     {}): the file was evicted under it (memory pressure, DAMON reclaim) or \
                     another process read from the device",
                    b.device,
                    b.ratio,
                    fmt_bytes(b.device_bytes),
                    fmt_bytes(b.file_bytes)
                ),
            );
        }
        // Someone else was there.
        let sequential = r.setup.pattern.known() == Some(Pattern::Sequential);
        let limit = if r.setup.direct {
            Some(DIRECT_OTHER_RATIO)
        } else if sequential && ((read && cold) || (write && seen.synced)) {
            Some(BUFFERED_OTHER_RATIO)
        } else {
            None
        };
        let surplus = b.device_bytes.saturating_sub(b.file_bytes);
        if let Some(limit) = limit.filter(|l| b.ratio > *l && surplus >= MIN_OTHER_BYTES) {
            say(
                Code::OtherIo,
                format!(
                    "the device {} moved {:.2}× the run's bytes ({} of {}; more than {limit}× is \
                     not this run's own I/O): another process used the device during the run",
                    b.device,
                    b.ratio,
                    fmt_bytes(b.device_bytes),
                    fmt_bytes(b.file_bytes)
                ),
            );
        }
    }
    if read
        && cold
        && r.figures.residency_before_pct > COLD_RESIDENT_PCT
        && compressing.is_none()
        && !in_ram
    {
        say(
            Code::CacheNotDisk,
            format!(
                "{:.0}% of the file was in the page cache when the cold run started: eviction \
                 failed (another process maps or locks the file), so reads came from memory",
                r.figures.residency_before_pct
            ),
        );
    }

    // Writes that ended in the page cache.
    if write && !r.setup.direct && !seen.synced && r.figures.bytes >= MIN_JUDGED_BYTES {
        let by_ratio = ratio.map(|b| b.ratio < DIRTY_SHARE);
        let by_dirty = seen
            .dirty_end_bytes
            .map(|d| d as f64 >= DIRTY_SHARE * r.figures.bytes as f64);
        let figures = match (ratio, seen.dirty_end_bytes) {
            (Some(b), _) => format!(
                "the device {} wrote {:.2}× the run's bytes ({} of {}) by its end",
                b.device,
                b.ratio,
                fmt_bytes(b.device_bytes),
                fmt_bytes(b.file_bytes)
            ),
            (None, Some(d)) => format!(
                "{} were dirty in the page cache at its end, of {} written",
                fmt_bytes(d),
                fmt_bytes(r.figures.bytes)
            ),
            (None, None) => String::new(),
        };
        if by_ratio.or(by_dirty) == Some(true) {
            say(
                Code::WritesInPageCache,
                format!(
                    "buffered writes without --fsync or --dsync: {figures}, so the figure is the \
                     page cache's; add --fsync (timed) or --dsync"
                ),
            );
        }
    }

    // Faster than physics.
    if let Some(e) = profile.and_then(|p| model::explain_result(p, r)) {
        if !e.explained {
            let err = e
                .prediction
                .error_pct
                .map_or("an unknown error".to_string(), |v| format!("±{v:.0}%"));
            say(
                Code::AboveCeiling,
                format!(
                    "{:.1} MiB/s is {:.1}× the machine's measured ceiling for this path ({} \
                     {:.1} MiB/s), beyond the profile's error ({err}): faster than this machine \
                     goes, so the data did not come from where the run says",
                    r.figures.mib_s,
                    e.pct_of_bound / 100.0,
                    e.prediction.bound,
                    e.prediction.bound_mib_s
                ),
            );
        }
    }

    // The generator was the bottleneck.
    let meant_for_device = cold || r.setup.direct || write;
    if meant_for_device || r.setup.block_size_bytes < SMALL_BLOCK_BYTES {
        let workers = r.setup.threads.max(1).min(ctx.cpu_count.max(1)) as f64;
        let share = seen
            .cpu_s
            .filter(|_| r.figures.seconds >= MIN_SECONDS)
            .map(|cpu| cpu / (r.figures.seconds * workers));
        // Buffered writes never wait in their workers (the device's work is in the fsync).
        let sleeps = seen
            .voluntary_switches
            .filter(|_| read && r.figures.ops >= NEVER_WAITED_MIN_OPS);
        let fix = if r
            .setup
            .method
            .known()
            .is_some_and(|m| crate::engine::caps(m).queued)
        {
            "more threads (-t), larger blocks, or a deeper queue"
        } else {
            "more threads (-t), larger blocks, or io_uring (-m io_uring) with a deep queue"
        };
        let why = match (share, sleeps) {
            (Some(share), _) if share >= CPU_BOUND_SHARE => Some(format!(
                "the workers spent {share:.2} of a core each in diskscope's own code"
            )),
            (_, Some(n)) if n.saturating_mul(NEVER_WAITED_OPS_PER_SLEEP) <= r.figures.ops => {
                Some(format!(
                    "the workers slept {n} times in {} operations (they never waited for a device)",
                    r.figures.ops
                ))
            }
            _ => None,
        };
        if let Some(why) = why {
            say(
                Code::GeneratorBound,
                format!(
                    "{why}, so the figure measures diskscope's own per-call CPU cost, not \
                     the disk; use {fix}"
                ),
            );
        }
    }

    // The run's level shifted, or its intervals spread.
    if let Some(t) = timeline {
        if let Some(s) = &t.reading.level_shift {
            say(
                Code::LevelShift,
                format!(
                    "throughput went from {:.1} to {:.1} MiB/s at {:.1} s and stayed there: \
                     something changed mid-run (another process, a cache filling or emptying, \
                     throttling)",
                    s.before_mib_s, s.after_mib_s, s.at_s
                ),
            );
        } else {
            let full: Vec<f64> = t
                .rows
                .iter()
                .filter(|row| row.t_end_s - row.t_start_s >= 0.9 * t.interval_s)
                .map(|row| row.mib_s)
                .collect();
            if full.len() >= MIN_INTERVALS {
                let n = full.len() as f64;
                let mean = full.iter().sum::<f64>() / n;
                let var = full.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
                let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
                if cv > MAX_INTERVAL_CV {
                    say(
                        Code::Unstable,
                        format!(
                            "its {} intervals spread ±{:.0}% around their mean (more than \
                             ±{:.0}%): too unstable for one figure",
                            full.len(),
                            cv * 100.0,
                            MAX_INTERVAL_CV * 100.0
                        ),
                    );
                }
            }
        }
    }

    // An open-loop p99 that one burst sets.
    if let Some(b) = timeline.and_then(|t| t.reading.burst) {
        if b.ratio() >= BURST_RATIO && b.p99_us - b.p99_without_us >= BURST_MIN_US {
            say(
                Code::LatencyBurst,
                format!(
                    "the response p99 ({}) is one burst's: {:.1}-{:.1} s held it, and without \
                     that tenth of the run the p99 is {} ({:.0}x lower); one stall of the host \
                     or the device, not the rate, so the p99 will not repeat: run again or \
                     longer before trusting it",
                    fmt_us(b.p99_us),
                    b.start_s,
                    b.end_s,
                    fmt_us(b.p99_without_us),
                    b.ratio()
                ),
            );
        }
    }

    // Too little to say anything.
    if r.figures.seconds < MIN_SECONDS {
        say(
            Code::TooShort,
            format!(
                "{:.3} s is shorter than the {MIN_SECONDS} s warm-up (thread start, first \
                 faults, the queue filling): use more blocks",
                r.figures.seconds
            ),
        );
    } else if r.figures.ops < MIN_OPS {
        say(
            Code::TooShort,
            format!(
                "{} operations are too few for a stable figure (at least {MIN_OPS}: the mean \
                 of fewer is uncertain by more than ±20%): use more or smaller blocks",
                r.figures.ops
            ),
        );
    }

    // O_DIRECT requests split by the buffers' physical layout.
    let segments = ctx.device.as_ref().and_then(|d| Some((d, d.max_segments?)));
    if let (true, Some(l), Some((d, max))) = (r.setup.direct, &seen.buffer_layout, segments) {
        let split = l.split(max);
        if split > 0 && split as f64 >= SPLIT_SHARE * l.pieces.len() as f64 {
            say(
                Code::SplitRequests,
                format!(
                    "{split} of the {} O_DIRECT buffers lie in more physical pieces than {} \
                     takes in one request ({max}; the buffers: {}), so their {dir}s were split: \
                     the figure depends on where the kernel put the pages and changes from run \
                     to run; --buffers thp or hugetlb gives a repeatable one",
                    l.pieces.len(),
                    shown(&d.name),
                    l.describe()
                ),
            );
        }
    }

    // Small test area.
    if read && cold && !r.setup.direct {
        if let Some(ra_kb) = ctx.device.as_ref().and_then(|d| d.read_ahead_kb) {
            let ra = ra_kb * 1024;
            if r.identity.file_size_bytes > 0 && r.identity.file_size_bytes <= ra {
                say(
                    Code::SmallTestArea,
                    format!(
                        "a cold read of a {} file, within one read-ahead window ({} KiB): the \
                         first read fetches it all, the rest come from memory",
                        fmt_bytes(r.identity.file_size_bytes),
                        ra_kb
                    ),
                );
            }
        }
    }

    let verdict = if reasons.is_empty() {
        Kind::Ok
    } else {
        Kind::Suspect
    };
    Verdict { verdict, reasons }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Method;
    use crate::explain::context::{Device, Filesystem};
    use crate::measure::timeline::{BytesRatio, IntervalRow, Reading, Steady};

    const MIB: u64 = 1 << 20;

    /// A clean cold O_DIRECT 1 MiB read: 1 GiB in 2 s on an ext4 disk.
    fn clean() -> RunResult {
        RunResult {
            identity: crate::measure::result::Identity {
                file: "/d/f".into(),
                file_size_bytes: 1 << 30,
                ..Default::default()
            },
            setup: crate::config::RecordedSetup {
                op: Op::Read.into(),
                method: Method::Pread.into(),
                pattern: Pattern::Sequential.into(),
                cache: CacheMode::Cold.into(),
                direct: true,
                block_size_bytes: MIB,
                threads: 1,
                queue_depth: 1,
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                bytes: 1 << 30,
                seconds: 2.0,
                mib_s: 512.0,
                ops: 1024,
                residency_before_pct: 0.0,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn disk() -> Context {
        Context {
            cpu_count: 2,
            filesystem: Some(Filesystem {
                fs_type: "ext4".into(),
                mount_options: "rw,relatime".into(),
                ..Default::default()
            }),
            device: Some(Device {
                name: "vda".into(),
                chain: vec!["vda".into()],
                read_ahead_kb: Some(128),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn on(fs_type: &str, options: &str) -> Context {
        let mut c = disk();
        let fs = c.filesystem.as_mut().unwrap();
        fs.fs_type = fs_type.into();
        fs.mount_options = options.into();
        c
    }

    /// A timeline of `mib_s` per 1 s interval whose device moved `device_bytes` for the run's
    /// `file_bytes`.
    fn timeline(mib_s: &[f64], file_bytes: u64, device_bytes: u64) -> Timeline {
        let rows = mib_s
            .iter()
            .enumerate()
            .map(|(i, v)| IntervalRow {
                t_start_s: i as f64,
                t_end_s: i as f64 + 1.0,
                mib_s: *v,
                ..IntervalRow::blank()
            })
            .collect();
        let ratio = device_bytes as f64 / file_bytes as f64;
        Timeline {
            interval_s: 1.0,
            device: Some("vda".into()),
            rows,
            latency: vec![],
            reading: Reading {
                bytes_ratio: Some(BytesRatio {
                    device: "vda".into(),
                    file_bytes,
                    device_bytes,
                    ratio,
                    meaning: String::new(),
                }),
                level_shift: crate::measure::timeline::level_shift(mib_s, 1.0),
                steady: Steady {
                    after_s: None,
                    window_s: 5.0,
                    span_s: mib_s.len() as f64,
                },
                burst: None,
            },
        }
    }

    fn codes(v: &Verdict) -> Vec<Code> {
        v.reasons.iter().map(|r| r.code).collect()
    }

    fn judged(r: &RunResult, t: Option<&Timeline>, ctx: &Context, seen: &Observed) -> Verdict {
        judge(r, t, ctx, None, seen)
    }

    #[test]
    fn a_clean_cold_direct_read_whose_device_moved_every_byte_is_ok_with_no_reason() {
        let r = clean();
        let t = timeline(&[512.0, 512.0], 1 << 30, (1 << 30) + (1 << 20));
        let seen = Observed {
            cpu_s: Some(0.2),
            ..Default::default()
        };
        let v = judged(&r, Some(&t), &disk(), &seen);
        assert_eq!(v.verdict, Kind::Ok, "{:?}", v.reasons);
        assert!(v.reasons.is_empty());
        assert_eq!(v.lines(), ["verdict: ok"]);
    }

    #[test]
    fn an_open_loop_p99_set_by_one_stall_is_suspect_and_one_high_all_along_is_not() {
        use crate::measure::burst::Burst;
        let r = RunResult {
            setup: crate::config::RecordedSetup {
                rate_iops: Some(crate::config::Iops(3000.0)),
                ..clean().setup
            },
            open_loop: Some(crate::measure::result::OpenLoop {
                resp_p99_us: 45_000.0,
                ..Default::default()
            }),
            ..clean()
        };
        let mut t = timeline(&[512.0, 512.0], 1 << 30, (1 << 30) + (1 << 20));
        let seen = Observed {
            cpu_s: Some(0.2),
            ..Default::default()
        };
        t.reading.burst = Some(Burst {
            start_s: 1.2,
            end_s: 1.5,
            p99_us: 45_000.0,
            p99_without_us: 480.0,
            at_end: false,
        });
        let v = judged(&r, Some(&t), &disk(), &seen);
        assert_eq!(codes(&v), [Code::LatencyBurst], "{:?}", v.reasons);
        let why = &v.reasons[0].sentence;
        assert!(why.contains("45 ms") && why.contains("480 µs"), "{why}");
        assert!(why.contains("1.2-1.5 s"), "{why}");
        assert!(!why.contains("  "), "one space between words: {why}");
        // Queueing all along: the p99 hardly moves without the worst tenth.
        t.reading.burst = Some(Burst {
            p99_without_us: 30_000.0,
            ..t.reading.burst.unwrap()
        });
        assert!(judged(&r, Some(&t), &disk(), &seen).reasons.is_empty());
        // A burst from 40 to 200 µs is no figure a user acts on.
        t.reading.burst = Some(Burst {
            start_s: 1.2,
            end_s: 1.5,
            p99_us: 200.0,
            p99_without_us: 40.0,
            at_end: false,
        });
        assert!(judged(&r, Some(&t), &disk(), &seen).reasons.is_empty());
    }

    #[test]
    fn a_clean_warm_read_at_a_full_core_is_ok_since_it_measures_the_page_cache() {
        let r = RunResult {
            setup: crate::config::RecordedSetup {
                cache: CacheMode::Warm.into(),
                direct: false,
                ..clean().setup
            },
            figures: crate::measure::result::Figures {
                mib_s: 4096.0,
                bytes: 8 << 30,
                ..clean().figures
            },
            ..clean()
        };
        let t = timeline(&[4096.0, 4096.0], 8 << 30, 0);
        let seen = Observed {
            cpu_s: Some(2.0),
            ..Default::default()
        };
        let v = judged(&r, Some(&t), &disk(), &seen);
        assert_eq!(v.verdict, Kind::Ok, "{:?}", v.reasons);
    }

    #[test]
    fn tmpfs_ramfs_a_ram_device_a_loop_over_ram_and_nfs_are_not_a_disk_and_say_which() {
        let r = clean();
        for (ctx, word) in [
            (on("tmpfs", ""), "tmpfs"),
            (on("ramfs", ""), "ramfs"),
            (on("nfs4", ""), "nfs4"),
            (on("fuse.sshfs", ""), "fuse.sshfs"),
        ] {
            let v = judged(&r, None, &ctx, &Observed::default());
            assert_eq!(v.verdict, Kind::Suspect);
            assert_eq!(v.reasons[0].code, Code::NotADisk);
            assert!(v.reasons[0].sentence.contains(word), "{}", v.reasons[0]);
        }
        // A file in RAM is always cached: that is not said twice as a failed eviction.
        let cached = RunResult {
            setup: crate::config::RecordedSetup {
                direct: false,
                ..clean().setup
            },
            figures: crate::measure::result::Figures {
                residency_before_pct: 100.0,
                ..clean().figures
            },
            ..clean()
        };
        let v = judged(&cached, None, &on("tmpfs", ""), &Observed::default());
        assert_eq!(codes(&v), [Code::NotADisk]);
        let mut zram = disk();
        zram.device.as_mut().unwrap().name = "zram0".into();
        assert!(judged(&r, None, &zram, &Observed::default()).has(Code::NotADisk));
        let loop_over_ram = Observed {
            ram_below: Some("loop0 is a loop device over /dev/shm/x.img, a file in RAM".into()),
            ..Default::default()
        };
        let v = judged(&r, None, &disk(), &loop_over_ram);
        assert!(v.reasons[0].sentence.contains("/dev/shm/x.img"), "{v:?}");
    }

    #[test]
    fn a_cold_or_direct_read_the_device_did_not_serve_is_cache_not_disk_with_the_ratio() {
        let r = clean();
        let t = timeline(&[512.0, 512.0], 1 << 30, 20 << 20);
        let v = judged(&r, Some(&t), &disk(), &Observed::default());
        assert_eq!(codes(&v), [Code::CacheNotDisk]);
        assert!(v.reasons[0].sentence.contains("moved 0.02×"), "{v:?}");
        assert!(v.reasons[0].sentence.contains("O_DIRECT"), "{v:?}");
        // Eviction that failed shows in the residency before the run, too.
        let resident = RunResult {
            setup: crate::config::RecordedSetup {
                direct: false,
                ..clean().setup
            },
            figures: crate::measure::result::Figures {
                residency_before_pct: 100.0,
                ..clean().figures
            },
            ..clean()
        };
        let v = judged(&resident, None, &disk(), &Observed::default());
        assert_eq!(codes(&v), [Code::CacheNotDisk]);
        assert!(
            v.reasons[0].sentence.starts_with("100% of the file"),
            "{v:?}"
        );
    }

    #[test]
    fn on_a_compressing_filesystem_a_short_device_count_is_compression_not_cache() {
        let r = clean();
        let t = timeline(&[512.0, 512.0], 1 << 30, 40 << 20);
        let v = judged(
            &r,
            Some(&t),
            &on("btrfs", "rw,compress=zstd:3"),
            &Observed::default(),
        );
        assert_eq!(codes(&v), [Code::Compressed]);
        assert!(v.reasons[0].sentence.contains("compress=zstd:3"), "{v:?}");
        let w = RunResult {
            setup: crate::config::RecordedSetup {
                op: Op::Write.into(),
                direct: false,
                ..clean().setup
            },
            ..clean()
        };
        let synced = Observed {
            synced: true,
            ..Default::default()
        };
        let v = judged(&w, Some(&t), &on("btrfs", "rw,compress-force"), &synced);
        assert_eq!(codes(&v), [Code::Compressed]);
        // Incompressible data on the same filesystem: every byte went, nothing to say.
        let full = timeline(&[512.0, 512.0], 1 << 30, 1 << 30);
        let v = judged(&w, Some(&full), &on("btrfs", "rw,compress-force"), &synced);
        assert_eq!(v.verdict, Kind::Ok, "{v:?}");
    }

    #[test]
    fn a_warm_read_with_the_device_busy_reading_had_its_cache_evicted_under_it() {
        let r = RunResult {
            setup: crate::config::RecordedSetup {
                cache: CacheMode::Warm.into(),
                direct: false,
                ..clean().setup
            },
            ..clean()
        };
        let t = timeline(&[512.0, 512.0], 1 << 30, 300 << 20);
        let v = judged(&r, Some(&t), &disk(), &Observed::default());
        assert_eq!(codes(&v), [Code::CacheEvicted]);
        assert!(v.reasons[0].sentence.contains("0.29×"), "{v:?}");
        let quiet = timeline(&[512.0, 512.0], 1 << 30, 30 << 20);
        assert_eq!(
            judged(&r, Some(&quiet), &disk(), &Observed::default()).verdict,
            Kind::Ok
        );
    }

    #[test]
    fn buffered_writes_without_sync_that_stayed_dirty_end_in_the_page_cache() {
        let w = RunResult {
            setup: crate::config::RecordedSetup {
                op: Op::Write.into(),
                direct: false,
                cache: CacheMode::AsIs.into(),
                ..clean().setup
            },
            ..clean()
        };
        let t = timeline(&[512.0, 512.0], 1 << 30, 100 << 20);
        let v = judged(&w, Some(&t), &disk(), &Observed::default());
        assert_eq!(codes(&v), [Code::WritesInPageCache]);
        assert!(v.reasons[0].sentence.contains("--fsync"), "{v:?}");
        // Without device counters, the dirty bytes at the end tell it.
        let dirty = Observed {
            dirty_end_bytes: Some(900 << 20),
            ..Default::default()
        };
        assert!(judged(&w, None, &disk(), &dirty).has(Code::WritesInPageCache));
        // Synced, or written back during the run: fine.
        let synced = Observed {
            synced: true,
            ..Default::default()
        };
        assert!(!judged(&w, Some(&t), &disk(), &synced).has(Code::WritesInPageCache));
        let written = timeline(&[512.0, 512.0], 1 << 30, 900 << 20);
        assert_eq!(
            judged(&w, Some(&written), &disk(), &Observed::default()).verdict,
            Kind::Ok
        );
    }

    #[test]
    fn a_result_above_the_profiles_ceiling_beyond_its_error_is_above_ceiling() {
        let p = Profile::synthetic_example();
        // The synthetic device does 1 GiB/s at QD 1 sequential: 5 GiB/s cold direct is not it.
        let fast = RunResult {
            figures: crate::measure::result::Figures {
                mib_s: 5120.0,
                bytes: 10 << 30,
                ..clean().figures
            },
            ..clean()
        };
        let v = judge(&fast, None, &disk(), Some(&p), &Observed::default());
        assert_eq!(codes(&v), [Code::AboveCeiling]);
        assert!(v.reasons[0].sentence.contains("±10%"), "{v:?}");
        let v = judge(&clean(), None, &disk(), Some(&p), &Observed::default());
        assert_eq!(v.verdict, Kind::Ok, "{v:?}");
    }

    #[test]
    fn a_device_run_at_a_full_core_per_thread_or_a_one_byte_read_is_generator_bound() {
        let busy = Observed {
            cpu_s: Some(1.9),
            ..Default::default()
        };
        let v = judged(&clean(), None, &disk(), &busy);
        assert_eq!(codes(&v), [Code::GeneratorBound]);
        assert!(v.reasons[0].sentence.contains("0.95 of a core"), "{v:?}");
        assert!(v.reasons[0].sentence.contains("io_uring"), "{v:?}");
        let one_byte = RunResult {
            setup: crate::config::RecordedSetup {
                cache: CacheMode::Warm.into(),
                direct: false,
                block_size_bytes: 1,
                ..clean().setup
            },
            figures: crate::measure::result::Figures {
                ops: 1_000_000,
                ..clean().figures
            },
            ..clean()
        };
        assert!(judged(&one_byte, None, &disk(), &busy).has(Code::GeneratorBound));
        // On a loaded machine the share is low, but workers that never slept never waited.
        let loaded = Observed {
            cpu_s: Some(0.5),
            voluntary_switches: Some(40),
            ..Default::default()
        };
        let v = judged(&one_byte, None, &disk(), &loaded);
        assert!(v.reasons[0].sentence.contains("slept 40 times"), "{v:?}");
        let waited = Observed {
            voluntary_switches: Some(900_000),
            ..loaded
        };
        assert!(!judged(&one_byte, None, &disk(), &waited).has(Code::GeneratorBound));
        // Four threads on two cores: the share is of the cores there are.
        let four = RunResult {
            setup: crate::config::RecordedSetup {
                threads: 4,
                ..clean().setup
            },
            ..clean()
        };
        let two_cores = Observed {
            cpu_s: Some(3.8),
            ..Default::default()
        };
        assert!(judged(&four, None, &disk(), &two_cores).has(Code::GeneratorBound));
        let idle = Observed {
            cpu_s: Some(0.5),
            ..Default::default()
        };
        assert_eq!(judged(&four, None, &disk(), &idle).verdict, Kind::Ok);
    }

    #[test]
    fn a_device_that_moved_far_more_than_a_direct_run_had_another_process_on_it() {
        let t = timeline(&[512.0, 512.0], 1 << 30, 3 << 30);
        let v = judged(&clean(), Some(&t), &disk(), &Observed::default());
        assert_eq!(codes(&v), [Code::OtherIo]);
        assert!(v.reasons[0].sentence.contains("3.00×"), "{v:?}");
        // A random buffered read's read-ahead may read many times the run: not judged.
        let random = RunResult {
            setup: crate::config::RecordedSetup {
                direct: false,
                pattern: Pattern::Random.into(),
                ..clean().setup
            },
            ..clean()
        };
        assert_eq!(
            judged(&random, Some(&t), &disk(), &Observed::default()).verdict,
            Kind::Ok
        );
    }

    #[test]
    fn a_mid_run_level_shift_and_a_wide_interval_spread_are_named() {
        let shift = timeline(
            &[500.0, 510.0, 505.0, 200.0, 190.0, 210.0],
            1 << 30,
            1 << 30,
        );
        let v = judged(&clean(), Some(&shift), &disk(), &Observed::default());
        assert_eq!(codes(&v), [Code::LevelShift]);
        assert!(v.reasons[0].sentence.contains("at 3.0 s"), "{v:?}");
        let wild = timeline(&[100.0, 900.0, 50.0, 1200.0], 1 << 30, 1 << 30);
        let v = judged(&clean(), Some(&wild), &disk(), &Observed::default());
        assert_eq!(codes(&v), [Code::Unstable]);
        let calm = timeline(&[500.0, 520.0, 480.0, 510.0], 1 << 30, 1 << 30);
        let v = judged(&clean(), Some(&calm), &disk(), &Observed::default());
        assert_eq!(v.verdict, Kind::Ok);
    }

    #[test]
    fn a_run_shorter_than_its_warm_up_or_with_too_few_operations_is_too_short() {
        let short = RunResult {
            figures: crate::measure::result::Figures {
                seconds: 0.01,
                ..clean().figures
            },
            ..clean()
        };
        let v = judged(&short, None, &disk(), &Observed::default());
        assert_eq!(codes(&v), [Code::TooShort]);
        let few = RunResult {
            figures: crate::measure::result::Figures {
                ops: 10,
                ..clean().figures
            },
            ..clean()
        };
        assert!(judged(&few, None, &disk(), &Observed::default()).has(Code::TooShort));
    }

    #[test]
    fn a_cold_read_of_a_file_within_the_read_ahead_window_is_a_small_test_area() {
        let small = RunResult {
            identity: crate::measure::result::Identity {
                file_size_bytes: 64 << 10,
                ..clean().identity
            },
            setup: crate::config::RecordedSetup {
                direct: false,
                ..clean().setup
            },
            ..clean()
        };
        let v = judged(&small, None, &disk(), &Observed::default());
        assert_eq!(codes(&v), [Code::SmallTestArea]);
        assert!(v.reasons[0].sentence.contains("128 KiB"), "{v:?}");
    }

    #[test]
    fn o_direct_buffers_in_more_pieces_than_a_request_takes_split_their_reads_from_a_quarter_on() {
        use crate::engine::BufferLayout;
        let mut ctx = disk();
        ctx.device.as_mut().unwrap().max_segments = Some(254);
        let seen = |pieces: Vec<u32>| Observed {
            buffer_layout: Some(BufferLayout {
                slot_bytes: 1 << 20,
                pieces,
            }),
            ..Default::default()
        };
        // Every slot scattered page by page (memory freed just before, handed back in reverse).
        let v = judged(&clean(), None, &ctx, &seen(vec![256; 32]));
        assert_eq!(codes(&v), [Code::SplitRequests]);
        let s = &v.reasons[0].sentence;
        assert!(
            s.contains("32 of the 32") && s.contains("vda") && s.contains("(254;"),
            "{s}"
        );
        assert!(s.contains("--buffers thp or hugetlb"), "{s}");
        // A quarter split: said; fewer: one small extra request per few slots, not said.
        let quarter = [vec![255; 8], vec![40; 24]].concat();
        assert_eq!(
            codes(&judged(&clean(), None, &ctx, &seen(quarter))),
            [Code::SplitRequests]
        );
        let few = [vec![255; 7], vec![40; 25]].concat();
        assert!(codes(&judged(&clean(), None, &ctx, &seen(few))).is_empty());
        // Contiguous pieces, an unknown segment limit, or a run through the page cache: nothing.
        assert!(codes(&judged(&clean(), None, &ctx, &seen(vec![1; 32]))).is_empty());
        assert!(codes(&judged(&clean(), None, &disk(), &seen(vec![256; 32]))).is_empty());
        let buffered = RunResult {
            setup: crate::config::RecordedSetup {
                direct: false,
                ..clean().setup
            },
            ..clean()
        };
        assert!(codes(&judged(&buffered, None, &ctx, &seen(vec![256; 32]))).is_empty());
    }

    #[test]
    fn codes_are_stable_snake_case_and_fill_the_columns() {
        for c in Code::ALL {
            let json = serde_json::to_string(c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
        let v = Verdict {
            verdict: Kind::Suspect,
            reasons: vec![
                Reason {
                    code: Code::NotADisk,
                    sentence: "a".into(),
                },
                Reason {
                    code: Code::TooShort,
                    sentence: "b".into(),
                },
            ],
        };
        let mut r = RunResult::default();
        v.fill(&mut r);
        assert_eq!(
            (
                r.judgement.verdict.as_str(),
                r.judgement.reasons.as_str(),
                r.judgement.why.as_str()
            ),
            ("suspect", "not_a_disk;too_short", "a | b")
        );
        assert_eq!(v.lines()[0], "verdict: suspect (not_a_disk, too_short)");
        assert_eq!(v.lines()[1], "  not_a_disk: a");
        assert_eq!(lines_of(&r), v.lines());
        assert!(lines_of(&RunResult::default()).is_empty());
    }

    #[test]
    fn dirty_bytes_are_read_from_meminfo() {
        assert_eq!(
            dirty_bytes("MemTotal: 1 kB\nDirty:          2048 kB\n"),
            Some(2 << 20)
        );
        assert_eq!(dirty_bytes("MemTotal: 1 kB\n"), None);
    }
}
