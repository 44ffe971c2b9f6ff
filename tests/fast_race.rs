//! `fast`'s cold road is measured, not assumed (issue 20): a cold file read as a race (a timed
//! O_DIRECT probe, a timed buffered-readahead probe, the rest by the faster) gives the same XOR
//! as every other road, and `-v` says which road was taken and why, with the probe's figures.
//! No speed is asserted: which road wins depends on the device and the machine's load.

use crate::util::{bin, p, reference_xor, tmp, write_varied_file};
use std::os::fd::AsRawFd;

fn evict(path: &std::path::Path) {
    let f = std::fs::File::open(path).unwrap();
    f.sync_all().unwrap();
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
fn a_raced_cold_read_gives_the_reference_xor_and_says_both_figures_and_the_winner() {
    let dir = tmp();
    let f = p(&dir, "race");
    // Past an 8 MiB chunk and mid-word at the end: the probes are 32 MiB each (one buffered
    // stream: 32 MiB is less than two streams' least), the rest odd.
    let want = reference_xor(&write_varied_file(&f, (72 << 20) + 3, 4));
    evict(&f);
    let (xor, err) = fast(&f, &["--road", "race", "-v"]);
    assert_eq!(xor, want, "{err}");
    assert!(err.contains("fast: why: --road race asked"), "{err}");
    if err.contains("reading everything buffered") {
        eprintln!("O_DIRECT refused here: the race fell back to buffered reads ({err})");
        assert!(err.contains("buffered road"), "{err}");
        return;
    }
    let race = err
        .lines()
        .find(|l| l.starts_with("fast: race on 32.00 MiB each: O_DIRECT QD "))
        .unwrap_or_else(|| panic!("no race line in {err}"));
    // The winner is the faster of the two figures the line states (direct first).
    let words: Vec<&str> = race.split_whitespace().collect();
    let figures: Vec<f64> = words
        .windows(2)
        .filter(|w| w[1].starts_with("MiB/s"))
        .map(|w| w[0].parse().unwrap())
        .collect();
    let (direct, buffered) = (figures[0], figures[1]);
    assert!(race.contains("buffered readahead on 1 stream "), "{race}");
    let took_buffered = race.contains(": buffered (readahead beats O_DIRECT here)");
    let took_direct = race.contains(": direct (");
    assert!(took_buffered != took_direct, "{race}");
    assert_eq!(took_buffered, buffered > direct * 1.02, "{race}");
    let road = if took_buffered {
        "fast: buffered road"
    } else {
        "fast: direct road"
    };
    assert!(err.contains(road), "{err}");
    // Warm afterwards (the buffered probe and the direct reads leave some cached): any road, the
    // same XOR.
    let (xor, _) = fast(&f, &["--road", "race"]);
    assert_eq!(xor, want);
}

#[test]
fn a_small_cold_file_is_not_raced_and_verbose_says_why() {
    let dir = tmp();
    let f = p(&dir, "small");
    let want = reference_xor(&write_varied_file(&f, (5 << 20) + 1, 2));
    evict(&f);
    let (xor, err) = fast(&f, &["-v"]);
    assert_eq!(xor, want);
    if !err.contains("| 0.0% cached") {
        eprintln!("skipped: the file system kept the file cached ({err})");
        return;
    }
    assert!(
        err.contains("fast: why: 0.0% cached < 10%: from the disk, O_DIRECT (under 512 MiB: too small to race)"),
        "{err}"
    );
}
