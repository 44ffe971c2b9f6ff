//! "Can I trust this number?" (issues 23 and 36): every result gets a verdict, `ok` or
//! `suspect`, and the reasons, each a short stable code with a sentence that carries the
//! measured figures; beside them, notes that doubt the profile rather than the data.
//!
//! The judge reasons from the run's own facts (`crate::facts`): the bytes this process caused
//! the storage layer to move (not the whole device's counters, which count every other
//! process too), what the file is made of (holes, unwritten and compressed extents), what the
//! page cache held of it before and after, who else ran (pressure stalls), and the device chain
//! down to the disk that does the I/O. A figure is doubted only where these say the run was not
//! what it claims, so a run on a machine shared with other work is not suspect for that alone.
//!
//! [`judge`] is pure: a result (with its timeline), its facts, its context and a profile in,
//! a verdict out; it never touches the file, the clock or the machine, so every rule is tested
//! on synthetic inputs. It is a stage of its own, called once by each front end after
//! measuring and before exporting (`explain::judge_result`), never by the runner.
//!
//! The rules are a table ([`RULES`]): each a small function with its code, its threshold and
//! why, applied in order; a code is said once. Every threshold is conservative (a false alarm is
//! as bad as a miss): a rule fires only where the figure is far from what a clean run gives
//! (docs/explain.md lists each with its threshold and why). The rules never contradict each
//! other: one that would say the data did not come from where the run says (`above_ceiling`)
//! stays silent when the run's own accounting says every byte came from storage, and
//! `generator_bound` never stands beside bytes the run read from a device.

use super::context::{Context, NET_FS, RAM_FS};
use super::model;
use super::profile::Profile;
use crate::config::{CacheMode, Op, WriteSync};
use crate::facts::chain::Kind as LevelKind;
use crate::facts::Facts;
use crate::measure::RunResult;
use crate::size::format_bytes_approx;
use crate::text::shown;
use serde::{Deserialize, Serialize};
use std::fmt;

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
/// More than this share of the CPUs' time stolen by the hypervisor.
pub const STEAL_PCT: f64 = 10.0;
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
    /// Holes in the file: read as zeros made in memory.
    Sparse,
    /// Unwritten (preallocated) extents: read as zeros made in memory.
    Unwritten,
    /// Compressed extents: the device moved fewer bytes than were read.
    Compressed,
    /// A cold run whose file was in the page cache when it started.
    NotCold,
    /// A cold or O_DIRECT read the device did not serve.
    CacheNotDisk,
    /// A warm read that read from storage: its cache was evicted under it.
    CacheEvicted,
    /// Buffered writes that ended in the page cache.
    WritesInPageCache,
    /// Another process used the run's device.
    OtherIo,
    /// Other tasks waited for the CPUs during the run (or the hypervisor took them).
    CpuContended,
    /// Tasks stalled on memory during the run.
    MemoryPressure,
    /// Above the machine's measured ceiling by more than the profile's error.
    AboveCeiling,
    /// The workers' CPU set the pace.
    GeneratorBound,
    /// The throughput moved to another level mid-run and stayed.
    LevelShift,
    /// The intervals spread too widely for one figure.
    Unstable,
    /// An open-loop run whose response p99 one burst (a stall) sets.
    LatencyBurst,
    /// Too short or too few operations.
    TooShort,
    /// O_DIRECT buffers scattered over more physical pieces than the device takes in one
    /// request: reads split.
    SplitRequests,
    /// A cold read of a file smaller than the read-ahead window.
    SmallTestArea,
}

impl Code {
    pub const ALL: &'static [Code] = &[
        Code::NotADisk,
        Code::Sparse,
        Code::Unwritten,
        Code::Compressed,
        Code::NotCold,
        Code::CacheNotDisk,
        Code::CacheEvicted,
        Code::WritesInPageCache,
        Code::OtherIo,
        Code::CpuContended,
        Code::MemoryPressure,
        Code::AboveCeiling,
        Code::GeneratorBound,
        Code::LevelShift,
        Code::Unstable,
        Code::LatencyBurst,
        Code::TooShort,
        Code::SplitRequests,
        Code::SmallTestArea,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::NotADisk => "not_a_disk",
            Code::Sparse => "sparse",
            Code::Unwritten => "unwritten",
            Code::Compressed => "compressed",
            Code::NotCold => "not_cold",
            Code::CacheNotDisk => "cache_not_disk",
            Code::CacheEvicted => "cache_evicted",
            Code::WritesInPageCache => "writes_in_page_cache",
            Code::OtherIo => "other_io",
            Code::CpuContended => "cpu_contended",
            Code::MemoryPressure => "memory_pressure",
            Code::AboveCeiling => "above_ceiling",
            Code::GeneratorBound => "generator_bound",
            Code::LevelShift => "level_shift",
            Code::Unstable => "unstable",
            Code::LatencyBurst => "latency_burst",
            Code::TooShort => "too_short",
            Code::SplitRequests => "split_requests",
            Code::SmallTestArea => "small_test_area",
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

/// A result's verdict, its reasons, and notes that doubt the profile rather than the data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub verdict: Kind,
    pub reasons: Vec<Reason>,
    /// Said beside the verdict, never making it suspect: a profile that bounds nothing for
    /// this path, a ceiling the run's own bytes show to be low.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What [`judge`] returns.
pub type Judgement = Verdict;

impl Verdict {
    /// The verdict of `reasons` (`ok` when there is none), with no notes.
    pub fn of(reasons: Vec<Reason>) -> Verdict {
        Verdict {
            verdict: if reasons.is_empty() {
                Kind::Ok
            } else {
                Kind::Suspect
            },
            reasons,
            notes: Vec::new(),
        }
    }

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

