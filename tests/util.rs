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

/// Whether we run as root (some tests need it and skip with a printed reason otherwise).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
