//! The running engine, owned by one "session" thread so the UI never waits on it.
//!
//! The UI sends [`Command`]s (start a run with these settings, stop, quit) and drains
//! [`Update`]s with `try_recv` on each tick. The session thread forwards the runner's snapshots
//! as they arrive, and does the slow parts of a restart — raising the stop flag, waiting for the
//! workers to finish their current operation, joining them, opening the new run's files and
//! applying its cache mode — off the UI thread. Commands that pile up while it is busy are
//! coalesced (only the last start matters), so mashing a key never queues seconds of restarts.
//!
//! A read that does not loop (cold sequential reads, see [`Settings::spec`]) is *chained*: when
//! a pass over the file ends, the session prepares the run again — which evicts the file — and
//! starts the next pass under the same id, shifting its snapshots' times by the pass's start so
//! the UI sees one continuous segment. Only the first pass's final snapshots keep their XOR; later
//! ones are forwarded as intervals so the XOR is not cancelled out by a second full pass.
//!
//! [`Settings::spec`]: super::settings::Settings::spec
//!
//! A write run always targets the explorer's scratch file; the session removes that file when
//! the write run ends, so switching back to reads (or quitting) leaves nothing behind.

use crate::cache::Residency;
use crate::config::{Op, RunSpec};
use crate::measure::{Snapshot, SnapshotKind};
use crate::runner::{self, PreparedMeta, RunHandle};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, TryRecvError};
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
}

struct Running {
    id: u64,
    spec: RunSpec,
    handle: RunHandle,
    /// When the segment's first pass started; every pass's times are shifted to this origin.
    origin: Instant,
    /// Start of the current pass since `origin`, ns.
    offset_ns: u64,
    /// Passes completed before the current one.
    passes: u64,
    failed: bool,
}

impl Running {
    /// Whether a pass that ends by itself is followed by a fresh one.
    fn chained(&self) -> bool {
        self.spec.op == Op::Read && !self.spec.loop_range && !self.failed
    }
}

/// Handle to the session thread.
pub struct Session {
    commands: Sender<Command>,
    pub updates: Receiver<Update>,
    thread: Option<JoinHandle<()>>,
    /// Kept so the residency watcher can report on the same channel.
    update_tx: Sender<Update>,
}

impl Session {
    /// Starts the session thread (idle until the first [`Command::Start`]).
    pub fn spawn() -> anyhow::Result<Session> {
        let (commands, command_rx) = channel();
        let (update_tx, updates) = channel();
        let out = update_tx.clone();
        let thread = std::thread::Builder::new()
            .name("diskscope-session".into())
            .spawn(move || session_loop(command_rx, out))?;
        Ok(Session {
            commands,
            updates,
            thread: Some(thread),
            update_tx,
        })
    }

    /// A sender for other reporters (the residency watcher).
    pub fn update_sender(&self) -> Sender<Update> {
        self.update_tx.clone()
    }

    /// Sends a command; a session that already ended ignores it.
    pub fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }

    /// Stops the run in progress and waits for the thread (and so for the scratch file's
    /// removal).
    pub fn shutdown(&mut self) {
        self.send(Command::Quit);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn session_loop(commands: Receiver<Command>, out: Sender<Update>) {
    let mut current: Option<Running> = None;
    loop {
        let command = match &mut current {
            Some(run) => {
                match run.handle.rx.recv_timeout(COMMAND_POLL) {
                    Ok(s) => forward(&out, run, s),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => {
                        // The workers ended on their own: the pass is over (or an I/O error).
                        if let Some(run) = current.take() {
                            current = next_pass(run, &out);
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
        if let Some(run) = current.take() {
            run.handle.stop();
            finish(run, &out);
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

fn forward(out: &Sender<Update>, run: &mut Running, mut snapshot: Snapshot) {
    snapshot.at_ns += run.offset_ns;
    match snapshot.kind {
        SnapshotKind::Failed(_) => run.failed = true,
        SnapshotKind::Final { .. } if run.passes > 0 => snapshot.kind = SnapshotKind::Interval,
        _ => {}
    }
    let _ = out.send(Update::Snapshot {
        id: run.id,
        snapshot: Box::new(snapshot),
    });
}

fn launch(spec: &RunSpec) -> anyhow::Result<(PreparedMeta, Vec<String>, RunHandle)> {
    let prepared = runner::prepare(spec)?;
    let meta = prepared.meta();
    let notes = prepared.notes.clone();
    let handle = runner::start(prepared, Arc::new(AtomicBool::new(false)))?;
    Ok((meta, notes, handle))
}

fn begin(id: u64, spec: RunSpec, out: &Sender<Update>) -> Option<Running> {
    match launch(&spec) {
        Ok((meta, notes, handle)) => {
            let _ = out.send(Update::Started {
                id,
                meta: Box::new(meta),
                workers: handle.workers(),
                notes,
            });
            Some(Running {
                id,
                spec,
                origin: handle.started(),
                handle,
                offset_ns: 0,
                passes: 0,
                failed: false,
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

/// After a pass ended by itself: starts the next pass of a chained run, or reports the end.
fn next_pass(mut run: Running, out: &Sender<Update>) -> Option<Running> {
    if !run.chained() {
        finish(run, out);
        return None;
    }
    match launch(&run.spec) {
        Ok((_, _, handle)) => {
            let old = std::mem::replace(&mut run.handle, handle);
            let _ = old.join();
            run.passes += 1;
            run.offset_ns = run.handle.started().duration_since(run.origin).as_nanos() as u64;
            Some(run)
        }
        Err(e) => {
            let _ = out.send(Update::Stopped {
                id: run.id,
                elapsed: run.origin.elapsed(),
                error: Some(format!("{e:#}")),
            });
            None
        }
    }
}

/// Drains the run's remaining snapshots (the final ones carry the XOR), joins the workers and
/// removes a write run's scratch file.
fn finish(mut run: Running, out: &Sender<Update>) {
    while let Ok(s) = run.handle.rx.recv() {
        forward(out, &mut run, s);
    }
    // The run's time ends when its workers (and a final fsync) are done: removing the scratch
    // file is cleanup, and unlinking a file of random 4 KiB writes (tens of thousands of extents)
    // can take seconds that must not dilute the row's MiB/s.
    let created = run.handle.created().cloned();
    let joined = run.handle.join();
    let elapsed = match &joined {
        Ok(wall) => *wall + Duration::from_nanos(run.offset_ns),
        Err(_) => run.origin.elapsed(),
    };
    // Only the file this run created (or replaced), while the path still names it: a file put
    // there since is left alone.
    if let Some(c) = created {
        c.remove();
    }
    let error = joined.err().map(|e| format!("{e:#}"));
    let _ = out.send(Update::Stopped {
        id: run.id,
        elapsed,
        error,
    });
}
