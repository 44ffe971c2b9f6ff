//! The live explorer: rendering (state → buffer with ratatui's TestBackend), key handling
//! (key → action → new settings). The session thread on a real file is in `tui/session.rs`; the
//! real binary, driven through tmux, in `tui/e2e.rs`.

mod e2e;
mod session;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use diskscope::cache::Residency;
use diskscope::config::{CacheMode, Method, Op};
use diskscope::measure::{new_latency_histogram, Snapshot, SnapshotKind};
use diskscope::runner::PreparedMeta;
use diskscope::tui::app::{Action, App};
use diskscope::tui::session::Update;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

const MIB: u64 = 1 << 20;

fn app() -> App {
    App::new(
        PathBuf::from("/data/big.bin"),
        1 << 30,
        PathBuf::from("/data/.big.bin.diskscope-scratch"),
        PathBuf::from("diskscope-results/tui-test.csv"),
    )
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn started_id(action: &Action) -> u64 {
    match action {
        Action::Start { id, .. } => *id,
        other => panic!("expected a start, got {other:?}"),
    }
}

/// Feeds the app what the session would send for run `id`: started, then `intervals` snapshots
/// of 100 ms moving `mib_per_interval` MiB each, in operations of ~`lat_us` µs.
fn feed_run(app: &mut App, id: u64, intervals: u64, mib_per_interval: u64, lat_us: u64) {
    let spec = app.live.as_ref().map(|l| l.settings).unwrap().spec(
        &app.file,
        &app.scratch,
        app.file_size_bytes,
    );
    app.apply(Update::Started {
        id,
        meta: Box::new(PreparedMeta {
            spec: spec.clone(),
            file_size: app.file_size_bytes,
            total: app.file_size_bytes,
            residency_before: Some(Residency {
                resident_pages: 10,
                total_pages: 10,
            }),
        }),
        workers: 1,
        notes: vec![],
    });
    for i in 1..=intervals {
        let mut latency = new_latency_histogram();
        let ops = mib_per_interval * MIB / spec.block_size_bytes;
        latency.record_n(lat_us * 1000, ops).unwrap();
        app.apply(Update::Snapshot {
            id,
            snapshot: Box::new(Snapshot {
                worker: 0,
                at_ns: i * 100_000_000,
                interval_ns: 100_000_000,
                bytes: mib_per_interval * MIB,
                ops,
                latency,
                kind: SnapshotKind::Interval,
            }),
        });
    }
}

/// Ends run `id` the way the session does: a final snapshot with the XOR, then `Stopped`.
fn end_run(app: &mut App, id: u64, xor: u32, seconds: u64) {
    app.apply(Update::Snapshot {
        id,
        snapshot: Box::new(Snapshot {
            worker: 0,
            at_ns: seconds * 1_000_000_000,
            interval_ns: 1,
            bytes: 0,
            ops: 0,
            latency: new_latency_histogram(),
            kind: SnapshotKind::Final {
                xor,
                full_pass: true,
            },
        }),
    });
    app.apply(Update::Stopped {
        id,
        elapsed: Duration::from_secs(seconds),
        error: None,
    });
}

fn render(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| f.render_widget(app, f.area())).unwrap();
    let buf = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_screen_at_80x24_shows_settings_throughput_latency_results_and_keys() {
    let mut a = app();
    let id = started_id(&a.start());
    a.apply(Update::Residency(Residency {
        resident_pages: 3,
        total_pages: 4,
    }));
    feed_run(&mut a, id, 20, 500, 200);
    let screen = render(&a, 80, 24);
    for want in [
        "RUNNING",
        "big.bin 1.00 GiB",
        "75% cached",
        "method pread",
        "block  1M",
        "threads 1",
        "now 5000 MiB/s",
        "mean 5000",
        "IOPS 5000",
        "p50 ",
        "p99.9 ",
        "▶pread 1M",
        "XOR",
        "←→ block",
    ] {
        assert!(screen.contains(want), "missing {want:?} in:\n{screen}");
    }
}

#[test]
fn a_larger_terminal_and_the_help_overlay_render_too() {
    let mut a = app();
    let id = started_id(&a.start());
    feed_run(&mut a, id, 5, 10, 3000);
    assert!(render(&a, 160, 50).contains("now 100.0 MiB/s"));
    a.handle_key(key(KeyCode::Char('?')));
    let screen = render(&a, 80, 24);
    assert!(screen.contains("halve / double the block size"), "{screen}");
    assert!(screen.contains("tui-test.csv"), "{screen}");
    // Any key closes the help without acting.
    assert_eq!(a.handle_key(key(KeyCode::Char('?'))), Action::None);
    assert!(!render(&a, 80, 24).contains("halve / double"));
}

#[test]
fn a_long_file_name_is_shortened_so_its_size_stays_visible() {
    let a = App::new(
        PathBuf::from("/tmp/a-rather-long-file-name-for-the-panel.bin"),
        1 << 30,
        PathBuf::from("/tmp/s"),
        PathBuf::from("x.csv"),
    );
    let screen = render(&a, 80, 24);
    assert!(screen.contains("a-rathe…anel.bin 1.00 GiB"), "{screen}");
    assert!(screen.contains("XOR pending"), "{screen}");
}

#[test]
fn tiny_terminals_draw_without_panicking() {
    let mut a = app();
    let id = started_id(&a.start());
    feed_run(&mut a, id, 5, 10, 3000);
    a.show_help = true;
    for (w, h) in [(1, 1), (10, 3), (40, 10), (79, 23), (80, 5), (200, 8)] {
        render(&a, w, h);
    }
}

#[test]
fn arrow_keys_double_and_halve_the_block_size_and_restart_the_run() {
    let mut a = app();
    a.start();
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Right)) else {
        panic!("right arrow must restart");
    };
    assert_eq!(spec.block_size_bytes, 2 * MIB);
    assert!(spec.loop_range && spec.duration.is_none());
    a.handle_key(key(KeyCode::Left));
    a.handle_key(key(KeyCode::Left));
    assert_eq!(a.settings.block_size_bytes, MIB / 2);
    assert!(render(&a, 80, 24).contains("block  512K"));
}

