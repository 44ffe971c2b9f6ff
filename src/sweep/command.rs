//! The `command` kind: an external command (`dd if={file} ...`) timed under the same cache control
//! and repetitions as diskscope's own runs, so "compare with dd" is one experiment. It runs as
//! `sh -c` in its own process group, so Ctrl-C or the timeout can kill it with everything it
//! started.
//!
//! A command is finished when its whole process group is: `sleep 30 & echo started` takes as
//! long as the `sleep` (bounded by `timeout`, after which the group is killed and the run is an
//! error), never the 1 ms the shell took. Nothing the command starts outlives the batch:
//! * the group is killed after every run, on timeout and on Ctrl-C;
//! * `sh` gets `PR_SET_PDEATHSIG(SIGKILL)`, so it dies with the batch even on `SIGKILL`;
//! * a small guard (`sh -c 'read; kill -- -PGID'`, reading a pipe only the batch holds) kills
//!   the group when that pipe closes without a "done" line, i.e. when the batch died however
//!   it died, including what the command put in the background.
//! * the batch is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a process that leaves the group
//!   (`setsid sleep 41 &`) is reparented to the batch when its parent exits, instead of to init.
//!   Such processes count as part of the command (the run lasts until they end, bounded by
//!   `timeout`), and whatever is left is killed at the end of the run, at the timeout and on
//!   Ctrl-C. The limit: a process that escapes both the group and the batch's descendants (one
//!   started through a service manager, `systemd-run`, or `ssh host ...`) is out of reach, and
//!   after `SIGKILL` of the batch itself its reparented processes go to the next subreaper (init).

use super::experiment::CommandPlan;
use super::files::FilePlan;
use super::wait::{spawn_result, warm_interruptibly, POLL};
use crate::config::spec::RunSpec;
use crate::config::{CacheMode, Op, Pattern};
use crate::measure::result::Label;
use crate::measure::RunResult;
use crate::runner::host_name;
use anyhow::{anyhow, Context};
use rustix::process::{
    getpid, kill_process, kill_process_group, set_child_subreaper, test_kill_process_group,
    waitpid, Pid, Signal, WaitOptions,
};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Instant;

