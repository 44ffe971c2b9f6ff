//! I/O buffers, and which kind of memory backs them.
//!
//! Why it matters: an `O_DIRECT` read goes from the device straight into the buffer, and the
//! kernel builds one device request from as many physically contiguous pieces as the device takes
//! (`max_segments`; 254 on a virtio disk). A 1 MiB buffer made of scattered 4 KiB pages is 256
//! pieces, so each 1 MiB read became a 1016 KiB + 8 KiB pair of requests; a buffer inside one
//! 2 MiB huge page is one piece and one request. So buffers for `O_DIRECT` are asked for in this
//! order, and the kind obtained is reported ([`BufferKind`]):
//!
//! 1. hugetlb pages (`MAP_HUGETLB`, 2 MiB): only if the system already has free ones
//!    (`/proc/sys/vm/nr_hugepages`); diskscope never changes that setting itself;
//! 2. anonymous memory aligned to 2 MiB with `MADV_HUGEPAGE` (transparent huge pages), checked in
//!    `/proc/self/smaps` after it is touched, since the kernel may not find a free huge page;
//! 3. plain page-aligned heap memory.
//!
//! Buffers are zeroed and touched when made, so page faults never land in a timed operation.
//!
//! `DISKSCOPE_IO_MEMORY=pages` (or `thp`) caps the ladder, to compare against scattered pages or
//! to test the fallback; unset (or `hugetlb`) tries every step.

/// Environment variable capping the memory kinds [`AlignedBuf::contiguous`] tries.
pub const IO_MEMORY_ENV: &str = "DISKSCOPE_IO_MEMORY";

/// The most contiguous kind the environment allows.
fn allowed() -> BufferKind {
    static ALLOWED: std::sync::OnceLock<BufferKind> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| match std::env::var(IO_MEMORY_ENV).as_deref() {
        Ok("pages") => BufferKind::Pages,
        Ok("thp") => BufferKind::TransparentHuge,
        _ => BufferKind::HugeTlb,
    })
}

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Page alignment used for every I/O buffer (O_DIRECT needs it; misaligned buffers cost ~30%
/// even without it).
pub const BUF_ALIGN: usize = 4096;

/// Size of a (PMD-level) huge page on x86-64 and arm64 with 4 KiB pages.
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// The memory behind a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum BufferKind {
    /// hugetlb pages (`MAP_HUGETLB`, 2 MiB each): physically contiguous by construction.
    #[serde(rename = "hugetlb")]
    HugeTlb,
    /// Transparent huge pages (`MADV_HUGEPAGE`), confirmed in `/proc/self/smaps`.
    #[serde(rename = "thp")]
    TransparentHuge,
    /// Ordinary 4 KiB pages.
    #[serde(rename = "pages")]
    Pages,
}

impl BufferKind {
    /// Short name, as in verbose output and notes.
    pub fn as_str(self) -> &'static str {
        match self {
            BufferKind::HugeTlb => "hugetlb",
            BufferKind::TransparentHuge => "thp",
            BufferKind::Pages => "pages",
        }
    }

    /// One line for the user: which memory, and what it means for O_DIRECT.
    pub fn describe(self) -> &'static str {
        match self {
            BufferKind::HugeTlb => "hugetlb 2 MiB pages (physically contiguous)",
            BufferKind::TransparentHuge => {
                "transparent huge pages (2 MiB, physically contiguous; no hugetlb pages free)"
            }
            BufferKind::Pages => {
                "4 KiB pages (no huge page available: large O_DIRECT requests may be split)"
            }
        }
    }
}

impl std::fmt::Display for BufferKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

enum Backing {
    Heap(Layout),
    /// An `mmap`ed region of this many bytes starting at the buffer's pointer.
    Map(usize),
}

/// A zeroed, page-aligned buffer that owns its memory (heap or a private anonymous mapping).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    backing: Backing,
    kind: BufferKind,
}

impl AlignedBuf {
    /// A buffer of `len` bytes (at least 1) of ordinary pages, aligned to [`BUF_ALIGN`].
    pub fn new(len: usize) -> Self {
        let cap = len.max(1).next_multiple_of(BUF_ALIGN);
        let layout = Layout::from_size_align(cap, BUF_ALIGN).expect("buffer size fits a Layout");
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf {
            ptr,
            len,
            backing: Backing::Heap(layout),
            kind: BufferKind::Pages,
        }
    }

