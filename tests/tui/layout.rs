//! The screen laid out by content (issue 37): no hole at any size, the device panel under the
//! settings down to the band's end, the histogram at one bucket per octave at least across the
//! range that holds 99.9% of the operations, the "why" and "where" rows together and whole.

use super::{app, app_with_rows, end_run, feed_run, key, region, render, started_id, MIB};
use crossterm::event::KeyCode;
use diskscope::measure::device::{DiskStat, Sample};
use diskscope::measure::{new_latency_histogram, Snapshot, SnapshotKind};
use diskscope::tui::app::App;
use diskscope::tui::session::Update;
use ratatui::layout::Rect;

const SIZES: [(u16, u16); 4] = [(80, 24), (120, 40), (200, 60), (300, 90)];

/// Device samples for a second of a busy device.
fn feed_device(a: &mut App, from: u64, to: u64) {
    for i in from..=to {
        a.apply(Update::Device {
            device: Some("vda".into()),
            sample: Sample {
                at_ns: i * 100_000_000,
                disk: Some(DiskStat {
                    read_ios: i * 300,
                    read_sectors: i * 300 * 1024,
                    read_ticks_ms: i * 150,
                    io_ticks_ms: i * 60 + (i % 7) * 5,
                    time_in_queue_ms: i * 180,
                    ..Default::default()
                }),
                cpu: None,
            },
        });
    }
}

/// A session as one keeps it open: a few settings tried, the device sampled.
fn busy() -> App {
    let mut a = app();
    let first = started_id(&a.start());
    feed_run(&mut a, first, 100, 300, 200);
    let second = started_id(&a.handle_key(key(KeyCode::Right)));
    end_run(&mut a, first, 0, 10);
    feed_run(&mut a, second, 100, 600, 900);
    feed_device(&mut a, 0, 100);
    a
}

/// The widest run of cells in one row that no panel covers.
fn widest_hole(a: &App, w: u16, h: u16) -> (usize, String) {
    let r = diskscope::tui::ui::areas(a, Rect::new(0, 0, w, h));
    let all = [
        r.status,
        r.settings,
        r.device,
        r.throughput,
        r.why,
        r.latency,
        r.results,
        r.log,
        r.info,
        r.footer,
    ];
    let mut widest = (0, String::new());
    for y in 0..h {
        let mut run = 0usize;
        for x in 0..w {
            let covered = all.iter().any(|a| {
                a.width > 0
                    && a.height > 0
                    && x >= a.x
                    && x < a.right()
                    && y >= a.y
                    && y < a.bottom()
            });
            run = if covered { 0 } else { run + 1 };
            if run > widest.0 {
                widest = (run, format!("row {y} up to column {x}"));
            }
        }
    }
    widest
}

#[test]
fn no_size_leaves_a_hole_wider_than_10_cells_and_the_left_column_reaches_the_band_end() {
    for a in [app(), busy(), app_with_rows(30)] {
        for (w, h) in SIZES {
            let (hole, at) = widest_hole(&a, w, h);
            assert!(hole <= 10, "{w}x{h}: a hole of {hole} cells at {at}");
            let r = diskscope::tui::ui::areas(&a, Rect::new(0, 0, w, h));
            if r.device.height > 0 {
                assert_eq!(
                    r.device.bottom(),
                    r.throughput.bottom(),
                    "{w}x{h}: the device panel ends with the chart's band"
                );
            }
            // The draw itself never panics and fills the screen.
            let screen = render(&a, w, h);
            assert_eq!(screen.lines().count(), h as usize);
        }
    }
}

#[test]
fn the_device_panel_keeps_its_four_lines_at_120x40_when_the_message_wraps() {
    let mut a = busy();
    a.message = "a message long enough to wrap over the three rows the message line may take, \
                 as a verdict's sentences do when a row is suspect for more than one reason, \
                 which pushes every band up by two rows and used to take the device panel away"
        .repeat(2);
    let r = diskscope::tui::ui::areas(&a, Rect::new(0, 0, 120, 40));
    assert_eq!(r.info.height, 3);
    let panel = region(&render(&a, 120, 40), r.device).join("\n");
    for want in ["read ", "write ", "util ", "file/dev "] {
        assert!(panel.contains(want), "missing {want:?}:\n{panel}");
    }
}

