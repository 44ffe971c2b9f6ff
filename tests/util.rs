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

/// A `Command` for one of the crate's binaries.
pub fn bin(name: &str) -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin(name).unwrap()
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

/// Whether we run as root (some tests need it and skip with a printed reason otherwise).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Stores the synthetic profile as the profile of the device under `dir`, in `cache` (used as
/// `XDG_CACHE_HOME`), as `diskscope limits` would (measured now, so it is not stale), its CPU and
/// memory ceilings multiplied by `scale`.
pub fn store_synthetic_profile(cache: &Path, dir: &Path, scale: f64) {
    use diskscope::explain::context::Context;
    use diskscope::explain::profile::{now_unix_s, profile_file_name, Profile};
    let mut p = Profile::synthetic_example();
    for m in &mut p.methods {
        m.ops_per_s *= scale;
    }
    for m in &mut p.memory {
        m.copy_mib_s *= scale;
        m.xor_mib_s *= scale;
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
        LoopFs::make_with(dir, &[], mkfs, mount_args)
    }

    /// [`LoopFs::make`] with `losetup_args` before the image.
    fn make_with(
        dir: &Path,
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
            .set_len(160 << 20)
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

    /// Sets the device's read-ahead.
    pub fn set_read_ahead_kb(&self, kb: u64) {
        let q = format!("/sys/block/{}/queue/read_ahead_kb", self.name());
        std::fs::write(q, kb.to_string()).unwrap();
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        if self.mounted {
            let _ = std::process::Command::new("umount")
                .arg(self.mnt())
                .status();
        }
        let _ = std::process::Command::new("losetup")
            .arg("-d")
            .arg(&self.dev)
            .status();
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
