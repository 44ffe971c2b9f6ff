//! What the device under a file and the CPUs did, as counters read from sysfs and procfs: the
//! block device's `stat` (`Documentation/block/stat.rst`: ops, merges, sectors, ticks, in
//! flight, busy time) and `/proc/stat`'s first `cpu` line (user, system, iowait, ... in clock
//! ticks). A run's timeline takes one [`Sample`] per interval on the thread that collects the
//! snapshots — never a worker — so sampling costs the workers nothing; one sample is one
//! `open`+`read` of each file, ~10 µs.
//!
//! The device sampled is the block device the file's filesystem sits on (`st_dev`, or `st_rdev`
//! for a device read as a file; a btrfs file's anonymous `st_dev` is found through the mount's
//! source): a partition, a dm or a loop device counts exactly the I/O sent to it, while the disk
//! under it also counts its other partitions. Filesystems with no block device (tmpfs, overlay,
//! NFS, FUSE) have none, and the timeline says "no device". Counters are the whole device's:
//! another process's I/O to it counts too.

use serde::Serialize;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

pub use crate::facts::diskstat::{DiskStat, STAT_SECTOR_BYTES};

/// The CPUs' time (`/proc/stat`, the `cpu` line), in clock ticks since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuStat {
    /// user + nice.
    pub user: u64,
    /// system + irq + softirq.
    pub system: u64,
    pub iowait: u64,
    /// Every field (idle and steal included).
    pub total: u64,
}

impl CpuStat {
    /// Parses `/proc/stat` text: its first line, `cpu  user nice system idle iowait irq ...`.
    pub fn parse(text: &str) -> Option<CpuStat> {
        let line = text.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|w| w.parse().ok())
            .collect::<Option<_>>()?;
        if v.len() < 7 {
            return None;
        }
        // Guest time is already counted in user (and guest_nice in nice).
        let total = v.iter().take(8).sum();
        Some(CpuStat {
            user: v[0] + v[1],
            system: v[2] + v[5] + v[6],
            iowait: v[4],
            total,
        })
    }
}

/// The block device a file's I/O goes to: its kernel name and its `stat` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceSource {
    /// Kernel name: `vda`, `nvme0n1p2`, `dm-0`, `loop3`.
    pub name: String,
    pub stat_path: PathBuf,
}

impl DeviceSource {
    /// The device under `file` (see the module doc), or `None` for a filesystem without one.
    pub fn of(file: &Path) -> Option<DeviceSource> {
        let m = std::fs::metadata(file).ok()?;
        let dev = if m.file_type().is_block_device() {
            m.rdev()
        } else {
            m.dev()
        };
        DeviceSource::of_dev(Path::new("/sys"), dev).or_else(|| {
            // Anonymous st_dev (btrfs): the mount's source names the device.
            let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
            // A btrfs file's st_dev is not even its mount's (0:40 against 0:39): then the
            // mount is the one whose path holds the file.
            let source = mount_source_of(&mounts, dev).or_else(|| {
                let abs = std::fs::canonicalize(file).ok()?;
                let fs = crate::mounts::find_mount(&mounts, &abs, None)?;
                fs.source.starts_with("/dev/").then_some(fs.source)
            })?;
            let rdev = std::fs::metadata(source).ok()?.rdev();
            DeviceSource::of_dev(Path::new("/sys"), rdev)
        })
    }

    /// The device numbered `dev` under the sysfs root `sys`.
    fn of_dev(sys: &Path, dev: u64) -> Option<DeviceSource> {
        let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
        if major == 0 {
            return None;
        }
        let dir = std::fs::canonicalize(sys.join(format!("dev/block/{major}:{minor}"))).ok()?;
        let stat_path = dir.join("stat");
        stat_path.exists().then(|| DeviceSource {
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            stat_path,
        })
    }

    /// Reads the device's counters now.
    pub fn read(&self) -> Option<DiskStat> {
        DiskStat::parse(&std::fs::read_to_string(&self.stat_path).ok()?)
    }
}

/// The source of the mount whose device is `dev` when it is a `/dev/` path.
fn mount_source_of(mountinfo: &str, dev: u64) -> Option<String> {
    let want = format!("{}:{}", rustix::fs::major(dev), rustix::fs::minor(dev));
    mountinfo.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        let dash = f.iter().position(|w| *w == "-")?;
        (f.get(2) == Some(&want.as_str()))
            .then(|| f.get(dash + 2).filter(|s| s.starts_with("/dev/")))?
            .map(|s| s.to_string())
    })
}

/// One look at the counters, at `at_ns` on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub at_ns: u64,
    pub disk: Option<DiskStat>,
    pub cpu: Option<CpuStat>,
}

/// Reads the counters of one device (if any) and of the CPUs.
#[derive(Debug, Clone)]
pub struct Sampler {
    pub device: Option<DeviceSource>,
}

impl Sampler {
    /// A sampler for the device under `file`.
    pub fn for_file(file: &Path) -> Sampler {
        Sampler {
            device: DeviceSource::of(file),
        }
    }

    /// The counters now, stamped `at_ns`.
    pub fn sample(&self, at_ns: u64) -> Sample {
        Sample {
            at_ns,
            disk: self.device.as_ref().and_then(DeviceSource::read),
            cpu: std::fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|t| CpuStat::parse(&t)),
        }
    }
}

