//! What a profile holds, as stored: the format version and bounds, the ceiling records (per
//! method, memory, copy level, device) with their spread and provenance, and the look-ups the
//! model reads them with. A leaf of the profile, so validation, trust and storage build on the
//! same records without importing each other.

use crate::config::{Buffers, Method};
use crate::explain::context::Context;
use serde::{Deserialize, Serialize};

/// Format version of the stored profile; a different one is ignored.
pub const PROFILE_VERSION: u32 = 3;

/// Age after which a profile is called stale.
pub const STALE_AFTER_DAYS: u64 = 30;

/// The largest profile file read: a real one holds a few KiB.
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// The largest throughput a profile may hold, MiB/s (about 1 PiB/s). The bounds are generous on
/// purpose: they refuse the values that print as nonsense or overflow a column (`inf`, `1e308`,
/// `u64::MAX`), not an optimistic ceiling, which the model's "does not explain" line handles.
pub const MAX_MIB_S: f64 = 1e9;

/// The largest operation rate of one thread, per second (1 ps per call).
pub const MAX_OPS_PER_S: f64 = 1e12;

/// The largest device rate, I/O operations per second.
pub const MAX_IOPS: f64 = 1e9;

/// The largest thread or CPU count.
pub const MAX_THREADS: usize = 1 << 16;

/// The largest buffer size of a memory level, bytes (1 TiB).
pub const MAX_BUFFER_BYTES: u64 = 1 << 40;

/// Share of the CPUs other processes may use during `limits` before the profile is said to be
/// measured under load, percent.
pub const LOADED_OTHERS_CPU_PCT: f64 = 25.0;

/// Share of CPU time stolen by the hypervisor during `limits` before the profile is said to be
/// measured under load, percent.
pub const LOADED_STEAL_PCT: f64 = 10.0;

/// The spread of every ceiling of [`Profile::synthetic_example`], percent.
pub const SYNTHETIC_SPREAD_PCT: f64 = 10.0;

/// A family of ceilings whose tries spread wider than this bounds nothing: its best try is a
/// guess within a factor that wide. A quiet machine's tries stay within ~10% (the lab VM's
/// quiet profile: 3–9%); on a shared one they moved 74–89% (issue 36).
pub const WIDE_SPREAD_PCT: f64 = 25.0;

/// A family measured while some task waited for a CPU more than this share of the time was
/// measured under load: its ceiling may be low however tight its tries.
pub const LOADED_CPU_SOME_PCT: f64 = 25.0;

/// ... or waited for memory (reclaim, refaults) more than this share.
pub const LOADED_MEMORY_SOME_PCT: f64 = 10.0;

/// Cost of one operation of a method, measured with 1-byte reads of a cached file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodCost {
    pub method: Method,
    /// Operations per second of one thread.
    pub ops_per_s: f64,
}

/// Memory bandwidth with `threads` threads working at once (sums over the threads).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryCeiling {
    pub threads: usize,
    /// memcpy from a large buffer into a small, cache-resident one (what read(2) does), MiB/s.
    pub copy_mib_s: f64,
    /// XOR of a large buffer's 4-byte words straight from memory (what mmap and O_DIRECT reads
    /// do to the data), MiB/s.
    pub xor_mib_s: f64,
    /// What a read(2) of a cached file costs per byte beyond the call, by block (buffer) size:
    /// the kernel's copy into the buffer, then the XOR of the buffer, measured with the `read`
    /// engine on a warm file with the per-call cost taken out. A buffer that fits the L2 cache
    /// is XORed from the cache; one larger than the last-level cache goes to memory and back.
    /// Ascending by buffer size.
    pub read_levels: Vec<MemoryLevel>,
}

/// Copy-then-XOR throughput (call cost excluded) with a buffer of one size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemoryLevel {
    /// Buffer size per thread, bytes.
    pub buffer_bytes: u64,
    /// Copy + XOR throughput, MiB/s (sum over the threads).
    pub copy_xor_mib_s: f64,
    /// The memory the buffer had (what `--buffers` obtained: plain, malloc, thp or hugetlb).
    pub buffers: Buffers,
}

