//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The checksum computed independently of the library: byte `i` goes to lane `i % 4` of a u32,
/// which is the XOR of 4-byte little-endian words with a zero-padded tail.
pub fn reference_xor(data: &[u8]) -> String {
    let mut lanes = [0u8; 4];
    for (i, b) in data.iter().enumerate() {
        lanes[i % 4] ^= b;
    }
    format!("{:08x}", u32::from_le_bytes(lanes))
}

/// Writes `len` bytes of varied content (not the library's pattern) to `path`.
pub fn write_varied_file(path: &Path, len: usize, salt: u8) -> Vec<u8> {
    let data: Vec<u8> = (0..len)
        .map(|i| ((i as u64).wrapping_mul(2654435761) >> 7) as u8 ^ salt)
        .collect();
    std::fs::write(path, &data).unwrap();
    data
}

/// A `Command` for one of the crate's binaries, hermetic (see [`hermetic`]).
pub fn bin(name: &str) -> assert_cmd::Command {
    assert_cmd::Command::from_std(command(name))
}

/// A `std::process::Command` for one of the crate's binaries, hermetic (see [`hermetic`]): for a
/// test that spawns a child and waits on it itself.
pub fn command(name: &str) -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin(name));
    hermetic(&mut c);
    c
}

/// The private directories of one spawned binary: its `HOME`, its cache (`XDG_CACHE_HOME`,
/// which is `HOME/.cache`) and its working directory, all empty and made for it alone.
pub struct Sandbox {
    pub home: PathBuf,
    pub cache: PathBuf,
    pub work: PathBuf,
}

impl Sandbox {
    /// Fresh directories under this test process's sandbox root (removed when the process
    /// exits).
    pub fn new() -> Sandbox {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let at = sandbox_root().join(NEXT.fetch_add(1, Ordering::Relaxed).to_string());
        let home = at.join("home");
        let s = Sandbox {
            cache: home.join(".cache"),
            work: at.join("work"),
            home,
        };
        std::fs::create_dir_all(&s.cache).unwrap();
        std::fs::create_dir_all(&s.work).unwrap();
        s
    }

    /// Fresh directories under `parent` (a test's own directory, removed with it), searchable
    /// by every user: for a binary a test runs as another user (`uid(65534)`).
    pub fn under(parent: &Path) -> Sandbox {
        use std::os::unix::fs::PermissionsExt;
        let at = tempfile::Builder::new()
            .prefix("sandbox")
            .tempdir_in(parent)
            .unwrap()
            .keep();
        std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = at.join("home");
        let s = Sandbox {
            cache: home.join(".cache"),
            work: at.join("work"),
            home,
        };
        std::fs::create_dir_all(&s.cache).unwrap();
        std::fs::create_dir_all(&s.work).unwrap();
        s
    }

    /// `cmd` runs with these directories as its home, cache and working directory, and without
    /// the variables of the invoking user's that change what the binaries do.
    pub fn apply<'c>(&self, cmd: &'c mut std::process::Command) -> &'c mut std::process::Command {
        for v in INHERITED_BUT_NOT_WANTED {
            cmd.env_remove(v);
        }
        cmd.env("HOME", &self.home)
            .env("XDG_CACHE_HOME", &self.cache)
            .current_dir(&self.work)
    }

    /// The same for a binary a shell starts (under tmux, `script` or `sh -c`): the start of its
    /// command line, `cd W && env -u … HOME=H XDG_CACHE_HOME=C `.
    pub fn shell_prefix(&self) -> String {
        format!("cd {} && {}", shell_quote(&self.work), self.shell_env())
    }

    /// [`Sandbox::shell_prefix`] without the `cd`, for a test that picks the directory itself:
    /// `env -u … HOME=H XDG_CACHE_HOME=C `.
    pub fn shell_env(&self) -> String {
        let unset: String = INHERITED_BUT_NOT_WANTED
            .iter()
            .map(|v| format!("-u {v} "))
            .collect();
        format!(
            "env {unset}HOME={} XDG_CACHE_HOME={} ",
            shell_quote(&self.home),
            shell_quote(&self.cache)
        )
    }
}

