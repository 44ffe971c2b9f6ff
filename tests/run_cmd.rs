//! run / run2 / fast / syscalls from the outside: the XOR contract across every method, thread
//! count, block size and odd file size (checked against an independent implementation), the
//! write-then-read round trip, cache eviction, and every bad input the lab commands must refuse.

use crate::util::{bin, is_root, p, reference_xor, tmp, write_varied_file};
use diskscope::cache;
use diskscope::config::spec::{RunSpec, CLI_NAMES};
use diskscope::config::{CacheMode, Method, Op, Pattern};
use diskscope::runner::run_blocking;
use proptest::prelude::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn xor_via_library(path: &Path, method: Method, threads: usize, bs: u64, direct: bool) -> String {
    let mut spec = RunSpec::new(path);
    spec.setup.method = method;
    spec.setup.threads = threads;
    spec.setup.block_size_bytes = bs;
    spec.setup.direct = direct;
    spec.validate(&CLI_NAMES).unwrap();
    let o = run_blocking(&spec, "test", Arc::new(AtomicBool::new(false)), |_, _| {})
        .unwrap_or_else(|e| panic!("{method} t{threads} bs{bs}: {e:#}"));
    o.result.figures.xor
}

#[test]
fn xor_is_identical_for_every_method_thread_count_and_block_size() {
    let dir = tmp();
    for (i, size) in [0usize, 1, 3, 5, 4099, 70_001].into_iter().enumerate() {
        let f = p(&dir, &format!("f{size}"));
        let data = write_varied_file(&f, size, i as u8);
        let want = reference_xor(&data);
        for &method in Method::ALL {
            for threads in [1usize, 2, 3, 7] {
                for bs in [1u64, 3, 4, 7, 512, 4096, 65_539, 1 << 20] {
                    if bs < 8 && size > 5000 {
                        continue; // a byte at a time over 70 KB is slow in debug builds
                    }
                    let got = xor_via_library(&f, method, threads, bs, false);
                    assert_eq!(got, want, "size {size} {method} threads {threads} bs {bs}");
                }
            }
        }
    }
}

