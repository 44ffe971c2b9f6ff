//! The locality lab (issue 5). Placeholder until it lands.

/// Arguments of `diskscope locality`.
#[derive(Debug, clap::Args)]
pub struct LocalityArgs {}

pub fn execute(_args: &LocalityArgs) -> anyhow::Result<i32> {
    Err(crate::config::usage("the locality lab is not built yet"))
}
