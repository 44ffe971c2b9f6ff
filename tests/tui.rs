//! The live explorer: rendering (state → buffer with ratatui's TestBackend), key handling
//! (key → action → new settings). The session thread on a real file is in `tui/session.rs`; the
//! real binary, driven through tmux, in `tui/e2e.rs`.

mod defects;
mod docs;
mod e2e;
mod layout;
mod live_verdict;
mod memory;
mod plots;
mod session;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use diskscope::cache::Residency;
use diskscope::config::{CacheMode, Method, Op, WriteSync};
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
        &app.explored.scratch,
        app.explored.size_bytes,
    );
    app.apply(Update::Started {
        id,
        meta: Box::new(PreparedMeta {
            spec: spec.clone(),
            file_size: app.explored.size_bytes,
            total: app.explored.size_bytes,
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
        let ops = mib_per_interval * MIB / spec.setup.block_size_bytes;
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
                ops_log: Vec::new(),
                paced: None,
                mixed: None,
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
            ops_log: Vec::new(),
            paced: None,
            mixed: None,
            kind: SnapshotKind::Final {
                xor: Some(xor),
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
        "←→ b block",
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
    // Every line of the key table, whole, at 80x24.
    for line in diskscope::tui::keys::help_lines() {
        assert!(
            screen.contains(line.trim_end()),
            "missing {line:?}:\n{screen}"
        );
    }
    // Any key closes the help without acting.
    assert_eq!(a.handle_key(key(KeyCode::Char('?'))), Action::None);
    assert!(!render(&a, 80, 24).contains("halve / double"));
}

#[test]
fn closing_the_help_or_the_kdiskmark_card_does_not_also_run_the_key() {
    let mut a = app();
    a.start();
    for key_code in [
        KeyCode::Char('c'),
        KeyCode::Char('w'),
        KeyCode::Right,
        KeyCode::Char('q'),
        KeyCode::Char('s'),
    ] {
        a.view.show_help = true;
        assert_eq!(a.handle_key(key(key_code)), Action::None, "{key_code:?}");
        assert!(!a.view.show_help);
        a.kdm.show = true;
        assert_eq!(a.handle_key(key(key_code)), Action::None, "{key_code:?}");
        assert!(!a.kdm.show);
    }
    assert!(
        !a.settings.cold() && !a.runs.quit,
        "a closing key changed a setting"
    );
    assert_eq!(a.settings.setup.block_size_bytes, MIB);
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
    a.view.show_help = true;
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
    assert_eq!(spec.setup.block_size_bytes, 2 * MIB);
    assert!(spec.target.loop_range && spec.target.duration.is_none());
    a.handle_key(key(KeyCode::Left));
    a.handle_key(key(KeyCode::Left));
    assert_eq!(a.settings.setup.block_size_bytes, MIB / 2);
    assert!(render(&a, 80, 24).contains("block  512K"));
}

#[test]
fn thread_method_direct_and_pattern_keys_change_the_spec() {
    let mut a = app();
    a.start();
    a.handle_key(key(KeyCode::Up));
    a.handle_key(key(KeyCode::Char('+')));
    a.handle_key(key(KeyCode::Down));
    assert_eq!(a.settings.setup.threads, 2);
    a.handle_key(key(KeyCode::Char('m')));
    assert_eq!(a.settings.setup.method, Method::Mmap);
    // mmap cannot use O_DIRECT: refused with a reason, no restart.
    assert_eq!(a.handle_key(key(KeyCode::Char('d'))), Action::None);
    assert!(a.message.contains("O_DIRECT"), "{}", a.message);
    a.handle_key(key(KeyCode::Char('m')));
    a.handle_key(key(KeyCode::Char('m')));
    assert_eq!(a.settings.setup.method, Method::Buffered);
    a.handle_key(key(KeyCode::Char('m')));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('d'))) else {
        panic!("d must restart with O_DIRECT");
    };
    assert_eq!(
        (spec.setup.method, spec.setup.direct, spec.setup.threads),
        (Method::Read, true, 2)
    );
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('p'))) else {
        panic!("p must restart");
    };
    assert_eq!(spec.setup.pattern.as_str(), "random");
}

#[test]
fn c_toggles_cold_which_evicts_before_reading_and_shows_on_screen() {
    let mut a = app();
    a.start();
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('c'))) else {
        panic!("c must restart");
    };
    assert_eq!(spec.setup.cache, CacheMode::Cold);
    assert!(a.wants_cold());
    assert!(render(&a, 80, 24).contains("cache  cold"));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('c'))) else {
        panic!("c must restart");
    };
    assert_eq!(spec.setup.cache, CacheMode::AsIs);
    assert!(render(&a, 80, 24).contains("cache  as is"));
}

#[test]
fn w_sends_writes_to_the_scratch_file_never_the_explored_file() {
    let mut a = app();
    a.start();
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('w'))) else {
        panic!("w must restart");
    };
    assert_eq!(spec.setup.op, Op::Write);
    assert_eq!(
        spec.target.path,
        Path::new("/data/.big.bin.diskscope-scratch")
    );
    assert!(render(&a, 80, 24).contains("writing /data/.big.bin.diskscope-scratch"));
}

#[test]
fn space_pauses_and_changes_made_while_paused_wait_for_resume() {
    let mut a = app();
    a.start();
    assert_eq!(a.handle_key(key(KeyCode::Char(' '))), Action::Stop);
    assert!(a.runs.paused && a.live.is_none());
    assert_eq!(a.handle_key(key(KeyCode::Right)), Action::None);
    assert!(render(&a, 80, 24).contains("PAUSED"));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char(' '))) else {
        panic!("space must resume");
    };
    assert_eq!(spec.setup.block_size_bytes, 2 * MIB);
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
        (row.setup.block_size_bytes, row.identity.experiment.as_str()),
        (MIB, "tui")
    );
    assert!(
        (row.figures.mib_s - 1000.0).abs() < 1.0,
        "{}",
        row.figures.mib_s
    );
    assert_eq!(row.figures.xor, "deadbeef");
    feed_run(&mut a, second, 10, 200, 50);
    let screen = render(&a, 80, 24);
    assert!(screen.contains("XOR deadbeef (1×)"), "{screen}");
    assert!(screen.contains("│ pread 1M"), "{screen}");
    assert!(screen.contains("▶pread 2M"), "{screen}");
    // `s` saves the finished row plus the live one, marked as in progress.
    assert_eq!(a.handle_key(key(KeyCode::Char('s'))), Action::Save);
    let rows = a.rows_to_save();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].identity.experiment, "tui-live");
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
    assert!(a.runs.quit);
}

/// Ends the live run by a setting change and feeds the next one, so the first becomes a row.
fn finish_live(app: &mut App, id: u64, seconds: u64) {
    let next = started_id(&app.handle_key(key(KeyCode::Char('p'))));
    end_run(app, id, 0, seconds);
    app.handle_key(key(KeyCode::Char(' ')));
    end_run(app, next, 0, 0);
}

#[test]
fn iops_at_a_million_and_at_ten_million_keep_their_magnitude_in_the_table() {
    let mut a = app();
    a.settings.setup.block_size_bytes = 4096;
    let id = started_id(&a.start());
    // 368 MiB of 4 KiB per 100 ms: 942 080 operations per second.
    feed_run(&mut a, id, 10, 368, 1);
    let screen = render(&a, 80, 24);
    assert!(screen.contains(" 942k "), "{screen}");
    assert!(
        !screen.contains("942.0") && !screen.contains("942.1"),
        "{screen}"
    );
    finish_live(&mut a, id, 1);
    let mut b = app();
    b.settings.setup.block_size_bytes = 512;
    let id = started_id(&b.start());
    // 500 MiB of 512 B per 100 ms: 10.24 M operations per second.
    feed_run(&mut b, id, 10, 500, 1);
    let screen = render(&b, 80, 24);
    assert!(screen.contains(" 10.2M "), "{screen}");
    assert!(!screen.contains(" 10.24 "), "{screen}");
}

#[test]
fn io_uring_rows_at_different_queue_depths_read_differently() {
    let mut a = app();
    a.settings.setup.method = Method::IoUring;
    a.settings.setup.block_size_bytes = 16 << 10;
    let first = started_id(&a.start());
    feed_run(&mut a, first, 5, 100, 20);
    let second = started_id(&a.handle_key(key(KeyCode::Char(']'))));
    end_run(&mut a, first, 0, 1);
    feed_run(&mut a, second, 5, 100, 20);
    let third = started_id(&a.handle_key(key(KeyCode::Char('d'))));
    end_run(&mut a, second, 0, 1);
    feed_run(&mut a, third, 5, 100, 20);
    let screen = render(&a, 80, 24);
    for want in ["▶io_uring 16K q16", " io_uring 16K q16", " io_uring 16K q8"] {
        assert!(screen.contains(want), "missing {want:?}:\n{screen}");
    }
    // O_DIRECT shows as a flag on the live row.
    let live = screen.lines().find(|l| l.contains("▶io_uring")).unwrap();
    assert!(live.contains(" D "), "{live}");
}

#[test]
fn writes_are_labelled_with_the_write_call() {
    let mut a = app();
    a.start();
    let id = started_id(&a.handle_key(key(KeyCode::Char('w'))));
    feed_run(&mut a, id, 5, 100, 20);
    let screen = render(&a, 80, 24);
    assert!(screen.contains("method pwrite"), "{screen}");
    assert!(screen.contains("▶pwrite 1M"), "{screen}");
    assert!(!screen.contains("pread"), "{screen}");
    finish_live(&mut a, id, 1);
    let table = diskscope::tui::widgets::results::table_text(&a);
    assert!(table.contains("pwrite 1M"), "{table}");
    a.settings.setup.method = Method::Read;
    assert_eq!(a.settings.short(), "write write 1M");
}