#[test]
fn xor_is_identical_with_o_direct_on_odd_sized_files() {
    let dir = tmp();
    for (i, size) in [4099usize, 70_001, (1 << 20) + 3].into_iter().enumerate() {
        let f = p(&dir, &format!("d{size}"));
        let want = reference_xor(&write_varied_file(&f, size, 40 + i as u8));
        for method in [Method::Read, Method::Pread, Method::IoUring] {
            for threads in [1usize, 3] {
                for bs in [512u64, 4096, 1 << 20] {
                    let got = xor_via_library(&f, method, threads, bs, true);
                    assert_eq!(got, want, "O_DIRECT size {size} {method} t{threads} bs{bs}");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn xor_matches_the_reference_for_arbitrary_sizes(
        size in 0usize..20_000,
        bs in 1u64..5_000,
        threads in 1usize..6,
        m in 0usize..5,
        salt in any::<u8>(),
    ) {
        let dir = tmp();
        let f = p(&dir, "prop");
        let want = reference_xor(&write_varied_file(&f, size, salt));
        let got = xor_via_library(&f, Method::ALL[m], threads, bs, false);
        prop_assert_eq!(got, want);
    }
}

#[test]
fn xor_is_the_same_warm_and_cold() {
    let dir = tmp();
    let f = p(&dir, "wc");
    let want = reference_xor(&write_varied_file(&f, 3 << 20, 9));
    for cache in [CacheMode::Warm, CacheMode::Cold, CacheMode::AsIs] {
        let mut spec = RunSpec::new(&f);
        spec.setup.cache = cache;
        spec.setup.threads = 2;
        let o = run_blocking(&spec, "t", Arc::new(AtomicBool::new(false)), |_, _| {}).unwrap();
        assert_eq!(o.result.figures.xor, want, "{cache}");
    }
}

#[test]
fn written_files_read_back_with_the_xor_the_write_printed() {
    let dir = tmp();
    for (i, &method) in Method::ALL.iter().enumerate() {
        for (bs, count, threads) in [(1000u64, 37u64, 1usize), (7, 1001, 3), (4096, 64, 2)] {
            let f = p(&dir, &format!("w{i}-{bs}-{threads}"));
            let mut spec = RunSpec::new(&f);
            spec.setup.op = Op::Write;
            spec.setup.method = method;
            spec.setup.block_size_bytes = bs;
            spec.target.block_count = Some(count);
            spec.setup.threads = threads;
            spec.setup.write_sync = diskscope::config::WriteSync::FsyncAtEnd;
            let w = run_blocking(&spec, "t", Arc::new(AtomicBool::new(false)), |_, _| {})
                .unwrap_or_else(|e| panic!("{method}: {e:#}"));
            let data = std::fs::read(&f).unwrap();
            assert_eq!(data.len() as u64, bs * count, "{method} size");
            assert_eq!(
                w.result.figures.xor,
                reference_xor(&data),
                "{method} write xor"
            );
            // Read back with another method and thread count.
            let other = Method::ALL[(i + 1) % Method::ALL.len()];
            assert_eq!(
                xor_via_library(&f, other, 2, 4096, false),
                w.result.figures.xor
            );
        }
    }
}

#[test]
fn run_w_then_run_r_print_the_same_xor_from_the_classic_binaries() {
    let dir = tmp();
    let f = p(&dir, "classic");
    let w = bin("run")
        .arg(&f)
        .args(["-w", "1000", "37"])
        .assert()
        .success();
    let wx = String::from_utf8(w.get_output().stdout.clone()).unwrap();
    assert_eq!(wx.trim().len(), 8, "stdout holds only the XOR: {wx:?}");
    let r = bin("run")
        .arg(&f)
        .args(["-r", "1000", "37"])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8(r.get_output().stdout.clone()).unwrap(),
        wx
    );
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 37_000);
    // The same through the subcommand, with suffixes and options.
    let s = bin("diskscope")
        .args(["run"])
        .arg(&f)
        .args(["-r", "1K", "100", "--method", "io_uring", "--threads", "2"])
        .assert()
        .success();
    let stderr = String::from_utf8(s.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("note: the file ends at 37000 bytes"),
        "{stderr}"
    );
    assert_eq!(
        String::from_utf8(s.get_output().stdout.clone()).unwrap(),
        wx
    );
}

#[test]
fn a_cold_run_evicts_the_file_and_a_warm_run_caches_it() {
    let dir = tmp();
    let f = p(&dir, "cold");
    write_varied_file(&f, 8 << 20, 3);
    cache::prepare(&f, CacheMode::Warm, 8 << 20).unwrap();
    let before = cache::residency(&f).unwrap().percent();
    assert!(before > 99.0, "warm residency {before}");
    cache::prepare(&f, CacheMode::Cold, 8 << 20).unwrap();
    let after = cache::residency(&f).unwrap().percent();
    assert!(after < 1.0, "cold residency {after}");
    // cachestat and mincore agree, cold and after warming half the file.
    let file = std::fs::File::open(&f).unwrap();
    assert_eq!(
        cache::residency_by_mincore(&file).unwrap().resident_pages,
        0
    );
    cache::warm_file(&file, 4 << 20).unwrap();
    let by_mincore = cache::residency_by_mincore(&file).unwrap();
    assert!(
        by_mincore.resident_pages >= 1024,
        "at least the 4 MiB read (readahead may add)"
    );
    if let Some(pages) = cache::cachestat_pages(&file, 0, 0) {
        assert_eq!(pages, by_mincore.resident_pages);
    }
    cache::evict_file(&file).unwrap();
    // Through the command: the residency measured before the run is reported.
    let out = bin("run")
        .arg(&f)
        .args(["-r", "64K", "128", "--cache", "cold"])
        .assert()
        .success();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("(0.0% resident before)"), "{stderr}");
    let out = bin("run")
        .arg(&f)
        .args(["-r", "64K", "128", "--cache", "warm"])
        .assert()
        .success();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("(100.0% resident before)"), "{stderr}");
}

