//! "…and why?": the context of a file (on a tmpfs and a loop device made here), `diskscope
//! limits` (measures, stores, reuses, leaves nothing behind), and `run --json` (one document
//! holding every figure the CSV holds, and the explanation once a profile exists).

use crate::util::{bin, is_root, p, tmp};
use diskscope::explain::context::Context;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Unmounts a mount point when dropped (also when an assertion fails).
struct Mounted(PathBuf);
impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Detaches a loop device when dropped.
struct LoopDev(String);
impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

fn mount(args: &[&str], target: &Path) -> Option<Mounted> {
    let ok = Command::new("mount")
        .args(args)
        .arg(target)
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| Mounted(target.to_path_buf()))
}

#[test]
fn a_file_on_a_tmpfs_is_said_to_live_in_ram_with_no_device_under_it() {
    if !is_root() {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    }
    let dir = tmp();
    let mnt = p(&dir, "mnt");
    std::fs::create_dir(&mnt).unwrap();
    let Some(_m) = mount(&["-t", "tmpfs", "-o", "size=4m", "tmpfs"], &mnt) else {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    };
    let f = mnt.join("data.bin");
    std::fs::write(&f, [1u8; 4096]).unwrap();
    let ctx = Context::collect(&f);
    let fs = ctx.filesystem.as_ref().expect("the tmpfs mount is found");
    assert_eq!(fs.fs_type, "tmpfs");
    assert_eq!(Path::new(&fs.mount_point), mnt.canonicalize().unwrap());
    assert!(fs.super_options.contains("size=4096k"), "{fs:?}");
    assert!(ctx.device.is_none(), "{:?}", ctx.device);
    assert!(
        ctx.warnings
            .iter()
            .any(|w| w.contains("tmpfs") && w.contains("cold run measures memory")),
        "{:?}",
        ctx.warnings
    );
    let line = ctx.to_string();
    assert!(!line.contains('\n') && line.contains("tmpfs") && line.contains("warning"));
}

#[test]
fn a_file_on_a_loop_device_is_followed_to_the_disk_under_the_backing_file() {
    if !is_root() {
        eprintln!("skipped: loop devices need root");
        return;
    }
    let dir = tmp();
    let image = p(&dir, "disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let out = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&image)
        .output();
    let Some(dev) = out
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    else {
        eprintln!("skipped: losetup cannot attach a loop device here");
        return;
    };
    let _loop = LoopDev(dev.clone());
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev])
        .status()
        .is_ok_and(|s| s.success());
    let mnt = p(&dir, "mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = if mkfs { mount(&[&dev], &mnt) } else { None };
    let Some(_m) = mounted else {
        eprintln!("skipped: cannot make or mount an ext4 on {dev}");
        return;
    };
    let f = mnt.join("data.bin");
    std::fs::write(&f, [2u8; 8192]).unwrap();
    let ctx = Context::collect(&f);
    assert_eq!(ctx.filesystem.as_ref().unwrap().fs_type, "ext4");
    let d = ctx.device.as_ref().expect("a device under the loop mount");
    let loop_name = dev.trim_start_matches("/dev/");
    assert_eq!(
        d.chain.first().map(String::as_str),
        Some(loop_name),
        "{d:?}"
    );
    assert_eq!(
        d.backing_files.first().map(PathBuf::from),
        Some(image.canonicalize().unwrap()),
        "{d:?}"
    );
    // The queue settings are those of the device under the backing file, as for the image.
    let under = Context::collect(&image);
    match &under.device {
        Some(u) => {
            assert_eq!(d.name, u.name, "{d:?} vs {u:?}");
            assert!(d.chain.len() >= 2, "{d:?}");
        }
        None => assert_eq!(d.name, loop_name, "{d:?}"),
    }
    assert!(d.logical_block_size_bytes.is_some(), "{d:?}");
}

