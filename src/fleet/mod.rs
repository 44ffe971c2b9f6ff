//! Fleet runs: many clients (MPI ranks, usually on many hosts) measuring one point together, the
//! way IOR does: a barrier before each point, the same point on every rank at the same moment,
//! each rank on its own file (`file-per-process`) or on its share of one file (`shared-file`),
//! results gathered to rank 0, which alone prints and writes files.
//!
//! Why it is shaped so:
//! * The MPI layer is two calls, "send bytes" and "take a message if one is waiting"
//!   ([`transport::Transport`]). Every rule — barrier with a timeout, stop flags, gather — is
//!   written once here on top of them, so it runs the same on MPI, in one process ([`Solo`],
//!   used when the `mpi` feature is off or no MPI launcher started us) and between threads in
//!   the unit tests, where a rank can "die" on cue.
//! * No collective MPI call is ever made. A collective with a dead participant blocks forever,
//!   and OpenMPI's default reaction to a dead rank (kill the job) is not ours to rely on. Rank 0
//!   coordinates with point-to-point messages it polls for, so every wait has a deadline and a
//!   timeout names the ranks that did not answer.
//! * A point's result is a plain [`RunResult`] per rank plus one aggregate row computed like IOR
//!   ([`aggregate`]): total bytes over (latest end − earliest start), the per-rank spread, and
//!   the merged latency histogram — percentiles of the union, not an average of percentiles.

pub mod aggregate;
mod args;
pub mod clients;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod point;
pub mod timeline;
pub mod transport;
pub mod verdict;
pub mod wire;

pub mod error;
pub mod options;

pub use args::needs_mpi;
pub use args::FleetArgs;
#[cfg(not(feature = "mpi"))]
pub use args::FleetArgsWithoutMpi;
use error::abort_error;
pub use error::{follower_status, FleetError};
pub use options::{FleetOptions, Layout, DEFAULT_TIMEOUT, HEARTBEAT, POLL_SLEEP};

use crate::measure::RunResult;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
pub use transport::{Solo, Threads, Transport};
use wire::Msg;

/// The fleet this process belongs to, with the coordination rules.
pub struct Fleet {
    t: Box<dyn Transport>,
    hosts: Vec<String>,
    pub options: FleetOptions,
    stash: VecDeque<(usize, Msg)>,
    last_heard: Vec<Instant>,
    last_beat: Instant,
}

impl Fleet {
    /// Joins the fleet over `t`: rank 0 learns every rank's host and tells everyone.
    pub fn new(
        t: Box<dyn Transport>,
        host: String,
        options: FleetOptions,
    ) -> Result<Fleet, FleetError> {
        let size = t.size();
        let mut fleet = Fleet {
            t,
            hosts: vec![String::new(); size],
            options,
            stash: VecDeque::new(),
            last_heard: vec![Instant::now(); size],
            last_beat: Instant::now(),
        };
        let me = fleet.rank();
        fleet.hosts[me] = host.clone();
        if size == 1 {
            return Ok(fleet);
        }
        let deadline = Instant::now() + options.timeout;
        if fleet.rank() == 0 {
            let mut seen = vec![false; size];
            seen[0] = true;
            while seen.iter().any(|s| !s) {
                match fleet.wait_for(deadline, |m| matches!(m, Msg::Hello { .. }))? {
                    Some((from, Msg::Hello { host })) => {
                        fleet.hosts[from] = host;
                        seen[from] = true;
                    }
                    _ => {
                        let missing = (0..size).filter(|r| !seen[*r]).collect();
                        return Err(fleet.timeout_error("join the fleet", missing));
                    }
                }
            }
            let hosts = Msg::Hosts {
                hosts: fleet.hosts.clone(),
            };
            fleet.to_all(&hosts)?;
        } else {
            fleet.send(0, &Msg::Hello { host })?;
            match fleet.wait_for(deadline, |m| matches!(m, Msg::Hosts { .. }))? {
                Some((_, Msg::Hosts { hosts })) if hosts.len() == size => fleet.hosts = hosts,
                _ => return Err(fleet.timeout_error("answer the join", vec![0])),
            }
        }
        Ok(fleet)
    }

