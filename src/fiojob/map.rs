//! fio options → the sweep's plan: each job becomes one `throughput` experiment with one point
//! (a [`RunSpec`]), checked by the same `RunSpec::validate` as a TOML sweep's points. Every
//! option a job holds is either mapped (and the printed plan says which setting it became, from
//! which line), accepted with a note saying how diskscope differs, or refused by name with its
//! line and what to do instead. docs/fio.md lists them all.

use super::error::FioError;
use super::options::{canonical, fio_time, from, Opts, KNOWN, REFUSED};
use super::parse::{Job, Opt};
use super::region::region;
use crate::config::spec::{RunSpec, TOML_NAMES};
use crate::config::{
    Arrival, Buffers, CacheMode, Method, Op, Pattern, Setup, SubmitPolicy, WriteSync,
};
use crate::size::format_size;
use crate::sweep::files::FilePlan;
use std::path::PathBuf;
use std::time::Duration;

/// What one job asks for, before the file is known.
pub struct Mapped<'a> {
    pub job: &'a Job,
    pub name: String,
    /// What the job measures, as diskscope's setup: `rw=rw`/`readwrite`/`randrw` is a mix (its
    /// `mix_read_pct` from `rwmixread`, or 100 minus `rwmixwrite`, fio's default 50; its `op`
    /// [`Op::Write`]: a mix writes); `iomem` the buffers; `rate_iops` and `rate_process` the
    /// open loop over all threads. Prealloc and checksum stay at their defaults.
    pub setup: Setup,
    pub rw: Option<&'a Opt>,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub reps: u32,
    /// The bytes the job covers (`size`, times numjobs with offset_increment = size).
    pub region_bytes: Option<u64>,
    pub region_opt: Option<&'a Opt>,
    pub number_ios: Option<u64>,
    pub seed: Option<u64>,
    pub target: Option<(PathBuf, &'a Opt)>,
    /// The setting ← option lines and the notes of the printed plan.
    pub notes: Vec<String>,
}

/// Turns a job name into an experiment name (it names the CSV files).
pub fn sanitise(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(90)
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "job".into()
    } else {
        s
    }
}

/// One job's options → what it asks for; every option is checked first, so an unknown or
/// refused one is named before anything else.
pub fn map_job<'a>(job: &'a Job, index: usize, jobs: &'a [Job]) -> Result<Mapped<'a>, FioError> {
    // Every option first: an unknown or refused one is named before anything else.
    for o in &job.opts {
        let key = canonical(&o.key);
        if let Some((_, why)) = REFUSED.iter().find(|(k, _)| *k == key) {
            return Err(FioError::refused(&o.loc, &o.key, why));
        }
        if !KNOWN.contains(&key) {
            return Err(FioError::refused(
                &o.loc,
                &o.key,
                "diskscope does not implement this fio option; remove it (docs/fio.md lists the options diskscope reads)",
            ));
        }
    }
    let mut opts = Opts { job, kb_base: 1024 };
    if let Some((b, o)) = opts.int("kb_base")? {
        if b != 1000 && b != 1024 {
            return Err(FioError::bad_value(
                &o.loc,
                &o.key,
                "write 1024 (the default) or 1000",
            ));
        }
        opts.kb_base = b;
    }
    let mut notes = Vec::new();
    let (op, pattern, rw, mix_read_pct) = workload(&opts, &mut notes)?;
    let (method, block_size_bytes, threads, queue_depth, direct) = engine(&opts, &mut notes)?;
    let cache = cache_of(&opts, op, &mut notes)?;
    let (runtime, time_based, reps) = timing(&opts, &mut notes)?;
    let (fsync, dsync) = syncs(&opts, op, &mut notes)?;
    order(&opts, index, jobs, threads, &mut notes);
    let (submit, seed) = details(&opts, method, queue_depth, pattern, &mut notes)?;
    let buffers = buffers_of(&opts, direct, &mut notes)?;
    let (rate_iops, arrival) = rate_of(&opts, threads, &mut notes)?;
    let region = region(&opts, threads, pattern, time_based, &mut notes)?;
    // fio's `name` option renames the job (from [global] too).
    let name = opts
        .get("name")
        .map_or(job.name.clone(), |o| o.value.clone());
    Ok(Mapped {
        job,
        name: sanitise(&name),
        setup: Setup {
            op,
            method,
            pattern,
            cache,
            direct,
            block_size_bytes,
            threads,
            queue_depth,
            buffers,
            rate_iops: rate_iops.map(crate::config::Iops),
            mix_read_pct,
            write_sync: WriteSync::of(fsync, dsync),
            submit,
            arrival,
            ..Setup::default()
        },
        rw,
        runtime,
        time_based,
        reps,
        region_bytes: region.bytes,
        region_opt: region.size_opt,
        number_ios: region.number_ios,
        seed,
        target: region.target,
        notes,
    })
}

