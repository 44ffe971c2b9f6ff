//! The file a sweep measures: a file the user named (read only unless `write = true`), or a test
//! file diskscope creates with its deterministic pattern and removes afterwards (on Ctrl-C too)
//! unless `keep = true`. A file already there with the test file's size and pattern (left by an
//! earlier `keep = true` run, or made by `run -w`) is reused, so keeping a big test file saves
//! creating it again; but this process did not create it, so it is never removed (the plan says
//! so). Any other existing file at that path is refused, never overwritten.
//!
//! While a batch uses its test file it holds an exclusive `flock` on it: a second batch naming
//! the same file (with another `--out`) is refused instead of sharing it and removing it under
//! the first one.

use super::schema::{FileDef, Source};
use super::values::one_size;
use crate::config::usage;
use crate::fsguard::{create_error, create_exclusive, Created};
use crate::pattern::{fill, DEFAULT_SEED};
use anyhow::Context;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
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
                src.key_error(p.span(), "path", &format!("cannot use {}: {e}; check the path, or use create = \"1G\" for a test file", path.display()))
            })?;
            if !meta.is_file() {
                return Err(src.key_error(
                    p.span(),
                    "path",
                    &format!("{} is not a regular file; name a file", path.display()),
                ));
            }
            if meta.len() == 0 {
                return Err(src.key_error(
                    p.span(),
                    "path",
                    &format!(
                        "{} is empty; name a file with data, or use create",
                        path.display()
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
                        out_dir.display()
                    )));
                }
                if in_use(&path) {
                    return Err(usage(format!(
                        "another diskscope batch is using the test file {}; wait for it to \
                         finish or use another path",
                        path.display()
                    )));
                }
            }
            if exists && !is_our_test_file(&path, size) {
                let span = p.as_ref().map(|p| p.span()).unwrap_or(c.span());
                return Err(src.key_error(span, if p.is_some() { "path" } else { "create" }, &format!(
                    "{} already exists and is not a {size}-byte diskscope test file; remove it or pick another path",
                    path.display()
                )));
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
                            crate::fsguard::existing_ancestor(&path).display(),
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

/// Whether `path` holds exactly `size` bytes of our pattern (checked at the start and the end).
pub fn is_our_test_file(path: &Path, size: u64) -> bool {
    // Only a regular file (not a link, FIFO or device: opening a FIFO would block) can be ours.
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
        return false;
    }
    let Ok(f) = File::open(path) else {
        return false;
    };
    if f.metadata().map(|m| m.len()).ok() != Some(size) {
        return false;
    }
    let probe = 4096.min(size);
    [0, size - probe].iter().all(|&off| {
        let mut got = vec![0u8; probe as usize];
        let mut want = vec![0u8; probe as usize];
        fill(DEFAULT_SEED, off, &mut want);
        f.read_exact_at(&mut got, off).is_ok() && got == want
    })
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

/// A file the sweep made (or our own kept copy it reuses); removed on drop unless it is to be
/// kept, and only while the path still names that same file.
#[derive(Debug)]
pub struct TestFile {
    created: Option<Created>,
    remove: bool,
    /// Holds the exclusive `flock` while the sweep uses the file.
    _lock: File,
}

impl Drop for TestFile {
    fn drop(&mut self) {
        if let (true, Some(c)) = (self.remove, &self.created) {
            c.remove();
            if let Ok(mut list) = CLEANUP.lock() {
                list.retain(|r| r != c);
            }
        }
    }
}

/// Creates the planned test file (unless our own copy is already there). The returned guard
/// removes it when dropped, unless `keep`. Watches `stop` so Ctrl-C during creation is quick.
pub fn materialize(plan: &FilePlan, stop: &AtomicBool) -> anyhow::Result<Option<TestFile>> {
    if !plan.create {
        return Ok(None);
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
            plan.path.display()
        ))
    };
    if is_our_test_file(&plan.path, plan.size_bytes) {
        // Not created by this process: used (locked) but never removed, whatever `keep` says.
        let f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&plan.path)
            .with_context(|| format!("opening the test file {}", plan.path.display()))?;
        if !crate::fsguard::try_lock(&f) {
            return Err(busy());
        }
        return Ok(Some(TestFile {
            created: None,
            remove: false,
            _lock: f,
        }));
    }
    if let Some(dir) = plan.path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    crate::fsguard::ensure_free(&plan.path, plan.size_bytes, "create")
        .map_err(|e| usage(e.to_string()))?;
    // Exclusive and without following links: a file that appeared since planning (another
    // batch's, the user's) is refused, never overwritten, and never removed by our guard.
    let (mut f, created) = create_exclusive(&plan.path)
        .map_err(|e| anyhow::anyhow!("creating the test file: {}", create_error(&plan.path, &e)))?;
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
    // From here on the file is ours: the guard removes it on any error (also on Ctrl-C).
    let guard = TestFile {
        created: Some(created),
        remove: !plan.keep,
        _lock: lock,
    };
    let written = extend_with_pattern(&mut f, 0, plan.size_bytes, stop)
        .with_context(|| format!("writing the test file {}", plan.path.display()));
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
/// a block size that does not divide the size can make it grow.
pub fn after_write(plan: &FilePlan, stop: &AtomicBool) -> anyhow::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&plan.path)
        .with_context(|| format!("reopening {}", plan.path.display()))?;
    let len = f.metadata()?.len();
    if len > plan.size_bytes {
        f.set_len(plan.size_bytes)?;
    } else if len < plan.size_bytes {
        extend_with_pattern(&mut f, len, plan.size_bytes, stop)?;
    }
    Ok(())
}