#[test]
fn limits_measures_once_stores_the_profile_reuses_it_and_leaves_no_file() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let work = p(&dir, "work");
    std::fs::create_dir(&work).unwrap();
    let first = bin("diskscope")
        .args(["limits", "--quick"])
        .current_dir(&work)
        .env("XDG_CACHE_HOME", &cache)
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&first.stdout);
    let err = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{out}\n{err}");
    for needed in ["per-operation cost", "memory ceiling", "device (O_DIRECT)"] {
        assert!(out.contains(needed), "{needed} missing from\n{out}");
    }
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "the test file was removed"
    );
    let profiles: Vec<_> = std::fs::read_dir(cache.join("diskscope/profiles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(profiles.len(), 1, "{profiles:?}");
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&profiles[0]).unwrap()).unwrap();
    assert!(stored["methods"].as_array().unwrap().len() >= 4, "{stored}");
    assert!(stored["memory"][0]["xor_mib_s"].as_f64().unwrap() > 0.0);

    let again = bin("diskscope")
        .args(["limits", "--json"])
        .current_dir(&work)
        .env("XDG_CACHE_HOME", &cache)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("stored profile"));
    let shown: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(shown["measured_unix_s"], stored["measured_unix_s"]);

    // With the profile, a run on the same filesystem names its bound on stderr and in --json.
    let f = work.join("data.bin");
    std::fs::write(&f, vec![5u8; 1 << 20]).unwrap();
    let run = bin("run")
        .arg(&f)
        .args(["-r", "4K", "256", "--cache", "warm", "--json"])
        .env("XDG_CACHE_HOME", &cache)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("-bound: ") && err.contains("measured"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let e = &doc["explanations"][0];
    assert!(e["bound"].as_str().unwrap().ends_with("bound"), "{e}");
    assert!(e["bound_mib_s"].as_f64().unwrap() > 0.0, "{e}");
    assert!(e["pct_of_bound"].as_f64().unwrap() > 0.0, "{e}");
}

