//! The checksum knob (issue 20, `--checksum xor|none`, a sweep's `checksum`): with `none` a run
//! moves its data without reading it back, so it prints no XOR (never a wrong one), its result
//! says `checksum = none`, and a file changed under it is still an error; the default keeps the
//! XOR, equal to an independent computation. The fio line says diskscope XORs only when it does.

use crate::util::{batch, bin, csv_file_maps, p, reference_xor, tmp, write_varied_file};
use std::process::Output;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `run ARGS` (never panics the test on a failing run: the caller looks at the output).
fn run(args: &[&str]) -> Output {
    bin("run").args(args).output().unwrap()
}

/// Whether `out` is a run refused because io_uring is missing here (then the case is skipped).
fn io_uring_missing(out: &Output) -> bool {
    out.status.code() == Some(2) && text(&out.stderr).contains("io_uring")
}

const METHODS: [&str; 5] = ["read", "pread", "mmap", "io_uring", "buffered"];

#[test]
fn run_with_checksum_none_prints_no_xor_with_every_method_and_says_so_on_stderr() {
    let dir = tmp();
    let f = p(&dir, "in.bin");
    write_varied_file(&f, (1 << 20) + 1234, 3);
    let fs = f.to_str().unwrap();
    for method in METHODS {
        for pattern in ["sequential", "random"] {
            let what = format!("{method} {pattern}");
            let out = run(&[
                fs,
                "-r",
                "64K",
                "17",
                "--method",
                method,
                "--pattern",
                pattern,
                "--checksum",
                "none",
            ]);
            if method == "io_uring" && io_uring_missing(&out) {
                eprintln!("skipped io_uring: {}", text(&out.stderr));
                continue;
            }
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{what}: {err}");
            assert!(out.stdout.is_empty(), "{what}: {}", text(&out.stdout));
            assert!(
                err.contains("checksum none: data not XOR-ed"),
                "{what}: {err}"
            );
        }
    }
}

#[test]
fn a_write_with_checksum_none_prints_no_xor_and_writes_the_same_data() {
    let dir = tmp();
    for method in METHODS {
        let with = p(&dir, &format!("xor-{method}.bin"));
        let without = p(&dir, &format!("none-{method}.bin"));
        let a = run(&[with.to_str().unwrap(), "-w", "16K", "9", "--method", method]);
        if method == "io_uring" && io_uring_missing(&a) {
            eprintln!("skipped io_uring: {}", text(&a.stderr));
            continue;
        }
        assert!(a.status.success(), "{method}: {}", text(&a.stderr));
        let b = run(&[
            without.to_str().unwrap(),
            "-w",
            "16K",
            "9",
            "--method",
            method,
            "--checksum",
            "none",
        ]);
        assert!(b.status.success(), "{method}: {}", text(&b.stderr));
        assert!(b.stdout.is_empty(), "{method}: {}", text(&b.stdout));
        let data = std::fs::read(&without).unwrap();
        assert_eq!(data.len(), 9 * 16 * 1024, "{method}");
        assert_eq!(data, std::fs::read(&with).unwrap(), "{method}: same bytes");
        // The XOR-ing write printed the checksum of exactly these bytes.
        assert_eq!(text(&a.stdout).trim(), reference_xor(&data), "{method}");
    }
}

#[test]
fn the_default_still_prints_the_xor_of_the_file_with_every_method() {
    let dir = tmp();
    let f = p(&dir, "in.bin");
    let data = write_varied_file(&f, (1 << 20) + 7, 9);
    let want = reference_xor(&data);
    for method in METHODS {
        for extra in [&[][..], &["--checksum", "xor"][..]] {
            let mut args = vec![f.to_str().unwrap(), "-r", "64K", "100", "--method", method];
            args.extend_from_slice(extra);
            let out = run(&args);
            if method == "io_uring" && io_uring_missing(&out) {
                continue;
            }
            assert!(out.status.success(), "{method}: {}", text(&out.stderr));
            assert_eq!(text(&out.stdout).trim(), want, "{method} {extra:?}");
            assert!(!text(&out.stderr).contains("checksum none"), "{method}");
        }
    }
}

