//! Files the explorer makes: the default 1 GiB file explored when no FILE is given (kept in the
//! temp directory and reused, so a first run shows something at once and later runs start
//! instantly — but only a file proved ours by owner, mode, links and content: a shared `/tmp`
//! lets anyone plant a file at that name, [`pick_default_file`]), and the write-mode scratch file beside the explored file (removed on exit).
//!
//! Neither ever replaces or writes through what was already there: the write scratch file is
//! created with `O_CREAT|O_EXCL|O_NOFOLLOW` before the first write run ([`WriteScratch::claim`]),
//! so a file or symlink of that name makes `w` refuse with a message instead of overwriting its
//! target, and it is removed on exit only if this process created it. The default file is
//! written under an exclusively created `.partial` name and renamed into place only when nothing
//! else holds the final name.

use crate::config::{Op, RunSpec};
use crate::runner;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Size of the default file.
pub const DEFAULT_FILE_BYTES: u64 = 1 << 30;

/// The directory of the default file (`$TMPDIR`; see [`pick_default_file`] for its name). When no TMPDIR is set and `/tmp` is in RAM (a tmpfs `/tmp`
/// would make the explorer measure memory), `/var/tmp` on a disk instead (see
/// [`crate::explain::context::scratch_dir`], which also says so). A TMPDIR the user set is
/// their choice and is kept, with the note when it is in RAM. Never the current directory: a
/// 1 GiB file must not appear in whatever directory the explorer was started from.
pub fn default_file_dir() -> PathBuf {
    let disk = std::env::var_os("TMPDIR")
        .is_none()
        .then(|| Path::new("/var/tmp"));
    let choice =
        crate::explain::context::scratch_dir(&std::env::temp_dir(), disk, DEFAULT_FILE_BYTES);
    if let Some(note) = &choice.note {
        eprintln!("note: {note}");
    }
    choice.dir
}

/// The write-mode scratch file for `file`: `.<name>.diskscope-scratch` in the same directory.
pub fn write_scratch_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    file.with_file_name(format!(".{name}.diskscope-scratch"))
}

/// How many names [`pick_default_file`] tries before giving up: the plain name, then names
/// with the user id, for when the plain one is taken by a file that is not ours.
const DEFAULT_NAME_TRIES: usize = 8;

/// What [`pick_default_file`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultFile {
    /// A default file this user made earlier (proved by owner, mode, links and content): reused.
    Reuse(PathBuf),
    /// Nothing there: write the default file here. `passed` names the files left alone on the
    /// way, with why each is not ours.
    Create { path: PathBuf, passed: Vec<String> },
}

/// Why the file at `path` is not a default file this user made (`None`: it is). Ours means: a
/// regular file (not a link), owned by this user, writable by no one else, with one link (not
/// a hard link to someone's file), `size_bytes` long, and holding diskscope's pattern where
/// probed (a file of holes, `truncate -s 1G`, would be measured as a device at memory speed).
pub fn not_our_default_file(path: &Path, size_bytes: u64) -> Option<&'static str> {
    use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return Some("cannot be read");
    };
    if !m.file_type().is_file() {
        return Some("not a regular file");
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if m.uid() != unsafe { libc::geteuid() } {
        return Some("owned by another user");
    }
    if m.mode() & 0o022 != 0 {
        return Some("writable by others");
    }
    if m.nlink() != 1 {
        return Some("has other links");
    }
    if m.len() != size_bytes {
        return Some("not the size diskscope writes");
    }
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    else {
        return Some("cannot be opened");
    };
    if !f
        .metadata()
        .is_ok_and(|o| o.dev() == m.dev() && o.ino() == m.ino())
    {
        return Some("changed while checked");
    }
    let probe = 4096.min(size_bytes);
    let offsets = (0..4).map(|i| (size_bytes - probe) / 3 * i);
    let content_ok = offsets.into_iter().all(|off| {
        let mut got = vec![0u8; probe as usize];
        let mut want = vec![0u8; probe as usize];
        crate::pattern::fill(crate::pattern::DEFAULT_SEED, off, &mut want);
        f.read_exact_at(&mut got, off).is_ok() && got == want
    });
    (!content_ok).then_some("does not hold the data diskscope writes")
}

