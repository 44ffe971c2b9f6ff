//! Where a run ran: the machine (host, kernel, CPU, memory), the file's filesystem and the block
//! device under it, with the queue settings that shape its I/O.
//!
//! The device is found from the file's `st_dev` through `/sys/dev/block/MAJ:MIN`, then followed
//! down: a partition to its disk, a device-mapper or md device to its first member (`slaves/`), a
//! loop device to the device of its backing file (`loop/backing_file`). The queue attributes are
//! those of the last device reached (the one that does the I/O); `chain` lists every step so a
//! reader sees `dm-0 → nvme0n1` rather than a guess. Everything is read from procfs and sysfs
//! only, so collecting a context costs well under a millisecond and never touches the file's data.
//!
//! A result measured on tmpfs, ramfs, overlay or a network filesystem means something else than
//! one measured on a local disk (a "cold" run on tmpfs measures RAM), so [`Context::warnings`]
//! says so in words a user can act on.

pub use crate::mounts::{find_mount, parse_mountinfo_line, Filesystem};
use crate::text::shown;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The machine, the filesystem and the device a file lives on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Context {
    pub host: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cpu_count: usize,
    /// MemTotal, bytes.
    pub mem_total_bytes: u64,
    /// The machine is a VM that gives free memory back to its host (virtio-balloon free page
    /// reporting). Memory free for more than a few seconds is no longer backed, so page-cache
    /// pages made from it are faulted in by the host as they are filled: on the lab VM a cold
    /// buffered read ran at 0.7–0.8 GiB/s there and at 2.2–2.5 GiB/s on memory freed a moment
    /// earlier (by the last run's eviction). O_DIRECT into reused buffers faults nothing, but
    /// slows down while the host takes a large free back (5–15 s after a 4 GiB eviction there:
    /// 340–1000 MiB/s against 2100–2600).
    #[serde(default)]
    pub free_page_reporting: bool,
    /// The file the context describes (absolute when it could be resolved).
    pub file: String,
    pub filesystem: Option<Filesystem>,
    pub device: Option<Device>,
    /// What makes these numbers unlike a local disk's, in words (tmpfs, overlay, network, zram).
    pub warnings: Vec<String>,
}

/// The block device that does the I/O, with its queue settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// Kernel name of the device the queue settings come from (`vda`, `nvme0n1`, `loop3`).
    pub name: String,
    /// The way down from the file's device: `["loop3", "vda"]`, `["dm-0", "nvme0n1p2", "nvme0n1"]`.
    pub chain: Vec<String>,
    /// Backing files of loop devices met on the way.
    pub backing_files: Vec<String>,
    /// Vendor model string, when the device has one.
    pub model: Option<String>,
    /// The kernel treats it as a spinning disk.
    pub rotational: Option<bool>,
    /// Active I/O scheduler (the bracketed one).
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    pub read_ahead_kb: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    pub max_segments: Option<u64>,
    pub logical_block_size_bytes: Option<u64>,
}

/// Filesystems whose contents live in RAM.
pub use crate::facts::RAM_FS;
/// Filesystems reached over a network (prefix match also catches `fuse.*`, `nfs4`).
pub const NET_FS: &[&str] = &[
    "nfs",
    "cifs",
    "smb",
    "ceph",
    "fuse",
    "9p",
    "glusterfs",
    "lustre",
    "afs",
    "gfs2",
    "ocfs2",
    "virtiofs",
    "sshfs",
    "beegfs",
    "gpfs",
];

impl Context {
    /// Collects the context of `file` (which must exist; nothing in it is read).
    pub fn collect(file: &Path) -> Context {
        let mut ctx = Context::machine();
        let (abs, filesystem, device) = storage_of(file);
        ctx.file = abs.display().to_string();
        ctx.filesystem = filesystem;
        ctx.device = device;
        ctx.warnings = warnings_for(ctx.filesystem.as_ref(), ctx.device.as_ref());
        ctx
    }

    /// The device a file's I/O goes to, alone (no machine part): what `fast` asks before it
    /// sizes its cold reads.
    pub fn device_of(file: &Path) -> Option<Device> {
        storage_of(file).2
    }

    /// The machine part alone (host, kernel, CPU, memory).
    pub fn machine() -> Context {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Context {
            host: crate::measure::result::host_name(),
            kernel: read_trimmed(Path::new("/proc/sys/kernel/osrelease")).unwrap_or_default(),
            cpu_model: cpu_model(&cpuinfo),
            cpu_count: std::thread::available_parallelism().map_or(1, |n| n.get()),
            mem_total_bytes: mem_total_bytes(&meminfo),
            free_page_reporting: free_page_reporting(Path::new("/sys")),
            ..Default::default()
        }
    }

