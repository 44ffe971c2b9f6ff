//! The block layer's own clock: for each block request a run causes, the time it waited in the
//! block layer and the time the device took, its size as issued, merges and splits — measured
//! in the kernel by seven small eBPF programs on the block tracepoints and kept there as
//! histograms, read once per interval ([`KernelView::read`]), never copied out per event.
//!
//! **How it is built, and why so.** The programs are emitted from Rust by a typed assembler
//! ([`asm`]) and loaded with `bpf(2)` ([`sys`]): the crate needs no clang, libbpf, libelf or
//! bpf-linker, and `cargo build` with Rust alone builds it. They attach as raw tracepoints
//! (`BPF_RAW_TRACEPOINT_OPEN`) and read the kernel's `struct bio` / `struct request` with
//! `bpf_probe_read_kernel` at the offsets the running kernel's BTF gives ([`btf`]: what CO-RE
//! does inside libbpf, done here at start). Where BTF is missing they attach to the same
//! tracepoints through perf (`perf_event_open(PERF_TYPE_TRACEPOINT)` + `PERF_EVENT_IOC_SET_BPF`)
//! and read the records at the offsets tracefs states ([`tracefs`]). Raw is preferred because
//! a perf tracepoint's program is skipped, uncounted, whenever any BPF tracing program is
//! already running on that CPU (the kernel's `bpf_prog_active`): a softirq's batch of
//! completions that lands during a submission's program is lost whole (~0.1% of completions at
//! 4K QD32 here, the very requests bpftrace lost beside it), while a raw tracepoint only skips
//! a program interrupted by itself, and counts it.
//!
//! **What is measured.** A request is known by its disk and first sector (the only identity
//! the perf records carry too). Its clock starts when the bio that makes it enters the block
//! layer (`block_bio_queue`), not at `block_rq_insert`: a request issued directly (scheduler
//! `none`) is never inserted, and the wait for a scheduler tag (`nr_requests` reached)
//! happens before the request exists — both are block layer queueing the user asks about.
//! Queue time is entry → issue (`block_rq_issue`: plug, tag wait, scheduler, dispatch);
//! device time is issue → completion (`block_rq_complete`). `prog`'s module doc follows a
//! request through splits and merges.
//!
//! **Which requests are the run's** ([`Filter`]): by process, the bios this process's threads
//! submit (io_uring's workers are threads of the process, so they count; the kernel's
//! writeback and journal threads do not); by device, every bio sent to the file's disk, the
//! run's or not. The process filter is the default: it is exact on a shared disk.
//!
//! **What it needs.** Root, or CAP_BPF with CAP_PERFMON (CAP_SYS_ADMIN also does), the seven
//! block tracepoints, and BTF (`/sys/kernel/btf/vmlinux`) or, failing it, tracefs mounted.
//! [`check`] says which is missing, as an [`Absent`].
//!
//! **Cleanup.** Every map, program and attachment is an `OwnedFd` inside [`KernelView`]:
//! dropping it (also while unwinding from a panic, and at process exit) closes them, which
//! detaches the programs. Nothing is pinned; nothing outlives the process.

pub mod asm;
pub mod btf;
pub mod hist;
pub mod prog;
pub mod sys;
pub mod tracefs;

pub use hist::{Counts, Hist, Summary, Word};
pub use prog::Direction;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// Which requests are the run's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilterBy {
    /// Bios submitted by this process's threads (io_uring's workers included).
    Process,
    /// Every bio sent to the file's block device.
    Device,
}

impl FilterBy {
    pub const ALL: [FilterBy; 2] = [FilterBy::Process, FilterBy::Device];

    pub fn name(self) -> &'static str {
        match self {
            FilterBy::Process => "process",
            FilterBy::Device => "device",
        }
    }
}

/// A block device as the kernel's tracepoints number it (`major << 20 | minor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelDev(pub u32);

impl KernelDev {
    pub fn new(major: u32, minor: u32) -> KernelDev {
        KernelDev((major << 20) | (minor & 0xf_ffff))
    }

    pub fn major(self) -> u32 {
        self.0 >> 20
    }

    pub fn minor(self) -> u32 {
        self.0 & 0xf_ffff
    }
}

