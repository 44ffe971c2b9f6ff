//! The knobs of the explorer and how each key turns them.
//!
//! [`Settings`] is what the panel shows; [`Settings::spec`] turns it into the one validated
//! [`RunSpec`] the engine runs, so the UI can never start something `run` would reject. Every
//! adjustment either changes the settings or returns a one-line reason why it did not (shown in
//! the status line), never a half-applied state.

use crate::config::spec::RunSpec;
use crate::config::{CacheMode, Method, Op, Pattern, Setup, UsageError};
use std::path::Path;

/// Smallest block size the arrow keys reach (O_DIRECT needs a multiple of 512); `b` reaches
/// any size from [`MIN_TYPED_BLOCK_SIZE_BYTES`] to [`MAX_TYPED_BLOCK_SIZE_BYTES`].
pub const MIN_BLOCK_SIZE_BYTES: u64 = 512;
/// Smallest block size `b` accepts.
pub const MIN_TYPED_BLOCK_SIZE_BYTES: u64 = 1;
/// Largest block size `b` accepts (one buffer of this size per thread).
pub const MAX_TYPED_BLOCK_SIZE_BYTES: u64 = 1 << 30;
/// Largest block size the arrow keys reach: bigger blocks only cost memory per thread.
pub const MAX_BLOCK_SIZE_BYTES: u64 = 64 << 20;
/// Most worker threads the keys reach.
pub const MAX_THREADS: usize = 64;
/// Deepest io_uring queue the keys reach.
pub const MAX_QUEUE_DEPTH: u32 = 256;
/// Largest region the write mode cycles through in its scratch file.
pub const MAX_WRITE_SPAN_BYTES: u64 = 1 << 30;
/// The share of reads `w` mixes until `W` types another: 50 %, fio's default `rwmixread`, so a
/// mix with no share given is the same workload in both programs.
pub const DEFAULT_MIX_READ_PCT: u32 = 50;

/// How writes reach the disk (`f` cycles none, fsync at the end, O_DSYNC): the page cache's
/// speed is not the disk's, so `f` makes a write figure durable. Reads ignore it.
pub use crate::config::WriteSync;

/// What the user has dialled in: the setup of the next run (a write's own settings kept while
/// it reads, so `w` back to a write finds them), and what the setup alone does not say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The knobs: operation (a mix, `w`/`W`, writes, on the scratch file), method, block size,
    /// threads, queue depth, O_DIRECT, order, durability of writes (`f`), buffers (`M`), and
    /// `cache`: `cold` keeps the explored file out of the page cache (reads only), `as-is`
    /// otherwise. Its `rate_iops` is unused: the open loop is [`Settings::rate`], worked out at
    /// each run's block size.
    pub setup: Setup,
    /// A time bound, ms (the KDiskMark set's runs); `None` runs until stopped.
    pub run_ms: Option<u64>,
    /// Open loop (issue 25, `--rate` of run; `R`): the rate over all threads as typed (ops/s,
    /// or a throughput whose ops/s follow the block size), each operation with an intended
    /// start; None: closed loop.
    pub rate: Option<Rate>,
}

impl Default for Settings {
    /// Sequential single-thread 1 MiB `pread`, warm: the fastest honest start.
    fn default() -> Self {
        Settings {
            setup: Setup {
                queue_depth: 8,
                ..Setup::default()
            },
            run_ms: None,
            rate: None,
        }
    }
}

/// Most operations per second an open loop may ask (`--rate`'s bound).
pub const MAX_RATE_IOPS: f64 = 1e9;

/// An open-loop rate as the user typed it after `R`. A throughput stays a throughput: its
/// operations per second are worked out at each run's block size, so `50 MiB/s` offers 50 MiB/s
/// at 4K and at 1M alike (stored as ops/s, it silently became 12.5 MiB/s after `←` twice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// Operations per second over all threads (`2000`).
    Iops(u64),
    /// Bytes per second over all threads (`50M/s`, `1 GiB/s`).
    BytesPerSec(u64),
}

