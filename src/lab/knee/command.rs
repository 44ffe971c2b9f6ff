//! `knee FILE --p99 2ms`: prints the highest rate whose response-time p99 stays under the
//! target (the lab kind `lab::knee` searches), alone on stdout, or one JSON document with
//! `--json`; each point, the bracket and why the search stopped on stderr; the figure, the
//! points and the document into files with `--export-svg` (or `--svg`), `--export-csv`,
//! `--export-json`, `--export-html` ([`KneeResults`], through the one export path). Exit 0 with
//! a knee, 1 when no rate met the target or a run failed, 2 for bad usage, 130 when
//! interrupted.

use crate::config::{usage, EXIT_INTERRUPTED};
use crate::export::figure::Figure;
use crate::export::manager::{ExportManager, Exportable, Format};
use crate::lab::knee::{self, Knee, KneeArgs, Stop, Syntax};
use crate::lab::println_stdout;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub fn execute(a: &KneeArgs) -> anyhow::Result<i32> {
    let plan = a.params.plan(&a.file, Syntax::Flag)?;
    let exports = ExportManager::new("knee", &a.export, FORMATS, a.force)?
        .with(Format::Svg, a.svg.as_deref(), "--svg")
        .besides(Some(&a.file), "FILE");
    if exports.is_empty() && a.force {
        return Err(usage(
            "--force: applies to --svg and --export-* (replace an existing file); remove it",
        ));
    }
    // Refused before minutes of measuring, not after.
    exports.check()?;
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
            crate::eprintln_shown!("{header}");
        }
        crate::eprintln_shown!("{}", knee::point_line(p, target))
    })?;
    crate::eprintln_shown!(
        "closed loop: {:.0} IOPS, service p99 {}",
        k.ceiling.iops,
        knee::svg::fmt_us(k.ceiling.lat_p99_us)
    );
    crate::eprintln_shown!("{}", k.confidence_line());
    crate::eprintln_shown!(
        "{} points measured ({} of them again after a miss on one burst), {} reused, in \
         {elapsed_s:.1} s",
        k.measured,
        k.remeasured,
        k.reused
    );
    let results = KneeResults {
        file: &a.file,
        plan: &plan,
        knee: &k,
        elapsed_s,
    };
    exports.write_and_say(&results)?;
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

/// The formats a search is written in.
pub const FORMATS: &[Format] = &Format::ALL;

/// A finished search, as every format writes it.
pub struct KneeResults<'a> {
    pub file: &'a std::path::Path,
    pub plan: &'a knee::Plan,
    pub knee: &'a Knee,
    pub elapsed_s: f64,
}

impl Exportable for KneeResults<'_> {
    fn title(&self) -> String {
        format!("knee: {}", knee::setup_words(self.plan))
    }

    fn subtitle(&self) -> String {
        format!(
            "{} · response p99 under {}",
            crate::text::shown_path(self.file),
            knee::svg::fmt_us(self.knee.settings_target_p99_us)
        )
    }

    fn lines(&self) -> Vec<String> {
        let answer = match self.knee.knee_iops {
            Some(r) => format!("knee: {r:.0} IOPS"),
            None => "no rate met the target".to_string(),
        };
        vec![answer, self.knee.confidence_line()]
    }

    /// One row per measured point, by offered rate (the fields of `--json`'s `points`).
    fn csv(&self) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(Some(points_csv(&self.knee.points)?))
    }

    fn json(&self) -> anyhow::Result<Option<Vec<u8>>> {
        let doc = document(self.file, self.plan, self.knee, self.elapsed_s)?;
        Ok(Some(format!("{doc}\n").into_bytes()))
    }

    fn figure(&self) -> Option<Figure> {
        Some(knee::svg::figure(&self.title(), self.knee))
    }
}

/// The CSV of a search's points, one row each, every column in every row.
pub fn points_csv(points: &[knee::Point]) -> anyhow::Result<Vec<u8>> {
    let rows: Vec<PointRow> = points.iter().map(PointRow::of).collect();
    Ok(crate::export::csv::to_csv(&rows)?.into_bytes())
}

/// A point as a CSV row: every field of [`knee::Point`] in every row (the JSON leaves the rare
/// ones out where they are empty; a CSV has one header).
#[derive(serde::Serialize)]
struct PointRow {
    offered_iops: f64,
    achieved_iops: f64,
    resp_p50_us: f64,
    resp_p99_us: f64,
    resp_p999_us: f64,
    resp_p99_low_us: f64,
    resp_p99_high_us: f64,
    resp_p99_no_burst_us: Option<f64>,
    lat_p99_us: f64,
    ops: u64,
    seconds: f64,
    fell_behind: bool,
    burst_at_end: bool,
    passed: bool,
    burst: bool,
}

impl PointRow {
    fn of(p: &knee::Point) -> PointRow {
        PointRow {
            offered_iops: p.offered_iops,
            achieved_iops: p.achieved_iops,
            resp_p50_us: p.resp_p50_us,
            resp_p99_us: p.resp_p99_us,
            resp_p999_us: p.resp_p999_us,
            resp_p99_low_us: p.resp_p99_low_us,
            resp_p99_high_us: p.resp_p99_high_us,
            resp_p99_no_burst_us: p.resp_p99_no_burst_us.filter(|v| v.is_finite()),
            lat_p99_us: p.lat_p99_us,
            ops: p.ops,
            seconds: p.seconds,
            fell_behind: p.fell_behind,
            burst_at_end: p.burst_at_end,
            passed: p.passed,
            burst: p.burst,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_points_csv_has_every_column_in_every_row() {
        let p = |r: f64, no_burst: Option<f64>, burst_at_end: bool| knee::Point {
            offered_iops: r,
            achieved_iops: r - 1.0,
            resp_p50_us: 10.0,
            resp_p99_us: 20.5,
            resp_p999_us: 40.0,
            resp_p99_low_us: 19.0,
            resp_p99_high_us: 22.0,
            resp_p99_no_burst_us: no_burst,
            lat_p99_us: 12.0,
            ops: 100,
            seconds: 0.25,
            burst_at_end,
            passed: true,
            ..knee::Point::default()
        };
        let csv = points_csv(&[
            p(500.0, None, false),
            p(1000.0, Some(15.0), true),
            p(2000.0, Some(f64::NAN), false),
        ])
        .unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "offered_iops,achieved_iops,resp_p50_us,resp_p99_us,resp_p999_us,resp_p99_low_us,\
             resp_p99_high_us,resp_p99_no_burst_us,lat_p99_us,ops,seconds,fell_behind,\
             burst_at_end,passed,burst\n\
             500.0,499.0,10.0,20.5,40.0,19.0,22.0,,12.0,100,0.25,false,false,true,false\n\
             1000.0,999.0,10.0,20.5,40.0,19.0,22.0,15.0,12.0,100,0.25,false,true,true,false\n\
             2000.0,1999.0,10.0,20.5,40.0,19.0,22.0,,12.0,100,0.25,false,false,true,false\n"
        );
    }
}
