//! The run's own facts: what the kernel already knows about a run, read before its clock starts
//! and right after it stops, so the judge (`explain::verdict`) reasons from what this run did
//! rather than from whole-device counters and a machine-wide profile.
//!
//! | fact | from | module |
//! |---|---|---|
//! | whose I/O: the bytes this process caused the storage layer to move | `/proc/self/io` | [`taskio`] |
//! | what the file is made of: holes, unwritten, encoded, shared, inline | `FS_IOC_FIEMAP`, `SEEK_HOLE` | [`extents`] |
//! | what the page cache held of it: cached, dirty, writeback, evicted | `cachestat(2)`, `mincore(2)` | [`pagecache`] |
//! | who else ran: CPU, I/O and memory stalls; CPU stolen | `/proc/pressure/*`, `/proc/stat` | [`pressure`] |
//! | the device chain and each level's counters and queue | sysfs | [`chain`] |
//!
//! [`Gatherer::start`] takes the first [`Moment`] (and the file's extent map and chain) just
//! before the workers start; [`Gatherer::finish`] the second right after they end (and a
//! write's fsync), so gathering never sits inside the timed part. Each look costs well under a
//! millisecond (a few procfs and sysfs reads, one `cachestat`, one FIEMAP ioctl per 512
//! extents). [`Facts::section`] reduces the two moments to the figures a result carries (its
//! `facts` columns); the judge reads the whole [`Facts`].
//!
//! This is a leaf: it reads the kernel and knows nothing of runs, engines or verdicts.

pub mod chain;
pub mod diskstat;
pub mod extents;
pub mod pagecache;
pub mod pressure;
pub mod taskio;

use chain::Chain;
use diskstat::{DiskStat, STAT_SECTOR_BYTES};
use extents::ExtentMap;
use pagecache::PageCache;
use pressure::{share_pct, CpuTicks, Pressure};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use taskio::TaskIo;

/// Filesystems whose contents live in RAM.
pub const RAM_FS: &[&str] = &["tmpfs", "ramfs", "hugetlbfs", "devtmpfs"];

/// One look at the kernel's counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Moment {
    /// Monotonic clock, ns (the same origin for both looks).
    pub at_ns: u64,
    /// This process's I/O accounting (exited threads included).
    pub io: Option<TaskIo>,
    /// The file's pages in the page cache.
    pub cache: Option<PageCache>,
    pub pressure: Pressure,
    pub cpu: Option<CpuTicks>,
    /// This process's voluntary context switches (a thread going to sleep: for a device, a
    /// lock, a timer), every thread, ended ones included.
    pub voluntary_switches: Option<u64>,
    /// Each level of [`Facts::chain`]'s counters, in its order.
    pub devices: Vec<Option<DiskStat>>,
}

/// What the runner knows of its own workers (added to the facts when the run ends).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSide {
    /// The worker threads' own user-space CPU time, seconds (`getrusage(RUSAGE_THREAD)` in each).
    pub worker_user_cpu_s: Option<f64>,
    /// The worker threads' time runnable but waiting for a CPU, seconds (`schedstat`'s
    /// `run_delay` in each): how much CPU contention cost the run itself.
    pub worker_cpu_wait_s: Option<f64>,
    /// The worker threads' time on a CPU, user and system, seconds (`schedstat`'s
    /// `sum_exec_runtime` in each): how CPU-bound the run was.
    pub worker_on_cpu_s: Option<f64>,
    /// O_DIRECT slots: their size and how many physically contiguous pieces each is.
    pub buffer_slot_bytes: u64,
    pub buffer_pieces: Vec<u32>,
}

/// Everything known about one run, before and after.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub before: Moment,
    pub after: Moment,
    /// The file's extent map before the run and after it (a write's file as written).
    pub extents_before: Option<ExtentMap>,
    pub extents_after: Option<ExtentMap>,
    /// The device chain under the file; `None` without a block device.
    pub chain: Option<Chain>,
    /// What lies in RAM under the file's device or overlay, in words.
    pub ram_below: Option<String>,
    pub run: RunSide,
}

/// Takes the first look, keeps what the second needs.
#[derive(Debug)]
pub struct Gatherer {
    file: Option<File>,
    facts: Facts,
}

/// Monotonic ns since this process first asked (the two looks' clock).
fn monotonic_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    EPOCH
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

/// This process's voluntary context switches.
fn voluntary_switches() -> Option<u64> {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage into `ru`, which lives for the call.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    Some(ru.ru_nvcsw.max(0) as u64)
}

