//! The smaller defects of issue 37, each as the user met it.

use super::{app, end_run, feed_run, key, render, started_id};
use crossterm::event::KeyCode;
use diskscope::tui::app::Action;
use std::path::PathBuf;

#[test]
fn h_on_the_pinned_baseline_says_why_it_stays_instead_of_hiding_nothing() {
    let mut a = app();
    let first = started_id(&a.start());
    feed_run(&mut a, first, 20, 100, 200);
    let second = started_id(&a.handle_key(key(KeyCode::Right)));
    end_run(&mut a, first, 0, 2);
    feed_run(&mut a, second, 20, 100, 200);
    a.handle_key(key(KeyCode::Char('J')));
    a.handle_key(key(KeyCode::Char('B')));
    assert!(a.baseline.is_some());
    assert_eq!(
        a.row_under_cursor(),
        Some(0),
        "the cursor is on the pinned row"
    );
    a.handle_key(key(KeyCode::Char('h')));
    assert!(a.view.hidden_rows.is_empty(), "{:?}", a.view.hidden_rows);
    assert!(a.message.contains("baseline row stays"), "{}", a.message);
}

#[test]
fn f_while_reading_shows_the_next_writes_sync_on_the_panel() {
    let mut a = app();
    a.start();
    assert!(render(&a, 80, 24).contains("sync -"));
    a.handle_key(key(KeyCode::Char('f')));
    let screen = render(&a, 80, 24);
    assert!(screen.contains("sync fsync for w"), "{screen}");
    a.handle_key(key(KeyCode::Char('w')));
    assert!(render(&a, 80, 24).contains("sync fsync "));
}

#[test]
fn keys_do_nothing_while_the_screen_says_it_is_too_small_but_q() {
    let mut a = app();
    a.start();
    a.view.screen_size = Some((70, 20));
    assert!(render(&a, 70, 20).contains("terminal too small"));
    for k in ['c', 'w', 'd', 'p', 'B', 'x', 'r'] {
        assert_eq!(a.handle_key(key(KeyCode::Char(k))), Action::None, "{k}");
    }
    assert!(!a.settings.cold() && !a.settings.setup.direct);
    assert_eq!(a.settings.setup.op, diskscope::config::Op::Read);
    assert!(a.message.contains("too small"), "{}", a.message);
    assert_eq!(a.handle_key(key(KeyCode::Char('q'))), Action::Quit);
    // Large enough again: keys act.
    let mut b = app();
    b.start();
    b.view.screen_size = Some((80, 24));
    assert!(matches!(
        b.handle_key(key(KeyCode::Char('c'))),
        Action::Start { .. }
    ));
}

#[test]
fn the_write_message_names_the_scratch_file_the_run_was_given() {
    let mut a = app();
    a.start();
    a.handle_key(key(KeyCode::Char('w')));
    assert!(a.message.starts_with("writing to "), "{}", a.message);
    // The event loop claims a fresh file for the run (`.<name>.diskscope-scratch.<pid>.<n>`).
    let claimed = PathBuf::from("/data/.big.bin.diskscope-scratch.4242.3");
    a.scratch_claimed(claimed.clone());
    assert_eq!(a.message, format!("writing to {}", claimed.display()));
    assert_eq!(a.explored.scratch, claimed);
}

#[test]
fn saved_rows_keep_the_bound_the_screen_showed() {
    use diskscope::explain::profile::Profile;
    let mut a = app();
    a.explored.profile = Some((Profile::synthetic_example(), None));
    a.explored.context = Some(diskscope::explain::context::Context::default());
    let first = started_id(&a.start());
    feed_run(&mut a, first, 20, 100, 200);
    // The live row as `s` saves it, then the finished one.
    let live = a.rows_to_save();
    assert_eq!(live.len(), 1);
    assert!(
        live[0].judgement.bound.is_some()
            && live[0].judgement.bound_mib_s.is_some()
            && live[0].judgement.pct_of_bound.is_some(),
        "{:?}",
        live[0]
    );
    assert!(!live[0].judgement.verdict.is_empty(), "judged as it stands");
    let second = started_id(&a.handle_key(key(KeyCode::Right)));
    end_run(&mut a, first, 0, 2);
    feed_run(&mut a, second, 5, 100, 200);
    let row = &a.rows[0];
    assert!(
        row.judgement.bound.is_some() && row.judgement.bound_mib_s.is_some(),
        "{row:?}"
    );
    let screen = render(&a, 200, 60);
    assert!(
        screen.contains("%bound"),
        "the table shows it too:\n{screen}"
    );
}
