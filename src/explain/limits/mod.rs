//! `diskscope limits [FILE]`: measures, once, the ceilings that bound every read of a file on
//! this machine, and stores them as a [`Profile`] for the model to explain later runs with.
//!
//! Every I/O figure goes through the same runner and engines as `run` ([`RunSpec`] →
//! [`run_blocking`]), so a ceiling and a measurement share their per-operation overhead (clock
//! reads, histogram, XOR). Only the memory ceilings are measured here directly, because they are
//! not I/O: `memcpy` from a large buffer into a small one (what `read(2)` does with cached pages)
//! and the XOR of a large buffer, on 1..=nproc threads at once. A ceiling is the best the
//! machine does, so the CPU-bound figures are the best of [`TRIES`] short tries: on a shared
//! machine one try can lose half its time to another process.
//!
//! Every ceiling keeps the spread of its tries (`(best − worst) / best`, stored as the profile's
//! [`Spread`]), so the model knows how far to trust it, and the profile records its
//! [`Provenance`]: the file read, `--quick` or not, the load average, and the share of the CPUs
//! that other processes used and the hypervisor stole while it ran (from `/proc/stat` less this
//! process's own CPU time). A profile measured under load is stored but marked, and says so
//! wherever it is used. `--quick` does not replace a full profile that still holds (fresh, quiet);
//! it prints its figures and says how to measure a full one.
//!
//! Without FILE, a test file is created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`) in the current
//! directory and removed at the end, on error and on Ctrl-C too. With FILE, the file is only read
//! (its page-cache pages are dropped for the cold-readahead figure, which changes no data).
//!
//! System calls go through rustix's safe wrappers where it has one (the clock tick rate); this
//! process's CPU time is read with libc's `getrusage`, the one `unsafe` left here, because rustix
//! has no `getrusage`.
//!
//! The parts: `budget` (how long each step runs, best of tries), `machine` (what else the
//! machine did meanwhile), `memory` (the memory ceilings), `steps` (the I/O steps and
//! [`measure`], which runs them all) and `table` (printing a profile); the command's entry point
//! is here.
//!
//! [`RunSpec`]: crate::config::spec::RunSpec
//! [`run_blocking`]: crate::runner::run_blocking
//! [`Spread`]: crate::explain::profile::Spread
//! [`Provenance`]: crate::explain::profile::Provenance

mod budget;
mod machine;
mod memory;
mod runs;
mod steps;
mod table;

pub use self::budget::{best_and_spread, Budget, FULL, QUICK, TRIES};
pub use self::machine::{others_and_steal_pct, parse_load_avg_1m, parse_proc_stat, CpuTicks};
pub use self::memory::{cache_sizes, refresh_memory};
pub use self::steps::measure;
pub use self::table::{print_profile, table};

use super::context::Context;
use super::profile::{self, now_unix_s, Profile};
use crate::config::usage;
use crate::text::{shown, shown_path};
use anyhow::Context as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `diskscope limits`.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitsArgs {
    /// File whose device to measure, read only (default: a test file made and removed in the
    /// current directory)
    pub file: Option<PathBuf>,
    /// Measure again even when a profile is stored
    #[arg(long)]
    pub refresh: bool,
    /// Print the profile as JSON on stdout instead of a table
    #[arg(long)]
    pub json: bool,
    /// Shorter steps and a 32 MiB test file: a few seconds, less precise
    #[arg(long)]
    pub quick: bool,
}

/// Stop flag raised by Ctrl-C (the process's, `crate::interrupt`).
fn stop_flag() -> Arc<AtomicBool> {
    crate::interrupt::stop_flag()
}

