//! What a verdict says: its kind (`ok` or `suspect`), the stable reason codes with their
//! sentences, and the result columns they are written to and read back from. A leaf of the
//! judge, so the rules, the table and every front end that prints a verdict share these types
//! without importing the rules.

use crate::measure::RunResult;
use serde::{Deserialize, Serialize};
use std::fmt;

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

/// What [`judge`](super::judge) returns.
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
