//! `fast FILE`: the XOR of a whole file as fast as this machine allows. stdout gets the XOR
//! alone; stderr gets the road taken, why, the seconds and GiB/s (whole command, probes included).
//!
//! `fast` does not go through the runner: it needs no latency histogram or snapshots, and the
//! best roads do not fit the block-at-a-time engine shape (one mapping shared by all threads; one
//! ring kept deep). It looks first, then picks:
//!
//! * **cached** (>= [`WARM_THRESHOLD_PCT`] of the pages, by `cachestat`/`mincore`): map the file
//!   2 MiB-aligned and probe whether its folios get PMD mappings. If they do, XOR straight from
//!   the mapping on every core (memory speed). If the cache holds small folios (filled by small
//!   writes or reads), every 4 KiB page costs a page-table entry and its teardown, and
//!   [`SMALL_FOLIO_ROAD`] is taken. Measured on the reference machine (Linux 6.18, ext4, 2 cores),
//!   mapping still beat `pread` into 256K-1M aligned buffers there by ~15% wall and ~25% CPU
//!   once each 8 MiB chunk is populated with one `MADV_POPULATE_READ` instead of a fault per
//!   64 KiB, so the constant is `Mmap`; it is one line to change where `pread` wins.
//! * **not cached**: the disk is the limit, and which way of reading it is faster depends on the
//!   device: `O_DIRECT` through one deep io_uring saves the page cache's copy, but a device (or a
//!   VM host) whose readahead is better than any queue depth favours buffered `pread` streams.
//!   So a cold file of at least [`race::RACE_MIN_FILE_BYTES`] is read as a race ([`race`]): a
//!   probe of each road, timed, then the rest with the faster, the figures in the reason (and in
//!   `-v`). A smaller one takes O_DIRECT. Where O_DIRECT or io_uring is refused, buffered
//!   `pread` with sequential readahead.
//!
//! Every road XORs every byte exactly once, and a file that shrinks mid-read is an error, so the
//! choice changes the speed and never the answer. `--road` forces a road (for benchmarks).

pub mod command;
mod direct;
mod hybrid;
mod map;
mod probe;
mod race;
mod roads;

use crate::config::{check_block_size, check_queue_depth, check_threads, parse_block_size, usage};
use crate::size::format_size;
use anyhow::anyhow;
use clap::Args;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

pub use probe::{page_cache, Cached};

/// Share of cached pages from which a file is read through the cache.
pub const WARM_THRESHOLD_PCT: f64 = 90.0;
/// Share of cached pages from which a file that is not warm is read half from the cache, half
/// from the disk ([`Road::Hybrid`]); below it, everything comes from the disk.
pub const HYBRID_MIN_PCT: f64 = 10.0;
/// 2 MiB-aligned points touched by the folio probe.
pub const PMD_PROBES: usize = 8;
/// Road for a cached file whose folios are too small for PMD mappings.
pub const SMALL_FOLIO_ROAD: Road = Road::Mmap;
/// Default bytes per read on the warm `pread` road (fits L2 with room for the XOR).
pub const WARM_BLOCK_BYTES: usize = 256 << 10;
/// Sequential streams of the direct road (one ring serves them round-robin), unless `--threads`
/// says otherwise. On the reference VM 1, 4 and 8 streams were within the disk's noise.
pub const DIRECT_STREAMS: usize = 1;
/// Sequential streams (threads, one descriptor each) of the buffered cold road.
pub const BUFFERED_STREAMS: usize = 4;
/// Least default bytes per read on the cold roads.
pub const COLD_BLOCK_BYTES: usize = 1 << 20;
/// Most default bytes per read on the cold roads.
pub const COLD_MAX_BLOCK_BYTES: usize = 4 << 20;
/// Bytes in flight on the direct road by default: the queue depth is this over the read size
/// (32 x 1M, 8 x 4M), so a bigger read never takes more buffer memory.
pub const COLD_IN_FLIGHT_BYTES: usize = 32 << 20;