    /// A buffer of `len` bytes in the most contiguous memory the system offers without changing
    /// its settings: hugetlb, then transparent huge pages, then ordinary pages. Buffers of one
    /// page or less gain nothing from huge pages and are ordinary.
    pub fn contiguous(len: usize) -> Self {
        let allowed = allowed();
        if len <= BUF_ALIGN || allowed == BufferKind::Pages {
            return Self::new(len);
        }
        (allowed == BufferKind::HugeTlb)
            .then(|| Self::hugetlb(len))
            .flatten()
            .or_else(|| Self::transparent_huge(len))
            .unwrap_or_else(|| Self::new(len))
    }

    /// Like [`AlignedBuf::contiguous`] without the hugetlb step: for large buffers (pre-generated
    /// write data) that should not use up the small hugetlb pool the I/O slots need.
    pub fn large(len: usize) -> Self {
        if len <= BUF_ALIGN || allowed() == BufferKind::Pages {
            return Self::new(len);
        }
        Self::transparent_huge(len).unwrap_or_else(|| Self::new(len))
    }

    /// The memory behind this buffer.
    pub fn kind(&self) -> BufferKind {
        self.kind
    }

    /// hugetlb pages, populated now; `None` when the pool has too few free pages.
    pub fn hugetlb(len: usize) -> Option<Self> {
        let cap = len.max(1).next_multiple_of(HUGE_PAGE_BYTES);
        // SAFETY: a fresh private anonymous mapping; no existing memory is touched. MAP_POPULATE
        // faults every page in now, and a private hugetlb mapping reserves its pages at mmap
        // time, so it either fails here or never raises SIGBUS later.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                cap,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        Some(AlignedBuf {
            ptr: NonNull::new(raw.cast())?,
            len,
            backing: Backing::Map(cap),
            kind: BufferKind::HugeTlb,
        })
    }

    /// Anonymous memory aligned to 2 MiB with `MADV_HUGEPAGE`, touched now; `None` when the
    /// kernel gave ordinary pages anyway (THP off, or no free huge page) or mmap failed.
    pub fn transparent_huge(len: usize) -> Option<Self> {
        let cap = len.max(1).next_multiple_of(HUGE_PAGE_BYTES);
        let over = cap + HUGE_PAGE_BYTES;
        // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                over,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            return None;
        }
        let base = raw as usize;
        let start = base.next_multiple_of(HUGE_PAGE_BYTES);
        let head = start - base;
        let tail = over - head - cap;
        // SAFETY: `[base, base + head)` and `[start + cap, start + cap + tail)` lie inside the
        // mapping made above and nothing refers to them; unmapping them leaves `[start, start +
        // cap)`, 2 MiB-aligned. madvise only changes how that range is backed.
        let advised = unsafe {
            if head > 0 {
                libc::munmap(base as *mut libc::c_void, head);
            }
            if tail > 0 {
                libc::munmap((start + cap) as *mut libc::c_void, tail);
            }
            libc::madvise(start as *mut libc::c_void, cap, libc::MADV_HUGEPAGE) == 0
        };
        let buf = AlignedBuf {
            ptr: NonNull::new(start as *mut u8)?,
            len,
            backing: Backing::Map(cap),
            kind: BufferKind::TransparentHuge,
        };
        if !advised {
            return None; // `buf` unmaps the region
        }
        // Touch every page now (one write per 4 KiB), so faults stay out of timed operations and
        // the kernel decides here whether it has huge pages for us.
        // SAFETY: `[start, start + cap)` is our mapping, readable and writable.
        unsafe {
            for off in (0..cap).step_by(BUF_ALIGN) {
                std::ptr::write_volatile((start + off) as *mut u8, 0);
            }
        }
        (huge_bytes_at(start) >= cap.min(HUGE_PAGE_BYTES)).then_some(buf)
    }
}