/// The block device under a file: the device its bios are sent to and the disk its requests
/// are counted on (the same unless the file is on a partition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDev {
    /// Kernel name of the disk (`vda`, `nvme0n1`, `loop3`).
    pub disk_name: String,
    pub disk: KernelDev,
    /// The partition, when the file's filesystem is on one.
    pub partition: Option<KernelDev>,
}

impl BlockDev {
    /// The device whose number is `st_dev` (a file's) or `st_rdev` (a block device's), from
    /// `/sys/dev/block`; `None` for an anonymous device (tmpfs, overlay, NFS, btrfs).
    pub fn of_dev(dev: u64) -> Option<BlockDev> {
        let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
        if major == 0 {
            return None;
        }
        let dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
        let this = KernelDev::new(major, minor);
        if !dir.join("partition").exists() {
            let disk_name = dir.file_name()?.to_string_lossy().into_owned();
            return Some(BlockDev {
                disk_name,
                disk: this,
                partition: None,
            });
        }
        let parent = dir.parent()?;
        let text = std::fs::read_to_string(parent.join("dev")).ok()?;
        let (ma, mi) = text.trim().split_once(':')?;
        Some(BlockDev {
            disk_name: parent.file_name()?.to_string_lossy().into_owned(),
            disk: KernelDev::new(ma.parse().ok()?, mi.parse().ok()?),
            partition: Some(this),
        })
    }

    /// The device under `path` (its filesystem's, or the device itself for a block device).
    pub fn of_path(path: &Path) -> Option<BlockDev> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let m = std::fs::metadata(path).ok()?;
        BlockDev::of_dev(if m.file_type().is_block_device() {
            m.rdev()
        } else {
            m.dev()
        })
    }
}

/// What a view counts: whose bios, and the device under the run's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub by: FilterBy,
    /// The file's device: needed by [`FilterBy::Device`]; with [`FilterBy::Process`] it tells
    /// a partition's bios from its disk's requests (without it, a file on a partition has no
    /// requests counted).
    pub device: Option<BlockDev>,
    /// The process whose bios count ([`FilterBy::Process`]): this one's thread group.
    pub tgid: u32,
    /// Only bios of this direction (a read run's reads: not the write-back of a file its
    /// process wrote before); `None`: both.
    pub direction: Option<Direction>,
}

impl Filter {
    /// This process's bios, on the device under `path`.
    pub fn process(path: &Path) -> Filter {
        Filter {
            by: FilterBy::Process,
            device: BlockDev::of_path(path),
            tgid: std::process::id(),
            direction: None,
        }
    }

    /// Every bio sent to the device under `path`.
    pub fn device(path: &Path) -> Filter {
        Filter {
            by: FilterBy::Device,
            ..Filter::process(path)
        }
    }
}

/// Why the kernel view is not there; each says what would make it work.
#[derive(Debug, thiserror::Error)]
pub enum Absent {
    #[error(
        "needs root, or CAP_BPF and CAP_PERFMON (this process has uid {uid} and neither \
         CAP_SYS_ADMIN nor both of those)"
    )]
    Permission { uid: u32 },
    #[error(
        "tracefs is not mounted (tried {}); as root: mount -t tracefs nodev /sys/kernel/tracing",
        tracefs::TRACEFS_ROOTS.join(", ")
    )]
    NoTracefs,
    #[error("the kernel has no tracepoint block/{0} (tracefs events/block/{0})")]
    NoTracepoint(&'static str),
    #[error("reading tracepoint block/{event}: {error}")]
    Tracefs {
        event: &'static str,
        error: std::io::Error,
    },
    #[error(transparent)]
    Layout(#[from] prog::LayoutError),
    #[error("filtering by device needs the file's block device; {0}")]
    NoDevice(String),
    #[error("the kernel refused a BPF map ({what}): {error}")]
    Map {
        what: &'static str,
        error: std::io::Error,
    },
    #[error("the kernel refused the program for block/{event}: {error}; the verifier said: {log}")]
    Load {
        event: &'static str,
        error: std::io::Error,
        log: String,
    },
    #[error("attaching to tracepoint block/{event}: {error}")]
    Attach {
        event: &'static str,
        error: std::io::Error,
    },
    #[error("generating the programs: {0}")]
    Generate(String),
    #[error("the kernel's type information (BTF) could not be read: {0}")]
    Btf(String),
}

/// Capabilities (`/proc/self/status` `CapEff` bits) that allow the view.
const CAP_SYS_ADMIN: u32 = 21;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;

/// Whether this process may load and attach tracing programs.
fn permitted() -> Result<(), Absent> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let caps = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        .unwrap_or(0);
    let has = |c: u32| caps & (1u64 << c) != 0;
    if has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON)) {
        Ok(())
    } else {
        Err(Absent::Permission {
            uid: rustix::process::geteuid().as_raw(),
        })
    }
}

