//! Settings: CLI flags and TOML values become one validated [`RunSpec`]. Every range and
//! conflict check lives here, so the command line, the sweep files and the TUI reject the same
//! things with the same words. Errors are [`UsageError`]s: one line that names the argument (or
//! TOML key) and says how to fix it; binaries exit with status 2 for them.

use crate::size::parse_size;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::hash::Hash;
use std::time::Duration;

pub mod spec;

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
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name { $( #[serde(rename = $text)] $var ),+ }
        impl Named for $name {
            const ALL: &'static [Self] = $name::ALL;
            fn name(self) -> &'static str {
                self.as_str()
            }
        }
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

/// A setting's enum with its column text: the enums of `named_enum!` (their serde names).
pub trait Named:
    Copy
    + fmt::Debug
    + PartialEq
    + Eq
    + Hash
    + Ord
    + Send
    + Sync
    + Serialize
    + DeserializeOwned
    + 'static
{
    /// Every value, in the enum's order.
    const ALL: &'static [Self];
    /// The column text (the serde name).
    fn name(self) -> &'static str;
}

/// A recorded setting: one of diskscope's values, or text from outside the enum kept verbatim
/// (a program such as `dd` in `method`, a locality layout or order, an empty cell where the
/// setup is unknown). Written as the plain text (`Known` as its serde name), read back as
/// `Known` when the text is exactly one of the enum's names and as `Other` otherwise, so a value
/// never changes on the way through a file. It compares equal to its enum value
/// (`r.setup.op == Op::Write`); two labels compare, hash and order by their text, like the
/// strings they replace.
#[derive(Debug, Clone)]
pub enum Label<T> {
    /// One of diskscope's values.
    Known(T),
    /// Text from outside the enum: a program (`dd`), a locality layout or order, or empty
    /// when the setup is unknown.
    Other(String),
}

/// The `method` column: an engine's [`Method`], or a program or layout name.
pub type MethodLabel = Label<Method>;

impl<T: Named> Label<T> {
    /// The label of `text`: `Known` when it is exactly one of the enum's names.
    pub fn of_text(text: &str) -> Self {
        T::ALL
            .iter()
            .find(|v| v.name() == text)
            .map_or_else(|| Label::Other(text.to_string()), |v| Label::Known(*v))
    }

    /// The enum value, when it is one.
    pub fn known(&self) -> Option<T> {
        match self {
            Label::Known(v) => Some(*v),
            Label::Other(_) => None,
        }
    }

    /// The column text.
    pub fn as_str(&self) -> &str {
        match self {
            Label::Known(v) => v.name(),
            Label::Other(text) => text,
        }
    }
}

impl<T> Default for Label<T> {
    /// Unknown: an empty cell.
    fn default() -> Self {
        Label::Other(String::new())
    }
}

impl<T> From<T> for Label<T> {
    fn from(v: T) -> Self {
        Label::Known(v)
    }
}

impl<T: PartialEq> PartialEq<T> for Label<T> {
    fn eq(&self, other: &T) -> bool {
        matches!(self, Label::Known(v) if v == other)
    }
}

impl<T: Named> PartialEq for Label<T> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl<T: Named> Eq for Label<T> {}

impl<T: Named> Hash for Label<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h);
    }
}

impl<T: Named> fmt::Display for Label<T> {
    /// The column text, padded as asked (`{:<9}` in the summary tables).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl<T: Named> PartialOrd for Label<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Named> Ord for Label<T> {
    /// By the text, as the string columns sorted before.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl<T: Named> Serialize for Label<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de, T: Named> Deserialize<'de> for Label<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(Label::of_text(&text))
    }
}

/// Operations per second (an open loop's rate, `--rate`), compared, ordered and hashed by its
/// bits ([`f64::total_cmp`]) so that a [`Setup`] is a key: two setups asking the same rate are
/// one point, whatever the float.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Iops(pub f64);

