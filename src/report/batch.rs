//! `diskscope --batch SWEEP.toml --report FILE.html`: runs the sweep as usual, then reads back
//! what it wrote (the per-repetition CSVs and figures of this run's experiments, in the output
//! directory) and writes the page. Reading the files back instead of hooking into the sweep keeps
//! batch mode unaware of reports, and the page shows exactly what the CSVs say.

use super::{batch_page, check_target, write_new, BatchExperiment};
use std::path::Path;
use std::time::SystemTime;

/// Runs the sweep, then writes the report (unless interrupted); returns the sweep's exit status.
pub fn run_with_report(
    sweep: &Path,
    out: Option<&Path>,
    report: &Path,
    force: bool,
) -> anyhow::Result<i32> {
    // Refuse before minutes of measuring, not after.
    check_target(report, force, "--report")?;
    let plan = crate::sweep::load(sweep, out, force)?;
    let started = SystemTime::now();
    let code = crate::sweep::execute(sweep, out, false, force, false)?;
    if code == crate::config::EXIT_INTERRUPTED {
        eprintln!("--report: not written (interrupted)");
        return Ok(code);
    }
    let fresh = |p: &Path| {
        std::fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .and_then(|m| m.modified().ok())
            .is_some_and(|t| t >= started)
    };
    let dir = &plan.out_dir;
    let mut experiments: Vec<BatchExperiment> = plan
        .experiments
        .iter()
        .map(|x| {
            let csv = dir.join(format!("{}.csv", x.name));
            let svg = dir.join(format!("{}.svg", x.name));
            let timeline_svg = dir.join(format!("{}-timeline.svg", x.name));
            BatchExperiment {
                name: x.name.clone(),
                records: if fresh(&csv) {
                    crate::compare::load(&csv).unwrap_or_default()
                } else {
                    Vec::new()
                },
                figures: [svg, timeline_svg]
                    .into_iter()
                    .filter(|f| fresh(f))
                    .collect(),
                figure_only: false,
            }
        })
        .collect();
    let compare_svg = dir.join("compare.svg");
    if !plan.compare.is_empty() && fresh(&compare_svg) {
        experiments.push(BatchExperiment {
            name: format!("comparison ({})", plan.compare.join(" vs ")),
            records: Vec::new(),
            figures: vec![compare_svg],
            figure_only: true,
        });
    }
    let status = if code == 0 {
        "every run succeeded".to_string()
    } else {
        "some runs failed: see the failed column and the error column of the CSVs".to_string()
    };
    let html = batch_page(
        &plan.name,
        &crate::sweep::plan_text(&plan),
        dir,
        &experiments,
        &status,
    )?;
    write_new(report, html.as_bytes(), force, "--report")?;
    eprintln!("wrote {}", crate::text::shown_path(report));
    Ok(code)
}
