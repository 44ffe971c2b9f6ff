//! Issues 23 and 36: "Can I trust this number?" The trap suite: each trap this machine can
//! build, run through the real `run` (or `fast`) binary, and the verdict and reason code it must
//! get. Traps that need root, a loop device, a filesystem or a tool this machine lacks are
//! skipped with the reason printed. Every loop device, mount and helper process is undone in a
//! guard (`Drop`), also on panic.
//!
//! Each trap is built so that its figure is far beyond its threshold (a file of holes, a file
//! locked in the page cache, busy loops on every core, 200 000 one-byte reads that never wait);
//! the clean runs' "ok" is `bench/verdict-clean.sh`'s job. A trap asserts its own code among
//! the reasons; on a machine shared with other work a run may carry another true reason beside
//! it (`cpu_contended`, `too_short`), which is said, not hidden.
//!
//! Every run gets an empty `XDG_CACHE_HOME`, so a limits profile stored on this machine never
//! adds its own reason.

use crate::util::{bin, store_scaled_profile, tmp, LoopFs};
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
    assert!(s.why.contains("stored compressed"), "{s:?}");
    assert!(s.why.contains("compress-force=zstd"), "{s:?}");
    // Mounted again without compress: the extents stay compressed, and the verdict says so.
    let mut fs = fs;
    if !fs.remount(&[]) {
        eprintln!("skipped the remount: could not mount {} again", fs.dev);
        return;
    }
    let s = run(&f, &["-r", "1M", "64", "--cache", "cold"]);
    assert_suspect(&s, "compressed");
    assert!(s.why.starts_with("100% of the file"), "{s:?}");
    assert!(!s.why.contains("compress-force"), "{s:?}");
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
fn a_warm_read_above_a_trusted_per_call_ceiling_is_suspect_above_ceiling() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 64);
    let cache = tmp();
    // The synthetic profile's per-call ceiling at one call a second (its tries within 10%,
    // measured quiet): any warm 1M read beats 1 MiB/s, however loaded the machine.
    store_scaled_profile(cache.path(), d.path(), 1e-6, 1.0);
    let s = run_in(
        cache.path(),
        &f,
        &["-r", "1M", "64", "--method", "pread", "--cache", "warm"],
    );
    assert_suspect(&s, "above_ceiling");
    assert!(s.why.contains("syscall-bound"), "{s:?}");
}

#[test]
fn a_stored_memory_ceiling_from_a_loaded_sitting_is_measured_again_before_judging() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 64);
    let cache = tmp();
    // Memory at 1/1000 of the synthetic one (as if measured while the machine was swamped);
    // the per-call ceiling as it is. A warm 1M read is far above the stored memory bound, but
    // the memory ceiling measured again now bounds it: no false alarm.
    store_scaled_profile(cache.path(), d.path(), 1.0, 0.001);
    let s = run_in(
        cache.path(),
        &f,
        &["-r", "1M", "64", "--method", "pread", "--cache", "warm"],
    );
    assert!(!s.has("above_ceiling"), "{s:?}");
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

// ---- Issue 36: traps judged from the run's own facts ----

/// A file of `mib` MiB at `path` whose bytes from `data_from` MiB on are data and the rest a
/// hole (`data_from` = `mib`: all hole), written with O_CREAT|O_EXCL and synced.
fn sparse_file(path: &Path, mib: u64, data_from: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .unwrap();
    f.set_len(mib << 20).unwrap();
    let block: Vec<u8> = (0..1u64 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 7) as u8)
        .collect();
    for m in data_from..mib {
        f.write_all_at(&block, m << 20).unwrap();
    }
    f.sync_all().unwrap();
}

#[test]
fn a_cold_read_of_a_fully_sparse_file_is_suspect_sparse_never_the_page_cache() {
    let d = tmp();
    let f = d.path().join("holes");
    sparse_file(&f, 64, 64);
    let s = run(&f, &["-r", "1M", "64", "--cache", "cold"]);
    assert_suspect(&s, "sparse");
    assert!(s.why.starts_with("100% of the file"), "{s:?}");
    assert!(
        !s.has("cache_not_disk"),
        "a hole is not the page cache: {s:?}"
    );
}