/// What the device and the CPUs did between two samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DeviceDelta {
    pub dev_read_ops: u64,
    pub dev_read_bytes: u64,
    pub dev_read_merges: u64,
    pub dev_write_ops: u64,
    pub dev_write_bytes: u64,
    pub dev_write_merges: u64,
    /// Bytes per request (reads and writes together).
    pub dev_avg_req_bytes: f64,
    /// Requests in flight at the end of the span.
    pub dev_in_flight: u64,
    /// Mean time a request took, queue included, ms.
    pub dev_await_ms: f64,
    /// Share of the span the device had a request in flight, percent.
    pub dev_util_pct: f64,
    /// Requests in flight averaged over the span (iostat's `aqu-sz`: the weighted
    /// `time_in_queue` over the span), unlike `dev_in_flight`, a count at one instant.
    pub dev_aqu_sz: f64,
}

/// CPU time shares between two samples, percent of all CPUs' time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CpuDelta {
    pub cpu_usr_pct: f64,
    pub cpu_sys_pct: f64,
    pub cpu_iowait_pct: f64,
}

/// The device's activity from `a` to `b` (`None` without a device).
pub fn disk_delta(a: &Sample, b: &Sample) -> Option<DeviceDelta> {
    let (x, y) = (a.disk?, b.disk?);
    let d = |p: fn(&DiskStat) -> u64| p(&y).saturating_sub(p(&x));
    let ios = d(|s| s.read_ios) + d(|s| s.write_ios);
    let bytes = (d(|s| s.read_sectors) + d(|s| s.write_sectors)) * STAT_SECTOR_BYTES;
    let span_ms = b.at_ns.saturating_sub(a.at_ns) as f64 / 1e6;
    let ratio = |n: f64, m: f64| if m > 0.0 { n / m } else { 0.0 };
    Some(DeviceDelta {
        dev_read_ops: d(|s| s.read_ios),
        dev_read_bytes: d(|s| s.read_sectors) * STAT_SECTOR_BYTES,
        dev_read_merges: d(|s| s.read_merges),
        dev_write_ops: d(|s| s.write_ios),
        dev_write_bytes: d(|s| s.write_sectors) * STAT_SECTOR_BYTES,
        dev_write_merges: d(|s| s.write_merges),
        dev_avg_req_bytes: ratio(bytes as f64, ios as f64),
        dev_in_flight: y.in_flight,
        dev_await_ms: ratio(
            (d(|s| s.read_ticks_ms) + d(|s| s.write_ticks_ms)) as f64,
            ios as f64,
        ),
        dev_util_pct: (100.0 * ratio(d(|s| s.io_ticks_ms) as f64, span_ms)).min(100.0),
        dev_aqu_sz: ratio(d(|s| s.time_in_queue_ms) as f64, span_ms),
    })
}

/// The CPUs' time shares from `a` to `b`.
pub fn cpu_delta(a: &Sample, b: &Sample) -> Option<CpuDelta> {
    let (x, y) = (a.cpu?, b.cpu?);
    let total = y.total.saturating_sub(x.total);
    if total == 0 {
        return None;
    }
    let pct = |n: u64, m: u64| 100.0 * n.saturating_sub(m) as f64 / total as f64;
    Some(CpuDelta {
        cpu_usr_pct: pct(y.user, x.user),
        cpu_sys_pct: pct(y.system, x.system),
        cpu_iowait_pct: pct(y.iowait, x.iowait),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_and_the_cpu_line_are_read_into_counters() {
        let d = DiskStat::parse(
            "   33512     6003  2569178    28814    13799    54141 33162296   483116        0    28752   526459\n",
        )
        .unwrap();
        assert_eq!(
            (
                d.read_ios,
                d.read_sectors,
                d.io_ticks_ms,
                d.time_in_queue_ms
            ),
            (33512, 2569178, 28752, 526459)
        );
        assert!(DiskStat::parse("1 2 3").is_none());
        let c = CpuStat::parse("cpu  10 1 20 100 5 2 3 0 0 0\ncpu0 1 2 3 4 5 6 7\n").unwrap();
        assert_eq!((c.user, c.system, c.iowait, c.total), (11, 25, 5, 141));
    }

    #[test]
    fn a_delta_gives_bytes_request_size_await_and_util() {
        let at = |ns, reads, sectors, ticks, busy| Sample {
            at_ns: ns,
            disk: Some(DiskStat {
                read_ios: reads,
                read_sectors: sectors,
                read_ticks_ms: ticks,
                io_ticks_ms: busy,
                time_in_queue_ms: busy * 3,
                ..Default::default()
            }),
            cpu: None,
        };
        let d = disk_delta(&at(0, 10, 100, 5, 0), &at(1_000_000_000, 20, 2148, 25, 500)).unwrap();
        assert_eq!((d.dev_read_ops, d.dev_read_bytes), (10, 2048 * 512));
        assert_eq!(d.dev_avg_req_bytes, 2048.0 * 512.0 / 10.0);
        assert_eq!((d.dev_await_ms, d.dev_util_pct), (2.0, 50.0));
        assert_eq!(
            d.dev_aqu_sz, 1.5,
            "1500 ms of requests in flight over 1000 ms"
        );
        assert!(cpu_delta(&at(0, 0, 0, 0, 0), &at(1, 0, 0, 0, 0)).is_none());
    }

    #[test]
    fn a_file_in_ram_has_no_device_and_a_file_on_disk_has_one_when_sysfs_shows_it() {
        // /dev/shm is tmpfs where it exists: an anonymous device.
        if Path::new("/dev/shm").is_dir() {
            assert_eq!(DeviceSource::of(Path::new("/dev/shm")), None);
        }
        let here = DeviceSource::of(Path::new("."));
        if let Some(d) = here {
            assert!(d.read().is_some(), "{d:?}");
        } else {
            eprintln!("skipped: the working directory has no block device in sysfs");
        }
    }
}
