//! The one integration-test binary (one link step instead of one per file, as in ripgrep).
//!
//! Where new tests go: one module per area, named after the user-facing feature it checks —
//! `architecture` (no import cycle in src/, layers import downwards only),
//! `run_cmd` (run/run2/fast/syscalls and bad input), `checksum` (`--checksum xor|none` and the
//! sweep's `checksum` key: no XOR printed without one, the fio line's note), `settings` (a result holds every setting
//! it ran with, issue 18), `batch`, `compare` (compare OLD NEW,
//! --report), `export` (`--export-csv/json/svg/html` of run, knee and compare: written, refused
//! without --force, never through a link), `explain` (context, limits, --json), `tui`, `locality`, `speed` (`fast` against a reference XOR on every road, timing
//! switch), `fast_race` (fast's cold road chosen by a timed race, and -v saying why), `hostile_files` (issue 9: files we must not touch, inputs that cannot end, property
//! tests of the parsers), `presets` (golden CSV shapes of every ready sweep and the classic commands' stdout),
//! `kernel` (`--kernel`: the block layer's clock against the device's counters, a queue that
//! dominates, a run without permission), `hostile_runtime` (issue 9: shrinking files, SIGBUS, memory
//! budget, Ctrl-C during writes), `hostile_integrity` (issue 21: writers under a run, hard links,
//! inputs swapped or that never end, thread limits). Shared helpers
//! (temp dirs, an independent XOR, binaries) live in `util`; `hermetic` checks that no test
//! reads or writes the user's home, cache or working directory: start binaries with
//! `util::bin` or `util::command`, never `cargo_bin` directly.

// The tests drive the binaries through their test hooks (`runner::test_hook`), which only builds
// with debug assertions or the `test-hooks` feature have.
#[cfg(not(any(debug_assertions, feature = "test-hooks")))]
compile_error!(
    "the tests need the test hooks: `cargo test`, or `cargo test --release --features test-hooks`"
);

mod util;

mod accuracy;
mod architecture;
mod batch;
mod buffers;
mod checksum;
mod compare;
mod explain;
mod export;
mod fast_race;
mod fiojob;
mod fleet;
mod hermetic;
mod hostile_files;
mod hostile_integrity;
mod hostile_runtime;
mod hostile_text;
mod kernel;
mod knee;
mod labels;
mod locality;
mod mix;
mod openloop;
mod openloop_fuse;
mod presets;
mod profiles;
mod run_cmd;
mod settings;
mod speed;
mod timeline;
mod tui;
mod verdict;