#[test]
fn thread_method_direct_and_pattern_keys_change_the_spec() {
    let mut a = app();
    a.start();
    a.handle_key(key(KeyCode::Up));
    a.handle_key(key(KeyCode::Char('+')));
    a.handle_key(key(KeyCode::Down));
    assert_eq!(a.settings.threads, 2);
    a.handle_key(key(KeyCode::Char('m')));
    assert_eq!(a.settings.method, Method::Mmap);
    // mmap cannot use O_DIRECT: refused with a reason, no restart.
    assert_eq!(a.handle_key(key(KeyCode::Char('d'))), Action::None);
    assert!(a.message.contains("O_DIRECT"), "{}", a.message);
    a.handle_key(key(KeyCode::Char('m')));
    a.handle_key(key(KeyCode::Char('m')));
    assert_eq!(a.settings.method, Method::Buffered);
    a.handle_key(key(KeyCode::Char('m')));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('d'))) else {
        panic!("d must restart with O_DIRECT");
    };
    assert_eq!(
        (spec.method, spec.direct, spec.threads),
        (Method::Read, true, 2)
    );
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('p'))) else {
        panic!("p must restart");
    };
    assert_eq!(spec.pattern.as_str(), "random");
}

#[test]
fn c_toggles_cold_which_evicts_before_reading_and_shows_on_screen() {
    let mut a = app();
    a.start();
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('c'))) else {
        panic!("c must restart");
    };
    assert_eq!(spec.cache, CacheMode::Cold);
    assert!(a.wants_cold());
    assert!(render(&a, 80, 24).contains("cache  cold"));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('c'))) else {
        panic!("c must restart");
    };
    assert_eq!(spec.cache, CacheMode::AsIs);
    assert!(render(&a, 80, 24).contains("cache  warm"));
}

#[test]
fn w_sends_writes_to_the_scratch_file_never_the_explored_file() {
    let mut a = app();
    a.start();
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('w'))) else {
        panic!("w must restart");
    };
    assert_eq!(spec.op, Op::Write);
    assert_eq!(spec.path, Path::new("/data/.big.bin.diskscope-scratch"));
    assert!(render(&a, 80, 24).contains("writing /data/.big.bin.diskscope-scratch"));
}

#[test]
fn space_pauses_and_changes_made_while_paused_wait_for_resume() {
    let mut a = app();
    a.start();
    assert_eq!(a.handle_key(key(KeyCode::Char(' '))), Action::Stop);
    assert!(a.paused && a.live.is_none());
    assert_eq!(a.handle_key(key(KeyCode::Right)), Action::None);
    assert!(render(&a, 80, 24).contains("PAUSED"));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char(' '))) else {
        panic!("space must resume");
    };
    assert_eq!(spec.block_size_bytes, 2 * MIB);
}

#[test]
fn a_changed_setting_leaves_the_previous_figures_as_a_row_with_its_xor() {
    let mut a = app();
    let first = started_id(&a.start());
    feed_run(&mut a, first, 10, 100, 50);
    let second = started_id(&a.handle_key(key(KeyCode::Right)));
    end_run(&mut a, first, 0xdeadbeef, 1);
    assert_eq!(a.rows.len(), 1);
    let row = &a.rows[0];
    assert_eq!(
        (row.block_size_bytes, row.experiment.as_str()),
        (MIB, "tui")
    );
    assert!((row.mib_s - 1000.0).abs() < 1.0, "{}", row.mib_s);
    assert_eq!(row.xor, "deadbeef");
    feed_run(&mut a, second, 10, 200, 50);
    let screen = render(&a, 80, 24);
    assert!(screen.contains("XOR deadbeef (1×)"), "{screen}");
    assert!(screen.contains("│ pread 1M"), "{screen}");
    assert!(screen.contains("▶pread 2M"), "{screen}");
    // `s` saves the finished row plus the live one, marked as in progress.
    assert_eq!(a.handle_key(key(KeyCode::Char('s'))), Action::Save);
    let rows = a.rows_to_save();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].experiment, "tui-live");
}

#[test]
fn a_different_xor_from_a_later_full_read_is_flagged() {
    let mut a = app();
    let first = started_id(&a.start());
    feed_run(&mut a, first, 3, 10, 50);
    let second = started_id(&a.handle_key(key(KeyCode::Char('m'))));
    end_run(&mut a, first, 1, 1);
    feed_run(&mut a, second, 3, 10, 50);
    a.handle_key(key(KeyCode::Char(' ')));
    end_run(&mut a, second, 2, 1);
    assert!(render(&a, 80, 24).contains("MISMATCH"));
}

#[test]
fn r_discards_the_current_figures_without_a_row() {
    let mut a = app();
    let first = started_id(&a.start());
    feed_run(&mut a, first, 10, 100, 50);
    assert!(!a.history.is_empty());
    started_id(&a.handle_key(key(KeyCode::Char('r'))));
    assert!(a.history.is_empty());
    end_run(&mut a, first, 0, 1);
    assert!(a.rows.is_empty());
}

#[test]
fn q_and_ctrl_c_quit() {
    let mut a = app();
    assert_eq!(a.handle_key(key(KeyCode::Char('q'))), Action::Quit);
    let mut a = app();
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(a.handle_key(ctrl_c), Action::Quit);
    assert!(a.quit);
}
