//! `diskscope compare OLD NEW`: did my change help, and is the difference real or noise?
//!
//! One pipeline: [`load()`] each side (a batch result directory, a per-repetition CSV, or rows the
//! explorer saved) into one [`Record`] per point → [`diff::compare`] matches points on their setup
//! (or [`pair`] pairs two chosen setups: two single-point inputs, or `--pair A B`) and judges each
//! with ranks ([`rank`]: Mann–Whitney U, Hodges–Lehmann interval of the ratio, an equivalence
//! margin, outliers) → [`render`] prints a table, Markdown or CSV; [`plot`] draws OLD vs NEW;
//! [`page`] makes the HTML page; [`Compared`] is all of it for the one export path
//! (`--export-csv/json/svg/html`, and `--plot`, `--report` as before). The loader is public so
//! other front ends (the explorer's baseline) can read a saved run the same way.

pub mod diff;
pub mod fio;
pub mod load;
pub mod page;
pub mod pair;
pub mod plot;
pub mod rank;
pub mod render;
pub mod rows;
pub mod stats;
mod timeline;

pub use load::{load, InputKind, LoadError, Point, Record};

use crate::config::usage;
use crate::export::figure::Figure;
use crate::export::manager::{ExportManager, Exportable, Format};
use clap::{ArgGroup, Args};
use diff::Metric;
use std::path::{Path, PathBuf};

/// `compare` options.
#[derive(Debug, Args, Clone)]
#[command(group(ArgGroup::new("format").args(["markdown", "csv"])))]
#[command(after_help = "\
Verdicts, per point, for throughput and p99 latency:
  faster / slower      the 95% interval of Δ lies on one side of zero (Mann–Whitney U at 5%)
  no change (±5%)      the whole interval lies inside ±--margin: did anything change? no
  inconclusive: why    too few repetitions (about how many would decide), or a spread too wide
  too few repetitions  so few that no outcome can reach 5% (3 against 3); 4 a side can
An outlier (modified z-score > 3.5) is named on an `outlier:` line with its repetition and value:
left out of the spread a verdict gives, never out of the test (ranks are robust to it).

Which of two settings is faster (A vs B):
  diskscope compare 4k.json 64k.json          two single-point results: compared whatever
                                              their setups differ in, the differences named
  diskscope compare sweep/ --pair block_size=4K block_size=64K
                                              in one sweep: each 4K point against the 64K point
                                              with the same other settings (per method, cache…)
  diskscope compare old/ new/ --pair cache=cold cache=warm
                                              A from OLD, B from NEW
  Selectors are KEY=VALUE[,KEY=VALUE…] naming the same settings on both sides; keys: experiment,
  operation (op), method, block_size (bs), pattern, cache, threads, queue_depth (qd), direct.")]