#[test]
fn random_offsets_stay_in_the_file_and_do_the_asked_count() {
    let dir = tmp();
    let f = p(&dir, "rnd");
    write_varied_file(&f, 1 << 20, 5);
    let mut spec = RunSpec::new(&f);
    spec.setup.pattern = Pattern::Random;
    spec.setup.block_size_bytes = 4096;
    spec.target.block_count = Some(500);
    spec.setup.threads = 3;
    spec.setup.method = Method::IoUring;
    spec.setup.queue_depth = 16;
    let o = run_blocking(&spec, "t", Arc::new(AtomicBool::new(false)), |_, _| {}).unwrap();
    assert_eq!(o.result.figures.ops, 500);
    assert_eq!(o.result.figures.bytes, 500 * 4096);
}

/// Runs `run` with `args` and expects a one-line error with `code` that contains `needle`.
fn expect_error(args: &[&str], code: i32, needle: &str) -> String {
    let out = bin("run").args(args).assert().code(code);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"));
    assert!(out.get_output().stdout.is_empty(), "nothing on stdout");
    stderr
}

#[test]
fn bad_sizes_counts_threads_and_methods_are_usage_errors_naming_the_argument() {
    let dir = tmp();
    let f = p(&dir, "f");
    write_varied_file(&f, 10_000, 1);
    let f = f.to_str().unwrap();
    expect_error(&[f, "-r", "0", "10"], 2, "BLOCK_SIZE");
    expect_error(&[f, "-r", "abc", "10"], 2, "BLOCK_SIZE");
    expect_error(&[f, "-r", "2G", "10"], 2, "1G maximum");
    expect_error(&[f, "-r", "1G", "99999999999999"], 2, "overflows");
    expect_error(&[f, "-r", "4K", "0"], 2, "BLOCK_COUNT");
    expect_error(&[f, "-r", "4K", "x"], 2, "BLOCK_COUNT");
    expect_error(&[f, "-r", "4K", "1", "--threads", "0"], 2, "--threads");
    expect_error(&[f, "-r", "4K", "1", "--method", "aio"], 2, "--method");
    expect_error(&[f, "-r", "4K", "1", "--cache", "lukewarm"], 2, "--cache");
    expect_error(&[f, "-r", "1000", "1", "--direct"], 2, "multiple of 512");
    expect_error(
        &[f, "-r", "4K", "1", "--method", "mmap", "--direct"],
        2,
        "--direct",
    );
    expect_error(&[f, "4K", "1"], 2, "error");
    expect_error(&[f, "-r", "-w", "4K", "1"], 2, "cannot be used with");
}

#[test]
fn missing_files_directories_and_refused_o_direct_are_clear_errors() {
    let dir = tmp();
    let missing = p(&dir, "nope");
    // A FILE that cannot be used as given is bad usage (exit 2), like any argument.
    expect_error(
        &[missing.to_str().unwrap(), "-r", "4K", "1"],
        2,
        "does not exist",
    );
    expect_error(
        &[dir.path().to_str().unwrap(), "-r", "4K", "1"],
        2,
        "is a directory",
    );
    expect_error(
        &[dir.path().to_str().unwrap(), "-w", "4K", "1"],
        2,
        "is a directory",
    );
    // procfs (which also refuses O_DIRECT) is refused before any open, naming the file.
    expect_error(
        &["/proc/version", "-r", "512", "1", "--direct"],
        2,
        "/proc/version is a /proc or /sys pseudo-file",
    );
}

