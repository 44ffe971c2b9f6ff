//! `diskscope compare OLD NEW`: did my change help, and is the difference real or noise?
//!
//! One pipeline: [`load()`] each side (a batch result directory, a per-repetition CSV, or rows the
//! explorer saved) into one [`Record`] per point → [`diff::compare`] matches points on their setup
//! and judges each with ranks ([`rank`]: Mann–Whitney U, Hodges–Lehmann interval of the ratio,
//! outliers) → [`render`] prints a table, Markdown or
//! CSV; [`plot`] draws OLD vs NEW; [`crate::report`] writes the HTML page. The loader is public so
//! other front ends (the explorer's baseline) can read a saved run the same way.

pub mod diff;
pub mod fio;
pub mod load;
pub mod plot;
pub mod rank;
pub mod render;
pub mod rows;
pub mod stats;
mod timeline;

pub use load::{load, InputKind, LoadError, Point, Record};

use crate::config::usage;
use clap::{ArgGroup, Args};
use diff::Metric;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `compare` options.
#[derive(Debug, Args, Clone)]
#[command(group(ArgGroup::new("format").args(["markdown", "csv"])))]
pub struct CompareArgs {
    /// The baseline: a batch result directory, a per-repetition CSV, or rows saved with `s`
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The run to judge against OLD (same kinds of input)
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Print a Markdown table instead of the terminal table
    #[arg(long)]
    pub markdown: bool,
    /// Print CSV instead of the terminal table
    #[arg(long)]
    pub csv: bool,
    /// Write the OLD vs NEW throughput figure (SVG) to this new file
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Write a self-contained HTML report to this new file
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Replace existing --plot / --report files
    #[arg(long)]
    pub force: bool,
    /// Exit 1 when a point is significantly slower by more than PCT percent (throughput down or
    /// p99 latency up)
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    pub fail_on_regression: Option<f64>,
}

fn load_side(flag: &str, path: &Path) -> anyhow::Result<Vec<Record>> {
    load(path).map_err(|e| usage(format!("{flag}: {e}")))
}

/// Runs `compare`; returns the exit status (0, or 1 for a regression beyond the threshold).
pub fn execute(a: &CompareArgs) -> anyhow::Result<i32> {
    if let Some(pct) = a.fail_on_regression {
        if !(pct.is_finite() && pct >= 0.0) {
            return Err(usage(format!(
                "--fail-on-regression: {pct} is not a percentage ≥ 0; e.g. --fail-on-regression 10"
            )));
        }
    }
    for (flag, path) in [("--plot", &a.plot), ("--report", &a.report)] {
        if let Some(p) = path {
            crate::report::check_target(p, a.force, flag)?;
        }
    }
    let mut old = load_side("OLD", &a.old)?;
    let mut new = load_side("NEW", &a.new)?;
    if fio::restate_across(&mut old, &mut new) {
        eprintln!(
            "note: fio's points are matched in diskscope's words, as --batch maps the job \
             (ioengine=psync is pread, invalidate is cache cold)"
        );
    }
    let c = diff::compare(&old, &new);
    if c.matched.is_empty() {
        return Err(usage(format!(
            "OLD and NEW share no point (different sweeps?): OLD has {} (first: {}), NEW has {} (first: {}); compare runs of the same sweep",
            old.len(),
            crate::text::shown(&old[0].point.label()),
            new.len(),
            crate::text::shown(&new[0].point.label())
        )));
    }
    let text = if a.markdown {
        render::markdown(&c)
    } else if a.csv {
        render::csv(&c)?
    } else {
        render::table(&c)
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    if let Some(p) = &a.plot {
        match plot::render(&c, Metric::MibS, "OLD vs NEW: throughput")? {
            Some(svg) => {
                crate::report::write_new(p, svg.as_bytes(), a.force, "--plot")?;
                eprintln!("wrote {}", p.display());
            }
            None => eprintln!("--plot: no matched point has throughput samples; nothing drawn"),
        }
    }
    if let Some(p) = &a.report {
        let html = crate::report::compare_page(&a.old, &a.new, &old, &new, &c)?;
        crate::report::write_new(p, html.as_bytes(), a.force, "--report")?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(pct) = a.fail_on_regression {
        let regs = c.regressions(pct);
        if !regs.is_empty() {
            for (s, m) in &regs {
                let caveat = c
                    .matched
                    .iter()
                    .find(|p| &p.point == *s)
                    .and_then(|p| p.verdicts_differ())
                    .map(|d| format!("; but {d}"))
                    .unwrap_or_default();
                eprintln!(
                    "regression: {}: {} {} {} (threshold {pct}%){}",
                    crate::text::shown(&s.label()),
                    m.metric.unit(),
                    render::pct(m.delta_pct),
                    render::ci(m),
                    crate::text::shown(&caveat)
                );
            }
            return Ok(1);
        }
    }
    Ok(0)
}
