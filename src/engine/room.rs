//! How much more memory this process may take before something stops it: the least of three
//! bounds, because any one of them ends a run that ignores it.
//!
//! - `MemAvailable` (`/proc/meminfo`): the machine's memory that can be had without swapping;
//! - the memory cgroup's room: its limit minus what it holds (cgroup v2 `memory.max` minus
//!   `memory.current`; v1 `memory.limit_in_bytes` minus `memory.usage_in_bytes`), checked at the
//!   process's cgroup (`/proc/self/cgroup`) and every ancestor up to the mount, since a parent's
//!   limit binds too. Past it the kernel's OOM killer ends the process: in a 1 GiB container
//!   with 23 GiB of `MemAvailable`, 4 GiB of buffers was a kill, not an error. The inactive file
//!   cache it holds (`memory.stat`) is counted as room, as the kernel reclaims it first (the
//!   working set of `docker stats` and the kubelet);
//! - `RLIMIT_AS` (`ulimit -v`, `prlimit --as`) minus the address space already mapped
//!   (`VmSize` in `/proc/self/status`). Past it `mmap` and `malloc` fail.
//!
//! Everything is read below a root directory ([`room_in`]), so the parsing is tested on a fake
//! tree; [`memory_room`] reads the real one.

use std::path::Path;

/// Which bound is the least.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoomBound {
    /// The machine's `MemAvailable`.
    MemAvailable,
    /// The memory cgroup's limit.
    Cgroup,
    /// The address-space limit (`RLIMIT_AS`).
    AddressSpace,
}

impl RoomBound {
    /// How the bound is named to a user.
    pub fn describe(self) -> &'static str {
        match self {
            RoomBound::MemAvailable => "MemAvailable",
            RoomBound::Cgroup => "the memory cgroup's limit",
            RoomBound::AddressSpace => "RLIMIT_AS (ulimit -v)",
        }
    }
}

/// The memory this process may still take, and which bound says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    pub bytes: u64,
    pub bound: RoomBound,
}

/// The room of this process now; `None` when no bound can be read.
pub fn memory_room() -> Option<Room> {
    room_in(Path::new("/"), rlimit_as_bytes())
}

/// The soft `RLIMIT_AS` of this process, bytes; `None` when unlimited.
pub fn rlimit_as_bytes() -> Option<u64> {
    // rustix says `None` for RLIM_INFINITY.
    rustix::process::getrlimit(rustix::process::Resource::As).current
}

/// The room read from the files under `root` (`/` for the real system): `proc/meminfo`,
/// `proc/self/{cgroup,mountinfo,status}` and the cgroup files they lead to; `rlimit_as_bytes`
/// is the address-space limit (`None`: unlimited).
pub fn room_in(root: &Path, rlimit_as_bytes: Option<u64>) -> Option<Room> {
    let candidates = [
        (mem_available(root), RoomBound::MemAvailable),
        (cgroup_room(root), RoomBound::Cgroup),
        (
            rlimit_as_bytes.map(|lim| lim.saturating_sub(vm_size(root).unwrap_or(0))),
            RoomBound::AddressSpace,
        ),
    ];
    candidates
        .into_iter()
        .filter_map(|(bytes, bound)| {
            Some(Room {
                bytes: bytes?,
                bound,
            })
        })
        .min_by_key(|r| r.bytes)
}

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel.trim_start_matches('/'))).ok()
}

/// The value of `key` in a `Key:   123 kB` file, bytes.
fn kib_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024)
}

fn mem_available(root: &Path) -> Option<u64> {
    kib_field(&read(root, "proc/meminfo")?, "MemAvailable:")
}

fn vm_size(root: &Path) -> Option<u64> {
    kib_field(&read(root, "proc/self/status")?, "VmSize:")
}

/// Which cgroup hierarchy a limit lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hierarchy {
    V1,
    V2,
}

/// The cgroup's room: the least over the memory hierarchies this process is in (a hybrid
/// system has both) and over each cgroup from the process's own up to the mount's root.
fn cgroup_room(root: &Path) -> Option<u64> {
    let cgroups = read(root, "proc/self/cgroup")?;
    let mountinfo = read(root, "proc/self/mountinfo").unwrap_or_default();
    let mut least: Option<u64> = None;
    for line in cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let hierarchy = if id == "0" && controllers.is_empty() {
            Hierarchy::V2
        } else if controllers.split(',').any(|c| c == "memory") {
            Hierarchy::V1
        } else {
            continue;
        };
        let Some((mount_root, mount_point)) = mount_of(&mountinfo, hierarchy) else {
            continue;
        };
        let rel = path.strip_prefix(mount_root.as_str()).unwrap_or(path);
        let top = root.join(mount_point.trim_start_matches('/'));
        let dir = top.join(rel.trim_start_matches('/'));
        for d in dir.ancestors().take_while(|d| d.starts_with(&top)) {
            if let Some(room) = room_of_cgroup(d, hierarchy) {
                least = Some(least.map_or(room, |l| l.min(room)));
            }
        }
    }
    least
}

