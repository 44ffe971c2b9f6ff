//! "…and why?": every number with its context and the limit that bounds it.
//!
//! Three layers, each usable alone:
//! * [`context`] — where a run ran: machine, filesystem, the block device under the file.
//! * [`limits`] + [`profile`] — `diskscope limits` measures the machine's ceilings once and
//!   stores them under the user's cache directory.
//! * [`model`] — the empirical roofline: the bound of a point, its value, and how close a
//!   measurement came.
//!
//! The small functions below are the hooks the front ends call: [`stderr_lines`] for `run` and
//! `fast`, [`annotate`] for the sweep's CSV rows, [`json`] for `--json` documents. They load the
//! profile for the file's device once per process and never fail: no profile, no explanation.

pub mod context;
pub mod json;
pub mod limits;
pub mod machine;
pub mod model;
pub mod profile;
pub mod provenance;
pub mod verdict;

use crate::config::Method;
use crate::measure::RunResult;
use context::Context;
use model::{Explanation, Point};
use profile::Profile;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Profiles already looked up in this process, by file (a sweep explains many rows of one file).
static LOADED: Mutex<Option<HashMap<PathBuf, Option<Loaded>>>> = Mutex::new(None);

/// A stored profile and, when it may no longer describe the machine, why.
pub type Loaded = (Profile, Option<String>);

/// The stored profile for the device under `file`, with a warning when it may no longer
/// describe the machine (stale, measured under load or with `--quick`, of unknown error). The
/// profile is told the cores this process has now, so the model never runs more threads at
/// once than there are. A profile that cannot be used is ignored with one warning line.
pub fn profile_for(file: &Path) -> Option<Loaded> {
    let mut guard = LOADED.lock().ok()?;
    let map = guard.get_or_insert_with(HashMap::new);
    map.entry(file.to_path_buf())
        .or_insert_with(|| {
            let ctx = Context::collect(file);
            let mut p = profile::load_for(&ctx)?;
            p.cores_now = Some(ctx.cpu_count.max(1));
            let doubts = p.doubts(&ctx, profile::now_unix_s());
            Some((p, doubts))
        })
        .clone()
}

/// Judges a result measured by the runner (or `fast`): the stage after measuring and before
/// exporting, called once by each front end. Collects the file's context and profile, judges
/// the result from its own facts (`verdict::judge`) and writes the `verdict`, `reasons` and
/// `why` columns. A failed run, or a row no measurement of ours made (a command's), is not
/// judged (`None`, the columns stay empty).
pub fn judge_result(r: &mut RunResult) -> Option<verdict::Verdict> {
    if !r.figures.error.is_empty() {
        return None;
    }
    let facts = r.facts.as_ref()?.full.clone()?;
    let file = Path::new(&r.identity.file);
    let ctx = Context::collect(file);
    let profile = profile_for(file).map(|(p, _)| refreshed(p, r, file));
    let v = verdict::judge(r, Some(&facts), &ctx, profile.as_ref());
    v.fill(r);
    Some(v)
}

/// The profile to judge `r` by: as stored, or, where `r` lands above a memory bound (the one
/// family measured again in a second), with its memory ceiling measured again now
/// (`limits::refresh_memory`), so a ceiling stored from a loaded sitting never makes a warm
/// run look faster than the machine. The ceilings measured again replace the stored ones for
/// the rest of this process ([`profile_for`] gives them from then on), so the bound line, the
/// bound columns and the verdict all read the same profile.
fn refreshed(mut p: Profile, r: &RunResult, file: &Path) -> Profile {
    let above_memory = model::explain_result(&p, r)
        .is_some_and(|e| !e.explained && e.prediction.bound == model::Bound::Memory);
    if above_memory {
        let threads = r
            .setup
            .threads
            .min(p.cores_now.unwrap_or(usize::MAX))
            .max(1);
        let measured = p.memory_for(threads).map_or(threads, |m| m.threads);
        limits::refresh_memory(&mut p, measured);
        if let Ok(mut guard) = LOADED.lock() {
            if let Some(Some((stored, _))) = guard.as_mut().and_then(|m| m.get_mut(file)) {
                *stored = p.clone();
            }
        }
    }
    p
}

/// The explorer's message for a judged row labelled `label`: the reasons of a suspect one, or,
/// for one that is ok but whose profile is in doubt, the note that says so, so the message
/// blames the profile, never the data, when the profile is what is wrong. `None` when there is
/// nothing to say.
pub fn judged_message(label: &str, v: &verdict::Verdict) -> Option<String> {
    if v.verdict == verdict::Kind::Suspect {
        return Some(format!(
            "{label} is suspect ({}): {}",
            v.codes().replace(';', ", "),
            v.sentences()
        ));
    }
    v.notes.first().map(|n| format!("{label}: {n}"))
}

/// The file's storage for a plot subtitle: `ext4 on vda`, with the RAM/network warning when
/// there is one (`tmpfs: in RAM`). Looked up on the nearest existing ancestor when the file is
/// gone (a sweep's test file is removed before its plots are drawn); cached per path.
pub fn storage_of(file: &Path) -> Option<String> {
    static SEEN: Mutex<Option<HashMap<PathBuf, Option<String>>>> = Mutex::new(None);
    let mut guard = SEEN.lock().ok()?;
    let map = guard.get_or_insert_with(HashMap::new);
    map.entry(file.to_path_buf())
        .or_insert_with(|| {
            let at = file.ancestors().find(|a| a.exists())?;
            let ctx = Context::collect(at);
            let fs = ctx.filesystem.as_ref()?;
            let mut s = crate::text::shown(&fs.fs_type).into_owned();
            if let Some(d) = &ctx.device {
                s.push_str(&format!(" on {}", crate::text::shown(&d.chain.join("→"))));
                if let Some(m) = &d.model {
                    s.push_str(&format!(" ({})", crate::text::shown(m)));
                }
            }
            if !ctx.warnings.is_empty() {
                s.push_str(" (⚠ in RAM, overlay or remote: not a plain local disk)");
            }
            Some(s)
        })
        .clone()
}

