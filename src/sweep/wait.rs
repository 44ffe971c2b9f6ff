//! Waiting that Ctrl-C can cut short: the sweep's executor and its `command` kind both run work
//! that can take long (warming a big file, measuring system calls, an external program) while
//! looking at the stop flag every [`POLL`].

use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

/// How often a waiting loop looks at the stop flag.
pub const POLL: Duration = Duration::from_millis(50);

/// Runs `f` on its own thread; the receiver gets its result.
pub fn spawn_result<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::sync::mpsc::Receiver<T> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx
}

/// Waits for a result, or returns None as soon as `stop` is raised (the thread is abandoned and
/// ends with the process).
pub fn wait_or_stop<T>(rx: &std::sync::mpsc::Receiver<T>, stop: &AtomicBool) -> Option<T> {
    loop {
        match rx.recv_timeout(POLL) {
            Ok(v) => return Some(v),
            Err(RecvTimeoutError::Timeout) if stop.load(Ordering::Relaxed) => return None,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// Reads the first `len` bytes of `path` so they are cached, like `cache::prepare` does for
/// `warm`, but looking at the stop flag between chunks: warming a big uncached file takes seconds,
/// and Ctrl-C must not wait for it. Returns false when stopped.
pub fn warm_interruptibly(
    path: &std::path::Path,
    len: u64,
    stop: &AtomicBool,
) -> anyhow::Result<bool> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path)
        .with_context(|| format!("opening {} to warm it", crate::text::shown_path(path)))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0u64;
    while off < len {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let want = (buf.len() as u64).min(len - off) as usize;
        let n = f
            .read_at(&mut buf[..want], off)
            .with_context(|| format!("warming the cache at offset {off}"))?;
        if n == 0 {
            break;
        }
        off += n as u64;
    }
    Ok(true)
}
