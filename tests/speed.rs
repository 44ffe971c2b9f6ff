//! `fast` against an independent XOR: every road, odd file sizes, warm and cold caches. The road
//! changes the speed, never the answer.

use crate::util::{bin, p, reference_xor, tmp, write_varied_file};
use std::os::fd::AsRawFd;

/// Sizes that end mid-word, mid-page, mid-block and past a 2 MiB folio and an 8 MiB chunk.
const ODD_SIZES: &[usize] = &[1, 3, 4095, 4097, 1_048_577, (2 << 20) + 13, (9 << 20) + 5];

fn evict(path: &std::path::Path) {
    let f = std::fs::File::open(path).unwrap();
    f.sync_all().unwrap(); // dirty pages cannot be dropped
                           // SAFETY: plain syscall on a valid descriptor.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0);
}

fn fast(path: &std::path::Path, extra: &[&str]) -> (String, String) {
    let out = bin("fast").arg(path).args(extra).assert().success();
    let o = out.get_output();
    (
        String::from_utf8_lossy(&o.stdout).trim().to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn fast_matches_the_reference_xor_on_odd_sizes_for_every_road() {
    let dir = tmp();
    for (i, &len) in ODD_SIZES.iter().enumerate() {
        let f = p(&dir, &format!("odd{i}"));
        let want = reference_xor(&write_varied_file(&f, len, i as u8));
        for road in ["auto", "mmap", "pread", "direct", "buffered", "hybrid"] {
            let (xor, err) = fast(&f, &["--road", road]);
            assert_eq!(xor, want, "size {len}, road {road}: {err}");
        }
        let (xor, _) = fast(
            &f,
            &["--road", "pread", "--threads", "3", "--block-size", "12K"],
        );
        assert_eq!(xor, want, "size {len}, 3 threads, 12K reads");
    }
}

#[test]
fn fast_reads_a_cold_file_without_the_cache_and_a_warm_one_through_it() {
    let dir = tmp();
    let f = p(&dir, "f");
    let want = reference_xor(&write_varied_file(&f, (3 << 20) + 7, 9));
    let (xor, err) = fast(&f, &[]);
    assert_eq!(xor, want);
    assert!(err.contains("100.0% cached"), "{err}");
    assert!(
        err.contains(" mmap road") || err.contains(" pread road"),
        "{err}"
    );
    evict(&f);
    let (xor, err) = fast(&f, &["-v"]);
    assert_eq!(xor, want);
    if err.contains("| 0.0% cached") {
        assert!(
            err.contains("direct road") || err.contains("buffered road"),
            "{err}"
        );
    } else {
        eprintln!("skipped the cold half: the file system kept the file cached ({err})");
    }
}

#[test]
fn fast_reads_a_partly_cached_file_half_from_memory_half_from_disk() {
    let dir = tmp();
    let f = p(&dir, "f");
    let chunk = 8 << 20; // fast's unit of work
    let data = write_varied_file(&f, 3 * chunk + 12_345, 5);
    let want = reference_xor(&data);
    evict(&f);
    // Cache the middle chunk only: about a third of the file.
    let file = std::fs::File::open(&f).unwrap();
    let mut buf = vec![0u8; chunk];
    std::os::unix::fs::FileExt::read_exact_at(&file, &mut buf, chunk as u64).unwrap();
    let (xor, err) = fast(&f, &[]);
    assert_eq!(xor, want, "{err}");
    if err.contains("hybrid road") {
        assert!(err.contains("1 of 4 chunks mapped"), "{err}");
    } else {
        eprintln!("skipped the road check: the cache did not end up partial ({err})");
    }
}

#[test]
fn fast_reports_setup_seconds_and_speed_on_stderr_and_only_the_xor_on_stdout() {
    let dir = tmp();
    let f = p(&dir, "f");
    write_varied_file(&f, 100_000, 1);
    let (xor, err) = fast(&f, &[]);
    assert_eq!(xor.len(), 8, "stdout: {xor}");
    assert!(
        err.contains(" s, ") && err.contains("GiB/s") && err.contains("road"),
        "{err}"
    );
}

#[test]
fn fast_gives_00000000_for_an_empty_file() {
    let dir = tmp();
    let f = p(&dir, "empty");
    std::fs::write(&f, b"").unwrap();
    assert_eq!(fast(&f, &[]).0, "00000000");
}

#[test]
fn fast_reads_pseudo_files_that_report_size_zero_to_their_end() {
    // /proc/self/... differs per process, so use a file whose content is stable across reads.
    let path = std::path::Path::new("/proc/sys/kernel/ostype");
    let Ok(data) = std::fs::read(path) else {
        eprintln!("skipped: {} is not readable here", path.display());
        return;
    };
    assert_eq!(
        std::fs::metadata(path).unwrap().len(),
        0,
        "procfs reports size 0"
    );
    let (xor, err) = fast(path, &[]);
    assert_eq!(xor, reference_xor(&data), "{err}");
}

#[test]
fn fast_rejects_bad_flags_and_missing_files_in_one_line() {
    let dir = tmp();
    let f = p(&dir, "f");
    write_varied_file(&f, 10, 1);
    for (args, needle, code) in [
        (vec!["--road", "teleport"], "--road", 2),
        (vec!["--threads", "0"], "--threads", 2),
        (vec!["--block-size", "lots"], "--block-size", 2),
        (vec!["--queue-depth", "0"], "--queue-depth", 2),
    ] {
        let out = bin("fast").arg(&f).args(&args).assert().code(code);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(
            err.contains(needle) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    let out = bin("fast").arg(p(&dir, "missing")).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("does not exist") && err.lines().count() == 1,
        "{err}"
    );
    let out = bin("fast").arg(dir.path()).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("directory"), "{err}");
}

#[test]
fn run_with_timing_switched_off_still_reads_every_byte() {
    let dir = tmp();
    let f = p(&dir, "f");
    let data = write_varied_file(&f, 40_000, 3);
    let out = bin("run")
        .env("DISKSCOPE_NO_LATENCY", "1")
        .args([f.to_str().unwrap(), "-r", "4K", "10"])
        .assert()
        .success();
    let xor = String::from_utf8_lossy(&out.get_output().stdout)
        .trim()
        .to_string();
    assert_eq!(xor, reference_xor(&data));
}

#[test]
fn one_byte_reads_of_the_read_method_give_the_reference_xor() {
    let dir = tmp();
    let f = p(&dir, "f");
    let data = write_varied_file(&f, 5_000, 4);
    for threads in ["1", "3"] {
        let out = bin("run")
            .args([f.to_str().unwrap(), "-r", "1", "5000", "--threads", threads])
            .assert()
            .success();
        let xor = String::from_utf8_lossy(&out.get_output().stdout)
            .trim()
            .to_string();
        assert_eq!(xor, reference_xor(&data), "threads {threads}");
    }
}
