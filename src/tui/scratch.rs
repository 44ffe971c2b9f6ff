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

use crate::config::spec::RunSpec;
use crate::config::Op;
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
        crate::eprintln_shown!("note: {}", crate::text::shown(note));
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
    if m.uid() != rustix::process::geteuid().as_raw() {
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
    let uid = rustix::process::geteuid().as_raw();
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
            crate::eprintln_shown!(
                "note: exploring the scratch file {} (made earlier; delete it to free 1 GiB)",
                crate::text::shown_path(&path)
            );
            return Ok(path);
        }
        DefaultFile::Create { path, passed } => {
            for p in passed {
                crate::eprintln_shown!("note: left alone, not diskscope's: {p}");
            }
            path
        }
    };
    let path = path.as_path();
    crate::eprintln_shown!(
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
    spec.setup.op = Op::Write;
    spec.target.block_count = Some(DEFAULT_FILE_BYTES >> 20);
    spec.safety.force = true;
    let stop = Arc::new(AtomicBool::new(false));
    let stop_w = stop.clone();
    let writer = tokio::task::spawn_blocking(move || {
        let mut shown = 0;
        let outcome = runner::run_blocking(&spec, "tui-scratch", stop_w, |_, agg| {
            let pct = agg.bytes * 100 / DEFAULT_FILE_BYTES;
            if pct >= shown + 10 {
                shown = pct - pct % 10;
                crate::eprint_shown!(" {shown}%");
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
        Ok(o) if o.result.figures.bytes == DEFAULT_FILE_BYTES => {
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
            anyhow::bail!(
                "writing {} stopped early; try again",
                crate::text::shown_path(&partial)
            )
        }
        Err(e) => {
            created.remove();
            Err(e.context(format!(
                "creating the scratch file {}",
                crate::text::shown_path(path)
            )))
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

/// The extended attribute that marks a write scratch file as the explorer's, with the pid of
/// the session that made it; a later session removes a leftover only with this proof.
pub const SCRATCH_XATTR: &str = crate::fsguard::MARK_XATTR;

/// The marker's value for the session `pid`: its pid and the time it started (clock ticks after
/// boot, `/proc/PID/stat`), so that a later process given the same pid is not taken for it.
pub fn scratch_marker(pid: u32) -> String {
    match proc_state(pid) {
        Some((_, start)) => format!("explorer-scratch pid={pid} start={start}"),
        None => format!("explorer-scratch pid={pid}"),
    }
}

/// The session a marker names: its pid and, in markers that carry it, its start time.
fn marker_owner(marker: &str) -> Option<(u32, Option<u64>)> {
    let rest = marker.strip_prefix("explorer-scratch pid=")?;
    match rest.split_once(" start=") {
        Some((pid, start)) => Some((pid.parse().ok()?, Some(start.parse().ok()?))),
        None => Some((rest.parse().ok()?, None)),
    }
}

/// The state letter (`R`, `S`, `Z` for a zombie, ...) and start time (clock ticks after boot)
/// of process `pid`, from `/proc/PID/stat`; None when there is no such entry (or no /proc).
fn proc_state(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `PID (COMM) STATE ...`: COMM may hold spaces and parentheses, so split after the last `)`.
    let rest = text.get(text.rfind(')')? + 1..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 is the state, field 22 the start time.
    Some((
        fields.first()?.chars().next()?,
        fields.get(19)?.parse().ok()?,
    ))
}

/// The explorer's write scratch files: every write run gets a fresh one, created by
/// [`claim`](Self::claim) with `O_CREAT|O_EXCL|O_NOFOLLOW` and named
/// `.<name>.diskscope-scratch.<pid>.<n>` beside the explored file, so a new write run never
/// waits for the removal of the last one (see [`super::discard`]) and never meets a file it
/// did not make. Each is marked ([`SCRATCH_XATTR`]) so that a session killed before its
/// cleanup leaves a file the next session can prove is ours ([`leftovers`]). What is still
/// there on drop (also while unwinding from a panic) is removed, only while its path still
/// names the inode this process created.
#[derive(Debug)]
pub struct WriteScratch {
    /// `.<name>.diskscope-scratch`: every claimed name starts with it.
    base: PathBuf,
    next: u64,
    claimed: Vec<crate::fsguard::Created>,
}

impl WriteScratch {
    pub fn new(base: PathBuf) -> WriteScratch {
        WriteScratch {
            base,
            next: 0,
            claimed: Vec::new(),
        }
    }

    /// The path of the file this session's write runs use next: claimed or not, the same stem.
    pub fn base(&self) -> &Path {
        &self.base
    }

    fn name(&self, n: u64) -> PathBuf {
        let mut name = self.base.as_os_str().to_os_string();
        name.push(format!(".{}.{n}", std::process::id()));
        PathBuf::from(name)
    }

    /// Creates a fresh scratch file for the next write run and returns its path. A name taken
    /// (by anything) is skipped and left alone; refuses (one line, naming the path) when the
    /// directory does not let us create one.
    pub fn claim(&mut self) -> Result<PathBuf, String> {
        self.claimed.retain(|c| c.is_intact());
        for _ in 0..64 {
            self.next += 1;
            let path = self.name(self.next);
            match crate::fsguard::create_exclusive(&path) {
                Ok((file, created)) => {
                    mark_scratch(&file, std::process::id());
                    self.claimed.push(created);
                    return Ok(path);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(format!(
                        "write mode: {}",
                        crate::fsguard::create_error(&path, &e)
                    ))
                }
            }
        }
        Err(format!(
            "writes refused: 64 names {}.* taken by files not made by this session (left alone)",
            crate::text::shown_path(&self.base)
        ))
    }
}

impl WriteScratch {
    /// The run given `path` ended: if it never used the file (its start was passed over for a
    /// later one, or refused — a run replaces its claimed file with one of its own), the empty
    /// file `claim` made is removed now rather than at exit, and forgotten either way.
    /// Returns whether a file was removed.
    pub fn release_unused(&mut self, path: &Path) -> bool {
        let Some(i) = self.claimed.iter().position(|c| c.path == path) else {
            return false;
        };
        self.claimed.remove(i).remove()
    }
}

impl Drop for WriteScratch {
    fn drop(&mut self) {
        // Only the inodes this process created: a file put in their place since is left alone.
        for c in &self.claimed {
            c.remove();
        }
    }
}

/// Marks `file` as a write scratch file of session `pid`. A file system without user extended
/// attributes keeps no mark: such a file is then never removed by a later session (no proof).
fn mark_scratch(file: &std::fs::File, pid: u32) -> bool {
    crate::fsguard::mark(file, &scratch_marker(pid))
}

/// The marker of the file at `path` (not following a link), if any.
fn marker_of(path: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let cpath = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let name = std::ffi::CString::new(SCRATCH_XATTR).ok()?;
    let mut buf = [0u8; 96];
    // SAFETY: both strings are NUL-terminated and `buf` is a live, writable buffer of
    // `buf.len()` bytes.
    let n = unsafe {
        libc::lgetxattr(
            cpath.as_ptr(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    (n >= 0).then(|| String::from_utf8_lossy(&buf[..n as usize]).into_owned())
}

/// Whether the session that marked a file (`pid`, started at `start` when the marker says) may
/// still be running. A zombie is not: a session killed with SIGKILL stays one until its parent
/// reaps it (about a second after a kill from a shell), and a new session started at once must
/// not take its scratch files for a live session's. A process now holding the pid but started
/// at another time is another process. Without a readable `/proc/PID/stat`, signal 0 decides
/// (a process of another user answers EPERM: alive).
fn alive(pid: u32, start: Option<u64>) -> bool {
    if let Some((state, started)) = proc_state(pid) {
        return !matches!(state, 'Z' | 'X' | 'x') && start.is_none_or(|s| s == started);
    }
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    // Signal 0 checks existence and permission only; it sends nothing.
    rustix::process::test_kill_process(pid) != Err(rustix::io::Errno::SRCH)
}

/// Write scratch files beside `file` left by explorer sessions that ended without cleaning up
/// (killed with SIGKILL, a machine that lost power). Only files proven ours: named
/// `.<name>.diskscope-scratch.<pid>.<n>`, a regular file with one link, owned by this user,
/// marked ([`SCRATCH_XATTR`]) by that same pid, and that session no longer running (a zombie
/// has ended; a process holding the pid now but started at another time is another process).
/// Returns each with its session's pid.
pub fn leftovers(file: &Path) -> Vec<(crate::fsguard::Created, u32)> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let base = write_scratch_path(file);
    let Some(prefix) = base.file_name().map(|n| {
        let mut p = n.as_bytes().to_vec();
        p.push(b'.');
        p
    }) else {
        return Vec::new();
    };
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let uid = rustix::process::geteuid().as_raw();
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.as_bytes().strip_prefix(prefix.as_slice()) else {
            continue;
        };
        let Some((pid, n)) = std::str::from_utf8(rest)
            .ok()
            .and_then(|r| r.split_once('.'))
        else {
            continue;
        };
        let (Ok(pid), true) = (
            pid.parse::<u32>(),
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
        ) else {
            continue;
        };
        let path = dir.join(&name);
        let owner = marker_of(&path).as_deref().and_then(marker_owner);
        let ours = std::fs::symlink_metadata(&path)
            .is_ok_and(|m| m.file_type().is_file() && m.uid() == uid && m.nlink() == 1)
            && owner.is_some_and(|(by, start)| by == pid && !alive(pid, start))
            && pid != std::process::id();
        if let Some(c) = ours
            .then(|| crate::fsguard::Created::of_existing(&path))
            .flatten()
        {
            found.push((c, pid));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_claim_is_a_fresh_file_and_a_name_already_taken_is_skipped_and_never_removed() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("victim");
        std::fs::write(&target, b"user data").unwrap();
        let base = d.path().join(".f.diskscope-scratch");
        let mut s = WriteScratch::new(base.clone());
        let taken = s.name(1);
        std::os::unix::fs::symlink(&target, &taken).unwrap();
        let first = s.claim().unwrap();
        let second = s.claim().unwrap();
        assert!(first != taken && second != first && second != taken);
        assert!(first.is_file() && second.is_file());
        drop(s);
        assert!(
            !first.exists() && !second.exists(),
            "claimed files are removed"
        );
        assert!(taken.is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"user data");
    }

    #[test]
    fn a_claimed_file_no_run_used_is_removed_when_its_run_ends_and_a_replaced_one_is_left() {
        let d = tempfile::tempdir().unwrap();
        let mut s = WriteScratch::new(d.path().join(".f.diskscope-scratch"));
        // Two starts, the first passed over for the second: its empty file goes at once.
        let unused = s.claim().unwrap();
        let used = s.claim().unwrap();
        assert!(s.release_unused(&unused));
        assert!(
            !unused.exists(),
            "an unused scratch file does not wait for the exit"
        );
        // The second run replaced its file with its own (as the runner does with --force):
        // that one is the run's to remove, not this.
        std::fs::remove_file(&used).unwrap();
        std::fs::write(&used, b"the run's file").unwrap();
        assert!(!s.release_unused(&used));
        assert_eq!(std::fs::read(&used).unwrap(), b"the run's file");
        assert!(!s.release_unused(&used), "forgotten once released");
        drop(s);
        assert!(
            used.exists(),
            "not removed at exit either: it is not the claimed inode"
        );
    }

    #[test]
    fn a_file_put_in_place_of_a_claimed_scratch_file_is_never_removed() {
        let d = tempfile::tempdir().unwrap();
        let mut s = WriteScratch::new(d.path().join(".f.diskscope-scratch"));
        let path = s.claim().unwrap();
        // Someone swaps the scratch file for a file of their own while the explorer runs.
        std::fs::rename(&path, d.path().join("moved")).unwrap();
        std::fs::write(&path, b"precious").unwrap();
        drop(s);
        assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    }

    #[test]
    fn only_marked_scratch_files_of_ended_sessions_are_leftovers() {
        let d = tempfile::tempdir().unwrap();
        let explored = d.path().join("f");
        std::fs::write(&explored, b"data").unwrap();
        // A pid that is not running: a child that has exited and been reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let make = |pid: u32, n: u32, marked_by: Option<u32>| {
            let path = d.path().join(format!(".f.diskscope-scratch.{pid}.{n}"));
            let (f, _) = crate::fsguard::create_exclusive(&path).unwrap();
            if let Some(by) = marked_by {
                if !mark_scratch(&f, by) {
                    return None; // no user xattrs here
                }
            }
            Some(path)
        };
        let Some(left) = make(dead, 1, Some(dead)) else {
            eprintln!("skipped: this file system keeps no user extended attributes");
            return;
        };
        let unmarked = make(dead, 2, None).unwrap();
        let other_pid_mark = make(dead, 3, Some(dead + 1)).unwrap();
        let running = make(std::process::id(), 1, Some(std::process::id())).unwrap();
        let found: Vec<PathBuf> = leftovers(&explored)
            .into_iter()
            .map(|(c, pid)| {
                assert_eq!(pid, dead);
                c.path
            })
            .collect();
        assert_eq!(found, vec![left]);
        for p in [unmarked, other_pid_mark, running] {
            assert!(p.exists());
        }
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
    fn a_file_written_as_the_default_file_is_proved_ours() {
        // The same write the explorer makes, 4 MiB instead of 1 GiB.
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("diskscope-scratch-1G");
        crate::fsguard::create_exclusive(&path).unwrap();
        let mut spec = RunSpec::new(&path);
        spec.setup.op = Op::Write;
        spec.target.block_count = Some(4);
        spec.safety.force = true;
        let stop = Arc::new(AtomicBool::new(false));
        let outcome = runner::run_blocking(&spec, "t", stop, |_, _| {}).unwrap();
        assert_eq!(outcome.result.figures.bytes, 4 << 20);
        assert_eq!(not_our_default_file(&path, 4 << 20), None);
    }

    #[test]
    fn a_default_file_of_another_user_is_not_ours() {
        // /etc/hostname-like: a root-owned file, unless the tests run as root.
        if rustix::process::geteuid().as_raw() == 0 {
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
