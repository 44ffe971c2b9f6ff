//! The explorer's state holds the same bytes however long one setting runs (issue 37: RSS grew
//! by 950 KB every 30 s). The real process's RSS over three minutes is measured in
//! `e2e::the_explorers_memory_stays_flat_while_one_setting_runs_for_three_minutes`.

use super::{app, started_id};
use diskscope::measure::device::{DiskStat, Sample};
use diskscope::measure::{new_latency_histogram, Snapshot, SnapshotKind};
use diskscope::runner::PreparedMeta;
use diskscope::tui::app::App;
use diskscope::tui::session::Update;

/// Feeds `app` run `id` from `from_s` to `to_s` seconds: one worker's 100 ms snapshots of
/// varied latency, and the device's samples, as the session sends them.
fn feed(app: &mut App, id: u64, from_s: u64, to_s: u64) {
    for i in from_s * 10 + 1..=to_s * 10 {
        for worker in 0..1 {
            let mut latency = new_latency_histogram();
            latency.record_n(100_000 + (i % 97) * 1_000, 40).unwrap();
            latency.record(5_000_000 + (i % 13) * 100_000).unwrap();
            app.apply(Update::Snapshot {
                id,
                snapshot: Box::new(Snapshot {
                    worker,
                    at_ns: i * 100_000_000 + worker as u64 * 1_000_000,
                    interval_ns: 100_000_000,
                    bytes: 41 << 20,
                    ops: 41,
                    latency,
                    ops_log: Vec::new(),
                    paced: None,
                    mixed: None,
                    kind: SnapshotKind::Interval,
                }),
            });
        }
        app.apply(Update::Device {
            device: Some("vda".into()),
            sample: Sample {
                at_ns: i * 100_000_000,
                disk: Some(DiskStat {
                    read_ios: i * 40,
                    read_sectors: i * 80_000,
                    read_ticks_ms: i * 60,
                    io_ticks_ms: i * 70,
                    time_in_queue_ms: i * 120,
                    ..Default::default()
                }),
                cpu: None,
            },
        });
    }
}

#[test]
fn thirty_minutes_of_one_setting_hold_the_bytes_three_minutes_do() {
    let mut a = app();
    let id = started_id(&a.start());
    let spec = a
        .settings
        .spec(&a.file, &a.explored.scratch, a.explored.size_bytes);
    a.apply(Update::Started {
        id,
        meta: Box::new(PreparedMeta {
            spec,
            file_size: a.explored.size_bytes,
            total: a.explored.size_bytes,
            residency_before: None,
        }),
        workers: 1,
        notes: vec![],
    });
    feed(&mut a, id, 0, 180);
    let after_3_min = a.heap_bytes();
    let mut at = Vec::new();
    for m in (4..=30).step_by(2) {
        feed(&mut a, id, (m - 2) * 60, m * 60);
        at.push((m, a.heap_bytes()));
        // Every view draws from what is kept.
        super::render(&a, 120, 40);
    }
    for (m, bytes) in &at {
        assert!(
            bytes.abs_diff(after_3_min) <= 2 << 20,
            "{m} min: {bytes} bytes against {after_3_min} after 3 min: {at:?}"
        );
    }
    assert_eq!(
        at.last().map(|(_, b)| *b),
        at.get(at.len() - 2).map(|(_, b)| *b),
        "flat at the end: {at:?}"
    );
    assert!(after_3_min < 4 << 20, "{after_3_min} bytes");
    // The row still has its whole time: 30 minutes at a resolution that halved as it grew.
    let live = a.live.as_ref().unwrap();
    let covered = live.series.points.len() as f64 * live.series.point_s();
    assert!(
        (1700.0..=1800.0).contains(&covered),
        "the row series covers {covered} s"
    );
    assert!((live.seconds() - 1800.0).abs() < 0.1);
}
