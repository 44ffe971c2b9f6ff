//! Settings: CLI flags and TOML values become one validated [`RunSpec`]. Every range and
//! conflict check lives here, so the command line, the sweep files and the TUI reject the same
//! things with the same words. Errors are [`UsageError`]s: one line that names the argument (or
//! TOML key) and says how to fix it; binaries exit with status 2 for them.

use crate::size::parse_size;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Largest block size accepted.
pub const MAX_BLOCK_SIZE: u64 = 1 << 30;
/// Largest thread count accepted.
pub const MAX_THREADS: usize = 1024;
/// Largest io_uring queue depth accepted.
pub const MAX_QUEUE_DEPTH: u32 = 4096;

/// A usage error: bad input, reported in one line, exit status 2. `key` is the flag
/// (`--threads`), argument (`BLOCK_SIZE`) or TOML key (`threads`) the bad value came from, when
/// one did: the sweep turns it into `FILE:LINE: key` from the field, never by reading the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct UsageError {
    /// The flag, argument or key at fault.
    pub key: Option<String>,
    /// What is wrong and how to fix it (without the key).
    pub message: String,
}

impl UsageError {
    /// An error about the value of `key`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        UsageError {
            key: Some(key.into()),
            message: message.into(),
        }
    }

    /// An error that no single key or flag explains.
    pub fn plain(message: impl Into<String>) -> Self {
        UsageError {
            key: None,
            message: message.into(),
        }
    }

    /// The same error about another name of the key (a TOML key for a flag).
    pub fn renamed(self, key: impl Into<String>) -> Self {
        UsageError {
            key: Some(key.into()),
            ..self
        }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{k}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// The keys a serde struct accepts, read from its own `Deserialize` impl (serde hands a struct's
/// field names to the deserializer), so a "use one of ..." message never keeps its own list.
pub fn serde_fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Fields(&'static [&'static str]);
    #[derive(Debug)]
    struct Stop;
    impl fmt::Display for Stop {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("fields read")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    struct Probe<'a>(&'a mut Fields);
    impl<'de> serde::Deserializer<'de> for Probe<'_> {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Stop> {
            self.0 .0 = fields;
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    let mut f = Fields(&[]);
    let _ = T::deserialize(Probe(&mut f));
    f.0
}

/// The largest time bound accepted anywhere (a day), seconds.
pub const MAX_SECONDS: f64 = 86_400.0;

/// Checks a number of seconds given for `key` (above 0, at most a day).
pub fn check_seconds(s: f64, key: &str) -> Result<Duration, UsageError> {
    if !(s.is_finite() && s > 0.0 && s <= MAX_SECONDS) {
        return Err(UsageError::new(
            key,
            format!("must be a number of seconds above 0 and at most 86400, got {s}"),
        ));
    }
    Ok(Duration::from_secs_f64(s))
}

/// Exit status of a run stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Shorthand for a usage error.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError::plain(msg))
}

macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident { $($var:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name { $( #[serde(rename = $text)] $var ),+ }
        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            pub fn as_str(self) -> &'static str { match self { $($name::$var => $text),+ } }
            /// Parses the user-facing name; the error lists the valid names.
            pub fn parse(text: &str, what: &str) -> Result<Self, UsageError> {
                match text.to_ascii_lowercase().as_str() {
                    $($text => Ok($name::$var),)+
                    _ => Err(UsageError::new(what, format!("unknown value '{text}'; use one of {}",
                        [$($text),+].join(", ")
                    ))),
                }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }
    };
}

named_enum!(
    /// Read or write.
    Op { Read = "read", Write = "write" }
);
named_enum!(
    /// The I/O method under test.
    Method { Read = "read", Pread = "pread", Mmap = "mmap", IoUring = "io_uring", Buffered = "buffered" }
);
named_enum!(
    /// Page-cache state to put the file in before measuring.
    CacheMode { AsIs = "as-is", Warm = "warm", Cold = "cold", ColdAll = "cold-all" }
);
named_enum!(
    /// Order of offsets.
    Pattern { Sequential = "sequential", Random = "random" }
);

named_enum!(
    /// io_uring submission: `batch` queues every free slot and enters the kernel once to submit
    /// and wait; `each` submits every operation as soon as it is queued (fio's default,
    /// `iodepth_batch_submit=1`) and enters again to wait when the queue is full.
    SubmitPolicy { Batch = "batch", Each = "each" }
);
named_enum!(
    /// Preallocation of a written file before the run: `native` reserves its blocks with
    /// `fallocate(2)` in untimed setup (fio's default, `fallocate=native`), `none` lets the
    /// writes allocate them.
    Prealloc { Native = "native", None = "none" }
);

named_enum!(
    /// The memory behind the I/O buffers (`--buffers`, see `engine/buffer.rs`): `plain` 4 KiB
    /// pages, page-aligned; `malloc` 4 KiB pages 16 bytes past a page boundary, where glibc's
    /// `malloc` puts a large block (and so fio's default buffers); `thp` transparent huge pages
    /// (`MADV_HUGEPAGE`, 2 MiB-aligned; plain pages when the kernel has none, and the result says
    /// so); `hugetlb` reserved huge pages (`MAP_HUGETLB`; an error when none are free); `auto` the
    /// most contiguous memory offered for O_DIRECT and plain pages otherwise. A result records
    /// the memory obtained, never `auto`.
    Buffers { Auto = "auto", Plain = "plain", Malloc = "malloc", Thp = "thp", HugeTlb = "hugetlb" }
);

named_enum!(
    /// Whether the CPU reads back the data a run moves (`--checksum`, a sweep's `checksum`; like
    /// fio's `verify=`): `xor` folds every byte read or written into the run's XOR (the lab's
    /// checksum, `crate::xor`), which `run` prints; `none` folds nothing, so the run moves the
    /// data and never touches it (the I/O alone, as fio measures it) and has no XOR. The XOR of
    /// a warm 1 MiB pread costs ~20 µs per MiB, a fifth of the throughput (docs/accuracy.md).
    Checksum { Xor = "xor", None = "none" }
);

impl Checksum {
    /// The default: every run XORs its data, as the lab's programs always did.
    pub const DEFAULT: Checksum = Checksum::Xor;

    /// Whether the data is folded into an XOR.
    pub fn xors(self) -> bool {
        self == Checksum::Xor
    }
}

named_enum!(
    /// How the intended starts of an open-loop run (`--rate`) are spaced: `constant` gaps, or
    /// `poisson` (exponential gaps, the arrivals of many independent users). See
    /// `measure::pacer`.
    Arrival { Constant = "constant", Poisson = "poisson" }
);

named_enum!(
    /// How a run's writes are made durable, from `RunSpec`'s `fsync` and `dsync` (`run --fsync`,
    /// `--dsync`; fio's `end_fsync`/`fsync_on_close` and `sync`; the explorer's `f` key cycles
    /// the first three): `none` leaves them in the page cache (the figure may be the cache's
    /// speed), `fsync` adds one timed `fsync(2)` at the end, `dsync` opens the file with O_DSYNC
    /// (every write durable before it returns), `dsync+fsync` both. A result's `write_sync`
    /// column.
    WriteSync { None = "none", FsyncAtEnd = "fsync", Dsync = "dsync", DsyncAndFsync = "dsync+fsync" }
);

impl WriteSync {
    /// The policy of `fsync` (one at the end) and `dsync` (O_DSYNC) together.
    pub fn of(fsync: bool, dsync: bool) -> Self {
        match (fsync, dsync) {
            (false, false) => WriteSync::None,
            (true, false) => WriteSync::FsyncAtEnd,
            (false, true) => WriteSync::Dsync,
            (true, true) => WriteSync::DsyncAndFsync,
        }
    }

    /// Whether it ends with one timed `fsync(2)`.
    pub fn fsync(self) -> bool {
        matches!(self, WriteSync::FsyncAtEnd | WriteSync::DsyncAndFsync)
    }

    /// Whether the file is opened with O_DSYNC.
    pub fn dsync(self) -> bool {
        matches!(self, WriteSync::Dsync | WriteSync::DsyncAndFsync)
    }
}

/// Where each rank of a fleet (`src/fleet/`) keeps its data; a fleet row's `layout` column.
/// Kept here, below the results, so a result records it as this type; `fleet::Layout` is it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Layout {
    /// Rank r uses `{file}.{r}`.
    #[default]
    #[serde(rename = "file-per-process")]
    FilePerProcess,
    /// Every rank uses `{file}`; sequential points cut it into disjoint, block-aligned ranges.
    #[serde(rename = "shared-file")]
    SharedFile,
}

impl Layout {
    pub fn as_str(self) -> &'static str {
        match self {
            Layout::FilePerProcess => "file-per-process",
            Layout::SharedFile => "shared-file",
        }
    }

    /// Parses the user-facing name; the error names `what` (flag or key) and the choices.
    pub fn parse(text: &str, what: &str) -> Result<Layout, UsageError> {
        match text {
            "file-per-process" => Ok(Layout::FilePerProcess),
            "shared-file" => Ok(Layout::SharedFile),
            _ => Err(UsageError::new(
                what,
                format!("unknown layout '{text}'; use file-per-process or shared-file"),
            )),
        }
    }
}

