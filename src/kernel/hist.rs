//! The kernel view's counters as the programs keep them and as they are read back: two time
//! histograms (block-layer queue, device) and a few counts, in one array of `u64` words per CPU
//! ([`Word`] names each word, so the program generator and the reader use one layout).
//!
//! A histogram bucket is an octave of nanoseconds cut into [`SUB_BUCKETS`] equal parts (a
//! bucket is at most 1/16 of its lower bound wide, 6.25%), and the first 32 nanoseconds one
//! bucket each: [`bucket_of`] is the mapping, written once here and once in eBPF
//! (`prog::emit_bucket`), and tested against each other. 592 buckets reach 2^40 ns (18
//! minutes); longer times land in the last. Sixteen rather than eight an octave: a median read
//! inside a bucket can be off by up to its width, and at QD1 the device's times crowd into one
//! or two buckets (eight gave +7-9% against bpftrace's exact median on 4K reads).

use serde::Serialize;

/// Sub-buckets per octave (a power of two).
pub const SUB_BUCKETS: u64 = 16;
/// log2 of [`SUB_BUCKETS`].
pub const SUB_BITS: u64 = 4;
/// Octaves counted before the last bucket takes everything above.
pub const TOP_OCTAVE: u64 = 39;
/// Buckets in one histogram.
pub const BUCKETS: usize = ((TOP_OCTAVE + 1 - SUB_BITS + 1) * SUB_BUCKETS) as usize;

/// The bucket of a time of `v` ns.
pub fn bucket_of(v: u64) -> usize {
    if v < 2 * SUB_BUCKETS {
        return v as usize;
    }
    let k = 63 - u64::from(v.leading_zeros());
    if k > TOP_OCTAVE {
        return BUCKETS - 1;
    }
    let sub = (v >> (k - SUB_BITS)) & (SUB_BUCKETS - 1);
    ((k - SUB_BITS + 1) * SUB_BUCKETS + sub) as usize
}

/// The times bucket `i` holds: `lo <= v < hi`, ns.
pub fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < 2 * SUB_BUCKETS {
        return (i, i + 1);
    }
    let k = i / SUB_BUCKETS + SUB_BITS - 1;
    let sub = i % SUB_BUCKETS;
    let width = 1u64 << (k - SUB_BITS);
    let lo = (SUB_BUCKETS + sub) << (k - SUB_BITS);
    (lo, lo + width)
}

/// The counters after the two histograms, in the order of their words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    /// Requests completed (each had its queue and device times recorded).
    Requests,
    /// Requests issued to the driver (the first time).
    Issued,
    /// Bytes of the issued requests, as the driver got them.
    IssuedBytes,
    /// Sum of the queue times of the completed requests, ns (for an exact mean).
    QueueSumNs,
    /// Sum of the device times, ns.
    DeviceSumNs,
    /// Bios that entered the block layer (the run's, by the filter).
    Bios,
    /// Bios merged into a request already there, and requests merged into another.
    Merges,
    /// Bios split (each split makes one more request).
    Splits,
    /// Requests issued again after the driver gave them back.
    Requeues,
    /// Requests completed with an error.
    Errors,
    /// Requests that completed without their issue being seen.
    Unissued,
    /// A bio started where a request of the run was still recorded (same device and sector):
    /// the older record was replaced.
    Collisions,
    /// A bio's record took the place of another request's: both places its key hashes to
    /// were taken (by requests in flight, or stale ones whose end was never seen).
    Evictions,
}

impl Word {
    pub const ALL: [Word; 13] = [
        Word::Requests,
        Word::Issued,
        Word::IssuedBytes,
        Word::QueueSumNs,
        Word::DeviceSumNs,
        Word::Bios,
        Word::Merges,
        Word::Splits,
        Word::Requeues,
        Word::Errors,
        Word::Unissued,
        Word::Collisions,
        Word::Evictions,
    ];

    /// Index of this counter's word in the per-CPU value.
    pub fn index(self) -> usize {
        2 * BUCKETS + self as usize
    }
}