/// `rate_iops` and `rate_process`: an open-loop job. fio's rate_iops is per job (each of
/// `numjobs` clones issues at it); diskscope's rate is over all threads, so it is multiplied by
/// the thread count. `rate_process=linear` (fio's default) is a constant spacing, `poisson` a
/// Poisson process. fio reports latency from each I/O's issue; diskscope reports that (service
/// time) and the time from its intended start (response time), see docs/openloop.md.
fn rate_of(
    opts: &Opts<'_>,
    threads: usize,
    notes: &mut Vec<String>,
) -> Result<(Option<f64>, Arrival), FioError> {
    let arrival = match opts.get("rate_process") {
        None => Arrival::Constant,
        Some(o) => match o.value.trim().to_ascii_lowercase().as_str() {
            "linear" => Arrival::Constant,
            "poisson" => Arrival::Poisson,
            _ => {
                return Err(FioError::bad_value(
                    &o.loc,
                    &o.key,
                    "write linear or poisson",
                ))
            }
        },
    };
    let Some(o) = opts.get("rate_iops") else {
        if let Some(p) = opts.get("rate_process") {
            return Err(FioError::refused(
                &p.loc,
                &p.key,
                "applies to a job with rate_iops; add rate_iops=N or remove it",
            ));
        }
        return Ok((None, arrival));
    };
    if o.value.contains(',') {
        return Err(FioError::bad_value(
            &o.loc,
            &o.key,
            "a separate read and write rate is not implemented in diskscope; give one rate",
        ));
    }
    let per_job = match opts.int("rate_iops")? {
        Some((n, _)) if n > 0 => n,
        _ => {
            return Err(FioError::bad_value(
                &o.loc,
                &o.key,
                "write a whole number of operations per second above 0",
            ))
        }
    };
    let total = per_job as f64 * threads as f64;
    notes.push(format!(
        "open loop at {total:.0} operations/s{} ({}) ← {}",
        if threads > 1 {
            format!(" ({per_job}/s per job × {threads} jobs)")
        } else {
            String::new()
        },
        if arrival == Arrival::Poisson {
            "poisson"
        } else {
            "constant spacing"
        },
        from(o)
    ));
    Ok((Some(total), arrival))
}

/// A job's workload: the operation, the order of offsets, the `rw` option it came from and a
/// mix's percent of reads.
type Workload<'a> = (Op, Pattern, Option<&'a Opt>, Option<u32>);