#[test]
fn f_cycles_writes_through_fsync_at_the_end_and_o_dsync_and_rows_say_which() {
    let mut a = app();
    a.start();
    // Reading: f is remembered, the read run is unchanged.
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('f'))) else {
        panic!("f must restart");
    };
    assert!(
        !spec.setup.write_sync.fsync() && !spec.setup.write_sync.dsync(),
        "{spec:?}"
    );
    assert!(
        a.message.contains("once w switches to writes"),
        "{}",
        a.message
    );
    // Writing with fsync at the end.
    let Action::Start { id: fsync_id, spec } = a.handle_key(key(KeyCode::Char('w'))) else {
        panic!("w must restart");
    };
    assert_eq!(spec.setup.op, Op::Write);
    assert!(
        spec.setup.write_sync.fsync() && !spec.setup.write_sync.dsync(),
        "{spec:?}"
    );
    feed_run(&mut a, fsync_id, 5, 100, 20);
    // f again: O_DSYNC; the fsync run ends as a row saying so.
    let Action::Start { id: dsync_id, spec } = a.handle_key(key(KeyCode::Char('f'))) else {
        panic!("f must restart");
    };
    assert!(
        spec.setup.write_sync.dsync() && !spec.setup.write_sync.fsync(),
        "{spec:?}"
    );
    assert!(a.message.contains("O_DSYNC"), "{}", a.message);
    end_run(&mut a, fsync_id, 0, 1);
    // At least 100 operations, so the row is not transient.
    feed_run(&mut a, dsync_id, 20, 10, 200);
    // And again: plain writes.
    let Action::Start { id: plain_id, spec } = a.handle_key(key(KeyCode::Char('f'))) else {
        panic!("f must restart");
    };
    assert!(
        !spec.setup.write_sync.dsync() && !spec.setup.write_sync.fsync(),
        "{spec:?}"
    );
    assert!(a.message.contains("writes: plain"), "{}", a.message);
    end_run(&mut a, dsync_id, 0, 1);
    feed_run(&mut a, plain_id, 5, 100, 20);
    finish_live(&mut a, plain_id, 1);
    // The rows say it in their typed column, not in their name.
    let syncs: Vec<_> = a.rows.iter().map(|r| r.setup.write_sync).collect();
    assert_eq!(
        syncs,
        [Some(WriteSync::FsyncAtEnd), Some(WriteSync::Dsync), None]
    );
    assert!(a.rows.iter().all(|r| r.identity.experiment == "tui"));
    let flags: Vec<String> = a
        .rows
        .iter()
        .map(diskscope::tui::widgets::results::flags)
        .collect();
    assert_eq!(flags, ["WF", "WS", "W"]);
}

#[test]
fn the_sparkline_states_the_window_it_shows_with_a_y_scale() {
    let mut a = app();
    let id = started_id(&a.start());
    // A minute of history at 5000 MiB/s.
    feed_run(&mut a, id, 600, 500, 200);
    for width in [80, 160] {
        let screen = render(&a, width, 24);
        assert!(screen.contains("last 60 s"), "{width} columns:\n{screen}");
        assert!(!screen.contains("last minute"), "{screen}");
        // A flat 5000 stands on zero, its level a tick.
        let areas = diskscope::tui::ui::areas(&a, ratatui::layout::Rect::new(0, 0, width, 24));
        let ticks = axis_ticks(&region(&screen, areas.throughput));
        assert_eq!(ticks, vec![5000.0, 0.0], "{screen}");
    }
    // Four seconds of history are titled four seconds.
    let mut b = app();
    let id = started_id(&b.start());
    feed_run(&mut b, id, 40, 500, 200);
    assert!(render(&b, 160, 24).contains("last 4 s, 0.1 s per bar"));
}

#[test]
fn below_80x24_no_number_is_cut_the_screen_says_it_is_too_small() {
    let mut a = app();
    let id = started_id(&a.start());
    // 2683 MiB/s is 268.3 MiB per 100 ms; use 2683 MiB per second in whole MiB steps.
    feed_run(&mut a, id, 10, 268, 200);
    let full = render(&a, 80, 24);
    assert!(full.contains("now 2680 MiB/s"), "{full}");
    for (w, h) in [(79, 24), (80, 23), (60, 20)] {
        let screen = render(&a, w, h);
        assert!(screen.contains("terminal too small"), "{w}x{h}:\n{screen}");
        assert!(!screen.contains("268"), "{w}x{h}:\n{screen}");
    }
}

#[test]
fn q_saves_the_rows_made_after_the_last_s_and_counts_them_as_s_does() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("session.csv");
    let mut a = App::new(
        PathBuf::from("/data/big.bin"),
        1 << 30,
        PathBuf::from("/data/.big.bin.diskscope-scratch"),
        csv.clone(),
    );
    assert_eq!(a.exit_note(Ok(0)), None);
    let first = started_id(&a.start());
    feed_run(&mut a, first, 5, 100, 20);
    let second = started_id(&a.handle_key(key(KeyCode::Right)));
    end_run(&mut a, first, 0, 1);
    feed_run(&mut a, second, 5, 100, 20);
    // `s`: the finished row and the live one as of now.
    let said = diskscope::tui::save_now(&mut a);
    assert!(said.starts_with("saved 2 rows to "), "{said}");
    // `q`: the live run ends and becomes a row, saved at exit.
    a.handle_key(key(KeyCode::Char('q')));
    end_run(&mut a, second, 0, 1);
    let now = diskscope::tui::save_unsaved(&mut a);
    assert_eq!(now, Ok(1));
    let note = a.exit_note(now).unwrap();
    assert!(
        note.starts_with("3 rows saved to ") && note.ends_with(" (1 at exit)"),
        "{note}"
    );
    let lines = std::fs::read_to_string(&csv).unwrap().lines().count();
    assert_eq!(
        lines,
        1 + 3,
        "the header and the three rows the note counts"
    );
    let failed = a.exit_note(Err("disk full".into())).unwrap();
    assert!(failed.contains("not saved (disk full)"), "{failed}");
}

#[test]
fn b_takes_an_exact_block_size_from_one_byte_to_one_gib() {
    let mut a = app();
    a.start();
    assert_eq!(a.handle_key(key(KeyCode::Char('b'))), Action::None);
    for c in "12K".chars() {
        assert_eq!(a.handle_key(key(KeyCode::Char(c))), Action::None);
    }
    assert!(render(&a, 80, 24).contains("block size ▸ 12K"));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Enter)) else {
        panic!("Enter must restart with the typed size");
    };
    assert_eq!(spec.setup.block_size_bytes, 12 << 10);
    assert!(render(&a, 80, 24).contains("block  12K"));
    a.handle_key(key(KeyCode::Char('b')));
    a.handle_key(key(KeyCode::Char('3')));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Enter)) else {
        panic!("3 bytes is a block size");
    };
    assert_eq!(spec.setup.block_size_bytes, 3);
    // Too large: refused with the range, nothing restarts.
    a.handle_key(key(KeyCode::Char('b')));
    for c in "2G".chars() {
        a.handle_key(key(KeyCode::Char(c)));
    }
    assert_eq!(a.handle_key(key(KeyCode::Enter)), Action::None);
    assert!(a.message.contains("1 B to 1G"), "{}", a.message);
    assert_eq!(a.settings.setup.block_size_bytes, 3);
    // Esc leaves the size alone.
    a.handle_key(key(KeyCode::Char('b')));
    a.handle_key(key(KeyCode::Char('9')));
    assert_eq!(a.handle_key(key(KeyCode::Esc)), Action::None);
    assert_eq!(a.settings.setup.block_size_bytes, 3);
}

#[test]
fn a_pinned_baseline_gives_every_row_its_delta_and_rows_show_time_ops_p50() {
    let mut a = app();
    let first = started_id(&a.start());
    feed_run(&mut a, first, 10, 100, 50);
    let second = started_id(&a.handle_key(key(KeyCode::Right)));
    end_run(&mut a, first, 0, 1);
    a.handle_key(key(KeyCode::Char('B')));
    assert!(a.message.contains("baseline"), "{}", a.message);
    feed_run(&mut a, second, 10, 150, 50);
    let screen = render(&a, 100, 30);
    assert!(screen.contains("Δ%"), "{screen}");
    let live = screen.lines().find(|l| l.contains("▶pread 2M")).unwrap();
    assert!(live.contains("+50%"), "{live}");
    let pinned = screen.lines().find(|l| l.contains("◆pread 1M")).unwrap();
    assert!(
        pinned.contains("±0%") && pinned.contains("1.00s"),
        "{pinned}"
    );
    assert!(screen.contains("p50") && screen.contains("time") && screen.contains("ops"));
    // u: MB/s, as KDiskMark.
    a.handle_key(key(KeyCode::Char('u')));
    let screen = render(&a, 100, 30);
    assert!(
        screen.contains("MB/s") && screen.contains("1573"),
        "{screen}"
    );
    // Records from outside: each row finds its own setup.
    let rows = a.rows.clone();
    a.set_baseline(diskscope::tui::baseline::Baseline::from_results(&rows));
    let screen = render(&a, 100, 30);
    let live = screen.lines().find(|l| l.contains("▶pread 2M")).unwrap();
    assert!(
        !live.contains('+') && !live.split_whitespace().any(|w| w == "±0%"),
        "no record for 2M: {live}"
    );
}

#[test]
fn k_runs_the_kdiskmark_set_test_after_test_and_shows_a_card() {
    use diskscope::tui::kdiskmark::KdmCaps;
    let mut a = app();
    a.start();
    assert_eq!(a.handle_key(key(KeyCode::Char('k'))), Action::KDiskMark);
    let mut action = a.begin_kdiskmark(KdmCaps {
        direct: true,
        io_uring: true,
    });
    let mut names = Vec::new();
    for _ in 0..8 {
        let Action::Start { id, spec } = action else {
            panic!("each test starts the next: {action:?}");
        };
        assert!(spec.setup.direct && spec.target.duration.is_some());
        names.push((
            spec.setup.op,
            spec.setup.block_size_bytes,
            spec.setup.queue_depth,
        ));
        // Keys other than k wait until the set ends.
        assert_eq!(a.handle_key(key(KeyCode::Right)), Action::None);
        feed_run(&mut a, id, 5, 50, 20);
        end_run(&mut a, id, 0, 1);
        action = a
            .take_pending()
            .expect("the next test, or back to the explorer");
    }
    assert_eq!(names[0], (Op::Read, MIB, 8));
    assert_eq!(names[3], (Op::Read, 4096, 1));
    assert_eq!(names[6], (Op::Write, 4096, 32));
    // Back to the settings from before, the card on screen, eight rows to save.
    let Action::Start { spec, .. } = action else {
        panic!("the explorer resumes");
    };
    assert_eq!(
        (spec.setup.block_size_bytes, spec.target.duration),
        (MIB, None)
    );
    assert!(a.kdm.show);
    let screen = render(&a, 80, 24);
    for want in [
        "KDiskMark set",
        "SEQ1M Q8T1",
        "RND4K Q32T1",
        "Read MiB/s",
        "Write",
    ] {
        assert!(screen.contains(want), "missing {want}:\n{screen}");
    }
    assert_eq!(a.rows.len(), 8);
    assert!(a.rows_to_save()[0]
        .identity
        .experiment
        .starts_with("tui-kdiskmark SEQ1M Q8T1"));
}

