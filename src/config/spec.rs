//! [`RunSpec`]: one validated run, the [`Setup`] it measures (the identity of a point) with the
//! [`Target`] it covers (which file, which part, how long) and its [`Safety`] (what it may
//! replace, how much memory it may take). Kept apart from `config`'s setting enums so that
//! `config` (the settings and the setup) never needs the run: a flag, a TOML key and a UI knob
//! land in the same [`Setup`] field, and [`RunSpec::validate`] refuses them in the same words.

use super::{
    check_block_size, check_queue_depth, check_threads, Buffers, Method, Op, Pattern, Setup,
    UsageError, WriteSync, MIX_METHODS,
};
use std::path::PathBuf;
use std::time::Duration;

/// A fully validated description of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    /// What is measured: the identity of the point.
    pub setup: Setup,
    /// Which file, which part of it, how long.
    pub target: Target,
    /// What the run may replace, mark and allocate.
    pub safety: Safety,
    /// The kernel view (`--kernel`, `crate::kernel`): each block request of the run timed in
    /// the block layer and the device, filtered by process or by device; `None`: off. An
    /// observation, not a setting of the I/O: the run does the same I/O either way, so it is
    /// no part of the [`Setup`] (the identity of a point).
    pub kernel: Option<crate::kernel::FilterBy>,
}

/// Where a run does its I/O and for how long.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub path: PathBuf,
    /// Sequential runs: where the covered range starts in the file, bytes (a fleet rank's share
    /// of a shared file, `src/fleet/`); `block_count` blocks are counted from here. 0 elsewhere.
    pub range_start_bytes: u64,
    /// Blocks to transfer; `None` means the whole file (reads) or until `duration`.
    pub block_count: Option<u64>,
    /// Time bound: the run stops at this duration even if blocks remain.
    pub duration: Option<Duration>,
    /// Start over at the beginning of each worker's range until stopped (needs a time bound or
    /// an external stop).
    pub loop_range: bool,
}

/// What a run may do to files and memory beyond its I/O.
#[derive(Debug, Clone, PartialEq)]
pub struct Safety {
    /// Replace an existing file when writing.
    pub force: bool,
    /// Write into an existing regular file in place, without truncating it (batch mode overwrites
    /// its own test file so writes measure overwrites, not block allocation).
    pub overwrite_in_place: bool,
    /// A write run sets this value as the file's [`crate::fsguard::MARK_XATTR`] extended
    /// attribute right after creating it (before laying it out): the explorer's proof that a
    /// scratch file is its own, so a session killed during the run leaves a file the next one
    /// can prove ours and remove. `None`: no mark.
    pub mark_created: Option<String>,
    /// Most bytes the run's I/O buffers may take (`--max-memory`); `None`: half of the memory
    /// available when the run starts (see `runner::budget`).
    pub max_memory_bytes: Option<u64>,
    /// Seed for written data and random offsets.
    pub seed: u64,
}

impl RunSpec {
    /// A sequential single-thread pread read of the whole file, warm-as-is ([`Setup::default`]):
    /// a base to adjust.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        RunSpec {
            setup: Setup::default(),
            target: Target {
                path: path.into(),
                range_start_bytes: 0,
                block_count: None,
                duration: None,
                loop_range: false,
            },
            safety: Safety {
                force: false,
                overwrite_in_place: false,
                mark_created: None,
                max_memory_bytes: None,
                seed: crate::pattern::DEFAULT_SEED,
            },
            kernel: None,
        }
    }

    /// How its writes are made durable; reads have none (a read's asked `write_sync` is moot).
    pub fn write_sync(&self) -> WriteSync {
        if self.setup.op == Op::Write {
            self.setup.write_sync
        } else {
            WriteSync::None
        }
    }

    /// Whether this run mixes reads and writes (see [`Setup::mix_read_pct`]).
    pub fn is_mixed(&self) -> bool {
        self.setup.is_mixed()
    }

    /// Checks ranges and conflicts. `names` says how to call each setting in messages (CLI flag or
    /// TOML key).
    pub fn validate(&self, names: &Names) -> Result<(), UsageError> {
        let s = &self.setup;
        let t = &self.target;
        check_block_size(s.block_size_bytes, names.block_size)?;
        if t.block_count == Some(0) {
            return Err(UsageError::new(names.block_count, "must be at least 1"));
        }
        if let Some(c) = t.block_count {
            if s.block_size_bytes.checked_mul(c).is_none() {
                return Err(UsageError::new(
                    names.block_count,
                    format!(
                        "{} x {} overflows 64 bits; use a smaller count",
                        names.block_size, names.block_count
                    ),
                ));
            }
        }
        check_threads(s.threads, names.threads)?;
        check_queue_depth(s.queue_depth, names.queue_depth)?;
        if s.direct && !s.method.supports_direct() {
            return Err(UsageError::new(
                names.direct,
                format!(
                    "O_DIRECT does not apply to method {}; use {}",
                    s.method,
                    Method::direct_names("or")
                ),
            ));
        }
        if s.direct && !s.block_size_bytes.is_multiple_of(512) {
            return Err(UsageError::new(names.direct, format!("O_DIRECT needs a block size that is a multiple of 512 (the sector size); got {}", s.block_size_bytes
            )));
        }
        if s.direct && s.buffers == Buffers::Malloc {
            return Err(UsageError::new(
                names.direct,
                "O_DIRECT needs page-aligned buffers and malloc's start 16 bytes past a page; \
                 use --buffers plain (or thp, hugetlb, auto)",
            ));
        }
        if s.op == Op::Write && t.block_count.is_none() && t.duration.is_none() {
            return Err(UsageError::new(
                names.block_count,
                "a write needs a block count or a time bound",
            ));
        }
        if let Some(pct) = s.mix_read_pct {
            check_mix(self, pct, mix_name(names))?;
        }
        if let Some(r) = s.rate() {
            super::check_rate_iops(r, rate_name(names))?;
        }
        if s.pattern == Pattern::Random
            && t.block_count.is_none()
            && t.duration.is_none()
            && !t.loop_range
        {
            return Err(UsageError::new(
                names.block_count,
                "random offsets need a block count or a time bound",
            ));
        }
        Ok(())
    }
}

