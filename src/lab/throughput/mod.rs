//! The lab kind `throughput`: how fast a file reads or writes at one setting (method, block
//! size, threads, queue depth, cache, O_DIRECT, pattern). Its parameters are the `run` and
//! `run2` command lines ([`RunArgs`], [`Run2Args`], sharing [`IoOpts`]), validated into one
//! [`RunSpec`] by `config`; the runner measures it. The sweep's `throughput` experiments build
//! the same [`RunSpec`] from their TOML axes (`sweep::points`), so a flag and a key are checked by
//! the same `RunSpec::validate`.

pub mod run2_command;
pub mod run_command;

use crate::config::spec::{RunSpec, CLI_NAMES};
use crate::config::{parse_block_size, parse_count, CacheMode, Method, Op};
use crate::lab::flags::SetupFlags;
use crate::measure::result::Schedule;
use crate::measure::RunResult;
use crate::size::format_bytes_approx;
use clap::{ArgGroup, Args};
use std::path::PathBuf;

/// Options shared by `run` and `run2`: the setup's flags (with `run`'s defaults, [`run_base`],
/// which each command's help shows) and what bounds or observes a run.
#[derive(Debug, Args, Clone)]
pub struct IoOpts {
    // `--method` has no default of its own, so a mixed run can tell "not given" from "read".
    #[command(flatten)]
    pub setup: SetupFlags,
    /// Most memory the I/O buffers may take (threads x queue depth x block size); default: half
    /// of the memory available
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// The block layer's own clock (root, or CAP_BPF and CAP_PERFMON): each block request of
    /// the run timed in the block layer's queue and in the device, with its size as issued,
    /// merges and splits, per interval and for the run. --kernel counts the run's own requests
    /// (process); --kernel=device every request sent to the file's disk. Without permission
    /// the run says why once and is otherwise unchanged
    #[arg(
        long,
        value_name = "FILTER",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "process"
    )]
    pub kernel: Option<String>,
}

/// `run FILE -r|-w BLOCK_SIZE BLOCK_COUNT`
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("mode").required(true).args(["read", "write", "mix"])))]
#[command(mut_args(|a| {
    crate::lab::flags::show_default(a, &run_base(), &[("method", "read; pread with --mix")])
}))]
pub struct RunArgs {
    /// File to read, or to create when writing
    pub file: PathBuf,
    /// Read the file
    #[arg(short = 'r', long = "read")]
    pub read: bool,
    /// Write deterministic pseudo-random data (refuses an existing file without --force)
    #[arg(short = 'w', long = "write")]
    pub write: bool,
    /// Mix reads and writes: this percent of the operations read, the rest write (fio's
    /// rw=randrw with rwmixread; --pattern random for randrw, sequential for rw). A mix writes:
    /// it creates FILE like -w (refuses an existing file without --force), lays it out before
    /// the clock, and reports each direction apart
    #[arg(
        short = 'm',
        long = "mix",
        visible_alias = "rwmixread",
        value_name = "READ_PCT",
        allow_negative_numbers = true
    )]
    pub mix: Option<String>,
    /// Bytes per operation: 4096, 4K, 1M, 1MiB (1 to 1G)
    #[arg(value_name = "BLOCK_SIZE", allow_negative_numbers = true)]
    pub block_size: String,
    /// Number of blocks (reads stop early at end of file)
    #[arg(value_name = "BLOCK_COUNT", allow_negative_numbers = true)]
    pub block_count: String,
    #[command(flatten)]
    pub io: IoOpts,
    /// Replace an existing file when writing, and existing --export-* files
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub write_opts: WriteOpts,
    /// Also print (on stderr) the fio command line that does the same I/O
    #[arg(long)]
    pub fio: bool,
    /// Print one JSON document (context, setup, figures, latency percentiles) on stdout instead
    /// of the XOR alone
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub timeline: TimelineOpts,
    /// Open loop: issue at this rate, operations per second over all threads (2000) or a
    /// throughput (50 MiB/s); every operation has an intended start on the schedule, and the
    /// run reports response times (from that start) beside service times (from the issue)
    // allow_hyphen_values: `--rate -5` reaches the rate's own check ("must be above 0"),
    // not clap's "unexpected argument '-5'".
    #[arg(long, value_name = "RATE", allow_hyphen_values = true)]
    pub rate: Option<String>,
    /// With --rate: how the intended starts are spaced, constant or poisson
    #[arg(long, default_value = "constant", value_name = "ARRIVAL")]
    pub arrival: String,
    /// The result row as CSV (--export-csv; a sweep's per-repetition columns), the --json
    /// document (--export-json), the timeline figure (--export-svg) or a page with all of them
    /// (--export-html), each into a new file (--force replaces an existing one)
    #[command(flatten)]
    pub export: crate::export::manager::ExportArgs,
}

