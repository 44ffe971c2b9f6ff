//! The explorer from the outside: the real binary, without a terminal and inside tmux
//! (`send-keys`, `capture-pane`), on a small file the test makes.

use crate::util::{bin, p, tmp, write_varied_file};
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn without_a_terminal_it_points_to_batch_and_run() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 4096, 1);
    let out = bin("diskscope").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--batch") && err.contains("run FILE"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_missing_file_is_named_in_one_line() {
    let out = bin("diskscope").arg("/no/such/file").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: FILE: /no/such/file does not exist"),
        "{err}"
    );
}

/// A tmux server of our own, killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `diskscope FILE` from `dir` in an 80×24 session on its own tmux server; the shell
    /// prints `EXITED:<status>` when diskscope ends and keeps the pane open for inspection.
    fn explore(socket: String, dir: &std::path::Path, file: &std::path::Path) -> Tmux {
        Self::explore_with(socket, dir, file, "")
    }

    /// As [`Tmux::explore`], with `env` (`NAME=value ...`) set for diskscope.
    fn explore_with(
        socket: String,
        dir: &std::path::Path,
        file: &std::path::Path,
        env: &str,
    ) -> Tmux {
        let exe = assert_cmd::cargo::cargo_bin("diskscope");
        let tmux = Tmux { socket };
        let shell = format!(
            "cd {} && {env} {} {}; echo EXITED:$?; sleep 30",
            dir.display(),
            exe.display(),
            file.display()
        );
        tmux.cmd(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "80",
            "-y",
            "24",
            &shell,
        ]);
        tmux
    }

    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("running tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "main"])
    }

    /// Waits up to `limit` for the screen to satisfy `ok`; returns the last screen.
    fn wait_for(&self, limit: Duration, ok: impl Fn(&str) -> bool) -> (bool, String) {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if ok(&s) {
                return (true, s);
            }
            if start.elapsed() > limit {
                return (false, s);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// The residency gauge's percentage.
fn cached_pct(screen: &str) -> Option<u32> {
    let end = screen.find("% cached")?;
    let digits: String = screen[..end]
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

/// The number after "now " on the throughput line.
fn shown_mib_s(screen: &str) -> Option<f64> {
    let rest = &screen[screen.find("now ")? + 4..];
    rest.split_whitespace().next()?.parse().ok()
}

#[test]
fn the_explorer_runs_in_a_real_terminal_reacts_to_keys_and_exits_cleanly() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "explore.bin");
    write_varied_file(&f, 64 << 20, 7);
    let scratch = p(&dir, ".explore.bin.diskscope-scratch");
    let tmux = Tmux::explore(
        format!("diskscope-test-{}", std::process::id()),
        dir.path(),
        &f,
    );
    let limit = Duration::from_secs(5);

    let (ok, s) = tmux.wait_for(limit, |s| shown_mib_s(s).is_some_and(|v| v > 0.0));
    assert!(ok, "no throughput shown:\n{s}");
    assert!(s.contains("block  1M"), "{s}");

    tmux.cmd(&["send-keys", "-t", "main", "Right"]);
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("block  2M") && s.contains("│ pread 1M")
    });
    assert!(ok, "the right arrow did not double the block size:\n{s}");

    tmux.cmd(&["send-keys", "-t", "main", "c"]);
    // The file was fully cached (just written); cold evicts it and the gauge shows the drop.
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("cache  cold") && cached_pct(s).is_some_and(|pct| pct < 100)
    });
    assert!(ok, "c did not show cold:\n{s}");

    tmux.cmd(&["send-keys", "-t", "main", "w"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING writing"));
    assert!(ok, "w did not switch to writes:\n{s}");
    let started = Instant::now();
    while !scratch.exists() && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(scratch.exists(), "writes did not go to the scratch file");

    tmux.cmd(&["send-keys", "-t", "main", "q"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("EXITED:"));
    assert!(ok, "q did not exit:\n{s}");
    assert!(s.contains("EXITED:0"), "{s}");
    assert!(!s.contains("settings"), "the UI was left on screen:\n{s}");
    let modes = tmux.cmd(&[
        "display-message",
        "-p",
        "-t",
        "main",
        "#{alternate_on} #{cursor_flag}",
    ]);
    assert_eq!(
        modes.trim(),
        "0 1",
        "alternate screen / hidden cursor left behind"
    );
    assert!(!scratch.exists(), "the write scratch file was left behind");
    assert!(f.exists());
}

/// The pid of the child the pane's shell started (the explorer).
fn explorer_pid(tmux: &Tmux) -> Option<String> {
    let shell = tmux.cmd(&["display-message", "-p", "-t", "main", "#{pane_pid}"]);
    let shell = shell.trim();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).ok()?;
    children.split_whitespace().next().map(str::to_string)
}

#[test]
fn sigterm_and_ctrl_c_restore_the_terminal_and_remove_the_scratch_file() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "small.bin");
    write_varied_file(&f, 8 << 20, 3);
    let scratch = p(&dir, ".small.bin.diskscope-scratch");
    let limit = Duration::from_secs(5);
    for how in ["SIGTERM", "C-c"] {
        let tmux = Tmux::explore(
            format!("diskscope-test-{}-{how}", std::process::id()),
            dir.path(),
            &f,
        );
        let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING"));
        assert!(ok, "{how}: did not start:\n{s}");
        tmux.cmd(&["send-keys", "-t", "main", "w"]);
        let started = Instant::now();
        while !scratch.exists() && started.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(scratch.exists(), "{how}: writes did not start");
        if how == "SIGTERM" {
            let pid = explorer_pid(&tmux).expect("finding the explorer's pid");
            let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
            assert!(killed.success());
        } else {
            tmux.cmd(&["send-keys", "-t", "main", how]);
        }
        let (ok, s) = tmux.wait_for(limit, |s| s.contains("EXITED:"));
        // A signal ends it cleaned up but reported as shells expect: 128 + SIGTERM.
        let code = if how == "SIGTERM" {
            "EXITED:143"
        } else {
            "EXITED:0"
        };
        assert!(ok && s.contains(code), "{how}: did not exit cleanly:\n{s}");
        let modes = tmux.cmd(&["display-message", "-p", "-t", "main", "#{alternate_on}"]);
        assert_eq!(modes.trim(), "0", "{how}: alternate screen left on");
        assert!(!scratch.exists(), "{how}: the scratch file was left behind");
    }
}

