//! Deterministic pseudo-random file contents for `run -w`.
//!
//! Byte `o` of a written file is a pure function of `o` and the seed, so any block size, thread
//! split or I/O method writes the same file, and `run -r` with the same arguments reads back the
//! XOR that `run -w` printed. Each 8-byte word is splitmix64 of its index: cheap (a few cycles per
//! word) and without the long runs of zeros that would let a filesystem or device compress it.

/// Default seed of `run -w`.
pub const DEFAULT_SEED: u64 = 0x6469_736b_7363_6f70; // "diskscop"

#[inline]
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Fills `buf` with the pattern bytes found at absolute file offset `offset`.
pub fn fill(seed: u64, offset: u64, buf: &mut [u8]) {
    let mut pos = 0usize;
    let mut off = offset;
    // Leading bytes up to the next 8-byte boundary.
    while pos < buf.len() && !off.is_multiple_of(8) {
        buf[pos] = byte_at(seed, off);
        pos += 1;
        off += 1;
    }
    let mut chunks = buf[pos..].chunks_exact_mut(8);
    let mut word = off / 8;
    for chunk in &mut chunks {
        chunk.copy_from_slice(&splitmix64(seed ^ word).to_le_bytes());
        word += 1;
    }
    let tail = chunks.into_remainder();
    let base = word * 8;
    for (i, b) in tail.iter_mut().enumerate() {
        *b = byte_at(seed, base + i as u64);
    }
}

/// The pattern byte at absolute offset `offset`.
#[inline]
pub fn byte_at(seed: u64, offset: u64) -> u8 {
    (splitmix64(seed ^ (offset / 8)) >> (8 * (offset % 8))) as u8
}

/// A small, fast PRNG for random offsets and shuffles (xorshift64*), seeded per worker.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(splitmix64(seed) | 1)
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0), by multiply-shift (bias negligible for our n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_split_fills_the_same_bytes() {
        let mut whole = vec![0u8; 1000];
        fill(7, 0, &mut whole);
        for cut in [1usize, 3, 8, 13, 500, 999] {
            let mut a = vec![0u8; cut];
            let mut b = vec![0u8; 1000 - cut];
            fill(7, 0, &mut a);
            fill(7, cut as u64, &mut b);
            assert_eq!([a, b].concat(), whole, "cut {cut}");
        }
        for (i, b) in whole.iter().enumerate() {
            assert_eq!(*b, byte_at(7, i as u64));
        }
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = Rng::new(1);
        for n in [1u64, 2, 7, 1000] {
            for _ in 0..1000 {
                assert!(r.below(n) < n);
            }
        }
    }
}