impl PartialEq for Iops {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for Iops {}

impl PartialOrd for Iops {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Iops {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl Hash for Iops {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.to_bits().hash(h);
    }
}

/// How a [`Setup`] holds its settings. [`Typed`] (the default): the values a run is made from,
/// every setting one of diskscope's. [`Recorded`]: as a result row holds them, each named
/// setting a [`Label`] (a program's name, a layout, an empty cell read back verbatim) and each
/// setting a default run does not show an `Option`, `None` (its CSV column left out) at the
/// default or where it does not apply.
pub trait Form:
    Copy + fmt::Debug + Default + PartialEq + Eq + Hash + Ord + Send + Sync + 'static
{
    /// A named setting: `T` to run, `Label<T>` recorded.
    type Named<T: Named>: Clone
        + fmt::Debug
        + PartialEq
        + Eq
        + Hash
        + Ord
        + Send
        + Sync
        + Serialize
        + DeserializeOwned;
    /// A setting a default row does not show: `T` to run, `Option<T>` recorded.
    type Optional<T: Named>: Clone
        + fmt::Debug
        + PartialEq
        + Eq
        + Hash
        + Ord
        + Send
        + Sync
        + Serialize
        + DeserializeOwned;
    /// Whether a row leaves this setting's column out (a recorded `None`).
    fn omitted<T: Named>(v: &Self::Optional<T>) -> bool;
}

/// The form a run is made from (see [`Form`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Typed;

/// The form a result row records (see [`Form`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Recorded;

impl Form for Typed {
    type Named<T: Named> = T;
    type Optional<T: Named> = T;
    fn omitted<T: Named>(_: &T) -> bool {
        false
    }
}

impl Form for Recorded {
    type Named<T: Named> = Label<T>;
    type Optional<T: Named> = Option<T>;
    fn omitted<T: Named>(v: &Option<T>) -> bool {
        v.is_none()
    }
}

/// The setup as a result row records it.
pub type RecordedSetup = Setup<Recorded>;

/// The identity of a point: every setting a measurement depends on, once. A flag, a sweep key,
/// an explorer knob and a fio option all land in one of its fields; a result records it
/// ([`RecordedSetup`]) and every key that tells points apart (a summary's point, a compare row,
/// a baseline match, a timeline's run) is built from it. The serde names are the CSV and JSON
/// column names (with the sweep's TOML keys as aliases where the values read alike); the order of
/// the fields is the order of their columns. Adding a setting: a field here (and its default in
/// [`Setup::default`]), its flag or key, its use in the engine.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(bound(serialize = "", deserialize = "Setup<F>: Default"), default)]
pub struct Setup<F: Form = Typed> {
    /// Read or write. A mix ([`Setup::mix_read_pct`]) writes, so its `op` is [`Op::Write`]; a
    /// record names it `mix`.
    #[serde(rename = "operation")]
    pub op: F::Named<Op>,
    /// The I/O method (recorded: or a program, `dd`, or a locality layout, `dir`, `packed`).
    pub method: F::Named<Method>,
    /// Order of offsets (recorded: or the locality order `trace`).
    pub pattern: F::Named<Pattern>,
    /// The page cache before the run (a sweep's warm read is recorded `warm` though the sweep
    /// warms the file itself and runs it as-is).
    pub cache: F::Named<CacheMode>,
    /// O_DIRECT.
    pub direct: bool,
    /// Bytes per operation.
    pub block_size_bytes: u64,
    /// Worker threads, each with its own descriptor.
    pub threads: usize,
    /// Operations in flight per thread (io_uring; recorded: 1 for the synchronous methods).
    pub queue_depth: u32,
    /// The memory behind the I/O buffers (recorded: what the setting obtained, `auto`
    /// resolved; the setting itself where no buffer was made; empty in files written before the
    /// column existed).
    pub buffers: F::Named<Buffers>,
    /// Open loop (`--rate`): operations per second over all threads, each with an intended
    /// start on a schedule (see `measure::pacer`); `None`: closed loop, as fast as it goes.
    #[serde(
        rename = "rate_iops_asked",
        alias = "rate",
        skip_serializing_if = "Option::is_none"
    )]
    pub rate_iops: Option<Iops>,
    /// A mixed workload (`--mix`, fio's `rw=randrw` with `rwmixread`): the share of operations
    /// that read, percent (1 to 99); the others write. Each operation's direction is drawn from
    /// a seeded generator in the worker's own state before its clock starts. A mix writes, so
    /// its `op` is [`Op::Write`] and every rule of a write holds: the file is created by this
    /// run (or is a batch's own test file), never an existing or explored one. `None`: pure
    /// reads or pure writes, as `op` says.
    #[serde(
        rename = "mix_read_pct_asked",
        alias = "mix",
        skip_serializing_if = "Option::is_none"
    )]
    pub mix_read_pct: Option<u32>,
    /// How writes are made durable (reads: none; see `RunSpec::write_sync`).
    #[serde(skip_serializing_if = "F::omitted::<WriteSync>")]
    pub write_sync: F::Optional<WriteSync>,
    /// io_uring's submission policy (queued methods only).
    #[serde(skip_serializing_if = "F::omitted::<SubmitPolicy>")]
    pub submit: F::Optional<SubmitPolicy>,
    /// Writes: preallocate the file before the run.
    #[serde(skip_serializing_if = "F::omitted::<Prealloc>")]
    pub prealloc: F::Optional<Prealloc>,
    /// How the open loop's intended starts are spaced (`--arrival`).
    #[serde(skip_serializing_if = "F::omitted::<Arrival>")]
    pub arrival: F::Optional<Arrival>,
    /// Whether the data is XOR-ed (`--checksum`): with `none` no worker reads it back and the
    /// run has no XOR.
    #[serde(skip_serializing_if = "F::omitted::<Checksum>")]
    pub checksum: F::Optional<Checksum>,
}