/// Picks the default file in `dir`: the first of `diskscope-scratch-1G`,
/// `diskscope-scratch-1G.u<uid>`, `diskscope-scratch-1G.u<uid>.2`, ... that is either ours
/// (reused) or free (created there). A name taken by anything else — another user's file
/// planted in a shared `/tmp`, a file of holes — is left alone and the next name tried.
pub fn pick_default_file(dir: &Path, size_bytes: u64) -> anyhow::Result<DefaultFile> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut passed = Vec::new();
    for i in 0..DEFAULT_NAME_TRIES {
        let name = match i {
            0 => "diskscope-scratch-1G".to_string(),
            1 => format!("diskscope-scratch-1G.u{uid}"),
            n => format!("diskscope-scratch-1G.u{uid}.{n}"),
        };
        let path = dir.join(name);
        let partial = partial_path(&path);
        if std::fs::symlink_metadata(&path).is_err() {
            if std::fs::symlink_metadata(&partial).is_ok() {
                passed.push(format!(
                    "{} (a leftover or someone else's; delete it if it is yours)",
                    crate::text::shown_path(&partial)
                ));
                continue;
            }
            return Ok(DefaultFile::Create { path, passed });
        }
        match not_our_default_file(&path, size_bytes) {
            None => return Ok(DefaultFile::Reuse(path)),
            Some(why) => passed.push(format!("{} ({why})", crate::text::shown_path(&path))),
        }
    }
    anyhow::bail!(
        "no free name for the 1 GiB scratch file in {}: {} were taken by files that are not \
         diskscope's (left alone); set TMPDIR to another directory, or give a FILE to explore",
        crate::text::shown_path(dir),
        passed.join(", ")
    )
}

/// The name the default file is written under until complete.
fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".partial");
    PathBuf::from(name)
}

/// Makes sure a default file exists with its full size in `dir` and returns its path; writes it
/// (deterministic pattern data, through the write engine) under a temporary name and renames it
/// when complete, so an interrupted creation never leaves a short file that would be reused.
/// Signals during the write stop it and remove the partial file.
pub async fn ensure_default_file(dir: &Path) -> anyhow::Result<PathBuf> {
    let path = match pick_default_file(dir, DEFAULT_FILE_BYTES)? {
        DefaultFile::Reuse(path) => {
            eprintln!(
                "note: exploring the scratch file {} (made earlier; delete it to free 1 GiB)",
                crate::text::shown_path(&path)
            );
            return Ok(path);
        }
        DefaultFile::Create { path, passed } => {
            for p in passed {
                eprintln!("note: left alone, not diskscope's: {p}");
            }
            path
        }
    };
    let path = path.as_path();
    eprintln!(
        "note: no FILE given; writing a 1 GiB scratch file to {} (once; reused next time)",
        crate::text::shown_path(path)
    );
    let partial = partial_path(path);
    // Checked before anything is created: a full temp directory is refused by name at once
    // instead of being filled to the last byte.
    crate::fsguard::ensure_free(&partial, DEFAULT_FILE_BYTES, "the 1 GiB scratch file").map_err(
        |e| anyhow::anyhow!("{e} (set TMPDIR to a roomier directory, or give a FILE to explore)"),
    )?;
    // Ours from here on: the writer below replaces only this file, never one already there.
    let (_, created) = crate::fsguard::create_exclusive(&partial).map_err(|e| {
        anyhow::anyhow!(
            "{} (a leftover of an interrupted first run can be deleted)",
            crate::fsguard::create_error(&partial, &e)
        )
    })?;
    let mut spec = RunSpec::new(&partial);
    spec.op = Op::Write;
    spec.block_count = Some(DEFAULT_FILE_BYTES >> 20);
    spec.force = true;
    let stop = Arc::new(AtomicBool::new(false));
    let stop_w = stop.clone();
    let writer = tokio::task::spawn_blocking(move || {
        let mut shown = 0;
        let outcome = runner::run_blocking(&spec, "tui-scratch", stop_w, |_, agg| {
            let pct = agg.bytes * 100 / DEFAULT_FILE_BYTES;
            if pct >= shown + 10 {
                shown = pct - pct % 10;
                eprint!(" {shown}%");
            }
        });
        eprintln!();
        outcome
    });
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::pin!(writer);
    let finished = tokio::select! {
        r = &mut writer => Some(r),
        _ = tokio::signal::ctrl_c() => None,
        _ = term.recv() => None,
    };
    let outcome = match finished {
        Some(r) => r.context("the scratch writer panicked")?,
        None => {
            // Let the writer stop before removing its file.
            stop.store(true, Ordering::Relaxed);
            let _ = writer.await;
            Err(anyhow::anyhow!("interrupted"))
        }
    };
    match outcome {
        Ok(o) if o.result.bytes == DEFAULT_FILE_BYTES => {
            // Never over a file that appeared meanwhile: RENAME_NOREPLACE fails instead.
            if let Err(e) = rename_noreplace(&partial, path) {
                created.remove();
                anyhow::bail!(
                    "{}: {e}; anything there was left alone",
                    crate::text::shown_path(path)
                );
            }
            Ok(path.to_path_buf())
        }
        Ok(_) => {
            created.remove();
            anyhow::bail!("writing {} stopped early; try again", partial.display())
        }
        Err(e) => {
            created.remove();
            Err(e.context(format!("creating the scratch file {}", path.display())))
        }
    }
}

