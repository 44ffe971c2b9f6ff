//! The mounts of /proc/self/mountinfo: one [`Filesystem`] a line, and the mount that holds a path
//! ([`find_mount`]). A leaf below `measure` and `explain`, so the device sampler and the run's
//! context read mounts with one parser.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One mount, from /proc/self/mountinfo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Filesystem {
    /// Filesystem type: ext4, xfs, tmpfs, nfs4, fuse.sshfs, ...
    pub fs_type: String,
    /// Mount source (`/dev/vda1`, `server:/export`, `tmpfs`).
    pub source: String,
    pub mount_point: String,
    /// Per-mount options (rw, relatime, ...).
    pub mount_options: String,
    /// Filesystem-specific (super block) options.
    pub super_options: String,
    /// `MAJ:MIN` of the mount.
    pub dev: String,
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            let digits = std::str::from_utf8(&b[i + 1..i + 4]).unwrap_or("x");
            if let Ok(v) = u8::from_str_radix(digits, 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one line of /proc/self/mountinfo.
pub fn parse_mountinfo_line(line: &str) -> Option<Filesystem> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 2 {
        return None;
    }
    Some(Filesystem {
        dev: l[2].to_string(),
        mount_point: unescape(l[4]),
        mount_options: l[5].to_string(),
        fs_type: r[0].to_string(),
        source: unescape(r[1]),
        super_options: r.get(2).map(|s| s.to_string()).unwrap_or_default(),
    })
}

/// The mount holding `abs`: the longest mount point that is a prefix of the path, preferring
/// mounts of the file's own device (bind mounts and overmounts share prefixes). Later lines win
/// ties, as the later mount hides the earlier one.
pub fn find_mount(mountinfo: &str, abs: &Path, dev: Option<(u32, u32)>) -> Option<Filesystem> {
    let want = dev.map(|(a, b)| format!("{a}:{b}"));
    let mut best: Option<(bool, usize, Filesystem)> = None;
    for fs in mountinfo.lines().filter_map(parse_mountinfo_line) {
        if !abs.starts_with(&fs.mount_point) {
            continue;
        }
        let same_dev = want.as_deref() == Some(fs.dev.as_str());
        let depth = PathBuf::from(&fs.mount_point).components().count();
        let better = match &best {
            None => true,
            Some((d, n, _)) => (same_dev, depth) >= (*d, *n),
        };
        if better {
            best = Some((same_dev, depth, fs));
        }
    }
    best.map(|(_, _, fs)| fs)
}
