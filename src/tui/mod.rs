//! The live explorer (issue 4): `diskscope [FILE]` — turn the knobs, watch throughput and
//! latency change.
//!
//! Shaped like ratatui's templates, with the engine kept at arm's length:
//! * [`event`] — one [`event::Event`] enum: tick, key, resize, termination signal.
//! * [`app`] — state and key handling that returns actions (no drawing, no threads).
//! * [`settings`] — the knobs and the validated [`RunSpec`](crate::config::spec::RunSpec) they make.
//! * [`ui`] and [`widgets`] — `impl Widget for &App`, a pure function of the state.
//! * [`session`] — the thread that owns the running engine and restarts it with new settings;
//!   [`cache_watch`] — residency polling and cold-mode eviction on their own thread.
//! * [`save`] — the CSV of `s`; [`export`] — the SVG and JSON of `e`; [`scratch`] — the files
//!   the explorer makes (and removes).
//! * [`keys`] — every key, its command and help text, declared once;
//! * [`kdiskmark`] — the set `k` runs; [`baseline`] — what rows are compared with (Δ%).
//!
//! The engine's workers run on their own OS threads at full speed; the UI drains their snapshots
//! ten times a second and folds them into a [`measure::Aggregate`](crate::measure::Aggregate), the
//! same computation batch mode uses.

pub mod app;
pub mod baseline;
pub mod cache_watch;
pub mod discard;
pub mod event;
pub mod export;
pub mod history;
pub mod input;
pub mod kdiskmark;
pub mod kernel_view;
pub mod keys;
pub mod rows;
pub mod save;
pub mod scratch;
pub mod segment;
pub mod session;
pub mod settings;
pub mod state;
pub mod ui;
pub mod updates;
pub mod widgets;

use crate::config::usage;
use anyhow::Context;
use app::{Action, App};
use cache_watch::CacheWatch;
use event::{Event, EventSource};
use ratatui::DefaultTerminal;
use session::{Command, Session};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Runs the explorer on `file` (or on the default scratch file). Returns the exit code.
pub fn execute(
    file: Option<&Path>,
    baseline: Option<&Path>,
    start: Option<settings::Settings>,
) -> anyhow::Result<i32> {
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
        explore(file, size_bytes, baseline, start).await
    })
}

