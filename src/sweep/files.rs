//! The file a sweep measures: a file the user named (read only unless `write = true`), or a test
//! file diskscope creates with its deterministic pattern and removes afterwards (on Ctrl-C too)
//! unless `keep = true`. A file already at the test file's path is reused only when it is
//! provably diskscope's ([`test_file_proof`]): it carries the mark diskscope set when it created
//! it (`fsguard::test_file_mark`: its own device and inode, so neither a copy nor a file renamed
//! into place qualifies) **and** every byte is still the pattern diskscope wrote. Looking like
//! ours is no proof: a user's bytes in the middle of a kept test file make it the user's, and it
//! is refused, never overwritten. A reused file was not created by this process, so it is never
//! removed (the plan says so).
//!
//! While a batch uses its test file it holds an exclusive `flock` on it: a second batch naming
//! the same file (with another `--out`) is refused instead of sharing it and removing it under
//! the first one. And it registers the file's inode (`fsguard::register_file`), so every run of
//! the batch that opens the path checks it still names that file: a file renamed over it
//! between two experiments is refused, never written.

use super::schema::{FileDef, Source};
use super::values::one_size;
use crate::config::usage;
use crate::fsguard::{create_error, create_exclusive, Created};
use crate::pattern::{fill, DEFAULT_SEED};
use crate::text::shown_path;
use anyhow::Context;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use toml::Spanned;

/// Size of the test file made for sweeps that need one but name none (syscalls only).
const AUTO_FILE_BYTES: u64 = 1 << 20;

/// The file of a sweep, as planned.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePlan {
    pub path: PathBuf,
    pub size_bytes: u64,
    /// diskscope creates (or reuses its own) test file here.
    pub create: bool,
    /// Keep a created file after the sweep.
    pub keep: bool,
    /// Write experiments are allowed.
    pub writable: bool,
}

/// Plans the `[file]` table. `needs_file`: some experiment reads a file.
pub fn plan_file(
    src: &Source,
    def: Option<&Spanned<FileDef>>,
    needs_file: bool,
    out_dir: &Path,
) -> anyhow::Result<Option<FilePlan>> {
    let Some(def) = def else {
        if needs_file {
            return Err(usage(format!(
                "{}:1: key `file`: missing; add a [file] table with path = \"...\" or create = \"1G\"",
                src.display
            )));
        }
        return Ok(Some(FilePlan {
            path: out_dir.join("diskscope-testfile.bin"),
            size_bytes: AUTO_FILE_BYTES,
            create: true,
            keep: false,
            writable: true,
        }));
    };
    let span = def.span();
    let d = def.get_ref();
    let keep = d.keep.as_ref().map(|k| *k.get_ref()).unwrap_or(false);
    let write = d.write.as_ref().map(|w| *w.get_ref()).unwrap_or(false);
    match (&d.path, &d.create) {
        (None, None) => Err(src.key_error(
            span,
            "file",
            "give path = \"...\" (a file to read) or create = \"1G\" (a test file)",
        )),
        (Some(p), None) => {
            if let Some(k) = &d.keep {
                return Err(src.key_error(
                    k.span(),
                    "keep",
                    "applies to created test files only; remove it or add create = \"SIZE\"",
                ));
            }
            let path = PathBuf::from(p.get_ref());
            let meta = std::fs::metadata(&path).map_err(|e| {
                src.key_error(p.span(), "path", &format!("cannot use {}: {e}; check the path, or use create = \"1G\" for a test file", shown_path(&path)))
            })?;
            if !meta.is_file() {
                return Err(src.key_error(
                    p.span(),
                    "path",
                    &format!("{} is not a regular file; name a file", shown_path(&path)),
                ));
            }
            if meta.len() == 0 {
                return Err(src.key_error(
                    p.span(),
                    "path",
                    &format!(
                        "{} is empty; name a file with data, or use create",
                        shown_path(&path)
                    ),
                ));
            }
            Ok(Some(FilePlan {
                path,
                size_bytes: meta.len(),
                create: false,
                keep: true,
                writable: write,
            }))
        }
        (p, Some(c)) => {
            let size = one_size(src, c, "create")?;
            let path = match p {
                Some(p) => PathBuf::from(p.get_ref()),
                None => out_dir.join("diskscope-testfile.bin"),
            };
            let exists = std::fs::symlink_metadata(&path).is_ok();
            if exists {
                // Most likely another batch creating it right now: say that, not "not ours".
                if let Some(pid) = crate::fsguard::lock_holder(out_dir) {
                    return Err(usage(format!(
                        "--out: another diskscope batch is writing to {} (pid {pid}); wait for it \
                         to finish or pick another --out",
                        shown_path(out_dir)
                    )));
                }
                if in_use(&path) {
                    return Err(usage(format!(
                        "another diskscope batch is using the test file {}; wait for it to \
                         finish or use another path",
                        shown_path(&path)
                    )));
                }
            }
            if exists {
                if let Err(why) = test_file_proof(&path, size) {
                    let span = p.as_ref().map(|p| p.span()).unwrap_or(c.span());
                    return Err(src.key_error(
                        span,
                        if p.is_some() { "path" } else { "create" },
                        &format!(
                        "{} already exists and is not a {size}-byte diskscope test file: {why}; \
                         diskscope rewrites only a file it made that still holds exactly what it \
                         wrote: remove it or pick another path",
                        shown_path(&path)
                    ),
                    ));
                }
            }
            if !exists {
                if let Some(free) = crate::fsguard::free_bytes(&path).filter(|f| *f < size) {
                    return Err(src.key_error(
                        c.span(),
                        "create",
                        &format!(
                            "{} does not fit: {} has {} free; ask for less or put the file \
                             elsewhere with path = \"...\"",
                            crate::size::format_size(size),
                            shown_path(&crate::fsguard::existing_ancestor(&path)),
                            crate::size::format_bytes_approx(free)
                        ),
                    ));
                }
            }
            Ok(Some(FilePlan {
                path,
                size_bytes: size,
                create: true,
                keep,
                writable: true,
            }))
        }
    }
}