    /// The stderr lines: `verdict: ok` or `verdict: suspect (codes)`, one line per reason, one
    /// per note.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![match self.verdict {
            Kind::Ok => "verdict: ok".to_string(),
            Kind::Suspect => format!("verdict: suspect ({})", self.codes().replace(';', ", ")),
        }];
        out.extend(self.reasons.iter().map(|r| format!("  {r}")));
        out.extend(self.notes.iter().map(|n| format!("  note: {n}")));
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

/// Whether the filesystem compresses what it stores: btrfs mounted with `compress` or
/// `compress-force`, or zfs. Only where the file's extents cannot be read.
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

fn fmt_us(us: f64) -> String {
    crate::export::axis::fmt_us(us, crate::export::axis::UsStyle::Tick)
}

fn fmt_bytes(b: u64) -> String {
    format_bytes_approx(b)
}

fn pct(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// What a rule found.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    /// The figure is suspect, for this reason.
    Suspect(String),
    /// A note beside the verdict: the profile, not the data, is in doubt.
    Note(String),
}

/// One rule of the judge.
pub struct Rule {
    pub code: Code,
    /// When it fires, in words (docs/explain.md's table says the same).
    pub threshold: &'static str,
    /// Why that threshold.
    pub why: &'static str,
    pub check: fn(&Input) -> Option<Finding>,
}

/// What the rules read: the result, its facts, its context, the profile, and what they derive
/// from them once.
pub struct Input<'a> {
    pub r: &'a RunResult,
    pub facts: Option<&'a Facts>,
    pub ctx: &'a Context,
    pub profile: Option<&'a Profile>,
    read: bool,
    write: bool,
    cold: bool,
    warm: bool,
    synced: bool,
    /// The file is in RAM (its filesystem, its device, what lies under its loop or overlay).
    in_ram: bool,
}

impl<'a> Input<'a> {
    pub fn new(
        r: &'a RunResult,
        facts: Option<&'a Facts>,
        ctx: &'a Context,
        profile: Option<&'a Profile>,
    ) -> Input<'a> {
        let op = r.setup.op.known();
        let cache = r.setup.cache.known();
        let in_ram = facts.is_some_and(|f| f.ram_below.is_some())
            || ctx
                .filesystem
                .as_ref()
                .is_some_and(|f| RAM_FS.contains(&f.fs_type.as_str()))
            || ram_device(&device_name_of(ctx, facts));
        Input {
            r,
            facts,
            ctx,
            profile,
            read: op == Some(Op::Read),
            write: op == Some(Op::Write),
            cold: matches!(cache, Some(CacheMode::Cold | CacheMode::ColdAll)),
            warm: cache == Some(CacheMode::Warm),
            synced: r.setup.write_sync.is_some_and(|w| w != WriteSync::None),
            in_ram,
        }
    }

    /// A run meant to measure the device: a cold or O_DIRECT read, an O_DIRECT or synced write.
    fn meant_for_device(&self) -> bool {
        (self.read && (self.cold || self.r.setup.direct))
            || (self.write && (self.r.setup.direct || self.synced))
    }

    /// The run's own storage bytes in its direction (read or written), when known.
    fn own_bytes(&self) -> Option<u64> {
        let io = self.facts?.run_io()?;
        Some(if self.write {
            io.net_write_bytes()
        } else {
            io.read_bytes
        })
    }

    /// The name of the device the run's I/O goes to first.
    fn device(&self) -> String {
        device_name_of(self.ctx, self.facts)
    }

    /// The bytes a read of the whole run could get from the device: the run's bytes less the
    /// share of the file that is holes, unwritten or compressed (which no device holds as such).
    fn device_held_bytes(&self) -> u64 {
        let Some(m) = self.facts.and_then(Facts::extents) else {
            return self.r.figures.bytes;
        };
        let held = 1.0 - m.share(m.zero_bytes()) - m.share(m.encoded_bytes);
        (self.r.figures.bytes as f64 * held.max(0.0)) as u64
    }
}

fn ram_device(name: &str) -> bool {
    ["zram", "ram", "brd"].iter().any(|p| name.starts_with(p))
}

fn device_name_of(ctx: &Context, facts: Option<&Facts>) -> String {
    facts
        .and_then(|f| f.chain.as_ref()?.top().map(|l| l.name.clone()))
        .or_else(|| {
            ctx.device
                .as_ref()
                .map(|d| d.chain.first().cloned().unwrap_or_default())
        })
        .unwrap_or_default()
}

