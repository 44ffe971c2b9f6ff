//! Every figure diskscope draws, built from made-up but typical results: the six front ends'
//! figures (a sweep's bars with the model line, many series, many categories, a timeline, the
//! explorer's session page, the knee, compare's OLD vs NEW, the fleet's clients) rendered by the
//! one renderer and checked as a reader would: the SVG is well-formed XML, and every legend,
//! label and note lies inside the image. `DISKSCOPE_GALLERY=DIR cargo test --lib gallery` also
//! writes them into DIR, to look at (`rsvg-convert -o x.png x.svg`). It lives in `report`, the
//! layer that may use every front end's builder.

use crate::export::chart::{Category, Chart, Series, YScale};
use crate::measure::stats::Stats;
use crate::measure::RunResult;

/// (file name, SVG) of every figure of the gallery.
pub fn all() -> Vec<(String, String)> {
    vec![
        ("bars-model.svg".into(), bars_with_model()),
        ("bars-many-series.svg".into(), bars_many_series()),
        ("bars-many-categories.svg".into(), bars_many_categories()),
        ("bars-suspect.svg".into(), bars_suspect()),
        ("syscalls.svg".into(), syscalls()),
        ("timeline.svg".into(), timeline(3)),
        ("timeline-many.svg".into(), timeline(12)),
        ("session.svg".into(), session()),
        ("knee.svg".into(), knee()),
        ("compare.svg".into(), compare(false)),
        ("compare-log.svg".into(), compare(true)),
        ("clients.svg".into(), clients()),
    ]
}

fn bars_with_model() -> String {
    let p = crate::explain::profile::Profile::synthetic_example();
    let mut rows = Vec::new();
    for cache in [
        crate::config::CacheMode::Warm,
        crate::config::CacheMode::Cold,
    ] {
        for k in (0..=26).step_by(2) {
            for rep in 1..=3u32 {
                let mut r = RunResult {
                    identity: crate::measure::result::Identity {
                        experiment: "block-size".into(),
                        file: "/nonexistent/diskscope-test.bin".into(),
                        host: "lab-host".into(),
                        file_size_bytes: 1 << 30,
                        rep,
                    },
                    setup: crate::config::RecordedSetup {
                        op: crate::config::Op::Read.into(),
                        method: crate::config::Method::Read.into(),
                        pattern: crate::config::Pattern::Sequential.into(),
                        cache: cache.into(),
                        block_size_bytes: 1 << k,
                        threads: 1,
                        queue_depth: 1,
                        ..Default::default()
                    },
                    figures: crate::measure::result::Figures {
                        seconds: 1.0,
                        ..Default::default()
                    },
                    ..Default::default()
                };
                let pt = crate::explain::model::Point::of_result(&r).unwrap();
                let bound = crate::explain::model::predict(&p, &pt).unwrap().bound_mib_s;
                let share = if cache == crate::config::CacheMode::Warm {
                    0.6
                } else {
                    0.25
                };
                r.figures.mib_s = bound * share * (0.95 + 0.05 * rep as f64);
                rows.push(r);
            }
        }
    }
    let known = crate::explain::provenance::Provenance::everywhere(
        Some("ext4 on vda".into()),
        Some(crate::explain::profile::Profile::synthetic_example()),
    );
    let chart = crate::export::chart::throughput_chart(
        "block-size: throughput",
        &rows,
        &[crate::export::chart::Dim::BlockSize],
        &known,
    )
    .unwrap();
    crate::export::svg::render(&chart).unwrap()
}

fn stats(v: f64) -> Option<Stats> {
    Some(Stats::of(&[v * 0.9, v, v * 1.15]))
}

fn bars_many_series() -> String {
    let cats = ["4K", "16K", "64K", "256K", "1M"];
    let methods = ["read", "pread", "mmap", "io_uring", "buffered"];
    let mut series = Vec::new();
    for (i, m) in methods.iter().enumerate() {
        for t in [1, 4, 16] {
            series.push(Series {
                name: format!("{m} · {t} threads · random · O_DIRECT"),
                cells: (0..cats.len())
                    .map(|c| stats(100.0 * (c as f64 + 1.0) * (i as f64 + 1.0) * t as f64))
                    .collect(),
            });
        }
    }
    let chart = Chart {
        title: "methods: throughput".into(),
        subtitle: "lab-host · /data/test.bin (8.00 GiB) · 3 repetitions per point · 2026-11-22"
            .into(),
        y_scale: YScale::Auto,
        x_label: "block size (log2 scale)".into(),
        y_label: "MiB/s (bar: mean, dot: median, whisker: min–max)".into(),
        categories: cats
            .iter()
            .enumerate()
            .map(|(i, l)| Category {
                label: l.to_string(),
                pos: 12.0 + 2.0 * i as f64,
            })
            .collect(),
        series,
        model: Vec::new(),
        suspect: Vec::new(),
    };
    crate::export::svg::render(&chart).unwrap()
}

