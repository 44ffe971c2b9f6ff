//! Ctrl-C, SIGTERM and SIGHUP for the whole process: one handler, installed here and nowhere
//! else, and one stop flag that every front end asks.
//!
//! A process can have one `ctrlc` handler; a second `set_handler` fails. When each front end
//! installed its own (`run`, `fast`, `locality`, `limits`, the sweep), a second one in the same
//! process (tests, or a sweep running a command's code) was silently left without any, and the
//! flag it raised was not the one its workers watched. Here the handler is installed on first
//! use and raises one flag ([`stop_flag`]) that the sweep, a run, a fleet rank and `limits` hand
//! to their workers, counts the signals ([`count`]), and calls the reaction the current front end
//! set with [`on_signal`] (the sweep's "a third Ctrl-C quits at once", `fast`'s immediate exit).
//!
//! The handler runs on `ctrlc`'s own thread, not in signal context, so the reaction may print,
//! lock and exit. The explorer's terminal is in raw mode, where Ctrl-C is a key; its event loop
//! takes SIGTERM and SIGHUP as events of its own (`tui/event.rs`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// What to do on a signal besides raising the flag: called with the signal's number in this
/// process (1 for the first).
type Reaction = Box<dyn Fn(usize) + Send>;

struct State {
    stop: Arc<AtomicBool>,
    count: AtomicUsize,
    reaction: Mutex<Option<Reaction>>,
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| {
        let installed = ctrlc::set_handler(|| {
            let s = state();
            s.stop.store(true, Ordering::SeqCst);
            let n = s.count.fetch_add(1, Ordering::SeqCst) + 1;
            // A reaction that panicked once must not silence every later signal.
            let reaction = s.reaction.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(react) = reaction.as_ref() {
                react(n);
            }
        });
        if let Err(e) = installed {
            eprintln!("note: Ctrl-C will not stop cleanly: {e}");
        }
        State {
            stop: Arc::new(AtomicBool::new(false)),
            count: AtomicUsize::new(0),
            reaction: Mutex::new(None),
        }
    })
}

/// The process's stop flag, raised by the first signal; installs the handler on first use.
/// Hand it to the workers (`runner::Run::start`) or poll it between steps.
pub fn stop_flag() -> Arc<AtomicBool> {
    state().stop.clone()
}

/// Whether a signal has arrived (the flag may also have been raised by hand).
pub fn stopped() -> bool {
    state().stop.load(Ordering::SeqCst)
}

/// How many signals have arrived.
pub fn count() -> usize {
    state().count.load(Ordering::SeqCst)
}

/// Sets what happens on each signal besides raising the flag, replacing an earlier reaction;
/// installs the handler. `react(n)` gets the signal's number (1 for the first).
pub fn on_signal(react: impl Fn(usize) + Send + 'static) {
    let s = state();
    *s.reaction.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(react));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_one_for_the_whole_process() {
        let a = stop_flag();
        let b = stop_flag();
        assert!(Arc::ptr_eq(&a, &b));
    }
}
