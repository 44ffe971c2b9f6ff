//! The running engine, owned by one "session" thread so the UI never waits on it.
//!
//! The UI sends [`Command`]s (start a run with these settings, stop, quit) and drains
//! [`Update`]s with `try_recv` on each tick. The session thread forwards the runner's snapshots
//! as they arrive, and does the slow parts of a restart — raising the stop flag, waiting for the
//! workers to finish their current operation, joining them, opening the new run's files and
//! applying its cache mode — off the UI thread. Commands that pile up while it is busy are
//! coalesced (only the last start matters), so mashing a key never queues seconds of restarts.
//!
//! Each run is a [`Run`], the one lifecycle the CLI and the sweep use too: the session
//! steps it ([`Run::poll`]) between looks at its commands and ends it with [`Run::end`].
//! A read that does not loop (cold sequential reads, see [`Settings::spec`]) is *chained*: when
//! a pass over the file ends, the session ends that [`Run`] and starts a new one — preparing it
//! evicts the file again — under the same id, shifting its snapshots' times by the pass's start
//! so the UI sees one continuous segment. Only the first pass's final snapshots keep their XOR;
//! later ones are forwarded as intervals so the XOR is not cancelled out by a second full pass.
//!
//! [`Settings::spec`]: super::settings::Settings::spec
//!
//! A write run always targets a scratch file of its own (a fresh name each time, see
//! [`super::scratch::WriteScratch`]); when the write run ends the session hands that file to the
//! removal thread ([`super::discard`]) and goes on at once, so switching back to reads never
//! waits for the kernel to free a large file, and quitting waits for it visibly.

use super::discard::DiscardSender;
use crate::cache::Residency;
use crate::config::spec::RunSpec;
use crate::config::Op;
use crate::measure::{Snapshot, SnapshotKind};
use crate::runner::{FailureCause, PreparedMeta, Run, RunError, RunFailed, Step};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest the session thread waits for a snapshot before looking at its commands again.
const COMMAND_POLL: Duration = Duration::from_millis(10);

/// What the UI asks of the session.
#[derive(Debug, Clone)]
pub enum Command {
    /// Stop any run in progress, then start `spec`; updates about it carry `id`.
    Start { id: u64, spec: RunSpec },
    /// Stop the run in progress (pause).
    Stop,
    /// Stop and end the thread.
    Quit,
}

/// What the session (and the residency watcher) report back.
#[derive(Debug)]
pub enum Update {
    /// Run `id` is running with `workers` threads.
    Started {
        id: u64,
        meta: Box<PreparedMeta>,
        workers: usize,
        notes: Vec<String>,
    },
    /// A worker's snapshot of run `id`.
    Snapshot { id: u64, snapshot: Box<Snapshot> },
    /// Run `id` ended (stopped, finished or never started); all its snapshots came before this.
    Stopped {
        id: u64,
        elapsed: Duration,
        error: Option<String>,
    },
    /// Run `id` could not start (bad file, O_DIRECT refused, ...).
    Failed { id: u64, message: String },
    /// Page-cache residency of the explored file.
    Residency(Residency),
    /// The counters of the device under the running setting's file and of the CPUs, sampled by
    /// the session thread every [`DEVICE_SAMPLE_EVERY`] while a run is on (never by the UI
    /// thread): `device` is the device's kernel name, None when the file has none (tmpfs,
    /// overlay, NFS) or it could not be resolved. `at_ns` is on the session's own clock.
    Device {
        device: Option<String>,
        sample: crate::measure::device::Sample,
    },
    /// This process's own I/O accounting (`/proc/self/io`), read by the session thread right
    /// before each [`Update::Device`]: the device panel sets the bytes this run caused the
    /// storage layer to move against the device's, so another process's I/O is told apart.
    OwnIo(crate::facts::taskio::TaskIo),
    /// The facts of run `id` (`crate::facts`, the ones `run` judges by) from its first look
    /// until now: every [`FACTS_EVERY`] while it runs (the live row's verdict), and once more
    /// when it ends, before its [`Update::Stopped`] (the row's). A segment of several passes
    /// has them from its first pass's first look.
    Facts {
        id: u64,
        facts: Arc<crate::facts::Facts>,
    },
    /// What run `id`'s kernel view counted since its last read ([`Run::kernel_read`]), read by
    /// the session thread every [`KERNEL_READ_EVERY`] and at a pass's end (never by the UI
    /// thread); `Err`: why the view is absent. Only runs started with `spec.kernel` send it.
    Kernel {
        id: u64,
        read: Result<Box<crate::kernel::Counts>, String>,
    },
    /// A scratch file is being removed (in the background): how much is left.
    Removing(super::discard::Removal),
    /// A scratch file was removed.
    Removed {
        path: std::path::PathBuf,
        elapsed: Duration,
    },
}

