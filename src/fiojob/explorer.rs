//! `diskscope FILE --fio-job job.fio`: the explorer's starting settings from a job's first
//! section. The job is read and checked exactly as `--batch` reads it ([`super::map`]: every
//! option mapped or refused with its line), then what the explorer cannot do is refused with
//! FILE:LINE too: the explorer reads the whole of FILE (no `size`, `number_ios`, `loops` or
//! other file), mixes only as its `w`/`W` do (`rw=randrw`/`rw=rw` with `rwmixread` or
//! `rwmixwrite` become its share of reads: on the scratch file, never at a rate), and turns its knobs only within its own limits
//! (handed in by the caller, [`ExplorerLimits`], since this layer is below the explorer's). The
//! result is plain settings ([`ExplorerStart`]), which the front end turns into the explorer's.

use super::error::FioError;
use super::map::{map_job, Mapped};
use super::parse::{parse_ini_file, Job, Opt};
use crate::config::{CacheMode, Iops, Op, Setup};
use std::path::Path;
use std::time::Duration;

/// What the explorer's knobs can reach (its own constants, handed in by the front end).
#[derive(Debug, Clone, Copy)]
pub struct ExplorerLimits {
    pub max_threads: usize,
    pub max_queue_depth: u32,
    pub max_block_size_bytes: u64,
}

/// The explorer's starting settings, as a job asks for them.
#[derive(Debug, Clone, PartialEq)]
pub struct ExplorerStart {
    /// The job's name (its section, or `name=`).
    pub job: String,
    /// The setup the job asks for: io_uring's depth (1 for the synchronous engines, as fio
    /// runs them); `cache` cold where FILE is to be kept out of the page cache (`invalidate=1`,
    /// fio's default for reads), else as-is; `rate_iops` the open loop (`rate_iops` ×
    /// `numjobs`, whole operations per second; the explorer's `R`), constant spacing; a mix
    /// (`rw=randrw`/`rw=rw`, the explorer's `W`) writes, so it runs on the explorer's scratch
    /// file, as `w` does.
    pub setup: Setup,
    /// `runtime`: each run's time bound; `None` runs until stopped.
    pub run: Option<Duration>,
}

/// The starting settings of the first job of the fio job file `job_path` for exploring `file`;
/// an error names the file and line of the option at fault (or of the job's header).
pub fn explorer_start(
    job_path: &Path,
    file: &Path,
    limits: &ExplorerLimits,
) -> Result<ExplorerStart, FioError> {
    let display = crate::text::shown_path(job_path).into_owned();
    let jobs = parse_ini_file(job_path, &display)?;
    let Some(first) = jobs.first() else {
        return Err(FioError::refused(
            &super::error::Loc {
                file: display,
                line: 1,
            },
            "job",
            "the file holds no job section; add one such as [explore]",
        ));
    };
    let m = map_job(first, 0, &jobs)?;
    start_of(&m, first, file, limits)
}

/// The explorer's settings of a mapped job, or the option it cannot honour.
fn start_of(
    m: &Mapped,
    job: &Job,
    file: &Path,
    limits: &ExplorerLimits,
) -> Result<ExplorerStart, FioError> {
    let opt = |key: &str| find(job, key);
    let refuse = |key: &str, why: &str| -> FioError {
        match opt(key) {
            Some(o) => FioError::refused(&o.loc, &o.key, why),
            None => FioError::refused(&job.header, key, why),
        }
    };
    if m.setup.mix_read_pct.is_some() && !crate::config::MIX_METHODS.contains(&m.setup.method) {
        return Err(refuse(
            "ioengine",
            &format!(
                "the explorer mixes reads and writes with psync (pread) or io_uring, not {}; \
                 change ioengine, or the mix (rw)",
                m.setup.method
            ),
        ));
    }
    if m.setup.mix_read_pct.is_some() && m.setup.rate().is_some() {
        // `run` refuses the same (config::spec::check_mix): no open loop of a mix yet.
        return Err(refuse(
            "rate_iops",
            "the explorer does not mix reads and writes at a rate; remove rate_iops, or the mix (rw)",
        ));
    }
    if let Some((path, o)) = &m.target {
        if !same_file(path, file) {
            return Err(FioError::refused(
                &o.loc,
                &o.key,
                &format!(
                    "the explorer explores FILE ({}), not {}; remove it or give the same file",
                    crate::text::shown_path(file),
                    crate::text::shown_path(path)
                ),
            ));
        }
    }
    for key in ["size", "filesize", "io_size", "number_ios", "offset"] {
        if opt(key).is_some() {
            return Err(refuse(
                key,
                "the explorer covers the whole of FILE until stopped; remove it, or run the job with --batch",
            ));
        }
    }
    if m.setup.rate().is_some() && m.setup.arrival != crate::config::Arrival::Constant {
        return Err(refuse(
            "rate_process",
            "the explorer's rate (R) spaces operations evenly; remove it (linear), or run the job with --batch",
        ));
    }
    if m.reps > 1 {
        return Err(refuse(
            "loops",
            "the explorer runs until stopped, with no repetitions; remove it, or run the job with --batch",
        ));
    }
    if m.setup.threads > limits.max_threads {
        return Err(refuse(
            "numjobs",
            &format!("the explorer runs at most {} threads", limits.max_threads),
        ));
    }
    if crate::engine::caps(m.setup.method).queued && m.setup.queue_depth > limits.max_queue_depth {
        return Err(refuse(
            "iodepth",
            &format!(
                "the explorer's queue is at most {} deep",
                limits.max_queue_depth
            ),
        ));
    }
    if m.setup.block_size_bytes > limits.max_block_size_bytes {
        return Err(refuse(
            "bs",
            &format!(
                "the explorer's blocks are at most {}",
                crate::size::format_size(limits.max_block_size_bytes)
            ),
        ));
    }
    let s = &m.setup;
    let cold = s.op == Op::Read && matches!(s.cache, CacheMode::Cold | CacheMode::ColdAll);
    Ok(ExplorerStart {
        job: m.name.clone(),
        setup: Setup {
            queue_depth: if crate::engine::caps(s.method).queued {
                s.queue_depth
            } else {
                1
            },
            cache: if cold {
                CacheMode::Cold
            } else {
                CacheMode::AsIs
            },
            rate_iops: s.rate().map(|r| Iops(r.round().max(1.0))),
            ..*s
        },
        run: m.runtime,
    })
}

