//! The explorer's one event type and its source.
//!
//! Three things wake the UI: a tick (the frame clock, which is also when the engine's updates are
//! drained), terminal input (keys, mouse, resizes) and termination signals. They are merged with
//! `tokio::select!` on a current-thread runtime; nothing here blocks, and the engine lives on its
//! own threads, so a slow frame never slows the I/O.

use crossterm::event::{Event as TermEvent, EventStream, KeyEvent, KeyEventKind, MouseEvent};
use futures::StreamExt;
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// Frame and drain interval: 10 frames per second, the rate at which snapshots arrive.
pub const TICK_INTERVAL: Duration = Duration::from_millis(100);

/// Something the event loop reacts to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Time to drain the engine's updates and redraw.
    Tick,
    /// A key was pressed.
    Key(KeyEvent),
    /// A mouse wheel turn or click (the table scrolls and selects with them).
    Mouse(MouseEvent),
    /// The terminal changed size (the next draw adapts).
    Resize,
    /// SIGTERM, SIGHUP or SIGINT (its number), or stdin closed (`None`): leave cleanly.
    Terminate(Option<i32>),
}

/// Merges the tick, the terminal and the signals.
pub struct EventSource {
    tick: tokio::time::Interval,
    terminal: EventStream,
    sigterm: Signal,
    sighup: Signal,
    sigint: Signal,
}

impl EventSource {
    /// Must be called inside the tokio runtime (signal handlers are installed here).
    pub fn new() -> anyhow::Result<Self> {
        let mut tick = tokio::time::interval(TICK_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        Ok(EventSource {
            tick,
            terminal: EventStream::new(),
            sigterm: signal(SignalKind::terminate())?,
            sighup: signal(SignalKind::hangup())?,
            sigint: signal(SignalKind::interrupt())?,
        })
    }

    /// The next event.
    pub async fn next(&mut self) -> anyhow::Result<Event> {
        loop {
            let event = tokio::select! {
                _ = self.tick.tick() => Event::Tick,
                _ = self.sigterm.recv() => Event::Terminate(Some(libc::SIGTERM)),
                _ = self.sighup.recv() => Event::Terminate(Some(libc::SIGHUP)),
                _ = self.sigint.recv() => Event::Terminate(Some(libc::SIGINT)),
                input = self.terminal.next() => match input {
                    None => Event::Terminate(None),
                    Some(Err(e)) => return Err(anyhow::Error::new(e).context("reading the terminal")),
                    Some(Ok(TermEvent::Key(k))) if k.kind != KeyEventKind::Release => Event::Key(k),
                    Some(Ok(TermEvent::Resize(..))) => Event::Resize,
                    Some(Ok(TermEvent::Mouse(m))) => Event::Mouse(m),
                    Some(Ok(_)) => continue,
                },
            };
            return Ok(event);
        }
    }
}
