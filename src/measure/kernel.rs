//! The kernel view ([`crate::kernel`]) on a run's timeline: its counters read once per interval
//! boundary by the thread that collects the snapshots (as the device's counters are), kept as
//! the differences between consecutive reads (sparse: a histogram's few non-empty buckets), and
//! cut into the timeline's rows and the run's total when it finishes ([`KernelSection`]).
//!
//! A view that could not start leaves its reason in the section (`absent`), once; every other
//! figure of the run is unchanged.

use crate::kernel::{Counts, FilterBy, Hist, KernelView, Summary, Word};
use serde::Serialize;
use std::sync::Arc;

/// A histogram's non-empty buckets: (bucket, count).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Sparse(Vec<(u16, u64)>);

impl Sparse {
    fn of(h: &Hist) -> Sparse {
        Sparse(
            h.buckets
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| (i as u16, *n))
                .collect(),
        )
    }

    fn add_to(&self, h: &mut Hist) {
        for (i, n) in &self.0 {
            h.buckets[*i as usize] += n;
        }
    }
}

/// What was counted between two reads.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Delta {
    /// The boundaries it spans: from `from_k × interval` to `to_k × interval` (`u64::MAX`: the
    /// run's end).
    from_k: u64,
    to_k: u64,
    queue: Sparse,
    device: Sparse,
    words: [u64; Word::ALL.len()],
}

/// A running view and its reads so far.
#[derive(Debug, Clone)]
pub struct KernelTrack {
    view: Option<Arc<KernelView>>,
    filter: FilterBy,
    device: Option<String>,
    absent: Option<String>,
    last: Counts,
    last_k: u64,
    deltas: Vec<Delta>,
    /// The first error reading the counters (the view is then read no more).
    read_error: Option<String>,
    /// The counters at the last live read ([`KernelTrack::read_live`]; at first, the start).
    live: Counts,
}

/// The run's end, as a boundary.
const END: u64 = u64::MAX;

impl KernelTrack {
    /// A track of `view`, which started counting just now (boundary 0).
    pub fn new(view: KernelView) -> KernelTrack {
        let filter = view.filter().by;
        let device = view.filter().device.as_ref().map(|d| d.disk_name.clone());
        let last = view.read().unwrap_or_default();
        KernelTrack {
            view: Some(Arc::new(view)),
            filter,
            device,
            absent: None,
            live: last.clone(),
            last,
            last_k: 0,
            deltas: Vec::new(),
            read_error: None,
        }
    }

    /// A track of a view that could not start: its section says why, once.
    pub fn absent(filter: FilterBy, why: String) -> KernelTrack {
        KernelTrack {
            view: None,
            filter,
            device: None,
            absent: Some(why),
            last: Counts::default(),
            last_k: 0,
            deltas: Vec::new(),
            read_error: None,
            live: Counts::default(),
        }
    }

    /// What the view counted since the last live read (the first: since it started), for a
    /// display that reads it as the run goes and keeps nothing (the explorer's kernel panel,
    /// about once a second, off the UI thread); independent of [`KernelTrack::sample`]'s reads.
    /// `Err`: why there is nothing to show (the view is absent, or reading it failed).
    pub fn read_live(&mut self) -> Result<Counts, String> {
        if let Some(why) = &self.absent {
            return Err(why.clone());
        }
        let Some(view) = &self.view else {
            return Err("the view did not start".into());
        };
        match view.read() {
            Ok(now) => {
                let d = now.since(&self.live);
                self.live = now;
                Ok(d)
            }
            Err(e) => Err(format!("reading the counters failed: {e}")),
        }
    }

    /// Why the view is absent, when it is.
    pub fn absent_reason(&self) -> Option<&str> {
        self.absent.as_deref()
    }

    /// Reads the counters at boundary `k` (`u64::MAX`: the run's end).
    pub fn sample(&mut self, k: u64) {
        let Some(view) = &self.view else { return };
        if self.read_error.is_some() || k <= self.last_k {
            return;
        }
        match view.read() {
            Ok(now) => {
                let d = now.since(&self.last);
                self.deltas.push(Delta {
                    from_k: self.last_k,
                    to_k: k,
                    queue: Sparse::of(&d.queue),
                    device: Sparse::of(&d.device),
                    words: d.words,
                });
                self.last = now;
                self.last_k = k;
            }
            Err(e) => self.read_error = Some(e.to_string()),
        }
    }