/// `rw`: the operation and the order of offsets, and for the mixed workloads (`rw`,
/// `readwrite`, `randrw`) the share of reads (`rwmixread`/`rwmixwrite`); trim refused.
fn workload<'a>(opts: &Opts<'a>, notes: &mut Vec<String>) -> Result<Workload<'a>, FioError> {
    let rw = opts.get("rw");
    let mixed = rw.is_some_and(|o| {
        matches!(
            o.value.to_ascii_lowercase().as_str(),
            "rw" | "readwrite" | "randrw"
        )
    });
    let (op, pattern) = match rw.map(|o| o.value.to_ascii_lowercase()) {
        None => (Op::Read, Pattern::Sequential),
        Some(v) => {
            let o = rw.expect("set");
            if v.contains(':') {
                return Err(FioError::refused(&o.loc, &o.key, "the `:N` offset modifier is not implemented in diskscope; write read, write, randread or randwrite"));
            }
            match v.as_str() {
                "read" => (Op::Read, Pattern::Sequential),
                "write" => (Op::Write, Pattern::Sequential),
                "randread" => (Op::Read, Pattern::Random),
                "randwrite" => (Op::Write, Pattern::Random),
                "rw" | "readwrite" => (Op::Write, Pattern::Sequential),
                "randrw" => (Op::Write, Pattern::Random),
                "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
                    return Err(FioError::refused(&o.loc, &o.key, &format!("{v}: trim is not implemented in diskscope; use read, write, randread or randwrite")))
                }
                _ => {
                    return Err(FioError::bad_value(&o.loc, &o.key, &format!("unknown value '{}'; use read, write, randread, randwrite, rw or randrw", crate::text::shown(&v))))
                }
            }
        }
    };
    if mixed {
        let o = rw.expect("a mix comes from rw");
        let pct = mix_share(opts)?;
        notes.push(format!(
            "mix {pct}% reads, {}% writes, pattern {pattern} ← {}{}",
            100 - pct,
            from(o),
            match (opts.get("rwmixread"), opts.get("rwmixwrite")) {
                (Some(r), Some(w)) => format!(", {}, {}", from(r), from(w)),
                (Some(o), None) | (None, Some(o)) => format!(", {}", from(o)),
                (None, None) => ", fio's default rwmixread=50".into(),
            }
        ));
        return Ok((op, pattern, rw, Some(pct)));
    }
    match rw {
        Some(o) => notes.push(format!("operation {op}, pattern {pattern} ← {}", from(o))),
        None => notes.push("operation read, pattern sequential ← fio's default rw=read".into()),
    }
    for key in ["rwmixread", "rwmixwrite"] {
        if let Some(o) = opts.get(key) {
            notes.push(format!(
                "{} has no effect on rw={} (as in fio: it applies to mixed workloads)",
                from(o),
                rw.map_or("read", |r| r.value.as_str())
            ));
        }
    }
    Ok((op, pattern, rw, None))
}

/// A mixed job's percent of reads: `rwmixread`, or 100 minus `rwmixwrite`, or fio's default 50.
/// Both given must add up to 100 (fio then lets the later one win; diskscope asks for one).
/// The range (1 to 99) is `RunSpec::validate`'s, reported at the option's line.
fn mix_share(opts: &Opts) -> Result<u32, FioError> {
    let read = opts.int("rwmixread")?;
    let write = opts.int("rwmixwrite")?;
    for (v, o) in [read, write].into_iter().flatten() {
        if v > 100 {
            return Err(FioError::bad_value(
                &o.loc,
                &o.key,
                &format!("{v} is not a percent; give 1 to 99"),
            ));
        }
    }
    Ok(match (read, write) {
        (Some((r, ro)), Some((w, wo))) if r + w != 100 => {
            let later = if wo.loc.line > ro.loc.line { wo } else { ro };
            return Err(FioError::bad_value(
                &later.loc,
                &later.key,
                &format!("rwmixread={r} and rwmixwrite={w} do not add up to 100; give one of them"),
            ));
        }
        (Some((r, _)), _) => r as u32,
        (None, Some((w, _))) => 100 - w as u32,
        (None, None) => 50,
    })
}