/// How `run -w` (or a mix) makes its writes durable and lays its file out.
#[derive(Debug, Args, Clone)]
pub struct WriteOpts {
    /// fsync the file at the end of a write (timed)
    #[arg(long)]
    pub fsync: bool,
    /// Open with O_DSYNC: every write is durable before it returns
    #[arg(long)]
    pub dsync: bool,
    /// On Ctrl-C during a write, keep the partial file instead of removing it
    #[arg(long)]
    pub keep_partial: bool,
    /// Writes: preallocate the file before the run: native (fallocate, fio's default) or none
    #[arg(long, default_value = "native", value_name = "MODE")]
    pub prealloc: String,
}

/// The timeline flags of `run` (see `measure::timeline`).
#[derive(Debug, Args, Clone)]
pub struct TimelineOpts {
    /// Write the run's timeline to this new CSV: one row per interval with MiB/s, IOPS, latency
    /// percentiles, and the device's and CPUs' counters on the same clock
    #[arg(long = "timeline", value_name = "FILE.csv")]
    pub timeline_csv: Option<PathBuf>,
    /// Length of one timeline interval: 1s, 200ms, 0.5 (seconds); 100ms to 3600s, in steps of
    /// 100ms
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub interval: String,
    /// Write every operation (worker,end_ns,latency_ns) to this new CSV; costs 16 bytes of
    /// memory per operation per 100 ms, written by the collecting thread, not the workers
    #[arg(long, value_name = "FILE")]
    pub log_ops: Option<PathBuf>,
}

/// `run2 FILE BLOCK_SIZE [--target SECONDS]`
#[derive(Debug, Args)]
#[command(mut_args(|a| crate::lab::flags::show_default(a, &run_base(), &[])))]
pub struct Run2Args {
    /// File to read (read only): it must be big enough to take --target seconds
    pub file: PathBuf,
    /// Bytes per read: 4096, 4K, 1M
    #[arg(value_name = "BLOCK_SIZE", allow_negative_numbers = true)]
    pub block_size: String,
    /// Seconds the read must take at least
    #[arg(
        long,
        default_value_t = 5.0,
        value_name = "SECONDS",
        allow_negative_numbers = true
    )]
    pub target: f64,
    #[command(flatten)]
    pub io: IoOpts,
    /// Print one JSON document (context, setup, figures, latency percentiles) on stdout instead
    /// of the XOR alone
    #[arg(long)]
    pub json: bool,
}

/// `run`'s starting setup: every setting a flag leaves alone (read(2), sequential, one thread,
/// a queue depth of 8 for io_uring), so its defaults are written once, here.
pub fn run_base() -> crate::config::Setup {
    crate::config::Setup {
        method: Method::Read,
        queue_depth: 8,
        ..crate::config::Setup::default()
    }
}

/// Applies the shared I/O options to a spec (names in errors are the CLI flags).
pub fn apply_io_opts(spec: &mut RunSpec, io: &IoOpts) -> anyhow::Result<()> {
    spec.setup = crate::config::Setup {
        op: spec.setup.op,
        mix_read_pct: spec.setup.mix_read_pct,
        block_size_bytes: spec.setup.block_size_bytes,
        ..run_base()
    };
    io.setup
        .apply(&mut spec.setup, |k| format!("--{}", k.replace('_', "-")))?;
    spec.safety.max_memory_bytes = io
        .max_memory
        .as_deref()
        .map(crate::config::parse_max_memory)
        .transpose()?;
    spec.kernel = io
        .kernel
        .as_deref()
        .map(|k| crate::config::parse_kernel_filter(k, "--kernel"))
        .transpose()?;
    Ok(())
}

