//! The I/O steps of `limits` and their order: the exclusive test file, the per-method costs,
//! the device ceilings, each through the same runner as `run` so a ceiling and a measurement
//! share their per-operation overhead; [`measure`] runs every step, memory ones included, and
//! builds the [`Profile`].

use super::budget::*;
use super::machine::*;
use super::memory::*;
use super::runs::{run_read, timed};
use crate::config::spec::RunSpec;
use crate::config::{usage, Buffers, CacheMode, Method, Pattern};
use crate::explain::context::Context;
use crate::explain::profile::{
    memory_words, now_unix_s, same_memory, DeviceCeiling, MethodCost, Profile, Spread, Stalls,
    PROFILE_VERSION,
};
use crate::measure::RunResult;
use anyhow::{bail, Context as _};
use indicatif::{ProgressBar, ProgressStyle};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A test file we created; removed on drop.
pub(super) struct OwnedFile(PathBuf);

impl Drop for OwnedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Creates the test file exclusively in `dir` with the deterministic pattern, synced to disk.
pub(super) fn create_test_file(
    dir: &Path,
    bytes: u64,
    stop: &AtomicBool,
) -> anyhow::Result<OwnedFile> {
    let free = crate::fsguard::free_bytes(dir).unwrap_or(u64::MAX);
    if free < bytes.saturating_mul(2) {
        bail!(
            "not enough free space in {} for a {} MiB test file ({} MiB free); free some space or give FILE",
            crate::text::shown_path(dir),
            bytes >> 20,
            free >> 20
        );
    }
    let path = dir.join(format!(".diskscope-limits-{}.bin", std::process::id()));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .with_context(|| format!("creating the test file {}", crate::text::shown_path(&path)))?;
    let owned = OwnedFile(path);
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0;
    while off < bytes {
        if stop.load(Ordering::Relaxed) {
            bail!("interrupted");
        }
        let n = (buf.len() as u64).min(bytes - off) as usize;
        crate::pattern::fill(crate::pattern::DEFAULT_SEED, off, &mut buf[..n]);
        f.write_all_at(&buf[..n], off).with_context(|| {
            format!(
                "writing the test file {}",
                crate::text::shown_path(&owned.0)
            )
        })?;
        off += n as u64;
    }
    f.sync_all().context("syncing the test file")?;
    Ok(owned)
}

