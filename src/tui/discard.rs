//! Removing the explorer's write scratch files on a thread of their own.
//!
//! Unlinking a 1 GiB file of random 4 KiB writes can keep the kernel busy for seconds, and on a
//! `discard` mount for minutes (it issues a discard for every extent). Done on the session
//! thread, that froze the screen and the next run for 80–180 s. So the session hands each
//! finished scratch file here ([`DiscardSender::discard`]) and goes on at once; the next write
//! run gets a fresh name, so it never waits for the old file either.
//!
//! The file is removed in steps — truncated from the end, [`STEP_BYTES`] at a time, then
//! unlinked — so the screen can show how much is left ([`Update::Removing`]), and the time it
//! has taken counts on screen even while one step sits in the kernel. Only the inode the run
//! created is touched: the file is opened without following links and compared with the
//! record before the first truncation, and unlinked only while the path still names it.
//!
//! `DISKSCOPE_TEST_SLOW_REMOVAL_MS` (tests only: read only in builds with debug assertions or
//! the `test-hooks` feature, never in a release build) sleeps
//! that long after each step, so a test can watch a slow removal without a slow disk.

use crate::fsguard::Created;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the removal thread reports (the session forwards it to the UI as an update).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// How far a removal has come.
    Progress(Removal),
    /// A file was removed.
    Done { path: PathBuf, elapsed: Duration },
}

/// Where the removal thread reports.
pub type Report = Box<dyn Fn(Event) + Send>;

/// Bytes freed per truncation step.
pub const STEP_BYTES: u64 = 16 << 20;

/// A scratch file being removed, as the screen shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    pub path: PathBuf,
    pub total_bytes: u64,
    pub left_bytes: u64,
    /// When the removal began (the screen counts the time from here, also while a step is
    /// still in the kernel); for a file still queued, when it was queued.
    pub started: Instant,
    /// Removed (the screen keeps it in the total until every file queued with it is gone).
    pub done: bool,
}

impl Removal {
    /// A file just queued for removal: all of it left.
    pub fn queued(path: PathBuf, total_bytes: u64) -> Removal {
        Removal {
            path,
            total_bytes,
            left_bytes: total_bytes,
            started: Instant::now(),
            done: false,
        }
    }
}

/// The removal thread; [`Discard::finish`] waits for what is queued.
pub struct Discard {
    tx: Option<Sender<Created>>,
    pending: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

/// Hands files to the removal thread (cheap to clone, one per sender thread).
#[derive(Clone)]
pub struct DiscardSender {
    tx: Sender<Created>,
    pending: Arc<AtomicUsize>,
}

impl DiscardSender {
    /// Queues `created` for removal and returns at once. If the removal thread is gone, removes
    /// it here (nothing is ever left behind for want of a thread).
    pub fn discard(&self, created: Created) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if let Err(e) = self.tx.send(created) {
            e.0.remove();
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Discard {
    /// Starts the removal thread; it reports through `out`.
    pub fn spawn(out: Report) -> std::io::Result<Discard> {
        let (tx, rx) = channel::<Created>();
        let pending = Arc::new(AtomicUsize::new(0));
        let left = pending.clone();
        let slow = std::env::var("DISKSCOPE_TEST_SLOW_REMOVAL_MS")
            .ok()
            .filter(|_| cfg!(any(debug_assertions, feature = "test-hooks")))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|ms| Duration::from_millis(ms.min(10_000)));
        let thread = std::thread::Builder::new()
            .name("diskscope-discard".into())
            .spawn(move || {
                for created in rx {
                    remove_in_steps(&created, &out, slow);
                    left.fetch_sub(1, Ordering::SeqCst);
                }
            })?;
        Ok(Discard {
            tx: Some(tx),
            pending,
            thread: Some(thread),
        })
    }

    pub fn sender(&self) -> Option<DiscardSender> {
        self.tx.as_ref().map(|tx| DiscardSender {
            tx: tx.clone(),
            pending: self.pending.clone(),
        })
    }

    /// Files queued or being removed.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }

    /// Waits until every queued file is removed and ends the thread.
    pub fn finish(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Discard {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Truncates `created` from the end in steps of [`STEP_BYTES`], reporting each, then unlinks it
/// — only while its path names the inode the run created. Anything else is left alone.
pub fn remove_in_steps(created: &Created, out: &dyn Fn(Event), slow: Option<Duration>) {
    let started = Instant::now();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&created.path);
    // Already gone (or not openable: then not ours to truncate), or another file now: nothing
    // to remove, which is said too (the screen counted the file as queued).
    let done = || {
        out(Event::Done {
            path: created.path.clone(),
            elapsed: started.elapsed(),
        })
    };
    let Ok(file) = file else {
        return done();
    };
    if !created.is_same(&file) {
        return done();
    }
    let total_bytes = file.metadata().map_or(0, |m| m.len());
    let report = |left_bytes: u64| {
        out(Event::Progress(Removal {
            path: created.path.clone(),
            total_bytes,
            left_bytes,
            started,
            done: false,
        }));
    };
    report(total_bytes);
    let mut left = total_bytes;
    while left > 0 {
        left = left.saturating_sub(STEP_BYTES);
        if file.set_len(left).is_err() {
            break; // the unlink below frees the rest
        }
        report(left);
        if let Some(d) = slow {
            std::thread::sleep(d);
        }
    }
    drop(file);
    created.remove();
    out(Event::Done {
        path: created.path.clone(),
        elapsed: started.elapsed(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_removal_reports_its_progress_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(".f.diskscope-scratch.1.1");
        let (f, created) = crate::fsguard::create_exclusive(&path).unwrap();
        f.set_len(3 * STEP_BYTES + 5).unwrap(); // sparse: costs no disk
        drop(f);
        let (out, updates) = channel();
        let mut discard = Discard::spawn(Box::new(move |e| {
            let _ = out.send(e);
        }))
        .unwrap();
        discard.sender().unwrap().discard(created);
        discard.finish();
        assert_eq!(discard.pending(), 0);
        assert!(!path.exists());
        let lefts: Vec<u64> = updates
            .try_iter()
            .filter_map(|u| match u {
                Event::Progress(r) => Some(r.left_bytes),
                _ => None,
            })
            .collect();
        assert_eq!(
            lefts,
            vec![3 * STEP_BYTES + 5, 2 * STEP_BYTES + 5, STEP_BYTES + 5, 5, 0]
        );
    }

    #[test]
    fn a_file_put_in_place_of_the_scratch_file_is_neither_truncated_nor_removed() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(".f.diskscope-scratch.1.1");
        let (_, created) = crate::fsguard::create_exclusive(&path).unwrap();
        std::fs::rename(&path, d.path().join("moved")).unwrap();
        std::fs::write(&path, b"the user's").unwrap();
        remove_in_steps(&created, &|_| {}, None);
        assert_eq!(std::fs::read(&path).unwrap(), b"the user's");
    }
}
