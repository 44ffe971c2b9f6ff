//! `diskscope --batch`: sweep fixtures (valid and invalid), a real quick sweep end to end, CSV
//! columns, plots, failing points, Ctrl-C and the promise never to write to a user's file.

use crate::util::{bin, p, tmp, write_varied_file};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sweeps")
        .join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no fixtures in {}", dir.display());
    v
}

/// The `# expect: ...` first line of a fixture.
fn expectation(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap_or_default();
    first
        .strip_prefix("# expect: ")
        .unwrap_or_else(|| panic!("{} lacks a `# expect: ` first line", path.display()))
        .to_string()
}

fn write_sweep(dir: &tempfile::TempDir, text: &str) -> PathBuf {
    let path = p(dir, "sweep.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `diskscope --batch SWEEP --out OUT` to the end.
fn run_batch(sweep: &Path, out: &Path) -> std::process::Output {
    bin("diskscope")
        .arg("--batch")
        .arg(sweep)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn csv_rows(path: &Path) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r.records().map(|x| x.expect("every row parses")).collect();
    (header, rows)
}

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

/// The columns the issue asks for, in the order of the result type.
const RUN_COLUMNS: [&str; 54] = [
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
    "buffers",
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
    "bound",
    "bound_mib_s",
    "pct_of_bound",
    "bound_hint",
    "verdict",
    "reasons",
    "why",
    // The run's own facts (issue 36), after every other column.
    "run_read_bytes",
    "run_write_bytes",
    "others_read_bytes",
    "others_write_bytes",
    "below_read_bytes",
    "below_write_bytes",
    "hole_bytes",
    "unwritten_bytes",
    "encoded_bytes",
    "shared_bytes",
    "cached_before_pct",
    "cached_after_pct",
    "dirty_after_bytes",
    "psi_cpu_some_pct",
    "psi_io_some_pct",
    "psi_memory_some_pct",
    "steal_pct",
    "device_chain",
    "read_ahead_kb",
];

#[test]
fn every_valid_fixture_and_ready_sweep_is_accepted_and_its_plan_printed() {
    let out = tmp();
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sweeps");
    let mut ready: Vec<PathBuf> = std::fs::read_dir(assets)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    ready.sort();
    assert!(ready.len() >= 7, "the lab's ready sweeps are missing");
    for f in fixtures("valid").into_iter().chain(ready) {
        let a = bin("diskscope")
            .arg("--batch")
            .arg(&f)
            .arg("--dry-run")
            .arg("--out")
            .arg(out.path().join("plan"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&a.stdout);
        assert!(
            a.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&a.stderr)
        );
        assert!(stdout.contains("total: "), "{}: {stdout}", f.display());
        if f.to_string_lossy().contains("fixtures") {
            let want = expectation(&f);
            assert!(
                stdout.contains(&want),
                "{}: expected `{want}` in\n{stdout}",
                f.display()
            );
        }
    }
    assert!(
        !out.path().join("plan").exists(),
        "--dry-run must not create the output directory"
    );
}

#[test]
fn every_invalid_fixture_fails_in_one_line_naming_the_key_and_line() {
    let out = tmp();
    // Some fixtures name a user's file by a relative path (`Cargo.toml`): one in the directory
    // they run in, not the checkout's.
    let work = p(&out, "work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("Cargo.toml"), "[package]\nname = \"theirs\"\n").unwrap();
    for f in fixtures("invalid") {
        let want = expectation(&f);
        let a = bin("diskscope")
            .arg("--batch")
            .arg(&f)
            .arg("--dry-run")
            .arg("--out")
            .arg(out.path())
            .current_dir(&work)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&a.stderr);
        assert_eq!(a.status.code(), Some(2), "{}: {stderr}", f.display());
        assert!(
            stderr.contains(&want),
            "{}: expected `{want}` in `{stderr}`",
            f.display()
        );
        assert_eq!(
            stderr.trim_end().lines().count(),
            1,
            "{}: {stderr}",
            f.display()
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(a.stdout.is_empty(), "{}: nothing is planned", f.display());
    }
}

#[test]
fn the_quick_sweep_runs_for_real_and_writes_csvs_summaries_and_plots() {
    let out = tmp();
    let dir = out.path().join("results");
    let quick = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sweeps/quick.toml");
    let a = run_batch(&quick, &dir);
    let stderr = String::from_utf8_lossy(&a.stderr);
    let stdout = String::from_utf8_lossy(&a.stdout);
    let uring = diskscope::engine::probe_io_uring();
    if let Err(why) = &uring {
        // The io_uring points fail (recorded, exit 1); everything else must still work.
        eprintln!("note: io_uring is unavailable here ({why}); expecting its points to fail");
        assert_eq!(a.status.code(), Some(1), "{stderr}");
    } else {
        assert!(a.status.success(), "{stderr}");
        assert!(stdout.contains("io_uring nop"), "{stdout}");
    }
    assert!(
        stdout.starts_with("sweep quick"),
        "the plan comes first: {stdout}"
    );
    assert!(
        stdout.contains("mean MiB/s") && stdout.contains("getpid"),
        "{stdout}"
    );
    assert!(
        stderr.contains("[1/"),
        "plain progress lines when stderr is not a terminal: {stderr}"
    );

    let (header, rows) = csv_rows(&dir.join("block-size.csv"));
    assert_eq!(header, RUN_COLUMNS);
    assert_eq!(rows.len(), 3 * 2 * 3, "3 block sizes x warm/cold x 3 reps");
    let (mib, err, cache) = (
        col(&header, "mib_s"),
        col(&header, "error"),
        col(&header, "cache"),
    );
    for r in &rows {
        assert!(r[mib].parse::<f64>().unwrap() > 0.0, "{r:?}");
        assert_eq!(&r[err], "", "{r:?}");
    }
    assert!(rows.iter().any(|r| &r[cache] == "cold") && rows.iter().any(|r| &r[cache] == "warm"));

    let (sh, srows) = csv_rows(&dir.join("block-size-summary.csv"));
    for c in [
        "mean_mib_s",
        "median_mib_s",
        "min_mib_s",
        "max_mib_s",
        "stddev_mib_s",
    ] {
        col(&sh, c);
    }
    assert_eq!(srows.len(), 6);
    let (mh, mrows) = csv_rows(&dir.join("methods.csv"));
    for r in &mrows {
        let failed = !r[col(&mh, "error")].is_empty();
        assert_eq!(
            failed,
            uring.is_err() && &r[col(&mh, "method")] == "io_uring",
            "{r:?}"
        );
    }
    let (dh, drows) = csv_rows(&dir.join("dd.csv"));
    assert_eq!(&drows[0][col(&dh, "method")], "dd");
    let (ch, crows) = csv_rows(&dir.join("syscalls.csv"));
    assert!(crows.iter().any(|r| &r[col(&ch, "syscall")] == "getpid"));

    for svg in ["block-size", "methods", "syscalls", "dd", "compare"] {
        let text = std::fs::read_to_string(dir.join(format!("{svg}.svg"))).unwrap();
        assert!(
            text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
            "{svg}.svg"
        );
        assert!(text.contains("<rect"), "{svg}.svg has bars");
    }
    assert!(
        !dir.join("diskscope-testfile.bin").exists(),
        "the test file is removed"
    );
}

#[test]
fn a_failing_point_is_recorded_with_its_error_and_the_sweep_goes_on_with_exit_1() {
    let d = tmp();
    let sweep = write_sweep(
        &d,
        r#"
[file]
create = "64K"
[[experiment]]
name = "broken"
kind = "command"
command = "echo 'no such tool' >&2; exit 3"
reps = 2
[[experiment]]
name = "after"
kind = "throughput"
block_size = "4K"
reps = 1
seconds = 0.1
"#,
    );
    let out = p(&d, "out");
    let a = run_batch(&sweep, &out);
    assert_eq!(
        a.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&a.stderr)
    );
    let (h, rows) = csv_rows(&out.join("broken.csv"));
    assert_eq!(rows.len(), 2);
    assert!(
        rows[0][col(&h, "error")].contains("no such tool"),
        "{:?}",
        rows[0]
    );
    let (_, after) = csv_rows(&out.join("after.csv"));
    assert_eq!(after.len(), 1, "the sweep went on after the failing point");
}

#[test]
fn a_read_sweep_leaves_the_named_file_untouched_and_writes_need_write_true() {
    let d = tmp();
    let file = p(&d, "data.bin");
    let data = write_varied_file(&file, 256 * 1024, 9);
    let sweep = |extra: &str| {
        write_sweep(
            &d,
            &format!(
                "[file]\npath = \"{}\"\n{extra}\n[[experiment]]\nname = \"x\"\nkind = \"throughput\"\nblock_size = [\"4K\", \"64K\"]\nreps = 1\nseconds = 0.1\n{}",
                file.display(),
                if extra.is_empty() { "" } else { "operation = [\"read\", \"write\"]\n" }
            ),
        )
    };
    let out = p(&d, "out");
    let a = run_batch(&sweep(""), &out);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(
        std::fs::read(&file).unwrap(),
        data,
        "a read sweep never changes the file"
    );

    // A second batch writes to its own --out (an old one's files are refused without --force).
    let out = p(&d, "out2");
    let a = run_batch(&sweep("write = true"), &out);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    assert_eq!(
        std::fs::metadata(&file).unwrap().len(),
        data.len() as u64,
        "writes keep the size"
    );
    let (h, rows) = csv_rows(&out.join("x.csv"));
    assert!(rows.iter().any(|r| &r[col(&h, "operation")] == "write"));
    assert!(file.exists());
}

#[test]
fn a_kept_test_file_survives_writes_intact_and_is_reused_next_time() {
    let d = tmp();
    let file = p(&d, "kept.bin");
    let sweep = write_sweep(
        &d,
        &format!(
            "[file]\npath = \"{}\"\ncreate = \"1M\"\nkeep = true\n[[experiment]]\nname = \"rw\"\nkind = \"throughput\"\noperation = [\"write\", \"read\"]\npattern = [\"random\", \"sequential\"]\nblock_size = [\"3K\", \"64K\"]\nreps = 1\nseconds = 0.1\n",
            file.display()
        ),
    );
    for round in 0..2 {
        let a = run_batch(&sweep, &p(&d, &format!("out{round}")));
        assert!(
            a.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&a.stderr)
        );
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20);
    }
    // Still our pattern: the XOR of a full sequential read equals the pattern's XOR.
    let bytes = std::fs::read(&file).unwrap();
    let mut want = vec![0u8; bytes.len()];
    diskscope::pattern::fill(diskscope::pattern::DEFAULT_SEED, 0, &mut want);
    assert!(
        bytes == want,
        "the kept file holds the pattern after the writes"
    );
}

