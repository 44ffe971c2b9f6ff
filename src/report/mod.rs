//! `--report FILE.html` of a sweep: one self-contained page to attach to a ticket — the machine,
//! the plan, summary tables, the figures inline (SVG). (`compare`'s page is its own,
//! `compare::page`, whose summary table this page shares.)
//!
//! The page is built from the same records the terminal output uses ([`crate::compare`]), so the
//! two cannot disagree, and from what the front end hands in (the machine it was made on): it
//! reads nothing itself. It is written through the one export path
//! ([`crate::export::manager`]): created with O_CREAT|O_EXCL|O_NOFOLLOW, and an existing file is
//! replaced only with `--force` (and never through a symbolic link).

pub mod batch;
#[cfg(test)]
mod gallery;
pub mod openloop;

use crate::compare::load::Record;
use crate::compare::page::{measured_on, summary_table};
use crate::export::html::Page;
use std::path::Path;

/// One experiment's output for the batch report.
pub struct BatchExperiment {
    pub name: String,
    /// Its per-repetition CSV, read back (empty for syscall experiments or failures to read).
    pub records: Vec<Record>,
    /// Figures batch mode wrote for it: (file name, SVG text), `<name>.svg` and
    /// `<name>-timeline.svg`.
    pub figures: Vec<(String, String)>,
    /// Only a figure (the sweep's `compare.svg`): no table expected.
    pub figure_only: bool,
    /// Its open-loop points (`rate`): response percentiles beside service ones.
    pub open_loop: Vec<openloop::OpenLoopPoint>,
    /// The worst timeline interval of each of its open-loop runs.
    pub worst_intervals: Vec<openloop::WorstInterval>,
}

/// The batch report: machine (as (name, value) facts), plan, one summary table and figure per
/// experiment.
pub fn batch_page(
    sweep: &str,
    plan_text: &str,
    out_dir: &Path,
    machine: &[(String, String)],
    experiments: &[BatchExperiment],
    status: &str,
) -> anyhow::Result<String> {
    let title = format!("diskscope sweep {sweep}");
    let mut page = Page::new(
        &title,
        &format!(
            "results in {} — generated {} by diskscope {}",
            crate::text::shown_path(out_dir),
            crate::export::now_utc(),
            env!("CARGO_PKG_VERSION")
        ),
    );
    page.para("summary", status);
    page.h2("Machine");
    page.facts(machine);
    page.h2("Plan");
    page.pre(plan_text);
    for x in experiments {
        page.h2(&format!("Experiment {}", x.name));
        if !x.records.is_empty() {
            let mut facts = measured_on("measured", &x.records);
            facts.truncate(2);
            page.facts(&facts);
            summary_table(&mut page, &x.records);
            openloop::table(&mut page, &x.open_loop);
        } else if !x.figure_only {
            page.para(
                "note",
                "no throughput rows to summarize (system calls, or no run finished); see the CSV in the results directory",
            );
        }
        for (name, svg) in &x.figures {
            let what = if name.ends_with("-timeline.svg") && !x.open_loop.is_empty() {
                "each run over time: service time p50 thin, p99 thick, p99.9 dashed, and for \
                 open-loop runs the response time p99 (pale, thick) beside them; throughput, \
                 device util %"
            } else if name.ends_with("-timeline.svg") {
                "each run over time: latency percentiles, throughput, device util %"
            } else if name.ends_with("-knee.svg") {
                "the knee search: response time p50 thin, p99 thick, p99.9 dashed against the \
                 offered rate; the target, the bracket and the knee marked, the closed-loop \
                 ceiling in grey"
            } else {
                "bar = mean, dot = median, whisker = min–max over repetitions"
            };
            page.figure(svg, &format!("{name}: {what}"));
            if name.ends_with("-timeline.svg") {
                openloop::worst_table(&mut page, &x.worst_intervals);
            }
        }
    }
    Ok(page.finish(&title))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::load::Bound;
    use crate::compare::page::bound_cell;

    fn rec(mib_s: Vec<f64>, bound: Option<Bound>) -> Record {
        Record {
            bound,
            ..Record::sample(4096, mib_s, 0.0)
        }
    }

    #[test]
    fn the_bound_cell_names_the_bound_its_share_and_below_half_the_hint() {
        let b = |hint: Option<&str>| {
            Some(Bound {
                bound: "memory-bound".into(),
                bound_mib_s: 23.1 * 1024.0,
                hint: hint.map(String::from),
            })
        };
        let near = rec(vec![0.88 * 23.1 * 1024.0], b(None));
        assert_eq!(bound_cell(&near), "memory-bound 23.1 GiB/s · 88%");
        let far = rec(vec![0.1 * 23.1 * 1024.0], b(Some("misaligned blocks")));
        assert_eq!(
            bound_cell(&far),
            "memory-bound 23.1 GiB/s · 10% — misaligned blocks"
        );
        assert_eq!(bound_cell(&rec(vec![1.0], None)), "");

        let mut page = Page::new("t", "s");
        summary_table(&mut page, &[rec(vec![1.0], None)]);
        let html = page.finish("t");
        assert!(!html.contains(">bound</th>"), "no bound, no column");
        let mut page = Page::new("t", "s");
        summary_table(&mut page, &[rec(vec![1.0], None), far]);
        let html = page.finish("t");
        assert!(html.contains("<th class=\"t\">bound</th>"), "{html}");
        assert!(html.contains("10% — misaligned blocks"), "{html}");
    }
}
