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
    /// prints `EXITED:<status>` when diskscope ends and keeps the pane open for inspection. The
    /// status goes on a line of its own: an explorer killed mid-frame leaves the cursor anywhere,
    /// and `EXITED:137` printed there was once split across two screen lines.
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
        let exe = crate::util::command("diskscope");
        let tmux = Tmux { socket };
        let shell = format!(
            "cd {} && {}{env} {} {}; s=$?; printf '\\r\\nEXITED:%s\\r\\n' $s; sleep 30",
            dir.display(),
            crate::util::Sandbox::new().shell_env(),
            exe.get_program().to_string_lossy(),
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
    assert!(
        wait_until(limit, || !scratch_files(dir.path(), "explore.bin")
            .is_empty()),
        "writes did not go to a scratch file"
    );

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
    assert_eq!(
        scratch_files(dir.path(), "explore.bin"),
        Vec::<std::path::PathBuf>::new(),
        "the write scratch file was left behind"
    );
    assert!(f.exists());
}

/// The explorer's write scratch files for the explored file `name` in `dir`
/// (`.<name>.diskscope-scratch.<pid>.<n>`).
fn scratch_files(dir: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let prefix = format!(".{name}.diskscope-scratch");
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Waits up to `limit` until `ok` holds; returns whether it did.
fn wait_until(limit: Duration, ok: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while !ok() {
        if start.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
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
        assert!(
            wait_until(limit, || !scratch_files(dir.path(), "small.bin").is_empty()),
            "{how}: writes did not start"
        );
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
        assert!(
            scratch_files(dir.path(), "small.bin").is_empty(),
            "{how}: the scratch file was left behind"
        );
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

    // Keep rows under 1 s (this test moves on quickly), then b and an exact size.
    send(&["t"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("are kept too"));
    assert!(ok, "t did not answer:\n{s}");
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

    // Any key closes the card (and does nothing else); s saves; one more row after the save;
    // q tells the truth. The card must be gone before `s`: an Escape followed at once by `s`
    // reaches the explorer as one Alt-s, which only closes the card.
    send(&["Escape"]);
    let (ok, s) = tmux.wait_for(limit, |s| !s.contains("KDiskMark set, 0.3 s per test"));
    assert!(ok, "Escape did not close the card:\n{s}");
    send(&["s"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("saved ") && s.contains(" rows to"));
    assert!(ok, "s did not save:\n{s}");
    send(&["Right"]);
    std::thread::sleep(Duration::from_millis(400));
    send(&["Right"]);
    std::thread::sleep(Duration::from_millis(400));
    send(&["q"]);
    // Leaving waits for the run to stop and any scratch file to go: slow on a loaded machine.
    let (ok, s) = tmux.wait_for(Duration::from_secs(30), |s| s.contains("EXITED:"));
    assert!(ok && s.contains("EXITED:0"), "q did not exit:\n{s}");
    assert!(
        s.contains(" rows saved to ") && s.contains(" at exit)"),
        "the exit note must say the rows made after s were saved at exit:\n{s}"
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

/// Whether process `pid` is still running (a zombie counts as gone).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

#[test]
fn closing_the_terminal_while_writing_leaves_no_scratch_file() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "closed.bin");
    write_varied_file(&f, 32 << 20, 6);
    let limit = Duration::from_secs(10);
    for attempt in 0..2 {
        // The removal is slowed, so the explorer is still cleaning up when the terminal is gone.
        let tmux = Tmux::explore_with(
            format!("diskscope-test-{}-closed-{attempt}", std::process::id()),
            dir.path(),
            &f,
            "DISKSCOPE_TEST_SLOW_REMOVAL_MS=300",
        );
        let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING"));
        assert!(ok, "did not start:\n{s}");
        let pid = explorer_pid(&tmux).expect("finding the explorer's pid");
        tmux.cmd(&["send-keys", "-t", "main", "w"]);
        assert!(
            wait_until(limit, || !scratch_files(dir.path(), "closed.bin")
                .is_empty()),
            "writes did not start"
        );
        let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING writing"));
        assert!(ok, "not writing:\n{s}");
        // As closing the terminal window does: the session and its pty go away.
        tmux.cmd(&["kill-session", "-t", "main"]);
        assert!(
            wait_until(Duration::from_secs(20), || !running(&pid)),
            "the explorer did not end after its terminal closed"
        );
        assert_eq!(
            scratch_files(dir.path(), "closed.bin"),
            Vec::<std::path::PathBuf>::new(),
            "a scratch file was left behind after the terminal closed (try {attempt})"
        );
    }
    assert!(f.exists());
}

#[test]
fn leaving_write_mode_on_a_slow_removal_keeps_the_screen_and_the_reads_going() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "slow.bin");
    write_varied_file(&f, 32 << 20, 8);
    let limit = Duration::from_secs(10);
    // Every removal step sleeps 1.5 s: at least 3 s for the smallest scratch file.
    let tmux = Tmux::explore_with(
        format!("diskscope-test-{}-slow", std::process::id()),
        dir.path(),
        &f,
        "DISKSCOPE_TEST_SLOW_REMOVAL_MS=1500",
    );
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING"));
    assert!(ok, "did not start:\n{s}");
    tmux.cmd(&["send-keys", "-t", "main", "w"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING writing"));
    assert!(ok, "w did not switch to writes:\n{s}");
    assert!(wait_until(limit, || !scratch_files(dir.path(), "slow.bin").is_empty()));
    std::thread::sleep(Duration::from_millis(500));
    // w steps write → mix → read: two more presses reach the reads.
    tmux.cmd(&["send-keys", "-t", "main", "w"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING mixing"));
    assert!(ok, "the second w did not mix:\n{s}");
    tmux.cmd(&["send-keys", "-t", "main", "w"]);
    // While the old scratch file is being removed: frames keep changing, and the reads run.
    let mut frames = std::collections::HashSet::new();
    let mut reading_meanwhile = false;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        let s = tmux.screen();
        if s.contains("removing scratch: ") {
            reading_meanwhile |= s.contains("RUNNING")
                && !s.contains("RUNNING writing")
                && !s.contains("RUNNING mixing");
            frames.insert(s);
        } else if !frames.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        frames.len() >= 2,
        "the screen did not keep updating during the removal ({} frames)",
        frames.len()
    );
    assert!(reading_meanwhile, "the reads waited for the removal");
    assert!(
        wait_until(Duration::from_secs(30), || scratch_files(
            dir.path(),
            "slow.bin"
        )
        .is_empty()),
        "the scratch file was never removed"
    );
    tmux.cmd(&["send-keys", "-t", "main", "q"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("EXITED:"));
    assert!(ok && s.contains("EXITED:0"), "q did not exit:\n{s}");
}

#[test]
fn q_during_a_slow_removal_waits_and_says_why_then_leaves_nothing() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "quit.bin");
    write_varied_file(&f, 16 << 20, 9);
    let limit = Duration::from_secs(10);
    let tmux = Tmux::explore_with(
        format!("diskscope-test-{}-quit", std::process::id()),
        dir.path(),
        &f,
        "DISKSCOPE_TEST_SLOW_REMOVAL_MS=1500",
    );
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING"));
    assert!(ok, "did not start:\n{s}");
    tmux.cmd(&["send-keys", "-t", "main", "w"]);
    assert!(wait_until(limit, || !scratch_files(dir.path(), "quit.bin").is_empty()));
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING writing"));
    assert!(ok, "not writing:\n{s}");
    tmux.cmd(&["send-keys", "-t", "main", "q"]);
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("quitting after removing the scratch file: ") || s.contains("EXITED:")
    });
    assert!(
        ok && s.contains(" left, "),
        "q did not say what it waits for:\n{s}"
    );
    let (ok, s) = tmux.wait_for(Duration::from_secs(30), |s| s.contains("EXITED:"));
    assert!(ok && s.contains("EXITED:0"), "q did not exit:\n{s}");
    assert!(scratch_files(dir.path(), "quit.bin").is_empty());
}

#[test]
fn a_scratch_file_left_by_a_killed_session_is_removed_by_the_next_one() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "killed.bin");
    write_varied_file(&f, 16 << 20, 2);
    let limit = Duration::from_secs(10);
    let first = Tmux::explore(
        format!("diskscope-test-{}-killed-1", std::process::id()),
        dir.path(),
        &f,
    );
    let (ok, s) = first.wait_for(limit, |s| s.contains("RUNNING"));
    assert!(ok, "did not start:\n{s}");
    let pid = explorer_pid(&first).expect("finding the explorer's pid");
    first.cmd(&["send-keys", "-t", "main", "w"]);
    assert!(wait_until(limit, || !scratch_files(
        dir.path(),
        "killed.bin"
    )
    .is_empty()));
    // SIGKILL: no cleanup can run.
    assert!(Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .unwrap()
        .success());
    let (ok, s) = first.wait_for(limit, |s| s.contains("EXITED:137"));
    assert!(ok, "not killed:\n{s}");
    let left = scratch_files(dir.path(), "killed.bin");
    assert!(!left.is_empty(), "nothing was left to clean up");
    drop(first);
    // Without user extended attributes there is no proof, and the file must stay. Whether the
    // file system has them is asked of a file of the test's own: the leftover itself must carry
    // the marker (once it did not, as the write run replaced the marked claim, and this test
    // skipped instead of failing).
    let probe = std::fs::File::create(p(&dir, "xattr-probe")).unwrap();
    if rustix::fs::fsetxattr(&probe, "user.probe", b"1", rustix::fs::XattrFlags::empty()).is_err() {
        eprintln!("skipped: no user extended attributes here");
        return;
    }
    let mut buf = [0u8; 64];
    let n = rustix::fs::lgetxattr(&left[0], "user.diskscope", &mut buf);
    assert!(
        n.is_ok(),
        "the scratch file a killed session left carries no marker ({n:?}): no later session can prove it ours"
    );
    let second = Tmux::explore(
        format!("diskscope-test-{}-killed-2", std::process::id()),
        dir.path(),
        &f,
    );
    let (ok, s) = second.wait_for(limit, |s| s.contains("RUNNING"));
    assert!(ok, "did not start:\n{s}");
    assert!(
        wait_until(limit, || scratch_files(dir.path(), "killed.bin").is_empty()),
        "the leftover was not removed"
    );
    second.cmd(&["send-keys", "-t", "main", "q"]);
    let (ok, s) = second.wait_for(limit, |s| s.contains("EXITED:"));
    assert!(
        ok && s.contains("scratch file left by an ended session (pid "),
        "the leftover's removal was not said:\n{s}"
    );
}