/// Renames `from` to `to` unless something is at `to` (`renameat2(RENAME_NOREPLACE)`).
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: both are valid NUL-terminated paths that live across the call; AT_FDCWD makes
    // them relative to the current directory as rename(2) would.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The explorer's write scratch file: created exclusively by [`claim`](Self::claim) before a
/// write run, and removed on drop (also while unwinding from a panic) only while its path still
/// names the inode this process created (never a file or symlink put there since).
#[derive(Debug)]
pub struct WriteScratch {
    path: PathBuf,
    /// The file this process created at `path`, by inode (the session may remove and recreate
    /// it between write runs; only that inode is ever removed).
    created: Option<crate::fsguard::Created>,
}

impl WriteScratch {
    pub fn new(path: PathBuf) -> WriteScratch {
        WriteScratch {
            path,
            created: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes sure the scratch path holds a file this process created, creating it with
    /// `O_CREAT|O_EXCL|O_NOFOLLOW` when missing. Refuses (one line, naming the path) when
    /// anything else is there, so a write run never replaces or writes through it.
    pub fn claim(&mut self) -> Result<(), String> {
        match std::fs::symlink_metadata(&self.path) {
            Ok(_) if self.created.as_ref().is_some_and(|c| c.is_intact()) => return Ok(()),
            Ok(_) => {
                self.created = None;
                // Short: it has to fit the status line beside the XOR (the path is shown above).
                let name = self.path.file_name().unwrap_or(self.path.as_os_str());
                return Err(format!(
                    "writes refused: {} not made by diskscope (left alone); remove it to write",
                    name.to_string_lossy()
                ));
            }
            Err(_) => {}
        }
        match crate::fsguard::create_exclusive(&self.path) {
            Ok((_, created)) => {
                self.created = Some(created);
                Ok(())
            }
            Err(e) => Err(format!(
                "write mode: {}",
                crate::fsguard::create_error(&self.path, &e)
            )),
        }
    }
}

impl Drop for WriteScratch {
    fn drop(&mut self) {
        // Only the inode this process created: a file put in its place since is left alone.
        if let Some(c) = &self.created {
            c.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_file_that_was_already_there_is_refused_and_never_removed() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("victim");
        std::fs::write(&target, b"user data").unwrap();
        let link = d.path().join(".f.diskscope-scratch");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut s = WriteScratch::new(link.clone());
        assert!(s.claim().unwrap_err().contains("not made by diskscope"));
        drop(s);
        assert!(link.is_symlink());
        let plain = d.path().join(".g.diskscope-scratch");
        std::fs::write(&plain, b"mine").unwrap();
        drop(WriteScratch::new(plain.clone()));
        assert_eq!(std::fs::read(&plain).unwrap(), b"mine");
        assert_eq!(std::fs::read(&target).unwrap(), b"user data");
    }

    #[test]
    fn a_claimed_scratch_file_is_removed_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(".f.diskscope-scratch");
        let mut s = WriteScratch::new(path.clone());
        s.claim().unwrap();
        assert!(path.is_file());
        s.claim().unwrap(); // a restart of write mode keeps it
        drop(s);
        assert!(!path.exists());
    }

    #[test]
    fn a_file_put_in_place_of_the_claimed_scratch_file_is_never_removed() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(".f.diskscope-scratch");
        let mut s = WriteScratch::new(path.clone());
        s.claim().unwrap();
        // Someone swaps the scratch file for a file of their own while the explorer runs.
        std::fs::rename(&path, d.path().join("moved")).unwrap();
        std::fs::write(&path, b"precious").unwrap();
        assert!(s.claim().unwrap_err().contains("not made by diskscope"));
        drop(s);
        assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    }

    /// A file of `len` bytes of diskscope's pattern, mode 0644, as the explorer writes it.
    fn pattern_file(path: &Path, len: u64) {
        let mut data = vec![0u8; len as usize];
        crate::pattern::fill(crate::pattern::DEFAULT_SEED, 0, &mut data);
        std::fs::write(path, &data).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }

    #[test]
    fn a_planted_default_file_of_holes_is_left_alone_and_a_fresh_name_is_used() {
        let d = tempfile::tempdir().unwrap();
        let planted = d.path().join("diskscope-scratch-1G");
        // `truncate -s 1G`: the right size, all holes.
        std::fs::File::create(&planted)
            .unwrap()
            .set_len(DEFAULT_FILE_BYTES)
            .unwrap();
        let why = not_our_default_file(&planted, DEFAULT_FILE_BYTES);
        assert_eq!(why, Some("does not hold the data diskscope writes"));
        match pick_default_file(d.path(), DEFAULT_FILE_BYTES).unwrap() {
            DefaultFile::Create { path, passed } => {
                assert_ne!(path, planted);
                assert!(path.starts_with(d.path()));
                assert_eq!(passed.len(), 1, "{passed:?}");
                assert!(passed[0].contains("does not hold"), "{passed:?}");
            }
            other => panic!("the planted file was adopted: {other:?}"),
        }
        assert_eq!(
            std::fs::metadata(&planted).unwrap().len(),
            DEFAULT_FILE_BYTES
        );
    }

    #[test]
    fn a_default_file_made_earlier_is_reused_only_while_it_is_ours() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let len = 1 << 20;
        let path = d.path().join("diskscope-scratch-1G");
        pattern_file(&path, len);
        assert_eq!(
            pick_default_file(d.path(), len).unwrap(),
            DefaultFile::Reuse(path.clone())
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(not_our_default_file(&path, len), Some("writable by others"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::hard_link(&path, d.path().join("other")).unwrap();
        assert_eq!(not_our_default_file(&path, len), Some("has other links"));
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(not_our_default_file(&link, len), Some("not a regular file"));
    }

    #[test]
    fn a_default_file_of_another_user_is_not_ours() {
        // /etc/hostname-like: a root-owned file, unless the tests run as root.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            eprintln!("skipped: running as root, every file may be ours");
            return;
        }
        let root_file = Path::new("/etc/passwd");
        let len = std::fs::metadata(root_file).unwrap().len();
        assert_eq!(
            not_our_default_file(root_file, len),
            Some("owned by another user")
        );
    }

    #[test]
    fn the_write_scratch_file_sits_beside_the_explored_file_hidden() {
        assert_eq!(
            write_scratch_path(Path::new("/data/big.bin")),
            Path::new("/data/.big.bin.diskscope-scratch")
        );
    }
}