/// `ioengine`, `bs`, `numjobs`, `iodepth`, `direct`/`buffered`: how the I/O is done.
fn engine(
    opts: &Opts,
    notes: &mut Vec<String>,
) -> Result<(Method, u64, usize, u32, bool), FioError> {
    let engine = opts.get("ioengine");
    let method = match engine.map(|o| o.value.to_ascii_lowercase()) {
        None => {
            notes.push("method pread ← fio's default ioengine=psync".into());
            Method::Pread
        }
        Some(v) => {
            let o = engine.expect("set");
            let Some((m, note)) = crate::fio::method_of_engine(&v) else {
                return Err(FioError::refused(
                    &o.loc,
                    &o.key,
                    &format!(
                        "ioengine={} is not implemented in diskscope; use one of {}",
                        crate::text::shown(&v),
                        crate::fio::engine_names()
                    ),
                ));
            };
            match note {
                Some(note) => notes.push(format!("method {m} ← {}: {note}", from(o))),
                None => notes.push(format!("method {m} ← {}", from(o))),
            }
            m
        }
    };
    // bs
    let block_size_bytes = match opts.size("bs")? {
        Some((b, o)) => {
            notes.push(format!("block_size {} ← {}", format_size(b), from(o)));
            b
        }
        None => {
            notes.push("block_size 4K ← fio's default bs=4k".into());
            4096
        }
    };
    // numjobs, iodepth
    let threads = match opts.int("numjobs")? {
        Some((n, o)) => {
            notes.push(format!("threads {n} ← {}", from(o)));
            usize::try_from(n).unwrap_or(usize::MAX)
        }
        None => 1,
    };
    let queue_depth = match opts.int("iodepth")? {
        Some((d, o)) if crate::engine::caps(method).queued => {
            notes.push(format!("queue_depth {d} ← {}", from(o)));
            u32::try_from(d).unwrap_or(u32::MAX)
        }
        Some((d, o)) => {
            if d > 1 {
                notes.push(format!(
                    "{} has no effect with a synchronous engine (as in fio): depth 1",
                    from(o)
                ));
            }
            1
        }
        None => 1,
    };
    // direct, buffered
    let mut direct = false;
    if let Some((b, o)) = opts.bool("buffered")? {
        direct = !b;
        notes.push(format!("direct {direct} ← {}", from(o)));
    }
    if let Some((d, o)) = opts.bool("direct")? {
        direct = d;
        notes.push(format!("direct {direct} ← {}", from(o)));
    }
    if crate::engine::caps(method).queued
        && !direct
        && engine.is_some_and(|o| o.value.eq_ignore_ascii_case("libaio"))
    {
        notes.push("buffered libaio blocks in fio (it is asynchronous only with direct=1); io_uring stays asynchronous".into());
    }
    Ok((method, block_size_bytes, threads, queue_depth, direct))
}

/// `invalidate`: the cache state of a read (fio's default drops the file's pages first).
fn cache_of(opts: &Opts, op: Op, notes: &mut Vec<String>) -> Result<CacheMode, FioError> {
    let job = opts.job;
    let cache = match (op, opts.bool("invalidate")?) {
        (Op::Write, _) => CacheMode::AsIs,
        (Op::Read, Some((false, o))) if job.warm_hint => {
            notes.push(format!(
                "cache warm ← {} with the `# warm:` note under the command",
                from(o)
            ));
            CacheMode::Warm
        }
        (Op::Read, Some((false, o))) => {
            notes.push(format!("cache as-is ← {}", from(o)));
            CacheMode::AsIs
        }
        (Op::Read, Some((true, o))) => {
            notes.push(format!("cache cold ← {}", from(o)));
            CacheMode::Cold
        }
        (Op::Read, None) => {
            notes.push(
                "cache cold ← fio's default invalidate=1 (drop the file's pages first)".into(),
            );
            CacheMode::Cold
        }
    };
    Ok(cache)
}