impl Moment {
    fn now(file: Option<&File>, chain: Option<&Chain>) -> Moment {
        Moment {
            at_ns: monotonic_ns(),
            io: TaskIo::process(),
            cache: file.and_then(PageCache::of),
            pressure: Pressure::now(),
            cpu: CpuTicks::now(),
            voluntary_switches: voluntary_switches(),
            devices: chain.map(Chain::stats).unwrap_or_default(),
        }
    }
}

impl Gatherer {
    /// The first look at `path` (which must exist): opened read-only and non-blocking, never
    /// read, kept open so the second look sees the same file.
    pub fn start(path: &Path) -> Gatherer {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.is_file()));
        let chain = Chain::of(path);
        let facts = Facts {
            extents_before: file.as_ref().and_then(ExtentMap::of),
            ram_below: ram_below(path, chain.as_ref()),
            before: Moment::now(file.as_ref(), chain.as_ref()),
            chain,
            ..Default::default()
        };
        Gatherer { file, facts }
    }

    /// A look now, the run going on: the facts from the first look until now (what the
    /// explorer judges its live row by, once a second). The extent map is not read again (a
    /// file of random writes has tens of thousands of extents; the second look reads it).
    pub fn so_far(&self, run: RunSide) -> Facts {
        Facts {
            after: Moment::now(self.file.as_ref(), self.facts.chain.as_ref()),
            run,
            ..self.facts.clone()
        }
    }

    /// The second look, with what the runner knows of its workers.
    pub fn finish(self, run: RunSide) -> Facts {
        let Gatherer { file, mut facts } = self;
        facts.after = Moment::now(file.as_ref(), facts.chain.as_ref());
        facts.extents_after = file.as_ref().and_then(ExtentMap::of);
        facts.run = run;
        facts
    }
}

/// What lies in RAM under `path`: a loop device whose backing file is on a RAM filesystem, an
/// overlay with a layer there.
fn ram_below(path: &Path, chain: Option<&Chain>) -> Option<String> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let fs_of = |p: &Path| {
        let abs = std::fs::canonicalize(p).ok()?;
        crate::mounts::find_mount(&mounts, &abs, None)
    };
    let in_ram = |p: &Path| fs_of(p).is_some_and(|f| RAM_FS.contains(&f.fs_type.as_str()));
    for l in chain.map(|c| c.levels.as_slice()).unwrap_or_default() {
        if let Some(b) = l.backing_file.as_deref().filter(|b| in_ram(Path::new(b))) {
            return Some(format!(
                "{} is a loop device over {}, a file in RAM",
                crate::text::shown(&l.name),
                crate::text::shown(b)
            ));
        }
    }
    let fs = fs_of(path)?;
    if fs.fs_type != "overlay" {
        return None;
    }
    fs.super_options
        .split(',')
        .filter_map(|o| o.split_once('='))
        .filter(|(k, _)| matches!(*k, "upperdir" | "lowerdir"))
        .flat_map(|(_, v)| v.split(':').map(str::to_string).collect::<Vec<_>>())
        .find(|dir| in_ram(Path::new(dir)))
        .map(|dir| format!("the overlay's layer {} is in RAM", crate::text::shown(&dir)))
}

/// A device's bytes from one look to the next: (read, written).
fn device_bytes(a: Option<&DiskStat>, b: Option<&DiskStat>) -> Option<(u64, u64)> {
    let (a, b) = (a?, b?);
    Some((
        b.read_sectors.saturating_sub(a.read_sectors) * STAT_SECTOR_BYTES,
        b.write_sectors.saturating_sub(a.write_sectors) * STAT_SECTOR_BYTES,
    ))
}

impl Facts {
    /// The facts of two runs one after the other (the explorer's passes over a file, each a run
    /// of its own, make one row): from `earlier`'s first look to `later`'s second, the workers'
    /// CPU times added. The device chain must be the same (the same file).
    pub fn joined(earlier: &Facts, later: &Facts) -> Facts {
        let add = |a: Option<f64>, b: Option<f64>| Some(a? + b?);
        Facts {
            before: earlier.before.clone(),
            after: later.after.clone(),
            extents_before: earlier.extents_before,
            extents_after: later.extents_after,
            chain: later.chain.clone().or_else(|| earlier.chain.clone()),
            ram_below: later
                .ram_below
                .clone()
                .or_else(|| earlier.ram_below.clone()),
            run: RunSide {
                worker_user_cpu_s: add(earlier.run.worker_user_cpu_s, later.run.worker_user_cpu_s),
                worker_cpu_wait_s: add(earlier.run.worker_cpu_wait_s, later.run.worker_cpu_wait_s),
                worker_on_cpu_s: add(earlier.run.worker_on_cpu_s, later.run.worker_on_cpu_s),
                ..later.run.clone()
            },
        }
    }

