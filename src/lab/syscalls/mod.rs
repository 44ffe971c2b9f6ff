//! `syscalls FILE [--seconds S]`: the lab's part 5, the cost of a system call. Each call runs in
//! batches between clock reads until its time is up; we report calls per second and ns per call.
//! Reading 1 byte at a time is dominated by this cost, which is why block size matters.
//!
//! The measured calls go through glibc on purpose (`std` for read, pread and write, `libc` for
//! lseek, getpid, getuid and fstat): the figure is what a C program pays for the call, wrapper
//! included. rustix's safe wrappers are inline system calls without that wrapper (and its
//! `fstat` is another system call than glibc's `fstatat`), so they would measure something else;
//! these calls stay `unsafe`, each with its `SAFETY:` reason.
//!
//! The lab kind `syscalls`: [`SyscallsParams`] are the command line's flags and a sweep
//! experiment's keys at once; [`run`] measures; [`command`] prints, `sweep` records.

pub mod command;

use crate::config::usage;
use crate::explain::context::NET_FS;
use crate::explain::verdict::{Code, Reason, Verdict, MIN_OPS, MIN_SECONDS};
use anyhow::Context;
use clap::Args;
use serde::Deserialize;
use serde::Serialize;
use std::fs::File;
use std::hint::black_box;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Calls between two clock reads.
const BATCH: u64 = 256;

/// The calling thread's time waiting on a run queue, ns (`/proc/thread-self/schedstat`).
fn thread_run_delay_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// One measured system call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyscallResult {
    /// What was called.
    pub syscall: String,
    /// Calls made.
    pub calls: u64,
    /// Time spent, seconds.
    pub seconds: f64,
    /// Calls per second.
    pub calls_per_s: f64,
    /// Nanoseconds per call.
    pub ns_per_call: f64,
    /// Share of the measurement during which some task waited for a CPU (pressure stall
    /// information), percent; and the measuring thread's own wait for one, a share of its time
    /// (`schedstat`). Not columns: they feed the verdict's `cpu_contended`.
    #[serde(skip)]
    pub psi_cpu_some_pct: Option<f64>,
    #[serde(skip)]
    pub own_cpu_wait_share: Option<f64>,
    /// Can the figure be trusted as this call's cost (issue 23): `ok` or `suspect`, with the
    /// reason codes and their sentences (see [`judge_call`]).
    pub verdict: String,
    pub reasons: String,
    pub why: String,
}

/// The calls that go to the file (the others never leave the kernel's own tables).
const FILE_CALLS: [&str; 4] = ["read 1 B", "pread 1 B", "lseek", "fstat"];

/// The verdict of one measured call, where the result verdict's rules apply to a call's cost
/// (docs/explain.md, "syscalls"):
/// * `too_short`: measured for less than [`MIN_SECONDS`] or fewer than [`MIN_OPS`] calls — one
///   preemption (a 4 ms scheduler tick) is then 8% or more of the figure;
/// * `not_a_disk`, for the calls that touch the file (read, pread, lseek, fstat) on a network
///   or FUSE filesystem (`fs_type`): the call may go to a server or a daemon, so the figure is
///   that round trip, not the system call's cost.
///
/// A file in RAM (tmpfs) is not suspect here: the lab measures what a call costs, and a 1-byte
/// read is served from memory whatever the filesystem (that is the point of the lab).
pub fn judge_call(r: &SyscallResult, fs_type: Option<&str>) -> Verdict {
    let mut reasons = Vec::new();
    if r.seconds < MIN_SECONDS {
        reasons.push(Reason {
            code: Code::TooShort,
            sentence: format!(
                "{:.3} s is shorter than {MIN_SECONDS} s: one preemption is a large share of \
                 it; use --seconds 0.5",
                r.seconds
            ),
        });
    } else if r.calls < MIN_OPS {
        reasons.push(Reason {
            code: Code::TooShort,
            sentence: format!("{} calls are too few (at least {MIN_OPS})", r.calls),
        });
    }
    let remote =
        fs_type.filter(|t| NET_FS.iter().any(|n| t.starts_with(n)) || t.starts_with("fuse"));
    if let Some(t) = remote.filter(|_| FILE_CALLS.contains(&r.syscall.as_str())) {
        reasons.push(Reason {
            code: Code::NotADisk,
            sentence: format!(
                "the file is on {}, a network or userspace filesystem: {} may go to the server \
                 or the daemon, so the figure is that round trip, not the call's cost",
                crate::text::shown(t),
                r.syscall
            ),
        });
    }
    if let Some(s) =
        crate::explain::verdict::contention(r.psi_cpu_some_pct, r.own_cpu_wait_share, None)
    {
        reasons.push(Reason {
            code: Code::CpuContended,
            sentence: s,
        });
    }
    Verdict::of(reasons)
}

