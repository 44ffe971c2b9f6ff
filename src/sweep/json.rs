//! The sweep's JSON documents, written beside the CSVs: `context.json` and `sweep.json` (the
//! `--json` document). The document's shape (context, setup, rows, explanations) is the one
//! every command uses, `explain::json::document`; what is sweep-specific (the plan's setup, the
//! syscall rows) is added here, so the explanation layer knows nothing of sweeps.

use super::outcome::SweepOutcome;
use crate::explain::json::{document, setup_of};
use crate::explain::model::Explanation;
use crate::export::Export;
use crate::measure::RunResult;
use serde_json::{json, Value};

/// The companions of a sweep's CSVs in its output directory: `context.json` (where it ran: the
/// machine, the test file's filesystem and device, warnings) and `sweep.json`, one document
/// with the context, the setup of every experiment, every row of every CSV (latency
/// percentiles and the bound columns included), the explanation of each run row and the
/// `timeline` of each run that has one (its intervals and reading). `sweep.json` without its
/// closing newline is the document `--json` prints on stdout.
pub fn documents(o: &SweepOutcome) -> anyhow::Result<Vec<Export>> {
    let plan = &o.plan;
    let dir = &plan.out_dir;
    // A process that wrote nothing has no context; its documents say nothing of the machine
    // (an exporter reads nothing).
    let ctx = o.context.clone().unwrap_or_default();
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
            "kind": x.kind.name(),
            "reps": x.reps,
            "seconds": x.seconds,
            "points": x.points.iter().map(setup_of).collect::<Vec<_>>(),
            "notes": x.notes,
        })).collect::<Vec<_>>(),
    });
    let done = o.done();
    let runs: Vec<&RunResult> = done.iter().flat_map(|(_, c)| &c.runs).collect();
    let explanations: Vec<Option<Explanation>> = runs
        .iter()
        .map(|r| {
            o.known
                .profile(&r.identity.file)
                .and_then(|p| crate::explain::model::explain_result(p, r))
        })
        .collect();
    let syscalls: Vec<&crate::export::SyscallRow> =
        done.iter().flat_map(|(_, c)| &c.syscalls).collect();
    let doc = document("batch", &ctx, setup, &runs, &explanations, &[])?;
    let mut v: Value = serde_json::from_str(&doc)?;
    v["syscalls"] = serde_json::to_value(&syscalls)?;
    v["timeline"] = crate::export::timeline::timeline_json(&runs)?;
    // A knee experiment's answer (its rows are its points): the knee, its bracket, why the
    // search stopped, as `knee --json` gives them.
    let knees: Vec<Value> = done
        .iter()
        .filter_map(|(x, c)| {
            let a = c.knee.as_ref()?;
            Some(json!({
                "experiment": x.name,
                "answer": a.knee,
                "error": a.error,
                "seconds": a.elapsed_s,
            }))
        })
        .collect();
    if !knees.is_empty() {
        v["knees"] = Value::Array(knees);
    }
    let doc = serde_json::to_string_pretty(&v)?;
    Ok(vec![
        Export::new(
            "context.json",
            format!("{}\n", serde_json::to_string_pretty(&ctx)?),
        ),
        Export::new("sweep.json", format!("{doc}\n")),
    ])
}