impl Buffers {
    /// The default.
    pub const DEFAULT: Buffers = Buffers::Auto;
}

impl Method {
    /// Whether the method can use O_DIRECT. Kept here, below the engine, because
    /// [`RunSpec::validate`] refuses `--direct` by it; `engine::caps(method).direct()` reads it.
    pub fn supports_direct(self) -> bool {
        match self {
            Method::Read | Method::Pread | Method::IoUring => true,
            Method::Mmap | Method::Buffered => false,
        }
    }

    /// The methods that can use O_DIRECT, for a message: `read, pread or io_uring` with `last`
    /// = `or`.
    pub fn direct_names(last: &str) -> String {
        let names: Vec<&str> = Method::ALL
            .iter()
            .filter(|m| m.supports_direct())
            .map(|m| m.as_str())
            .collect();
        match names.split_last() {
            Some((end, [])) => end.to_string(),
            Some((end, rest)) => format!("{} {last} {end}", rest.join(", ")),
            None => String::new(),
        }
    }
}

impl SubmitPolicy {
    /// The default: the policy measured faster on both random 4K QD32 and sequential 1M on the
    /// quiet machine (see docs/accuracy.md), and fio's own.
    pub const DEFAULT: SubmitPolicy = SubmitPolicy::Each;
}

/// A fully validated description of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub path: PathBuf,
    pub op: Op,
    pub method: Method,
    pub block_size_bytes: u64,
    /// Blocks to transfer; `None` means the whole file (reads) or until `duration`.
    pub block_count: Option<u64>,
    pub threads: usize,
    pub direct: bool,
    pub cache: CacheMode,
    pub queue_depth: u32,
    pub pattern: Pattern,
    /// Time bound: the run stops at this duration even if blocks remain.
    pub duration: Option<Duration>,
    /// Start over at the beginning of each worker's range until stopped (needs a time bound or
    /// an external stop).
    pub loop_range: bool,
    /// `fsync` the file at the end of a write run (timed).
    pub fsync: bool,
    /// Open with O_DSYNC (every write durable).
    pub dsync: bool,
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
    /// Seed for written data and random offsets.
    pub seed: u64,
    /// Most bytes the run's I/O buffers may take (`--max-memory`); `None`: half of the memory
    /// available when the run starts (see `runner::budget`).
    pub max_memory_bytes: Option<u64>,
    /// Sequential runs: where the covered range starts in the file, bytes (a fleet rank's share
    /// of a shared file, `src/fleet/`); `block_count` blocks are counted from here. 0 elsewhere.
    pub range_start_bytes: u64,
    /// io_uring submission policy.
    pub submit: SubmitPolicy,
    /// Writes: preallocate the file before the run.
    pub prealloc: Prealloc,
    /// The memory behind the I/O buffers.
    pub buffers: Buffers,
    /// Whether the data is XOR-ed (`--checksum`): with `none` no worker reads it back and the
    /// run has no XOR.
    pub checksum: Checksum,
    /// Open loop (`--rate`): operations per second over all threads, each with an intended
    /// start on a schedule (see `measure::pacer`); `None`: closed loop, as fast as it goes.
    pub rate_iops: Option<f64>,
    /// How the open loop's intended starts are spaced (`--arrival`).
    pub arrival: Arrival,
    /// A mixed workload (`--mix`, fio's `rw=randrw` with `rwmixread`): the share of operations
    /// that read, percent (1 to 99); the others write. Each operation's direction is drawn from
    /// a seeded generator in the worker's own state before its clock starts. A mix writes, so
    /// its `op` is [`Op::Write`] and every rule of a write holds: the file is created by this
    /// run (or is a batch's own test file), never an existing or explored one. `None`: pure
    /// reads or pure writes, as `op` says.
    pub mix_read_pct: Option<u32>,
    /// The kernel view (`--kernel`, `crate::kernel`): each block request of the run timed in
    /// the block layer and the device, filtered by process or by device; `None`: off. An
    /// observation, not a setting of the I/O: the run does the same I/O either way.
    pub kernel: Option<crate::kernel::FilterBy>,
}