#[test]
fn e_exports_the_session_as_svg_and_json_and_never_replaces_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = App::new(
        PathBuf::from("/data/big.bin"),
        1 << 30,
        PathBuf::from("/data/.big.bin.diskscope-scratch"),
        dir.path().join("out/tui-x.csv"),
    );
    let first = started_id(&a.start());
    feed_run(&mut a, first, 10, 100, 50);
    let second = started_id(&a.handle_key(key(KeyCode::Right)));
    end_run(&mut a, first, 0, 1);
    feed_run(&mut a, second, 10, 200, 50);
    assert_eq!(a.handle_key(key(KeyCode::Char('e'))), Action::Export);
    let paths = diskscope::tui::export::write_session(&a).unwrap();
    assert_eq!(
        paths,
        [
            dir.path().join("out/tui-x.svg"),
            dir.path().join("out/tui-x.json")
        ]
    );
    let svg = std::fs::read_to_string(&paths[0]).unwrap();
    for want in [
        "throughput over time",
        "latency per operation",
        "results",
        "pread 1M",
        "big.bin",
    ] {
        assert!(svg.contains(want), "missing {want}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&paths[1]).unwrap()).unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), 1);
    assert_eq!(json["rows"][0]["block_size_bytes"], 1 << 20);
    assert_eq!(
        json["history_mib_s_per_100ms"].as_array().unwrap().len(),
        20
    );
    // A second export takes the next name; the first files are untouched.
    let again = diskscope::tui::export::write_session(&a).unwrap();
    assert_eq!(again[0], dir.path().join("out/tui-x-2.svg"));
    assert_eq!(std::fs::read_to_string(&paths[0]).unwrap(), svg);
}

#[test]
fn the_pinned_baseline_stays_in_view_below_the_live_row() {
    let mut a = app();
    let mut id = started_id(&a.start());
    feed_run(&mut a, id, 5, 100, 20);
    for _ in 0..8 {
        let next = started_id(&a.handle_key(key(KeyCode::Char('p'))));
        end_run(&mut a, id, 0, 1);
        if a.baseline.is_none() {
            a.handle_key(key(KeyCode::Char('B')));
        }
        feed_run(&mut a, next, 5, 100, 20);
        id = next;
    }
    let screen = render(&a, 80, 24);
    let lines: Vec<&str> = screen.lines().collect();
    let live = lines.iter().position(|l| l.contains("▶pread")).unwrap();
    assert!(lines[live + 1].contains("◆pread 1M"), "{screen}");
}

#[test]
fn k_during_the_set_cancels_it_without_a_row_for_the_cut_test() {
    use diskscope::tui::kdiskmark::KdmCaps;
    let mut a = app();
    a.start();
    let Action::Start { id, .. } = a.begin_kdiskmark(KdmCaps {
        direct: false,
        io_uring: false,
    }) else {
        panic!("the set starts");
    };
    feed_run(&mut a, id, 3, 50, 20);
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('k'))) else {
        panic!("k cancels and resumes the explorer");
    };
    assert_eq!(
        (spec.setup.block_size_bytes, spec.target.duration),
        (MIB, None)
    );
    end_run(&mut a, id, 0, 1);
    assert!(a.rows.is_empty(), "{:?}", a.rows);
    assert!(!a.kdm_running() && a.message.contains("cancelled"));
}

/// The "why" line and the context, with a synthetic profile so the test does not depend on a
/// profile stored on this machine.
mod why {
    use super::*;
    use diskscope::explain::context::{warnings_for, Context, Device, Filesystem};
    use diskscope::explain::profile::Profile;

