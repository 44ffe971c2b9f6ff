//! Doing the same I/O as fio: the fio command line `run --fio` prints (and, where fio is
//! installed, that fio runs it over the same bytes), the memory behind O_DIRECT buffers and its
//! fallback, write data that stays byte-for-byte what it was, and both io_uring submission
//! policies giving the same XOR.

use crate::util::{bin, p, reference_xor, tmp, write_varied_file};
use std::path::Path;
use std::time::Duration;

/// Every run here is bounded: a hang fails the test instead of stalling the suite.
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `run ARGS...`; returns (stdout trimmed, stderr), asserting success.
fn run(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = bin("run");
    cmd.args(args).timeout(RUN_TIMEOUT);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.assert().success();
    let o = out.get_output();
    (
        String::from_utf8_lossy(&o.stdout).trim().to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

fn fio_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("fio "))
        .unwrap_or_else(|| panic!("no fio line in: {stderr}"))
}

fn direct_supported(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let f = dir.join("direct-probe");
    std::fs::write(&f, vec![0u8; 4096]).unwrap();
    let ok = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&f)
        .is_ok();
    std::fs::remove_file(&f).unwrap();
    ok
}

#[test]
fn run_with_fio_prints_the_fio_command_line_that_does_the_same_io() {
    let dir = tmp();
    let f = p(&dir, "data");
    let want = reference_xor(&write_varied_file(&f, 8 << 20, 3));
    let path = f.to_str().unwrap();

    let (xor, err) = run(
        &[
            path, "-r", "1M", "8", "--method", "pread", "-t", "2", "--cache", "warm", "--fio",
        ],
        &[],
    );
    assert_eq!(xor, want, "stdout stays the XOR alone");
    let line = fio_line(&err);
    for arg in [
        "--rw=read",
        "--bs=1048576",
        "--ioengine=psync",
        "--numjobs=2",
        "--size=4194304",
        "--offset_increment=4194304",
        "--direct=0",
        "--invalidate=0",
        "--thread=1",
    ] {
        assert!(line.contains(arg), "{arg} missing from {line}");
    }

    let (_, err) = run(
        &[
            path,
            "-r",
            "4K",
            "100",
            "--method",
            "io_uring",
            "--queue-depth",
            "32",
            "--pattern",
            "random",
            "--submit",
            "each",
            "--cache",
            "cold",
            "--fio",
        ],
        &[],
    );
    let line = fio_line(&err);
    for arg in [
        "--rw=randread",
        "--ioengine=io_uring",
        "--iodepth=32",
        "--iodepth_batch_submit=1",
        "--norandommap=1",
        "--number_ios=100",
        "--invalidate=1",
        "--size=8388608",
    ] {
        assert!(line.contains(arg), "{arg} missing from {line}");
    }

    let w = p(&dir, "written");
    let (_, err) = run(
        &[
            w.to_str().unwrap(),
            "-w",
            "64K",
            "4",
            "--method",
            "mmap",
            "--fsync",
            "--fio",
        ],
        &[],
    );
    let line = fio_line(&err);
    for arg in [
        "--rw=write",
        "--ioengine=mmap",
        "--end_fsync=1",
        "--fallocate=native",
        "--size=262144",
    ] {
        assert!(line.contains(arg), "{arg} missing from {line}");
    }
}

