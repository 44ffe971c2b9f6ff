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
    if std::fs::hard_link(&from, &to).is_err() {
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