impl Copy for Setup<Typed> {}

impl Default for Setup<Typed> {
    /// A sequential single-thread 1 MiB pread read, as-is, closed loop, XOR-ed: every setting
    /// at its default.
    fn default() -> Self {
        Setup {
            op: Op::Read,
            method: Method::Pread,
            pattern: Pattern::Sequential,
            cache: CacheMode::AsIs,
            direct: false,
            block_size_bytes: 1 << 20,
            threads: 1,
            queue_depth: 1,
            buffers: Buffers::DEFAULT,
            rate_iops: None,
            mix_read_pct: None,
            write_sync: WriteSync::None,
            submit: SubmitPolicy::DEFAULT,
            prealloc: Prealloc::Native,
            arrival: Arrival::Constant,
            checksum: Checksum::DEFAULT,
        }
    }
}

impl Default for Setup<Recorded> {
    /// Unknown: every named setting an empty cell, every number 0, every optional one left out.
    fn default() -> Self {
        Setup {
            op: Label::default(),
            method: Label::default(),
            pattern: Label::default(),
            cache: Label::default(),
            direct: false,
            block_size_bytes: 0,
            threads: 0,
            queue_depth: 0,
            buffers: Label::default(),
            rate_iops: None,
            mix_read_pct: None,
            write_sync: None,
            submit: None,
            prealloc: None,
            arrival: None,
            checksum: None,
        }
    }
}

impl<F: Form> Setup<F> {
    /// The columns of the settings every table of points shows, the first of the setup's (a
    /// summary, a timeline's run key, compare's points): the others are columns of their own
    /// where a point has them.
    pub const SHOWN_COLUMNS: [&'static str; 8] = [
        "operation",
        "method",
        "pattern",
        "cache",
        "direct",
        "block_size_bytes",
        "threads",
        "queue_depth",
    ];

    /// Whether it mixes reads and writes (see [`Setup::mix_read_pct`]).
    pub fn is_mixed(&self) -> bool {
        self.mix_read_pct.is_some()
    }

    /// The open loop's operations per second; `None`: closed loop.
    pub fn rate(&self) -> Option<f64> {
        self.rate_iops.map(|r| r.0)
    }
}