/// The cold roads' read size and direct queue depth, each as asked or else from the device: a
/// read as big as the largest request the device takes whole (`max_sectors_kb`), between
/// [`COLD_BLOCK_BYTES`] and [`COLD_MAX_BLOCK_BYTES`], and [`COLD_IN_FLIGHT_BYTES`] in flight.
/// Every request costs the device (and, in a VM, the host) a round trip, so fewer, larger ones
/// move more: on the lab VM (virtio, `max_sectors_kb` 4096) O_DIRECT 4 MiB x 8 read a cold 4 GiB
/// file at 2.50 GiB/s against 1 MiB x 32's 2.20 (medians of 4 interleaved rounds; fio's best,
/// 4 MiB x 8 with huge pages, 2.29).
pub fn cold_shape(
    block_bytes: Option<usize>,
    queue_depth: Option<u32>,
    max_request_bytes: Option<u64>,
) -> (usize, u32) {
    let block = block_bytes.unwrap_or_else(|| {
        let device = max_request_bytes.unwrap_or(COLD_BLOCK_BYTES as u64);
        (device.clamp(COLD_BLOCK_BYTES as u64, COLD_MAX_BLOCK_BYTES as u64) as usize) / 4096 * 4096
    });
    let qd =
        queue_depth.unwrap_or_else(|| (COLD_IN_FLIGHT_BYTES / block.max(1)).clamp(1, 32) as u32);
    (block, qd)
}

/// A way of reading the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Road {
    Auto,
    Mmap,
    Pread,
    Direct,
    Buffered,
    Hybrid,
    /// A timed probe of the direct and the buffered road, then the rest with the faster.
    Race,
}

impl Road {
    pub const NAMES: &'static [&'static str] = &[
        "auto", "mmap", "pread", "direct", "buffered", "hybrid", "race",
    ];

    pub fn parse(text: &str) -> anyhow::Result<Road> {
        Ok(match text.to_ascii_lowercase().as_str() {
            "auto" => Road::Auto,
            "mmap" => Road::Mmap,
            "pread" => Road::Pread,
            "direct" => Road::Direct,
            "buffered" => Road::Buffered,
            "hybrid" => Road::Hybrid,
            "race" => Road::Race,
            _ => {
                return Err(usage(format!(
                    "--road: unknown value '{text}'; use one of {}",
                    Road::NAMES.join(", ")
                )))
            }
        })
    }

    pub fn as_str(self) -> &'static str {
        Road::NAMES[self as usize]
    }
}

/// What the user asked for (`None`: let `fast` choose).
#[derive(Debug, Clone)]
pub struct Settings {
    pub road: Road,
    pub threads: Option<usize>,
    pub block_bytes: Option<usize>,
    /// Reads in flight on the direct road (`None`: [`cold_shape`]'s).
    pub queue_depth: Option<u32>,
    /// `--max-memory`: most bytes the read buffers may take (`None`: half of what is available).
    pub max_memory_bytes: Option<u64>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            road: Road::Auto,
            threads: None,
            block_bytes: None,
            queue_depth: None,
            max_memory_bytes: None,
        }
    }
}

impl Settings {
    /// Validates the command-line flags (usage errors name the flag).
    pub fn from_args(a: &FastArgs) -> anyhow::Result<Settings> {
        // The same range checks, in the same words, as `run`'s (config owns them).
        if let Some(t) = a.threads {
            check_threads(t, "--threads")?;
        }
        if let Some(q) = a.queue_depth {
            check_queue_depth(q, "--queue-depth")?;
        }
        let block_bytes = match &a.block_size {
            Some(text) => {
                let b = parse_block_size(text, "--block-size")?;
                check_block_size(b, "--block-size")?;
                Some(b as usize)
            }
            None => None,
        };
        Ok(Settings {
            road: Road::parse(&a.road)?,
            threads: a.threads,
            block_bytes,
            queue_depth: a.queue_depth,
            max_memory_bytes: a
                .max_memory
                .as_deref()
                .map(crate::config::parse_max_memory)
                .transpose()?,
        })
    }
}

