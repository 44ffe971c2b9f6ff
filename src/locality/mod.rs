//! The locality lab (issue 5). Placeholder until it lands.

/// Arguments of `diskscope locality`.
#[derive(Debug, clap::Args)]
pub struct LocalityArgs {}

pub fn execute(_args: &LocalityArgs) -> anyhow::Result<i32> {
    Err(crate::config::usage("the locality lab is not built yet"))
}

/// Batch mode's entry into the locality lab: runs the experiment `name` with the sweep's
/// `params`, calling `emit` for every finished repetition (method = layout, pattern = order).
/// Placeholder until the lab lands; the real one replaces it when merging.
pub fn run_sweep_experiment(
    _name: &str,
    _params: &toml::Table,
    _stop: &std::sync::atomic::AtomicBool,
    _emit: &mut dyn FnMut(crate::measure::RunResult) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    Err(crate::config::usage("the locality lab is not built yet"))
}