/// Quotes a path for `sh`, byte for byte: a path need not be UTF-8, and a lossy conversion
/// would name a different file (`o\xff/` would become `o\u{FFFD}/`).
fn shell_quote(path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len() + 2);
    out.push(b'\'');
    for &b in path {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

/// The shell text of a `command` point: `{block_size}` and `{block_count}` filled in first, then
/// `{file}` as the path's own bytes, quoted (so a path holding `{block_size}` stays a path).
pub fn command_text(template: &str, path: &Path, block_size: u64, block_count: u64) -> OsString {
    let filled = template
        .replace("{block_size}", &block_size.to_string())
        .replace("{block_count}", &block_count.to_string());
    let quoted = shell_quote(path.as_os_str().as_bytes());
    let mut out = Vec::with_capacity(filled.len() + quoted.len());
    for (i, part) in filled.split("{file}").enumerate() {
        if i > 0 {
            out.extend_from_slice(&quoted);
        }
        out.extend_from_slice(part.as_bytes());
    }
    OsString::from_vec(out)
}

/// One repetition of a `command` point: cache control, then `sh -c COMMAND` timed from spawn to
/// exit. None when the sweep was stopped during it (the command's process group is killed).
pub fn run_command(
    spec: &RunSpec,
    cmd: &CommandPlan,
    file: &FilePlan,
    stop: &AtomicBool,
) -> anyhow::Result<Option<RunResult>> {
    let bs = spec.setup.block_size_bytes;
    let count = spec.target.block_count.unwrap_or(1);
    if spec.setup.cache == CacheMode::Warm {
        if !warm_interruptibly(&spec.target.path, file.size_bytes, stop)? {
            return Ok(None);
        }
    } else {
        crate::cache::prepare(&spec.target.path, spec.setup.cache, file.size_bytes)?;
    }
    // Unknown residency (a file this user may not write) stays unknown: NaN, an empty cell.
    let residency = crate::cache::residency(&spec.target.path).ok();
    let command_os = command_text(&cmd.template, &spec.target.path, bs, count);
    // For messages only: the command runs as `command_os`, byte for byte.
    let text = crate::text::shown_os(&command_os).into_owned();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(&command_os)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    // This call stays libc, not rustix's `set_parent_process_death_signal`: `pre_exec` is unsafe
    // whatever the closure calls, so the wrapper would remove no `unsafe`, and between fork and
    // exec only async-signal-safe calls are allowed, which libc's prctl is (a bare system call)
    // while rustix makes no such promise for its wrappers.
    // SAFETY: the closure runs in the child between fork and exec and calls only prctl(2),
    // which is async-signal-safe; it touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    become_subreaper();
    // The guard starts before the clock: spawning it must not overlap the measured command.
    let mut group = GroupGuard::new();
    let mut child = command
        .spawn()
        .with_context(|| format!("starting `{text}`"))?;
    let started = Instant::now();
    let pgid = child.id() as i32;
    group.watch(pgid);
    let mut stderr = child.stderr.take();
    let (err_tx, err_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        let _ = err_tx.send(s);
    });
    let rx = spawn_result(move || child.wait().map(|st| (st, Instant::now())));
    let timed_out = || {
        anyhow!(
            "`{text}` ran longer than timeout = {} s (processes it started included) and was \
             killed",
            cmd.timeout.as_secs_f64()
        )
    };
    let (status, sh_ended) = loop {
        match rx.recv_timeout(POLL) {
            Ok(r) => break r.context("waiting for the command")?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(anyhow!("lost the command's status"))
            }
            Err(RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::Relaxed) {
                    return Ok(None); // `group` kills everything on drop
                }
                if started.elapsed() > cmd.timeout {
                    return Err(timed_out());
                }
            }
        }
    };
    // The shell is done; what it started in the background is part of the command too.
    let mut group = group;
    let mut ended = sh_ended;
    let guard_pid = group.guard.as_ref().map(|g| g.id() as i32);
    loop {
        // A cheap kill(0) while the group lives; the /proc scan for processes that left it
        // (`setsid`) only once the group is gone, and then at a slower pace.
        let in_group = group_alive(pgid);
        if !in_group && orphans(guard_pid).is_empty() {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        if started.elapsed() > cmd.timeout {
            return Err(timed_out());
        }
        std::thread::sleep(if in_group { GROUP_POLL } else { ORPHAN_POLL });
        ended = Instant::now();
    }
    group.ended = true;
    drop(group);
    let stderr_text = err_rx.recv_timeout(STDERR_WAIT).unwrap_or_default();
    let program = program_of(&text);
    let mut r = RunResult {
        identity: crate::measure::result::Identity {
            host: host_name(),
            file: spec.target.path.display().to_string(),
            file_size_bytes: file.size_bytes,
            ..Default::default()
        },
        setup: crate::config::RecordedSetup {
            op: Op::Read.into(),
            method: Label::of_text(&program),
            pattern: Pattern::Sequential.into(),
            cache: spec.setup.cache.into(),
            block_size_bytes: bs,
            threads: 1,
            queue_depth: 1,
            ..Default::default()
        },
        figures: crate::measure::result::Figures {
            block_count: count,
            bytes: cmd
                .bytes
                .unwrap_or(bs.saturating_mul(count).min(file.size_bytes)),
            seconds: ended.duration_since(started).as_secs_f64(),
            ops: count,
            residency_before_pct: residency.map_or(f64::NAN, |r| r.percent()),
            ..Default::default()
        },
        ..Default::default()
    };
    r.set_rates();
    if !status.success() {
        let last = stderr_text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        r.figures.error = format!("`{text}` failed ({status}): {last}");
    }
    Ok(Some(r))
}

/// How often the end of a command's background processes is checked.
const GROUP_POLL: std::time::Duration = std::time::Duration::from_millis(2);
/// How often processes that left the group are checked (a scan of /proc; their end is timed to
/// this resolution).
const ORPHAN_POLL: std::time::Duration = std::time::Duration::from_millis(10);
/// Longest wait for the stderr of a command whose group has ended (a process that left the
/// group with `setsid` could hold it open).
const STDERR_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Whether any live (not zombie) process is in group `pgid`. Orphans are reaped by init (or
/// not, in some containers), so zombies are not counted.
fn group_alive(pgid: i32) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        // kill(2) with signal 0 only checks for existence (an error, EPERM too, is "no").
        return Pid::from_raw(pgid).is_some_and(|g| test_kill_process_group(g).is_ok());
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .any(|stat| {
            // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
            let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                return false;
            };
            let mut f = rest.split_whitespace();
            let state = f.next();
            let pgrp = f.nth(1).and_then(|g| g.parse::<i32>().ok());
            pgrp == Some(pgid) && state != Some("Z") && state != Some("X")
        })
}

/// Makes this process the subreaper of its descendants (once; later calls are no-ops).
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // prctl(PR_SET_CHILD_SUBREAPER, nonzero): rustix takes the nonzero flag as a pid.
        if let Err(e) = set_child_subreaper(Some(getpid())) {
            crate::eprintln_shown!(
                "note: cannot become a child subreaper ({}); a command's `setsid` processes \
                 may outlive their run",
                std::io::Error::from(e)
            );
        }
    });
}