    /// The name profiles are keyed by: the device doing the I/O, or the filesystem type when
    /// there is none (tmpfs, nfs).
    pub fn device_key(&self) -> String {
        match (&self.device, &self.filesystem) {
            (Some(d), _) => d.name.clone(),
            (None, Some(f)) => f.fs_type.clone(),
            (None, None) => "unknown".to_string(),
        }
    }
}

impl Context {
    /// The file's storage in a few words, for a one-line panel: `ext4 (rw,relatime) on vda
    /// (QEMU HARDDISK): rotational, mq-deadline, read_ahead 8192 KiB`, or `tmpfs (rw)` where
    /// no device is under it; `filesystem unknown` when nothing was found. Strings from sysfs,
    /// mountinfo or a stored profile are escaped ([`shown`]): a device model is whatever the
    /// device (or a profile's author) says it is.
    pub fn storage_summary(&self) -> String {
        let mut s = match &self.filesystem {
            Some(fs) => format!("{} ({})", shown(&fs.fs_type), shown(&fs.mount_options)),
            None => "filesystem unknown".to_string(),
        };
        if let Some(d) = &self.device {
            s.push_str(&format!(" on {}", shown(&d.chain.join("→"))));
            if let Some(m) = &d.model {
                s.push_str(&format!(" ({})", shown(m)));
            }
            s.push_str(match d.rotational {
                Some(true) => ": rotational",
                Some(false) => ": non-rotational",
                None => ":",
            });
            if let Some(sch) = &d.scheduler {
                s.push_str(&format!(", {}", shown(sch)));
            }
            if let Some(n) = d.read_ahead_kb {
                s.push_str(&format!(", read_ahead {n} KiB"));
            }
        }
        s
    }
}

impl fmt::Display for Context {
    /// One line: `host, Linux 6.8, 2× Intel Xeon, 23.5 GiB | ext4 (rw,relatime) on vda: ssd, ...`,
    /// every string escaped ([`shown`]) so a hostile model name or a profile's edited host cannot
    /// reach the terminal as control sequences.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, Linux {}, {}× {}, {} RAM",
            shown(&self.host),
            shown(&self.kernel),
            self.cpu_count,
            if self.cpu_model.is_empty() {
                "CPU".into()
            } else {
                shown(&self.cpu_model)
            },
            crate::size::format_bytes_approx(self.mem_total_bytes)
        )?;
        if self.free_page_reporting {
            write!(f, " (free page reporting)")?;
        }
        if let Some(fs) = &self.filesystem {
            write!(
                f,
                " | {} ({})",
                shown(&fs.fs_type),
                shown(&fs.mount_options)
            )?;
        }
        if let Some(d) = &self.device {
            write!(f, " on {}", shown(&d.chain.join("→")))?;
            if let Some(m) = &d.model {
                write!(f, " ({})", shown(m))?;
            }
            let kind = match d.rotational {
                Some(true) => "rotational",
                Some(false) => "non-rotational",
                None => "rotational?",
            };
            write!(f, ": {kind}")?;
            if let Some(s) = &d.scheduler {
                write!(f, ", scheduler {}", shown(s))?;
            }
            if let Some(n) = d.nr_requests {
                write!(f, ", nr_requests {n}")?;
            }
            if let Some(n) = d.read_ahead_kb {
                write!(f, ", read_ahead {n} KiB")?;
            }
            if let Some(n) = d.max_sectors_kb {
                write!(f, ", max_sectors {n} KiB")?;
            }
            if let Some(n) = d.max_segments {
                write!(f, ", max_segments {n}")?;
            }
            if let Some(n) = d.logical_block_size_bytes {
                write!(f, ", logical block {n} B")?;
            }
        }
        for w in &self.warnings {
            write!(f, " | warning: {}", shown(w))?;
        }
        Ok(())
    }
}

/// The file's absolute path, its filesystem and the block device under it.
fn storage_of(file: &Path) -> (PathBuf, Option<Filesystem>, Option<Device>) {
    let abs = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let dev = std::fs::metadata(&abs).ok().map(|m| split_dev(m.dev()));
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let filesystem = find_mount(&mounts, &abs, dev);
    let mut device = dev.and_then(|d| resolve_device(Path::new("/sys"), d, 0));
    if device.is_none() {
        // btrfs and some others give files an anonymous st_dev; the mount source names the
        // real device.
        device = filesystem
            .as_ref()
            .filter(|f| f.source.starts_with("/dev/"))
            .and_then(|f| std::fs::metadata(&f.source).ok())
            .and_then(|m| resolve_device(Path::new("/sys"), split_dev(m.rdev()), 0));
    }
    (abs, filesystem, device)
}