/// The name of the rate setting in the words of `names` (`--rate`, `rate`).
fn rate_name(names: &Names) -> &'static str {
    if names.threads.starts_with("--") {
        "--rate"
    } else {
        "rate"
    }
}

/// The name of the mix setting in the words of `names` (`--mix` on the command line, `mix` in
/// TOML), read off the threads' name so that [`Names`] keeps its fields.
fn mix_name(names: &Names) -> &'static str {
    if names.threads.starts_with("--") {
        "--mix"
    } else {
        "mix"
    }
}

/// Checks a mixed workload of `pct` percent reads (see [`Setup::mix_read_pct`]), naming `key`.
pub fn check_mix(spec: &RunSpec, pct: u32, key: &str) -> Result<(), UsageError> {
    let s = &spec.setup;
    if pct == 0 || pct >= 100 {
        return Err(UsageError::new(
            key,
            format!(
                "the share of reads must be between 1 and 99 percent, got {pct}; only reads or \
                 only writes is no mix: run -r or -w (operation = \"read\"/\"write\"; fio's \
                 rw=randread/randwrite)"
            ),
        ));
    }
    if s.op != Op::Write {
        return Err(UsageError::new(
            key,
            "a mix writes, so it runs only on a file this run creates; it cannot read an \
             existing file (use -m alone, not with -r)",
        ));
    }
    if !MIX_METHODS.contains(&s.method) {
        return Err(UsageError::new(
            key,
            format!(
                "method {} does not mix reads and writes; use pread or io_uring (fio's psync \
                 and io_uring)",
                s.method
            ),
        ));
    }
    if s.rate_iops.is_some() {
        return Err(UsageError::new(
            key,
            "an open-loop run (--rate) of a mix is not implemented; drop --rate or the mix",
        ));
    }
    if spec.target.block_count.is_none() && spec.target.duration.is_none() {
        return Err(UsageError::new(
            key,
            "a mix needs a block count or a time bound (it sizes the file it creates)",
        ));
    }
    Ok(())
}

/// The user-facing names of settings, for error messages.
#[derive(Debug, Clone, Copy)]
pub struct Names {
    pub block_size: &'static str,
    pub block_count: &'static str,
    pub threads: &'static str,
    pub queue_depth: &'static str,
    pub direct: &'static str,
}

/// Names as on the command line.
pub const CLI_NAMES: Names = Names {
    block_size: "BLOCK_SIZE",
    block_count: "BLOCK_COUNT",
    threads: "--threads",
    queue_depth: "--queue-depth",
    direct: "--direct",
};

/// Names as TOML keys.
pub const TOML_NAMES: Names = Names {
    block_size: "block_size",
    block_count: "block_count",
    threads: "threads",
    queue_depth: "queue_depth",
    direct: "direct",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_specs_are_rejected_naming_the_setting() {
        let mut s = RunSpec::new("/x");
        s.setup.threads = 0;
        assert!(s
            .validate(&CLI_NAMES)
            .unwrap_err()
            .to_string()
            .starts_with("--threads"));
        let mut s = RunSpec::new("/x");
        s.setup.block_size_bytes = 2 << 30;
        assert!(s
            .validate(&CLI_NAMES)
            .unwrap_err()
            .to_string()
            .contains("1G maximum"));
        let mut s = RunSpec::new("/x");
        s.setup.block_size_bytes = 1 << 30;
        s.target.block_count = Some(u64::MAX / 2);
        assert!(s
            .validate(&CLI_NAMES)
            .unwrap_err()
            .to_string()
            .contains("overflows"));
        let mut s = RunSpec::new("/x");
        s.setup.method = Method::Mmap;
        s.setup.direct = true;
        assert!(s
            .validate(&TOML_NAMES)
            .unwrap_err()
            .to_string()
            .starts_with("direct"));
    }
}