#[test]
fn fio_runs_the_printed_command_and_moves_the_same_bytes() {
    if std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: fio is not installed (apt-get install -y fio)");
        return;
    }
    let dir = tmp();
    // A space and a colon: the line must survive both the shell and fio's filename parsing.
    let f = p(&dir, "odd name:1");
    write_varied_file(&f, (3 << 20) + 4096, 5);
    let (_, err) = run(
        &[
            f.to_str().unwrap(),
            "-r",
            "64K",
            "40",
            "--method",
            "pread",
            "-t",
            "2",
            "--fio",
        ],
        &[],
    );
    let line = fio_line(&err);
    let out = std::process::Command::new("timeout")
        .args(["60", "sh", "-c", &format!("{line} --output-format=json")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The first `io_bytes` of fio's JSON is the read side of the (grouped) job.
    let json = String::from_utf8_lossy(&out.stdout);
    let after = json
        .split("\"io_bytes\"")
        .nth(1)
        .expect("io_bytes in fio's JSON");
    let bytes: u64 = after
        .trim_start_matches([' ', ':'])
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a number after io_bytes");
    assert_eq!(bytes, 40 * 64 * 1024, "{line}");
}

#[test]
fn o_direct_buffers_say_which_memory_they_use_and_fall_back_to_pages() {
    let dir = tmp();
    if !direct_supported(dir.path()) {
        eprintln!("skipped: the temp directory's filesystem refuses O_DIRECT");
        return;
    }
    let f = p(&dir, "data");
    let want = reference_xor(&write_varied_file(&f, 4 << 20, 7));
    let args = [
        f.to_str().unwrap(),
        "-r",
        "1M",
        "4",
        "--method",
        "io_uring",
        "--direct",
    ];
    let (xor, err) = run(&args, &[]);
    assert_eq!(xor, want);
    assert!(err.contains("note: O_DIRECT buffers: "), "{err}");
    let (xor, err) = run(&args, &[("DISKSCOPE_IO_MEMORY", "pages")]);
    assert_eq!(xor, want);
    assert!(err.contains("O_DIRECT buffers: 4 KiB pages"), "{err}");
    // As root the note gives the slots' physical layout, read back from the page map (the
    // frames are hidden from other users: then the kind's general warning stays).
    let root = rustix::process::geteuid().is_root();
    assert_eq!(err.contains("1M slots in "), root, "{err}");
    assert_eq!(err.contains("physical piece"), root, "{err}");
    let (xor, err) = run(&args, &[("DISKSCOPE_IO_MEMORY", "thp")]);
    assert_eq!(xor, want);
    assert!(!err.contains("hugetlb 2 MiB"), "capped at THP: {err}");
}

#[test]
fn written_bytes_are_the_same_as_before_generation_moved_out_of_the_run() {
    // `run FILE -w 1M 64` printed this before write data was generated ahead of the run; the
    // file read back gives it too, whatever the method.
    const CLASSIC_1M_X64: &str = "bc81594b";
    // The bytes, not the disk: in RAM, where writeback cannot throttle the writes.
    let dir = crate::util::tmp_in_ram();
    for method in ["read", "pread", "mmap", "io_uring", "buffered"] {
        let f = p(&dir, method);
        let path = f.to_str().unwrap();
        let (xor, _) = run(&[path, "-w", "1M", "64", "--method", method], &[]);
        assert_eq!(xor, CLASSIC_1M_X64, "{method}");
        assert_eq!(
            reference_xor(&std::fs::read(&f).unwrap()),
            CLASSIC_1M_X64,
            "{method}"
        );
        std::fs::remove_file(&f).unwrap();
    }
}

#[test]
fn prealloc_takes_native_or_none_and_names_the_flag_otherwise() {
    let dir = tmp();
    for mode in ["native", "none"] {
        let f = p(&dir, mode);
        let (xor, _) = run(
            &[f.to_str().unwrap(), "-w", "64K", "5", "--prealloc", mode],
            &[],
        );
        let data = std::fs::read(&f).unwrap();
        assert_eq!(data.len(), 5 * 65536);
        assert_eq!(xor, reference_xor(&data));
    }
    let out = bin("run")
        .args([
            p(&dir, "x").to_str().unwrap(),
            "-w",
            "4K",
            "1",
            "--prealloc",
            "posix",
        ])
        .timeout(RUN_TIMEOUT)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("--prealloc") && err.contains("native, none"),
        "{err}"
    );
    assert!(!p(&dir, "x").exists(), "a rejected command creates nothing");
}

#[test]
fn both_submission_policies_read_and_write_the_same_xor() {
    let dir = tmp();
    let f = p(&dir, "data");
    let want = reference_xor(&write_varied_file(&f, (5 << 20) + 123, 11));
    let path = f.to_str().unwrap();
    for submit in ["batch", "each"] {
        let (xor, err) = run(
            &[
                path,
                "-r",
                "64K",
                "1000",
                "--method",
                "io_uring",
                "--queue-depth",
                "16",
                "--submit",
                submit,
            ],
            &[],
        );
        assert_eq!(xor, want, "{submit}: {err}");
        let w = p(&dir, &format!("w-{submit}"));
        let (wx, _) = run(
            &[
                w.to_str().unwrap(),
                "-w",
                "64K",
                "50",
                "--method",
                "io_uring",
                "--queue-depth",
                "8",
                "--submit",
                submit,
            ],
            &[],
        );
        assert_eq!(wx, reference_xor(&std::fs::read(&w).unwrap()), "{submit}");
    }
    let (x_batch, _) = run(
        &[
            path,
            "-r",
            "4K",
            "3000",
            "--method",
            "io_uring",
            "--queue-depth",
            "32",
            "--pattern",
            "random",
            "--submit",
            "batch",
        ],
        &[],
    );
    let (x_each, _) = run(
        &[
            path,
            "-r",
            "4K",
            "3000",
            "--method",
            "io_uring",
            "--queue-depth",
            "32",
            "--pattern",
            "random",
            "--submit",
            "each",
        ],
        &[],
    );
    assert_eq!(x_batch, x_each, "same seed, same offsets, same XOR");
    let out = bin("run")
        .args([
            path, "-r", "4K", "1", "--method", "io_uring", "--submit", "eager",
        ])
        .timeout(RUN_TIMEOUT)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("--submit") && err.contains("batch, each"),
        "{err}"
    );
}
