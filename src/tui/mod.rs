//! The live explorer (issue 4): `diskscope [FILE]` — turn the knobs, watch throughput and
//! latency change.
//!
//! Shaped like ratatui's templates, with the engine kept at arm's length:
//! * [`event`] — one [`event::Event`] enum: tick, key, resize, termination signal.
//! * [`app`] — state and key handling that returns actions (no drawing, no threads).
//! * [`settings`] — the knobs and the validated [`RunSpec`](crate::config::RunSpec) they make.
//! * [`ui`] and [`widgets`] — `impl Widget for &App`, a pure function of the state.
//! * [`session`] — the thread that owns the running engine and restarts it with new settings;
//!   [`cache_watch`] — residency polling and cold-mode eviction on their own thread.
//! * [`save`] — the CSV of `s`; [`export`] — the SVG and JSON of `e`; [`scratch`] — the files
//!   the explorer makes (and removes).
//! * [`kdiskmark`] — the set `k` runs; [`baseline`] — what rows are compared with (Δ%).
//!
//! The engine's workers run on their own OS threads at full speed; the UI drains their snapshots
//! ten times a second and folds them into a [`measure::Aggregate`](crate::measure::Aggregate), the
//! same computation batch mode uses.

pub mod app;
pub mod baseline;
pub mod cache_watch;
pub mod event;
pub mod export;
pub mod kdiskmark;
pub mod save;
pub mod scratch;
pub mod segment;
pub mod session;
pub mod settings;
pub mod ui;
pub mod widgets;

use crate::config::usage;
use anyhow::Context;
use app::{Action, App};
use cache_watch::CacheWatch;
use event::{Event, EventSource};
use ratatui::DefaultTerminal;
use session::{Command, Session};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Runs the explorer on `file` (or on the default scratch file). Returns the exit code.
pub fn execute(file: Option<&Path>, baseline: Option<&Path>) -> anyhow::Result<i32> {
    // A bad FILE is reported first: it is the more specific mistake.
    if let Some(f) = file {
        check_file(f)?;
    }
    // A bad --baseline is refused before the terminal is taken over.
    let baseline = match baseline {
        Some(path) => Some(
            baseline::Baseline::from_saved(path).map_err(|e| usage(format!("--baseline: {e}")))?,
        ),
        None => None,
    };
    if !std::io::stdout().is_terminal() {
        return Err(usage(
            "the live explorer needs a terminal on stdout; for headless runs use \
             `diskscope --batch SWEEP.toml` or `diskscope run FILE -r 1M 1024`",
        ));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the event loop")?;
    runtime.block_on(async {
        let file = match file {
            Some(f) => f.to_path_buf(),
            None => scratch::ensure_default_file(&scratch::default_file_dir()).await?,
        };
        let size_bytes = check_file(&file)?;
        explore(file, size_bytes, baseline).await
    })
}

/// The explored file must be a readable, non-empty regular file. Returns its size.
pub fn check_file(file: &Path) -> anyhow::Result<u64> {
    let p = file.display();
    let meta = match std::fs::metadata(file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(usage(format!(
                "FILE: {p} does not exist; give an existing file, or no FILE to explore a 1 GiB scratch file"
            )))
        }
        Err(e) => return Err(usage(format!("FILE: cannot read {p}: {e}"))),
    };
    if meta.is_dir() {
        return Err(usage(format!(
            "FILE: {p} is a directory; give a regular file"
        )));
    }
    if !meta.is_file() {
        return Err(usage(format!(
            "FILE: {p} is not a regular file; the explorer reads regular files only"
        )));
    }
    if meta.len() == 0 {
        return Err(usage(format!(
            "FILE: {p} is empty; give a file with data to read"
        )));
    }
    std::fs::File::open(file).map_err(|e| usage(format!("FILE: cannot open {p}: {e}")))?;
    Ok(meta.len())
}

