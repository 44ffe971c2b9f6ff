//! The rules about where the bytes came from: whether there is a disk under the file at all,
//! what the file is made of (holes, unwritten and compressed extents), what the page cache held
//! or kept, who else moved bytes, and whether the figure could have come from the device. Each
//! doubts a figure only where the run's own accounting says it was not what it claims.

use super::input::*;
use super::thresholds::*;
use crate::explain::context::{NET_FS, RAM_FS};
use crate::explain::model;
use crate::facts::chain::Kind as LevelKind;
use crate::facts::Facts;
use crate::text::shown;

pub(super) fn not_a_disk(i: &Input) -> Option<Finding> {
    if let Some(fs) = &i.ctx.filesystem {
        let t = fs.fs_type.as_str();
        if RAM_FS.contains(&t) {
            return suspect(format!(
                "the file is on {}, in RAM: no disk was measured",
                shown(t)
            ));
        }
        if NET_FS.iter().any(|n| t.starts_with(n)) || t.starts_with("fuse") {
            return suspect(format!(
                "the file is on {}, a network or userspace filesystem: the figure is the \
                 network's and the server's, not a local disk's",
                shown(t)
            ));
        }
    }
    let dev = i.device();
    let bottom = i
        .ctx
        .device
        .as_ref()
        .map(|d| d.name.clone())
        .unwrap_or_default();
    if let Some(n) = [dev, bottom].into_iter().find(|n| ram_device(n)) {
        return suspect(format!(
            "the device {} is a RAM block device: no disk was measured",
            shown(&n)
        ));
    }
    let below = i.facts.and_then(|f| f.ram_below.as_ref())?;
    suspect(format!("{below}: no disk was measured"))
}

/// A read the zero-filled extents matter to: any read but a warm one (a warm read measures
/// the page cache by design, zero pages included).
pub(super) fn reads_the_device_maybe(i: &Input) -> bool {
    i.read && !i.warm && i.r.figures.bytes >= MIN_JUDGED_BYTES
}

pub(super) fn sparse(i: &Input) -> Option<Finding> {
    let m = i.facts?.extents()?;
    let share = m.share(m.hole_bytes);
    (reads_the_device_maybe(i) && share > ZERO_SHARE).then(|| {
        Finding::Suspect(format!(
            "{} of the file ({} of {}) is holes: a read of a hole returns zeros made in \
             memory and never asks the device, so the figure is not the device's",
            pct(share),
            fmt_bytes(m.hole_bytes),
            fmt_bytes(m.file_bytes)
        ))
    })
}

pub(super) fn unwritten(i: &Input) -> Option<Finding> {
    let m = i.facts?.extents()?;
    let share = m.share(m.unwritten_bytes);
    (reads_the_device_maybe(i) && share > ZERO_SHARE).then(|| {
        Finding::Suspect(format!(
            "{} of the file ({} of {}) is allocated but never written (preallocated): such \
             extents read as zeros without asking the device, so the figure is not the \
             device's",
            pct(share),
            fmt_bytes(m.unwritten_bytes),
            fmt_bytes(m.file_bytes)
        ))
    })
}

pub(super) fn compressed(i: &Input) -> Option<Finding> {
    let applies = reads_the_device_maybe(i)
        || (i.write && (i.synced || i.r.setup.direct) && i.r.figures.bytes >= MIN_JUDGED_BYTES);
    if !applies {
        return None;
    }
    if let Some(m) = i.facts.and_then(Facts::extents) {
        let share = m.share(m.encoded_bytes);
        return (share > ENCODED_SHARE).then(|| {
            Finding::Suspect(format!(
                "{} of the file ({} of {}) is stored compressed (encoded extents{}): the \
                 device moved fewer bytes than were {}, so the figure is not the device's rate \
                 for such bytes",
                pct(share),
                fmt_bytes(m.encoded_bytes),
                fmt_bytes(m.file_bytes),
                compresses(i.ctx).map_or(String::new(), |c| format!(", {c}")),
                if i.write { "written" } else { "read" }
            ))
        });
    }
    // No extent map: the mount's options and the device's counters.
    let how = compresses(i.ctx)?;
    let b = i.r.timeline.as_ref()?.reading.bytes_ratio.clone()?;
    (b.ratio < CACHE_RATIO && (i.meant_for_device() || !i.warm)).then(|| {
        Finding::Suspect(format!(
            "the device {} moved {:.2}× the run's bytes ({} of {}) on {how}: the data \
             compressed, so the figure is not the device's rate for such bytes",
            shown(&b.device),
            b.ratio,
            fmt_bytes(b.device_bytes),
            fmt_bytes(b.file_bytes)
        ))
    })
}