/// Why a file is not a test file diskscope may rewrite (see [`test_file_proof`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotOurs {
    #[error("it is not a regular file")]
    NotRegular,
    #[error("it cannot be read ({0})")]
    Unreadable(String),
    #[error("it holds {found} bytes, not {expected}")]
    Size { found: u64, expected: u64 },
    #[error(
        "it carries no diskscope mark (the `user.diskscope` extended attribute set when diskscope \
         creates a test file, naming its inode), so nothing records that diskscope made it"
    )]
    NoMark,
    #[error(
        "byte {offset} is not what diskscope wrote there (the file changed since diskscope made \
         it)"
    )]
    Changed { offset: u64 },
}

/// A file [`test_file_proof`] verified, as it was then: while its inode, size and ctime are the
/// same, nothing has written to it since (every write, truncation, `utimes` and extended
/// attribute change moves the ctime, which no user can set back), so it need not be read again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Verified {
    dev: u64,
    ino: u64,
    size: u64,
    ctime: (i64, i64),
}

/// Files proved ours in this process (a plan checks, prints and then uses the same file).
static VERIFIED: Mutex<Vec<Verified>> = Mutex::new(Vec::new());

/// Bytes read per step while verifying a file's content.
const VERIFY_CHUNK_BYTES: usize = 1 << 20;

/// Proves that the regular file at `path` (not through a link) is a `size`-byte test file
/// diskscope made and that it still holds exactly what diskscope wrote; see
/// [`test_file_proof_of`].
pub fn test_file_proof(path: &Path, size: u64) -> Result<(), NotOurs> {
    // Only a regular file (not a link, FIFO or device: opening a FIFO would block) can be ours.
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
        return Err(NotOurs::NotRegular);
    }
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| NotOurs::Unreadable(e.to_string()))?;
    test_file_proof_of(&f, size)
}

