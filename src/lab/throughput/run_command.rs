//! `run FILE -r|-w BLOCK_SIZE BLOCK_COUNT`: the lab's first program. Prints the XOR of the data on
//! stdout, alone; throughput and the setup on stderr. With `--checksum none` stdout stays empty
//! (the data was never read back, so there is no XOR to print) and stderr says so. The result
//! goes into files with `--export-csv/json/svg/html` ([`RunResults`], through the one export
//! path), checked before the run starts.

use crate::config::spec::RunSpec;
use crate::config::Op;
use crate::export::figure::Figure;
use crate::export::manager::{ExportManager, Exportable, Format};
use crate::fsguard::Created;
use crate::lab::println_stdout;
use crate::lab::throughput::{spec_of, summary_line, RunArgs};
use crate::runner::{Run, RunError, RunFailed};
use crate::xor::format_xor;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::config::EXIT_INTERRUPTED;

/// A local run: the one process measures `FILE` (a run under mpirun is `cli::run_command`'s
/// other road, `fleet_run`; nothing here knows of fleets).
pub fn execute(a: &RunArgs) -> anyhow::Result<i32> {
    let spec = spec_of(a)?;
    let t = &a.timeline;
    // Every output is refused before the run (and before --log-ops is created), not after.
    let exports = ExportManager::new("run", &a.export, &Format::ALL, a.force)?
        .besides(Some(&spec.target.path), "FILE")
        .besides(t.timeline_csv.as_deref(), "--timeline")
        .besides(t.log_ops.as_deref(), "--log-ops");
    exports.check()?;
    let mut timeline = crate::export::timeline::TimelineOutputs::open(
        t.timeline_csv.as_deref(),
        &t.interval,
        t.log_ops.as_deref(),
        &spec.target.path,
    )?;
    let existed = spec.target.path.exists();
    let size_before = std::fs::metadata(&spec.target.path)
        .map(|m| m.len())
        .unwrap_or(0);
    let stop = Arc::new(AtomicBool::new(false));
    // Ctrl-C (and SIGTERM, SIGHUP) stops the workers within one operation; the run then ends
    // here, where a write's partial file is removed (or kept with --keep-partial) and said so.
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let (stop, interrupted) = (stop.clone(), interrupted.clone());
        // Replaces an earlier run's reaction (tests calling this twice in one process).
        crate::interrupt::on_signal(move |_| {
            interrupted.store(true, Ordering::SeqCst);
            stop.store(true, Ordering::SeqCst);
        });
    }
    let mut created = None;
    let result = Run::start(&spec, "run", stop).and_then(|mut run| {
        created = run.created().cloned();
        run.set_timeline_interval(timeline.interval);
        if let Some(log) = timeline.take_log() {
            run.log_ops_to(log);
        }
        run.run_to_end(|_, _| {}).map_err(RunError::into_anyhow)
    });
    // Only a run that started (its workers ran, so its output file is the one it created or,
    // with --force, replaced) has a partial file to deal with; a run that failed before that
    // reports its own error and touches nothing.
    let started = match &result {
        Ok(_) => true,
        Err(e) => e.downcast_ref::<RunFailed>().is_some(),
    };
    if interrupted.load(Ordering::SeqCst) && started {
        let msg = interrupted_message(&spec, created.as_ref(), existed, a.write_opts.keep_partial);
        crate::eprintln_shown!("{msg}");
        return Ok(EXIT_INTERRUPTED);
    }
    let mut outcome = match result {
        Ok(o) => o,
        Err(e) => return Err(cleanup_failed_write(&spec, created.as_ref(), existed, e)),
    };
    // Judged once, after measuring, before anything is printed or exported.
    let judged = crate::explain::judge_result(&mut outcome.result);
    for n in &outcome.notes {
        crate::eprintln_shown!("{n}");
    }
    let r = &outcome.result;
    // `None` only with `--checksum none`: no worker folded an XOR, so none is printed.
    let xor = outcome
        .aggregate
        .xor()
        .or_else(|| outcome.aggregate.xor_of_read_data());
    // The document names where it ran: made here, once, for stdout and --export-json.
    let document = if a.json || a.export.export_json.is_some() {
        let doc = crate::explain::json::run_document("run", &spec, r, &outcome.notes)?;
        Some(crate::export::timeline::with_timeline(&doc, r)?)
    } else {
        None
    };
    if let (true, Some(doc)) = (a.json, &document) {
        println_stdout(doc)?;
    } else if let Some(mix) = crate::lab::throughput::mix_answer(r) {
        // A mix has no XOR that means anything (see `mix_answer`): its answer is the mix done.
        println_stdout(&mix)?;
    } else if let Some(x) = xor {
        println_stdout(&format_xor(x))?;
    }
    crate::eprintln_shown!("{}", summary_line(&spec, r));
    if !spec.setup.checksum.xors() {
        crate::eprintln_shown!("{}", crate::lab::throughput::CHECKSUM_NONE_LINE);
    }
    for line in crate::lab::throughput::mix_lines(r) {
        crate::eprintln_shown!("{line}");
    }
    for line in crate::lab::throughput::open_loop_lines(r) {
        crate::eprintln_shown!("{line}");
    }
    if a.fio {
        let total = crate::fio::total_bytes_of(&spec, size_before);
        crate::eprintln_shown!("{}", crate::fio::fio_command(&spec, total));
    }
    for line in crate::explain::stderr_lines(&spec.target.path, r) {
        crate::eprintln_shown!("{line}");
    }
    for line in crate::explain::verdict::lines_of(r) {
        crate::eprintln_shown!("{line}");
    }
    for note in judged.iter().flat_map(|v| &v.notes) {
        crate::eprintln_shown!("  note: {note}");
    }
    for line in timeline.finish(r, outcome.ops_log_error.as_deref())? {
        crate::eprintln_shown!("{line}");
    }
    if !exports.is_empty() {
        let mut lines = vec![summary_line(&spec, r)];
        lines.extend(crate::lab::throughput::mix_lines(r));
        lines.extend(crate::lab::throughput::open_loop_lines(r));
        lines.extend(crate::explain::verdict::lines_of(r));
        let results = RunResults {
            file: &spec.target.path,
            result: r,
            document,
            lines,
        };
        exports.write_and_say(&results)?;
    }
    Ok(0)
}

