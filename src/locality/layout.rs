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
//! The manifest alone proves nothing (anyone can write a file of that name), so before anything
//! is removed — on `--clean`, on regenerating with other parameters, after an interrupted
//! generation — the directory is checked against the manifest: it must parse, and every entry
//! must be exactly a path the manifest's parameters generate (a digit directory of the tree, an
//! `id.txt` in its bucket, the packed file, its index). Anything else refuses the whole removal
//! before a single file is touched. Removal then unlinks exactly those paths and `rmdir`s the
//! tree's directories; nothing is ever removed recursively. Files are created with
//! `O_CREAT|O_EXCL|O_NOFOLLOW`, so a generation never writes through a file or link already there.
//!
//! Contents are a pure function of the id ([`fill_content`]), so both layouts can be checked
//! against each other byte for byte and every rerun reads the same data.

use super::index::{read_index, write_index};
use super::params::Syntax;
use crate::config::UsageError;
use crate::fsguard::{create_error, create_exclusive};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
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
    /// How the settings are named in messages (`--dir` or `dir`).
    pub syntax: Syntax,
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
#[serde(deny_unknown_fields)]
struct Manifest {
    format: u32,
    files: u32,
    file_size_bytes: u64,
    fanout: u32,
    tree_complete: bool,
    pack_order: String,
    pack_hash: String,
    packed_complete: bool,
    /// diskscope created the layout directory itself, so it may `rmdir` it once empty.
    #[serde(default)]
    created_dir: bool,
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

/// What `--dir` holds.
enum DirState {
    Missing,
    Empty,
    /// A layout whose every entry the manifest accounts for.
    Ours(Manifest),
}

fn dir_error(dir: &Path, syntax: Syntax, why: String) -> anyhow::Error {
    UsageError::new(
        syntax.name("dir"),
        format!("{}: {why}", crate::text::shown_path(dir)),
    )
    .into()
}

/// Reads the manifest strictly: it must be a regular file (not a link) that parses as ours.
fn read_manifest(dir: &Path, syntax: Syntax) -> anyhow::Result<Option<Manifest>> {
    let path = dir.join(MANIFEST_NAME);
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(dir_error(
                dir,
                syntax,
                format!("cannot read {MANIFEST_NAME}: {e}"),
            ))
        }
    };
    let refuse = |why: &str| {
        dir_error(
            dir,
            syntax,
            format!(
                "{MANIFEST_NAME} {why}, so the directory is not provably a layout diskscope \
                 made; nothing there was changed: use another {}",
                syntax.name("dir")
            ),
        )
    };
    if !meta.file_type().is_file() || meta.len() > 4096 {
        return Err(refuse("is not a manifest diskscope wrote"));
    }
    let text = std::fs::read_to_string(&path).map_err(|_| refuse("is not readable text"))?;
    let m: Manifest = toml::from_str(&text).map_err(|_| refuse("does not parse as a manifest"))?;
    if m.format != FORMAT_VERSION || m.files == 0 || m.fanout == 0 || m.file_size_bytes == 0 {
        return Err(refuse("describes no layout of this version"));
    }
    Ok(Some(m))
}

/// Writes the manifest: created exclusively the first time, rewritten in place (never through a
/// link) afterwards.
fn write_manifest(dir: &Path, m: &Manifest, first: bool) -> anyhow::Result<()> {
    let text = toml::to_string(m).context("encoding the manifest")?;
    let path = dir.join(MANIFEST_NAME);
    let mut f = if first {
        create_exclusive(&path)
            .map_err(|e| anyhow::anyhow!(create_error(&path, &e)))?
            .0
    } else {
        std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| format!("rewriting {}", crate::text::shown_path(&path)))?
    };
    f.write_all(text.as_bytes())
        .with_context(|| format!("writing {}", crate::text::shown_path(&path)))
}