#[test]
fn an_unreadable_file_is_a_permission_error() {
    if !is_root() {
        eprintln!("skipped: needs root to run the binary as another user");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "secret");
    write_varied_file(&f, 100, 1);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    use std::os::unix::process::CommandExt;
    let out = crate::util::command_for_any_user(dir.path(), "run")
        .arg(&f)
        .args(["-r", "4K", "1"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A FILE that cannot be used as given is bad usage, as any argument: nothing was measured.
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("permission denied"), "{stderr}");
}

#[test]
fn writing_never_replaces_an_existing_file_without_force() {
    let dir = tmp();
    let f = p(&dir, "keep");
    std::fs::write(&f, b"precious").unwrap();
    let fs = f.to_str().unwrap();
    expect_error(&[fs, "-w", "4K", "2"], 2, "--force");
    assert_eq!(std::fs::read(&f).unwrap(), b"precious");
    bin("run")
        .args([fs, "-w", "4K", "2", "--force", "--fsync"])
        .assert()
        .success();
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 8192);
    expect_error(&[fs, "-r", "4K", "2", "--force"], 2, "--force");
}

#[test]
fn block_devices_are_never_written() {
    if !is_root() {
        eprintln!("skipped: needs root for mknod");
        return;
    }
    let dir = tmp();
    let dev = p(&dir, "blk");
    let c = std::ffi::CString::new(dev.to_str().unwrap()).unwrap();
    // SAFETY: mknod with a valid C string; major 7 minor 250 is an unused loop device number.
    let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFBLK | 0o600, libc::makedev(7, 250)) };
    if rc != 0 {
        eprintln!("skipped: mknod failed here");
        return;
    }
    // A FILE that cannot be used as given is bad usage (exit 2): nothing was written.
    expect_error(
        &[dev.to_str().unwrap(), "-w", "4K", "1", "--force"],
        2,
        "block device",
    );
}

#[test]
fn a_full_disk_reports_and_removes_the_partial_file() {
    // /dev/full fails every write with ENOSPC.
    expect_error(&["/dev/full", "-w", "4K", "4", "--force"], 1, "disk full");
    if !is_root() {
        eprintln!("skipped: the small-filesystem half needs root to mount a tmpfs");
        return;
    }
    let dir = tmp();
    let mnt = p(&dir, "mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    let f = mnt.join("big");
    // 6.25 MiB fit when the run checks the free space; another file takes it before the writes.
    let hook = crate::hostile_runtime::Hook::at("after-create");
    let child = {
        let mut c = hook.spawn("run", &[f.to_str().unwrap(), "-w", "64K", "100"]);
        hook.reached(&mut c);
        let _ = std::fs::write(mnt.join("filler"), vec![1u8; 7 << 20]);
        hook.go();
        c
    };
    let out = crate::hostile_runtime::finish(child);
    let msg = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(msg.contains("disk full"), "{msg}");
    assert!(msg.contains("removed the partial file"), "{msg}");
    assert!(!f.exists());
    let _ = std::process::Command::new("umount").arg(&mnt).status();
}

/// Installs a seccomp filter in the child that makes io_uring_setup fail with ENOSYS, as on a
/// kernel without io_uring.
fn without_io_uring(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and only calls async-signal-safe
    // prctl with a filter program that lives on its stack for the duration of the call.
    unsafe {
        cmd.pre_exec(|| {
            const NR_IO_URING_SETUP: u32 = 425;
            let filter = [
                // load the syscall number
                libc::sock_filter {
                    code: 0x20,
                    jt: 0,
                    jf: 0,
                    k: 0,
                },
                // if nr == io_uring_setup: next, else skip one
                libc::sock_filter {
                    code: 0x15,
                    jt: 0,
                    jf: 1,
                    k: NR_IO_URING_SETUP,
                },
                // return ERRNO(ENOSYS)
                libc::sock_filter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0x0005_0000 | libc::ENOSYS as u32,
                },
                // return ALLOW
                libc::sock_filter {
                    code: 0x06,
                    jt: 0,
                    jf: 0,
                    k: 0x7fff_0000,
                },
            ];
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut _,
            };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[test]
fn io_uring_unavailable_is_an_error_that_names_another_method() {
    let dir = tmp();
    let f = p(&dir, "u");
    write_varied_file(&f, 10_000, 2);
    let mut cmd = crate::util::command("run");
    cmd.arg(&f).args(["-r", "4K", "2", "--method", "io_uring"]);
    without_io_uring(&mut cmd);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("io_uring is not available") && stderr.contains("--method pread"));
    // The other methods still work in the same sandbox.
    let mut cmd = crate::util::command("run");
    cmd.arg(&f).args(["-r", "4K", "2", "--method", "pread"]);
    without_io_uring(&mut cmd);
    assert!(cmd.output().unwrap().status.success());
}

#[test]
fn run2_prints_a_power_of_two_count_that_reaches_the_target() {
    let dir = tmp();
    let f = p(&dir, "r2");
    write_varied_file(&f, 4 << 20, 1);
    let out = bin("run2")
        .arg(&f)
        .args(["4K", "--target", "0.0005"])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let n: u64 = stdout.trim().parse().expect("stdout is the count alone");
    assert!(n.is_power_of_two() && n <= 1024, "{n}");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("file size 4194304 bytes") && stderr.contains("MiB/s"),
        "{stderr}"
    );
}

#[test]
fn run2_on_a_file_too_small_for_the_target_says_how_to_make_one() {
    let dir = tmp();
    let f = p(&dir, "small");
    write_varied_file(&f, 100_000, 1);
    let out = bin("diskscope")
        .arg("run2")
        .arg(&f)
        .args(["4K", "--target", "30"])
        .assert()
        .code(1);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("ends after 100000 bytes"), "{stderr}");
    assert!(stderr.contains("run BIGFILE -w 1M "), "{stderr}");
    assert!(out.get_output().stdout.is_empty());
}