/// Proves that the open `f` is a `size`-byte test file diskscope made and still holds what it
/// wrote: the record made when it was created (its mark, naming this very inode) **and** every
/// byte compared with the pattern (a file proved earlier in this process and not written since,
/// by its ctime, is not read again). Sampling a few blocks is no proof: a user's bytes in the
/// middle of a kept test file would be overwritten.
pub fn test_file_proof_of(f: &File, size: u64) -> Result<(), NotOurs> {
    let m = f
        .metadata()
        .map_err(|e| NotOurs::Unreadable(e.to_string()))?;
    if !m.is_file() {
        return Err(NotOurs::NotRegular);
    }
    if m.len() != size {
        return Err(NotOurs::Size {
            found: m.len(),
            expected: size,
        });
    }
    if !crate::fsguard::has_test_file_mark(f) {
        return Err(NotOurs::NoMark);
    }
    let stamp = Verified {
        dev: m.dev(),
        ino: m.ino(),
        size,
        ctime: (m.ctime(), m.ctime_nsec()),
    };
    if VERIFIED.lock().is_ok_and(|v| v.contains(&stamp)) {
        return Ok(());
    }
    let mut got = vec![0u8; VERIFY_CHUNK_BYTES];
    let mut want = vec![0u8; VERIFY_CHUNK_BYTES];
    let mut off = 0u64;
    while off < size {
        let n = (VERIFY_CHUNK_BYTES as u64).min(size - off) as usize;
        f.read_exact_at(&mut got[..n], off)
            .map_err(|e| NotOurs::Unreadable(e.to_string()))?;
        fill(DEFAULT_SEED, off, &mut want[..n]);
        if let Some(i) = got[..n].iter().zip(&want[..n]).position(|(a, b)| a != b) {
            return Err(NotOurs::Changed {
                offset: off + i as u64,
            });
        }
        off += n as u64;
    }
    // Only if nothing moved while it was read.
    if f.metadata()
        .is_ok_and(|a| (a.len(), a.ctime(), a.ctime_nsec()) == (size, stamp.ctime.0, stamp.ctime.1))
    {
        if let Ok(mut v) = VERIFIED.lock() {
            v.push(stamp);
        }
    }
    Ok(())
}

/// Whether `path` is a `size`-byte test file diskscope made and may rewrite
/// ([`test_file_proof`]).
pub fn is_our_test_file(path: &Path, size: u64) -> bool {
    test_file_proof(path, size).is_ok()
}

/// Whether another process holds the `flock` of a test file at `path` (a batch using it).
fn in_use(path: &Path) -> bool {
    let Ok(f) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    else {
        return false;
    };
    f.metadata().is_ok_and(|m| m.is_file()) && !crate::fsguard::try_lock(&f)
}

/// Paths to remove if the user presses Ctrl-C twice (the second press exits at once).
static CLEANUP: Mutex<Vec<Created>> = Mutex::new(Vec::new());

/// Adds `c` (the `--out` lock file) to what a forced exit removes.
pub fn register_cleanup(c: Created) {
    if let Ok(mut list) = CLEANUP.lock() {
        list.push(c);
    }
}

/// Removes every registered temporary file (called from the signal handler's second press).
pub fn remove_registered() {
    if let Ok(list) = CLEANUP.lock() {
        for c in list.iter() {
            c.remove();
        }
    }
}

/// A file the sweep made (or our own kept copy it reuses, or the user's file it may write);
/// removed on drop unless it is to be kept, and only while the path still names that same file.
/// While it lives, the path is registered ([`crate::fsguard::register_file`]) with the inode
/// checked, so no run of the batch opens another file by that name.
#[derive(Debug)]
pub struct TestFile {
    created: Option<Created>,
    remove: bool,
    path: PathBuf,
    /// Holds the exclusive `flock` while the sweep uses the file.
    _lock: File,
}

impl Drop for TestFile {
    fn drop(&mut self) {
        crate::fsguard::unregister_file(&self.path);
        if let (true, Some(c)) = (self.remove, &self.created) {
            c.remove();
            if let Ok(mut list) = CLEANUP.lock() {
                list.retain(|r| r != c);
            }
        }
    }
}

