//! The machine's measured ceilings for one device, as stored by `diskscope limits`: JSON under
//! the user's cache directory (`$XDG_CACHE_HOME` or `~/.cache`, then
//! `diskscope/profiles/<host>-<device>.json`).
//!
//! A profile is outside input like any other file: another process (or a user) can put a FIFO,
//! a symbolic link to `/dev/zero` or a hand-edited number there. So it is read with
//! [`read_capped`] (no symlink followed, nothing but a regular file of at most
//! [`MAX_PROFILE_BYTES`], never a blocking open) and checked by [`Profile::validate`] (every
//! ceiling finite, positive and below a physical bound) before the model sees it. A profile that
//! fails either is ignored with one warning line naming the file and the key; a missing one just
//! means "no explanation".
//!
//! A profile also knows how far to trust it: the [`Spread`] of the tries behind each ceiling
//! (a run above its bound by less than that spread is within the profile's error, one above by
//! more is not explained by it), and its [`Provenance`]: the file it read, whether it was a
//! `--quick` one, and the load and CPU steal it was measured under. Profiles stored before these
//! existed still load (the fields default to "unknown") and are said to have an unknown error. A
//! profile from another kernel, another device or older than [`STALE_AFTER_DAYS`] is still used
//! but said to be stale.
//!
//! A ceiling holds for one kind of buffer memory (`--buffers`): the kernel's copy from the page
//! cache into a buffer and an O_DIRECT request of 1 MiB both run at very different speeds into
//! 4 KiB pages and into 2 MiB pages (2.5 against 9 GiB/s, 1.4 against 2.4 GiB/s on the lab VM,
//! issue 20). So every copy level and every device figure records the memory it was measured
//! with ([`MemoryLevel::buffers`], [`DeviceCeiling::buffers`]), `limits` measures both plain and
//! huge-page buffers, and the model asks for the run's own ([`same_memory`]): a run whose memory
//! has no ceiling here is told so instead of being bounded by the other's. Profiles stored before
//! (version 2) did not record it and are measured again.

use super::context::Context;
use crate::config::{Buffers, Method};
use crate::text::{shown, shown_path};
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

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

/// A family of ceilings: the tries behind one kind of bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Per-operation costs (syscall-bound points).
    Methods,
    /// Copy and XOR (memory-bound points).
    Memory,
    /// O_DIRECT device figures.
    Device,
    /// Cold readahead.
    Readahead,
}

impl Family {
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Methods => "per-operation",
            Family::Memory => "memory",
            Family::Device => "device",
            Family::Readahead => "readahead",
        }
    }
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

impl Provenance {
    /// Whether the machine was busy enough while measuring that the ceilings may be low.
    pub fn under_load(&self) -> bool {
        self.others_cpu_pct > LOADED_OTHERS_CPU_PCT || self.steal_pct > LOADED_STEAL_PCT
    }

    /// `under load (other processes used 63% of the CPUs, 12% stolen)`, or None when quiet.
    pub fn load_doubt(&self) -> Option<String> {
        self.under_load().then(|| {
            format!(
                "measured under load (other processes used {:.0}% of the CPUs, {:.0}% stolen by the hypervisor): its ceilings may be low",
                self.others_cpu_pct, self.steal_pct
            )
        })
    }

    /// One line for `limits`: `measured on /x/.diskscope-limits-1.bin (512 MiB), full, in 17.2 s;
    /// load 2.1, other processes 12% of the CPUs, steal 0%`.
    pub fn summary(&self) -> String {
        format!(
            "measured on {} ({}), {}, in {:.1} s; load {:.1}, other processes {:.0}% of the CPUs, steal {:.0}%",
            shown(&self.file),
            crate::size::format_bytes_approx(self.file_bytes),
            if self.quick { "--quick" } else { "full" },
            self.seconds,
            self.load_avg_1m,
            self.others_cpu_pct,
            self.steal_pct
        )
    }
}

