//! Issue 18: a result holds every setting it ran with, typed. The settings a default run does not
//! show are optional columns: absent from a default run's CSV, named up front in a sweep whose
//! points need them, and empty on the rows without.

use crate::util::{bin, csv_file_maps, p, tmp};

#[test]
fn points_that_differ_in_a_setting_only_some_use_share_one_csv_that_says_which_used_it() {
    if let Err(why) = diskscope::engine::probe_io_uring() {
        eprintln!("skipped: io_uring is not available here ({why})");
        return;
    }
    let dir = tmp();
    let sweep = p(&dir, "plan.toml");
    // `submit` applies to io_uring only: the pread point has no such setting, the io_uring one
    // ran with `batch`. One file must hold both rows under one header.
    std::fs::write(
        &sweep,
        "[file]\ncreate = \"1M\"\n\n[[experiment]]\nname = \"s\"\nkind = \"throughput\"\n\
         method = [\"pread\", \"io_uring\"]\nqueue_depth = 4\nsubmit = \"batch\"\n\
         block_size = \"64K\"\nreps = 1\nseconds = 0.05\n",
    )
    .unwrap();
    let out = p(&dir, "out");
    let o = bin("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = csv_file_maps(&out.join("s.csv"));
    let got: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["method"].as_str(), r["submit"].as_str()))
        .collect();
    assert_eq!(got, [("pread", ""), ("io_uring", "batch")], "{rows:?}");
    let summary = csv_file_maps(&out.join("s-summary.csv"));
    let got: Vec<&str> = summary.iter().map(|r| r["submit"].as_str()).collect();
    assert_eq!(got, ["", "batch"], "{summary:?}");
}

#[test]
fn a_default_run_has_no_settings_columns_and_a_durable_write_says_how() {
    let dir = tmp();
    let sweep = p(&dir, "plan.toml");
    std::fs::write(
        &sweep,
        "[file]\ncreate = \"1M\"\n\n[[experiment]]\nname = \"d\"\nkind = \"throughput\"\n\
         block_size = \"64K\"\nreps = 1\nseconds = 0.05\n",
    )
    .unwrap();
    let out = p(&dir, "out");
    let o = bin("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for name in ["d.csv", "d-summary.csv"] {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        let header = text.lines().next().unwrap();
        for col in ["write_sync", "submit", "prealloc", "arrival", "buffers,"] {
            if name == "d.csv" && col == "buffers," {
                continue; // the per-repetition CSV always had the buffers column
            }
            assert!(!header.contains(col), "{name}: {header}");
        }
    }
    // `run --json` carries the result row: an O_DSYNC write with a final fsync says both.
    let f = p(&dir, "w.bin");
    let o = bin("run")
        .arg(&f)
        .args(["-w", "64K", "4", "--fsync", "--dsync", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &doc["results"][0];
    assert_eq!(r["write_sync"], "dsync+fsync", "{r}");
    assert!(
        r.get("submit").is_none(),
        "pread has no submission policy: {r}"
    );
}
