//! The experiment loop shared by `diskscope locality` and the batch kind `locality`: make or reuse
//! the layout, build the access lists, and for every cache mode × order × repetition read the
//! same list from both layouts, handing one [`Measured`] per pass to the caller.
//!
//! Within a repetition the two layouts take turns going first, so slow drift of the machine (other
//! work, page-cache aging) does not always land on the same layout.

use super::bench::{prepare_cache, run_pass, LayoutKind};
use super::layout::{ensure_in, lock_dir, Layout, LayoutSpec};
use super::params::{Order, PackOrder, Params, Syntax};
use super::synth::{shuffle, synthetic_trace, SynthParams};
use super::trace::{first_access_order, parse_trace};
use crate::cache::COLD_TOLERANCE_PCT;
use crate::config::{usage, CacheMode};
use crate::measure::result::Label;
use crate::measure::{LatencySummary, RunResult};
use hdrhistogram::Histogram;
use std::sync::atomic::{AtomicBool, Ordering};

/// One pass: the result record and its full latency histogram (for merged percentiles).
#[derive(Debug, Clone)]
pub struct Measured {
    pub result: RunResult,
    pub hist: Histogram<u64>,
}

/// The shuffle seed of repetition `rep` (1-based) of the random order.
pub fn shuffle_seed(seed: u64, rep: u32) -> u64 {
    seed.wrapping_add(rep as u64)
}

/// The ids read in `order` at repetition `rep`.
pub fn access_list(order: Order, rep: u32, files: u32, seed: u64, trace: &[u32]) -> Vec<u32> {
    match order {
        Order::Sequential => (0..files).collect(),
        Order::Random => {
            let mut ids: Vec<u32> = (0..files).collect();
            shuffle(&mut ids, shuffle_seed(seed, rep));
            ids
        }
        Order::Trace => trace.to_vec(),
    }
}

/// Loads the user's trace or makes the synthetic one; `log` gets a line that describes it.
pub fn load_trace(
    p: &Params,
    syntax: Syntax,
    log: &mut dyn FnMut(String),
) -> anyhow::Result<Vec<u32>> {
    let (ids, source) = match &p.trace {
        Some(path) => {
            let name = syntax.name("trace");
            // A FIFO would block the read forever: refuse anything that cannot end first.
            crate::fsguard::check_input(path, &name).map_err(|e| usage(e.to_string()))?;
            let text = std::fs::read_to_string(path).map_err(|e| {
                usage(format!(
                    "{name}: cannot read {}: {e}",
                    crate::text::shown_path(path)
                ))
            })?;
            let ids = parse_trace(&text, p.files).map_err(|e| {
                let sep = if e.line == 0 { ":" } else { "" };
                usage(format!(
                    "{name}: {}{sep} {e}",
                    crate::text::shown_path(path)
                ))
            })?;
            (ids, format!("from {}", crate::text::shown_path(path)))
        }
        None => {
            let sp = SynthParams::default_for(p.files, p.seed);
            log(sp.describe(p.files));
            (synthetic_trace(p.files, &sp), "synthetic".to_string())
        }
    };
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    log(format!(
        "trace: {} accesses to {} distinct ids, {source}",
        ids.len(),
        distinct.len()
    ));
    Ok(ids)
}

/// Makes or reuses the layout `p` asks for.
pub fn prepare_layout(
    p: &Params,
    syntax: Syntax,
    trace: &[u32],
    stop: &AtomicBool,
    log: &mut dyn FnMut(String),
    created_dir: bool,
) -> anyhow::Result<Layout> {
    let pack_ids = match p.pack_order {
        PackOrder::Id => (0..p.files).collect(),
        PackOrder::Trace => first_access_order(trace, p.files),
    };
    let spec = LayoutSpec {
        files: p.files,
        file_size_bytes: p.file_size_bytes,
        fanout: p.fanout,
        pack_ids: &pack_ids,
        pack_label: p.pack_order.as_str(),
        syntax,
    };
    ensure_in(&p.dir, &spec, stop, log, created_dir)
}