/// The entry point of `diskscope limits`.
pub fn execute(a: &LimitsArgs) -> anyhow::Result<i32> {
    let where_ = match &a.file {
        Some(f) => {
            let m = std::fs::metadata(f).map_err(|e| {
                usage(format!(
                    "FILE: cannot read {}: {e}; give an existing file",
                    shown_path(f)
                ))
            })?;
            if !m.is_file() {
                return Err(usage(format!(
                    "FILE: {} is not a regular file; give a file on the device to measure",
                    shown_path(f)
                )));
            }
            f.clone()
        }
        None => std::env::current_dir().context("finding the current directory")?,
    };
    let ctx = Context::collect(&where_);
    let path = profile::profile_path(&ctx);
    let stored = profile::load_for(&ctx);
    if !a.refresh {
        if let Some(p) = &stored {
            print_profile(p, a.json)?;
            crate::eprintln_shown!(
                "limits: stored profile {} (measured {} s ago); --refresh measures again",
                path.as_deref().map(shown_path).unwrap_or_default(),
                now_unix_s().saturating_sub(p.measured_unix_s)
            );
            if let Some(s) = p.doubts(&ctx, now_unix_s()) {
                crate::eprintln_shown!("warning: {s}");
            }
            return Ok(0);
        }
    }
    for w in &ctx.warnings {
        crate::eprintln_shown!("warning: {}", shown(w));
    }
    let budget = if a.quick { QUICK } else { FULL };
    let stop = stop_flag();
    let started = Instant::now();
    let p = match measure(a.file.as_deref(), &where_, ctx.clone(), budget, &stop) {
        Ok(p) => p,
        // Ctrl-C: the test file is already removed (dropped with the error) and nothing was
        // stored; exit as batch mode does.
        Err(_) if stop.load(Ordering::SeqCst) => {
            eprintln!("limits: interrupted; no profile stored, the test file was removed");
            return Ok(crate::config::EXIT_INTERRUPTED);
        }
        Err(e) => return Err(e),
    };
    let kept = stored.filter(|old| !quick_may_replace(old, &p, &ctx));
    print_profile(&p, a.json)?;
    if let Some(old) = kept {
        crate::eprintln_shown!("limits: measured in {:.1} s; --quick did not replace the full profile {} (measured {} s ago, quiet and fresh): run `diskscope limits --refresh` without --quick to measure it again",
            started.elapsed().as_secs_f64(),
            path.as_deref().map(shown_path).unwrap_or_default(),
            now_unix_s().saturating_sub(old.measured_unix_s));
        return Ok(0);
    }
    let path = profile::store(&p)?;
    crate::eprintln_shown!(
        "limits: measured in {:.1} s, stored {}",
        started.elapsed().as_secs_f64(),
        shown_path(&path)
    );
    if let Some(s) = p.doubts(&ctx, now_unix_s()) {
        crate::eprintln_shown!("warning: {s}");
    }
    Ok(0)
}

/// Whether the new profile `new` may replace the stored `old`: always, unless `new` is a
/// `--quick` one and `old` is a full one that still holds (fresh, measured on a quiet machine).
/// When a quick one does replace a full one, it says so on stderr.
fn quick_may_replace(old: &Profile, new: &Profile, now: &Context) -> bool {
    let quick = |p: &Profile| p.provenance.as_ref().is_some_and(|pv| pv.quick);
    if !quick(new) || quick(old) {
        return true;
    }
    let Some(pv) = &old.provenance else {
        eprintln!("limits: --quick replaces a profile of unknown precision (stored before limits kept its provenance)");
        return true;
    };
    let why = match (old.staleness(now, now_unix_s()), pv.under_load()) {
        (Some(_), _) => "stale",
        (None, true) => "measured under load",
        (None, false) => return false,
    };
    crate::eprintln_shown!(
        "limits: --quick replaces the full profile, which was {why}; its figures are less precise"
    );
    true
}

#[cfg(test)]
mod tests {
    use super::memory::{memory_ceiling, thread_counts};
    use super::*;
    use std::time::Duration;