    fn explained() -> App {
        let mut a = app();
        a.explored.profile = Some((Profile::synthetic_example(), None));
        a.explored.context = Some(Context {
            filesystem: Some(Filesystem {
                fs_type: "ext4".into(),
                mount_options: "rw,relatime".into(),
                ..Default::default()
            }),
            device: Some(Device {
                name: "vda".into(),
                chain: vec!["vda".into()],
                rotational: Some(false),
                scheduler: Some("none".into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        a
    }

    #[test]
    fn the_why_line_names_the_bound_its_value_and_the_percentage_and_follows_the_knobs() {
        let mut a = explained();
        let id = started_id(&a.start());
        // Before data: the bound of the settings. Pread 1 MiB, warm: copy + XOR at 4 GiB/s.
        let screen = render(&a, 80, 24);
        assert!(
            screen.contains("why memory-bound: 4.0 GiB/s predicted"),
            "{screen}"
        );
        // 3000 MiB/s measured of the 4096 predicted: 74% (the call costs a hair).
        feed_run(&mut a, id, 10, 300, 200);
        let screen = render(&a, 80, 24);
        assert!(
            screen.contains("why memory-bound 4.0 GiB/s · 74%"),
            "{screen}"
        );
        let tall = render(&a, 80, 30);
        assert!(
            tall.contains("why   memory-bound: copy + XOR at 4.0 GiB/s"),
            "{tall}"
        );
        assert!(tall.contains("(74%)"), "{tall}");
        assert!(!tall.contains("below half"), "{tall}");
        // Turning the block size down to 16 bytes turns the bound into the call rate.
        a.handle_key(key(KeyCode::Char('b')));
        for c in "16".chars() {
            a.handle_key(key(KeyCode::Char(c)));
        }
        let id = started_id(&a.handle_key(key(KeyCode::Enter)));
        let screen = render(&a, 80, 24);
        assert!(screen.contains("why syscall-bound"), "{screen}");
        feed_run(&mut a, id, 10, 1, 1);
        let tall = render(&a, 80, 30);
        assert!(
            tall.contains("syscall-bound: 996 k ops/s × 16 = 15.2 MiB/s; measured 10.0 (66%)"),
            "{tall}"
        );
        assert!(tall.contains("measured"), "{tall}");
    }

    #[test]
    fn a_run_below_half_its_bound_is_flagged_with_what_to_look_at() {
        let mut a = explained();
        let id = started_id(&a.start());
        // 1000 MiB/s of ~4090: 25%.
        feed_run(&mut a, id, 10, 100, 200);
        let screen = render(&a, 80, 24);
        assert!(
            screen.contains("⚠ memory-bound 4.0 GiB/s · 25%"),
            "{screen}"
        );
        let tall = render(&a, 80, 30);
        assert!(tall.contains("(25%)"), "{tall}");
        assert!(tall.contains("below half its bound"), "{tall}");
        assert!(tall.contains("another process"), "{tall}");
    }

    #[test]
    fn without_a_profile_the_why_line_says_how_to_make_one() {
        let mut a = app();
        let id = started_id(&a.start());
        feed_run(&mut a, id, 10, 300, 200);
        let screen = render(&a, 80, 24);
        assert!(
            screen.contains("why no profile: run `diskscope limits FILE`"),
            "{screen}"
        );
        let tall = render(&a, 80, 30);
        assert!(
            tall.contains("no profile: run `diskscope limits /data/big.bin`"),
            "{tall}"
        );
    }

    #[test]
    fn writes_are_said_not_to_be_modelled() {
        let mut a = explained();
        a.start();
        a.handle_key(key(KeyCode::Char('w')));
        let screen = render(&a, 80, 30);
        assert!(screen.contains("writes are not modelled"), "{screen}");
    }

    #[test]
    fn the_status_line_and_context_row_show_filesystem_and_device_and_warn_of_a_tmpfs() {
        let a = explained();
        let screen = render(&a, 80, 24);
        let top = screen.lines().next().unwrap();
        assert!(top.contains("│ ext4 on vda"), "{top}");
        let tall = render(&a, 80, 30);
        assert!(
            tall.contains("where ext4 (rw,relatime) on vda: non-rotational, none"),
            "{tall}"
        );
        let mut a = app();
        let fs = Filesystem {
            fs_type: "tmpfs".into(),
            mount_options: "rw".into(),
            ..Default::default()
        };
        a.explored.context = Some(Context {
            warnings: warnings_for(Some(&fs), None),
            filesystem: Some(fs),
            ..Default::default()
        });
        for screen in [render(&a, 80, 24), render(&a, 80, 30)] {
            let top = screen.lines().next().unwrap();
            assert!(
                top.contains("│ ⚠"),
                "the warning is on the status line: {top}"
            );
            let line = screen.lines().find(|l| l.starts_with("where"));
            if let Some(line) = line {
                assert!(line.contains("⚠"), "{line}");
                assert!(line.contains("in RAM"), "{line}");
            }
        }
    }
}

#[test]
fn a_scratch_file_being_removed_shows_its_progress_and_q_says_what_it_waits_for() {
    use diskscope::tui::discard::Removal;
    let mut a = app();
    a.start();
    let path = PathBuf::from("/data/.big.bin.diskscope-scratch.7.1");
    a.apply(Update::Removing(Removal {
        path: path.clone(),
        total_bytes: 1 << 30,
        left_bytes: 512 * MIB,
        started: std::time::Instant::now(),
        done: false,
    }));
    // A second file queued behind it counts in what is left and in the total.
    let queued = PathBuf::from("/data/.big.bin.diskscope-scratch.7.2");
    a.apply(Update::Removing(Removal::queued(queued.clone(), 1 << 30)));
    assert!(
        render(&a, 80, 24).contains("removing scratch: 1.50 GiB left"),
        "{}",
        render(&a, 80, 24)
    );
    a.apply(Update::Removed {
        path: queued,
        elapsed: Duration::from_secs(1),
    });
    let screen = render(&a, 80, 24);
    assert!(screen.contains("removing scratch: 512"), "{screen}");
    a.runs.quitting = true;
    let screen = render(&a, 80, 24);
    assert!(
        screen.contains("quitting after removing the scratch file: 512"),
        "{screen}"
    );
    a.apply(Update::Removed {
        path,
        elapsed: Duration::from_secs(3),
    });
    assert!(a.runs.removing.is_empty());
    assert!(
        render(&a, 80, 24).contains("quitting: stopping the run, "),
        "{}",
        render(&a, 80, 24)
    );
}

/// An app with a minute of history and `rows` finished rows (each 1 s of `p` toggles).
fn app_with_rows(rows: usize) -> App {
    let mut a = app();
    let mut id = started_id(&a.start());
    feed_run(&mut a, id, 600, 500, 200);
    for _ in 0..rows {
        let next = started_id(&a.handle_key(key(KeyCode::Char('p'))));
        end_run(&mut a, id, 0, 1);
        feed_run(&mut a, next, 10, 500, 200);
        id = next;
    }
    a
}

/// The text of `rect` in a rendered screen.
fn region(screen: &str, r: ratatui::layout::Rect) -> Vec<String> {
    screen
        .lines()
        .skip(r.y as usize)
        .take(r.height as usize)
        .map(|l| {
            l.chars()
                .skip(r.x as usize)
                .take(r.width as usize)
                .collect()
        })
        .collect()
}

#[test]
fn the_chart_histogram_and_table_grow_with_the_terminal_and_the_table_shows_every_row_it_has_room_for(
) {
    let a = app_with_rows(100);
    let sizes = [(80u16, 24u16), (120, 40), (200, 60), (300, 80)];
    let mut last_chart_h = 0;
    for (w, h) in sizes {
        let full = ratatui::layout::Rect::new(0, 0, w, h);
        let areas = diskscope::tui::ui::areas(&a, full);
        assert!(
            areas.throughput.height > last_chart_h,
            "{w}x{h}: chart {} rows",
            areas.throughput.height
        );
        last_chart_h = areas.throughput.height;
        // The panels tile the screen: nothing is left empty below them.
        let used = areas.status.height
            + areas.throughput.height
            + areas.why.height
            + areas.latency.height.max(areas.results.height)
                * if w >= diskscope::tui::ui::SIDE_BY_SIDE_WIDTH {
                    1
                } else {
                    0
                }
            + (areas.latency.height + areas.results.height)
                * if w >= diskscope::tui::ui::SIDE_BY_SIDE_WIDTH {
                    0
                } else {
                    1
                }
            + areas.info.height
            + areas.footer.height;
        assert_eq!(used, h, "{w}x{h}: {areas:?}");
        let screen = render(&a, w, h);
        // Table rows shown = rows available (borders and header take 3).
        let table = region(&screen, areas.results);
        let shown = table
            .iter()
            .filter(|l| l.contains("pread 1M") || l.contains("preadv2 1M"))
            .count();
        assert_eq!(
            shown,
            areas.results.height as usize - 3,
            "{w}x{h}:\n{}",
            table.join("\n")
        );
        // The histogram uses its height: every inner row below the percentiles has a bucket or
        // (when there are fewer buckets than rows) is left for finer buckets.
        let lat = region(&screen, areas.latency);
        assert!(
            lat.iter().any(|l| l.contains('█')),
            "{w}x{h}:\n{}",
            lat.join("\n")
        );
        // The chart: bars fill the width (exact-width binning) and a time axis ends in `now`.
        let chart = region(&screen, areas.throughput);
        assert!(
            chart.iter().any(|l| l.contains("now│")),
            "{w}x{h}:\n{}",
            chart.join("\n")
        );
        assert!(chart[0].contains("last 60 s"), "{}", chart[0]);
        let full_bars = chart
            .iter()
            .map(|l| l.matches('█').count())
            .max()
            .unwrap_or(0);
        assert_eq!(
            full_bars,
            areas.throughput.width as usize
                - 2
                - diskscope::tui::widgets::throughput::GUTTER as usize,
            "{w}x{h}:\n{}",
            chart.join("\n")
        );
        // No figure is cut: the throughput and its scale are whole.
        assert!(screen.contains("now 5000 MiB/s"), "{w}x{h}:\n{screen}");
        let ticks = axis_ticks(&chart);
        assert!(
            ticks.first().is_some_and(|t| *t >= 5000.0) && ticks.contains(&0.0),
            "{w}x{h}: {ticks:?}\n{screen}"
        );
    }
}

#[test]
fn the_results_cursor_scrolls_to_rows_out_of_view_and_o_sorts_and_h_hides_the_row_under_it() {
    let mut a = app_with_rows(30);
    let first_row = |a: &App, w: u16, h: u16| -> String {
        let areas = diskscope::tui::ui::areas(a, ratatui::layout::Rect::new(0, 0, w, h));
        region(&render(a, w, h), areas.results)[2].clone()
    };
    // The oldest row is out of view at 80x24 until the cursor goes to the end.
    let screen = render(&a, 80, 24);
    assert!(screen.contains("▶pread 1M"), "{screen}");
    a.handle_key(key(KeyCode::End));
    let screen = render(&a, 80, 24);
    assert!(
        !screen.contains("▶pread"),
        "scrolled past the live row:\n{screen}"
    );
    assert_eq!(a.view.table_cursor, 30);
    a.handle_key(key(KeyCode::Home));
    assert!(first_row(&a, 80, 24).contains("▶"));
    // Sorting by throughput puts the fastest finished row first (after the live row).
    let fastest = a
        .rows
        .iter()
        .map(|r| r.figures.mib_s)
        .fold(0.0f64, f64::max);
    a.handle_key(key(KeyCode::Char('o')));
    assert!(a.message.contains("sorted by MiB/s"), "{}", a.message);
    let body = diskscope::tui::widgets::results::body(&a);
    assert_eq!(a.rows[body[1].2.unwrap()].figures.mib_s, fastest);
    // h hides the row under the cursor; H shows it again.
    a.handle_key(key(KeyCode::Char('J')));
    let before = diskscope::tui::widgets::results::row_count(&a);
    a.handle_key(key(KeyCode::Char('h')));
    assert!(a.message.contains("hidden"), "{}", a.message);
    assert_eq!(diskscope::tui::widgets::results::row_count(&a), before - 1);
    a.handle_key(key(KeyCode::Char('H')));
    assert_eq!(diskscope::tui::widgets::results::row_count(&a), before);
    // A wide table adds p90, p99.9 and max.
    let wide = render(&a, 300, 80);
    assert!(wide.contains("p99.9") && wide.contains(" max"), "{wide}");
    // Without a profile no row has a bound, so no empty %bound column takes room.
    assert!(!wide.contains("%bound"), "{wide}");
}

#[test]
fn the_device_panel_shows_the_device_rates_and_the_ratio_of_file_to_device_bytes() {
    use diskscope::measure::device::{DiskStat, Sample};
    let mut a = app();
    let id = started_id(&a.start());
    let screen = render(&a, 200, 60);
    assert!(screen.contains("sampled while a run is on"), "{screen}");
    // One second: the file moves 500 MiB per 100 ms, the device 1000 MiB per 100 ms (read-ahead
    // doubling the reads) in 1 MiB requests.
    let dev = |i: u64| Sample {
        at_ns: i * 100_000_000,
        disk: Some(DiskStat {
            read_ios: i * 1000,
            read_sectors: i * 1000 * 2048,
            read_ticks_ms: i * 500,
            in_flight: 9,
            io_ticks_ms: i * 100,
            // Four requests in flight on average: 400 ms of them per 100 ms.
            time_in_queue_ms: i * 400,
            ..Default::default()
        }),
        cpu: None,
    };
    a.apply(Update::Device {
        device: Some("vda".into()),
        sample: dev(0),
    });
    feed_run(&mut a, id, 10, 500, 200);
    for i in 1..=10 {
        a.apply(Update::Device {
            device: Some("vda".into()),
            sample: dev(i),
        });
    }
    let screen = render(&a, 200, 60);
    let areas = diskscope::tui::ui::areas(&a, ratatui::layout::Rect::new(0, 0, 200, 60));
    let panel = region(&screen, areas.device).join("\n");
    // iostat's figures with their units: the time-averaged queue (aqu-sz 4.00), not the 9 in
    // flight at the last sample.
    for want in [
        "device vda, last second",
        "read   10.0k/s  10000 MiB/s 0.50 ms",
        "file/dev 0.50×",
        "util 100%",
        "aqu-sz 4.00",
        "areq-sz 1.00 MiB",
    ] {
        assert!(panel.contains(want), "missing {want:?}:\n{panel}");
    }
    // Under the lines, the history of util, await and aqu-sz, each with its scale.
    for want in ["util", "100%", "await", "≤0.50ms", "aqu-sz", "≤4.00"] {
        assert!(panel.contains(want), "missing {want:?}:\n{panel}");
    }
    assert!(panel.contains("████"), "{panel}");
    // At 120x40 its four lines are whole.
    let areas = diskscope::tui::ui::areas(&a, ratatui::layout::Rect::new(0, 0, 120, 40));
    let panel = region(&render(&a, 120, 40), areas.device).join("\n");
    for want in ["read ", "write ", "util 100%", "file/dev 0.50×"] {
        assert!(panel.contains(want), "120x40: missing {want:?}:\n{panel}");
    }
    // No room for it at 80x24: the settings keep theirs.
    assert!(!render(&a, 80, 24).contains("device vda, last second"));
    // A file with no block device says so.
    a.apply(Update::Device {
        device: None,
        sample: dev(11),
    });
    assert!(render(&a, 200, 60).contains("no block device under this file"));
}

#[test]
fn the_event_log_keeps_a_keys_feedback_that_a_note_replaced_and_wraps_long_entries_whole() {
    let mut a = app();
    let id = started_id(&a.start());
    feed_run(&mut a, id, 5, 100, 20);
    let next = started_id(&a.handle_key(key(KeyCode::Char('p'))));
    let key_message = a.message.clone();
    let spec = a.live.as_ref().map(|l| l.settings).unwrap().spec(
        &a.file,
        &a.explored.scratch,
        a.explored.size_bytes,
    );
    let note = "O_DIRECT is not used here: the filesystem refused it, so this run reads through the page cache and its figures are the cache's, not the device's".to_string();
    a.apply(Update::Started {
        id: next,
        meta: Box::new(PreparedMeta {
            spec,
            file_size: a.explored.size_bytes,
            total: a.explored.size_bytes,
            residency_before: None,
        }),
        workers: 1,
        notes: vec![note.clone()],
    });
    assert_eq!(
        a.message, note,
        "the note replaces the key's feedback on the message line"
    );
    let logged: Vec<&str> = a.log.iter().map(|(_, m)| m.as_str()).collect();
    assert!(logged.contains(&key_message.as_str()), "{logged:?}");
    assert!(logged.contains(&note.as_str()), "{logged:?}");
    let areas = diskscope::tui::ui::areas(&a, ratatui::layout::Rect::new(0, 0, 200, 60));
    let pane = region(&render(&a, 200, 60), areas.log);
    let text = pane
        .iter()
        .map(|l| l.trim_matches(|c| c == '│' || c == ' ').to_string())
        .collect::<Vec<_>>()
        .join(" ");
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words(&text).contains(&words(&note)), "{}", pane.join("\n"));
    assert!(
        words(&text).contains(&words(&key_message)),
        "{}",
        pane.join("\n")
    );
}

#[test]
fn a_setting_left_within_a_second_is_transient_not_kept_unless_t_asks_and_b_cannot_pin_it() {
    let mut a = app();
    let id = started_id(&a.start());
    feed_run(&mut a, id, 1, 100, 20);
    let next = started_id(&a.handle_key(key(KeyCode::Char('p'))));
    // The run lasted 0.05 s: a key pressed before the last one settled.
    a.apply(Update::Stopped {
        id,
        elapsed: Duration::from_millis(50),
        error: None,
    });
    assert!(a.rows.is_empty(), "a 0.05 s row is not kept");
    assert!(a.message.contains("transient, not kept"), "{}", a.message);
    assert!(a.log.iter().any(|(_, m)| m.contains("transient")));
    a.handle_key(key(KeyCode::Char('B')));
    assert!(a.baseline.is_none(), "nothing to pin");
    // t keeps them.
    a.handle_key(key(KeyCode::Char('t')));
    assert!(a.view.keep_transient);
    feed_run(&mut a, next, 1, 100, 20);
    a.handle_key(key(KeyCode::Char('p')));
    a.apply(Update::Stopped {
        id: next,
        elapsed: Duration::from_millis(50),
        error: None,
    });
    assert_eq!(a.rows.len(), 1);
}

#[test]
fn no_color_draws_every_cell_in_the_terminal_s_own_colours() {
    let mut a = app_with_rows(3);
    a.view.no_color = true;
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| f.render_widget(&a, f.area())).unwrap();
    let buf = terminal.backend().buffer().clone();
    for cell in buf.content() {
        assert_eq!(cell.fg, ratatui::style::Color::Reset, "{cell:?}");
        assert_eq!(cell.bg, ratatui::style::Color::Reset, "{cell:?}");
    }
}

/// The words of `text` in order, each whole, in `screen` (rows joined with a space, so a
/// message broken between words still reads whole).
fn has_words_in_order(screen: &[String], text: &str) -> bool {
    let joined = screen
        .iter()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join(" ");
    let squeezed = joined.split_whitespace().collect::<Vec<_>>().join(" ");
    squeezed.contains(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[test]
fn no_figure_is_cut_on_the_status_message_or_why_lines_at_any_size() {
    use diskscope::explain::context::{warnings_for, Context, Filesystem};
    use diskscope::explain::profile::Profile;
    let mut a = App::new(
        PathBuf::from(
            "/srv/storage/benchmarks/customer-datasets/2026-11/very-long-directory-name/big.bin",
        ),
        1 << 30,
        PathBuf::from("/data/.big.bin.diskscope-scratch"),
        PathBuf::from("diskscope-results/tui-test.csv"),
    );
    let fs = Filesystem {
        fs_type: "tmpfs".into(),
        mount_options: "rw,relatime,size=16777216k,nr_inodes=4194304".into(),
        ..Default::default()
    };
    a.explored.context = Some(Context {
        warnings: warnings_for(Some(&fs), None),
        filesystem: Some(fs),
        ..Default::default()
    });
    a.explored.profile = Some((Profile::synthetic_example(), None));
    let id = started_id(&a.start());
    feed_run(&mut a, id, 100, 300, 200);
    let message = "pread 1M ran 0.05 s, 12 ops: transient, not kept (under 1 s or 100 ops; \
                   t keeps such rows) and 1943.5 MiB/s measured";
    a.message = message.into();
    for (w, h) in [(80u16, 24u16), (120, 40), (200, 60), (300, 80)] {
        let screen = render(&a, w, h);
        let rows: Vec<String> = screen.lines().map(String::from).collect();
        // The status line says less rather than being cut: what it means to show fits.
        let status = diskscope::tui::ui::status_line(&a, w as usize);
        let text: String = status.spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(status.width() <= w as usize, "{w}x{h}: {text}");
        assert_eq!(rows[0].trim_end(), text.trim_end(), "{w}x{h}");
        assert!(rows[0].contains("RUNNING") && rows[0].contains("⚠ the file is on tmpfs, in RAM"));
        assert!(
            rows[0].contains("big.bin"),
            "{w}x{h}: the file's name ends the path: {}",
            rows[0]
        );
        // The message is whole, broken between words over the rows it needs.
        let areas = diskscope::tui::ui::areas(&a, ratatui::layout::Rect::new(0, 0, w, h));
        let info = region(&screen, areas.info);
        assert!(
            has_words_in_order(&info, message),
            "{w}x{h}:\n{}",
            info.join("\n")
        );
        assert!(info[0].contains("XOR "), "{w}x{h}: {}", info[0]);
        // The why line in the throughput panel is whole: its percentage ends it.
        let chart = region(&screen, areas.throughput);
        let why = chart
            .iter()
            .find(|l| l.contains("why "))
            .expect("a why line");
        let why = why.trim_end().trim_end_matches('│').trim_end();
        assert!(why.ends_with('%'), "{w}x{h}: {why}");
        assert!(screen.contains("now 3000 MiB/s"), "{w}x{h}");
        assert!(
            chart[0].contains(" s per bar ") || chart[0].contains(" s/bar "),
            "{w}x{h}: the chart's title is whole: {}",
            chart[0]
        );
        // From 27 rows: the where line is whole (its warning briefly when both do not fit).
        if areas.why.height > 0 {
            let detail = region(&screen, areas.why);
            assert!(
                has_words_in_order(
                    &detail,
                    "tmpfs (rw,relatime,size=16777216k,nr_inodes=4194304)"
                ),
                "{w}x{h}:\n{}",
                detail.join("\n")
            );
        }
    }
}

/// One snapshot of worker 0 ending at `at_ms` after `interval_ms`, moving `mib` MiB in 1 MiB
/// operations of 200 µs.
fn snap(app: &mut App, id: u64, at_ms: u64, interval_ms: u64, mib: u64, kind: SnapshotKind) {
    let mut latency = new_latency_histogram();
    if mib > 0 {
        latency.record_n(200_000, mib).unwrap();
    }
    app.apply(Update::Snapshot {
        id,
        snapshot: Box::new(Snapshot {
            worker: 0,
            at_ns: at_ms * 1_000_000,
            interval_ns: interval_ms * 1_000_000,
            bytes: mib * MIB,
            ops: mib,
            latency,
            ops_log: Vec::new(),
            paced: None,
            mixed: None,
            kind,
        }),
    });
}

/// The figure after `label` on the screen (`mean 3000` → 3000).
fn figure_after(screen: &str, label: &str) -> f64 {
    let at = screen
        .find(label)
        .unwrap_or_else(|| panic!("no {label}:\n{screen}"));
    screen[at + label.len()..]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no figure after {label}:\n{screen}"))
}

#[test]
fn after_r_the_mean_never_reads_above_the_peak() {
    let mut a = app();
    let id = started_id(&a.start());
    feed_run(&mut a, id, 20, 300, 200);
    let id = started_id(&a.handle_key(key(KeyCode::Char('r'))));
    feed_run(&mut a, id, 10, 300, 200);
    // A last snapshot that ends inside a bin and ran twice as fast: a mean over all bytes
    // (3300 MiB in 1.05 s: 3143) would read above every complete bin (3000).
    snap(&mut a, id, 1050, 50, 300, SnapshotKind::Interval);
    for (w, h) in [(80, 24), (200, 60)] {
        let screen = render(&a, w, h);
        let (mean, peak) = (
            figure_after(&screen, "mean "),
            figure_after(&screen, "peak "),
        );
        assert!(
            mean <= peak,
            "{w}x{h}: mean {mean} > peak {peak}:\n{screen}"
        );
        assert_eq!(mean, 3000.0, "{screen}");
    }
}

#[test]
fn a_warm_reads_figures_leave_out_its_first_pass_and_rows_show_the_warm_up_and_the_spread() {
    let mut a = app();
    let id = started_id(&a.start());
    feed_run(&mut a, id, 0, 0, 0);
    // First pass from the disk: 1000 MiB/s for 1 s, then its end.
    for i in 1..=10 {
        snap(&mut a, id, i * 100, 100, 100, SnapshotKind::Interval);
    }
    let screen = render(&a, 80, 24);
    assert!(screen.contains("warming up"), "{screen}");
    snap(
        &mut a,
        id,
        1000,
        1,
        0,
        SnapshotKind::Final {
            xor: Some(7),
            full_pass: true,
        },
    );
    // Then from memory: 4800 and 5200 MiB/s by turns for 2 s.
    for i in 11..=30 {
        let mib = if i % 2 == 0 { 480 } else { 520 };
        snap(&mut a, id, i * 100, 100, mib, SnapshotKind::Interval);
    }
    let screen = render(&a, 80, 24);
    assert!(screen.contains("wu 1.00s"), "{screen}");
    assert_eq!(
        figure_after(&screen, "IOPS "),
        5000.0,
        "after the warm-up too: {screen}"
    );
    assert_eq!(figure_after(&screen, "mean "), 5000.0, "{screen}");
    assert!(
        screen.contains("±4.1%"),
        "the spread of the 100 ms samples:\n{screen}"
    );
    // The row: 5000 MiB/s over the 2 s after the warm-up, not 3667 over 3 s.
    let next = started_id(&a.handle_key(key(KeyCode::Char('c'))));
    // Later passes' finals reach the UI as intervals (the session keeps the first one's XOR).
    a.apply(Update::Stopped {
        id,
        elapsed: Duration::from_secs(3),
        error: None,
    });
    let r = &a.rows[0];
    assert!(
        (r.figures.mib_s - 5000.0).abs() < 1.0,
        "{}",
        r.figures.mib_s
    );
    assert!(
        (r.figures.seconds - 2.0).abs() < 1e-6,
        "{}",
        r.figures.seconds
    );
    assert_eq!(r.figures.xor, "00000007", "the XOR is the whole segment's");
    let extra = &a.runs.row_extra[0];
    assert_eq!((extra.warmup_s, extra.warmup_over), (Some(1.0), true));
    let screen = render(&a, 200, 60);
    let row = screen
        .lines()
        .find(|l| (l.contains("✓pread 1M") || l.contains(" pread 1M")) && l.contains('%'))
        .unwrap_or("");
    assert!(
        row.contains("±4.1%") && row.contains("1.00s"),
        "{row}\n{screen}"
    );
    assert!(screen.contains(" wu "), "{screen}");
    // A cold read has no warm-up: its row leaves nothing out.
    feed_run(&mut a, next, 20, 300, 200);
    assert_eq!(a.live.as_ref().unwrap().warmup_seconds(), None);
    assert!(!render(&a, 80, 24).contains("warming up"));
}

#[test]
fn a_suspect_row_is_flagged_and_says_why_with_the_run_commands_verdict() {
    use diskscope::explain::context::{warnings_for, Context, Filesystem};
    let mut a = app();
    let fs = Filesystem {
        fs_type: "tmpfs".into(),
        mount_options: "rw".into(),
        ..Default::default()
    };
    a.explored.context = Some(Context {
        warnings: warnings_for(Some(&fs), None),
        filesystem: Some(fs),
        ..Default::default()
    });
    let id = started_id(&a.start());
    feed_run(&mut a, id, 20, 300, 200);
    a.handle_key(key(KeyCode::Char('c')));
    end_run(&mut a, id, 0, 2);
    let r = &a.rows[0];
    assert_eq!(r.judgement.verdict, "suspect", "{r:?}");
    assert!(
        r.judgement.reasons.contains("not_a_disk"),
        "{}",
        r.judgement.reasons
    );
    assert!(
        a.message.contains("is suspect (not_a_disk"),
        "{}",
        a.message
    );
    assert!(a.log.iter().any(|(_, m)| m.contains("not_a_disk")));
    let screen = render(&a, 120, 40);
    let row = screen.lines().find(|l| l.contains("│ pread 1M")).unwrap();
    assert!(row.contains(" ! "), "the flags end in !: {row}");
    // The row under the cursor is suspect: the why rows name its reasons.
    a.handle_key(key(KeyCode::Home));
    let screen = render(&a, 120, 40);
    assert!(screen.contains("pread 1M suspect: "), "{screen}");
    let r = &a.rows[0];
    let cells = diskscope::tui::widgets::results::cells(&a, " ", r, None);
    assert!(cells[2].ends_with('!'), "{cells:?}");
}

#[test]
fn the_latency_histogram_gets_finer_with_room_marks_p50_and_p99_and_l_switches_to_log_counts() {
    let mut a = app();
    let id = started_id(&a.start());
    a.apply(Update::Started {
        id,
        meta: Box::new(PreparedMeta {
            spec: a
                .settings
                .spec(&a.file, &a.explored.scratch, a.explored.size_bytes),
            file_size: a.explored.size_bytes,
            total: a.explored.size_bytes,
            residency_before: None,
        }),
        workers: 1,
        notes: vec![],
    });
    // 5619 fast operations, a hundred slower ones and two in the tail.
    let mut latency = new_latency_histogram();
    latency.record_n(3_000, 5619).unwrap();
    latency.record_n(5_000, 100).unwrap();
    latency.record_n(200_000, 2).unwrap();
    a.apply(Update::Snapshot {
        id,
        snapshot: Box::new(Snapshot {
            worker: 0,
            at_ns: 1_000_000_000,
            interval_ns: 1_000_000_000,
            bytes: 5721 * MIB,
            ops: 5721,
            latency,
            ops_log: Vec::new(),
            paced: None,
            mixed: None,
            kind: SnapshotKind::Interval,
        }),
    });
    let bars = |w: u16, h: u16, a: &App| {
        let screen = render(a, w, h);
        let areas = diskscope::tui::ui::areas(a, ratatui::layout::Rect::new(0, 0, w, h));
        let lat = region(&screen, areas.latency);
        let rows: Vec<String> = lat.into_iter().filter(|l| l.contains("s-")).collect();
        (rows, screen)
    };
    let (small, _) = bars(80, 24, &a);
    let (big, screen) = bars(200, 60, &a);
    assert!(big.len() > small.len(), "{small:?}\n{big:?}");
    assert!(big.iter().any(|l| l.contains("p50")), "{screen}");
    assert!(big.iter().any(|l| l.contains("p99")), "{screen}");
    // The tail bucket of 2 is one column linearly, several on the log scale.
    let tail_len = |rows: &[String]| {
        rows.iter()
            .find(|l| {
                l.trim_end()
                    .trim_end_matches('│')
                    .trim_end()
                    .ends_with(" 2")
            })
            .map(|l| l.matches('█').count())
            .unwrap_or_else(|| panic!("no tail bucket: {rows:?}"))
    };
    assert_eq!(tail_len(&big), 1);
    a.handle_key(key(KeyCode::Char('l')));
    assert!(a.view.latency_log);
    let (big_log, screen) = bars(200, 60, &a);
    assert!(tail_len(&big_log) > 3, "{screen}");
    assert!(screen.contains("log counts (l)"), "{screen}");
}

#[test]
fn the_chart_marks_where_a_setting_changed_on_a_row_of_its_own_and_the_svg_too() {
    let mut a = app();
    let first = started_id(&a.start());
    feed_run(&mut a, first, 100, 300, 200);
    let second = started_id(&a.handle_key(key(KeyCode::Right)));
    end_run(&mut a, first, 0, 10);
    feed_run(&mut a, second, 100, 600, 200);
    let marks = a.history.marks(diskscope::tui::history::Span::Minute);
    assert_eq!(marks, vec![(0, "read pread 1M"), (100, "read pread 2M")]);
    for (w, h) in [(80u16, 24u16), (120, 40), (200, 60)] {
        let screen = render(&a, w, h);
        let areas = diskscope::tui::ui::areas(&a, ratatui::layout::Rect::new(0, 0, w, h));
        let chart = region(&screen, areas.throughput);
        // The marks' row (at 80x24, where the chart has three rows, the time axis) holds the
        // marks and their labels, no bar.
        let mark = if h < 40 { '▲' } else { '▼' };
        let marks: usize = chart.iter().map(|l| l.matches(mark).count()).sum();
        assert_eq!(marks, 2, "{w}x{h}:\n{}", chart.join("\n"));
        let row = chart
            .iter()
            .find(|l| l.contains(mark))
            .expect("a marks row");
        assert!(!row.contains('█') && !row.contains('┤'), "{w}x{h}: {row}");
        if h >= 40 {
            assert!(row.contains("▼read pread 1M"), "{}", chart.join("\n"));
            assert!(
                chart.iter().any(|l| l.contains('┊')),
                "{}",
                chart.join("\n")
            );
        }
    }
    let svg = diskscope::export::session_svg::render(&diskscope::tui::export::figure(&a));
    assert_eq!(svg.matches("stroke-dasharray=\"4 3\"").count(), 2, "{svg}");
    assert!(svg.contains("read pread 2M"));
}

/// The numbers of the chart's y axis (the gutter's labels before `┤`) in `chart`'s lines, top
/// first, up to the first latency label (a unit after the number).
fn axis_ticks(chart: &[String]) -> Vec<f64> {
    chart
        .iter()
        .filter_map(|l| {
            let end = l.find('┤')?;
            let label = l[..end].trim_start_matches('│').trim();
            label.parse::<f64>().ok()
        })
        .collect()
}

#[test]
fn the_chart_has_a_scaled_axis_with_three_ticks_and_a_p99_line_over_time() {
    let mut a = app();
    let first = started_id(&a.start());
    // 17000 MiB/s, then 13600: a change between two high levels.
    feed_run(&mut a, first, 150, 1700, 200);
    let second = started_id(&a.handle_key(key(KeyCode::Right)));
    end_run(&mut a, first, 0, 15);
    feed_run(&mut a, second, 150, 1360, 2000);
    for (w, h) in [(120u16, 40u16), (200, 60), (300, 90)] {
        let screen = render(&a, w, h);
        let areas = diskscope::tui::ui::areas(&a, ratatui::layout::Rect::new(0, 0, w, h));
        let chart = region(&screen, areas.throughput);
        let ticks = axis_ticks(&chart);
        assert!(ticks.len() >= 3, "{w}x{h}: {ticks:?}\n{}", chart.join("\n"));
        assert!(
            ticks.windows(2).all(|t| t[0] > t[1]),
            "{w}x{h}: top first: {ticks:?}"
        );
        let lowest = *ticks.last().unwrap();
        assert!(
            lowest > 5000.0 && lowest <= 13_600.0,
            "{w}x{h}: the axis starts near the data, not at 0: {ticks:?}"
        );
        // The latency lines: braille dots under the bars, on a log axis in µs/ms.
        let braille = chart
            .iter()
            .flat_map(|l| l.chars())
            .filter(|c| ('\u{2801}'..='\u{28ff}').contains(c))
            .count();
        assert!(
            braille > 20,
            "{w}x{h}: no latency line:\n{}",
            chart.join("\n")
        );
        assert!(
            chart.iter().any(|l| l.contains("ms┤")) && chart.iter().any(|l| l.contains("µs┤")),
            "{w}x{h}: the latency axis:\n{}",
            chart.join("\n")
        );
        assert!(
            screen.contains("p99 2.00ms") || screen.contains("p99 2.01ms"),
            "{screen}"
        );
    }
    // `v` shows the last 10 minutes, then the hour, then the minute again.
    a.handle_key(key(KeyCode::Char('v')));
    assert!(
        render(&a, 200, 60).contains("last 30 s, 1 s per bar"),
        "{}",
        render(&a, 200, 60)
    );
    a.handle_key(key(KeyCode::Char('v')));
    assert!(render(&a, 200, 60).contains("last 30 s, 10 s per bar"));
    a.handle_key(key(KeyCode::Char('v')));
    let screen = render(&a, 200, 60);
    assert!(screen.contains("last 30 s, 0."), "{screen}");
}

#[test]
fn b_pins_and_x_deletes_the_row_under_the_cursor_and_the_mouse_scrolls_and_selects() {
    use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
    let mut a = app_with_rows(30);
    let screen = diskscope::tui::ui::areas(&a, ratatui::layout::Rect::new(0, 0, 120, 40)).results;
    let mouse = |kind, column, row| MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    };
    // The wheel moves the cursor (row 0 is the live row).
    for _ in 0..4 {
        a.handle_mouse(mouse(MouseEventKind::ScrollDown, 60, 30), screen);
    }
    assert_eq!(a.view.table_cursor, 4);
    a.handle_mouse(mouse(MouseEventKind::ScrollUp, 60, 30), screen);
    assert_eq!(a.view.table_cursor, 3);
    // A click on the table's third body row selects it.
    let t = screen;
    a.handle_mouse(
        mouse(
            MouseEventKind::Down(MouseButton::Left),
            t.x + 5,
            t.y + 2 + 2,
        ),
        screen,
    );
    assert_eq!(a.view.table_cursor, 2);
    // A click outside the table changes nothing.
    a.handle_mouse(mouse(MouseEventKind::Down(MouseButton::Left), 1, 0), screen);
    assert_eq!(a.view.table_cursor, 2);
    // B pins the row under the cursor; B on it again unpins.
    let under = a.row_under_cursor().unwrap();
    a.handle_key(key(KeyCode::Char('B')));
    assert!(
        matches!(a.baseline, Some(diskscope::tui::baseline::Baseline::Pinned { index, .. }) if index == under)
    );
    assert_eq!(
        a.row_under_cursor(),
        Some(under),
        "the cursor follows the pinned row"
    );
    a.handle_key(key(KeyCode::Char('B')));
    assert!(a.baseline.is_none(), "{}", a.message);
    // x deletes the row under the cursor (not the live one).
    a.handle_key(key(KeyCode::Char('J')));
    let gone = a.row_under_cursor().unwrap();
    let n = a.rows.len();
    let next_label = diskscope::tui::widgets::results::setting_label(&a.rows[gone]);
    a.handle_key(key(KeyCode::Char('x')));
    assert_eq!(a.rows.len(), n - 1);
    assert_eq!(a.runs.row_extra.len(), n - 1);
    assert!(
        a.message.contains(&format!("row {next_label} deleted")),
        "{}",
        a.message
    );
    a.handle_key(key(KeyCode::Home));
    a.handle_key(key(KeyCode::Char('x')));
    assert!(
        a.message.contains("live row cannot be deleted"),
        "{}",
        a.message
    );
    assert_eq!(a.rows.len(), n - 1);
}

#[test]
fn capital_m_cycles_the_buffer_memory_and_skips_malloc_under_o_direct() {
    use diskscope::config::Buffers;
    let mut a = app();
    a.start();
    let spec_of = |action: Action| match action {
        Action::Start { spec, .. } => spec,
        other => panic!("expected a start, got {other:?}"),
    };
    let spec = spec_of(a.handle_key(key(KeyCode::Char('M'))));
    assert_eq!(spec.setup.buffers, Buffers::Plain);
    assert!(a.message.contains("buffers plain"), "{}", a.message);
    assert_eq!(
        spec_of(a.handle_key(key(KeyCode::Char('M')))).setup.buffers,
        Buffers::Malloc
    );
    // O_DIRECT refuses malloc's unaligned buffers, as --buffers does.
    a.handle_key(key(KeyCode::Char('d')));
    assert!(!a.settings.setup.direct, "{}", a.message);
    assert!(a.message.contains("malloc"), "{}", a.message);
    assert_eq!(
        spec_of(a.handle_key(key(KeyCode::Char('M')))).setup.buffers,
        Buffers::Thp
    );
    spec_of(a.handle_key(key(KeyCode::Char('d'))));
    assert!(a.settings.setup.direct);
    spec_of(a.handle_key(key(KeyCode::Char('M'))));
    spec_of(a.handle_key(key(KeyCode::Char('M'))));
    assert_eq!(
        spec_of(a.handle_key(key(KeyCode::Char('M')))).setup.buffers,
        Buffers::Plain
    );
    assert_eq!(
        spec_of(a.handle_key(key(KeyCode::Char('M')))).setup.buffers,
        Buffers::Thp,
        "malloc is skipped under O_DIRECT"
    );
}

#[test]
fn capital_r_takes_a_rate_for_an_open_loop_and_the_histogram_shows_service_beside_response() {
    use diskscope::measure::snapshot::PacedSnapshot;
    let mut a = app();
    a.start();
    let type_in = |a: &mut App, text: &str| -> Action {
        a.handle_key(key(KeyCode::Char('R')));
        for c in text.chars() {
            a.handle_key(key(KeyCode::Char(c)));
        }
        assert!(render(a, 80, 24).contains(&format!("rate ▸ {text}▏")));
        a.handle_key(key(KeyCode::Enter))
    };
    let id = match type_in(&mut a, "2000") {
        Action::Start { id, spec } => {
            assert_eq!(spec.setup.rate(), Some(2000.0));
            id
        }
        other => panic!("{other:?}"),
    };
    assert!(
        a.message.contains("open loop at 2000 ops/s"),
        "{}",
        a.message
    );
    // The session's snapshots of an open-loop run carry response times too.
    a.apply(Update::Started {
        id,
        meta: Box::new(PreparedMeta {
            spec: a
                .settings
                .spec(&a.file, &a.explored.scratch, a.explored.size_bytes),
            file_size: a.explored.size_bytes,
            total: a.explored.size_bytes,
            residency_before: None,
        }),
        workers: 1,
        notes: vec![],
    });
    let (mut service, mut response) = (new_latency_histogram(), new_latency_histogram());
    service.record_n(50_000, 200).unwrap();
    response.record_n(900_000, 200).unwrap();
    a.apply(Update::Snapshot {
        id,
        snapshot: Box::new(Snapshot {
            worker: 0,
            at_ns: 100_000_000,
            interval_ns: 100_000_000,
            bytes: 200 * MIB,
            ops: 200,
            latency: service,
            ops_log: Vec::new(),
            paced: Some(Box::new(PacedSnapshot {
                response,
                backlog_ops: 0,
            })),
            mixed: None,
            kind: SnapshotKind::Interval,
        }),
    });
    for (w, h) in [(80, 24), (200, 60)] {
        let screen = render(&a, w, h);
        // Side by side, or one above the other where the panel is narrow but tall.
        let (s, r) = (screen.find("service"), screen.find("response"));
        assert!(s.is_some() && r.is_some() && s < r, "{w}x{h}:\n{screen}");
        assert!(
            screen.contains("p50 50.2µs") && screen.contains("p50 901µs"),
            "{screen}"
        );
    }
    // A throughput is divided by the block size (1 MiB); 0 is the closed loop again.
    match type_in(&mut a, "50M/s") {
        Action::Start { spec, .. } => assert_eq!(spec.setup.rate(), Some(50.0)),
        other => panic!("{other:?}"),
    }
    match type_in(&mut a, "0") {
        Action::Start { spec, .. } => assert_eq!(spec.setup.rate(), None),
        other => panic!("{other:?}"),
    }
    assert!(a.message.contains("closed loop"), "{}", a.message);
    type_in(&mut a, "fast");
    assert!(
        a.message.contains("rate: cannot read 'fast'"),
        "{}",
        a.message
    );
}

/// Feeds run `id` (a mix) what the session sends: started, then `intervals` snapshots of 100 ms
/// with `reads` and `writes` operations of one block each (reads ~100 µs, writes ~2 ms).
fn feed_mixed(app: &mut App, id: u64, intervals: u64, reads: u64, writes: u64) {
    use diskscope::measure::snapshot::{DirectionShare, MixedSnapshot};
    let spec = app.live.as_ref().map(|l| l.settings).unwrap().spec(
        &app.file,
        &app.explored.scratch,
        app.explored.size_bytes,
    );
    assert!(spec.is_mixed());
    app.apply(Update::Started {
        id,
        meta: Box::new(PreparedMeta {
            spec: spec.clone(),
            file_size: app.explored.size_bytes,
            total: app.explored.size_bytes,
            residency_before: None,
        }),
        workers: 1,
        notes: vec![],
    });
    let bs = spec.setup.block_size_bytes;
    for i in 1..=intervals {
        let share = |ops: u64, lat_ns: u64| {
            let mut latency = new_latency_histogram();
            latency.record_n(lat_ns, ops).unwrap();
            DirectionShare {
                bytes: ops * bs,
                ops,
                latency,
            }
        };
        let (r, w) = (share(reads, 100_000), share(writes, 2_000_000));
        let mut latency = new_latency_histogram();
        latency.add(&r.latency).unwrap();
        latency.add(&w.latency).unwrap();
        app.apply(Update::Snapshot {
            id,
            snapshot: Box::new(Snapshot {
                worker: 0,
                at_ns: i * 100_000_000,
                interval_ns: 100_000_000,
                bytes: (reads + writes) * bs,
                ops: reads + writes,
                latency,
                ops_log: Vec::new(),
                paced: None,
                mixed: Some(Box::new(MixedSnapshot { read: r, write: w })),
                kind: SnapshotKind::Interval,
            }),
        });
    }
}

#[test]
fn w_steps_from_read_to_write_to_a_mix_and_capital_w_types_its_share() {
    let mut a = app();
    a.start();
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('w'))) else {
        panic!("w starts a write")
    };
    assert_eq!((spec.setup.op, spec.setup.mix_read_pct), (Op::Write, None));
    // The second w mixes at fio's default share, on the scratch file like a write.
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('w'))) else {
        panic!("w starts a mix")
    };
    assert_eq!(spec.setup.mix_read_pct, Some(50), "fio's rwmixread default");
    assert_eq!(spec.target.path, a.explored.scratch);
    assert_ne!(spec.target.path, a.file);
    assert!(a.message.starts_with("mix 50/50"), "{}", a.message);
    let screen = render(&a, 80, 24);
    assert!(screen.contains("op     mix 50/50"), "{screen}");
    assert!(
        screen.contains("mixing "),
        "the status line says it mixes:\n{screen}"
    );
    // The third w reads the explored file again.
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('w'))) else {
        panic!("w starts a read")
    };
    assert_eq!(
        (spec.setup.op, spec.setup.mix_read_pct, spec.target.path),
        (Op::Read, None, a.file.clone())
    );
    // W 70 Enter: a 70/30 mix at once, and w comes back to 70 after that.
    a.handle_key(key(KeyCode::Char('W')));
    for c in "70".chars() {
        a.handle_key(key(KeyCode::Char(c)));
    }
    assert!(render(&a, 80, 24).contains("mix % reads ▸ 70▏"));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Enter)) else {
        panic!("Enter starts the mix")
    };
    assert_eq!(
        (spec.setup.op, spec.setup.mix_read_pct),
        (Op::Write, Some(70))
    );
    a.handle_key(key(KeyCode::Char('w')));
    a.handle_key(key(KeyCode::Char('w')));
    let Action::Start { spec, .. } = a.handle_key(key(KeyCode::Char('w'))) else {
        panic!("w starts the mix again")
    };
    assert_eq!(spec.setup.mix_read_pct, Some(70));
    // A share out of range is refused in one line and changes nothing.
    a.handle_key(key(KeyCode::Char('W')));
    a.handle_key(key(KeyCode::Char('0')));
    assert_eq!(a.handle_key(key(KeyCode::Enter)), Action::None);
    assert!(a.message.contains("between 1 and 99"), "{}", a.message);
    assert_eq!(a.settings.setup.mix_read_pct, Some(70));
    // mmap cannot mix: m to it turns the mix into writes and says so; w then passes over the
    // mix to reads.
    a.settings.setup.method = Method::Pread;
    a.handle_key(key(KeyCode::Char('m')));
    assert!(a.message.contains("mix off, writing"), "{}", a.message);
    assert_eq!(
        (a.settings.setup.op, a.settings.setup.mix_read_pct),
        (Op::Write, None)
    );
    a.handle_key(key(KeyCode::Char('w')));
    assert_eq!(a.settings.setup.op, Op::Read);
    assert!(a.message.contains("no mix"), "{}", a.message);
}

