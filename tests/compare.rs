//! `diskscope compare OLD NEW` and `--report`: the same sweep run twice, a NEW with halved
//! throughput behind the regression gate, mismatched inputs, never overwriting a report, and the
//! report page loaded in a real (headless) browser.

use crate::util::{bin, csv_file_maps, csv_maps, p, tmp};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(120);

/// A tiny, warm sweep: pread of an 8 MiB test file at three block sizes, and `sleep 0.05` as an
/// external command (its time is steady, so halving its throughput is unmistakable).
const SWEEP: &str = r#"
name = "tiny"
[file]
create = "8M"
[defaults]
reps = 8
seconds = 0.05
[[experiment]]
name = "warm"
kind = "throughput"
method = "pread"
block_size = ["64K", "256K", "1M"]
cache = "warm"
[[experiment]]
name = "sleep"
kind = "command"
command = "sleep 0.05"
block_size = "1M"
bytes = "1M"
cache = "as-is"
"#;

fn sweep_file(dir: &tempfile::TempDir) -> PathBuf {
    let path = p(dir, "sweep.toml");
    std::fs::write(&path, SWEEP).unwrap();
    path
}

/// Runs the sweep into `out` (with extra arguments), asserting it succeeded in time.
fn batch(dir: &tempfile::TempDir, out: &str, extra: &[&str]) -> PathBuf {
    batch_cached(dir, out, extra, None)
}

/// [`batch`] with `XDG_CACHE_HOME` set to `cache` (where `diskscope limits` profiles are looked up).
fn batch_cached(
    dir: &tempfile::TempDir,
    out: &str,
    extra: &[&str],
    cache: Option<&Path>,
) -> PathBuf {
    let out = p(dir, out);
    let started = Instant::now();
    let mut cmd = bin("diskscope");
    if let Some(c) = cache {
        cmd.env("XDG_CACHE_HOME", c);
    }
    let o = cmd
        .arg("--batch")
        .arg(sweep_file(dir))
        .arg("--out")
        .arg(&out)
        .args(extra)
        .current_dir(dir.path())
        .timeout(LIMIT)
        .output()
        .unwrap();
    assert!(started.elapsed() < LIMIT, "the sweep hung");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn compare(dir: &tempfile::TempDir, args: &[&std::ffi::OsStr]) -> Output {
    let o = bin("diskscope")
        .arg("compare")
        .args(args)
        .current_dir(dir.path())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "compare died of a signal");
    o
}

/// MiB/s of each repetition per (experiment, block size), read independently of the library.
fn samples(dir: &Path) -> HashMap<(String, String), Vec<f64>> {
    let mut m: HashMap<(String, String), Vec<f64>> = HashMap::new();
    for x in ["warm", "sleep"] {
        for row in csv_file_maps(&dir.join(format!("{x}.csv"))) {
            m.entry((row["experiment"].clone(), row["block_size_bytes"].clone()))
                .or_default()
                .push(row["mib_s"].parse().unwrap());
        }
    }
    m
}

/// Mann–Whitney's U of NEW against OLD: the pairs (old, new) with NEW larger, ties one half.
fn u_statistic(old: &[f64], new: &[f64]) -> f64 {
    old.iter()
        .flat_map(|o| new.iter().map(move |n| (o, n)))
        .map(|(o, n)| {
            if n > o {
                1.0
            } else if n == o {
                0.5
            } else {
                0.0
            }
        })
        .sum()
}

/// How two runs of one point (8 repetitions each) relate, judged by Mann–Whitney's U counted
/// here, independently of the library, against the published critical value (two-sided 5 %,
/// n₁ = n₂ = 8: reject when min(U, 64 − U) ≤ 13):
/// - `Overlap`: min(U, 64 − U) ≥ 15: the runs interleave; no test at 5 % can call it a change,
///   so the verdict must be "no change" (within the margin) or "inconclusive" (the interval
///   reaches past it).
/// - `Apart`: min(U, 64 − U) ≤ 12: the runs are separated beyond the critical value (with a
///   margin of one for the normal approximation when a value is tied), so the verdict must name
///   the direction.
/// - `Between`: the border (13, 14) or other counts of repetitions; not checked.
#[derive(Debug, PartialEq)]
enum Relation {
    Overlap,
    Apart,
    Between,
}

fn relation(old: &[f64], new: &[f64]) -> Relation {
    if old.len() != 8 || new.len() != 8 {
        return Relation::Between;
    }
    let u = u_statistic(old, new);
    let tail = u.min(64.0 - u);
    if tail >= 15.0 {
        Relation::Overlap
    } else if tail <= 12.0 {
        Relation::Apart
    } else {
        Relation::Between
    }
}

