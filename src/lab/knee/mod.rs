//! The lab kind `knee`: the highest rate a file's device serves while the response time p99
//! stays under a target (`diskscope knee FILE --p99 2ms`, and `kind = "knee"` in a sweep).
//!
//! Why a search and not a sweep of rates: every point must run long enough for its p99 to mean
//! something (a few thousand operations), so a fine sweep of rates costs minutes where a
//! bracket needs a handful of points. [`search`] holds the pure search (which rates, when to
//! stop, how sure), [`probe`] measures a point with the one `runner::Run`, [`svg`] draws the
//! curve. Its parameters are one struct, [`KneeParams`], both the command's flags (clap) and a
//! sweep's `params = { ... }` (serde, unknown keys refused), checked by one [`KneeParams::plan`]
//! in the same words (a flag is named `--p99`, a key `p99`).
//!
//! Reads only: the knee of an explored file is measured without writing to it.

pub mod command;
pub mod params;
pub mod probe;
pub mod search;
pub mod svg;

pub use params::{parse_time_us, KneeParams, Plan, Syntax};
pub use search::{Ceiling, Knee, Point, Settings, Stop};

/// `diskscope knee FILE --p99 2ms [...]`
#[derive(Debug, clap::Args)]
pub struct KneeArgs {
    /// File to read (never written)
    pub file: std::path::PathBuf,
    #[command(flatten)]
    pub params: KneeParams,
    /// Print one JSON document (the answer, its bracket, every point) on stdout instead of the
    /// knee's rate alone
    #[arg(long)]
    pub json: bool,
    /// Also draw response time against offered rate, the knee marked, into this new SVG file
    /// (the same as --export-svg)
    #[arg(long, value_name = "FILE.svg")]
    pub svg: Option<std::path::PathBuf>,
    /// The answer and every point as CSV (--export-csv), the --json document (--export-json),
    /// the figure (--export-svg) or a page with both (--export-html), each into a new file
    #[command(flatten)]
    pub export: crate::export::manager::ExportArgs,
    /// Replace existing --svg and --export-* files
    #[arg(long)]
    pub force: bool,
}

/// A finished search as a sweep's writers need it: the answer, or the error that ended the
/// search before one, and the seconds it took. A knee experiment hands it to the executor as
/// its own row (`sweep::experiment::Row::Knee`), so the summary CSV, the figure and the HTML
/// report read the answer from the sweep's outcome, like every other row.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The answer; None when a run failed (see `error`).
    pub knee: Option<Knee>,
    /// Why there is no answer; empty with one.
    pub error: String,
    pub elapsed_s: f64,
}

/// Runs the search of `plan` on its file, with the real probe; `on_point` sees each point.
/// Returns the answer and every run's record (closed loop first), and the seconds it took.
pub fn run(
    plan: &Plan,
    experiment: &str,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    on_point: &mut dyn FnMut(&Point),
) -> anyhow::Result<(Knee, Vec<crate::measure::RunResult>, f64)> {
    let mut probe = probe::RunProbe::new(plan, experiment, stop.clone());
    let knee = search::search(&plan.settings, &mut probe, &stop, on_point)?;
    // A bracket end decided on fewer operations than a p99 needs is no answer.
    for (end, rate) in [("knee", knee.knee_iops), ("failing rate", knee.fail_iops)] {
        let thin = rate.and_then(|r| {
            knee.points
                .iter()
                .filter(|p| p.offered_iops == r)
                .map(|p| p.ops)
                .min()
        });
        if let Some(ops) = thin.filter(|&n| n < MIN_P99_OPS) {
            anyhow::bail!(
                "the {end} at {:.0} IOPS rests on a point of {ops} operations, fewer than the \
                 {MIN_P99_OPS} a p99 needs (one in a hundred above it); no knee is reported: \
                 raise --seconds or --min-ops",
                rate.unwrap_or_default()
            );
        }
    }
    Ok((knee, probe.results, probe.elapsed_s))
}

/// Fewest operations a point deciding the answer may hold: a p99 from fewer is the maximum of
/// a handful of operations, not a percentile.
pub const MIN_P99_OPS: u64 = 100;

/// The setup of a plan in a few words, for titles and stderr: `pread 4K random t1 qd1 poisson`.
pub fn setup_words(plan: &Plan) -> String {
    let s = &plan.base;
    format!(
        "{} {} {} t{}{}{} {} arrivals, cache {}",
        s.setup.method,
        crate::size::format_size(s.setup.block_size_bytes),
        s.setup.pattern,
        s.setup.threads,
        if s.setup.queue_depth > 1 {
            format!(" qd{}", s.setup.queue_depth)
        } else {
            String::new()
        },
        if s.setup.direct { " O_DIRECT" } else { "" },
        s.setup.arrival,
        s.setup.cache,
    )
}

/// One point as a line for stderr.
pub fn point_line(p: &Point, target_us: f64) -> String {
    format!(
        "{:>9.0} IOPS offered, {:>9.0} achieved, {:.1} s: response p50 {}, p99 {} (95%: {} to \
         {}), p99.9 {}; service p99 {} -> {}",
        p.offered_iops,
        p.achieved_iops,
        p.seconds,
        svg::fmt_us(p.resp_p50_us),
        svg::fmt_us(p.resp_p99_us),
        svg::fmt_us(p.resp_p99_low_us),
        svg::fmt_us(p.resp_p99_high_us),
        svg::fmt_us(p.resp_p999_us),
        svg::fmt_us(p.lat_p99_us),
        if p.misses_on_a_burst(target_us) {
            format!(
                "missed, on one burst (p99 {} without it)",
                svg::fmt_us(p.resp_p99_no_burst_us.unwrap_or(f64::NAN))
            )
        } else if p.fell_behind {
            "missed (fell behind its schedule)".to_string()
        } else if p.meets(target_us) {
            "met".to_string()
        } else {
            "missed".to_string()
        }
    )
}