/// Why a stored profile was not used.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    #[error("it is a symbolic link, which is never followed there")]
    Symlink,
    #[error("it is not a regular file ({0})")]
    NotRegular(&'static str),
    #[error("it is larger than 1 MiB ({0} bytes): not a profile")]
    TooLarge(u64),
    #[error("it is not a profile: {0}")]
    Parse(String),
    #[error("{0}")]
    Invalid(#[from] InvalidValue),
}

/// A value of a profile outside its bounds.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{key}` = {value} is not {expected}")]
pub struct InvalidValue {
    /// Where in the profile: `device.seq_qd1_mib_s`, `methods[read].ops_per_s`.
    pub key: String,
    /// The value as read.
    pub value: String,
    /// What it must be.
    pub expected: &'static str,
}

/// A number for an error message: plain when short, scientific when huge or tiny.
fn number(v: f64) -> String {
    if v != 0.0 && v.is_finite() && (v.abs() >= 1e9 || v.abs() < 1e-3) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Checks `value` against `(0, max]` (or `[0, max]` when `zero_ok`).
fn check_rate(
    key: impl FnOnce() -> String,
    value: f64,
    max: f64,
    zero_ok: bool,
    expected: &'static str,
) -> Result<(), InvalidValue> {
    let ok = value.is_finite() && value <= max && (value > 0.0 || (zero_ok && value == 0.0));
    if ok {
        Ok(())
    } else {
        Err(InvalidValue {
            key: key(),
            value: number(value),
            expected,
        })
    }
}

fn check_count(
    key: impl FnOnce() -> String,
    value: u64,
    min: u64,
    max: u64,
) -> Result<(), InvalidValue> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(InvalidValue {
            key: key(),
            value: value.to_string(),
            expected: "a count in its range (threads 1 to 65536, buffers 1 byte to 1 TiB)",
        })
    }
}