/// `runtime`, `time_based`, `ramp_time`, `loops`: the time bound, looping and repetitions.
fn timing(opts: &Opts, notes: &mut Vec<String>) -> Result<(Option<Duration>, bool, u32), FioError> {
    let runtime = match opts.get("runtime") {
        Some(o) => {
            let d = fio_time(&o.value).map_err(|m| FioError::bad_value(&o.loc, &o.key, &m))?;
            crate::config::check_seconds(d.as_secs_f64(), "runtime")
                .map_err(|e| FioError::bad_value(&o.loc, &o.key, &e.message))?;
            notes.push(format!("seconds {} ← {}", d.as_secs_f64(), from(o)));
            Some(d)
        }
        None => None,
    };
    let time_based = match opts.bool("time_based")? {
        Some((true, o)) => {
            if runtime.is_none() {
                return Err(FioError::bad_value(
                    &o.loc,
                    &o.key,
                    "time_based needs runtime (fio would run forever); add runtime=60",
                ));
            }
            notes.push(format!(
                "loop over the range until the time is up ← {}",
                from(o)
            ));
            true
        }
        _ => false,
    };
    if let Some(o) = opts.get("ramp_time") {
        let d = fio_time(&o.value).map_err(|m| FioError::bad_value(&o.loc, &o.key, &m))?;
        if !d.is_zero() {
            return Err(FioError::refused(&o.loc, &o.key, "diskscope has no ramp period that runs unmeasured; remove it (add a first job as a warm-up, or use loops=N and compare the repetitions)"));
        }
    }
    let reps = match opts.int("loops")? {
        Some((n, o)) => {
            if !(1..=1000).contains(&n) {
                return Err(FioError::bad_value(
                    &o.loc,
                    &o.key,
                    &format!("must be between 1 and 1000, got {n}"),
                ));
            }
            notes.push(format!("reps {n} ← {}", from(o)));
            n as u32
        }
        None => 1,
    };
    Ok((runtime, time_based, reps))
}

/// `fsync`, `fdatasync`, `end_fsync`, `sync`: durability of writes.
fn syncs(opts: &Opts, op: Op, notes: &mut Vec<String>) -> Result<(bool, bool), FioError> {
    let mut fsync = false;
    let mut dsync = false;
    for key in ["fsync", "fdatasync"] {
        if let Some((n, o)) = opts.int(key)? {
            match n {
                0 => {}
                1 => {
                    dsync = true;
                    notes.push(format!(
                        "dsync (O_DSYNC: every write durable before the next) ← {}",
                        from(o)
                    ));
                }
                _ => return Err(FioError::refused(&o.loc, &o.key, &format!("syncing every {n} writes is not implemented in diskscope; use {key}=1 (every write, as O_DSYNC) or end_fsync=1 (once at the end)"))),
            }
        }
    }
    if let Some((true, o)) = opts.bool("end_fsync")? {
        fsync = true;
        notes.push(format!("fsync at the end (timed) ← {}", from(o)));
    }
    if let Some(o) = opts.get("sync") {
        match o.value.to_ascii_lowercase().as_str() {
            "0" | "none" => {}
            "dsync" => {
                dsync = true;
                notes.push(format!("dsync ← {}", from(o)));
            }
            "1" | "sync" => {
                dsync = true;
                notes.push(format!("dsync ← {}: diskscope opens with O_DSYNC, fio with O_SYNC (which also flushes metadata such as timestamps)", from(o)));
            }
            _ => {
                return Err(FioError::bad_value(
                    &o.loc,
                    &o.key,
                    "write 0, 1, sync or dsync",
                ))
            }
        }
    }
    if op == Op::Read && (fsync || dsync) {
        notes.push("the sync options apply to writes; this job reads".into());
        fsync = false;
        dsync = false;
    }
    Ok((fsync, dsync))
}

