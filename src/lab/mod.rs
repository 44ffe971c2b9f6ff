//! The lab layer: one module per kind of measurement, each owning its parameters (the clap
//! `Args` of its command line, and where a sweep can hold it, its serde form), their
//! validation, how it runs, and its command line's printing (`command`: the answer alone on
//! stdout, everything else on stderr, the files through the one export path). A sweep adapts
//! each kind in `sweep::kinds::<kind>` (its keys, planning and rows); `cli.rs` registers each
//! command once. Dependencies point down only: lab → runner → engine → measure; a kind never
//! imports a front end (`cli`, `sweep`, `tui`), which `tests/architecture.rs` checks.
//!
//! * [`throughput`]: `run` and `run2` (`run_command`, `run2_command`) and the sweep's
//!   `throughput` experiments (the runner and engines do the I/O); the setup's flags are
//!   [`flags`], shared with the knee.
//! * [`fast`]: the XOR of a whole file by the fastest road.
//! * [`syscalls`]: the cost of a system call.
//! * [`knee`]: the highest rate whose response-time p99 stays under a target.
//! * the `locality` kind lives in `crate::locality` (its own command and data layout); the
//!   `command` kind (an external program timed on the same file) exists in sweeps only,
//!   `sweep::kinds::command`.

pub mod fast;
pub mod flags;
pub mod knee;
pub mod syscalls;
pub mod throughput;

/// Prints one line on stdout; a closed pipe surfaces as a BrokenPipe error (exit 0 upstream).
pub fn println_stdout(line: &str) -> anyhow::Result<()> {
    crate::text::write_stdout(format!("{}\n", crate::text::shown_lines(line)).as_bytes())
}