#[test]
fn capital_w_mixes_reads_and_writes_on_a_scratch_file_and_the_mix_row_appears() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "mix.bin");
    let data = write_varied_file(&f, 8 << 20, 5);
    // Generous: the machine may be loaded; nothing here depends on how fast it is.
    let limit = Duration::from_secs(30);
    let tmux = Tmux::explore(
        format!("diskscope-test-{}-mix", std::process::id()),
        dir.path(),
        &f,
    );
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("RUNNING"));
    assert!(ok, "did not start:\n{s}");
    // `t` keeps rows however short, so the row does not depend on the mix running a second.
    for k in ["t", "W", "7", "0", "Enter"] {
        tmux.cmd(&["send-keys", "-t", "main", k]);
    }
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("RUNNING mixing") && s.contains("op     mix 70/30") && s.contains("mix70")
    });
    assert!(ok, "W 70 did not start a 70/30 mix:\n{s}");
    // The latency panel: the reads' histogram beside the writes', each with its figures.
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("mix reads ")
            && s.lines()
                .any(|l| l.contains("read ") && l.contains("write ") && l.contains("IOPS"))
    });
    assert!(ok, "the directions are not shown apart:\n{s}");
    assert!(
        !scratch_files(dir.path(), "mix.bin").is_empty(),
        "the mix did not go to a scratch file"
    );
    // w: back to reads; the mix is a row of the table.
    tmux.cmd(&["send-keys", "-t", "main", "w"]);
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("RUNNING") && !s.contains("RUNNING mixing") && s.contains(" pread 1M mix70")
    });
    assert!(ok, "no mix row after w:\n{s}");
    tmux.cmd(&["send-keys", "-t", "main", "q"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("EXITED:"));
    assert!(ok && s.contains("EXITED:0"), "q did not exit:\n{s}");
    // The summary under the table tells the mix's directions apart.
    assert!(s.contains("(70% asked)"), "{s}");
    assert_eq!(
        scratch_files(dir.path(), "mix.bin"),
        Vec::<std::path::PathBuf>::new(),
        "the mix's scratch file was left behind"
    );
    assert!(
        std::fs::read(&f).unwrap() == data,
        "the explored file changed"
    );
    // The rows saved at exit: the mix's row with its columns, every line as long as the header.
    let csv = std::fs::read_dir(dir.path().join("diskscope-results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "csv"))
        .expect("the session's CSV");
    let mut rd = csv::Reader::from_path(&csv).unwrap();
    let header = rd.headers().unwrap().clone();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let mix = rows
        .iter()
        .find(|r| &r[col("operation")] == "mix")
        .expect("the mix row was saved");
    assert_eq!(&mix[col("mix_read_pct_asked")], "70");
    let reads: u64 = mix[col("read_ops")].parse().unwrap();
    let writes: u64 = mix[col("write_ops")].parse().unwrap();
    let ops: u64 = mix[col("ops")].parse().unwrap();
    assert_eq!(reads + writes, ops, "{mix:?}");
}

/// An open loop at a rate no file can keep up with (10^9 operations per second of 1 MiB
/// each: a read takes tens of µs at best, so the backlog grows by nearly 10^9 a second
/// whatever the machine's load) says `behind` on the live line, labels the row with its rate,
/// and says it fell behind when the row ends; the screen holds at 120×40 and 160×40 too.
#[test]
fn an_open_loop_at_a_rate_the_file_cannot_keep_up_with_says_behind_in_a_real_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "rate.bin");
    write_varied_file(&f, 8 << 20, 7);
    let tmux = Tmux::explore(
        format!("diskscope-test-{}-rate", std::process::id()),
        dir.path(),
        &f,
    );
    let limit = Duration::from_secs(20);
    let send = |keys: &[&str]| {
        for k in keys {
            tmux.cmd(&["send-keys", "-t", "main", k]);
        }
    };
    let (ok, s) = tmux.wait_for(limit, |s| shown_mib_s(s).is_some_and(|v| v > 0.0));
    assert!(ok, "no throughput shown:\n{s}");
    // Rows under a second are kept too: the row must not depend on how long the steps took.
    send(&["t"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("are kept too"));
    assert!(ok, "{s}");
    send(&["R", "1000000000", "Enter"]);
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("1.00G/s asked") && s.contains(" behind") && s.contains("@1.00G/s")
    });
    assert!(ok, "no 'behind' on the rate line:\n{s}");
    for (w, h) in [("120", "40"), ("160", "40")] {
        tmux.cmd(&["resize-window", "-t", "main", "-x", w, "-y", h]);
        let (ok, s) = tmux.wait_for(limit, |s| {
            s.lines().count() >= 40
                && s.contains("1.00G/s asked")
                && s.contains("service")
                && s.contains("response")
        });
        assert!(ok, "{w}x{h}:\n{s}");
    }
    tmux.cmd(&["resize-window", "-t", "main", "-x", "80", "-y", "24"]);
    // Pausing ends the row: the message says it fell behind.
    send(&["Space"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("fell behind"));
    assert!(ok, "the ended row does not say it fell behind:\n{s}");
    send(&["q"]);
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("EXITED:0"));
    assert!(ok, "{s}");
    // The summary's line may wrap at 80 columns: joined, it reads whole.
    let joined = s.replace('\n', "");
    assert!(
        joined.contains("pread 1M @1.00G/s: open loop 1.00G/s asked")
            && joined.contains("at the end: fell behind"),
        "the summary at exit does not say it:\n{s}"
    );
}

