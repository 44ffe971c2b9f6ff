//! The device the file is on, and what lies under it: the chain from the block device its
//! filesystem is mounted from (the top: a partition, a loop, dm or md device, a disk) down to
//! the disk that does the I/O in the end. A partition leads to its disk, a dm or md device to
//! its first member (`slaves/`), a loop device to the device under its backing file
//! (`/sys/block/loopN/loop/backing_file`).
//!
//! Each level keeps the queue settings that shape the I/O sent to it. They are the top's that
//! decide what a read of the file asks for: read-ahead is the top's (a 4 MiB file on a loop
//! device with 128 KiB read-ahead is read 128 KiB at a time, whatever the disk under the
//! backing file reads ahead), as are its request size and its scheduler; a partition has no
//! queue of its own and shares its disk's. Each level's counters (`stat`) are read before and
//! after a run, so a loop device whose backing file was served from the page cache one level
//! down shows as a lower device that moved nothing.
//!
//! Everything is read from sysfs (`sys`, a directory tree in tests).

use super::diskstat::DiskStat;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Levels followed at most (a loop over a file on a loop over …).
pub const MAX_LEVELS: usize = 8;

/// What a level is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Disk,
    Partition,
    /// A loop device: its I/O goes to a file on another filesystem.
    Loop,
    /// device-mapper or md: its I/O goes to its members.
    Mapper,
    /// zram, ram, brd: memory, not a disk.
    Ram,
}

/// A queue's settings (those of the disk for a partition).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    pub read_ahead_kb: Option<u64>,
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    pub max_segments: Option<u64>,
    pub logical_block_size_bytes: Option<u64>,
    pub rotational: Option<bool>,
}

/// One block device of the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level {
    /// Kernel name: `vda`, `vda1`, `loop3`, `dm-0`.
    pub name: String,
    pub kind: Kind,
    /// A loop device's backing file.
    pub backing_file: Option<String>,
    /// A loop device that reads its file with O_DIRECT (`loop/dio`): its image is then never
    /// served from the page cache below.
    pub direct_io: Option<bool>,
    pub queue: Queue,
    /// Its counters file.
    #[serde(skip)]
    pub stat_path: PathBuf,
}

impl Level {
    /// Its counters now.
    pub fn stat(&self) -> Option<DiskStat> {
        DiskStat::parse(&std::fs::read_to_string(&self.stat_path).ok()?)
    }
}

/// The chain, top first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chain {
    pub levels: Vec<Level>,
}

impl Chain {
    /// The chain under `file` (see the module doc); `None` for a filesystem with no block device
    /// (tmpfs, overlay, NFS, FUSE).
    pub fn of(file: &Path) -> Option<Chain> {
        Self::of_in(Path::new("/sys"), file)
    }

    /// [`Chain::of`] with the sysfs root `sys`.
    pub fn of_in(sys: &Path, file: &Path) -> Option<Chain> {
        let top = top_device(file)?;
        let mut levels = Vec::new();
        walk(sys, top, &mut levels);
        (!levels.is_empty()).then_some(Chain { levels })
    }

    /// The top: the device the filesystem is mounted from.
    pub fn top(&self) -> Option<&Level> {
        self.levels.first()
    }

    /// The last level: the device that does the I/O in the end.
    pub fn bottom(&self) -> Option<&Level> {
        self.levels.last()
    }

    /// `loop0 → /srv/img (buffered) → vda`: the way down, names escaped.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for l in &self.levels {
            parts.push(crate::text::shown(&l.name).into_owned());
            if let Some(b) = &l.backing_file {
                let how = match l.direct_io {
                    Some(true) => " (O_DIRECT)",
                    Some(false) => " (buffered)",
                    None => "",
                };
                parts.push(format!("{}{how}", crate::text::shown(b)));
            }
        }
        parts.join(" → ")
    }

    /// Each level's counters now (`None` where one cannot be read), in the chain's order.
    pub fn stats(&self) -> Vec<Option<DiskStat>> {
        self.levels.iter().map(Level::stat).collect()
    }
}