    /// Seconds from the first look to the second (the run's time and the two looks).
    pub fn seconds(&self) -> f64 {
        self.after.at_ns.saturating_sub(self.before.at_ns) as f64 / 1e9
    }

    /// The run's own I/O: what this process caused the storage layer to move.
    pub fn run_io(&self) -> Option<TaskIo> {
        Some(self.after.io?.since(&self.before.io?))
    }

    /// Bytes level `i` of the chain moved (read, written) during the run.
    pub fn level_bytes(&self, i: usize) -> Option<(u64, u64)> {
        device_bytes(
            self.before.devices.get(i)?.as_ref(),
            self.after.devices.get(i)?.as_ref(),
        )
    }

    /// The top device's bytes that were not the run's (read, written): another process's, the
    /// filesystem's own (journal, metadata), or a read-ahead past what the run asked for.
    pub fn others_bytes(&self) -> Option<(u64, u64)> {
        let (r, w) = self.level_bytes(0)?;
        let io = self.run_io()?;
        Some((
            r.saturating_sub(io.read_bytes),
            w.saturating_sub(io.net_write_bytes()),
        ))
    }

    /// The extent map that describes the data the run met: after a write, before a read.
    pub fn extents(&self) -> Option<&ExtentMap> {
        self.extents_after.as_ref().or(self.extents_before.as_ref())
    }

    /// Share of the run's interval, percent, for two totals of the pressure files.
    fn psi(&self, pick: fn(&Pressure) -> Option<u64>) -> Option<f64> {
        share_pct(
            pick(&self.before.pressure),
            pick(&self.after.pressure),
            self.seconds() * 1e6,
        )
    }

    pub fn psi_cpu_some_pct(&self) -> Option<f64> {
        self.psi(|p| p.cpu_some_us)
    }

    pub fn psi_io_some_pct(&self) -> Option<f64> {
        self.psi(|p| p.io_some_us)
    }

    pub fn psi_memory_some_pct(&self) -> Option<f64> {
        self.psi(|p| p.memory_some_us)
    }

    pub fn psi_memory_full_pct(&self) -> Option<f64> {
        self.psi(|p| p.memory_full_us)
    }

    pub fn steal_pct(&self) -> Option<f64> {
        self.before.cpu?.steal_pct(&self.after.cpu?)
    }

    /// The process's voluntary context switches during the run.
    pub fn voluntary_switches(&self) -> Option<u64> {
        Some(
            self.after
                .voluntary_switches?
                .saturating_sub(self.before.voluntary_switches?),
        )
    }

    /// The figures a result carries (its `facts` columns).
    pub fn section(self: &Arc<Self>) -> Section {
        let io = self.run_io();
        let others = self.others_bytes();
        let below = self
            .chain
            .as_ref()
            .filter(|c| c.levels.len() > 1)
            .and_then(|c| self.level_bytes(c.levels.len() - 1));
        let map = self.extents();
        Section {
            run_read_bytes: io.map(|i| i.read_bytes),
            run_write_bytes: io.map(|i| i.net_write_bytes()),
            others_read_bytes: others.map(|o| o.0),
            others_write_bytes: others.map(|o| o.1),
            below_read_bytes: below.map(|b| b.0),
            below_write_bytes: below.map(|b| b.1),
            hole_bytes: map.map(|m| m.hole_bytes),
            unwritten_bytes: map.map(|m| m.unwritten_bytes),
            encoded_bytes: map.map(|m| m.encoded_bytes),
            shared_bytes: map.map(|m| m.shared_bytes),
            cached_before_pct: self.before.cache.map(|c| c.cached_pct()),
            cached_after_pct: self.after.cache.map(|c| c.cached_pct()),
            dirty_after_bytes: self.after.cache.map(|c| c.unwritten_bytes()),
            psi_cpu_some_pct: self.psi_cpu_some_pct(),
            psi_io_some_pct: self.psi_io_some_pct(),
            psi_memory_some_pct: self.psi_memory_some_pct(),
            steal_pct: self.steal_pct(),
            device_chain: self.chain.as_ref().map(Chain::describe).unwrap_or_default(),
            read_ahead_kb: self
                .chain
                .as_ref()
                .and_then(|c| c.top()?.queue.read_ahead_kb),
            full: Some(self.clone()),
        }
    }
}