/// `AnonHugePages` of the mapping that starts at `addr`, in bytes (0 if not found).
fn huge_bytes_at(addr: usize) -> usize {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let head = format!("{addr:x}-");
    let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head));
    lines.next();
    for l in lines {
        if l.split_whitespace()
            .next()
            .is_some_and(|w| !w.ends_with(':'))
        {
            break; // the next mapping's header line
        }
        if let Some(v) = l.strip_prefix("AnonHugePages:") {
            let kib: usize = v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
            return kib * 1024;
        }
    }
    0
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` points to at least `len` initialized (zeroed) bytes we own.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        match self.backing {
            // SAFETY: allocated in `new` with exactly this layout.
            Backing::Heap(layout) => unsafe { dealloc(self.ptr.as_ptr(), layout) },
            // SAFETY: the mapping of `cap` bytes at `ptr` was made by us and is unmapped once.
            Backing::Map(cap) => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), cap);
            },
        }
    }
}

// SAFETY: AlignedBuf owns its memory exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out `&[u8]`.
unsafe impl Sync for AlignedBuf {}

/// `count` equal I/O slots of `slot_bytes` each, carved from one buffer (so one 2 MiB huge page
/// holds two 1 MiB slots instead of each slot wasting half of one).
pub struct SlotBufs {
    arena: AlignedBuf,
    stride: usize,
    slot_bytes: usize,
    count: usize,
}

impl SlotBufs {
    /// Slots of ordinary memory (`contiguous == false`) or of the most contiguous memory offered.
    pub fn new(count: usize, slot_bytes: usize, contiguous: bool) -> Self {
        let stride = slot_bytes.max(1).next_multiple_of(BUF_ALIGN);
        let total = stride * count.max(1);
        let arena = if contiguous {
            AlignedBuf::contiguous(total)
        } else {
            AlignedBuf::new(total)
        };
        SlotBufs {
            arena,
            stride,
            slot_bytes,
            count,
        }
    }

    /// Number of slots.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Bytes per slot.
    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// The memory behind the slots.
    pub fn kind(&self) -> BufferKind {
        self.arena.kind()
    }

    /// Slot `i`, read-only.
    pub fn slot(&self, i: usize) -> &[u8] {
        assert!(i < self.count, "slot {i} of {}", self.count);
        &self.arena[i * self.stride..i * self.stride + self.slot_bytes]
    }

    /// Slot `i`.
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        assert!(i < self.count, "slot {i} of {}", self.count);
        &mut self.arena[i * self.stride..i * self.stride + self.slot_bytes]
    }

    /// The first slot as a buffer of `len` bytes (at most the slot's size): for engines with one
    /// operation in flight.
    pub fn into_single(self, len: usize) -> AlignedBuf {
        let mut a = self.arena;
        a.len = len.min(self.stride);
        a
    }

    /// One `iovec` per slot, for registering them with a ring.
    pub fn iovecs(&mut self) -> Vec<libc::iovec> {
        (0..self.count)
            .map(|i| {
                let s = self.slot_mut(i);
                libc::iovec {
                    iov_base: s.as_mut_ptr().cast(),
                    iov_len: s.len(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_buffers_are_page_aligned() {
        for len in [1usize, 7, 4096, 5000] {
            let b = AlignedBuf::new(len);
            assert_eq!(b.as_ptr() as usize % BUF_ALIGN, 0);
            assert_eq!(b.len(), len);
        }
    }

    #[test]
    fn contiguous_buffers_are_zeroed_writable_and_say_what_they_are() {
        let mut b = AlignedBuf::contiguous(3 << 20);
        assert_eq!(b.len(), 3 << 20);
        assert!(b.iter().all(|&x| x == 0));
        b[(3 << 20) - 1] = 7;
        assert_eq!(b[(3 << 20) - 1], 7);
        if b.kind() != BufferKind::Pages {
            assert_eq!(b.as_ptr() as usize % HUGE_PAGE_BYTES, 0);
        }
        // Without free hugetlb pages the first step declines instead of failing later.
        let free = std::fs::read_to_string("/proc/meminfo")
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with("HugePages_Free:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .unwrap_or(0);
        if free == 0 {
            assert!(AlignedBuf::hugetlb(1 << 20).is_none());
            assert_ne!(b.kind(), BufferKind::HugeTlb);
        }
    }

    #[test]
    fn slots_do_not_overlap() {
        let mut s = SlotBufs::new(3, 5000, true);
        for i in 0..3 {
            s.slot_mut(i).fill(i as u8 + 1);
        }
        for i in 0..3 {
            assert!(s.slot(i).iter().all(|&x| x == i as u8 + 1));
            assert_eq!(s.slot(i).as_ptr() as usize % BUF_ALIGN, 0);
        }
    }
}