impl Setup<Recorded> {
    /// The setup a row records, as diskscope's values, when every named setting is one of them
    /// (not a program, a layout or an empty cell); the settings left out are at their default.
    pub fn known(&self) -> Option<Setup> {
        let d = Setup::<Typed>::default();
        let op = if self.op.as_str() == MIX_OPERATION {
            Op::Write
        } else {
            self.op.known()?
        };
        Some(Setup {
            op,
            method: self.method.known()?,
            pattern: self.pattern.known()?,
            cache: self.cache.known()?,
            direct: self.direct,
            block_size_bytes: self.block_size_bytes,
            threads: self.threads,
            queue_depth: self.queue_depth,
            buffers: self.buffers.known().unwrap_or(d.buffers),
            rate_iops: self.rate_iops,
            mix_read_pct: self.mix_read_pct,
            write_sync: self.write_sync.unwrap_or(d.write_sync),
            submit: self.submit.unwrap_or(d.submit),
            prealloc: self.prealloc.unwrap_or(d.prealloc),
            arrival: self.arrival.unwrap_or(d.arrival),
            checksum: self.checksum.unwrap_or(d.checksum),
        })
    }

    /// Only the settings every table of points shows ([`Setup::SHOWN_COLUMNS`]), the others
    /// left out: the setup compare, the explorer's baseline and a timeline's run key match on.
    pub fn shown(&self) -> Setup<Recorded> {
        Setup {
            op: self.op.clone(),
            method: self.method.clone(),
            pattern: self.pattern.clone(),
            cache: self.cache.clone(),
            direct: self.direct,
            block_size_bytes: self.block_size_bytes,
            threads: self.threads,
            queue_depth: self.queue_depth,
            ..Default::default()
        }
    }
}

/// The `operation` text of a mixed workload (not an [`Op`]: a mix both reads and writes).
pub const MIX_OPERATION: &str = "mix";

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

/// The methods a mixed workload runs with: the ones whose engines choose each operation's
/// direction per block (fio's `psync` and `io_uring`).
pub const MIX_METHODS: &[Method] = &[Method::Pread, Method::IoUring];

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
    fn names_parse_case_insensitively_and_list_choices() {
        assert_eq!(Method::parse("IO_URING", "--method"), Ok(Method::IoUring));
        assert_eq!(Method::direct_names("or"), "read, pread or io_uring");
        let e = Method::parse("aio", "--method").unwrap_err().to_string();
        assert!(e.contains("read, pread, mmap, io_uring, buffered"), "{e}");
    }

    #[test]
    fn a_label_is_its_enum_value_for_the_enum_names_and_verbatim_text_otherwise() {
        assert_eq!(Label::<CacheMode>::of_text("cold-all"), CacheMode::ColdAll);
        assert_eq!(
            Label::<CacheMode>::of_text("cold-all").known(),
            Some(CacheMode::ColdAll)
        );
        assert_eq!(
            Label::<Method>::of_text("io_uring").known(),
            Some(Method::IoUring)
        );
        for other in ["dd", "packed", "", "IO_URING"] {
            let l = Label::<Method>::of_text(other);
            assert_eq!(l.known(), None, "{other}");
            assert_eq!(l.as_str(), other);
        }
        assert_eq!(
            Label::<Op>::default().as_str(),
            "",
            "unknown is an empty cell"
        );
    }

    #[test]
    fn labels_compare_with_their_enum_and_order_and_pad_like_their_text() {
        let write: Label<Op> = Op::Write.into();
        assert!(write == Op::Write && write != Op::Read);
        assert!(Label::<Pattern>::of_text("trace") != Pattern::Random);
        let mut v: Vec<MethodLabel> = ["pread", "dd", "buffered", "io_uring"]
            .into_iter()
            .map(Label::of_text)
            .collect();
        v.sort();
        let text: Vec<&str> = v.iter().map(|l| l.as_str()).collect();
        assert_eq!(text, ["buffered", "dd", "io_uring", "pread"]);
        // The summary table aligns its columns with `{:<9}`.
        assert_eq!(
            format!("[{:<9}]", Label::from(Method::Pread)),
            "[pread    ]"
        );
    }
}
