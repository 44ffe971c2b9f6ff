//! Where an O_DIRECT buffer's pages lie in physical memory, read back from
//! `/proc/self/pagemap` before the run starts.
//!
//! Why: an O_DIRECT read goes from the device straight into the buffer, and the block layer
//! makes one request from at most `max_segments` physically contiguous pieces (254 on a virtio
//! disk). A 1 MiB slot of 4 KiB pages is anything from one piece to 256, depending on the order
//! in which the kernel's page allocator handed the pages out. That order is luck: memory freed
//! just before (a previous run's buffers, an eviction) comes back in reverse, one page a piece.
//! On the lab VM (2026-11-25) the same cold 1 MiB QD32 O_DIRECT read with plain buffers ran at
//! 697 MiB/s with every slot in 256 pieces (every read split in two requests) and at 2000–2760
//! MiB/s with 31–46 pieces a slot, in fio and in diskscope alike: the 2× spread between runs of
//! both tools was the buffers' layout, not the tools. So the layout is measured and judged
//! (`explain::verdict`'s `split_requests`), and `--buffers thp` or `hugetlb` is the way to a
//! repeatable figure.
//!
//! The physical frame numbers are only visible with `CAP_SYS_ADMIN`; without it the kernel
//! reports them as zero and the layout is unknown (`None`), never guessed.

use std::os::unix::fs::FileExt;

const PAGE: usize = 4096;
/// Bit 63 of a pagemap entry: the page is present in RAM.
const PRESENT: u64 = 1 << 63;
/// Bits 0–54: the page frame number.
const PFN_MASK: u64 = (1 << 55) - 1;

/// The physical layout of a run's I/O slots: how many physically contiguous pieces each slot
/// is made of, in slot order (every worker's slots, one after the other).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    /// Bytes per slot.
    pub slot_bytes: usize,
    /// Pieces per slot.
    pub pieces: Vec<u32>,
}

impl Layout {
    /// The layout of `slots` (each a slice of this process's memory, its pages touched), or
    /// `None` when the page frames cannot be read (no `CAP_SYS_ADMIN`, a page not present).
    pub fn of<'a>(slots: impl IntoIterator<Item = &'a [u8]>) -> Option<Layout> {
        let pagemap = std::fs::File::open("/proc/self/pagemap").ok()?;
        let mut out = Layout::default();
        for slot in slots {
            if slot.is_empty() {
                continue;
            }
            let start = slot.as_ptr() as usize;
            let first = start / PAGE;
            let last = (start + slot.len() - 1) / PAGE;
            let mut raw = vec![0u8; (last - first + 1) * 8];
            pagemap.read_exact_at(&mut raw, first as u64 * 8).ok()?;
            let frames = raw
                .chunks_exact(8)
                .map(|e| {
                    let e = u64::from_ne_bytes(e.try_into().expect("8-byte chunk"));
                    (e & PRESENT != 0 && e & PFN_MASK != 0).then_some(e & PFN_MASK)
                })
                .collect::<Option<Vec<u64>>>()?;
            out.slot_bytes = slot.len();
            out.pieces.push(pieces(&frames));
        }
        (!out.pieces.is_empty()).then_some(out)
    }

    /// Appends another worker's slots.
    pub fn extend(&mut self, other: Layout) {
        self.slot_bytes = self.slot_bytes.max(other.slot_bytes);
        self.pieces.extend(other.pieces);
    }

    /// Mean pieces per slot.
    pub fn mean(&self) -> f64 {
        self.pieces.iter().map(|&p| p as f64).sum::<f64>() / self.pieces.len().max(1) as f64
    }

    /// Fewest and most pieces of a slot.
    pub fn range(&self) -> (u32, u32) {
        let min = self.pieces.iter().copied().min().unwrap_or(0);
        let max = self.pieces.iter().copied().max().unwrap_or(0);
        (min, max)
    }

    /// Slots in more pieces than `max_segments`: a read into one of them is more than one
    /// device request.
    pub fn split(&self, max_segments: u64) -> usize {
        self.pieces
            .iter()
            .filter(|&&p| u64::from(p) > max_segments)
            .count()
    }

    /// `1M slots in 31–256 physical pieces (mean 75.6)`, for notes.
    pub fn describe(&self) -> String {
        let (min, max) = self.range();
        let size = crate::size::format_size(self.slot_bytes as u64);
        if min == max {
            let s = if max == 1 { "" } else { "s" };
            format!("{size} slots in {max} physical piece{s} each")
        } else {
            format!(
                "{size} slots in {min}–{max} physical pieces (mean {:.1})",
                self.mean()
            )
        }
    }
}

/// Runs of consecutive page frames in `frames` (one piece per run).
fn pieces(frames: &[u64]) -> u32 {
    let breaks = frames.windows(2).filter(|w| w[1] != w[0] + 1).count();
    (breaks + usize::from(!frames.is_empty())) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_consecutive_frames_is_one_piece_and_every_break_starts_another() {
        assert_eq!(pieces(&[]), 0);
        assert_eq!(pieces(&[7]), 1);
        assert_eq!(pieces(&[10, 11, 12, 13]), 1);
        // Handed out in reverse, as memory freed just before comes back: every page a piece.
        assert_eq!(pieces(&[13, 12, 11, 10]), 4);
        assert_eq!(pieces(&[10, 11, 40, 41, 42, 5]), 3);
    }

    #[test]
    fn split_counts_the_slots_above_the_devices_segment_limit_and_describe_says_the_range() {
        let l = Layout {
            slot_bytes: 1 << 20,
            pieces: vec![31, 256, 254, 255],
        };
        assert_eq!(l.split(254), 2);
        assert_eq!(l.range(), (31, 256));
        assert!((l.mean() - 199.0).abs() < 1e-9);
        assert_eq!(
            l.describe(),
            "1M slots in 31–256 physical pieces (mean 199.0)"
        );
        let one = Layout {
            slot_bytes: 1 << 20,
            pieces: vec![1, 1],
        };
        assert_eq!(one.describe(), "1M slots in 1 physical piece each");
    }

    #[test]
    fn the_layout_of_touched_pages_is_read_back_or_unknown_without_the_privilege() {
        let mut buf = super::super::AlignedBuf::plain(4 << 20).unwrap();
        buf[0] = 1;
        let slots: Vec<&[u8]> = buf.chunks(1 << 20).collect();
        match Layout::of(slots) {
            // Root (CI): every 1 MiB slot of 4 KiB pages is 1 to 256 pieces.
            Some(l) => {
                assert_eq!(l.pieces.len(), 4);
                assert!(l.pieces.iter().all(|&p| (1..=256).contains(&p)), "{l:?}");
            }
            // Without CAP_SYS_ADMIN the frames read as zero: unknown, not a guess.
            None => assert!(!rustix::process::geteuid().is_root()),
        }
    }
}
