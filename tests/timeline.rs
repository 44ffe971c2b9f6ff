//! Issue 22: every run as a timeline. The per-interval p99 against the p99 of every logged
//! operation; the device-to-file bytes ratio on a loop device of our own (cold O_DIRECT, warm,
//! buffered cold with read-ahead; root only, skipped with a reason otherwise); a level shift
//! made by a second phase that reads from the page cache; the CSV and JSON outputs.

use crate::util::{bin, p, tmp, write_varied_file, LoopFs};
use std::path::{Path, PathBuf};

/// `run FILE -r BS COUNT ARGS... --json`: the JSON document.
fn run_json(file: &Path, bs: &str, count: &str, args: &[&str]) -> serde_json::Value {
    let out = bin("run")
        .arg(file)
        .args(["-r", bs, count, "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The bytes ratio of a run's document: (device, ratio, meaning).
fn ratio_of(doc: &serde_json::Value) -> (String, f64, String) {
    let b = &doc["timeline"]["reading"]["bytes_ratio"];
    assert!(b.is_object(), "no bytes ratio in {}", doc["timeline"]);
    eprintln!("measured: {b}");
    (
        b["device"].as_str().unwrap().to_string(),
        b["ratio"].as_f64().unwrap(),
        b["meaning"].as_str().unwrap().to_string(),
    )
}

/// Writes a 32 MiB file on the loop filesystem with `run -w`, synced.
fn file_on(fs: &LoopFs) -> PathBuf {
    file_of_mib(fs, 32)
}

/// Writes a file of `mib` MiB on the loop filesystem with `run -w`, synced.
fn file_of_mib(fs: &LoopFs, mib: u32) -> PathBuf {
    let f = fs.mnt().join("data");
    bin("run")
        .arg(&f)
        .args(["-w", "1M", &mib.to_string(), "--fsync"])
        .assert()
        .success();
    f
}

#[test]
fn a_cold_direct_read_moves_as_many_bytes_on_the_device_as_the_file_within_two_percent() {
    let Some(fs) = LoopFs::ext4_in(&std::env::temp_dir()) else {
        return;
    };
    let f = file_on(&fs);
    let doc = run_json(&f, "1M", "32", &["--direct"]);
    let (dev, ratio, meaning) = ratio_of(&doc);
    assert_eq!(dev, fs.name());
    assert!((ratio - 1.0).abs() <= 0.02, "ratio {ratio}: {meaning}");
    assert_eq!(meaning, "every byte went to the device");
}

#[test]
fn a_warm_read_is_served_from_the_page_cache_with_a_ratio_below_five_percent() {
    let Some(fs) = LoopFs::ext4_in(&std::env::temp_dir()) else {
        return;
    };
    let f = file_on(&fs);
    let doc = run_json(&f, "1M", "32", &["--cache", "warm"]);
    let (_, ratio, meaning) = ratio_of(&doc);
    assert!(ratio < 0.05, "ratio {ratio}: {meaning}");
    assert_eq!(meaning, "served from the page cache");
}

#[test]
fn a_buffered_cold_read_of_the_start_of_a_file_shows_the_read_ahead() {
    let Some(fs) = LoopFs::ext4_in(&std::env::temp_dir()) else {
        return;
    };
    let f = file_on(&fs);
    fs.set_read_ahead_kb(4096);
    // 1 MiB of a 32 MiB file, 4 KiB at a time: the kernel reads ahead of it.
    let doc = run_json(&f, "4K", "256", &["--cache", "cold"]);
    let (_, ratio, meaning) = ratio_of(&doc);
    assert!(ratio > 1.5, "ratio {ratio}: {meaning}");
    assert!(meaning.starts_with("read-ahead read"), "{meaning}");
}

/// Nearest-rank quantile of sorted values (HDR's definition: the value at rank ⌈q·n⌉).
fn quantile(sorted: &[u64], q: f64) -> u64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
    sorted[rank - 1]
}

#[test]
fn the_per_interval_p99_agrees_with_the_p99_of_every_logged_operation_within_one_percent() {
    let d = tmp();
    let f = p(&d, "data");
    write_varied_file(&f, 4 << 20, 7);
    let (log, csv) = (p(&d, "ops.csv"), p(&d, "t.csv"));
    bin("run")
        .arg(&f)
        .args([
            "-r",
            "4K",
            "120000",
            "--method",
            "pread",
            "--pattern",
            "random",
        ])
        .args(["--threads", "2", "--interval", "100ms"])
        .arg("--log-ops")
        .arg(&log)
        .arg("--timeline")
        .arg(&csv)
        .assert()
        .success();
    let rows = crate::util::csv_file_maps(&csv);
    assert!(!rows.is_empty());
    // Every operation, by the interval it ended in; the timeline joins a last interval shorter
    // than half of one into the one before, so an operation past the last row's start belongs
    // to the last row.
    let mut by_interval: Vec<Vec<u64>> = vec![Vec::new(); rows.len()];
    let mut raw_intervals = 0;
    let text = std::fs::read_to_string(&log).unwrap();
    let mut log_rows = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        log_rows.headers().unwrap(),
        vec!["worker", "end_ns", "latency_ns"]
    );
    let mut logged = 0;
    // Operations that ended within a microsecond of a boundary, by boundary: the workers cut on
    // the clock's raw ticks and the log converts them to nanoseconds, so one may fall on either
    // side (a tick is under a nanosecond; a microsecond is a wide margin).
    let mut near = vec![0usize; rows.len() + 2];
    for l in log_rows.records() {
        let v: Vec<u64> = l.unwrap().iter().map(|x| x.parse().unwrap()).collect();
        let i = (v[1] / 100_000_000) as usize;
        raw_intervals = raw_intervals.max(i + 1);
        by_interval[i.min(rows.len() - 1)].push(v[2]);
        let b = ((v[1] + 50_000_000) / 100_000_000) as usize;
        if (v[1] as i64 - b as i64 * 100_000_000).abs() < 1_000 {
            near[b.min(rows.len() + 1)] += 1;
        }
        logged += 1;
    }
    assert_eq!(logged, 120_000);
    let last = &rows[rows.len() - 1];
    let last_s: f64 =
        last["t_end_s"].parse::<f64>().unwrap() - last["t_start_s"].parse::<f64>().unwrap();
    if rows.len() + 1 == raw_intervals {
        assert!(
            (0.1..0.15).contains(&last_s),
            "a joined last row spans one and a short interval, not {last_s} s"
        );
    } else {
        assert_eq!(rows.len(), raw_intervals, "one row per interval");
    }
    let mut compared = 0;
    for (i, (row, ops)) in rows.iter().zip(&mut by_interval).enumerate() {
        let counted = row["ops"].parse::<usize>().unwrap();
        assert!(
            counted.abs_diff(ops.len()) <= near[i] + near[i + 1],
            "the row counts {counted} operations, the log {} ({} within 1 µs of its edges): {row:?}",
            ops.len(),
            near[i] + near[i + 1]
        );
        if ops.len() < 1000 {
            continue;
        }
        ops.sort_unstable();
        let offline_us = quantile(ops, 0.99) as f64 / 1000.0;
        let p99_us: f64 = row["lat_p99_us"].parse().unwrap();
        assert!(
            (p99_us / offline_us - 1.0).abs() <= 0.01,
            "interval at {} s: timeline p99 {p99_us} µs, offline {offline_us} µs",
            row["t_start_s"]
        );
        compared += 1;
    }
    assert!(compared >= 1, "no interval had 1000 operations");
}

/// A blkio (cgroup v1) group that caps reads from one device, removed on drop.
struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    fn new(dev: &str, bytes_per_s: u64) -> Option<Throttle> {
        let root = Path::new("/sys/fs/cgroup/blkio");
        if !root.join("blkio.throttle.read_bps_device").exists() {
            eprintln!("skipped: no cgroup v1 blkio throttling here");
            return None;
        }
        let dir = root.join(format!("diskscope-test-{}", std::process::id()));
        std::fs::create_dir(&dir).ok()?;
        let t = Throttle { dir };
        let rdev = std::fs::metadata(dev).ok()?.rdev();
        let rule = format!("{}:{} {bytes_per_s}", libc::major(rdev), libc::minor(rdev));
        std::fs::write(t.dir.join("blkio.throttle.read_bps_device"), rule).ok()?;
        Some(t)
    }

    fn enter(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).unwrap();
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

use std::os::unix::fs::MetadataExt;

/// Sectors read from the device so far.
fn read_sectors(name: &str) -> u64 {
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace().nth(2).unwrap().parse().unwrap()
}

#[test]
fn a_run_throttled_for_its_last_mebibyte_names_the_time_its_throughput_dropped() {
    // The loop device's image in RAM, so the first phase runs at CPU speed whatever the disks
    // do; the last 1 MiB is read at 256 KiB/s once the test puts the run under a blkio cap.
    let Some(fs) = LoopFs::ext4_in(Path::new("/dev/shm")) else {
        return;
    };
    let f = file_of_mib(&fs, 12);
    let Some(cap) = Throttle::new(&fs.dev, 256 << 10) else {
        return;
    };
    let before = read_sectors(fs.name());
    let mut child = crate::util::command("run")
        .arg(&f)
        .args([
            "-r",
            "4K",
            "8192",
            "--direct",
            // At most 20 MiB/s before the cap (an open-loop rate), so the first phase lasts
            // over half a second (five intervals or more) however fast the machine is: the
            // detector needs three intervals on each side of a shift.
            "--rate",
            "5000",
            "--interval",
            "100ms",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while read_sectors(fs.name()) - before < (11 << 20) / 512 {
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        assert!(started.elapsed().as_secs() < 60, "the run did not progress");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    cap.enter(child.id());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &doc["timeline"];
    let shift = &t["reading"]["level_shift"];
    assert!(shift.is_object(), "no level shift in {t}");
    let (at, before, after) = (
        shift["at_s"].as_f64().unwrap(),
        shift["before_mib_s"].as_f64().unwrap(),
        shift["after_mib_s"].as_f64().unwrap(),
    );
    assert!(after < before / 2.0 && after < 0.4, "{shift}");
    // The device's own counters, on the same clock, say when the cap began: the start of the
    // stretch of intervals, to the end, that each read no more than 800 KiB/s (three times the
    // cap). Not the first such interval: on a loaded machine the run has been starved for a
    // whole 100 ms interval before the cap, and that dip is not the cap.
    let rows = t["rows"].as_array().unwrap();
    let capped = |r: &serde_json::Value| r["dev_read_bytes"].as_u64().unwrap_or(0) <= 80 << 10;
    let first_capped = rows
        .iter()
        .rposition(|r| !capped(r))
        .map_or(0, |last_uncapped| last_uncapped + 1);
    let capped_at = rows
        .get(first_capped)
        .map(|r| r["t_start_s"].as_f64().unwrap())
        .unwrap();
    let dev: Vec<_> = rows.iter().map(|r| &r["dev_read_bytes"]).collect();
    assert!(
        (at - capped_at).abs() <= 0.25,
        "shift at {at} s, cap at {capped_at} s: {dev:?}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("level shift at {at:.1} s")), "{err}");
}

#[test]
fn a_file_in_ram_says_no_device_and_an_existing_timeline_file_is_refused() {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        let d = tempfile::tempdir_in(shm).unwrap();
        let f = d.path().join("data");
        write_varied_file(&f, 1 << 20, 3);
        let doc = run_json(&f, "64K", "16", &[]);
        assert!(doc["timeline"]["device"].is_null(), "{}", doc["timeline"]);
        assert!(doc["timeline"]["reading"]["bytes_ratio"].is_null());
        let out = bin("run")
            .arg(&f)
            .args(["-r", "64K", "16"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no device:"), "{err}");
    } else {
        eprintln!("skipped the RAM half: no /dev/shm");
    }
    let d = tmp();
    let f = p(&d, "data");
    write_varied_file(&f, 1 << 20, 3);
    let csv = p(&d, "t.csv");
    std::fs::write(&csv, "mine").unwrap();
    bin("run")
        .arg(&f)
        .args(["-r", "64K", "16", "--timeline"])
        .arg(&csv)
        .assert()
        .failure()
        .stderr(predicates::str::contains("--timeline:"));
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "mine");
}

#[test]
fn a_batch_writes_a_timeline_csv_row_per_interval_per_repetition_a_figure_and_sweep_json_timeline()
{
    let t = tmp();
    let sweep = p(&t, "sweep.toml");
    std::fs::write(
        &sweep,
        "name = \"tl\"\n[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"bs\"\n\
         kind = \"throughput\"\nblock_size = [\"4K\", \"64K\"]\nreps = 2\nseconds = 0.3\n",
    )
    .unwrap();
    let out = t.path().join("out");
    let report = t.path().join("report.html");
    let o = bin("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("bs-timeline.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    for c in [
        "experiment",
        "block_size_bytes",
        "rep",
        "t_start_s",
        "mib_s",
        "lat_p99_us",
    ] {
        assert!(header.contains(&c.to_string()), "no {c} in {header:?}");
    }
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    // 2 block sizes × 2 repetitions, each of one or more 1 s intervals; every run has a row.
    let mut runs: Vec<(String, String)> = rows
        .iter()
        .map(|row| {
            (
                row[at("block_size_bytes")].to_string(),
                row[at("rep")].to_string(),
            )
        })
        .collect();
    runs.dedup();
    assert_eq!(runs.len(), 4, "{runs:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let tl = doc["timeline"].as_array().expect("a timeline array");
    assert_eq!(tl.len(), 4);
    assert_eq!(tl[0]["run"]["experiment"], "bs");
    assert!(tl[0]["timeline"]["rows"]
        .as_array()
        .is_some_and(|r| !r.is_empty()));
}

/// Issue 36: the device and the CPUs are sampled through a write's final fsync (made on a
/// thread of its own while the collector keeps its interval samples), so the rows hold the
/// device's write bytes of the fsync's intervals too. 256 MiB written buffered stays in the
/// page cache until the fsync (far under the dirty thresholds of a machine with a few GiB), so
/// the fsync writes nearly all of it, over several 100 ms intervals in which no operation runs.
#[test]
fn a_write_and_fsync_timeline_holds_the_devices_write_bytes_of_the_fsync_in_its_rows() {
    let d = tmp();
    let f = p(&d, "w");
    let csv = p(&d, "t.csv");
    let out = bin("run")
        .arg(&f)
        .args([
            "-w",
            "1M",
            "256",
            "--fsync",
            "--interval",
            "100ms",
            "--json",
        ])
        .arg("--timeline")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &doc["timeline"];
    let Some(device_bytes) = t["reading"]["bytes_ratio"]["device_bytes"].as_u64() else {
        eprintln!("skipped: no device counters under {}", f.display());
        return;
    };
    let rows = t["rows"].as_array().unwrap();
    let in_rows: u64 = rows
        .iter()
        .map(|r| r["dev_write_bytes"].as_u64().unwrap_or(0))
        .sum();
    assert!(
        in_rows as f64 >= 0.9 * device_bytes as f64,
        "rows hold {in_rows} of the device's {device_bytes} written bytes"
    );
    // The fsync's intervals (after the last operation) have their device figures.
    let last_op = rows
        .iter()
        .rposition(|r| r["ops"].as_u64() > Some(0))
        .unwrap();
    let tail: Vec<&serde_json::Value> = rows[last_op + 1..].iter().collect();
    if tail.is_empty() {
        eprintln!("the fsync took under one interval here: nothing more to check");
        return;
    }
    assert!(
        tail.iter().all(|r| r["dev_write_bytes"].is_u64()),
        "every fsync interval was sampled: {tail:?}"
    );
    assert!(
        tail.iter().any(|r| r["dev_write_bytes"].as_u64() > Some(0)),
        "{tail:?}"
    );
    // And the run's level is not read as a drop to zero at its end (the fsync's intervals hold
    // no operation: they are left out of the run's level).
    let shift = &t["reading"]["level_shift"];
    assert!(
        shift.is_null() || shift["after_mib_s"].as_f64() > Some(0.0),
        "{}",
        t["reading"]
    );
}
