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
//! lock and exit; a signal that came before the reaction was set gets it on the thread that sets
//! it ([`on_signal`]). The reaction is called outside this module's lock (it may set another) and
//! a panic in it is caught (`ctrlc` calls its handler in a bare loop: one panic there would end
//! the thread and swallow every later Ctrl-C). The explorer's terminal is in raw mode, where
//! Ctrl-C is a key; its event loop takes SIGTERM and SIGHUP as events of its own (`tui/event.rs`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// What to do on a signal besides raising the flag: called with the signal's number in this
/// process (1 for the first).
type Reaction = Arc<dyn Fn(usize) + Send + Sync>;

struct State {
    stop: Arc<AtomicBool>,
    count: AtomicUsize,
    reaction: Mutex<Reacting>,
}

/// The current reaction, and the number of the last signal it (or an earlier one) was called for.
#[derive(Default)]
struct Reacting {
    react: Option<Reaction>,
    reacted: usize,
}

impl Reacting {
    /// The reaction to call for the latest signal, if no reaction has seen it yet (marked seen
    /// here, under the lock). Both the handler and [`on_signal`] ask: a signal that arrives after
    /// the handler is in place but before the front end sets its reaction (fast's read of a pipe
    /// that never ends waited forever on such a Ctrl-C, in 2 of 12 runs of its tests) gets the
    /// reaction when it is set, and no signal gets it twice.
    fn catch_up(&mut self, count: usize) -> Option<(Reaction, usize)> {
        let react = self.react.as_ref()?;
        (count > self.reacted).then(|| {
            self.reacted = count;
            (react.clone(), count)
        })
    }
}

/// Calls a reaction [`Reacting::catch_up`] handed out, after the lock is released; a panic in
/// it is caught, not spread.
fn call(due: Option<(Reaction, usize)>) {
    if let Some((react, n)) = due {
        // A panic is dropped: stderr itself may be what failed (a closed pipe).
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| react(n)));
    }
}

/// The reaction due for the latest signal, taken under the lock.
fn due(s: &State) -> Option<(Reaction, usize)> {
    let mut reaction = s.reaction.lock().unwrap_or_else(|e| e.into_inner());
    reaction.catch_up(s.count.load(Ordering::SeqCst))
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| {
        let installed = ctrlc::set_handler(|| {
            let s = state();
            s.stop.store(true, Ordering::SeqCst);
            s.count.fetch_add(1, Ordering::SeqCst);
            call(due(s));
        });
        if let Err(e) = installed {
            crate::eprintln_shown!("note: Ctrl-C will not stop cleanly: {e}");
        }
        State {
            stop: Arc::new(AtomicBool::new(false)),
            count: AtomicUsize::new(0),
            reaction: Mutex::new(Reacting::default()),
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
/// installs the handler. `react(n)` gets the signal's number (1 for the first). A signal that
/// came before any reaction saw it (after the handler was installed, before this call) is reacted
/// to here, on the caller's thread, once, with the latest signal's number.
pub fn on_signal(react: impl Fn(usize) + Send + Sync + 'static) {
    let s = state();
    s.reaction.lock().unwrap_or_else(|e| e.into_inner()).react = Some(Arc::new(react));
    call(due(s));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_before_the_reaction_is_reacted_to_once_when_it_is_set() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut r = Reacting::default();
        // A signal with no reaction yet: nothing to call, nothing marked as seen.
        assert!(r.catch_up(1).is_none());
        assert_eq!(r.reacted, 0);
        let s = seen.clone();
        r.react = Some(Arc::new(move |n| s.lock().unwrap().push(n)));
        call(r.catch_up(1));
        // The handler, reaching the lock after the reaction caught up, calls nothing again.
        call(r.catch_up(1));
        call(r.catch_up(2));
        assert_eq!(*seen.lock().unwrap(), vec![1, 2]);
    }

    #[test]
    fn a_reaction_that_panics_is_caught_and_the_next_signal_still_gets_one() {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let mut r = Reacting {
            react: Some(Arc::new(move |_| {
                c.fetch_add(1, Ordering::SeqCst);
                panic!("stderr is a closed pipe");
            })),
            reacted: 0,
        };
        call(r.catch_up(1));
        call(r.catch_up(2));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_flag_is_one_for_the_whole_process() {
        let a = stop_flag();
        let b = stop_flag();
        assert!(Arc::ptr_eq(&a, &b));
    }
}