#[test]
fn ctrl_c_stops_within_a_second_leaving_valid_csvs_and_no_test_file() {
    let d = tmp();
    let out = p(&d, "out");
    let sweep = write_sweep(
        &d,
        "[file]\ncreate = \"4M\"\n[[experiment]]\nname = \"long\"\nkind = \"throughput\"\nblock_size = \"64K\"\nreps = 50\nseconds = 0.3\n",
    );
    let mut child = crate::util::command("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let csv = out.join("long.csv");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&csv)
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 3
    {
        assert!(Instant::now() < deadline, "no rows appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let signalled = Instant::now();
    let status = child.wait().unwrap();
    assert!(
        signalled.elapsed() < Duration::from_secs(1),
        "took {:?}",
        signalled.elapsed()
    );
    assert_eq!(status.code(), Some(130));
    let (h, rows) = csv_rows(&csv);
    assert_eq!(h, RUN_COLUMNS);
    assert!(rows.len() >= 2 && rows.len() < 50, "{} rows", rows.len());
    for r in &rows {
        assert_eq!(r.len(), RUN_COLUMNS.len());
        assert!(
            r[col(&h, "mib_s")].parse::<f64>().unwrap() > 0.0,
            "only complete runs: {r:?}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !out.join("diskscope-testfile.bin").exists(),
        "left: {left:?}"
    );
    assert!(
        out.join("long-summary.csv").exists(),
        "summaries of the finished runs are written"
    );
}

#[test]
fn a_locality_experiment_runs_through_batch_mode_with_a_grouped_plot() {
    let d = tmp();
    let layout = p(&d, "layout");
    let sweep = write_sweep(
        &d,
        &format!(
            r#"
[[experiment]]
name = "loc"
kind = "locality"
params = {{ dir = "{}", files = 60, file_size = "4K", order = ["sequential", "random"], reps = 2 }}
"#,
            layout.display()
        ),
    );
    let out = p(&d, "out");
    let a = run_batch(&sweep, &out);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let (h, rows) = csv_rows(&out.join("loc.csv"));
    // 2 layouts × 2 orders × 2 repetitions, all with the same XOR per order.
    assert_eq!(rows.len(), 8);
    let layouts: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| &r[col(&h, "method")]).collect();
    assert_eq!(layouts.into_iter().collect::<Vec<_>>(), ["dir", "packed"]);
    assert!(rows.iter().all(|r| r[col(&h, "ops")] == *"60"));
    let svg = std::fs::read_to_string(out.join("loc.svg")).unwrap();
    assert!(svg.contains("packed") && svg.contains("sequential"));
}

#[test]
fn a_throughput_sweep_writes_its_fio_companion_with_one_fio_line_per_point() {
    let t = tmp();
    let sweep = write_sweep(
        &t,
        "name = \"f\"\n[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"bs\"\n\
         kind = \"throughput\"\nblock_size = [\"4K\", \"64K\"]\nthreads = [1, 2]\nreps = 1\n\
         seconds = 0.05\n[[experiment]]\nname = \"calls\"\nkind = \"syscalls\"\nreps = 1\n\
         seconds = 0.01\n",
    );
    let dir = t.path().join("out");
    let a = run_batch(&sweep, &dir);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let text = std::fs::read_to_string(dir.join("bs-fio.txt")).expect("bs-fio.txt is written");
    let fio: Vec<&str> = text.lines().filter(|l| l.starts_with("fio ")).collect();
    assert_eq!(fio.len(), 4, "2 block sizes x 2 thread counts:\n{text}");
    for bs in ["--bs=4096", "--bs=65536"] {
        // One job is fio's default; two are spelled out.
        let with_bs = || fio.iter().filter(|l| l.contains(bs));
        assert_eq!(with_bs().count(), 2, "{bs}:\n{text}");
        assert_eq!(
            with_bs().filter(|l| l.contains("--numjobs=2")).count(),
            1,
            "{bs}:\n{text}"
        );
    }
    assert!(
        text.lines()
            .all(|l| l.starts_with("fio ") || l.starts_with('#')),
        "{text}"
    );
    assert!(
        !dir.join("calls-fio.txt").exists(),
        "a syscalls experiment has no fio equivalent"
    );
}