pub(super) fn not_cold(i: &Input) -> Option<Finding> {
    let resident = i.r.figures.residency_before_pct;
    let mode = i.r.setup.cache.known()?;
    (i.read && !resident.is_nan() && crate::cache::not_cold(mode, resident) && !i.in_ram).then(
        || {
            Finding::Suspect(format!(
                "{resident:.1}% of the file was in the page cache when the cold run started \
                 (eviction refused: another process maps or locks it, or read it again since): \
                 the run was not cold"
            ))
        },
    )
}

pub(super) fn cache_not_disk(i: &Input) -> Option<Finding> {
    if !(i.read && (i.cold || i.r.setup.direct)) || i.in_ram {
        return None;
    }
    let what = if i.r.setup.direct { "O_DIRECT" } else { "cold" };
    // The loop's image, one level down: the device under its backing file.
    if let Some(f) = i.facts {
        if let (Some(c), Some((loop_read, _)), Some((below, _))) =
            (&f.chain, f.level_bytes(0), f.level_bytes(1))
        {
            let top = c.top()?;
            let buffered = top.kind == LevelKind::Loop && top.direct_io != Some(true);
            if buffered
                && loop_read >= MIN_JUDGED_BYTES
                && (below as f64) < BELOW_RATIO * loop_read as f64
            {
                return suspect(format!(
                    "the run read {} through {}, but {} under its image moved {} ({:.2}×): the \
                     image file was served from the page cache below the loop device, so no \
                     disk was read",
                    fmt_bytes(loop_read),
                    shown(&top.name),
                    shown(&c.levels.get(1)?.name),
                    fmt_bytes(below),
                    below as f64 / loop_read as f64
                ));
            }
        }
    }
    let held = i.device_held_bytes();
    if held < MIN_JUDGED_BYTES {
        return None;
    }
    if let Some(own) = i.own_bytes() {
        return ((own as f64) < CACHE_RATIO * held as f64).then(|| {
            Finding::Suspect(format!(
                "a {what} read that itself read {} from storage of the {} the device holds for \
                 it ({:.2}×, its own I/O accounting): the rest came from the page cache \
                 (another process read the file meanwhile, maps or locks it, or O_DIRECT was \
                 ignored by the filesystem)",
                fmt_bytes(own),
                fmt_bytes(held),
                own as f64 / held as f64
            ))
        });
    }
    // No accounting: the device's counters (which others' I/O can only raise: a miss, never a
    // false alarm).
    let b = i.r.timeline.as_ref()?.reading.bytes_ratio.clone()?;
    (b.file_bytes >= MIN_JUDGED_BYTES && b.ratio < CACHE_RATIO && compresses(i.ctx).is_none()).then(
        || {
            Finding::Suspect(format!(
                "a {what} read whose device {} moved {:.2}× the run's bytes ({} of {}): served \
                 from memory, not the disk",
                shown(&b.device),
                b.ratio,
                fmt_bytes(b.device_bytes),
                fmt_bytes(b.file_bytes)
            ))
        },
    )
}

pub(super) fn cache_evicted(i: &Input) -> Option<Finding> {
    if !(i.warm && i.read && !i.r.setup.direct) || i.r.figures.bytes < MIN_JUDGED_BYTES {
        return None;
    }
    let own = i.own_bytes()?;
    let ratio = own as f64 / i.r.figures.bytes as f64;
    (ratio > WARM_DEVICE_RATIO).then(|| {
        let cache = i.facts.and_then(|f| {
            Some(format!(
                "; {:.0}% of the file was cached before and {:.0}% after",
                f.before.cache?.cached_pct(),
                f.after.cache?.cached_pct()
            ))
        });
        Finding::Suspect(format!(
            "a warm read that itself read {} from storage ({ratio:.2}× its bytes){}: the file \
             was evicted under it (memory pressure, DAMON reclaim)",
            fmt_bytes(own),
            cache.unwrap_or_default()
        ))
    })
}