/// How the programs attach and read their fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attach {
    /// Raw tracepoints, fields through BTF: cheaper per event, and an interrupt's program is
    /// never skipped because another program of the view was running on its CPU.
    RawTracepoint,
    /// Perf tracepoints, fields at the offsets tracefs states: for kernels without BTF. A
    /// program is skipped, uncounted, when its event comes while any BPF tracing program runs
    /// on that CPU (the kernel's `bpf_prog_active`): a softirq's batch of completions landing
    /// in the middle of a submission's program is lost whole.
    PerfTracepoint,
}

impl Attach {
    pub fn name(self) -> &'static str {
        match self {
            Attach::RawTracepoint => "raw tracepoints (BTF)",
            Attach::PerfTracepoint => "perf tracepoints (tracefs)",
        }
    }
}

/// Environment variable that chooses how a run's view attaches: `raw` or `perf` (anything
/// else: the best there is). For comparing the two (tests, `bench/kernel-cost.sh`).
pub const ATTACH_ENV: &str = "DISKSCOPE_KERNEL_ATTACH";

/// Reads the seven events from tracefs.
fn events() -> Result<Vec<tracefs::Event>, Absent> {
    let root = tracefs::root().ok_or(Absent::NoTracefs)?;
    prog::EVENTS
        .iter()
        .map(|&name| {
            if !root.join("events/block").join(name).is_dir() {
                return Err(Absent::NoTracepoint(name));
            }
            tracefs::Event::read(&root, name)
                .map_err(|error| Absent::Tracefs { event: name, error })
        })
        .collect()
}

/// Where the programs read their fields, as asked (`None`: raw tracepoints when BTF
/// describes the block structures, else perf tracepoints).
fn source(how: Option<Attach>) -> Result<prog::Source, Absent> {
    let raw = || -> Result<prog::Source, Absent> {
        let btf =
            btf::Btf::load(Path::new(btf::VMLINUX)).map_err(|e| Absent::Btf(e.to_string()))?;
        Ok(prog::Source::Raw(Box::new(prog::RawLayout::from_btf(
            &btf,
        )?)))
    };
    match how {
        Some(Attach::RawTracepoint) => raw(),
        Some(Attach::PerfTracepoint) => Ok(prog::Source::Record(events()?)),
        None => raw().or_else(|first| match events() {
            Ok(e) => Ok(prog::Source::Record(e)),
            // Neither: the raw path's reason is the one to fix first.
            Err(_) => Err(first),
        }),
    }
}

fn generate(src: &prog::Source, p: &prog::Params) -> Result<Vec<prog::Program>, Absent> {
    prog::programs(src, p).map_err(|e| match e {
        prog::GenError::Layout(l) => Absent::Layout(l),
        other => Absent::Generate(other.to_string()),
    })
}

/// Whether the view can start here, without starting it: permission, BTF or tracefs, the
/// seven tracepoints and the fields the programs read. (Whether the kernel then accepts the
/// programs is known only by loading them: [`KernelView::start`].)
pub fn check() -> Result<Attach, Absent> {
    permitted()?;
    let src = source(None)?;
    let p = prog::Params {
        select: prog::Select::Process { tgid: 1 },
        direction: None,
        partition: None,
        inflight_fd: -1,
        stats_fd: -1,
    };
    generate(&src, &p)?;
    Ok(match src {
        prog::Source::Raw(_) => Attach::RawTracepoint,
        prog::Source::Record(_) => Attach::PerfTracepoint,
    })
}