/// The mount of `hierarchy` in `mountinfo`: (the root of the hierarchy it shows, its mount
/// point); the usual places when `mountinfo` does not say.
fn mount_of(mountinfo: &str, hierarchy: Hierarchy) -> Option<(String, String)> {
    for line in mountinfo.lines() {
        let Some((before, after)) = line.split_once(" - ") else {
            continue;
        };
        let fields: Vec<&str> = before.split(' ').collect();
        let rest: Vec<&str> = after.split(' ').collect();
        let (Some(mount_root), Some(point)) = (fields.get(3), fields.get(4)) else {
            continue;
        };
        let matches = match (hierarchy, rest.first()) {
            (Hierarchy::V2, Some(&"cgroup2")) => true,
            (Hierarchy::V1, Some(&"cgroup")) => rest
                .get(2)
                .is_some_and(|o| o.split(',').any(|o| o == "memory")),
            _ => false,
        };
        if matches {
            return Some((mount_root.to_string(), point.to_string()));
        }
    }
    if !mountinfo.is_empty() {
        return None;
    }
    let point = match hierarchy {
        Hierarchy::V2 => "/sys/fs/cgroup",
        Hierarchy::V1 => "/sys/fs/cgroup/memory",
    };
    Some(("/".into(), point.into()))
}

/// Limit minus (usage minus inactive file cache) of the cgroup directory `dir`; `None` when it
/// has no limit (or no such files: the root cgroup).
fn room_of_cgroup(dir: &Path, hierarchy: Hierarchy) -> Option<u64> {
    let num = |name: &str| -> Option<String> {
        Some(
            std::fs::read_to_string(dir.join(name))
                .ok()?
                .trim()
                .to_string(),
        )
    };
    let (limit, usage, inactive_key) = match hierarchy {
        Hierarchy::V2 => (num("memory.max")?, num("memory.current")?, "inactive_file"),
        Hierarchy::V1 => (
            num("memory.limit_in_bytes")?,
            num("memory.usage_in_bytes")?,
            "total_inactive_file",
        ),
    };
    let limit: u64 = limit.parse().ok()?; // v2's "max": no limit
    if limit >= 1 << 60 {
        return None; // v1's "unlimited" is a page-rounded i64::MAX
    }
    let usage: u64 = usage.parse().ok()?;
    let inactive = num("memory.stat")
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix(inactive_key)?
                    .strip_prefix(' ')?
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0u64);
    Some(limit.saturating_sub(usage.saturating_sub(inactive)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    const MEMINFO: &str = "MemTotal: 16000000 kB\nMemAvailable:    8388608 kB\n";

    #[test]
    fn a_cgroup_v2_limit_below_mem_available_is_the_room() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        put(r, "proc/meminfo", MEMINFO);
        put(r, "proc/self/cgroup", "0::/box/job\n");
        put(
            r,
            "proc/self/mountinfo",
            "25 20 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
        );
        // The job's own cgroup has no limit; its parent has 1 GiB, 300 MiB used of which
        // 100 MiB is inactive file cache.
        put(r, "sys/fs/cgroup/box/job/memory.max", "max\n");
        put(r, "sys/fs/cgroup/box/job/memory.current", "1000\n");
        put(r, "sys/fs/cgroup/box/memory.max", "1073741824\n");
        put(r, "sys/fs/cgroup/box/memory.current", "314572800\n");
        put(
            r,
            "sys/fs/cgroup/box/memory.stat",
            "anon 1\nactive_file 5\ninactive_file 104857600\n",
        );
        let room = room_in(r, None).unwrap();
        assert_eq!(room.bound, RoomBound::Cgroup);
        assert_eq!(room.bytes, (1 << 30) - (200 << 20));
    }

    #[test]
    fn a_cgroup_v1_memory_limit_is_found_through_mountinfo() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        put(r, "proc/meminfo", MEMINFO);
        put(
            r,
            "proc/self/cgroup",
            "5:cpu,cpuacct:/\n4:memory:/docker/abc\n0::/\n",
        );
        put(
            r,
            "proc/self/mountinfo",
            "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n\
             35 31 0:32 /docker /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
             41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n",
        );
        // The mount shows the hierarchy from /docker, so /docker/abc is at abc.
        put(
            r,
            "sys/fs/cgroup/memory/abc/memory.limit_in_bytes",
            "536870912\n",
        );
        put(r, "sys/fs/cgroup/memory/abc/memory.usage_in_bytes", "0\n");
        put(
            r,
            "sys/fs/cgroup/memory/memory.limit_in_bytes",
            "9223372036854771712\n",
        );
        put(r, "sys/fs/cgroup/memory/memory.usage_in_bytes", "5\n");
        let room = room_in(r, None).unwrap();
        assert_eq!(
            room,
            Room {
                bytes: 512 << 20,
                bound: RoomBound::Cgroup
            }
        );
    }

    #[test]
    fn without_limits_the_room_is_mem_available_and_rlimit_as_counts_what_is_mapped() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        put(r, "proc/meminfo", MEMINFO);
        put(r, "proc/self/cgroup", "0::/\n");
        put(
            r,
            "proc/self/mountinfo",
            "25 20 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        );
        put(r, "proc/self/status", "Name: x\nVmSize:   524288 kB\n");
        let room = room_in(r, None).unwrap();
        assert_eq!(room.bound, RoomBound::MemAvailable);
        assert_eq!(room.bytes, 8 << 30);
        let room = room_in(r, Some(2 << 30)).unwrap();
        assert_eq!(room.bound, RoomBound::AddressSpace);
        assert_eq!(room.bytes, (2 << 30) - (512 << 20));
    }

    #[test]
    fn nothing_readable_means_no_room_is_known() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(room_in(t.path(), None), None);
    }
}