/// Whether a ceiling measured with buffers of `measured` bounds a run with buffers of `run`:
/// the same memory, with transparent huge pages and hugetlb pages as one (both 2 MiB physically
/// contiguous pages, which is what the kernel's copy and a device request see). `auto` is a
/// request, never a memory, and matches nothing (resolve it first: [`resolved`]).
pub fn same_memory(measured: Buffers, run: Buffers) -> bool {
    let family = |b: Buffers| match b {
        Buffers::Plain => Some(0),
        Buffers::Malloc => Some(1),
        Buffers::Thp | Buffers::HugeTlb => Some(2),
        Buffers::Auto => None,
    };
    family(measured).is_some() && family(measured) == family(run)
}

/// The memory a `--buffers` setting gives (for a result that does not say, or a spec not run
/// yet): `auto` is huge pages for O_DIRECT and plain pages otherwise.
pub fn resolved(buffers: Buffers, direct: bool) -> Buffers {
    match buffers {
        Buffers::Auto if direct => Buffers::Thp,
        Buffers::Auto => Buffers::Plain,
        b => b,
    }
}

/// `plain`, `malloc`, or `huge-page` (thp and hugetlb alike, see [`same_memory`]): the words a
/// line uses for a kind of buffer memory.
pub fn memory_words(b: Buffers) -> &'static str {
    match b {
        Buffers::Thp | Buffers::HugeTlb => "huge-page",
        Buffers::Malloc => "malloc (16 bytes past a page)",
        Buffers::Plain => "plain 4 KiB-page",
        Buffers::Auto => "auto",
    }
}

impl MemoryCeiling {
    /// Copy + XOR throughput of all threads for blocks of `bytes` into buffers of `buffers`
    /// (log-linear interpolation of the time per byte between the levels measured with that
    /// memory, flat beyond them); None when levels were measured, but none with that memory
    /// (see [`same_memory`]). Falls back to copy and XOR measured apart when no level at all
    /// was measured (a file too small for them).
    pub fn copy_xor_mib_s(&self, bytes: u64, buffers: Buffers) -> Option<f64> {
        if self.read_levels.is_empty() {
            return Some(1.0 / (1.0 / self.copy_mib_s + 1.0 / self.xor_mib_s));
        }
        let levels: Vec<MemoryLevel> = self
            .read_levels
            .iter()
            .filter(|l| same_memory(l.buffers, buffers))
            .copied()
            .collect();
        let (first, last) = (levels.first()?, levels.last()?);
        if bytes <= first.buffer_bytes {
            return Some(first.copy_xor_mib_s);
        }
        if bytes >= last.buffer_bytes {
            return Some(last.copy_xor_mib_s);
        }
        let x = (bytes as f64).ln();
        for w in levels.windows(2) {
            let (a, b) = (w[0], w[1]);
            if bytes <= b.buffer_bytes {
                let (xa, xb) = ((a.buffer_bytes as f64).ln(), (b.buffer_bytes as f64).ln());
                let f = if xb > xa { (x - xa) / (xb - xa) } else { 1.0 };
                let (ta, tb) = (1.0 / a.copy_xor_mib_s, 1.0 / b.copy_xor_mib_s);
                return Some(1.0 / (ta + (tb - ta) * f));
            }
        }
        Some(last.copy_xor_mib_s)
    }

    /// What bounds a copy + XOR of blocks of `bytes` from above: the level of the largest buffer
    /// measured at or below `bytes` (the first level below them all, the last beyond them).
    /// Copying slows as the buffer outgrows each CPU cache, and where that step lies between
    /// two measured sizes is unknown: [`Self::copy_xor_mib_s`] interpolates an estimate; a
    /// ceiling that says "faster than this machine goes" takes the smaller size's level.
    pub fn copy_xor_upper_mib_s(&self, bytes: u64, buffers: Buffers) -> Option<f64> {
        if self.read_levels.is_empty() {
            return self.copy_xor_mib_s(bytes, buffers);
        }
        let levels = self
            .read_levels
            .iter()
            .filter(|l| same_memory(l.buffers, buffers));
        let mut best: Option<&MemoryLevel> = None;
        for l in levels {
            if best.is_none() || l.buffer_bytes <= bytes {
                best = Some(l);
            }
        }
        best.map(|l| l.copy_xor_mib_s)
    }

