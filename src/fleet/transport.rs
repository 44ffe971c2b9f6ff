//! How ranks reach each other: "send these bytes to rank r" and "is there a message for me?",
//! nothing more. Every coordination rule (barriers with timeouts, stop, gather) is built on these
//! two calls in [`super::Fleet`], so the same rules run on MPI (`fleet::mpi`, feature `mpi`), in
//! one process ([`Solo`]), and between threads in the tests ([`Threads`]).

use super::error::FleetError;
use std::sync::mpsc::{channel, Receiver, Sender};

/// A way to exchange byte messages between the ranks of a fleet.
pub trait Transport {
    /// This process's rank, `0..size()`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Sends `bytes` to rank `to` (buffered: returns without waiting for the receiver).
    fn send(&self, to: usize, bytes: &[u8]) -> Result<(), FleetError>;
    /// Takes one waiting message, if any: (sender rank, bytes). Never blocks.
    fn try_recv(&self) -> Option<(usize, Vec<u8>)>;
    /// A rank is gone: leave without the orderly goodbye (MPI_Finalize waits for every rank,
    /// the dead one included, and would hang).
    fn abandon(&self) {}
}

/// The fleet of one: not launched by an MPI launcher, or built without the `mpi` feature.
pub struct Solo;

impl Transport for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn send(&self, to: usize, _: &[u8]) -> Result<(), FleetError> {
        Err(FleetError::Garbled(format!(
            "a fleet of one has no rank {to}"
        )))
    }
    fn try_recv(&self) -> Option<(usize, Vec<u8>)> {
        None
    }
}

/// Ranks as threads of one process, linked by channels: the tests' fleet. A rank that "dies"
/// is a thread that returns; its messages stop, exactly what the others see of a killed process.
pub struct Threads {
    rank: usize,
    peers: Vec<Sender<(usize, Vec<u8>)>>,
    inbox: Receiver<(usize, Vec<u8>)>,
}

impl Threads {
    /// One transport per rank, to be moved into the ranks' threads.
    pub fn fleet(size: usize) -> Vec<Threads> {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..size).map(|_| channel()).unzip();
        rxs.into_iter()
            .enumerate()
            .map(|(rank, inbox)| Threads {
                rank,
                peers: txs.clone(),
                inbox,
            })
            .collect()
    }
}

impl Transport for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.peers.len()
    }
    fn send(&self, to: usize, bytes: &[u8]) -> Result<(), FleetError> {
        // A peer that has gone away is a dead rank: its silence is how the others notice.
        let _ = self.peers[to].send((self.rank, bytes.to_vec()));
        Ok(())
    }
    fn try_recv(&self) -> Option<(usize, Vec<u8>)> {
        self.inbox.try_recv().ok()
    }
}