#[test]
fn a_mix_shows_each_directions_histogram_throughput_and_share_and_its_row_says_them() {
    let mut a = app();
    a.start();
    a.handle_key(key(KeyCode::Char('W')));
    for c in "70".chars() {
        a.handle_key(key(KeyCode::Char(c)));
    }
    let id = started_id(&a.handle_key(key(KeyCode::Enter)));
    // 1 MiB blocks: 14 reads and 6 writes per 100 ms, 1.5 s.
    feed_mixed(&mut a, id, 15, 14, 6);
    for (w, h) in [(80, 24), (200, 60)] {
        let screen = render(&a, w, h);
        // Side by side, or one above the other where the panel is narrow but tall.
        let (r, wr) = (
            screen.find("read 140.0 MiB/s"),
            screen.find("write 60.0 MiB/s"),
        );
        assert!(
            r.is_some() && wr.is_some() && r < wr,
            "{w}x{h}: the directions are not both shown:\n{screen}"
        );
        assert!(
            screen.contains("140 IOPS") && screen.contains("60 IOPS"),
            "{screen}"
        );
        // Each direction's percentiles: reads ~100 µs, writes ~2 ms.
        assert!(
            screen.contains("p50 100µs") && screen.contains("p50 2.0"),
            "{screen}"
        );
        assert!(screen.contains("method pread/pwrite"), "{screen}");
        assert!(
            screen.contains("mix reads 70.0% of ops (70% asked)"),
            "{w}x{h}:\n{screen}"
        );
        assert!(
            screen.contains("mix70"),
            "the live row names the mix:\n{screen}"
        );
    }
    // w (back to reads): the mix ends as a row that says its directions apart.
    let next = started_id(&a.handle_key(key(KeyCode::Char('w'))));
    end_run(&mut a, id, 0, 2);
    assert_eq!(a.rows.len(), 1);
    let r = &a.rows[0];
    assert_eq!(r.setup.op.as_str(), "mix");
    assert_eq!(
        (
            r.setup.mix_read_pct,
            r.mix.as_ref().map(|m| m.read_ops),
            r.mix.as_ref().map(|m| m.write_ops)
        ),
        (Some(70), Some(210), Some(90))
    );
    assert!((r.mix.as_ref().and_then(|m| m.mix_read_pct_done).unwrap() - 70.0).abs() < 1e-9);
    let said = a
        .log
        .iter()
        .map(|(_, m)| m.as_str())
        .find(|m| m.contains("reads 70.0% of ops (70% asked)"))
        .unwrap_or_else(|| panic!("the row's directions were not said: {:?}", a.log));
    assert!(
        said.contains("mix70") && said.contains("│ writes: "),
        "{said}"
    );
    let screen = render(&a, 80, 24);
    assert!(screen.contains("pread 1M mix70"), "{screen}");
    // The cursor on the row says its directions again; the exit summary too.
    feed_run(&mut a, next, 3, 100, 50);
    a.handle_key(key(KeyCode::Char('J')));
    assert!(
        a.message.starts_with("pread 1M mix70: reads 70.0% of ops"),
        "{}",
        a.message
    );
    assert!(diskscope::tui::widgets::mix::row_detail(&a.rows[0]).is_some());
}

