//! diskscope: how fast can this machine read and write this file, and why?
//!
//! Data flows one way:
//!
//! ```text
//! RunSpec (config) ──> runner::Run: one thread per worker, engine::<method> does the I/O
//!                        │  per-thread measure::WorkerCtx: counters, hdrhistogram, XOR
//!                        ▼  Snapshot every ~100 ms over a channel
//!                   measure::Aggregate ──> RunResult ──> { CSV, plots, summaries, TUI table }
//! ```
//!
//! The TUI and batch mode consume the same snapshot stream, so a number on screen and a number in
//! a CSV are the same computation. Engines know nothing of threads, channels or terminals.
//!
//! Modules:
//! * [`config`] — settings → validated [`config::spec::RunSpec`]; every usage error is made here.
//! * [`engine`] — one file per I/O method behind [`engine::Engine`].
//! * [`runner`] — the one run lifecycle ([`runner::Run`]): prepare, threads, stop, snapshots, verdict.
//! * [`measure`] — clock, histograms, snapshots, aggregation, [`measure::RunResult`], statistics.
//! * [`mounts`] — /proc/self/mountinfo parsed, and the mount holding a path.
//! * [`facts`] — the run's own facts: its I/O accounting, the file's extents, its page cache,
//!   pressure stalls, the device chain; read before and after the timed part.
//! * [`cache`] — warm / cold / cold-all and page-cache residency (`mincore`).
//! * [`sigbus`] — guarded mappings: SIGBUS on a mapping becomes an error, not a signal death.
//! * [`kernel`] — the block layer's own clock: per-request queue and device times from eBPF on
//!   the block tracepoints (root only), read once per interval.
//! * [`interrupt`] — the one Ctrl-C / SIGTERM / SIGHUP handler and the process's stop flag.
//! * [`xor`] — the XOR contract; [`pattern`] — deterministic written data; [`size`] — `4K`, `1M`.
//! * [`lab`] — the kinds of measurement, each with its parameters, its run and its command line
//!   (`run`, `run2`, `fast`, `syscalls`, `knee`); [`commands`] — `run` under mpirun.
//! * [`batch`] — `--batch FILE`: a preset or sweep file, or a fio job file, into one plan.
//! * [`sweep`] — batch mode: sweep files → runs → [`export`] (CSV, SVG plots, summary table).
//! * [`fiojob`] — fio job files and command lines read as a sweep (`--batch job.fio`).
//! * [`compare`] — `compare OLD NEW`: match points, Welch's t verdicts; [`report`] — `--report` HTML.
//! * [`fleet`] — the same point on many MPI ranks at once (`--features mpi`), IOR-style aggregate.
//! * [`explain`] — context of a run, the machine's ceilings (`limits`) and the model naming the
//!   bound of every result.
//! * [`text`] — text from outside (names, fields, trace lines) made safe for terminals and CSVs.
//! * [`cli`] — clap definitions and the entry points of the binaries.

pub mod batch;
pub mod cache;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod config;
pub mod engine;
pub mod explain;
pub mod export;
pub mod facts;
pub mod fio;
pub mod fiojob;
pub mod fleet;
pub mod fsguard;
pub mod interrupt;
pub mod kernel;
pub mod lab;
pub mod locality;
pub mod measure;
pub mod mounts;
pub mod oom;
pub mod pattern;
pub mod report;
pub mod runner;
pub mod sigbus;
pub mod size;
pub mod sweep;
pub mod text;
pub mod tui;
pub mod units;
pub mod xor;