/// A result's `facts` columns (`RunResult::facts`; docs/explain.md says what each means): the
/// run's own bytes, the others' on its device, what the file is made of, what the cache held,
/// who else ran, and the device chain. Empty cells where a fact could not be read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Section {
    /// Bytes this run caused to be read from storage (`/proc/self/io` `read_bytes`).
    pub run_read_bytes: Option<u64>,
    /// Bytes this run caused to be written to storage, less those it cancelled.
    pub run_write_bytes: Option<u64>,
    /// The top device's bytes during the run that were not the run's.
    pub others_read_bytes: Option<u64>,
    pub others_write_bytes: Option<u64>,
    /// What the last device of the chain moved (a loop's image's disk), when there is one.
    pub below_read_bytes: Option<u64>,
    pub below_write_bytes: Option<u64>,
    /// The file's bytes in holes, unwritten (preallocated), encoded (compressed) and shared
    /// extents (after a write, before a read).
    pub hole_bytes: Option<u64>,
    pub unwritten_bytes: Option<u64>,
    pub encoded_bytes: Option<u64>,
    pub shared_bytes: Option<u64>,
    /// Share of the file in the page cache before and after the run, percent (`cachestat`).
    pub cached_before_pct: Option<f64>,
    pub cached_after_pct: Option<f64>,
    /// The file's dirty and writeback bytes at the end.
    pub dirty_after_bytes: Option<u64>,
    /// Share of the run during which some task waited for a CPU, for I/O, for memory
    /// (pressure stall information), and the share of CPU time stolen by the hypervisor, percent.
    pub psi_cpu_some_pct: Option<f64>,
    pub psi_io_some_pct: Option<f64>,
    pub psi_memory_some_pct: Option<f64>,
    pub steal_pct: Option<f64>,
    /// The device chain, top first (`loop0 → /srv/img (buffered) → vda`).
    pub device_chain: String,
    /// The top device's read-ahead, KiB.
    pub read_ahead_kb: Option<u64>,
    /// Everything behind these figures (not a column): what the judge reads.
    #[serde(skip)]
    pub full: Option<Arc<Facts>>,
}

impl Section {
    /// A section with every column holding a value: its header is the facts columns'.
    pub fn with_every_column() -> Section {
        Section {
            run_read_bytes: Some(0),
            run_write_bytes: Some(0),
            others_read_bytes: Some(0),
            others_write_bytes: Some(0),
            below_read_bytes: Some(0),
            below_write_bytes: Some(0),
            hole_bytes: Some(0),
            unwritten_bytes: Some(0),
            encoded_bytes: Some(0),
            shared_bytes: Some(0),
            cached_before_pct: Some(0.0),
            cached_after_pct: Some(0.0),
            dirty_after_bytes: Some(0),
            psi_cpu_some_pct: Some(0.0),
            psi_io_some_pct: Some(0.0),
            psi_memory_some_pct: Some(0.0),
            steal_pct: Some(0.0),
            device_chain: String::new(),
            read_ahead_kb: Some(0),
            full: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn a_cold_read_between_two_looks_is_the_runs_own_io_and_its_device_moved_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        f.write_all_at(&vec![5u8; 8 << 20], 0).unwrap();
        crate::cache::evict_file(&f).unwrap();
        let g = Gatherer::start(&path);
        let mut buf = vec![0u8; 1 << 20];
        for i in 0..8u64 {
            f.read_exact_at(&mut buf, i << 20).unwrap();
        }
        let facts = Arc::new(g.finish(RunSide::default()));
        assert!(facts.seconds() > 0.0);
        let s = facts.section();
        let Some(read) = s.run_read_bytes else {
            eprintln!("skipped: no /proc/self/io here");
            return;
        };
        // Parallel tests in this process may read too: at least the file's 8 MiB.
        assert!(read >= 8 << 20, "{s:?}");
        if let Some(c) = s.cached_before_pct {
            assert!(c < 1.0, "evicted before: {s:?}");
            assert!(s.cached_after_pct.unwrap() > 99.0, "{s:?}");
        }
        assert_eq!(s.hole_bytes, Some(0), "{s:?}");
        if facts.chain.is_some() {
            assert!(!s.device_chain.is_empty());
            assert!(s.others_read_bytes.is_some());
        }
        assert!(s.full.is_some());
    }

    #[test]
    fn the_section_serializes_under_its_column_names_and_never_carries_the_whole_facts() {
        let json = serde_json::to_value(Section::with_every_column()).unwrap();
        let o = json.as_object().unwrap();
        assert!(o.contains_key("run_read_bytes") && o.contains_key("psi_cpu_some_pct"));
        assert!(!o.contains_key("full"));
        // A document from before a column existed still reads back.
        let back: Section = serde_json::from_str(r#"{"run_read_bytes": 5}"#).unwrap();
        assert_eq!((back.run_read_bytes, back.hole_bytes), (Some(5), None));
    }
}