/// Processes reparented to this one (a command's leftovers: their parent exited), other than
/// `except` (the guard, a child of ours by birth). Zombies among them are reaped on the way.
fn orphans(except: Option<i32>) -> Vec<i32> {
    let me = getpid().as_raw_pid();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut alive = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if Some(pid) == except {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let (Some(state), Some(ppid)) = (f.next(), f.next().and_then(|p| p.parse::<i32>().ok()))
        else {
            continue;
        };
        if ppid != me {
            continue;
        }
        if state == "Z" {
            // waitpid(2) on a pid that is our exited child; its status is not read.
            if let Some(p) = Pid::from_raw(pid) {
                let _ = waitpid(Some(p), WaitOptions::NOHANG);
            }
        } else {
            alive.push(pid);
        }
    }
    alive
}

/// Kills and reaps every process reparented to this one (see [`orphans`]); repeated while
/// killing one hands its own children to us, a bounded number of times.
fn kill_orphans(except: Option<i32>) {
    for _ in 0..50 {
        let left = orphans(except);
        if left.is_empty() {
            return;
        }
        // kill(2) and waitpid(2) on a child of ours (reparented); errors change nothing here.
        for pid in left.into_iter().filter_map(Pid::from_raw) {
            let _ = kill_process(pid, Signal::KILL);
            let _ = waitpid(Some(pid), WaitOptions::empty());
        }
    }
}

/// Kills a command's process group when dropped (every way out of a run), and while it lives
/// keeps a guard process that kills the group if the batch dies without dropping it.
struct GroupGuard {
    /// The command's process group, once started.
    pgid: Option<i32>,
    guard: Option<std::process::Child>,
    /// The group was seen empty: killing it now could hit a new group that reused the id.
    ended: bool,
}

impl GroupGuard {
    fn new() -> GroupGuard {
        // The guard reads the group id, then waits for a line on a pipe that only this process
        // holds: "done" when the run ended normally, end-of-file when the batch died (the kernel
        // closes the pipe). An empty group id (the batch died first) kills nothing.
        let guard = Command::new("sh")
            .arg("-c")
            .arg(r#"read pgid; read line; [ "$line" = done ] || [ -z "$pgid" ] || kill -s KILL -- "-$pgid" 2>/dev/null"#)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .ok();
        GroupGuard {
            pgid: None,
            guard,
            ended: false,
        }
    }

    /// Tells the guard which group to kill should the batch die.
    fn watch(&mut self, pgid: i32) {
        self.pgid = Some(pgid);
        if let Some(stdin) = self.guard.as_mut().and_then(|g| g.stdin.as_mut()) {
            let _ = writeln!(stdin, "{pgid}");
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let (Some(pgid), false) = (self.pgid, self.ended) {
            // kill(2) on the process group created for the command.
            if let Some(g) = Pid::from_raw(pgid) {
                let _ = kill_process_group(g, Signal::KILL);
            }
        }
        if self.pgid.is_some() {
            kill_orphans(self.guard.as_ref().map(|g| g.id() as i32));
        }
        if let Some(mut g) = self.guard.take() {
            if let Some(mut stdin) = g.stdin.take() {
                if self.pgid.is_none() {
                    let _ = stdin.write_all(b"\n");
                }
                let _ = stdin.write_all(b"done\n");
            }
            let _ = g.wait();
        }
    }
}

/// The program a command line starts (`dd` for `dd if=...`): the `method` column of its rows.
pub fn program_of(command: &str) -> String {
    command
        .split_whitespace()
        .next()
        .unwrap_or("command")
        .trim_end_matches(';')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_placeholder_names_a_non_utf8_path_byte_for_byte_not_a_lossy_decoy() {
        let d = tempfile::tempdir().unwrap();
        let real_dir = d.path().join(std::ffi::OsStr::from_bytes(b"o\xff"));
        let decoy_dir = d.path().join("o\u{FFFD}");
        std::fs::create_dir(&real_dir).unwrap();
        std::fs::create_dir(&decoy_dir).unwrap();
        std::fs::write(real_dir.join("it's"), b"real!").unwrap();
        std::fs::write(decoy_dir.join("it's"), b"decoy").unwrap();
        let text = command_text(
            "head -c {block_size} {file} > {file}.out",
            &real_dir.join("it's"),
            5,
            1,
        );
        let status = Command::new("sh").arg("-c").arg(&text).status().unwrap();
        assert!(status.success());
        assert_eq!(std::fs::read(real_dir.join("it's.out")).unwrap(), b"real!");
        assert!(!decoy_dir.join("it's.out").exists(), "the decoy was named");
    }

    #[test]
    fn a_path_holding_a_placeholder_stays_a_path() {
        let text = command_text("cat {file}", Path::new("/d/{block_size}"), 4096, 1);
        assert_eq!(text, "cat '/d/{block_size}'");
    }
}