pub struct CompareArgs {
    /// The baseline: a batch result directory (`--out`), a per-repetition CSV, rows saved with
    /// `s` (diskscope-results/tui-*.csv), a JSON document (sweep.json, `--batch --json` or `run
    /// --json` output), or fio's JSON output (`--output-format=json`: one file, or a directory
    /// of them, one per repetition)
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The run to judge against OLD (any of the same kinds of input: fio against diskscope
    /// works); with --pair, may be left out to take both sides from OLD
    #[arg(value_name = "NEW")]
    pub new: Option<PathBuf>,
    /// Compare setup A against setup B instead of the same points: A's points (of OLD) with the
    /// B points (of NEW, or of OLD when NEW is left out) that agree on every other setting; e.g.
    /// --pair block_size=4K block_size=64K
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub pair: Option<Vec<String>>,
    /// "No change" means the 95% interval of Δ lies inside ±PCT percent
    #[arg(long, value_name = "PCT", default_value_t = diff::DEFAULT_MARGIN_PCT, allow_negative_numbers = true)]
    pub margin: f64,
    /// Print a Markdown table instead of the terminal table
    #[arg(long)]
    pub markdown: bool,
    /// Print CSV instead of the terminal table
    #[arg(long)]
    pub csv: bool,
    /// Write the OLD vs NEW throughput figure (SVG) to this new file (the same as --export-svg)
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Write a self-contained HTML report to this new file (the same as --export-html)
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// The verdict table as CSV (--export-csv; what --csv prints), as one JSON document
    /// (--export-json), the throughput figure (--export-svg) or the report (--export-html), each
    /// into a new file
    #[command(flatten)]
    pub export: crate::export::manager::ExportArgs,
    /// Replace existing --plot, --report and --export-* files
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

/// The comparison `a` asks for: the same points of OLD and NEW, two single points of different
/// setups, or the pairs of `--pair`.
fn comparison(
    a: &CompareArgs,
    old: &[Record],
    new: &[Record],
    settings: &diff::Settings,
) -> anyhow::Result<diff::Comparison> {
    if let Some(sel) = &a.pair {
        let parse = |t: &str| pair::Selector::parse(t).map_err(|e| usage(e.to_string()));
        let (sa, sb) = (parse(&sel[0])?, parse(&sel[1])?);
        let p = pair::by_selectors(old, new, &sa, &sb, a.new.is_none())
            .map_err(|e| usage(e.to_string()))?;
        return Ok(diff::compare_pairs(
            &p.pairs, p.only_old, p.only_new, p.heading, settings,
        ));
    }
    let c = diff::compare_with(old, new, settings);
    if !c.matched.is_empty() {
        return Ok(c);
    }
    if let ([o], [n]) = (old, new) {
        // Two single-point results: the user chose the two points.
        return Ok(diff::compare_pairs(
            &[(o, n)],
            vec![],
            vec![],
            pair::single_points_heading(&o.point, &n.point),
            settings,
        ));
    }
    Err(usage(format!(
        "OLD and NEW share no point (different sweeps?): OLD has {} (first: {}), NEW has {} (first: {}); compare runs of the same sweep, or choose the setups to compare with --pair (e.g. --pair block_size=4K block_size=64K)",
        old.len(),
        crate::text::shown(&old[0].point.label()),
        new.len(),
        crate::text::shown(&new[0].point.label())
    )))
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
    if !(a.margin.is_finite() && a.margin > 0.0 && a.margin < 100.0) {
        return Err(usage(format!(
            "--margin: {} is not a percentage between 0 and 100; e.g. --margin 5",
            a.margin
        )));
    }
    let exports = ExportManager::new("compare", &a.export, &Format::ALL, a.force)?
        .with(Format::Svg, a.plot.as_deref(), "--plot")
        .with(Format::Html, a.report.as_deref(), "--report")
        .besides(Some(&a.old), "OLD")
        .besides(a.new.as_deref(), "NEW");
    exports.check()?;
    let mut old = load_side("OLD", &a.old)?;
    let mut new = match (&a.new, &a.pair) {
        (Some(p), _) => load_side("NEW", p)?,
        (None, Some(_)) => old.clone(),
        (None, None) => {
            return Err(usage(
                "NEW: missing; pass two results (compare OLD NEW), or one with --pair A B (e.g. --pair block_size=4K block_size=64K)",
            ))
        }
    };
    if fio::restate_across(&mut old, &mut new) {
        eprintln!(
            "note: fio's points are matched in diskscope's words, as --batch maps the job \
             (ioengine=psync is pread, invalidate is cache cold)"
        );
    }
    let settings = diff::Settings {
        margin_pct: a.margin,
    };
    let c = comparison(a, &old, &new, &settings)?;
    let text = if a.markdown {
        render::markdown(&c)
    } else if a.csv {
        render::csv(&c)?
    } else {
        render::table(&c)
    };
    crate::text::write_stdout(text.as_bytes())?;
    if !exports.is_empty() {
        let compared = Compared {
            old_path: &a.old,
            new_path: a.new.as_deref().unwrap_or(&a.old),
            old: &old,
            new: &new,
            comparison: &c,
            margin_pct: a.margin,
            // The page says where it was made: read here, once, not by the exporter.
            machine: crate::explain::machine::machine(),
        };
        exports.write_and_say(&compared)?;
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
                crate::eprintln_shown!(
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

/// A finished comparison, as every format writes it.
pub struct Compared<'a> {
    pub old_path: &'a Path,
    pub new_path: &'a Path,
    pub old: &'a [Record],
    pub new: &'a [Record],
    pub comparison: &'a diff::Comparison,
    pub margin_pct: f64,
    /// The machine the report is made on, as (name, value) facts.
    pub machine: Vec<(String, String)>,
}

impl Exportable for Compared<'_> {
    fn title(&self) -> String {
        "OLD vs NEW: throughput".into()
    }

    /// The verdict table (what `--csv` prints).
    fn csv(&self) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(Some(render::csv(self.comparison)?.into_bytes()))
    }

    /// The inputs, the tally and the rows of the CSV, typed.
    fn json(&self) -> anyhow::Result<Option<Vec<u8>>> {
        let doc = serde_json::json!({
            "command": "compare",
            "old": self.old_path.display().to_string(),
            "new": self.new_path.display().to_string(),
            "margin_pct": self.margin_pct,
            "pairing": self.comparison.pairing,
            "summary": render::tally(self.comparison),
            "rows": render::json_rows(self.comparison)?,
        });
        Ok(Some(
            format!("{}\n", serde_json::to_string_pretty(&doc)?).into_bytes(),
        ))
    }

    /// The throughput figure; None when no matched point has throughput samples.
    fn figure(&self) -> Option<Figure> {
        plot::figure(self.comparison, Metric::MibS, &self.title())
    }

    fn html(&self) -> anyhow::Result<Option<Vec<u8>>> {
        let page = page::compare_page(
            self.old_path,
            self.new_path,
            self.old,
            self.new,
            self.comparison,
            &self.machine,
        )?;
        Ok(Some(page.into_bytes()))
    }
}