/// Builds the validated spec of a `run` command line.
pub fn spec_of(a: &RunArgs) -> anyhow::Result<RunSpec> {
    let mut spec = RunSpec::new(&a.file);
    let writes = a.write || a.mix.is_some();
    spec.setup.op = if writes { Op::Write } else { Op::Read };
    spec.setup.mix_read_pct = a.mix.as_deref().map(parse_mix).transpose()?;
    spec.setup.block_size_bytes = parse_block_size(&a.block_size, "BLOCK_SIZE")?;
    spec.target.block_count = Some(parse_count(&a.block_count, "BLOCK_COUNT")?);
    apply_io_opts(&mut spec, &a.io)?;
    if spec.is_mixed() && a.io.setup.method.is_none() {
        // `run`'s default method is read(2), which has one file position and no mix; a mix
        // without --method runs pread, fio's psync.
        spec.setup.method = Method::Pread;
    }
    spec.safety.force = a.force;
    spec.setup.write_sync = crate::config::WriteSync::of(a.write_opts.fsync, a.write_opts.dsync);
    spec.setup.prealloc = crate::config::Prealloc::parse(&a.write_opts.prealloc, "--prealloc")?;
    spec.setup.arrival = crate::config::Arrival::parse(&a.arrival, "--arrival")?;
    spec.setup.rate_iops = a
        .rate
        .as_deref()
        .map(|r| crate::measure::pacer::parse_rate(r, spec.setup.block_size_bytes, "--rate"))
        .transpose()
        .map_err(crate::config::usage)?
        .map(crate::config::Iops);
    if spec.setup.rate().is_none() && spec.setup.arrival != crate::config::Arrival::Constant {
        return Err(crate::config::usage(
            "--arrival: applies to open-loop runs; add --rate N (operations per second)",
        ));
    }
    // --force also lets --export-* replace an old file, on a read too.
    if !writes
        && ((a.force && !a.export.any())
            || a.write_opts.fsync
            || a.write_opts.dsync
            || a.write_opts.keep_partial)
    {
        return Err(crate::config::usage(
            "--force, --fsync, --dsync and --keep-partial apply to writes (-w); remove them or \
             use -w",
        ));
    }
    spec.validate(&CLI_NAMES)?;
    Ok(spec)
}

/// Parses `--mix` (percent of operations that read, a whole number; `70` or `70%`). The range
/// (1 to 99) and the conflicts are `config::spec::check_mix`'s.
pub fn parse_mix(text: &str) -> Result<u32, crate::config::UsageError> {
    text.trim()
        .trim_end_matches('%')
        .parse::<u32>()
        .map_err(|_| {
            crate::config::UsageError::new(
                "--mix",
                format!(
                    "'{}' is not a percent of reads; give a whole number from 1 to 99 (70 = 70% \
                     reads, 30% writes, like fio's rwmixread=70)",
                    crate::text::shown(text)
                ),
            )
        })
}

/// Builds the validated spec of a `run2` command line: its first step, one block (the search
/// changes only the count).
pub fn run2_spec(a: &Run2Args) -> anyhow::Result<RunSpec> {
    let mut spec = RunSpec::new(&a.file);
    spec.setup.block_size_bytes = parse_block_size(&a.block_size, "BLOCK_SIZE")?;
    apply_io_opts(&mut spec, &a.io)?;
    spec.target.block_count = Some(1);
    spec.validate(&CLI_NAMES)?;
    Ok(spec)
}

/// What `run --checksum none` says on stderr, under its summary, where stdout has no XOR.
pub const CHECKSUM_NONE_LINE: &str = "checksum none: data not XOR-ed";

/// The open-loop lines of a result (`--rate`), for stderr: the response-time percentiles beside
/// the service times, and whether the device kept up. Empty for a closed-loop run.
pub fn open_loop_lines(r: &RunResult) -> Vec<String> {
    let (Some(asked), Some(schedule)) = (r.setup.rate(), r.schedule()) else {
        return Vec::new();
    };
    let o = r.open_loop.clone().unwrap_or_default();
    vec![
        format!(
            "open loop at {asked:.0} IOPS: service time (issue -> completion) p50 {:.2} µs, p90 \
             {:.2} µs, p99 {:.2} µs, p99.9 {:.2} µs, max {:.1} µs",
            r.figures.lat_p50_us,
            r.figures.lat_p90_us,
            r.figures.lat_p99_us,
            r.figures.lat_p999_us,
            r.figures.lat_max_us
        ),
        format!(
            "open loop at {asked:.0} IOPS: response time (intended start -> completion) p50 \
             {:.2} µs, p90 {:.2} µs, p99 {:.2} µs, p99.9 {:.2} µs, max {:.1} µs",
            o.resp_p50_us, o.resp_p90_us, o.resp_p99_us, o.resp_p999_us, o.resp_max_us
        ),
        match schedule {
            // Nothing to keep up with or fall behind on: an empty file, or a run stopped first.
            Schedule::Idle => {
                format!("no operation completed, so no rate was kept (0 of {asked:.0} IOPS asked)")
            }
            Schedule::FellBehind => format!(
                "fell behind: achieved {:.0} of {asked:.0} IOPS, backlog {} ops at the end",
                o.rate_iops_achieved, o.backlog_ops
            ),
            Schedule::KeptUp => format!(
                "kept up: achieved {:.0} of {asked:.0} IOPS",
                o.rate_iops_achieved
            ),
        },
    ]
}

/// The mix as asked and as done (`mix 70/30 asked, 69.8/30.2 done (reads/writes)`): what a
/// mixed run prints on stdout where a pure run prints its XOR. A mix reads data its own writes
/// change under it, so it has no XOR that means anything; the mix it did is its answer. `None`
/// for a pure run.
pub fn mix_answer(r: &RunResult) -> Option<String> {
    let asked = r.setup.mix_read_pct?;
    let done = r
        .mix
        .as_ref()
        .and_then(|m| m.mix_read_pct_done)
        .unwrap_or(f64::NAN);
    Some(format!(
        "mix {asked}/{} asked, {done:.1}/{:.1} done (reads/writes of {} operations)",
        100 - asked,
        100.0 - done,
        r.figures.ops
    ))
}

