//! Hostile files (issue 9): what a user already has is never deleted, overwritten or written
//! through; inputs that cannot end are refused at once by name; nothing hangs. Every case runs the
//! real binary under a time bound and checks what the user would see: their files intact, a
//! one-line message naming the file or key, a non-zero exit, no signal death.

use crate::util::{bin, tmp};
use std::ffi::CString;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

/// Runs `diskscope ARGS` (or another binary) with a time bound; asserts it ended by itself.
fn bounded(name: &str, args: &[&str], limit: Duration) -> Output {
    let started = Instant::now();
    let out = bin(name).args(args).timeout(limit).output().unwrap();
    assert!(
        out.status.code().is_some(),
        "`{name} {}` did not exit by itself within {limit:?} (status {:?}); stderr: {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < limit);
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn write(path: &Path, text: &str) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{} is gone: {e}", path.display()))
}

const SECS_30: Duration = Duration::from_secs(30);

// ---- locality: only the exact paths a manifest proves are ours -----------------------------

#[test]
fn a_planted_manifest_does_not_let_clean_delete_the_users_photos_or_database() {
    let t = tmp();
    let u = t.path().join("u");
    write(&u.join("2024/photos/a.jpg"), "img");
    write(&u.join("diskscope-locality.toml"), "x");
    write(&u.join("packed.dat"), "db");
    let d = u.to_str().unwrap();
    for args in [
        vec!["locality", "--dir", d, "--clean"],
        vec!["locality", "--dir", d, "--files", "20", "--reps", "1"],
    ] {
        let out = bounded("diskscope", &args, SECS_30);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("diskscope-locality.toml"),
            "{}",
            stderr(&out)
        );
        assert_eq!(read(&u.join("2024/photos/a.jpg")), "img");
        assert_eq!(read(&u.join("packed.dat")), "db");
        assert_eq!(read(&u.join("diskscope-locality.toml")), "x");
    }
}

fn make_layout(dir: &Path, files: &str) {
    let out = bounded(
        "diskscope",
        &[
            "locality",
            "--dir",
            dir.to_str().unwrap(),
            "--files",
            files,
            "--file-size",
            "1K",
            "--reps",
            "1",
            "--order",
            "sequential",
            "--cache",
            "warm",
        ],
        SECS_30,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn user_files_inside_a_real_layout_survive_a_rerun_with_other_parameters_and_clean() {
    let t = tmp();
    let l = t.path().join("L");
    make_layout(&l, "30");
    write(&l.join("0/0/user.txt"), "keep me");
    write(&l.join("2024/notes.txt"), "mine too");
    let d = l.to_str().unwrap();
    let rerun = bounded(
        "diskscope",
        &["locality", "--dir", d, "--files", "40", "--reps", "1"],
        SECS_30,
    );
    assert_eq!(rerun.status.code(), Some(2), "{}", stderr(&rerun));
    assert!(
        stderr(&rerun).contains("did not create"),
        "{}",
        stderr(&rerun)
    );
    let clean = bounded("diskscope", &["locality", "--dir", d, "--clean"], SECS_30);
    assert_eq!(clean.status.code(), Some(2), "{}", stderr(&clean));
    assert_eq!(read(&l.join("0/0/user.txt")), "keep me");
    assert_eq!(read(&l.join("2024/notes.txt")), "mine too");
    // The layout itself is untouched too: nothing was removed before the refusal.
    assert!(l.join("packed.dat").is_file() && l.join("0/0/7/7.txt").is_file());
    // Once the user moves their files out, clean removes exactly the layout.
    std::fs::remove_file(l.join("0/0/user.txt")).unwrap();
    std::fs::remove_dir_all(l.join("2024")).unwrap();
    let clean = bounded("diskscope", &["locality", "--dir", d, "--clean"], SECS_30);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert!(!l.exists());
}

#[test]
fn a_symlink_planted_in_a_layout_is_refused_and_its_target_untouched() {
    let t = tmp();
    let l = t.path().join("L");
    make_layout(&l, "30");
    let victim = t.path().join("victim.txt");
    write(&victim, "precious");
    std::fs::remove_file(l.join("0/0/7/7.txt")).unwrap();
    std::os::unix::fs::symlink(&victim, l.join("0/0/7/7.txt")).unwrap();
    let d = l.to_str().unwrap();
    let out = bounded("diskscope", &["locality", "--dir", d, "--clean"], SECS_30);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("7.txt"), "{}", stderr(&out));
    assert_eq!(read(&victim), "precious");
    assert!(l.join("0/0/7/7.txt").is_symlink());
}

// ---- inputs that cannot end: refused at once, by name -------------------------------------

#[test]
fn a_fifo_is_refused_quickly_by_every_reading_command_naming_it() {
    let t = tmp();
    let fifo = t.path().join("pipe");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let cases: [(&str, Vec<&str>); 6] = [
        ("run", vec![f, "-r", "4K", "1"]),
        ("diskscope", vec!["run", f, "-r", "4K", "1"]),
        ("run2", vec![f, "4K"]),
        ("fast", vec![f]),
        ("diskscope", vec!["syscalls", f, "--seconds", "0.01"]),
        ("diskscope", vec!["--batch", f]),
    ];
    for (name, args) in cases {
        let out = bounded(name, &args, Duration::from_secs(10));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name} {args:?}: {err}");
        assert!(
            err.contains(f) && err.contains("FIFO"),
            "{name} {args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{name} {args:?}: {err}");
    }
}

#[test]
fn a_fifo_as_a_locality_trace_or_a_batch_test_file_is_refused_too() {
    let t = tmp();
    let fifo = t.path().join("pipe");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let dir = t.path().join("L");
    let out = bounded(
        "diskscope",
        &[
            "locality",
            "--dir",
            dir.to_str().unwrap(),
            "--trace",
            f,
            "--files",
            "10",
        ],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--trace") && stderr(&out).contains(f));
    let sweep = t.path().join("s.toml");
    write(
        &sweep,
        &format!(
            "[file]\npath = \"{f}\"\ncreate = \"1M\"\n[[experiment]]\nname = \"a\"\nkind = \"throughput\"\n"
        ),
    );
    let out = bounded(
        "diskscope",
        &[
            "--batch",
            sweep.to_str().unwrap(),
            "--out",
            t.path().join("o").to_str().unwrap(),
        ],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
}

#[test]
fn character_devices_that_never_end_are_refused_by_fast_run_and_run2() {
    for (name, args) in [
        ("fast", vec!["/dev/zero"]),
        ("run", vec!["/dev/zero", "-r", "1M", "4"]),
        ("run2", vec!["/dev/zero", "1M"]),
        ("run2", vec!["/dev/null", "1M"]),
    ] {
        let out = bounded(name, &args, Duration::from_secs(10));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name} {args:?}: {err}");
        assert!(
            err.contains(args[0]) && err.contains("character device"),
            "{err}"
        );
    }
}

#[test]
fn proc_files_get_a_message_that_names_them_instead_of_illegal_seek() {
    let out = bounded("run", &["/proc/self/status", "-r", "4K", "1"], SECS_30);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/proc/self/status") && err.contains("pseudo-file"),
        "{err}"
    );
    assert!(!err.contains("Illegal seek"), "{err}");
}

#[test]
fn fast_still_reads_a_pipe_given_as_dev_stdin_to_its_end() {
    let t = tmp();
    let f = t.path().join("data");
    let data = crate::util::write_varied_file(&f, 100_000, 3);
    let mut child = crate::util::command("fast")
        .arg("/dev/stdin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&data).unwrap();
    }
    let deadline = Instant::now() + SECS_30;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "fast /dev/stdin never ended");
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        crate::util::reference_xor(&data)
    );
}

#[test]
fn run2_on_an_empty_file_says_to_make_one_with_data() {
    let t = tmp();
    let f = t.path().join("empty");
    write(&f, "");
    let out = bounded("run2", &[f.to_str().unwrap(), "4K"], SECS_30);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is empty") && err.contains("run BIGFILE -w"),
        "{err}"
    );
}