/// Operations spread evenly over ten octaves (0.5 µs to 256 µs) and one at 134 ms.
fn wide_histogram(a: &mut App, id: u64) {
    let mut latency = new_latency_histogram();
    for k in 0..10u64 {
        latency.record_n(700 << k, 500).unwrap();
    }
    latency.record(134_000_000).unwrap();
    a.apply(Update::Snapshot {
        id,
        snapshot: Box::new(Snapshot {
            worker: 0,
            at_ns: 11_000_000_000,
            interval_ns: 1_000_000_000,
            bytes: 5001 * MIB,
            ops: 5001,
            latency,
            ops_log: Vec::new(),
            paced: None,
            mixed: None,
            kind: SnapshotKind::Interval,
        }),
    });
}

#[test]
fn the_histogram_has_a_bucket_per_octave_of_its_99_9_percent_range_at_every_size() {
    // Thirty rows in the table: the histogram's room is least.
    let mut a = app_with_rows(30);
    let id = a.live.as_ref().unwrap().id;
    wide_histogram(&mut a, id);
    for (w, h) in SIZES {
        let screen = render(&a, w, h);
        let r = diskscope::tui::ui::areas(&a, Rect::new(0, 0, w, h));
        let lat = region(&screen, r.latency);
        let rows = lat.iter().filter(|l| l.contains("s-")).count();
        let buckets = if rows > 0 {
            rows
        } else {
            // Columns: the bars' bottom row (the row above the bounds) has one run of blocks
            // per bucket (every bucket here holds operations).
            let bottom = &lat[lat.len() - 3];
            let mut runs = 0;
            let mut inside = false;
            for c in bottom.chars() {
                let block = ('▁'..='█').contains(&c);
                if block && !inside {
                    runs += 1;
                }
                inside = block;
            }
            runs
        };
        assert!(
            buckets >= 10,
            "{w}x{h}: {buckets} buckets for ten octaves:\n{}",
            lat.join("\n")
        );
        assert!(
            lat.iter().any(|l| l.contains("p50")) && lat.iter().any(|l| l.contains("p99")),
            "{w}x{h}: marks:\n{}",
            lat.join("\n")
        );
    }
}

#[test]
fn the_where_row_follows_the_why_row_and_the_fix_of_a_doubtful_profile_is_whole_at_120() {
    use diskscope::explain::profile::Profile;
    let mut a = busy();
    let doubt = "the profile was measured 41 days ago under load (load average 5.2 on 2 CPUs), \
                 so its ceilings may be low; run `diskscope limits --refresh`";
    a.explored.profile = Some((Profile::synthetic_example(), Some(doubt.into())));
    a.explored.context = Some(diskscope::explain::context::Context::default());
    for (w, h) in [(120u16, 40u16), (200, 60)] {
        let screen = render(&a, w, h);
        let r = diskscope::tui::ui::areas(&a, Rect::new(0, 0, w, h));
        let rows = region(&screen, r.why);
        let why = rows
            .iter()
            .position(|l| l.starts_with("why "))
            .expect("a why row");
        let at = rows
            .iter()
            .position(|l| l.starts_with("where "))
            .expect("a where row");
        assert!(
            rows[why + 1..at].iter().all(|l| !l.trim().is_empty()),
            "{w}x{h}: a blank row between why and where:\n{}",
            rows.join("\n")
        );
        let text = rows.join(" ");
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("run `diskscope limits --refresh`"),
            "{w}x{h}: the fix is cut:\n{}",
            rows.join("\n")
        );
        assert!(
            rows.iter().all(|l| !l.trim().is_empty()),
            "{w}x{h}: no blank row in the detail:\n{}",
            rows.join("\n")
        );
    }
}