/// What `fast` did.
#[derive(Debug, Clone)]
pub struct Report {
    pub xor: u32,
    pub bytes: u64,
    pub road: Road,
    pub threads: usize,
    /// Bytes per read (0 for mmap).
    pub block_bytes: usize,
    /// Reads in flight on the direct road (1 on the others).
    pub queue_depth: u32,
    /// What was measured and why this road.
    pub reason: String,
    /// What the run could not guard against (a writer that already had the file open), for
    /// stderr.
    pub warnings: Vec<String>,
}

impl Report {
    /// The stderr line: road, setup, reason, seconds and GiB/s.
    pub fn summary(&self, seconds: f64) -> String {
        let block = if self.block_bytes > 0 {
            format!(", {} reads", format_size(self.block_bytes as u64))
        } else {
            String::new()
        };
        format!(
            "fast: {} road, {} thread{}{} | {} | {} in {:.4} s, {:.2} GiB/s",
            self.road.as_str(),
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            block,
            self.reason,
            crate::size::format_bytes_approx(self.bytes),
            seconds,
            self.bytes as f64 / (1u64 << 30) as f64 / seconds.max(1e-9)
        )
    }
}

/// `fast FILE`
#[derive(Debug, Args)]
pub struct FastArgs {
    /// File to XOR (read only; pseudo-files and pipes are read to their end)
    pub file: PathBuf,
    /// Print the decision process to stderr
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Force a road instead of choosing one: auto, mmap, pread, direct (io_uring O_DIRECT),
    /// buffered (pread with sequential readahead), hybrid (cached chunks mapped, the rest O_DIRECT),
    /// race (a timed probe of direct and buffered, then the rest with the faster)
    #[arg(long, default_value = "auto", value_name = "ROAD")]
    pub road: String,
    /// Worker threads (default: one per core); on the cold roads, sequential streams (direct:
    /// served by one ring, default 1; buffered: one thread each, default 4)
    #[arg(long, short = 't', value_name = "N")]
    pub threads: Option<usize>,
    /// Bytes per read of the pread, buffered and direct roads (default 256K warm; cold, the
    /// device's largest request between 1M and 4M)
    #[arg(long, value_name = "SIZE")]
    pub block_size: Option<String>,
    /// Reads in flight on the direct road (default: 32 MiB in flight, 32 x 1M, 8 x 4M)
    #[arg(long, value_name = "N")]
    pub queue_depth: Option<u32>,
    /// Most memory the read buffers may take (threads x block size, x queue depth on the direct
    /// road); default: half of the memory available
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// Print one JSON document (context, setup, figures, the model's bound) on stdout instead
    /// of the XOR alone
    #[arg(long)]
    pub json: bool,
}

fn open_file(path: &Path) -> anyhow::Result<File> {
    let p = crate::text::shown_path(path);
    // Before `open`: a named FIFO blocks in open and a character device never ends. A pipe named
    // through an open descriptor (/dev/stdin) is read to its end, opened without blocking.
    let pipe = match std::fs::metadata(path) {
        Ok(m) if !m.is_dir() => crate::fsguard::check_stream_input(path, "FILE")
            .map_err(|e| crate::config::usage(e.to_string()))?,
        _ => false, // the open below says what is missing, or that it is a directory
    };
    crate::runner::test_hook("fast-before-open");
    let opened = if pipe {
        crate::fsguard::open_read(path, true).map_err(crate::fsguard::OpenError::Io)
    } else {
        // O_NONBLOCK, then a look at the descriptor: a FIFO renamed over the path since the
        // check is refused instead of blocking the open forever.
        crate::fsguard::open_then_check(OpenOptions::new().read(true), path, 0, "FILE", false)
    };
    let f = opened.map_err(|e| match e {
        crate::fsguard::OpenError::Refused(refused) => usage(refused.to_string()),
        crate::fsguard::OpenError::Io(e) => match e.raw_os_error() {
            // A FILE that cannot be used as given is bad usage (exit 2), like every argument.
            Some(libc::ENOENT) => usage(format!("FILE: {p} does not exist; check the path")),
            Some(libc::EACCES) | Some(libc::EPERM) => usage(format!(
                "FILE: permission denied opening {p}; check its permissions"
            )),
            _ => anyhow!("FILE: cannot open {p}: {e}"),
        },
    })?;
    if f.metadata()?.is_dir() {
        return Err(usage(format!(
            "FILE: {p} is a directory; give a regular file"
        )));
    }
    Ok(f)
}