fn bars_many_categories() -> String {
    let labels: Vec<String> = (0..40)
        .map(|i| format!("exp-{i}-sequential-read"))
        .collect();
    let chart = Chart {
        title: "kdiskmark: throughput".into(),
        subtitle: String::new(),
        y_scale: YScale::Linear,
        x_label: "experiment".into(),
        y_label: "MiB/s".into(),
        categories: labels
            .iter()
            .enumerate()
            .map(|(i, l)| Category {
                label: l.clone(),
                pos: i as f64,
            })
            .collect(),
        series: vec![Series {
            name: "all".into(),
            cells: (0..labels.len())
                .map(|i| stats(500.0 + 37.0 * i as f64))
                .collect(),
        }],
        model: Vec::new(),
        suspect: Vec::new(),
    };
    crate::export::svg::render(&chart).unwrap()
}

fn bars_suspect() -> String {
    let mut chart = Chart {
        title: "cache: throughput".into(),
        subtitle: "ext4 on vda · lab-host · /data/t.bin (1.00 GiB) · 5 repetitions per point"
            .into(),
        y_scale: YScale::Auto,
        x_label: "cache".into(),
        y_label: "MiB/s (bar: mean, dot: median, whisker: min–max)".into(),
        categories: ["warm", "cold"]
            .iter()
            .enumerate()
            .map(|(i, l)| Category {
                label: l.to_string(),
                pos: i as f64,
            })
            .collect(),
        series: vec![Series {
            name: "all".into(),
            cells: vec![stats(9000.0), stats(120.0)],
        }],
        model: Vec::new(),
        suspect: Vec::new(),
    };
    chart.suspect.push(crate::export::chart::SuspectMark {
        series: 0,
        category: 0,
        suspect: 2,
        reps: 5,
        codes: vec!["cache_not_disk".into(), "too_short".into()],
    });
    crate::export::svg::render(&chart).unwrap()
}

fn syscalls() -> String {
    let rows: Vec<crate::export::SyscallRow> = ["getpid", "read", "pread", "lseek", "fstat"]
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            (1..=3).map(move |rep| crate::export::SyscallRow {
                syscall: s.to_string(),
                rep,
                ns_per_call: 50.0 * (i as f64 + 1.0) + rep as f64,
                ..Default::default()
            })
        })
        .collect();
    let chart = crate::export::chart::syscalls_chart("syscalls: cost", &rows).unwrap();
    crate::export::svg::render(&chart).unwrap()
}

fn timeline(runs: usize) -> String {
    use crate::measure::device::Sampler;
    use crate::measure::{new_latency_histogram, Snapshot, SnapshotKind, TimelineBuilder};
    use std::time::Duration;
    let rows: Vec<RunResult> = (0..runs)
        .map(|k| {
            let mut b = TimelineBuilder::new(Duration::from_millis(100), Sampler { device: None });
            for i in 1..=30u64 {
                let mut latency = new_latency_histogram();
                let slow = i >= 15 + k as u64;
                latency
                    .record_n(if slow { 90_000 } else { 20_000 } + 1000 * k as u64, 10)
                    .unwrap();
                latency.record_n(400_000 + 5000 * i, 1).unwrap();
                b.add(&Snapshot {
                    worker: 0,
                    at_ns: i * 100_000_000,
                    interval_ns: 100_000_000,
                    bytes: if slow { 10 << 20 } else { 40 << 20 } + ((k as u64) << 20),
                    ops: 11,
                    latency,
                    ops_log: Vec::new(),
                    paced: None,
                    mixed: None,
                    kind: SnapshotKind::Interval,
                });
            }
            let mut r = RunResult {
                identity: crate::measure::result::Identity {
                    rep: 1 + k as u32 / 4,
                    ..Default::default()
                },
                setup: crate::config::RecordedSetup {
                    method: crate::config::Method::Pread.into(),
                    block_size_bytes: 4096 << (k % 4),
                    threads: 1 + k % 3,
                    ..Default::default()
                },
                ..Default::default()
            };
            r.timeline = Some(std::sync::Arc::new(b.finish(
                3_000_000_000,
                crate::config::Op::Read,
                false,
                1 << 30,
            )));
            r
        })
        .collect();
    let refs: Vec<&RunResult> = rows.iter().collect();
    crate::export::timeline_svg::render("threads: timeline", &refs)
        .unwrap()
        .unwrap()
}