/// Whether `dir` is on a filesystem that keeps its files in RAM (tmpfs, ramfs, ...).
pub fn is_in_ram(dir: &Path) -> bool {
    Context::collect(dir)
        .filesystem
        .is_some_and(|f| RAM_FS.contains(&f.fs_type.as_str()))
}

/// Where the explorer's default scratch file goes, and what to say about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScratchDir {
    pub dir: PathBuf,
    /// Said when the choice is not the plain temp directory, or when the file will be in RAM.
    pub note: Option<String>,
}

/// Whether this process may create files in `dir`.
fn writable(dir: &Path) -> bool {
    use rustix::fs::{access, Access};
    // access(2) with the real ids, as before; a path holding a NUL byte is an error, i.e. "no".
    access(dir, Access::WRITE_OK | Access::EXEC_OK).is_ok()
}

/// The directory for the explorer's default scratch file of `needed_bytes`. A scratch file in a
/// tmpfs `/tmp` would make every "cold" run measure RAM while the screen says "disk", so when
/// `temp` is in RAM the directory `disk` (the caller passes `/var/tmp`, the conventional home of
/// temporary files kept on disk) is preferred if it is on a real filesystem, writable, and has
/// room (twice the file); otherwise the temp directory stays, with a note that says the numbers
/// are RAM's.
pub fn scratch_dir(temp: &Path, disk: Option<&Path>, needed_bytes: u64) -> ScratchDir {
    if !is_in_ram(temp) {
        return ScratchDir {
            dir: temp.to_path_buf(),
            note: None,
        };
    }
    if let Some(disk) = disk.filter(|c| {
        !is_in_ram(c)
            && writable(c)
            && crate::fsguard::free_bytes(c).is_some_and(|f| f >= needed_bytes.saturating_mul(2))
    }) {
        return ScratchDir {
            dir: disk.to_path_buf(),
            note: Some(format!(
                "{} is in RAM (tmpfs), so the scratch file goes to {} to measure a disk; give \
                 a FILE (or set TMPDIR) to choose",
                crate::text::shown_path(temp),
                crate::text::shown_path(disk)
            )),
        };
    }
    ScratchDir {
        dir: temp.to_path_buf(),
        note: Some(format!(
            "the scratch file is in {} on tmpfs: it lives in RAM, so its numbers (cold ones too) \
             measure memory, not a disk; give a FILE on a disk",
            crate::text::shown_path(temp)
        )),
    }
}

fn split_dev(dev: u64) -> (u32, u32) {
    (rustix::fs::major(dev), rustix::fs::minor(dev))
}

fn read_trimmed(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn read_u64(p: &Path) -> Option<u64> {
    read_trimmed(p)?.parse().ok()
}

/// Whether a virtio-balloon device bound to its driver under `sys` offers free page reporting
/// (virtio device id 5, feature bit 5, `VIRTIO_BALLOON_F_REPORTING`; `features` is one `0`/`1`
/// character per bit, bit 0 first).
pub fn free_page_reporting(sys: &Path) -> bool {
    let Ok(devices) = std::fs::read_dir(sys.join("bus/virtio/devices")) else {
        return false;
    };
    devices.flatten().any(|d| {
        let dir = d.path();
        read_trimmed(&dir.join("device")).as_deref() == Some("0x0005")
            && dir.join("driver").exists()
            && read_trimmed(&dir.join("features"))
                .is_some_and(|f| f.as_bytes().get(5) == Some(&b'1'))
    })
}

/// The `model name` of the first CPU (or `Hardware`/`cpu model` on other architectures).
pub fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            let k = k.trim();
            (k == "model name" || k == "Hardware" || k == "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// MemTotal from /proc/meminfo, bytes.
pub fn mem_total_bytes(meminfo: &str) -> u64 {
    meminfo
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("MemTotal:")?;
            let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            Some(kib * 1024)
        })
        .unwrap_or(0)
}

