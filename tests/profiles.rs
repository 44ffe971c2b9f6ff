//! The limits profile as outside input and as a judge (issues 21 and 19): a profile path that is
//! a FIFO or a symbolic link to `/dev/zero` neither hangs nor exhausts `run` and `fast`; values
//! out of bounds are ignored with one warning naming the file and the key; strings from a profile
//! reach the terminal escaped; and a run above its bound by more than the profile's spread says
//! the profile does not explain it instead of printing a share over 100%; a run whose buffer
//! memory (issue 20) has no ceiling in the profile is told so instead of bounded by another
//! memory's. Every profile here is
//! planted (the synthetic one, edited), none is measured, except one `limits --quick`.

use crate::util::{bin, p, tmp};
use diskscope::explain::context::Context;
use diskscope::explain::profile::{now_unix_s, profile_file_name, Profile};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the profile of the device under `dir` lives in `cache` (as `XDG_CACHE_HOME`).
fn profile_path(cache: &Path, dir: &Path) -> PathBuf {
    let profiles = cache.join("diskscope/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    profiles.join(profile_file_name(&Context::collect(dir)))
}

/// Plants the synthetic profile (fresh, for the device under `dir`) with its CPU and memory
/// ceilings times `scale`, edited as JSON by `edit`; returns its path.
fn plant(
    cache: &Path,
    dir: &Path,
    scale: f64,
    edit: impl FnOnce(&mut serde_json::Value),
) -> PathBuf {
    let mut p = Profile::synthetic_example();
    for m in &mut p.methods {
        m.ops_per_s *= scale;
    }
    for m in &mut p.memory {
        m.copy_mib_s *= scale;
        m.xor_mib_s *= scale;
    }
    p.context = Context::collect(dir);
    p.measured_unix_s = now_unix_s();
    let mut v = serde_json::to_value(&p).unwrap();
    edit(&mut v);
    let path = profile_path(cache, dir);
    std::fs::write(&path, serde_json::to_string(&v).unwrap()).unwrap();
    path
}

/// A 64 KiB data file in `dir`.
fn data(dir: &tempfile::TempDir) -> PathBuf {
    let f = p(dir, "data.bin");
    std::fs::write(&f, vec![7u8; 64 << 10]).unwrap();
    f
}

/// `run FILE -r 4K 16 --cache warm [extra]` with the cache; (stdout, stderr), after checking
/// that it succeeded within 20 s.
fn run(file: &Path, cache: &Path, extra: &[&str]) -> (String, String) {
    let out = bin("run")
        .arg(file)
        .args(["-r", "4K", "16", "--cache", "warm"])
        .args(extra)
        .env("XDG_CACHE_HOME", cache)
        .timeout(Duration::from_secs(20))
        .output()
        .expect("run ended");
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "run failed or hung:\n{o}\n{e}");
    (o, e)
}

/// `fast FILE` with the cache; stderr, after checking that it succeeded within 20 s.
fn fast(file: &Path, cache: &Path) -> String {
    let out = bin("fast")
        .arg(file)
        .env("XDG_CACHE_HOME", cache)
        .timeout(Duration::from_secs(20))
        .output()
        .expect("fast ended");
    let e = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "fast failed or hung:\n{e}");
    e
}

/// The warning lines about an ignored profile.
fn ignored(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("warning: ignoring the limits profile"))
        .collect()
}

#[test]
fn a_profile_path_that_is_a_fifo_hangs_neither_run_nor_fast() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let f = data(&dir);
    let fifo = profile_path(&cache, dir.path());
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other preconditions.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (xor, err) = run(&f, &cache, &[]);
    assert_eq!(xor.trim(), "00000000");
    let lines = ignored(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("not a regular file (a FIFO)"), "{err}");
    let err = fast(&f, &cache);
    assert_eq!(ignored(&err).len(), 1, "{err}");
}

#[test]
fn a_profile_symlinked_to_dev_zero_is_refused_unread_by_run_and_fast() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let f = data(&dir);
    std::os::unix::fs::symlink("/dev/zero", profile_path(&cache, dir.path())).unwrap();
    let (_, err) = run(&f, &cache, &[]);
    let lines = ignored(&err);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("symbolic link"), "{err}");
    let err = fast(&f, &cache);
    assert_eq!(ignored(&err).len(), 1, "{err}");
}

