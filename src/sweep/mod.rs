//! Batch mode (issue 3). Placeholder until sweeps land.
use std::path::Path;

pub fn execute(_sweep: &Path, _out: Option<&Path>, _dry_run: bool) -> anyhow::Result<i32> {
    Err(crate::config::usage(
        "--batch is not built yet; use `diskscope run`",
    ))
}