    /// The memories the copy levels were measured with, each once, in the order measured.
    pub fn level_memories(&self) -> Vec<Buffers> {
        let mut seen: Vec<Buffers> = Vec::new();
        for l in &self.read_levels {
            if !seen.iter().any(|&b| same_memory(b, l.buffers)) {
                seen.push(l.buffers);
            }
        }
        seen
    }
}

/// The device under the file, read with O_DIRECT.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceCeiling {
    /// Sequential 1 MiB reads, one in flight, MiB/s.
    pub seq_qd1_mib_s: f64,
    /// Sequential 1 MiB reads, 32 in flight (io_uring), MiB/s; 0 when not measured.
    pub seq_qd32_mib_s: f64,
    /// Random 4 KiB reads, one in flight, IOPS.
    pub rand4k_qd1_iops: f64,
    /// Random 4 KiB reads, 32 in flight (io_uring), IOPS; 0 when not measured.
    pub rand4k_qd32_iops: f64,
    /// The memory of the read buffers (what `--buffers` obtained): a device reached through
    /// 4 KiB pages may split a 1 MiB request that 2 MiB pages keep whole.
    pub buffers: Buffers,
}

/// Everything `limits` measured, with the context it was measured in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub version: u32,
    /// When it was measured, seconds since the Unix epoch.
    pub measured_unix_s: u64,
    pub context: Context,
    pub methods: Vec<MethodCost>,
    /// One entry per thread count measured, ascending.
    pub memory: Vec<MemoryCeiling>,
    /// The device with O_DIRECT, once per buffer memory measured (huge pages first, then plain
    /// pages); empty where O_DIRECT is refused (tmpfs) or there is no device.
    pub devices: Vec<DeviceCeiling>,
    /// Sequential buffered 1 MiB reads of a file not in the page cache (readahead), MiB/s.
    pub cold_readahead_mib_s: Option<f64>,
    /// What could not be measured, and why.
    pub notes: Vec<String>,
    /// How much each family of ceilings moved between its tries; None in a profile stored
    /// before it was kept (its error is unknown).
    #[serde(default)]
    pub spread: Option<Spread>,
    /// What the profile was measured on and under; None in a profile stored before it was kept.
    #[serde(default)]
    pub provenance: Option<Provenance>,
    /// CPUs this process may run on now (set when the profile is loaded for a run, not stored):
    /// the model never runs more threads at once than the machine it explains has, whatever
    /// the machine that measured the profile had.
    #[serde(skip)]
    pub cores_now: Option<usize>,
}

/// How much the ceilings of one profile moved between their tries: `(best − worst) / best`,
/// percent, the largest within each family. The model takes the best try, so a run may land
/// above a bound by up to about this much and still be explained by the profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Tries behind each ceiling.
    pub tries: u32,
    /// Per-operation costs of the methods.
    pub methods_pct: f64,
    /// Memory ceilings: copy, XOR and copy + XOR through the page cache, every thread count.
    pub memory_pct: f64,
    /// The O_DIRECT device figures; None when they were not measured.
    pub device_pct: Option<f64>,
    /// Cold readahead; None when it was not measured.
    pub readahead_pct: Option<f64>,
    /// The pressure stalls during each family's measurement; None in a profile stored before
    /// they were kept.
    #[serde(default)]
    pub stalls: Option<Stalls>,
}

/// The share of a family's measurement during which some task waited for a CPU, for I/O, for
/// memory (pressure stall information, `crate::facts::pressure`), percent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Stall {
    pub cpu_some_pct: f64,
    pub io_some_pct: f64,
    pub memory_some_pct: f64,
}

impl Stall {
    /// Whether the measurement ran under load (CPU or memory; I/O stalls are the device
    /// measurement's own waits).
    pub fn loaded(&self) -> bool {
        self.cpu_some_pct > LOADED_CPU_SOME_PCT || self.memory_some_pct > LOADED_MEMORY_SOME_PCT
    }
}

/// The stalls of each family of ceilings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Stalls {
    pub methods: Option<Stall>,
    pub memory: Option<Stall>,
    pub device: Option<Stall>,
    pub readahead: Option<Stall>,
}