    /// The counts from boundary `from` to `to` (`u64::MAX`: the end), when the reads cover
    /// that span exactly; `None` when a read was missed inside it.
    fn span(&self, from: u64, to: u64) -> Option<Counts> {
        let inside: Vec<&Delta> = self
            .deltas
            .iter()
            .filter(|d| d.from_k >= from && d.to_k <= to)
            .collect();
        let contiguous = inside.windows(2).all(|w| w[0].to_k == w[1].from_k);
        let (first, last) = (inside.first()?, inside.last()?);
        if first.from_k != from || last.to_k != to || !contiguous {
            return None;
        }
        let mut c = Counts::default();
        for d in inside {
            d.queue.add_to(&mut c.queue);
            d.device.add_to(&mut c.device);
            for (a, b) in c.words.iter_mut().zip(&d.words) {
                *a += b;
            }
        }
        Some(c)
    }

    /// Row `i`'s figures, of `rows` rows (the last one runs to the end).
    pub fn row(&self, i: u64, rows: u64) -> Option<Summary> {
        self.view.as_ref()?;
        let to = if i + 1 >= rows { END } else { i + 1 };
        self.span(i, to).map(|c| c.summary())
    }

    /// The section of the finished timeline: reads the end (once) and sums the run.
    pub fn finish(&mut self) -> KernelSection {
        self.sample(END);
        let total = self
            .view
            .as_ref()
            .and_then(|_| self.span(0, END))
            .unwrap_or_default();
        let missed_events = self.view.as_ref().map_or(0, |v| v.missed_events());
        let left = self
            .view
            .as_ref()
            .and_then(|v| v.in_flight().ok())
            .unwrap_or_default();
        let left_issued = left.iter().filter(|e| e.3 != 0).count() as u64;
        let stats = self
            .view
            .as_ref()
            .map(|v| v.program_stats())
            .unwrap_or_default();
        KernelSection {
            filter: self.filter,
            device: self.device.clone(),
            absent: self.absent.clone().or_else(|| {
                self.read_error
                    .as_ref()
                    .map(|e| format!("reading the counters failed: {e}"))
            }),
            total: self.view.as_ref().map(|_| total.summary()),
            bios: total.get(Word::Bios),
            requeues: total.get(Word::Requeues),
            errors: total.get(Word::Errors),
            unissued: total.get(Word::Unissued),
            collisions: total.get(Word::Collisions),
            evictions: total.get(Word::Evictions),
            missed_events,
            left_issued,
            left_unissued: left.len() as u64 - left_issued,
            attach: self.view.as_ref().map(|v| v.attach()),
            program_run_ns: stats.iter().map(|(_, s)| s.run_time_ns).sum(),
            program_runs: stats.iter().map(|(_, s)| s.run_cnt).sum(),
            programs: stats
                .iter()
                .filter(|(_, s)| s.run_cnt > 0)
                .map(|(e, s)| (*e, s.run_cnt, s.run_time_ns))
                .collect(),
            app_p50_us: None,
            software_p50_us: None,
            facts: Vec::new(),
        }
    }
}

