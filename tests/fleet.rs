//! Fleet runs on MPI: three ranks on this host (`mpirun --oversubscribe -n 3`). These tests need
//! a build with `--features mpi` and OpenMPI's `mpirun`; without either they pass with a printed
//! reason (CI's fleet block installs OpenMPI and runs `cargo test --features mpi --test main fleet`).

use crate::util::{bin, csv_file_maps, is_root, reference_xor, tmp};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Why the fleet tests cannot run here, if they cannot.
fn skip_reason() -> Option<&'static str> {
    if !cfg!(feature = "mpi") {
        return Some("built without --features mpi");
    }
    let ok = Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (!ok).then_some("mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)")
}

macro_rules! need_mpi {
    () => {
        if let Some(why) = skip_reason() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

fn bin_path(name: &str) -> PathBuf {
    PathBuf::from(bin(name).get_program())
}

/// `mpirun` with the flags this host needs (three ranks on two cores, maybe as root). Its session
/// directory goes under `scratch` (a test's temp dir): mpiruns started at once by parallel tests
/// race to create the shared default one in /tmp.
fn mpirun(scratch: &Path) -> Command {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let session = scratch.join(format!("ompi-{}", N.fetch_add(1, Ordering::SeqCst)));
    std::fs::create_dir(&session).unwrap();
    let mut c = Command::new("mpirun");
    // The ranks inherit mpirun's environment and directory: the sandbox's.
    crate::util::hermetic(&mut c);
    c.env("OMPI_MCA_orte_tmpdir_base", &session);
    c.arg("--oversubscribe");
    if is_root() {
        c.arg("--allow-run-as-root");
    }
    c.stdin(Stdio::null());
    c
}

/// Runs `c` with a hard time limit (the whole process group is killed past it).
fn run_bounded(mut c: Command, limit: Duration) -> (Output, Duration) {
    use std::os::unix::process::CommandExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    c.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let t0 = Instant::now();
    let child = c.spawn().expect("mpirun starts");
    let pid = child.id() as i32;
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            while t0.elapsed() < limit {
                if done.load(Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            // SAFETY: kill(2) on the process group of the child we started; the watchdog stops
            // as soon as the child is reaped, so it only fires while the group is ours.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        })
    };
    let out = child.wait_with_output().expect("mpirun output");
    done.store(true, Ordering::SeqCst);
    let took = t0.elapsed();
    watchdog.join().unwrap();
    assert!(took < limit, "mpirun ran past {limit:?}: {out:?}");
    (out, took)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sweep(dir: &Path, layout: &str, data: &Path, keep: bool) -> PathBuf {
    let s = dir.join("s.toml");
    std::fs::write(
        &s,
        format!(
            "name = \"fleet\"\nfleet = {{ layout = \"{layout}\", timeout_s = 20 }}\n\
             [file]\npath = \"{}\"\ncreate = \"1M\"\nkeep = {keep}\n\
             [[experiment]]\nname = \"x\"\nkind = \"throughput\"\nreps = 2\n\
             block_size = [\"64K\", \"256K\"]\noperation = [\"read\", \"write\"]\n",
            data.display()
        ),
    )
    .unwrap();
    s
}

/// Rank 0 in `lead`, ranks 1 and 2 in `rest` (MPMD), so files written by the wrong rank show.
fn batch_on_three_ranks(lead: &Path, rest: &Path, sweep: &Path) -> Output {
    let diskscope = bin_path("diskscope");
    let mut c = mpirun(sweep.parent().unwrap());
    for (n, wdir) in [(1, lead), (2, rest)] {
        if n == 2 {
            c.arg(":");
        }
        c.args(["-n", &n.to_string(), "--wdir"])
            .arg(wdir)
            .arg(&diskscope);
        c.arg("--batch").arg(sweep).args(["--out", "out"]);
    }
    let (out, _) = run_bounded(c, Duration::from_secs(120));
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

/// Checks a fleet CSV: 3 rank rows and one `all` row per repetition, the aggregate's bytes the
/// sum of the ranks'. Returns the aggregate rows.
fn check_fleet_csv(csv: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let rows = csv_file_maps(csv);
    assert_eq!(
        rows.len(),
        2 * 2 * 2 * 4,
        "2 block sizes x 2 operations x 2 reps, 4 rows each"
    );
    let mut alls = Vec::new();
    for group in rows.chunks(4) {
        let ranks: Vec<&str> = group.iter().map(|r| r["rank"].as_str()).collect();
        assert_eq!(ranks, ["0", "1", "2", "all"]);
        let sum: u64 = group[..3]
            .iter()
            .map(|r| r["bytes"].parse::<u64>().unwrap())
            .sum();
        assert_eq!(group[3]["bytes"].parse::<u64>().unwrap(), sum);
        assert!(sum > 0);
        for r in group {
            assert_eq!(r["clients"], "3");
            assert!(!r["host"].is_empty());
            assert_eq!(r["error"], "");
            // Issue 23: every rank row and the aggregate carry a verdict.
            assert!(matches!(r["verdict"].as_str(), "ok" | "suspect"), "{r:?}");
        }
        // The aggregate is suspect with every reason a rank gave.
        for rank in &group[..3] {
            for code in rank["reasons"].split(';').filter(|c| !c.is_empty()) {
                assert!(group[3]["reasons"].contains(code), "{group:?}");
                assert_eq!(group[3]["verdict"], "suspect");
            }
        }
        alls.push(group[3].clone());
    }
    alls
}

#[test]
fn a_file_per_process_sweep_on_three_ranks_sums_the_ranks_and_only_rank_0_writes_results() {
    need_mpi!();
    let d = tmp();
    let (lead, rest) = (d.path().join("lead"), d.path().join("rest"));
    std::fs::create_dir_all(&lead).unwrap();
    std::fs::create_dir_all(&rest).unwrap();
    let data = d.path().join("data.bin");
    let s = sweep(d.path(), "file-per-process", &data, false);
    let out = batch_on_three_ranks(&lead, &rest, &s);
    assert!(
        text(&out.stdout).contains("fleet: 3 ranks"),
        "{}",
        text(&out.stdout)
    );
    let alls = check_fleet_csv(&lead.join("out/x.csv"));
    assert!(alls.iter().all(|r| r["layout"] == "file-per-process"));
    assert!(lead.join("out/x-summary.csv").is_file());
    // Issue 22: the fleet's timelines, every rank's and the merged one.
    assert!(lead.join("out/x-timeline.csv").is_file());
    let t = csv_file_maps(&lead.join("out/x-ranks-timeline.csv"));
    for rank in ["0", "1", "2", "all"] {
        assert!(t.iter().any(|r| r["rank"] == rank), "no rank {rank}");
    }
    assert!(!rest.join("out").exists(), "ranks 1 and 2 wrote results");
    // The clients figure reads fleet CSVs back (one here; several rank counts in real use).
    let svg = d.path().join("clients.svg");
    let out = bin("diskscope")
        .arg("clients")
        .arg("--out")
        .arg(&svg)
        .arg(lead.join("out/x.csv"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let figure = std::fs::read_to_string(&svg).unwrap();
    assert!(figure.contains("clients (MPI ranks)"));
    for r in 0..3 {
        let f = PathBuf::from(format!("{}.{r}", data.display()));
        assert!(!f.exists(), "test file {} left behind", f.display());
    }
}

#[test]
fn a_shared_file_sweep_gives_the_files_xor_and_the_sum_of_the_ranks() {
    need_mpi!();
    let d = tmp();
    let (lead, rest) = (d.path().join("lead"), d.path().join("rest"));
    std::fs::create_dir_all(&lead).unwrap();
    std::fs::create_dir_all(&rest).unwrap();
    let data = d.path().join("data.bin");
    let s = sweep(d.path(), "shared-file", &data, true);
    batch_on_three_ranks(&lead, &rest, &s);
    let alls = check_fleet_csv(&lead.join("out/x.csv"));
    let whole = reference_xor(&std::fs::read(&data).unwrap());
    for r in alls.iter().filter(|r| r["operation"] == "read") {
        assert_eq!(r["xor"], whole, "the ranks' XORs combine to the file's");
    }
    assert!(!rest.join("out").exists(), "ranks 1 and 2 wrote results");
}

#[test]
fn run_under_mpirun_writes_a_shared_file_whose_xor_equals_a_single_runs() {
    need_mpi!();
    let d = tmp();
    let f = d.path().join("f");
    let run = bin_path("run");
    let fleet_run = |args: &[&str]| {
        let mut c = mpirun(d.path());
        c.args(["-n", "3"]).arg(&run).arg(&f).args(args);
        run_bounded(c, Duration::from_secs(60)).0
    };
    let w = fleet_run(&["-w", "64K", "47", "--fleet-layout", "shared-file"]);
    assert!(w.status.success(), "{}", text(&w.stderr));
    let fleet_xor = text(&w.stdout);
    assert_eq!(
        fleet_xor.lines().count(),
        1,
        "only rank 0 prints: {fleet_xor}"
    );
    assert!(
        text(&w.stderr).contains("fleet of 3 ranks"),
        "{}",
        text(&w.stderr)
    );
    let single = bin("run")
        .arg(&f)
        .args(["-r", "64K", "47"])
        .output()
        .unwrap();
    assert!(single.status.success());
    assert_eq!(fleet_xor, text(&single.stdout));
    let data = std::fs::read(&f).unwrap();
    assert_eq!(data.len(), 47 * 65536);
    assert_eq!(fleet_xor.trim(), reference_xor(&data));
    let r = fleet_run(&["-r", "64K", "47", "--fleet-layout", "shared-file"]);
    assert_eq!(text(&r.stdout), fleet_xor, "{}", text(&r.stderr));
    // File-per-process: one `XOR  FILE` line per rank, each the XOR of that rank's file.
    let w = fleet_run(&["-w", "4K", "10"]);
    assert!(w.status.success(), "{}", text(&w.stderr));
    let lines: Vec<String> = text(&w.stdout).lines().map(String::from).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    for (rank, line) in lines.iter().enumerate() {
        let file = PathBuf::from(format!("{}.{rank}", f.display()));
        let want = format!(
            "{}  {}",
            reference_xor(&std::fs::read(&file).unwrap()),
            file.display()
        );
        assert_eq!(line, &want);
    }
}

#[test]
fn a_shared_write_onto_an_existing_file_is_refused_by_rank_0_and_the_file_untouched() {
    need_mpi!();
    let d = tmp();
    let f = d.path().join("precious");
    std::fs::write(&f, b"keep me").unwrap();
    let mut c = mpirun(d.path());
    c.args(["-n", "3"]).arg(bin_path("run")).arg(&f);
    c.args(["-w", "4K", "8", "--fleet-layout", "shared-file"]);
    let (out, _) = run_bounded(c, Duration::from_secs(60));
    assert!(!out.status.success());
    let err = text(&out.stderr);
    // Rank 0 gets to say why: the other ranks exit 0 so mpirun does not kill it first.
    assert!(
        err.contains("error: fleet: rank 0 (") && err.contains("already exists; pass --force"),
        "{err}"
    );
    assert_eq!(std::fs::read(&f).unwrap(), b"keep me");
}

#[test]
fn a_bad_fleet_flag_is_a_usage_error_naming_the_flag() {
    need_mpi!();
    let d = tmp();
    let mut c = mpirun(d.path());
    c.args(["-n", "3"]).arg(bin_path("run"));
    c.args(["/dev/null", "-r", "4K", "1", "--fleet-layout", "striped"]);
    let (out, _) = run_bounded(c, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    // Checked before MPI starts, so every rank says it (mpirun shows each rank's stderr).
    assert!(
        err.contains(
            "error: --fleet-layout: unknown layout 'striped'; use file-per-process or shared-file"
        ),
        "{err}"
    );
}

/// The pids of this test's rank `rank` (found by the marker in their environment).
fn pids_of_rank(marker: &str, rank: usize) -> Vec<i32> {
    let want_rank = format!("OMPI_COMM_WORLD_RANK={rank}");
    let want_marker = format!("DISKSCOPE_FLEET_TEST={marker}");
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        let vars: Vec<&[u8]> = env.split(|b| *b == 0).collect();
        if vars.contains(&want_rank.as_bytes()) && vars.contains(&want_marker.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

/// Bytes a process has written so far (`wchar` of /proc/PID/io), 0 if unknown.
fn bytes_written(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("wchar: ").map(|v| v.trim().parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}

/// Starts a long shared-file write to /dev/null on three ranks, kills rank 1 once it runs, and
/// returns mpirun's output and how long it took after the kill.
fn kill_rank_1_mid_point(recovery: bool) -> (Output, Duration) {
    let marker = format!("{}-{}", std::process::id(), recovery);
    let d = tmp();
    let mut c = mpirun(d.path());
    if recovery {
        c.arg("--enable-recovery");
    }
    c.env("DISKSCOPE_FLEET_TEST", &marker)
        .args(["-x", "DISKSCOPE_FLEET_TEST"]);
    c.args(["-n", "3"]).arg(bin_path("run"));
    // 2^30 blocks: hours of writing, so the point is surely running when rank 1 dies.
    c.args(["/dev/null", "-w", "4K", "1073741824", "--force"]);
    c.args(["--fleet-layout", "shared-file", "--fleet-timeout", "3"]);
    let killer = std::thread::spawn(move || {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(100));
            // Only once rank 1 is measuring (it has written 64 MiB): a rank killed inside
            // MPI_Init can leave the others in MPI_Init, which no code of ours can time out.
            let measuring = pids_of_rank(&marker, 1)
                .into_iter()
                .find(|pid| bytes_written(*pid) > 64 << 20);
            if let Some(pid) = measuring {
                // SAFETY: kill(2) on the rank this test started (matched by its marker).
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return Some(Instant::now());
            }
        }
        None
    });
    let (out, _) = run_bounded(c, Duration::from_secs(60));
    let killed_at = killer.join().unwrap().expect("rank 1 was found and killed");
    (out, killed_at.elapsed())
}

#[test]
fn a_rank_killed_mid_point_is_named_by_rank_0_within_the_timeout() {
    need_mpi!();
    // With --enable-recovery mpirun lets the other ranks live: rank 0 notices the silence.
    let (out, after_kill) = kill_rank_1_mid_point(true);
    let err = text(&out.stderr);
    assert!(
        err.contains("error: fleet: rank 1 (")
            && err.contains("did not answer during point 1 and was silent for 3.0 s"),
        "{err}"
    );
    assert!(after_kill < Duration::from_secs(15), "{after_kill:?}");
    // By default mpirun itself ends the job at once and names the rank.
    let (out, after_kill) = kill_rank_1_mid_point(false);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("rank 1") && err.contains("signal 9"), "{err}");
    assert!(after_kill < Duration::from_secs(15), "{after_kill:?}");
}

/// A plain (local) `--batch` of `sweep` into `out`, bounded like the fleet runs.
fn local_batch(sweep: &Path, out: &Path) -> Output {
    let mut c = crate::util::command("diskscope");
    c.arg("--batch").arg(sweep).arg("--out").arg(out);
    c.stdin(Stdio::null());
    run_bounded(c, Duration::from_secs(120)).0
}

#[test]
fn a_fleet_sweep_into_an_out_another_batch_holds_is_refused_like_a_local_one() {
    need_mpi!();
    let d = tmp();
    let out = d.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // Another batch holds --out: this test process takes the lock a batch takes.
    let held = diskscope::fsguard::DirLock::acquire(&out, "--out").unwrap();
    let data = d.path().join("data.bin");
    let s = sweep(d.path(), "file-per-process", &data, false);
    let local = local_batch(&s, &out);
    assert_eq!(local.status.code(), Some(2), "{}", text(&local.stderr));
    let mut c = mpirun(d.path());
    c.args(["-n", "3"]).arg(bin_path("diskscope"));
    c.arg("--batch").arg(&s).arg("--out").arg(&out);
    let (fleet, _) = run_bounded(c, Duration::from_secs(120));
    let err = text(&fleet.stderr);
    assert!(!fleet.status.success(), "{err}");
    let refusal = |e: &str| {
        e.lines()
            .find(|l| l.contains("another diskscope batch is writing to"))
            .map(String::from)
    };
    let said = refusal(&text(&local.stderr));
    assert!(said.is_some(), "{}", text(&local.stderr));
    assert_eq!(
        refusal(&err),
        said,
        "the fleet says what a local batch says"
    );
    // Nothing measured, nothing written, no rank's test file left behind.
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [".diskscope.lock"], "{err}");
    for r in 0..3 {
        let f = PathBuf::from(format!("{}.{r}", data.display()));
        assert!(!f.exists(), "test file {} left behind", f.display());
    }
    drop(held);
}

#[test]
fn a_fleet_sweep_writes_context_sweep_json_and_fio_commands_like_a_local_one() {
    need_mpi!();
    let d = tmp();
    let (lead, rest) = (d.path().join("lead"), d.path().join("rest"));
    std::fs::create_dir_all(&lead).unwrap();
    std::fs::create_dir_all(&rest).unwrap();
    let data = d.path().join("data.bin");
    let s = sweep(d.path(), "shared-file", &data, false);
    batch_on_three_ranks(&lead, &rest, &s);
    let local_out = d.path().join("local");
    let local = local_batch(&s, &local_out);
    assert!(local.status.success(), "{}", text(&local.stderr));
    let names = |dir: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let fleet_out = lead.join("out");
    let written = names(&fleet_out);
    for doc in ["context.json", "sweep.json", "x-fio.txt"] {
        assert!(written.iter().any(|n| n == doc), "no {doc}: {written:?}");
    }
    // Timelines are per-run intervals; a fleet point's rows carry them once the ranks' timelines
    // are merged (fleet's own work), so they are left out of the comparison.
    let but_timelines = |v: Vec<String>| -> Vec<String> {
        v.into_iter()
            .filter(|n| !n.contains("-timeline."))
            .collect()
    };
    assert_eq!(
        but_timelines(written.clone()),
        but_timelines(names(&local_out)),
        "the same files as a local sweep"
    );
    assert_eq!(
        std::fs::read_to_string(fleet_out.join("x-fio.txt")).unwrap(),
        std::fs::read_to_string(local_out.join("x-fio.txt")).unwrap()
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fleet_out.join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(doc["command"], "batch");
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2 * 2 * 2, "one aggregate row per repetition");
    assert!(results.iter().all(|r| r["rank"] == "all"), "{results:?}");
    let ctx: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fleet_out.join("context.json")).unwrap())
            .unwrap();
    assert!(ctx.is_object() && !ctx.as_object().unwrap().is_empty());
    assert!(!rest.join("out").exists(), "ranks 1 and 2 wrote results");
}

#[test]
fn run_under_mpirun_writes_every_ranks_timeline_and_the_merged_one_with_the_start_skew() {
    need_mpi!();
    let d = tmp();
    let f = d.path().join("f");
    for r in 0..3u8 {
        std::fs::write(format!("{}.{r}", f.display()), vec![r; 16 << 20]).unwrap();
    }
    let csv = d.path().join("t.csv");
    let mut c = mpirun(d.path());
    c.args(["-n", "3"]).arg(bin_path("run")).arg(&f);
    c.args([
        "-r",
        "4K",
        "4096",
        "--interval",
        "100ms",
        "--json",
        "--timeline",
    ])
    .arg(&csv);
    let (out, _) = run_bounded(c, Duration::from_secs(60));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("verdict: "), "{stderr}");
    // --json: every rank's row and the aggregate, each judged, and their timelines.
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc["results"].as_array().unwrap();
    let ranks: Vec<&str> = results
        .iter()
        .map(|r| r["rank"].as_str().unwrap())
        .collect();
    assert_eq!(ranks, ["0", "1", "2", "all"]);
    for r in results {
        assert!(
            matches!(r["verdict"].as_str(), Some("ok" | "suspect")),
            "{r}"
        );
    }
    assert_eq!(doc["timeline"].as_array().unwrap().len(), 4);
    // The CSV: rank rows on the fleet's clock, then the merged ones.
    let rows = csv_file_maps(&csv);
    let of = |rank: &str| -> Vec<&std::collections::HashMap<String, String>> {
        rows.iter().filter(|r| r["rank"] == rank).collect()
    };
    let sum = |rs: &[&std::collections::HashMap<String, String>], col: &str| -> u64 {
        rs.iter().map(|r| r[col].parse::<u64>().unwrap()).sum()
    };
    let all = of("all");
    assert!(!all.is_empty(), "{rows:?}");
    let rank_rows: Vec<_> = rows.iter().filter(|r| r["rank"] != "all").collect();
    // Intervals add: every operation of every rank is in the merged timeline once.
    assert_eq!(sum(&all, "ops"), sum(&rank_rows, "ops"));
    assert_eq!(sum(&all, "ops"), 3 * 4096);
    // The slowest operation of the fleet is the slowest of any rank (a union, not an average).
    let max = |rs: &[&std::collections::HashMap<String, String>]| {
        rs.iter()
            .filter_map(|r| r["lat_max_us"].parse::<f64>().ok())
            .fold(0.0, f64::max)
    };
    assert_eq!(max(&all), max(&rank_rows));
    // The skew: each rank's own offset, the aggregate's the largest; rank rows start there.
    let skews: Vec<f64> = ["0", "1", "2"]
        .iter()
        .map(|r| of(r)[0]["start_skew_us"].parse::<f64>().unwrap())
        .collect();
    assert!(skews.contains(&0.0), "{skews:?}");
    let largest = skews.iter().cloned().fold(0.0, f64::max);
    assert!((all[0]["start_skew_us"].parse::<f64>().unwrap() - largest).abs() < 1e-3);
    for (r, skew) in ["0", "1", "2"].iter().zip(&skews) {
        let t0: f64 = of(r)[0]["t_start_s"].parse().unwrap();
        assert!(
            (t0 - skew / 1e6).abs() < 1e-6,
            "rank {r}: {t0} vs {skew} µs"
        );
    }
}

#[test]
fn a_mixed_sweep_on_three_ranks_sums_each_direction_into_the_all_row() {
    need_mpi!();
    let d = tmp();
    let (lead, rest) = (d.path().join("lead"), d.path().join("rest"));
    std::fs::create_dir_all(&lead).unwrap();
    std::fs::create_dir_all(&rest).unwrap();
    let data = d.path().join("data.bin");
    let s = d.path().join("s.toml");
    std::fs::write(
        &s,
        format!(
            "name = \"fleet\"\nfleet = {{ layout = \"file-per-process\", timeout_s = 20 }}\n\
             [file]\npath = \"{}\"\ncreate = \"1M\"\n\
             [[experiment]]\nname = \"m\"\nkind = \"throughput\"\nreps = 2\nseconds = 0.3\n\
             block_size = \"4K\"\npattern = \"random\"\nmix = [70]\n",
            data.display()
        ),
    )
    .unwrap();
    let out = batch_on_three_ranks(&lead, &rest, &s);
    let csv = lead.join("out/m.csv");
    // Every line as long as the header: the per-direction columns are named in it.
    let mut rd = csv::Reader::from_path(&csv).unwrap();
    let width = rd.headers().unwrap().len();
    assert!(rd.records().all(|r| r.unwrap().len() == width));
    let rows = crate::util::csv_file_maps(&csv);
    assert_eq!(rows.len(), 2 * 4, "2 reps, 3 ranks and the all row each");
    let num = |r: &std::collections::HashMap<String, String>, c: &str| -> f64 {
        r[c].parse()
            .unwrap_or_else(|_| panic!("{c} = {:?} in {r:?}", r[c]))
    };
    for group in rows.chunks(4) {
        let ranks: Vec<&str> = group.iter().map(|r| r["rank"].as_str()).collect();
        assert_eq!(ranks, ["0", "1", "2", "all"]);
        for r in group {
            assert_eq!(r["error"], "", "{r:?}");
            assert_eq!(r["operation"], "mix");
            assert_eq!(r["mix_read_pct_asked"], "70");
            assert_eq!(num(r, "read_ops") + num(r, "write_ops"), num(r, "ops"));
            assert_eq!(
                num(r, "read_bytes") + num(r, "write_bytes"),
                num(r, "bytes")
            );
            assert!(num(r, "read_lat_p99_us") > 0.0 && num(r, "write_lat_p99_us") > 0.0);
        }
        let all = &group[3];
        for c in ["read_ops", "write_ops", "read_bytes", "write_bytes"] {
            let sum: f64 = group[..3].iter().map(|r| num(r, c)).sum();
            assert_eq!(num(all, c), sum, "{c}: {group:?}");
        }
        let done = num(all, "read_ops") * 100.0 / num(all, "ops");
        assert!(
            (num(all, "mix_read_pct_done") - done).abs() < 0.01,
            "{all:?}"
        );
        // Each direction's rate over the fleet's span, as the whole row's.
        let secs = num(all, "seconds");
        let iops = num(all, "read_ops") / secs;
        assert!(
            (num(all, "read_iops") - iops).abs() <= 1e-3 * iops,
            "{all:?}"
        );
        // The merged tail is within the ranks' own.
        let most = group[..3]
            .iter()
            .map(|r| num(r, "write_lat_max_us"))
            .fold(0.0, f64::max);
        assert!(num(all, "write_lat_max_us") <= most * 1.01, "{group:?}");
    }
    assert!(!rest.join("out").exists(), "ranks 1 and 2 wrote results");
    assert!(text(&out.stdout).contains("fleet: 3 ranks"));
}

#[test]
fn run_m_under_mpirun_mixes_on_every_rank_and_says_each_direction_of_the_fleet() {
    need_mpi!();
    let d = tmp();
    let f = d.path().join("m");
    let mut c = mpirun(d.path());
    c.args(["-n", "3"]).arg(bin_path("run")).arg(&f);
    c.args(["-m", "70", "4K", "500", "--pattern", "random", "--json"]);
    let (out, _) = run_bounded(c, Duration::from_secs(60));
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("read and wrote"), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("fleet mix: reads "))
        .unwrap_or_else(|| panic!("no fleet mix line: {err}"));
    assert!(
        line.contains("(70% asked)") && line.contains("| writes: "),
        "{line}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = doc["results"].as_array().unwrap();
    let all = rows
        .iter()
        .find(|r| r["rank"] == "all")
        .expect("the all row");
    let sum = |c: &str| -> f64 {
        rows.iter()
            .filter(|r| r["rank"] != "all")
            .map(|r| r[c].as_f64().unwrap())
            .sum()
    };
    assert_eq!(all["read_ops"].as_f64().unwrap(), sum("read_ops"));
    assert_eq!(all["write_ops"].as_f64().unwrap(), sum("write_ops"));
    assert_eq!(sum("read_ops") + sum("write_ops"), 3.0 * 500.0);
    for rank in 0..3 {
        let file = PathBuf::from(format!("{}.{rank}", f.display()));
        assert!(file.is_file(), "the rank's own file {}", file.display());
    }
}
