//! The one integration-test binary (one link step instead of one per file, as in ripgrep).
//!
//! Where new tests go: one module per area, named after the user-facing feature it checks —
//! `run_cmd` (run/run2/fast/syscalls and bad input), `batch`, `tui`, `locality`, `speed` (`fast`
//! against a reference XOR on every road, timing switch), `explain` (context, limits, --json).
//! Shared helpers (temp dirs, an independent XOR, binaries) live in `util`.

mod util;

mod batch;
mod explain;
mod locality;
mod run_cmd;
mod speed;
mod tui;