/// Runs the whole experiment. Returns false when `stop` ended it early (what was measured up to
/// then has been emitted).
pub fn run(
    p: &Params,
    experiment: &str,
    syntax: Syntax,
    stop: &AtomicBool,
    log: &mut dyn FnMut(String),
    emit: &mut dyn FnMut(Measured) -> anyhow::Result<()>,
) -> anyhow::Result<bool> {
    let trace = if p.needs_trace() {
        load_trace(p, syntax, log)?
    } else {
        Vec::new()
    };
    // Held until the last repetition: another run on this --dir is refused meanwhile.
    let lock = lock_dir(&p.dir, &syntax.name("dir"), true)?;
    let created = lock.as_ref().is_some_and(|l| l.created);
    let prepared = prepare_layout(p, syntax, &trace, stop, log, created);
    if let (Err(_), Some(l)) = (&prepared, &lock) {
        // A refusal (no space) or an interrupted first generation leaves no empty directory.
        l.remove_created(&p.dir);
    }
    let layout = match prepared {
        Ok(l) => l,
        Err(e) if stop.load(Ordering::Relaxed) => {
            log(format!("{e:#}"));
            return Ok(false);
        }
        Err(e) => return Err(e),
    };
    if p.orders.contains(&Order::Random) {
        log(format!(
            "random order: a fresh shuffle per repetition, seeds {}..={} ({} {} + repetition)",
            shuffle_seed(p.seed, 1),
            shuffle_seed(p.seed, p.reps),
            syntax.name("seed"),
            p.seed
        ));
    }
    let host = crate::runner::host_name();
    let mut warned = false;
    let (mut prep_s, mut pass_s) = (0.0, 0.0);
    for &cache in &p.caches {
        for &order in &p.orders {
            for rep in 1..=p.reps {
                let ids = access_list(order, rep, p.files, p.seed, &trace);
                let mut kinds = LayoutKind::BOTH;
                if rep % 2 == 0 {
                    kinds.reverse();
                }
                let mut xors = Vec::new();
                for kind in kinds {
                    let t_prep = std::time::Instant::now();
                    let resident = prepare_cache(&layout, kind, cache)?;
                    prep_s += t_prep.elapsed().as_secs_f64();
                    let cold = matches!(cache, CacheMode::Cold | CacheMode::ColdAll);
                    if cold && resident > COLD_TOLERANCE_PCT && !warned {
                        warned = true;
                        log(format!(
                            "warning: the {} layout was {resident:.1}% cached after eviction; \
                             this file system may ignore POSIX_FADV_DONTNEED (tmpfs does)",
                            kind.as_str()
                        ));
                    }
                    let t_pass = std::time::Instant::now();
                    let pass = run_pass(&layout, kind, &ids, stop)?;
                    pass_s += t_pass.elapsed().as_secs_f64();
                    if !pass.completed {
                        return Ok(false);
                    }
                    xors.push(pass.xor);
                    let point = Point {
                        kind,
                        order,
                        cache,
                        rep,
                    };
                    let result = result_of(p, &layout, experiment, &host, point, resident, &pass);
                    emit(Measured {
                        result,
                        hist: pass.hist,
                    })?;
                }
                if xors[0] != xors[1] {
                    anyhow::bail!(
                        "the dir and packed layouts in {} returned different data; remove them \
                         with --clean and run again",
                        crate::text::shown_path(&layout.dir)
                    );
                }
            }
        }
    }
    log(format!(
        "wall time: {prep_s:.1} s preparing the cache, {pass_s:.1} s in timed passes"
    ));
    Ok(true)
}

/// Which pass of the experiment a result belongs to.
#[derive(Debug, Clone, Copy)]
struct Point {
    kind: LayoutKind,
    order: Order,
    cache: CacheMode,
    rep: u32,
}

fn result_of(
    p: &Params,
    layout: &Layout,
    experiment: &str,
    host: &str,
    point: Point,
    resident_pct: f64,
    pass: &super::bench::Pass,
) -> RunResult {
    let Point {
        kind,
        order,
        cache,
        rep,
    } = point;
    let file = match kind {
        LayoutKind::Dir => layout.dir.display().to_string(),
        LayoutKind::Packed => layout.packed_path.display().to_string(),
    };
    let mut r = RunResult {
        identity: crate::measure::result::Identity {
            experiment: experiment.to_string(),
            host: host.to_string(),
            file,
            file_size_bytes: p.files as u64 * p.file_size_bytes,
            rep,
        },
        setup: crate::config::RecordedSetup {
            op: crate::config::Op::Read.into(),
            method: Label::of_text(kind.as_str()),
            pattern: Label::of_text(order.as_str()),
            cache: cache.into(),
            direct: false,
            block_size_bytes: p.file_size_bytes,
            threads: 1,
            queue_depth: 1,
            ..Default::default()
        },
        figures: crate::measure::result::Figures {
            block_count: pass.accesses,
            bytes: pass.bytes,
            seconds: pass.total_ns as f64 / 1e9,
            ops: pass.accesses,
            residency_before_pct: resident_pct,
            xor: crate::xor::format_xor(pass.xor),
            ..Default::default()
        },
        ..RunResult::default()
    };
    r.set_rates();
    r.set_latency(&LatencySummary::of(&pass.hist));
    r
}
