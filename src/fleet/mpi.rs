//! The fleet over MPI (`--features mpi`): MPI's world communicator, one message tag, blocking
//! standard-mode sends of small messages and a non-blocking matched probe to receive. Nothing
//! else of MPI is used — no collectives, which would block forever on a dead rank — so every
//! wait is a poll loop in [`super::Fleet`] with a deadline.
//!
//! Control messages are tens of bytes and go out eagerly (the send returns at once); a report is
//! a few kilobytes and is matched by rank 0, which is always polling while it waits for one.

use super::error::FleetError;
use super::transport::Transport;
use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};

/// The tag of every fleet message.
const TAG: mpi::Tag = 0x0d15;

pub struct MpiTransport {
    /// Finalizes MPI when dropped, after the last message (unless abandoned).
    universe: Option<Universe>,
    abandoned: std::cell::Cell<bool>,
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
}

impl MpiTransport {
    /// Initialises MPI (once per process).
    pub fn init() -> Result<MpiTransport, FleetError> {
        // Funneled: the runner's workers and setup helpers are threads, but only the main
        // thread ever calls MPI.
        let (universe, _) =
            mpi::initialize_with_threading(mpi::Threading::Funneled).ok_or_else(|| {
                FleetError::Mpi("MPI was already initialised, or MPI_Init failed".into())
            })?;
        let world = universe.world();
        let rank = world.rank() as usize;
        let size = world.size() as usize;
        Ok(MpiTransport {
            universe: Some(universe),
            abandoned: std::cell::Cell::new(false),
            world,
            rank,
            size,
        })
    }
}

impl Drop for MpiTransport {
    fn drop(&mut self) {
        if self.abandoned.get() {
            // MPI_Finalize would wait for the dead rank forever: skip it. The launcher sees a
            // rank that exits without finalizing, which it treats like a failed rank.
            std::mem::forget(self.universe.take());
        }
    }
}

impl Transport for MpiTransport {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn send(&self, to: usize, bytes: &[u8]) -> Result<(), FleetError> {
        self.world
            .process_at_rank(to as mpi::Rank)
            .send_with_tag(bytes, TAG);
        Ok(())
    }
    fn try_recv(&self) -> Option<(usize, Vec<u8>)> {
        let probed = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(TAG)?;
        let (bytes, status) = probed.matched_receive_vec::<u8>();
        Some((status.source_rank() as usize, bytes))
    }
    fn abandon(&self) {
        self.abandoned.set(true);
    }
}
