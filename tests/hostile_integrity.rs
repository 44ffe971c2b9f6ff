//! Safety, second round (issue 21): what another process can do to the file under a run, and
//! inputs that try to make a run hang. Every case runs the real binaries under a hard time bound
//! (a regression fails the test instead of hanging it) and checks what a user sees: their files
//! intact, no XOR that matches neither version of a file without a warning, a one-line error,
//! never a hang or a panic.

use crate::util::{is_root, p, reference_xor, tmp, write_varied_file};
use std::ffi::CString;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longest any run here may take before the test calls it a hang.
const LIMIT: Duration = Duration::from_secs(20);

fn command(bin: &str) -> Command {
    let mut c = crate::util::command(bin);
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

#[allow(dead_code)] // used by the tests of the next points
fn spawn(bin: &str, args: &[&str]) -> Child {
    command(bin).args(args).spawn().unwrap()
}

/// Waits for `child` at most [`LIMIT`]; a child still running then is killed and the test fails.
fn finish(mut child: Child) -> Output {
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after {LIMIT:?} (a hang): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.wait_with_output().unwrap()
}

fn run_bounded(bin: &str, args: &[&str]) -> Output {
    finish(spawn(bin, args))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A test hook directory (see `diskscope::runner::test_hook`): the run waits at a named point
/// until the test has done what another process could do there, so the race is not a race.
struct Hook {
    dir: tempfile::TempDir,
    point: &'static str,
}

impl Hook {
    fn at(point: &'static str) -> Hook {
        Hook { dir: tmp(), point }
    }

    fn spawn(&self, bin: &str, args: &[&str]) -> Child {
        command(bin)
            .args(args)
            .env("DISKSCOPE_TEST_HOOK_DIR", self.dir.path())
            .env("DISKSCOPE_TEST_HOOK_POINT", self.point)
            .spawn()
            .unwrap()
    }

    /// Waits (bounded) until the child reached the point; kills it if it never does.
    fn reached(&self, child: &mut Child) {
        let marker = self.dir.path().join(format!("{}.reached", self.point));
        let deadline = Instant::now() + LIMIT;
        while !marker.exists() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the run ended ({status}) before {}", self.point);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the run never reached {}", self.point);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Lets the child go on.
    fn go(&self) {
        std::fs::write(self.dir.path().join(format!("{}.go", self.point)), b"").unwrap();
    }
}

// ---- 9. a FIFO swapped in between the input check and the open ------------------------------

#[test]
fn a_fifo_renamed_over_the_input_after_the_check_is_refused_not_waited_on() {
    let dir = tmp();
    let cases: [(&str, &str, &[&str]); 4] = [
        ("run", "before-open", &["-r", "4K", "4"]),
        ("run2", "before-open", &["4K", "--target", "0.001"]),
        ("fast", "fast-before-open", &[]),
        ("diskscope", "syscalls-before-open", &["--seconds", "0.01"]),
    ];
    for (bin, point, rest) in cases {
        let f = p(&dir, &format!("in-{bin}"));
        write_varied_file(&f, 64 << 10, 1);
        let fifo = p(&dir, &format!("fifo-{bin}"));
        mkfifo(&fifo);
        let hook = Hook::at(point);
        let fs = f.to_str().unwrap();
        let args: Vec<&str> = if bin == "diskscope" {
            [&["syscalls", fs][..], rest].concat()
        } else {
            [&[fs][..], rest].concat()
        };
        let mut child = hook.spawn(bin, &args);
        hook.reached(&mut child);
        // Another process renames a FIFO over the file the run has just checked.
        std::fs::rename(&fifo, &f).unwrap();
        hook.go();
        let out = finish(child);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bin}: {err}");
        assert!(err.contains("FIFO"), "{bin}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{bin}: {err}");
        assert!(out.stdout.is_empty(), "{bin}: {}", text(&out.stdout));
    }
}

// ---- 2. `run FILE -w ... --force` never writes through a hard link ----------------------------

#[test]
fn a_forced_write_replaces_a_hard_linked_output_and_leaves_the_other_link_alone() {
    let dir = tmp();
    let victim = p(&dir, "victim.txt");
    std::fs::write(&victim, b"precious\n").unwrap();
    let out_path = p(&dir, "out.bin");
    std::fs::hard_link(&victim, &out_path).unwrap();
    for method in ["read", "pread", "mmap", "io_uring", "buffered"] {
        let out = run_bounded(
            "run",
            &[
                out_path.to_str().unwrap(),
                "-w",
                "4K",
                "4",
                "--force",
                "--method",
                method,
            ],
        );
        let err = text(&out.stderr);
        if method == "io_uring" && err.contains("io_uring") && out.status.code() == Some(2) {
            eprintln!("skipped io_uring: {err}");
            continue;
        }
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"precious\n",
            "{method}: the other hard link was written through: {err}"
        );
        assert_eq!(out.status.code(), Some(0), "{method}: {err}");
        assert_eq!(std::fs::metadata(&out_path).unwrap().len(), 4 * 4096);
        assert_eq!(std::fs::metadata(&victim).unwrap().len(), 9);
    }
}