#[test]
fn syscalls_reports_every_call_of_the_lab() {
    let dir = tmp();
    let f = p(&dir, "s");
    write_varied_file(&f, 4096, 1);
    let out = bin("diskscope")
        .arg("syscalls")
        .arg(&f)
        .args(["--seconds", "0.02"])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for name in [
        "read 1 B",
        "pread 1 B",
        "lseek",
        "getpid",
        "getuid",
        "fstat",
        "write 1 B",
        "io_uring nop",
    ] {
        assert!(stdout.contains(name), "{name} missing:\n{stdout}");
    }
    let out = bin("diskscope")
        .arg("syscalls")
        .arg(&f)
        .args(["--seconds", "0.01", "--csv"])
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.starts_with("syscall,calls,seconds,calls_per_s,ns_per_call,verdict,reasons,why\n"),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 9);
}

#[test]
fn a_closed_stdout_pipe_is_not_an_error() {
    let dir = tmp();
    let f = p(&dir, "pipe");
    write_varied_file(&f, 10_000, 1);
    let exe = crate::util::command("run");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{}'{}' '{}' -r 4K 3 | true",
            crate::util::Sandbox::new().shell_prefix(),
            exe.get_program().to_string_lossy(),
            f.display()
        ))
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_stop_flag_ends_a_looping_run_within_100_ms_and_snapshots_come_every_100_ms() {
    use diskscope::measure::SnapshotKind;
    use diskscope::runner::Step;
    use std::time::{Duration, Instant};
    let dir = tmp();
    let f = p(&dir, "loop");
    write_varied_file(&f, 1 << 20, 4);
    let mut spec = RunSpec::new(&f);
    spec.setup.block_size_bytes = 4096;
    spec.target.loop_range = true;
    spec.setup.threads = 2;
    let stop = Arc::new(AtomicBool::new(false));
    let mut run = diskscope::runner::Run::start(&spec, "t", stop.clone()).unwrap();
    let begin = Instant::now();
    let mut intervals = 0;
    let mut stopped_at = None;
    loop {
        match run.poll(Duration::from_millis(20)) {
            Step::Snapshot(s) => {
                if s.kind == SnapshotKind::Interval {
                    intervals += 1;
                    assert!(s.interval_ns < 200_000_000, "interval {}", s.interval_ns);
                }
            }
            Step::Ended => break,
            Step::Pending => {}
        }
        if stopped_at.is_none() && begin.elapsed() >= Duration::from_millis(1000) {
            run.stop();
            stopped_at = Some(Instant::now());
        }
    }
    let stop_latency = stopped_at.unwrap().elapsed();
    assert!(
        stop_latency < Duration::from_millis(100),
        "stopped in {stop_latency:?}"
    );
    // ~10 per second per worker; allow for a loaded machine.
    assert!(
        (12..=24).contains(&intervals),
        "{intervals} interval snapshots in 1 s × 2 workers"
    );
    run.finish().unwrap();
}