pub(super) fn progress(steps: u64) -> ProgressBar {
    let pb = ProgressBar::new(steps);
    pb.set_style(
        ProgressStyle::with_template("limits [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// Measures every ceiling (see the module doc).
pub fn measure(
    file: Option<&Path>,
    where_: &Path,
    ctx: Context,
    budget: Budget,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<Profile> {
    let nproc = ctx.cpu_count.max(1);
    let counts = thread_counts(nproc);
    let steps = 1 + Method::ALL.len() as u64 + counts.len() as u64 + 8 + 1;
    let pb = progress(steps);
    let mut notes = Vec::new();
    let watch = LoadWatch::start();
    let mut spread = Spread {
        tries: TRIES,
        ..Default::default()
    };

    pb.set_message("creating the test file");
    let owned = match file {
        Some(_) => None,
        None => Some(create_test_file(where_, budget.test_file_bytes, stop)?),
    };
    let path: PathBuf = match (&owned, file) {
        (Some(o), _) => o.0.clone(),
        (None, Some(f)) => f.to_path_buf(),
        (None, None) => unreachable!("a test file is made when no FILE is given"),
    };
    let file_bytes = std::fs::metadata(&path)?.len();
    if file_bytes < 1 << 20 {
        return Err(usage(format!(
            "FILE: {} has {file_bytes} bytes; limits needs at least 1 MiB to read",
            crate::text::shown_path(&path)
        )));
    }
    pb.inc(1);

    let mut stalls = Stalls::default();
    // 1. Per-operation cost: 1-byte reads of the first MiB, cached.
    let watch_family = StallWatch::start();
    let mut methods = Vec::new();
    for &m in Method::ALL {
        pb.set_message(format!("{m}: 1-byte reads"));
        let mut s = timed(&path, m, 1, budget.per_op_step / TRIES);
        s.target.block_count = Some(1 << 20);
        s.setup.cache = CacheMode::Warm;
        let tries: anyhow::Result<Vec<f64>> = (0..TRIES + 2)
            .map(|_| run_read(&s, stop).map(|r| r.figures.iops))
            .collect();
        match tries.map(|t| best_and_spread(&t)) {
            Ok((ops_per_s, sp)) => {
                spread.methods_pct = spread.methods_pct.max(sp);
                methods.push(MethodCost {
                    method: m,
                    ops_per_s,
                })
            }
            Err(e) if stop.load(Ordering::Relaxed) => return Err(e),
            Err(e) => notes.push(format!("{m} per-operation cost not measured: {e:#}")),
        }
        pb.inc(1);
    }

    stalls.methods = watch_family.finish();

    // 2. Memory ceilings.
    let watch_family = StallWatch::start();
    let mut memory = Vec::new();
    let src_bytes = budget
        .memory_src_bytes
        .min((crate::engine::setup::mem_available_bytes().unwrap_or(0) / 8) as usize);
    if src_bytes < 16 << 20 {
        notes.push("memory ceiling not measured: less than 128 MiB of memory available".into());
        pb.inc(counts.len() as u64);
    } else {
        let mut src = vec![0u8; src_bytes];
        crate::pattern::fill(crate::pattern::DEFAULT_SEED, 0, &mut src);
        for &t in &counts {
            if stop.load(Ordering::Relaxed) {
                bail!("interrupted");
            }
            pb.set_message(format!("memory: copy and XOR on {t} thread(s)"));
            let (mut m, sp) = memory_ceiling(&src, t, budget.memory_step);
            let t_call_s = methods
                .iter()
                .find(|c| c.method == Method::Read)
                .map_or(0.0, |c| 1.0 / c.ops_per_s);
            let (levels, level_sp) =
                read_levels(&path, file_bytes, t, t_call_s, budget.memory_step, stop)?;
            m.read_levels = levels;
            spread.memory_pct = spread.memory_pct.max(sp).max(level_sp);
            memory.push(m);
            pb.inc(1);
        }
    }

    stalls.memory = watch_family.finish();

    // 3. The device with O_DIRECT, into huge-page buffers (what `auto` gives O_DIRECT) and
    // into plain pages (a 1 MiB request into 4 KiB pages may be split).
    let watch_family = StallWatch::start();
    let mut devices: Vec<DeviceCeiling> = Vec::new();
    for want in [Buffers::Auto, Buffers::Plain] {
        let d = device_ceiling(&path, budget, want, stop, &pb, &mut notes, &mut spread)?;
        match d {
            Some(d) if !devices.iter().any(|o| same_memory(o.buffers, d.buffers)) => {
                devices.push(d)
            }
            Some(_) => {}
            // O_DIRECT is refused here: the other memory would be refused too.
            None if devices.is_empty() => {
                pb.inc(4);
                break;
            }
            None => {}
        }
    }
    if devices.is_empty() {
        spread.device_pct = None;
    }
    stalls.device = watch_family.finish();

    // 4. Cold readahead: buffered sequential reads of a file just dropped from the cache, best
    // of the tries where the eviction held.
    pb.set_message("device: cold readahead (1M reads)");
    let watch_family = StallWatch::start();
    let mut s = RunSpec::new(&path);
    s.setup.method = Method::Read;
    s.setup.cache = CacheMode::Cold;
    s.target.block_count = Some(file_bytes.div_ceil(1 << 20));
    s.target.duration = Some(budget.device_step * 2 / TRIES);
    let mut readahead_tries = Vec::new();
    let mut readahead_note = None;
    for _ in 0..TRIES {
        match run_read(&s, stop) {
            Ok(r) if r.figures.residency_before_pct < 10.0 => readahead_tries.push(r.figures.mib_s),
            Ok(r) => {
                readahead_note = Some(format!(
                    "cold readahead not measured: {:.0}% of the file stayed cached after eviction",
                    r.figures.residency_before_pct
                ))
            }
            Err(e) if stop.load(Ordering::Relaxed) => return Err(e),
            Err(e) => readahead_note = Some(format!("cold readahead not measured: {e:#}")),
        }
    }
    stalls.readahead = watch_family.finish();
    spread.stalls = Some(stalls);
    let cold_readahead_mib_s = if readahead_tries.is_empty() {
        notes.extend(readahead_note);
        None
    } else {
        let (best, sp) = best_and_spread(&readahead_tries);
        spread.readahead_pct = Some(sp);
        Some(best)
    };
    pb.inc(1);
    pb.finish_and_clear();
    drop(owned);
    Ok(Profile {
        version: PROFILE_VERSION,
        measured_unix_s: now_unix_s(),
        context: ctx,
        methods,
        memory,
        devices,
        cold_readahead_mib_s,
        notes,
        spread: Some(spread),
        provenance: Some(watch.finish(&path, file_bytes, budget.quick)),
        cores_now: None,
    })
}

/// The four O_DIRECT figures of the device with buffers of `buffers` (`auto`: the most
/// contiguous memory offered), recording the memory the runs obtained; None when O_DIRECT is
/// refused or a figure the model needs could not be had (said in `notes`).
pub(super) fn device_ceiling(
    path: &Path,
    budget: Budget,
    buffers: Buffers,
    stop: &Arc<AtomicBool>,
    pb: &ProgressBar,
    notes: &mut Vec<String>,
    spread: &mut Spread,
) -> anyhow::Result<Option<DeviceCeiling>> {
    let direct_specs = [
        (
            Method::Pread,
            1u64 << 20,
            1u32,
            Pattern::Sequential,
            "sequential 1M, QD 1",
        ),
        (
            Method::IoUring,
            1 << 20,
            32,
            Pattern::Sequential,
            "sequential 1M, QD 32",
        ),
        (Method::Pread, 4096, 1, Pattern::Random, "random 4K, QD 1"),
        (
            Method::IoUring,
            4096,
            32,
            Pattern::Random,
            "random 4K, QD 32",
        ),
    ];
    let mut dev = DeviceCeiling {
        seq_qd1_mib_s: 0.0,
        seq_qd32_mib_s: 0.0,
        rand4k_qd1_iops: 0.0,
        rand4k_qd32_iops: 0.0,
        buffers,
    };
    let words = match buffers {
        Buffers::Auto => "huge-page".to_string(),
        b => memory_words(b).to_string(),
    };
    for (i, (m, bs, qd, pat, what)) in direct_specs.into_iter().enumerate() {
        pb.set_message(format!("device: {what} (O_DIRECT, {words} buffers)"));
        let mut s = timed(path, m, bs, budget.device_step / TRIES);
        s.setup.direct = true;
        s.setup.queue_depth = qd;
        s.setup.pattern = pat;
        s.setup.buffers = buffers;
        // Best of the tries: a device shared with other guests has stalls that are not its
        // ceiling. Sequential figures are MiB/s, random ones IOPS.
        let tries: anyhow::Result<Vec<RunResult>> =
            (0..TRIES).map(|_| run_read(&s, stop)).collect();
        match tries {
            Ok(rs) => {
                let figures: Vec<f64> = rs
                    .iter()
                    .map(|r| {
                        if i < 2 {
                            r.figures.mib_s
                        } else {
                            r.figures.iops
                        }
                    })
                    .collect();
                let (best, sp) = best_and_spread(&figures);
                // The memory of the 1 MiB requests names the ceiling (a 4 KiB buffer is one
                // page whatever was asked).
                if i == 0 {
                    if let Some(b) = rs.last().and_then(|r| r.setup.buffers.known()) {
                        dev.buffers = b;
                    }
                }
                spread.device_pct = Some(spread.device_pct.unwrap_or(0.0).max(sp));
                match i {
                    0 => dev.seq_qd1_mib_s = best,
                    1 => dev.seq_qd32_mib_s = best,
                    2 => dev.rand4k_qd1_iops = best,
                    _ => dev.rand4k_qd32_iops = best,
                }
            }
            Err(e) if stop.load(Ordering::Relaxed) => return Err(e),
            Err(e) => {
                notes.push(format!(
                    "device {what} ({words} buffers) not measured: {e:#}"
                ));
                if i == 0 {
                    pb.inc(4);
                    return Ok(None);
                }
            }
        }
        pb.inc(1);
    }
    if dev.seq_qd1_mib_s <= 0.0 || dev.rand4k_qd1_iops <= 0.0 || dev.buffers == Buffers::Auto {
        return Ok(None);
    }
    if dev.seq_qd32_mib_s > 0.0 && dev.seq_qd32_mib_s < dev.seq_qd1_mib_s {
        notes.push(format!(
            "sequential 1M at QD 32 ({:.0} MiB/s) came out below QD 1 ({:.0} MiB/s) with {} buffers: the device was shared or busy; measure again on a quiet machine",
            dev.seq_qd32_mib_s, dev.seq_qd1_mib_s, memory_words(dev.buffers)
        ));
    }
    Ok(Some(dev))
}