/// The rules, in the order their reasons are said.
pub const RULES: &[Rule] = &[
    Rule {
        code: Code::NotADisk,
        threshold: "the file is on tmpfs, ramfs, a network or FUSE filesystem, a RAM block \
                    device, or a loop device or overlay over RAM",
        why: "no threshold: there is no disk under such a file, whatever the figure",
        check: not_a_disk,
    },
    Rule {
        code: Code::Sparse,
        threshold: "a read (not warm) of a file whose holes are more than 5% of it",
        why: "a hole is read as zeros made in memory, never from a device; a file written in \
              full has none",
        check: sparse,
    },
    Rule {
        code: Code::Unwritten,
        threshold: "a read (not warm) of a file whose unwritten (preallocated) extents are \
                    more than 5% of it",
        why: "an unwritten extent is read as zeros without asking the device",
        check: unwritten,
    },
    Rule {
        code: Code::Compressed,
        threshold: "more than 5% of the file in encoded (compressed) extents, for a read that \
                    is not warm or a synced or O_DIRECT write; without an extent map, a \
                    compressing mount whose device moved less than half the run's bytes",
        why: "the device moved fewer bytes than were read or written: the figure is not the \
              device's rate for such bytes",
        check: compressed,
    },
    Rule {
        code: Code::NotCold,
        threshold: "a cold read whose file was more than 1% in the page cache when it started \
                    (the same test as the warning on stderr)",
        why: "the run was not cold: the warning and the verdict say the same thing",
        check: not_cold,
    },
    Rule {
        code: Code::CacheNotDisk,
        threshold: "a cold or O_DIRECT read that itself read less than half the bytes the \
                    device holds for it (its own I/O accounting); or a buffered loop device \
                    whose next device down moved less than half what the loop read",
        why: "a clean cold read reads at least 0.9x from storage (read-ahead only adds); the \
              rest came from a cache: another process's reads, a mapping or a lock, or the \
              page cache under a loop device's image",
        check: cache_not_disk,
    },
    Rule {
        code: Code::CacheEvicted,
        threshold: "a warm buffered read that itself read more than 10% of its bytes from \
                    storage",
        why: "a clean warm run reads nothing from storage; other processes' reads of other \
              files do not count",
        check: cache_evicted,
    },
    Rule {
        code: Code::WritesInPageCache,
        threshold: "a buffered write without --fsync/--dsync whose file held 50% or more of \
                    the run's bytes dirty or under writeback at its end; or (not a mix) whose \
                    device wrote less than 50% of the run's bytes during the run",
        why: "half the bytes never reached the device during the run: the figure is memory's; \
              a write that loops over its file (the explorer's) keeps at most the file dirty \
              however much it wrote, and the device's counters, everyone's writes included, \
              only make this rarer",
        check: writes_in_page_cache,
    },
    Rule {
        code: Code::OtherIo,
        threshold: "a run meant for the device whose device moved, in either direction, more \
                    than 0.5x the run's own storage bytes and at least 16 MiB that were not \
                    the run's",
        why: "metadata and a journal add a few percent; more is another process sharing the \
              device (a writer during a read counts)",
        check: other_io,
    },
    Rule {
        code: Code::CpuContended,
        threshold: "some task waited for a CPU during more than 50% of the run (PSI) and the \
                    run's workers waited for one 20% of their time or more; or more than 10% \
                    of the CPU time was stolen",
        why: "one busy process beside a one-thread run on two cores stays far below; three \
              runnable tasks on two cores are at 100%",
        check: cpu_contended,
    },
    Rule {
        code: Code::MemoryPressure,
        threshold: "some task stalled on memory during more than 10% of the run (PSI)",
        why: "a machine with room stalls ~0%; reclaim under the run evicts and delays",
        check: memory_pressure,
    },
    Rule {
        code: Code::AboveCeiling,
        threshold: "above the profile's bound by more than its error, where the bound's family \
                    of ceilings can be trusted and the run's own bytes do not confirm its path",
        why: "within the error is noise; beyond it, with a trustworthy ceiling and no sign the \
              device delivered, the data did not come from where the run says",
        check: above_ceiling,
    },
    Rule {
        code: Code::GeneratorBound,
        threshold: "the run's own accounting shows no device bytes (under 5%) and the workers \
                    spent 0.85 of a core each in diskscope's code, or slept at most once per \
                    1000 of at least 100000 operations",
        why: "a thread waiting on a device is off the CPU; a run that read from a device \
              waited for it",
        check: generator_bound,
    },
    Rule {
        code: Code::LevelShift,
        threshold: "a throughput change of more than 30% lasting 3 intervals on each side",
        why: "one spike is no shift; a lasting one means the run measured two things",
        check: level_shift,
    },
    Rule {
        code: Code::Unstable,
        threshold: "at least 3 full intervals whose throughput varies by a CV over 0.5",
        why: "a clean run's intervals stay within 10%; 50% is no single figure",
        check: unstable,
    },
    Rule {
        code: Code::LatencyBurst,
        threshold: "an open-loop p99 at least 4x the p99 without its worst tenth, and 1 ms \
                    above it",
        why: "one stall of the host or the device sets the p99 of a few-second run",
        check: latency_burst,
    },
    Rule {
        code: Code::TooShort,
        threshold: "under 0.05 s or 100 operations; a run meant for the device under 0.5 s \
                    (5 of the workers' 100 ms intervals)",
        why: "the warm-up is a large share of a shorter run; a device settles (queue, \
              read-ahead window, write-back, host and drive caches) over its first few \
              hundred milliseconds",
        check: too_short,
    },
    Rule {
        code: Code::SplitRequests,
        threshold: "at least a quarter of an O_DIRECT run's slots in more physical pieces than \
                    the device's max_segments",
        why: "such reads split into two requests, at a rate set by where the pages fell",
        check: split_requests,
    },
    Rule {
        code: Code::SmallTestArea,
        threshold: "a cold buffered read of a file no larger than the top device's read-ahead",
        why: "the first read fetches the whole file; the rest come from memory",
        check: small_test_area,
    },
];

