//! Measurement: timing, latency histograms, the snapshot stream and the one result type.
//!
//! Workers record into per-thread state ([`WorkerCtx`], with its [`histogram`]) and ship it as
//! [`Snapshot`]s every ~100 ms; [`Aggregate`] folds that stream into totals for the TUI, batch
//! mode and the classic commands alike, and [`RunResult`] is the single record every exporter
//! and printer reads; [`Timeline`] is the same stream cut into intervals, with the device's and
//! the CPUs' counters ([`device`]) sampled on the same clock. This module sits below the engines (they record through [`WorkerCtx`]) and
//! the runner (it starts the threads and folds their snapshots): it imports neither.

pub mod aggregate;
pub mod burst;
pub mod clock;
pub mod columns;
pub mod device;
pub mod histogram;
pub mod kernel;
pub mod pacer;
pub mod result;
pub mod snapshot;
pub mod stats;
pub mod timeline;
pub mod worker;

pub use aggregate::Aggregate;
pub use clock::Clock;
pub use histogram::{new_latency_histogram, LatencySummary};
pub use result::RunResult;
pub use snapshot::{LoggedOp, Snapshot, SnapshotKind, WorkerError};
pub use timeline::{Timeline, TimelineBuilder};
pub use worker::{log_ops, OpSpan, WorkerCtx, NO_LATENCY_ENV, SNAPSHOT_INTERVAL};