pub(super) fn writes_in_page_cache(i: &Input) -> Option<Finding> {
    if !i.write || i.r.setup.direct || i.synced || i.r.figures.bytes < MIN_JUDGED_BYTES {
        return None;
    }
    let dirty = i
        .facts
        .and_then(|f| f.after.cache)
        .map(|c| c.unwritten_bytes());
    // What the device under the file wrote during the run (every process's writes).
    let device_wrote = i
        .facts
        .filter(|_| i.r.mix.is_none())
        .and_then(|f| f.level_bytes(0))
        .map(|(_, w)| w);
    let figures = match dirty {
        Some(d) if (d as f64) >= DIRTY_SHARE * i.r.figures.bytes as f64 => format!(
            "{} of the {} written were still dirty or under writeback in the file's page cache \
             at its end",
            fmt_bytes(d),
            fmt_bytes(i.r.figures.bytes)
        ),
        Some(_) => match device_wrote {
            Some(w) if (w as f64) < DIRTY_SHARE * i.r.figures.bytes as f64 => format!(
                "its device {} wrote {} during the run for the {} written ({:.2}×)",
                shown(&i.device()),
                fmt_bytes(w),
                fmt_bytes(i.r.figures.bytes),
                w as f64 / i.r.figures.bytes as f64
            ),
            _ => return None,
        },
        // No cachestat: the device's counters.
        None => {
            let b = i.r.timeline.as_ref()?.reading.bytes_ratio.clone()?;
            if b.ratio >= DIRTY_SHARE {
                return None;
            }
            format!(
                "the device {} wrote {:.2}× the run's bytes ({} of {}) by its end",
                shown(&b.device),
                b.ratio,
                fmt_bytes(b.device_bytes),
                fmt_bytes(b.file_bytes)
            )
        }
    };
    suspect(format!(
        "buffered writes without --fsync or --dsync: {figures}, so the figure is the page \
         cache's; add --fsync (timed) or --dsync"
    ))
}

pub(super) fn other_io(i: &Input) -> Option<Finding> {
    if !i.meant_for_device() {
        return None;
    }
    let f = i.facts?;
    let io = f.run_io()?;
    let (r, w) = f.others_bytes()?;
    let own = io.read_bytes + io.net_write_bytes();
    let others = r + w;
    if own < MIN_JUDGED_BYTES
        || others < MIN_OTHER_BYTES
        || (others as f64) <= OTHER_SHARE * own as f64
    {
        return None;
    }
    let dir = |b: u64, what: &str| (b > 0).then(|| format!("{} {what}", fmt_bytes(b)));
    let split: Vec<String> = [dir(r, "read"), dir(w, "written")]
        .into_iter()
        .flatten()
        .collect();
    suspect(format!(
        "the device {} moved {} that were not this run's ({}) beside the run's own {} \
         ({:.2}×, more than {OTHER_SHARE}×): another process used the device during the run",
        shown(&i.device()),
        fmt_bytes(others),
        split.join(", "),
        fmt_bytes(own),
        others as f64 / own as f64
    ))
}

