//! `syscalls [FILE] [--seconds S]`: prints the lab kind's measurements (`crate::lab::syscalls`)
//! as a table, CSV (`--csv`) or one JSON document (`--json`).

use crate::lab::println_stdout;
use crate::lab::syscalls::{csv, run, table, SyscallsParams};

pub fn execute(a: &SyscallsParams) -> anyhow::Result<i32> {
    let (file, results) = run(a)?;
    let text = if a.json {
        let ctx = crate::explain::context::Context::collect(&file);
        let setup = serde_json::json!({
            "file": file.display().to_string(),
            "seconds_per_call": a.seconds,
        });
        crate::explain::json::document("syscalls", &ctx, setup, &results, &[], &[])?
    } else if a.csv {
        csv(&results)?
    } else {
        table(&results)
    };
    println_stdout(text.trim_end())?;
    Ok(0)
}