/// The explored file must be a readable, non-empty regular file. Returns its size.
pub fn check_file(file: &Path) -> anyhow::Result<u64> {
    let p = crate::text::shown_path(file);
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
    start: Option<settings::Settings>,
) -> anyhow::Result<i32> {
    let scratch = scratch::write_scratch_path(&file);
    // Claimed fresh before each write run; what is left is removed however we leave (panics
    // included), and only what this process created.
    let mut write_scratch = Writes {
        scratch: scratch::WriteScratch::new(scratch.clone()),
        runs: Vec::new(),
    };
    let mut app = App::new(file.clone(), size_bytes, scratch, save::default_csv_path());
    // `--fio-job`: a job's settings instead of the default start (cli::explorer_settings).
    app.settings = start.unwrap_or(app.settings);
    app.load_explain();
    if let Some(b) = baseline {
        app.set_baseline(b);
    }
    if let Some(secs) = std::env::var("DISKSCOPE_KDM_SECONDS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|v| *v > 0.0 && *v <= 600.0)
    {
        app.kdm.seconds = secs;
    }
    let mut session = Session::spawn()?;
    // Scratch files of ours that a killed session left (proved by owner, marker and a pid that
    // is gone): removed in the background, saying so.
    let left = scratch::leftovers(&file);
    if !left.is_empty() {
        let mut pids: Vec<u32> = left.iter().map(|(_, pid)| *pid).collect();
        pids.dedup();
        app.message = format!(
            "removing {} scratch file{} left by an ended session (pid {})",
            left.len(),
            if left.len() == 1 { "" } else { "s" },
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        );
        // Also on stderr, before the screen is taken: it is still there after the explorer.
        let _ = writeln!(std::io::stderr(), "note: {}", app.message);
        for (c, _) in left {
            session.discard(c);
        }
    }
    let watched = std::fs::File::open(&file)
        .with_context(|| format!("opening {}", crate::text::shown_path(&file)))?;
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
    // Leaving: the run stops and every scratch file is removed *before* the terminal is given
    // back, with the progress on screen while the terminal still works (a closed terminal
    // cannot show it, and must not stop the cleanup).
    wait_for_cleanup(&mut terminal, &mut app, &session, outcome.is_ok()).await;
    session.shutdown();
    drop(watch);
    while let Ok(u) = session.updates.try_recv() {
        app.apply(u);
    }
    drop(write_scratch);
    restore_terminal();
    // Rows made after the last `s` are not lost: they go to the session's CSV too.
    let saved_now = save_unsaved(&mut app);
    let signal = outcome?;
    let mut err = std::io::stderr().lock();
    if !app.rows.is_empty() {
        let _ = write!(
            err,
            "{}",
            crate::text::shown_lines(&widgets::results::table_text(&app))
        );
        // A mixed row's directions apart, under the table that shows their sum.
        for r in &app.rows {
            let detail = widgets::mix::row_detail(r).or_else(|| widgets::openloop::row_detail(r));
            if let Some(detail) = detail {
                let _ = writeln!(
                    err,
                    "{}: {detail}",
                    crate::text::shown(&widgets::results::setting_label(r))
                );
            }
        }
    }
    if let Some(note) = app.exit_note(saved_now) {
        let _ = writeln!(err, "{}", crate::text::shown(&note));
    }
    // Stopped by a signal: cleaned up like a quit, but reported as shells expect (128 + signal),
    // so a script or service manager sees it did not end on its own.
    Ok(signal.map_or(0, |s| 128 + s))
}

/// `s`: appends the finished rows not saved yet and the live run as of now to the session's
/// CSV; returns the status line's message.
pub fn save_now(app: &mut App) -> String {
    let rows = app.rows_to_save();
    if rows.is_empty() {
        return "nothing to save yet".into();
    }
    match save::append_rows(&app.explored.csv_path, &rows) {
        Ok(path) => {
            app.explored.csv_path = path;
            app.runs.rows_saved = app.rows.len();
            app.runs.csv_rows_written += rows.len();
            format!(
                "saved {} row{} to {}",
                rows.len(),
                if rows.len() == 1 { "" } else { "s" },
                crate::text::shown_path(&app.explored.csv_path)
            )
        }
        Err(e) => format!("error: {e:#}"),
    }
}

/// At exit: appends the finished rows not saved yet to the session's CSV. Returns how many
/// were written now, or the error.
pub fn save_unsaved(app: &mut App) -> Result<usize, String> {
    let rows = app.rows[app.runs.rows_saved.min(app.rows.len())..].to_vec();
    if rows.is_empty() {
        return Ok(0);
    }
    match save::append_rows(&app.explored.csv_path, &rows) {
        Ok(path) => {
            app.explored.csv_path = path;
            app.runs.rows_saved = app.rows.len();
            app.runs.csv_rows_written += rows.len();
            Ok(rows.len())
        }
        Err(e) => Err(format!("{e:#}")),
    }
}

/// After `q`, a signal or a lost terminal: asks the session to stop and waits until its run
/// ended and every scratch file is removed. While the terminal works the screen keeps being
/// drawn, saying what it waits for; a terminal that fails (closed, EIO) is no longer drawn,
/// and the wait goes on without it. Keys and signals meanwhile are ignored: leaving before the
/// cleanup would leave the scratch file behind.
async fn wait_for_cleanup(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    session: &Session,
    mut terminal_ok: bool,
) {
    app.runs.quitting = true;
    app.runs.quit_since = Some(std::time::Instant::now());
    session.begin_quit();
    loop {
        while let Ok(u) = session.updates.try_recv() {
            app.apply(u);
        }
        if session.finished() {
            return;
        }
        if terminal_ok {
            terminal_ok = terminal.draw(|f| f.render_widget(&*app, f.area())).is_ok();
        }
        tokio::time::sleep(event::TICK_INTERVAL).await;
    }
}

/// Gives the terminal back (raw mode off, main screen); errors are ignored, since a closed
/// terminal (EIO) has nothing to restore and must not turn the way out into a panic.
pub fn restore_terminal() {
    let _ = crossterm::execute!(std::io::stdout(), crossterm::event::DisableMouseCapture);
    let _ = ratatui::try_restore();
}

/// Enters raw mode and the alternate screen. The panic hook restores the terminal (ignoring
/// errors: ratatui's own hook prints them, and printing to a closed terminal panics inside the
/// hook, which aborts and skips every cleanup); it is kept for panics on this (the UI) thread
/// only, so a panicking worker cannot pull the terminal out from under a UI that keeps running
/// (the worker's failure shows on the status line).
fn init_terminal() -> anyhow::Result<DefaultTerminal> {
    let plain_hook = std::panic::take_hook();
    let terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            restore_terminal();
            let _ = std::panic::take_hook();
            std::panic::set_hook(plain_hook);
            return Err(anyhow::Error::new(e).context("setting up the terminal"));
        }
    };
    // The wheel scrolls the table and a click selects a row (Shift-drag still selects text
    // in most terminals). Without it the explorer works as before.
    let _ = crossterm::execute!(std::io::stdout(), crossterm::event::EnableMouseCapture);
    let _ratatui_hook = std::panic::take_hook();
    let ui_thread = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == ui_thread {
            restore_terminal();
        }
        plain_hook(info)
    }));
    Ok(terminal)
}

