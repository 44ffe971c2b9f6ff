//! The memory a run's I/O buffers take, bounded before anything is allocated.
//!
//! Each worker allocates `block size` bytes per operation it can have in flight (`queue depth`
//! of them for io_uring, one otherwise; mmap none). Asked naively, `--threads 64 --queue-depth
//! 1024` with 1 MiB blocks is 64 GiB, and the OOM killer ends the run. So [`fit_jobs`] first
//! trims each job to what it can use — a block never larger than the bytes the worker can reach
//! (its range, or the span random offsets are drawn from), no more slots than operations it will
//! do — which changes no I/O the run does; then [`check_budget`] refuses a run whose buffers
//! would still take more than [`DEFAULT_SHARE_OF_AVAILABLE`] of the memory the system has
//! available (`MemAvailable`), or more than `--max-memory` when that is given. The error names
//! the flags that set the size and the override.

use crate::config::{usage, Method, Pattern, RunSpec};
use crate::engine::{WorkerJob, BUF_ALIGN};
use crate::size::{format_bytes_approx, format_size};

/// Share of `MemAvailable` a run's buffers may take without `--max-memory`.
pub const DEFAULT_SHARE_OF_AVAILABLE: f64 = 0.5;

/// Trims each job's block size and queue depth to what it can use: the block to the bytes the
/// worker can reach (rounded up to [`BUF_ALIGN`] with O_DIRECT, which needs aligned lengths),
/// the queue depth to the operations it will do. The I/O the run does is unchanged: a block
/// longer than the reachable bytes is clipped to them anyway.
pub fn fit_jobs(jobs: &mut [WorkerJob]) {
    for job in jobs {
        let reach = match job.pattern {
            Pattern::Random => job.span,
            Pattern::Sequential => job.range.end - job.range.start,
        };
        if reach == 0 {
            // Nothing to read or write (more threads than blocks): no buffer worth the name.
            job.block_size = 1;
            job.queue_depth = 1;
            continue;
        }
        let cap = if job.direct {
            reach.next_multiple_of(BUF_ALIGN as u64)
        } else {
            reach
        };
        if job.block_size as u64 > cap {
            job.block_size = cap as usize;
        }
        let ops = match job.pattern {
            Pattern::Sequential if !job.loop_range => Some(reach.div_ceil(job.block_size as u64)),
            Pattern::Random => job.max_ops,
            Pattern::Sequential => None,
        };
        if let Some(ops) = ops {
            job.queue_depth = job.queue_depth.min(ops.clamp(1, u32::MAX as u64) as u32);
        }
    }
}

/// Bytes of I/O buffers the jobs will allocate with `method`.
pub fn buffer_bytes(method: Method, jobs: &[WorkerJob]) -> u64 {
    jobs.iter()
        .map(|j| {
            let one = (j.block_size.max(1) as u64).next_multiple_of(BUF_ALIGN as u64);
            match method {
                Method::Mmap => 0,
                Method::IoUring => one * j.queue_depth.max(1) as u64,
                Method::Read | Method::Pread => one,
                // The stdio-like buffer in front of the calls, at most a few pages.
                Method::Buffered => one + 64 * 1024,
            }
        })
        .sum()
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
pub fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Refuses a run whose buffers exceed the budget: `--max-memory` if given, else
/// [`DEFAULT_SHARE_OF_AVAILABLE`] of `available_bytes` (no check when that is unknown).
pub fn check_budget(
    spec: &RunSpec,
    needed_bytes: u64,
    available_bytes: Option<u64>,
) -> anyhow::Result<()> {
    let (limit, what) = match (spec.max_memory_bytes, available_bytes) {
        (Some(max), _) => (
            max,
            format!("the --max-memory limit of {}", format_size(max)),
        ),
        (None, Some(avail)) => (
            (avail as f64 * DEFAULT_SHARE_OF_AVAILABLE) as u64,
            format!(
                "half of the {} of memory available",
                format_size(avail.next_multiple_of(1 << 20))
            ),
        ),
        (None, None) => return Ok(()),
    };
    if needed_bytes <= limit {
        return Ok(());
    }
    let slots = if spec.method == Method::IoUring {
        format!(" x --queue-depth {}", spec.queue_depth)
    } else {
        String::new()
    };
    Err(usage(format!(
        "--max-memory: the run needs {} of I/O buffers (--threads {}{slots} x BLOCK_SIZE {}), \
         more than {what}; lower --threads, --queue-depth or BLOCK_SIZE, or pass --max-memory {} \
         to allow it",
        format_bytes_approx(needed_bytes),
        spec.threads,
        format_size(spec.block_size_bytes),
        format_size(needed_bytes.next_multiple_of(1 << 30)),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(range: std::ops::Range<u64>, bs: usize, qd: u32) -> WorkerJob {
        WorkerJob {
            worker: 0,
            file: std::fs::File::open("/dev/null").unwrap(),
            op: crate::config::Op::Read,
            block_size: bs,
            span: range.end,
            range,
            pattern: Pattern::Sequential,
            loop_range: false,
            max_ops: None,
            queue_depth: qd,
            seed: 1,
            direct: false,
        }
    }

    #[test]
    fn a_block_larger_than_the_file_is_trimmed_to_it_and_slots_to_the_blocks() {
        let mut jobs = vec![
            job(0..1_000_000, 1 << 30, 4),
            job(0..(8 << 20), 1 << 20, 64),
        ];
        fit_jobs(&mut jobs);
        assert_eq!((jobs[0].block_size, jobs[0].queue_depth), (1_000_000, 1));
        assert_eq!((jobs[1].block_size, jobs[1].queue_depth), (1 << 20, 8));
        jobs[0].direct = true;
        jobs[0].block_size = 1 << 30;
        fit_jobs(&mut jobs[..1]);
        assert_eq!(jobs[0].block_size, 1_003_520);
    }

    #[test]
    fn buffers_beyond_half_the_available_memory_are_refused_naming_the_flags() {
        let mut spec = RunSpec::new("/x");
        spec.method = Method::IoUring;
        spec.threads = 64;
        spec.queue_depth = 1024;
        let e = check_budget(&spec, 64 << 30, Some(16 << 30)).unwrap_err();
        let msg = e.to_string();
        for needle in ["--threads 64", "--queue-depth 1024", "--max-memory 64G"] {
            assert!(msg.contains(needle), "{msg}");
        }
        assert!(check_budget(&spec, 7 << 30, Some(16 << 30)).is_ok());
        spec.max_memory_bytes = Some(64 << 30);
        assert!(check_budget(&spec, 64 << 30, Some(16 << 30)).is_ok());
        spec.max_memory_bytes = Some(1 << 20);
        assert!(check_budget(&spec, 2 << 20, None).is_err());
    }
}