/// The verdict of a finished result (`facts`: the run's own, `None` where none was taken; a
/// result's timeline is read from `r.timeline`). Pure: see the module doc.
pub fn judge(
    r: &RunResult,
    facts: Option<&Facts>,
    ctx: &Context,
    profile: Option<&Profile>,
) -> Judgement {
    let input = Input::new(r, facts, ctx, profile);
    let mut reasons: Vec<Reason> = Vec::new();
    let mut notes = Vec::new();
    for rule in RULES {
        match (rule.check)(&input) {
            Some(Finding::Suspect(sentence)) if !reasons.iter().any(|x| x.code == rule.code) => {
                reasons.push(Reason {
                    code: rule.code,
                    sentence,
                })
            }
            Some(Finding::Note(n)) => notes.push(n),
            _ => {}
        }
    }
    Verdict {
        notes,
        ..Verdict::of(reasons)
    }
}

fn suspect(s: String) -> Option<Finding> {
    Some(Finding::Suspect(s))
}

fn not_a_disk(i: &Input) -> Option<Finding> {
    if let Some(fs) = &i.ctx.filesystem {
        let t = fs.fs_type.as_str();
        if RAM_FS.contains(&t) {
            return suspect(format!(
                "the file is on {}, in RAM: no disk was measured",
                shown(t)
            ));
        }
        if NET_FS.iter().any(|n| t.starts_with(n)) || t.starts_with("fuse") {
            return suspect(format!(
                "the file is on {}, a network or userspace filesystem: the figure is the \
                 network's and the server's, not a local disk's",
                shown(t)
            ));
        }
    }
    let dev = i.device();
    let bottom = i
        .ctx
        .device
        .as_ref()
        .map(|d| d.name.clone())
        .unwrap_or_default();
    if let Some(n) = [dev, bottom].into_iter().find(|n| ram_device(n)) {
        return suspect(format!(
            "the device {} is a RAM block device: no disk was measured",
            shown(&n)
        ));
    }
    let below = i.facts.and_then(|f| f.ram_below.as_ref())?;
    suspect(format!("{below}: no disk was measured"))
}

/// A read the zero-filled extents matter to: any read but a warm one (a warm read measures
/// the page cache by design, zero pages included).
fn reads_the_device_maybe(i: &Input) -> bool {
    i.read && !i.warm && i.r.figures.bytes >= MIN_JUDGED_BYTES
}

fn sparse(i: &Input) -> Option<Finding> {
    let m = i.facts?.extents()?;
    let share = m.share(m.hole_bytes);
    (reads_the_device_maybe(i) && share > ZERO_SHARE).then(|| {
        Finding::Suspect(format!(
            "{} of the file ({} of {}) is holes: a read of a hole returns zeros made in \
             memory and never asks the device, so the figure is not the device's",
            pct(share),
            fmt_bytes(m.hole_bytes),
            fmt_bytes(m.file_bytes)
        ))
    })
}

fn unwritten(i: &Input) -> Option<Finding> {
    let m = i.facts?.extents()?;
    let share = m.share(m.unwritten_bytes);
    (reads_the_device_maybe(i) && share > ZERO_SHARE).then(|| {
        Finding::Suspect(format!(
            "{} of the file ({} of {}) is allocated but never written (preallocated): such \
             extents read as zeros without asking the device, so the figure is not the \
             device's",
            pct(share),
            fmt_bytes(m.unwritten_bytes),
            fmt_bytes(m.file_bytes)
        ))
    })
}