/// A finished run, as every format writes it.
pub struct RunResults<'a> {
    pub file: &'a std::path::Path,
    pub result: &'a crate::measure::RunResult,
    /// The `--json` document, made by the front end (it names the machine).
    pub document: Option<String>,
    /// What the run said on stderr: the summary and the verdict.
    pub lines: Vec<String>,
}

impl Exportable for RunResults<'_> {
    fn title(&self) -> String {
        format!("run {}", crate::text::shown_path(self.file))
    }

    fn lines(&self) -> Vec<String> {
        self.lines.clone()
    }

    /// The result row, under a sweep's per-repetition columns.
    fn csv(&self) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(Some(
            crate::export::csv::to_csv_tidy(std::slice::from_ref(self.result))?.into_bytes(),
        ))
    }

    fn json(&self) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(crate::export::manager::document_file(
            self.document.as_deref(),
        ))
    }

    /// The timeline (latency, throughput, device util % over time); None for a run shorter
    /// than one interval.
    fn figure(&self) -> Option<Figure> {
        crate::export::timeline_svg::figure(&format!("{}: timeline", self.title()), &[self.result])
    }
}

/// What happened to the output of a run stopped by a signal: a write's partial file (the one
/// this run created or, with --force, replaced, while the path still names it) is removed unless
/// `keep_partial`; a read prints no XOR since it did not cover the file.
fn interrupted_message(
    spec: &RunSpec,
    created: Option<&Created>,
    existed: bool,
    keep_partial: bool,
) -> String {
    let p = crate::text::shown_path(&spec.target.path);
    if spec.setup.op != Op::Write {
        return format!("interrupted: stopped reading {p} before the end; no XOR is printed");
    }
    let Some(created) = created else {
        // A device or batch mode's kept test file: never removed.
        return format!("interrupted: stopped writing {p}");
    };
    if !created.is_intact() {
        return format!(
            "interrupted: stopped writing {p}; the path no longer names the file this run \
             created (another process replaced it), so it was left alone"
        );
    }
    let replaced = if existed {
        " (it replaced an existing file)"
    } else {
        ""
    };
    if keep_partial {
        return format!("interrupted: kept the partial file {p}{replaced} (--keep-partial)");
    }
    if created.remove() {
        format!(
            "interrupted: removed the partial file {p}{replaced}; pass --keep-partial to keep it"
        )
    } else {
        format!(
            "interrupted: could not remove the partial file {p} (or it was replaced meanwhile); \
             left alone"
        )
    }
}

/// After a failed write, removes the partial file this run made (only while the path still
/// names it) and says so in the error, so a full disk never leaves a silent half-written file.
fn cleanup_failed_write(
    spec: &RunSpec,
    created: Option<&Created>,
    existed: bool,
    e: anyhow::Error,
) -> anyhow::Error {
    if spec.setup.op != Op::Write {
        return e;
    }
    let Some(failed) = e.downcast_ref::<RunFailed>() else {
        return e;
    };
    let what = if failed.is_disk_full() {
        "disk full"
    } else {
        "write failed"
    };
    let Some(created) = created else {
        return anyhow::anyhow!(
            "{what} writing {}: {failed}",
            crate::text::shown_path(&spec.target.path)
        );
    };
    let fate = if !created.is_intact() {
        "the path no longer names the file this run created, so it was left alone"
    } else if created.remove() {
        "removed the partial file"
    } else {
        "could not remove the partial file"
    };
    let replaced = if existed {
        " (it replaced an existing file)"
    } else {
        ""
    };
    anyhow::anyhow!(
        "{what} writing {}: {}; {} bytes of {} were written; {fate}{replaced}",
        crate::text::shown_path(&spec.target.path),
        failed.message,
        failed.bytes_done,
        failed.bytes_planned
    )
}
