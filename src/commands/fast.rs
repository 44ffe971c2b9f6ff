//! `fast FILE`: the XOR of a whole file as fast as this machine allows. It picks the method,
//! thread count and block size itself from the file's page-cache residency; stdout gets the XOR,
//! stderr the chosen setup, seconds and GiB/s.

use super::println_stdout;
use crate::cache;
use crate::cli::FastArgs;
use crate::config::{Method, RunSpec};
use crate::runner::run_blocking;
use crate::xor::format_xor;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Share of resident pages above which a file counts as cached.
pub const WARM_THRESHOLD_PCT: f64 = 90.0;

/// The chosen setup.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub method: Method,
    pub threads: usize,
    pub block_size_bytes: u64,
    pub reason: String,
}

/// Chooses a setup from the residency and the core count.
pub fn plan(resident_pct: f64, cores: usize) -> Plan {
    let threads = cores.max(1);
    if resident_pct >= WARM_THRESHOLD_PCT {
        Plan {
            method: Method::Pread,
            threads,
            block_size_bytes: 1 << 20,
            reason: format!("{resident_pct:.0}% cached: pread 1M on every core"),
        }
    } else {
        Plan {
            method: Method::IoUring,
            threads,
            block_size_bytes: 1 << 20,
            reason: format!("{resident_pct:.0}% cached: io_uring 1M, queue depth 8 per core"),
        }
    }
}

pub fn execute(a: &FastArgs) -> anyhow::Result<i32> {
    let res = cache::residency(&a.file)
        .map_err(|e| anyhow::anyhow!("FILE: {}: {e:#}", a.file.display()))?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let p = plan(res.percent(), cores);
    let mut spec = RunSpec::new(&a.file);
    spec.method = p.method;
    spec.threads = p.threads;
    spec.block_size_bytes = p.block_size_bytes;
    spec.queue_depth = 8;
    if spec.method == Method::IoUring && crate::engine::probe_io_uring().is_err() {
        spec.method = Method::Pread;
    }
    let o = run_blocking(&spec, "fast", Arc::new(AtomicBool::new(false)), |_, _| {})?;
    let x = o.aggregate.xor().unwrap_or(0);
    println_stdout(&format_xor(x))?;
    let r = &o.result;
    eprintln!(
        "{}: {} threads, {} blocks; {:.4} s, {:.2} GiB/s",
        p.reason,
        spec.threads,
        crate::size::format_size(spec.block_size_bytes),
        r.seconds,
        r.bytes as f64 / (1u64 << 30) as f64 / r.seconds.max(1e-9)
    );
    Ok(0)
}
