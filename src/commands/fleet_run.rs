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
    // The timeline flags, checked on every rank (each sees the same command line; rank 0 says
    // what is wrong and sets the status).
    let timeline_csv = a.timeline.timeline_csv.as_deref();
    let checked = crate::measure::timeline::parse_interval(&a.timeline.interval, "--interval")
        .and_then(|interval| {
            if a.timeline.log_ops.is_some() {
                return Err(crate::config::usage(
                    "--log-ops: not under mpirun (each rank's operations would need a file of \
                     its own); run without mpirun to log every operation",
                ));
            }
            if let Some(refusal) = timeline_csv.and_then(|p| {
                crate::fsguard::check_new_output(p, false, "--timeline", Some(&spec.target.path))
            }) {
                return Err(crate::config::usage(refusal));
            }
            Ok(interval)
        });
    match checked {
        Ok(interval) => fleet.options.interval = interval,
        Err(e) if rank == 0 => return Err(e),
        Err(_) => return Ok(0),
    }
    let stop = AtomicBool::new(false);
    let end = point::run_point(&mut fleet, 1, &spec, "run", &stop);
    let failed = |why: String, created: &[PathBuf], follower: i32| -> anyhow::Result<i32> {
        let removed = if spec.setup.op == Op::Write {
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
    if !all.figures.error.is_empty() {
        return failed(format!("fleet: {}", all.figures.error), &created, 0);
    }
    let per_rank = &rows[..rows.len() - 1];
    if a.json {
        println_stdout(&fleet_document(&spec, &rows)?)?;
    } else {
        print_xors(fleet.options.layout, all, per_rank)?;
    }
    for (r, rep) in per_rank.iter().zip(&reports) {
        let stopped = if rep.stopped_by.is_empty() {
            String::new()
        } else {
            format!(" [stopped: {}]", rep.stopped_by)
        };
        let verdict = match crate::explain::verdict::lines_of(r).first() {
            Some(v) => format!(" | {v}"),
            None => String::new(),
        };
        crate::eprintln_shown!(
            "rank {} ({}): {}{stopped}{verdict}",
            rep.rank,
            crate::text::shown(&r.identity.host),
            summary_line(&spec, r)
        );
    }
    crate::eprintln_shown!("{}", fleet_line(all, fleet.hosts()));
    if let Some(mix) = crate::fleet::aggregate::mix_line(all) {
        crate::eprintln_shown!("{mix}");
    }
    for line in crate::explain::verdict::lines_of(all) {
        crate::eprintln_shown!("{line}");
    }
    if let Some(t) = &all.timeline {
        for line in t.reading_lines_for_stderr() {
            crate::eprintln_shown!("fleet timeline: {line}");
        }
    }
    if let Some(p) = timeline_csv {
        let refs: Vec<&RunResult> = rows.iter().collect();
        crate::fsguard::write_output_with(
            p,
            crate::fleet::timeline::timeline_csv(&refs)?.as_bytes(),
            false,
            "--timeline",
            crate::config::usage,
        )?;
        crate::eprintln_shown!(
            "timeline: {} (every rank's intervals on the fleet's clock, then rank all's)",
            crate::text::shown_path(p)
        );
    }
    Ok(0)
}

/// `--json` under mpirun: the document every command writes (context of rank 0's file, the
/// setup, every rank's row and the `all` row) with the fleet's `timeline` (per rank and all).
fn fleet_document(
    spec: &crate::config::spec::RunSpec,
    rows: &[RunResult],
) -> anyhow::Result<String> {
    let ctx = crate::explain::context::Context::collect(&spec.target.path);
    let setup = crate::explain::json::setup_of(spec);
    let doc = crate::explain::json::document("run", &ctx, setup, rows, &[], &[])?;
    let mut v: serde_json::Value = serde_json::from_str(&doc)?;
    let refs: Vec<&RunResult> = rows.iter().collect();
    v["timeline"] = crate::fleet::timeline::timeline_json(&refs);
    Ok(serde_json::to_string_pretty(&v)?)
}

/// stdout without --json: the shared file's XOR, or one `XOR  FILE` line per rank's file.
fn print_xors(layout: Layout, all: &RunResult, per_rank: &[RunResult]) -> anyhow::Result<()> {
    match layout {
        Layout::SharedFile if !all.figures.xor.is_empty() => println_stdout(&all.figures.xor)?,
        Layout::SharedFile => match xor_of_parts(per_rank) {
            Some(x) => println_stdout(&format_xor(x))?,
            None => eprintln!("note: no XOR: the ranks stopped before covering the file"),
        },
        Layout::FilePerProcess => {
            for r in per_rank {
                let xor = if r.figures.xor.is_empty() {
                    "-"
                } else {
                    &r.figures.xor
                };
                println_stdout(&format!("{xor}  {}", r.identity.file))?;
            }
        }
    }
    Ok(())
}

/// XOR of the ranks' XORs of what they read (random shared-file points); None if one is missing.
fn xor_of_parts(rows: &[RunResult]) -> Option<u32> {
    rows.iter().try_fold(0u32, |acc, r| {
        u32::from_str_radix(&r.figures.xor, 16)
            .ok()
            .map(|x| acc ^ x)
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
        if all.setup.op == crate::config::Op::Write {
            "wrote"
        } else if all.setup.mix_read_pct.is_some() {
            "read and wrote"
        } else {
            "read"
        },
        format_bytes_approx(all.figures.bytes),
        all.figures.seconds,
        all.figures.mib_s,
        all.figures.iops,
        all.fleet
            .as_ref()
            .and_then(|f| f.rank_min_mib_s)
            .unwrap_or(0.0),
        all.fleet
            .as_ref()
            .and_then(|f| f.rank_max_mib_s)
            .unwrap_or(0.0),
        all.fleet
            .as_ref()
            .map(|f| f.slowest.clone())
            .as_deref()
            .unwrap_or(""),
        all.figures.lat_p50_us,
        all.figures.lat_p99_us,
        all.figures.lat_max_us,
        all.fleet
            .as_ref()
            .and_then(|f| f.start_skew_us)
            .unwrap_or(0.0),
    )
}
