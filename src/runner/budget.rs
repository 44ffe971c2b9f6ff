//! The memory a run's I/O buffers take, bounded before anything is allocated.
//!
//! Each worker allocates `block size` bytes per operation it can have in flight (`queue depth`
//! of them for io_uring, one otherwise; mmap none). Asked naively, `--threads 64 --queue-depth
//! 1024` with 1 MiB blocks is 64 GiB, and the OOM killer ends the run. So [`fitted`] first
//! trims each worker's share to what it can use — a block never larger than the bytes the worker can reach
//! (its range, or the span random offsets are drawn from), no more slots than operations it will
//! do — which changes no I/O the run does; then [`check_budget`] refuses a run whose buffers
//! would still take more than [`DEFAULT_SHARE_OF_AVAILABLE`] of the memory this process may
//! still take, or more than `--max-memory` when that is given. That memory is the least of
//! `MemAvailable`, the memory cgroup's limit minus what it holds, and `RLIMIT_AS` minus the
//! address space mapped (`engine::room`): in a 1 GiB container on a 23 GiB machine, or under
//! `ulimit -v`, the machine's `MemAvailable` alone let through runs the OOM killer ended or the
//! allocator aborted. Half of it leaves room for what is not a buffer (thread stacks, the
//! allocator's arenas, the page cache the run itself fills in a cgroup). The refusal is a
//! typed [`BudgetExceeded`], so each front end names its own controls: the command line its
//! flags and the override, the explorer its keys.

use crate::config::spec::RunSpec;
use crate::config::{Method, Pattern};
use crate::engine::BUF_ALIGN;
use crate::size::{format_bytes_approx, format_size};
use std::ops::Range;

/// Share of `MemAvailable` a run's buffers may take without `--max-memory`.
pub const DEFAULT_SHARE_OF_AVAILABLE: f64 = 0.5;

/// One worker's share of a run, planned before any file is opened or created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    /// Sequential range of the worker (random: the whole span).
    pub range: Range<u64>,
    /// Random pattern: operations to do, if bounded by count.
    pub max_ops: Option<u64>,
}

/// The block size and queue depth a worker with `share` of a run over `span` bytes needs: the
/// block no larger than the bytes it can reach (rounded up to [`BUF_ALIGN`] with O_DIRECT, which
/// needs aligned lengths), no more slots than operations it will do. The I/O is unchanged: a
/// block longer than the reachable bytes is clipped to them anyway. A worker with nothing to do
/// (more threads than blocks) gets a 1-byte block and one slot.
pub fn fitted(spec: &RunSpec, share: &Share, span: u64, loop_range: bool) -> (usize, u32) {
    let reach = match spec.setup.pattern {
        Pattern::Random => span,
        Pattern::Sequential => share.range.end - share.range.start,
    };
    if reach == 0 {
        return (1, 1);
    }
    let cap = if spec.setup.direct {
        reach.next_multiple_of(BUF_ALIGN as u64)
    } else {
        reach
    };
    let block = spec.setup.block_size_bytes.min(cap);
    let ops = match spec.setup.pattern {
        Pattern::Sequential if !loop_range => Some(reach.div_ceil(block)),
        Pattern::Random => share.max_ops,
        Pattern::Sequential => None,
    };
    let qd = match ops {
        Some(ops) => spec
            .setup
            .queue_depth
            .min(ops.clamp(1, u32::MAX as u64) as u32),
        None => spec.setup.queue_depth,
    };
    (block as usize, qd.max(1))
}

/// Bytes of I/O buffers workers of `(block size, queue depth)` allocate with `method`.
pub fn buffer_bytes(method: Method, fits: &[(usize, u32)]) -> u64 {
    fits.iter()
        .map(|&(block, qd)| {
            let one = (block.max(1) as u64).next_multiple_of(BUF_ALIGN as u64);
            let caps = crate::engine::caps(method);
            one * caps.slots(qd) as u64 + caps.extra_buffer_bytes
        })
        .sum()
}

/// The memory this process may still take, bytes: the least of `MemAvailable`, the memory
/// cgroup's room and `RLIMIT_AS`'s (read where the engine's setup reads it; see
/// `engine::room`).
pub use crate::engine::setup::mem_available_bytes;

