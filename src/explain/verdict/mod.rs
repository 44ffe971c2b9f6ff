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
//!
//! The parts: `thresholds` (every number), `codes` (what a verdict says), `input` (what a rule
//! is and reads), `data` (the rules about where the bytes came from) and `conditions` (the
//! rules about the run's conditions); the table of rules and [`judge`] are here, above them.

mod codes;
mod conditions;
mod data;
mod input;
mod thresholds;

pub use self::codes::{lines_of, Code, Judgement, Kind, Reason, Verdict};
pub use self::conditions::contention;
pub use self::input::{compresses, Finding, Input, Rule};
pub use self::thresholds::*;

use self::conditions::*;
use self::data::*;
use crate::explain::context::Context;
use crate::explain::profile::Profile;
use crate::facts::Facts;
use crate::measure::RunResult;

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
        why: "one spike is no shift; a lasting one means the run measured two things (not \
              judged on a write through the page cache: cache, writeback and fsync are its phases)",
        check: level_shift,
    },
    Rule {
        code: Code::Unstable,
        threshold: "at least 3 full intervals whose throughput varies by a CV over 0.5",
        why: "a clean run's intervals stay within 10%; 50% is no single figure (not judged on a \
              write through the page cache: cache, writeback and fsync are its phases)",
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

#[cfg(test)]
mod tests;
