//! `run FILE -r|-w BLOCK_SIZE BLOCK_COUNT`: the lab's first program. Prints the XOR of the data on
//! stdout, alone; throughput and the setup on stderr.

use super::{apply_io_opts, println_stdout, summary_line};
use crate::cli::RunArgs;
use crate::config::{parse_block_size, parse_count, Op, RunSpec, CLI_NAMES};
use crate::runner::{run_blocking, RunFailed};
use crate::xor::format_xor;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Builds the validated spec of a `run` command line.
pub fn spec_of(a: &RunArgs) -> anyhow::Result<RunSpec> {
    let mut spec = RunSpec::new(&a.file);
    spec.op = if a.write { Op::Write } else { Op::Read };
    spec.block_size_bytes = parse_block_size(&a.block_size, "BLOCK_SIZE")?;
    spec.block_count = Some(parse_count(&a.block_count, "BLOCK_COUNT")?);
    apply_io_opts(&mut spec, &a.io)?;
    spec.force = a.force;
    spec.fsync = a.fsync;
    spec.dsync = a.dsync;
    if !a.write && (a.force || a.fsync || a.dsync) {
        return Err(crate::config::usage(
            "--force, --fsync and --dsync apply to writes (-w); remove them or use -w",
        ));
    }
    spec.validate(&CLI_NAMES)?;
    Ok(spec)
}

pub fn execute(a: &RunArgs) -> anyhow::Result<i32> {
    let spec = spec_of(a)?;
    let existed = spec.path.exists();
    let stop = Arc::new(AtomicBool::new(false));
    let outcome = match run_blocking(&spec, "run", stop, |_, _| {}) {
        Ok(o) => o,
        Err(e) => return Err(cleanup_failed_write(&spec, existed, e)),
    };
    for n in &outcome.notes {
        eprintln!("{n}");
    }
    let r = &outcome.result;
    let xor = match outcome.aggregate.xor() {
        Some(x) => format_xor(x),
        None => format_xor(outcome.aggregate.xor_of_read_data()),
    };
    if a.json {
        let doc = crate::explain::json::run_document("run", &spec, r, &outcome.notes)?;
        println_stdout(&doc)?;
    } else {
        println_stdout(&xor)?;
    }
    eprintln!("{}", summary_line(r));
    for line in crate::explain::stderr_lines(&spec.path, r) {
        eprintln!("{line}");
    }
    Ok(0)
}

/// After a failed write, removes the partial file this run made (a regular file only) and says
/// so in the error, so a full disk never leaves a silent half-written file.
fn cleanup_failed_write(spec: &RunSpec, existed: bool, e: anyhow::Error) -> anyhow::Error {
    if spec.op != Op::Write {
        return e;
    }
    let Some(failed) = e.downcast_ref::<RunFailed>() else {
        return e;
    };
    let is_regular = std::fs::metadata(&spec.path).is_ok_and(|m| m.is_file());
    let what = if failed.is_disk_full() {
        "disk full"
    } else {
        "write failed"
    };
    if is_regular {
        let removed = std::fs::remove_file(&spec.path).is_ok();
        let fate = if removed {
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
            spec.path.display(),
            failed.message,
            failed.bytes_done,
            failed.bytes_planned
        )
    } else {
        anyhow::anyhow!("{what} writing {}: {failed}", spec.path.display())
    }
}