struct Running {
    id: u64,
    spec: RunSpec,
    /// The current pass.
    run: Run,
    /// When the segment's first pass started; every pass's times are shifted to this origin.
    origin: Instant,
    /// Start of the current pass since `origin`, ns.
    offset_ns: u64,
    /// Passes completed before the current one.
    passes: u64,
    failed: bool,
    /// The facts of the passes before the current one, joined; None on the first.
    earlier: Option<Arc<crate::facts::Facts>>,
    /// When the facts were last sent.
    facts_sent: Instant,
}

impl Running {
    /// The segment's facts: the earlier passes' joined with `current` (the current pass's).
    fn facts_with(&self, current: &crate::facts::Facts) -> Arc<crate::facts::Facts> {
        Arc::new(match &self.earlier {
            Some(e) => crate::facts::Facts::joined(e, current),
            None => current.clone(),
        })
    }

    /// Sends the facts from the segment's first look until now.
    fn send_facts_so_far(&mut self, out: &Sender<Update>) {
        self.facts_sent = Instant::now();
        let facts = self.facts_with(&self.run.facts_so_far());
        let _ = out.send(Update::Facts { id: self.id, facts });
    }
}

impl Running {
    /// Whether a pass that ends by itself is followed by a fresh one.
    fn chained(&self) -> bool {
        self.spec.setup.op == Op::Read && !self.spec.target.loop_range && !self.failed
    }
}

/// Handle to the session thread.
pub struct Session {
    commands: Sender<Command>,
    pub updates: Receiver<Update>,
    thread: Option<JoinHandle<()>>,
    /// Kept so the residency watcher can report on the same channel.
    update_tx: Sender<Update>,
    /// Removes finished scratch files off the session thread.
    discard: super::discard::Discard,
}

impl Session {
    /// Starts the session thread (idle until the first [`Command::Start`]).
    pub fn spawn() -> anyhow::Result<Session> {
        let (commands, command_rx) = channel();
        let (update_tx, updates) = channel();
        let out = update_tx.clone();
        let to_ui = update_tx.clone();
        let discard = super::discard::Discard::spawn(Box::new(move |e| {
            let u = match e {
                super::discard::Event::Progress(r) => Update::Removing(r),
                super::discard::Event::Done { path, elapsed } => Update::Removed { path, elapsed },
            };
            let _ = to_ui.send(u);
        }))?;
        let remover = discard.sender().expect("a new removal thread takes files");
        let thread = std::thread::Builder::new()
            .name("diskscope-session".into())
            .spawn(move || session_loop(command_rx, out, remover))?;
        Ok(Session {
            commands,
            updates,
            thread: Some(thread),
            update_tx,
            discard,
        })
    }

    /// Hands a file of ours to the removal thread (a scratch file left by an ended session).
    pub fn discard(&self, created: crate::fsguard::Created) {
        match self.discard.sender() {
            Some(s) => s.discard(created),
            None => {
                created.remove();
            }
        }
    }

    /// Asks the session to stop its run and end, without waiting: the UI keeps drawing (the
    /// removal of a scratch file shows its progress) until [`Session::finished`].
    pub fn begin_quit(&self) {
        self.send(Command::Quit);
    }

