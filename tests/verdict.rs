//! Issue 23: "Can I trust this number?" The trap suite: each trap this machine can build, run
//! through the real `run` binary, and the verdict and reason code it must get. Traps that need
//! root, a loop device, a filesystem or a tool this machine lacks are skipped with the reason
//! printed. Every loop device and mount is undone in a guard (`Drop`), also on panic.
//!
//! No assertion depends on timing: each trap is built so that its figure is far beyond its
//! threshold (a file in RAM, a file locked in the page cache, 200 000 one-byte reads that never
//! wait), and the clean runs' "ok, 20 times in a row" is `bench/verdict-clean.sh`'s job.
//!
//! Every run gets an empty `XDG_CACHE_HOME`, so a limits profile stored on this machine never
//! adds its own reason.

use crate::util::{bin, store_synthetic_profile, tmp, LoopFs};
use std::path::Path;
use std::process::Command;

/// What a run said about its result: the verdict, the reason codes and the stderr lines.
#[derive(Debug)]
struct Said {
    verdict: String,
    reasons: Vec<String>,
    why: String,
    stderr: String,
}

impl Said {
    fn has(&self, code: &str) -> bool {
        self.reasons.iter().any(|r| r == code)
    }

    /// The lines a user sees: the `verdict:` line and its reasons.
    fn verdict_lines(&self) -> String {
        self.stderr
            .lines()
            .skip_while(|l| !l.starts_with("verdict:"))
            .take_while(|l| l.starts_with("verdict:") || l.starts_with("  "))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `run FILE ARGS... --json` with an empty profile cache (or `cache`): the result's verdict.
fn run_in(cache: &Path, file: &Path, args: &[&str]) -> Said {
    let out = bin("run")
        .env("XDG_CACHE_HOME", cache)
        .arg(file)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    let reasons = r["reasons"].as_str().unwrap_or_default();
    let said = Said {
        verdict: r["verdict"].as_str().unwrap_or_default().to_string(),
        reasons: reasons
            .split(';')
            .filter(|c| !c.is_empty())
            .map(str::to_string)
            .collect(),
        why: r["why"].as_str().unwrap_or_default().to_string(),
        stderr,
    };
    // The closing note shows, for each trap, the line a user sees.
    eprintln!(
        "--- run {} {}\n{}",
        file.display(),
        args.join(" "),
        said.verdict_lines()
    );
    said
}

fn run(file: &Path, args: &[&str]) -> Said {
    let cache = tmp();
    run_in(cache.path(), file, args)
}

/// Writes `mib` MiB at `path` with `run -w 1M`, synced.
fn write_file(path: &Path, mib: u32) {
    bin("run")
        .arg(path)
        .args(["-w", "1M", &mib.to_string(), "--fsync"])
        .assert()
        .success();
}

fn assert_suspect(s: &Said, code: &str) {
    assert_eq!(s.verdict, "suspect", "{s:?}");
    assert!(s.has(code), "no {code} in {s:?}");
    assert!(
        s.stderr.contains(&format!("  {code}: ")),
        "stderr names it: {}",
        s.stderr
    );
}

#[test]
fn a_read_of_a_file_on_tmpfs_is_suspect_not_a_disk_naming_tmpfs() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipped: no /dev/shm");
        return;
    }
    let d = tempfile::Builder::new()
        .prefix("diskscope-test")
        .tempdir_in(shm)
        .unwrap();
    let f = d.path().join("f");
    write_file(&f, 16);
    let s = run(&f, &["-r", "1M", "16", "--cache", "cold"]);
    if !s.stderr.contains("tmpfs") {
        eprintln!("skipped: /dev/shm is not tmpfs here");
        return;
    }
    assert_suspect(&s, "not_a_disk");
    assert!(s.why.contains("tmpfs, in RAM"), "{s:?}");
}

#[test]
fn a_read_on_a_loop_device_over_a_tmpfs_file_is_suspect_not_a_disk() {
    let Some(fs) = LoopFs::ext4_in(Path::new("/dev/shm")) else {
        return;
    };
    let f = fs.mnt().join("f");
    write_file(&f, 32);
    let s = run(&f, &["-r", "1M", "32", "--direct"]);
    assert_suspect(&s, "not_a_disk");
    assert!(s.why.contains(fs.name()), "{s:?}");
    assert!(s.why.contains("in RAM"), "{s:?}");
}

#[test]
fn a_cold_read_on_btrfs_mounted_with_compress_of_zeros_is_suspect_compressed() {
    let Some(fs) = LoopFs::make(
        &std::env::temp_dir(),
        &["mkfs.btrfs", "-q", "-f"],
        &["-o", "compress-force=zstd"],
    ) else {
        return;
    };
    // All-zero data, written by another program (diskscope writes incompressible data).
    let f = fs.mnt().join("zeros");
    let ok = Command::new("dd")
        .args([
            "if=/dev/zero",
            "bs=1M",
            "count=64",
            "conv=fsync",
            "status=none",
        ])
        .arg(format!("of={}", f.display()))
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "dd could not write {}", f.display());
    let s = run(&f, &["-r", "1M", "64", "--cache", "cold"]);
    assert_suspect(&s, "compressed");
    assert!(s.why.contains("compress-force=zstd"), "{s:?}");
}

