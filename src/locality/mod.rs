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
//! * [`report`] — the table.
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

use crate::measure::RunResult;
use crate::text::{shown, shown_path};
use params::Syntax;
use std::io::Write;
use std::sync::atomic::AtomicBool;

pub use params::LocalityParams;

/// `diskscope locality`: prints the table on stdout, progress on stderr.
pub fn execute(args: &LocalityParams) -> anyhow::Result<i32> {
    let p = args.validate(Syntax::Cli)?;
    if args.clean {
        let _lock = layout::lock_dir(&p.dir, "--dir", false)?;
        if layout::remove_layout(&p.dir)? {
            eprintln!("removed the locality layout in {}", shown_path(&p.dir));
        } else {
            eprintln!(
                "no locality layout in {}; nothing removed",
                shown_path(&p.dir)
            );
        }
        return Ok(0);
    }
    let interrupted = crate::interrupt::stop_flag();
    let mut passes = Vec::new();
    let mut log = |line: String| eprintln!("{}", shown(&line));
    let completed = experiment::run(
        &p,
        "locality",
        Syntax::Cli,
        &interrupted,
        &mut log,
        &mut |m| {
            let r = &m.result;
            eprintln!(
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
    if args.json {
        eprint!("{text}");
        let doc = report::json_document(&p, &passes, completed)?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{doc}")?;
        out.flush()?;
    } else {
        let mut out = std::io::stdout().lock();
        write!(out, "{text}")?;
        out.flush()?;
    }
    if !completed {
        if passes.is_empty() {
            eprintln!("interrupted before any repetition finished");
        } else {
            eprintln!("interrupted: the table covers the repetitions that finished");
        }
        return Ok(130);
    }
    eprintln!(
        "layout kept in {} for the next run; `diskscope locality --clean{}` removes it",
        shown_path(&p.dir),
        args.dir.as_ref().map_or(String::new(), |d| format!(
            " --dir {}",
            shown(&crate::fsguard::shell_quote(&d.display().to_string()))
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
    let mut log = |line: String| eprintln!("{}", shown(&format!("{name}: {line}")));
    experiment::run(p, name, Syntax::Toml, stop, &mut log, &mut |m| {
        emit(m.result)
    })?;
    Ok(())
}
