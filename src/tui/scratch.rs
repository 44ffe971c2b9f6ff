//! Files the explorer makes: the default 1 GiB file explored when no FILE is given (kept in the
//! temp directory and reused, so a first run shows something at once and later runs start
//! instantly), and the write-mode scratch file beside the explored file (removed on exit).
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

/// `$TMPDIR/diskscope-scratch-1G`. When no TMPDIR is set and `/tmp` is in RAM (a tmpfs `/tmp`
/// would make the explorer measure memory), `/var/tmp` on a disk instead (see
/// [`crate::explain::context::scratch_dir`], which also says so). A TMPDIR the user set is
/// their choice and is kept, with the note when it is in RAM. Never the current directory: a
/// 1 GiB file must not appear in whatever directory the explorer was started from.
pub fn default_file_path() -> PathBuf {
    let disk = std::env::var_os("TMPDIR")
        .is_none()
        .then(|| Path::new("/var/tmp"));
    let choice =
        crate::explain::context::scratch_dir(&std::env::temp_dir(), disk, DEFAULT_FILE_BYTES);
    if let Some(note) = &choice.note {
        eprintln!("note: {note}");
    }
    choice.dir.join("diskscope-scratch-1G")
}

/// The write-mode scratch file for `file`: `.<name>.diskscope-scratch` in the same directory.
pub fn write_scratch_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    file.with_file_name(format!(".{name}.diskscope-scratch"))
}

/// Makes sure the default file exists with its full size; writes it (deterministic pattern data,
/// through the write engine) under a temporary name and renames it when complete, so an
/// interrupted creation never leaves a short file that would be reused. Signals during the write
/// stop it and remove the partial file.
pub async fn ensure_default_file(path: &Path) -> anyhow::Result<PathBuf> {
    let here = std::fs::symlink_metadata(path);
    if here
        .as_ref()
        .is_ok_and(|m| m.file_type().is_file() && m.len() == DEFAULT_FILE_BYTES)
    {
        eprintln!(
            "note: exploring the scratch file {} (made earlier; delete it to free 1 GiB)",
            path.display()
        );
        return Ok(path.to_path_buf());
    }
    eprintln!(
        "note: no FILE given; writing a 1 GiB scratch file to {} (once; reused next time)",
        path.display()
    );
    if here.is_ok() {
        anyhow::bail!(
            "{} exists but is not the 1 GiB scratch file diskscope makes; it was left alone: \
             remove it, or give a FILE to explore",
            path.display()
        );
    }
    let partial = path.with_extension("partial");
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
            if std::fs::symlink_metadata(path).is_ok() {
                created.remove();
                anyhow::bail!(
                    "{} appeared while the scratch file was written; it was left alone",
                    path.display()
                );
            }
            std::fs::rename(&partial, path)
                .with_context(|| format!("renaming {} into place", partial.display()))?;
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

    #[test]
    fn the_write_scratch_file_sits_beside_the_explored_file_hidden() {
        assert_eq!(
            write_scratch_path(Path::new("/data/big.bin")),
            Path::new("/data/.big.bin.diskscope-scratch")
        );
    }
}
