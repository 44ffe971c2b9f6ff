//! The fio command line that does the same I/O as a [`RunSpec`], so a diskscope number can be
//! checked with the tool people already trust (`run --fio`, and `<experiment>-fio.txt` next to a
//! sweep's CSV).
//!
//! The mapping, and where it is only close (listed as `# ` caveat lines under the command):
//! - method `read` → `ioengine=sync` (read(2) after lseek), `pread` → `psync`, `io_uring` →
//!   `io_uring` with `fixedbufs` (diskscope registers its buffers), `mmap` → `mmap` (fio's mmap
//!   engine copies each block into a buffer, diskscope XORs it in place), `buffered` → `sync`
//!   (fio has no stdio-style user-space buffer);
//! - threads → `numjobs` with `thread`; each sequential worker reads its own contiguous range, so
//!   job i gets `offset = i × size` through `offset_increment`; random workers draw from the
//!   whole file with replacement (`norandommap`) and do their share of the operations
//!   (`number_ios`);
//! - io_uring submission `batch` → `iodepth_batch_submit = iodepth`, `each` → `1` (fio's default);
//! - cache `warm`/`as-is` → `invalidate=0`; `cold` → `invalidate=1`; `cold-all` also needs
//!   `echo 3 > /proc/sys/vm/drop_caches` first (a caveat line says so);
//! - writes: `fsync` → `end_fsync=1` (timed, as in diskscope), `dsync` → `sync=dsync`,
//!   `prealloc` → `fallocate=native|none`;
//! - buffers (`--buffers`, what `auto` resolves to): `plain` → `iomem=mmap` (an anonymous
//!   mapping: page-aligned, like diskscope's; fio's default `malloc` buffer starts 16 bytes past a
//!   page, which cost 3× on page-cache copies on the dev VM), `malloc` → `iomem=malloc`,
//!   `hugetlb` → `iomem=mmaphuge` (`MAP_HUGETLB`), `thp` → `iomem=mmap` with a caveat: fio never
//!   asks for transparent huge pages, so it gets them only where THP is `always`.
//!
//! - open loop (`--rate`, a sweep's `rate`) → `rate_iops` per job (the rate over all threads
//!   divided by `numjobs`) with `rate_process=linear` (constant) or `poisson`; fio's latencies
//!   count from the issue, diskscope's `resp_*` from the intended start (a caveat line says so).
//!
//! - checksum: fio never reads back the data it moves; diskscope XORs it (`--checksum xor`, the
//!   default). Through the page cache a caveat line says so and names `--checksum none`, the
//!   run that does fio's work.
//!
//! fio divides bytes by the longest job's runtime; diskscope by the wall span of all workers
//! (docs/accuracy.md).

use crate::config::spec::RunSpec;
use crate::config::{Arrival, Buffers, CacheMode, Method, Op, Pattern, Prealloc, SubmitPolicy};
use crate::engine::BufferKind;

/// fio's engines that diskscope runs, each as the method that does the same I/O and, where the
/// two differ, what a plan says about it: the one table behind `--batch job.fio` (fiojob's
/// `ioengine=`) and `compare`'s reading of fio's JSON (`fio:psync` is `pread`). The other way,
/// a method's engine for `run --fio`, is `engine::Caps::fio_engine`.
pub const ENGINES: &[(&str, Method, Option<&str>)] = &[
    ("psync", Method::Pread, None),
    ("sync", Method::Read, None),
    ("mmap", Method::Mmap, None),
    ("io_uring", Method::IoUring, None),
    (
        "pvsync",
        Method::Pread,
        Some("preadv/pwritev with one vector per call, as pread/pwrite"),
    ),
    (
        "pvsync2",
        Method::Pread,
        Some("preadv2/pwritev2 without its flags (no hipri), as pread/pwrite"),
    ),
    (
        "libaio",
        Method::IoUring,
        Some("diskscope has no libaio engine; io_uring does the same asynchronous I/O at the same depth"),
    ),
];