#[test]
fn profile_values_out_of_bounds_are_ignored_with_one_warning_naming_the_file_and_the_key() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let f = data(&dir);
    // Zero, negative, huge, and u64::MAX written as an integer.
    let cases: [(&str, &str, serde_json::Value); 4] = [
        ("methods", "ops_per_s", 0.0.into()),
        ("memory", "copy_mib_s", (-1.0).into()),
        ("memory", "xor_mib_s", 1e308.into()),
        ("methods", "ops_per_s", u64::MAX.into()),
    ];
    for (list, key, value) in cases {
        let path = plant(&cache, dir.path(), 1.0, |v| {
            for item in v[list].as_array_mut().unwrap() {
                item[key] = value.clone();
            }
        });
        let (json, err) = run(&f, &cache, &["--json"]);
        let lines = ignored(&err);
        assert_eq!(lines.len(), 1, "{key} = {value}: {err}");
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(lines[0].contains(name), "names the file: {err}");
        assert!(
            lines[0].contains(&format!("].{key}` = ")),
            "names the key: {err}"
        );
        for text in [&err, &json] {
            for bad in ["inf ", "NaN", "-0.0", "1220851496236280971264"] {
                assert!(!text.contains(bad), "{bad} in {text}");
            }
        }
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(doc["explanations"][0].is_null(), "no explanation: {doc}");
        assert!(doc["results"][0]["bound"].is_null());
    }
}

#[test]
fn strings_from_a_stored_profile_reach_the_terminal_escaped() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    plant(&cache, dir.path(), 1.0, |v| {
        v["context"]["cpu_model"] = "\u{1b}]0;pwned\u{7}CPU".into();
        v["notes"] = serde_json::json!(["note\u{1b}[2J"]);
        v["provenance"]["file"] = "/x/\u{1b}[31mred".into();
    });
    let out = bin("diskscope")
        .arg("limits")
        .current_dir(dir.path())
        .env("XDG_CACHE_HOME", &cache)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(text.contains("\\u{1b}]0;pwned\\u{7}CPU"), "{text}");
    assert!(text.contains("measured on /x/\\u{1b}[31mred"), "{text}");
    assert!(text.contains("spread over 3 tries"), "{text}");
}

#[test]
fn run_json_fills_the_bound_columns_its_explanation_holds_and_names_ops_as_ops() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let f = data(&dir);
    plant(&cache, dir.path(), 1000.0, |_| {});
    let (json, _) = run(&f, &cache, &["--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (r, e) = (&doc["results"][0], &doc["explanations"][0]);
    assert!(r["bound"].as_str().unwrap().ends_with("-bound"), "{r}");
    for k in ["bound", "bound_mib_s", "pct_of_bound"] {
        assert_eq!(r[k], e[k], "{k}");
    }
    assert!(e["pct_of_bound"].as_f64().unwrap() < 50.0, "{e}");
    assert_eq!(r["bound_hint"], e["hint"]);
    // The predicted rate is in operations per second, beside the block size it is for.
    assert!(e.get("ops_per_s").is_none(), "{e}");
    assert_eq!(e["block_size_bytes"], 4096);
    let (mib_s, ops) = (
        e["bound_mib_s"].as_f64().unwrap(),
        e["bound_ops_per_s"].as_f64().unwrap(),
    );
    assert!(
        (ops * 4096.0 / 1048576.0 - mib_s).abs() / mib_s < 1e-9,
        "{e}"
    );
    assert_eq!(e["profile_error_pct"], 10.0);
    assert_eq!(e["explained"], true);
}

/// Every `N%` in `text` except the profile's `±N%`.
fn shares(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices('%') {
        let head = &text[..i];
        let start = head
            .char_indices()
            .rfind(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
            .map_or(0, |(j, c)| j + c.len_utf8());
        if start > 0 && head[..start].ends_with('±') {
            continue;
        }
        if let Ok(v) = head[start..].parse() {
            out.push(v);
        }
    }
    out
}

#[test]
fn a_run_above_its_bound_beyond_the_profiles_spread_says_the_profile_does_not_explain_it() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let f = data(&dir);
    // A machine a thousand times slower than this one: every run is far above its bound.
    plant(&cache, dir.path(), 1e-3, |_| {});
    let (json, err) = run(&f, &cache, &["--json"]);
    assert!(
        err.contains("above it by more than the profile's ±10%: the profile does not explain this run: `diskscope limits --refresh`"),
        "{err}"
    );
    for pct in shares(&err) {
        assert!(
            pct <= 110.0,
            "a share over 100% beyond the spread: {pct} in {err}"
        );
    }
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let (r, e) = (&doc["results"][0], &doc["explanations"][0]);
    assert_eq!(e["explained"], false, "{e}");
    assert!(
        r["bound_hint"]
            .as_str()
            .unwrap()
            .contains("does not explain"),
        "{r}"
    );

    // A profile stored before the spread was kept: its error is unknown, so it bounds nothing
    // and the line doubts the profile, not the run; the verdict has no above_ceiling.
    plant(&cache, dir.path(), 1e-3, |v| {
        let o = v.as_object_mut().unwrap();
        o.remove("spread");
        o.remove("provenance");
    });
    let (_, err) = run(&f, &cache, &[]);
    assert!(
        err.contains("no trustworthy ceiling for this path (its error is unknown"),
        "{err}"
    );
    assert!(!err.contains("above_ceiling"), "{err}");
    assert!(
        err.contains("warning: the limits profile may not hold"),
        "{err}"
    );
    assert!(shares(&err).iter().all(|&p| p <= 100.0), "{err}");
}

#[test]
fn a_ceiling_family_with_wide_tries_or_measured_under_pressure_bounds_nothing() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let f = data(&dir);
    for (what, edit) in [
        (
            "spread 74%",
            Box::new(|v: &mut serde_json::Value| {
                v["spread"]["methods_pct"] = 74.0.into();
            }) as Box<dyn FnOnce(&mut serde_json::Value)>,
        ),
        (
            "measured under load",
            Box::new(|v: &mut serde_json::Value| {
                v["spread"]["stalls"]["methods"]["cpu_some_pct"] = 80.0.into();
            }),
        ),
    ] {
        // A thousand times slower than this machine: the run is far above every bound.
        plant(&cache, dir.path(), 1e-3, edit);
        let (json, err) = run(&f, &cache, &["--json"]);
        assert!(
            err.contains("no trustworthy ceiling for this path") && err.contains(what),
            "{what}: {err}"
        );
        assert!(!err.contains("above_ceiling"), "{what}: {err}");
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        let r = &doc["results"][0];
        assert!(
            !r["reasons"].as_str().unwrap().contains("above_ceiling"),
            "{r}"
        );
        assert!(
            r["bound_hint"]
                .as_str()
                .unwrap()
                .contains("no trustworthy ceiling"),
            "{r}"
        );
    }
}

