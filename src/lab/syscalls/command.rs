//! `syscalls [FILE] [--seconds S]`: prints the lab kind's measurements (`crate::lab::syscalls`)
//! as a table, CSV (`--csv`) or one JSON document (`--json`); writes them into files with
//! `--export-csv/json/svg/html` ([`SyscallsResults`], through the one export path).

use crate::export::figure::Figure;
use crate::export::manager::{ExportManager, Exportable, Format};
use crate::export::SyscallRow;
use crate::lab::println_stdout;
use crate::lab::syscalls::{csv, run, table, SyscallResult, SyscallsParams};
use std::path::Path;

pub fn execute(a: &SyscallsParams) -> anyhow::Result<i32> {
    let exports = ExportManager::new("syscalls", &a.export, &Format::ALL, a.force)?
        .besides(a.file.as_deref(), "FILE");
    exports.check()?;
    let (file, results) = run(a)?;
    // The document names where it ran: the context is read here, once, for stdout and file.
    let document = (a.json || a.export.export_json.is_some())
        .then(|| document(a, &file, &results))
        .transpose()?;
    let text = match (&document, a.csv) {
        (Some(doc), _) if a.json => doc.clone(),
        (_, true) => csv(&results)?,
        _ => table(&results),
    };
    println_stdout(text.trim_end())?;
    let out = SyscallsResults {
        file: &file,
        results: &results,
        document,
    };
    exports.write_and_say(&out)?;
    Ok(0)
}

/// The `--json` document.
fn document(a: &SyscallsParams, file: &Path, results: &[SyscallResult]) -> anyhow::Result<String> {
    let ctx = crate::explain::context::Context::collect(file);
    let setup = serde_json::json!({
        "file": file.display().to_string(),
        "seconds_per_call": a.seconds,
    });
    crate::explain::json::document("syscalls", &ctx, setup, results, &[], &[])
}

/// The measured calls, as every format writes them.
pub struct SyscallsResults<'a> {
    pub file: &'a Path,
    pub results: &'a [SyscallResult],
    /// The `--json` document, made by the front end (it names the machine).
    pub document: Option<String>,
}

impl Exportable for SyscallsResults<'_> {
    fn title(&self) -> String {
        "syscalls: cost of a system call".into()
    }

    fn subtitle(&self) -> String {
        crate::text::shown_path(self.file).into_owned()
    }

    fn csv(&self) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(Some(csv(self.results)?.into_bytes()))
    }

    fn json(&self) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(crate::export::manager::document_file(
            self.document.as_deref(),
        ))
    }

    fn figure(&self) -> Option<Figure> {
        let rows: Vec<SyscallRow> = self
            .results
            .iter()
            .map(|s| SyscallRow {
                syscall: s.syscall.clone(),
                rep: 1,
                calls: s.calls,
                seconds: s.seconds,
                calls_per_s: s.calls_per_s,
                ns_per_call: s.ns_per_call,
                file: self.file.display().to_string(),
                verdict: s.verdict.clone(),
                reasons: s.reasons.clone(),
                why: s.why.clone(),
                ..SyscallRow::default()
            })
            .collect();
        let chart = crate::export::chart::syscalls_chart(&self.title(), &rows)?;
        Some(crate::export::svg::figure(&chart))
    }
}