    /// Whether the session thread has ended and every scratch file handed to the removal
    /// thread is gone.
    pub fn finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished()) && self.discard.pending() == 0
    }

    /// A sender for other reporters (the residency watcher).
    pub fn update_sender(&self) -> Sender<Update> {
        self.update_tx.clone()
    }

    /// Sends a command; a session that already ended ignores it.
    pub fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }

    /// Stops the run in progress and waits for the thread and for the removal of every scratch
    /// file.
    pub fn shutdown(&mut self) {
        self.send(Command::Quit);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.discard.finish();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// How often the session thread reads the device and CPU counters during a run: the cadence of
/// the throughput samples.
pub const DEVICE_SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// How often the session thread sends the running segment's facts (the live row's verdict).
pub const FACTS_EVERY: Duration = Duration::from_secs(1);

/// How often the session thread reads a run's kernel view (the explorer's kernel panel).
pub const KERNEL_READ_EVERY: Duration = Duration::from_secs(1);

/// Sends what the run's kernel view counted since its last read; nothing when it has none.
fn send_kernel(out: &Sender<Update>, running: &mut Running) {
    if let Some(read) = running.run.kernel_read() {
        let read = read.map(Box::new);
        let _ = out.send(Update::Kernel {
            id: running.id,
            read,
        });
    }
}

fn session_loop(commands: Receiver<Command>, out: Sender<Update>, discard: DiscardSender) {
    let mut current: Option<Running> = None;
    let mut kernel_read_at = std::time::Instant::now();
    let clock = std::time::Instant::now();
    let mut sampler: Option<(std::path::PathBuf, crate::measure::device::Sampler)> = None;
    let mut sampled_at: Option<std::time::Instant> = None;
    loop {
        let command = match &mut current {
            Some(running) => {
                if sampled_at.is_none_or(|t| t.elapsed() >= DEVICE_SAMPLE_EVERY) {
                    sampled_at = Some(std::time::Instant::now());
                    if sampler
                        .as_ref()
                        .is_none_or(|(p, _)| *p != running.spec.target.path)
                    {
                        let path = running.spec.target.path.clone();
                        let s = crate::measure::device::Sampler::for_file(&path);
                        sampler = Some((path, s));
                    }
                    if let Some((_, s)) = &sampler {
                        if let Some(io) = crate::facts::taskio::TaskIo::process() {
                            let _ = out.send(Update::OwnIo(io));
                        }
                        let _ = out.send(Update::Device {
                            device: s.device.as_ref().map(|d| d.name.clone()),
                            sample: s.sample(clock.elapsed().as_nanos() as u64),
                        });
                    }
                }
                if running.facts_sent.elapsed() >= FACTS_EVERY {
                    running.send_facts_so_far(&out);
                }
                if kernel_read_at.elapsed() >= KERNEL_READ_EVERY {
                    kernel_read_at = std::time::Instant::now();
                    send_kernel(&out, running);
                }
                match running.run.poll(COMMAND_POLL) {
                    Step::Snapshot(s) => forward(&out, running, s),
                    Step::Pending => {}
                    Step::Ended => {
                        // The workers ended on their own: the pass is over (or an I/O error).
                        if let Some(running) = current.take() {
                            current = next_pass(running, &out, &discard);
                        }
                        continue;
                    }
                }
                match commands.try_recv() {
                    Ok(c) => c,
                    Err(TryRecvError::Empty) => continue,
                    Err(TryRecvError::Disconnected) => Command::Quit,
                }
            }
            None => commands.recv().unwrap_or(Command::Quit),
        };
        let command = coalesce(command, &commands, &out);
        if let Some(running) = current.take() {
            running.run.stop();
            finish(running, &out, &discard);
        }
        match command {
            Command::Start { id, spec } => current = begin(id, spec, &out),
            Command::Stop => {}
            Command::Quit => return,
        }
    }
}

/// Takes every queued command and keeps the one that matters: `Quit` wins, otherwise the last.
/// Starts that are skipped are reported as stopped so the UI can forget them.
fn coalesce(mut command: Command, commands: &Receiver<Command>, out: &Sender<Update>) -> Command {
    while let Ok(next) = commands.try_recv() {
        if matches!(command, Command::Quit) {
            continue;
        }
        if let Command::Start { id, .. } = command {
            let _ = out.send(Update::Stopped {
                id,
                elapsed: Duration::ZERO,
                error: None,
            });
        }
        command = next;
    }
    command
}

fn forward(out: &Sender<Update>, running: &mut Running, mut snapshot: Box<Snapshot>) {
    snapshot.at_ns += running.offset_ns;
    match snapshot.kind {
        SnapshotKind::Failed(_) => running.failed = true,
        SnapshotKind::Final { .. } if running.passes > 0 => snapshot.kind = SnapshotKind::Interval,
        _ => {}
    }
    let _ = out.send(Update::Snapshot {
        id: running.id,
        snapshot,
    });
}

/// Prepares and starts one pass of `spec`. The explorer stops runs through [`Run::stop`], so the
/// flag is the run's own. A run of the explorer may go on for hours, so it keeps no timeline
/// and no series (each would grow with its length); the segment bins what the chart needs.
fn launch(spec: &RunSpec) -> anyhow::Result<Run> {
    let mut run = Run::start(spec, "", Arc::new(AtomicBool::new(false)))?;
    run.keep_no_history();
    Ok(run)
}

fn begin(id: u64, mut spec: RunSpec, out: &Sender<Update>) -> Option<Running> {
    // A write run replaces its claimed (marked) scratch file with a fresh one (`force`): the
    // runner marks that one as it creates it, so a session killed during the run leaves a file
    // the next session can prove ours and remove (without, a SIGKILL after `w` left
    // `.FILE.diskscope-scratch.<pid>.1` for good).
    if spec.setup.op != Op::Read {
        spec.safety.mark_created = Some(super::scratch::scratch_marker(std::process::id()));
    }
    match launch(&spec) {
        Ok(run) => {
            let _ = out.send(Update::Started {
                id,
                meta: Box::new(run.meta().clone()),
                workers: run.workers(),
                notes: run.notes().to_vec(),
            });
            Some(Running {
                id,
                spec,
                origin: run.started(),
                run,
                offset_ns: 0,
                passes: 0,
                failed: false,
                earlier: None,
                facts_sent: Instant::now(),
            })
        }
        Err(e) => {
            // A write run that failed to start removed what it created itself (inode-checked,
            // in runner::prepare); the path may hold anything else, which is left alone.
            // A run refused for its memory names the explorer's keys, not the command line's
            // flags: the explorer has no --threads or --max-memory.
            let message = match e
                .chain()
                .find_map(|c| c.downcast_ref::<crate::runner::BudgetExceeded>())
            {
                Some(budget) => budget.explorer_text(),
                None => format!("{e:#}"),
            };
            let _ = out.send(Update::Failed { id, message });
            None
        }
    }
}

/// After a pass ended by itself: ends it and starts the next pass of a chained run (a new
/// [`Run`]), or reports the end. A file that changed under the pass ends the chain with that
/// error: the pass's XOR is not the file's.
fn next_pass(
    mut running: Running,
    out: &Sender<Update>,
    discard: &DiscardSender,
) -> Option<Running> {
    send_kernel(out, &mut running);
    if !running.chained() {
        finish(running, out, discard);
        return None;
    }
    let Running {
        id,
        spec,
        run,
        origin,
        offset_ns,
        passes,
        failed: _,
        earlier,
        facts_sent,
    } = running;
    // Its snapshots were all forwarded; what is left is its verdict.
    let ended = run.end();
    let joined = Arc::new(match &earlier {
        Some(e) => crate::facts::Facts::joined(e, &ended.facts),
        None => (*ended.facts).clone(),
    });
    let stopped = |error: String, elapsed: Option<Duration>| {
        let _ = out.send(Update::Facts {
            id,
            facts: joined.clone(),
        });
        let _ = out.send(Update::Stopped {
            id,
            elapsed: elapsed
                .map_or_else(|| origin.elapsed(), |d| d + Duration::from_nanos(offset_ns)),
            error: Some(error),
        });
    };
    if let Some(error) = stopped_error(ended.verdict) {
        stopped(error, ended.elapsed);
        return None;
    }
    match launch(&spec) {
        Ok(run) => Some(Running {
            id,
            spec,
            offset_ns: run.started().duration_since(origin).as_nanos() as u64,
            run,
            origin,
            passes: passes + 1,
            failed: false,
            earlier: Some(joined.clone()),
            facts_sent,
        }),
        Err(e) => {
            stopped(format!("{e:#}"), None);
            None
        }
    }
}

/// Takes the run's remaining snapshots (the final ones carry the XOR), ends it and hands a write
/// run's scratch file to the removal thread.
fn finish(mut running: Running, out: &Sender<Update>, discard: &DiscardSender) {
    while let Some(s) = running.run.next_snapshot() {
        forward(out, &mut running, s);
    }
    // The run's time ends when its workers (and a final fsync) are done: removing the scratch
    // file is cleanup, and unlinking a file of random 4 KiB writes (tens of thousands of extents)
    // can take seconds that must not dilute the row's MiB/s.
    send_kernel(out, &mut running);
    let created = running.run.created().cloned();
    let Running { run, earlier, .. } = running;
    let ended = run.end();
    // The row's facts, before its end: the whole segment's.
    let facts = Arc::new(match &earlier {
        Some(e) => crate::facts::Facts::joined(e, &ended.facts),
        None => (*ended.facts).clone(),
    });
    let _ = out.send(Update::Facts {
        id: running.id,
        facts,
    });
    let elapsed = match ended.elapsed {
        Some(wall) => wall + Duration::from_nanos(running.offset_ns),
        None => running.origin.elapsed(),
    };
    // Only the file this run created (or replaced), while the path still names it: a file put
    // there since is left alone. Removed in the background: the next run must not wait for it.
    if let Some(c) = created {
        // Said at once, with its size: files queued behind another one's removal count in
        // what the screen says is left (quitting waits for all of them).
        if let Ok(m) = std::fs::symlink_metadata(&c.path) {
            let _ = out.send(Update::Removing(super::discard::Removal::queued(
                c.path.clone(),
                m.len(),
            )));
        }
        discard.discard(c);
    }
    let _ = out.send(Update::Stopped {
        id: running.id,
        elapsed,
        error: stopped_error(ended.verdict),
    });
}

/// The error a stopped run reports. A worker's error is not repeated: its snapshot already
/// carried it to the UI.
fn stopped_error(verdict: Result<(), RunError>) -> Option<String> {
    match verdict {
        Ok(())
        | Err(RunError::Failed(RunFailed {
            cause: FailureCause::Worker,
            ..
        })) => None,
        Err(RunError::Failed(failed)) => Some(failed.message),
        Err(RunError::Other(e)) => Some(format!("{e:#}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A removal thread for tests that write nothing (it never gets a file).
    fn no_discard() -> DiscardSender {
        let d = Box::leak(Box::new(
            crate::tui::discard::Discard::spawn(Box::new(|_| {})).unwrap(),
        ));
        d.sender().unwrap()
    }

    /// A 1 MiB file of varied bytes and the spec of a sequential read of it that does not loop
    /// (so the session chains its passes).
    fn chained_read(dir: &tempfile::TempDir) -> (RunSpec, Vec<u8>) {
        let path = dir.path().join("explored");
        let data: Vec<u8> = (0..1u32 << 20).map(|i| (i * 31 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let mut spec = RunSpec::new(&path);
        spec.setup.block_size_bytes = 64 << 10;
        (spec, data)
    }

    /// Steps `running` as the session thread does (without commands) until `passes` passes
    /// completed; `None` when the chain ended (its end was reported on `out`).
    fn step_until(mut running: Running, passes: u64, out: &Sender<Update>) -> Option<Running> {
        let deadline = Instant::now() + Duration::from_secs(20);
        while running.passes < passes {
            assert!(Instant::now() < deadline, "no pass {passes} in 20 s");
            match running.run.poll(COMMAND_POLL) {
                Step::Snapshot(s) => forward(out, &mut running, s),
                Step::Pending => {}
                Step::Ended => running = next_pass(running, out, &no_discard())?,
            }
        }
        Some(running)
    }

    #[test]
    fn the_stepping_api_chains_passes_as_new_runs_of_one_segment_with_one_xor() {
        let dir = tempfile::tempdir().unwrap();
        let (spec, data) = chained_read(&dir);
        let (out, updates) = channel();
        let running = begin(3, spec, &out).expect("the first pass starts");
        let running = step_until(running, 2, &out).expect("the chain goes on");
        running.run.stop();
        finish(running, &out, &no_discard());
        drop(out);
        let (mut bytes, mut finals, mut last_at_ns, mut stopped) = (0u64, Vec::new(), 0, None);
        let mut last_facts = None;
        for u in updates.iter() {
            match u {
                Update::Snapshot { id: 3, snapshot } => {
                    bytes += snapshot.bytes;
                    assert!(
                        snapshot.at_ns >= last_at_ns,
                        "a pass's times go on, never back"
                    );
                    last_at_ns = snapshot.at_ns;
                    if let SnapshotKind::Final { xor, .. } = snapshot.kind {
                        finals.push(xor);
                    }
                }
                Update::Stopped { id: 3, error, .. } => stopped = Some(error),
                Update::Started { id: 3, .. } => {}
                Update::Facts { id: 3, facts } => last_facts = Some(facts),
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(
            stopped,
            Some(None),
            "the segment ends once, without an error"
        );
        assert!(
            bytes >= 2 << 20,
            "two whole passes over 1 MiB, read {bytes}"
        );
        let xor = crate::xor::xor_at(0, &data);
        assert_eq!(
            finals,
            vec![Some(xor)],
            "only the first pass reports its XOR"
        );
        // The segment's facts, sent before its end, span both passes: the process read at
        // least the two passes' bytes through the file (`rchar`), from the first look on.
        let facts = last_facts.expect("the facts came before the end");
        if let Some(io) = facts.run_io() {
            assert!(io.rchar >= 2 << 20, "{io:?}");
        }
    }

    #[test]
    fn a_run_the_session_launches_keeps_no_timeline_however_long_it_goes() {
        let dir = tempfile::tempdir().unwrap();
        let (mut spec, _) = chained_read(&dir);
        spec.target.loop_range = true;
        let mut run = launch(&spec).expect("the run starts");
        let deadline = Instant::now() + Duration::from_millis(1500);
        let mut snapshots = 0;
        while Instant::now() < deadline {
            if let Step::Snapshot(_) = run.poll(COMMAND_POLL) {
                snapshots += 1;
            }
        }
        run.stop();
        while run.next_snapshot().is_some() {}
        let ended = run.end();
        assert!(snapshots > 5, "{snapshots} snapshots");
        assert!(ended.aggregate.ops > 0);
        assert!(
            ended.timeline.rows.is_empty() && ended.timeline.latency.is_empty(),
            "{} intervals kept",
            ended.timeline.rows.len()
        );
        assert!(ended.aggregate.series_bytes.is_empty());
    }

    #[test]
    fn a_file_changed_under_a_pass_ends_the_chain_with_that_error() {
        let dir = tempfile::tempdir().unwrap();
        let (spec, _) = chained_read(&dir);
        let path = spec.target.path.clone();
        let (out, updates) = channel();
        let mut running = begin(4, spec, &out).expect("the first pass starts");
        // Take the first pass's snapshots until its workers ended, then change the file before
        // the pass is ended (where the file is checked).
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            assert!(
                Instant::now() < deadline,
                "the first pass did not end in 20 s"
            );
            match running.run.poll(COMMAND_POLL) {
                Step::Snapshot(s) => forward(&out, &mut running, s),
                Step::Pending => {}
                Step::Ended => break,
            }
        }
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, b"more").unwrap();
        assert!(
            next_pass(running, &out, &no_discard()).is_none(),
            "no pass after a change"
        );
        drop(out);
        let error = updates.iter().find_map(|u| match u {
            Update::Stopped { id: 4, error, .. } => Some(error),
            _ => None,
        });
        let error = error.expect("the end is reported").expect("with an error");
        assert!(
            error.starts_with("the file grew while being read"),
            "{error}"
        );
    }
}