#[test]
fn the_same_sweep_run_twice_shows_no_significant_change_where_the_runs_overlap() {
    let dir = tmp();
    // Other work on the machine can shift a whole run, so a pair of runs may have no point whose
    // runs overlap; the pair is then measured again (at most four times). Every point whose runs
    // are clearly apart is checked too: its verdict must name the direction.
    let mut overlapping = 0;
    for attempt in 1..=4 {
        let a = batch(&dir, &format!("a{attempt}"), &[]);
        let b = batch(&dir, &format!("b{attempt}"), &[]);
        let o = compare(&dir, &[a.as_os_str(), b.as_os_str(), "--csv".as_ref()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = p(&dir, "cmp.csv");
        std::fs::write(&out, &o.stdout).unwrap();
        let rows = csv_file_maps(&out);
        let (sa, sb) = (samples(&a), samples(&b));
        assert_eq!(
            rows.iter().filter(|r| r["metric"] == "mib_s").count(),
            4,
            "every point matched: {rows:?}"
        );
        for r in rows.iter().filter(|r| r["metric"] == "mib_s") {
            let key = (r["experiment"].clone(), r["block_size_bytes"].clone());
            let (old, new) = (&sa[&key], &sb[&key]);
            match relation(old, new) {
                Relation::Overlap => {
                    assert!(
                        ["no change", "inconclusive"].contains(&r["verdict"].as_str()),
                        "{key:?}: {old:?} vs {new:?}: {}",
                        r["verdict"]
                    );
                    overlapping += 1;
                }
                Relation::Apart => {
                    let want = if u_statistic(old, new) > 32.0 {
                        "faster"
                    } else {
                        "slower"
                    };
                    assert_eq!(r["verdict"], want, "{key:?}: {old:?} vs {new:?}");
                }
                Relation::Between => {}
            }
        }
        if overlapping > 0 {
            break;
        }
        eprintln!("attempt {attempt}: no point overlapped; measuring again");
    }
    assert!(
        overlapping > 0,
        "no point overlapped in four pairs of runs of one sweep"
    );
}

#[test]
fn a_new_run_with_halved_throughput_is_slower_and_fails_the_regression_gate() {
    let dir = tmp();
    let old = batch(&dir, "a", &[]);
    // NEW: the same repetitions with MiB/s halved (an edited CSV).
    let text = std::fs::read_to_string(old.join("sleep.csv")).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().unwrap().clone();
    let col = header.iter().position(|h| h == "mib_s").unwrap();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).unwrap();
    for rec in r.records() {
        let rec = rec.unwrap();
        let cells: Vec<String> = rec
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == col {
                    (c.parse::<f64>().unwrap() / 2.0).to_string()
                } else {
                    c.to_string()
                }
            })
            .collect();
        w.write_record(&cells).unwrap();
    }
    let new = p(&dir, "halved.csv");
    std::fs::write(&new, w.into_inner().unwrap()).unwrap();

    let o = compare(
        &dir,
        &[
            old.join("sleep.csv").as_os_str(),
            new.as_os_str(),
            "--fail-on-regression".as_ref(),
            "10".as_ref(),
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.contains("MiB/s"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains("slower") && line.contains("-50.0%"), "{line}");
    assert!(stderr.contains("regression: sleep"), "{stderr}");

    // A threshold above the change passes; so does the run compared with itself.
    let o = compare(
        &dir,
        &[
            old.join("sleep.csv").as_os_str(),
            new.as_os_str(),
            "--fail-on-regression".as_ref(),
            "60".as_ref(),
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let o = compare(
        &dir,
        &[
            old.as_os_str(),
            old.as_os_str(),
            "--fail-on-regression".as_ref(),
            "0".as_ref(),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        !stdout.lines().any(|l| l.trim_end().ends_with("slower")),
        "{stdout}"
    );
}

#[test]
fn mismatched_inputs_get_a_one_line_error_naming_the_file_and_exit_2() {
    let dir = tmp();
    let a = batch(&dir, "a", &[]);
    let empty = p(&dir, "empty");
    std::fs::create_dir(&empty).unwrap();
    let syscalls = p(&dir, "calls.csv");
    std::fs::write(
        &syscalls,
        "experiment,host,file,syscall,rep,calls,seconds,calls_per_s,ns_per_call,error\nc,h,f,getpid,1,10,1,10,100,\n",
    )
    .unwrap();
    let foreign = p(&dir, "prices.csv");
    std::fs::write(&foreign, "item,price\napple,3\n").unwrap();
    let json = p(&dir, "r.json");
    std::fs::write(&json, "{}").unwrap();
    let notes = p(&dir, "notes.txt");
    std::fs::write(&notes, "fast enough").unwrap();
    // Another sweep: the same columns, but points that share no setup with `a`.
    let other = p(&dir, "other.csv");
    let text = std::fs::read_to_string(a.join("warm.csv"))
        .unwrap()
        .replace("warm,read,pread", "other,read,pread");
    std::fs::write(&other, text.replace("\nwarm,", "\nother,")).unwrap();
    // A FIFO would block a reader forever.
    let fifo = p(&dir, "pipe.csv");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let cases: Vec<(PathBuf, &str)> = vec![
        (fifo.clone(), "not a regular file"),
        (empty.clone(), "no per-repetition CSVs"),
        (a.join("warm-summary.csv"), "summary CSV"),
        (syscalls.clone(), "system-call"),
        (foreign.clone(), "not a diskscope results CSV"),
        (json.clone(), "not a diskscope JSON document"),
        (notes.clone(), "unsupported input"),
        (p(&dir, "missing"), "cannot read"),
        (other.clone(), "share no point"),
    ];
    for (new, want) in cases {
        let o = compare(&dir, &[a.as_os_str(), new.as_os_str()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", new.display());
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains(want), "{err}");
        if want != "share no point" {
            let name = new.file_name().unwrap().to_string_lossy().into_owned();
            assert!(err.contains(&name), "{err}");
        }
        assert!(o.stdout.is_empty());
    }
    let o = compare(
        &dir,
        &[
            a.as_os_str(),
            a.as_os_str(),
            "--fail-on-regression".as_ref(),
            "-5".as_ref(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--fail-on-regression"));
}

#[test]
fn a_report_is_never_overwritten_without_force_nor_written_through_a_link() {
    let dir = tmp();
    let a = batch(&dir, "a", &[]);
    let report = p(&dir, "r.html");
    std::fs::write(&report, "mine").unwrap();
    let args = [
        a.as_os_str(),
        a.as_os_str(),
        "--report".as_ref(),
        report.as_os_str(),
    ];
    let o = compare(&dir, &args);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "mine");
    // The batch run refuses before measuring anything.
    let o = bin("diskscope")
        .arg("--batch")
        .arg(sweep_file(&dir))
        .arg("--out")
        .arg(p(&dir, "b"))
        .arg("--report")
        .arg(&report)
        .current_dir(dir.path())
        .timeout(LIMIT)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        !p(&dir, "b").exists(),
        "the sweep ran although the report exists"
    );
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "mine");

    let o = compare(&dir, &[&args[..], &["--force".as_ref()]].concat());
    assert_eq!(o.status.code(), Some(0));
    assert!(std::fs::read_to_string(&report)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));

    let target = p(&dir, "target.txt");
    std::fs::write(&target, "keep").unwrap();
    let link = p(&dir, "link.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for force in [false, true] {
        let mut args = vec![
            a.as_os_str(),
            a.as_os_str(),
            "--report".as_ref(),
            link.as_os_str(),
        ];
        if force {
            args.push("--force".as_ref());
        }
        let o = compare(&dir, &args);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}

/// Loads `page` in headless Chromium; returns the screenshot's share of non-white pixels and the
/// console lines the page logged. `None` when Chromium is not installed.
fn render_in_chromium(dir: &tempfile::TempDir, page: &Path) -> Option<(f64, Vec<String>)> {
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            std::process::Command::new("sh")
                .args(["-c", &format!("command -v {c}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })?;
    let shot = p(dir, "shot.png");
    let _ = std::fs::remove_file(&shot);
    let profile = p(dir, "chromium-profile");
    let mut child = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .env("HOME", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut s).ok();
        s
    });
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > Duration::from_secs(90) {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = reader.join().unwrap();
    let console: Vec<String> = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("net::ERR_"))
        .map(str::to_string)
        .collect();
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&shot).unwrap_or_else(|e| panic!("no screenshot ({e}): {log}")),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let total = pixels.len() / px;
    let inked = pixels
        .chunks(px)
        .filter(|c| c.iter().take(3).any(|v| *v < 240))
        .count();
    Some((inked as f64 / total as f64, console))
}

#[test]
fn the_report_pages_render_in_a_real_browser_without_errors() {
    let dir = tmp();
    let a = batch(&dir, "a", &["--report", "batch.html"]);
    let b = batch(&dir, "b", &[]);
    let cmp = p(&dir, "compare.html");
    let o = compare(
        &dir,
        &[
            a.as_os_str(),
            b.as_os_str(),
            "--report".as_ref(),
            cmp.as_os_str(),
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let batch_html = std::fs::read_to_string(p(&dir, "batch.html")).unwrap();
    let cmp_html = std::fs::read_to_string(&cmp).unwrap();
    for (html, wants) in [
        (
            &batch_html,
            &["sweep tiny", "Plan", "kernel", "Experiment warm", "<svg"][..],
        ),
        (
            &cmp_html,
            &[
                "Verdicts",
                "no change (within ±5%)",
                "OLD vs NEW: throughput",
                "<svg",
            ][..],
        ),
    ] {
        for w in wants {
            assert!(html.contains(w), "missing {w}");
        }
        // Self-contained: nothing to fetch.
        for bad in ["<script", "src=", "<link", "@import", "url(", "href=\"http"] {
            assert!(!html.contains(bad), "the page references {bad}");
        }
    }
    // A broken page proves the console check can fail.
    let broken = p(&dir, "broken.html");
    std::fs::write(
        &broken,
        "<!DOCTYPE html><p>x</p><script>no_such_function()</script>",
    )
    .unwrap();
    let Some((_, console)) = render_in_chromium(&dir, &broken) else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    assert!(
        !console.is_empty(),
        "the console check missed a script error"
    );
    for page in [p(&dir, "batch.html"), cmp] {
        let (inked, console) = render_in_chromium(&dir, &page).unwrap();
        assert!(console.is_empty(), "{}: {console:?}", page.display());
        assert!(
            inked > 0.02,
            "{}: the page looks blank ({inked})",
            page.display()
        );
    }
}

#[test]
fn the_explorer_refuses_a_baseline_it_cannot_read_naming_the_flag() {
    let d = crate::util::tmp();
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for bad in [d.path().join("missing.csv"), empty] {
        let o = crate::util::bin("diskscope")
            .arg("--baseline")
            .arg(&bad)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.starts_with("error: --baseline: "), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

/// Runs compare, asserting exit 0; returns stdout.
fn compare_ok(dir: &tempfile::TempDir, args: &[&std::ffi::OsStr]) -> String {
    let o = compare(dir, args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn a_sweep_json_document_compares_exactly_like_the_csvs_beside_it() {
    let dir = tmp();
    let a = batch(&dir, "a", &[]);
    let doc = a.join("sweep.json");
    assert!(doc.is_file(), "batch mode writes sweep.json");
    // The document against the CSVs it was written with: every point matched, same numbers.
    let rows = csv_maps(&compare_ok(
        &dir,
        &[doc.as_os_str(), a.as_os_str(), "--csv".as_ref()],
    ));
    let mib: Vec<_> = rows.iter().filter(|r| r["metric"] == "mib_s").collect();
    assert_eq!(mib.len(), 4, "every point matched: {rows:?}");
    assert!(rows.iter().all(|r| !r["verdict"].starts_with("only")));
    for r in &mib {
        assert_eq!(r["old_n"], r["new_n"], "{r:?}");
        assert_eq!(r["old_n"], "8", "{r:?}");
        let (o, n): (f64, f64) = (
            r["old_mean"].parse().unwrap(),
            r["new_mean"].parse().unwrap(),
        );
        // The CSV rounds MiB/s to a few decimals; the document keeps every digit.
        assert!((o - n).abs() <= 1e-5 * o.abs(), "{r:?}");
    }
    // A directory holding only the document is read through it.
    let only = p(&dir, "only-json");
    std::fs::create_dir(&only).unwrap();
    std::fs::copy(&doc, only.join("sweep.json")).unwrap();
    let rows = csv_maps(&compare_ok(
        &dir,
        &[only.as_os_str(), a.as_os_str(), "--csv".as_ref()],
    ));
    assert_eq!(rows.iter().filter(|r| r["metric"] == "mib_s").count(), 4);
    assert!(rows.iter().all(|r| !r["verdict"].starts_with("only")));
    // Beside CSVs, the CSVs win: a directory with warm.csv but no sleep.csv has no sleep point,
    // although its sweep.json has one.
    let partial = p(&dir, "partial");
    std::fs::create_dir(&partial).unwrap();
    std::fs::copy(&doc, partial.join("sweep.json")).unwrap();
    std::fs::copy(a.join("warm.csv"), partial.join("warm.csv")).unwrap();
    let rows = csv_maps(&compare_ok(
        &dir,
        &[a.as_os_str(), partial.as_os_str(), "--csv".as_ref()],
    ));
    assert!(
        rows.iter()
            .any(|r| r["experiment"] == "sleep" && r["verdict"] == "only_old"),
        "the directory was read from its CSVs (no sleep.csv there): {rows:?}"
    );

    // `run --json` is one document with one row: it compares with itself.
    let f = p(&dir, "data.bin");
    std::fs::write(&f, vec![3u8; 256 << 10]).unwrap();
    let run = bin("run")
        .arg(&f)
        .args(["-r", "64K", "4", "--cache", "warm", "--json"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let run_json = p(&dir, "run.json");
    std::fs::write(&run_json, &run.stdout).unwrap();
    let text = compare_ok(&dir, &[run_json.as_os_str(), run_json.as_os_str()]);
    assert!(text.contains("1 matched points"), "{text}");
    assert!(text.contains("64K") || text.contains("64 KiB"), "{text}");

    // A `fast` document has no point to match: refused in one line, exit 2.
    let fast = bin("fast")
        .arg(&f)
        .arg("--json")
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(fast.status.success());
    let fast_json = p(&dir, "fast.json");
    std::fs::write(&fast_json, &fast.stdout).unwrap();
    let o = compare(&dir, &[fast_json.as_os_str(), a.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("fast.json") && err.contains("`fast` document"),
        "{err}"
    );
}

#[test]
fn points_found_on_one_side_only_are_listed_in_every_format() {
    let dir = tmp();
    let a = batch(&dir, "a", &[]);
    // OLD: the whole sweep (warm and sleep); NEW: only the warm experiment's CSV.
    let warm = a.join("warm.csv");
    let table = compare_ok(&dir, &[a.as_os_str(), warm.as_os_str()]);
    assert!(
        table.lines().any(|l| l.starts_with("only in OLD: sleep: ")),
        "{table}"
    );
    assert!(
        !table.lines().any(|l| l.starts_with("only in NEW")),
        "{table}"
    );
    assert!(
        table.contains("3 matched points") && table.contains("1 only in OLD, 0 only in NEW"),
        "{table}"
    );
    let md = compare_ok(
        &dir,
        &[a.as_os_str(), warm.as_os_str(), "--markdown".as_ref()],
    );
    assert!(
        md.lines().any(|l| l.starts_with("- only in OLD: sleep: ")),
        "{md}"
    );
    let rows = csv_maps(&compare_ok(
        &dir,
        &[a.as_os_str(), warm.as_os_str(), "--csv".as_ref()],
    ));
    let only: Vec<_> = rows.iter().filter(|r| r["verdict"] == "only_old").collect();
    assert_eq!(only.len(), 1, "{rows:?}");
    assert_eq!(only[0]["experiment"], "sleep");
    assert_eq!(only[0]["old_mean"], "", "no numbers for an unmatched point");
    // The other way round, and in the report page.
    let report = p(&dir, "r.html");
    let table = compare_ok(
        &dir,
        &[
            warm.as_os_str(),
            a.as_os_str(),
            "--report".as_ref(),
            report.as_os_str(),
        ],
    );
    assert!(
        table.lines().any(|l| l.starts_with("only in NEW: sleep: ")),
        "{table}"
    );
    assert!(
        !table.lines().any(|l| l.starts_with("only in OLD")),
        "{table}"
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("Points on one side only"),
        "the report lists them"
    );
    assert!(html.contains("only in NEW: sleep: "));
}

#[test]
fn markdown_is_a_nine_column_table_with_a_row_per_point_and_metric() {
    let dir = tmp();
    let a = batch(&dir, "a", &[]);
    let csv_text = compare_ok(&dir, &[a.as_os_str(), a.as_os_str(), "--csv".as_ref()]);
    let metric_rows = csv_maps(&csv_text).len();
    let md = compare_ok(&dir, &[a.as_os_str(), a.as_os_str(), "--markdown".as_ref()]);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(
        lines[0],
        "| point | metric | OLD mean | OLD median | NEW mean | NEW median | Δ% | 95% CI of Δ | verdict |"
    );
    assert_eq!(lines[1], "|---|---|---:|---:|---:|---:|---:|---:|---|");
    let body: Vec<&str> = lines[2..]
        .iter()
        .copied()
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(
        body.len(),
        metric_rows,
        "one row per point and metric:\n{md}"
    );
    assert!(body.len() >= 4, "{md}");
    for l in &body {
        // Nine cells: ten pipes that are not escaped.
        let pipes = l.matches('|').count() - l.matches("\\|").count();
        assert_eq!(pipes, 10, "{l}");
        let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
        assert!(["MiB/s", "p99 µs"].contains(&cells[1]), "{l}");
        assert!(
            ["not measured", "**faster**", "**slower**"].contains(&cells[8])
                || cells[8].starts_with("no change (within ±5%)")
                || cells[8].starts_with("too few repetitions (")
                || cells[8].starts_with("inconclusive: "),
            "{l}"
        );
    }
    // After the table: a blank line and the tally.
    assert!(
        md.trim_end().ends_with("0 only in OLD, 0 only in NEW"),
        "{md}"
    );
}

/// Whether `svg` is well-formed XML as far as its elements go: every start tag closed in order.
fn well_formed(svg: &str) -> Result<(), String> {
    let mut open: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let j = rest[i..].find('>').ok_or("unterminated tag")? + i;
        let tag = &rest[i + 1..j];
        rest = &rest[j + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        let name = |t: &str| {
            t.split(|c: char| c.is_whitespace() || c == '/')
                .next()
                .unwrap_or("")
                .to_string()
        };
        if let Some(close) = tag.strip_prefix('/') {
            let want = open.pop().ok_or(format!("</{close}> closes nothing"))?;
            if want != name(close) {
                return Err(format!("</{close}> closes <{want}>"));
            }
        } else if !tag.ends_with('/') {
            open.push(name(tag));
        }
    }
    if rest.contains('>') {
        return Err("stray >".into());
    }
    match open.pop() {
        Some(t) => Err(format!("<{t}> never closed")),
        None => Ok(()),
    }
}

#[test]
fn the_plot_is_a_well_formed_svg_with_both_series_never_overwritten_without_force() {
    assert!(well_formed("<svg><g><rect/></g></svg>").is_ok());
    assert!(well_formed("<svg><g></svg>").is_err(), "the check can fail");
    let dir = tmp();
    let a = batch(&dir, "a", &[]);
    let b = batch(&dir, "b", &[]);
    let plot = p(&dir, "cmp.svg");
    let args = [
        a.as_os_str(),
        b.as_os_str(),
        "--plot".as_ref(),
        plot.as_os_str(),
    ];
    compare_ok(&dir, &args);
    let svg = std::fs::read_to_string(&plot).unwrap();
    let start = svg.trim_start();
    assert!(
        start.starts_with("<svg") || (start.starts_with("<?xml") && start.contains("<svg")),
        "{}",
        &svg[..svg.len().min(200)]
    );
    assert!(svg.trim_end().ends_with("</svg>"));
    well_formed(&svg).unwrap();
    let texts: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| t.split_once('>').map(|(_, rest)| rest))
        .map(|rest| rest.split("</text>").next().unwrap_or("").trim())
        .collect();
    assert!(
        texts.contains(&"OLD") && texts.contains(&"NEW"),
        "both series in the legend: {texts:?}"
    );
    assert!(svg.contains("OLD vs NEW: throughput"));
    for bs in ["64K", "256K", "1M"] {
        assert!(
            svg.contains(bs) || svg.contains(&bs.replace('K', " KiB")),
            "point {bs} drawn"
        );
    }
    // Never overwritten without --force; replaced with it.
    std::fs::write(&plot, "mine").unwrap();
    let o = compare(&dir, &args);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--plot") && err.contains("--force"), "{err}");
    assert!(o.stdout.is_empty(), "refused before printing anything");
    assert_eq!(std::fs::read_to_string(&plot).unwrap(), "mine");
    compare_ok(&dir, &[&args[..], &["--force".as_ref()]].concat());
    assert!(std::fs::read_to_string(&plot).unwrap().contains("<svg"));
}

#[test]
fn the_reports_explain_each_points_bound_when_a_limits_profile_exists() {
    let dir = tmp();
    let none = p(&dir, "no-cache");
    std::fs::create_dir(&none).unwrap();
    let cache = p(&dir, "cache");
    crate::util::store_synthetic_profile(&cache, dir.path(), 1000.0);
    let plain = batch_cached(&dir, "plain", &["--report", "plain.html"], Some(&none));
    let explained = batch_cached(
        &dir,
        "explained",
        &["--report", "explained.html"],
        Some(&cache),
    );
    let html = std::fs::read_to_string(p(&dir, "explained.html")).unwrap();
    assert!(
        html.contains("<th class=\"t\">bound</th>"),
        "a bound column"
    );
    // Every throughput point names its bound, the prediction and its share; a thousand times
    // this machine leaves each far below half, so the hint follows.
    let bound_cells: Vec<&str> = html
        .split("<td class=\"t\">")
        .skip(1)
        .map(|c| c.split("</td>").next().unwrap())
        .filter(|c| c.contains("-bound "))
        .collect();
    assert_eq!(bound_cells.len(), 3, "one per warm point: {bound_cells:?}");
    for c in &bound_cells {
        assert!(c.contains("iB/s · ") && c.contains("% — "), "{c}");
    }
    let plain_html = std::fs::read_to_string(p(&dir, "plain.html")).unwrap();
    assert!(plain_html.contains("Experiment warm"));
    assert!(
        !plain_html.contains(">bound</th>"),
        "no profile, no bound column"
    );
    assert!(!plain_html.contains("-bound "));

    // compare's page shows the bound where the side carries one (OLD here), not elsewhere.
    let report = p(&dir, "cmp.html");
    compare_ok(
        &dir,
        &[
            explained.as_os_str(),
            plain.as_os_str(),
            "--report".as_ref(),
            report.as_os_str(),
        ],
    );
    let html = std::fs::read_to_string(&report).unwrap();
    let old = &html[html.find("OLD: summary").unwrap()..html.find("NEW: summary").unwrap()];
    let new = &html[html.find("NEW: summary").unwrap()..];
    assert!(
        old.contains(">bound</th>") && old.contains("-bound "),
        "{old}"
    );
    assert!(!new.contains(">bound</th>"), "{new}");
}

/// The per-repetition columns compare reads (batch mode's, in its order).
const REP_HEADER: [&str; 27] = [
    "experiment",
    "host",
    "file",
    "file_size_bytes",
    "operation",
    "method",
    "pattern",
    "cache",
    "direct",
    "block_size_bytes",
    "block_count",
    "threads",
    "queue_depth",
    "rep",
    "bytes",
    "seconds",
    "mib_s",
    "ops",
    "iops",
    "lat_p50_us",
    "lat_p90_us",
    "lat_p99_us",
    "lat_p999_us",
    "lat_max_us",
    "residency_before_pct",
    "xor",
    "error",
];

/// Writes a per-repetition CSV: one row per (experiment, method, MiB/s) with fixed settings.
fn write_reps(path: &Path, rows: &[(&str, &str, &str)]) {
    let mut w = csv::Writer::from_path(path).unwrap();
    w.write_record(REP_HEADER).unwrap();
    for (i, (experiment, method, mib_s)) in rows.iter().enumerate() {
        let rep = (i + 1).to_string();
        w.write_record([
            experiment,
            "h",
            "/f",
            "100",
            "read",
            method,
            "sequential",
            "warm",
            "false",
            "1048576",
            "1",
            "1",
            "1",
            &rep,
            "1",
            "1",
            mib_s,
            "1",
            "1",
            "1",
            "1",
            "7.5",
            "1",
            "1",
            "100",
            "00000000",
            "",
        ])
        .unwrap();
    }
    w.flush().unwrap();
}

#[test]
fn a_91_percent_drop_hidden_behind_one_old_outlier_is_slower_and_fails_the_gate() {
    // Issue 19: 8 repetitions per side, OLD 74–1110 MiB/s (one outlier, median 119), NEW 15–29
    // MiB/s (median 21): every NEW repetition below every OLD one. Welch's t on the values
    // printed "-91.1% [-216.2%, +34.0%] no significant change" and exited 0.
    let dir = tmp();
    let old = ["74", "96", "112", "117", "121", "126", "132", "1110"];
    let new = ["15", "17", "19", "20", "22", "22", "24", "29"];
    let (a, b) = (p(&dir, "old.csv"), p(&dir, "new.csv"));
    write_reps(&a, &old.map(|v| ("seq", "pread", v)));
    write_reps(&b, &new.map(|v| ("seq", "pread", v)));
    let o = compare(
        &dir,
        &[
            a.as_os_str(),
            b.as_os_str(),
            "--fail-on-regression".as_ref(),
            "10".as_ref(),
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.contains("MiB/s") && !l.starts_with("outlier"))
        .unwrap_or_else(|| panic!("{stdout}"));
    eprintln!("{line}");
    assert!(line.trim_end().ends_with("slower"), "{line}");
    // Δ% and both ends of its interval are changes a throughput can make: inside (−100%, 0).
    let pcts: Vec<f64> = line
        .split(|c: char| c.is_whitespace() || c == '[' || c == ']' || c == ',')
        .filter_map(|w| w.strip_suffix('%'))
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!(pcts.len(), 3, "{line}");
    assert!(pcts.iter().all(|v| -100.0 < *v && *v < 0.0), "{line}");
    // The outlier is named, as hyperfine warns of one: its repetition, value and rule.
    assert!(
        stdout.lines().any(|l| l.starts_with("outlier: seq: ")
            && l.contains("MiB/s: OLD rep 8 = 1110 (modified z-score ")
            && l.contains("> 3.5, of 8 repetitions)")),
        "{stdout}"
    );
    assert!(stderr.contains("regression: seq"), "{stderr}");
}

#[test]
fn names_from_the_input_files_reach_no_terminal_table_or_spreadsheet_raw() {
    // An experiment named with a terminal escape (retitle, clear screen), a newline and a pipe;
    // a method that a spreadsheet would run as a formula.
    let dir = tmp();
    let evil = "x\u{1b}]0;pwned\u{7}\u{1b}[2J\nnext|cell";
    let formula = "=cmd|'/C calc'!A0";
    let old: Vec<(&str, &str, &str)> = ["100", "101", "99", "102", "98"]
        .iter()
        .map(|v| (evil, formula, *v))
        .chain([
            ("gone\u{1b}[2J", "pread", "5"),
            ("gone\u{1b}[2J", "pread", "6"),
        ])
        .collect();
    let new: Vec<(&str, &str, &str)> = ["50", "51", "49", "52", "48"]
        .iter()
        .map(|v| (evil, formula, *v))
        .collect();
    let (a, b) = (p(&dir, "old.csv"), p(&dir, "new.csv"));
    write_reps(&a, &old);
    write_reps(&b, &new);
    let raw = |t: &str| t.contains('\u{1b}') || t.contains('\u{7}');

    let o = compare(
        &dir,
        &[
            a.as_os_str(),
            b.as_os_str(),
            "--fail-on-regression".as_ref(),
            "10".as_ref(),
        ],
    );
    let (table, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(1), "{table}{err}");
    assert!(!raw(&table) && !raw(&err), "{table:?}\n{err:?}");
    assert!(table.contains("x\\u{1b}]0;pwned"), "{table}");
    assert!(table.contains("\\nnext|cell"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("only in OLD: gone\\u{1b}[2J")),
        "{table}"
    );

    let md = compare_ok(&dir, &[a.as_os_str(), b.as_os_str(), "--markdown".as_ref()]);
    assert!(!raw(&md), "{md:?}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| x")).collect();
    assert_eq!(rows.len(), 2, "one line per metric row:\n{md}");
    for l in rows {
        let pipes = l.matches('|').count() - l.matches("\\|").count();
        assert_eq!(pipes, 10, "nine cells: {l}");
    }

    let text = compare_ok(&dir, &[a.as_os_str(), b.as_os_str(), "--csv".as_ref()]);
    assert!(!raw(&text), "{text:?}");
    let rows = csv_maps(&text);
    let matched: Vec<_> = rows.iter().filter(|r| r["metric"] == "mib_s").collect();
    assert_eq!(matched.len(), 1, "{rows:?}");
    assert_eq!(matched[0]["method"], format!("'{formula}"));
    assert!(!matched[0]["experiment"].contains('\n'), "{rows:?}");
    // Numbers stay numbers.
    assert!(
        matched[0]["delta_pct"].parse::<f64>().unwrap() < 0.0,
        "{rows:?}"
    );
}

#[test]
fn huge_or_non_finite_throughput_gets_a_verdict_or_a_one_line_error_never_a_panic() {
    let dir = tmp();
    // 1e307 and 1e308 MiB/s: finite; their variance overflows, which made Welch's t panic
    // (t_quantile(0.975, NaN), exit 101). Judged on logarithms they are ordinary numbers.
    let (a, b) = (p(&dir, "old.csv"), p(&dir, "new.csv"));
    let huge = ["1e308", "1e307", "1e308", "1e307", "1e308"];
    write_reps(&a, &huge.map(|v| ("h", "pread", v)));
    write_reps(
        &b,
        &["1e307", "1e308", "1e307", "1e308", "1e307"].map(|v| ("h", "pread", v)),
    );
    for format in ["--csv", "--markdown", "--fail-on-regression"] {
        let mut args = vec![a.as_os_str(), b.as_os_str(), format.as_ref()];
        if format == "--fail-on-regression" {
            args.push("0".as_ref());
        }
        let o = compare(&dir, &args);
        let out = String::from_utf8_lossy(&o.stdout);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{format}: {out}{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let svg = p(&dir, "huge.svg");
    let o = compare(
        &dir,
        &[
            a.as_os_str(),
            b.as_os_str(),
            "--plot".as_ref(),
            svg.as_os_str(),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // Not finite (or negative): refused in one line naming FILE:LINE and the column, exit 2.
    for bad in ["inf", "NaN", "1e309", "-3"] {
        let c = p(&dir, "bad.csv");
        let _ = std::fs::remove_file(&c);
        write_reps(&c, &[("h", "pread", "1e307"), ("h", "pread", bad)]);
        let o = compare(&dir, &[a.as_os_str(), c.as_os_str()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("bad.csv:3: column mib_s"), "{bad}: {err}");
    }
}

/// fio's JSON document of a real run (two jobs: 64K sequential and 4K random reads, psync).
fn fio_fixture() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/psync-seq-rand.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Writes `runs` documents into a new directory `name`, each the fixture with every job's read
/// bandwidth times the run's factor (and seqread's times `seq_factor` too).
fn fio_runs(dir: &tempfile::TempDir, name: &str, factors: &[f64], seq_factor: f64) -> PathBuf {
    let out = p(dir, name);
    std::fs::create_dir(&out).unwrap();
    for (i, f) in factors.iter().enumerate() {
        let mut doc = fio_fixture();
        for job in doc["jobs"].as_array_mut().unwrap() {
            let k = if job["jobname"] == "seqread" {
                f * seq_factor
            } else {
                *f
            };
            let read = &mut job["read"];
            read["bw_bytes"] = (read["bw_bytes"].as_f64().unwrap() * k).round().into();
        }
        std::fs::write(out.join(format!("run{i}.json")), doc.to_string()).unwrap();
    }
    out
}

#[test]
fn fio_json_results_compare_with_the_same_statistics_one_document_per_repetition() {
    let dir = tmp();
    let spread = [0.97, 1.0, 1.03, 0.99, 1.02];
    let old = fio_runs(&dir, "fio-old", &spread, 1.0);
    // NEW: sequential reads at 60 %, random reads unchanged.
    let new = fio_runs(&dir, "fio-new", &[1.01, 0.98, 1.0, 1.02, 0.97], 0.6);
    let o = compare(
        &dir,
        &[
            old.as_os_str(),
            new.as_os_str(),
            "--fail-on-regression".as_ref(),
            "10".as_ref(),
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stdout}{stderr}");
    let mib = |job: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{job}: read fio:psync")) && l.contains("MiB/s"))
            .unwrap_or_else(|| panic!("{job}: {stdout}"))
            .to_string()
    };
    assert!(mib("seqread").trim_end().ends_with("slower"), "{stdout}");
    assert!(mib("seqread").contains("-40."), "{stdout}");
    assert!(
        mib("randread")
            .trim_end()
            .ends_with("no change (within ±5%)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("regression: seqread: read fio:psync 64K sequential"),
        "{stderr}"
    );

    // One document a side: one repetition each, said so.
    let one = compare_ok(
        &dir,
        &[
            old.join("run0.json").as_os_str(),
            new.join("run0.json").as_os_str(),
        ],
    );
    assert!(
        one.contains("too few repetitions") && one.contains("2 matched points"),
        "{one}"
    );
    // The tally counts them rather than leaving every count at 0.
    assert!(one.contains("2 of them with too few repetitions"), "{one}");
}

/// A per-repetition CSV of one warm pread 1M point: each repetition's MiB/s with its verdict
/// and reasons (and, with `rank`, a fleet's rank column).
fn verdict_csv(rows: &[(f64, &str, &str)], rank: Option<&[&str]>) -> String {
    let mut text = String::from(
        "experiment,host,file,operation,method,pattern,cache,direct,block_size_bytes,threads,queue_depth,rep,mib_s,lat_p99_us,error,verdict,reasons,why",
    );
    if rank.is_some() {
        text += ",rank";
    }
    text.push('\n');
    for (i, (mib_s, verdict, reasons)) in rows.iter().enumerate() {
        let why = if reasons.is_empty() {
            String::new()
        } else {
            format!("\"{reasons} happened\"")
        };
        text += &format!(
            "x,h,/f,read,pread,sequential,warm,false,1048576,1,1,{},{mib_s},10,,{verdict},{reasons},{why}",
            i + 1
        );
        if let Some(r) = rank {
            text += &format!(",{}", r[i]);
        }
        text.push('\n');
    }
    text
}

#[test]
fn a_significant_change_between_an_ok_and_a_suspect_side_says_the_verdicts_differ() {
    let dir = tmp();
    let ok: Vec<(f64, &str, &str)> = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2]
        .iter()
        .map(|v| (*v, "ok", ""))
        .collect();
    let cached: Vec<(f64, &str, &str)> = [900.0, 905.0, 899.0, 901.0, 898.0, 902.0]
        .iter()
        .map(|v| (*v, "suspect", "cache_not_disk"))
        .collect();
    let old = p(&dir, "old.csv");
    let new = p(&dir, "new.csv");
    std::fs::write(&old, verdict_csv(&ok, None)).unwrap();
    std::fs::write(&new, verdict_csv(&cached, None)).unwrap();
    let out = compare_ok(&dir, &[old.as_os_str(), new.as_os_str()]);
    assert!(
        out.contains("faster, but verdicts differ: OLD ok, NEW suspect (cache_not_disk)"),
        "{out}"
    );
    assert!(out.contains("note: x: read pread 1M"), "{out}");
    // The CSV says it in its own columns.
    let o = compare(
        &dir,
        &[
            old.as_os_str(),
            new.as_os_str(),
            std::ffi::OsStr::new("--csv"),
        ],
    );
    let rows = csv_maps(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(rows[0]["old_verdict"], "ok");
    assert_eq!(rows[0]["new_verdict"], "suspect (cache_not_disk)");
    assert!(
        rows[0]["note"].starts_with("verdicts differ"),
        "{:?}",
        rows[0]
    );
    // Both sides ok: no caveat, and the totals are the same as without verdicts.
    std::fs::write(&new, verdict_csv(&ok, None)).unwrap();
    let same = compare_ok(&dir, &[old.as_os_str(), new.as_os_str()]);
    assert!(!same.contains("verdicts differ"), "{same}");
}

#[test]
fn a_level_shift_in_a_sides_timeline_is_noted_and_the_totals_are_unchanged() {
    let dir = tmp();
    let reps: Vec<(f64, &str, &str)> = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2]
        .iter()
        .map(|v| (*v, "", ""))
        .collect();
    let old = p(&dir, "old.csv");
    std::fs::write(&old, verdict_csv(&reps, None)).unwrap();
    let new_dir = p(&dir, "new");
    std::fs::create_dir(&new_dir).unwrap();
    std::fs::write(new_dir.join("x.csv"), verdict_csv(&reps, None)).unwrap();
    let before = compare_ok(&dir, &[old.as_os_str(), new_dir.as_os_str()]);
    // Repetition 3's timeline: 160 MiB/s for 6 s, then 40 MiB/s for 6 s (mean 100).
    let mut t = String::from("experiment,operation,method,pattern,cache,direct,block_size_bytes,threads,queue_depth,rep,device,t_start_s,t_end_s,bytes,ops,mib_s\n");
    for i in 0..12 {
        let v = if i < 6 { 160.0 } else { 40.0 };
        t += &format!(
            "x,read,pread,sequential,warm,false,1048576,1,1,3,,{i},{},1,1,{v}\n",
            i + 1
        );
    }
    std::fs::write(new_dir.join("x-timeline.csv"), t).unwrap();
    let after = compare_ok(&dir, &[old.as_os_str(), new_dir.as_os_str()]);
    assert!(
        after.contains("NEW's timeline shows a level shift (rep 3): throughput went from 160.0 to 40.0 MiB/s at 6.0 s"),
        "{after}"
    );
    let table = |s: &str| s.lines().take(3).collect::<Vec<_>>().join("\n");
    assert_eq!(table(&before), table(&after), "the totals did not change");
}

#[test]
fn a_fleet_csv_is_compared_on_its_all_rows_not_its_ranks_shares() {
    let dir = tmp();
    let fleet: Vec<(f64, &str, &str)> = vec![
        (50.0, "ok", ""),
        (50.0, "ok", ""),
        (100.0, "ok", ""),
        (52.0, "ok", ""),
        (52.0, "ok", ""),
        (104.0, "ok", ""),
    ];
    let ranks = ["0", "1", "all", "0", "1", "all"];
    let old = p(&dir, "old.csv");
    std::fs::write(&old, verdict_csv(&fleet, Some(&ranks))).unwrap();
    let o = compare(
        &dir,
        &[
            old.as_os_str(),
            old.as_os_str(),
            std::ffi::OsStr::new("--csv"),
        ],
    );
    let rows = csv_maps(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(rows[0]["old_n"], "2", "{rows:?}");
    let mean: f64 = rows[0]["old_mean"].parse().unwrap();
    assert!((mean - 102.0).abs() < 1e-9, "{rows:?}");
}

/// Whether the `fio` program runs here (`.ci/run` installs it).
fn fio_installed() -> bool {
    std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_fio_randrw_result_and_a_diskscope_mix_of_the_same_job_pair_direction_by_direction() {
    if !fio_installed() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tmp();
    let job = p(&dir, "mix.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=psync\nbs=4k\nsize=2m\n\n[mixed]\nrw=randrw\nrwmixread=70\n\
         number_ios=400\n",
    )
    .unwrap();
    // fio and diskscope each in a directory of their own: each lays out its own file.
    let (fio_dir, ds_dir) = (p(&dir, "fio"), p(&dir, "ds"));
    std::fs::create_dir(&fio_dir).unwrap();
    std::fs::create_dir(&ds_dir).unwrap();
    let fio = std::process::Command::new("fio")
        .current_dir(&fio_dir)
        .args(["--output-format=json", "--output=fio.json"])
        .arg(&job)
        .output()
        .unwrap();
    assert!(
        fio.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fio_dir.join("fio.json")).unwrap()).unwrap();
    let fio_job = &doc["jobs"][0];
    for d in ["read", "write"] {
        assert!(
            fio_job[d]["io_bytes"].as_u64().unwrap() > 0,
            "fio {d}: {fio_job}"
        );
    }
    let ds = bin("diskscope")
        .current_dir(&ds_dir)
        .arg("--batch")
        .arg(&job)
        .args(["--out", "out"])
        .output()
        .unwrap();
    assert!(
        ds.status.success(),
        "diskscope: {}",
        String::from_utf8_lossy(&ds.stderr)
    );
    let cmp = bin("diskscope")
        .current_dir(dir.path())
        .arg("compare")
        .arg(fio_dir.join("fio.json"))
        .arg(ds_dir.join("out"))
        .arg("--csv")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&cmp.stderr);
    assert!(cmp.status.success(), "compare: {stderr}");
    let rows = crate::util::csv_maps(&String::from_utf8_lossy(&cmp.stdout));
    let mut paired = std::collections::BTreeMap::new();
    for r in &rows {
        assert!(
            r["verdict"] != "only_old" && r["verdict"] != "only_new",
            "a point did not pair: {r:?}\n{rows:?}"
        );
        assert_eq!(
            (r["old_n"].as_str(), r["new_n"].as_str()),
            ("1", "1"),
            "{r:?}"
        );
        paired
            .entry(r["operation"].clone())
            .or_insert_with(Vec::new)
            .push(r["metric"].clone());
    }
    let ops: Vec<&String> = paired.keys().collect();
    assert_eq!(ops, ["mix70:read", "mix70:write"], "{rows:?}");
    // Each direction is compared on its throughput and its p99, the figures of its own
    // columns: fio's bw_bytes and clat p99 beside diskscope's read_* / write_*.
    for metrics in paired.values() {
        assert!(
            metrics.iter().any(|m| m == "mib_s") && metrics.iter().any(|m| m == "lat_p99_us"),
            "{paired:?}"
        );
    }
    let ds_csv = crate::util::csv_file_maps(&ds_dir.join("out/mixed.csv"));
    let want = ds_csv[0]["write_mib_s"].parse::<f64>().unwrap();
    let got = rows
        .iter()
        .find(|r| r["operation"] == "mix70:write" && r["metric"] == "mib_s")
        .map(|r| r["new_mean"].parse::<f64>().unwrap())
        .unwrap();
    assert!(
        (got - want).abs() <= 1e-6 * want.max(1.0),
        "{got} vs {want}"
    );
}

// ---- "did anything change?" and "which of these two is faster?" (issue 36) -----------------

/// `n` repetitions around `median`, each off by up to ±`pct` % (a fixed pseudo-random sequence
/// from `seed`, so a fixture is the same on every run).
fn generated(n: usize, median: f64, pct: f64, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            median * (1.0 + pct / 100.0 * (2.0 * u - 1.0))
        })
        .collect()
}

/// A per-repetition CSV (the columns compare reads) of points `(experiment, block size, cache,
/// MiB/s of each repetition)`, repetitions numbered from 1, every p99 10 µs.
fn points_csv(points: &[(&str, &str, &str, &[f64])]) -> String {
    let mut text = String::from(
        "experiment,operation,method,pattern,cache,direct,block_size_bytes,threads,queue_depth,rep,mib_s,lat_p99_us,error\n",
    );
    for (exp, bs, cache, values) in points {
        let bytes = match *bs {
            "4K" => 4096,
            "64K" => 65536,
            "1M" => 1 << 20,
            other => panic!("{other}"),
        };
        for (i, v) in values.iter().enumerate() {
            text += &format!(
                "{exp},read,pread,sequential,{cache},false,{bytes},1,1,{},{v},10,\n",
                i + 1
            );
        }
    }
    text
}

/// Writes `text` to `name` in `dir`, returning the path.
fn fixture(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let path = p(dir, name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The terminal table's MiB/s line.
fn mib_line(stdout: &str) -> String {
    stdout
        .lines()
        .find(|l| l.contains("MiB/s") && !l.starts_with("outlier") && !l.starts_with("warning"))
        .unwrap_or_else(|| panic!("{stdout}"))
        .to_string()
}

#[test]
fn a_steady_a_a_from_the_same_generated_data_says_no_change_within_the_margin() {
    let dir = tmp();
    // Eight repetitions a side, each within ±1.5 % of 500 MiB/s, from one generator.
    let old = fixture(
        &dir,
        "a.csv",
        &points_csv(&[("x", "1M", "warm", &generated(8, 500.0, 1.5, 1))]),
    );
    let new = fixture(
        &dir,
        "b.csv",
        &points_csv(&[("x", "1M", "warm", &generated(8, 500.0, 1.5, 2))]),
    );
    let out = compare_ok(&dir, &[old.as_os_str(), new.as_os_str()]);
    let line = mib_line(&out);
    assert!(line.trim_end().ends_with("no change (within ±5%)"), "{out}");
    assert!(
        out.contains("1 matched points: 0 faster, 0 slower, 2 no change (within ±5%)"),
        "{out}"
    );
    // The CSV says the same in its columns: the verdict word and the margin.
    let csv_text = compare_ok(&dir, &[old.as_os_str(), new.as_os_str(), "--csv".as_ref()]);
    let rows = csv_maps(&csv_text);
    let r = rows.iter().find(|r| r["metric"] == "mib_s").unwrap();
    assert_eq!(
        (r["verdict"].as_str(), r["margin_pct"].as_str()),
        ("no change", "5.0")
    );
    let (lo, hi): (f64, f64) = (
        r["ci_low_pct"].parse().unwrap(),
        r["ci_high_pct"].parse().unwrap(),
    );
    assert!(
        (-5.0..=0.0).contains(&lo) && (0.0..=5.0).contains(&hi),
        "{r:?}"
    );
    // Asked to within ±0.5 %, the same data cannot say so, and says why.
    let tight = compare_ok(
        &dir,
        &[
            old.as_os_str(),
            new.as_os_str(),
            "--margin".as_ref(),
            "0.5".as_ref(),
        ],
    );
    let line = mib_line(&tight);
    assert!(line.contains("inconclusive: "), "{tight}");
    assert!(
        line.contains("spread OLD 1.0×") || line.contains("(OLD 1.0×"),
        "{tight}"
    );
    // A margin that is not a percentage: a one-line error naming the flag.
    for bad in ["0", "-3", "100", "nan"] {
        let o = compare(
            &dir,
            &[
                old.as_os_str(),
                new.as_os_str(),
                "--margin".as_ref(),
                bad.as_ref(),
            ],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("--margin") && err.trim_end().lines().count() == 1,
            "{err}"
        );
    }
}

#[test]
fn a_10_percent_shift_is_faster_or_slower_and_fails_the_gate() {
    let dir = tmp();
    let base = generated(8, 500.0, 2.0, 3);
    let old = fixture(&dir, "old.csv", &points_csv(&[("x", "1M", "warm", &base)]));
    for (factor, want, code) in [(1.1, "faster", 0), (0.9, "slower", 1)] {
        let shifted: Vec<f64> = generated(8, 500.0, 2.0, 4)
            .iter()
            .map(|v| v * factor)
            .collect();
        let new = fixture(
            &dir,
            &format!("new{factor}.csv"),
            &points_csv(&[("x", "1M", "warm", &shifted)]),
        );
        let o = compare(
            &dir,
            &[
                old.as_os_str(),
                new.as_os_str(),
                "--fail-on-regression".as_ref(),
                "5".as_ref(),
            ],
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(code), "{out}");
        let line = mib_line(&out);
        assert!(line.trim_end().ends_with(want), "{line}");
        let pcts: Vec<f64> = line
            .split(|c: char| c.is_whitespace() || c == '[' || c == ']' || c == ',')
            .filter_map(|w| w.strip_suffix('%'))
            .map(|w| w.parse().unwrap())
            .collect();
        // Δ near ±10 %, and the whole interval on its side of zero.
        assert!((pcts[0] - 100.0 * (factor - 1.0)).abs() < 3.0, "{line}");
        assert!(pcts[1] * pcts[2] > 0.0, "{line}");
    }
}

#[test]
fn too_few_repetitions_say_so_and_the_summary_counts_those_points() {
    let dir = tmp();
    // Point 1M: 3 against 3 (no outcome can reach 5 %). Point 64K: 5 a side within ±5 %, whose
    // interval reaches past ±5 %. Point 4K: 8 a side, steady: decided.
    let old = fixture(
        &dir,
        "old.csv",
        &points_csv(&[
            ("x", "1M", "warm", &[100.0, 101.0, 99.0]),
            ("x", "64K", "warm", &[100.0, 105.0, 95.0, 102.5, 97.5]),
            ("x", "4K", "warm", &generated(8, 50.0, 1.0, 5)),
        ]),
    );
    let new = fixture(
        &dir,
        "new.csv",
        &points_csv(&[
            ("x", "1M", "warm", &[100.5, 99.5, 100.0]),
            ("x", "64K", "warm", &[101.0, 97.0, 104.0, 99.0, 100.5]),
            ("x", "4K", "warm", &generated(8, 50.0, 1.0, 6)),
        ]),
    );
    let out = compare_ok(&dir, &[old.as_os_str(), new.as_os_str()]);
    let line = |bs: &str| {
        out.lines()
            .find(|l| l.contains(&format!("pread {bs} ")) && l.contains("MiB/s"))
            .unwrap_or_else(|| panic!("{bs}: {out}"))
            .to_string()
    };
    assert!(
        line("1M").contains("too few repetitions (3 a side; 4 a side is the least"),
        "{out}"
    );
    let l = line("64K");
    assert!(
        l.contains("inconclusive: too few repetitions (5 a side; about ")
            && l.contains("would decide; spread OLD 1.1×, NEW 1.1×)"),
        "{out}"
    );
    assert!(line("4K").contains("no change (within ±5%)"), "{out}");
    assert!(
        out.contains("; 2 of them with too few repetitions;"),
        "the summary counts the points: {out}"
    );
}

#[test]
fn two_single_point_results_of_4k_and_64k_compare_naming_what_differs() {
    let dir = tmp();
    let small = fixture(
        &dir,
        "4k.csv",
        &points_csv(&[("bs4k", "4K", "warm", &generated(8, 300.0, 2.0, 7))]),
    );
    let big = fixture(
        &dir,
        "64k.csv",
        &points_csv(&[("bs64k", "64K", "cold", &generated(8, 900.0, 2.0, 8))]),
    );
    let out = compare_ok(&dir, &[small.as_os_str(), big.as_os_str()]);
    // What differs is named above the table (experiment, block size, cache), and in the label.
    assert!(
        out.lines().next().unwrap().contains(
            "single points of different setups, compared as A vs B: experiment bs4k → bs64k, block_size 4K → 64K, cache warm → cold"
        ),
        "{out}"
    );
    let line = mib_line(&out);
    assert!(
        line.starts_with("bs4k: read pread 4K sequential warm T1 vs experiment bs64k, block_size 64K, cache cold"),
        "{line}"
    );
    assert!(line.trim_end().ends_with("faster"), "{line}");
    // The CSV names the pair in its own column.
    let csv_text = compare_ok(
        &dir,
        &[small.as_os_str(), big.as_os_str(), "--csv".as_ref()],
    );
    let rows = csv_maps(&csv_text);
    assert_eq!(
        rows[0]["pair"],
        "experiment bs4k → bs64k, block_size 4K → 64K, cache warm → cold"
    );
    // Two inputs of several points that share none are still refused, pointing to --pair.
    let two = fixture(
        &dir,
        "two.csv",
        &points_csv(&[
            ("y", "4K", "warm", &[1.0, 2.0]),
            ("y", "64K", "warm", &[1.0, 2.0]),
        ]),
    );
    let o = compare(&dir, &[small.as_os_str(), two.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("share no point") && err.contains("--pair"),
        "{err}"
    );
}

#[test]
fn pair_names_two_settings_of_one_sweep_and_refuses_what_it_cannot_pair() {
    let dir = tmp();
    let sweep = fixture(
        &dir,
        "sweep.csv",
        &points_csv(&[
            ("x", "4K", "warm", &generated(8, 300.0, 2.0, 9)),
            ("x", "4K", "cold", &generated(8, 30.0, 2.0, 10)),
            ("x", "64K", "warm", &generated(8, 1200.0, 2.0, 11)),
            ("x", "64K", "cold", &generated(8, 200.0, 2.0, 12)),
            ("x", "1M", "warm", &generated(8, 2000.0, 2.0, 13)),
        ]),
    );
    let out = compare_ok(
        &dir,
        &[
            sweep.as_os_str(),
            "--pair".as_ref(),
            "block_size=4K".as_ref(),
            "block_size=64K".as_ref(),
        ],
    );
    assert!(
        out.starts_with("A = block_size=4K, B = block_size=64K: Δ is B against A"),
        "{out}"
    );
    for cache in ["warm", "cold"] {
        let l = out
            .lines()
            .find(|l| {
                l.starts_with(&format!(
                    "x: read pread 4K sequential {cache} T1 vs block_size 64K"
                ))
            })
            .unwrap_or_else(|| panic!("{cache}: {out}"));
        assert!(l.trim_end().ends_with("faster"), "{l}");
    }
    assert!(out.contains("2 matched points"), "{out}");
    // cold against warm, per block size: 1M has no cold point, listed as without a partner.
    let out = compare_ok(
        &dir,
        &[
            sweep.as_os_str(),
            "--pair".as_ref(),
            "cache=warm".as_ref(),
            "cache=cold".as_ref(),
        ],
    );
    assert!(
        out.contains("A without a partner in B: x: read pread 1M sequential warm T1"),
        "{out}"
    );
    // OLD and NEW with --pair: A from OLD, B from NEW.
    let out = compare_ok(
        &dir,
        &[
            sweep.as_os_str(),
            sweep.as_os_str(),
            "--pair".as_ref(),
            "bs=64K,cache=warm".as_ref(),
            "bs=1M,cache=warm".as_ref(),
        ],
    );
    assert!(
        out.starts_with("A = bs=64K,cache=warm of OLD, B = bs=1M,cache=warm of NEW"),
        "{out}"
    );
    // Misuse: one line, exit 2, naming --pair and the fix.
    for (a, b, want) in [
        (
            "blocksize=4K",
            "blocksize=64K",
            "unknown setting 'blocksize'",
        ),
        (
            "bs=4K",
            "cache=cold",
            "name the same settings on both sides",
        ),
        ("bs=4K", "bs=4096", "select the same points"),
        (
            "bs=8K",
            "bs=64K",
            "no point of the input has bs=8K; its points have block_size 4K, 64K, 1M",
        ),
        ("bs", "bs=64K", "not KEY=VALUE"),
    ] {
        let o = compare(
            &dir,
            &[sweep.as_os_str(), "--pair".as_ref(), a.as_ref(), b.as_ref()],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{a} {b}: {err}");
        assert!(
            err.contains("--pair: ") && err.contains(want) && err.trim_end().lines().count() == 1,
            "{a} {b}: {err}"
        );
    }
    // One input without --pair: NEW is missing, said so.
    let o = compare(&dir, &[sweep.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("NEW: missing") && err.contains("--pair"),
        "{err}"
    );
    // `compare --help` documents the verdicts and the pairings.
    let help = bin("diskscope")
        .args(["compare", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for w in [
        "--pair <A> <B>",
        "--margin <PCT>",
        "no change",
        "block_size=4K block_size=64K",
        "two single-point results",
    ] {
        assert!(help.contains(w), "{w}: {help}");
    }
}

#[test]
fn an_outlier_is_named_by_its_rep_value_and_rule_in_every_format() {
    let dir = tmp();
    let mut old = generated(8, 500.0, 1.0, 14);
    old[4] = 120.0; // rep 5: something else ran
    let old = fixture(&dir, "old.csv", &points_csv(&[("x", "1M", "warm", &old)]));
    // NEW evenly spread over ±1 % (a uniform sample of 8 can itself show MAD outliers).
    let even: Vec<f64> = (0..8)
        .map(|i| 495.0 + 10.0 * f64::from(i * 3 % 8) / 7.0)
        .collect();
    let new = fixture(&dir, "new.csv", &points_csv(&[("x", "1M", "warm", &even)]));
    let out = compare_ok(&dir, &[old.as_os_str(), new.as_os_str()]);
    let line = out
        .lines()
        .find(|l| l.starts_with("outlier: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.starts_with("outlier: x: read pread 1M sequential warm T1: MiB/s: OLD rep 5 = 120 (modified z-score ")
            && line.contains("> 3.5, of 8 repetitions): left out of the spread"),
        "{line}"
    );
    // Ranks keep it in the test and still find the sides the same; the spread is the bulk's.
    assert!(
        mib_line(&out)
            .trim_end()
            .ends_with("no change (within ±5%)"),
        "{out}"
    );
    let md = compare_ok(
        &dir,
        &[old.as_os_str(), new.as_os_str(), "--markdown".as_ref()],
    );
    assert!(
        md.contains("- outlier: x: read pread 1M sequential warm T1: MiB/s: OLD rep 5 = 120"),
        "{md}"
    );
    let csv_text = compare_ok(&dir, &[old.as_os_str(), new.as_os_str(), "--csv".as_ref()]);
    let rows = csv_maps(&csv_text);
    let r = rows.iter().find(|r| r["metric"] == "mib_s").unwrap();
    assert!(r["old_dropped"].starts_with("rep 5 = 120 (z "), "{r:?}");
    assert_eq!(
        (r["old_outliers"].as_str(), r["new_dropped"].as_str()),
        ("1", "")
    );
}

#[test]
fn a_real_sweep_compares_two_of_its_block_sizes_with_pair() {
    // End to end from real runs: the tiny sweep's 64K and 1M warm points (8 repetitions each).
    let dir = tmp();
    let a = batch(&dir, "a", &[]);
    let out = compare_ok(
        &dir,
        &[
            a.as_os_str(),
            "--pair".as_ref(),
            "bs=64K".as_ref(),
            "bs=1M".as_ref(),
        ],
    );
    let line = mib_line(&out);
    assert!(
        line.starts_with("warm: read pread 64K sequential warm T1 vs block_size 1M"),
        "{out}"
    );
    // Whatever this machine made of them, the verdict is one of compare's, with its reason.
    let verdict = line.split("  ").last().unwrap().trim();
    assert!(
        ["faster", "slower", "no change (within ±5%)"]
            .iter()
            .any(|v| verdict.starts_with(v))
            || verdict.starts_with("inconclusive: "),
        "{line}"
    );
    assert!(out.contains("1 matched points"), "{out}");
}