/// Follows `MAJ:MIN` down to the device doing the I/O (see the module doc). `sys` is the sysfs
/// root (a directory tree in tests). `depth` bounds the walk.
pub fn resolve_device(sys: &Path, dev: (u32, u32), depth: usize) -> Option<Device> {
    if depth > 8 {
        return None;
    }
    let link = sys.join(format!("dev/block/{}:{}", dev.0, dev.1));
    let mut dir = std::fs::canonicalize(&link).ok()?;
    let mut chain = Vec::new();
    let mut backing_files = Vec::new();
    for _ in 0..8 {
        let name = dir.file_name()?.to_string_lossy().into_owned();
        chain.push(name);
        if dir.join("partition").exists() {
            dir = dir.parent()?.to_path_buf();
            continue;
        }
        let slaves: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
            .map(|rd| {
                let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                v.sort();
                v
            })
            .unwrap_or_default();
        if let Some(first) = slaves.first() {
            dir = std::fs::canonicalize(first).ok()?;
            continue;
        }
        if let Some(backing) = read_trimmed(&dir.join("loop/backing_file")) {
            backing_files.push(backing.clone());
            let below = std::fs::metadata(&backing)
                .ok()
                .and_then(|m| resolve_device(sys, split_dev(m.dev()), depth + 1));
            if let Some(mut below) = below {
                chain.append(&mut below.chain);
                backing_files.append(&mut below.backing_files);
                below.chain = chain;
                below.backing_files = backing_files;
                return Some(below);
            }
        }
        break;
    }
    let q = dir.join("queue");
    let scheduler = read_trimmed(&q.join("scheduler")).map(|s| {
        s.split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(['[', ']']).to_string())
            .unwrap_or(s)
    });
    Some(Device {
        name: chain.last().cloned().unwrap_or_default(),
        chain,
        backing_files,
        model: read_trimmed(&dir.join("device/model")),
        rotational: read_u64(&q.join("rotational")).map(|v| v != 0),
        scheduler,
        nr_requests: read_u64(&q.join("nr_requests")),
        read_ahead_kb: read_u64(&q.join("read_ahead_kb")),
        max_sectors_kb: read_u64(&q.join("max_sectors_kb")),
        max_segments: read_u64(&q.join("max_segments")),
        logical_block_size_bytes: read_u64(&q.join("logical_block_size")),
    })
}

