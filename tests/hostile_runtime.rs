//! Hostile conditions while a run is under way: the file shrinks, grows or changes under the
//! readers, a mapping raises SIGBUS, the buffers would not fit in memory, the user presses
//! Ctrl-C during a write, the user may not see the page cache. Each test runs the binaries the
//! way a user does and bounds them in time; the promise checked is always the same: an error
//! that says what happened (exit 1, no XOR on stdout), never a signal death, never a wrong XOR.

use crate::util::{is_root, p, tmp, write_varied_file};
use diskscope::config::spec::RunSpec;
use diskscope::config::{Method, Pattern};
use diskscope::runner::run_blocking;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest any hostile run may take before the test calls it a hang.
const LIMIT: Duration = Duration::from_secs(60);

fn spawn(bin: &str, args: &[&str]) -> Child {
    crate::util::command(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` at most [`LIMIT`]; a child still running then is killed and the test fails.
pub(crate) fn finish(mut child: Child) -> Output {
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

/// Waits (bounded) until `pred` holds for the running child; on failure the child is killed
/// (never left running, holding files or a mount) before the test fails.
fn wait_until(child: &mut Child, what: &str, pred: impl Fn(u32) -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !pred(child.id()) {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before {what}");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("never saw {what}");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether the process has started its I/O workers (threads named `diskscope-worker-N`).
fn workers_started(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks.flatten().any(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.starts_with("diskscope-work"))
            })
        })
        .unwrap_or(false)
}

/// Whether the process has `path` mapped.
fn has_mapped(pid: u32, path: &Path) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .is_ok_and(|m| m.contains(path.to_str().unwrap()))
}

fn truncate(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// Asserts the run failed the way a changed file must: exit 1, no XOR, `needle` in the message,
/// and never killed by a signal (SIGBUS would be exit 135 from a shell, no status code here).
fn assert_failed_with(out: &Output, needle: &str, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{what}: status {} (a signal death has no code): {stderr}",
        out.status
    );
    assert!(
        out.stdout.is_empty(),
        "{what}: printed {:?} on stdout",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stderr.contains(needle), "{what}: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{what}: {stderr}");
}

/// A tmpfs of `size` mounted in a fresh directory (root only); unmounted on drop.
struct SmallFs {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
}

impl SmallFs {
    fn mount(size: &str) -> Option<SmallFs> {
        if !is_root() {
            eprintln!("skipped: needs root to mount a tmpfs");
            return None;
        }
        let dir = tmp();
        let mnt = p(&dir, "mnt");
        std::fs::create_dir(&mnt).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mnt)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: cannot mount a tmpfs here");
            return None;
        }
        Some(SmallFs { _dir: dir, mnt })
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(&self.mnt)
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            // Busy (a process still holds a file): detach it now, gone when the last user is.
            let _ = Command::new("umount").arg("-l").arg(&self.mnt).status();
        }
    }
}

#[test]
fn a_file_that_shrinks_during_run_is_an_error_for_every_method() {
    let dir = tmp();
    let f = p(&dir, "big");
    let name = f.to_str().unwrap();
    let cases: &[(&str, &[&str])] = &[
        ("read", &["--method", "read"]),
        ("pread", &["--method", "pread"]),
        ("mmap", &["--method", "mmap"]),
        ("io_uring", &["--method", "io_uring"]),
        ("buffered", &["--method", "buffered"]),
        ("pread O_DIRECT", &["--method", "pread", "--direct"]),
        ("io_uring O_DIRECT", &["--method", "io_uring", "--direct"]),
    ];
    for (what, flags) in cases {
        // A sparse 64 MiB file and 50 million random 4 KiB reads: minutes of work, so the
        // truncation always lands in the middle of the run.
        let _ = std::fs::remove_file(&f);
        std::fs::File::create(&f)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let mut args = vec![name, "-r", "4K", "50M", "--pattern", "random"];
        args.extend_from_slice(flags);
        let mut child = spawn("run", &args);
        wait_until(&mut child, "the workers started", workers_started);
        std::thread::sleep(Duration::from_millis(20));
        truncate(&f, 1 << 20);
        assert_failed_with(&finish(child), "shrank", what);
    }
}

#[test]
fn a_file_rewritten_in_place_during_a_read_is_an_error_not_an_xor() {
    let dir = tmp();
    let f = p(&dir, "f");
    write_varied_file(&f, 4 << 20, 3);
    let mut spec = RunSpec::new(&f);
    spec.setup.method = Method::Pread;
    spec.setup.block_size_bytes = 4096;
    spec.setup.pattern = Pattern::Random;
    spec.target.duration = Some(Duration::from_millis(600));
    let writer = {
        let f = f.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            use std::os::unix::fs::FileExt;
            let w = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
            w.write_at(b"changed", 1000).unwrap();
        })
    };
    let r = run_blocking(&spec, "t", Arc::new(AtomicBool::new(false)), |_, _| {});
    writer.join().unwrap();
    let e = format!("{:#}", r.expect_err("a modified file must fail the run"));
    assert!(e.contains("was modified while being read"), "{e}");
}

#[test]
fn a_file_that_grows_during_a_read_is_an_error_not_an_xor() {
    let dir = tmp();
    let f = p(&dir, "f");
    write_varied_file(&f, 4 << 20, 4);
    let mut spec = RunSpec::new(&f);
    spec.setup.block_size_bytes = 4096;
    spec.setup.pattern = Pattern::Random;
    spec.target.duration = Some(Duration::from_millis(600));
    let grower = {
        let f = f.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            truncate(&f, 8 << 20);
        })
    };
    let r = run_blocking(&spec, "t", Arc::new(AtomicBool::new(false)), |_, _| {});
    grower.join().unwrap();
    let e = format!("{:#}", r.expect_err("a grown file must fail the run"));
    assert!(e.contains("grew while being read"), "{e}");
}

#[test]
fn sigbus_on_fasts_mmap_road_is_an_error_not_a_signal_death() {
    let Some(fs) = SmallFs::mount("600m") else {
        return;
    };
    let f = fs.mnt.join("big");
    // Real data (not holes), so every page of the mapping is file-backed until the truncation.
    let mut w = std::fs::File::create(&f).unwrap();
    let chunk = vec![0x5au8; 1 << 20];
    for _ in 0..384 {
        std::io::Write::write_all(&mut w, &chunk).unwrap();
    }
    drop(w);
    let name = f.to_str().unwrap();
    let mut child = spawn("fast", &[name, "--road", "mmap", "--threads", "1"]);
    wait_until(&mut child, "the file mapped", |pid| has_mapped(pid, &f));
    truncate(&f, 0);
    assert_failed_with(&finish(child), "shrank", "fast --road mmap");
}

#[test]
fn an_mmap_write_on_a_full_filesystem_is_a_disk_full_error_and_leaves_no_file() {
    let Some(fs) = SmallFs::mount("8m") else {
        return;
    };
    let f = fs.mnt.join("out");
    // 6.25 MiB fit when the run checks the free space; another file takes it before the writes.
    let hook = Hook::at("after-create");
    let mut child = hook.spawn(
        "run",
        &[
            f.to_str().unwrap(),
            "-w",
            "64K",
            "100",
            "--method",
            "mmap",
            "--prealloc",
            "none",
        ],
    );
    hook.reached(&mut child);
    let filler = fs.mnt.join("filler");
    let _ = std::fs::write(&filler, vec![1u8; 7 << 20]);
    hook.go();
    let out = finish(child);
    let _ = std::fs::remove_file(&filler);
    assert_failed_with(&out, "disk full", "run -w --method mmap on a full tmpfs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("removed the partial file"), "{stderr}");
    assert!(!f.exists(), "the partial file was left behind");
}

/// A sparse file of `len` bytes.
fn sparse(dir: &tempfile::TempDir, name: &str, len: u64) -> PathBuf {
    let f = p(dir, name);
    std::fs::File::create(&f).unwrap().set_len(len).unwrap();
    f
}

#[test]
fn buffers_are_capped_by_what_the_run_can_use() {
    let dir = tmp();
    // 64 threads x 1024 slots x 1 MiB asked (64 GiB) to read 100 MiB: each thread's range is
    // under 2 MiB, so two 1 MiB slots each are all it can use, 128 MiB in all.
    let f = sparse(&dir, "f", 100 << 20);
    let name = f.to_str().unwrap();
    let out = finish(spawn(
        "run",
        &[
            name,
            "-r",
            "1M",
            "100",
            "--method",
            "io_uring",
            "--threads",
            "64",
            "--queue-depth",
            "1024",
            "--max-memory",
            "128M",
        ],
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // More threads than blocks: the idle ones need no buffers.
    let one = sparse(&dir, "one", 1 << 20);
    let out = finish(spawn(
        "run",
        &[
            one.to_str().unwrap(),
            "-r",
            "1M",
            "100",
            "--method",
            "io_uring",
            "--threads",
            "64",
            "--queue-depth",
            "1024",
            "--max-memory",
            "2M",
        ],
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A 1 GiB block on a 1 MiB file needs a 1 MiB buffer, not 4 GiB.
    let small = sparse(&dir, "small", 1 << 20);
    let out = finish(spawn(
        "run",
        &[
            small.to_str().unwrap(),
            "-r",
            "1G",
            "1",
            "--method",
            "io_uring",
            "--queue-depth",
            "4",
            "--max-memory",
            "1M",
        ],
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn buffers_beyond_the_memory_budget_are_refused_naming_the_flags_and_the_override() {
    let dir = tmp();
    // 64 threads, each with 1 GiB to read: 1024 slots of 1 MiB each is 64 GiB of buffers.
    let f = sparse(&dir, "huge", 64 << 30);
    let name = f.to_str().unwrap();
    let base = [
        name,
        "-r",
        "1M",
        "65536",
        "--method",
        "io_uring",
        "--threads",
        "64",
        "--queue-depth",
        "1024",
    ];
    let out = finish(spawn("run", &base));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for needle in ["--threads 64", "--queue-depth 1024", "--max-memory"] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    // An explicit budget below the need is refused the same way: one thread reading 64 blocks
    // can use 64 slots of 1 MiB.
    let out = finish(spawn(
        "run",
        &[
            name,
            "-r",
            "1M",
            "64",
            "--method",
            "io_uring",
            "--queue-depth",
            "1024",
            "--max-memory",
            "32M",
        ],
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the run needs 64.00 MiB"), "{stderr}");
    assert!(stderr.contains("--max-memory limit of 32M"), "{stderr}");
    // A refused write creates nothing.
    let out_file = p(&dir, "out");
    let out = finish(spawn(
        "run",
        &[
            out_file.to_str().unwrap(),
            "-w",
            "1M",
            "64",
            "--method",
            "io_uring",
            "--queue-depth",
            "1024",
            "--max-memory",
            "32M",
        ],
    ));
    assert_eq!(out.status.code(), Some(2));
    assert!(!out_file.exists(), "a refused write left a file behind");
}

/// Seconds from the summary line (`read 1.00 MiB in 0.0004 s: ...`).
fn reported_seconds(stderr: &str) -> f64 {
    let line = stderr.lines().find(|l| l.contains(" s: ")).unwrap();
    let before = line.split(" s: ").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

/// The slowest operation's latency from the summary line (`..., max 52953.1 µs`), in seconds.
fn reported_max_latency_s(stderr: &str) -> f64 {
    let line = stderr.lines().find(|l| l.contains(" s: ")).unwrap();
    let after = line.split(", max ").nth(1).unwrap();
    let us: f64 = after.split(' ').next().unwrap().parse().unwrap();
    us / 1e6
}

#[test]
fn a_tiny_read_with_a_huge_block_size_is_timed_without_the_buffer_setup() {
    let dir = tmp();
    let f = p(&dir, "f");
    write_varied_file(&f, 1 << 20, 5);
    for method in ["read", "pread", "buffered", "io_uring", "mmap"] {
        let out = finish(spawn(
            "run",
            &[f.to_str().unwrap(), "-r", "1G", "1", "--method", method],
        ));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{method}: {stderr}");
        // The run's time is its one operation's time: allocating (and faulting in) a 1 GiB
        // buffer or calibrating the clock (0.2-0.4 s) is setup, outside the clock. Compared with
        // the operation's own latency rather than a fixed threshold, so a loaded machine (where
        // the 1 MiB read itself may take 50 ms) cannot fail it.
        let s = reported_seconds(&stderr);
        let op_s = reported_max_latency_s(&stderr);
        assert!(
            s <= op_s * 1.2 + 0.005,
            "{method}: {s} s for one 1 MiB read of {op_s} s: {stderr}"
        );
    }
}

#[test]
fn a_run_never_reports_less_time_than_its_operations_took() {
    let dir = tmp();
    let f = p(&dir, "f");
    write_varied_file(&f, 16 << 20, 6);
    let mut spec = RunSpec::new(&f);
    spec.setup.block_size_bytes = 256 << 10;
    for method in [Method::Read, Method::Pread, Method::Mmap, Method::IoUring] {
        spec.setup.method = method;
        for _ in 0..10 {
            let o = run_blocking(&spec, "t", Arc::new(AtomicBool::new(false)), |_, _| {}).unwrap();
            let r = &o.result;
            // Half the operations took at least the median, and one thread does them one
            // after another; 5% for the rounding of the tally and the histogram.
            let floor_s = (r.figures.ops / 2) as f64 * r.figures.lat_p50_us * 1e-6 * 0.95;
            assert!(
                r.figures.seconds >= floor_s,
                "{method}: {} s reported, but {} ops with a p50 of {} µs take at least {floor_s} s",
                r.figures.seconds,
                r.figures.ops,
                r.figures.lat_p50_us
            );
        }
    }
}

/// Starts a long write, presses Ctrl-C once the workers run, and returns what the run said.
fn interrupt_a_write(f: &Path, extra: &[&str]) -> Output {
    let mut args = vec![f.to_str().unwrap(), "-w", "4K", "100000"];
    args.extend_from_slice(extra);
    let mut child = spawn("run", &args);
    wait_until(&mut child, "the workers started", workers_started);
    std::thread::sleep(Duration::from_millis(20));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    finish(child)
}

#[test]
fn ctrl_c_during_a_write_removes_the_partial_file_and_says_so() {
    let dir = tmp();
    for method in ["pread", "mmap"] {
        let f = p(&dir, &format!("out-{method}"));
        let out = interrupt_a_write(&f, &["--method", method]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{method}: {stderr}");
        assert!(out.stdout.is_empty(), "{method}: an XOR was printed");
        assert!(
            stderr.contains("removed the partial file"),
            "{method}: {stderr}"
        );
        assert!(!f.exists(), "{method}: the partial file was left behind");
    }
}

#[test]
fn ctrl_c_during_a_write_keeps_the_partial_file_with_keep_partial() {
    let dir = tmp();
    let f = p(&dir, "out");
    let out = interrupt_a_write(&f, &["--keep-partial"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("kept the partial file"), "{stderr}");
    assert!(f.exists());
}

#[test]
fn residency_is_unknown_not_a_false_warm_for_a_file_the_user_cannot_write() {
    if !is_root() {
        eprintln!("skipped: needs root to run the binary as another user");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "theirs");
    write_varied_file(&f, 1 << 20, 7);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    use std::os::unix::process::CommandExt;
    let out = crate::util::command_for_any_user(dir.path(), "run")
        .arg(&f)
        .args(["-r", "4K", "16", "--cache", "cold"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("residency unknown"), "{stderr}");
    assert!(!stderr.contains("was not cold"), "{stderr}");
    assert!(!stderr.contains("% resident before"), "{stderr}");
    // fast cannot know either: it says so and reads through the page cache, XOR intact.
    let out = crate::util::command_for_any_user(dir.path(), "fast")
        .arg(&f)
        .arg("-v")
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("residency unknown"), "{stderr}");
    assert!(!stderr.contains("100.0% cached"), "{stderr}");
    let data = std::fs::read(&f).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        crate::util::reference_xor(&data)
    );
}

#[test]
fn the_explorer_on_mmap_reports_a_truncated_file_instead_of_dying() {
    use diskscope::measure::SnapshotKind;
    use diskscope::tui::session::{Command as SessionCommand, Session, Update};
    let dir = tmp();
    let f = p(&dir, "explored");
    write_varied_file(&f, 8 << 20, 8);
    let settings = diskscope::tui::settings::Settings {
        setup: diskscope::config::Setup {
            method: Method::Mmap,
            block_size_bytes: 64 << 10,
            ..diskscope::tui::settings::Settings::default().setup
        },
        ..Default::default()
    };
    let mut session = Session::spawn().unwrap();
    session.send(SessionCommand::Start {
        id: 1,
        spec: settings.spec(&f, &p(&dir, "scratch"), 8 << 20),
    });
    let deadline = Instant::now() + LIMIT;
    let (mut bytes, mut truncated, mut error) = (0u64, false, None);
    while error.is_none() {
        assert!(Instant::now() < deadline, "no error after the truncation");
        let Ok(u) = session.updates.recv_timeout(Duration::from_millis(50)) else {
            continue;
        };
        match u {
            Update::Snapshot { snapshot, .. } => {
                bytes += snapshot.bytes;
                if let SnapshotKind::Failed(failed) = snapshot.kind {
                    error = Some(failed.message);
                }
            }
            Update::Stopped { error: e, .. } => error = Some(e.unwrap_or_default()),
            Update::Failed { message, .. } => error = Some(message),
            _ => {}
        }
        // The explorer loops over the file; cut it once it is reading.
        if !truncated && bytes > 0 {
            truncate(&f, 0);
            truncated = true;
        }
    }
    session.shutdown();
    let error = error.unwrap();
    assert!(truncated, "the run ended before it read: {error}");
    assert!(error.contains("shrank"), "{error}");
}

/// A test hook directory (see `diskscope::runner::test_hook`): the run waits at a named point
/// until the test has done what another process could do there, so the race is not a race.
pub(crate) struct Hook {
    dir: tempfile::TempDir,
    point: &'static str,
}

impl Hook {
    /// A hook that stops the run at `point` (`after-create`, `before-check`,
    /// `fast-before-check`).
    pub(crate) fn at(point: &'static str) -> Hook {
        Hook { dir: tmp(), point }
    }

    pub(crate) fn spawn(&self, bin: &str, args: &[&str]) -> Child {
        crate::util::command(bin)
            .args(args)
            .env("DISKSCOPE_TEST_HOOK_DIR", self.dir.path())
            .env("DISKSCOPE_TEST_HOOK_POINT", self.point)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Waits (bounded) until the child reached the point.
    pub(crate) fn reached(&self, child: &mut Child) {
        let marker = self.dir.path().join(format!("{}.reached", self.point));
        let what = format!("the run reached {}", self.point);
        wait_until(child, &what, |_| marker.exists());
    }

    /// Lets the child go on.
    pub(crate) fn go(&self) {
        let go = self.dir.path().join(format!("{}.go", self.point));
        std::fs::write(go, b"").unwrap();
    }
}

#[test]
fn a_write_goes_only_to_the_file_it_created_even_if_a_symlink_is_swapped_in() {
    let dir = tmp();
    let victim = p(&dir, "victim");
    std::fs::write(&victim, b"the user's data").unwrap();
    for method in ["pread", "mmap", "buffered"] {
        let hook = Hook::at("after-create");
        let out_path = p(&dir, &format!("w3-{method}"));
        let args = [out_path.to_str().unwrap(), "-w", "4K", "256", "-t", "2"];
        let mut child = hook.spawn("run", &[&args[..], &["--method", method]].concat());
        hook.reached(&mut child);
        // Another process renames a ready symlink over the file the run just created.
        let link = p(&dir, "link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        std::fs::rename(&link, &out_path).unwrap();
        hook.go();
        let out = finish(child);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"the user's data",
            "{method}: the file behind the swapped-in link was written: {stderr}"
        );
        assert_eq!(out.status.code(), Some(1), "{method}: {stderr}");
        assert!(stderr.contains("was replaced"), "{method}: {stderr}");
        assert!(stderr.contains("left alone"), "{method}: {stderr}");
        assert!(out.stdout.is_empty(), "{method}: an XOR was printed");
        // The link is the user's now: never removed.
        assert!(std::fs::symlink_metadata(&out_path).is_ok(), "{method}");
        std::fs::remove_file(&out_path).unwrap();
    }
}

#[test]
fn ctrl_c_after_the_output_was_replaced_leaves_the_new_file_alone() {
    let dir = tmp();
    let hook = Hook::at("after-create");
    let w2 = p(&dir, "w2");
    let mut child = hook.spawn(
        "run",
        &[
            w2.to_str().unwrap(),
            "-w",
            "4K",
            "1000",
            "--method",
            "pread",
        ],
    );
    hook.reached(&mut child);
    std::fs::rename(&w2, p(&dir, "w2.moved")).unwrap();
    std::fs::write(&w2, b"PRECIOUS").unwrap();
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    hook.go();
    let out = finish(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_eq!(std::fs::read(&w2).unwrap(), b"PRECIOUS", "{stderr}");
    assert!(stderr.contains("left alone"), "{stderr}");
}

#[test]
fn an_in_place_rewrite_with_the_mtime_put_back_is_an_error_not_an_xor() {
    use std::os::unix::fs::FileExt;
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 1 << 20, 3);
    let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
    let hook = Hook::at("before-check");
    let mut child = hook.spawn("run", &[f.to_str().unwrap(), "-r", "4K", "256"]);
    hook.reached(&mut child);
    let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
    file.write_at(&[0x5a; 4096], 0).unwrap();
    // `touch -m -r ref`: the size and the mtime are as before; only the ctime tells.
    file.set_modified(mtime).unwrap();
    drop(file);
    hook.go();
    let out = finish(child);
    assert_failed_with(&out, "was modified while being read", "in-place rewrite");
}

#[test]
fn fast_fails_when_the_file_changes_while_it_reads_on_every_road() {
    use std::os::unix::fs::FileExt;
    let dir = tmp();
    for road in ["pread", "buffered", "mmap", "direct"] {
        for change in ["rewrite", "append"] {
            let f = p(&dir, &format!("s-{road}-{change}"));
            write_varied_file(&f, 4 << 20, 5);
            let hook = Hook::at("fast-before-check");
            let mut child = hook.spawn("fast", &[f.to_str().unwrap(), "--road", road]);
            hook.reached(&mut child);
            let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
            match change {
                "rewrite" => file.write_at(&[0xa5; 1 << 16], 1 << 20).unwrap(),
                _ => file.write_at(&[0xa5; 1 << 16], 4 << 20).unwrap(),
            };
            drop(file);
            hook.go();
            let out = finish(child);
            let what = format!("fast --road {road}, {change}");
            let needle = if change == "append" {
                "grew"
            } else {
                "was modified"
            };
            assert_failed_with(&out, needle, &what);
        }
    }
}

#[test]
fn fast_fits_its_buffers_to_the_file_and_keeps_to_max_memory() {
    let dir = tmp();
    let one = p(&dir, "one.dat");
    let data = write_varied_file(&one, 1 << 20, 9);
    // 4 threads x 1G asked for; the file is 1 MiB, so 1 MiB buffers fit an 8 MiB budget.
    let args = [
        one.to_str().unwrap(),
        "--block-size",
        "1G",
        "--threads",
        "4",
    ];
    for road in ["pread", "buffered", "direct"] {
        let out = finish(spawn(
            "fast",
            &[&args[..], &["--road", road, "--max-memory", "8M"]].concat(),
        ));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{road}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            crate::util::reference_xor(&data),
            "{road}"
        );
    }
    // 64 MiB: 8 chunks, so 8 threads of 8 MiB buffers at most = 64 MiB, over a 32M budget.
    let big = sparse(&dir, "big.dat", 64 << 20);
    let out = finish(spawn(
        "fast",
        &[
            big.to_str().unwrap(),
            "--road",
            "pread",
            "--block-size",
            "1G",
            "--threads",
            "64",
            "--max-memory",
            "32M",
        ],
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--max-memory"), "{stderr}");
    assert!(stderr.contains("8 threads x 8M"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_write_larger_than_the_free_space_is_refused_before_anything_is_created() {
    let Some(fs) = SmallFs::mount("16M") else {
        return;
    };
    let x = fs.mnt.join("x");
    let out = finish(spawn("run", &[x.to_str().unwrap(), "-w", "1M", "64"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(x.to_str().unwrap()), "{stderr}");
    assert!(stderr.contains("free"), "{stderr}");
    assert!(!stderr.contains("disk full"), "{stderr}");
    assert!(!x.exists(), "{stderr}");
}

#[test]
fn a_missing_directory_or_a_fifo_as_output_is_a_usage_error() {
    let dir = tmp();
    let nodir = p(&dir, "nodir/x");
    let out = finish(spawn("run", &[nodir.to_str().unwrap(), "-w", "1M", "1"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("mkdir -p"), "{stderr}");
    let fifo = p(&dir, "ff");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let out = finish(spawn(
        "run",
        &[fifo.to_str().unwrap(), "-w", "4K", "1", "--force"],
    ));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is a FIFO"), "{stderr}");
    assert!(!stderr.contains("Illegal seek"), "{stderr}");
}

#[test]
fn an_mmap_write_whose_file_is_truncated_is_not_called_disk_full() {
    let dir = tmp();
    let f = p(&dir, "w");
    let mut child = spawn(
        "run",
        &[
            f.to_str().unwrap(),
            "-w",
            "4K",
            "262144",
            "--method",
            "mmap",
        ],
    );
    wait_until(&mut child, "the file was mapped", |pid| has_mapped(pid, &f));
    truncate(&f, 0);
    let out = finish(child);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        eprintln!("skipped: the write ended before the truncation");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("truncated by another process"), "{stderr}");
    assert!(!stderr.contains("disk full"), "{stderr}");
}

#[test]
fn the_explorer_stopped_by_sigterm_exits_143() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: needs script(1) for a terminal");
        return;
    }
    let dir = tmp();
    let f = p(&dir, "explored");
    write_varied_file(&f, 1 << 20, 2);
    let sandbox = crate::util::Sandbox::new();
    let cmd = format!(
        "cd {} && exec {}{} {}",
        crate::util::shell_quote(&sandbox.work),
        sandbox.shell_env(),
        crate::util::command("diskscope")
            .get_program()
            .to_string_lossy(),
        f.display()
    );
    let mut script = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let children = format!("/proc/{0}/task/{0}/children", script.id());
    let explorer = || -> Option<i32> {
        let pid: i32 = std::fs::read_to_string(&children)
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
        let has_ui = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.count() > 1;
        (comm.trim() == "diskscope" && has_ui).then_some(pid)
    };
    wait_until(&mut script, "the explorer started", |_| {
        explorer().is_some()
    });
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on our grandchild's pid.
    unsafe { libc::kill(explorer().unwrap(), libc::SIGTERM) };
    let out = finish(script);
    assert_eq!(out.status.code(), Some(128 + libc::SIGTERM));
}

#[test]
fn the_explorer_never_removes_a_file_put_in_place_of_its_write_scratch_file() {
    use diskscope::tui::session::{Command as SessionCommand, Session, Update};
    let dir = tmp();
    let f = p(&dir, "explored");
    write_varied_file(&f, 1 << 20, 4);
    let scratch = p(&dir, ".explored.diskscope-scratch");
    std::fs::write(&scratch, b"").unwrap(); // what WriteScratch::claim creates
    let settings = diskscope::tui::settings::Settings {
        setup: diskscope::config::Setup {
            op: diskscope::config::Op::Write,
            block_size_bytes: 4 << 10,
            ..diskscope::tui::settings::Settings::default().setup
        },
        ..Default::default()
    };
    let mut session = Session::spawn().unwrap();
    session.send(SessionCommand::Start {
        id: 1,
        spec: settings.spec(&f, &scratch, 1 << 20),
    });
    let deadline = Instant::now() + LIMIT;
    loop {
        assert!(Instant::now() < deadline, "the write run never started");
        match session.updates.recv_timeout(Duration::from_millis(50)) {
            Ok(Update::Started { .. }) => break,
            Ok(Update::Failed { message, .. }) => panic!("{message}"),
            _ => {}
        }
    }
    // The user swaps the scratch file for a file of theirs while the run writes, then quits.
    std::fs::rename(&scratch, p(&dir, "scratch.moved")).unwrap();
    std::fs::write(&scratch, b"the user's file").unwrap();
    session.shutdown();
    assert_eq!(std::fs::read(&scratch).unwrap(), b"the user's file");
}

#[test]
fn fast_on_an_empty_file_says_it_is_empty() {
    let dir = tmp();
    let f = p(&dir, "empty.dat");
    std::fs::write(&f, b"").unwrap();
    let out = finish(spawn("fast", &[f.to_str().unwrap()]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "00000000");
    assert!(stderr.contains("the file is empty"), "{stderr}");
    assert!(!stderr.contains("no size known"), "{stderr}");
}

// ---- third round (issue 34): figures made up from runs too small to hold them --------------

/// `diskscope ARGS`, bounded to 20 s (every refusal here comes before any measuring).
fn quick(args: &[&std::ffi::OsStr]) -> Output {
    let started = Instant::now();
    let out = finish(
        crate::util::command("diskscope")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "refused only after {:?}",
        started.elapsed()
    );
    out
}

#[test]
fn open_loop_rates_below_the_minimum_and_knee_points_too_short_for_a_p99_are_refused() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 1 << 20, 3);
    let os = |s: &str| std::ffi::OsString::from(s);
    let mut tried = 0;
    // The command line: a plain number and a throughput.
    for rate in ["1e-300", "5e-324", "1e-5", "0.5", "1 B/s", "1000 B/s"] {
        let args = [
            os("run"),
            f.clone().into(),
            os("-r"),
            os("4K"),
            os("64"),
            os("--rate"),
            os(rate),
        ];
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let out = quick(&refs);
        tried += 1;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--rate {rate}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "--rate {rate}: {stderr}");
        assert!(stderr.contains("--rate"), "{stderr}");
        assert!(out.stdout.is_empty(), "--rate {rate}: printed a figure");
    }
    // A sweep's `rate` (a fio job's `rate_iops=` is a whole number, at least 1).
    for (i, rate) in ["1e-300", "5e-324", "\"1 B/s\""].iter().enumerate() {
        let sweep = p(&dir, &format!("s{i}.toml"));
        std::fs::write(
            &sweep,
            format!(
                "[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"x\"\nkind = \"throughput\"\n\
                 rate = {rate}\n"
            ),
        )
        .unwrap();
        let out = quick(&[
            os("--batch").as_os_str(),
            sweep.as_os_str(),
            os("--dry-run").as_os_str(),
        ]);
        tried += 1;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "rate = {rate}: {stderr}");
        assert!(stderr.contains("key `rate`"), "{stderr}");
    }
    // knee: points of a nanosecond hold one operation; no knee from them.
    for secs in ["1e-9", "0.001", "0.05"] {
        let out = quick(&[
            os("knee").as_os_str(),
            f.as_os_str(),
            os("--p99").as_os_str(),
            os("2ms").as_os_str(),
            os("--seconds").as_os_str(),
            os(secs).as_os_str(),
        ]);
        tried += 1;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--seconds {secs}: {stderr}");
        assert!(out.stdout.is_empty(), "--seconds {secs}: printed a knee");
        assert!(
            stderr.contains("--seconds") && stderr.contains("p99"),
            "{stderr}"
        );
    }
    eprintln!("attacks tried and held: {tried}");
}

// ---- third round (issue 34): a killed explorer's scratch file, while it is still a zombie ---

/// The state letter of process `pid` (`Z` for a zombie).
fn proc_state_letter(pid: u32) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text[text.rfind(')')? + 1..]
        .split_whitespace()
        .next()?
        .chars()
        .next()
}

#[test]
fn a_scratch_file_of_a_session_killed_a_moment_ago_is_recognised_while_it_is_a_zombie() {
    use diskscope::tui::scratch::{leftovers, scratch_marker};
    let d = tmp();
    let explored = p(&d, "f");
    std::fs::write(&explored, b"data").unwrap();
    // A scratch file marked by `pid` as the explorer marks its own (pid and start time).
    let scratch = |pid: u32, marker: &str| -> Option<PathBuf> {
        let path = p(&d, &format!(".f.diskscope-scratch.{pid}.1"));
        let (f, _) = diskscope::fsguard::create_exclusive(&path).unwrap();
        diskscope::fsguard::mark(&f, marker).then_some(path)
    };
    // The session: killed with SIGKILL and not reaped yet, as right after `kill -9` from a
    // shell that has not waited for it.
    let mut session = Command::new("sleep").arg("100").spawn().unwrap();
    let pid = session.id();
    let Some(dead) = scratch(pid, &scratch_marker(pid)) else {
        eprintln!("skipped: this file system keeps no user extended attributes");
        let _ = session.kill();
        let _ = session.wait();
        return;
    };
    // A live process whose pid a marker names with another start time: the pid was reused.
    let mut other = Command::new("sleep").arg("100").spawn().unwrap();
    let reused = scratch(
        other.id(),
        &format!("explorer-scratch pid={} start=1", other.id()),
    )
    .unwrap();
    // And a live session's own file, marked now: never a leftover.
    let mut live = Command::new("sleep").arg("100").spawn().unwrap();
    let live_file = scratch(live.id(), &scratch_marker(live.id())).unwrap();
    session.kill().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while proc_state_letter(pid) != Some('Z') {
        assert!(
            Instant::now() < deadline,
            "the killed session never became a zombie"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut found: Vec<PathBuf> = leftovers(&explored)
        .into_iter()
        .map(|(c, _)| c.path)
        .collect();
    found.sort();
    let mut want = vec![dead, reused];
    want.sort();
    assert_eq!(
        found, want,
        "a zombie's (or a reused pid's) scratch file was taken for a live one"
    );
    assert!(live_file.exists());
    for c in [&mut session, &mut other, &mut live] {
        let _ = c.kill();
        let _ = c.wait();
    }
}

// ---- third round (issue 34): output lost without an error ----------------------------------

/// How stdout is given to the command.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stdout {
    /// `> /dev/full`: every write fails with ENOSPC.
    Full,
    /// `>&-`: closed before the program starts.
    Closed,
    /// `| true`: a pipe whose reader is gone (EPIPE): success, as ripgrep treats it.
    BrokenPipe,
}

fn run_with_stdout(args: &[std::ffi::OsString], how: Stdout, env: &[(&str, &Path)]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = crate::util::command("diskscope");
    cmd.args(args).stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    match how {
        Stdout::Full => {
            cmd.stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            );
        }
        Stdout::Closed => {
            cmd.stdout(Stdio::null());
            // SAFETY: only close(2), async-signal-safe, runs between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    libc::close(1);
                    Ok(())
                });
            }
        }
        Stdout::BrokenPipe => {
            cmd.stdout(Stdio::piped());
        }
    }
    let mut child = cmd.spawn().unwrap();
    // The reader goes away at once.
    drop(child.stdout.take());
    finish(child)
}

#[test]
fn output_lost_on_a_full_or_closed_stdout_is_an_error_and_a_broken_pipe_is_not() {
    let d = tmp();
    let f = p(&d, "data");
    write_varied_file(&f, 1 << 20, 4);
    let cache = p(&d, "cache");
    crate::util::store_synthetic_profile(&cache, d.path(), 1.0);
    let sweep = p(&d, "s.toml");
    std::fs::write(
        &sweep,
        format!(
            "[file]\npath = \"{}\"\n[[experiment]]\nname = \"r\"\nkind = \"throughput\"\n\
             block_size = \"64K\"\nreps = 2\nseconds = 0.05\n",
            f.display()
        ),
    )
    .unwrap();
    let results = p(&d, "results");
    let made = crate::util::command("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let os = |s: &str| std::ffi::OsString::from(s);
    let fo = f.clone().into_os_string();
    let ro = results.clone().into_os_string();
    let commands: Vec<Vec<std::ffi::OsString>> = vec![
        vec![os("--help")],
        vec![os("--version")],
        vec![os("run"), os("--help")],
        vec![os("completions"), os("bash")],
        vec![os("man")],
        vec![os("man"), os("run")],
        vec![os("compare"), ro.clone(), ro.clone()],
        vec![os("compare"), os("--csv"), ro.clone(), ro.clone()],
        vec![os("compare"), os("--markdown"), ro.clone(), ro.clone()],
        vec![
            os("knee"),
            fo.clone(),
            os("--p99"),
            os("1s"),
            os("--seconds"),
            os("0.1"),
            os("--min-ops"),
            os("50"),
            os("--max-points"),
            os("1"),
        ],
        vec![os("limits"), fo.clone()],
        vec![os("limits"), os("--json"), fo.clone()],
        vec![os("syscalls"), fo.clone(), os("--seconds"), os("0.01")],
        vec![os("fast"), fo.clone()],
        vec![os("run"), fo.clone(), os("-r"), os("64K"), os("4")],
        vec![
            os("--batch"),
            sweep.clone().into(),
            os("--dry-run"),
            os("--out"),
            p(&d, "o").into(),
        ],
    ];
    let mut commands = commands;
    // A batch that measures: its plan goes to stdout first, so a lost stdout stops it before
    // it measures (each mode its own --out).
    for how in ["full", "closed", "pipe"] {
        commands.push(vec![
            os("--batch"),
            sweep.clone().into(),
            os("--out"),
            p(&d, how).into(),
        ]);
    }
    let mut tried = 0;
    for args in &commands {
        for how in [Stdout::Full, Stdout::Closed, Stdout::BrokenPipe] {
            let out = run_with_stdout(args, how, &[("XDG_CACHE_HOME", &cache)]);
            tried += 1;
            let stderr = String::from_utf8_lossy(&out.stderr);
            let what = format!("{args:?} {how:?}");
            assert!(
                out.status.code().is_some(),
                "{what}: killed by a signal: {stderr}"
            );
            assert!(!stderr.contains("panicked"), "{what}: {stderr}");
            match how {
                Stdout::Full => {
                    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
                    assert!(
                        stderr
                            .lines()
                            .any(|l| l.starts_with("error: writing") && l.contains("to stdout")),
                        "{what}: {stderr}"
                    );
                }
                Stdout::Closed => {
                    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
                    assert!(
                        stderr.contains("error: stdout is closed"),
                        "{what}: {stderr}"
                    );
                }
                Stdout::BrokenPipe => {
                    assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
                    assert!(!stderr.contains("error:"), "{what}: {stderr}");
                }
            }
        }
    }
    eprintln!("attacks tried and held: {tried}");
}