/// Judges every result ([`judge_call`]) of calls made on a file on `fs_type`.
pub fn judge_all(results: &mut [SyscallResult], fs_type: Option<&str>) {
    for r in results {
        let v = judge_call(r, fs_type);
        r.verdict = v.verdict.as_str().to_string();
        r.reasons = v.codes();
        r.why = v.sentences();
    }
}

fn measure(
    name: &str,
    budget: Duration,
    mut call: impl FnMut() -> std::io::Result<()>,
) -> anyhow::Result<SyscallResult> {
    let pressure = crate::facts::pressure::Pressure::now();
    let wait = thread_run_delay_ns();
    let start = Instant::now();
    let mut calls = 0u64;
    loop {
        for _ in 0..BATCH {
            call().with_context(|| format!("{name} failed"))?;
        }
        calls += BATCH;
        if start.elapsed() >= budget {
            break;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let psi_cpu_some_pct = crate::facts::pressure::share_pct(
        pressure.cpu_some_us,
        crate::facts::pressure::Pressure::now().cpu_some_us,
        seconds * 1e6,
    );
    let own_cpu_wait_share = wait
        .zip(thread_run_delay_ns())
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e9 / seconds.max(1e-9));
    Ok(SyscallResult {
        syscall: name.to_string(),
        calls,
        seconds,
        psi_cpu_some_pct,
        own_cpu_wait_share,
        calls_per_s: calls as f64 / seconds,
        ns_per_call: seconds * 1e9 / calls as f64,
        verdict: String::new(),
        reasons: String::new(),
        why: String::new(),
    })
}

/// Measures every system call of the lab on `file`, `budget` each.
pub fn measure_all(file: &Path, budget: Duration) -> anyhow::Result<Vec<SyscallResult>> {
    crate::fsguard::check_input_if_present(file, "FILE").map_err(|e| usage(e.to_string()))?;
    crate::runner::test_hook("syscalls-before-open");
    // O_NONBLOCK, then a look at the descriptor: a FIFO renamed over the path since the check
    // is refused instead of blocking the open forever.
    let f = crate::fsguard::open_then_check(
        std::fs::OpenOptions::new().read(true),
        file,
        0,
        "FILE",
        false,
    )
    .map_err(|e| match e {
        crate::fsguard::OpenError::Refused(refused) => usage(refused.to_string()),
        // A FILE that cannot be used as given is bad usage (exit 2), like every argument.
        crate::fsguard::OpenError::Io(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::ENOENT | libc::EACCES | libc::EPERM | libc::EISDIR)
            ) =>
        {
            usage(format!(
                "FILE: cannot open {}: {e}",
                crate::text::shown_path(file)
            ))
        }
        crate::fsguard::OpenError::Io(e) => anyhow::Error::new(e).context(format!(
            "FILE: cannot open {}",
            crate::text::shown_path(file)
        )),
    })?;
    if f.metadata()?.len() == 0 {
        return Err(usage(format!(
            "FILE: {} is empty; the read tests need at least 1 byte",
            crate::text::shown_path(file)
        )));
    }
    // The same file, not whatever the path names by now.
    let g = crate::fsguard::reopen(&f, 0)?;
    measure_open(f, g, budget)
}

