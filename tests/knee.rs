//! Issue 25, the knee from the outside: `knee FILE --p99 T` searches on a real file and reports
//! the highest rate meeting the target with its bracket, every point, and a figure; a sweep's
//! `kind = "knee"` does the same and checks its parameters at plan time. No timing thresholds:
//! on a loaded machine any point may miss any target, so the tests check that the answer is
//! consistent with the points measured, never what the points are.

use crate::util::{bin, p, tmp, write_varied_file};

fn num(v: &serde_json::Value) -> Option<f64> {
    v.as_f64()
}

#[test]
fn knee_json_answers_with_a_bracket_consistent_with_its_points_and_draws_the_figure() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 4 << 20, 7);
    let svg = p(&dir, "knee.svg");
    let out = bin("diskscope")
        .arg("knee")
        .arg(&f)
        .args(["--p99", "1s", "--seconds", "0.2", "--min-ops", "50"])
        .args(["--max-points", "3", "--tolerance", "20", "--json", "--svg"])
        .arg(&svg)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap();
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let target = num(&doc["target_p99_us"]).unwrap();
    assert_eq!(target, 1e6);
    let points = doc["points"].as_array().unwrap();
    assert!(!points.is_empty() && points.len() <= 3, "{doc}");
    assert_eq!(
        doc["points_measured"].as_u64().unwrap() as usize,
        points.len()
    );
    for pt in points {
        let p99 = num(&pt["resp_p99_us"]).unwrap();
        let meets = !pt["fell_behind"].as_bool().unwrap() && p99 <= target;
        assert_eq!(pt["passed"].as_bool().unwrap(), meets, "{pt}");
        // A response time is never shorter than the service time inside it.
        assert!(p99 >= num(&pt["lat_p99_us"]).unwrap(), "{pt}");
    }
    let rate_of = |pass: bool| -> Vec<f64> {
        points
            .iter()
            .filter(|pt| pt["passed"].as_bool() == Some(pass))
            .map(|pt| num(&pt["offered_iops"]).unwrap())
            .collect()
    };
    // A rate's last run decides it, and a second run follows only a miss on one burst, so a
    // rate fails exactly when none of its runs passed.
    let passed = rate_of(true);
    let lowest_fail = rate_of(false)
        .into_iter()
        .filter(|r| !passed.contains(r))
        .reduce(f64::min);
    assert_eq!(num(&doc["fail_iops"]), lowest_fail);
    if let (Some(k), Some(h)) = (num(&doc["knee_iops"]), lowest_fail) {
        let x = num(&doc["crossing_iops"]).expect("a crossing with both ends");
        assert!(k <= x && x <= h, "crossing {x} outside [{k}, {h}]: {doc}");
    }
    match num(&doc["knee_iops"]) {
        Some(k) => {
            assert_eq!(code, 0, "{stderr}");
            assert!(rate_of(true).contains(&k), "{doc}");
            assert!(lowest_fail.is_none_or(|h| k < h), "{doc}");
        }
        None => assert_eq!(code, 1, "no knee is exit 1: {stderr}"),
    }
    assert!(stderr.contains("stopped:"), "{stderr}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("offered rate") && text.contains("target p99 1 s"));
}

#[test]
fn knee_refuses_bad_flags_and_an_existing_figure_in_one_line_before_measuring() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 1 << 20, 1);
    let old = p(&dir, "old.svg");
    std::fs::write(&old, "keep").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--p99", "2"], "--p99"),
        (&["--p99", "2ms", "--tolerance", "0"], "--tolerance"),
        (&["--p99", "2ms", "--max-points", "0"], "--max-points"),
        (&["--p99", "2ms", "--method", "nope"], "--method"),
        (&["--p99", "2ms", "--force"], "--force"),
    ];
    for (args, flag) in cases {
        let out = bin("diskscope")
            .arg("knee")
            .arg(&f)
            .args(*args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(flag), "{args:?}: {stderr}");
    }
    let out = bin("diskscope")
        .arg("knee")
        .arg(&f)
        .args(["--p99", "2ms", "--svg"])
        .arg(&old)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("already exists") && !stderr.contains("IOPS offered"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "keep");
}

fn sweep(dir: &tempfile::TempDir, params: &str) -> std::path::PathBuf {
    let s = p(dir, "knee.toml");
    std::fs::write(
        &s,
        format!(
            "name = \"k\"\n[file]\ncreate = \"4M\"\n\n[[experiment]]\nname = \"kx\"\nkind = \
             \"knee\"\nparams = {{ {params} }}\n"
        ),
    )
    .unwrap();
    s
}