/// Reads the kernel view's filter (`--kernel=process|device`, a sweep's `kernel` key).
pub fn parse_kernel_filter(text: &str, key: &str) -> Result<crate::kernel::FilterBy, UsageError> {
    use crate::kernel::FilterBy;
    FilterBy::ALL
        .into_iter()
        .find(|f| f.name() == text.trim())
        .ok_or_else(|| {
            UsageError::new(
                key,
                format!(
                    "'{}' is not a filter of the kernel view; give process (the run's own \
                     requests) or device (every request to the file's disk)",
                    crate::text::shown(text)
                ),
            )
        })
}

impl RunSpec {
    /// A sequential single-thread pread read of the whole file, warm-as-is: a base to adjust.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        RunSpec {
            path: path.into(),
            op: Op::Read,
            method: Method::Pread,
            block_size_bytes: 1 << 20,
            block_count: None,
            threads: 1,
            direct: false,
            cache: CacheMode::AsIs,
            queue_depth: 1,
            pattern: Pattern::Sequential,
            duration: None,
            loop_range: false,
            fsync: false,
            dsync: false,
            force: false,
            overwrite_in_place: false,
            mark_created: None,
            seed: crate::pattern::DEFAULT_SEED,
            max_memory_bytes: None,
            range_start_bytes: 0,
            submit: SubmitPolicy::DEFAULT,
            prealloc: Prealloc::Native,
            buffers: Buffers::DEFAULT,
            checksum: Checksum::DEFAULT,
            rate_iops: None,
            arrival: Arrival::Constant,
            mix_read_pct: None,
            kernel: None,
        }
    }

    /// How its writes are made durable (`fsync` and `dsync` together); reads have none.
    pub fn write_sync(&self) -> WriteSync {
        if self.op == Op::Write {
            WriteSync::of(self.fsync, self.dsync)
        } else {
            WriteSync::None
        }
    }

    /// Whether this run mixes reads and writes (see [`RunSpec::mix_read_pct`]).
    pub fn is_mixed(&self) -> bool {
        self.mix_read_pct.is_some()
    }

    /// Checks ranges and conflicts. `names` says how to call each setting in messages (CLI flag or
    /// TOML key).
    pub fn validate(&self, names: &Names) -> Result<(), UsageError> {
        check_block_size(self.block_size_bytes, names.block_size)?;
        if self.block_count == Some(0) {
            return Err(UsageError::new(names.block_count, "must be at least 1"));
        }
        if let Some(c) = self.block_count {
            if self.block_size_bytes.checked_mul(c).is_none() {
                return Err(UsageError::new(
                    names.block_count,
                    format!(
                        "{} x {} overflows 64 bits; use a smaller count",
                        names.block_size, names.block_count
                    ),
                ));
            }
        }
        check_threads(self.threads, names.threads)?;
        check_queue_depth(self.queue_depth, names.queue_depth)?;
        if self.direct && !self.method.supports_direct() {
            return Err(UsageError::new(
                names.direct,
                format!(
                    "O_DIRECT does not apply to method {}; use {}",
                    self.method,
                    Method::direct_names("or")
                ),
            ));
        }
        if self.direct && !self.block_size_bytes.is_multiple_of(512) {
            return Err(UsageError::new(names.direct, format!("O_DIRECT needs a block size that is a multiple of 512 (the sector size); got {}", self.block_size_bytes
            )));
        }
        if self.direct && self.buffers == Buffers::Malloc {
            return Err(UsageError::new(
                names.direct,
                "O_DIRECT needs page-aligned buffers and malloc's start 16 bytes past a page; \
                 use --buffers plain (or thp, hugetlb, auto)",
            ));
        }
        if self.op == Op::Write && self.block_count.is_none() && self.duration.is_none() {
            return Err(UsageError::new(
                names.block_count,
                "a write needs a block count or a time bound",
            ));
        }
        if let Some(pct) = self.mix_read_pct {
            check_mix(self, pct, mix_name(names))?;
        }
        if let Some(r) = self.rate_iops {
            check_rate_iops(r, rate_name(names))?;
        }
        if self.pattern == Pattern::Random
            && self.block_count.is_none()
            && self.duration.is_none()
            && !self.loop_range
        {
            return Err(UsageError::new(
                names.block_count,
                "random offsets need a block count or a time bound",
            ));
        }
        Ok(())
    }
}