impl Rate {
    /// Operations per second at blocks of `block_size_bytes`.
    pub fn iops_at(self, block_size_bytes: u64) -> f64 {
        match self {
            Rate::Iops(n) => n as f64,
            Rate::BytesPerSec(b) => b as f64 / block_size_bytes.max(1) as f64,
        }
    }

    /// Bytes per second at blocks of `block_size_bytes`.
    pub fn bytes_per_s_at(self, block_size_bytes: u64) -> f64 {
        self.iops_at(block_size_bytes) * block_size_bytes as f64
    }

    /// What the user asked, both ways: `2000/s (1.95 GiB/s at 1M)`, `50.0 MiB/s (12.8k/s at
    /// 4K)`.
    pub fn both(self, block_size_bytes: u64) -> String {
        let iops = per_s(self.iops_at(block_size_bytes));
        let bytes = bytes_per_s_text(self.bytes_per_s_at(block_size_bytes));
        let bs = crate::size::format_size(block_size_bytes);
        match self {
            Rate::Iops(_) => format!("{iops} ({bytes} at {bs})"),
            Rate::BytesPerSec(_) => format!("{bytes} ({iops} at {bs})"),
        }
    }

    /// What was typed, short: `2000/s`, `50.0MiB/s`.
    pub fn short(self, block_size_bytes: u64) -> String {
        match self {
            Rate::Iops(n) => per_s(n as f64),
            Rate::BytesPerSec(_) => {
                bytes_per_s_text(self.bytes_per_s_at(block_size_bytes)).replace(' ', "")
            }
        }
    }
}

/// `2000/s`, `12.8k/s`, `1.00M/s`, `0.5/s`: operations per second, at most 8 characters
/// (this layer is below the widgets, so it has its own short form of a count).
pub fn per_s(iops: f64) -> String {
    let v = if iops < 9.95 {
        format!("{iops:.1}").trim_end_matches(".0").to_string()
    } else {
        short_count(iops)
    };
    format!("{v}/s")
}

/// A count in at most 6 characters: `950`, `9999`, `12.3k`, `941k`, `1.20M`, `3.00G`.
fn short_count(v: f64) -> String {
    let scaled = |d: f64, unit: &str| {
        let x = v / d;
        if x >= 99.95 {
            format!("{x:.0}{unit}")
        } else if x >= 9.995 {
            format!("{x:.1}{unit}")
        } else {
            format!("{x:.2}{unit}")
        }
    };
    if v >= 999.5e6 {
        scaled(1e9, "G")
    } else if v >= 999.5e3 {
        scaled(1e6, "M")
    } else if v >= 9999.5 {
        scaled(1e3, "k")
    } else {
        format!("{v:.0}")
    }
}

/// `50.0 MiB/s`, `1.00 GiB/s`, `512 KiB/s`, `100 B/s`: a throughput in binary units.
pub fn bytes_per_s_text(bytes_per_s: f64) -> String {
    const UNITS: [&str; 5] = ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"];
    let mut v = bytes_per_s;
    let mut u = 0;
    while v >= 1023.995 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    let n = if u == 0 || v >= 99.95 {
        format!("{v:.0}")
    } else if v >= 9.995 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    format!("{n} {}", UNITS[u])
}