/// Each direction of a mixed run, for stderr: throughput, IOPS and latency percentiles of its
/// reads and of its writes. Empty for a pure run.
pub fn mix_lines(r: &RunResult) -> Vec<String> {
    let Some(m) = r.mix.as_ref().filter(|_| r.setup.mix_read_pct.is_some()) else {
        return Vec::new();
    };
    let line = |what: &str, bytes: u64, ops: u64, q: [f64; 6]| {
        format!(
            "  {what}: {} in {ops} ops, {:.1} MiB/s, {:.0} IOPS | latency p50 {:.2} µs, p99 {:.2} \
             µs, p99.9 {:.2} µs, max {:.1} µs",
            format_bytes_approx(bytes),
            q[0],
            q[1],
            q[2],
            q[3],
            q[4],
            q[5],
        )
    };
    let mut out =
        vec!["no XOR: a mixed run reads data its own writes replace while it runs".into()];
    out.push(line(
        "reads ",
        m.read_bytes,
        m.read_ops,
        [
            m.read_mib_s,
            m.read_iops,
            m.read_lat_p50_us,
            m.read_lat_p99_us,
            m.read_lat_p999_us,
            m.read_lat_max_us,
        ],
    ));
    out.push(line(
        "writes",
        m.write_bytes,
        m.write_ops,
        [
            m.write_mib_s,
            m.write_iops,
            m.write_lat_p50_us,
            m.write_lat_p99_us,
            m.write_lat_p999_us,
            m.write_lat_max_us,
        ],
    ));
    out
}

/// The system call a write made with `method`: `read` writes with `write(2)`, `pread` with
/// `pwrite(2)`; the other methods' names cover both directions (`io_uring`, `buffered`).
pub fn write_call(method: Method) -> &'static str {
    crate::engine::caps(method).write_call
}

/// How a write was made durable: `sync none` (left in the page cache), `sync fsync` (one timed
/// fsync at the end), `sync O_DSYNC` (every write durable before it returns), or both.
pub fn sync_label(fsync: bool, dsync: bool) -> &'static str {
    match (dsync, fsync) {
        (false, false) => "sync none",
        (false, true) => "sync fsync",
        (true, false) => "sync O_DSYNC",
        (true, true) => "sync O_DSYNC + fsync",
    }
}

/// The one-line human summary of a result, for stderr. `spec` is the run's own spec: a write
/// names its system call and its sync mode, and no residency (it measured the file it was
/// about to create or replace, which says nothing of the data written).
pub fn summary_line(spec: &RunSpec, r: &RunResult) -> String {
    let head = format!(
        "{} {} in {:.4} s: {:.1} MiB/s, {} ops, {:.0} IOPS | latency p50 {:.2} µs, p99 {:.2} µs, max {:.1} µs",
        if r.setup.op == Op::Write {
            "wrote"
        } else if spec.is_mixed() {
            "moved"
        } else {
            "read"
        },
        format_bytes_approx(r.figures.bytes),
        r.figures.seconds,
        r.figures.mib_s,
        r.figures.ops,
        r.figures.iops,
        r.figures.lat_p50_us,
        r.figures.lat_p99_us,
        r.figures.lat_max_us,
    );
    let threads = format!(
        "{} thread{}, {}{}",
        r.setup.threads,
        if r.setup.threads == 1 { "" } else { "s" },
        crate::size::format_size(r.setup.block_size_bytes),
        if r.setup.direct { " O_DIRECT" } else { "" },
    );
    if spec.setup.op == Op::Write {
        let cache = if spec.setup.cache == CacheMode::AsIs {
            String::new()
        } else {
            format!(", cache {}", r.setup.cache)
        };
        return format!(
            "{head} | {}, {threads}, {}, buffers {}{cache}",
            if spec.is_mixed() && spec.setup.method == Method::Pread {
                "pread/pwrite"
            } else {
                write_call(spec.setup.method)
            },
            sync_label(spec.setup.write_sync.fsync(), spec.setup.write_sync.dsync()),
            r.setup.buffers.as_str(),
        );
    }
    format!(
        "{head} | {}, {threads}, buffers {}, cache {} ({})",
        r.setup.method,
        r.setup.buffers.as_str(),
        r.setup.cache,
        if r.figures.residency_before_pct.is_nan() {
            "residency unknown".to_string()
        } else {
            format!("{:.1}% resident before", r.figures.residency_before_pct)
        },
    )
}