/// `stonewall` and friends, `group_reporting`, `thread`: accepted, with what differs noted.
fn order(opts: &Opts, index: usize, jobs: &[Job], threads: usize, notes: &mut Vec<String>) {
    let job = opts.job;
    let waits = opts.get("stonewall").is_some()
        || opts.get("new_group").is_some()
        || opts.get("wait_for").is_some();
    if index > 0 && !waits && !job.starts_invocation {
        notes.push(format!(
            "fio starts this job together with [{}] (no stonewall); diskscope runs the jobs one after another",
            crate::text::shown(&jobs[index - 1].name)
        ));
    }
    if let Some(o) = opts.get("wait_for") {
        notes.push(format!(
            "{}: diskscope runs every job after the one before",
            from(o)
        ));
    }
    if let Some(o) = opts.get("group_reporting") {
        notes.push(format!(
            "{}: diskscope reports each job's threads together always",
            from(o)
        ));
    }
    if threads > 1 && opts.get("thread").is_none() {
        notes.push(
            "fio forks a process per job (no `thread`); diskscope's workers are threads".into(),
        );
    }
}

/// `iomem` → `--buffers`: `malloc` (fio's default: 4 KiB pages, 16 bytes into a page, which is
/// what a cached copy is slowed by), `mmap`/`shm`/`mmapshared` → `plain` (page-aligned 4 KiB
/// pages), `mmaphuge`/`shmhuge` → `hugetlb`. Without `iomem` a buffered job gets fio's `malloc`
/// and an O_DIRECT job `auto` (fio aligns O_DIRECT buffers to a page, which `auto` does too).
fn buffers_of(opts: &Opts, direct: bool, notes: &mut Vec<String>) -> Result<Buffers, FioError> {
    let Some(o) = opts.get("iomem") else {
        return Ok(if direct {
            Buffers::Auto
        } else {
            Buffers::Malloc
        });
    };
    let v = o.value.to_ascii_lowercase();
    let b = match v.as_str() {
        "malloc" if direct => Buffers::Auto,
        "malloc" => Buffers::Malloc,
        "mmap" | "shm" | "mmapshared" => Buffers::Plain,
        "mmaphuge" | "shmhuge" => Buffers::HugeTlb,
        _ => {
            return Err(FioError::refused(
                &o.loc,
                &o.key,
                &format!(
                    "iomem={} is not one diskscope can match (a hugetlbfs file, cudamalloc); write malloc, mmap or mmaphuge",
                    crate::text::shown(&o.value)
                ),
            ))
        }
    };
    notes.push(format!("buffers {b} ← {}", from(o)));
    Ok(b)
}

/// io_uring's batching and buffers, random offsets and their seed.
fn details(
    opts: &Opts,
    method: Method,
    queue_depth: u32,
    pattern: Pattern,
    notes: &mut Vec<String>,
) -> Result<(SubmitPolicy, Option<u64>), FioError> {
    // io_uring details
    let mut submit = SubmitPolicy::DEFAULT;
    if let Some((n, o)) = opts.int("iodepth_batch_submit")? {
        submit = match n {
            0 | 1 => SubmitPolicy::Each,
            n if crate::engine::caps(method).queued && n == u64::from(queue_depth) => SubmitPolicy::Batch,
            _ => return Err(FioError::refused(&o.loc, &o.key, "diskscope submits each I/O at once (1) or the whole queue at once (= iodepth); write one of those")),
        };
        notes.push(format!("submit {submit} ← {}", from(o)));
    }
    if let Some((n, o)) = opts.int("iodepth_batch_complete_min")? {
        if n != 1 {
            return Err(FioError::refused(&o.loc, &o.key, "diskscope waits for at least one completion (1, fio's default); write 1 or remove it"));
        }
    }
    if let Some((false, o)) = opts.bool("fixedbufs")? {
        notes.push(format!(
            "{}: diskscope always registers its io_uring buffers (fixedbufs=1)",
            from(o)
        ));
    }
    // random offsets
    if pattern == Pattern::Random {
        if !matches!(opts.bool("norandommap")?, Some((true, _))) {
            notes.push("fio's random map touches every block once per pass; diskscope draws offsets with replacement (as norandommap=1)".into());
        }
        if let Some((true, o)) = opts.bool("randrepeat")? {
            notes.push(format!(
                "{}: diskscope's offsets repeat from run to run (fixed seed)",
                from(o)
            ));
        }
    }
    let seed = match opts.int("randseed")? {
        Some((s, o)) => {
            notes.push(format!("seed {s} ← {}", from(o)));
            Some(s)
        }
        None => None,
    };
    Ok((submit, seed))
}