/// Where `rows` were measured, as the exporters need it: the storage under each file and the
/// `limits` profile of its device, read once here (through the caches above, filled when each
/// run was judged) and handed to the exporters, which read nothing themselves.
pub fn provenance_of<'a>(
    rows: impl IntoIterator<Item = &'a RunResult>,
) -> self::provenance::Provenance {
    self::provenance::Provenance::gather(rows, |file| self::provenance::FileFacts {
        storage: storage_of(file),
        profile: profile_for(file).map(|(p, _)| p),
        ..Default::default()
    })
}

/// The explanation of a result of a run on `file`, when a profile exists and the model covers it.
pub fn explain_file_result(file: &Path, r: &RunResult) -> Option<Explanation> {
    let (p, _) = profile_for(file)?;
    model::explain_result(&p, r)
}

/// Lines for stderr after a run: the context in one line, then (with a profile) the one-liner
/// and a staleness warning.
pub fn stderr_lines(file: &Path, r: &RunResult) -> Vec<String> {
    let Some((p, stale)) = profile_for(file) else {
        return vec![context_line(file)];
    };
    // Without a bound for the run's buffer memory, the line says so instead of nothing.
    let missing = || model::missing_ceiling(&p, &Point::of_result(r)?);
    let mut out: Vec<String> = model::explain_result(&p, r)
        .map(|e| e.line)
        .or_else(missing)
        .into_iter()
        .collect();
    if let (false, Some(s)) = (out.is_empty(), stale) {
        out.push(format!("warning: {s}"));
    }
    out.insert(0, context_line(file));
    out
}

/// Fills the `bound`, `bound_mib_s`, `pct_of_bound` and `bound_hint` columns of a result of a run on the
/// file the result names; leaves them empty without a profile. Says once on stderr when the
/// profile is doubtful.
pub fn annotate(r: &mut RunResult) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    if let Some((_, Some(doubt))) = profile_for(Path::new(&r.identity.file)) {
        WARNED.call_once(|| crate::eprintln_shown!("warning: {doubt}"));
    }
    let e = explain_file_result(Path::new(&r.identity.file), r);
    fill_bound_columns(r, e.as_ref());
}

/// The bound columns of a result from its explanation (all empty without one): the bound, its
/// value, the share reached, and in `bound_hint` what to look at below half the bound or, above
/// the bound by more than the profile's error, that the profile does not explain the run.
pub fn fill_bound_columns(r: &mut RunResult, e: Option<&Explanation>) {
    r.judgement.bound = e.map(|e| e.prediction.bound.to_string());
    r.judgement.bound_mib_s = e.map(|e| e.prediction.bound_mib_s);
    r.judgement.pct_of_bound = e.map(|e| e.pct_of_bound);
    r.judgement.bound_hint = e.and_then(|e| match (e.explained, &e.prediction.doubt) {
        (true, _) => e.hint.clone(),
        (false, Some(doubt)) => Some(model::untrusted(doubt)),
        (false, None) => Some(model::NOT_EXPLAINED.to_string()),
    });
}

/// The one-line context for a stderr summary: `context: host, Linux …, 2× CPU, 24 GiB RAM |
/// ext4 (rw,relatime) on vda: …` with the RAM/network warning at the end when there is one.
pub fn context_line(file: &Path) -> String {
    format!("context: {}", Context::collect(file))
}

/// The explanation of a `fast` run: its road as a model point, for its stderr line and its JSON
/// document. `road` is the road's name (mmap, pread, direct, buffered; hybrid is not modelled),
/// `block_bytes` 0 for mmap.
pub fn fast_explanation(
    file: &Path,
    road: &str,
    threads: usize,
    block_bytes: usize,
    queue_depth: u32,
    bytes: u64,
    seconds: f64,
) -> Option<Explanation> {
    let (p, _) = profile_for(file)?;
    let (method, cold, direct, bs) = match road {
        // One mapping, XORed in 8 MiB chunks: per-call cost is one chunk's.
        "mmap" => (Method::Mmap, false, false, 8 << 20),
        "pread" => (Method::Pread, false, false, block_bytes as u64),
        "direct" => (Method::IoUring, true, true, block_bytes as u64),
        "buffered" => (Method::Pread, true, false, block_bytes as u64),
        _ => return None,
    };
    let pt = Point {
        setup: crate::config::Setup {
            method,
            op: crate::config::Op::Read,
            block_size_bytes: bs.max(1),
            // The direct road serves all its streams from one ring: its depth is the queue
            // depth.
            threads: if direct { 1 } else { threads.max(1) },
            queue_depth: if direct { queue_depth.max(1) } else { 1 },
            direct,
            // fast's buffers are what `auto` gives: huge pages for O_DIRECT, plain pages
            // otherwise.
            buffers: profile::resolved(crate::config::Buffers::Auto, direct),
            ..crate::config::Setup::default()
        },
        cold,
    };
    let measured = bytes as f64 / (1024.0 * 1024.0) / seconds.max(1e-9);
    model::explain(&p, &pt, measured)
}