impl Settings {
    /// The run these settings describe: a time-unbounded run that stops when told — looping over
    /// the range, or for cold sequential reads one pass that the session chains.
    /// Reads go to `file`; writes go to `scratch` (never to `file`) over a region as large as
    /// the explored file, at most [`MAX_WRITE_SPAN_BYTES`].
    pub fn spec(&self, file: &Path, scratch: &Path, file_size_bytes: u64) -> RunSpec {
        let s = &self.setup;
        let write = s.op == Op::Write;
        let cold = self.cold() && !write;
        let mut spec = RunSpec::new(if write { scratch } else { file });
        spec.setup = Setup {
            queue_depth: crate::engine::caps(s.method).queue_depth(s.queue_depth),
            cache: if cold {
                CacheMode::Cold
            } else {
                CacheMode::AsIs
            },
            rate_iops: self.rate_iops().map(crate::config::Iops),
            // A read's durability and mix are a write's, kept for `w`.
            write_sync: if write { s.write_sync } else { WriteSync::None },
            mix_read_pct: s.mix_read_pct.filter(|_| write),
            ..*s
        };
        // Cold sequential reads run one pass at a time (the session evicts and starts the next
        // pass), so every pass starts cold; everything else loops until stopped.
        spec.target.loop_range = !(cold && s.pattern == Pattern::Sequential);
        spec.target.duration = self.run_ms.map(std::time::Duration::from_millis);
        if write {
            let span = file_size_bytes.clamp(s.block_size_bytes, MAX_WRITE_SPAN_BYTES);
            spec.target.block_count = Some(span.div_ceil(s.block_size_bytes));
            // The scratch file is ours: replace it on every restart.
            spec.safety.force = true;
        }
        spec
    }

    /// Whether the explored file is kept out of the page cache (reads only).
    pub fn cold(&self) -> bool {
        self.setup.cache == CacheMode::Cold
    }

    /// Keeps the explored file out of the page cache, or not.
    pub fn set_cold(&mut self, cold: bool) {
        self.setup.cache = if cold {
            CacheMode::Cold
        } else {
            CacheMode::AsIs
        };
    }

    /// The open loop's operations per second at these settings' block size; None: closed loop.
    pub fn rate_iops(&self) -> Option<f64> {
        self.rate.map(|r| r.iops_at(self.setup.block_size_bytes))
    }

    /// Whether these settings mix reads and writes.
    pub fn is_mixed(&self) -> bool {
        self.setup.op == Op::Write && self.setup.mix_read_pct.is_some()
    }

    /// What the run does, for the panel and messages: `read`, `write`, `mix 70/30`.
    pub fn op_text(&self) -> String {
        match self.setup.mix_read_pct {
            Some(p) if self.setup.op == Op::Write => format!("mix {p}/{}", 100 - p),
            _ => self.setup.op.to_string(),
        }
    }