/// XORs the whole file at `path`, choosing (or taking the forced) road. `log` gets the steps.
/// A regular file whose size, times or inode moved while it was read (another process wrote,
/// truncated or extended it) is an error, never an XOR: the same end-of-run check as `run`'s
/// [`crate::runner::FileWatch`], whatever the road.
pub fn xor_file(
    path: &Path,
    settings: &Settings,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<Report> {
    let file = open_file(path)?;
    let watch = crate::runner::FileWatch::new(file.try_clone()?);
    let mut warnings: Vec<String> = watch.iter().filter_map(|w| w.unguarded(path)).collect();
    if std::os::unix::fs::FileTypeExt::is_block_device(&file.metadata()?.file_type()) {
        warnings.push(format!(
            "note: {} is a block device: writes to it by other processes during the run cannot \
             be detected (leases exist only for regular files)",
            crate::text::shown_path(path)
        ));
    }
    let mut report = choose_and_read(path, file, settings, log)?;
    report.warnings = warnings;
    crate::runner::test_hook("fast-before-check");
    if let Some(w) = &watch {
        w.check_unchanged()
            .map_err(|changed| anyhow!("FILE {}: {changed}", crate::text::shown_path(path)))?;
    }
    Ok(report)
}

/// The road for a cold file (under [`HYBRID_MIN_PCT`] cached) and why: the race on a file worth
/// racing, O_DIRECT on a small one, and O_DIRECT without a race on a VM that gives free memory
/// back to its host (`free_page_reporting`). There the buffered road fills its page cache with
/// memory the host must fault back in, and a race misleads: on the lab VM buffered reads ran at
/// 0.6-0.8 GiB/s against O_DIRECT's 2.2 once the host had taken freed memory back, and in the
/// 5-15 s after a large eviction (a benchmark's `drop_caches`) the host's reclaim slowed the
/// direct probe to 340-1000 MiB/s while a buffered probe on just-freed memory ran at 1.1-2.0, so
/// the race took the buffered road and read the file at 0.75-0.88 GiB/s where fio's O_DIRECT
/// read it at 1.7-2.2. Settled, the race cost 7% against the direct road alone (1.667 s against
/// 1.545 s, 4 GiB, medians of 3). `--road race` still races.
fn cold_road(pct: f64, len: u64, free_page_reporting: bool) -> (Road, String) {
    let cold = format!("{pct:.1}% cached < {HYBRID_MIN_PCT}%: from the disk");
    if len < race::RACE_MIN_FILE_BYTES {
        let under = race::RACE_MIN_FILE_BYTES >> 20;
        (
            Road::Direct,
            format!("{cold}, O_DIRECT (under {under} MiB: too small to race)"),
        )
    } else if free_page_reporting {
        (Road::Direct, format!("{cold}, O_DIRECT without a race: this VM gives free memory back to its host (free page reporting), so buffered reads fault their page cache in from the host, and after a large eviction the host's reclaim misleads a timed probe; --road race races anyway"))
    } else {
        (Road::Race, format!("{cold}; O_DIRECT and buffered readahead raced on a probe each, the rest read by the faster"))
    }
}

fn choose_and_read(
    path: &Path,
    mut file: File,
    settings: &Settings,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<Report> {
    let meta = file.metadata()?;
    let is_block = std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type());
    let len = if meta.is_file() {
        meta.len()
    } else if is_block {
        file.seek(SeekFrom::End(0))?
    } else {
        0 // pipes, character devices: no size; read to the end below
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = roads::useful_threads(len, settings.threads.unwrap_or(cores));
    let mut report = Report {
        xor: 0,
        bytes: len,
        road: settings.road,
        threads,
        block_bytes: 0,
        queue_depth: 1,
        reason: String::new(),
        warnings: Vec::new(),
    };
    if len == 0 {
        // Empty, or a pseudo-file (procfs, sysfs: size 0 yet content) or a pipe: read to the end
        // of file, so the XOR is the XOR of what is there, never a guessed 0.
        report.road = Road::Pread;
        report.threads = 1;
        report.block_bytes = WARM_BLOCK_BYTES;
        report.reason = "size 0 (an empty file, a pipe or a pseudo-file): read to the end".into();
        (report.xor, report.bytes) = roads::xor_to_end(&file, WARM_BLOCK_BYTES)?;
        if report.bytes == 0 {
            report.reason = "the file is empty".into();
        }
        return Ok(report);
    }
    if !meta.is_file() {
        // Block devices: no page-cache statistics and no folio probe; plain reads.
        let road = match settings.road {
            Road::Auto | Road::Mmap => Road::Pread,
            r => r,
        };
        report.reason = "not a regular file".into();
        return run_road(path, &file, len, road, settings, report, None, log);
    }
    let cached = probe::page_cache(&file, len)?;
    let warm = cached.percent() >= WARM_THRESHOLD_PCT;
    let cache_note = if cached.known() {
        format!("{:.1}% cached ({})", cached.percent(), cached.source)
    } else {
        // Reads through the page cache suit both a cached and an uncached file.
        format!(
            "residency {}; reading through the page cache",
            cached.source
        )
    };
    log(&cache_note);
    report.reason = cache_note;
    let pct = cached.percent();
    let (road, why) = match settings.road {
        Road::Auto if !cached.known() => (Road::Buffered, "residency unknown: buffered reads suit both".to_string()),
        Road::Auto if warm => (Road::Mmap, format!("{pct:.1}% cached >= {WARM_THRESHOLD_PCT}%: read from memory")),
        Road::Auto if pct >= HYBRID_MIN_PCT => (Road::Hybrid, format!("{pct:.1}% cached, between {HYBRID_MIN_PCT}% and {WARM_THRESHOLD_PCT}%: cached chunks mapped, the rest O_DIRECT")),
        Road::Auto => cold_road(pct, len, crate::explain::context::free_page_reporting(Path::new("/sys"))),
        r => (r, format!("--road {} asked", r.as_str())),
    };
    log(&format!("why: {why}"));
    if road != Road::Mmap {
        return run_road(path, &file, len, road, settings, report, None, log);
    }
    let map = map::Mapping::new(&file, len)?;
    if settings.road == Road::Auto {
        match map.probe_pmd(PMD_PROBES) {
            Some((touched, pmds)) if touched > 0 => {
                let note = format!("{pmds} of {touched} probes PMD-mapped");
                log(&note);
                report.reason = format!("{}, {note}", report.reason);
                if pmds * 2 < touched && SMALL_FOLIO_ROAD != Road::Mmap {
                    drop(map);
                    let road = SMALL_FOLIO_ROAD;
                    return run_road(path, &file, len, road, settings, report, None, log);
                }
            }
            Some(_) => report.reason.push_str(", smaller than one 2 MiB page"),
            None => report.reason.push_str(", folio probe unavailable"),
        }
    }
    run_road(
        path,
        &file,
        len,
        Road::Mmap,
        settings,
        report,
        Some(map),
        log,
    )
}

/// The read buffers a road allocates, counted before any is: `--max-memory` (or half of the
/// available memory) bounds them as it bounds `run`'s (see [`crate::runner::check_budget`]).
struct Buffers {
    road: Road,
    len: u64,
    threads: usize,
    streams: usize,
    warm_block: usize,
    cold_block: usize,
    queue_depth: u32,
}

impl Buffers {
    /// Bytes allocated and the figures that multiply to them.
    fn bytes(&self) -> (u64, String) {
        let direct_slots =
            (self.queue_depth.max(1) as u64).min(self.len.div_ceil(self.cold_block as u64).max(1));
        let direct = direct_slots * self.cold_block as u64;
        let cold = format_size(self.cold_block as u64);
        match self.road {
            Road::Auto | Road::Mmap => (0, "the mapping needs none".into()),
            Road::Pread => {
                let n = self.threads.min(roads::chunks_of(self.len).len()).max(1);
                let warm = format_size(self.warm_block as u64);
                (
                    n as u64 * self.warm_block as u64,
                    format!("{n} threads x {warm}"),
                )
            }
            Road::Buffered => (
                self.streams as u64 * self.cold_block as u64,
                format!("{} streams x {cold}", self.streams),
            ),
            // The direct road, or (no O_DIRECT) buffered reads with as many streams; the race
            // runs one after the other.
            Road::Direct | Road::Hybrid | Road::Race => {
                let fallback = self.streams as u64 * self.cold_block as u64;
                (
                    direct.max(fallback),
                    format!("queue depth {direct_slots} x {cold}, or {} streams x {cold} without O_DIRECT", self.streams),
                )
            }
        }
    }

    fn check(&self, max_memory_bytes: Option<u64>, available: Option<u64>) -> anyhow::Result<()> {
        let (need, figures) = self.bytes();
        let Some((limit, what)) = crate::runner::limit_of(max_memory_bytes, available) else {
            return Ok(());
        };
        if need <= limit {
            return Ok(());
        }
        Err(usage(format!(
            "--max-memory: the {} road needs {} of read buffers ({figures}), more than {what}; \
             lower --threads, --block-size or --queue-depth, or pass --max-memory {} to allow it",
            self.road.as_str(),
            crate::size::format_bytes_approx(need),
            format_size(need.next_multiple_of(1 << 30)),
        )))
    }
}

#[allow(clippy::too_many_arguments)]
fn run_road(
    path: &Path,
    file: &File,
    len: u64,
    road: Road,
    settings: &Settings,
    mut report: Report,
    map: Option<map::Mapping>,
    log: &mut dyn FnMut(&str),
) -> anyhow::Result<Report> {
    log(&format!("taking the {} road", road.as_str()));
    report.road = road;
    let threads = report.threads;
    let streams = settings.threads.unwrap_or(BUFFERED_STREAMS);
    let direct_streams = settings.threads.unwrap_or(DIRECT_STREAMS);
    // Never a buffer larger than a reader can fill: a chunk on the chunked roads, the file on
    // the others. The reads are the same; a 1 MiB file no longer gets 1 GiB buffers.
    let warm_block = settings
        .block_bytes
        .unwrap_or(WARM_BLOCK_BYTES)
        .min(roads::CHUNK_BYTES.min(len) as usize)
        .max(1);
    // The device's largest request, for the cold roads' default read size (sysfs only).
    let max_request = match road {
        Road::Auto | Road::Mmap | Road::Pread => None,
        _ if settings.block_bytes.is_some() => None,
        _ => crate::explain::context::Context::device_of(path)
            .and_then(|d| d.max_sectors_kb)
            .map(|kb| kb * 1024),
    };
    let (cold_block, queue_depth) =
        cold_shape(settings.block_bytes, settings.queue_depth, max_request);
    let cold_block = cold_block.min(len.next_multiple_of(4096) as usize).max(1);
    let need = Buffers {
        road,
        len,
        threads,
        streams: roads::useful_threads(len, streams),
        warm_block,
        cold_block,
        queue_depth,
    };
    need.check(
        settings.max_memory_bytes,
        crate::runner::mem_available_bytes(),
    )?;
    report.xor = match road {
        Road::Auto | Road::Mmap => {
            let map = match map {
                Some(m) => m,
                None => map::Mapping::new(file, len)?,
            };
            report.block_bytes = 0;
            roads::mmap_road(&map, threads)?
        }
        Road::Pread => {
            report.block_bytes = warm_block;
            roads::pread_road(file, len, threads, warm_block)?
        }
        Road::Buffered => {
            report.block_bytes = cold_block;
            report.threads = roads::useful_threads(len, streams);
            roads::buffered_road(path, file, len, streams, cold_block)?
        }
        Road::Race => {
            report.block_bytes = cold_block;
            let plan = race::Plan {
                block_bytes: cold_block,
                queue_depth,
                direct_streams,
                buffered_streams: streams,
            };
            let out = race::run(path, file, len, race::probe_bytes(len), plan, log)?;
            (report.road, report.threads, report.queue_depth) = match out.winner {
                race::Winner::Direct => (Road::Direct, 1, queue_depth),
                race::Winner::Buffered => (Road::Buffered, out.buffered_streams, 1),
            };
            report.reason.push_str(&format!(", {}", out.note));
            out.xor
        }
        Road::Hybrid => {
            report.block_bytes = cold_block;
            report.queue_depth = queue_depth;
            match hybrid::run(path, file, len, threads, cold_block, queue_depth)? {
                Some((x, note)) => {
                    report.reason.push_str(&format!(", {note}"));
                    x
                }
                None => {
                    log("cachestat per chunk unavailable; reading everything from the disk");
                    return run_road(path, file, len, Road::Direct, settings, report, None, log);
                }
            }
        }
        Road::Direct => {
            report.block_bytes = cold_block;
            report.threads = 1;
            let qd = queue_depth;
            match direct::direct_road(path, file, len, cold_block, qd, direct_streams)? {
                direct::Direct::Done(x, kind) => {
                    report.queue_depth = qd;
                    let n = roads::useful_threads(len, direct_streams);
                    log(&format!("direct road buffers: {}", kind.describe()));
                    report.reason.push_str(&format!(
                        ", queue depth {qd}, {n} stream{}, {kind} buffers",
                        if n == 1 { "" } else { "s" }
                    ));
                    x
                }
                direct::Direct::Unsupported(why) => {
                    log(&format!("{why}; falling back to buffered reads"));
                    report.road = Road::Buffered;
                    report.threads = roads::useful_threads(len, streams);
                    report.reason.push_str(&format!(", {why}"));
                    roads::buffered_road(path, file, len, streams, cold_block)?
                }
            }
        }
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cold_reads_are_the_devices_largest_request_within_1m_to_4m_with_32_mib_in_flight() {
        // The lab VM's virtio disk takes 4 MiB requests: 4M x 8.
        assert_eq!(cold_shape(None, None, Some(4 << 20)), (4 << 20, 8));
        // An NVMe disk's 128 KiB, a SATA disk's 1280 KiB, a huge limit, none known.
        assert_eq!(cold_shape(None, None, Some(128 << 10)), (1 << 20, 32));
        assert_eq!(cold_shape(None, None, Some(1280 << 10)), (1280 << 10, 25));
        assert_eq!(cold_shape(None, None, Some(32 << 20)), (4 << 20, 8));
        assert_eq!(cold_shape(None, None, None), (1 << 20, 32));
        // What the user asked wins, each on its own.
        assert_eq!(
            cold_shape(Some(64 << 10), None, Some(4 << 20)),
            (64 << 10, 32)
        );
        assert_eq!(cold_shape(None, Some(3), Some(4 << 20)), (4 << 20, 3));
        // A limit that is not a whole number of pages is rounded down to one.
        assert_eq!(cold_shape(None, None, Some((2 << 20) + 512)).0, 2 << 20);
    }

    #[test]
    fn a_cold_file_is_raced_unless_small_or_on_a_vm_that_returns_free_memory_to_its_host() {
        let big = race::RACE_MIN_FILE_BYTES;
        let (road, why) = cold_road(0.0, big, false);
        assert_eq!(road, Road::Race, "{why}");
        assert!(why.contains("raced on a probe each"), "{why}");
        let (road, why) = cold_road(0.0, big, true);
        assert_eq!(road, Road::Direct, "{why}");
        assert!(
            why.contains("O_DIRECT without a race") && why.contains("free page reporting"),
            "{why}"
        );
        assert!(why.contains("--road race races anyway"), "{why}");
        // A small file is not raced anywhere, and says so whatever the VM does.
        for fpr in [false, true] {
            let (road, why) = cold_road(2.5, big - 1, fpr);
            assert_eq!(road, Road::Direct);
            assert_eq!(
                why,
                "2.5% cached < 10%: from the disk, O_DIRECT (under 512 MiB: too small to race)"
            );
        }
    }
}