/// Every path (relative to the layout directory) that the layout `m` describes generates:
/// the tree's directories and its files.
fn generated_paths(files: u32, fanout: u32) -> (HashSet<PathBuf>, HashSet<PathBuf>) {
    let mut dirs = HashSet::new();
    for bucket in 0..fanout.min(files) {
        let leaf = small_file_rel(bucket, fanout);
        let mut d = leaf.parent();
        while let Some(p) = d.filter(|p| !p.as_os_str().is_empty()) {
            if !dirs.insert(p.to_path_buf()) {
                break;
            }
            d = p.parent();
        }
    }
    let files = (0..files).map(|id| small_file_rel(id, fanout)).collect();
    (dirs, files)
}

/// Checks that every entry under `dir` is a path the manifest's layout generates (missing ones
/// are fine: a generation may have been interrupted). Returns the first foreign entry.
fn foreign_entry(dir: &Path, m: &Manifest) -> anyhow::Result<Option<PathBuf>> {
    let (dirs, files) = generated_paths(m.files, m.fanout);
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let abs = dir.join(&rel);
        for entry in std::fs::read_dir(&abs)
            .with_context(|| format!("reading {}", crate::text::shown_path(&abs)))?
        {
            let entry =
                entry.with_context(|| format!("reading {}", crate::text::shown_path(&abs)))?;
            let ft = entry.file_type()?;
            let child = rel.join(entry.file_name());
            let top_file = rel.as_os_str().is_empty()
                && [MANIFEST_NAME, PACKED_NAME, INDEX_NAME]
                    .iter()
                    .any(|n| entry.file_name() == *n);
            if ft.is_dir() && dirs.contains(&child) {
                stack.push(child);
            } else if ft.is_file() && (top_file || files.contains(&child)) {
            } else {
                return Ok(Some(dir.join(child)));
            }
        }
    }
    Ok(None)
}

/// Looks at `--dir` and proves what it holds before anything is written or removed.
fn inspect(dir: &Path, syntax: Syntax) -> anyhow::Result<DirState> {
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(DirState::Missing),
        Err(e) => return Err(dir_error(dir, syntax, format!("cannot use it: {e}"))),
    };
    if !meta.is_dir() {
        return Err(dir_error(
            dir,
            syntax,
            "is not a directory; give a new or empty directory".into(),
        ));
    }
    let Some(m) = read_manifest(dir, syntax)? else {
        if is_empty_dir(dir)? {
            return Ok(DirState::Empty);
        }
        return Err(dir_error(
            dir,
            syntax,
            "is not empty and holds no diskscope locality layout; give a new or empty \
             directory (nothing there was changed)"
                .into(),
        ));
    };
    if let Some(f) = foreign_entry(dir, &m)? {
        return Err(dir_error(
            dir,
            syntax,
            format!(
                "holds {}, which the locality layout did not create; nothing there was \
                 changed: move it out or use another {}",
                crate::text::shown_path(&f),
                syntax.name("dir")
            ),
        ));
    }
    Ok(DirState::Ours(m))
}

/// Whether `dir` holds a layout of ours: a manifest that parses and accounts for every entry.
pub fn is_ours(dir: &Path) -> bool {
    matches!(inspect(dir, Syntax::Cli), Ok(DirState::Ours(_)))
}

/// Removes exactly the paths layout `m` generates (a missing one is fine), the tree's directories
/// by `rmdir`, the manifest last, and `dir` itself when `m` says diskscope created it and it is
/// empty. Callers have checked [`foreign_entry`] first.
fn remove_exact(dir: &Path, m: &Manifest, keep_manifest: bool) -> anyhow::Result<()> {
    let remove_file = |p: &Path| -> anyhow::Result<()> {
        match std::fs::symlink_metadata(p) {
            Ok(md) if md.file_type().is_file() => std::fs::remove_file(p)
                .with_context(|| format!("removing {}", crate::text::shown_path(p))),
            Ok(_) => Err(anyhow::anyhow!(
                "{} changed into something diskscope did not make; left it",
                crate::text::shown_path(p)
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).with_context(|| format!("removing {}", crate::text::shown_path(p))),
        }
    };
    let (dirs, _) = generated_paths(m.files, m.fanout);
    for id in 0..m.files {
        remove_file(&dir.join(small_file_rel(id, m.fanout)))?;
    }
    remove_file(&dir.join(PACKED_NAME))?;
    remove_file(&dir.join(INDEX_NAME))?;
    let mut dirs: Vec<PathBuf> = dirs.into_iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs {
        let p = dir.join(d);
        match std::fs::remove_dir(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| format!("removing {}", crate::text::shown_path(&p)))
            }
        }
    }
    if !keep_manifest {
        remove_file(&dir.join(MANIFEST_NAME))?;
        if m.created_dir && is_empty_dir(dir)? {
            std::fs::remove_dir(dir)
                .with_context(|| format!("removing {}", crate::text::shown_path(dir)))?;
        }
    }
    Ok(())
}