/// The running view: programs attached, counters growing. Drop it to detach everything.
#[derive(Debug)]
pub struct KernelView {
    /// Declared first so they close first: detaching before the programs and maps go.
    events: Vec<OwnedFd>,
    progs: Vec<(&'static str, OwnedFd)>,
    stats: OwnedFd,
    inflight: OwnedFd,
    cpus: usize,
    filter: Filter,
    attach: Attach,
}

/// The license the programs declare: GPL-compatible, as the kernel wants for tracing helpers.
const LICENSE: &std::ffi::CStr = c"Dual MIT/GPL";

impl KernelView {
    /// Loads and attaches the programs for `filter` (raw tracepoints where BTF allows, else
    /// perf tracepoints). Takes a few milliseconds (BTF, the verifier); call it before the
    /// run's clock starts.
    pub fn start(filter: &Filter) -> Result<KernelView, Absent> {
        KernelView::start_with(filter, None)
    }

    /// [`KernelView::start`] with the way of attaching chosen (`None`: the best there is).
    pub fn start_with(filter: &Filter, how: Option<Attach>) -> Result<KernelView, Absent> {
        permitted()?;
        let src = source(how)?;
        let select = match filter.by {
            FilterBy::Process => prog::Select::Process { tgid: filter.tgid },
            FilterBy::Device => match &filter.device {
                Some(d) => prog::Select::Device {
                    disk: d.disk.0,
                    partition: d.partition.map(|p| p.0),
                },
                None => {
                    return Err(Absent::NoDevice(
                        "the file's filesystem has none (tmpfs, overlay, network)".into(),
                    ))
                }
            },
        };
        let partition = filter
            .device
            .as_ref()
            .and_then(|d| d.partition.map(|p| (p.0, d.disk.0)));
        let cpus = sys::possible_cpus().map_err(|error| Absent::Map {
            what: "the number of CPUs",
            error,
        })?;
        let map_err = |what| move |error| Absent::Map { what, error };
        let stats = sys::map_create(
            sys::MapType::PercpuArray,
            4,
            (hist::WORDS * 8) as u32,
            1,
            0,
            "ds_kclock",
        )
        .map_err(map_err("per-CPU counters"))?;
        let inflight = sys::map_create(
            sys::MapType::Array,
            4,
            prog::SLOT_BYTES,
            prog::SLOTS,
            sys::MAP_MMAPABLE,
            "ds_inflight",
        )
        .map_err(map_err("requests in flight"))?;
        let params = prog::Params {
            select,
            direction: filter.direction,
            partition,
            inflight_fd: inflight.as_raw_fd(),
            stats_fd: stats.as_raw_fd(),
        };
        let programs = generate(&src, &params)?;
        let (kind, attach) = match &src {
            prog::Source::Raw(_) => (sys::ProgType::RawTracepoint, Attach::RawTracepoint),
            prog::Source::Record(_) => (sys::ProgType::Tracepoint, Attach::PerfTracepoint),
        };
        let mut progs = Vec::with_capacity(programs.len());
        for p in &programs {
            let name = format!("ds_{}", p.event.trim_start_matches("block_"));
            let fd = sys::prog_load(kind, &p.insns, LICENSE, &name).map_err(|e| Absent::Load {
                event: p.event,
                error: e.error,
                log: last_lines(&e.log, 6),
            })?;
            progs.push((p.event, fd));
        }
        let mut attached = Vec::with_capacity(progs.len());
        for (i, (event, fd)) in progs.iter().enumerate() {
            let link = match &src {
                prog::Source::Raw(_) => {
                    let name = std::ffi::CString::new(*event).expect("no NUL in an event name");
                    sys::attach_raw_tracepoint(&name, fd)
                }
                prog::Source::Record(events) => sys::attach_tracepoint(events[i].id, fd),
            };
            attached.push(link.map_err(|error| Absent::Attach { event, error })?);
        }
        Ok(KernelView {
            events: attached,
            progs,
            stats,
            inflight,
            cpus,
            filter: filter.clone(),
            attach,
        })
    }

    /// How the programs are attached.
    pub fn attach(&self) -> Attach {
        self.attach
    }

    /// Everything counted since the start, summed over the CPUs: one `bpf(2)` lookup.
    pub fn read(&self) -> std::io::Result<Counts> {
        let mut raw = vec![0u8; self.cpus * hist::WORDS * 8];
        sys::map_lookup(&self.stats, &0u32.to_ne_bytes(), &mut raw)?;
        Ok(Counts::from_per_cpu(&raw, self.cpus))
    }