/// The kernel view of a finished run (`Timeline::kernel`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelSection {
    /// Whose requests: `process` (this process's threads) or `device` (everyone's on the disk).
    pub filter: FilterBy,
    /// The disk the requests went to (kernel name), when the file has one.
    pub device: Option<String>,
    /// Why there is no view: every figure below is then empty or zero.
    pub absent: Option<String>,
    /// The run's figures.
    pub total: Option<Summary>,
    /// Bios that entered the block layer.
    pub bios: u64,
    /// Issues of a request the driver had given back.
    pub requeues: u64,
    /// Requests completed with an error.
    pub errors: u64,
    /// Requests completed whose issue was not seen.
    pub unissued: u64,
    /// Bios that started where a request of the run was still recorded.
    pub collisions: u64,
    /// Records that gave way to a new bio's because both places of its key were taken (by
    /// requests in flight: they lose their times; or by stale records).
    pub evictions: u64,
    /// Tracepoint events the kernel did not run the view's programs for (another BPF program
    /// was running on that CPU when an interrupt's event came): a completion missed leaves its
    /// request counted (at issue) without times.
    pub missed_events: u64,
    /// Requests of the run still recorded in flight when it ended, issued: completions the
    /// view did not see (all of the run's I/O had completed).
    pub left_issued: u64,
    /// Bios still recorded, never issued as a request of their own (merged in a way no
    /// tracepoint showed, or sent to another device).
    pub left_unissued: u64,
    /// How the programs were attached (`raw-tracepoint`, `perf-tracepoint`).
    pub attach: Option<crate::kernel::Attach>,
    /// Time the kernel spent in the view's programs and their runs, every event of the
    /// machine's (others' I/O too), counted only while `kernel.bpf_stats_enabled` is 1 (else
    /// 0): the view's own cost (`bench/kernel-cost.sh`).
    pub program_run_ns: u64,
    pub program_runs: u64,
    /// Each program's share of those: (event, runs, ns); empty while the sysctl is 0.
    pub programs: Vec<(&'static str, u64, u64)>,
    /// The run's own latency p50, µs, and what is left of it above the block layer's and the
    /// device's p50s (the software's share: system call, copy, wake-up), µs.
    pub app_p50_us: Option<f64>,
    pub software_p50_us: Option<f64>,
    /// What the view shows about the run, in words.
    pub facts: Vec<KernelFact>,
}

/// Queueing "dominates" when the block layer's p50 exceeds the device's and is at least this
/// long (below it, both are the submission path's few microseconds).
pub const QUEUE_DOMINATES_MIN_US: f64 = 20.0;

/// Something the kernel view shows about the run, in words, with a stable code.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelFact {
    /// `page_cache`, `split`, `queue_dominates`.
    pub code: &'static str,
    pub text: String,
}

impl KernelSection {
    /// The section of a view filtered `by` that did not start (no reason: for headers).
    pub fn absent_of(by: FilterBy) -> KernelSection {
        KernelTrack::absent(by, String::new()).finish()
    }

    /// Adds what needs the run's own figures: its operations, bytes and p50 (µs), the
    /// software's share of that p50, and the facts.
    pub fn with_run(mut self, ops: u64, bytes: u64, lat_p50_us: f64) -> KernelSection {
        let Some(t) = self.total else { return self };
        self.app_p50_us = Some(lat_p50_us);
        self.software_p50_us = Some(lat_p50_us - t.queue_p50_us - t.device_p50_us);
        self.facts = facts(&t, self.filter, ops, bytes);
        self
    }

    /// The lines for stderr (none when absent: the run's notes said why, once).
    pub fn lines(&self) -> Vec<String> {
        let Some(t) = &self.total else {
            return Vec::new();
        };
        let whose = match self.filter {
            FilterBy::Process => "the run's requests",
            FilterBy::Device => "every request",
        };
        let on = self.device.as_deref().unwrap_or("its disk");
        if t.requests == 0 {
            let mut out = vec![format!(
                "kernel view ({whose} to {on}): no request reached the device"
            )];
            out.extend(
                self.facts
                    .iter()
                    .map(|f| format!("kernel view: {}", f.text)),
            );
            return out;
        }
        let mut out = vec![format!(
            "kernel view ({whose} to {on}): {} requests, {:.1} KiB each as issued, {} merges, \
             {} splits | block layer p50 {:.1} µs p99 {:.1} µs | device p50 {:.1} µs p99 {:.1} µs",
            t.requests,
            t.issued_mean_bytes / 1024.0,
            t.merges,
            t.splits,
            t.queue_p50_us,
            t.queue_p99_us,
            t.device_p50_us,
            t.device_p99_us
        )];
        if let (Some(app), Some(sw)) = (self.app_p50_us, self.software_p50_us) {
            if t.completed > 0 {
                out.push(format!(
                    "kernel view: of the run's p50 {app:.1} µs, {:.1} µs block layer + {:.1} µs \
                     device; {sw:.1} µs above them is the software's: the system call, the \
                     filesystem and io_uring before the block layer, the copy, the wake-up",
                    t.queue_p50_us, t.device_p50_us
                ));
            }
        }
        if self.missed_events > 0 {
            out.push(format!(
                "kernel view: the kernel skipped {} of the view's program runs (an event came \
                 while the same program ran on that CPU): their requests lack a time or a count",
                self.missed_events
            ));
        }
        if self.left_issued > 0 {
            out.push(format!(
                "kernel view: {} requests were still in flight when the run ended (read-ahead or \
                 write-back the run started) or their completion was not seen: counted, without \
                 times",
                self.left_issued
            ));
        }
        out.extend(
            self.facts
                .iter()
                .map(|f| format!("kernel view: {}", f.text)),
        );
        out
    }
}