/// The most buffer memory allowed and how to say it: `--max-memory` if given, else
/// [`DEFAULT_SHARE_OF_AVAILABLE`] of `available_bytes`; `None` when neither is known.
pub fn limit_of(
    max_memory_bytes: Option<u64>,
    available_bytes: Option<u64>,
) -> Option<(u64, String)> {
    match (max_memory_bytes, available_bytes) {
        (Some(max), _) => Some((
            max,
            format!("the --max-memory limit of {}", format_size(max)),
        )),
        (None, Some(avail)) => Some((
            (avail as f64 * DEFAULT_SHARE_OF_AVAILABLE) as u64,
            format!(
                "half of the {} of memory available (the least of MemAvailable, the memory \
                 cgroup's limit and RLIMIT_AS)",
                format_size(avail.next_multiple_of(1 << 20))
            ),
        )),
        (None, None) => None,
    }
}

/// The figures behind [`buffer_bytes`], as the refusal states them: what each worker was
/// fitted to, so the product on the page is the product that was computed (`4 workers x queue
/// depth 8 x 1.00 MiB`, or a sum when workers differ).
pub fn describe_fits(method: Method, fits: &[(usize, u32)]) -> String {
    let caps = crate::engine::caps(method);
    let mut groups: Vec<((usize, u32), usize)> = Vec::new();
    for &f in fits {
        let f = (f.0, caps.queue_depth(f.1));
        match groups.iter_mut().find(|(g, _)| *g == f) {
            Some((_, n)) => *n += 1,
            None => groups.push((f, 1)),
        }
    }
    let one = |&((block, qd), n): &((usize, u32), usize)| {
        let block = format_size((block.max(1) as u64).next_multiple_of(BUF_ALIGN as u64));
        let workers = format!("{n} worker{}", if n == 1 { "" } else { "s" });
        if caps.queued {
            format!("{workers} x queue depth {qd} x {block}")
        } else if caps.extra_buffer_bytes > 0 {
            let extra = format_size(caps.extra_buffer_bytes);
            format!("{workers} x ({block} + {extra})")
        } else {
            format!("{workers} x {block}")
        }
    };
    groups.iter().map(one).collect::<Vec<_>>().join(" + ")
}

/// Refuses a run whose buffers, for workers fitted to `fits` (see [`fitted`]), exceed the
/// budget: `--max-memory` if given, else [`DEFAULT_SHARE_OF_AVAILABLE`] of `available_bytes`
/// (no check when that is unknown).
pub fn check_budget(
    spec: &RunSpec,
    fits: &[(usize, u32)],
    available_bytes: Option<u64>,
) -> anyhow::Result<()> {
    let needed_bytes = buffer_bytes(spec.setup.method, fits);
    let Some((limit, what)) = limit_of(spec.safety.max_memory_bytes, available_bytes) else {
        return Ok(());
    };
    if needed_bytes <= limit {
        return Ok(());
    }
    Err(anyhow::Error::new(BudgetExceeded {
        needed_bytes,
        fits: describe_fits(spec.setup.method, fits),
        limit: what,
        method: spec.setup.method,
        threads: spec.setup.threads,
        queue_depth: spec.setup.queue_depth,
        block_size_bytes: spec.setup.block_size_bytes,
    }))
}

/// A run refused by [`check_budget`], with its figures, so that each front end can say it in
/// its own words: the command line names its flags ([`BudgetExceeded::cli_text`], the
/// `Display`), the explorer its keys ([`BudgetExceeded::explorer_text`]). A usage error: the
/// command line exits 2 on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetExceeded {
    /// Bytes of I/O buffers the run would allocate.
    pub needed_bytes: u64,
    /// The product computed, worker by worker (see [`describe_fits`]).
    pub fits: String,
    /// The limit, in words (`half of the 12G of memory available`).
    pub limit: String,
    pub method: Method,
    pub threads: usize,
    pub queue_depth: u32,
    pub block_size_bytes: u64,
}

impl BudgetExceeded {
    /// The refusal naming the command line's flags.
    pub fn cli_text(&self) -> String {
        format!(
            "--max-memory: the run needs {} of I/O buffers ({}; set by --threads {}{}, BLOCK_SIZE \
             {}), more than {}; lower them, or pass --max-memory {} to allow it",
            format_bytes_approx(self.needed_bytes),
            self.fits,
            self.threads,
            if crate::engine::caps(self.method).queued {
                format!(", --queue-depth {}", self.queue_depth)
            } else {
                String::new()
            },
            format_size(self.block_size_bytes),
            self.limit,
            format_size(self.needed_bytes.next_multiple_of(1 << 30)),
        )
    }