async fn event_loop(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    session: &Session,
    watch: &mut CacheWatch,
    events: &mut EventSource,
    write_scratch: &mut Writes,
) -> anyhow::Result<Option<i32>> {
    loop {
        // What `perform` said (save, export) goes into the log too.
        app.sync_log();
        terminal
            .draw(|f| {
                let a = f.area();
                app.view.screen_size = Some((a.width, a.height));
                f.render_widget(&*app, a)
            })
            .context("drawing")?;
        match events.next().await? {
            Event::Tick => {
                while let Ok(u) = session.updates.try_recv() {
                    write_scratch.note(&u);
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
            Event::Mouse(m) => {
                if let Ok(size) = terminal.size() {
                    let screen = ratatui::layout::Rect::new(0, 0, size.width, size.height);
                    let table = ui::areas(app, screen).results;
                    app.handle_mouse(m, table);
                }
            }
        }
        watch.set_cold(app.wants_cold(), app.wants_periodic_eviction());
        if app.runs.quit {
            return Ok(None);
        }
    }
}

/// The write runs' scratch files: each claimed for its run, and released when a run that never
/// used its file ends (a start passed over for a later one), so empty files do not pile up
/// beside the explored file until exit.
struct Writes {
    scratch: scratch::WriteScratch,
    /// The file each write run was given, until it ends.
    runs: Vec<(u64, PathBuf)>,
}

impl Writes {
    /// Looks at an update: a write run that ended gives its unused file back.
    fn note(&mut self, u: &session::Update) {
        let id = match u {
            session::Update::Stopped { id, .. } | session::Update::Failed { id, .. } => *id,
            _ => return,
        };
        if let Some(i) = self.runs.iter().position(|(r, _)| *r == id) {
            let (_, path) = self.runs.remove(i);
            self.scratch.release_unused(&path);
        }
    }
}

/// Carries out what a key asked for.
fn perform(action: Action, app: &mut App, session: &Session, writes: &mut Writes) {
    // With the kernel panel on, the run attaches the view, as `run --kernel` (this process's
    // requests) does.
    let action = match action {
        Action::Start { id, mut spec } if app.kernel.on => {
            spec.kernel = Some(crate::kernel::FilterBy::Process);
            Action::Start { id, spec }
        }
        a => a,
    };
    match action {
        Action::None | Action::Quit => {}
        Action::Start { id, mut spec } if spec.setup.op == crate::config::Op::Write => {
            // A fresh file of our own for every write run: never a file this explorer did not
            // create, and never one still being removed.
            match writes.scratch.claim() {
                Ok(path) => {
                    spec.target.path = path.clone();
                    writes.runs.push((id, path.clone()));
                    app.scratch_claimed(path);
                    session.send(Command::Start { id, spec })
                }
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
            perform(start, app, session, writes);
        }
        Action::Export => {
            app.message = match export::write_session(app) {
                Ok(paths) => format!(
                    "exported {}",
                    paths
                        .iter()
                        .map(|p| crate::text::shown_path(p).into_owned())
                        .collect::<Vec<_>>()
                        .join(" and ")
                ),
                Err(e) => format!("error: {e:#}"),
            };
        }
        Action::Save => app.message = save_now(app),
    }
}