#[test]
fn a_time_bound_ends_the_run_on_time() {
    let dir = tmp();
    let f = p(&dir, "timed");
    write_varied_file(&f, 1 << 20, 4);
    let mut spec = RunSpec::new(&f);
    spec.setup.block_size_bytes = 4096;
    spec.target.duration = Some(std::time::Duration::from_millis(300));
    let o = run_blocking(&spec, "t", Arc::new(AtomicBool::new(false)), |_, _| {}).unwrap();
    assert!(
        o.result.figures.seconds >= 0.29 && o.result.figures.seconds < 0.6,
        "{}",
        o.result.figures.seconds
    );
    assert!(
        o.result.figures.bytes > 1 << 20,
        "looped over the file: {}",
        o.result.figures.bytes
    );
    // It looped, yet the XOR is still the file's (first pass only).
    assert_eq!(
        o.result.figures.xor,
        reference_xor(&std::fs::read(&f).unwrap())
    );
}

#[test]
fn cold_all_drops_every_cache_as_root() {
    if !is_root() {
        eprintln!("skipped: --cache cold-all needs root");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "coldall");
    write_varied_file(&f, 1 << 20, 8);
    let out = bin("run")
        .arg(&f)
        .args(["-r", "64K", "16", "--cache", "cold-all"])
        .assert()
        .success();
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("(0.0% resident before)"), "{stderr}");
}

#[test]
fn tiny_reads_still_time_every_operation() {
    let dir = tmp();
    let f = p(&dir, "tiny");
    write_varied_file(&f, 50_000, 6);
    for (method, bs) in [
        (Method::Read, 1u64),
        (Method::Pread, 3),
        (Method::Buffered, 64),
    ] {
        let mut spec = RunSpec::new(&f);
        spec.setup.method = method;
        spec.setup.block_size_bytes = bs;
        let o = run_blocking(&spec, "t", Arc::new(AtomicBool::new(false)), |_, _| {}).unwrap();
        assert_eq!(
            o.aggregate.latency.len(),
            o.result.figures.ops,
            "{method}: one latency per op"
        );
        assert!(
            o.result.figures.lat_p50_us > 0.0 && o.result.figures.lat_p50_us < 1000.0,
            "{o:?}"
        );
    }
}

#[test]
fn io_uring_failures_with_many_writes_in_flight_end_in_a_clean_error() {
    // Every write to /dev/full fails with ENOSPC while up to 32 others are in flight: the engine
    // must reap them all before reporting, for every thread.
    for threads in ["1", "3"] {
        let msg = expect_error(
            &[
                "/dev/full",
                "-w",
                "4K",
                "256",
                "--force",
                "--method",
                "io_uring",
                "--queue-depth",
                "32",
                "--threads",
                threads,
            ],
            1,
            "disk full",
        );
        assert!(msg.contains("io_uring"), "{msg}");
    }
}

