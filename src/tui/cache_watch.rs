//! Keeps an eye on the explored file's page-cache residency, and keeps it cold in cold mode.
//!
//! `mincore` over a large file takes milliseconds, so it runs on its own thread about once a
//! second ([`RESIDENCY_EVERY`]) and reports through the session's update channel.
//!
//! Cold mode has to stay cold while a looping read runs: the first pass would otherwise warm the
//! cache and every later pass would be a warm read. The choice made here: while cold mode is on,
//! this thread evicts the file (`fsync` + `POSIX_FADV_DONTNEED`) every [`EVICT_EVERY`], and at
//! once when cold mode is switched on (the gauge then shows the drop within a tick). Pages read
//! in the last ≤100 ms can still be hit, so a cold figure is "mostly cold"; the residency gauge
//! shows how cold. O_DIRECT (`d`) is the way to bypass the cache entirely.

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
    SetCold(bool),
    Quit,
}

/// Handle to the watcher thread.
pub struct CacheWatch {
    tx: Sender<WatchCommand>,
    thread: Option<JoinHandle<()>>,
    cold: bool,
}

impl CacheWatch {
    /// Watches `file` (opened read-only by the caller) and reports to `out`.
    pub fn spawn(file: File, out: Sender<Update>) -> anyhow::Result<CacheWatch> {
        let (tx, rx) = channel();
        let thread = std::thread::Builder::new()
            .name("diskscope-cache".into())
            .spawn(move || {
                let mut cold = false;
                let mut next_measure = Instant::now();
                loop {
                    let now = Instant::now();
                    if cold {
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
                    let wait = if cold {
                        EVICT_EVERY
                    } else {
                        next_measure.saturating_duration_since(Instant::now())
                    };
                    match rx.recv_timeout(wait) {
                        Ok(WatchCommand::SetCold(c)) => {
                            if c && !cold {
                                // Evict and measure right away so the gauge drops at once.
                                next_measure = Instant::now();
                            }
                            cold = c;
                        }
                        Ok(WatchCommand::Quit) | Err(RecvTimeoutError::Disconnected) => return,
                        Err(RecvTimeoutError::Timeout) => {}
                    }
                }
            })?;
        Ok(CacheWatch {
            tx,
            thread: Some(thread),
            cold: false,
        })
    }

    /// Switches cold mode (no message when it does not change).
    pub fn set_cold(&mut self, cold: bool) {
        if cold != self.cold {
            self.cold = cold;
            let _ = self.tx.send(WatchCommand::SetCold(cold));
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
