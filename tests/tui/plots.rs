//! Batch mode's figures from the outside: the sweep file's `y_scale` key, the subtitle and the
//! CSV that carries the figures' numbers (the plot renderer itself is unit-tested in
//! `export::svg`).

use crate::util::{bin, p, tmp};
use std::time::{Duration, Instant};

fn sweep(dir: &tempfile::TempDir, y_scale: &str) -> std::path::PathBuf {
    let path = p(dir, "plots.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"plots\"\n{y_scale}\n[file]\ncreate = \"1M\"\n\n[[experiment]]\n\
             name = \"bs\"\nkind = \"throughput\"\nblock_size = [\"16\", \"64K\"]\nreps = 2\n\
             seconds = 0.1\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_bad_y_scale_names_the_line_and_the_values() {
    let dir = tmp();
    let path = sweep(&dir, "y_scale = \"logarithmic\"");
    let out = bin("diskscope")
        .arg("--batch")
        .arg(&path)
        .arg("--dry-run")
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("plots.toml:2: key `y_scale`") && err.contains("\"log\""),
        "{err}"
    );
}

#[test]
fn figures_have_a_subtitle_and_the_axis_the_sweep_asks_for() {
    let dir = tmp();
    for (key, log) in [("y_scale = \"log\"", true), ("y_scale = \"linear\"", false)] {
        let path = sweep(&dir, key);
        let out_dir = p(&dir, if log { "log" } else { "linear" });
        let started = Instant::now();
        let out = bin("diskscope")
            .arg("--batch")
            .arg(&path)
            .arg("--out")
            .arg(&out_dir)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(60));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let svg = std::fs::read_to_string(out_dir.join("bs.svg")).unwrap();
        assert_eq!(svg.contains("log scale"), log, "{key}");
        assert!(svg.contains("2 repetitions per point"), "no subtitle");
        let csv = std::fs::read_to_string(out_dir.join("bs.csv")).unwrap();
        let rows = crate::util::csv_maps(&csv);
        let mib_s = &rows[0]["mib_s"];
        assert!(mib_s.len() <= 12, "unrounded float {mib_s} in\n{csv}");
    }
}