/// Feeds open-loop run `id` (started by `R`) what the session sends: started, then `intervals`
/// snapshots of 100 ms, each with `ops` operations of ~50 µs service and ~`resp_us` response
/// time and the worker `behind` operations behind its schedule at the end of each.
fn feed_open_loop(app: &mut App, id: u64, intervals: u64, ops: u64, resp_us: u64, behind: u64) {
    use diskscope::measure::snapshot::PacedSnapshot;
    let settings = app.live.as_ref().unwrap().settings;
    let spec = settings.spec(&app.file, &app.explored.scratch, app.explored.size_bytes);
    app.apply(Update::Started {
        id,
        meta: Box::new(PreparedMeta {
            spec: spec.clone(),
            file_size: app.explored.size_bytes,
            total: app.explored.size_bytes,
            residency_before: None,
        }),
        workers: 1,
        notes: vec![],
    });
    for i in 1..=intervals {
        let (mut service, mut response) = (new_latency_histogram(), new_latency_histogram());
        service.record_n(50_000, ops).unwrap();
        // A spread of response times, so the histogram has several buckets.
        for k in 0..ops {
            response
                .record(resp_us * 1000 + (k % 16) * resp_us * 100)
                .unwrap();
        }
        app.apply(Update::Snapshot {
            id,
            snapshot: Box::new(Snapshot {
                worker: 0,
                at_ns: i * 100_000_000,
                interval_ns: 100_000_000,
                bytes: ops * spec.setup.block_size_bytes,
                ops,
                latency: service,
                ops_log: Vec::new(),
                paced: Some(Box::new(PacedSnapshot {
                    response,
                    backlog_ops: behind * i,
                })),
                mixed: None,
                kind: SnapshotKind::Interval,
            }),
        });
    }
}