/// Warnings for a filesystem and device whose numbers do not mean "a local disk".
pub fn warnings_for(fs: Option<&Filesystem>, dev: Option<&Device>) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(fs) = fs {
        let t = fs.fs_type.as_str();
        if RAM_FS.contains(&t) {
            w.push(format!(
                "the file is on {t}, in RAM: there is no disk under it, so a cold run measures memory, not a device"
            ));
        } else if t == "overlay" || t == "aufs" {
            w.push(format!(
                "the file is on {t} (a container layer): reads go through the overlay to the filesystem below, which may be a RAM disk"
            ));
        } else if NET_FS.iter().any(|n| t.starts_with(n)) || t.starts_with("fuse") {
            w.push(format!(
                "the file is on {t}, a network or userspace filesystem: numbers include the network or the FUSE daemon and vary with them"
            ));
        }
    }
    if let Some(d) = dev {
        if d.name.starts_with("zram") || d.name.starts_with("ram") || d.name.starts_with("brd") {
            w.push(format!(
                "the device {} is a RAM block device: a cold run measures memory and compression, not a disk",
                d.name
            ));
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684092k
40 27 0:50 / /mnt/my\\040disk rw,noatime - xfs /dev/sdb1 rw,attr2
41 27 0:51 / /mnt/nfs rw - nfs4 server:/export rw,vers=4.2
";

    #[test]
    fn the_mount_of_a_file_is_the_longest_prefix_with_escapes_undone() {
        let fs = find_mount(MOUNTINFO, Path::new("/mnt/my disk/a.bin"), None).unwrap();
        assert_eq!(fs.fs_type, "xfs");
        assert_eq!(fs.mount_point, "/mnt/my disk");
        assert_eq!(fs.source, "/dev/sdb1");
        assert_eq!(fs.mount_options, "rw,noatime");
        let root = find_mount(MOUNTINFO, Path::new("/work/x"), Some((254, 0))).unwrap();
        assert_eq!(
            (root.fs_type.as_str(), root.dev.as_str()),
            ("ext4", "254:0")
        );
        let shm = find_mount(MOUNTINFO, Path::new("/dev/shm/f"), None).unwrap();
        assert_eq!(shm.fs_type, "tmpfs");
    }

    #[test]
    fn ram_and_network_filesystems_are_warned_about_and_disks_are_not() {
        let on = |fs_type: &str| {
            let fs = Filesystem {
                fs_type: fs_type.into(),
                ..Default::default()
            };
            warnings_for(Some(&fs), None)
        };
        assert!(on("tmpfs")[0].contains("cold run measures memory"));
        assert!(on("ramfs")[0].contains("RAM"));
        assert!(on("overlay")[0].contains("overlay"));
        assert!(on("nfs4")[0].contains("network"));
        assert!(on("fuse.sshfs")[0].contains("network"));
        assert!(on("cifs")[0].contains("network"));
        assert!(on("ext4").is_empty());
        assert!(on("xfs").is_empty());
    }

    #[test]
    fn cpu_and_memory_are_read_from_proc_text() {
        assert_eq!(
            cpu_model("processor\t: 0\nmodel name\t: AMD EPYC 7B13\n"),
            "AMD EPYC 7B13"
        );
        assert_eq!(
            mem_total_bytes("MemTotal:       24684092 kB\nMemFree: 1 kB\n"),
            24684092 * 1024
        );
    }

    #[test]
    fn a_partition_is_followed_to_its_disk_in_a_fake_sysfs() {
        let t = tempfile::tempdir().unwrap();
        let sys = t.path();
        let disk = sys.join("devices/virtual/block/sdz");
        let part = disk.join("sdz1");
        std::fs::create_dir_all(part.clone()).unwrap();
        std::fs::write(part.join("partition"), "1\n").unwrap();
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::create_dir_all(disk.join("device")).unwrap();
        std::fs::write(disk.join("device/model"), "FakeDisk 9000  \n").unwrap();
        std::fs::write(disk.join("queue/rotational"), "1\n").unwrap();
        std::fs::write(disk.join("queue/scheduler"), "none [bfq] kyber\n").unwrap();
        std::fs::write(disk.join("queue/max_sectors_kb"), "512\n").unwrap();
        std::fs::create_dir_all(sys.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&part, sys.join("dev/block/8:1")).unwrap();
        let d = resolve_device(sys, (8, 1), 0).unwrap();
        assert_eq!(d.chain, vec!["sdz1", "sdz"]);
        assert_eq!(d.name, "sdz");
        assert_eq!(d.model.as_deref(), Some("FakeDisk 9000"));
        assert_eq!(d.rotational, Some(true));
        assert_eq!(d.scheduler.as_deref(), Some("bfq"));
        assert_eq!(d.max_sectors_kb, Some(512));
        assert_eq!(d.nr_requests, None);
    }

    #[test]
    fn a_bound_balloon_offering_free_page_reporting_is_found_in_a_fake_sysfs() {
        let t = tempfile::tempdir().unwrap();
        let sys = t.path();
        assert!(!free_page_reporting(sys), "no virtio bus at all");
        let devices = sys.join("bus/virtio/devices");
        let device = |name: &str, id: &str, features: &str, bound: bool| {
            let d = devices.join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("device"), format!("{id}\n")).unwrap();
            std::fs::write(d.join("features"), format!("{features}\n")).unwrap();
            if bound {
                std::fs::create_dir_all(d.join("driver")).unwrap();
            }
        };
        // A block device with bit 5 set is not a balloon; a balloon without bit 5 does not
        // report (the lab VM's starts 0110 0101: bits 1, 2, 5 and 7).
        device("virtio1", "0x0002", "0010011001", true);
        device("virtio0", "0x0005", "0110000000", true);
        assert!(!free_page_reporting(sys));
        device("virtio0", "0x0005", "0110010100", true);
        assert!(free_page_reporting(sys));
        // An unbound balloon (no driver) reports nothing.
        std::fs::remove_dir(devices.join("virtio0/driver")).unwrap();
        assert!(!free_page_reporting(sys));
    }

    #[test]
    fn the_machine_line_says_when_free_memory_goes_back_to_the_host() {
        let mut c = Context {
            host: "vm".into(),
            kernel: "6.18".into(),
            cpu_count: 2,
            mem_total_bytes: 24 << 30,
            ..Default::default()
        };
        assert!(!c.to_string().contains("free page reporting"), "{c}");
        c.free_page_reporting = true;
        assert!(c.to_string().contains("RAM (free page reporting)"), "{c}");
        // Older stored contexts (profiles) have no such key and read as false.
        let mut v = serde_json::to_value(&c).unwrap();
        v.as_object_mut().unwrap().remove("free_page_reporting");
        let back: Context = serde_json::from_value(v).unwrap();
        assert!(!back.free_page_reporting);
    }
}