    #[test]
    fn quick_replaces_a_full_profile_only_when_it_is_stale_or_was_measured_under_load() {
        let full = Profile {
            measured_unix_s: now_unix_s(),
            ..Profile::synthetic_example()
        };
        let mut quick = full.clone();
        quick.provenance.as_mut().unwrap().quick = true;
        let now = full.context.clone();
        assert!(
            !quick_may_replace(&full, &quick, &now),
            "a fresh, quiet full one stays"
        );
        assert!(
            quick_may_replace(&full, &full, &now),
            "a full one replaces anything"
        );
        assert!(
            quick_may_replace(&quick, &quick, &now),
            "a quick one replaces a quick one"
        );
        let mut loaded = full.clone();
        loaded.provenance.as_mut().unwrap().steal_pct = 30.0;
        assert!(quick_may_replace(&loaded, &quick, &now));
        let old = Profile {
            measured_unix_s: 0,
            ..full.clone()
        };
        assert!(quick_may_replace(&old, &quick, &now), "a stale one goes");
        let unknown = Profile {
            provenance: None,
            ..full
        };
        assert!(quick_may_replace(&unknown, &quick, &now));
    }

    #[test]
    fn the_table_says_what_the_profile_was_measured_on_and_its_spread_or_that_both_are_unknown() {
        let p = Profile::synthetic_example();
        let t = table(&p);
        assert!(
            t.contains("measured on synthetic (512.00 MiB), full, in 20.0 s; load 0.1, other processes 1% of the CPUs, steal 0%"),
            "{t}"
        );
        assert!(
            t.contains("spread over 3 tries (best − worst): per-operation 10%, memory 10%, device 10%, readahead 10%"),
            "{t}"
        );
        let old = Profile {
            spread: None,
            provenance: None,
            ..p
        };
        let t = table(&old);
        assert!(
            t.contains("measured on an unknown file under unknown load"),
            "{t}"
        );
        assert!(t.contains("its error is unknown"), "{t}");
    }

    #[test]
    fn the_spread_of_tries_is_best_minus_worst_over_best() {
        assert_eq!(best_and_spread(&[80.0, 100.0, 90.0]), (100.0, 20.0));
        assert_eq!(best_and_spread(&[5.0]), (5.0, 0.0));
        assert_eq!(best_and_spread(&[]), (0.0, 0.0));
        assert_eq!(best_and_spread(&[0.0, 0.0]), (0.0, 0.0));
    }

    #[test]
    fn the_load_of_other_processes_is_the_machines_busy_time_less_our_own() {
        let a = parse_proc_stat("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n").unwrap();
        assert_eq!(
            a,
            CpuTicks {
                busy: 150,
                steal: 40,
                total: 1000
            }
        );
        // 1000 ticks later: 600 busy (of which our process used 2 s at 100 Hz), 100 stolen.
        let b = CpuTicks {
            busy: 750,
            steal: 140,
            total: 2000,
        };
        let (others, steal) = others_and_steal_pct(a, b, 100.0, 2.0);
        assert!((others - 40.0).abs() < 1e-9, "{others}");
        assert!((steal - 10.0).abs() < 1e-9, "{steal}");
        assert_eq!(others_and_steal_pct(a, a, 100.0, 0.0), (0.0, 0.0));
        assert_eq!(parse_proc_stat("intr 1 2"), None);
        assert_eq!(parse_load_avg_1m("2.53 1.90 1.20 3/512 999\n"), Some(2.53));
    }

    #[test]
    fn thread_counts_cover_every_small_count_and_the_core_count() {
        assert_eq!(thread_counts(1), vec![1]);
        assert_eq!(thread_counts(2), vec![1, 2]);
        let big = thread_counts(96);
        assert_eq!(&big[..3], &[1, 2, 3]);
        assert!(big.contains(&16) && big.contains(&64) && big.ends_with(&[96]));
    }

    #[test]
    fn the_memory_ceiling_is_positive_and_counts_every_thread() {
        let src = vec![7u8; 4 << 20];
        let (m, spread_pct) = memory_ceiling(&src, 2, Duration::from_millis(20));
        assert!((0.0..=100.0).contains(&spread_pct), "{spread_pct}");
        assert_eq!(m.threads, 2);
        assert!(m.copy_mib_s > 10.0 && m.xor_mib_s > 10.0, "{m:?}");
        assert!(
            m.read_levels.is_empty(),
            "levels are measured through the page cache"
        );
    }
}