/// Ends open-loop run `id` as the session does: a final snapshot with the backlog at the end.
fn end_open_loop(app: &mut App, id: u64, seconds: u64, behind: u64) {
    use diskscope::measure::snapshot::PacedSnapshot;
    app.apply(Update::Snapshot {
        id,
        snapshot: Box::new(Snapshot {
            worker: 0,
            at_ns: seconds * 1_000_000_000,
            interval_ns: 1,
            bytes: 0,
            ops: 0,
            latency: new_latency_histogram(),
            ops_log: Vec::new(),
            paced: Some(Box::new(PacedSnapshot {
                response: new_latency_histogram(),
                backlog_ops: behind,
            })),
            mixed: None,
            kind: SnapshotKind::Final {
                xor: Some(0),
                full_pass: false,
            },
        }),
    });
    app.apply(Update::Stopped {
        id,
        elapsed: Duration::from_secs(seconds),
        error: None,
    });
}

/// Types `text` after `R` and presses Enter.
fn type_rate(a: &mut App, text: &str) -> Action {
    a.handle_key(key(KeyCode::Char('R')));
    for c in text.chars() {
        a.handle_key(key(KeyCode::Char(c)));
    }
    a.handle_key(key(KeyCode::Enter))
}

#[test]
fn an_open_loop_the_device_cannot_keep_up_with_says_behind_live_in_its_row_and_at_exit() {
    let mut a = app();
    a.start();
    a.settings.setup.direct = true;
    a.settings.setup.block_size_bytes = 4096;
    // 1M/s asked, 4k done per 100 ms (40k/s), 96k more behind every 100 ms.
    let id = started_id(&type_rate(&mut a, "1000000"));
    feed_open_loop(&mut a, id, 20, 4_000, 900, 96_000);
    for (w, h) in [(80, 24), (120, 40), (160, 40)] {
        let screen = render(&a, w, h);
        let line = screen
            .lines()
            .find(|l| l.contains("asked"))
            .unwrap_or_else(|| panic!("{w}x{h}: no rate line:\n{screen}"));
        assert!(
            line.contains("1.00M/s asked, 40.0k/s done, 1.92M behind"),
            "{w}x{h}: {line}"
        );
        // The live row is labelled with the rate asked.
        assert!(screen.contains("▶pread 4K @1.00M/s"), "{w}x{h}:\n{screen}");
    }
    // The line is drawn bold red when behind (colour is the highlight).
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|f| f.render_widget(&a, f.area())).unwrap();
    let buf = terminal.backend().buffer().clone();
    let screen = render(&a, 80, 24);
    let (y, line) = screen
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("behind"))
        .unwrap();
    let x = line[..line.find("1.92M behind").unwrap()].chars().count() as u16;
    assert_eq!(buf[(x, y as u16)].fg, ratatui::style::Color::Red);
    // The row says it fell behind when it ends, and so does the summary at exit.
    a.handle_key(key(KeyCode::Char(' ')));
    end_open_loop(&mut a, id, 2, 1_920_000);
    assert!(
        a.message
            .contains("pread 4K @1.00M/s: open loop 1.00M/s asked")
            && a.message.contains("1.92M behind at the end: fell behind"),
        "{}",
        a.message
    );
    let row = &a.rows[0];
    assert_eq!(row.fell_behind(), Some(true));
    let summary = diskscope::tui::widgets::openloop::row_detail(row).unwrap();
    assert!(summary.contains("fell behind"), "{summary}");
}