/// The method fio's `engine` runs as (case-insensitive), with the note where they differ; None
/// for an engine diskscope has no method for.
pub fn method_of_engine(engine: &str) -> Option<(Method, Option<&'static str>)> {
    ENGINES
        .iter()
        .find(|(name, _, _)| name.eq_ignore_ascii_case(engine))
        .map(|(_, m, note)| (*m, *note))
}

/// The engines of [`ENGINES`], for messages: `psync, sync, mmap, ...`.
pub fn engine_names() -> String {
    ENGINES
        .iter()
        .map(|(n, _, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The fio invocation for `spec`, given the bytes the run covers (`total_bytes`: the sequential
/// range, or the span random offsets are drawn from). The first line is the command; any
/// further lines start with `# ` and say where fio's I/O still differs.
pub fn fio_command(spec: &RunSpec, total_bytes: u64) -> String {
    let (args, caveats) = fio_args(spec, total_bytes);
    let mut out = std::iter::once("fio".to_string())
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ");
    for c in caveats {
        out.push_str("\n# ");
        out.push_str(&c);
    }
    out
}

/// The bytes a run of `spec` covers, as `runner::prepare` computes them: for a write the blocks
/// it writes (1 GiB when only time-bounded); for a read the file size (`file_size_bytes`),
/// clipped to the blocks asked for when sequential.
pub fn total_bytes_of(spec: &RunSpec, file_size_bytes: u64) -> u64 {
    let bs = spec.setup.block_size_bytes;
    match (spec.setup.op, spec.target.block_count) {
        (Op::Write, Some(c)) => bs * c,
        (Op::Write, None) => crate::runner::DEFAULT_WRITE_SPAN.next_multiple_of(bs),
        (Op::Read, Some(c)) if spec.setup.pattern == Pattern::Sequential => {
            (bs * c).min(file_size_bytes)
        }
        (Op::Read, _) => file_size_bytes,
    }
}

/// The arguments after `fio` (each one shell-quoted `--key=value`) and the caveats.
pub fn fio_args(spec: &RunSpec, total_bytes: u64) -> (Vec<String>, Vec<String>) {
    let mut a: Vec<(String, String)> = Vec::new();
    let mut caveats = Vec::new();
    let mut set = |k: &str, v: String| a.push((k.to_string(), v));
    let bs = spec.setup.block_size_bytes;
    let threads = spec.setup.threads.max(1) as u64;
    set("name", "diskscope".into());
    set(
        "filename",
        fio_filename(&spec.target.path.to_string_lossy()),
    );
    let rw = match (spec.setup.op, spec.setup.pattern) {
        _ if spec.is_mixed() && spec.setup.pattern == Pattern::Sequential => "rw",
        _ if spec.is_mixed() => "randrw",
        (Op::Read, Pattern::Sequential) => "read",
        (Op::Write, Pattern::Sequential) => "write",
        (Op::Read, Pattern::Random) => "randread",
        (Op::Write, Pattern::Random) => "randwrite",
    };
    set("rw", rw.into());
    if let Some(pct) = spec.setup.mix_read_pct {
        set("rwmixread", pct.to_string());
    }
    set("bs", bs.to_string());
    let caps = crate::engine::caps(spec.setup.method);
    set("ioengine", caps.fio_engine.into());
    if caps.queued {
        set("iodepth", spec.setup.queue_depth.to_string());
        set("fixedbufs", "1".into());
        let batch = match spec.setup.submit {
            SubmitPolicy::Batch => spec.setup.queue_depth,
            SubmitPolicy::Each => 1,
        };
        set("iodepth_batch_submit", batch.to_string());
        set("iodepth_batch_complete_min", "1".into());
    }
    set("direct", u8::from(spec.setup.direct).to_string());
    if spec.setup.op == Op::Read {
        let invalidate = matches!(spec.setup.cache, CacheMode::Cold | CacheMode::ColdAll);
        set("invalidate", u8::from(invalidate).to_string());
    }
    match spec.setup.pattern {
        Pattern::Sequential => {
            let blocks = total_bytes.div_ceil(bs);
            let per_job = blocks / threads * bs;
            if threads > 1 {
                set("numjobs", threads.to_string());
                set("size", per_job.to_string());
                set("offset_increment", per_job.to_string());
                if !blocks.is_multiple_of(threads) {
                    caveats.push(format!(
                        "{blocks} blocks do not split evenly over {threads} jobs: diskscope gives \
                         some workers one block more; fio's jobs read {per_job} bytes each"
                    ));
                }
            } else {
                set("size", total_bytes.to_string());
            }
        }
        Pattern::Random => {
            set("size", total_bytes.to_string());
            set("norandommap", "1".into());
            set("randrepeat", "0".into());
            if threads > 1 {
                set("numjobs", threads.to_string());
            }
            if let Some(c) = spec.target.block_count {
                set("number_ios", (c / threads).max(1).to_string());
                if !c.is_multiple_of(threads) {
                    caveats.push(format!(
                        "{c} operations do not split evenly over {threads} jobs"
                    ));
                }
            }
        }
    }
    if let Some(d) = spec.target.duration {
        set("runtime", format!("{}ms", d.as_millis().max(1)));
        if spec.target.block_count.is_none() || spec.target.loop_range {
            set("time_based", "1".into());
        }
    }
    if spec.setup.op == Op::Write {
        if spec.setup.write_sync.fsync() {
            set("end_fsync", "1".into());
        }
        if spec.setup.write_sync.dsync() {
            set("sync", "dsync".into());
        }
        let fallocate = match spec.setup.prealloc {
            Prealloc::Native if !spec.safety.overwrite_in_place => "native",
            _ => "none",
        };
        set("fallocate", fallocate.into());
    }
    if threads > 1 {
        set("thread", "1".into());
        set("group_reporting", "1".into());
    }
    if let Some(rate) = spec.setup.rate() {
        // Open loop: fio's rate_iops is per job (each of numjobs issues at it), a whole
        // number; diskscope's rate is over all threads.
        let per_job = (rate / threads as f64).round().max(1.0) as u64;
        set("rate_iops", per_job.to_string());
        let process = match spec.setup.arrival {
            Arrival::Constant => "linear",
            Arrival::Poisson => "poisson",
        };
        set("rate_process", process.into());
        if (per_job as f64 * threads as f64 - rate).abs() > 0.5 {
            caveats.push(format!(
                "fio's rate_iops is a whole number per job: {per_job}/s × {threads} jobs, where \
                 diskscope asks {rate:.1}/s over all threads"
            ));
        }
        caveats.push(
            "fio's latencies count from each I/O's issue (diskscope's lat_* service times); \
             diskscope's resp_* count from the intended start (docs/openloop.md)"
                .into(),
        );
    }
    caveats.extend(caps.fio_caveat(spec.setup.op).map(String::from));
    if let Some(c) = checksum_caveat(spec) {
        caveats.push(c);
    }
    let slots = caps.slots(spec.setup.queue_depth) as u64;
    if slots > 0 {
        let kind = crate::engine::buffer_kind_predicted(
            spec.setup.buffers,
            spec.setup.direct,
            bs.saturating_mul(slots),
            threads,
        );
        let thp_mode = crate::engine::thp_mode();
        let (iomem, caveat) = iomem_of(kind, thp_mode.as_deref(), bs.saturating_mul(slots));
        set("iomem", iomem.into());
        caveats.extend(caveat);
        if spec.setup.buffers == Buffers::Auto && spec.setup.direct {
            caveats.push(format!(
                "--buffers auto: diskscope picks the memory when the run starts ({} expected; its \
                 note names what it got); --buffers {} pins it",
                kind.as_str(),
                kind.as_str()
            ));
        }
    }
    if spec.setup.cache == CacheMode::ColdAll && spec.setup.op == Op::Read {
        caveats.push("cold-all: run `sync; echo 3 > /proc/sys/vm/drop_caches` (root) first".into());
    }
    if spec.setup.cache == CacheMode::Warm && spec.setup.op == Op::Read {
        caveats.push("warm: read the file once first (e.g. `cat FILE > /dev/null`)".into());
    }
    let args = a
        .into_iter()
        .map(|(k, v)| shell_quote(&format!("--{k}={v}")))
        .collect();
    (args, caveats)
}

/// The caveat of a run that XORs its data through the page cache (`--checksum xor`, the
/// default): fio never touches the data it moves, and from the page cache the XOR is a fifth of
/// the time (~20 µs per MiB on a warm 1 MiB pread), so diskscope's figure is below fio's by that
/// much. `None` with `--checksum none` (the same work as fio) and with O_DIRECT (the device,
/// not the CPU, sets the pace).
fn checksum_caveat(spec: &RunSpec) -> Option<String> {
    if !spec.setup.checksum.xors() || spec.setup.direct {
        return None;
    }
    let moved = if spec.setup.op == Op::Read || spec.is_mixed() {
        "reads"
    } else {
        "writes"
    };
    Some(format!(
        "diskscope XORs every byte it {moved} and fio does not; to compare the I/O alone, run \
         diskscope with --checksum none"
    ))
}

/// fio's `--iomem` for buffers of `kind` (`thp_mode`: the system's transparent huge page mode;
/// `buffer_bytes`: one job's buffers), and the caveat when fio's memory still differs.
fn iomem_of(
    kind: BufferKind,
    thp_mode: Option<&str>,
    buffer_bytes: u64,
) -> (&'static str, Option<String>) {
    let always = thp_mode == Some("always");
    match kind {
        BufferKind::Pages if always && buffer_bytes >= crate::engine::HUGE_PAGE_BYTES as u64 => (
            "mmap",
            Some(
                "transparent huge pages are `always` here: fio's mmap buffers may get them, \
                 diskscope's plain buffers never do (MADV_NOHUGEPAGE)"
                    .into(),
            ),
        ),
        BufferKind::Pages => ("mmap", None),
        BufferKind::MallocOffset if buffer_bytes < 128 << 10 => (
            "malloc",
            Some(
                "fio's malloc buffer of less than 128 KiB comes from the heap, 16-byte aligned \
                 at no fixed place in its page; diskscope's starts 16 bytes past a page"
                    .into(),
            ),
        ),
        BufferKind::MallocOffset => ("malloc", None),
        BufferKind::HugeTlb => ("mmaphuge", None),
        BufferKind::TransparentHuge if always => ("mmap", None),
        BufferKind::TransparentHuge => (
            "mmap",
            Some(
                "diskscope's buffers are transparent huge pages, which fio never asks for: it \
                 gets them only with /sys/kernel/mm/transparent_hugepage/enabled set to always \
                 (or run both with --buffers hugetlb, fio --iomem=mmaphuge, once hugetlb pages \
                 are reserved)"
                    .into(),
            ),
        ),
    }
}

/// The companion text of a sweep experiment: per point, a `# ` line naming it and the fio
/// command. `file_size_bytes` is the size of the sweep's file.
pub fn sweep_companion(experiment: &str, points: &[RunSpec], file_size_bytes: u64) -> String {
    let mut out = format!(
        "# fio command lines doing the same I/O as the points of experiment `{experiment}` \
         (one per point; lines starting with # are notes)\n"
    );
    for (i, s) in points.iter().enumerate() {
        out.push_str(&format!(
            "# point {}: {} {} {} bs={} threads={} qd={} direct={} cache={} buffers={}{}{}\n",
            i + 1,
            s.setup.op,
            s.setup.method,
            s.setup.pattern,
            s.setup.block_size_bytes,
            s.setup.threads,
            s.setup.queue_depth,
            s.setup.direct,
            s.setup.cache,
            s.setup.buffers,
            match s.setup.rate() {
                Some(r) => format!(" rate={r:.0}/s arrival={}", s.setup.arrival),
                None => String::new(),
            },
            if s.setup.checksum.xors() {
                String::new()
            } else {
                format!(" checksum={}", s.setup.checksum)
            }
        ));
        out.push_str(&fio_command(s, total_bytes_of(s, file_size_bytes)));
        out.push('\n');
    }
    out
}

/// fio splits `filename` at `:`; a literal colon is written `\:`.
fn fio_filename(path: &str) -> String {
    path.replace(':', "\\:")
}

/// Quotes `s` for a shell when it holds anything beyond a safe set; text with a control
/// character (an escape sequence in a path) is written in ANSI-C quotes, so the printed line
/// stays one valid shell word per argument and never carries a raw control to the terminal
/// (see [`crate::fsguard::shell_quote`]).
pub fn shell_quote(s: &str) -> String {
    crate::fsguard::shell_quote(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_a_method_is_written_as_reads_back_as_that_method_and_the_readers_agree() {
        for &m in Method::ALL {
            let engine = crate::engine::caps(m).fio_engine;
            let (back, _) = method_of_engine(engine).unwrap_or_else(|| panic!("{engine}"));
            // fio has no stdio-style buffer: `buffered` is written as `sync`, read(2).
            let expected = if m == Method::Buffered {
                Method::Read
            } else {
                m
            };
            assert_eq!(back, expected, "{m} → {engine}");
        }
        assert_eq!(
            method_of_engine("PVSYNC2").map(|(m, _)| m),
            Some(Method::Pread)
        );
        assert!(
            method_of_engine("libaio").unwrap().1.is_some(),
            "a note where they differ"
        );
        assert!(method_of_engine("posixaio").is_none());
        assert!(engine_names().starts_with("psync, sync, mmap, io_uring"));
    }

    #[test]
    fn paths_with_spaces_quotes_and_colons_survive_the_shell_and_fio() {
        let spec = RunSpec::new("/tmp/a b:c'd");
        let cmd = fio_command(&spec, 4096);
        assert!(cmd.contains(r"'--filename=/tmp/a b\:c'\''d'"), "{cmd}");
    }

    #[test]
    fn the_fio_line_says_diskscope_xors_through_the_page_cache_unless_checksum_none() {
        let says = |spec: &RunSpec| fio_command(spec, 1 << 20).contains("--checksum none");
        let mut spec = RunSpec::new("/f");
        assert!(says(&spec), "{}", fio_command(&spec, 1 << 20));
        spec.setup.checksum = crate::config::Checksum::None;
        assert!(!says(&spec), "{}", fio_command(&spec, 1 << 20));
        spec.setup.checksum = crate::config::Checksum::Xor;
        spec.setup.direct = true;
        assert!(!says(&spec), "O_DIRECT: {}", fio_command(&spec, 1 << 20));
    }

    #[test]
    fn the_fio_line_names_the_memory_that_matches_the_buffers() {
        let mut spec = RunSpec::new("/f");
        for (b, iomem) in [
            (Buffers::Plain, "--iomem=mmap"),
            (Buffers::Malloc, "--iomem=malloc"),
            (Buffers::HugeTlb, "--iomem=mmaphuge"),
        ] {
            spec.setup.buffers = b;
            let (args, _) = fio_args(&spec, 1 << 20);
            assert!(args.iter().any(|a| a == iomem), "{b}: {args:?}");
        }
        spec.setup.method = Method::Mmap;
        let (args, _) = fio_args(&spec, 1 << 20);
        assert!(!args.iter().any(|a| a.starts_with("--iomem")), "{args:?}");
        // fio never asks for THP: only `always` gives it huge pages.
        let thp = BufferKind::TransparentHuge;
        assert!(iomem_of(thp, Some("madvise"), 1 << 20).1.is_some());
        assert_eq!(iomem_of(thp, Some("always"), 1 << 20), ("mmap", None));
        let plain = BufferKind::Pages;
        assert!(iomem_of(plain, Some("always"), 4 << 20).1.is_some());
        assert_eq!(iomem_of(plain, Some("madvise"), 4 << 20), ("mmap", None));
    }
}