/// Makes sure `dir` holds the layout `spec` describes, generating what is missing or different.
/// `log` receives one line per step. Stops (and removes the partial layout) when `stop` is set.
pub fn ensure(
    dir: &Path,
    spec: &LayoutSpec,
    stop: &AtomicBool,
    log: &mut dyn FnMut(String),
) -> anyhow::Result<Layout> {
    ensure_in(dir, spec, stop, log, false)
}

/// An exclusive `flock` on the layout directory itself (no lock file, so nothing is added to a
/// directory whose every entry the manifest must account for), held for a whole run or
/// `--clean`: a second `locality` on the same `--dir` is refused instead of taking the first
/// one's half-written layout for a stale one and regenerating it.
#[derive(Debug)]
pub struct DirFlock {
    _dir: File,
    /// This call made the directory (it was missing).
    pub created: bool,
    /// Missing ancestors this call made, deepest first.
    pub created_parents: Vec<PathBuf>,
}

impl DirFlock {
    /// Removes the directory and the ancestors this lock made, each only while empty (after a
    /// refusal or an interrupted first generation, so nothing is left behind).
    pub fn remove_created(&self, dir: &Path) {
        if self.created && std::fs::remove_dir(dir).is_ok() {
            for p in &self.created_parents {
                if std::fs::remove_dir(p).is_err() {
                    break;
                }
            }
        }
    }
}

/// Takes the [`DirFlock`] of `dir`. A missing `dir` is created first (with `create`) while its
/// parent is locked, so two runs starting together agree on who made it; without `create` a
/// missing directory needs no lock (None). `key` names the flag in the message.
pub fn lock_dir(dir: &Path, key: &str, create: bool) -> anyhow::Result<Option<DirFlock>> {
    let open_dir = |p: &Path| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(p)
    };
    let mut created = false;
    let mut created_parents = Vec::new();
    if std::fs::symlink_metadata(dir).is_err() {
        if !create {
            return Ok(None);
        }
        let parent = dir
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut missing = parent;
        while std::fs::symlink_metadata(missing).is_err() {
            created_parents.push(missing.to_path_buf());
            match missing.parent().filter(|d| !d.as_os_str().is_empty()) {
                Some(up) => missing = up,
                None => break,
            }
        }
        std::fs::create_dir_all(parent)
            .with_context(|| format!("{key}: creating {}", crate::text::shown_path(parent)))?;
        let p = open_dir(parent)
            .with_context(|| format!("{key}: opening {}", crate::text::shown_path(parent)))?;
        // Waits only while another run creates its directory here, a moment.
        let _ = rustix::fs::flock(&p, rustix::fs::FlockOperation::LockExclusive);
        match std::fs::create_dir(dir) {
            Ok(()) => created = true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("{key}: creating {}", crate::text::shown_path(dir)))
            }
        }
        drop(p);
    }
    let d = open_dir(dir)
        .with_context(|| format!("{key}: opening {}", crate::text::shown_path(dir)))?;
    let lock = DirFlock {
        _dir: d,
        created,
        created_parents,
    };
    if !crate::fsguard::try_lock(&lock._dir) {
        lock.remove_created(dir);
        return Err(crate::config::usage(format!(
            "{key}: another diskscope locality run is using {}; wait for it to finish or pick \
             another {key}",
            crate::text::shown_path(dir)
        )));
    }
    Ok(Some(lock))
}

