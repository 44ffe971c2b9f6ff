//! The locality lab (issue 5): many small files in a hashed directory tree versus the same
//! contents packed into one file with an index of offsets, read in sequential, random and trace
//! order, warm or cold. The study "The Way the Disk Turns" found the packed file about twice as
//! fast; this makes the comparison a repeatable experiment on any machine.
//!
//! Split by responsibility:
//! * [`params`] — flags and sweep keys → validated [`params::Params`];
//! * [`layout`] — generating, reusing and removing the two layouts; [`index`] — the packed index;
//! * [`trace`] — user traces (ids or Common Log Format); [`synth`] — the synthetic trace;
//! * [`bench`](mod@bench) — one timed pass over one layout, and cache control;
//! * [`experiment`] — the loop over cache modes × orders × repetitions × layouts;
//! * [`report`] — the table; [`LocalityResults`] — every pass in every `--export-*` format.
//!
//! The command and the batch kind run the same [`experiment::run`], so their numbers are the same
//! computation; the command prints the table, the batch writes [`RunResult`] rows.

pub mod bench;
pub mod experiment;
pub mod index;
pub mod layout;
pub mod params;
pub mod report;
pub mod synth;
pub mod trace;

use crate::explain::provenance::Provenance;
use crate::export::figure::Figure;
use crate::export::manager::{ExportManager, Exportable, Format};
use crate::measure::RunResult;
use crate::text::{shown, shown_lines, shown_path};
use params::Syntax;
use std::sync::atomic::AtomicBool;

pub use params::LocalityParams;

/// `diskscope locality`: prints the table on stdout, progress on stderr.
pub fn execute(args: &LocalityParams) -> anyhow::Result<i32> {
    let p = args.validate(Syntax::Cli)?;
    let exports = ExportManager::new("locality", &args.export, &Format::ALL, args.force)?
        .besides(args.trace.as_deref(), "--trace");
    if args.clean {
        if !exports.is_empty() {
            return Err(crate::config::usage(
                "--clean: removes the layout and measures nothing; give --export-* without it",
            ));
        }
        let _lock = layout::lock_dir(&p.dir, "--dir", false)?;
        if layout::remove_layout(&p.dir)? {
            crate::eprintln_shown!("removed the locality layout in {}", shown_path(&p.dir));
        } else {
            crate::eprintln_shown!(
                "no locality layout in {}; nothing removed",
                shown_path(&p.dir)
            );
        }
        return Ok(0);
    }
    // Refused before the layout is made and measured, not after.
    exports.check()?;
    let interrupted = crate::interrupt::stop_flag();
    let mut passes = Vec::new();
    let mut log = |line: String| crate::eprintln_shown!("{}", shown(&line));
    let completed = experiment::run(
        &p,
        "locality",
        Syntax::Cli,
        &interrupted,
        &mut log,
        &mut |m| {
            let r = &m.result;
            crate::eprintln_shown!(
                "  {} {} {} rep {}: {:.2} ms ({:.1}% cached before)",
                r.setup.cache,
                r.setup.pattern,
                r.setup.method,
                r.identity.rep,
                r.figures.seconds * 1e3,
                r.figures.residency_before_pct
            );
            passes.push(m);
            Ok(())
        },
    )?;
    let text = report::table(&passes, p.file_size_bytes);
    // The document names where it ran: made here, once, for stdout and the file.
    let document = (args.json || args.export.export_json.is_some())
        .then(|| report::json_document(&p, &passes, completed))
        .transpose()?;
    if let (true, Some(doc)) = (args.json, &document) {
        crate::eprint_shown!("{text}");
        crate::text::write_stdout(format!("{doc}\n").as_bytes())?;
    } else {
        crate::text::write_stdout(shown_lines(&text).as_bytes())?;
    }
    let rows: Vec<RunResult> = passes.iter().map(|m| m.result.clone()).collect();
    let results = LocalityResults {
        known: crate::explain::provenance_of(&rows),
        rows,
        document,
    };
    exports.write_and_say(&results)?;
    if !completed {
        if passes.is_empty() {
            eprintln!("interrupted before any repetition finished");
        } else {
            eprintln!("interrupted: the table covers the repetitions that finished");
        }
        return Ok(130);
    }
    crate::eprintln_shown!(
        "layout kept in {} for the next run; `diskscope locality --clean{}` removes it",
        shown_path(&p.dir),
        args.dir.as_ref().map_or(String::new(), |d| format!(
            " --dir {}",
            crate::fsguard::shell_quote_path(d)
        ))
    );
    Ok(0)
}

/// The batch kind `locality`: runs the experiment a sweep file describes (its `params`, read by
/// [`LocalityParams::from_toml`] and checked when the sweep is planned) and emits one [`RunResult`] per layout × order × repetition (× cache mode). `method` is `dir`
/// or `packed`, `pattern` the order. Returns early, without error, when `stop` is set.
pub fn run_sweep_experiment(
    name: &str,
    p: &params::Params,
    stop: &AtomicBool,
    emit: &mut dyn FnMut(RunResult) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut log = |line: String| crate::eprintln_shown!("{}", shown(&format!("{name}: {line}")));
    experiment::run(p, name, Syntax::Toml, stop, &mut log, &mut |m| {
        emit(m.result)
    })?;
    Ok(())
}

/// Every pass of a `locality` command, as every format writes it.
pub struct LocalityResults {
    /// One row per layout × order × repetition (× cache mode), a sweep's columns.
    pub rows: Vec<RunResult>,
    /// The `--json` document, made by the front end (it names the machine).
    pub document: Option<String>,
    /// Where the passes ran (the storage under the layout), for the figure's subtitle.
    pub known: Provenance,
}

impl Exportable for LocalityResults {
    fn title(&self) -> String {
        "locality: layout x order".into()
    }

    fn csv(&self) -> anyhow::Result<Option<Vec<u8>>> {
        if self.rows.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            crate::export::csv::to_csv_tidy(&self.rows)?.into_bytes(),
        ))
    }

    fn json(&self) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(crate::export::manager::document_file(
            self.document.as_deref(),
        ))
    }

    fn figure(&self) -> Option<Figure> {
        use crate::export::chart::{throughput_chart, Dim};
        let chart = throughput_chart(
            &self.title(),
            &self.rows,
            &[Dim::Pattern, Dim::Method],
            &self.known,
        )?;
        Some(crate::export::svg::figure(&chart))
    }
}