/// [`measure_all`] on open descriptors of one file: `f` for `read` (its offset moves), `g` for
/// the rest. (The temp file of `syscalls` without FILE is measured this way, already unlinked.)
fn measure_open(mut f: File, g: File, budget: Duration) -> anyhow::Result<Vec<SyscallResult>> {
    let mut byte = [0u8; 1];
    let mut out = Vec::new();
    out.push(measure("read 1 B", budget, || {
        if f.read(&mut byte)? == 0 {
            f.seek(SeekFrom::Start(0))?;
        }
        black_box(&byte);
        Ok(())
    })?);
    out.push(measure("pread 1 B", budget, || {
        black_box(g.read_at(&mut byte, 0)?);
        Ok(())
    })?);
    let fd = g.as_raw_fd();
    out.push(measure("lseek", budget, || {
        // SAFETY: plain syscall on a descriptor that stays open for the whole measurement.
        let r = unsafe { libc::lseek(fd, 0, libc::SEEK_SET) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    })?);
    out.push(measure("getpid", budget, || {
        // SAFETY: getpid has no preconditions.
        black_box(unsafe { libc::getpid() });
        Ok(())
    })?);
    out.push(measure("getuid", budget, || {
        // SAFETY: getuid has no preconditions.
        black_box(unsafe { libc::getuid() });
        Ok(())
    })?);
    out.push(measure("fstat", budget, || {
        // SAFETY: `st` is a properly sized out-parameter and `fd` is open.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        black_box(&st);
        Ok(())
    })?);
    let mut null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .context("opening /dev/null")?;
    out.push(measure("write 1 B /dev/null", budget, || {
        black_box(null.write(&byte)?);
        Ok(())
    })?);
    match io_uring::IoUring::new(8) {
        Ok(mut ring) => out.push(measure("io_uring nop", budget, || {
            let nop = io_uring::opcode::Nop::new().build().user_data(1);
            // SAFETY: a Nop references no memory.
            unsafe { ring.submission().push(&nop) }
                .map_err(|_| std::io::Error::other("submission queue full"))?;
            ring.submit_and_wait(1)?;
            for c in ring.completion() {
                black_box(c.result());
            }
            Ok(())
        })?),
        Err(e) => crate::eprintln_shown!(
            "note: io_uring nop skipped: io_uring is not available here ({e})"
        ),
    }
    Ok(out)
}

/// Renders the results as an aligned table.
pub fn table(results: &[SyscallResult]) -> String {
    let mut s = format!(
        "{:<20} {:>12} {:>9} {:>14} {:>9}  verdict\n",
        "syscall", "calls", "seconds", "calls/s", "ns/call"
    );
    for r in results {
        let verdict = match r.verdict.as_str() {
            "suspect" => format!("suspect ({})", r.reasons.replace(';', ", ")),
            v => v.to_string(),
        };
        s += &format!(
            "{:<20} {:>12} {:>9.3} {:>14.0} {:>9.1}  {verdict}\n",
            r.syscall, r.calls, r.seconds, r.calls_per_s, r.ns_per_call
        );
    }
    s.lines().map(str::trim_end).collect::<Vec<_>>().join("\n") + "\n"
}

/// Renders the results as CSV (columns from [`SyscallResult`]).
pub fn csv(results: &[SyscallResult]) -> anyhow::Result<String> {
    crate::export::csv::to_csv(results)
}

/// `syscalls [FILE] [--seconds S]`: the parameters of the lab kind.
#[derive(Debug, Clone, Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyscallsParams {
    /// File used for read/pread/lseek/fstat (made in the temp directory when omitted)
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// Seconds to spend on each system call
    #[arg(
        long,
        default_value_t = 0.5,
        value_name = "S",
        allow_negative_numbers = true
    )]
    #[serde(default = "default_seconds")]
    pub seconds: f64,
    /// Print CSV instead of a table
    #[arg(long)]
    #[serde(skip)]
    pub csv: bool,
    /// Print one JSON document (context, setup, every call's figures) instead of a table
    #[arg(long, conflicts_with = "csv")]
    #[serde(skip)]
    pub json: bool,
    /// The calls as CSV (--export-csv; what --csv prints), the --json document
    /// (--export-json), the figure of their cost (--export-svg) or a page with both
    /// (--export-html), each into a new file
    #[command(flatten)]
    #[serde(skip)]
    pub export: crate::export::manager::ExportArgs,
    /// Replace existing --export-* files
    #[arg(long)]
    #[serde(skip)]
    pub force: bool,
}

fn default_seconds() -> f64 {
    0.5
}

impl SyscallsParams {
    /// Range checks; errors name the flag (`--seconds`), which the sweep locates as its key.
    pub fn validate(&self) -> Result<Duration, crate::config::UsageError> {
        crate::config::check_seconds(self.seconds, "--seconds")
    }
}