    /// The filter the view was started with.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// Program runs skipped because another BPF program was running on the same CPU (an
    /// interrupt's completion during a submission's program, say): events the view missed.
    pub fn missed_events(&self) -> u64 {
        self.progs
            .iter()
            .filter_map(|(_, fd)| sys::prog_stats(fd).ok())
            .map(|s| s.recursion_misses)
            .sum()
    }

    /// Each program's kernel counters (time in the program needs `kernel.bpf_stats_enabled`).
    pub fn program_stats(&self) -> Vec<(&'static str, sys::ProgStats)> {
        self.progs
            .iter()
            .filter_map(|(e, fd)| Some((*e, sys::prog_stats(fd).ok()?)))
            .collect()
    }

    /// The requests still recorded in flight: (disk: its `dev_t` or its request queue's
    /// address, sector, entered ns, issued ns; 0 when not issued), read from the mapped table
    /// at once. After a run's I/O has all completed, each is a completion the view missed, a
    /// bio that never became a request of its own, or read-ahead or write-back still going.
    pub fn in_flight(&self) -> std::io::Result<Vec<(u64, u64, u64, u64)>> {
        let table =
            sys::map_read_mapped(&self.inflight, (prog::SLOTS * prog::SLOT_BYTES) as usize)?;
        let u = |b: &[u8]| u64::from_ne_bytes(b.try_into().expect("8 bytes"));
        Ok(table
            .chunks_exact(prog::SLOT_BYTES as usize)
            .map(|r| (u(&r[..8]), u(&r[8..16]), u(&r[16..24]), u(&r[24..32])))
            .filter(|r| r.2 != 0)
            .collect())
    }

    /// How many tracepoints are attached.
    pub fn attached(&self) -> usize {
        self.events.len()
    }
}

/// The last `n` non-empty lines of a verifier log, joined with ` | `.
fn last_lines(log: &str, n: usize) -> String {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines.len().saturating_sub(n);
    crate::text::shown(&lines[from..].join(" | ")).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by every unit test that creates BPF objects (maps, programs, attachments): the
    /// view's test counts this process's BPF descriptors, which the others' would change.
    pub(crate) static BPF_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_kernel_device_number_packs_major_and_minor_as_tracepoints_do() {
        let d = KernelDev::new(254, 0);
        assert_eq!(d.0, 254 << 20);
        assert_eq!((d.major(), d.minor()), (254, 0));
        assert_eq!(KernelDev::new(8, 17).0, (8 << 20) | 17);
    }

    /// The whole life of a view on this machine: start, I/O that is not the run's (none counted
    /// by the process filter of another process), read, drop (every descriptor closed).
    #[test]
    fn a_view_starts_reads_and_closes_everything_it_opened() {
        // The descriptors are counted process-wide: no other test may hold BPF objects meanwhile.
        let _alone = BPF_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(why) = check() {
            eprintln!("skipped: kernel view unavailable: {why}");
            return;
        }
        let bpf_fds = || {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|t| {
                    let t = t.to_string_lossy();
                    ["bpf-map", "bpf-prog", "bpf-link", "bpf_link", "perf_event"]
                        .iter()
                        .any(|k| t.contains(k))
                })
                .count()
        };
        let before = bpf_fds();
        let mut filter = Filter::process(Path::new("."));
        // A thread group that does not exist: nothing is the run's.
        filter.tgid = u32::MAX >> 2;
        for how in [Attach::RawTracepoint, Attach::PerfTracepoint] {
            // Perf tracepoints are found by their ids in tracefs, which a fresh machine may not
            // have mounted (the raw tracepoints, the default, need no tracefs).
            if how == Attach::PerfTracepoint && tracefs::root().is_none() {
                eprintln!("perf tracepoints skipped: tracefs is not mounted");
                continue;
            }
            let view = match KernelView::start_with(&filter, Some(how)) {
                Ok(v) => v,
                Err(e) => panic!("check() passed but start with {} failed: {e}", how.name()),
            };
            assert_eq!(view.attach(), how);
            assert_eq!(view.attached(), prog::EVENTS.len());
            // Two maps, seven programs, seven attachments (raw tracepoint links count as
            // bpf-link descriptors, perf events as perf_event ones).
            assert!(bpf_fds() >= before + 2 + prog::EVENTS.len());
            let c = view.read().unwrap();
            assert_eq!(c.get(Word::Requests), 0);
            drop(view);
            assert_eq!(bpf_fds(), before, "every map, program and event closed");
        }
    }
}
