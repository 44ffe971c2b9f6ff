//! The machine's measured ceilings for one device, as stored by `diskscope limits`: JSON under
//! the user's cache directory (`$XDG_CACHE_HOME` or `~/.cache`, then
//! `diskscope/profiles/<host>-<device>.json`). Loading never fails loudly: a missing or unreadable
//! profile just means "no explanation"; a profile from another kernel, another device or older
//! than [`STALE_AFTER_DAYS`] is still used but said to be stale.

use super::context::Context;
use crate::config::Method;
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Format version of the stored profile; a different one is ignored.
pub const PROFILE_VERSION: u32 = 2;
/// Age after which a profile is called stale.
pub const STALE_AFTER_DAYS: u64 = 30;

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
}

impl MemoryCeiling {
    /// Copy + XOR throughput of all threads for blocks of `bytes` (log-linear interpolation of
    /// the time per byte between the measured buffer sizes, flat beyond them); falls back to
    /// copy and XOR measured apart when no level was measured.
    pub fn copy_xor_mib_s(&self, bytes: u64) -> f64 {
        let levels = &self.read_levels;
        let apart = || 1.0 / (1.0 / self.copy_mib_s + 1.0 / self.xor_mib_s);
        let (Some(first), Some(last)) = (levels.first(), levels.last()) else {
            return apart();
        };
        if bytes <= first.buffer_bytes {
            return first.copy_xor_mib_s;
        }
        if bytes >= last.buffer_bytes {
            return last.copy_xor_mib_s;
        }
        let x = (bytes as f64).ln();
        for w in levels.windows(2) {
            let (a, b) = (w[0], w[1]);
            if bytes <= b.buffer_bytes {
                let (xa, xb) = ((a.buffer_bytes as f64).ln(), (b.buffer_bytes as f64).ln());
                let f = if xb > xa { (x - xa) / (xb - xa) } else { 1.0 };
                let (ta, tb) = (1.0 / a.copy_xor_mib_s, 1.0 / b.copy_xor_mib_s);
                return 1.0 / (ta + (tb - ta) * f);
            }
        }
        apart()
    }
}

/// The device under the file, read with O_DIRECT.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceCeiling {
    /// Sequential 1 MiB reads, one in flight, MiB/s.
    pub seq_qd1_mib_s: f64,
    /// Sequential 1 MiB reads, 32 in flight (io_uring), MiB/s; 0 when not measured.
    pub seq_qd32_mib_s: f64,
    /// Random 4 KiB reads, one in flight, IOPS.
    pub rand4k_qd1_iops: f64,
    /// Random 4 KiB reads, 32 in flight (io_uring), IOPS; 0 when not measured.
    pub rand4k_qd32_iops: f64,
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
    /// None where O_DIRECT is refused (tmpfs) or there is no device.
    pub device: Option<DeviceCeiling>,
    /// Sequential buffered 1 MiB reads of a file not in the page cache (readahead), MiB/s.
    pub cold_readahead_mib_s: Option<f64>,
    /// What could not be measured, and why.
    pub notes: Vec<String>,
}

impl Profile {
    /// A synthetic profile with round ceilings, for tests and examples of the front ends (the
    /// UI's "why" line, the model line on plots) that must not depend on the machine's cache:
    /// 1 M read calls/s, copy and XOR at 8 GiB/s each on one thread (32 on four), a device of
    /// 1 GiB/s and 10k IOPS at QD 1, 3 GiB/s and 50k IOPS at QD 32, readahead at 900 MiB/s.
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
            device: Some(DeviceCeiling {
                seq_qd1_mib_s: 1024.0,
                seq_qd32_mib_s: 3072.0,
                rand4k_qd1_iops: 10_000.0,
                rand4k_qd32_iops: 50_000.0,
            }),
            cold_readahead_mib_s: Some(900.0),
            notes: vec![],
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
        let mut why = Vec::new();
        if self.context.kernel != now.kernel {
            why.push(format!(
                "kernel changed ({} → {})",
                self.context.kernel, now.kernel
            ));
        }
        if self.context.device_key() != now.device_key() {
            why.push(format!(
                "device changed ({} → {})",
                self.context.device_key(),
                now.device_key()
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
        (!why.is_empty()).then(|| {
            format!(
                "the limits profile is stale: {}; run `diskscope limits --refresh`",
                why.join(", ")
            )
        })
    }
}

/// Seconds since the Unix epoch, now.
pub fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `$XDG_CACHE_HOME/diskscope/profiles` or `~/.cache/diskscope/profiles`.
pub fn profile_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty() && Path::new(v).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
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

/// Loads the profile for `ctx` if one is stored and readable.
pub fn load_for(ctx: &Context) -> Option<Profile> {
    let text = std::fs::read_to_string(profile_path(ctx)?).ok()?;
    let p: Profile = serde_json::from_str(&text).ok()?;
    (p.version == PROFILE_VERSION).then_some(p)
}

/// Stores `p` (replacing the earlier profile of the same host and device: the file is ours, by
/// its name under our cache directory). Written to a temporary name first, then renamed, so a
/// crash never leaves half a profile.
pub fn store(p: &Profile) -> anyhow::Result<PathBuf> {
    let path = profile_path(&p.context)
        .context("no cache directory: set HOME or XDG_CACHE_HOME to store the profile")?;
    let dir = path.parent().context("profile path has no parent")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    let text = serde_json::to_string_pretty(p)?;
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path).with_context(|| format!("storing {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            device: None,
            cold_readahead_mib_s: None,
            notes: vec![],
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
        let m = MemoryCeiling {
            threads: 1,
            copy_mib_s: 8000.0,
            xor_mib_s: 16000.0,
            read_levels: vec![
                MemoryLevel {
                    buffer_bytes: 1 << 19,
                    copy_xor_mib_s: 10000.0,
                },
                MemoryLevel {
                    buffer_bytes: 1 << 27,
                    copy_xor_mib_s: 2500.0,
                },
            ],
        };
        assert_eq!(m.copy_xor_mib_s(4096), 10000.0);
        assert_eq!(m.copy_xor_mib_s(1 << 30), 2500.0);
        // Halfway in log size: time per byte halfway between 1/10000 and 1/2500.
        let mid = m.copy_xor_mib_s(1 << 23);
        assert!(
            (mid - 1.0 / ((1.0 / 10000.0 + 1.0 / 2500.0) / 2.0)).abs() < 1.0,
            "{mid}"
        );
        let none = MemoryCeiling {
            read_levels: vec![],
            ..m
        };
        assert!((none.copy_xor_mib_s(4096) - 1.0 / (1.0 / 8000.0 + 1.0 / 16000.0)).abs() < 1e-6);
    }
}