async fn explore(
    file: PathBuf,
    size_bytes: u64,
    baseline: Option<baseline::Baseline>,
) -> anyhow::Result<i32> {
    let scratch = scratch::write_scratch_path(&file);
    // Claimed before each write run; removed however we leave (panics included), and only if
    // this process created it.
    let mut write_scratch = scratch::WriteScratch::new(scratch.clone());
    let mut app = App::new(file.clone(), size_bytes, scratch, save::default_csv_path());
    app.load_explain();
    if let Some(b) = baseline {
        app.set_baseline(b);
    }
    if let Some(secs) = std::env::var("DISKSCOPE_KDM_SECONDS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| *v > 0.0 && *v <= 600.0)
    {
        app.kdm_seconds = secs;
    }
    let mut session = Session::spawn()?;
    let watched =
        std::fs::File::open(&file).with_context(|| format!("opening {}", file.display()))?;
    let mut watch = CacheWatch::spawn(watched, session.update_sender())?;
    let mut events = EventSource::new()?;
    let mut terminal = init_terminal()?;
    let first = app.start();
    perform(first, &mut app, &session, &mut write_scratch);
    let outcome = event_loop(
        &mut terminal,
        &mut app,
        &session,
        &mut watch,
        &mut events,
        &mut write_scratch,
    )
    .await;
    ratatui::restore();
    session.shutdown();
    drop(watch);
    while let Ok(u) = session.updates.try_recv() {
        app.apply(u);
    }
    let signal = outcome?;
    if !app.rows.is_empty() {
        eprint!("{}", widgets::results::table_text(&app));
    }
    if let Some(note) = app.exit_note() {
        eprintln!("{note}");
    }
    // Stopped by a signal: cleaned up like a quit, but reported as shells expect (128 + signal),
    // so a script or service manager sees it did not end on its own.
    Ok(signal.map_or(0, |s| 128 + s))
}

/// Enters raw mode and the alternate screen. ratatui's panic hook restores the terminal; it is
/// kept for panics on this (the UI) thread only, so a panicking worker cannot pull the terminal
/// out from under a UI that keeps running (the worker's failure shows on the status line).
fn init_terminal() -> anyhow::Result<DefaultTerminal> {
    let plain_hook = std::panic::take_hook();
    let terminal = ratatui::try_init().context("setting up the terminal")?;
    let restoring_hook = std::panic::take_hook();
    let ui_thread = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == ui_thread {
            restoring_hook(info)
        } else {
            plain_hook(info)
        }
    }));
    Ok(terminal)
}

async fn event_loop(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    session: &Session,
    watch: &mut CacheWatch,
    events: &mut EventSource,
    write_scratch: &mut scratch::WriteScratch,
) -> anyhow::Result<Option<i32>> {
    loop {
        terminal
            .draw(|f| f.render_widget(&*app, f.area()))
            .context("drawing")?;
        match events.next().await? {
            Event::Tick => {
                while let Ok(u) = session.updates.try_recv() {
                    app.apply(u);
                    if let Some(action) = app.take_pending() {
                        perform(action, app, session, write_scratch);
                    }
                }
            }
            Event::Resize => {}
            Event::Terminate(signal) => return Ok(signal),
            Event::Key(key) => {
                let action = app.handle_key(key);
                perform(action, app, session, write_scratch);
            }
        }
        watch.set_cold(app.wants_cold(), app.wants_periodic_eviction());
        if app.quit {
            return Ok(None);
        }
    }
}

/// Carries out what a key asked for.
fn perform(action: Action, app: &mut App, session: &Session, scratch: &mut scratch::WriteScratch) {
    match action {
        Action::None | Action::Quit => {}
        Action::Start { id, spec } if spec.op == crate::config::Op::Write => {
            // Never write through or replace a file this explorer did not create.
            match scratch.claim() {
                Ok(()) => session.send(Command::Start { id, spec }),
                Err(message) => {
                    // The previous run stops; the refused one ends as a failed start would.
                    session.send(Command::Stop);
                    app.apply(session::Update::Failed { id, message });
                }
            }
        }
        Action::Start { id, spec } => session.send(Command::Start { id, spec }),
        Action::Stop => session.send(Command::Stop),
        Action::KDiskMark => {
            let caps = kdiskmark::KdmCaps {
                direct: kdiskmark::direct_works(&app.file),
                io_uring: crate::engine::probe_io_uring().is_ok(),
            };
            let start = app.begin_kdiskmark(caps);
            perform(start, app, session, scratch);
        }
        Action::Export => {
            app.message = match export::write_session(app) {
                Ok(paths) => format!(
                    "exported {}",
                    paths
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
                Err(e) => format!("error: {e:#}"),
            };
        }
        Action::Save => {
            let rows = app.rows_to_save();
            if rows.is_empty() {
                app.message = "nothing to save yet".into();
                return;
            }
            app.message = match save::append_rows(&app.csv_path, &rows) {
                Ok(path) => {
                    app.csv_path = path;
                    app.rows_saved = app.rows.len();
                    format!(
                        "saved {} row{} to {}",
                        rows.len(),
                        if rows.len() == 1 { "" } else { "s" },
                        app.csv_path.display()
                    )
                }
                Err(e) => format!("error: {e:#}"),
            };
        }
    }
}
