//! The lab layer: one module per kind of measurement, each owning its parameters (the clap
//! `Args` of its command line, and where a sweep can hold it, its serde form), their
//! validation, and how it runs. The front ends are thin adapters over these kinds: `commands`
//! (the classic command lines print what a kind returns), `sweep` (experiments of every kind)
//! and `tui` (the explorer's throughput runs). Dependencies point down only: front ends → lab →
//! runner → engine → measure; a kind never imports a front end (`cli`, `commands`, `sweep`,
//! `tui`), which `tests/architecture.rs` checks.
//!
//! * [`throughput`]: `run`, `run2` and the sweep's `throughput` experiments (the runner and
//!   engines do the I/O).
//! * [`fast`]: the XOR of a whole file by the fastest road.
//! * [`syscalls`]: the cost of a system call.
//! * the `locality` kind lives in `crate::locality` (its own command and data layout); the
//!   `command` kind (an external program timed on the same file) exists in sweeps only,
//!   `sweep::kinds::command`. `sweep::kinds` adapts every kind to sweep experiments.

pub mod fast;
pub mod flags;
pub mod knee;
pub mod syscalls;
pub mod throughput;

/// Prints one line on stdout; a closed pipe surfaces as a BrokenPipe error (exit 0 upstream).
pub fn println_stdout(line: &str) -> anyhow::Result<()> {
    crate::text::write_stdout(format!("{}\n", crate::text::shown_lines(line)).as_bytes())
}