fn compressed(i: &Input) -> Option<Finding> {
    let applies = reads_the_device_maybe(i)
        || (i.write && (i.synced || i.r.setup.direct) && i.r.figures.bytes >= MIN_JUDGED_BYTES);
    if !applies {
        return None;
    }
    if let Some(m) = i.facts.and_then(Facts::extents) {
        let share = m.share(m.encoded_bytes);
        return (share > ENCODED_SHARE).then(|| {
            Finding::Suspect(format!(
                "{} of the file ({} of {}) is stored compressed (encoded extents{}): the \
                 device moved fewer bytes than were {}, so the figure is not the device's rate \
                 for such bytes",
                pct(share),
                fmt_bytes(m.encoded_bytes),
                fmt_bytes(m.file_bytes),
                compresses(i.ctx).map_or(String::new(), |c| format!(", {c}")),
                if i.write { "written" } else { "read" }
            ))
        });
    }
    // No extent map: the mount's options and the device's counters.
    let how = compresses(i.ctx)?;
    let b = i.r.timeline.as_ref()?.reading.bytes_ratio.clone()?;
    (b.ratio < CACHE_RATIO && (i.meant_for_device() || !i.warm)).then(|| {
        Finding::Suspect(format!(
            "the device {} moved {:.2}× the run's bytes ({} of {}) on {how}: the data \
             compressed, so the figure is not the device's rate for such bytes",
            shown(&b.device),
            b.ratio,
            fmt_bytes(b.device_bytes),
            fmt_bytes(b.file_bytes)
        ))
    })
}

fn not_cold(i: &Input) -> Option<Finding> {
    let resident = i.r.figures.residency_before_pct;
    let mode = i.r.setup.cache.known()?;
    (i.read && !resident.is_nan() && crate::cache::not_cold(mode, resident) && !i.in_ram).then(
        || {
            Finding::Suspect(format!(
                "{resident:.1}% of the file was in the page cache when the cold run started \
                 (eviction refused: another process maps or locks it, or read it again since): \
                 the run was not cold"
            ))
        },
    )
}

fn cache_not_disk(i: &Input) -> Option<Finding> {
    if !(i.read && (i.cold || i.r.setup.direct)) || i.in_ram {
        return None;
    }
    let what = if i.r.setup.direct { "O_DIRECT" } else { "cold" };
    // The loop's image, one level down: the device under its backing file.
    if let Some(f) = i.facts {
        if let (Some(c), Some((loop_read, _)), Some((below, _))) =
            (&f.chain, f.level_bytes(0), f.level_bytes(1))
        {
            let top = c.top()?;
            let buffered = top.kind == LevelKind::Loop && top.direct_io != Some(true);
            if buffered
                && loop_read >= MIN_JUDGED_BYTES
                && (below as f64) < BELOW_RATIO * loop_read as f64
            {
                return suspect(format!(
                    "the run read {} through {}, but {} under its image moved {} ({:.2}×): the \
                     image file was served from the page cache below the loop device, so no \
                     disk was read",
                    fmt_bytes(loop_read),
                    shown(&top.name),
                    shown(&c.levels.get(1)?.name),
                    fmt_bytes(below),
                    below as f64 / loop_read as f64
                ));
            }
        }
    }
    let held = i.device_held_bytes();
    if held < MIN_JUDGED_BYTES {
        return None;
    }
    if let Some(own) = i.own_bytes() {
        return ((own as f64) < CACHE_RATIO * held as f64).then(|| {
            Finding::Suspect(format!(
                "a {what} read that itself read {} from storage of the {} the device holds for \
                 it ({:.2}×, its own I/O accounting): the rest came from the page cache \
                 (another process read the file meanwhile, maps or locks it, or O_DIRECT was \
                 ignored by the filesystem)",
                fmt_bytes(own),
                fmt_bytes(held),
                own as f64 / held as f64
            ))
        });
    }
    // No accounting: the device's counters (which others' I/O can only raise: a miss, never a
    // false alarm).
    let b = i.r.timeline.as_ref()?.reading.bytes_ratio.clone()?;
    (b.file_bytes >= MIN_JUDGED_BYTES && b.ratio < CACHE_RATIO && compresses(i.ctx).is_none()).then(
        || {
            Finding::Suspect(format!(
                "a {what} read whose device {} moved {:.2}× the run's bytes ({} of {}): served \
                 from memory, not the disk",
                shown(&b.device),
                b.ratio,
                fmt_bytes(b.device_bytes),
                fmt_bytes(b.file_bytes)
            ))
        },
    )
}

fn cache_evicted(i: &Input) -> Option<Finding> {
    if !(i.warm && i.read && !i.r.setup.direct) || i.r.figures.bytes < MIN_JUDGED_BYTES {
        return None;
    }
    let own = i.own_bytes()?;
    let ratio = own as f64 / i.r.figures.bytes as f64;
    (ratio > WARM_DEVICE_RATIO).then(|| {
        let cache = i.facts.and_then(|f| {
            Some(format!(
                "; {:.0}% of the file was cached before and {:.0}% after",
                f.before.cache?.cached_pct(),
                f.after.cache?.cached_pct()
            ))
        });
        Finding::Suspect(format!(
            "a warm read that itself read {} from storage ({ratio:.2}× its bytes){}: the file \
             was evicted under it (memory pressure, DAMON reclaim)",
            fmt_bytes(own),
            cache.unwrap_or_default()
        ))
    })
}

