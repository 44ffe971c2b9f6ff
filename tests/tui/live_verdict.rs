//! Issue 37: the explorer judges its rows with the judge and the facts `run` uses (the run's own
//! I/O, the page cache, pressure, the extents), the live row once a second as its facts come
//! and the row again on the whole segment's when it ends.

use super::{app, end_run, feed_run, key, render, started_id, MIB};
use crossterm::event::KeyCode;
use diskscope::facts::chain::{Chain, Kind, Level};
use diskscope::facts::pagecache::{PageCache, Source};
use diskscope::facts::taskio::TaskIo;
use diskscope::facts::Facts;
use diskscope::measure::device::DiskStat;
use diskscope::tui::session::Update;
use diskscope::tui::settings::WriteSync;
use std::sync::Arc;

/// The facts of a buffered write of `written` bytes over `secs` seconds on `vda`: the process
/// dirtied `dirtied` bytes, the device wrote `device_wrote`, the file holds `dirty` dirty.
fn write_facts(secs: f64, dirtied: u64, device_wrote: u64, dirty: u64) -> Arc<Facts> {
    let mut f = Facts::default();
    f.before.at_ns = 1_000;
    f.after.at_ns = 1_000 + (secs * 1e9) as u64;
    f.before.io = Some(TaskIo::default());
    f.after.io = Some(TaskIo {
        wchar: dirtied * 10,
        write_bytes: dirtied,
        ..Default::default()
    });
    let cache = |dirty: u64| PageCache {
        source: Source::Cachestat,
        file_pages: (1 << 30) / 4096,
        cached_pages: (1 << 30) / 4096,
        dirty_pages: dirty / 4096,
        writeback_pages: 0,
        evicted_pages: 0,
        recently_evicted_pages: 0,
        page_bytes: 4096,
    };
    f.before.cache = Some(cache(0));
    f.after.cache = Some(cache(dirty));
    f.chain = Some(Chain {
        levels: vec![Level {
            name: "vda".into(),
            kind: Kind::Disk,
            backing_file: None,
            direct_io: None,
            queue: Default::default(),
            stat_path: Default::default(),
        }],
    });
    f.before.devices = vec![Some(DiskStat::default())];
    f.after.devices = vec![Some(DiskStat {
        write_sectors: device_wrote / 512,
        ..Default::default()
    })];
    Arc::new(f)
}

#[test]
fn a_buffered_write_without_fsync_is_flagged_live_and_on_its_row_and_in_the_saved_csv() {
    let mut a = app();
    a.explored.context = Some(diskscope::explain::context::Context::default());
    a.start();
    let id = started_id(&a.handle_key(key(KeyCode::Char('w'))));
    assert_eq!(
        a.settings.setup.write_sync,
        WriteSync::None,
        "buffered, no fsync"
    );
    // 2 s of 1 MiB writes at 3000 MiB/s looping over the 1 GiB scratch file.
    feed_run(&mut a, id, 20, 300, 200);
    let live = &diskscope::tui::widgets::results::body(&a)[0].0;
    assert!(
        !live[2].ends_with('!'),
        "no facts yet, nothing to say: {live:?}"
    );
    // The session's look after a second: 6000 MiB written, the file held 900 MiB dirty (it
    // loops: never more than the file), the device wrote 40 MiB.
    a.apply(Update::Facts {
        id,
        facts: write_facts(2.0, 1 << 30, 40 * MIB, 900 * MIB),
    });
    let live = &diskscope::tui::widgets::results::body(&a)[0].0;
    assert!(live[2].ends_with('!'), "the live row's badge: {live:?}");
    assert!(
        a.message
            .contains("(live) is suspect (writes_in_page_cache"),
        "{}",
        a.message
    );
    let screen = render(&a, 120, 40);
    let why = screen
        .lines()
        .skip_while(|l| !l.starts_with("why "))
        .take_while(|l| !l.starts_with("where "))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        why.contains("pwrite 1M (live) suspect: buffered writes without --fsync"),
        "the why row, the cursor on the live row:
{screen}"
    );
    // `s` saves the live row with the reason `run` gives and the facts it was judged by.
    let saved = a.rows_to_save();
    assert_eq!(saved[0].judgement.verdict, "suspect", "{:?}", saved[0]);
    assert!(
        saved[0].judgement.reasons.contains("writes_in_page_cache"),
        "{}",
        saved[0].judgement.reasons
    );
    let facts = saved[0].facts.as_ref().expect("the facts columns");
    assert_eq!(facts.dirty_after_bytes, Some(900 * MIB));
    assert_eq!(facts.run_write_bytes, Some(1 << 30));
    // The end: the session's last look comes before `Stopped`; the row keeps the verdict.
    a.apply(Update::Facts {
        id,
        facts: write_facts(2.1, 1 << 30, 60 * MIB, 880 * MIB),
    });
    a.handle_key(key(KeyCode::Char('w')));
    end_run(&mut a, id, 0, 2);
    let row = &a.rows[0];
    assert_eq!(row.judgement.verdict, "suspect", "{row:?}");
    assert!(
        row.judgement.reasons.contains("writes_in_page_cache"),
        "{row:?}"
    );
    assert!(
        row.judgement.why.contains("add --fsync"),
        "{}",
        row.judgement.why
    );
    assert_eq!(
        row.facts.as_ref().and_then(|f| f.dirty_after_bytes),
        Some(880 * MIB)
    );
    let saved = a.rows_to_save();
    assert!(saved[0].judgement.reasons.contains("writes_in_page_cache"));
    let dir = crate::util::tmp();
    let csv = crate::util::p(&dir, "rows.csv");
    diskscope::tui::save::append_rows(&csv, &saved[..1]).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.contains("writes_in_page_cache"), "{text}");
}

#[test]
fn a_write_the_device_kept_up_with_stays_ok_live_and_on_its_row() {
    let mut a = app();
    a.explored.context = Some(diskscope::explain::context::Context::default());
    a.start();
    let id = started_id(&a.handle_key(key(KeyCode::Char('w'))));
    feed_run(&mut a, id, 20, 30, 200);
    // 600 MiB written, the device wrote 590 MiB of them, 10 MiB dirty at the look.
    a.apply(Update::Facts {
        id,
        facts: write_facts(2.0, 600 * MIB, 590 * MIB, 10 * MIB),
    });
    let live = &diskscope::tui::widgets::results::body(&a)[0].0;
    assert!(!live[2].ends_with('!'), "{live:?}");
    assert_eq!(a.rows_to_save()[0].judgement.verdict, "ok");
    a.handle_key(key(KeyCode::Char('w')));
    end_run(&mut a, id, 0, 2);
    assert_eq!(a.rows[0].judgement.verdict, "ok", "{:?}", a.rows[0]);
}
