//! Keeps an eye on the explored file's page-cache residency, and helps cold mode stay cold.
//!
//! `mincore` over a large file takes milliseconds, so it runs on its own thread about once a
//! second ([`RESIDENCY_EVERY`]) and reports through the session's update channel.
//!
//! Cold mode: switching it on evicts the file at once (`fsync` + `POSIX_FADV_DONTNEED`) and
//! measures again, so the gauge shows the drop within a tick. Sequential cold reads then stay
//! cold because the session runs them one pass at a time, evicting before each pass. Random cold
//! reads loop, so for them this thread evicts the file every [`EVICT_EVERY`]; blocks read in the
//! last ≤100 ms can still be hit, which the gauge shows. O_DIRECT (`d`) bypasses the cache
//! entirely.

use super::session::Update;
use crate::cache;
use std::fs::File;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often cold mode evicts the file.
pub const EVICT_EVERY: Duration = Duration::from_millis(100);
/// How often residency is measured.
pub const RESIDENCY_EVERY: Duration = Duration::from_secs(1);

enum WatchCommand {
    /// Cold mode on or off, and whether to keep evicting while on.
    SetCold {
        cold: bool,
        periodic: bool,
    },
    Quit,
}

/// Handle to the watcher thread.
pub struct CacheWatch {
    tx: Sender<WatchCommand>,
    thread: Option<JoinHandle<()>>,
    state: (bool, bool),
}

impl CacheWatch {
    /// Watches `file` (opened read-only by the caller) and reports to `out`.
    pub fn spawn(file: File, out: Sender<Update>) -> anyhow::Result<CacheWatch> {
        let (tx, rx) = channel();
        let thread = std::thread::Builder::new()
            .name("diskscope-cache".into())
            .spawn(move || {
                let mut cold = false;
                let mut periodic = false;
                let mut next_measure = Instant::now();
                loop {
                    let now = Instant::now();
                    if cold && periodic {
                        let _ = cache::evict_file(&file);
                    }
                    if now >= next_measure {
                        if let Ok(r) = cache::residency_of(&file) {
                            if out.send(Update::Residency(r)).is_err() {
                                return;
                            }
                        }
                        next_measure = now + RESIDENCY_EVERY;
                    }
                    let wait = if cold && periodic {
                        EVICT_EVERY
                    } else {
                        next_measure.saturating_duration_since(Instant::now())
                    };
                    match rx.recv_timeout(wait) {
                        Ok(WatchCommand::SetCold {
                            cold: c,
                            periodic: p,
                        }) => {
                            if c && !cold {
                                // Evict and measure right away so the gauge drops at once.
                                let _ = cache::evict_file(&file);
                                next_measure = Instant::now();
                            }
                            cold = c;
                            periodic = p;
                        }
                        Ok(WatchCommand::Quit) | Err(RecvTimeoutError::Disconnected) => return,
                        Err(RecvTimeoutError::Timeout) => {}
                    }
                }
            })?;
        Ok(CacheWatch {
            tx,
            thread: Some(thread),
            state: (false, false),
        })
    }

    /// Switches cold mode and periodic eviction (no message when nothing changes).
    pub fn set_cold(&mut self, cold: bool, periodic: bool) {
        if (cold, periodic) != self.state {
            self.state = (cold, periodic);
            let _ = self.tx.send(WatchCommand::SetCold { cold, periodic });
        }
    }
}

impl Drop for CacheWatch {
    fn drop(&mut self) {
        let _ = self.tx.send(WatchCommand::Quit);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