fn writes_in_page_cache(i: &Input) -> Option<Finding> {
    if !i.write || i.r.setup.direct || i.synced || i.r.figures.bytes < MIN_JUDGED_BYTES {
        return None;
    }
    let dirty = i
        .facts
        .and_then(|f| f.after.cache)
        .map(|c| c.unwritten_bytes());
    // What the device under the file wrote during the run (every process's writes).
    let device_wrote = i
        .facts
        .filter(|_| i.r.mix.is_none())
        .and_then(|f| f.level_bytes(0))
        .map(|(_, w)| w);
    let figures = match dirty {
        Some(d) if (d as f64) >= DIRTY_SHARE * i.r.figures.bytes as f64 => format!(
            "{} of the {} written were still dirty or under writeback in the file's page cache \
             at its end",
            fmt_bytes(d),
            fmt_bytes(i.r.figures.bytes)
        ),
        Some(_) => match device_wrote {
            Some(w) if (w as f64) < DIRTY_SHARE * i.r.figures.bytes as f64 => format!(
                "its device {} wrote {} during the run for the {} written ({:.2}×)",
                shown(&i.device()),
                fmt_bytes(w),
                fmt_bytes(i.r.figures.bytes),
                w as f64 / i.r.figures.bytes as f64
            ),
            _ => return None,
        },
        // No cachestat: the device's counters.
        None => {
            let b = i.r.timeline.as_ref()?.reading.bytes_ratio.clone()?;
            if b.ratio >= DIRTY_SHARE {
                return None;
            }
            format!(
                "the device {} wrote {:.2}× the run's bytes ({} of {}) by its end",
                shown(&b.device),
                b.ratio,
                fmt_bytes(b.device_bytes),
                fmt_bytes(b.file_bytes)
            )
        }
    };
    suspect(format!(
        "buffered writes without --fsync or --dsync: {figures}, so the figure is the page \
         cache's; add --fsync (timed) or --dsync"
    ))
}

fn other_io(i: &Input) -> Option<Finding> {
    if !i.meant_for_device() {
        return None;
    }
    let f = i.facts?;
    let io = f.run_io()?;
    let (r, w) = f.others_bytes()?;
    let own = io.read_bytes + io.net_write_bytes();
    let others = r + w;
    if own < MIN_JUDGED_BYTES
        || others < MIN_OTHER_BYTES
        || (others as f64) <= OTHER_SHARE * own as f64
    {
        return None;
    }
    let dir = |b: u64, what: &str| (b > 0).then(|| format!("{} {what}", fmt_bytes(b)));
    let split: Vec<String> = [dir(r, "read"), dir(w, "written")]
        .into_iter()
        .flatten()
        .collect();
    suspect(format!(
        "the device {} moved {} that were not this run's ({}) beside the run's own {} \
         ({:.2}×, more than {OTHER_SHARE}×): another process used the device during the run",
        shown(&i.device()),
        fmt_bytes(others),
        split.join(", "),
        fmt_bytes(own),
        others as f64 / own as f64
    ))
}

fn cpu_contended(i: &Input) -> Option<Finding> {
    let f = i.facts?;
    // The run's own wait: its workers' run-queue time over their time in the run.
    let wait = f
        .run
        .worker_cpu_wait_s
        .filter(|_| i.r.figures.seconds > 0.0)
        .map(|w| w / (i.r.figures.seconds * i.r.setup.threads.max(1) as f64));
    contention(f.psi_cpu_some_pct(), wait, f.steal_pct()).map(Finding::Suspect)
}

/// The `cpu_contended` sentence, where it applies: some task waited for a CPU during more than
/// [`CPU_SOME_PCT`] of the measurement (`psi_some_pct`) and the measuring threads themselves
/// waited [`WORKER_WAIT_SHARE`] of their time or more (`own_wait_share`, when known), or the
/// hypervisor stole more than [`STEAL_PCT`]. Also the `syscalls` lab's rule.
pub fn contention(
    psi_some_pct: Option<f64>,
    own_wait_share: Option<f64>,
    steal_pct: Option<f64>,
) -> Option<String> {
    let some = psi_some_pct
        .filter(|p| *p > CPU_SOME_PCT && own_wait_share.is_none_or(|w| w >= WORKER_WAIT_SHARE));
    let steal = steal_pct.filter(|p| *p > STEAL_PCT);
    if some.is_none() && steal.is_none() {
        return None;
    }
    let mut parts = Vec::new();
    if let Some(p) = some {
        let own = own_wait_share.map_or(String::new(), |w| {
            format!(
                ", and the run's workers waited for one {:.0}% of their time",
                w * 100.0
            )
        });
        parts.push(format!(
            "some task waited for a CPU during {p:.0}% of the run (more than \
             {CPU_SOME_PCT:.0}%){own}"
        ));
    }
    if let Some(p) = steal {
        parts.push(format!("the hypervisor stole {p:.0}% of the CPU time"));
    }
    Some(format!(
        "{}: the run shared its CPUs with other work, so its figure includes waiting for them",
        parts.join(" and ")
    ))
}

