//! What can go wrong between ranks ([`FleetError`]) and what a rank's exit status is then. A leaf
//! module, so the transports and the wire name the error without importing the coordination.

use std::fmt;
use std::time::Duration;

/// What can go wrong between ranks.
#[derive(Debug, Clone, PartialEq)]
pub enum FleetError {
    /// Ranks silent for longer than the timeout when they were needed (at a barrier, during
    /// a point).
    Timeout {
        what: String,
        missing: Vec<usize>,
        hosts: Vec<String>,
        timeout: Duration,
    },
    /// Rank 0 stopped the point for every rank; the (whole) message names the rank and why.
    Aborted(String),
    /// Rank 0 stopped the point because a rank is gone (it timed out on rank 0): the fleet
    /// cannot run further points.
    Lost(String),
    /// A message that does not decode (a mismatched build on some rank).
    Garbled(String),
    /// The MPI library refused something.
    Mpi(String),
}

impl fmt::Display for FleetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FleetError::Timeout {
                what,
                missing,
                hosts,
                timeout,
            } => {
                let names: Vec<String> = missing
                    .iter()
                    .map(|r| match hosts.get(*r) {
                        Some(h) if !h.is_empty() => format!("{r} ({h})"),
                        _ => r.to_string(),
                    })
                    .collect();
                write!(
                    f,
                    "fleet: rank{} {} did not {what} and was silent for {:.1} s (dead, or \
                     its host or network gone)",
                    if missing.len() == 1 { "" } else { "s" },
                    names.join(", "),
                    timeout.as_secs_f64()
                )
            }
            FleetError::Aborted(why) | FleetError::Lost(why) => f.write_str(why),
            FleetError::Garbled(why) => {
                write!(
                    f,
                    "fleet: garbled message ({why}); run the same build on every rank"
                )
            }
            FleetError::Mpi(why) => write!(f, "fleet: MPI: {why}"),
        }
    }
}

impl std::error::Error for FleetError {}

impl FleetError {
    /// Whether the fleet lost a rank, so no further point can run.
    pub fn is_lost(&self) -> bool {
        matches!(self, FleetError::Timeout { .. } | FleetError::Lost(_))
    }

    /// Whether rank 0 is among the ranks that fell silent: then nobody else will report.
    pub fn lost_rank_0(&self) -> bool {
        matches!(self, FleetError::Timeout { missing, .. } if missing.contains(&0))
    }
}

/// The error a follower makes of rank 0's abort.
pub(crate) fn abort_error(why: String, lost: bool) -> FleetError {
    if lost {
        FleetError::Lost(why)
    } else {
        FleetError::Aborted(why)
    }
}

/// The exit status of a rank other than 0 after a failed point. Rank 0 reports failures and
/// sets the job's status; a follower exiting non-zero first would make mpirun kill the job, rank
/// 0 included, before rank 0 prints why. So followers exit 0, unless rank 0 itself is gone: then
/// they say so and exit 1.
pub fn follower_status(e: &FleetError) -> i32 {
    if e.lost_rank_0() {
        crate::eprintln_shown!("error: {e}");
        1
    } else {
        0
    }
}
