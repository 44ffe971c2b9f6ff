//! One point on every rank at the same moment. Each rank:
//!
//! 1. derives its own spec from the point's ([`rank_spec`]): its file (`{file}.{rank}`) or its
//!    share of the shared file, and does its setup — cache control of its own file (`cold-all`
//!    drops the page cache once per host, on the host's lowest rank, behind an extra barrier),
//!    opening the files, buffers. All of it before the clock starts;
//! 2. passes the checked barrier ([`Fleet::barrier`]): a failed setup anywhere aborts the point
//!    everywhere, with the rank and the reason;
//! 3. runs, polling for rank 0's `Stop` (stonewall: the first rank done stops all; a failed or
//!    silent rank stops all) while sending heartbeats;
//! 4. sends rank 0 its [`RankReport`] and waits for rank 0's `End`.
//!
//! Rank 0 gets every report back; it is the only one that builds rows, prints and writes files.
//! A rank silent for longer than the timeout (killed, host gone) ends the point on rank 0 with
//! an error naming it, and every other rank is told to stop; nobody waits forever.

use super::wire::{Msg, RankReport};
use super::{Fleet, FleetError, Layout};
use crate::config::spec::RunSpec;
use crate::config::{CacheMode, Op, Pattern};
use crate::runner::{self, make_result, FailureCause, Run, RunError, Step};
use std::fs::OpenOptions;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long the run loop waits for a snapshot before looking at the fleet's messages: the
/// latency of a stonewall stop, on top of the message's travel.
const RUN_POLL: Duration = Duration::from_millis(5);

/// `{file}.{rank}`, the file of a rank in the file-per-process layout.
pub fn rank_file(path: &std::path::Path, rank: usize) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(format!(".{rank}"));
    PathBuf::from(s)
}