#[test]
fn run_json_is_one_document_with_every_figure_the_csv_holds() {
    let dir = tmp();
    let f = p(&dir, "data.bin");
    std::fs::write(&f, vec![7u8; 64 << 10]).unwrap();
    let out = bin("run")
        .arg(&f)
        .args(["-r", "4K", "16", "--json"])
        .env("XDG_CACHE_HOME", p(&dir, "no-cache"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let row = &doc["results"][0];
    for column in diskscope::export::csv::header_of::<diskscope::measure::RunResult>().unwrap() {
        assert!(row.get(&column).is_some(), "column {column} missing: {row}");
    }
    assert_eq!(row["xor"], "00000000");
    assert_eq!(row["bytes"], 64 << 10);
    assert!(row["lat_p99_us"].as_f64().unwrap() > 0.0);
    assert_eq!(doc["command"], "run");
    assert_eq!(doc["setup"]["block_size_bytes"], 4096);
    assert!(doc["context"]["cpu_count"].as_u64().unwrap() >= 1);
    assert!(doc["context"]["filesystem"]["fs_type"].is_string());
    assert!(
        doc["explanations"][0].is_null(),
        "no profile, no explanation"
    );
}

#[test]
fn run2_json_is_one_document_holding_the_last_run_with_the_count_found() {
    let dir = tmp();
    let f = p(&dir, "data.bin");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    let out = bin("run2")
        .arg(&f)
        .args(["4K", "--target", "0.0005", "--json"])
        .env("XDG_CACHE_HOME", p(&dir, "no-cache"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(doc["command"], "run2");
    let row = &doc["results"][0];
    for column in diskscope::export::csv::header_of::<diskscope::measure::RunResult>().unwrap() {
        assert!(row.get(&column).is_some(), "column {column} missing: {row}");
    }
    let count = row["block_count"]
        .as_u64()
        .expect("block_count is a number");
    assert!(count.is_power_of_two() && count <= 1024, "{row}");
    assert_eq!(doc["setup"]["block_size_bytes"], 4096);
    assert_eq!(doc["setup"]["block_count"], count);
    assert_eq!(row["bytes"], count * 4096);
    assert!(row["seconds"].as_f64().unwrap() > 0.0, "{row}");
    assert!(row["mib_s"].as_f64().unwrap() > 0.0, "{row}");
    // An even number of equal words XORs to zero.
    assert_eq!(row["xor"], "00000000");
    assert!(doc["context"]["cpu_count"].as_u64().unwrap() >= 1);
    // The human line still goes to stderr, naming the same count.
    assert!(err.contains(&format!("{count} blocks of")), "{err}");
}

#[test]
fn syscalls_json_is_one_document_with_every_calls_figures() {
    let dir = tmp();
    let f = p(&dir, "data.bin");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    let out = bin("diskscope")
        .arg("syscalls")
        .arg(&f)
        .args(["--seconds", "0.01", "--json"])
        .env("XDG_CACHE_HOME", p(&dir, "no-cache"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(doc["command"], "syscalls");
    assert_eq!(doc["setup"]["file"], f.display().to_string());
    assert_eq!(doc["setup"]["seconds_per_call"], 0.01);
    let results = doc["results"].as_array().expect("results is a list");
    let names: Vec<&str> = results
        .iter()
        .filter_map(|r| r["syscall"].as_str())
        .collect();
    assert!(names.contains(&"getpid"), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("read")), "{names:?}");
    for r in results {
        assert!(r["calls"].as_u64().unwrap() > 0, "{r}");
        assert!(r["seconds"].as_f64().unwrap() > 0.0, "{r}");
        let (per_s, ns) = (
            r["calls_per_s"].as_f64().unwrap(),
            r["ns_per_call"].as_f64().unwrap(),
        );
        assert!(per_s > 0.0 && ns > 0.0, "{r}");
        // The two figures are one measurement seen two ways.
        let product = per_s * ns / 1e9;
        assert!(
            (0.9..1.1).contains(&product),
            "calls/s x ns/call = {product}: {r}"
        );
    }
}

#[test]
fn limits_on_a_directory_or_a_missing_file_is_a_usage_error_naming_file() {
    let dir = tmp();
    for target in [dir.path().to_path_buf(), p(&dir, "absent")] {
        let out = bin("diskscope")
            .arg("limits")
            .arg(&target)
            .env("XDG_CACHE_HOME", p(&dir, "cache"))
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("error: FILE: ") && err.lines().count() == 1,
            "{err}"
        );
    }
}

#[test]
fn ctrl_c_during_limits_removes_the_test_file_and_stores_no_profile() {
    let dir = tmp();
    let cache = p(&dir, "cache");
    let work = p(&dir, "work");
    std::fs::create_dir(&work).unwrap();
    let mut child = crate::util::command("diskscope")
        .args(["limits", "--quick"])
        .current_dir(&work)
        .env("XDG_CACHE_HOME", &cache)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the test file, then interrupt while it is in use.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::read_dir(&work).unwrap().count() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no test file appeared"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let stop_by = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > stop_by {
            let _ = child.kill();
            panic!("limits did not stop within 10 s of Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    if status.success() {
        // The measurement may have ended just before the signal: then it must be complete.
        assert!(err.contains("stored"), "{err}");
    } else {
        assert_eq!(
            status.code(),
            Some(130),
            "exits 130 as batch mode does: {err}"
        );
        assert!(err.contains("interrupted"), "{err}");
        assert!(
            !cache.join("diskscope/profiles").exists() || {
                std::fs::read_dir(cache.join("diskscope/profiles"))
                    .unwrap()
                    .count()
                    == 0
            }
        );
    }
    let left: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn the_explorers_scratch_file_leaves_a_tmpfs_temp_dir_for_a_disk_or_says_it_measures_ram() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() || !diskscope::explain::context::is_in_ram(shm) {
        eprintln!("skipped: /dev/shm is not a tmpfs here");
        return;
    }
    let disk = tmp();
    if diskscope::explain::context::is_in_ram(disk.path()) {
        eprintln!("skipped: the test directory is itself in RAM");
        return;
    }
    use diskscope::explain::context::scratch_dir;
    // A temp dir in RAM and a directory on a disk with room (/var/tmp in use): the disk.
    let c = scratch_dir(shm, Some(disk.path()), 1 << 20);
    assert_eq!(c.dir, disk.path());
    assert!(c.note.unwrap().contains("in RAM"));
    // Nowhere else to go (or no room there): it stays, and says what it measures.
    for cwd in [None, Some(shm)] {
        let c = scratch_dir(shm, cwd, 1 << 20);
        assert_eq!(c.dir, shm);
        assert!(c.note.unwrap().contains("measure memory, not a disk"));
    }
    let c = scratch_dir(shm, Some(disk.path()), u64::MAX / 4);
    assert_eq!(c.dir, shm, "no room on the disk: stays, with the note");
    // A temp dir on a disk is used as it is, silently.
    let c = scratch_dir(disk.path(), Some(shm), 1 << 20);
    assert_eq!((c.dir.as_path(), c.note), (disk.path(), None));
}

#[test]
fn fast_json_is_one_document_with_the_xor_the_figures_and_the_bound() {
    let dir = tmp();
    let f = p(&dir, "data.bin");
    let data: Vec<u8> = (0..(1u32 << 20)).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&f, &data).unwrap();
    let plain = bin("fast")
        .arg(&f)
        .env("XDG_CACHE_HOME", p(&dir, "none"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(plain.status.success());
    let xor = String::from_utf8_lossy(&plain.stdout).trim().to_string();
    let err = String::from_utf8_lossy(&plain.stderr);
    assert!(err.contains("context: "), "the context in one line: {err}");
    let cache = p(&dir, "cache");
    crate::util::store_synthetic_profile(&cache, dir.path(), 1.0);
    for road in ["pread", "mmap"] {
        let out = bin("fast")
            .arg(&f)
            .args(["--road", road, "--json"])
            .env("XDG_CACHE_HOME", &cache)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(out.status.success(), "{road}");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
        assert_eq!(doc["command"], "fast");
        assert_eq!(doc["setup"]["road"], road);
        let row = &doc["results"][0];
        assert_eq!(row["xor"], xor.as_str(), "the same XOR on every road");
        assert_eq!(row["bytes"], 1 << 20);
        assert!(row["mib_s"].as_f64().unwrap() > 0.0);
        assert!(row["bound"].as_str().unwrap().ends_with("-bound"), "{row}");
        assert!(row["pct_of_bound"].as_f64().unwrap() > 0.0);
        assert_eq!(doc["explanations"][0]["bound"], row["bound"]);
        assert!(doc["context"]["filesystem"]["fs_type"].is_string());
    }
}

#[test]
fn locality_json_holds_every_pass_with_its_percentiles_and_the_summary() {
    let dir = tmp();
    let layout = p(&dir, "layout");
    let out = bin("diskscope")
        .args([
            "locality",
            "--files",
            "40",
            "--file-size",
            "4K",
            "--reps",
            "2",
        ])
        .args([
            "--order",
            "sequential,random",
            "--cache",
            "warm",
            "--json",
            "--dir",
        ])
        .arg(&layout)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(doc["command"], "locality");
    assert_eq!(doc["setup"]["files"], 40);
    let results = doc["results"].as_array().unwrap();
    // 2 layouts x 2 orders x 2 repetitions.
    assert_eq!(results.len(), 8, "{doc}");
    let columns = diskscope::export::csv::header_of::<diskscope::measure::RunResult>().unwrap();
    for r in results {
        for c in &columns {
            assert!(r.get(c).is_some(), "column {c} missing: {r}");
        }
        assert!(r["lat_p50_us"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(doc["summary"].as_array().unwrap().len(), 4);
    assert!(
        err.contains("dir / packed") || err.contains("packed"),
        "the table on stderr: {err}"
    );
    let _ = bin("diskscope")
        .args(["locality", "--clean", "--dir"])
        .arg(&layout)
        .timeout(Duration::from_secs(30))
        .output();
}

/// Every cell of a CSV row, as the JSON row has it (numbers compared as numbers, to the six
/// significant digits the CSV writes).
fn same_as_json(header: &[String], row: &csv::StringRecord, json: &serde_json::Value) -> bool {
    header.iter().zip(row.iter()).all(|(h, cell)| {
        // The run's facts are a nested section in JSON, columns of their own in the CSV.
        let v = match json.get(h) {
            Some(v) => v,
            None => &json["facts"][h],
        };
        match v {
            serde_json::Value::Null => cell.is_empty(),
            serde_json::Value::Number(n) => cell
                .parse::<f64>()
                .is_ok_and(|c| (c - n.as_f64().unwrap()).abs() <= 1e-5 * c.abs().max(1e-3)),
            serde_json::Value::Bool(b) => cell == b.to_string(),
            serde_json::Value::String(s) => cell == s,
            _ => false,
        }
    })
}

#[test]
fn batch_json_and_context_json_hold_every_csv_figure_and_plots_draw_the_model_with_a_profile() {
    let dir = tmp();
    let sweep = p(&dir, "sweep.toml");
    std::fs::write(
        &sweep,
        "name = \"bs\"\n[file]\ncreate = \"4M\"\n[[experiment]]\nname = \"block-size\"\n\
         kind = \"throughput\"\nmethod = \"read\"\ncache = \"warm\"\n\
         block_size = [\"64\", \"4K\", \"256K\"]\nreps = 2\nseconds = 0.1\n",
    )
    .unwrap();
    let cache = p(&dir, "cache");
    let run = |out: &Path, cache: &Path| {
        bin("diskscope")
            .arg("--batch")
            .arg(&sweep)
            .arg("--out")
            .arg(out)
            .arg("--json")
            .env("XDG_CACHE_HOME", cache)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap()
    };
    // Without a profile: the document and context.json, no model line.
    let out = p(&dir, "plain");
    let o = run(&out, &p(&dir, "none"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("sweep bs"), "the plan goes to stderr: {err}");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON");
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(doc, on_disk, "sweep.json is the document printed");
    let ctx: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("context.json")).unwrap()).unwrap();
    assert!(ctx["filesystem"]["fs_type"].is_string(), "{ctx}");
    assert_eq!(doc["context"], ctx);
    let mut rdr = csv::Reader::from_path(out.join("block-size.csv")).unwrap();
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    assert_eq!(results.len(), rows.len());
    for row in &rows {
        assert!(
            results.iter().any(|j| same_as_json(&header, row, j)),
            "no JSON row holds {row:?}"
        );
    }
    let svg = std::fs::read_to_string(out.join("block-size.svg")).unwrap();
    assert!(!svg.contains("model (limits profile)"));
    let fs = ctx["filesystem"]["fs_type"].as_str().unwrap();
    assert!(svg.contains(fs), "the subtitle names the filesystem {fs}");

    // With a profile a thousand times this machine: bound columns filled, an explanation per
    // row, every point far below its bound and flagged with what to look at in the CSV and the
    // JSON, and the model over the bars.
    crate::util::store_synthetic_profile(&cache, &out, 1000.0);
    let out = p(&dir, "explained");
    let o = run(&out, &cache);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for (r, e) in doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .zip(doc["explanations"].as_array().unwrap())
    {
        assert!(r["bound"].as_str().unwrap().ends_with("-bound"), "{r}");
        assert_eq!(r["bound"], e["bound"]);
        assert!(r["pct_of_bound"].as_f64().unwrap() < 50.0, "{r}");
        assert!(e["hint"].as_str().is_some_and(|h| !h.is_empty()), "{e}");
    }
    let mut rdr = csv::Reader::from_path(out.join("block-size.csv")).unwrap();
    let hint = rdr
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "bound_hint")
        .unwrap();
    for row in rdr.records() {
        let row = row.unwrap();
        assert!(
            !row[hint].is_empty(),
            "a point below half its bound says what to look at: {row:?}"
        );
    }
    let svg = std::fs::read_to_string(out.join("block-size.svg")).unwrap();
    assert!(svg.contains("model (limits profile)"), "the model line");
    assert!(
        svg.contains("syscall-bound ("),
        "the 64-byte end names its bound"
    );
}