    /// Checks the settings the way `run` checks its flags.
    pub fn validate(&self) -> Result<(), UsageError> {
        let names = crate::config::spec::Names {
            block_size: "block size",
            block_count: "block count",
            threads: "threads",
            queue_depth: "queue depth",
            direct: "O_DIRECT",
        };
        self.spec(Path::new("f"), Path::new("s"), 1 << 30)
            .validate(&names)?;
        match self.rate_iops() {
            Some(iops) if !(iops > 0.0 && iops <= MAX_RATE_IOPS) => Err(UsageError::new(
                "rate",
                format!(
                    "{} is {} operations per second at {} blocks, over the {MAX_RATE_IOPS:.0e} \
                     an open loop can ask; type a lower rate (R) or a larger block",
                    self.rate
                        .map_or(String::new(), |r| r.short(self.setup.block_size_bytes)),
                    short_count(iops),
                    crate::size::format_size(self.setup.block_size_bytes)
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Halves (`up == false`) or doubles the block size.
    pub fn step_block_size(&mut self, up: bool) -> Result<(), String> {
        let next = if up {
            self.setup.block_size_bytes.saturating_mul(2)
        } else {
            self.setup.block_size_bytes / 2
        };
        if !(MIN_BLOCK_SIZE_BYTES..=MAX_BLOCK_SIZE_BYTES).contains(&next) {
            return Err(format!(
                "block size stays between {} and {} here",
                crate::size::format_size(MIN_BLOCK_SIZE_BYTES),
                crate::size::format_size(MAX_BLOCK_SIZE_BYTES)
            ));
        }
        self.try_set(|s| s.setup.block_size_bytes = next)
    }

    /// Sets an exact block size typed after `b` (`12K`, `3`, `1M`): 1 B to 1 GiB.
    pub fn set_block_size_text(&mut self, text: &str) -> Result<(), String> {
        let bytes = crate::size::parse_size(text).map_err(|e| format!("block size: {e}"))?;
        if !(MIN_TYPED_BLOCK_SIZE_BYTES..=MAX_TYPED_BLOCK_SIZE_BYTES).contains(&bytes) {
            return Err(format!(
                "block size: {text} is outside 1 B to 1G; type e.g. 4K, 12K or 3"
            ));
        }
        self.try_set(|s| s.setup.block_size_bytes = bytes)
    }

    /// Plain writes → fsync at the end → O_DSYNC → plain.
    pub fn cycle_sync(&mut self) {
        self.setup.write_sync = match self.setup.write_sync {
            WriteSync::None => WriteSync::FsyncAtEnd,
            WriteSync::FsyncAtEnd => WriteSync::Dsync,
            WriteSync::Dsync | WriteSync::DsyncAndFsync => WriteSync::None,
        };
    }

    /// The method's name for this operation: writes go through `write`, `pwrite`, stores into
    /// the mapping, io_uring writes or a buffered writer, so a write row never reads `pread`.
    pub fn method_label(&self) -> &'static str {
        method_label(self.setup.op, self.setup.method)
    }

    /// The method as the panel names it: [`Settings::method_label`], and for a mix both calls
    /// when they differ (`pread/pwrite`; `io_uring` does both).
    pub fn method_text(&self) -> String {
        let read = method_label(Op::Read, self.setup.method);
        let write = method_label(Op::Write, self.setup.method);
        if self.is_mixed() && read != write {
            format!("{read}/{write}")
        } else {
            self.method_label().to_string()
        }
    }

    /// One thread more or less.
    pub fn step_threads(&mut self, up: bool) -> Result<(), String> {
        let next = if up {
            self.setup.threads + 1
        } else {
            self.setup.threads.saturating_sub(1)
        };
        if next == 0 || next > MAX_THREADS {
            return Err(format!("threads stay between 1 and {MAX_THREADS} here"));
        }
        self.try_set(|s| s.setup.threads = next)
    }

    /// Halves or doubles the io_uring queue depth.
    pub fn step_queue_depth(&mut self, up: bool) -> Result<(), String> {
        if !crate::engine::caps(self.setup.method).queued {
            return Err("queue depth applies to io_uring; press m to reach it".into());
        }
        let next = if up {
            self.setup.queue_depth * 2
        } else {
            self.setup.queue_depth / 2
        };
        if next == 0 || next > MAX_QUEUE_DEPTH {
            return Err(format!("queue depth stays between 1 and {MAX_QUEUE_DEPTH}"));
        }
        self.try_set(|s| s.setup.queue_depth = next)
    }

    /// The next method in `Method::ALL`. A method that cannot use O_DIRECT turns it off (and
    /// says so in the returned note) rather than being skipped, so every method stays reachable.
    pub fn cycle_method(&mut self) -> Option<String> {
        let i = Method::ALL
            .iter()
            .position(|m| *m == self.setup.method)
            .unwrap_or(0);
        self.setup.method = Method::ALL[(i + 1) % Method::ALL.len()];
        let mut notes = Vec::new();
        if self.setup.direct && !crate::engine::caps(self.setup.method).direct() {
            self.setup.direct = false;
            notes.push(format!("O_DIRECT off: {} cannot use it", self.setup.method));
        }
        if self.setup.mix_read_pct.is_some()
            && !crate::config::MIX_METHODS.contains(&self.setup.method)
        {
            // Writes stay writes: the scratch file is still the target.
            self.setup.mix_read_pct = None;
            notes.push(format!(
                "mix off, writing: {} does not mix reads and writes (pread and io_uring do)",
                self.setup.method
            ));
        }
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// O_DIRECT on or off.
    pub fn toggle_direct(&mut self) -> Result<(), String> {
        self.try_set(|s| s.setup.direct = !s.setup.direct)
    }

    /// `M`: the next buffer backing (auto, plain, malloc, thp, hugetlb), skipping one the
    /// other settings refuse (malloc's unaligned buffers under O_DIRECT), checked as
    /// `--buffers` is.
    pub fn cycle_buffers(&mut self) -> Result<(), String> {
        use crate::config::Buffers;
        const ORDER: [Buffers; 5] = [
            Buffers::Auto,
            Buffers::Plain,
            Buffers::Malloc,
            Buffers::Thp,
            Buffers::HugeTlb,
        ];
        let at = ORDER
            .iter()
            .position(|b| *b == self.setup.buffers)
            .unwrap_or(0);
        let mut last = String::new();
        for step in 1..ORDER.len() {
            let next = ORDER[(at + step) % ORDER.len()];
            match self.try_set(|s| s.setup.buffers = next) {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// `R` then Enter: a rate as `--rate` reads it: whole ops/s (`2000`, `2000/s`), or a
    /// throughput (`50M/s`, `1 GiB/s`) kept as typed, its ops/s worked out at each run's block
    /// size; `0` or nothing: closed loop.
    pub fn set_rate_text(&mut self, text: &str) -> Result<(), String> {
        let t = text.trim();
        if t.is_empty() || t == "0" {
            return self.try_set(|s| s.rate = None);
        }
        let lower = t.to_ascii_lowercase();
        let plain = lower
            .strip_suffix("/s")
            .map(str::trim)
            .filter(|n| n.parse::<f64>().is_ok());
        let rate = match (plain, lower.ends_with("/s")) {
            (Some(n), _) => {
                let iops =
                    crate::measure::pacer::parse_rate(n, self.setup.block_size_bytes, "rate")?;
                Rate::Iops(iops.round().max(1.0) as u64)
            }
            (None, true) => {
                // Read at 1 MiB blocks only to get the bytes: `parse_rate` bounds ops/s.
                let per_mib = crate::measure::pacer::parse_rate(t, 1 << 20, "rate")?;
                Rate::BytesPerSec(((per_mib * (1u64 << 20) as f64).round() as u64).max(1))
            }
            (None, false) => {
                let iops =
                    crate::measure::pacer::parse_rate(t, self.setup.block_size_bytes, "rate")?;
                Rate::Iops(iops.round().max(1.0) as u64)
            }
        };
        self.try_set(|s| s.rate = Some(rate))
    }

    /// Read or write (a mix ends as a read).
    pub fn toggle_op(&mut self) {
        self.setup.op = match self.setup.op {
            Op::Read => Op::Write,
            Op::Write => Op::Read,
        };
        self.setup.mix_read_pct = None;
    }

    /// `w`: read → write → a mix of `mix_pct` % reads → read. A mix these settings cannot run
    /// (a method other than pread or io_uring, an open loop) is passed over to read, and the
    /// returned note says why, so `w` never sticks. Returns that note, if any.
    pub fn cycle_op(&mut self, mix_pct: u32) -> Option<String> {
        match (self.setup.op, self.setup.mix_read_pct) {
            (Op::Read, _) => {
                self.setup.op = Op::Write;
                self.setup.mix_read_pct = None;
                None
            }
            (Op::Write, None) => match self.try_set(|s| s.setup.mix_read_pct = Some(mix_pct)) {
                Ok(()) => None,
                Err(why) => {
                    self.setup.op = Op::Read;
                    self.setup.mix_read_pct = None;
                    Some(format!("no mix ({why})"))
                }
            },
            (Op::Write, Some(_)) => {
                self.setup.op = Op::Read;
                self.setup.mix_read_pct = None;
                None
            }
        }
    }

    /// `W` then Enter: a mix of `text` percent reads (`70`), checked as `run -m` checks it;
    /// the settings then mix at that share. Returns the share.
    pub fn set_mix_text(&mut self, text: &str) -> Result<u32, String> {
        let t = text.trim().trim_end_matches('%');
        let pct: u32 = t.parse().map_err(|_| {
            format!(
                "mix: type the percent of operations that read, 1 to 99 (e.g. 70); got '{}'",
                crate::text::shown(text)
            )
        })?;
        self.try_set(|s| {
            s.setup.op = Op::Write;
            s.setup.mix_read_pct = Some(pct);
        })?;
        Ok(pct)
    }

    /// Sequential or random offsets.
    pub fn toggle_pattern(&mut self) {
        self.setup.pattern = match self.setup.pattern {
            Pattern::Sequential => Pattern::Random,
            Pattern::Random => Pattern::Sequential,
        };
    }

    /// Applies `change` only if the result is valid; otherwise explains why not.
    fn try_set(&mut self, change: impl FnOnce(&mut Settings)) -> Result<(), String> {
        let mut next = *self;
        change(&mut next);
        next.validate().map_err(|e| e.to_string())?;
        *self = next;
        Ok(())
    }

    /// Short form for messages: `read pread 1M`, `write pwrite 4K`, `mix 70/30 pread 4K`.
    pub fn short(&self) -> String {
        let method = if self.is_mixed() {
            // Both calls run; the read side's name is the method's (`pread`, `io_uring`).
            method_label(Op::Read, self.setup.method)
        } else {
            self.method_label()
        };
        format!(
            "{} {} {}",
            self.op_text(),
            method,
            crate::size::format_size(self.setup.block_size_bytes)
        )
    }
}

/// The name of `method` doing `op`: the write-side system call for writes (`read` → `write`,
/// `pread` → `pwrite`), the CSV's `method` text for reads and for methods whose name covers both
/// directions.
pub fn method_label(op: Op, method: Method) -> &'static str {
    crate::engine::caps(method).call_name(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_size_doubles_and_halves_within_limits() {
        let mut s = Settings::default();
        s.step_block_size(true).unwrap();
        assert_eq!(s.setup.block_size_bytes, 2 << 20);
        s.setup.block_size_bytes = MIN_BLOCK_SIZE_BYTES;
        assert!(s.step_block_size(false).is_err());
        assert_eq!(s.setup.block_size_bytes, MIN_BLOCK_SIZE_BYTES);
    }

    #[test]
    fn typed_block_sizes_reach_any_size_from_1_byte_to_1_gib() {
        let mut s = Settings::default();
        s.set_block_size_text("12K").unwrap();
        assert_eq!(s.setup.block_size_bytes, 12 << 10);
        s.set_block_size_text("3").unwrap();
        assert_eq!(s.setup.block_size_bytes, 3);
        s.set_block_size_text("1G").unwrap();
        assert!(s
            .set_block_size_text("0")
            .unwrap_err()
            .contains("1 B to 1G"));
        assert!(s.set_block_size_text("2G").is_err());
        assert!(s.set_block_size_text("12Q").unwrap_err().contains("suffix"));
        assert_eq!(s.setup.block_size_bytes, 1 << 30);
        // O_DIRECT needs whole sectors: a 3-byte block is refused with the reason.
        s.setup.direct = true;
        s.setup.block_size_bytes = 4096;
        assert!(s.set_block_size_text("3").unwrap_err().contains("512"));
    }

    #[test]
    fn writes_are_named_after_the_write_call_not_the_read_call() {
        let s = Settings {
            setup: crate::config::Setup {
                op: Op::Write,
                ..Settings::default().setup
            },
            ..Settings::default()
        };
        assert_eq!(s.short(), "write pwrite 1M");
        assert_eq!(method_label(Op::Write, Method::Read), "write");
        assert_eq!(method_label(Op::Write, Method::Pread), "pwrite");
        assert_eq!(method_label(Op::Write, Method::IoUring), "io_uring");
        assert_eq!(method_label(Op::Read, Method::Pread), "pread");
    }

    #[test]
    fn the_sync_toggle_reaches_fsync_at_end_and_o_dsync_for_writes_only() {
        let mut s = Settings {
            setup: crate::config::Setup {
                op: Op::Write,
                ..Settings::default().setup
            },
            ..Settings::default()
        };
        s.cycle_sync();
        let spec = s.spec(Path::new("/f"), Path::new("/s"), 1 << 20);
        assert!(spec.setup.write_sync.fsync() && !spec.setup.write_sync.dsync());
        s.cycle_sync();
        let spec = s.spec(Path::new("/f"), Path::new("/s"), 1 << 20);
        assert!(!spec.setup.write_sync.fsync() && spec.setup.write_sync.dsync());
        s.setup.op = Op::Read;
        let spec = s.spec(Path::new("/f"), Path::new("/s"), 1 << 20);
        assert!(!spec.setup.write_sync.fsync() && !spec.setup.write_sync.dsync());
    }

    #[test]
    fn direct_is_refused_for_mmap_and_dropped_when_cycling_to_it() {
        let mut s = Settings {
            setup: crate::config::Setup {
                method: Method::Mmap,
                ..Settings::default().setup
            },
            ..Settings::default()
        };
        assert!(s.toggle_direct().unwrap_err().contains("O_DIRECT"));
        assert!(!s.setup.direct);
        s.setup.method = Method::Pread;
        s.toggle_direct().unwrap();
        assert!(s.cycle_method().unwrap().contains("mmap"));
        assert_eq!((s.setup.method, s.setup.direct), (Method::Mmap, false));
    }

    #[test]
    fn writes_target_the_scratch_file_never_the_explored_one() {
        let s = Settings {
            setup: crate::config::Setup {
                op: Op::Write,
                ..Settings::default().setup
            },
            ..Settings::default()
        };
        let spec = s.spec(Path::new("/data/f"), Path::new("/data/.f.scratch"), 8 << 20);
        assert_eq!(spec.target.path, Path::new("/data/.f.scratch"));
        assert_eq!(spec.target.block_count, Some(8));
        assert!(spec.safety.force && spec.target.loop_range);
        assert_eq!(spec.setup.cache, CacheMode::AsIs);
    }

    #[test]
    fn w_cycles_read_write_and_a_mix_on_the_scratch_file_and_skips_a_mix_it_cannot_run() {
        let mut s = Settings::default();
        assert_eq!(s.cycle_op(DEFAULT_MIX_READ_PCT), None);
        assert_eq!((s.setup.op, s.setup.mix_read_pct), (Op::Write, None));
        assert_eq!(s.cycle_op(DEFAULT_MIX_READ_PCT), None);
        assert_eq!((s.setup.op, s.setup.mix_read_pct), (Op::Write, Some(50)));
        assert_eq!(s.short(), "mix 50/50 pread 1M");
        let spec = s.spec(Path::new("/data/f"), Path::new("/data/.f.scratch"), 8 << 20);
        assert_eq!(spec.target.path, Path::new("/data/.f.scratch"));
        assert_eq!(spec.setup.mix_read_pct, Some(50));
        assert!(s.validate().is_ok());
        assert_eq!(s.cycle_op(DEFAULT_MIX_READ_PCT), None);
        assert_eq!((s.setup.op, s.setup.mix_read_pct), (Op::Read, None));
        // mmap cannot mix: w goes from write back to read and says why.
        s.setup.method = Method::Mmap;
        s.cycle_op(50);
        let note = s.cycle_op(50).expect("a note");
        assert!(note.contains("pread or io_uring"), "{note}");
        assert_eq!((s.setup.op, s.setup.mix_read_pct), (Op::Read, None));
    }

    #[test]
    fn w_capital_takes_the_mix_share_checked_as_run_m_checks_it() {
        let mut s = Settings::default();
        assert_eq!(s.set_mix_text("70"), Ok(70));
        assert_eq!((s.setup.op, s.setup.mix_read_pct), (Op::Write, Some(70)));
        assert_eq!(s.op_text(), "mix 70/30");
        for bad in ["0", "100", "abc", ""] {
            let e = s.set_mix_text(bad).unwrap_err();
            assert!(e.contains("mix") && e.contains("99"), "{bad}: {e}");
        }
        assert_eq!(
            s.setup.mix_read_pct,
            Some(70),
            "a refused share changes nothing"
        );
        s.setup.method = Method::Mmap;
        s.setup.mix_read_pct = None;
        s.setup.op = Op::Read;
        assert!(s
            .set_mix_text("70")
            .unwrap_err()
            .contains("pread or io_uring"));
        assert_eq!(s.setup.op, Op::Read);
        // m to a method that cannot mix turns the mix into plain writes, and says so.
        s.setup.method = Method::Pread;
        s.set_mix_text("70").unwrap();
        let note = s.cycle_method().expect("a note");
        assert_eq!(s.setup.method, Method::Mmap);
        assert!(note.contains("mix off, writing"), "{note}");
        assert_eq!((s.setup.op, s.setup.mix_read_pct), (Op::Write, None));
    }

    #[test]
    fn a_rate_typed_as_a_throughput_follows_the_block_size_and_ops_typed_stay_ops() {
        let mut s = Settings::default();
        s.set_rate_text("50 MiB/s").unwrap();
        assert_eq!(s.rate, Some(Rate::BytesPerSec(50 << 20)));
        assert_eq!(s.rate_iops(), Some(50.0));
        s.setup.block_size_bytes = 4096;
        assert_eq!(s.rate_iops(), Some(12_800.0));
        assert_eq!(s.rate.unwrap().both(4096), "50.0 MiB/s (12.8k/s at 4K)");
        s.set_rate_text("2000/s").unwrap();
        assert_eq!(s.rate, Some(Rate::Iops(2000)));
        assert_eq!(s.rate.unwrap().both(1 << 20), "2000/s (1.95 GiB/s at 1M)");
        s.set_rate_text("0").unwrap();
        assert_eq!(s.rate, None);
        // A throughput that would ask more than 1e9 ops/s at the block size is refused, and a
        // block that would make it so too.
        s.setup.block_size_bytes = 1;
        assert!(s
            .set_rate_text("2G/s")
            .unwrap_err()
            .contains("over the 1e9"));
        s.setup.block_size_bytes = 4096;
        s.set_rate_text("2G/s").unwrap();
        assert!(s
            .set_block_size_text("1")
            .unwrap_err()
            .contains("larger block"));
        assert_eq!(s.setup.block_size_bytes, 4096);
        assert_eq!(
            (per_s(0.5), per_s(2000.0), per_s(1e6)),
            ("0.5/s".into(), "2000/s".into(), "1.00M/s".into())
        );
    }

    #[test]
    fn cold_reads_ask_the_runner_to_evict_first() {
        let s = Settings {
            setup: crate::config::Setup {
                cache: if true {
                    crate::config::CacheMode::Cold
                } else {
                    crate::config::CacheMode::AsIs
                },
                ..Settings::default().setup
            },
            ..Settings::default()
        };
        let spec = s.spec(Path::new("/f"), Path::new("/s"), 1 << 30);
        assert_eq!(
            (spec.setup.cache, spec.target.path.as_path()),
            (CacheMode::Cold, Path::new("/f"))
        );
        assert_eq!(spec.target.duration, None);
    }
}