#[test]
fn messages_name_the_directory_or_the_loop_instead_of_repeating_a_failing_command() {
    let t = tmp();
    let missing = t.path().join("no/such/dir/f");
    let out = bounded(
        "run",
        &[missing.to_str().unwrap(), "-w", "4K", "1"],
        SECS_30,
    );
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("mkdir -p") && !err.contains("run "), "{err}");
    let a = t.path().join("a");
    let b = t.path().join("b");
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let out = bounded("run", &[a.to_str().unwrap(), "-r", "4K", "1"], SECS_30);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("loop") && !err.contains("File exists"),
        "{err}"
    );
    let dir = t.path().to_str().unwrap();
    let out = bounded(
        "diskscope",
        &["syscalls", dir, "--seconds", "0.01"],
        SECS_30,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(dir) && err.contains("directory"), "{err}");
}

// ---- the explorer's scratch file -----------------------------------------------------------

/// Runs the explorer on `file` inside a tmux server of its own; `keys` are sent one by one, each
/// after the screen shows what it waits for. Returns the last screen. None without tmux.
fn explore_with_keys(file: &Path, steps: &[(&str, &str)]) -> Option<String> {
    use std::process::Command;
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("skipped: tmux is not installed (the CI installs it)");
        return None;
    }
    let socket = format!(
        "diskscope-hostile-{}-{}",
        std::process::id(),
        file.file_name().unwrap().to_string_lossy()
    );
    let tmux = |args: &[&str]| {
        let out = Command::new("tmux")
            .args(["-L", &socket])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    struct Kill<'a>(&'a str);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("tmux")
                .args(["-L", self.0, "kill-server"])
                .output();
        }
    }
    let _kill = Kill(&socket);
    let exe = crate::util::command("diskscope");
    let shell = format!(
        "{}{} {}; echo EXITED:$?; sleep 30",
        crate::util::Sandbox::new().shell_prefix(),
        exe.get_program().to_string_lossy(),
        file.display()
    );
    tmux(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "main",
        "-x",
        "100",
        "-y",
        "30",
        &shell,
    ]);
    let mut screen = String::new();
    for (key, wait_for) in steps {
        if !key.is_empty() {
            tmux(&["send-keys", "-t", "main", key]);
        }
        let start = Instant::now();
        loop {
            screen = tmux(&["capture-pane", "-p", "-t", "main"]);
            if screen.contains(wait_for) {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "waiting for {wait_for:?} after {key:?}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Some(screen)
}

#[test]
fn a_symlinked_scratch_file_is_never_written_through_and_a_foreign_one_never_removed() {
    let t = tmp();
    let f = t.path().join("f.bin");
    crate::util::write_varied_file(&f, 8 << 20, 5);
    let victim = t.path().join("victim.txt");
    write(&victim, "precious");
    let scratch = t.path().join(".f.bin.diskscope-scratch");
    std::os::unix::fs::symlink(&victim, &scratch).unwrap();
    let Some(screen) = explore_with_keys(
        &f,
        &[
            ("", "now "),
            // Each write run makes a fresh, exclusively created scratch name
            // (`.f.bin.diskscope-scratch.<pid>.<n>`), so the planted link is never opened.
            ("w", "writing"),
            ("q", "EXITED:"),
        ],
    ) else {
        return;
    };
    assert!(screen.contains("EXITED:0"), "{screen}");
    assert_eq!(read(&victim), "precious");
    assert!(scratch.is_symlink(), "the user's symlink was removed");

    // A regular file of that name, `w` never pressed: still there after `q`.
    let g = t.path().join("g.bin");
    crate::util::write_varied_file(&g, 8 << 20, 6);
    let foreign = t.path().join(".g.bin.diskscope-scratch");
    write(&foreign, "not yours");
    let Some(screen) = explore_with_keys(&g, &[("", "settings"), ("q", "EXITED:")]) else {
        return;
    };
    assert!(screen.contains("EXITED:0"), "{screen}");
    assert_eq!(read(&foreign), "not yours");
}

// ---- batch mode: free space, one writer per --out, commands that background children --------

fn sweep_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    write(&p, text);
    p
}

#[test]
fn a_test_file_larger_than_the_free_space_is_refused_before_writing_anything() {
    let t = tmp();
    let s = sweep_file(
        t.path(),
        "huge.toml",
        "[file]\ncreate = \"100T\"\n[[experiment]]\nname = \"a\"\nkind = \"throughput\"\n",
    );
    let out_dir = t.path().join("out");
    let out = bounded(
        "diskscope",
        &[
            "--batch",
            s.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        SECS_30,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("huge.toml:2") && err.contains("create") && err.contains("free"),
        "{err}"
    );
    assert!(!out_dir.exists(), "an empty --out was left behind");
}

#[test]
fn a_second_batch_on_the_same_out_is_refused_and_the_first_finishes_intact() {
    let t = tmp();
    let s = sweep_file(
        t.path(),
        "slow.toml",
        "[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"slow\"\nkind = \"throughput\"\nblock_size = \"64K\"\nreps = 4\nseconds = 0.5\n",
    );
    let out_dir = t.path().join("out");
    let mut first = crate::util::command("diskscope")
        .args([
            "--batch",
            s.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + SECS_30;
    while !out_dir.join("diskscope-testfile.bin").exists() {
        assert!(Instant::now() < deadline, "the first batch never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = bounded(
        "diskscope",
        &[
            "--batch",
            s.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        SECS_30,
    );
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("another diskscope batch is writing to")
            && err.contains(&format!("pid {}", first.id())),
        "{err}"
    );
    while first.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the first batch never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let mut r = csv::Reader::from_path(out_dir.join("slow.csv")).unwrap();
    let width = r.headers().unwrap().len();
    let rows: Vec<_> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|x| x.len() == width));
    assert!(!out_dir.join(".diskscope.lock").exists());
    assert!(!out_dir.join("diskscope-testfile.bin").exists());
}

#[test]
fn a_command_that_backgrounds_a_child_is_timed_until_the_child_ends_and_killed_at_the_timeout() {
    let t = tmp();
    let marker = t.path().join("child-finished");
    let s = sweep_file(
        t.path(),
        "bg.toml",
        &format!(
            "[file]\ncreate = \"64K\"\n[[experiment]]\nname = \"short\"\nkind = \"command\"\ncommand = \"(sleep 0.4; touch {m}.short) & echo started\"\n\
             reps = 1\n\
             [[experiment]]\nname = \"long\"\nkind = \"command\"\ncommand = \"(sleep 30; touch {m}) & echo started\"\n\
             timeout = 2\nreps = 1\n",
            m = marker.display()
        ),
    );
    let out_dir = t.path().join("out");
    let started = Instant::now();
    let out = bounded(
        "diskscope",
        &[
            "--batch",
            s.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the timed-out run counts as failed: {err}"
    );
    let read_rows = |name: &str| {
        let mut r = csv::Reader::from_path(out_dir.join(name)).unwrap();
        let h = r.headers().unwrap().clone();
        let row = r.records().next().unwrap().unwrap();
        let get = |c: &str| row[h.iter().position(|x| x == c).unwrap()].to_string();
        (get("seconds").parse::<f64>().unwrap(), get("error"))
    };
    let (secs, error) = read_rows("short.csv");
    assert!(error.is_empty(), "{error}");
    assert!(
        secs >= 0.35,
        "the background child's time was not counted: {secs} s"
    );
    let (_, error) = read_rows("long.csv");
    assert!(error.contains("timeout"), "{error}");
    // The killed child never gets to finish, even after the batch is gone.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!marker.exists());
}

/// Pids of live processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let zombie = stat.rsplit(')').next()?.trim_start().starts_with('Z');
            (cmd.contains(needle) && !zombie).then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

#[test]
fn sigkill_of_the_batch_leaves_no_command_running_behind() {
    let t = tmp();
    // A distinctive duration to find the processes by.
    let s = sweep_file(
        t.path(),
        "orphan.toml",
        "[file]\ncreate = \"64K\"\n[[experiment]]\nname = \"o\"\nkind = \"command\"\ncommand = \"sleep 47.123 & sleep 47.123\"\ntimeout = 60\nreps = 1\n",
    );
    let out_dir = t.path().join("out");
    let mut child = crate::util::command("diskscope")
        .args([
            "--batch",
            s.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + SECS_30;
    while processes_with("sleep 47.123").len() < 2 {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_with("sleep 47.123");
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "orphans left running: {left:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---- sweep planning: linear, and capped ----------------------------------------------------

fn big_sweep(dir: &Path, threads: usize, extra: &str) -> std::path::PathBuf {
    let list: Vec<String> = (1..=threads).map(|t| t.to_string()).collect();
    sweep_file(
        dir,
        "big.toml",
        &format!(
            "[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"x\"\nkind = \"throughput\"\n\
             threads = [{}]\nblock_size = \"1..128M\"\npattern = [\"sequential\", \"random\"]\n\
             method = [\"read\", \"pread\", \"mmap\"]\n{extra}",
            list.join(", ")
        ),
    )
}

#[test]
fn a_plan_past_the_point_cap_is_refused_at_once_naming_the_key_and_force_plans_it_quickly() {
    let t = tmp();
    // 1000 × 28 × 2 × 3 = 168000 points.
    let s = big_sweep(t.path(), 1000, "");
    let out = bounded(
        "diskscope",
        &["--batch", s.to_str().unwrap(), "--dry-run"],
        SECS_30,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("big.toml:6: key `threads`")
            && err.contains("168000 points")
            && err.contains("--force"),
        "{err}"
    );
    // Planning is linear: the whole plan (quadratic before: minutes) is printed well in time.
    let out = bounded(
        "diskscope",
        &["--batch", s.to_str().unwrap(), "--dry-run", "--force"],
        SECS_30,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("168000"));
}

#[test]
fn a_plan_of_days_is_refused_without_force_and_the_dry_run_says_so() {
    let t = tmp();
    let s = big_sweep(t.path(), 10, "reps = 100\nseconds = 60\n");
    let out_dir = t.path().join("out");
    let args = [
        "--batch",
        s.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ];
    let out = bounded("diskscope", &args, SECS_30);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--force") && err.contains(" h "), "{err}");
    assert!(!out_dir.exists(), "nothing was started");
    let dry = bounded("diskscope", &[&args[..], &["--dry-run"]].concat(), SECS_30);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert!(stderr(&dry).contains("note: --force"), "{}", stderr(&dry));
}

// ---- clearer messages ----------------------------------------------------------------------

#[test]
fn a_negative_number_is_reported_against_its_argument() {
    let t = tmp();
    let f = t.path().join("f");
    write(&f, "data");
    let f = f.to_str().unwrap();
    for (args, name) in [
        (vec![f, "-r", "1M", "-1"], "BLOCK_COUNT"),
        (vec![f, "-r", "-1", "1"], "BLOCK_SIZE"),
        (vec![f, "-r", "1M", "1", "--threads", "-1"], "--threads"),
    ] {
        let out = bounded("run", &args, SECS_30);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(name) && err.contains("-1"), "{args:?}: {err}");
    }
}

#[test]
fn an_empty_trace_is_named_without_a_line_zero_and_leaves_no_directory() {
    let t = tmp();
    let trace = t.path().join("empty.log");
    write(&trace, "# only a comment\n\n");
    let dir = t.path().join("L");
    let out = bounded(
        "diskscope",
        &[
            "locality",
            "--dir",
            dir.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--files",
            "10",
        ],
        SECS_30,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("empty.log") && err.contains("no ids"), "{err}");
    assert!(!err.contains("line 0"), "{err}");
    assert!(!dir.exists());
}

#[test]
fn a_trace_of_bytes_that_are_not_text_is_refused_in_one_line_naming_the_file() {
    let t = tmp();
    let trace = t.path().join("binary.log");
    std::fs::write(
        &trace,
        b"1\n2\n\xff\xfe\x00\x80 - - [x] \"GET /7.txt\" 200 1\n",
    )
    .unwrap();
    let dir = t.path().join("L");
    let out = bounded(
        "diskscope",
        &[
            "locality",
            "--dir",
            dir.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--files",
            "10",
        ],
        SECS_30,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--trace") && err.contains("binary.log"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(!dir.exists());
}

#[test]
fn a_locality_layout_too_big_for_the_disk_is_refused_without_leaving_its_directory() {
    let t = tmp();
    let dir = t.path().join("L");
    let out = bounded(
        "diskscope",
        &[
            "locality",
            "--dir",
            dir.to_str().unwrap(),
            "--files",
            "1000000",
            "--file-size",
            "64M",
        ],
        SECS_30,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("free"), "{err}");
    assert!(!dir.exists(), "an empty --dir was left behind");
}

// ---- parsers under random input: never a panic, always an error naming the key or line ------

mod parsers {
    use diskscope::locality::trace::parse_trace;
    use diskscope::size::parse_size;
    use diskscope::sweep::plan::build;
    use diskscope::sweep::schema::Source;
    use proptest::prelude::*;
    use std::path::Path;

    const VALID_SWEEP: &str = "name = \"s\"\n[file]\ncreate = \"1M\"\n[defaults]\nreps = 2\n\
        seconds = 0.1\n[[experiment]]\nname = \"a\"\nkind = \"throughput\"\n\
        block_size = [\"4K\", \"1..64K\"]\nthreads = [1, 2]\nmethod = [\"read\", \"io_uring\"]\n\
        queue_depth = [1, 8]\n[[experiment]]\nname = \"b\"\nkind = \"command\"\n\
        command = \"dd if={file} of=/dev/null bs={block_size}\"\ntimeout = 5\n\
        [[experiment]]\nname = \"c\"\nkind = \"syscalls\"\n";

    const VALID_TRACE: &str = "# ids\n1\n2\n\n10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \
        \"GET /0/0/7/7.txt HTTP/1.0\" 200 14336\n3\n";

    /// A string with one random edit (insert, delete or replace a char) at a random place.
    fn mutated(valid: &'static str) -> impl Strategy<Value = String> {
        (0..valid.len() + 1, any::<char>(), 0..3u8).prop_map(move |(at, c, how)| {
            let mut s = valid.to_string();
            let mut at = at.min(s.len());
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            match how {
                0 => s.insert(at, c),
                1 if at < s.len() => {
                    s.remove(at);
                }
                _ if at < s.len() => {
                    s.remove(at);
                    s.insert(at, c);
                }
                _ => s.push(c),
            }
            s
        })
    }

    /// Sweep errors are one line that starts with the file and a line number.
    fn check_sweep(text: String) -> Result<(), TestCaseError> {
        let src = Source {
            display: "t.toml".into(),
            text,
        };
        let result = src.parse().and_then(|doc| {
            build(
                &src,
                &doc,
                "t",
                Some(Path::new("/nonexistent-diskscope-out")),
            )
        });
        if let Err(e) = result {
            let msg = format!("{e:#}");
            prop_assert!(!msg.trim().contains('\n'), "more than one line: {msg}");
            let rest = msg.strip_prefix("t.toml:");
            let line_ok = rest.is_some_and(|r| {
                r.split(':')
                    .next()
                    .is_some_and(|n| n.parse::<usize>().is_ok_and(|n| n >= 1))
            });
            prop_assert!(line_ok, "no FILE:LINE: {msg}");
        }
        Ok(())
    }

    fn check_trace(text: &str) -> Result<(), TestCaseError> {
        let lines = text.lines().count();
        if let Err(e) = parse_trace(text, 100) {
            let shown = e.to_string();
            prop_assert!(!shown.contains('\n'), "{shown}");
            if e.line == 0 {
                prop_assert!(shown.contains("no ids"), "{shown}");
            } else {
                prop_assert!(e.line <= lines, "line {} of {lines}", e.line);
                prop_assert!(shown.starts_with(&format!("line {}: ", e.line)), "{shown}");
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        #[test]
        fn sizes_from_random_text_parse_or_say_what_is_wrong_in_one_line(text in "\\PC{0,12}") {
            if let Err(e) = parse_size(&text) {
                prop_assert!(!e.contains('\n'), "{e}");
                let shown = text.escape_debug().to_string();
                prop_assert!(e.contains(&format!("'{shown}'")) || e.starts_with("empty size"), "{e}");
            }
        }

        #[test]
        fn mutated_sizes_never_panic(text in mutated("64KiB")) {
            if let Err(e) = parse_size(&text) {
                prop_assert!(!e.contains('\n'), "{e:?}");
            }
        }

        #[test]
        fn random_bytes_as_a_sweep_file_give_a_located_error(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            check_sweep(String::from_utf8_lossy(&bytes).into_owned())?;
        }

        #[test]
        fn mutated_sweep_files_give_a_located_error(text in mutated(VALID_SWEEP)) {
            check_sweep(text)?;
        }

        #[test]
        fn random_traces_give_an_error_naming_a_real_line(text in "(\\PC{0,40}\n){0,6}") {
            check_trace(&text)?;
        }

        #[test]
        fn mutated_traces_and_log_lines_give_an_error_naming_a_real_line(text in mutated(VALID_TRACE)) {
            check_trace(&text)?;
        }

        #[test]
        fn random_bytes_as_a_trace_give_an_error_naming_a_real_line(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            check_trace(&String::from_utf8_lossy(&bytes))?;
        }

        #[test]
        fn log_lines_with_random_bytes_in_every_field_give_an_error_naming_a_real_line(
            fields in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..12), proptest::collection::vec(any::<u8>(), 0..12),
                 proptest::collection::vec(any::<u8>(), 0..24), proptest::collection::vec(any::<u8>(), 0..8)),
                1..5,
            )
        ) {
            // Common Log Format's shape, every field random bytes: quotes, brackets, digits and
            // newlines inside them move the parser into every branch.
            let mut bytes = Vec::new();
            for (host, date, path, tail) in &fields {
                bytes.extend_from_slice(host);
                bytes.extend_from_slice(b" - - [");
                bytes.extend_from_slice(date);
                bytes.extend_from_slice(b"] \"GET /");
                bytes.extend_from_slice(path);
                bytes.extend_from_slice(b".txt HTTP/1.0\" 200 ");
                bytes.extend_from_slice(tail);
                bytes.push(b'\n');
            }
            check_trace(&String::from_utf8_lossy(&bytes))?;
        }
    }

    #[test]
    fn the_valid_inputs_the_mutations_start_from_are_valid() {
        assert_eq!(parse_size("64KiB"), Ok(65536));
        assert_eq!(parse_trace(VALID_TRACE, 100).unwrap(), vec![1, 2, 7, 3]);
        let src = Source {
            display: "t.toml".into(),
            text: VALID_SWEEP.into(),
        };
        let doc = src.parse().unwrap();
        build(
            &src,
            &doc,
            "t",
            Some(Path::new("/nonexistent-diskscope-out")),
        )
        .unwrap();
    }
}

#[test]
fn run_w_with_force_never_writes_through_a_symbolic_link() {
    let d = tmp();
    let victim = d.path().join("victim.txt");
    write(&victim, "precious\n");
    let link = d.path().join("out.dat");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let link_s = link.to_str().unwrap();
    for force in [false, true] {
        let mut args = vec![link_s, "-w", "4K", "4"];
        if force {
            args.push("--force");
        }
        let o = bounded("run", &args, Duration::from_secs(30));
        assert_eq!(o.status.code(), Some(2), "force={force}: {}", stderr(&o));
        assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
        assert_eq!(read(&victim), "precious\n", "force={force}");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

// ---- second pass (review of issue 9): outputs, test files, locks, signals, plans -----------

/// A sweep of one quick syscalls experiment named `name` (it needs no file of the user's).
fn quick_sweep(dir: &Path, name: &str) -> std::path::PathBuf {
    sweep_file(
        dir,
        &format!("{name}.toml"),
        &format!(
            "[[experiment]]\nname = \"{name}\"\nkind = \"syscalls\"\nreps = 1\nseconds = 0.01\n"
        ),
    )
}

fn batch(sweep: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "--batch",
        sweep.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    bounded("diskscope", &args, SECS_30)
}

#[test]
fn batch_outputs_never_follow_a_symlink_and_an_existing_file_needs_force() {
    let t = tmp();
    let s = quick_sweep(t.path(), "s");
    let victim = t.path().join("victim.txt");
    write(&victim, "precious");
    for planted in [
        "s.csv",
        "s-summary.csv",
        "s.svg",
        "context.json",
        "sweep.json",
    ] {
        let out_dir = t.path().join(format!("o-{planted}"));
        std::fs::create_dir_all(&out_dir).unwrap();
        std::os::unix::fs::symlink(&victim, out_dir.join(planted)).unwrap();
        for force in [&[][..], &["--force"][..]] {
            let out = batch(&s, &out_dir, force);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{planted} {force:?}: {err}");
            assert!(
                err.contains("symbolic link") && err.contains(planted),
                "{err}"
            );
            // Refused before anything ran: no CSV of a run that would be lost.
            assert!(
                planted == "s.csv" || !out_dir.join("s.csv").exists(),
                "{err}"
            );
            assert_eq!(read(&victim), "precious", "written through {planted}");
            assert!(out_dir.join(planted).is_symlink());
            assert!(!out_dir.join(".diskscope.lock").exists());
        }
    }
    // A plain file from an earlier run: refused without --force, replaced with it.
    let out_dir = t.path().join("o-plain");
    write(&out_dir.join("s.csv"), "old results");
    let out = batch(&s, &out_dir, &[]);
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(read(&out_dir.join("s.csv")), "old results");
    // The sweep's documents beside the CSVs are outputs like them.
    for doc in ["context.json", "sweep.json"] {
        let dir = t.path().join(format!("o-plain-{doc}"));
        write(&dir.join(doc), "old document");
        let out = batch(&s, &dir, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{doc}: {err}");
        assert!(err.contains("already exists") && err.contains(doc), "{err}");
        assert_eq!(read(&dir.join(doc)), "old document");
        assert!(
            !dir.join("s.csv").exists(),
            "{doc}: refused only after running"
        );
        let out = batch(&s, &dir, &["--force"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(read(&dir.join(doc)).starts_with('{'), "{doc} not replaced");
    }
    let out = batch(&s, &out_dir, &["--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(read(&out_dir.join("s.csv")).starts_with("experiment,"));
    // Re-running onto an old --out is refused too, rather than overwriting it silently.
    let out = batch(&s, &out_dir, &[]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("already exists"), "{}", stderr(&out));
}

#[test]
fn a_test_file_made_by_someone_else_is_reused_but_never_removed() {
    let t = tmp();
    let mine = t.path().join("mine.dat");
    let made = bounded("run", &[mine.to_str().unwrap(), "-w", "1M", "4"], SECS_30);
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
    let s = sweep_file(
        t.path(),
        "reuse.toml",
        &format!(
            "[file]\npath = \"{}\"\ncreate = \"4M\"\n[[experiment]]\nname = \"r\"\nkind = \"throughput\"\n\
             block_size = \"1M\"\nreps = 1\nseconds = 0.1\n",
            mine.display()
        ),
    );
    let out = batch(&s, &t.path().join("out"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(plan.contains("never removed"), "{plan}");
    assert!(mine.exists(), "the batch deleted a file it did not create");
    assert_eq!(std::fs::metadata(&mine).unwrap().len(), 4 << 20);
}

#[test]
fn a_second_batch_on_the_same_test_file_is_refused_while_the_first_uses_it() {
    let t = tmp();
    let shared = t.path().join("shared.bin");
    let s = sweep_file(
        t.path(),
        "shared.toml",
        &format!(
            "[file]\npath = \"{}\"\ncreate = \"1M\"\n[[experiment]]\nname = \"slow\"\nkind = \"throughput\"\n\
             block_size = \"64K\"\nreps = 4\nseconds = 0.5\n",
            shared.display()
        ),
    );
    let a_out = t.path().join("a");
    let mut a = crate::util::command("diskscope")
        .args([
            "--batch",
            s.to_str().unwrap(),
            "--out",
            a_out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + SECS_30;
    while !a_out.join("slow.csv").exists() {
        assert!(Instant::now() < deadline, "the first batch never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    let b = batch(&s, &t.path().join("b"), &[]);
    let err = stderr(&b);
    assert_eq!(b.status.code(), Some(2), "{err}");
    assert!(
        err.contains("using the test file") && err.contains("shared.bin"),
        "{err}"
    );
    while a.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the first batch never ended");
        std::thread::sleep(Duration::from_millis(20));
    }
    let a = a.wait_with_output().unwrap();
    assert!(a.status.success(), "{}", stderr(&a));
    let rows = csv::Reader::from_path(a_out.join("slow.csv"))
        .unwrap()
        .records()
        .count();
    assert_eq!(rows, 4);
    assert!(
        !shared.exists(),
        "the first batch created it and removes it"
    );
}

#[test]
fn a_lock_file_that_is_not_provably_ours_is_never_taken_over() {
    let t = tmp();
    let s = quick_sweep(t.path(), "l");
    let year = t.path().join("year.txt");
    write(&year, "2024\n");
    type Plant<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Plant); 3] = [
        ("empty", &|p| write(p, "")),
        ("digits", &|p| write(p, "2024\n")),
        ("hard link", &|p| std::fs::hard_link(&year, p).unwrap()),
    ];
    for (what, plant) in cases {
        let out_dir = t.path().join(format!("o-{}", what.replace(' ', "-")));
        std::fs::create_dir_all(&out_dir).unwrap();
        let lock = out_dir.join(".diskscope.lock");
        plant(&lock);
        let before = std::fs::read(&lock).unwrap();
        let out = batch(&s, &out_dir, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(
            err.contains("not provably a diskscope lock file"),
            "{what}: {err}"
        );
        assert_eq!(std::fs::read(&lock).unwrap(), before, "{what}: changed");
    }
    assert_eq!(read(&year), "2024\n");
    // A lock left by a killed batch (its exact content, nobody holding it) is taken over.
    let out_dir = t.path().join("o-stale");
    write(
        &out_dir.join(".diskscope.lock"),
        "diskscope batch lock, pid 999999\n",
    );
    let out = batch(&s, &out_dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!out_dir.join(".diskscope.lock").exists());
}

#[test]
fn syscalls_without_a_file_leaves_no_temp_file_whatever_signal_stops_it() {
    let t = tmp();
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let tmpdir = t.path().join(format!("tmp-{sig}"));
        std::fs::create_dir_all(&tmpdir).unwrap();
        let mut child = crate::util::command("diskscope")
            .args(["syscalls", "--seconds", "3"])
            .env("TMPDIR", &tmpdir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(400));
        // SAFETY: kill(2) on the child we spawned.
        unsafe { libc::kill(child.id() as i32, sig) };
        let deadline = Instant::now() + SECS_30;
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "syscalls ignored signal {sig}");
            std::thread::sleep(Duration::from_millis(20));
        }
        let left: Vec<_> = std::fs::read_dir(&tmpdir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "signal {sig} left {left:?}");
    }
}

#[test]
fn experiments_whose_output_files_collide_are_refused_at_plan_time_with_the_line() {
    let t = tmp();
    let s = sweep_file(
        t.path(),
        "col.toml",
        "[[experiment]]\nname = \"a\"\nkind = \"syscalls\"\n\n[[experiment]]\nname = \"a-summary\"\nkind = \"syscalls\"\n",
    );
    let out = batch(&s, &t.path().join("out"), &["--dry-run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("col.toml:6: key `name`") && err.contains("a-summary.csv"),
        "{err}"
    );
    assert!(!t.path().join("out").exists());
}

#[test]
fn locality_params_in_a_sweep_are_checked_by_the_dry_run_with_the_line() {
    let t = tmp();
    let s = sweep_file(
        t.path(),
        "loc.toml",
        &format!(
            "[[experiment]]\nname = \"l\"\nkind = \"locality\"\nparams = {{ dir = \"{}\", files = 100000000, file_size = \"1G\" }}\n",
            t.path().join("layout").display()
        ),
    );
    let out = batch(&s, &t.path().join("out"), &["--dry-run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("loc.toml:4: key `params.files`: must be between"),
        "{err}"
    );
    // In range but far more than the disk holds: refused at plan time too.
    let s = sweep_file(
        t.path(),
        "loc2.toml",
        &format!(
            "[[experiment]]\nname = \"l\"\nkind = \"locality\"\nparams = {{ dir = \"{}\", files = 1000000, file_size = \"64M\" }}\n",
            t.path().join("layout").display()
        ),
    );
    let out = batch(&s, &t.path().join("out"), &["--dry-run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("loc2.toml:4: key `params.files`: the layout needs")
            && err.contains("use fewer files, a smaller file_size or another dir")
            && !err.contains("--"),
        "{err}"
    );
    // A misspelt key inside params: refused by the dry run, naming it, before any I/O (the
    // layout directory is never made).
    let s = sweep_file(
        t.path(),
        "loc3.toml",
        &format!(
            "[[experiment]]\nname = \"t\"\nkind = \"syscalls\"\n[[experiment]]\nname = \"l\"\nkind = \"locality\"\nparams = {{ dir = \"{}\", filez = 100 }}\n",
            t.path().join("layout").display()
        ),
    );
    let out = batch(&s, &t.path().join("out"), &["--dry-run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("loc3.toml:7: key `params.filez`: unknown key"),
        "{err}"
    );
    assert!(!t.path().join("layout").exists() && !t.path().join("out").exists());
}

/// A tmpfs of `size` mounted at `dir` for the life of the value (root only; None, with the reason
/// printed, where mounting is not allowed).
struct SmallFs(std::path::PathBuf);
impl SmallFs {
    fn mount(dir: &Path, size: &str) -> Option<SmallFs> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("skipped: cannot mount a small tmpfs here (needs root)");
            return None;
        }
        Some(SmallFs(dir.to_path_buf()))
    }
}
impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .output();
    }
}

#[test]
fn a_full_out_disk_leaves_only_whole_rows_and_the_message_names_the_file() {
    let t = tmp();
    let Some(_fs) = SmallFs::mount(&t.path().join("full"), "8k") else {
        return;
    };
    let data = t.path().join("data.bin");
    write(&data, "some bytes to read");
    let s = sweep_file(
        t.path(),
        "fill.toml",
        &format!(
            "[file]\npath = \"{}\"\n[[experiment]]\nname = \"s\"\nkind = \"syscalls\"\nreps = 200\nseconds = 0.0005\n",
            data.display()
        ),
    );
    let out_dir = t.path().join("full/o");
    let out = batch(&s, &out_dir, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("full/o/s.csv") && err.contains("No space"),
        "{err}"
    );
    let mut r = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(out_dir.join("s.csv"))
        .unwrap();
    let width = r.headers().unwrap().len();
    let rows: Vec<_> = r.records().map(|x| x.unwrap()).collect();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|x| x.len() == width), "a cut row was left");
    assert!(read(&out_dir.join("s.csv")).ends_with('\n'));
}

#[test]
fn a_second_signal_keeps_stopping_gracefully_and_leaves_no_lock() {
    let t = tmp();
    let s = sweep_file(
        t.path(),
        "sig.toml",
        "[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"slow\"\nkind = \"throughput\"\nblock_size = \"64K\"\nreps = 20\nseconds = 0.5\n",
    );
    let out_dir = t.path().join("out");
    let child = crate::util::command("diskscope")
        .args([
            "--batch",
            s.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + SECS_30;
    while std::fs::read_to_string(out_dir.join("slow.csv")).map_or(0, |s| s.lines().count()) < 2 {
        assert!(Instant::now() < deadline, "the batch never finished a run");
        std::thread::sleep(Duration::from_millis(20));
    }
    for _ in 0..2 {
        // SAFETY: kill(2) on the child we spawned.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(30));
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted: the CSVs hold"), "{err}");
    assert!(out_dir.join("slow-summary.csv").exists(), "{err}");
    assert!(!out_dir.join(".diskscope.lock").exists());
    assert!(!out_dir.join("diskscope-testfile.bin").exists());
}

#[test]
fn two_locality_runs_on_one_dir_do_not_destroy_each_other() {
    let t = tmp();
    let dir = t.path().join("L");
    let d = dir.to_str().unwrap();
    let args = ["locality", "--dir", d, "--files", "20000", "--reps", "3"];
    let mut a = crate::util::command("diskscope")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + SECS_30;
    while !dir.join("diskscope-locality.toml").exists() {
        assert!(Instant::now() < deadline, "the first run never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    for b_args in [&args[..], &["locality", "--dir", d, "--clean"][..]] {
        let b = bounded("diskscope", b_args, SECS_30);
        let err = stderr(&b);
        assert_eq!(b.status.code(), Some(2), "{err}");
        assert!(
            err.contains("another diskscope locality run is using"),
            "{err}"
        );
    }
    // SAFETY: kill(2) on the child we spawned.
    unsafe { libc::kill(a.id() as i32, libc::SIGINT) };
    while a.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline + SECS_30,
            "the first run never ended"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let a = a.wait_with_output().unwrap();
    assert!(
        matches!(a.status.code(), Some(0 | 130)),
        "the first run was disturbed: {}",
        stderr(&a)
    );
    let clean = bounded("diskscope", &["locality", "--dir", d, "--clean"], SECS_30);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
}

#[test]
fn a_setsid_child_of_a_command_is_part_of_the_run_and_killed_at_the_timeout() {
    let t = tmp();
    let s = sweep_file(
        t.path(),
        "setsid.toml",
        "[file]\ncreate = \"64K\"\n[[experiment]]\nname = \"o\"\nkind = \"command\"\ncommand = \"setsid sleep 41.321 & echo started\"\ntimeout = 1\nreps = 1\n",
    );
    let out = batch(&s, &t.path().join("out"), &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "recorded as a success: {err}");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_with("sleep 41.321");
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "orphans left running: {left:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_explorers_default_file_checks_free_space_before_writing() {
    let t = tmp();
    let small = t.path().join("small");
    let Some(_fs) = SmallFs::mount(&small, "16m") else {
        return;
    };
    if std::process::Command::new("script")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("skipped: `script` (util-linux) is not installed");
        return;
    }
    // `script` gives the explorer the terminal it needs.
    let shell = format!(
        "{}TMPDIR={} {}",
        crate::util::Sandbox::new().shell_prefix(),
        small.display(),
        crate::util::command("diskscope")
            .get_program()
            .to_string_lossy()
    );
    let started = Instant::now();
    let run = assert_cmd::Command::new("script")
        .args(["-qec", &shell, "/dev/null"])
        .timeout(SECS_30)
        .output()
        .unwrap();
    assert!(started.elapsed() < SECS_30);
    let text = String::from_utf8_lossy(&run.stdout).into_owned() + &stderr(&run);
    assert_ne!(run.status.code(), Some(0), "{text}");
    assert!(
        text.contains("1 GiB scratch file: needs") && text.contains("has only"),
        "{text}"
    );
    let left: Vec<_> = std::fs::read_dir(&small)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn dev_null_is_named_as_itself_not_as_dev_zero() {
    let out = bounded("run", &["/dev/null", "-r", "4K", "1"], SECS_30);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/dev/null") && !err.contains("/dev/zero"),
        "{err}"
    );
}

#[test]
fn syscalls_with_a_full_tmpdir_names_the_temp_file_and_leaves_nothing() {
    let t = tmp();
    let small = t.path().join("tiny");
    let Some(_fs) = SmallFs::mount(&small, "64k") else {
        return;
    };
    let out = bin("diskscope")
        .args(["syscalls", "--seconds", "0.01"])
        .env("TMPDIR", &small)
        .timeout(SECS_30)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&small.join("diskscope-syscalls-").display().to_string())
            && err.contains("No space"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&small)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_bad_key_in_any_kind_fails_the_dry_run_naming_file_line_and_key_before_any_io() {
    let t = tmp();
    // (kind, the experiment's bad line, what the error must say about it)
    let cases = [
        (
            "throughput",
            "blok_size = \"4K\"",
            "key `blok_size`: unknown key",
        ),
        ("command", "comand = \"true\"", "key `comand`: unknown key"),
        (
            "syscalls",
            "block_size = \"4K\"",
            "key `block_size`: does not apply to kind syscalls",
        ),
        (
            "locality",
            "params = { dir = \"DIR\", file_sise = \"4K\" }",
            "key `params.file_sise`: unknown key",
        ),
        (
            "throughput",
            "threads = 0",
            "key `threads`: must be at least 1",
        ),
    ];
    for (i, (kind, bad, says)) in cases.iter().enumerate() {
        let layout = t.path().join(format!("layout{i}"));
        let bad = bad.replace("DIR", &layout.display().to_string());
        let name = format!("k{i}.toml");
        let s = sweep_file(
            t.path(),
            &name,
            &format!(
                "[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"ok\"\nkind = \"syscalls\"\n\
                 [[experiment]]\nname = \"x\"\nkind = \"{kind}\"\n{bad}\n"
            ),
        );
        let out_dir = t.path().join(format!("out{i}"));
        let out = batch(&s, &out_dir, &["--dry-run"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{kind}: {err}");
        assert!(err.contains(&format!("{name}:9: {says}")), "{kind}: {err}");
        assert_eq!(err.lines().count(), 1, "{kind}: one line: {err}");
        assert!(
            !out_dir.exists() && !layout.exists(),
            "{kind}: touched disk"
        );
        assert!(
            !t.path().join("diskscope-testfile.bin").exists(),
            "{kind}: made a test file"
        );
    }
}

// ---- third round (issue 34): a file is diskscope's to rewrite only with proof --------------

/// `run F -w 1M 16`: a 16 MiB test file of diskscope's own, marked when it was created.
fn make_test_file(f: &Path) {
    let made = bounded("run", &[f.to_str().unwrap(), "-w", "1M", "16"], SECS_30);
    assert_eq!(made.status.code(), Some(0), "{}", stderr(&made));
}

/// `text` written at `offset` of `f`, in place.
fn poke(f: &Path, offset: u64, text: &[u8]) {
    use std::os::unix::fs::FileExt;
    let h = std::fs::OpenOptions::new().write(true).open(f).unwrap();
    h.write_all_at(text, offset).unwrap();
}

/// A fio job file `name` in `dir` with one job of `rw` on `file`.
fn fio_job(dir: &Path, name: &str, rw: &str, file: &Path) -> std::path::PathBuf {
    let job = dir.join(name);
    write(
        &job,
        &format!(
            "[j]\nrw={rw}\nfilename={}\nbs=64k\nsize=16m\nruntime=200ms\ntime_based=1\n",
            file.display()
        ),
    );
    job
}

/// A sweep that writes into `[file] path = F, create = "16M"`.
fn write_sweep(dir: &Path, name: &str, file: &Path) -> std::path::PathBuf {
    sweep_file(
        dir,
        name,
        &format!(
            "[file]\npath = \"{}\"\ncreate = \"16M\"\nkeep = true\n[[experiment]]\nname = \"w\"\n\
             kind = \"throughput\"\noperation = \"write\"\nblock_size = \"1M\"\nreps = 1\n\
             seconds = 0.1\n",
            file.display()
        ),
    )
}

#[test]
fn a_file_that_only_looks_like_a_test_file_is_never_overwritten_by_a_job_or_a_sweep() {
    let t = tmp();
    let sixteen = 16u64 << 20;
    // Where the user's bytes go: the middle, the second 4 KiB block, the very last byte (a
    // sample of both ends used to be taken as proof).
    let pokes = [
        ("middle", 8u64 << 20),
        ("second-block", 4096 + 100),
        ("last-byte", sixteen - 1),
    ];
    let mut tried = 0;
    for (where_, offset) in pokes {
        let f = t.path().join(format!("tf-{where_}.bin"));
        make_test_file(&f);
        poke(&f, offset, b"\xffUSER");
        let before = std::fs::read(&f).unwrap();
        let mut attacks: Vec<(String, Output)> = Vec::new();
        for rw in ["write", "randwrite", "randrw", "rw"] {
            let job = fio_job(t.path(), &format!("{where_}-{rw}.fio"), rw, &f);
            let out_dir = t.path().join(format!("out-{where_}-{rw}"));
            attacks.push((format!("fio rw={rw}"), batch(&job, &out_dir, &[])));
        }
        let s = write_sweep(t.path(), &format!("{where_}.toml"), &f);
        attacks.push((
            "sweep create".into(),
            batch(&s, &t.path().join(format!("out-{where_}-sweep")), &[]),
        ));
        for (what, out) in attacks {
            tried += 1;
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{where_} {what}: {err}");
            assert!(
                err.contains(f.to_str().unwrap()),
                "{where_} {what}: names the file: {err}"
            );
            assert!(
                err.contains("is not what diskscope wrote") || err.contains("holds"),
                "{where_} {what}: says why: {err}"
            );
            assert_eq!(err.lines().count(), 1, "{where_} {what}: one line: {err}");
            assert!(
                std::fs::read(&f).unwrap() == before,
                "{where_} {what}: the user's bytes were overwritten"
            );
        }
    }
    // The pattern alone, without the mark diskscope sets when it creates a file (a copy, or the
    // user's own file that happens to hold the pattern): no record, no rewrite.
    let orig = t.path().join("orig.bin");
    make_test_file(&orig);
    let copy = t.path().join("copy.bin");
    std::fs::copy(&orig, &copy).unwrap();
    for (what, out) in [
        (
            "fio",
            batch(
                &fio_job(t.path(), "copy.fio", "write", &copy),
                &t.path().join("oc1"),
                &[],
            ),
        ),
        (
            "sweep",
            batch(
                &write_sweep(t.path(), "copy.toml", &copy),
                &t.path().join("oc2"),
                &[],
            ),
        ),
    ] {
        tried += 1;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "copy {what}: {err}");
        assert!(err.contains("no diskscope mark"), "copy {what}: {err}");
    }
    // A file renamed into the place of a genuine test file carries the other inode's mark.
    let moved = t.path().join("moved.bin");
    make_test_file(&moved);
    let place = t.path().join("place.bin");
    let xattr_copy = std::process::Command::new("cp")
        .args(["--preserve=xattr"])
        .arg(&moved)
        .arg(&place)
        .status()
        .unwrap();
    assert!(xattr_copy.success());
    let out = batch(
        &write_sweep(t.path(), "place.toml", &place),
        &t.path().join("op"),
        &[],
    );
    tried += 1;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no diskscope mark"),
        "{}",
        stderr(&out)
    );
    // A genuine test file, untouched since `run -w` made it, is still reused (and kept).
    let out = batch(
        &write_sweep(t.path(), "orig.toml", &orig),
        &t.path().join("oo"),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("never removed"));
    assert!(
        !stderr(&out).contains("creating the test file"),
        "{}",
        stderr(&out)
    );
    let job = fio_job(t.path(), "orig.fio", "randwrite", &orig);
    let out = batch(&job, &t.path().join("oo2"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Reused, not created: it does not say it creates it.
    assert!(
        !stderr(&out).contains("creating the test file"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::metadata(&orig).unwrap().len(), sixteen);
    eprintln!("attacks tried and held: {tried}");
}

/// A sweep with a read experiment, then a write experiment, on `[file] FILE_LINE`.
fn read_then_write_sweep(dir: &Path, name: &str, file_line: &str) -> std::path::PathBuf {
    sweep_file(
        dir,
        name,
        &format!(
            "[file]\n{file_line}\n[[experiment]]\nname = \"r\"\nkind = \"throughput\"\n\
             block_size = \"64K\"\nreps = 1\nseconds = 0.2\n[[experiment]]\nname = \"w\"\n\
             kind = \"throughput\"\noperation = \"write\"\nblock_size = \"64K\"\nreps = 1\n\
             seconds = 0.2\n"
        ),
    )
}

#[test]
fn a_users_file_renamed_over_the_test_file_between_experiments_is_never_written() {
    use crate::hostile_runtime::{finish, Hook};
    let t = tmp();
    let cases: Vec<(&str, std::path::PathBuf, Option<std::path::PathBuf>)> = {
        let made = t.path().join("made.bin");
        let kept = t.path().join("kept.bin");
        make_test_file(&kept);
        let users = t.path().join("users.bin");
        crate::util::write_varied_file(&users, 1 << 20, 9);
        let job_file = t.path().join("job.bin");
        let job = t.path().join("swap.fio");
        write(
            &job,
            &format!(
                "[r]\nrw=read\nfilename={}\nbs=64k\nsize=1m\nruntime=200ms\ntime_based=1\n\n\
                 [w]\nstonewall\nrw=write\nfilename={}\nbs=64k\nsize=1m\n",
                job_file.display(),
                job_file.display()
            ),
        );
        vec![
            (
                "created by this batch",
                read_then_write_sweep(
                    t.path(),
                    "made.toml",
                    &format!("path = \"{}\"\ncreate = \"1M\"", made.display()),
                ),
                Some(made),
            ),
            (
                "kept and reused",
                read_then_write_sweep(
                    t.path(),
                    "kept.toml",
                    &format!(
                        "path = \"{}\"\ncreate = \"16M\"\nkeep = true",
                        kept.display()
                    ),
                ),
                Some(kept),
            ),
            (
                "the user's, write = true",
                read_then_write_sweep(
                    t.path(),
                    "users.toml",
                    &format!("path = \"{}\"\nwrite = true", users.display()),
                ),
                Some(users),
            ),
            ("a fio job's, created by this batch", job, Some(job_file)),
        ]
    };
    for (i, (what, plan, file)) in cases.into_iter().enumerate() {
        let file = file.unwrap();
        let hook = Hook::at("before-open");
        let out_dir = t.path().join(format!("out{i}"));
        let mut child = hook.spawn(
            "diskscope",
            &[
                "--batch",
                plan.to_str().unwrap(),
                "--out",
                out_dir.to_str().unwrap(),
            ],
        );
        hook.reached(&mut child);
        // The batch checked its file; now another file of the user's takes its name.
        let user = t.path().join(format!("precious{i}.bin"));
        let data = crate::util::write_varied_file(&user, 1 << 20, 7);
        std::fs::rename(&user, &file).unwrap();
        hook.go();
        let out = finish(child);
        let err = stderr(&out);
        assert_eq!(
            std::fs::read(&file).unwrap(),
            data,
            "{what}: the file renamed over the test file was written: {err}"
        );
        assert_ne!(out.status.code(), Some(0), "{what}: {err}");
        assert!(
            err.contains("no longer the file this batch checked"),
            "{what}: {err}"
        );
        // No write row recorded as a success.
        let w = out_dir.join("w.csv");
        if w.exists() {
            for row in crate::util::csv_file_maps(&w) {
                assert!(
                    !row["error"].is_empty(),
                    "{what}: a write row without an error"
                );
            }
        }
        // What is at the path now is the user's: never removed.
        assert!(file.exists(), "{what}: removed");
    }
}

// ---- third round (issue 34): inputs read with a limit, allocation failure in one line -------

/// `diskscope ARGS` under an address-space limit of `as_bytes` (`prlimit --as`), bounded.
fn under_as_limit(args: &[&std::ffi::OsStr], as_bytes: u64) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = crate::util::command("diskscope");
    cmd.args(args);
    // SAFETY: between fork and exec only setrlimit (async-signal-safe) runs, on a stack value.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: as_bytes,
                rlim_max: as_bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let out = cmd.output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
    out
}

#[test]
fn huge_inputs_are_refused_by_size_and_an_allocation_that_fails_is_one_line() {
    let t = tmp();
    let mut tried = 0;
    // A fio job file that includes a 3 GiB sparse file, with and without --dry-run; and a
    // "sweep" that is itself such a file.
    let huge = t.path().join("huge.inc");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let job = t.path().join("inc.fio");
    write(
        &job,
        &format!(
            "[global]\ninclude {}\n[j]\nrw=read\nfilename={}\nsize=64k\n",
            huge.display(),
            t.path().join("data.bin").display()
        ),
    );
    let big_sweep = t.path().join("big.toml");
    std::fs::File::create(&big_sweep)
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    for (what, input, dry) in [
        ("include, dry run", &job, true),
        ("include", &job, false),
        ("sweep, dry run", &big_sweep, true),
    ] {
        let started = Instant::now();
        let out = batch(
            input,
            &t.path().join("out"),
            if dry { &["--dry-run"][..] } else { &[][..] },
        );
        tried += 1;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains("more than the 16"), "{what}: {err}");
        assert!(
            err.contains(if input == &job {
                "huge.inc"
            } else {
                "big.toml"
            }),
            "{what}: {err}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: read it first"
        );
    }
    // compare of a CSV too large for the address space it may use: one line, exit 1, not
    // an abort (SIGABRT, 134).
    let s = sweep_file(
        t.path(),
        "one.toml",
        "[file]\ncreate = \"64K\"\n[[experiment]]\nname = \"r\"\nkind = \"throughput\"\n\
         block_size = \"16K\"\nreps = 1\nseconds = 0.05\n",
    );
    let out = batch(&s, &t.path().join("one"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Read and written with the csv crate: a cell (bound_hint) may hold quoted commas.
    let mut one = csv::Reader::from_path(t.path().join("one/r.csv")).unwrap();
    let header = one.headers().unwrap().clone();
    let row = one.records().next().unwrap().unwrap();
    let bs_col = header.iter().position(|c| c == "block_size_bytes").unwrap();
    let mut big = csv::Writer::from_writer(Vec::new());
    big.write_record(&header).unwrap();
    for i in 0..100_000u64 {
        // Every row its own point: the loaded records grow with the file.
        let mut cells: Vec<String> = row.iter().map(str::to_string).collect();
        cells[bs_col] = (512 * (i + 1)).to_string();
        big.write_record(&cells).unwrap();
    }
    let big_csv = t.path().join("big.csv");
    std::fs::write(&big_csv, big.into_inner().unwrap()).unwrap();
    let out = under_as_limit(
        &["compare".as_ref(), big_csv.as_os_str(), big_csv.as_os_str()],
        100_000_000,
    );
    tried += 1;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: out of memory"), "{err}");
    eprintln!("attacks tried and held: {tried}");
}

#[test]
fn a_job_file_that_is_not_utf8_is_named_with_its_line_not_as_a_sweep() {
    let t = tmp();
    let data = t.path().join("data.bin");
    crate::util::write_varied_file(&data, 1 << 16, 1);
    let job = t.path().join("bad.fio");
    let mut bytes = format!("[j]\nrw=read\nfilename={}\n", data.display()).into_bytes();
    bytes.extend_from_slice(b"bs=4k\xff\xfe\n");
    std::fs::write(&job, &bytes).unwrap();
    let out = batch(&job, &t.path().join("out"), &["--dry-run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("SWEEP.toml"), "{err}");
    assert!(err.contains("bad.fio:4: not UTF-8"), "{err}");
    // The same in an included file: the include's own file and line.
    let inc = t.path().join("opts.inc");
    std::fs::write(&inc, b"bs=4k\niodepth=1\x80\n").unwrap();
    let job = t.path().join("inc.fio");
    write(
        &job,
        &format!(
            "[j]\ninclude {}\nrw=read\nfilename={}\n",
            inc.display(),
            data.display()
        ),
    );
    let out = batch(&job, &t.path().join("out"), &["--dry-run"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("opts.inc") && err.contains(":2: not UTF-8"),
        "{err}"
    );
}

// ---- third round (issue 34): every output name of a plan is known before the first run -----

#[test]
fn fio_jobs_whose_files_would_meet_are_told_apart_before_anything_runs() {
    let t = tmp();
    let data = t.path().join("data.bin");
    crate::util::write_varied_file(&data, 1 << 16, 2);
    let mut tried = 0;
    // `x`'s timeline is x-timeline.csv/.svg, the results and figure of a job named
    // `x-timeline`; `y`'s ranks timeline is the timeline of `y-ranks`. In either order.
    for (i, (jobs, want)) in [
        (["x", "x-timeline"], ["x.csv", "x-timeline-2.csv"]),
        (["x-timeline", "x"], ["x-timeline.csv", "x-2.csv"]),
        (["y", "y-ranks"], ["y.csv", "y-ranks-2.csv"]),
        (["context", "sweep"], ["context.csv", "sweep.csv"]),
    ]
    .iter()
    .enumerate()
    {
        let job = t.path().join(format!("j{i}.fio"));
        write(
            &job,
            &format!(
                "[global]\nfilename={}\nsize=64k\nbs=16k\nruntime=300ms\ntime_based=1\n\
                 [{}]\nrw=read\n[{}]\nrw=read\n",
                data.display(),
                jobs[0],
                jobs[1]
            ),
        );
        for force in [false, true] {
            let out_dir = t.path().join(format!("out{i}-{force}"));
            let out = batch(
                &job,
                &out_dir,
                if force { &["--force"][..] } else { &[][..] },
            );
            tried += 1;
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(0), "{jobs:?}: {err}");
            // Each job's own results, one repetition each: no output replaced another.
            for c in want {
                let rows = crate::util::csv_file_maps(&out_dir.join(c));
                assert_eq!(rows.len(), 1, "{jobs:?}: {c}");
                assert!(
                    rows[0].contains_key("rep"),
                    "{jobs:?}: {c} is not a results CSV"
                );
            }
        }
    }
    eprintln!("attacks tried and held: {tried}");
}

// ---- third round (issue 34): outputs written after a run are checked before it -------------

/// A tmpfs of `size` mounted at a fresh directory under `dir` with `opts`; unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, name: &str, opts: &str) -> Option<Tmpfs> {
        if !crate::util::is_root() {
            eprintln!("skipped: mounting a tmpfs needs root");
            return None;
        }
        let at = dir.join(name);
        std::fs::create_dir_all(&at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(&at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: could not mount a tmpfs");
            return None;
        }
        Some(Tmpfs(at))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn timeline_and_figure_outputs_that_cannot_be_written_are_refused_before_the_run() {
    let t = tmp();
    let f = t.path().join("data.bin");
    let data = crate::util::write_varied_file(&f, 1 << 20, 6);
    let fs = f.to_str().unwrap();
    let mut cases: Vec<(String, Vec<String>, &str)> = vec![
        (
            "missing directory".into(),
            vec![
                fs.into(),
                "-r".into(),
                "4K".into(),
                "64".into(),
                "--timeline".into(),
                t.path().join("no/such/t.csv").display().to_string(),
            ],
            "does not exist",
        ),
        (
            "a path ending in /".into(),
            vec![
                fs.into(),
                "-r".into(),
                "4K".into(),
                "64".into(),
                "--timeline".into(),
                format!("{}/", t.path().join("t.csv").display()),
            ],
            "directory",
        ),
        (
            "a directory".into(),
            vec![
                fs.into(),
                "-r".into(),
                "4K".into(),
                "64".into(),
                "--timeline".into(),
                t.path().display().to_string(),
            ],
            "directory",
        ),
        (
            "the measured file".into(),
            vec![
                fs.into(),
                "-r".into(),
                "4K".into(),
                "64".into(),
                "--timeline".into(),
                fs.into(),
            ],
            "the file the run measures",
        ),
        (
            "the written file".into(),
            vec![
                t.path().join("w.bin").display().to_string(),
                "-w".into(),
                "4K".into(),
                "16".into(),
                "--timeline".into(),
                t.path().join("w.bin").display().to_string(),
            ],
            "the file the run measures",
        ),
        (
            "the measured file as --log-ops".into(),
            vec![
                fs.into(),
                "-r".into(),
                "4K".into(),
                "64".into(),
                "--log-ops".into(),
                fs.into(),
            ],
            "the file the run measures",
        ),
    ];
    let ro = Tmpfs::mount(t.path(), "ro", "ro,size=1m");
    if let Some(ro) = &ro {
        cases.push((
            "a read-only file system".into(),
            vec![
                fs.into(),
                "-r".into(),
                "4K".into(),
                "64".into(),
                "--timeline".into(),
                ro.0.join("t.csv").display().to_string(),
            ],
            "read-only",
        ));
    }
    let full = Tmpfs::mount(t.path(), "full", "size=256k");
    if let Some(full) = &full {
        // Filled to its last block.
        let _ = std::fs::write(full.0.join("filler"), vec![1u8; 1 << 20]);
        cases.push((
            "a full file system".into(),
            vec![
                fs.into(),
                "-r".into(),
                "4K".into(),
                "64".into(),
                "--timeline".into(),
                full.0.join("t.csv").display().to_string(),
            ],
            "full",
        ));
    }
    let mut tried = 0;
    for (what, args, says) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let started = Instant::now();
        let out = bounded("run", &args, SECS_30);
        tried += 1;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{what}: the run ran (an XOR was printed)"
        );
        assert!(started.elapsed() < Duration::from_secs(10), "{what}");
    }
    assert_eq!(
        std::fs::read(&f).unwrap(),
        data,
        "the measured file changed"
    );
    assert!(!t.path().join("w.bin").exists(), "the write ran");
    // knee --svg into a missing directory: refused before the search, not after it.
    let started = Instant::now();
    let out = bounded(
        "diskscope",
        &[
            "knee",
            fs,
            "--p99",
            "2ms",
            "--svg",
            t.path().join("no/k.svg").to_str().unwrap(),
        ],
        SECS_30,
    );
    tried += 1;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--svg") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!err.contains("IOPS offered"), "measured first: {err}");
    assert!(started.elapsed() < Duration::from_secs(10));
    drop((ro, full));
    eprintln!("attacks tried and held: {tried}");
}
