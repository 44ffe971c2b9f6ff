//! What a fleet is asked to do: where each rank's data lives ([`Layout`]), the options of a fleet
//! run ([`FleetOptions`]) and the timing constants of its waits. A leaf module: the coordination
//! (`fleet/mod.rs`), the wire and the aggregate read it, and it reads none of them, so the fleet's
//! files import each other without a cycle.

use std::time::Duration;

/// How often a waiting rank says it is alive (more often when the timeout is under 2 s).
pub const HEARTBEAT: Duration = Duration::from_millis(500);
/// How long a waiting loop sleeps between looks at the transport. Bounds the barrier's release
/// skew from below; small against any point worth measuring.
pub const POLL_SLEEP: Duration = Duration::from_micros(200);
/// Default for how long a rank may stay silent (no heartbeat, no message) while it is waited
/// for before the point is stopped and the rank named.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where each rank's data lives (defined in `config`, below the results that record it).
pub use crate::config::Layout;

/// How a fleet runs its points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetOptions {
    pub layout: Layout,
    /// Stop every rank as soon as the first one finishes; each reports what it did by then.
    pub stonewall: bool,
    /// Barrier and silence timeout.
    pub timeout: Duration,
    /// Each rank's timeline interval (`run --interval` under mpirun; 1 s by default).
    pub interval: Duration,
}

impl Default for FleetOptions {
    fn default() -> Self {
        FleetOptions {
            layout: Layout::FilePerProcess,
            stonewall: false,
            timeout: DEFAULT_TIMEOUT,
            interval: crate::measure::timeline::DEFAULT_INTERVAL,
        }
    }
}