/// Index of the queue histogram's first word and of the device histogram's.
pub const QUEUE_BASE: usize = 0;
pub const DEVICE_BASE: usize = BUCKETS;
/// Words in the per-CPU value.
pub const WORDS: usize = 2 * BUCKETS + Word::ALL.len();

/// A time histogram read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hist {
    pub buckets: Vec<u64>,
}

impl Default for Hist {
    fn default() -> Hist {
        Hist {
            buckets: vec![0; BUCKETS],
        }
    }
}

impl Hist {
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The time at quantile `q` (0..=1), ns, interpolated linearly inside its bucket; `None`
    /// when empty.
    pub fn quantile_ns(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total == 0 {
            return None;
        }
        let rank = (q.clamp(0.0, 1.0) * total as f64).max(0.5);
        let mut below = 0u64;
        for (i, &n) in self.buckets.iter().enumerate() {
            if n == 0 {
                continue;
            }
            if (below + n) as f64 >= rank {
                let (lo, hi) = bucket_range(i);
                let into = (rank - below as f64) / n as f64;
                return Some(lo as f64 + into * (hi - lo) as f64);
            }
            below += n;
        }
        let last = self.buckets.iter().rposition(|n| *n > 0)?;
        Some(bucket_range(last).1 as f64)
    }

    /// `self - earlier`, bucket by bucket (counters only grow; a smaller one reads as 0).
    pub fn since(&self, earlier: &Hist) -> Hist {
        Hist {
            buckets: self
                .buckets
                .iter()
                .zip(&earlier.buckets)
                .map(|(a, b)| a.saturating_sub(*b))
                .collect(),
        }
    }

    pub fn add(&mut self, other: &Hist) {
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
    }
}

/// Everything the programs counted, summed over the CPUs: since the view started, or (after
/// [`Counts::since`]) over an interval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub queue: Hist,
    pub device: Hist,
    /// Each [`Word`]'s value, in [`Word::ALL`]'s order.
    pub words: [u64; Word::ALL.len()],
}

impl Counts {
    /// Sums per-CPU values: `raw` holds `cpus` slots of [`WORDS`] native-endian `u64`s.
    pub fn from_per_cpu(raw: &[u8], cpus: usize) -> Counts {
        let mut sum = vec![0u64; WORDS];
        for cpu in raw.chunks_exact(WORDS * 8).take(cpus) {
            for (w, b) in sum.iter_mut().zip(cpu.chunks_exact(8)) {
                *w += u64::from_ne_bytes(b.try_into().expect("8 bytes"));
            }
        }
        Counts::from_words(&sum)
    }

    fn from_words(w: &[u64]) -> Counts {
        let mut words = [0u64; Word::ALL.len()];
        for (i, x) in words.iter_mut().enumerate() {
            *x = w[2 * BUCKETS + i];
        }
        Counts {
            queue: Hist {
                buckets: w[QUEUE_BASE..QUEUE_BASE + BUCKETS].to_vec(),
            },
            device: Hist {
                buckets: w[DEVICE_BASE..DEVICE_BASE + BUCKETS].to_vec(),
            },
            words,
        }
    }

    pub fn get(&self, w: Word) -> u64 {
        self.words[w as usize]
    }

    /// What was counted between `earlier` and `self`.
    pub fn since(&self, earlier: &Counts) -> Counts {
        let mut words = self.words;
        for (a, b) in words.iter_mut().zip(&earlier.words) {
            *a = a.saturating_sub(*b);
        }
        Counts {
            queue: self.queue.since(&earlier.queue),
            device: self.device.since(&earlier.device),
            words,
        }
    }

