//! The two layouts of the same contents, as in the study: one small file per id in a hashed
//! directory tree (`h/t/o/k.txt` from the digits of `k mod fanout`), and one packed file with an
//! index of offsets.
//!
//! Generating thousands of files costs seconds, so a layout is reused when a small manifest in its
//! directory says it was made with the same parameters. The manifest is written *before* the files
//! (marked incomplete) and rewritten when they are complete and synced, so an interrupted
//! generation is recognised as ours and redone, never mistaken for a finished one. A directory
//! with other content and no manifest is the user's: it is never written to.
//!
//! Contents are a pure function of the id ([`fill_content`]), so both layouts can be checked
//! against each other byte for byte and every rerun reads the same data.

use super::index::{read_index, write_index};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// File names inside the layout directory.
pub const MANIFEST_NAME: &str = "diskscope-locality.toml";
pub const PACKED_NAME: &str = "packed.dat";
pub const INDEX_NAME: &str = "packed.idx";
/// Bumped when the on-disk format or the contents change.
const FORMAT_VERSION: u32 = 1;

/// The seed of id `id`'s contents.
pub fn content_seed(id: u32) -> u64 {
    crate::pattern::DEFAULT_SEED ^ (id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Fills `buf` with the contents of small file `id` (its first `buf.len()` bytes).
pub fn fill_content(id: u32, buf: &mut [u8]) {
    crate::pattern::fill(content_seed(id), 0, buf);
}

/// Path of id `id` relative to the layout directory: one directory level per decimal digit of
/// `id mod fanout`, zero-padded to the width of `fanout - 1` (fan-out 250: `1234` → `2/3/4/1234.txt`).
pub fn small_file_rel(id: u32, fanout: u32) -> PathBuf {
    let width = (fanout.max(1) - 1).to_string().len();
    let bucket = format!("{:0width$}", id % fanout.max(1));
    let mut p = PathBuf::new();
    for digit in bucket.chars() {
        p.push(digit.to_string());
    }
    p.push(format!("{id}.txt"));
    p
}

/// What a layout must contain.
#[derive(Debug, Clone, Copy)]
pub struct LayoutSpec<'a> {
    pub files: u32,
    pub file_size_bytes: u64,
    pub fanout: u32,
    /// Every id once: the order of the contents in the packed file.
    pub pack_ids: &'a [u32],
    /// `id` or `trace`, for the manifest and messages.
    pub pack_label: &'a str,
}

/// A ready layout: where each id lives in both forms.
#[derive(Debug, Clone)]
pub struct Layout {
    pub dir: PathBuf,
    pub file_size_bytes: u64,
    /// Absolute path of each id's small file.
    pub paths: Vec<PathBuf>,
    pub packed_path: PathBuf,
    /// Offset of each id's contents in the packed file.
    pub offsets: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    files: u32,
    file_size_bytes: u64,
    fanout: u32,
    tree_complete: bool,
    pack_order: String,
    pack_hash: String,
    packed_complete: bool,
}

impl Manifest {
    fn same_tree(&self, s: &LayoutSpec) -> bool {
        self.format == FORMAT_VERSION
            && self.files == s.files
            && self.file_size_bytes == s.file_size_bytes
            && self.fanout == s.fanout
            && self.tree_complete
    }
}

/// FNV-1a of the pack order, so a changed trace order is noticed.
fn pack_hash(ids: &[u32]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in ids.iter().flat_map(|id| id.to_le_bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn read_manifest(dir: &Path) -> Option<Manifest> {
    let text = std::fs::read_to_string(dir.join(MANIFEST_NAME)).ok()?;
    toml::from_str(&text).ok()
}

fn write_manifest(dir: &Path, m: &Manifest) -> anyhow::Result<()> {
    let text = toml::to_string(m).context("encoding the manifest")?;
    let path = dir.join(MANIFEST_NAME);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

/// Whether `dir` holds a layout of ours (a manifest, complete or not).
pub fn is_ours(dir: &Path) -> bool {
    dir.join(MANIFEST_NAME).is_file()
}

/// Makes sure `dir` holds the layout `spec` describes, generating what is missing or different.
/// `log` receives one line per step. Stops (and removes the partial layout) when `stop` is set.
pub fn ensure(
    dir: &Path,
    spec: &LayoutSpec,
    stop: &AtomicBool,
    log: &mut dyn FnMut(String),
) -> anyhow::Result<Layout> {
    assert_eq!(
        spec.pack_ids.len(),
        spec.files as usize,
        "pack order covers every id"
    );
    let manifest = if dir.exists() {
        read_manifest(dir)
    } else {
        None
    };
    if manifest.is_none() && dir.exists() && !is_ours(dir) && !is_empty_dir(dir)? {
        return Err(crate::config::usage(format!(
            "--dir: {} is not empty and holds no diskscope locality layout; give a new or \
             empty directory (nothing there was changed)",
            dir.display()
        )));
    }
    let hash = pack_hash(spec.pack_ids);
    let tree_ok = manifest.as_ref().is_some_and(|m| m.same_tree(spec));
    let packed_path = dir.join(PACKED_NAME);
    let packed_len = spec.files as u64 * spec.file_size_bytes;
    let packed_ok = tree_ok
        && manifest
            .as_ref()
            .is_some_and(|m| m.packed_complete && m.pack_hash == hash)
        && std::fs::metadata(&packed_path).is_ok_and(|md| md.len() == packed_len);
    let mut m = Manifest {
        format: FORMAT_VERSION,
        files: spec.files,
        file_size_bytes: spec.file_size_bytes,
        fanout: spec.fanout,
        tree_complete: tree_ok,
        pack_order: spec.pack_label.to_string(),
        pack_hash: hash,
        packed_complete: false,
    };
    if !tree_ok {
        if is_ours(dir) {
            log(format!(
                "layout in {} has other parameters; regenerating",
                dir.display()
            ));
            remove_layout(dir, false)?;
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        check_space(dir, spec, true)?;
        write_manifest(dir, &m)?;
        let t0 = std::time::Instant::now();
        if let Err(e) = write_tree(dir, spec, stop) {
            let _ = remove_layout(dir, true);
            return Err(e);
        }
        m.tree_complete = true;
        write_manifest(dir, &m)?;
        log(format!(
            "generated {} files of {} in {} ({:.2} s)",
            spec.files,
            crate::size::format_size(spec.file_size_bytes),
            dir.display(),
            t0.elapsed().as_secs_f64()
        ));
    }
    if packed_ok {
        log(format!(
            "reusing the layout in {} ({} files, packed in {} order)",
            dir.display(),
            spec.files,
            spec.pack_label
        ));
    } else {
        check_space(dir, spec, false)?;
        write_manifest(dir, &m)?;
        if let Err(e) = write_packed(dir, spec, stop) {
            let _ = remove_layout(dir, true);
            return Err(e);
        }
        m.packed_complete = true;
        write_manifest(dir, &m)?;
        log(format!(
            "wrote {} ({} order) and its index {}",
            packed_path.display(),
            spec.pack_label,
            INDEX_NAME
        ));
    }
    let offsets = read_index(&dir.join(INDEX_NAME), spec.files, spec.file_size_bytes)?;
    let paths = (0..spec.files)
        .map(|id| dir.join(small_file_rel(id, spec.fanout)))
        .collect();
    Ok(Layout {
        dir: dir.to_path_buf(),
        file_size_bytes: spec.file_size_bytes,
        paths,
        packed_path,
        offsets,
    })
}

fn is_empty_dir(dir: &Path) -> anyhow::Result<bool> {
    Ok(std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .next()
        .is_none())
}

/// Refuses to start when the file system cannot hold what is about to be written.
fn check_space(dir: &Path, spec: &LayoutSpec, tree: bool) -> anyhow::Result<()> {
    let block = 4096u64;
    let packed = spec.files as u64 * spec.file_size_bytes + spec.files as u64 * 32;
    let need = if tree {
        spec.files as u64 * spec.file_size_bytes.div_ceil(block) * block + packed
    } else {
        packed
    };
    let cpath = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .context("directory name contains a NUL byte")?;
    // SAFETY: an all-zero statvfs is a valid value for the kernel to overwrite.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `cpath` is a valid C string and `st` a live, writable statvfs.
    if unsafe { libc::statvfs(cpath.as_ptr(), &mut st) } != 0 {
        return Ok(()); // no figure to check against; writing will report a full disk
    }
    let free = st.f_bavail as u64 * st.f_frsize as u64;
    if need > free {
        return Err(crate::config::usage(format!(
            "--files: the layout needs about {} but {} has {} free; use fewer --files, a \
             smaller --file-size or another --dir",
            crate::size::format_bytes_approx(need),
            dir.display(),
            crate::size::format_bytes_approx(free)
        )));
    }
    Ok(())
}

fn interrupted() -> anyhow::Error {
    anyhow::anyhow!("interrupted while generating the layout; the partial layout was removed")
}

/// Flushes the whole file system of `dir`, so writeback never overlaps a measurement.
pub fn sync_fs(dir: &Path) -> anyhow::Result<()> {
    let d = File::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    // SAFETY: plain syscall on a valid descriptor.
    if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error()).context("syncfs");
    }
    Ok(())
}

fn write_tree(dir: &Path, spec: &LayoutSpec, stop: &AtomicBool) -> anyhow::Result<()> {
    for bucket in 0..spec.fanout.min(spec.files) {
        let leaf = dir.join(small_file_rel(bucket, spec.fanout));
        let parent = leaf.parent().expect("a small file has a directory");
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let mut buf = vec![0u8; spec.file_size_bytes as usize];
    for id in 0..spec.files {
        if id % 256 == 0 && stop.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        fill_content(id, &mut buf);
        let path = dir.join(small_file_rel(id, spec.fanout));
        std::fs::write(&path, &buf).with_context(|| format!("writing {}", path.display()))?;
    }
    sync_fs(dir)
}

fn write_packed(dir: &Path, spec: &LayoutSpec, stop: &AtomicBool) -> anyhow::Result<()> {
    let path = dir.join(PACKED_NAME);
    let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut offsets = vec![0u64; spec.files as usize];
    let mut buf = vec![0u8; spec.file_size_bytes as usize];
    for (i, &id) in spec.pack_ids.iter().enumerate() {
        if i % 256 == 0 && stop.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        offsets[id as usize] = i as u64 * spec.file_size_bytes;
        fill_content(id, &mut buf);
        out.write_all(&buf)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    out.into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {}", path.display()))?;
    write_index(&dir.join(INDEX_NAME), &offsets, spec.file_size_bytes)?;
    sync_fs(dir)
}

/// Removes a layout of ours: the tree, the packed file, the index and the manifest (last), then
/// the directory itself when nothing else is left in it. Other entries are never touched.
/// Returns whether there was a layout. Without `force`, a directory without a manifest is an error.
pub fn remove_layout(dir: &Path, force: bool) -> anyhow::Result<bool> {
    if !dir.exists() {
        return Ok(false);
    }
    if !is_ours(dir) && !force {
        if is_empty_dir(dir)? {
            return Ok(false);
        }
        return Err(crate::config::usage(format!(
            "--clean: {} holds no diskscope locality layout; refusing to remove anything there",
            dir.display()
        )));
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        let tree_dir = entry.file_type()?.is_dir() && name.chars().all(|c| c.is_ascii_digit());
        if tree_dir {
            std::fs::remove_dir_all(&path)
                .with_context(|| format!("removing {}", path.display()))?;
        } else if name == PACKED_NAME || name == INDEX_NAME {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    let manifest = dir.join(MANIFEST_NAME);
    if manifest.exists() {
        std::fs::remove_file(&manifest)
            .with_context(|| format!("removing {}", manifest.display()))?;
    }
    if is_empty_dir(dir)? {
        std::fs::remove_dir(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_digits_of_the_id_modulo_the_fanout() {
        assert_eq!(small_file_rel(1234, 250), PathBuf::from("2/3/4/1234.txt"));
        assert_eq!(small_file_rel(7, 250), PathBuf::from("0/0/7/7.txt"));
        assert_eq!(small_file_rel(1249, 250), PathBuf::from("2/4/9/1249.txt"));
        assert_eq!(small_file_rel(13, 10), PathBuf::from("3/13.txt"));
        assert_eq!(small_file_rel(5, 1), PathBuf::from("0/5.txt"));
    }

    #[test]
    fn contents_differ_between_ids_and_repeat_for_the_same_id() {
        let (mut a, mut b, mut c) = (vec![0u8; 64], vec![0u8; 64], vec![0u8; 64]);
        fill_content(1, &mut a);
        fill_content(2, &mut b);
        fill_content(1, &mut c);
        assert_ne!(a, b);
        assert_eq!(a, c);
    }
}
