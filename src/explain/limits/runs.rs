//! How a step of `limits` reads the file: a time-bound read spec and one run of it through the
//! library's runner, the same path `run` takes, so a ceiling and a measurement share their
//! per-operation overhead. A leaf shared by the memory and the device steps.

use crate::config::spec::RunSpec;
use crate::config::Method;
use crate::measure::RunResult;
use crate::runner::run_blocking;
use anyhow::bail;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// One read run through the library's runner; stops early when `stop` is raised.
pub(super) fn run_read(spec: &RunSpec, stop: &Arc<AtomicBool>) -> anyhow::Result<RunResult> {
    if stop.load(Ordering::Relaxed) {
        bail!("interrupted");
    }
    Ok(run_blocking(spec, "limits", stop.clone(), |_, _| {})?.result)
}

/// A time-bound read spec of the file.
pub(super) fn timed(path: &Path, method: Method, bs: u64, d: Duration) -> RunSpec {
    let mut s = RunSpec::new(path);
    s.setup.method = method;
    s.setup.block_size_bytes = bs;
    s.target.duration = Some(d);
    s.target.loop_range = true;
    s
}