/// `path` quoted for a POSIX shell.
pub fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// Variables of the user's environment a test's binary must not see: where results and the
/// limits profile go (set anew by [`Sandbox::apply`]), the colour switch the explorer obeys, the
/// terminal size help text wraps to, and diskscope's own knobs (a test that wants one sets it).
const INHERITED_BUT_NOT_WANTED: &[&str] = &[
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "NO_COLOR",
    "COLUMNS",
    "LINES",
    "DISKSCOPE_KDM_SECONDS",
    "DISKSCOPE_TEST_HOOK_DIR",
    "DISKSCOPE_TEST_HOOK_POINT",
    "DISKSCOPE_TEST_SLOW_REMOVAL_MS",
];

/// Makes `cmd` hermetic: a new [`Sandbox`] as its home, cache and working directory, so a test
/// never reads or writes the invoking user's (a profile stored by `diskscope limits` in
/// `~/.cache`, rows saved under `./diskscope-results/`). A test that needs a particular cache
/// or directory sets it after this (`.env("XDG_CACHE_HOME", …)`, `.current_dir(…)`).
pub fn hermetic(cmd: &mut std::process::Command) -> &mut std::process::Command {
    Sandbox::new().apply(cmd)
}

/// This test process's directory of sandboxes, made before `main` (see
/// [`HERMETIC_PROCESS`]) and removed when the process exits (an `atexit` handler: libtest ends
/// by returning from `main` or by `process::exit`, both of which run it).
fn sandbox_root() -> &'static Path {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    extern "C" fn remove_root() {
        if let Some(root) = ROOT.get() {
            let _ = std::fs::remove_dir_all(root);
        }
    }
    ROOT.get_or_init(|| {
        let root = tempfile::Builder::new()
            .prefix("diskscope-test-homes")
            .tempdir()
            .unwrap()
            .keep();
        // SAFETY: `remove_root` is an `extern "C" fn()` that takes nothing and does not unwind
        // (remove_dir_all returns its error); atexit only records the pointer.
        unsafe { libc::atexit(remove_root) };
        root
    })
}

/// Runs [`hermetic_process`] before `main`, as the C runtime runs every function in
/// `.init_array` (what the `ctor` crate does): libtest has no hook before it starts the test
/// threads, and the environment may be changed only while no other thread can read it.
#[used]
#[link_section = ".init_array"]
static HERMETIC_PROCESS: extern "C" fn() = hermetic_process;

/// Makes the whole test process hermetic, for the library code tests call in-process (a run's
/// verdict reads the limits profile, the explorer's `s` saves under the working directory) and
/// for any child that is not started through [`command`]: its `HOME` and `XDG_CACHE_HOME` are a
/// [`Sandbox`] of its own, and so is its working directory (the tests find the checkout's files
/// through `CARGO_MANIFEST_DIR`). Without a sandbox the tests must not run at all: it aborts.
extern "C" fn hermetic_process() {
    let made = std::panic::catch_unwind(Sandbox::new);
    let Ok(s) = made else {
        eprintln!("tests: could not make a sandbox HOME under the temp directory; not running");
        std::process::abort();
    };
    // SAFETY (of the environment writes below, safe functions in this edition whose only
    // hazard is a concurrent reader): this runs from `.init_array`, before `main`, when the
    // process has one thread.
    for v in INHERITED_BUT_NOT_WANTED {
        std::env::remove_var(v);
    }
    std::env::set_var("HOME", &s.home);
    std::env::set_var("XDG_CACHE_HOME", &s.cache);
    if std::env::set_current_dir(&s.work).is_err() {
        eprintln!(
            "tests: could not enter the sandbox {}; not running",
            s.work.display()
        );
        std::process::abort();
    }
}

/// `diskscope --batch SWEEP [FLAGS] --out OUT`, run to its end (the caller judges the output).
pub fn batch(sweep: &Path, flags: &[&str], out: &Path) -> std::process::Output {
    bin("diskscope")
        .arg("--batch")
        .arg(sweep)
        .args(flags)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// A fresh temporary directory (removed on drop).
pub fn tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("diskscope-test")
        .tempdir()
        .unwrap()
}

/// A fresh temporary directory in RAM (`/dev/shm`) where there is one, else [`tmp`]: for a test
/// that checks the bytes a run writes, not the disk's speed (5 × 64 MiB written to a busy disk
/// took 100 s, most of it waiting for writeback throttling).
pub fn tmp_in_ram() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::Builder::new()
            .prefix("diskscope-test")
            .tempdir_in(shm)
        {
            return d;
        }
    }
    tmp()
}