    /// The fleet of one (no MPI).
    pub fn solo() -> Fleet {
        Fleet::new(
            Box::new(Solo),
            crate::runner::host_name(),
            FleetOptions::default(),
        )
        .expect("a fleet of one needs no messages")
    }

    pub fn rank(&self) -> usize {
        self.t.rank()
    }

    pub fn size(&self) -> usize {
        self.t.size()
    }

    /// This rank's host name.
    pub fn host(&self) -> &str {
        &self.hosts[self.rank()]
    }

    /// Host name of every rank.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// After an error: when it means a rank is gone, this rank will leave without MPI's orderly
    /// goodbye, which would wait for the dead rank for ever. Call on every error of a point.
    pub fn note_error(&self, e: &FleetError) {
        if e.is_lost() {
            self.t.abandon();
        }
    }

    /// Whether this rank is the lowest rank on its host: the one that runs per-host actions
    /// (`cold-all` drops the whole host's page cache once, not once per rank).
    pub fn is_host_leader(&self) -> bool {
        let me = self.host();
        self.hosts.iter().position(|h| h == me) == Some(self.rank())
    }

    fn timeout_error(&self, what: &str, missing: Vec<usize>) -> FleetError {
        FleetError::Timeout {
            what: what.into(),
            missing,
            hosts: self.hosts.clone(),
            timeout: self.options.timeout,
        }
    }

    fn send(&self, to: usize, m: &Msg) -> Result<(), FleetError> {
        self.t.send(to, &m.encode())
    }

    fn to_all(&self, m: &Msg) -> Result<(), FleetError> {
        let bytes = m.encode();
        for r in (0..self.size()).filter(|r| *r != self.rank()) {
            self.t.send(r, &bytes)?;
        }
        Ok(())
    }

    /// Moves waiting messages into the stash (heartbeats only refresh who was heard), and sends
    /// this rank's heartbeat when it is due: to rank 0, or from rank 0 to everyone.
    fn pump(&mut self) -> Result<(), FleetError> {
        while let Some((from, bytes)) = self.t.try_recv() {
            self.last_heard[from] = Instant::now();
            match Msg::decode(&bytes)? {
                Msg::Heartbeat => {}
                m => self.stash.push_back((from, m)),
            }
        }
        // At least four beats per timeout, so a short timeout never mistakes a live rank.
        let beat = HEARTBEAT.min(self.options.timeout / 4);
        if self.size() > 1 && self.last_beat.elapsed() >= beat {
            self.last_beat = Instant::now();
            if self.rank() == 0 {
                self.to_all(&Msg::Heartbeat)?;
            } else {
                self.send(0, &Msg::Heartbeat)?;
            }
        }
        Ok(())
    }

    /// Takes the first stashed message `want` accepts, without waiting.
    fn take(&mut self, want: impl Fn(&Msg) -> bool) -> Result<Option<(usize, Msg)>, FleetError> {
        self.pump()?;
        let i = self.stash.iter().position(|(_, m)| want(m));
        Ok(i.and_then(|i| self.stash.remove(i)))
    }