const RATE: &str = "a rate in (0, 1e9] MiB/s";
const OPS: &str = "a rate in (0, 1e12] operations per second";
const IOPS: &str = "a rate in (0, 1e9] IOPS";
const IOPS_OR_ZERO: &str = "0 (not measured) or a rate in (0, 1e9] IOPS";
const RATE_OR_ZERO: &str = "0 (not measured) or a rate in (0, 1e9] MiB/s";
const PCT: &str = "a share in [0, 100] percent";

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

    /// Checks every number the model or a front end uses: rates finite, above zero and below
    /// [`MAX_MIB_S`], [`MAX_OPS_PER_S`] or [`MAX_IOPS`]; counts within their range; shares of
    /// time within 0–100%. The first value out of bounds is returned with its key.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        let cpus = self.context.cpu_count as u64;
        check_count(|| "context.cpu_count".into(), cpus, 0, MAX_THREADS as u64)?;
        for m in &self.methods {
            let key = || format!("methods[{}].ops_per_s", m.method.as_str());
            check_rate(key, m.ops_per_s, MAX_OPS_PER_S, false, OPS)?;
        }
        for m in &self.memory {
            let t = m.threads;
            let at = |k: &str| format!("memory[threads={t}].{k}");
            check_count(|| at("threads"), t as u64, 1, MAX_THREADS as u64)?;
            check_rate(|| at("copy_mib_s"), m.copy_mib_s, MAX_MIB_S, false, RATE)?;
            check_rate(|| at("xor_mib_s"), m.xor_mib_s, MAX_MIB_S, false, RATE)?;
            for (i, l) in m.read_levels.iter().enumerate() {
                let lk = |k: &str| at(&format!("read_levels[{i}].{k}"));
                check_count(|| lk("buffer_bytes"), l.buffer_bytes, 1, MAX_BUFFER_BYTES)?;
                check_rate(
                    || lk("copy_xor_mib_s"),
                    l.copy_xor_mib_s,
                    MAX_MIB_S,
                    false,
                    RATE,
                )?;
            }
        }
        for d in &self.devices {
            let k = |f: &str| format!("devices[{}].{f}", d.buffers.as_str());
            check_rate(
                || k("seq_qd1_mib_s"),
                d.seq_qd1_mib_s,
                MAX_MIB_S,
                false,
                RATE,
            )?;
            check_rate(
                || k("seq_qd32_mib_s"),
                d.seq_qd32_mib_s,
                MAX_MIB_S,
                true,
                RATE_OR_ZERO,
            )?;
            check_rate(
                || k("rand4k_qd1_iops"),
                d.rand4k_qd1_iops,
                MAX_IOPS,
                false,
                IOPS,
            )?;
            check_rate(
                || k("rand4k_qd32_iops"),
                d.rand4k_qd32_iops,
                MAX_IOPS,
                true,
                IOPS_OR_ZERO,
            )?;
        }
        if let Some(ra) = self.cold_readahead_mib_s {
            check_rate(|| "cold_readahead_mib_s".into(), ra, MAX_MIB_S, false, RATE)?;
        }
        let pct = |key: String, v: f64| check_rate(|| key, v, 100.0, true, PCT);
        if let Some(sp) = &self.spread {
            pct("spread.methods_pct".into(), sp.methods_pct)?;
            pct("spread.memory_pct".into(), sp.memory_pct)?;
            if let Some(v) = sp.device_pct {
                pct("spread.device_pct".into(), v)?;
            }
            if let Some(v) = sp.readahead_pct {
                pct("spread.readahead_pct".into(), v)?;
            }
        }
        if let Some(pv) = &self.provenance {
            pct("provenance.others_cpu_pct".into(), pv.others_cpu_pct)?;
            pct("provenance.steal_pct".into(), pv.steal_pct)?;
            let load = || "provenance.load_avg_1m".to_string();
            check_rate(
                load,
                pv.load_avg_1m,
                1e6,
                true,
                "a load average in [0, 1e6]",
            )?;
            let secs = || "provenance.seconds".to_string();
            check_rate(secs, pv.seconds, 1e7, true, "a duration in [0, 1e7] s")?;
        }
        Ok(())
    }

    /// Why the profile may not describe the machine now, beyond staleness: measured under load,
    /// a `--quick` one, an unknown error (stored before its spread was kept). None when there
    /// is nothing to doubt.
    pub fn provenance_doubts(&self) -> Vec<String> {
        let mut why = Vec::new();
        match &self.provenance {
            Some(pv) => {
                why.extend(pv.load_doubt());
                if pv.quick {
                    why.push("measured with --quick (short steps, less precise)".to_string());
                }
            }
            None => why.push("where and under what load it was measured is unknown".to_string()),
        }
        if self.spread.is_none() {
            why.push(
                "its error is unknown (stored before limits kept the spread of its tries)"
                    .to_string(),
            );
        }
        why
    }

    /// Everything that makes the profile doubtful now, in one warning: staleness (kernel,
    /// device, CPU count, age) and [`Profile::provenance_doubts`]; None when it is fresh and
    /// was measured on a quiet machine with its spread.
    pub fn doubts(&self, now: &Context, now_unix_s: u64) -> Option<String> {
        let stale = self.stale_reasons(now, now_unix_s);
        let other = self.provenance_doubts();
        let mut parts = Vec::new();
        if !stale.is_empty() {
            parts.push(format!("the limits profile is stale: {}", stale.join(", ")));
        }
        if !other.is_empty() {
            let lead = if stale.is_empty() {
                "the limits profile may not hold"
            } else {
                "it may not hold either"
            };
            parts.push(format!("{lead}: {}", other.join("; ")));
        }
        (!parts.is_empty())
            .then(|| format!("{}; run `diskscope limits --refresh`", parts.join("; ")))
    }

    /// Why the ceilings of `family` bound nothing, in words (`measured under load: CPU pressure
    /// 63% while it was measured`, `its device ceilings spread 74% over 3 tries`); None when
    /// they can be trusted: tries within [`WIDE_SPREAD_PCT`], measured with little pressure.
    /// A profile from before stalls were kept is judged by its load (`Provenance`); one from
    /// before spreads were kept has an unknown error and bounds nothing.
    pub fn family_doubt(&self, family: Family) -> Option<String> {
        let Some(spread) = &self.spread else {
            return Some("its error is unknown: stored before limits kept its spread".into());
        };
        let (pct, stall) = match family {
            Family::Methods => (
                Some(spread.methods_pct),
                spread.stalls.and_then(|s| s.methods),
            ),
            Family::Memory => (
                Some(spread.memory_pct),
                spread.stalls.and_then(|s| s.memory),
            ),
            Family::Device => (spread.device_pct, spread.stalls.and_then(|s| s.device)),
            Family::Readahead => (
                spread.readahead_pct,
                spread.stalls.and_then(|s| s.readahead),
            ),
        };
        let name = family.as_str();
        if let Some(pct) = pct.filter(|p| *p > WIDE_SPREAD_PCT) {
            return Some(format!(
                "its {name} ceilings spread {pct:.0}% over {} tries, more than {WIDE_SPREAD_PCT:.0}%",
                spread.tries
            ));
        }
        match (stall, &self.provenance) {
            (Some(st), _) if st.loaded() => Some(format!(
                "measured under load: while its {name} ceilings were measured, tasks waited                  for a CPU {:.0}% and for memory {:.0}% of the time",
                st.cpu_some_pct, st.memory_some_pct
            )),
            (Some(_), _) => None,
            (None, Some(pv)) if pv.under_load() => Some(format!(
                "measured under load: other processes used {:.0}% of the CPUs, {:.0}% stolen",
                pv.others_cpu_pct, pv.steal_pct
            )),
            (None, Some(_)) => None,
            (None, None) => Some("the load it was measured under is unknown".into()),
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

    /// Why this profile may not describe `now` any more; None when it is fresh.
    pub fn staleness(&self, now: &Context, now_unix_s: u64) -> Option<String> {
        let why = self.stale_reasons(now, now_unix_s);
        (!why.is_empty()).then(|| {
            format!(
                "the limits profile is stale: {}; run `diskscope limits --refresh`",
                why.join(", ")
            )
        })
    }

    /// What changed since the profile was measured (kernel, device, CPU count, a month).
    fn stale_reasons(&self, now: &Context, now_unix_s: u64) -> Vec<String> {
        let mut why = Vec::new();
        if self.context.kernel != now.kernel {
            why.push(format!(
                "kernel changed ({} → {})",
                shown(&self.context.kernel),
                shown(&now.kernel)
            ));
        }
        if self.context.device_key() != now.device_key() {
            why.push(format!(
                "device changed ({} → {})",
                shown(&self.context.device_key()),
                shown(&now.device_key())
            ));
        }
        if self.context.cpu_count != now.cpu_count {
            why.push(format!(
                "CPU count changed ({} → {})",
                self.context.cpu_count, now.cpu_count
            ));
        }
        let age_days = now_unix_s.saturating_sub(self.measured_unix_s) / 86_400;
        if age_days > STALE_AFTER_DAYS {
            why.push(format!("measured {age_days} days ago"));
        }
        why
    }
}

/// Seconds since the Unix epoch, now.
pub fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `$XDG_CACHE_HOME/diskscope/profiles` or `~/.cache/diskscope/profiles`: the one place a
/// profile is stored ([`store`]) and read ([`load_for`]). In the crate's own unit tests there
/// is none, so no test reads or writes the profile of the user who runs them (the integration
/// tests give each binary its own `HOME` and `XDG_CACHE_HOME`).
pub fn profile_dir() -> Option<PathBuf> {
    if cfg!(test) {
        return None;
    }
    profile_dir_in(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

/// [`profile_dir`] for these values of `XDG_CACHE_HOME` and `HOME` (an empty or relative
/// `XDG_CACHE_HOME` is ignored, as the XDG base directory specification says).
fn profile_dir_in(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let base = xdg_cache_home
        .filter(|v| !v.is_empty() && Path::new(v).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            home.filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("diskscope").join("profiles"))
}

/// The file name of a context's profile: `<host>-<device>.json`, with path separators removed.
pub fn profile_file_name(ctx: &Context) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}-{}.json", clean(&ctx.host), clean(&ctx.device_key()))
}

/// Where the profile of `ctx` is stored.
pub fn profile_path(ctx: &Context) -> Option<PathBuf> {
    Some(profile_dir()?.join(profile_file_name(ctx)))
}

/// The text of the file at `path`, read safely: Ok(None) when there is none; an error for a
/// symbolic link (never followed: `O_NOFOLLOW`), anything but a regular file (a FIFO would
/// block the reader forever, `/dev/zero` would fill its memory), or a file over
/// [`MAX_PROFILE_BYTES`]. The type is checked before the open (`lstat`) and again on the open
/// descriptor (`fstat`), the open never blocks (`O_NONBLOCK`), and at most the cap and one byte
/// are read, so a file swapped or grown under us cannot change that.
pub fn read_capped(path: &Path) -> Result<Option<String>, ProfileError> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
    fn kind_of(t: std::fs::FileType) -> Result<(), ProfileError> {
        if t.is_symlink() {
            Err(ProfileError::Symlink)
        } else if t.is_file() {
            Ok(())
        } else if t.is_fifo() {
            Err(ProfileError::NotRegular("a FIFO"))
        } else if t.is_char_device() || t.is_block_device() {
            Err(ProfileError::NotRegular("a device"))
        } else if t.is_dir() {
            Err(ProfileError::NotRegular("a directory"))
        } else {
            Err(ProfileError::NotRegular("a socket or other special file"))
        }
    }
    let before = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    kind_of(before.file_type())?;
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(ProfileError::Symlink),
        Err(e) => return Err(e.into()),
    };
    let m = f.metadata()?;
    kind_of(m.file_type())?;
    if m.len() > MAX_PROFILE_BYTES {
        return Err(ProfileError::TooLarge(m.len()));
    }
    if (m.dev(), m.ino()) != (before.dev(), before.ino()) {
        return Err(ProfileError::Parse(
            "it was replaced while being read".into(),
        ));
    }
    let mut bytes = Vec::new();
    f.take(MAX_PROFILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(ProfileError::TooLarge(bytes.len() as u64));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ProfileError::Parse("not UTF-8 text".into()))
}