fn session() -> String {
    let f = crate::export::session_svg::SessionFigure {
        title: "diskscope session".into(),
        subtitle: "lab-host · /data/test.bin (1.00 GiB) · ext4 on vda · 2026-11-22 06:50 UTC"
            .into(),
        series: (0..120)
            .map(|i| 800.0 + 300.0 * ((i as f64) / 9.0).sin() + if i > 60 { 900.0 } else { 0.0 })
            .collect(),
        bin_s: 0.25,
        unit: "MiB/s".into(),
        marks: vec![
            (0, "read pread 4K t1".into()),
            (61, "read pread 1M t1".into()),
        ],
        histogram: [
            "1µs", "2µs", "4µs", "8µs", "16µs", "32µs", "64µs", "128µs", "256µs", "512µs", "1ms",
        ]
        .iter()
        .enumerate()
        .map(|(i, l)| {
            (
                l.to_string(),
                [3, 40, 900, 5000, 12000, 3000, 400, 50, 9, 2, 1][i],
            )
        })
        .collect(),
        table: vec![
            vec![
                "setting".into(),
                "method".into(),
                "cache".into(),
                "MiB/s".into(),
                "IOPS".into(),
                "p99".into(),
            ],
            vec![
                "read 4K t1".into(),
                "pread".into(),
                "warm".into(),
                "812".into(),
                "207872".into(),
                "9.88µs".into(),
            ],
            vec![
                "read 1M t1".into(),
                "pread".into(),
                "warm".into(),
                "1712".into(),
                "1712".into(),
                "1.02ms".into(),
            ],
        ],
        context: "ext4 on vda (an example: no machine was read)".into(),
        row: None,
    };
    crate::export::session_svg::render(&f)
}

fn knee() -> String {
    use crate::lab::knee::search::{Ceiling, Knee, Point, Stop};
    let p = |r: f64, p99: f64, passed: bool, fell_behind: bool| Point {
        offered_iops: r,
        achieved_iops: r,
        resp_p50_us: p99 / 4.0,
        resp_p99_us: p99,
        resp_p999_us: p99 * 2.0,
        resp_p99_low_us: p99 * 0.9,
        resp_p99_high_us: p99 * 1.1,
        ops: 2000,
        passed,
        fell_behind,
        ..Point::default()
    };
    let k = Knee {
        settings_target_p99_us: 2000.0,
        tolerance: 0.05,
        ceiling: Ceiling {
            iops: 10_000.0,
            lat_p99_us: 400.0,
        },
        points: vec![
            p(2500.0, 300.0, true, false),
            p(5000.0, 900.0, true, false),
            p(7500.0, 1800.0, true, false),
            p(8750.0, 4000.0, false, false),
            p(10000.0, 40000.0, false, true),
        ],
        knee_iops: Some(7500.0),
        fail_iops: Some(8750.0),
        stop: Stop::PointLimit,
        measured: 5,
        reused: 0,
        remeasured: 0,
        not_monotone: false,
        marginal: false,
    };
    crate::lab::knee::svg::render("knee: read pread 4K random t1 qd1", &k).unwrap()
}

fn compare(wide: bool) -> String {
    use crate::compare::diff::{compare, Metric};
    use crate::compare::load::Record;
    let sizes: Vec<u64> = if wide {
        vec![4096, 65536, 1 << 20, 16 << 20]
    } else {
        vec![4096, 8192, 16384, 32768, 65536, 131072]
    };
    let scale = |bs: u64| if wide { bs as f64 / 4096.0 } else { 1.0 };
    let old: Vec<Record> = sizes
        .iter()
        .map(|&bs| {
            let v = 100.0 * scale(bs);
            Record::sample(bs, vec![v, v * 1.02, v * 0.98, v * 1.01, v], 0.0)
        })
        .collect();
    let new: Vec<Record> = sizes
        .iter()
        .enumerate()
        .map(|(i, &bs)| {
            let f = [1.3, 0.7, 1.0, 1.01, 1.2, 0.95][i];
            let v = 100.0 * scale(bs) * f;
            Record::sample(bs, vec![v, v * 1.02, v * 0.98, v * 1.01, v], 0.0)
        })
        .collect();
    let c = compare(&old, &new);
    crate::compare::plot::render(&c, Metric::MibS, "OLD vs NEW: throughput")
        .unwrap()
        .unwrap()
}

fn clients() -> String {
    let mut rows = Vec::new();
    for clients in [1u32, 2, 4, 8] {
        for bs in [4096u64, 1 << 20] {
            for rep in 0..3 {
                let mut r = RunResult {
                    setup: crate::config::RecordedSetup {
                        op: crate::config::Op::Read.into(),
                        method: crate::config::Method::Pread.into(),
                        block_size_bytes: bs,
                        ..Default::default()
                    },
                    figures: crate::measure::result::Figures {
                        mib_s: clients as f64 * if bs == 4096 { 90.0 } else { 700.0 }
                            + rep as f64 * 5.0,
                        ..Default::default()
                    },
                    ..Default::default()
                };
                crate::fleet::aggregate::mark_all(
                    &mut r,
                    clients as usize,
                    crate::fleet::Layout::SharedFile,
                );
                rows.push(r);
            }
        }
    }
    let chart = crate::fleet::clients::clients_chart(&rows).unwrap();
    crate::export::svg::render(&chart).unwrap()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_figure_of_the_gallery_renders() {
        let all = super::all();
        if let Some(dir) = std::env::var_os("DISKSCOPE_GALLERY") {
            for (name, svg) in &all {
                std::fs::write(std::path::Path::new(&dir).join(name), svg).unwrap();
            }
        }
        for (name, svg) in &all {
            if let Err(e) = crate::export::figure::svg::check(svg) {
                panic!("{name}: {e}");
            }
        }
    }
}