/// The job's option `key` (its own or inherited from `[global]`), by fio's canonical name.
fn find<'a>(job: &'a Job, key: &str) -> Option<&'a Opt> {
    job.opts
        .iter()
        .rev()
        .find(|o| super::options::canonical(&o.key) == key)
}

/// Whether two paths name the same file (the same inode, or the same text when either is
/// missing).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => (x.dev(), x.ino()) == (y.dev(), y.ino()),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Method, Pattern};

    const LIMITS: ExplorerLimits = ExplorerLimits {
        max_threads: 64,
        max_queue_depth: 256,
        max_block_size_bytes: 64 << 20,
    };

    fn start(text: &str) -> Result<ExplorerStart, String> {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("j.fio");
        std::fs::write(&job, text).unwrap();
        let file = dir.path().join("data");
        std::fs::write(&file, [0u8; 4096]).unwrap();
        explorer_start(&job, &file, &LIMITS).map_err(|e| {
            e.to_string()
                .replace(&format!("{}:", crate::text::shown_path(&job)), "j.fio:")
        })
    }

    #[test]
    fn a_jobs_first_section_becomes_the_explorers_starting_settings() {
        let s = start(
            "[global]\nioengine=io_uring\ndirect=1\n\n[rand-4k-qd32]\nrw=randread\nbs=4k\n\
             iodepth=32\nnumjobs=2\nruntime=5\n\n[second]\nrw=write\n",
        )
        .unwrap();
        assert_eq!(
            s,
            ExplorerStart {
                job: "rand-4k-qd32".into(),
                setup: Setup {
                    op: Op::Read,
                    method: Method::IoUring,
                    block_size_bytes: 4096,
                    threads: 2,
                    queue_depth: 32,
                    direct: true,
                    cache: s.setup.cache,
                    pattern: Pattern::Random,
                    ..Setup::default()
                },
                run: Some(Duration::from_secs(5)),
            }
        );
        let w = start("[w]\nrw=write\nbs=1m\nioengine=psync\nend_fsync=1\n").unwrap();
        let ws = w.setup;
        assert_eq!(
            (
                ws.op,
                ws.method,
                ws.block_size_bytes,
                ws.queue_depth,
                ws.write_sync.fsync()
            ),
            (Op::Write, Method::Pread, 1 << 20, 1, true)
        );
    }

    #[test]
    fn what_the_explorer_cannot_do_is_refused_at_its_line() {
        for (text, want) in [
            ("[m]\nrw=randrw\nrwmixread=70\nrate_iops=100\n", "j.fio:4: "),
            ("[s]\nrw=read\nsize=1m\n", "j.fio:3: "),
            ("[n]\nnumjobs=100\n", "j.fio:2: "),
            ("[f]\nfilename=/etc/hostname\n", "j.fio:2: "),
            ("[l]\nloops=3\n", "j.fio:2: "),
            ("[x]\nverify=md5\n", "j.fio:2: "),
        ] {
            let e = start(text).unwrap_err();
            assert!(e.starts_with(want), "{text}: {e}");
        }
    }
}