/// [`ensure`] for a directory that [`lock_dir`] may have just created (`created_dir`): such a
/// directory counts as diskscope's, so `--clean` removes it again.
pub fn ensure_in(
    dir: &Path,
    spec: &LayoutSpec,
    stop: &AtomicBool,
    log: &mut dyn FnMut(String),
    created_dir: bool,
) -> anyhow::Result<Layout> {
    assert_eq!(
        spec.pack_ids.len(),
        spec.files as usize,
        "pack order covers every id"
    );
    let state = inspect(dir, spec.syntax)?;
    let hash = pack_hash(spec.pack_ids);
    let old = match &state {
        DirState::Ours(m) => Some(m.clone()),
        _ => None,
    };
    let tree_ok = old.as_ref().is_some_and(|m| m.same_tree(spec));
    let packed_path = dir.join(PACKED_NAME);
    let packed_len = spec.files as u64 * spec.file_size_bytes;
    let packed_ok = tree_ok
        && old
            .as_ref()
            .is_some_and(|m| m.packed_complete && m.pack_hash == hash)
        && std::fs::symlink_metadata(&packed_path)
            .is_ok_and(|md| md.is_file() && md.len() == packed_len);
    let mut m = Manifest {
        format: FORMAT_VERSION,
        files: spec.files,
        file_size_bytes: spec.file_size_bytes,
        fanout: spec.fanout,
        tree_complete: tree_ok,
        pack_order: spec.pack_label.to_string(),
        pack_hash: hash,
        packed_complete: false,
        created_dir: match &old {
            Some(o) => o.created_dir,
            None => {
                matches!(state, DirState::Missing)
                    || (created_dir && matches!(state, DirState::Empty))
            }
        },
    };
    if !tree_ok {
        let mut first_manifest = true;
        match &old {
            Some(o) => {
                log(format!(
                    "layout in {} has other parameters; regenerating",
                    crate::text::shown_path(dir)
                ));
                remove_exact(dir, o, true)?;
                first_manifest = false;
            }
            None => {
                // Checked before creating the directory, so a refusal leaves nothing behind.
                check_space(dir, spec, true)?;
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", crate::text::shown_path(dir)))?;
            }
        }
        check_space(dir, spec, true)?;
        write_manifest(dir, &m, first_manifest)?;
        let t0 = std::time::Instant::now();
        if let Err(e) = write_tree(dir, spec, stop) {
            let _ = remove_exact(dir, &m, false);
            return Err(e);
        }
        m.tree_complete = true;
        write_manifest(dir, &m, false)?;
        log(format!(
            "generated {} files of {} in {} ({:.2} s)",
            spec.files,
            crate::size::format_size(spec.file_size_bytes),
            crate::text::shown_path(dir),
            t0.elapsed().as_secs_f64()
        ));
    }
    if packed_ok {
        log(format!(
            "reusing the layout in {} ({} files, packed in {} order)",
            crate::text::shown_path(dir),
            spec.files,
            spec.pack_label
        ));
    } else {
        // Only our own packed file and index can be here (inspect checked every entry).
        for name in [PACKED_NAME, INDEX_NAME] {
            let p = dir.join(name);
            if std::fs::symlink_metadata(&p).is_ok_and(|md| md.is_file()) {
                std::fs::remove_file(&p)
                    .with_context(|| format!("removing {}", crate::text::shown_path(&p)))?;
            }
        }
        check_space(dir, spec, false)?;
        write_manifest(dir, &m, false)?;
        if let Err(e) = write_packed(dir, spec, stop) {
            let _ = remove_exact(dir, &m, false);
            return Err(e);
        }
        m.packed_complete = true;
        write_manifest(dir, &m, false)?;
        log(format!(
            "wrote {} ({} order) and its index {}",
            crate::text::shown_path(&packed_path),
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
        .with_context(|| format!("reading {}", crate::text::shown_path(dir)))?
        .next()
        .is_none())
}

/// Refuses to start when the file system cannot hold what is about to be written.
fn check_space(dir: &Path, spec: &LayoutSpec, tree: bool) -> anyhow::Result<()> {
    Ok(check_space_of(
        dir,
        spec.files,
        spec.file_size_bytes,
        tree,
        spec.syntax,
    )?)
}

/// [`check_space`] from the parameters alone (a sweep's plan checks it before anything runs).
pub fn check_space_of(
    dir: &Path,
    files: u32,
    file_size_bytes: u64,
    tree: bool,
    syntax: Syntax,
) -> Result<(), UsageError> {
    let block = 4096u64;
    let packed = files as u64 * file_size_bytes + files as u64 * 32;
    let need = if tree {
        files as u64 * file_size_bytes.div_ceil(block) * block + packed
    } else {
        packed
    };
    let Some(free) = crate::fsguard::free_bytes(dir) else {
        return Ok(()); // no figure to check against; writing will report a full disk
    };
    if need > free {
        let n = |k: &str| syntax.name(k);
        return Err(UsageError::new(
            n("files"),
            format!(
                "the layout needs about {} but {} has {} free; use fewer {}, a smaller {} or \
                 another {}",
                crate::size::format_bytes_approx(need),
                crate::text::shown_path(dir),
                crate::size::format_bytes_approx(free),
                n("files"),
                n("file_size"),
                n("dir")
            ),
        ));
    }
    Ok(())
}

/// Creates a new file of the layout, never opening one that is already there.
fn create_new(path: &Path) -> anyhow::Result<File> {
    create_exclusive(path)
        .map(|(f, _)| f)
        .map_err(|e| anyhow::anyhow!(create_error(path, &e)))
}

fn interrupted() -> anyhow::Error {
    anyhow::anyhow!("interrupted while generating the layout; the partial layout was removed")
}

/// Flushes the whole file system of `dir`, so writeback never overlaps a measurement.
pub fn sync_fs(dir: &Path) -> anyhow::Result<()> {
    let d = File::open(dir).with_context(|| format!("opening {}", crate::text::shown_path(dir)))?;
    rustix::fs::syncfs(&d)
        .map_err(std::io::Error::from)
        .context("syncfs")
}

fn write_tree(dir: &Path, spec: &LayoutSpec, stop: &AtomicBool) -> anyhow::Result<()> {
    for bucket in 0..spec.fanout.min(spec.files) {
        let leaf = dir.join(small_file_rel(bucket, spec.fanout));
        let parent = leaf.parent().expect("a small file has a directory");
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", crate::text::shown_path(parent)))?;
    }
    let mut buf = vec![0u8; spec.file_size_bytes as usize];
    for id in 0..spec.files {
        if id % 256 == 0 && stop.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        fill_content(id, &mut buf);
        let path = dir.join(small_file_rel(id, spec.fanout));
        create_new(&path)?
            .write_all(&buf)
            .with_context(|| format!("writing {}", crate::text::shown_path(&path)))?;
    }
    sync_fs(dir)
}

fn write_packed(dir: &Path, spec: &LayoutSpec, stop: &AtomicBool) -> anyhow::Result<()> {
    let path = dir.join(PACKED_NAME);
    let file = create_new(&path)?;
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
            .with_context(|| format!("writing {}", crate::text::shown_path(&path)))?;
    }
    out.into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("writing {}", crate::text::shown_path(&path)))?;
    write_index(&dir.join(INDEX_NAME), &offsets, spec.file_size_bytes)?;
    sync_fs(dir)
}

/// Removes a layout of ours: exactly the paths its manifest's parameters generate, the manifest
/// last, then the directory itself if diskscope created it and nothing else is left. Refuses,
/// removing nothing, when the manifest does not parse or the directory holds anything else.
/// Returns whether there was a layout (a missing or empty directory has none).
pub fn remove_layout(dir: &Path) -> anyhow::Result<bool> {
    match inspect(dir, Syntax::Cli)
        .map_err(|e| crate::config::usage(format!("--clean: refusing to remove anything: {e}")))?
    {
        DirState::Missing | DirState::Empty => Ok(false),
        DirState::Ours(m) => {
            remove_exact(dir, &m, false)?;
            Ok(true)
        }
    }
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
