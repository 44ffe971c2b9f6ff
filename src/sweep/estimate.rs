//! The dry run's estimates of how long an experiment measures. A run bounded by time (a warm
//! read looping for `seconds`) takes its time. A run bounded by bytes (one pass over the file,
//! a command such as `dd`) takes its bytes over a rate the plan cannot know without I/O: the
//! estimate uses stated rates (below), says so in a note, and keeps the time bound (`seconds`,
//! a command's `timeout`) as the limit. Before this, such runs were counted at their bound, so
//! dd-compare's plan said "≤ 4 min" for a sweep that measures for a few seconds.

use crate::config::spec::RunSpec;
use crate::config::CacheMode;
use crate::size::format_size;

/// Stated rate of a read from the device (cold cache): a SATA SSD or a fast network file
/// system; an NVMe drive is faster, a disk slower.
pub const STATED_COLD_MIB_S: f64 = 500.0;
/// Stated rate of a read from the page cache (warm) or a write into it.
pub const STATED_WARM_MIB_S: f64 = 4096.0;
/// Stated cost of starting a command (`sh` and the program).
pub const STATED_COMMAND_START_S: f64 = 0.01;

/// The stated rate of a point, MiB/s.
pub fn stated_mib_s(spec: &RunSpec) -> f64 {
    match spec.setup.cache {
        CacheMode::Cold | CacheMode::ColdAll => STATED_COLD_MIB_S,
        _ if spec.setup.direct => STATED_COLD_MIB_S,
        _ => STATED_WARM_MIB_S,
    }
}

/// Seconds of one repetition of a point: its bytes at the stated rate when it has a block
/// count (one pass), else `bound_s`; never past `bound_s`.
pub fn point_s(spec: &RunSpec, bytes: Option<u64>, bound_s: f64) -> f64 {
    let bytes = bytes.or_else(|| {
        spec.target
            .block_count
            .map(|n| n * spec.setup.block_size_bytes)
    });
    match bytes {
        Some(b) => (b as f64 / (1024.0 * 1024.0) / stated_mib_s(spec)).min(bound_s),
        None => bound_s,
    }
}

/// Whether some point is bounded by its bytes, not by time (its estimate uses a stated rate).
pub fn any_by_bytes(points: &[RunSpec], bytes: Option<u64>) -> bool {
    bytes.is_some() || points.iter().any(|s| s.target.block_count.is_some())
}

/// The plan's note on an estimate made from bytes: the stated rates and the bound.
pub fn note(bound: &str) -> String {
    format!(
        "estimate: each pass's bytes at stated rates (cold or O_DIRECT {}/s, warm {}/s; \
         measured only when it runs), at most {bound} per run",
        format_size(STATED_COLD_MIB_S as u64 * 1024 * 1024),
        format_size(STATED_WARM_MIB_S as u64 * 1024 * 1024),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_pass_point_takes_its_bytes_at_the_stated_rate_within_its_bound() {
        let mut s = RunSpec::new("f");
        s.setup.block_size_bytes = 1 << 20;
        s.target.block_count = Some(256);
        s.setup.cache = CacheMode::Cold;
        assert_eq!(point_s(&s, None, 10.0), 256.0 / STATED_COLD_MIB_S);
        assert_eq!(point_s(&s, None, 0.1), 0.1);
        s.target.block_count = None;
        assert_eq!(point_s(&s, None, 10.0), 10.0);
        s.setup.cache = CacheMode::Warm;
        assert_eq!(
            point_s(&s, Some(4096 << 20), 60.0),
            4096.0 / STATED_WARM_MIB_S
        );
    }
}