/// Measures every call of the lab on the parameters' file, or on a 1 MiB temp file that is
/// unlinked as soon as it is written and measured through its open descriptors, so no signal
/// (not even SIGKILL) can leave it behind. Returns the file (or temp directory) measured.
pub fn run(p: &SyscallsParams) -> anyhow::Result<(PathBuf, Vec<SyscallResult>)> {
    let (at, mut results) = measure_params(p)?;
    let fs = crate::explain::context::Context::collect(&at).filesystem;
    judge_all(&mut results, fs.as_ref().map(|f| f.fs_type.as_str()));
    Ok((at, results))
}

fn measure_params(p: &SyscallsParams) -> anyhow::Result<(PathBuf, Vec<SyscallResult>)> {
    let budget = p.validate()?;
    match &p.file {
        Some(f) => Ok((f.clone(), measure_all(f, budget)?)),
        None => {
            let dir = std::env::temp_dir();
            let path = dir.join(format!("diskscope-syscalls-{}", std::process::id()));
            let (mut f, created) = crate::fsguard::create_exclusive(&path)
                .map_err(|e| anyhow::anyhow!(crate::fsguard::create_error(&path, &e)))?;
            let opened = f
                .write_all(&[7u8; 1 << 20])
                .and_then(|_| f.rewind())
                .and_then(|_| File::open(&path));
            created.remove();
            let g = opened.map_err(|e| {
                anyhow::anyhow!(
                    "writing the temp file {}: {e}; set TMPDIR to a directory with 1 MiB free, \
                     or give a FILE",
                    crate::text::shown_path(&path)
                )
            })?;
            Ok((dir, measure_open(f, g, budget)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(syscall: &str, calls: u64, seconds: f64) -> SyscallResult {
        SyscallResult {
            syscall: syscall.into(),
            calls,
            seconds,
            calls_per_s: calls as f64 / seconds,
            ns_per_call: seconds * 1e9 / calls as f64,
            psi_cpu_some_pct: None,
            own_cpu_wait_share: None,
            verdict: String::new(),
            reasons: String::new(),
            why: String::new(),
        }
    }

    #[test]
    fn a_call_measured_while_its_thread_waited_for_a_cpu_is_cpu_contended() {
        let mut r = result("getpid", 1 << 20, 0.5);
        r.psi_cpu_some_pct = Some(90.0);
        r.own_cpu_wait_share = Some(0.4);
        let v = judge_call(&r, Some("ext4"));
        assert_eq!(v.codes(), "cpu_contended");
        assert!(v.sentences().contains("90%"), "{}", v.sentences());
        // A busy machine that never took this thread's CPU: nothing to say.
        r.own_cpu_wait_share = Some(0.01);
        assert_eq!(judge_call(&r, Some("ext4")).codes(), "");
    }

    #[test]
    fn a_call_measured_too_briefly_is_too_short_and_a_long_one_ok_even_on_tmpfs() {
        let v = judge_call(&result("getpid", 100_000, 0.01), Some("ext4"));
        assert_eq!(v.codes(), "too_short");
        assert!(v.sentences().contains("0.010 s"), "{}", v.sentences());
        assert_eq!(
            judge_call(&result("read 1 B", 1 << 20, 0.5), Some("tmpfs")).codes(),
            ""
        );
        assert_eq!(
            judge_call(&result("getpid", 50, 0.5), None).codes(),
            "too_short"
        );
    }

    #[test]
    fn a_file_call_on_a_network_filesystem_is_not_a_disk_but_getpid_there_is_ok() {
        let mut rs = vec![
            result("pread 1 B", 1 << 20, 0.5),
            result("getpid", 1 << 20, 0.5),
        ];
        judge_all(&mut rs, Some("nfs4"));
        assert_eq!(
            (rs[0].verdict.as_str(), rs[0].reasons.as_str()),
            ("suspect", "not_a_disk")
        );
        assert!(rs[0].why.contains("nfs4"), "{}", rs[0].why);
        assert_eq!((rs[1].verdict.as_str(), rs[1].reasons.as_str()), ("ok", ""));
        let t = table(&rs);
        assert!(t.lines().next().unwrap().ends_with("verdict"), "{t}");
        assert!(t.contains("suspect (not_a_disk)"), "{t}");
    }
}
