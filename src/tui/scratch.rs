//! Files the explorer makes: the default 1 GiB file explored when no FILE is given (kept in the
//! temp directory and reused, so a first run shows something at once and later runs start
//! instantly), and the write-mode scratch file beside the explored file (removed on exit).

use crate::config::{Op, RunSpec};
use crate::runner;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Size of the default file.
pub const DEFAULT_FILE_BYTES: u64 = 1 << 30;

/// `$TMPDIR/diskscope-scratch-1G`.
pub fn default_file_path() -> PathBuf {
    std::env::temp_dir().join("diskscope-scratch-1G")
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
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == DEFAULT_FILE_BYTES) {
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
    let partial = path.with_extension("partial");
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
            std::fs::rename(&partial, path)
                .with_context(|| format!("renaming {} into place", partial.display()))?;
            Ok(path.to_path_buf())
        }
        Ok(_) => {
            let _ = std::fs::remove_file(&partial);
            anyhow::bail!("writing {} stopped early; try again", partial.display())
        }
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e.context(format!("creating the scratch file {}", path.display())))
        }
    }
}

/// Removes a file when dropped (also while unwinding from a panic).
pub struct RemoveOnDrop(pub PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_write_scratch_file_sits_beside_the_explored_file_hidden() {
        assert_eq!(
            write_scratch_path(Path::new("/data/big.bin")),
            Path::new("/data/.big.bin.diskscope-scratch")
        );
    }
}