pub(super) fn above_ceiling(i: &Input) -> Option<Finding> {
    let p = i.profile?;
    let e = model::explain_result(p, i.r)?;
    if e.explained {
        return None;
    }
    let pr = &e.prediction;
    if let Some(doubt) = &pr.doubt {
        return Some(Finding::Note(format!(
            "{:.1} MiB/s is above the profile's {} bound of {:.1} MiB/s, but {}",
            i.r.figures.mib_s,
            pr.bound,
            pr.bound_mib_s,
            model::untrusted(doubt)
        )));
    }
    // The run's own accounting says every byte came from storage: the path is what the run
    // says, and it is the ceiling that is low.
    let device_path = pr.bound.family() != crate::explain::profile::Family::Memory
        && pr.bound.family() != crate::explain::profile::Family::Methods;
    if let Some(own) = i.own_bytes().filter(|_| device_path && i.read) {
        if own as f64 >= CONFIRMED_RATIO * i.r.figures.bytes as f64 {
            return Some(Finding::Note(format!(
                "the run itself read {} from storage ({:.2}× its bytes) at {:.1} MiB/s, above \
                 the profile's {} bound of {:.1} MiB/s: the device delivered, so the profile is \
                 low for this path; `diskscope limits --refresh`",
                fmt_bytes(own),
                own as f64 / i.r.figures.bytes.max(1) as f64,
                i.r.figures.mib_s,
                pr.bound,
                pr.bound_mib_s
            )));
        }
    }
    // Between two measured buffer sizes the memory bound is an estimate; the ceiling is the
    // smaller size's level.
    let headroom = if pr.bound.family() == crate::explain::profile::Family::Memory {
        model::memory_headroom(p, i.r)
    } else {
        1.0
    };
    if headroom > 1.0 {
        let ceiling = pr.bound_mib_s * headroom;
        if i.r.figures.mib_s <= ceiling * (1.0 + pr.error_pct.unwrap_or(0.0) / 100.0) {
            return Some(Finding::Note(format!(
                "{:.1} MiB/s is above the profile's {} estimate of {:.1} MiB/s for {} blocks, \
                 which lie between two buffer sizes it measured; the smaller size's copy \
                 ceiling ({:.1} MiB/s) holds it",
                i.r.figures.mib_s,
                pr.bound,
                pr.bound_mib_s,
                crate::size::format_size(i.r.setup.block_size_bytes),
                ceiling
            )));
        }
    }
    let err = pr
        .error_pct
        .map_or("an unknown error".to_string(), |v| format!("±{v:.0}%"));
    suspect(format!(
        "{:.1} MiB/s is {:.1}× the machine's measured ceiling for this path ({} {:.1} MiB/s), \
         beyond the profile's error ({err}): faster than this machine goes, so the data did not \
         come from where the run says",
        i.r.figures.mib_s,
        e.pct_of_bound / 100.0,
        pr.bound,
        pr.bound_mib_s
    ))
}

pub(super) fn generator_bound(i: &Input) -> Option<Finding> {
    let r = i.r;
    if !(i.meant_for_device() || i.cold || i.write || r.setup.block_size_bytes < SMALL_BLOCK_BYTES)
    {
        return None;
    }
    // The run's own accounting: did it move bytes to or from a device at all?
    let io = i.facts.and_then(Facts::run_io);
    let touched_no_device = io.map(|io| {
        ((io.read_bytes + io.net_write_bytes()) as f64)
            < NO_DEVICE_SHARE * r.figures.bytes.max(1) as f64
    });
    if touched_no_device == Some(false) {
        return None;
    }
    let workers = r.setup.threads.max(1).min(i.ctx.cpu_count.max(1)) as f64;
    let share = i
        .facts
        .and_then(|f| f.run.worker_user_cpu_s)
        .filter(|_| r.figures.seconds >= MIN_SECONDS)
        .map(|cpu| cpu / (r.figures.seconds * workers));
    // Buffered writes never wait in their workers (the device's work is in the fsync).
    let sleeps = i
        .facts
        .and_then(Facts::voluntary_switches)
        .filter(|_| i.read && r.figures.ops >= NEVER_WAITED_MIN_OPS);
    let why = match (share, sleeps) {
        (Some(share), _) if share >= CPU_BOUND_SHARE && touched_no_device == Some(true) => {
            Some(format!(
                "the workers spent {share:.2} of a core each in diskscope's own code and the \
                 run read nothing from a device"
            ))
        }
        (_, Some(n)) if n.saturating_mul(NEVER_WAITED_OPS_PER_SLEEP) <= r.figures.ops => {
            Some(format!(
                "the workers slept {n} times in {} operations (they never waited for a device)",
                r.figures.ops
            ))
        }
        _ => None,
    }?;
    let fix = if r
        .setup
        .method
        .known()
        .is_some_and(|m| crate::engine::caps(m).queued)
    {
        "more threads (-t), larger blocks, or a deeper queue"
    } else {
        "more threads (-t), larger blocks, or --method io_uring with a deep queue"
    };
    suspect(format!(
        "{why}, so the figure measures diskscope's own per-call CPU cost, not the disk; use \
         {fix}"
    ))
}