/// The explorer's resident memory (kB) from `/proc/PID/status`.
fn rss_kb(pid: &str) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// One setting for three minutes in a real terminal: after a 30 s warm-up (the chart's minute
/// filling, the allocator settling) the resident memory grows by less than 2 MiB. It grew by
/// ~32 KB a second before (a latency histogram per second in the run's timeline: 115 MB an
/// hour).
#[test]
fn the_explorers_memory_stays_flat_while_one_setting_runs_for_three_minutes() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "flat.bin");
    write_varied_file(&f, 16 << 20, 5);
    let tmux = Tmux::explore(format!("ds-rss-{}", std::process::id()), dir.path(), &f);
    let (ok, s) = tmux.wait_for(Duration::from_secs(30), |s| {
        shown_mib_s(s).is_some_and(|v| v > 0.0)
    });
    assert!(ok, "the explorer did not start reading:\n{s}");
    let pid = explorer_pid(&tmux).expect("the explorer's pid");
    let start = Instant::now();
    let (mut at_warm, mut most) = (None, 0u64);
    let mut samples = Vec::new();
    while start.elapsed() < Duration::from_secs(180) {
        std::thread::sleep(Duration::from_secs(5));
        let kb = rss_kb(&pid).expect("the explorer is running");
        samples.push((start.elapsed().as_secs(), kb));
        if start.elapsed() >= Duration::from_secs(30) {
            at_warm.get_or_insert(kb);
            most = most.max(kb);
        }
    }
    tmux.cmd(&["send-keys", "-t", "main", "q"]);
    let warm = at_warm.expect("a sample after the warm-up");
    eprintln!("RSS (s, kB): {samples:?}");
    assert!(
        most <= warm + 2048,
        "RSS grew from {warm} kB to {most} kB after the warm-up: {samples:?}"
    );
    let (ok, s) = tmux.wait_for(Duration::from_secs(20), |s| s.contains("EXITED:"));
    assert!(ok && s.contains("EXITED:0"), "{s}");
}

