//! The I/O buffers: what a run may allocate under the process's limits (issue 21, bug 14), and
//! which memory backs them (`--buffers`, issue 20): recorded in the result and in the fio line.

use crate::util::{bin, p, tmp, write_varied_file};
use std::os::unix::process::{CommandExt, ExitStatusExt};

/// `run ARGS` under an address-space limit of `limit_bytes` (`prlimit --as`): (exit code or
/// `None` for a signal, the signal, stderr).
fn run_under_rlimit_as(limit_bytes: u64, args: &[&str]) -> (Option<i32>, Option<i32>, String) {
    let mut cmd = crate::util::command("run");
    cmd.args(args).env("RUST_BACKTRACE", "0");
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits; nothing
    // else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit_bytes,
                rlim_max: limit_bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        out.status.signal(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn one_line_error(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line, got: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    lines[0]
}

#[test]
fn buffers_beyond_the_address_space_limit_are_refused_before_anything_is_allocated() {
    let dir = tmp();
    let f = p(&dir, "sparse");
    std::fs::File::create(&f).unwrap().set_len(8 << 30).unwrap();
    let path = f.to_str().unwrap();
    // 4 workers x 1 GiB under a 2 GiB address space: the allocator used to abort (SIGABRT).
    let (code, signal, err) = run_under_rlimit_as(2 << 30, &[path, "-r", "1G", "8", "-t", "4"]);
    assert_eq!(signal, None, "killed by a signal: {err}");
    assert_eq!(code, Some(2), "{err}");
    let line = one_line_error(&err);
    assert!(
        line.contains("--max-memory") && line.contains("RLIMIT_AS"),
        "{line}"
    );
}

#[test]
fn buffers_the_kernel_refuses_past_max_memory_are_an_error_not_an_abort() {
    let dir = tmp();
    let f = p(&dir, "sparse");
    std::fs::File::create(&f).unwrap().set_len(8 << 30).unwrap();
    let path = f.to_str().unwrap();
    // --max-memory lets the run past the budget; the allocation then fails under the limit.
    let args = [path, "-r", "1G", "8", "-t", "4", "--max-memory", "64G"];
    let (code, signal, err) = run_under_rlimit_as(2 << 30, &args);
    assert_eq!(signal, None, "killed by a signal: {err}");
    assert_eq!(code, Some(1), "{err}");
    let line = one_line_error(&err);
    assert!(line.contains("allocating 1024 MiB of buffers: "), "{line}");
}

/// stderr of a successful `run ARGS --fio`, and the fio line in it.
fn run_with_fio(args: &[&str]) -> (String, String) {
    let out = bin("run").args(args).arg("--fio").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let fio = err
        .lines()
        .find(|l| l.starts_with("fio "))
        .unwrap_or_else(|| panic!("no fio line in {err}"))
        .to_string();
    (err, fio)
}

#[test]
fn each_backing_is_stated_in_the_summary_and_named_in_the_fio_line() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 4 << 20, 1);
    let path = f.to_str().unwrap();
    let base = [path, "-r", "1M", "4", "--method", "pread"];
    for (buffers, summary, iomem) in [
        (None, "buffers plain", "--iomem=mmap"),
        (Some("plain"), "buffers plain", "--iomem=mmap"),
        (Some("malloc"), "buffers malloc", "--iomem=malloc"),
    ] {
        let mut args = base.to_vec();
        if let Some(b) = buffers {
            args.extend(["--buffers", b]);
        }
        let (err, fio) = run_with_fio(&args);
        assert!(err.contains(summary), "{buffers:?}: {err}");
        assert!(fio.contains(iomem), "{buffers:?}: {fio}");
    }
    // thp: huge pages, or plain pages and a note saying why.
    let (err, fio) = run_with_fio(&[&base[..], &["--buffers", "thp"]].concat());
    if err.contains("buffers thp") {
        assert!(fio.contains("--iomem=mmap"), "{fio}");
    } else {
        assert!(err.contains("note: --buffers thp: "), "{err}");
    }
}

#[test]
fn bad_backings_are_usage_errors_naming_the_flag() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 1 << 20, 2);
    let path = f.to_str().unwrap();
    let out = bin("run")
        .args([path, "-r", "4K", "4", "--buffers", "huge"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "--buffers: unknown value 'huge'; use one of auto, plain, malloc, thp, hugetlb"
        ),
        "{err}"
    );
    let out = bin("run")
        .args([path, "-r", "4K", "4", "--direct", "--buffers", "malloc"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--buffers plain"));
}

#[test]
fn the_csv_records_the_memory_the_buffers_had() {
    let dir = tmp();
    let sweep = p(&dir, "plan.toml");
    std::fs::write(
        &sweep,
        "[file]\ncreate = \"1M\"\n\n[[experiment]]\nname = \"a\"\nkind = \"throughput\"\n\
         method = \"pread\"\nblock_size = \"64K\"\nreps = 1\nseconds = 0.05\n",
    )
    .unwrap();
    let out = p(&dir, "out");
    let a = bin("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let mut r = csv::Reader::from_path(out.join("a.csv")).unwrap();
    let header = r.headers().unwrap().clone();
    let col = header
        .iter()
        .position(|h| h == "buffers")
        .expect("a buffers column");
    let row = r.records().next().unwrap().unwrap();
    assert_eq!(
        &row[col], "plain",
        "auto without O_DIRECT resolves to plain pages"
    );
}

#[test]
fn points_that_differ_only_in_their_buffers_are_two_summary_rows_that_name_them() {
    let dir = tmp();
    let sweep = p(&dir, "plan.toml");
    // plain and malloc can always be had (no huge pages needed), so the two points stay two.
    std::fs::write(
        &sweep,
        "[file]\ncreate = \"1M\"\n\n[[experiment]]\nname = \"b\"\nkind = \"throughput\"\n\
         method = \"pread\"\nblock_size = \"64K\"\nbuffers = [\"plain\", \"malloc\"]\n\
         reps = 2\nseconds = 0.05\n",
    )
    .unwrap();
    let out = p(&dir, "out");
    let a = bin("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let rows = crate::util::csv_file_maps(&out.join("b-summary.csv"));
    let buffers: Vec<&str> = rows.iter().map(|r| r["buffers"].as_str()).collect();
    assert_eq!(buffers, ["plain", "malloc"], "{rows:?}");
    assert!(rows.iter().all(|r| r["reps"] == "2"), "{rows:?}");
    // The table on stdout tells the two lines apart too.
    let stdout = String::from_utf8_lossy(&a.stdout);
    assert!(
        stdout.contains("buffers=plain") && stdout.contains("buffers=malloc"),
        "{stdout}"
    );
}

#[test]
fn writes_copy_from_the_memory_asked_for_and_write_the_same_bytes() {
    let dir = tmp();
    let mut xors = Vec::new();
    for b in ["auto", "plain", "malloc", "thp"] {
        let f = p(&dir, &format!("w-{b}"));
        let out = bin("run")
            .args([f.to_str().unwrap(), "-w", "64K", "16", "--buffers", b])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{b}: {err}");
        xors.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    assert!(xors.iter().all(|x| *x == xors[0]), "{xors:?}");
}

#[test]
fn a_write_whose_buffers_cannot_be_had_leaves_no_file_behind() {
    let free = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("HugePages_Free:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    if free > 0 {
        eprintln!("skipped: this machine has free hugetlb pages");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "out");
    let out = bin("run")
        .args([f.to_str().unwrap(), "-w", "1M", "4", "--buffers", "hugetlb"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--buffers: hugetlb needs"), "{err}");
    assert!(!f.exists(), "the file this run created is removed");
}
