//! The plan as text: what a sweep will do, printed before it runs and alone with `--dry-run`
//! (and by the fleet driver and the report page, which show the same plan).

use super::files;
use super::plan::Plan;
use super::progress::format_secs;
use crate::size::format_size;
use crate::text::{shown, shown_path};

/// The plan as printed before a sweep (and alone with `--dry-run`).
pub fn plan_text(p: &Plan) -> String {
    // Names, descriptions, paths and notes come from the sweep file: escaped, one line each.
    let mut s = format!("sweep {}", shown(&p.name));
    if !p.description.is_empty() {
        s += &format!(": {}", shown(p.description.trim()));
    }
    s.push('\n');
    if let Some(f) = &p.file {
        let reused = f.create && files::is_our_test_file(&f.path, f.size_bytes);
        let how = match (f.create, f.keep, f.writable) {
            (true, _, _) if reused => {
                "test file already there (not made by this run): reused, never removed"
            }
            (true, true, _) => "test file, created if missing, kept",
            (true, false, _) => "test file, created and removed afterwards",
            (false, _, true) => "your file, writes allowed",
            (false, _, false) => "your file, read only",
        };
        s += &format!(
            "file: {} ({}, {how})\n",
            shown_path(&f.path),
            format_size(f.size_bytes)
        );
    }
    s += &format!("output: {}/\n", shown_path(&p.out_dir));
    s += &format!(
        "  {:<20} {:<10} {:>6} {:>5} {:>6} {:>10}\n",
        "experiment", "kind", "points", "reps", "runs", "estimate"
    );
    let mut total_runs = 0;
    let mut total_s = 0.0;
    let mut unknown = false;
    for x in &p.experiments {
        total_runs += x.runs();
        let est = match x.estimate_s() {
            Some(e) => {
                total_s += e;
                // One-pass runs are estimated from their bytes at stated rates (sweep::estimate,
                // its note below), not counted at their bound.
                let bound = if x.upper_bound { "≈ " } else { "" };
                format!("{bound}{}", format_secs(e))
            }
            None => {
                unknown = true;
                "?".into()
            }
        };
        let points = if x.kind.traits().has_points {
            x.points.len().to_string()
        } else {
            "-".into()
        };
        s += &format!(
            "  {:<20} {:<10} {:>6} {:>5} {:>6} {:>10}\n",
            shown(&x.name),
            x.kind.name(),
            points,
            x.reps,
            x.runs(),
            est
        );
        for n in &x.notes {
            s += &format!("    note: {}\n", shown(n));
        }
    }
    s += &format!(
        "total: {total_runs} runs, about {} of measuring{}\n",
        format_secs(total_s),
        if unknown {
            " plus the experiments marked ? (they run to completion)"
        } else {
            ""
        }
    );
    s
}
