//! One JSON document per run or sweep (`--json`), as hyperfine's `--export-json` and fio's
//! `--output-format=json`: the context, the setup, every figure (the same fields as the CSV,
//! latency percentiles included) and, when a limits profile exists, the explanation.
//!
//! The document is built from serde types only, so a column added to [`RunResult`] appears in the
//! JSON without touching this file. Other commands reuse [`document`] with their own row type.

use super::context::Context;
use super::model::Explanation;
use crate::config::RunSpec;
use crate::measure::RunResult;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;

/// Format version of the documents.
pub const JSON_VERSION: u32 = 1;

/// A document: `{"diskscope": {...}, "command", "context", "setup", "results", "explanations",
/// "notes"}`. `results` is any serializable rows (RunResult, syscall rows, locality rows).
pub fn document<T: Serialize>(
    command: &str,
    ctx: &Context,
    setup: Value,
    results: &[T],
    explanations: &[Option<Explanation>],
    notes: &[String],
) -> anyhow::Result<String> {
    let doc = json!({
        "diskscope": { "version": env!("CARGO_PKG_VERSION"), "json_version": JSON_VERSION },
        "command": command,
        "context": ctx,
        "setup": setup,
        "results": results,
        "explanations": explanations,
        "notes": notes,
    });
    Ok(serde_json::to_string_pretty(&doc)?)
}

/// The settings of a run spec, as JSON (units in the names).
pub fn setup_of(spec: &RunSpec) -> Value {
    json!({
        "file": spec.path.display().to_string(),
        "operation": spec.op,
        "method": spec.method,
        "block_size_bytes": spec.block_size_bytes,
        "block_count": spec.block_count,
        "threads": spec.threads,
        "direct": spec.direct,
        "cache": spec.cache,
        "queue_depth": spec.queue_depth,
        "pattern": spec.pattern,
        "duration_s": spec.duration.map(|d| d.as_secs_f64()),
        "fsync": spec.fsync,
        "dsync": spec.dsync,
        "seed": spec.seed,
    })
}

/// The document of one measured run (`run --json`, `run2 --json`).
pub fn run_document(
    command: &str,
    spec: &RunSpec,
    result: &RunResult,
    notes: &[String],
) -> anyhow::Result<String> {
    let ctx = Context::collect(&spec.path);
    let explanation = super::explain_file_result(Path::new(&spec.path), result);
    document(
        command,
        &ctx,
        setup_of(spec),
        std::slice::from_ref(result),
        &[explanation],
        notes,
    )
}

/// `diskscope --batch SWEEP --json`: the document goes to stdout and the plan and summary
/// table to stderr. Set once by the command line before the sweep starts.
static BATCH_JSON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks batch mode for its JSON document on stdout (`--json`).
pub fn set_batch_json(on: bool) {
    BATCH_JSON.store(on, std::sync::atomic::Ordering::SeqCst);
}

/// Whether batch mode prints its JSON document on stdout.
pub fn batch_json() -> bool {
    BATCH_JSON.load(std::sync::atomic::Ordering::SeqCst)
}

/// The companions of a sweep's CSVs in its output directory: `context.json` (where it ran: the
/// machine, the test file's filesystem and device, warnings) and `sweep.json`, one document
/// with the context, the setup of every experiment, every row of every CSV (latency
/// percentiles and the bound columns included) and the explanation of each run row. Returns
/// the files written and the document (printed on stdout with `--json`).
pub fn write_sweep_documents(
    dir: &Path,
    plan: &crate::sweep::plan::Plan,
    done: &[(
        &crate::sweep::plan::Experiment,
        &crate::sweep::output::Collected,
    )],
) -> anyhow::Result<(Vec<std::path::PathBuf>, String)> {
    use anyhow::Context as _;
    let at = plan
        .file
        .as_ref()
        .map(|f| f.path.clone())
        .filter(|p| p.exists())
        .unwrap_or_else(|| dir.to_path_buf());
    let ctx = Context::collect(&at);
    let setup = json!({
        "sweep": plan.name,
        "description": plan.description,
        "file": plan.file.as_ref().map(|f| json!({
            "path": f.path.display().to_string(),
            "size_bytes": f.size_bytes,
            "created_by_diskscope": f.create,
        })),
        "out_dir": dir.display().to_string(),
        "experiments": plan.experiments.iter().map(|x| json!({
            "name": x.name,
            "kind": format!("{:?}", x.kind).to_lowercase(),
            "reps": x.reps,
            "seconds": x.seconds,
            "points": x.points.iter().map(setup_of).collect::<Vec<_>>(),
            "notes": x.notes,
        })).collect::<Vec<_>>(),
    });
    let runs: Vec<&RunResult> = done.iter().flat_map(|(_, c)| &c.runs).collect();
    let explanations: Vec<Option<Explanation>> = runs
        .iter()
        .map(|r| super::explain_file_result(Path::new(&r.file), r))
        .collect();
    let syscalls: Vec<&crate::export::SyscallRow> =
        done.iter().flat_map(|(_, c)| &c.syscalls).collect();
    let doc = document("batch", &ctx, setup, &runs, &explanations, &[])?;
    let mut v: Value = serde_json::from_str(&doc)?;
    v["syscalls"] = serde_json::to_value(&syscalls)?;
    let doc = serde_json::to_string_pretty(&v)?;
    let mut written = Vec::new();
    for (name, text) in [
        ("context.json", serde_json::to_string_pretty(&ctx)?),
        ("sweep.json", doc.clone()),
    ] {
        let path = dir.join(name);
        // Created like every other batch output: never through a link, an old file only
        // replaced with --force (checked before the first run: `sweep::output::SWEEP_DOCUMENTS`).
        crate::fsguard::write_output(&path, format!("{text}\n").as_bytes(), plan.force)
            .with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok((written, doc))
}
