//! `fast FILE`: prints the XOR of the whole file on stdout, alone; the road taken, why, the
//! seconds and GiB/s on stderr (or one JSON document with `--json`). The roads are the lab
//! kind's (`crate::lab::fast`).

use crate::lab::fast::{xor_file, FastArgs, Report, Settings};
use crate::lab::println_stdout;
use crate::xor::format_xor;
use serde_json::json;
use std::path::Path;
use std::time::Instant;

pub fn execute(a: &FastArgs) -> anyhow::Result<i32> {
    // The run's facts: the first look before the clock starts, the second after it stops.
    let facts = crate::facts::Gatherer::start(&a.file);
    let started = Instant::now();
    // Ctrl-C (and SIGTERM, SIGHUP) ends fast at once with 130, whatever its threads are blocked
    // in (a pipe that never ends, a slow disk): it only reads, so there is nothing to undo. The
    // handler's thread exits the process (or this thread, for a signal that came while the
    // reaction was being set); a handler that cannot be set (no thread to be had) leaves the
    // default, which ends it too.
    let file = a.file.clone();
    crate::interrupt::on_signal(move |_| {
        crate::eprintln_shown!(
            "interrupted: stopped reading {} before the end; no XOR is printed",
            crate::text::shown_path(&file)
        );
        std::process::exit(crate::config::EXIT_INTERRUPTED);
    });
    let settings = Settings::from_args(a)?;
    let verbose = a.verbose;
    let report = xor_file(&a.file, &settings, &mut |line| {
        if verbose {
            crate::eprintln_shown!("fast: {line}");
        }
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let facts = std::sync::Arc::new(facts.finish(crate::facts::RunSide::default()));
    for w in &report.warnings {
        crate::eprintln_shown!("fast: {w}");
    }
    let (road, t, bs) = (report.road.as_str(), report.threads, report.block_bytes);
    let qd = report.queue_depth;
    let e = crate::explain::fast_explanation(&a.file, road, t, bs, qd, report.bytes, seconds);
    let verdict = fast_verdict(&a.file, &report, qd, seconds, facts);
    if a.json {
        let doc = fast_document(&a.file, &report, qd, seconds, e.as_ref(), &verdict)?;
        println_stdout(&doc)?;
    } else {
        println_stdout(&format_xor(report.xor))?;
    }
    crate::eprintln_shown!("{}", report.summary(seconds));
    crate::eprintln_shown!("{}", crate::explain::context_line(&a.file));
    if let Some(e) = e {
        crate::eprintln_shown!("fast: {}", e.line);
    }
    for line in verdict.lines() {
        crate::eprintln_shown!("fast: {line}");
    }
    Ok(0)
}

/// The verdict of a `fast` pass (issues 23, 36): its road as a result (no timeline, no worker
/// CPU time: fast times one whole pass), judged from the pass's own facts (its I/O, the file's
/// extents, who else ran), the file's context and profile.
fn fast_verdict(
    file: &Path,
    report: &Report,
    queue_depth: u32,
    seconds: f64,
    facts: std::sync::Arc<crate::facts::Facts>,
) -> crate::explain::verdict::Verdict {
    use crate::config::{CacheMode, Method, Op, Pattern};
    use crate::explain::verdict::judge;
    let road = report.road.as_str();
    let (method, cache, direct, bs) = match road {
        "mmap" => (Method::Mmap, CacheMode::AsIs, false, 8 << 20),
        "direct" => (
            Method::IoUring,
            CacheMode::Cold,
            true,
            report.block_bytes as u64,
        ),
        "buffered" => (
            Method::Pread,
            CacheMode::Cold,
            false,
            report.block_bytes as u64,
        ),
        _ => (
            Method::Pread,
            CacheMode::AsIs,
            false,
            report.block_bytes as u64,
        ),
    };
    let mut r = crate::measure::RunResult {
        identity: crate::measure::result::Identity {
            file: file.display().to_string(),
            file_size_bytes: report.bytes,
            ..Default::default()
        },
        setup: crate::config::RecordedSetup {
            op: Op::Read.into(),
            method: method.into(),
            pattern: Pattern::Sequential.into(),
            cache: cache.into(),
            direct,
            block_size_bytes: bs.max(1),
            threads: if direct { 1 } else { report.threads.max(1) },
            queue_depth: if direct { queue_depth.max(1) } else { 1 },
            ..Default::default()
        },
        figures: crate::measure::result::Figures {
            bytes: report.bytes,
            seconds,
            ops: report.bytes.div_ceil(bs.max(1)),
            residency_before_pct: f64::NAN,
            ..Default::default()
        },
        facts: Some(facts.section()),
        ..Default::default()
    };
    r.set_rates();
    let ctx = crate::explain::context::Context::collect(file);
    let profile = crate::explain::profile_for(file);
    judge(&r, Some(&facts), &ctx, profile.as_ref().map(|(p, _)| p))
}

/// The document of a `fast` run: its road and setup, the XOR and the figures (fast keeps no
/// latency histogram: it times the whole pass), and the model's explanation.
fn fast_document(
    file: &Path,
    report: &Report,
    queue_depth: u32,
    seconds: f64,
    explanation: Option<&crate::explain::model::Explanation>,
    verdict: &crate::explain::verdict::Verdict,
) -> anyhow::Result<String> {
    let ctx = crate::explain::context::Context::collect(file);
    let setup = json!({
        "file": file.display().to_string(),
        "road": report.road.as_str(),
        "threads": report.threads,
        "block_size_bytes": report.block_bytes,
        "queue_depth": queue_depth,
        "why_this_road": report.reason,
    });
    let mib_s = report.bytes as f64 / (1024.0 * 1024.0) / seconds.max(1e-9);
    let row = json!({
        "xor": crate::xor::format_xor(report.xor),
        "bytes": report.bytes,
        "seconds": seconds,
        "mib_s": mib_s,
        "gib_s": mib_s / 1024.0,
        "bound": explanation.map(|e| e.prediction.bound.to_string()),
        "bound_mib_s": explanation.map(|e| e.prediction.bound_mib_s),
        "pct_of_bound": explanation.map(|e| e.pct_of_bound),
        "verdict": verdict.verdict.as_str(),
        "reasons": verdict.codes(),
        "why": verdict.sentences(),
    });
    crate::explain::json::document(
        "fast",
        &ctx,
        setup,
        &[row],
        &[explanation.cloned()],
        &["fast times one whole pass: no per-operation latency percentiles".to_string()],
    )
}