/// The profile stored at `path`: Ok(None) when there is none or it has another format version
/// (an older diskscope's, measured again by `limits`); an error when it cannot be read safely,
/// is not a profile, or holds a value out of bounds.
pub fn load_path(path: &Path) -> Result<Option<Profile>, ProfileError> {
    let Some(text) = read_capped(path)? else {
        return Ok(None);
    };
    #[derive(Deserialize)]
    struct Version {
        version: u32,
    }
    match serde_json::from_str::<Version>(&text) {
        Ok(v) if v.version != PROFILE_VERSION => return Ok(None),
        _ => {}
    }
    let p: Profile = serde_json::from_str(&text).map_err(|e| ProfileError::Parse(e.to_string()))?;
    p.validate()?;
    Ok(Some(p))
}

/// The one warning line for a profile that was not used.
pub fn ignored_warning(path: &Path, e: &ProfileError) -> String {
    format!(
        "warning: ignoring the limits profile {}: {}; run `diskscope limits --refresh`",
        shown_path(path),
        shown(&e.to_string())
    )
}

/// Loads the profile for `ctx` if one is stored, readable and valid. A profile that is there
/// but cannot be used is ignored with one warning line on stderr (once per file and process).
pub fn load_for(ctx: &Context) -> Option<Profile> {
    let path = profile_path(ctx)?;
    match load_path(&path) {
        Ok(p) => p,
        Err(e) => {
            warn_once(&path, &ignored_warning(&path, &e));
            None
        }
    }
}