/// The point of a job on the batch's file.
pub fn spec_of(m: &Mapped, file: &FilePlan) -> Result<RunSpec, FioError> {
    let bs = m.setup.block_size_bytes.max(1);
    let mut s = RunSpec::new(&file.path);
    s.setup.op = m.setup.op;
    s.setup.pattern = m.setup.pattern;
    s.setup.method = m.setup.method;
    s.setup.block_size_bytes = m.setup.block_size_bytes;
    s.setup.threads = m.setup.threads;
    s.setup.queue_depth = m.setup.queue_depth;
    s.setup.direct = m.setup.direct;
    s.setup.cache = m.setup.cache;
    s.target.duration = m.runtime;
    s.setup.write_sync =
        crate::config::WriteSync::of(m.setup.write_sync.fsync(), m.setup.write_sync.dsync());
    s.setup.rate_iops = m.setup.rate().map(crate::config::Iops);
    s.setup.arrival = m.setup.arrival;
    s.setup.mix_read_pct = m.setup.mix_read_pct;
    if crate::engine::caps(m.setup.method).queued {
        s.setup.submit = m.setup.submit;
        s.setup.buffers = m.setup.buffers;
    }
    if let Some(seed) = m.seed {
        s.safety.seed = seed;
    }
    let region = m
        .region_bytes
        .unwrap_or(file.size_bytes)
        .min(file.size_bytes);
    let covers_file = region + bs * m.setup.threads as u64 > file.size_bytes;
    s.target.block_count = if m.time_based {
        if covers_file && m.setup.op == Op::Read {
            None
        } else {
            s.target.loop_range = true;
            Some((region / bs).max(1))
        }
    } else {
        Some(m.number_ios.unwrap_or(region.div_ceil(bs)).max(1))
    };
    if m.setup.op == Op::Write {
        s.safety.force = true;
        s.safety.overwrite_in_place = true;
    }
    s.validate(&TOML_NAMES).map_err(|e| {
        let has = |k: &str| {
            Opts {
                job: m.job,
                kb_base: 1024,
            }
            .get(k)
            .is_some()
        };
        let option = match e.key.as_deref() {
            Some("block_size") => "bs",
            Some("threads") => "numjobs",
            Some("queue_depth") => "iodepth",
            Some("direct") => "direct",
            Some("block_count") => "size",
            // A mix's share (rwmixread/rwmixwrite) or what it cannot run with (the method, a
            // rate): the option that made the job a mix, or the share it named.
            Some("mix") if e.message.contains("percent") => {
                if has("rwmixread") {
                    "rwmixread"
                } else if has("rwmixwrite") {
                    "rwmixwrite"
                } else {
                    "rw"
                }
            }
            Some("mix") if e.message.starts_with("method") => "ioengine",
            Some("mix") => "rw",
            _ => "",
        };
        let opts = Opts {
            job: m.job,
            kb_base: 1024,
        };
        match opts.get(option) {
            Some(o) => FioError::bad_value(&o.loc, &o.key, &e.message),
            None => FioError::refused(
                &m.job.header,
                if option.is_empty() { "job" } else { option },
                &e.message,
            ),
        }
    })?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_become_usable_experiment_names() {
        assert_eq!(sanitise("seq read/4k"), "seq-read-4k");
        assert_eq!(sanitise(".hidden"), "hidden");
        assert_eq!(sanitise("..."), "job");
    }
}
