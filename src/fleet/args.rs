//! The fleet flags of `run` (`--fleet-layout`, `--stonewall`, `--fleet-timeout`), validated into
//! [`FleetOptions`]. They belong to the fleet, not to one command, so the lab's `run` parameters
//! flatten them in without the fleet knowing about `run`.

use super::options::{FleetOptions, Layout};

/// The fleet flags of `run` (shown with `--features mpi` only).
#[derive(clap::Args, Debug, Clone)]
pub struct FleetArgs {
    /// Under mpirun: each rank on FILE.RANK (file-per-process) or on its share of FILE
    /// (shared-file)
    #[arg(
        long = "fleet-layout",
        default_value = "file-per-process",
        value_name = "LAYOUT"
    )]
    pub layout: String,
    /// Under mpirun: stop every rank as soon as the first one finishes
    #[arg(long)]
    pub stonewall: bool,
    /// Under mpirun: seconds a rank may be late to a barrier, or silent, before the run stops
    /// and names it
    #[arg(long = "fleet-timeout", default_value_t = 30.0, value_name = "SECONDS")]
    pub timeout_s: f64,
}

impl FleetArgs {
    /// The validated options (errors name the flag).
    pub fn options(&self) -> anyhow::Result<FleetOptions> {
        let layout = Layout::parse(&self.layout, "--fleet-layout")?;
        let timeout = crate::config::check_seconds(self.timeout_s, "--fleet-timeout")?;
        Ok(FleetOptions {
            layout,
            stonewall: self.stonewall,
            timeout,
            ..FleetOptions::default()
        })
    }
}

/// The one line that refuses a fleet flag or the `clients` subcommand in a build without MPI.
pub fn needs_mpi(what: &str) -> anyhow::Error {
    crate::config::usage(format!(
        "{what}: fleet runs need a build with `--features mpi` (cargo build --release --features \
         mpi)"
    ))
}

/// The fleet flags of `run` in a build without MPI: accepted (hidden from `--help`) only to be
/// refused with one line that names the build they need, instead of clap's "unexpected
/// argument".
#[cfg(not(feature = "mpi"))]
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FleetArgsWithoutMpi {
    #[arg(
        long = "fleet-layout",
        hide = true,
        value_name = "LAYOUT",
        allow_hyphen_values = true
    )]
    pub layout: Option<String>,
    #[arg(long, hide = true)]
    pub stonewall: bool,
    #[arg(
        long = "fleet-timeout",
        hide = true,
        value_name = "SECONDS",
        allow_hyphen_values = true
    )]
    pub timeout_s: Option<String>,
}

#[cfg(not(feature = "mpi"))]
impl FleetArgsWithoutMpi {
    /// Ok when no fleet flag was given; else the one-line refusal naming the first one.
    pub fn refuse_any(&self) -> anyhow::Result<()> {
        if self.layout.is_some() {
            return Err(needs_mpi("--fleet-layout"));
        }
        if self.stonewall {
            return Err(needs_mpi("--stonewall"));
        }
        if self.timeout_s.is_some() {
            return Err(needs_mpi("--fleet-timeout"));
        }
        Ok(())
    }
}
