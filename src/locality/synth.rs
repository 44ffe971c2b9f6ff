//! A synthetic access trace with the properties the study saw in its web server's log: a few ids
//! are far more popular than the rest (Zipf popularity), and requests come in bursts that repeat
//! an id or move to a neighbouring one (temporal and spatial locality).
//!
//! Popularity ranks are assigned to ids through a seeded shuffle, so popular ids are scattered over
//! the id space (and so over the directory tree and the packed file) rather than clustered at id 0.
//! Every parameter is printed with the results, so a run can be reproduced and explained.

use crate::pattern::Rng;

/// Parameters of the synthetic trace.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthParams {
    /// Accesses in the trace.
    pub accesses: usize,
    /// Zipf exponent: the popularity of the id of rank `r` (0-based) is `1 / (r + 1)^s`.
    pub zipf_s: f64,
    /// Mean accesses per burst, the first included (geometric lengths).
    pub burst_mean: f64,
    /// Share of the accesses after the first of a burst that repeat the previous id, percent; the
    /// rest go to a neighbour.
    pub repeat_pct: u32,
    /// A neighbour is the previous id plus or minus 1..=span.
    pub neighbour_span: u32,
    pub seed: u64,
}

impl SynthParams {
    /// The defaults: as many accesses as files, Zipf s = 1, bursts of 4, half repeats, neighbours
    /// within 3 ids.
    pub fn default_for(files: u32, seed: u64) -> Self {
        SynthParams {
            accesses: files as usize,
            zipf_s: 1.0,
            burst_mean: 4.0,
            repeat_pct: 50,
            neighbour_span: 3,
            seed,
        }
    }

    /// One line that says how the trace was made.
    pub fn describe(&self, files: u32) -> String {
        format!(
            "synthetic trace: {} accesses over ids 0..{}, Zipf popularity s={} (ranks shuffled \
             with seed {}), bursts of mean {} accesses: {}% repeats, {}% neighbours within ±{}",
            self.accesses,
            files.saturating_sub(1),
            self.zipf_s,
            self.seed,
            self.burst_mean,
            self.repeat_pct,
            100 - self.repeat_pct.min(100),
            self.neighbour_span
        )
    }
}

/// Shuffles `ids` in place (Fisher–Yates) with a seeded generator.
pub fn shuffle(ids: &mut [u32], seed: u64) {
    let mut rng = Rng::new(seed);
    for i in (1..ids.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        ids.swap(i, j);
    }
}

fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Generates the trace: ids `< files`, `p.accesses` long.
pub fn synthetic_trace(files: u32, p: &SynthParams) -> Vec<u32> {
    assert!(files > 0, "a trace needs at least one id");
    let mut by_rank: Vec<u32> = (0..files).collect();
    shuffle(&mut by_rank, p.seed ^ 0x7A1F);
    let mut cdf = Vec::with_capacity(files as usize);
    let mut total = 0.0;
    for r in 0..files {
        total += 1.0 / ((r as f64) + 1.0).powf(p.zipf_s);
        cdf.push(total);
    }
    let mut rng = Rng::new(p.seed);
    let keep_going = 1.0 - 1.0 / p.burst_mean.max(1.0);
    let mut out = Vec::with_capacity(p.accesses);
    while out.len() < p.accesses {
        let u = unit(&mut rng) * total;
        let rank = cdf.partition_point(|&c| c <= u).min(files as usize - 1);
        let mut id = by_rank[rank];
        out.push(id);
        while out.len() < p.accesses && unit(&mut rng) < keep_going {
            if rng.below(100) >= p.repeat_pct as u64 && files > 1 {
                let step = 1 + rng.below(p.neighbour_span.max(1) as u64) as i64;
                let signed = if rng.below(2) == 0 { -step } else { step };
                id = (id as i64 + signed).clamp(0, files as i64 - 1) as u32;
            }
            out.push(id);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_synthetic_trace_is_reproducible_skewed_and_bursty() {
        let p = SynthParams::default_for(1000, 9);
        let a = synthetic_trace(1000, &p);
        assert_eq!(a, synthetic_trace(1000, &p));
        assert_eq!(a.len(), 1000);
        assert!(a.iter().all(|&id| id < 1000));
        let mut distinct = a.clone();
        distinct.sort();
        distinct.dedup();
        assert!(
            distinct.len() < 700,
            "Zipf should repeat ids: {}",
            distinct.len()
        );
        let close = a.windows(2).filter(|w| w[0].abs_diff(w[1]) <= 3).count();
        assert!(
            close > 400,
            "bursts should keep neighbours together: {close}"
        );
        assert_ne!(
            a,
            synthetic_trace(1000, &SynthParams::default_for(1000, 10))
        );
    }

    #[test]
    fn shuffles_are_permutations_that_depend_on_the_seed() {
        let mut a: Vec<u32> = (0..100).collect();
        let mut b = a.clone();
        shuffle(&mut a, 1);
        shuffle(&mut b, 2);
        assert_ne!(a, b);
        a.sort();
        assert_eq!(a, (0..100).collect::<Vec<_>>());
    }
}