/// Where and under what a profile was measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The file the I/O ceilings were read from: FILE, or the test file `limits` made (and
    /// removed) in the current directory.
    pub file: String,
    /// Its size, bytes.
    pub file_bytes: u64,
    /// Measured with `--quick` (shorter steps, a 32 MiB file): less precise than a full profile.
    pub quick: bool,
    /// Load average over the last minute when the measurement started.
    pub load_avg_1m: f64,
    /// Share of all CPUs' time that other processes used during the measurement, percent.
    pub others_cpu_pct: f64,
    /// Share of CPU time the hypervisor stole during the measurement, percent.
    pub steal_pct: f64,
    /// How long the measurement took, seconds.
    pub seconds: f64,
}

impl Profile {
    /// A synthetic profile with round ceilings, for tests and examples of the front ends (the
    /// UI's "why" line, the model line on plots) that must not depend on the machine's cache:
    /// 1 M read calls/s, copy and XOR at 8 GiB/s each on one thread (32 on four), a device of
    /// 1 GiB/s and 10k IOPS at QD 1, 3 GiB/s and 50k IOPS at QD 32 measured with huge-page
    /// buffers only (none with plain pages), readahead at 900 MiB/s; no copy levels (copy and
    /// XOR apart bound every buffer memory);
    /// every ceiling with a spread of [`SYNTHETIC_SPREAD_PCT`], measured on a quiet machine.
    pub fn synthetic_example() -> Profile {
        let method = |method, ops_per_s| MethodCost { method, ops_per_s };
        let memory = |threads, mib_s| MemoryCeiling {
            threads,
            copy_mib_s: mib_s,
            xor_mib_s: mib_s,
            read_levels: vec![],
        };
        Profile {
            version: PROFILE_VERSION,
            measured_unix_s: 0,
            context: Context {
                cpu_count: 4,
                ..Default::default()
            },
            methods: vec![
                method(Method::Read, 1e6),
                method(Method::Pread, 1e6),
                method(Method::Mmap, 1e8),
                method(Method::IoUring, 5e5),
            ],
            memory: vec![memory(1, 8192.0), memory(4, 32768.0)],
            devices: vec![DeviceCeiling {
                seq_qd1_mib_s: 1024.0,
                seq_qd32_mib_s: 3072.0,
                rand4k_qd1_iops: 10_000.0,
                rand4k_qd32_iops: 50_000.0,
                buffers: Buffers::Thp,
            }],
            cold_readahead_mib_s: Some(900.0),
            notes: vec![],
            spread: Some(Spread {
                tries: 3,
                methods_pct: SYNTHETIC_SPREAD_PCT,
                memory_pct: SYNTHETIC_SPREAD_PCT,
                device_pct: Some(SYNTHETIC_SPREAD_PCT),
                readahead_pct: Some(SYNTHETIC_SPREAD_PCT),
                stalls: Some(Stalls {
                    methods: Some(Stall::default()),
                    memory: Some(Stall::default()),
                    device: Some(Stall::default()),
                    readahead: Some(Stall::default()),
                }),
            }),
            provenance: Some(Provenance {
                file: "synthetic".to_string(),
                file_bytes: 512 << 20,
                quick: false,
                load_avg_1m: 0.1,
                others_cpu_pct: 1.0,
                steal_pct: 0.0,
                seconds: 20.0,
            }),
            cores_now: None,
        }
    }

    /// Operations per second of one thread of `method` (the closest method measured otherwise).
    pub fn ops_per_s(&self, method: Method) -> Option<f64> {
        self.methods
            .iter()
            .find(|m| m.method == method)
            .or_else(|| self.methods.iter().find(|m| m.method == Method::Pread))
            .or_else(|| self.methods.iter().find(|m| m.method == Method::Read))
            .map(|m| m.ops_per_s)
    }

    /// The O_DIRECT device figures measured with buffers of the same memory as `buffers` (see
    /// [`same_memory`]); None when the device was not measured with it.
    pub fn device_for(&self, buffers: Buffers) -> Option<&DeviceCeiling> {
        self.devices
            .iter()
            .find(|d| same_memory(d.buffers, buffers))
    }

    /// The memory ceiling for `threads` (the largest measured count at most `threads`).
    pub fn memory_for(&self, threads: usize) -> Option<&MemoryCeiling> {
        self.memory
            .iter()
            .filter(|m| m.threads <= threads.max(1))
            .max_by_key(|m| m.threads)
            .or_else(|| self.memory.first())
    }
}
