//! The live explorer (issue 4). Placeholder until the TUI lands.
use std::path::Path;

pub fn execute(_file: Option<&Path>) -> anyhow::Result<i32> {
    Err(crate::config::usage(
        "the live explorer is not built yet; use `diskscope run` or `diskscope --batch`",
    ))
}