#[test]
fn a_cold_read_of_a_file_a_third_holes_is_suspect_sparse_with_its_share() {
    let d = tmp();
    let f = d.path().join("third");
    // The first 21 of 63 MiB a hole, the rest data.
    sparse_file(&f, 63, 21);
    let s = run(&f, &["-r", "1M", "63", "--cache", "cold"]);
    assert_suspect(&s, "sparse");
    assert!(s.why.starts_with("33% of the file"), "{s:?}");
    assert!(!s.has("cache_not_disk"), "{s:?}");
}

#[test]
fn a_cold_read_of_a_preallocated_never_written_file_is_suspect_unwritten() {
    let d = tmp();
    let f = d.path().join("prealloc");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&f)
        .unwrap();
    if rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, 64 << 20).is_err() {
        eprintln!("skipped: this filesystem cannot preallocate");
        return;
    }
    file.sync_all().unwrap();
    drop(file);
    let s = run(&f, &["-r", "1M", "64", "--cache", "cold"]);
    assert_suspect(&s, "unwritten");
    assert!(s.why.contains("preallocated"), "{s:?}");
    assert!(!s.has("cache_not_disk") && !s.has("sparse"), "{s:?}");
}

#[test]
fn fast_on_a_sparse_file_is_suspect_sparse() {
    let d = tmp();
    let f = d.path().join("holes");
    sparse_file(&f, 64, 64);
    let cache = tmp();
    let out = bin("fast")
        .env("XDG_CACHE_HOME", cache.path())
        .arg(&f)
        .arg("--json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    eprintln!("--- fast {}\n{stderr}", f.display());
    assert_eq!(r["verdict"], "suspect", "{doc}");
    assert!(
        r["reasons"]
            .as_str()
            .unwrap()
            .split(';')
            .any(|c| c == "sparse"),
        "{doc}"
    );
    assert!(stderr.contains("  sparse: 100% of the file"), "{stderr}");
}

/// Maps the first `share` of `path` and locks it in memory, as another process keeping part of
/// a file cached would; unmapped on drop.
fn lock_part(path: &Path, share: f64) -> Option<Locked> {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).unwrap();
    let page = 4096usize;
    let len = ((file.metadata().unwrap().len() as f64 * share) as usize) / page * page;
    // SAFETY: a shared read-only mapping of `len` bytes of an open file; checked against
    // MAP_FAILED before use.
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
    // SAFETY: the mapping just made; mlock faults it in and pins it.
    if unsafe { libc::mlock(addr, len) } != 0 {
        eprintln!("skipped: mlock refused (RLIMIT_MEMLOCK)");
        return None;
    }
    Some(locked)
}

#[test]
fn a_cold_read_of_a_file_45_percent_locked_is_not_cold_in_the_warning_and_the_verdict_alike() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 64);
    let Some(_held) = lock_part(&f, 0.45) else {
        return;
    };
    let s = run(&f, &["-r", "1M", "64", "--cache", "cold"]);
    assert!(
        s.stderr.contains("warning: the run was not cold: 45."),
        "{}",
        s.stderr
    );
    assert_suspect(&s, "not_cold");
    // The same figure in both: the warning's share starts the verdict's sentence.
    let warned = s
        .stderr
        .split("warning: the run was not cold: ")
        .nth(1)
        .and_then(|t| t.split('%').next())
        .unwrap()
        .to_string();
    assert!(s.why.contains(&format!("{warned}% of the file")), "{s:?}");
}

/// Busy loops on `n` other processes, for as long as the guard lives (killed by pid on drop).
struct Busy(Vec<std::process::Child>);