fn memory_pressure(i: &Input) -> Option<Finding> {
    let p = i.facts?.psi_memory_some_pct()?;
    (p > MEMORY_SOME_PCT).then(|| {
        Finding::Suspect(format!(
            "some task stalled on memory (reclaim, refaults) during {p:.0}% of the run (more \
             than {MEMORY_SOME_PCT:.0}%): the page cache and the run's buffers were under \
             pressure"
        ))
    })
}

fn above_ceiling(i: &Input) -> Option<Finding> {
    let p = i.profile?;
    let e = model::explain_result(p, i.r)?;
    if e.explained {
        return None;
    }
    let pr = &e.prediction;
    if let Some(doubt) = &pr.doubt {
        return Some(Finding::Note(format!(
            "{:.1} MiB/s is above the profile's {} bound of {:.1} MiB/s, but {}",
            i.r.figures.mib_s,
            pr.bound,
            pr.bound_mib_s,
            model::untrusted(doubt)
        )));
    }
    // The run's own accounting says every byte came from storage: the path is what the run
    // says, and it is the ceiling that is low.
    let device_path = pr.bound.family() != super::profile::Family::Memory
        && pr.bound.family() != super::profile::Family::Methods;
    if let Some(own) = i.own_bytes().filter(|_| device_path && i.read) {
        if own as f64 >= CONFIRMED_RATIO * i.r.figures.bytes as f64 {
            return Some(Finding::Note(format!(
                "the run itself read {} from storage ({:.2}× its bytes) at {:.1} MiB/s, above \
                 the profile's {} bound of {:.1} MiB/s: the device delivered, so the profile is \
                 low for this path; `diskscope limits --refresh`",
                fmt_bytes(own),
                own as f64 / i.r.figures.bytes.max(1) as f64,
                i.r.figures.mib_s,
                pr.bound,
                pr.bound_mib_s
            )));
        }
    }
    let err = pr
        .error_pct
        .map_or("an unknown error".to_string(), |v| format!("±{v:.0}%"));
    suspect(format!(
        "{:.1} MiB/s is {:.1}× the machine's measured ceiling for this path ({} {:.1} MiB/s), \
         beyond the profile's error ({err}): faster than this machine goes, so the data did not \
         come from where the run says",
        i.r.figures.mib_s,
        e.pct_of_bound / 100.0,
        pr.bound,
        pr.bound_mib_s
    ))
}

fn generator_bound(i: &Input) -> Option<Finding> {
    let r = i.r;
    if !(i.meant_for_device() || i.cold || i.write || r.setup.block_size_bytes < SMALL_BLOCK_BYTES)
    {
        return None;
    }
    // The run's own accounting: did it move bytes to or from a device at all?
    let io = i.facts.and_then(Facts::run_io);
    let touched_no_device = io.map(|io| {
        ((io.read_bytes + io.net_write_bytes()) as f64)
            < NO_DEVICE_SHARE * r.figures.bytes.max(1) as f64
    });
    if touched_no_device == Some(false) {
        return None;
    }
    let workers = r.setup.threads.max(1).min(i.ctx.cpu_count.max(1)) as f64;
    let share = i
        .facts
        .and_then(|f| f.run.worker_user_cpu_s)
        .filter(|_| r.figures.seconds >= MIN_SECONDS)
        .map(|cpu| cpu / (r.figures.seconds * workers));
    // Buffered writes never wait in their workers (the device's work is in the fsync).
    let sleeps = i
        .facts
        .and_then(Facts::voluntary_switches)
        .filter(|_| i.read && r.figures.ops >= NEVER_WAITED_MIN_OPS);
    let why = match (share, sleeps) {
        (Some(share), _) if share >= CPU_BOUND_SHARE && touched_no_device == Some(true) => {
            Some(format!(
                "the workers spent {share:.2} of a core each in diskscope's own code and the \
                 run read nothing from a device"
            ))
        }
        (_, Some(n)) if n.saturating_mul(NEVER_WAITED_OPS_PER_SLEEP) <= r.figures.ops => {
            Some(format!(
                "the workers slept {n} times in {} operations (they never waited for a device)",
                r.figures.ops
            ))
        }
        _ => None,
    }?;
    let fix = if r
        .setup
        .method
        .known()
        .is_some_and(|m| crate::engine::caps(m).queued)
    {
        "more threads (-t), larger blocks, or a deeper queue"
    } else {
        "more threads (-t), larger blocks, or --method io_uring with a deep queue"
    };
    suspect(format!(
        "{why}, so the figure measures diskscope's own per-call CPU cost, not the disk; use \
         {fix}"
    ))
}

fn level_shift(i: &Input) -> Option<Finding> {
    let s = i.r.timeline.as_ref()?.reading.level_shift.clone()?;
    suspect(format!(
        "throughput went from {:.1} to {:.1} MiB/s at {:.1} s and stayed there: something \
         changed mid-run (another process, a cache filling or emptying, throttling)",
        s.before_mib_s, s.after_mib_s, s.at_s
    ))
}