#[test]
fn a_knee_experiment_with_a_bad_parameter_fails_its_dry_run_naming_the_line_and_key() {
    let dir = tmp();
    for (params, key) in [
        ("p99 = \"2\"", "params.p99"),
        ("seconds = 1", "params.p99"),
        ("p99 = \"2ms\", rate = 5", "params.rate"),
        ("p99 = \"2ms\", threads = \"x\"", "params.threads"),
    ] {
        let s = sweep(&dir, params);
        let out = bin("diskscope")
            .arg("--batch")
            .arg(&s)
            .arg("--dry-run")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{params}: {stderr}");
        assert!(
            stderr.contains(":8: key `") && stderr.contains(key),
            "{params}: {stderr}"
        );
        std::fs::remove_file(&s).unwrap();
    }
}

#[test]
fn a_knee_experiment_writes_a_row_per_point_with_the_open_loop_columns_and_its_answer() {
    let dir = tmp();
    let s = sweep(
        &dir,
        "p99 = \"1s\", seconds = 0.2, min_ops = 50, max_points = 2, tolerance = 20",
    );
    let out_dir = p(&dir, "out");
    let out = bin("diskscope")
        .arg("--batch")
        .arg(&s)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let csv = std::fs::read_to_string(out_dir.join("kx.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    assert!(
        header.iter().any(|h| h == "rate_iops_asked") && header.iter().any(|h| h == "resp_p99_us"),
        "{csv}"
    );
    // Every row has the header's cells (the csv crate refuses a ragged row by default).
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert!(!rows.is_empty() && rows.len() <= 2, "{csv}");
    for r in &rows {
        assert_eq!(r.len(), header.len(), "{r:?}");
    }
    let summary = std::fs::read_to_string(out_dir.join("kx-summary.csv")).unwrap();
    assert!(
        summary.starts_with("experiment,target_p99_us,knee_iops,fail_iops"),
        "{summary}"
    );
    assert!(
        summary.lines().nth(1).unwrap().starts_with("kx,1000000"),
        "{summary}"
    );
    let timeline = std::fs::read_to_string(out_dir.join("kx-timeline.csv")).unwrap();
    assert!(timeline
        .lines()
        .next()
        .unwrap()
        .ends_with("resp_p50_us,resp_p99_us,resp_p999_us"));
}

#[test]
fn ctrl_c_during_a_search_exits_130_with_no_answer_on_stdout() {
    use std::io::{BufRead, Read};
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 4 << 20, 2);
    let mut child = crate::util::command("diskscope")
        .arg("knee")
        .arg(&f)
        .args(["--p99", "1s", "--seconds", "1", "--min-ops", "50"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first point's line comes after the handler is set and a point was measured.
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("IOPS offered") {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen += &line;
    }
    // SAFETY: kill(2) on our own child's pid, which has not been waited for yet.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert!(out.is_empty(), "stdout: {out}");
    assert!(rest.contains("stopped: interrupted"), "{seen}{rest}");
}

#[test]
fn a_knee_experiments_report_embeds_the_search_figure_from_the_answer_it_carried() {
    let dir = tmp();
    let s = sweep(
        &dir,
        "p99 = \"1s\", seconds = 0.2, min_ops = 50, max_points = 2, tolerance = 20",
    );
    let out_dir = p(&dir, "out");
    let report = p(&dir, "k.html");
    let out = bin("diskscope")
        .arg("--batch")
        .arg(&s)
        .arg("--out")
        .arg(&out_dir)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The summary CSV and the page both read the search's answer from the sweep's outcome.
    let summary = std::fs::read_to_string(out_dir.join("kx-summary.csv")).unwrap();
    assert!(
        summary.lines().nth(1).unwrap().starts_with("kx,1000000"),
        "{summary}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(doc["knees"][0]["experiment"], "kx", "{}", doc["knees"]);
    assert_eq!(
        num(&doc["knees"][0]["answer"]["settings_target_p99_us"]),
        Some(1e6),
        "{}",
        doc["knees"]
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("kx-knee.svg: the knee search"),
        "no knee figure in the report"
    );
    assert!(html.contains("<svg"), "the figure inline");
    assert!(
        html.contains("<th>service p99</th><th>response p99</th>"),
        "the knee's points with their response times"
    );
}