#[test]
fn the_json_of_a_run_says_checksum_none_and_has_no_xor() {
    let dir = tmp();
    let f = p(&dir, "in.bin");
    write_varied_file(&f, 1 << 20, 4);
    let fs = f.to_str().unwrap();
    let out = run(&[fs, "-r", "64K", "16", "--checksum", "none", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    assert_eq!(r["checksum"], "none", "{r}");
    assert_eq!(r["xor"], "", "{r}");
    // The default run's row has an XOR and no checksum field (the default is left out).
    let out = run(&[fs, "-r", "64K", "16", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &doc["results"][0];
    assert!(r.get("checksum").is_none(), "{r}");
    assert_eq!(r["xor"].as_str().map(str::len), Some(8), "{r}");
}

#[test]
fn a_sweep_with_both_checksums_records_each_in_its_csv_and_summary() {
    let dir = tmp();
    let sweep = p(&dir, "plan.toml");
    std::fs::write(
        &sweep,
        "[file]\ncreate = \"1M\"\n\n[[experiment]]\nname = \"c\"\nkind = \"throughput\"\n\
         method = \"pread\"\nchecksum = [\"xor\", \"none\"]\nblock_size = \"64K\"\nreps = 1\n\
         seconds = 5\none_pass = true\n",
    )
    .unwrap();
    let out = p(&dir, "out");
    let o = batch(&sweep, &[], &out);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let rows = csv_file_maps(&out.join("c.csv"));
    let got: Vec<(&str, usize)> = rows
        .iter()
        .map(|r| (r["checksum"].as_str(), r["xor"].len()))
        .collect();
    assert_eq!(got, [("", 8), ("none", 0)], "{rows:?}");
    let summary = csv_file_maps(&out.join("c-summary.csv"));
    let got: Vec<&str> = summary.iter().map(|r| r["checksum"].as_str()).collect();
    assert_eq!(got, ["", "none"], "{summary:?}");
    let fio = std::fs::read_to_string(out.join("c-fio.txt")).unwrap();
    assert!(fio.contains("checksum=none"), "{fio}");
}

#[test]
fn a_bad_checksum_is_a_one_line_error_naming_the_flag_or_the_key_and_line() {
    let dir = tmp();
    let f = p(&dir, "in.bin");
    write_varied_file(&f, 4096, 1);
    let out = run(&[f.to_str().unwrap(), "-r", "4K", "1", "--checksum", "bogus"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--checksum: unknown value 'bogus'; use one of xor, none"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());

    let sweep = p(&dir, "bad.toml");
    std::fs::write(
        &sweep,
        "[file]\ncreate = \"1M\"\n\n[[experiment]]\nname = \"c\"\nkind = \"throughput\"\n\
         checksum = \"nope\"\n",
    )
    .unwrap();
    let o = batch(&sweep, &["--dry-run"], &p(&dir, "out"));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.toml:7: key `checksum`: unknown value 'nope'; use one of xor, none"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // A kind whose output is the XOR has no such key.
    std::fs::write(
        &sweep,
        "[[experiment]]\nname = \"s\"\nkind = \"syscalls\"\nchecksum = \"none\"\n",
    )
    .unwrap();
    let o = batch(&sweep, &["--dry-run"], &p(&dir, "out"));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.toml:4:") && err.contains("checksum"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn fast_whose_answer_is_the_xor_refuses_checksum_in_one_line() {
    let dir = tmp();
    let f = p(&dir, "in.bin");
    write_varied_file(&f, 4096, 1);
    let o = bin("fast")
        .arg(&f)
        .args(["--checksum", "none"])
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--checksum"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn the_fio_line_says_diskscope_xors_only_when_it_does() {
    let dir = tmp();
    let f = p(&dir, "in.bin");
    write_varied_file(&f, 1 << 20, 2);
    let fs = f.to_str().unwrap();
    let hint = "diskscope XORs every byte it reads and fio does not";
    let out = run(&[fs, "-r", "1M", "1", "--method", "pread", "--fio"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let line = err.lines().find(|l| l.contains(hint));
    assert!(
        line.is_some_and(|l| l.starts_with("# ") && l.contains("--checksum none")),
        "{err}"
    );
    let out = run(&[
        fs,
        "-r",
        "1M",
        "1",
        "--method",
        "pread",
        "--fio",
        "--checksum",
        "none",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("fio --name=diskscope"), "{err}");
    assert!(!err.contains(hint), "{err}");
}

#[test]
fn a_file_changed_under_a_run_without_checksum_is_still_an_error() {
    // The run's file is watched by a read lease and its size, times and inode
    // (`runner::watch`), not by the XOR: with nothing to compare, the change is still caught.
    for method in ["pread", "mmap"] {
        let dir = tmp();
        let hook = tmp();
        let f = p(&dir, "in.bin");
        write_varied_file(&f, 1 << 20, 6);
        let mut child = crate::util::command("run")
            .arg(&f)
            .args(["-r", "4K", "256", "--method", method, "--checksum", "none"])
            .env("DISKSCOPE_TEST_HOOK_DIR", hook.path())
            .env("DISKSCOPE_TEST_HOOK_POINT", "before-check")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let marker = hook.path().join("before-check.reached");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !marker.exists() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("{method}: the run ended ({status}) before its check");
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{method}: the run never reached its check");
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // Another process rewrites the first bytes in place while the run holds the file.
        {
            use std::os::unix::fs::FileExt;
            let w = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
            w.write_all_at(b"changed", 0).unwrap();
        }
        std::fs::write(hook.path().join("before-check.go"), b"").unwrap();
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{method}: {err}");
        assert!(out.stdout.is_empty(), "{method}: {}", text(&out.stdout));
        // The lease ("changed during the run: another process opened it for writing") or the
        // stamp ("was modified while being read ...; another process changed it").
        assert!(err.contains("another process"), "{method}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{method}: {err}");
    }
}