/// The facts of a run's totals `t`: its `ops` operations moving `bytes`.
fn facts(t: &Summary, filter: FilterBy, ops: u64, bytes: u64) -> Vec<KernelFact> {
    let mut out = Vec::new();
    let issued_bytes = t.issued_mean_bytes * t.requests as f64;
    if filter == FilterBy::Process && ops > 0 {
        if t.requests == 0 {
            out.push(KernelFact {
                code: "page_cache",
                text: format!(
                    "none of the run's {ops} operations reached the device: the page cache \
                     served them all"
                ),
            });
        } else if bytes > 0 && issued_bytes < 0.9 * bytes as f64 {
            out.push(KernelFact {
                code: "page_cache",
                text: format!(
                    "requests to the device carried {:.0}% of the run's bytes: the rest never \
                     reached it (the page cache served them)",
                    100.0 * issued_bytes / bytes as f64
                ),
            });
        }
    }
    if t.splits > 0 && t.requests > 0 {
        out.push(KernelFact {
            code: "split",
            text: format!(
                "{} bios were split ({:.0} per 100 requests; {:.1} KiB a request as issued): \
                 the block layer cut them at the device's limits, max_sectors_kb or \
                 max_segments, which a buffer in many physical pieces reaches first",
                t.splits,
                100.0 * t.splits as f64 / t.requests as f64,
                t.issued_mean_bytes / 1024.0
            ),
        });
    }
    if t.queue_p50_us > t.device_p50_us && t.queue_p50_us >= QUEUE_DOMINATES_MIN_US {
        out.push(KernelFact {
            code: "queue_dominates",
            text: format!(
                "queueing dominates: a request waited p50 {:.1} µs in the block layer \
                 (scheduler, tags, plug) against {:.1} µs in the device",
                t.queue_p50_us, t.device_p50_us
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(from_k: u64, to_k: u64, issued: u64) -> Delta {
        let mut words = [0; Word::ALL.len()];
        words[Word::Issued as usize] = issued;
        Delta {
            from_k,
            to_k,
            queue: Sparse(vec![(100, issued)]),
            device: Sparse::default(),
            words,
        }
    }

    fn track(deltas: Vec<Delta>) -> KernelTrack {
        let mut t = KernelTrack::absent(FilterBy::Process, String::new());
        t.deltas = deltas;
        t
    }

    #[test]
    fn a_span_is_the_sum_of_the_reads_that_cover_it_exactly() {
        let t = track(vec![delta(0, 1, 5), delta(1, 2, 7), delta(2, END, 1)]);
        assert_eq!(t.span(0, 1).unwrap().get(Word::Issued), 5);
        assert_eq!(t.span(1, END).unwrap().get(Word::Issued), 8);
        assert_eq!(t.span(0, END).unwrap().queue.count(), 13);
        // A read missed at boundary 2: rows 1 and 2 cannot be told apart.
        let gap = track(vec![delta(0, 1, 5), delta(1, 3, 7), delta(3, END, 1)]);
        assert!(gap.span(1, 2).is_none());
        assert_eq!(gap.span(1, 3).unwrap().get(Word::Issued), 7);
    }

    #[test]
    fn an_absent_view_says_why_and_counts_nothing() {
        let mut t = KernelTrack::absent(FilterBy::Device, "needs root".into());
        t.sample(1);
        let s = t.finish();
        assert_eq!(s.absent.as_deref(), Some("needs root"));
        assert_eq!((s.total, s.missed_events), (None, 0));
        assert_eq!(t.row(0, 1), None);
    }
}
