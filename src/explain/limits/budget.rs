//! How long each step of `limits` runs and how its tries are combined: the [`Budget`]s (full
//! and `--quick`) and the best-of-[`TRIES`] rule with its spread. A leaf, so the measuring steps
//! and the model's readers share it without importing the steps.

use std::time::Duration;

/// How long each measurement step runs, and the size of the test file.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub per_op_step: Duration,
    pub memory_step: Duration,
    pub device_step: Duration,
    pub test_file_bytes: u64,
    /// Source buffer of the memory measurements (larger than the CPU caches).
    pub memory_src_bytes: usize,
    /// The `--quick` budget (recorded in the profile's provenance).
    pub quick: bool,
}

/// The default: about 20 s on a 2-core machine, under a minute on 16 cores.
pub const FULL: Budget = Budget {
    per_op_step: Duration::from_millis(400),
    memory_step: Duration::from_millis(400),
    device_step: Duration::from_millis(1500),
    test_file_bytes: 512 << 20,
    memory_src_bytes: 256 << 20,
    quick: false,
};

/// `--quick`: a few seconds, less precise (for tests and a first look).
pub const QUICK: Budget = Budget {
    per_op_step: Duration::from_millis(100),
    memory_step: Duration::from_millis(100),
    device_step: Duration::from_millis(300),
    test_file_bytes: 32 << 20,
    memory_src_bytes: 64 << 20,
    quick: true,
};

/// Short tries per ceiling: a ceiling is the best the machine does, so the best try counts (a
/// try slowed by another process's burst says nothing about the ceiling).
pub const TRIES: u32 = 3;

/// The best of some tries and how much they spread: `(best, (best − worst) / best in percent)`
/// (0 spread for a single try or none above zero).
pub fn best_and_spread(tries: &[f64]) -> (f64, f64) {
    let best = tries.iter().copied().fold(0.0, f64::max);
    let worst = tries.iter().copied().fold(f64::INFINITY, f64::min);
    if best <= 0.0 || !worst.is_finite() {
        return (best.max(0.0), 0.0);
    }
    (
        best,
        (100.0 * (best - worst.max(0.0)) / best).clamp(0.0, 100.0),
    )
}