impl Busy {
    fn start(n: usize) -> Busy {
        Busy(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn a_warm_run_with_busy_loops_on_every_core_is_suspect_cpu_contended_with_the_share() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 16);
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    // One busy loop per core and one more: the run's one worker has a third of a core or less.
    let _busy = Busy::start(cores + 1);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let s = run(
        &f,
        &[
            "-r",
            "4K",
            "300000",
            "--pattern",
            "random",
            "--method",
            "pread",
            "--cache",
            "warm",
        ],
    );
    assert_suspect(&s, "cpu_contended");
    assert!(s.why.contains("waited for a CPU during"), "{s:?}");
}

/// A thread that reads `path` again and again (`dd`, buffered) until dropped.
struct Reader {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Reader {
    fn start(args: Vec<String>) -> Reader {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            while !s.load(std::sync::atomic::Ordering::SeqCst) {
                let _ = Command::new("dd").args(&args).arg("status=none").status();
            }
        });
        Reader {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_cold_read_raced_by_another_reader_of_the_same_file_is_suspect_cache_not_disk() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 64);
    // Another process reads the whole file, over and over, in 1 MiB reads: right after the
    // run's eviction it brings the file back into the page cache far faster than the run's
    // random 4 KiB reads go, so most of them are served by the cache.
    let _racer = Reader::start(vec![
        format!("if={}", f.display()),
        "of=/dev/null".into(),
        "bs=1M".into(),
    ]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let s = run(
        &f,
        &[
            "-r",
            "4K",
            "16384",
            "--pattern",
            "random",
            "--method",
            "pread",
            "--cache",
            "cold",
        ],
    );
    assert_suspect(&s, "cache_not_disk");
    assert!(s.why.contains("its own I/O accounting"), "{s:?}");
}

#[test]
fn a_writer_on_the_device_during_a_cold_read_is_suspect_other_io_naming_the_writes() {
    let Some(fs) = LoopFs::ext4_in(&std::env::temp_dir()) else {
        return;
    };
    let f = fs.mnt().join("f");
    write_file(&f, 32);
    // Another process writes 64 MiB files on the same device, O_DIRECT, over and over.
    let _writer = Reader::start(vec![
        "if=/dev/zero".into(),
        format!("of={}", fs.mnt().join("other").display()),
        "bs=1M".into(),
        "count=64".into(),
        "oflag=direct".into(),
    ]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let s = run(&f, &["-r", "4K", "8192", "--direct", "--method", "pread"]);
    assert_suspect(&s, "other_io");
    assert!(s.why.contains("written"), "{s:?}");
}

#[test]
fn a_cold_read_on_a_loop_over_an_image_cached_below_is_judged_by_the_device_under_it() {
    // The image sits on a loop device of its own (so no other process's reads land on the
    // device under it): loop (inner) → its image on ext4 → loop (outer) → the disk.
    let ext4 = [
        "mkfs.ext4",
        "-q",
        "-E",
        "lazy_itable_init=0,lazy_journal_init=0",
    ];
    let Some(outer) = LoopFs::make_sized(&std::env::temp_dir(), 256, &ext4, &[]) else {
        return;
    };
    let Some(fs) = LoopFs::make_sized(&outer.mnt(), 160, &ext4, &[]) else {
        return;
    };
    let top =
        std::fs::read_to_string(format!("/sys/block/{}/loop/dio", fs.name())).unwrap_or_default();
    if top.trim() == "1" {
        eprintln!("skipped: {} reads its image with O_DIRECT", fs.name());
        return;
    }
    let f = fs.mnt().join("f");
    write_file(&f, 64);
    // The image file, on the device below, read into the page cache there.
    std::fs::read(fs.image()).unwrap();
    let s = run(&f, &["-r", "1M", "64", "--cache", "cold"]);
    assert_suspect(&s, "cache_not_disk");
    assert!(
        s.why.contains(fs.name()) && s.why.contains(outer.name()),
        "{s:?}"
    );
    assert!(s.why.contains("below the loop device"), "{s:?}");
    drop(fs);
}

#[test]
fn a_small_file_on_a_loop_with_a_small_read_ahead_is_judged_by_the_loops_window() {
    let Some(fs) = LoopFs::ext4_in(&std::env::temp_dir()) else {
        return;
    };
    fs.set_read_ahead_kb(128);
    let f = fs.mnt().join("f");
    write_file(&f, 4);
    // 4 MiB is within the disk's window under the image (8 MiB on the lab VM), not the loop's.
    let s = run(&f, &["-r", "4K", "1024", "--cache", "cold"]);
    assert!(!s.has("small_test_area"), "{s:?}");
    assert!(s.stderr.contains(fs.name()), "{}", s.stderr);
}

#[test]
fn a_cold_4k_read_whose_bytes_went_to_the_device_is_never_generator_bound() {
    let d = tmp();
    let f = d.path().join("f");
    write_file(&f, 64);
    let s = run(&f, &["-r", "4K", "16384", "--cache", "cold"]);
    assert!(!s.has("generator_bound"), "{s:?}");
}
