//! The `command` kind: an external command (`dd if={file} ...`) timed under the same cache control
//! and repetitions as diskscope's own runs, so "compare with dd" is one experiment. It runs as
//! `sh -c` in its own process group, so Ctrl-C or the timeout can kill it with everything it
//! started.

use super::exec::{spawn_result, warm_interruptibly, POLL};
use super::files::FilePlan;
use super::plan::CommandPlan;
use crate::config::{CacheMode, RunSpec};
use crate::measure::RunResult;
use crate::runner::host_name;
use anyhow::{anyhow, Context};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Instant;

/// Quotes a path for `sh`.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// One repetition of a `command` point: cache control, then `sh -c COMMAND` timed from spawn to
/// exit. None when the sweep was stopped during it (the command's process group is killed).
pub fn run_command(
    spec: &RunSpec,
    cmd: &CommandPlan,
    file: &FilePlan,
    stop: &AtomicBool,
) -> anyhow::Result<Option<RunResult>> {
    let bs = spec.block_size_bytes;
    let count = spec.block_count.unwrap_or(1);
    if spec.cache == CacheMode::Warm {
        if !warm_interruptibly(&spec.path, file.size_bytes, stop)? {
            return Ok(None);
        }
    } else {
        crate::cache::prepare(&spec.path, spec.cache, file.size_bytes)?;
    }
    let residency = crate::cache::residency(&spec.path).unwrap_or_default();
    let text = cmd
        .template
        .replace("{file}", &shell_quote(&spec.path.display().to_string()))
        .replace("{block_size}", &bs.to_string())
        .replace("{block_count}", &count.to_string());
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(&text)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .with_context(|| format!("starting `{text}`"))?;
    let started = Instant::now();
    let pgid = child.id() as i32;
    let mut stderr = child.stderr.take();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let rx = spawn_result(move || child.wait().map(|st| (st, Instant::now())));
    let kill = || {
        // SAFETY: kill(2) on the process group we created for the command; no memory involved.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    };
    let (status, ended) = loop {
        match rx.recv_timeout(POLL) {
            Ok(r) => break r.context("waiting for the command")?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(anyhow!("lost the command's status"))
            }
            Err(RecvTimeoutError::Timeout) => {
                if stop.load(Ordering::Relaxed) {
                    kill();
                    return Ok(None);
                }
                if started.elapsed() > cmd.timeout {
                    kill();
                    return Err(anyhow!(
                        "`{text}` ran longer than timeout = {} s and was killed",
                        cmd.timeout.as_secs_f64()
                    ));
                }
            }
        }
    };
    let stderr_text = err_reader.join().unwrap_or_default();
    let program = program_of(&text);
    let mut r = RunResult {
        host: host_name(),
        file: spec.path.display().to_string(),
        file_size_bytes: file.size_bytes,
        operation: "read".into(),
        method: program,
        pattern: "sequential".into(),
        cache: spec.cache.to_string(),
        block_size_bytes: bs,
        block_count: count,
        threads: 1,
        queue_depth: 1,
        bytes: cmd
            .bytes
            .unwrap_or(bs.saturating_mul(count).min(file.size_bytes)),
        seconds: ended.duration_since(started).as_secs_f64(),
        ops: count,
        residency_before_pct: residency.percent(),
        ..Default::default()
    };
    r.set_rates();
    if !status.success() {
        let last = stderr_text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        r.error = format!("`{text}` failed ({status}): {last}");
    }
    Ok(Some(r))
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