    /// Waits until a message `want` accepts arrives (Some) or `deadline` passes (None).
    fn wait_for(
        &mut self,
        deadline: Instant,
        want: impl Fn(&Msg) -> bool,
    ) -> Result<Option<(usize, Msg)>, FleetError> {
        loop {
            if let Some(m) = self.take(&want)? {
                return Ok(Some(m));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(POLL_SLEEP);
        }
    }

    /// Ranks among `ranks` not heard from for longer than the timeout.
    fn silent(&self, ranks: impl Iterator<Item = usize>) -> Vec<usize> {
        ranks
            .filter(|r| *r != self.rank() && self.last_heard[*r].elapsed() > self.options.timeout)
            .collect()
    }

    /// Drops stashed messages of points before `seq` (a stop that came after a rank finished).
    fn forget_before(&mut self, seq: u64) {
        self.stash.retain(|(_, m)| m.seq().is_none_or(|s| s >= seq));
    }

    /// Runs `work` (setup: creating a test file, warming or evicting a cache, opening files) on
    /// a helper thread while this thread keeps the fleet's heartbeats going, so a long setup is
    /// not mistaken for a dead rank. `work` must not use the fleet.
    pub fn while_alive<T: Send>(&mut self, work: impl FnOnce() -> T + Send) -> T {
        if self.size() == 1 {
            return work();
        }
        std::thread::scope(|s| {
            let h = s.spawn(work);
            while !h.is_finished() {
                // A garbled message surfaces at the next wait, which decodes it again.
                let _ = self.pump();
                std::thread::sleep(Duration::from_millis(5));
            }
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    }

    /// The checked barrier before point `seq`: every rank says whether its setup worked; rank 0
    /// waits for all of them, then releases everyone or aborts the point for everyone with the
    /// first failure, or with the ranks that did not arrive and fell silent for longer than the
    /// timeout (dead, or their host gone). A rank that is alive but slow to set up (it keeps
    /// sending heartbeats, see [`Fleet::while_alive`]) is waited for. Every rank returns the same
    /// verdict.
    pub fn barrier(&mut self, seq: u64, mine: Result<(), String>) -> Result<(), FleetError> {
        self.forget_before(seq);
        if self.size() == 1 {
            return mine.map_err(FleetError::Aborted);
        }
        let is_verdict = |m: &Msg| matches!(m, Msg::Verdict { seq: s, .. } if *s == seq);
        let is_ready = |m: &Msg| matches!(m, Msg::Ready { seq: s, .. } if *s == seq);
        if self.rank() != 0 {
            self.send(
                0,
                &Msg::Ready {
                    seq,
                    error: mine.err(),
                },
            )?;
            loop {
                match self.take(is_verdict)? {
                    Some((_, Msg::Verdict { abort: None, .. })) => return Ok(()),
                    Some((
                        _,
                        Msg::Verdict {
                            abort: Some(why),
                            lost,
                            ..
                        },
                    )) => return Err(abort_error(why, lost)),
                    _ => {}
                }
                if !self.silent(std::iter::once(0)).is_empty() {
                    return Err(self.timeout_error(&format!("release barrier {seq}"), vec![0]));
                }
                std::thread::sleep(POLL_SLEEP);
            }
        }
        let mut arrived = vec![false; self.size()];
        arrived[0] = true;
        let mut failures: Vec<(usize, String)> = Vec::new();
        if let Err(e) = mine {
            failures.push((0, e));
        }
        let mut missing = Vec::new();
        while arrived.iter().any(|a| !a) {
            while let Some((from, Msg::Ready { error, .. })) = self.take(is_ready)? {
                arrived[from] = true;
                if let Some(e) = error {
                    failures.push((from, e));
                }
            }
            missing = self.silent((0..self.size()).filter(|r| !arrived[*r]));
            if !missing.is_empty() {
                break;
            }
            std::thread::sleep(POLL_SLEEP);
        }
        let verdict = if !missing.is_empty() {
            Some(self.timeout_error(&format!("reach barrier {seq}"), missing))
        } else {
            failures.sort();
            failures.first().map(|(r, e)| {
                FleetError::Aborted(format!("fleet: rank {r} ({}) failed: {e}", self.hosts[*r]))
            })
        };
        let abort = verdict.as_ref().map(|e| e.to_string());
        let lost = verdict.as_ref().is_some_and(FleetError::is_lost);
        for r in (1..self.size()).filter(|r| arrived[*r]) {
            self.send(
                r,
                &Msg::Verdict {
                    seq,
                    abort: abort.clone(),
                    lost,
                },
            )?;
        }
        match verdict {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }

    /// Rank 0's CSV rows of one point: every rank's row, then the aggregate row (`rank = all`).
    pub fn rows_of(&self, reports: &[wire::RankReport]) -> Vec<RunResult> {
        aggregate::rows(reports, self.size(), self.options.layout)
    }
}

/// Whether an MPI launcher (mpirun/mpiexec of OpenMPI or MPICH, Slurm's srun with PMI/PMIx)
/// started this process. MPI is only initialised then: a singleton MPI_Init would start a
/// daemon and slow every plain run down.
pub fn launched_by_mpi() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// The fleet this process runs in: MPI's world when started by an MPI launcher, else None (the
/// caller runs as it always did).
#[cfg(feature = "mpi")]
pub fn join(options: FleetOptions) -> anyhow::Result<Option<Fleet>> {
    if !launched_by_mpi() {
        return Ok(None);
    }
    let t = mpi::MpiTransport::init()?;
    let host = crate::runner::host_name();
    Ok(Some(Fleet::new(Box::new(t), host, options)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    fn opts(timeout_ms: u64) -> FleetOptions {
        FleetOptions {
            timeout: Duration::from_millis(timeout_ms),
            ..Default::default()
        }
    }

    /// Runs `f(fleet)` on `n` thread-ranks, returning each rank's answer.
    fn on_ranks<T: Send + 'static>(
        n: usize,
        hosts: &[&str],
        o: FleetOptions,
        f: impl Fn(Fleet) -> T + Send + Sync + Clone + 'static,
    ) -> Vec<T> {
        let handles: Vec<_> = Threads::fleet(n)
            .into_iter()
            .enumerate()
            .map(|(r, t)| {
                let f = f.clone();
                let host = hosts[r % hosts.len()].to_string();
                thread::spawn(move || f(Fleet::new(Box::new(t), host, o).unwrap()))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    #[test]
    fn every_rank_learns_every_host_and_one_leader_per_host() {
        let got = on_ranks(4, &["a", "b"], opts(2000), |f| {
            (f.hosts().to_vec(), f.is_host_leader())
        });
        for (hosts, _) in &got {
            assert_eq!(hosts, &["a", "b", "a", "b"]);
        }
        let leaders: Vec<bool> = got.iter().map(|g| g.1).collect();
        assert_eq!(leaders, [true, true, false, false]);
    }

    #[test]
    fn a_failed_setup_on_one_rank_aborts_the_point_on_every_rank_naming_it() {
        let got = on_ranks(3, &["h"], opts(2000), |mut f| {
            let mine = if f.rank() == 2 {
                Err("disk full".to_string())
            } else {
                Ok(())
            };
            f.barrier(1, mine).map_err(|e| e.to_string())
        });
        for g in got {
            let e = g.unwrap_err();
            assert!(e.contains("rank 2 (h) failed: disk full"), "{e}");
        }
    }

    #[test]
    fn a_rank_that_never_arrives_is_named_when_the_barrier_times_out() {
        let t0 = Instant::now();
        let got = on_ranks(3, &["h"], opts(300), |mut f| {
            if f.rank() == 1 {
                return Ok(()); // "dies" before the barrier
            }
            f.barrier(7, Ok(())).map_err(|e| e.to_string())
        });
        assert!(t0.elapsed() < Duration::from_secs(5));
        let e = got[0].clone().unwrap_err();
        assert!(e.contains("rank 1 (h) did not reach barrier 7"), "{e}");
        assert_eq!(got[2], Err(e));
    }

    #[test]
    fn a_barrier_everyone_reaches_releases_everyone() {
        let got = on_ranks(5, &["h"], opts(2000), |mut f| {
            (1..=3).map(|s| f.barrier(s, Ok(()))).collect::<Vec<_>>()
        });
        for g in got {
            assert!(g.iter().all(|r| r.is_ok()), "{g:?}");
        }
    }

    #[test]
    fn a_fleet_of_one_passes_its_barrier_alone() {
        let mut f = Fleet::solo();
        assert_eq!((f.rank(), f.size()), (0, 1));
        assert!(f.is_host_leader());
        assert!(f.barrier(1, Ok(())).is_ok());
        assert!(f.barrier(2, Err("x".into())).is_err());
    }
}
