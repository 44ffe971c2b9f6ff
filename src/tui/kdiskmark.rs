//! `k`: the KDiskMark set inside the explorer — SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1,
//! RND4K Q1T1, reads then writes, each for a fixed time — and the card of its results.
//!
//! KDiskMark (like CrystalDiskMark) runs fio with O_DIRECT and libaio; here the same shapes run
//! on io_uring with O_DIRECT. Where the file system refuses O_DIRECT (tmpfs) or io_uring is not
//! available, the set still runs, through the page cache or with `pread` at queue depth 1, and
//! the card says so, so its numbers are never mistaken for the real thing. Reads go to the
//! explored file, writes to the explorer's scratch file, as every write of the explorer.

use super::settings::Settings;
use crate::config::{Method, Op, Pattern, Setup};
use crate::measure::RunResult;

/// One test of the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdmTest {
    /// `SEQ1M Q8T1`.
    pub name: &'static str,
    pub pattern: Pattern,
    pub block_size_bytes: u64,
    pub queue_depth: u32,
}

/// The four tests, in KDiskMark's order.
pub const TESTS: [KdmTest; 4] = [
    KdmTest {
        name: "SEQ1M Q8T1",
        pattern: Pattern::Sequential,
        block_size_bytes: 1 << 20,
        queue_depth: 8,
    },
    KdmTest {
        name: "SEQ1M Q1T1",
        pattern: Pattern::Sequential,
        block_size_bytes: 1 << 20,
        queue_depth: 1,
    },
    KdmTest {
        name: "RND4K Q32T1",
        pattern: Pattern::Random,
        block_size_bytes: 4096,
        queue_depth: 32,
    },
    KdmTest {
        name: "RND4K Q1T1",
        pattern: Pattern::Random,
        block_size_bytes: 4096,
        queue_depth: 1,
    },
];

/// The `experiment` column of the set's rows starts with this, then the test's name.
pub const EXPERIMENT: &str = "tui-kdiskmark";

/// Seconds per test unless `DISKSCOPE_KDM_SECONDS` says otherwise (KDiskMark's default is 5).
pub const DEFAULT_SECONDS: f64 = 5.0;

/// What the machine allows for the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdmCaps {
    pub direct: bool,
    pub io_uring: bool,
}

/// A set in progress (or finished, for the card).
#[derive(Debug, Clone, PartialEq)]
pub struct KdmRun {
    pub caps: KdmCaps,
    pub seconds: f64,
    /// Index into [`KdmRun::steps`] of the test running now; `steps().len()` when done.
    pub step: usize,
    /// Rows of the finished tests, in step order (None: failed or cancelled).
    pub results: Vec<Option<RunResult>>,
    /// The settings to return to when the set ends.
    pub resume: Settings,
}

impl KdmRun {
    pub fn new(caps: KdmCaps, seconds: f64, resume: Settings) -> Self {
        KdmRun {
            caps,
            seconds,
            step: 0,
            results: Vec::new(),
            resume,
        }
    }

    /// The eight runs: every test reading, then every test writing.
    pub fn steps() -> Vec<(Op, KdmTest)> {
        [Op::Read, Op::Write]
            .into_iter()
            .flat_map(|op| TESTS.iter().map(move |t| (op, *t)))
            .collect()
    }

    /// Whether every test has had its turn.
    pub fn done(&self) -> bool {
        self.step >= Self::steps().len()
    }

    /// The settings of step `i`.
    pub fn settings(&self, i: usize) -> Option<Settings> {
        let (op, t) = *Self::steps().get(i)?;
        let uring = self.caps.io_uring;
        Some(Settings {
            setup: Setup {
                op,
                method: if uring {
                    Method::IoUring
                } else {
                    Method::Pread
                },
                block_size_bytes: t.block_size_bytes,
                threads: 1,
                queue_depth: if uring { t.queue_depth } else { 1 },
                direct: self.caps.direct,
                pattern: t.pattern,
                ..Setup::default()
            },
            run_ms: Some((self.seconds * 1000.0).round().max(1.0) as u64),
            rate: None,
        })
    }

    /// The experiment column of step `i`'s row.
    pub fn experiment(&self, i: usize) -> String {
        Self::steps()
            .get(i)
            .map(|(_, t)| experiment_of(t))
            .unwrap_or_default()
    }

    /// `SEQ1M Q8T1 read`, for the status line.
    pub fn step_name(&self, i: usize) -> String {
        match Self::steps().get(i) {
            Some((op, t)) => format!("{} {op}", t.name),
            None => String::new(),
        }
    }

    /// What differs from KDiskMark, for the card's title line.
    pub fn caveat(&self) -> Option<String> {
        let mut c = Vec::new();
        if !self.caps.direct {
            c.push("no O_DIRECT here: page cache figures");
        }
        if !self.caps.io_uring {
            c.push("no io_uring: pread at QD1");
        }
        (!c.is_empty()).then(|| c.join("; "))
    }
}

/// The test name of a row made by the set (`RND4K Q32T1`), kept in its experiment column
/// (`tui-kdiskmark RND4K Q32T1`) so it survives the fallbacks and the CSV.
pub fn test_name(r: &RunResult) -> Option<&str> {
    r.identity
        .experiment
        .strip_prefix(EXPERIMENT)
        .and_then(|rest| rest.strip_prefix(' '))
}

/// The experiment column of a row of test `t`.
pub fn experiment_of(t: &KdmTest) -> String {
    format!("{EXPERIMENT} {}", t.name)
}

/// Checks O_DIRECT on `path`'s file system by opening it with O_DIRECT (tmpfs refuses).
pub fn direct_works(path: &std::path::Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_is_four_tests_reading_then_writing_with_a_time_bound() {
        let caps = KdmCaps {
            direct: true,
            io_uring: true,
        };
        let k = KdmRun::new(caps, 2.0, Settings::default());
        assert_eq!(KdmRun::steps().len(), 8);
        let s = k.settings(2).unwrap();
        assert_eq!(
            (
                s.setup.op,
                s.setup.block_size_bytes,
                s.setup.queue_depth,
                s.setup.pattern,
                s.run_ms
            ),
            (Op::Read, 4096, 32, Pattern::Random, Some(2000))
        );
        assert_eq!(k.settings(4).unwrap().setup.op, Op::Write);
        assert!(k.settings(8).is_none());
        assert_eq!(k.caveat(), None);
        let fallback = KdmRun::new(
            KdmCaps {
                direct: false,
                io_uring: false,
            },
            1.0,
            Settings::default(),
        );
        assert_eq!(fallback.settings(0).unwrap().setup.method, Method::Pread);
        assert!(fallback.caveat().unwrap().contains("page cache"));
    }
}