#[test]
fn a_profile_measured_under_load_is_marked_wherever_it_is_used() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let f = data(&dir);
    plant(&cache, dir.path(), 1000.0, |v| {
        v["provenance"]["others_cpu_pct"] = 70.0.into();
    });
    let (_, err) = run(&f, &cache, &[]);
    assert!(
        err.contains("measured under load (other processes used 70% of the CPUs"),
        "{err}"
    );
    assert!(err.contains("limits --refresh"), "{err}");
}

#[test]
fn limits_quick_does_not_replace_a_full_profile_without_saying_so() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let work = p(&dir, "work");
    std::fs::create_dir(&work).unwrap();
    let path = plant(&cache, &work, 1.0, |_| {});
    let before = std::fs::read(&path).unwrap();
    let out = bin("diskscope")
        .args(["limits", "--quick", "--refresh"])
        .current_dir(&work)
        .env("XDG_CACHE_HOME", &cache)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("--quick did not replace the full profile"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the full profile stays"
    );
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "no test file left"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--quick, in "),
        "the quick figures are shown: {text}"
    );
}

/// The explorer's "why" rows for a live run of `mib_per_interval` MiB per 100 ms with the
/// synthetic profile (pread 1 MiB warm: copy + XOR bound at 4 GiB/s), on a `width`×`height`
/// screen.
fn explorer_screen(mib_per_interval: u64, width: u16, height: u16) -> String {
    use diskscope::cache::Residency;
    use diskscope::measure::{new_latency_histogram, Snapshot, SnapshotKind};
    use diskscope::runner::PreparedMeta;
    use diskscope::tui::app::{Action, App};
    use diskscope::tui::session::Update;
    let mut app = App::new(
        PathBuf::from("/data/big.bin"),
        1 << 30,
        PathBuf::from("/data/.big.bin.diskscope-scratch"),
        PathBuf::from("diskscope-results/tui-test.csv"),
    );
    app.explored.profile = Some((Profile::synthetic_example(), None));
    let Action::Start { id, spec } = app.start() else {
        panic!("the explorer starts a run");
    };
    app.apply(Update::Started {
        id,
        meta: Box::new(PreparedMeta {
            spec: spec.clone(),
            file_size: 1 << 30,
            total: 1 << 30,
            residency_before: Some(Residency {
                resident_pages: 10,
                total_pages: 10,
            }),
        }),
        workers: 1,
        notes: vec![],
    });
    for i in 1..=10 {
        let mut latency = new_latency_histogram();
        let ops = mib_per_interval;
        latency.record_n(100_000, ops).unwrap();
        app.apply(Update::Snapshot {
            id,
            snapshot: Box::new(Snapshot {
                worker: 0,
                at_ns: i * 100_000_000,
                interval_ns: 100_000_000,
                bytes: mib_per_interval << 20,
                ops,
                latency,
                kind: SnapshotKind::Interval,
                ops_log: Vec::new(),
                paced: None,
                mixed: None,
            }),
        });
    }
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| f.render_widget(&app, f.area())).unwrap();
    let buf = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                + "\n"
        })
        .collect()
}