#[test]
fn a_buffered_write_without_fsync_is_suspect_writes_in_page_cache_and_with_fsync_is_not() {
    let Some(fs) = LoopFs::ext4_in(&std::env::temp_dir()) else {
        return;
    };
    let f = fs.mnt().join("w");
    // 32 MiB stays far below the dirty thresholds: nothing is written back during the run.
    let s = run(&f, &["-w", "64K", "512"]);
    assert_suspect(&s, "writes_in_page_cache");
    assert!(s.why.contains("--fsync"), "{s:?}");
    let g = fs.mnt().join("w2");
    let synced = run(&g, &["-w", "64K", "512", "--fsync"]);
    assert!(!synced.has("writes_in_page_cache"), "{synced:?}");
}

/// Maps `path` and locks it in memory (as another process keeping it cached would); unmapped
/// on drop.
struct Locked {
    addr: *mut libc::c_void,
    len: usize,
}

impl Locked {
    fn new(path: &Path) -> Option<Locked> {
        use std::os::fd::AsRawFd;
        let file = std::fs::File::open(path).unwrap();
        let len = file.metadata().unwrap().len() as usize;
        // SAFETY: a shared read-only mapping of an open file of `len` bytes; the result is
        // checked against MAP_FAILED before use.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            eprintln!("skipped: could not map {}", path.display());
            return None;
        }
        let locked = Locked { addr, len };
        // SAFETY: `addr..addr+len` is the mapping just made; mlock faults it in and pins it.
        if unsafe { libc::mlock(addr, len) } != 0 {
            eprintln!("skipped: mlock refused (RLIMIT_MEMLOCK)");
            return None;
        }
        Some(locked)
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

#[test]
fn a_cold_read_of_a_file_another_process_maps_and_locks_is_suspect_cache_not_disk() {
    let Some(fs) = LoopFs::ext4_in(&std::env::temp_dir()) else {
        return;
    };
    let f = fs.mnt().join("f");
    write_file(&f, 32);
    let Some(_held) = Locked::new(&f) else { return };
    let s = run(&f, &["-r", "1M", "32", "--cache", "cold"]);
    assert_suspect(&s, "cache_not_disk");
    assert!(
        s.why.contains(fs.name()) || s.why.contains("% of the file"),
        "{s:?}"
    );
}

#[test]
fn a_direct_read_with_another_reader_on_the_device_is_suspect_other_io() {
    let Some(fs) = LoopFs::ext4_in(&std::env::temp_dir()) else {
        return;
    };
    let f = fs.mnt().join("f");
    write_file(&f, 32);
    // Four readers of the whole device with O_DIRECT, running from before the run to after it.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (stop, dev) = (stop.clone(), fs.dev.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    let _ = Command::new("dd")
                        .args(["bs=4M", "count=8", "iflag=direct", "of=/dev/null"])
                        .arg(format!("if={dev}"))
                        .arg("status=none")
                        .status();
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let s = run(&f, &["-r", "1M", "32", "--direct"]);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for r in readers {
        r.join().unwrap();
    }
    assert_suspect(&s, "other_io");
    assert!(s.why.contains("another process"), "{s:?}");
}

#[test]
fn two_hundred_thousand_one_byte_reads_are_suspect_generator_bound_with_the_fix() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 1);
    let s = run(
        &f,
        &[
            "-r",
            "1",
            "200000",
            "--method",
            "pread",
            "--cache",
            "warm",
            "--pattern",
            "random",
        ],
    );
    assert_suspect(&s, "generator_bound");
    assert!(s.why.contains("io_uring"), "{s:?}");
}

#[test]
fn a_run_of_four_blocks_is_suspect_too_short() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 4);
    let s = run(&f, &["-r", "1M", "4", "--cache", "warm"]);
    assert_suspect(&s, "too_short");
    // Which of its two sentences depends on the machine's speed (under 0.05 s, or 4 operations).
    assert!(
        s.why.contains("4 operations are too few") || s.why.contains("shorter than the"),
        "{s:?}"
    );
}

#[test]
fn a_warm_read_above_the_profiles_memory_ceiling_is_suspect_above_ceiling() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 64);
    let cache = tmp();
    // The synthetic profile's memory at 1/1000: 8 MiB/s for a copy, which any warm read beats.
    store_synthetic_profile(cache.path(), d.path(), 0.001);
    let s = run_in(
        cache.path(),
        &f,
        &["-r", "1M", "64", "--method", "pread", "--cache", "warm"],
    );
    assert_suspect(&s, "above_ceiling");
}

