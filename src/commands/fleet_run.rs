//! `run FILE -r|-w BLOCK_SIZE BLOCK_COUNT` under `mpirun`/`srun` (built with `--features mpi`):
//! the same point on every rank at once, on `FILE.RANK` (file-per-process, the default) or on
//! disjoint shares of `FILE` (`--fleet-layout shared-file`). Rank 0 alone prints. stdout holds
//! the answer: the XOR of the whole shared file (the ranks' XORs combined, equal to what one
//! `run` of the file prints), or one `XOR  FILE` line per rank's file. stderr: each rank's
//! summary, then the fleet's.

use crate::config::Op;
use crate::fleet::point::{self, PointEnd};
use crate::fleet::{follower_status, Fleet, Layout};
use crate::lab::println_stdout;
use crate::lab::throughput::{spec_of, summary_line, RunArgs};
use crate::measure::RunResult;
use crate::size::format_bytes_approx;
use crate::xor::format_xor;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// Removes the files this rank's failed write created (regular files it made in this run only).
fn remove_created(created: &[PathBuf]) -> Vec<String> {
    created
        .iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .filter_map(|p| {
            std::fs::remove_file(p)
                .ok()
                .map(|_| p.display().to_string())
        })
        .collect()
}

pub fn execute(a: &RunArgs, mut fleet: Fleet) -> anyhow::Result<i32> {
    let rank = fleet.rank();
    let spec = match spec_of(a) {
        Ok(s) => s,
        // Every rank sees the same command line: rank 0 says it once and sets the status (see
        // `follower_status`).
        Err(e) if rank == 0 => return Err(e),
        Err(_) => return Ok(0),
    };
    let stop = AtomicBool::new(false);
    let end = point::run_point(&mut fleet, 1, &spec, "run", &stop);
    let failed = |why: String, created: &[PathBuf], follower: i32| -> anyhow::Result<i32> {
        let removed = if spec.op == Op::Write {
            remove_created(created)
        } else {
            Vec::new()
        };
        if rank != 0 {
            return Ok(follower);
        }
        let note = if removed.is_empty() {
            String::new()
        } else {
            format!("; removed the partial file {}", removed.join(", "))
        };
        Err(anyhow::anyhow!("{why}{note}"))
    };
    let PointEnd { reports, created } = match end {
        Ok(e) => e,
        Err((e, created)) => {
            fleet.note_error(&e);
            let follower = if rank != 0 { follower_status(&e) } else { 0 };
            return failed(e.to_string(), &created, follower);
        }
    };
    if rank != 0 {
        return Ok(0);
    }
    let rows = fleet.rows_of(&reports);
    let all = rows.last().expect("rows end with the aggregate");
    if !all.error.is_empty() {
        return failed(format!("fleet: {}", all.error), &created, 0);
    }
    let per_rank = &rows[..rows.len() - 1];
    match fleet.options.layout {
        Layout::SharedFile if !all.xor.is_empty() => println_stdout(&all.xor)?,
        Layout::SharedFile => match xor_of_parts(per_rank) {
            Some(x) => println_stdout(&format_xor(x))?,
            None => eprintln!("note: no XOR: the ranks stopped before covering the file"),
        },
        Layout::FilePerProcess => {
            for r in per_rank {
                let xor = if r.xor.is_empty() { "-" } else { &r.xor };
                println_stdout(&format!("{xor}  {}", r.file))?;
            }
        }
    }
    for (r, rep) in per_rank.iter().zip(&reports) {
        let stopped = if rep.stopped_by.is_empty() {
            String::new()
        } else {
            format!(" [stopped: {}]", rep.stopped_by)
        };
        eprintln!(
            "rank {} ({}): {}{stopped}",
            rep.rank,
            r.host,
            summary_line(&spec, r)
        );
    }
    eprintln!("{}", fleet_line(all, fleet.hosts()));
    Ok(0)
}

/// XOR of the ranks' XORs of what they read (random shared-file points); None if one is missing.
fn xor_of_parts(rows: &[RunResult]) -> Option<u32> {
    rows.iter().try_fold(0u32, |acc, r| {
        u32::from_str_radix(&r.xor, 16).ok().map(|x| acc ^ x)
    })
}

/// The fleet's one-line summary.
pub fn fleet_line(all: &RunResult, hosts: &[String]) -> String {
    let mut distinct = hosts.to_vec();
    distinct.sort();
    distinct.dedup();
    format!(
        "fleet of {} ranks on {} host{}: {} {} in {:.4} s (first start to last end): {:.1} MiB/s, \
         {:.0} IOPS | ranks {:.1}..{:.1} MiB/s, slowest {} | latency p50 {:.2} µs, p99 {:.2} µs, \
         max {:.1} µs (all ranks' operations) | start skew {:.0} µs",
        hosts.len(),
        distinct.len(),
        if distinct.len() == 1 { "" } else { "s" },
        if all.operation == crate::config::Op::Write {
            "wrote"
        } else {
            "read"
        },
        format_bytes_approx(all.bytes),
        all.seconds,
        all.mib_s,
        all.iops,
        all.rank_min_mib_s.flatten().unwrap_or(0.0),
        all.rank_max_mib_s.flatten().unwrap_or(0.0),
        all.slowest.as_deref().unwrap_or(""),
        all.lat_p50_us,
        all.lat_p99_us,
        all.lat_max_us,
        all.start_skew_us.flatten().unwrap_or(0.0),
    )
}
