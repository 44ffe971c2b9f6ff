//! One JSON document per run or sweep (`--json`), as hyperfine's `--export-json` and fio's
//! `--output-format=json`: the context, the setup, every figure (the same fields as the CSV,
//! latency percentiles included) and, when a limits profile exists, the explanation.
//!
//! The document is built from serde types only, so a column added to [`RunResult`] appears in the
//! JSON without touching this file. Other commands reuse [`document`] with their own row type.

use super::context::Context;
use super::model::Explanation;
use crate::config::spec::RunSpec;
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
    let mut setup = setup_fields(spec);
    // A mix (issue 26): its operation as the result row names it, and its share of reads.
    if let Some(pct) = spec.setup.mix_read_pct {
        setup["operation"] = crate::measure::result::MIX_OPERATION.into();
        setup["mix_read_pct"] = pct.into();
    }
    setup
}

fn setup_fields(spec: &RunSpec) -> Value {
    json!({
        "file": spec.target.path.display().to_string(),
        "operation": spec.setup.op,
        "method": spec.setup.method,
        "block_size_bytes": spec.setup.block_size_bytes,
        "block_count": spec.target.block_count,
        "threads": spec.setup.threads,
        "direct": spec.setup.direct,
        "cache": spec.setup.cache,
        "queue_depth": spec.setup.queue_depth,
        "pattern": spec.setup.pattern,
        "duration_s": spec.target.duration.map(|d| d.as_secs_f64()),
        "fsync": spec.setup.write_sync.fsync(),
        "dsync": spec.setup.write_sync.dsync(),
        "seed": spec.safety.seed,
    })
}

/// The document of one measured run (`run --json`, `run2 --json`). The result's bound columns
/// are filled from the explanation (as a sweep's rows are), so `results[0]` and
/// `explanations[0]` never disagree.
pub fn run_document(
    command: &str,
    spec: &RunSpec,
    result: &RunResult,
    notes: &[String],
) -> anyhow::Result<String> {
    let ctx = Context::collect(&spec.target.path);
    let explanation = super::explain_file_result(Path::new(&spec.target.path), result);
    let mut row = result.clone();
    super::fill_bound_columns(&mut row, explanation.as_ref());
    document(
        command,
        &ctx,
        setup_of(spec),
        std::slice::from_ref(&row),
        &[explanation],
        notes,
    )
}