#[test]
fn a_runs_json_result_carries_verdict_reasons_and_why() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 4);
    let cache = tmp();
    let out = bin("run")
        .env("XDG_CACHE_HOME", cache.path())
        .arg(&f)
        .args(["-r", "1M", "4", "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    for k in ["verdict", "reasons", "why"] {
        assert!(r[k].is_string(), "{k} in {r}");
    }
}

#[test]
fn fast_on_a_tmpfs_file_says_its_verdict_on_stderr_and_in_json() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipped: no /dev/shm");
        return;
    }
    let d = tempfile::Builder::new()
        .prefix("diskscope-test")
        .tempdir_in(shm)
        .unwrap();
    let f = d.path().join("f");
    write_file(&f, 8);
    let cache = tmp();
    let out = bin("fast")
        .env("XDG_CACHE_HOME", cache.path())
        .arg(&f)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    if !stderr.contains("tmpfs") {
        eprintln!("skipped: /dev/shm is not tmpfs here");
        return;
    }
    assert!(
        stderr.contains("fast: verdict: suspect (not_a_disk"),
        "{stderr}"
    );
    let out = bin("fast")
        .env("XDG_CACHE_HOME", cache.path())
        .arg(&f)
        .arg("--json")
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"][0]["verdict"], "suspect", "{doc}");
    assert!(doc["results"][0]["reasons"]
        .as_str()
        .unwrap()
        .contains("not_a_disk"));
}

/// A sweep of warm 64K and 1M reads of `file`, 2 repetitions each, run with `--report`.
fn batch_with_report(dir: &Path, file: &Path) -> (std::path::PathBuf, String) {
    let sweep = dir.join("s.toml");
    std::fs::write(
        &sweep,
        format!(
            "name = \"trap\"\n[file]\npath = \"{}\"\n[defaults]\nreps = 2\nseconds = 0.2\n\
             [[experiment]]\nname = \"x\"\nkind = \"throughput\"\nmethod = \"pread\"\n\
             block_size = [\"64K\", \"1M\"]\ncache = \"warm\"\n",
            file.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let report = dir.join("r.html");
    let o = bin("diskscope")
        .env("XDG_CACHE_HOME", dir)
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (out, std::fs::read_to_string(&report).unwrap())
}

#[test]
fn a_batch_on_tmpfs_draws_its_suspect_bars_hollow_and_the_report_says_why() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipped: no /dev/shm");
        return;
    }
    let d = tempfile::Builder::new()
        .prefix("diskscope-test")
        .tempdir_in(shm)
        .unwrap();
    let f = d.path().join("f");
    write_file(&f, 16);
    let work = tmp();
    let (out, html) = batch_with_report(work.path(), &f);
    let svg = std::fs::read_to_string(out.join("x.svg")).unwrap();
    let (_, rows) = {
        let mut r = csv::Reader::from_path(out.join("x.csv")).unwrap();
        let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
        (h.clone(), rows)
    };
    if !std::fs::read_to_string(out.join("context.json"))
        .unwrap()
        .contains("tmpfs")
    {
        eprintln!("skipped: /dev/shm is not tmpfs here");
        return;
    }
    assert_eq!(rows.len(), 4);
    // Every bar is suspect (not_a_disk): hollow, with the code in the footnote.
    assert!(
        svg.contains("hollow bars: suspect results") && svg.contains("not_a_disk: 64K, 1M"),
        "{svg}"
    );
    // The report's table says each point's verdict. Runs of 0.2 s have one 1 s interval each:
    // their timeline is in the CSV, and no figure is drawn of it (nor embedded).
    assert!(html.contains("verdict (reasons)"), "{html}");
    assert!(html.contains("suspect (not_a_disk"), "{html}");
    assert!(out.join("x-timeline.csv").is_file());
    assert!(!out.join("x-timeline.svg").exists());
    assert!(
        !html.contains("x-timeline.svg"),
        "no timeline figure of one-interval runs"
    );
}

#[test]
fn a_sweeps_syscalls_rows_carry_each_calls_verdict_too_short_below_its_minimum() {
    let d = tmp();
    let sweep = d.path().join("s.toml");
    std::fs::write(
        &sweep,
        "name = \"v\"\n[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"calls\"\n\
         kind = \"syscalls\"\nreps = 1\nseconds = 0.01\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let o = bin("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = crate::util::csv_file_maps(&out.join("calls.csv"));
    assert!(rows.len() >= 4, "{rows:?}");
    for r in &rows {
        // 0.01 s per call is under the 0.05 s a figure needs: the same judge as `syscalls`.
        assert_eq!(r["verdict"], "suspect", "{r:?}");
        assert!(r["reasons"].split(';').any(|c| c == "too_short"), "{r:?}");
        assert!(r["why"].contains("shorter than"), "{r:?}");
    }
}