/// `dir/name` as a PathBuf.
pub fn p(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

/// A copy of the crate's binary `name` in `dir`, executable by every user: a test that runs it
/// as another user (`uid(65534)`) must not depend on the checkout's directories being
/// searchable by that user (a clone under `mktemp -d` is mode 0700).
pub fn bin_for_any_user(dir: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let to = dir.join(name);
    let from = assert_cmd::cargo::cargo_bin(name);
    // A hard link writes nothing: a copy's descriptor, inherited for a moment by a child another
    // test thread forks, makes exec fail with ETXTBSY ("Text file busy").
    // Made once per directory: a second call must not copy the binary onto its own hard link,
    // which would truncate the original.
    if !to.exists() && std::fs::hard_link(&from, &to).is_err() {
        std::fs::copy(&from, &to).unwrap();
    }
    let mode = std::fs::metadata(&to).unwrap().permissions().mode();
    if mode & 0o755 != 0o755 {
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    to
}

/// A hermetic `Command` for [`bin_for_any_user`]'s copy of `name` in `dir`: its home, cache and
/// working directory are a [`Sandbox::under`] `dir`, which another user can enter.
pub fn command_for_any_user(dir: &Path, name: &str) -> std::process::Command {
    let mut c = std::process::Command::new(bin_for_any_user(dir, name));
    Sandbox::under(dir).apply(&mut c);
    c
}

/// Whether we run as root (some tests need it and skip with a printed reason otherwise).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Stores the synthetic profile as the profile of the device under `dir`, in `cache` (used as
/// `XDG_CACHE_HOME`), as `diskscope limits` would (measured now, so it is not stale), its CPU and
/// memory ceilings multiplied by `scale`.
pub fn store_synthetic_profile(cache: &Path, dir: &Path, scale: f64) {
    store_scaled_profile(cache, dir, scale, scale);
}

/// [`store_synthetic_profile`] with the per-operation and the memory ceilings scaled apart.
pub fn store_scaled_profile(cache: &Path, dir: &Path, methods_scale: f64, memory_scale: f64) {
    use diskscope::explain::context::Context;
    use diskscope::explain::profile::{now_unix_s, profile_file_name, Profile};
    let mut p = Profile::synthetic_example();
    for m in &mut p.methods {
        m.ops_per_s *= methods_scale;
    }
    for m in &mut p.memory {
        m.copy_mib_s *= memory_scale;
        m.xor_mib_s *= memory_scale;
    }
    p.context = Context::collect(dir);
    p.measured_unix_s = now_unix_s();
    let profiles = cache.join("diskscope/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join(profile_file_name(&p.context)),
        serde_json::to_string(&p).unwrap(),
    )
    .unwrap();
}

/// A filesystem on a loop device of this test's own (its image in `dir`), unmounted and detached
/// on drop.
pub struct LoopFs {
    dir: tempfile::TempDir,
    /// The device node (`/dev/loop3`).
    pub dev: String,
    mounted: bool,
}

impl LoopFs {
    /// ext4 on a 160 MiB image in `dir` (`/dev/shm`: in RAM), or `None` with the reason printed.
    pub fn ext4_in(dir: &Path) -> Option<LoopFs> {
        LoopFs::make(
            dir,
            &[
                "mkfs.ext4",
                "-q",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
            ],
            &[],
        )
    }

    /// ext4 on a 160 MiB image in `dir` behind a loop device in direct I/O mode
    /// (`losetup --direct-io=on`): the loop's reads of its image bypass the page cache and go
    /// to the disk under `dir` every time, so the loop device is as slow as that disk.
    /// `None` with the reason printed, also when the kernel kept the loop in buffered mode.
    pub fn ext4_direct_in(dir: &Path) -> Option<LoopFs> {
        let fs = LoopFs::make_with(
            dir,
            160,
            &["--direct-io=on"],
            &[
                "mkfs.ext4",
                "-q",
                "-E",
                "lazy_itable_init=0,lazy_journal_init=0",
            ],
            &[],
        )?;
        let dio = std::fs::read_to_string(format!("/sys/block/{}/loop/dio", fs.name()));
        if !dio.as_deref().is_ok_and(|d| d.trim() == "1") {
            eprintln!("skipped: {} is not in direct I/O mode ({dio:?})", fs.dev);
            return None;
        }
        Some(fs)
    }

    /// `mkfs` (program and arguments; the device is appended) on a 160 MiB image in `dir`,
    /// mounted with `mount_args`.
    pub fn make(dir: &Path, mkfs: &[&str], mount_args: &[&str]) -> Option<LoopFs> {
        LoopFs::make_with(dir, 160, &[], mkfs, mount_args)
    }

    /// [`LoopFs::make`] on an image of `mib` MiB.
    pub fn make_sized(dir: &Path, mib: u64, mkfs: &[&str], mount_args: &[&str]) -> Option<LoopFs> {
        LoopFs::make_with(dir, mib, &[], mkfs, mount_args)
    }

    /// [`LoopFs::make`] on an image of `mib` MiB, with `losetup_args` before the image.
    fn make_with(
        dir: &Path,
        mib: u64,
        losetup_args: &[&str],
        mkfs: &[&str],
        mount_args: &[&str],
    ) -> Option<LoopFs> {
        if !is_root() {
            eprintln!("skipped: needs root to make a loop device");
            return None;
        }
        if !dir.is_dir() {
            eprintln!("skipped: no {}", dir.display());
            return None;
        }
        let tool_there = std::process::Command::new(mkfs[0])
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success() || !o.stdout.is_empty() || !o.stderr.is_empty());
        if !tool_there {
            eprintln!("skipped: no {} (apt-get install the tools)", mkfs[0]);
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("diskscope-test")
            .tempdir_in(dir)
            .unwrap();
        let img = dir.path().join("fs.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(mib << 20)
            .unwrap();
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .args(losetup_args)
            .arg(&img)
            .output()
            .ok()
            .filter(|o| o.status.success());
        let Some(out) = out else {
            eprintln!("skipped: losetup could not attach a loop device");
            return None;
        };
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let mut fs = LoopFs {
            dir,
            dev,
            mounted: false,
        };
        let mnt = fs.mnt();
        std::fs::create_dir(&mnt).unwrap();
        let made = std::process::Command::new(mkfs[0])
            .args(&mkfs[1..])
            .arg(&fs.dev)
            .output()
            .is_ok_and(|o| o.status.success());
        fs.mounted = made
            && std::process::Command::new("mount")
                .args(mount_args)
                .arg(&fs.dev)
                .arg(&mnt)
                .status()
                .is_ok_and(|s| s.success());
        if !fs.mounted {
            eprintln!(
                "skipped: could not make and mount {} on {}",
                mkfs[0], fs.dev
            );
            return None;
        }
        Some(fs)
    }

    pub fn mnt(&self) -> PathBuf {
        self.dir.path().join("mnt")
    }

    /// The device's kernel name (`loop3`).
    pub fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }

    /// Unmounts and mounts the filesystem again with `mount_args` (false if it could not).
    pub fn remount(&mut self, mount_args: &[&str]) -> bool {
        let mnt = self.mnt();
        let off = std::process::Command::new("umount")
            .arg(&mnt)
            .status()
            .is_ok_and(|s| s.success());
        self.mounted = !off;
        if !off {
            return false;
        }
        self.mounted = std::process::Command::new("mount")
            .args(mount_args)
            .arg(&self.dev)
            .arg(&mnt)
            .status()
            .is_ok_and(|s| s.success());
        self.mounted
    }

    /// The image file behind the loop device.
    pub fn image(&self) -> PathBuf {
        self.dir.path().join("fs.img")
    }

    /// Sets the device's read-ahead.
    pub fn set_read_ahead_kb(&self, kb: u64) {
        let q = format!("/sys/block/{}/queue/read_ahead_kb", self.name());
        std::fs::write(q, kb.to_string()).unwrap();
    }
}

impl Drop for LoopFs {
    /// Unmounts (lazily when something still holds the mount, so a failed test never leaves
    /// it) and detaches the device, whatever the test did.
    fn drop(&mut self) {
        let run = |args: &[&str]| {
            std::process::Command::new(args[0])
                .args(&args[1..])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let mnt = self.mnt().display().to_string();
        if self.mounted && !run(&["umount", &mnt]) {
            run(&["umount", "-l", &mnt]);
        }
        if !run(&["losetup", "-d", &self.dev]) {
            // Busy a moment (the lazy unmount finishing): once more after a sync.
            run(&["sync"]);
            run(&["losetup", "-d", &self.dev]);
        }
    }
}

/// The rows of CSV text as maps column → value, read independently of the library.
pub fn csv_maps(text: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            h.iter()
                .zip(rec.unwrap().iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// The rows of a CSV file as maps column → value (see [`csv_maps`]).
pub fn csv_file_maps(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    csv_maps(&text)
}