#[test]
fn rows_at_different_rates_read_differently_and_one_that_keeps_up_says_on_schedule() {
    let mut a = app();
    a.start();
    let mut labels = Vec::new();
    for (rate, ops) in [("2000", 200), ("200", 20), ("0", 2000)] {
        let id = started_id(&type_rate(&mut a, rate));
        if rate == "0" {
            feed_run(&mut a, id, 12, 2000, 50);
        } else {
            feed_open_loop(&mut a, id, 12, ops, 60, 0);
            let screen = render(&a, 80, 24);
            assert!(
                screen.contains(&format!("{rate}/s asked")) && screen.contains("on schedule"),
                "{screen}"
            );
            assert!(!screen.contains("behind"), "{screen}");
        }
        a.handle_key(key(KeyCode::Char(' ')));
        if rate == "0" {
            end_run(&mut a, id, 0, 2);
        } else {
            end_open_loop(&mut a, id, 2, 1);
            assert!(a.message.ends_with("on schedule"), "{}", a.message);
        }
        labels.push(diskscope::tui::widgets::results::setting_label(
            a.rows.last().unwrap(),
        ));
        a.handle_key(key(KeyCode::Char(' ')));
    }
    assert_eq!(
        labels,
        ["pread 1M @2000/s", "pread 1M @200/s", "pread 1M"],
        "closed loop, 2000/s and 200/s rows differ"
    );
    let screen = render(&a, 120, 40);
    for l in &labels[..2] {
        assert!(screen.contains(l.as_str()), "{l}:\n{screen}");
    }
}

#[test]
fn a_rate_typed_as_a_throughput_keeps_its_bytes_per_second_when_the_block_size_changes() {
    let mut a = app();
    a.start();
    match type_rate(&mut a, "50 MiB/s") {
        Action::Start { spec, .. } => assert_eq!(spec.setup.rate(), Some(50.0)),
        other => panic!("{other:?}"),
    }
    assert!(
        a.message.contains("50.0 MiB/s (50/s at 1M)"),
        "{}",
        a.message
    );
    // ← halves the block: the same 50 MiB/s is now 100 ops/s, and the note says both.
    match a.handle_key(key(KeyCode::Left)) {
        Action::Start { spec, .. } => assert_eq!(spec.setup.rate(), Some(100.0)),
        other => panic!("{other:?}"),
    }
    assert!(
        a.message
            .contains("block size 512K; open loop 50.0 MiB/s (100/s at 512K)"),
        "{}",
        a.message
    );
    // Typed at 4K it stays 50 MiB/s: 12800 ops/s.
    a.settings.setup.block_size_bytes = 4096;
    assert_eq!(a.settings.rate_iops(), Some(12_800.0));
    // Ops/s typed stay ops/s: 2000/s at any block size, its bytes shown beside.
    match type_rate(&mut a, "2000/s") {
        Action::Start { spec, .. } => assert_eq!(spec.setup.rate(), Some(2000.0)),
        other => panic!("{other:?}"),
    }
    assert!(a.message.contains("(7.81 MiB/s at 4K)"), "{}", a.message);
    a.handle_key(key(KeyCode::Right));
    assert_eq!(a.settings.rate_iops(), Some(2000.0));
    // The live line shows what was typed and the ops/s it means at the block size.
    a.settings.setup.block_size_bytes = 1 << 20;
    let id = started_id(&type_rate(&mut a, "50M/s"));
    feed_open_loop(&mut a, id, 12, 5, 80, 0);
    let screen = render(&a, 120, 40);
    assert!(
        screen.contains("rate 50.0MiB/s = 50/s asked, 50/s done, on schedule"),
        "{screen}"
    );
    // A throughput whose ops/s would pass the pacer's bound at a tiny block is refused there.
    a.settings.setup.block_size_bytes = 4096;
    type_rate(&mut a, "100G/s");
    a.settings.setup.block_size_bytes = 4096;
    assert!(a.handle_key(key(KeyCode::Char('b'))) == Action::None);
    for c in "1".chars() {
        a.handle_key(key(KeyCode::Char(c)));
    }
    a.handle_key(key(KeyCode::Enter));
    assert!(a.message.contains("over the 1e9"), "{}", a.message);
    assert_eq!(
        a.settings.setup.block_size_bytes, 4096,
        "a refused block changes nothing"
    );
}

#[test]
fn both_histograms_of_an_open_loop_are_readable_at_120x40_and_160x40_and_80x24_draws() {
    let mut a = app();
    a.start();
    let id = started_id(&type_rate(&mut a, "2000"));
    feed_open_loop(&mut a, id, 20, 200, 900, 0);
    for (w, h) in [(120, 40), (160, 40)] {
        let screen = render(&a, w, h);
        let r = diskscope::tui::ui::areas(&a, ratatui::layout::Rect::new(0, 0, w, h)).latency;
        let panel = region(&screen, r).join("\n");
        for name in ["service", "response"] {
            assert!(panel.contains(name), "{w}x{h}: {name}:\n{panel}");
        }
        // Each histogram marks its p50 and p99 and has bars longer than one cell.
        assert!(
            panel.matches("p50").count() >= 4 && panel.matches("p99").count() >= 4,
            "{w}x{h}: marks:\n{panel}"
        );
        assert!(panel.contains("████"), "{w}x{h}: bars:\n{panel}");
        // No count is cut at the panel's edge: each bucket row ends in a count or a mark.
        for l in panel.lines().filter(|l| l.contains('█')) {
            let inner = l.trim_end_matches(['│', '╮', '╯', ' ']);
            assert!(
                inner.ends_with(|c: char| c.is_ascii_digit() || c == 'k' || c == '0')
                    || inner.ends_with("p50")
                    || inner.ends_with("p99"),
                "{w}x{h}: cut: {l:?}\n{panel}"
            );
        }
    }
    // The smallest screen still draws both, without panicking.
    let screen = render(&a, 80, 24);
    assert!(
        screen.contains("service") && screen.contains("response"),
        "{screen}"
    );
}