    /// The refusal naming the explorer's keys (it has no `--max-memory`).
    pub fn explorer_text(&self) -> String {
        format!(
            "not started: {} of I/O buffers ({}) is more than {}; lower threads {} (↓){}, or \
             block size {} (← or b)",
            format_bytes_approx(self.needed_bytes),
            self.fits,
            self.limit,
            self.threads,
            if crate::engine::caps(self.method).queued {
                format!(", queue depth {} ([)", self.queue_depth)
            } else {
                String::new()
            },
            format_size(self.block_size_bytes),
        )
    }
}

impl std::fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.cli_text())
    }
}

impl std::error::Error for BudgetExceeded {}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(spec: &RunSpec, range: Range<u64>) -> (usize, u32) {
        let span = range.end;
        let share = Share {
            range,
            max_ops: None,
        };
        fitted(spec, &share, span, false)
    }

    #[test]
    fn a_block_larger_than_the_file_is_trimmed_to_it_and_slots_to_the_blocks() {
        let mut spec = RunSpec::new("/x");
        spec.setup.block_size_bytes = 1 << 30;
        spec.setup.queue_depth = 4;
        assert_eq!(fit(&spec, 0..1_000_000), (1_000_000, 1));
        spec.setup.direct = true;
        assert_eq!(fit(&spec, 0..1_000_000), (1_003_520, 1));
        spec.setup.direct = false;
        spec.setup.block_size_bytes = 1 << 20;
        spec.setup.queue_depth = 64;
        assert_eq!(fit(&spec, 0..(8 << 20)), (1 << 20, 8));
        spec.setup.queue_depth = 1024;
        let idle = fit(&spec, 0..0);
        assert_eq!(buffer_bytes(Method::IoUring, &[idle]), 4096);
    }

    #[test]
    fn buffers_beyond_half_the_available_memory_are_refused_naming_the_flags() {
        let mut spec = RunSpec::new("/x");
        spec.setup.method = Method::IoUring;
        spec.setup.threads = 64;
        spec.setup.queue_depth = 1024;
        let fits = vec![(1 << 20, 1024u32); 64];
        let e = check_budget(&spec, &fits, Some(16 << 30)).unwrap_err();
        let msg = e.to_string();
        for needle in ["--threads 64", "--queue-depth 1024", "--max-memory 64G"] {
            assert!(msg.contains(needle), "{msg}");
        }
        let typed = e.downcast_ref::<BudgetExceeded>().expect("a typed refusal");
        let keys = typed.explorer_text();
        for needle in ["threads 64 (↓)", "queue depth 1024 ([)", "(← or b)"] {
            assert!(keys.contains(needle), "{keys}");
        }
        assert!(!keys.contains("--"), "the explorer has no flags: {keys}");
        assert!(check_budget(&spec, &fits[..7], Some(16 << 30)).is_ok());
        spec.safety.max_memory_bytes = Some(64 << 30);
        assert!(check_budget(&spec, &fits, Some(16 << 30)).is_ok());
        spec.safety.max_memory_bytes = Some(1 << 20);
        assert!(check_budget(&spec, &[(2 << 20, 1)], None).is_err());
    }

    #[test]
    fn the_refusal_states_the_fitted_figures_it_multiplied() {
        // The explorer's case: 11 threads asked for queue depth 256 of 64M blocks, but a file
        // of 16 MiB fits each worker to one 16 MiB block and 1 slot... except where it does not.
        let mut spec = RunSpec::new("/x");
        spec.setup.method = Method::IoUring;
        spec.setup.threads = 11;
        spec.setup.queue_depth = 256;
        spec.setup.block_size_bytes = 64 << 20;
        spec.safety.max_memory_bytes = Some(1 << 30);
        let mut fits = vec![(64 << 20, 8u32); 10];
        fits.push((16 << 20, 2));
        let msg = check_budget(&spec, &fits, None).unwrap_err().to_string();
        assert!(
            msg.contains("10 workers x queue depth 8 x 64M + 1 worker x queue depth 2 x 16M"),
            "{msg}"
        );
        // 10 x 8 x 64 MiB + 2 x 16 MiB = 5152 MiB, the figure stated.
        assert_eq!(buffer_bytes(Method::IoUring, &fits), 5152 << 20);
        assert!(msg.contains(&format_bytes_approx(5152 << 20)), "{msg}");
    }
}