#[test]
fn negative_durations_are_range_errors_naming_the_flag() {
    let out = bin("diskscope")
        .args(["syscalls", "--seconds", "-1"])
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        stderr.contains("--seconds: must be a number of seconds above 0 and at most 86400"),
        "{stderr}"
    );
    let out = bin("run2")
        .args(["/etc/hostname", "4K", "--target", "-3"])
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("--target: must be"), "{stderr}");
}

#[test]
fn one_exit_code_rule_a_file_that_is_not_there_is_bad_usage_for_every_command() {
    // 0 ok, 1 a run failed, 2 bad usage: a FILE (or sweep, trace, result) that cannot be used
    // as given is bad usage like any argument, whichever command is given it.
    let dir = tmp();
    let m = p(&dir, "missing.dat");
    let m = m.to_str().unwrap();
    let cases: [(&str, Vec<&str>); 12] = [
        ("run", vec![m, "-r", "4K", "10"]),
        ("run2", vec![m, "4K"]),
        ("fast", vec![m]),
        ("diskscope", vec![m]),
        ("diskscope", vec!["run", m, "-r", "4K", "10"]),
        ("diskscope", vec!["run2", m, "4K"]),
        ("diskscope", vec!["fast", m]),
        ("diskscope", vec!["knee", m, "--p99", "1ms"]),
        ("diskscope", vec!["syscalls", m]),
        ("diskscope", vec!["limits", m]),
        ("diskscope", vec!["compare", m, m]),
        ("diskscope", vec!["--batch", m]),
    ];
    for (name, args) in cases {
        let out = bin(name).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name} {args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name} {args:?}: {err}");
        assert!(err.contains("missing.dat"), "{name} {args:?}: {err}");
    }
}

#[test]
fn every_argument_of_every_command_and_binary_is_described_in_help() {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        if cmd.is_hide_set() {
            return;
        }
        let path = format!("{path} {}", cmd.get_name());
        if cmd.get_about().is_none() {
            missing.push(format!("{path}: no about"));
        }
        for a in cmd.get_arguments() {
            let builtin = matches!(a.get_id().as_str(), "help" | "version");
            if !a.is_hide_set() && !builtin && a.get_help().is_none() {
                missing.push(format!("{path}: {}", a.get_id()));
            }
        }
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            walk(sub, &path, missing);
        }
    }
    let mut missing = Vec::new();
    walk(&diskscope::cli::Cli::command(), "", &mut missing);
    walk(&diskscope::cli::RunBin::command(), "", &mut missing);
    walk(&diskscope::cli::Run2Bin::command(), "", &mut missing);
    walk(&diskscope::cli::FastBin::command(), "", &mut missing);
    assert!(missing.is_empty(), "undescribed:\n{}", missing.join("\n"));
    for name in ["run", "run2", "fast"] {
        let out = bin(name).arg("--help").output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success());
        assert!(
            !help.starts_with("Standalone") && help.contains(&format!("diskscope {name}")),
            "{name}: {help}"
        );
    }
    let out = bin("diskscope")
        .args(["compare", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("sweep.json") && help.contains("fio"),
        "{help}"
    );
}

#[test]
fn every_subcommand_has_a_man_page_that_names_its_options() {
    use clap::CommandFactory;
    let cli = diskscope::cli::Cli::command();
    for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name();
        if name == "help" {
            continue;
        }
        let out = bin("diskscope").args(["man", name]).output().unwrap();
        assert!(out.status.success(), "man {name}");
        let page = String::from_utf8_lossy(&out.stdout);
        assert!(page.contains(&format!("diskscope\\-{name}")), "man {name}");
        for a in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = a.get_long() {
                // roff escapes the dashes: \-\-target
                let flag = format!("\\-\\-{}", long.replace('-', "\\-"));
                assert!(page.contains(&flag), "man {name} lacks {flag}");
            }
        }
    }
}