/// At 200×60, `L` turns the kernel view on and its panel appears above the log: with root and
/// BTF, the block layer's and the device's times of the explorer's O_DIRECT reads (requests
/// that reach the device), updated once a second; elsewhere the one line saying why it is
/// absent. `L` again takes it away.
#[test]
fn capital_l_shows_the_kernel_panel_at_200x60() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "kernel.bin");
    write_varied_file(&f, 64 << 20, 7);
    std::fs::File::open(&f).unwrap().sync_all().unwrap();
    let tmux = Tmux::explore(
        format!("diskscope-test-{}-kernel", std::process::id()),
        dir.path(),
        &f,
    );
    tmux.cmd(&["resize-window", "-t", "main", "-x", "200", "-y", "60"]);
    let limit = Duration::from_secs(20);
    let send = |k: &str| {
        tmux.cmd(&["send-keys", "-t", "main", k]);
    };
    let (ok, s) = tmux.wait_for(limit, |s| shown_mib_s(s).is_some_and(|v| v > 0.0));
    assert!(ok, "no throughput shown:\n{s}");
    // O_DIRECT: every read is a request to the device.
    send("d");
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("direct on "));
    assert!(ok, "d did not turn O_DIRECT on:\n{s}");
    send("L");
    let unavailable = diskscope::kernel::check().err().map(|e| e.to_string());
    let (ok, s) = tmux.wait_for(limit, |s| {
        s.contains("kernel view (L)")
            && match &unavailable {
                Some(_) => s.contains("absent: "),
                // Figures from at least one read with requests in it.
                None => {
                    s.contains("queue    p50")
                        && s.lines().any(|l| {
                            l.contains("requests ") && l.contains("/s") && l.contains("KiB each")
                        })
                }
            }
    });
    assert!(
        ok,
        "the kernel panel did not show (view: {unavailable:?}):\n{s}"
    );
    if let Some(why) = &unavailable {
        eprintln!("kernel view unavailable here ({why}): the panel said why, figures not checked");
    } else {
        let line = s.lines().find(|l| l.contains("device   p50")).unwrap();
        assert!(!line.contains("p50      –"), "no device time:\n{s}");
        assert!(s.contains("software p50"), "{s}");
    }
    send("L");
    let (ok, s) = tmux.wait_for(limit, |s| !s.contains("kernel view (L)"));
    assert!(ok, "L again did not take the panel away:\n{s}");
    send("q");
    let (ok, s) = tmux.wait_for(limit, |s| s.contains("EXITED:0"));
    assert!(ok, "{s}");
}