/// Prints `line` on stderr unless it was printed for `path` already in this process.
fn warn_once(path: &Path, line: &str) {
    static WARNED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let Ok(mut warned) = WARNED.lock() else {
        return;
    };
    if !warned.iter().any(|w| w == path) {
        warned.push(path.to_path_buf());
        crate::eprintln_shown!("{line}");
    }
}

/// Stores `p` (replacing the earlier profile of the same host and device: the file is ours, by
/// its name under our cache directory). Written to a temporary name first, then renamed, so a
/// crash never leaves half a profile.
pub fn store(p: &Profile) -> anyhow::Result<PathBuf> {
    let path = profile_path(&p.context)
        .context("no cache directory: set HOME or XDG_CACHE_HOME to store the profile")?;
    let dir = path.parent().context("profile path has no parent")?;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating {}", crate::text::shown_path(dir)))?;
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    let text = serde_json::to_string_pretty(p)?;
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .with_context(|| format!("creating {}", crate::text::shown_path(&tmp)))?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)
        .with_context(|| format!("storing {}", crate::text::shown_path(&path)))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profile_lives_under_xdg_cache_home_else_home_and_never_in_a_unit_test() {
        let os = |s: &str| Some(std::ffi::OsString::from(s));
        assert_eq!(
            profile_dir_in(os("/c"), os("/h")),
            Some(PathBuf::from("/c/diskscope/profiles"))
        );
        for xdg in [None, os(""), os("relative/cache")] {
            assert_eq!(
                profile_dir_in(xdg, os("/h")),
                Some(PathBuf::from("/h/.cache/diskscope/profiles"))
            );
        }
        assert_eq!(profile_dir_in(None, os("")), None);
        assert_eq!(profile_dir_in(None, None), None);
        // This process is a unit test: the user's cache is out of reach.
        assert_eq!(profile_dir(), None);
    }

    fn profile_on(kernel: &str, measured_unix_s: u64) -> Profile {
        Profile {
            version: PROFILE_VERSION,
            measured_unix_s,
            context: Context {
                host: "h".into(),
                kernel: kernel.into(),
                cpu_count: 2,
                ..Default::default()
            },
            methods: vec![],
            memory: vec![],
            devices: vec![],
            cold_readahead_mib_s: None,
            notes: vec![],
            spread: None,
            provenance: None,
            cores_now: None,
        }
    }

    #[test]
    fn a_profile_is_stale_after_a_kernel_change_or_a_month_and_fresh_otherwise() {
        let now_ctx = profile_on("6.8.0", 0).context;
        let day = 86_400;
        assert_eq!(
            profile_on("6.8.0", 100 * day).staleness(&now_ctx, 101 * day),
            None
        );
        let k = profile_on("6.1.0", 100 * day)
            .staleness(&now_ctx, 101 * day)
            .unwrap();
        assert!(
            k.contains("kernel changed (6.1.0 → 6.8.0)") && k.contains("--refresh"),
            "{k}"
        );
        let old = profile_on("6.8.0", 0)
            .staleness(&now_ctx, 45 * day)
            .unwrap();
        assert!(old.contains("measured 45 days ago"), "{old}");
    }

    #[test]
    fn profile_file_names_are_host_and_device_without_path_separators() {
        let mut p = profile_on("6.8.0", 0);
        p.context.host = "a/b c".into();
        assert_eq!(profile_file_name(&p.context), "a_b_c-unknown.json");
    }

    #[test]
    fn the_memory_ceiling_for_a_thread_count_is_the_largest_measured_not_above_it() {
        let mut p = profile_on("6.8.0", 0);
        for t in [1, 2, 4] {
            p.memory.push(MemoryCeiling {
                threads: t,
                copy_mib_s: t as f64,
                xor_mib_s: t as f64,
                read_levels: vec![],
            });
        }
        assert_eq!(p.memory_for(3).unwrap().threads, 2);
        assert_eq!(p.memory_for(64).unwrap().threads, 4);
        assert_eq!(p.memory_for(0).unwrap().threads, 1);
    }

    #[test]
    fn copy_and_xor_slow_down_between_the_cache_and_memory_buffer_sizes() {
        let level = |buffer_bytes, copy_xor_mib_s| MemoryLevel {
            buffer_bytes,
            copy_xor_mib_s,
            buffers: Buffers::Plain,
        };
        let m = MemoryCeiling {
            threads: 1,
            copy_mib_s: 8000.0,
            xor_mib_s: 16000.0,
            read_levels: vec![level(1 << 19, 10000.0), level(1 << 27, 2500.0)],
        };
        let plain = |b| m.copy_xor_mib_s(b, Buffers::Plain).unwrap();
        assert_eq!(plain(4096), 10000.0);
        assert_eq!(plain(1 << 30), 2500.0);
        // Halfway in log size: time per byte halfway between 1/10000 and 1/2500.
        let mid = plain(1 << 23);
        assert!(
            (mid - 1.0 / ((1.0 / 10000.0 + 1.0 / 2500.0) / 2.0)).abs() < 1.0,
            "{mid}"
        );
        let none = MemoryCeiling {
            read_levels: vec![],
            ..m.clone()
        };
        let apart = none.copy_xor_mib_s(4096, Buffers::Thp).unwrap();
        assert!((apart - 1.0 / (1.0 / 8000.0 + 1.0 / 16000.0)).abs() < 1e-6);
    }

    #[test]
    fn a_copy_level_or_device_figure_bounds_only_runs_with_the_same_buffer_memory() {
        let level = |buffer_bytes, copy_xor_mib_s, buffers| MemoryLevel {
            buffer_bytes,
            copy_xor_mib_s,
            buffers,
        };
        let m = MemoryCeiling {
            threads: 1,
            copy_mib_s: 8000.0,
            xor_mib_s: 16000.0,
            read_levels: vec![
                level(1 << 16, 2500.0, Buffers::Plain),
                level(1 << 16, 9000.0, Buffers::Thp),
            ],
        };
        assert_eq!(m.copy_xor_mib_s(1 << 20, Buffers::Plain), Some(2500.0));
        // thp and hugetlb are the same memory to the copy; malloc's offset buffers are not.
        assert_eq!(m.copy_xor_mib_s(1 << 20, Buffers::HugeTlb), Some(9000.0));
        assert_eq!(m.copy_xor_mib_s(1 << 20, Buffers::Malloc), None);
        assert_eq!(m.level_memories(), vec![Buffers::Plain, Buffers::Thp]);
        let p = Profile::synthetic_example();
        assert!(p.device_for(Buffers::HugeTlb).is_some());
        assert!(p.device_for(Buffers::Plain).is_none());
        assert!(!same_memory(Buffers::Auto, Buffers::Auto));
        assert_eq!(resolved(Buffers::Auto, true), Buffers::Thp);
        assert_eq!(resolved(Buffers::Auto, false), Buffers::Plain);
        assert_eq!(resolved(Buffers::Malloc, true), Buffers::Malloc);
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("diskscope-profile")
            .tempdir()
            .unwrap()
    }

    #[test]
    fn a_fifo_profile_is_refused_without_blocking() {
        let d = tmp();
        let f = d.path().join("p.json");
        rustix::fs::mkfifoat(rustix::fs::CWD, &f, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
        let e = read_capped(&f).unwrap_err();
        assert!(matches!(e, ProfileError::NotRegular("a FIFO")), "{e}");
    }

    #[test]
    fn a_symlinked_profile_is_never_followed_even_to_a_good_profile() {
        let d = tmp();
        let good = d.path().join("good.json");
        std::fs::write(
            &good,
            serde_json::to_string(&Profile::synthetic_example()).unwrap(),
        )
        .unwrap();
        for target in [Path::new("/dev/zero"), good.as_path()] {
            let link = d.path().join("link.json");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(target, &link).unwrap();
            let e = load_path(&link).unwrap_err();
            assert!(matches!(e, ProfileError::Symlink), "{target:?}: {e}");
        }
        assert!(load_path(&good).unwrap().is_some());
    }

    #[test]
    fn a_profile_over_a_mebibyte_is_refused_unread() {
        let d = tmp();
        let f = d.path().join("big.json");
        std::fs::write(&f, vec![b' '; (MAX_PROFILE_BYTES + 1) as usize]).unwrap();
        let e = read_capped(&f).unwrap_err();
        assert!(matches!(e, ProfileError::TooLarge(_)), "{e}");
        assert!(read_capped(&d.path().join("none.json")).unwrap().is_none());
    }

    #[test]
    fn zero_negative_huge_and_missing_ceilings_are_refused_with_their_key() {
        let base = Profile::synthetic_example();
        assert_eq!(base.validate(), Ok(()));
        type Spoil = fn(&mut Profile);
        let cases: Vec<(Spoil, &str)> = vec![
            (|p| p.methods[0].ops_per_s = 0.0, "methods[read].ops_per_s"),
            (
                |p| p.memory[1].copy_mib_s = -1.0,
                "memory[threads=4].copy_mib_s",
            ),
            (
                |p| p.memory[0].xor_mib_s = 1e308,
                "memory[threads=1].xor_mib_s",
            ),
            (
                |p| p.devices[0].rand4k_qd1_iops = u64::MAX as f64,
                "devices[thp].rand4k_qd1_iops",
            ),
            (
                |p| p.devices[0].seq_qd1_mib_s = f64::NAN,
                "devices[thp].seq_qd1_mib_s",
            ),
            (
                |p| p.cold_readahead_mib_s = Some(f64::INFINITY),
                "cold_readahead_mib_s",
            ),
            (|p| p.memory[0].threads = 0, "memory[threads=0].threads"),
            (
                |p| p.spread.as_mut().unwrap().memory_pct = 250.0,
                "spread.memory_pct",
            ),
            (
                |p| p.provenance.as_mut().unwrap().steal_pct = -3.0,
                "provenance.steal_pct",
            ),
        ];
        for (spoil, key) in cases {
            let mut p = base.clone();
            spoil(&mut p);
            let e = p.validate().unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert!(
                !e.to_string().contains("inf") || key == "cold_readahead_mib_s",
                "{e}"
            );
        }
        // Zero means "not measured" for the QD 32 figures.
        let mut p = base;
        p.devices[0].seq_qd32_mib_s = 0.0;
        p.devices[0].rand4k_qd32_iops = 0.0;
        assert_eq!(p.validate(), Ok(()));
    }

    #[test]
    fn an_invalid_profile_is_ignored_with_one_line_naming_the_file_and_the_key() {
        let d = tmp();
        let f = d.path().join("a\u{1b}]0;x\u{7}.json");
        let mut p = Profile::synthetic_example();
        p.memory[0].copy_mib_s = 1e308;
        std::fs::write(&f, serde_json::to_string(&p).unwrap()).unwrap();
        let e = load_path(&f).unwrap_err();
        let line = ignored_warning(&f, &e);
        assert!(!line.contains('\n') && !line.contains('\u{1b}'), "{line}");
        assert!(line.contains("a\\u{1b}]0;x\\u{7}.json"), "{line}");
        assert!(
            line.contains("`memory[threads=1].copy_mib_s` = 1e308"),
            "{line}"
        );
        assert!(line.contains("limits --refresh"), "{line}");
    }

    #[test]
    fn a_profile_stored_before_spread_and_provenance_still_loads_with_an_unknown_error() {
        let mut v = serde_json::to_value(Profile::synthetic_example()).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("spread");
        o.remove("provenance");
        let d = tmp();
        let f = d.path().join("old.json");
        std::fs::write(&f, v.to_string()).unwrap();
        let p = load_path(&f).unwrap().unwrap();
        assert!(p.spread.is_none() && p.provenance.is_none());
        let doubt = p.doubts(&p.context, p.measured_unix_s).unwrap();
        assert!(doubt.contains("its error is unknown"), "{doubt}");
        assert_eq!(Profile::synthetic_example().doubts(&p.context, 0), None);
    }

    #[test]
    fn a_profile_measured_under_load_or_quick_says_so() {
        let mut p = Profile::synthetic_example();
        let pv = p.provenance.as_mut().unwrap();
        pv.others_cpu_pct = 60.0;
        pv.steal_pct = 12.0;
        pv.quick = true;
        let d = p.doubts(&p.context, 0).unwrap();
        assert!(
            d.contains("measured under load (other processes used 60% of the CPUs, 12% stolen"),
            "{d}"
        );
        assert!(
            d.contains("--quick") && d.ends_with("run `diskscope limits --refresh`"),
            "{d}"
        );
        let mut now = p.context.clone();
        now.kernel = "\u{1b}[2J".into();
        let d = p.doubts(&now, 0).unwrap();
        assert!(
            d.starts_with("the limits profile is stale: kernel changed") && !d.contains('\u{1b}'),
            "{d}"
        );
    }
}