#[test]
fn kdiskmark_a_typed_block_size_and_a_baseline_work_in_a_real_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "kdm.bin");
    write_varied_file(&f, 32 << 20, 5);
    let tmux = Tmux::explore_with(
        format!("diskscope-test-{}-kdm", std::process::id()),
        dir.path(),
        &f,
        "DISKSCOPE_KDM_SECONDS=0.3",
    );
    let limit = Duration::from_secs(5);
    let send = |keys: &[&str]| {
        for k in keys {
            tmux.cmd(&["send-keys", "-t", "main", k]);
        }
    };
    let (ok, s) = tmux.wait_for(limit, |s| shown_mib_s(s).is_some_and(|v| v > 0.0));
    assert!(ok, "no throughput shown:\n{s}");

    // b, then an exact size.
    send(&["b", "1", "2", "K"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("block size ▸ 12K"));
    assert!(ok, "the typed size is not echoed:\n{s}");
    send(&["Enter"]);
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("block  12K") && s.contains(" pread 1M") && s.contains("▶pread 12K")
    });
    assert!(ok, "b 12K Enter did not run 12 KiB blocks:\n{s}");

    // B pins the finished 1M row: it reads ±0%, the live row its difference.
    send(&["B"]);
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("Δ%")
            && s.lines()
                .any(|l| l.contains("◆pread 1M") && l.contains("±0%"))
    });
    assert!(ok, "B did not pin a baseline:\n{s}");
    let live = s.lines().find(|l| l.contains("▶pread 12K")).unwrap_or("");
    assert!(live.contains('%'), "the live row has no Δ%: {live}");

    // k: eight timed tests, then the card.
    send(&["k"]);
    // The set shows "KDiskMark n/8" on the status line and its test in the header while it runs
    // (a note may take the status line); it may be done (its card shown) by the first poll.
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("KDiskMark 1/8")
            || s.contains("RUNNING KDiskMark")
            || s.contains("KDiskMark set, 0.3 s per test")
    });
    assert!(ok, "k did not start the set:\n{s}");
    let (ok, s) = tmux.wait_for(Duration::from_secs(40), |s| {
        s.contains("KDiskMark set, 0.3 s per test") && s.contains("RND4K Q1T1")
    });
    assert!(ok, "no KDiskMark card:\n{s}");
    let card_line = s.lines().find(|l| l.contains("SEQ1M Q8T1")).unwrap_or("");
    let figures = card_line
        .split_whitespace()
        .filter(|w| w.parse::<f64>().is_ok_and(|v| v > 0.0))
        .count();
    assert_eq!(
        figures, 2,
        "SEQ1M Q8T1 needs a read and a write figure: {card_line}"
    );

    // Any key closes the card; s saves; one more row after the save; q tells the truth.
    send(&["Escape", "s"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("saved ") && s.contains(" rows to "));
    assert!(ok, "s did not save:\n{s}");
    send(&["Right"]);
    std::thread::sleep(Duration::from_millis(400));
    send(&["Right"]);
    std::thread::sleep(Duration::from_millis(400));
    send(&["q"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("EXITED:"));
    assert!(ok && s.contains("EXITED:0"), "q did not exit:\n{s}");
    assert!(
        s.contains("not saved") && !s.contains("results saved to"),
        "the exit note must not claim rows made after s were saved:\n{s}"
    );
    assert!(
        s.contains("setting") && s.contains("SEQ1M Q8T1"),
        "no summary table:\n{s}"
    );
    let csv_dir = p(&dir, "diskscope-results");
    let csv = std::fs::read_dir(&csv_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.path().extension().is_some_and(|x| x == "csv"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .expect("the CSV of s");
    assert_eq!(csv.matches("tui-kdiskmark ").count(), 8, "{csv}");
}
