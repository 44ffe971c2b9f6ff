//! `knee FILE --p99 2ms`: prints the highest rate whose response-time p99 stays under the
//! target (the lab kind `lab::knee` searches), alone on stdout, or one JSON document with
//! `--json`; each point, the bracket and why the search stopped on stderr; the figure with
//! `--svg`. Exit 0 with a knee, 1 when no rate met the target or a run failed, 2 for bad
//! usage, 130 when interrupted.

use crate::config::{usage, EXIT_INTERRUPTED};
use crate::lab::knee::{self, Knee, KneeArgs, Stop, Syntax};
use crate::lab::println_stdout;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub fn execute(a: &KneeArgs) -> anyhow::Result<i32> {
    let plan = a.params.plan(&a.file, Syntax::Flag)?;
    if let Some(svg) = &a.svg {
        // Refused before minutes of measuring, not after.
        if let Some(refusal) = crate::fsguard::output_refusal(svg, a.force, "--svg") {
            return Err(usage(refusal));
        }
    } else if a.force {
        return Err(usage(
            "--force: applies to --svg (replace an existing figure); remove it",
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let target = plan.settings.target_p99_us;
    // Said at the first point, so a file the run refuses gets its one error line alone.
    let header = format!(
        "knee of {}: {}, response p99 under {}; {} s a point (at least {} ops), bracket {}%",
        crate::text::shown_path(&a.file),
        knee::setup_words(&plan),
        knee::svg::fmt_us(target),
        plan.seconds,
        plan.min_ops,
        plan.settings.tolerance * 100.0
    );
    let mut first = true;
    let (k, _, elapsed_s) = knee::run(&plan, "knee", stop.clone(), &mut |p| {
        if std::mem::take(&mut first) {
            eprintln!("{header}");
        }
        eprintln!("{}", knee::point_line(p, target))
    })?;
    eprintln!(
        "closed loop: {:.0} IOPS, service p99 {}",
        k.ceiling.iops,
        knee::svg::fmt_us(k.ceiling.lat_p99_us)
    );
    eprintln!("{}", k.confidence_line());
    eprintln!(
        "{} points measured ({} of them again after a miss on one burst), {} reused, in \
         {elapsed_s:.1} s",
        k.measured, k.remeasured, k.reused
    );
    if let Some(svg) = &a.svg {
        let text = knee::svg::render(&format!("knee: {}", knee::setup_words(&plan)), &k)?;
        crate::fsguard::write_output_with(svg, text.as_bytes(), a.force, "--svg", usage)?;
        eprintln!("figure: {}", crate::text::shown_path(svg));
    }
    if a.json {
        println_stdout(&document(&a.file, &plan, &k, elapsed_s)?)?;
    } else if let (Some(r), false) = (k.knee_iops, k.stop == Stop::Interrupted) {
        // An interrupted search has no answer to print, only its points (on stderr).
        println_stdout(&format!("{r:.0}"))?;
    }
    Ok(match (k.stop, k.knee_iops) {
        (Stop::Interrupted, _) => EXIT_INTERRUPTED,
        (_, None) => 1,
        _ => 0,
    })
}

/// The `--json` document: the setup, the answer with its bracket and stop reason, every point.
fn document(
    file: &std::path::Path,
    plan: &knee::Plan,
    k: &Knee,
    elapsed_s: f64,
) -> anyhow::Result<String> {
    let s = &plan.base;
    let doc = serde_json::json!({
        "command": "knee",
        "file": file.display().to_string(),
        "setup": {
            "method": s.setup.method,
            "block_size_bytes": s.setup.block_size_bytes,
            "pattern": s.setup.pattern,
            "threads": s.setup.threads,
            "queue_depth": s.setup.queue_depth,
            "direct": s.setup.direct,
            "cache": s.setup.cache,
            "arrival": s.setup.arrival,
            "point_seconds": plan.seconds,
            "min_ops": plan.min_ops,
        },
        "target_p99_us": k.settings_target_p99_us,
        "tolerance_pct": k.tolerance * 100.0,
        "knee_iops": k.knee_iops,
        "crossing_iops": k.crossing_iops(),
        "slope": k.slope(),
        "fail_iops": k.fail_iops,
        "bracket_pct": k.bracket_share().map(|x| x * 100.0),
        "stop": k.stop,
        "stop_reason": k.stop.describe(k.tolerance),
        "confidence": k.confidence_line(),
        "marginal": k.marginal,
        "not_monotone": k.not_monotone,
        "ceiling": k.ceiling,
        "points_measured": k.measured,
        "points_reused": k.reused,
        "points_remeasured": k.remeasured,
        "seconds": elapsed_s,
        "points": k.points,
    });
    Ok(serde_json::to_string_pretty(&doc)?)
}