/// This rank's share of `spec`. File-per-process: the whole point on `{file}.{rank}`. Shared
/// file: sequential points cut the blocks into `size` contiguous, block-aligned ranges (rank r
/// gets blocks `count*r/size .. count*(r+1)/size`, so the ranks together cover exactly what one
/// process would); random points draw from the whole file and split the operation count.
/// `file_size_bytes` is the shared file's size, for reads without a block count.
pub fn rank_spec(
    spec: &RunSpec,
    layout: Layout,
    rank: usize,
    size: usize,
    file_size_bytes: u64,
) -> RunSpec {
    let mut s = spec.clone();
    if spec.setup.pattern == Pattern::Random && spec.setup.op == Op::Read {
        // Each rank its own offsets (the same seed would send every rank to the same blocks in
        // the same order). Not for writes: the seed is also the data, and a test file must keep
        // its pattern.
        s.safety.seed = spec.safety.seed ^ (rank as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    match layout {
        Layout::FilePerProcess => s.target.path = rank_file(&spec.target.path, rank),
        Layout::SharedFile => {
            let bs = spec.setup.block_size_bytes.max(1);
            let (r, n) = (rank as u64, size as u64);
            let blocks = match spec.target.block_count {
                Some(c) => c,
                None if spec.setup.op == Op::Read => file_size_bytes.div_ceil(bs),
                // Time-bounded writes without a count loop over the default span.
                None => runner::DEFAULT_WRITE_SPAN.div_ceil(bs),
            };
            let first = blocks * r / n;
            let last = blocks * (r + 1) / n;
            match spec.setup.pattern {
                Pattern::Sequential => {
                    s.target.range_start_bytes = first * bs;
                    s.target.block_count = Some(last - first);
                }
                Pattern::Random => {
                    s.target.block_count = spec.target.block_count.map(|_| last - first)
                }
            }
            if spec.setup.op == Op::Write {
                // Rank 0 created the file before the barrier; every rank writes into it.
                s.safety.force = true;
                s.safety.overwrite_in_place = true;
            }
        }
    }
    s
}

fn now_unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Creates the shared output file of a write point on rank 0, before anyone opens it:
/// exclusively, or truncated when `--force` was given; an existing file without `--force` is the
/// same error a single `run -w` gives. Returns whether this run created it.
fn create_shared(spec: &RunSpec) -> anyhow::Result<bool> {
    use std::os::unix::fs::OpenOptionsExt;
    let p = crate::text::shown_path(&spec.target.path);
    if spec.safety.overwrite_in_place && spec.target.path.is_file() {
        return Ok(false); // batch mode's own test file: overwritten in place
    }
    let existed = spec.target.path.exists();
    if existed && !spec.safety.force {
        return Err(crate::config::usage(format!(
            "FILE: {p} already exists; pass --force to replace it"
        )));
    }
    let mut o = OpenOptions::new();
    o.write(true).custom_flags(libc::O_NOFOLLOW);
    if spec.safety.force {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    o.open(&spec.target.path)
        .map_err(|e| anyhow::anyhow!("FILE: cannot create {p}: {e}"))?;
    Ok(!existed)
}

/// What a rank knows after a point.
pub struct PointEnd {
    /// Every rank's report, by rank (rank 0 only; empty elsewhere).
    pub reports: Vec<RankReport>,
    /// Files this rank created for the point (a write's output), so a failed write can remove
    /// exactly those.
    pub created: Vec<PathBuf>,
}

/// Runs point `seq` on every rank of `fleet`. `spec` is the point as one process would run it;
/// `file_size_bytes` the size of the (shared) file for reads. Returns the reports (rank 0) or an
/// error every rank agrees on: the point was aborted, and why (which rank).
pub fn run_point(
    fleet: &mut Fleet,
    seq: u64,
    spec: &RunSpec,
    experiment: &str,
    user_stop: &AtomicBool,
) -> Result<PointEnd, (FleetError, Vec<PathBuf>)> {
    let (rank, size, layout) = (fleet.rank(), fleet.size(), fleet.options.layout);
    let shared_size = if spec.setup.op == Op::Read {
        std::fs::metadata(&spec.target.path)
            .map(|m| m.len())
            .unwrap_or(0)
    } else {
        0
    };
    let mut mine = rank_spec(spec, layout, rank, size, shared_size);
    let mut created = Vec::new();
    let fail = |e: FleetError, created: &Vec<PathBuf>| Err((e, created.clone()));

    // Step 0 (only when needed): per-host cache drop, or the shared output file, then a barrier.
    let cold_all = spec.setup.op == Op::Read && spec.setup.cache == CacheMode::ColdAll;
    let shared_write = spec.setup.op == Op::Write && layout == Layout::SharedFile;
    if cold_all || shared_write {
        let mut pre: Result<(), String> = Ok(());
        if cold_all {
            if fleet.is_host_leader() {
                let path = mine.target.path.clone();
                pre = fleet
                    .while_alive(|| crate::cache::prepare(&path, CacheMode::ColdAll, 0))
                    .map_err(|e| format!("{e:#}"));
            }
            // The host's page cache is dropped once; every rank then evicts its own file.
            mine.setup.cache = CacheMode::Cold;
        }
        if shared_write && rank == 0 {
            // The point's own flags decide (`mine` is always force + in place: it writes into
            // the file created here).
            match fleet.while_alive(|| create_shared(spec)) {
                Ok(true) => created.push(mine.target.path.clone()),
                Ok(false) => {}
                Err(e) => pre = Err(format!("{e:#}")),
            }
        }
        if let Err(e) = fleet.barrier(2 * seq, pre) {
            return fail(e, &created);
        }
    }

    // Step 1: this rank's setup, before the clock.
    let existed = mine.target.path.exists();
    let prepared = fleet.while_alive(|| runner::prepare(&mine));
    if mine.setup.op == Op::Write && !existed && mine.target.path.is_file() {
        created.push(mine.target.path.clone());
    }
    let ready = prepared.as_ref().map(|_| ()).map_err(|e| format!("{e:#}"));
    // Step 2: the barrier.
    if let Err(e) = fleet.barrier(2 * seq + 1, ready) {
        return fail(e, &created);
    }
    let prepared = prepared.expect("the barrier passes only when every setup worked");

    // Step 3: run, listening to rank 0.
    let run_stop = Arc::new(AtomicBool::new(false));
    let start_unix_ns = now_unix_ns();
    let mut run = match Run::start_prepared(prepared, experiment, run_stop) {
        Ok(mut r) => {
            r.set_timeline_interval(fleet.options.interval);
            r
        }
        Err(e) => {
            // Workers failed to spawn after the barrier: tell rank 0 like any failure.
            let why = format!("{e:#}");
            let _ = fleet.send_done(seq, Some(why.clone()));
            return fail(FleetError::Aborted(why), &created);
        }
    };
    let mut stopped_by = String::new();
    let mut coord = Coordinator::new(size, fleet.options.stonewall);
    while !matches!(run.poll(RUN_POLL), Step::Ended) {
        if stopped_by.is_empty() && user_stop.load(Ordering::Relaxed) {
            stopped_by = "interrupted".into();
            run.stop();
        }
        let stop = if rank == 0 {
            coord.watch(fleet, seq)
        } else {
            fleet.take_stop(seq)
        };
        match stop {
            Ok(Some(why)) if stopped_by.is_empty() => {
                stopped_by = why;
                run.stop();
            }
            Ok(_) => {}
            Err(e) => {
                run.stop();
                let _ = run.end();
                return fail(e, &created);
            }
        }
    }
    let end_unix_ns = now_unix_ns();
    let ended = run.end();
    let mut result = ended.result();
    match &ended.verdict {
        // The first worker's error is in the record already.
        Ok(()) => {}
        Err(RunError::Failed(f)) if f.cause == FailureCause::Worker => {}
        // The workers' figures stand, but the run's time does not.
        Err(e) => {
            result = make_result(&ended.meta, experiment, &ended.aggregate, Duration::ZERO);
            result.figures.error = match e {
                RunError::Failed(f) => f.message.clone(),
                RunError::Other(e) => format!("{e:#}"),
            };
        }
    }
    // Each rank's row is judged where it ran, from its own facts.
    crate::explain::judge_result(&mut result);
    let agg = ended.aggregate;
    result.identity.host = fleet.host().to_string();
    // `cold-all` ran as a host-wide drop plus `cold` per rank: report what was asked.
    result.setup.cache = spec.setup.cache.into();
    let error = (!result.figures.error.is_empty()).then(|| result.figures.error.clone());
    // The timeline travels beside the row (the row's CSV has no place for it).
    let timeline = result.timeline.take().map(|t| (*t).clone());
    let report = RankReport {
        rank,
        xor_full: agg.xor(),
        result,
        start_unix_ns,
        end_unix_ns,
        stopped_by,
        latency: agg.latency.clone(),
        // A mix's directions apart, for rank 0 to merge each exactly.
        mixed_latency: agg.mixed.as_ref().map(|m| super::wire::MixedLatency {
            read: m.read.latency.clone(),
            write: m.write.latency.clone(),
        }),
        timeline,
    };

    // Step 4: gather.
    let outcome = if rank == 0 {
        coord.finished(fleet, seq, 0, error);
        coord.collect(fleet, seq, report)
    } else {
        fleet
            .report_and_wait(seq, error, report)
            .map(|_| Vec::new())
    };
    match outcome {
        Ok(reports) => Ok(PointEnd { reports, created }),
        Err(e) => fail(e, &created),
    }
}

impl Fleet {
    fn send_done(&mut self, seq: u64, error: Option<String>) -> Result<(), FleetError> {
        if self.rank() == 0 || self.size() == 1 {
            return Ok(());
        }
        self.send(0, &Msg::Done { seq, error })
    }

    /// A non-zero rank's look at its mail during a run: rank 0's stop, or its silence.
    fn take_stop(&mut self, seq: u64) -> Result<Option<String>, FleetError> {
        if let Some((_, Msg::Stop { why, .. })) =
            self.take(|m| matches!(m, Msg::Stop { seq: s, .. } if *s == seq))?
        {
            return Ok(Some(why));
        }
        if let Some((_, Msg::End { abort, lost, .. })) =
            self.take(|m| matches!(m, Msg::End { seq: s, .. } if *s == seq))?
        {
            let why = abort.unwrap_or_else(|| "fleet: rank 0 ended the point early".into());
            return Err(super::abort_error(why, lost));
        }
        if !self.silent(std::iter::once(0)).is_empty() {
            return Err(self.timeout_error(&format!("answer during point {seq}"), vec![0]));
        }
        Ok(None)
    }

    /// A non-zero rank after its run: says it is done, sends its report, and waits for rank 0
    /// to end the point (as long as rank 0 keeps saying it is alive).
    fn report_and_wait(
        &mut self,
        seq: u64,
        error: Option<String>,
        report: RankReport,
    ) -> Result<(), FleetError> {
        self.send_done(seq, error)?;
        self.send(
            0,
            &Msg::Report {
                seq,
                report: Box::new(report),
            },
        )?;
        loop {
            if let Some((_, Msg::End { abort, lost, .. })) =
                self.take(|m| matches!(m, Msg::End { seq: s, .. } if *s == seq))?
            {
                return match abort {
                    None => Ok(()),
                    Some(why) => Err(super::abort_error(why, lost)),
                };
            }
            if !self.silent(std::iter::once(0)).is_empty() {
                return Err(self.timeout_error(&format!("end point {seq}"), vec![0]));
            }
            std::thread::sleep(super::POLL_SLEEP);
        }
    }
}

/// Rank 0's bookkeeping during a point: who is done, whether the stop went out, why.
struct Coordinator {
    done: Vec<bool>,
    stonewall: bool,
    stop_sent: Option<String>,
    /// First failure: (rank, why).
    failure: Option<(usize, String)>,
    /// Rank 0's own stop, waiting to be picked up by its run loop.
    pending_own_stop: Option<String>,
}

impl Coordinator {
    fn new(size: usize, stonewall: bool) -> Self {
        Coordinator {
            done: vec![false; size],
            stonewall,
            stop_sent: None,
            failure: None,
            pending_own_stop: None,
        }
    }

    /// Rank `r` finished its run (failed: why): stonewall or failure stop everyone.
    fn finished(&mut self, fleet: &mut Fleet, seq: u64, r: usize, error: Option<String>) {
        self.done[r] = true;
        let why = match &error {
            Some(e) => {
                let why = format!("rank {r} ({}) failed: {e}", fleet.hosts()[r]);
                self.failure.get_or_insert((r, why.clone()));
                Some(why)
            }
            None if self.stonewall => Some(format!(
                "stonewall: rank {r} ({}) finished first",
                fleet.hosts()[r]
            )),
            None => None,
        };
        if let (Some(why), None) = (why, &self.stop_sent) {
            self.stop_sent = Some(why.clone());
            let _ = fleet.to_all(&Msg::Stop {
                seq,
                why: why.clone(),
            });
            if r != 0 {
                self.pending_own_stop = Some(why);
            }
        }
    }

    /// Reads the ranks' `Done`s; returns a stop for rank 0's own run, or a silent rank's error.
    fn watch(&mut self, fleet: &mut Fleet, seq: u64) -> Result<Option<String>, FleetError> {
        while let Some((from, Msg::Done { error, .. })) =
            fleet.take(|m| matches!(m, Msg::Done { seq: s, .. } if *s == seq))?
        {
            self.finished(fleet, seq, from, error);
        }
        let silent = fleet.silent(0..fleet.size());
        if !silent.is_empty() {
            let e = fleet.timeout_error(&format!("answer during point {seq}"), silent);
            let _ = fleet.to_all(&Msg::End {
                seq,
                abort: Some(e.to_string()),
                lost: true,
            });
            return Err(e);
        }
        Ok(self.pending_own_stop.take())
    }

    /// Gathers every rank's report (rank 0's own is `mine`), then ends the point for everyone.
    fn collect(
        &mut self,
        fleet: &mut Fleet,
        seq: u64,
        mine: RankReport,
    ) -> Result<Vec<RankReport>, FleetError> {
        let size = fleet.size();
        let mut reports: Vec<Option<RankReport>> = (0..size).map(|_| None).collect();
        reports[0] = Some(mine);
        while reports.iter().any(Option::is_none) {
            self.watch(fleet, seq)?;
            while let Some((from, Msg::Report { report, .. })) =
                fleet.take(|m| matches!(m, Msg::Report { seq: s, .. } if *s == seq))?
            {
                reports[from] = Some(*report);
            }
            if reports.iter().any(Option::is_none) {
                std::thread::sleep(super::POLL_SLEEP);
            }
        }
        let abort = self.failure.as_ref().map(|(_, why)| why.clone());
        fleet.to_all(&Msg::End {
            seq,
            abort,
            lost: false,
        })?;
        Ok(reports.into_iter().flatten().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::{FleetOptions, Threads};
    use std::thread;

    /// Runs `f` on `n` thread-ranks of one fleet; each gets its fleet.
    fn on_ranks<T: Send + 'static>(
        n: usize,
        o: FleetOptions,
        f: impl Fn(Fleet) -> T + Send + Sync + Clone + 'static,
    ) -> Vec<T> {
        let hs: Vec<_> = Threads::fleet(n)
            .into_iter()
            .map(|t| {
                let f = f.clone();
                thread::spawn(move || f(Fleet::new(Box::new(t), "h".into(), o).unwrap()))
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    }

    fn write_rank_files(dir: &std::path::Path, sizes: &[usize]) -> PathBuf {
        let base = dir.join("f");
        for (r, len) in sizes.iter().enumerate() {
            let data: Vec<u8> = (0..*len).map(|i| (i * 7 + r) as u8).collect();
            std::fs::write(rank_file(&base, r), data).unwrap();
        }
        base
    }

    fn read_spec(base: &std::path::Path) -> RunSpec {
        let mut s = RunSpec::new(base);
        s.setup.block_size_bytes = 4096;
        s
    }

    #[test]
    fn with_stonewall_the_first_rank_done_stops_the_others_and_each_reports_what_it_did() {
        let dir = tempfile::tempdir().unwrap();
        // Ranks 0 and 1 read 64 KiB, rank 2 reads 64 MiB in 4 KiB blocks: it is still running
        // when the others are done.
        let base = write_rank_files(dir.path(), &[64 << 10, 64 << 10, 64 << 20]);
        let spec = read_spec(&base);
        let o = FleetOptions {
            stonewall: true,
            ..Default::default()
        };
        let got = on_ranks(3, o, move |mut f| {
            run_point(&mut f, 1, &spec, "t", &AtomicBool::new(false))
                .map(|e| e.reports)
                .map_err(|e| e.0.to_string())
        });
        let reports = got[0].as_ref().unwrap();
        assert_eq!(reports.len(), 3);
        let slow = &reports[2];
        assert!(
            slow.stopped_by.starts_with("stonewall: rank"),
            "{}",
            slow.stopped_by
        );
        assert!(
            slow.result.figures.bytes < 64 << 20,
            "{}",
            slow.result.figures.bytes
        );
        assert_eq!(slow.xor_full, None);
        let all = crate::fleet::aggregate::aggregate_row(reports, 3, Layout::FilePerProcess);
        let sum: u64 = reports.iter().map(|r| r.result.figures.bytes).sum();
        assert_eq!(all.figures.bytes, sum);
        assert_eq!(all.fleet.as_ref().map(|f| f.stopped_early), Some(true));
        assert!(got[1].is_ok() && got[2].is_ok());
    }

    #[test]
    fn cold_all_rows_say_cold_all_though_only_the_hosts_first_rank_drops_the_cache() {
        if rustix::process::geteuid().as_raw() != 0 {
            eprintln!("skipped: cold-all needs root (drop_caches)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let base = write_rank_files(dir.path(), &[8192, 8192]);
        let mut spec = read_spec(&base);
        spec.setup.cache = CacheMode::ColdAll;
        let got = on_ranks(2, FleetOptions::default(), move |mut f| {
            run_point(&mut f, 1, &spec, "t", &AtomicBool::new(false))
                .map(|e| e.reports)
                .map_err(|e| e.0.to_string())
        });
        let reports = got[0].as_ref().unwrap();
        for r in reports {
            assert_eq!(r.result.setup.cache, CacheMode::ColdAll);
            assert_eq!(r.result.figures.bytes, 8192);
        }
    }

    #[test]
    fn a_shared_write_onto_an_existing_file_without_force_is_refused_and_the_file_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("shared");
        std::fs::write(&f, b"precious").unwrap();
        let mut spec = RunSpec::new(&f);
        spec.setup.op = Op::Write;
        spec.setup.block_size_bytes = 4096;
        spec.target.block_count = Some(6);
        let o = FleetOptions {
            layout: Layout::SharedFile,
            ..Default::default()
        };
        let got = on_ranks(3, o, move |mut f| {
            run_point(&mut f, 1, &spec, "t", &AtomicBool::new(false))
                .map(|_| ())
                .map_err(|e| e.0.to_string())
        });
        for g in got {
            let e = g.unwrap_err();
            assert!(
                e.contains("already exists; pass --force to replace it"),
                "{e}"
            );
        }
        assert_eq!(std::fs::read(&f).unwrap(), b"precious");
    }

    #[test]
    fn a_rank_whose_file_is_missing_fails_the_point_on_every_rank_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = write_rank_files(dir.path(), &[4096, 4096]);
        let spec = read_spec(&base);
        let got = on_ranks(3, FleetOptions::default(), move |mut f| {
            run_point(&mut f, 1, &spec, "t", &AtomicBool::new(false))
                .map(|_| ())
                .map_err(|e| e.0.to_string())
        });
        for g in got {
            let e = g.unwrap_err();
            assert!(e.starts_with("fleet: rank 2 (h) failed: FILE:"), "{e}");
            assert!(e.contains("f.2 does not exist"), "{e}");
        }
    }

    #[test]
    fn a_rank_that_dies_after_the_barrier_is_named_on_rank_0_within_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let base = write_rank_files(dir.path(), &[1 << 20, 1 << 20, 1 << 20]);
        let spec = read_spec(&base);
        let o = FleetOptions {
            timeout: Duration::from_millis(600),
            ..Default::default()
        };
        let t0 = std::time::Instant::now();
        let got = on_ranks(3, o, move |mut f| {
            if f.rank() == 1 {
                // Sets up, passes the barrier, then vanishes without a word.
                let _ = f.barrier(3, Ok(()));
                return Err((true, "died".to_string()));
            }
            run_point(&mut f, 1, &spec, "t", &AtomicBool::new(false))
                .map(|_| ())
                .map_err(|e| (e.0.is_lost(), e.0.to_string()))
        });
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        let (lost, e) = got[0].clone().unwrap_err();
        assert!(
            e.contains("rank 1 (h) did not answer during point 1"),
            "{e}"
        );
        assert!(lost);
        // Rank 2 is told the point ended, and that the fleet cannot go on.
        assert_eq!(got[2], Err((true, e)));
    }

    fn spec(op: Op, count: Option<u64>) -> RunSpec {
        let mut s = RunSpec::new("/data/f");
        s.setup.op = op;
        s.setup.block_size_bytes = 4096;
        s.target.block_count = count;
        s
    }

    #[test]
    fn file_per_process_gives_each_rank_its_own_file_and_the_whole_point() {
        let s = spec(Op::Read, Some(10));
        let r = rank_spec(&s, Layout::FilePerProcess, 2, 3, 0);
        assert_eq!(r.target.path, PathBuf::from("/data/f.2"));
        assert_eq!(
            (r.target.block_count, r.target.range_start_bytes),
            (Some(10), 0)
        );
    }

    #[test]
    fn shared_file_ranges_are_disjoint_and_cover_what_one_process_would() {
        for n in 1..=7usize {
            for count in [0u64, 1, 5, 10, 100] {
                let s = spec(Op::Read, Some(count));
                let mut next = 0;
                for r in 0..n {
                    let rs = rank_spec(&s, Layout::SharedFile, r, n, 0);
                    assert_eq!(rs.target.path, s.target.path);
                    assert_eq!(
                        rs.target.range_start_bytes, next,
                        "n {n} count {count} rank {r}"
                    );
                    next += rs.target.block_count.unwrap() * 4096;
                }
                assert_eq!(next, count * 4096);
            }
        }
    }

    #[test]
    fn shared_file_reads_without_a_count_split_the_whole_file() {
        let s = spec(Op::Read, None);
        let last = rank_spec(&s, Layout::SharedFile, 2, 3, 10 * 4096 + 100);
        // 11 blocks (the last one partial): rank 2 gets blocks 7..11.
        assert_eq!(last.target.range_start_bytes, 7 * 4096);
        assert_eq!(last.target.block_count, Some(4));
    }

    #[test]
    fn random_reads_draw_different_offsets_on_each_rank_but_writes_keep_the_data_seed() {
        let mut s = spec(Op::Read, Some(10));
        s.setup.pattern = Pattern::Random;
        let seeds: Vec<u64> = (0..3)
            .map(|r| rank_spec(&s, Layout::SharedFile, r, 3, 1 << 20).safety.seed)
            .collect();
        assert_eq!(seeds[0], s.safety.seed);
        assert!(seeds[1] != seeds[0] && seeds[2] != seeds[1]);
        s.setup.op = Op::Write;
        assert_eq!(
            rank_spec(&s, Layout::SharedFile, 2, 3, 0).safety.seed,
            s.safety.seed
        );
    }

    #[test]
    fn shared_file_writes_go_into_the_file_rank_0_created() {
        let s = spec(Op::Write, Some(8));
        let r = rank_spec(&s, Layout::SharedFile, 1, 2, 0);
        assert!(r.safety.force && r.safety.overwrite_in_place);
    }
}