// ---- 8. `--method read` never reopens its file by the name its link reads as ---------------

#[test]
fn a_read_run_never_opens_a_fifo_planted_where_its_unlinked_file_was() {
    let dir = tmp();
    let f = p(&dir, "f");
    let data = write_varied_file(&f, 256 << 10, 8);
    let hook = Hook::at("after-create");
    let args = [f.to_str().unwrap(), "-r", "4K", "64", "-t", "2"];
    let mut child = hook.spawn("run", &[&args[..], &["--method", "read"]].concat());
    hook.reached(&mut child);
    // The run has the file open; another process unlinks it and plants a FIFO named as
    // /proc/self/fd/N now reads: `f (deleted)`.
    std::fs::remove_file(&f).unwrap();
    mkfifo(&p(&dir, "f (deleted)"));
    hook.go();
    let out = finish(child);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(text(&out.stdout).trim(), reference_xor(&data), "{err}");
}

// ---- 1. a writer under the run: an error, or a warning, never a silent XOR -----------------

/// Another process's writable shared mapping of `path`, its pages dirtied at once and then
/// written over and over by a thread until the value is dropped: writes to pages that are
/// already dirty move neither the file's mtime nor its ctime.
struct MappedWriter {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MappedWriter {
    fn start(path: &Path) -> MappedWriter {
        use std::os::fd::AsRawFd;
        use std::sync::atomic::Ordering;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        let len = file.metadata().unwrap().len() as usize;
        // SAFETY: a fresh shared mapping of `len` bytes of a file we opened read-write; it is
        // unmapped by the thread below, which alone touches it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(ptr, libc::MAP_FAILED);
        let base = ptr as usize;
        let dirty = move |round: u8| {
            for off in (0..len).step_by(512) {
                // SAFETY: `off < len`, inside the mapping.
                unsafe { std::ptr::write_volatile((base + off) as *mut u8, round) };
            }
        };
        dirty(1);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let _keep_open = file;
            let mut round = 2u8;
            while !s.load(Ordering::Relaxed) {
                dirty(round);
                round = round.wrapping_add(1);
                std::thread::sleep(Duration::from_micros(200));
            }
            // SAFETY: the mapping made above, no longer used.
            unsafe { libc::munmap(base as *mut libc::c_void, len) };
        });
        MappedWriter {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for MappedWriter {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Whether a run skipped because io_uring is unavailable here (said on stderr).
fn io_uring_missing(out: &Output) -> bool {
    out.status.code() == Some(2) && text(&out.stderr).contains("io_uring")
}

#[test]
fn a_file_a_writer_has_mapped_and_keeps_writing_never_gets_an_xor_without_a_warning() {
    let dir = tmp();
    let f = p(&dir, "mapped");
    write_varied_file(&f, 1 << 20, 4);
    let writer = MappedWriter::start(&f);
    let fs = f.to_str().unwrap();
    let mut runs: Vec<(String, Vec<&str>, &str)> =
        ["read", "pread", "mmap", "io_uring", "buffered"]
            .iter()
            .map(|m| {
                let args = vec![fs, "-r", "4K", "256", "-t", "2", "--method", m];
                (format!("run --method {m}"), args, "run")
            })
            .collect();
    runs.push(("fast".into(), vec![fs], "fast"));
    for (what, args, bin) in runs {
        let out = run_bounded(bin, &args);
        let err = text(&out.stderr);
        if io_uring_missing(&out) {
            eprintln!("skipped {what}: {err}");
            continue;
        }
        match out.status.code() {
            Some(0) => assert!(
                err.contains("is open for writing by another process")
                    && err.contains("cannot be detected"),
                "{what}: an XOR with exit 0 and no warning: {err}"
            ),
            Some(1) => assert!(out.stdout.is_empty(), "{what}: {err}"),
            other => panic!("{what}: exit {other:?}: {err}"),
        }
    }
    drop(writer);
}

#[test]
fn a_writer_that_opens_the_file_during_the_run_makes_it_an_error_even_if_nothing_moved() {
    let dir = tmp();
    let cases = [
        ("run", "before-check", "read"),
        ("run", "before-check", "pread"),
        ("run", "before-check", "mmap"),
        ("run", "before-check", "io_uring"),
        ("run", "before-check", "buffered"),
        ("fast", "fast-before-check", ""),
    ];
    for (bin, point, method) in cases {
        let f = p(&dir, &format!("opened-{bin}-{method}"));
        write_varied_file(&f, 1 << 20, 6);
        let fs = f.to_str().unwrap();
        let args = if bin == "run" {
            vec![fs, "-r", "4K", "256", "-t", "2", "--method", method]
        } else {
            vec![fs]
        };
        let hook = Hook::at(point);
        let mut child = hook.spawn(bin, &args);
        hook.reached(&mut child);
        // Another process opens the file for writing while the run holds it (and could write
        // through a shared mapping without moving its size or times): it is not kept waiting.
        let opened = Instant::now();
        let w = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        assert!(
            opened.elapsed() < Duration::from_secs(10),
            "the writer waited"
        );
        drop(w);
        hook.go();
        let out = finish(child);
        if io_uring_missing(&out) {
            eprintln!("skipped io_uring: {}", text(&out.stderr));
            continue;
        }
        let err = text(&out.stderr);
        let what = format!("{bin} {method}");
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(out.stdout.is_empty(), "{what}: {}", text(&out.stdout));
        assert!(
            err.contains("changed during the run") && err.contains("opened it for writing"),
            "{what}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    }
}

// ---- 16. no thread to be had: an error, not a panic ------------------------------------------

#[test]
fn fast_and_run_at_the_thread_limit_say_spawning_a_worker_thread_and_exit_1() {
    if !is_root() {
        eprintln!("skipped: needs root to run the binaries as another user under a thread limit");
        return;
    }
    let dir = tmp();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let f = p(&dir, "two-chunks");
    write_varied_file(&f, (16 << 20) + 4096, 2);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    let fs = f.to_str().unwrap();
    let cases: [(&str, Vec<&str>); 3] = [
        ("fast", vec![fs, "-t", "2"]),
        ("fast", vec![fs, "-t", "2", "--road", "buffered"]),
        ("run", vec![fs, "-r", "4K", "16", "-t", "2"]),
    ];
    for (name, args) in cases {
        let mut c = crate::util::command_for_any_user(dir.path(), name);
        c.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .uid(65534)
            .gid(65534);
        // SAFETY: setrlimit is async-signal-safe; the child is single-threaded here. As an
        // unprivileged user (after the uid switch) with RLIMIT_NPROC 0, no thread can be created.
        unsafe {
            c.pre_exec(|| {
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                if libc::setrlimit(libc::RLIMIT_NPROC, &none) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
        let out = finish(c.spawn().unwrap());
        let err = text(&out.stderr);
        let what = format!("{name} {}", args[1..].join(" "));
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(err.contains("spawning a worker thread"), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
        assert!(out.stdout.is_empty(), "{what}: {}", text(&out.stdout));
    }
}

// ---- 11. inputs that never end: refused up front; Ctrl-C always ends fast --------------------

#[test]
fn fast_refuses_pseudo_files_that_may_never_end_at_once() {
    for path in [
        "/proc/kmsg",
        "/proc/self/status",
        "/sys/kernel/mm/transparent_hugepage/enabled",
    ] {
        if std::fs::metadata(path).is_err() {
            eprintln!("skipped {path}: not here");
            continue;
        }
        let out = run_bounded("fast", &[path]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{path}: {err}");
        assert!(err.contains(path) && err.contains("pseudo-file"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
}

/// Whether process `pid` has a thread named `name`.
fn has_thread(pid: u32, name: &str) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|tasks| {
        tasks.flatten().any(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
        })
    })
}

#[test]
fn ctrl_c_ends_fast_with_130_while_it_waits_on_a_pipe_that_never_ends() {
    let mut child = command("fast")
        .arg("/dev/stdin")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    // The pipe's write end stays open: fast's read waits for data that never comes.
    let _writer = child.stdin.take().unwrap();
    let deadline = Instant::now() + LIMIT;
    // The Ctrl-C handler is in place once its thread exists (it is set before the read starts).
    while !has_thread(child.id(), "ctrl-c") {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("fast never set its Ctrl-C handler: {}", text(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = finish(child);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_forced_write_never_replaces_a_file_of_another_user_nor_follows_a_symlink() {
    let dir = tmp();
    let theirs = p(&dir, "theirs.bin");
    std::fs::write(&theirs, b"someone else's").unwrap();
    if is_root() {
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let out = run_bounded(
            "run",
            &[theirs.to_str().unwrap(), "-w", "4K", "4", "--force"],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("belongs to another user"), "{err}");
        assert_eq!(std::fs::read(&theirs).unwrap(), b"someone else's");
    } else {
        eprintln!("skipped the other user's file: needs root to give a file away");
    }
    let link = p(&dir, "link.bin");
    std::os::unix::fs::symlink(&theirs, &link).unwrap();
    let out = run_bounded("run", &[link.to_str().unwrap(), "-w", "4K", "4", "--force"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read(&theirs).unwrap(), b"someone else's");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

#[test]
fn a_batch_reading_its_own_test_file_is_not_warned_about_a_writer() {
    let dir = tmp();
    let sweep = p(&dir, "s.toml");
    std::fs::write(
        &sweep,
        "[file]\ncreate = \"1M\"\n\n[[experiment]]\nname = \"a\"\nkind = \"throughput\"\n\
         operation = [\"read\"]\nseconds = 0.1\nreps = 1\n",
    )
    .unwrap();
    let out_dir = p(&dir, "out");
    let out = run_bounded(
        "diskscope",
        &[
            "--batch",
            sweep.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The batch's own lock on its test file is no writer: its read runs hold their lease.
    assert!(!err.contains("open for writing"), "{err}");
}