/// The `MAJ:MIN` of the block device `file`'s filesystem is mounted from: its `st_dev`, or for a
/// device read as a file its `st_rdev`; a filesystem with anonymous device numbers (btrfs)
/// through its mount's source.
fn top_device(file: &Path) -> Option<(u32, u32)> {
    let m = std::fs::metadata(file).ok()?;
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    let split = |d: u64| (rustix::fs::major(d), rustix::fs::minor(d));
    let (major, minor) = split(dev);
    if major != 0 {
        return Some((major, minor));
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let abs = std::fs::canonicalize(file).ok()?;
    let fs = crate::mounts::find_mount(&mounts, &abs, None)?;
    if !fs.source.starts_with("/dev/") {
        return None;
    }
    let rdev = std::fs::metadata(&fs.source).ok()?.rdev();
    Some(split(rdev)).filter(|(ma, _)| *ma != 0)
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

fn queue_of(dir: &Path) -> Queue {
    let q = dir.join("queue");
    Queue {
        read_ahead_kb: read_u64(&q.join("read_ahead_kb")),
        scheduler: read_trimmed(&q.join("scheduler")).map(|s| {
            s.split_whitespace()
                .find(|w| w.starts_with('['))
                .map(|w| w.trim_matches(['[', ']']).to_string())
                .unwrap_or(s)
        }),
        nr_requests: read_u64(&q.join("nr_requests")),
        max_sectors_kb: read_u64(&q.join("max_sectors_kb")),
        max_segments: read_u64(&q.join("max_segments")),
        logical_block_size_bytes: read_u64(&q.join("logical_block_size")),
        rotational: read_u64(&q.join("rotational")).map(|v| v != 0),
    }
}

/// Follows the device `dev` down, appending each level to `out`.
fn walk(sys: &Path, dev: (u32, u32), out: &mut Vec<Level>) {
    let link = sys.join(format!("dev/block/{}:{}", dev.0, dev.1));
    let Ok(mut dir) = std::fs::canonicalize(&link) else {
        return;
    };
    while out.len() < MAX_LEVELS {
        let Some(name) = dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            return;
        };
        let partition = dir.join("partition").exists();
        // A partition's queue is its disk's.
        let queue = if partition {
            dir.parent().map(queue_of).unwrap_or_default()
        } else {
            queue_of(&dir)
        };
        let backing_file = read_trimmed(&dir.join("loop/backing_file"));
        let slaves: Vec<PathBuf> = std::fs::read_dir(dir.join("slaves"))
            .map(|rd| {
                let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                v.sort();
                v
            })
            .unwrap_or_default();
        let kind = if partition {
            Kind::Partition
        } else if backing_file.is_some() || name.starts_with("loop") {
            Kind::Loop
        } else if !slaves.is_empty() {
            Kind::Mapper
        } else if ["zram", "ram", "brd"].iter().any(|p| name.starts_with(p)) {
            Kind::Ram
        } else {
            Kind::Disk
        };
        out.push(Level {
            name,
            kind,
            direct_io: read_u64(&dir.join("loop/dio")).map(|v| v != 0),
            backing_file: backing_file.clone(),
            queue,
            stat_path: dir.join("stat"),
        });
        let next = match kind {
            Kind::Partition => dir.parent().map(Path::to_path_buf),
            Kind::Mapper => slaves.first().and_then(|s| std::fs::canonicalize(s).ok()),
            Kind::Loop => {
                let below = backing_file.and_then(|b| top_device(Path::new(&b)));
                if let Some(d) = below {
                    walk(sys, d, out);
                }
                return;
            }
            Kind::Disk | Kind::Ram => None,
        };
        match next {
            Some(n) => dir = n,
            None => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake sysfs with a disk `sdz` (read-ahead 4096 KiB) and its partition `sdz1`.
    fn fake_disk(sys: &Path) -> PathBuf {
        let disk = sys.join("devices/virtual/block/sdz");
        let part = disk.join("sdz1");
        std::fs::create_dir_all(&part).unwrap();
        std::fs::write(part.join("partition"), "1\n").unwrap();
        std::fs::write(part.join("stat"), "1 0 8 0 0 0 0 0 0 0 0\n").unwrap();
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::write(disk.join("queue/read_ahead_kb"), "4096\n").unwrap();
        std::fs::write(disk.join("queue/scheduler"), "none [mq-deadline]\n").unwrap();
        std::fs::write(disk.join("stat"), "9 0 72 0 0 0 0 0 0 0 0\n").unwrap();
        std::fs::create_dir_all(sys.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&part, sys.join("dev/block/8:1")).unwrap();
        part
    }

    #[test]
    fn a_partition_keeps_its_own_counters_and_takes_its_disks_queue() {
        let t = tempfile::tempdir().unwrap();
        fake_disk(t.path());
        let mut levels = Vec::new();
        walk(t.path(), (8, 1), &mut levels);
        let names: Vec<&str> = levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["sdz1", "sdz"]);
        assert_eq!(levels[0].kind, Kind::Partition);
        assert_eq!(levels[0].queue.read_ahead_kb, Some(4096));
        assert_eq!(levels[0].queue.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(levels[0].stat().unwrap().read_sectors, 8);
        assert_eq!(levels[1].stat().unwrap().read_sectors, 72);
        assert_eq!(levels[1].kind, Kind::Disk);
    }

    #[test]
    fn a_loop_device_leads_to_the_device_under_its_backing_file_and_keeps_its_own_read_ahead() {
        let t = tempfile::tempdir().unwrap();
        let sys = t.path();
        // The backing file is a real file on whatever holds the temp dir; its device is
        // looked up in this fake sysfs by its real st_dev.
        let img = sys.join("img");
        std::fs::write(&img, b"x").unwrap();
        let dev = std::fs::metadata(&img).unwrap().dev();
        let (ma, mi) = (rustix::fs::major(dev), rustix::fs::minor(dev));
        let lo = sys.join("devices/virtual/block/loop9");
        std::fs::create_dir_all(lo.join("loop")).unwrap();
        std::fs::create_dir_all(lo.join("queue")).unwrap();
        std::fs::write(lo.join("queue/read_ahead_kb"), "128\n").unwrap();
        std::fs::write(lo.join("loop/backing_file"), format!("{}\n", img.display())).unwrap();
        std::fs::write(lo.join("loop/dio"), "0\n").unwrap();
        std::fs::create_dir_all(sys.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&lo, sys.join("dev/block/7:9")).unwrap();
        let disk = sys.join("devices/virtual/block/vdz");
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::write(disk.join("queue/read_ahead_kb"), "8192\n").unwrap();
        if ma != 0 {
            std::os::unix::fs::symlink(&disk, sys.join(format!("dev/block/{ma}:{mi}"))).unwrap();
        }
        let mut levels = Vec::new();
        walk(sys, (7, 9), &mut levels);
        let chain = Chain { levels };
        let top = chain.top().unwrap();
        assert_eq!((top.kind, top.queue.read_ahead_kb), (Kind::Loop, Some(128)));
        assert_eq!(top.direct_io, Some(false));
        assert!(
            chain.describe().starts_with("loop9 → "),
            "{}",
            chain.describe()
        );
        assert!(
            chain.describe().contains("(buffered)"),
            "{}",
            chain.describe()
        );
        if ma != 0 {
            assert_eq!(chain.bottom().unwrap().name, "vdz");
            assert_eq!(chain.bottom().unwrap().queue.read_ahead_kb, Some(8192));
        } else {
            eprintln!("the temp dir has an anonymous device: the loop is the whole chain");
        }
    }

    #[test]
    fn a_file_on_this_machine_has_a_chain_when_its_filesystem_has_a_block_device() {
        let here = std::env::temp_dir();
        match Chain::of(&here) {
            Some(c) => assert!(c.top().unwrap().stat().is_some(), "{c:?}"),
            None => eprintln!("skipped: the temp dir has no block device in sysfs"),
        }
    }
}