    pub fn add(&mut self, other: &Counts) {
        self.queue.add(&other.queue);
        self.device.add(&other.device);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a += b;
        }
    }

    /// The figures a timeline row and a result show.
    pub fn summary(&self) -> Summary {
        let us = |h: &Hist, q: f64| h.quantile_ns(q).map_or(f64::NAN, |ns| ns / 1e3);
        let mean = |sum: Word, n: Word| match self.get(n) {
            0 => f64::NAN,
            n => self.get(sum) as f64 / n as f64,
        };
        Summary {
            requests: self.get(Word::Issued),
            completed: self.get(Word::Requests),
            queue_p50_us: us(&self.queue, 0.50),
            queue_p99_us: us(&self.queue, 0.99),
            queue_mean_us: mean(Word::QueueSumNs, Word::Requests) / 1e3,
            device_p50_us: us(&self.device, 0.50),
            device_p99_us: us(&self.device, 0.99),
            device_mean_us: mean(Word::DeviceSumNs, Word::Requests) / 1e3,
            issued_mean_bytes: mean(Word::IssuedBytes, Word::Issued),
            merges: self.get(Word::Merges),
            splits: self.get(Word::Splits),
        }
    }
}

/// The kernel view's figures over a span (an interval, a run): NaN where the span had no
/// request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Requests issued to the driver (a request the driver gave back and got again counts
    /// once).
    pub requests: u64,
    /// Requests whose completion was seen: the times below are theirs. Fewer than `requests`
    /// by those still in flight at the span's end and those whose completion the view missed.
    pub completed: u64,
    /// Time from the bio entering the block layer to its request's issue to the driver, µs.
    pub queue_p50_us: f64,
    pub queue_p99_us: f64,
    pub queue_mean_us: f64,
    /// Time from issue to completion, µs.
    pub device_p50_us: f64,
    pub device_p99_us: f64,
    pub device_mean_us: f64,
    /// Bytes per request as issued to the driver.
    pub issued_mean_bytes: f64,
    pub merges: u64,
    pub splits: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_time_once_in_order() {
        assert_eq!(BUCKETS, 592);
        let mut prev_hi = 0;
        for i in 0..BUCKETS {
            let (lo, hi) = bucket_range(i);
            assert_eq!(
                lo,
                prev_hi,
                "bucket {i} starts where {} ended",
                i as i64 - 1
            );
            assert!(hi > lo);
            assert_eq!(bucket_of(lo), i, "lo of {i}");
            assert_eq!(bucket_of(hi - 1), i, "hi-1 of {i}");
            // No bucket is wider than a sixteenth of its lower bound (past the 1-ns ones).
            if lo >= 32 {
                assert!((hi - lo) * 16 <= lo, "bucket {i}: {lo}..{hi}");
            }
            prev_hi = hi;
        }
        assert_eq!(prev_hi, 1 << 40);
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_of(1 << 41), BUCKETS - 1);
    }

    #[test]
    fn a_quantile_is_read_inside_its_bucket() {
        let mut h = Hist::default();
        for v in [100_000u64, 100_000, 100_000, 2_000_000] {
            h.buckets[bucket_of(v)] += 1;
        }
        let p50 = h.quantile_ns(0.5).unwrap();
        let (lo, hi) = bucket_range(bucket_of(100_000));
        assert!(p50 >= lo as f64 && p50 < hi as f64, "{p50}");
        let p99 = h.quantile_ns(0.99).unwrap();
        assert!((p99 - 2e6).abs() / 2e6 < 0.125, "{p99}");
        assert_eq!(Hist::default().quantile_ns(0.5), None);
    }

    #[test]
    fn per_cpu_values_add_up_and_an_interval_is_a_difference() {
        let mut raw = vec![0u8; 2 * WORDS * 8];
        let put = |raw: &mut Vec<u8>, cpu: usize, word: usize, v: u64| {
            let at = (cpu * WORDS + word) * 8;
            raw[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        };
        put(&mut raw, 0, Word::Requests.index(), 3);
        put(&mut raw, 1, Word::Requests.index(), 4);
        put(&mut raw, 1, DEVICE_BASE + 100, 7);
        let c = Counts::from_per_cpu(&raw, 2);
        assert_eq!(c.get(Word::Requests), 7);
        assert_eq!(c.device.count(), 7);
        let d = c.since(&Counts::default());
        assert_eq!(d, c);
        assert_eq!(c.since(&c).get(Word::Requests), 0);
        let s = Counts::default().summary();
        assert!(s.device_p50_us.is_nan() && s.issued_mean_bytes.is_nan());
    }
}