/// Makes the planned file ready: creates the test file (unless our own copy, proved by
/// [`test_file_proof_of`], is already there), or checks the user's file a sweep may write. The
/// returned guard removes a created file when dropped, unless `keep`. Watches `stop` so Ctrl-C
/// during creation is quick.
pub fn materialize(plan: &FilePlan, stop: &AtomicBool) -> anyhow::Result<Option<TestFile>> {
    if !plan.create {
        if !plan.writable {
            return Ok(None);
        }
        // The user's own file, `write = true`: its inode is registered, so writes go only to
        // the file the user named, not to one renamed over it during the batch.
        let f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&plan.path)
            .with_context(|| format!("opening {}", shown_path(&plan.path)))?;
        crate::fsguard::register_file(&plan.path, &f)?;
        return Ok(Some(TestFile {
            created: None,
            remove: false,
            path: plan.path.clone(),
            _lock: f,
        }));
    }
    let register = |c: &Created| {
        if !plan.keep {
            if let Ok(mut list) = CLEANUP.lock() {
                list.push(c.clone());
            }
        }
    };
    let busy = || {
        usage(format!(
            "another diskscope batch is using the test file {}; wait for it to finish or use \
             another path",
            shown_path(&plan.path)
        ))
    };
    let existing = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&plan.path);
    match existing {
        Ok(f) => {
            // Not created by this process: used (locked) only when proved ours through this very
            // descriptor, and never removed, whatever `keep` says.
            if let Err(why) = test_file_proof_of(&f, plan.size_bytes) {
                return Err(usage(format!(
                    "{} already exists and is not a {}-byte diskscope test file: {why}; \
                     diskscope rewrites only a file it made that still holds exactly what it \
                     wrote: remove it or pick another path",
                    shown_path(&plan.path),
                    plan.size_bytes
                )));
            }
            crate::fsguard::clear_nonblock(&f)?;
            if !crate::fsguard::try_lock(&f) {
                return Err(busy());
            }
            crate::fsguard::register_file(&plan.path, &f)?;
            return Ok(Some(TestFile {
                created: None,
                remove: false,
                path: plan.path.clone(),
                _lock: f,
            }));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(anyhow::anyhow!(
                "creating the test file: {}",
                create_error(&plan.path, &e)
            ))
        }
    }
    crate::eprintln_shown!(
        "creating the test file {} ({})",
        shown_path(&plan.path),
        crate::size::format_size(plan.size_bytes)
    );
    if let Some(dir) = plan.path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", shown_path(dir)))?;
    }
    crate::fsguard::ensure_free(&plan.path, plan.size_bytes, "create")
        .map_err(|e| usage(e.to_string()))?;
    // Exclusive and without following links: a file that appeared since planning (another
    // batch's, the user's) is refused, never overwritten, and never removed by our guard.
    let (mut f, created) = create_exclusive(&plan.path)
        .map_err(|e| anyhow::anyhow!("creating the test file: {}", create_error(&plan.path, &e)))?;
    // The record that it is ours, first: a later batch reuses it only with this mark (and only
    // while every byte is still the pattern written below).
    crate::fsguard::mark_test_file(&f);
    // Locked at once: a second batch that sees it (even half written) is refused. The lock is
    // held through a read-only descriptor: one kept open for writing would keep every read run
    // of the batch from taking its read lease (see `runner::FileWatch`).
    let lock = match crate::fsguard::reopen(&f, 0) {
        Ok(lock) => lock,
        Err(e) => {
            created.remove();
            return Err(anyhow::Error::new(e).context("opening the test file to lock it"));
        }
    };
    if !crate::fsguard::try_lock(&lock) {
        created.remove();
        return Err(busy());
    }
    register(&created);
    crate::fsguard::register_file(&plan.path, &lock)?;
    // From here on the file is ours: the guard removes it on any error (also on Ctrl-C).
    let guard = TestFile {
        created: Some(created),
        remove: !plan.keep,
        path: plan.path.clone(),
        _lock: lock,
    };
    let written = extend_with_pattern(&mut f, 0, plan.size_bytes, stop)
        .with_context(|| format!("writing the test file {}", shown_path(&plan.path)));
    if let Err(e) = written {
        // A partial test file is never kept, whatever `keep` says.
        if let Some(c) = &guard.created {
            c.remove();
        }
        return Err(e);
    }
    Ok(Some(guard))
}

fn extend_with_pattern(f: &mut File, from: u64, to: u64, stop: &AtomicBool) -> anyhow::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut off = from;
    while off < to {
        if stop.load(Ordering::Relaxed) {
            anyhow::bail!("interrupted");
        }
        let n = (buf.len() as u64).min(to - off) as usize;
        fill(DEFAULT_SEED, off, &mut buf[..n]);
        f.write_all_at(&buf[..n], off)?;
        off += n as u64;
    }
    f.flush()?;
    Ok(())
}

/// After a write point: puts the file back to its planned size. Writes overwrite in place with
/// the same pattern a created file holds, so its content stays the same; only the last block of
/// a block size that does not divide the size can make it grow. The file opened must be the one
/// the batch checked (by inode): one renamed over the path since is refused, never written.
pub fn after_write(plan: &FilePlan, stop: &AtomicBool) -> anyhow::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&plan.path)
        .with_context(|| format!("reopening {}", shown_path(&plan.path)))?;
    crate::fsguard::check_registered(&plan.path, &f)?;
    if !f.metadata()?.is_file() {
        anyhow::bail!("{} is no longer a regular file", shown_path(&plan.path));
    }
    crate::fsguard::clear_nonblock(&f)?;
    let len = f.metadata()?.len();
    if len > plan.size_bytes {
        f.set_len(plan.size_bytes)?;
    } else if len < plan.size_bytes {
        extend_with_pattern(&mut f, len, plan.size_bytes, stop)?;
    }
    Ok(())
}