fn unstable(i: &Input) -> Option<Finding> {
    let t = i.r.timeline.as_ref()?;
    if t.reading.level_shift.is_some() {
        return None;
    }
    let full: Vec<f64> = crate::measure::timeline::active_rows(&t.rows)
        .iter()
        .filter(|row| row.t_end_s - row.t_start_s >= 0.9 * t.interval_s)
        .map(|row| row.mib_s)
        .collect();
    if full.len() < MIN_INTERVALS {
        return None;
    }
    let n = full.len() as f64;
    let mean = full.iter().sum::<f64>() / n;
    let var = full.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
    (cv > MAX_INTERVAL_CV).then(|| {
        Finding::Suspect(format!(
            "its {} intervals spread ±{:.0}% around their mean (more than ±{:.0}%): too \
             unstable for one figure",
            full.len(),
            cv * 100.0,
            MAX_INTERVAL_CV * 100.0
        ))
    })
}

fn latency_burst(i: &Input) -> Option<Finding> {
    let b = i.r.timeline.as_ref()?.reading.burst?;
    (b.ratio() >= BURST_RATIO && b.p99_us - b.p99_without_us >= BURST_MIN_US).then(|| {
        Finding::Suspect(format!(
            "the response p99 ({}) is one burst's: {:.1}-{:.1} s held it, and without that \
             tenth of the run the p99 is {} ({:.0}x lower); one stall of the host or the \
             device, not the rate, so the p99 will not repeat: run again or longer before \
             trusting it",
            fmt_us(b.p99_us),
            b.start_s,
            b.end_s,
            fmt_us(b.p99_without_us),
            b.ratio()
        ))
    })
}

fn too_short(i: &Input) -> Option<Finding> {
    let r = i.r;
    if r.figures.seconds < MIN_SECONDS {
        return suspect(format!(
            "{:.3} s is shorter than the {MIN_SECONDS} s warm-up (thread start, first faults, \
             the queue filling): use more blocks",
            r.figures.seconds
        ));
    }
    if r.figures.ops < MIN_OPS {
        return suspect(format!(
            "{} operations are too few for a stable figure (at least {MIN_OPS}: the mean of \
             fewer is uncertain by more than ±20%): use more or smaller blocks",
            r.figures.ops
        ));
    }
    let intervals =
        (r.figures.seconds / crate::measure::SNAPSHOT_INTERVAL.as_secs_f64()).floor() as u32;
    (i.meant_for_device() && !i.in_ram && r.figures.seconds < DEVICE_SETTLE_S).then(|| {
        Finding::Suspect(format!(
            "a run meant for the device of {:.2} s spans {intervals} of the workers' 100 ms \
             intervals, fewer than {MIN_DEVICE_INTERVALS}: shorter than the device's settle \
             time ({DEVICE_SETTLE_S} s: the queue, the read-ahead window and write-back \
             ramping up, a host's or a drive's cache), so not a figure to bet on; use more \
             blocks",
            r.figures.seconds
        ))
    })
}

fn split_requests(i: &Input) -> Option<Finding> {
    let f = i.facts?;
    if !i.r.setup.direct || f.run.buffer_pieces.is_empty() {
        return None;
    }
    let (name, max) = f
        .chain
        .as_ref()
        .and_then(|c| {
            let top = c.top()?;
            Some((top.name.clone(), top.queue.max_segments?))
        })
        .or_else(|| {
            let d = i.ctx.device.as_ref()?;
            Some((d.name.clone(), d.max_segments?))
        })?;
    let l = crate::engine::BufferLayout {
        slot_bytes: f.run.buffer_slot_bytes as usize,
        pieces: f.run.buffer_pieces.clone(),
    };
    let split = l.split(max);
    let dir = if i.write { "write" } else { "read" };
    (split > 0 && split as f64 >= SPLIT_SHARE * l.pieces.len() as f64).then(|| {
        Finding::Suspect(format!(
            "{split} of the {} O_DIRECT buffers lie in more physical pieces than {} takes in \
             one request ({max}; the buffers: {}), so their {dir}s were split: the figure \
             depends on where the kernel put the pages and changes from run to run; --buffers \
             thp or hugetlb gives a repeatable one",
            l.pieces.len(),
            shown(&name),
            l.describe()
        ))
    })
}

fn small_test_area(i: &Input) -> Option<Finding> {
    if !(i.read && i.cold && !i.r.setup.direct) {
        return None;
    }
    // The top device's read-ahead: the one the filesystem's reads go through.
    let ra_kb = i
        .facts
        .and_then(|f| f.chain.as_ref()?.top()?.queue.read_ahead_kb)
        .or_else(|| i.ctx.device.as_ref()?.read_ahead_kb)?;
    let ra = ra_kb * 1024;
    let size = i.r.identity.file_size_bytes;
    (size > 0 && size <= ra).then(|| {
        Finding::Suspect(format!(
            "a cold read of a {} file, within one read-ahead window of {} ({ra_kb} KiB): the \
             first read fetches it all, the rest come from memory",
            fmt_bytes(size),
            shown(&i.device())
        ))
    })
}

#[cfg(test)]
mod tests;