/// The lowest open-loop rate diskscope runs, operations per second (over all threads). Below
/// it an open loop paces so few operations that its percentiles rest on a handful of them, and a
/// rate such as `1e-300` (or `1 B/s` at 4K blocks) would pace one operation in days or in never:
/// it is refused in one line instead of printing made-up figures.
pub const MIN_RATE_IOPS: f64 = 1.0;

/// Checks an open-loop rate of `iops` operations per second against [`MIN_RATE_IOPS`], naming
/// `key` (the highest rate is bounded where rates are read, `measure::pacer::parse_rate`).
pub fn check_rate_iops(iops: f64, key: &str) -> Result<(), UsageError> {
    if iops.is_finite() && iops >= MIN_RATE_IOPS {
        return Ok(());
    }
    Err(UsageError::new(
        key,
        format!(
            "must be at least {MIN_RATE_IOPS} operation per second, got {iops:e}: below that an \
             open loop's percentiles rest on a handful of operations and one operation can be \
             due in days; ask for at least 1 IOPS (a throughput of at least one block per \
             second)"
        ),
    ))
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

/// The methods a mixed workload runs with: the ones whose engines choose each operation's
/// direction per block (fio's `psync` and `io_uring`).
pub const MIX_METHODS: &[Method] = &[Method::Pread, Method::IoUring];

/// Checks a mixed workload of `pct` percent reads (see [`RunSpec::mix_read_pct`]), naming `key`.
pub fn check_mix(spec: &RunSpec, pct: u32, key: &str) -> Result<(), UsageError> {
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
    if spec.op != Op::Write {
        return Err(UsageError::new(
            key,
            "a mix writes, so it runs only on a file this run creates; it cannot read an \
             existing file (use -m alone, not with -r)",
        ));
    }
    if !MIX_METHODS.contains(&spec.method) {
        return Err(UsageError::new(
            key,
            format!(
                "method {} does not mix reads and writes; use pread or io_uring (fio's psync \
                 and io_uring)",
                spec.method
            ),
        ));
    }
    if spec.rate_iops.is_some() {
        return Err(UsageError::new(
            key,
            "an open-loop run (--rate) of a mix is not implemented; drop --rate or the mix",
        ));
    }
    if spec.block_count.is_none() && spec.duration.is_none() {
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

/// Parses and range-checks a block size given as text.
pub fn parse_block_size(text: &str, name: &str) -> Result<u64, UsageError> {
    let v = parse_size(text).map_err(|e| UsageError::new(name, e.to_string()))?;
    check_block_size(v, name)?;
    Ok(v)
}

/// Range-checks a block size.
pub fn check_block_size(v: u64, name: &str) -> Result<(), UsageError> {
    if v == 0 {
        return Err(UsageError::new(name, "must be at least 1 byte"));
    }
    if v > MAX_BLOCK_SIZE {
        return Err(UsageError::new(
            name,
            format!("{v} bytes is larger than the 1G maximum; use at most 1G"),
        ));
    }
    Ok(())
}

/// Range-checks a thread count.
pub fn check_threads(n: usize, name: &str) -> Result<(), UsageError> {
    if n == 0 || n > MAX_THREADS {
        return Err(UsageError::new(
            name,
            format!("must be between 1 and {MAX_THREADS}, got {n}"),
        ));
    }
    Ok(())
}

/// Range-checks an io_uring queue depth.
pub fn check_queue_depth(n: u32, name: &str) -> Result<(), UsageError> {
    if n == 0 || n > MAX_QUEUE_DEPTH {
        return Err(UsageError::new(
            name,
            format!("must be between 1 and {MAX_QUEUE_DEPTH}, got {n}"),
        ));
    }
    Ok(())
}

/// Parses `--max-memory` (a size such as `8G`; at least one page).
pub fn parse_max_memory(text: &str) -> Result<u64, UsageError> {
    let v = parse_size(text).map_err(|e| UsageError::new("--max-memory", e.to_string()))?;
    if v < 4096 {
        return Err(UsageError::new(
            "--max-memory",
            format!("{v} bytes cannot hold one buffer; give at least 4K (e.g. 8G)"),
        ));
    }
    Ok(v)
}

/// Parses a count (plain number, suffixes allowed: `1K` = 1024 blocks).
pub fn parse_count(text: &str, name: &str) -> Result<u64, UsageError> {
    let v = parse_size(text).map_err(|e| UsageError::new(name, e.to_string()))?;
    if v == 0 {
        return Err(UsageError::new(name, "must be at least 1"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_specs_are_rejected_naming_the_setting() {
        let mut s = RunSpec::new("/x");
        s.threads = 0;
        assert!(s
            .validate(&CLI_NAMES)
            .unwrap_err()
            .to_string()
            .starts_with("--threads"));
        let mut s = RunSpec::new("/x");
        s.block_size_bytes = 2 << 30;
        assert!(s
            .validate(&CLI_NAMES)
            .unwrap_err()
            .to_string()
            .contains("1G maximum"));
        let mut s = RunSpec::new("/x");
        s.block_size_bytes = 1 << 30;
        s.block_count = Some(u64::MAX / 2);
        assert!(s
            .validate(&CLI_NAMES)
            .unwrap_err()
            .to_string()
            .contains("overflows"));
        let mut s = RunSpec::new("/x");
        s.method = Method::Mmap;
        s.direct = true;
        assert!(s
            .validate(&TOML_NAMES)
            .unwrap_err()
            .to_string()
            .starts_with("direct"));
    }

    #[test]
    fn names_parse_case_insensitively_and_list_choices() {
        assert_eq!(Method::parse("IO_URING", "--method"), Ok(Method::IoUring));
        assert_eq!(Method::direct_names("or"), "read, pread or io_uring");
        let e = Method::parse("aio", "--method").unwrap_err().to_string();
        assert!(e.contains("read, pread, mmap, io_uring, buffered"), "{e}");
    }
}