#[test]
fn the_explorer_flags_a_run_its_profile_does_not_explain_instead_of_a_share_over_100() {
    // 3 GiB/s per 100 ms: 30 GiB/s against a bound of 4 GiB/s.
    let screen = explorer_screen(3000, 100, 30);
    assert!(
        screen.contains("⚠ memory-bound 4.0 GiB/s · over it: limits --refresh"),
        "{screen}"
    );
    assert!(
        screen.contains("the profile does not explain this run"),
        "{screen}"
    );
    assert!(shares(&screen).iter().all(|&p| p <= 100.0), "{screen}");
    // 430 MiB per 100 ms: 105% of the bound, within the profile's ±10%.
    let screen = explorer_screen(430, 100, 30);
    assert!(screen.contains("· 105% (±10%)"), "{screen}");
    assert!(screen.contains("measured 4.2 (105%, within"), "{screen}");
}

/// `run FILE ARGS` with the cache; (stdout, stderr) after checking that it succeeded.
fn run_with(file: &Path, cache: &Path, args: &[&str]) -> (String, String) {
    let out = bin("run")
        .arg(file)
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .timeout(Duration::from_secs(30))
        .output()
        .expect("run ended");
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "run failed:\n{o}\n{e}");
    (o, e)
}

/// The buffer memory a `run --json` result records.
fn buffers_of(json: &str) -> String {
    let doc: serde_json::Value = serde_json::from_str(json).unwrap();
    doc["results"][0]["buffers"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn an_o_direct_run_with_plain_buffers_is_not_bounded_by_a_device_measured_with_huge_pages() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let f = p(&dir, "data4m.bin");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    // The synthetic profile's device was measured with huge-page buffers only.
    plant(&cache, dir.path(), 1.0, |_| {});
    let args = |buffers: &'static str| {
        vec![
            "-r",
            "1M",
            "4",
            "--direct",
            "--method",
            "io_uring",
            "--queue-depth",
            "4",
            "--json",
            "--buffers",
            buffers,
        ]
    };
    let out = bin("run")
        .arg(&f)
        .args(args("plain"))
        .env("XDG_CACHE_HOME", &cache)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("O_DIRECT") {
        eprintln!(
            "skipped: O_DIRECT is refused under {}",
            dir.path().display()
        );
        return;
    }
    assert!(out.status.success(), "{err}");
    assert_eq!(buffers_of(&String::from_utf8_lossy(&out.stdout)), "plain");
    assert!(
        err.contains("no bound: the limits profile has no O_DIRECT ceiling with plain 4 KiB-page buffers (it was measured with huge-page buffers only"),
        "{err}"
    );
    assert!(!err.contains("device-bound"), "{err}");
    // Huge pages: bounded by the device, and the line names the memory.
    let (json, err) = run_with(&f, &cache, &args("thp"));
    if buffers_of(&json) != "thp" {
        eprintln!("skipped the huge-page half: the kernel gave no transparent huge page");
        return;
    }
    assert!(
        err.contains("device-bound") && err.contains("huge-page buffers"),
        "{err}"
    );
    assert!(!err.contains("no bound"), "{err}");
}

#[test]
fn a_copy_ceiling_measured_into_plain_pages_does_not_bound_a_run_into_huge_pages() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let f = p(&dir, "data4m.bin");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    // Copy levels measured into plain pages only, as a profile of this version records them.
    plant(&cache, dir.path(), 1000.0, |v| {
        for m in v["memory"].as_array_mut().unwrap() {
            m["read_levels"] = serde_json::json!([
                {"buffer_bytes": 65536, "copy_xor_mib_s": 2.5e6, "buffers": "plain"},
                {"buffer_bytes": 1048576, "copy_xor_mib_s": 2.0e6, "buffers": "plain"}
            ]);
        }
    });
    let args = |buffers: &'static str| {
        vec![
            "-r",
            "1M",
            "4",
            "--method",
            "pread",
            "--cache",
            "warm",
            "--json",
            "--buffers",
            buffers,
        ]
    };
    let (json, err) = run_with(&f, &cache, &args("plain"));
    assert_eq!(buffers_of(&json), "plain");
    assert!(err.contains("-bound"), "{err}");
    assert!(!err.contains("no bound"), "{err}");
    let (json, err) = run_with(&f, &cache, &args("thp"));
    if buffers_of(&json) != "thp" {
        eprintln!("skipped the huge-page half: the kernel gave no transparent huge page");
        return;
    }
    assert!(
        err.contains("no bound: the limits profile has no page-cache copy ceiling with huge-page buffers (it was measured with plain 4 KiB-page buffers only"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(doc["results"][0]["bound"].is_null(), "{doc}");
}
