//! I/O buffers, and which kind of memory backs them (`--buffers`, [`Buffers`]).
//!
//! Why it matters, twice over:
//!
//! - an `O_DIRECT` read goes from the device straight into the buffer, and the kernel builds one
//!   device request from as many physically contiguous pieces as the device takes
//!   (`max_segments`; 254 on a virtio disk). A 1 MiB buffer made of scattered 4 KiB pages is 256
//!   pieces, so each 1 MiB read became a 1016 KiB + 8 KiB pair of requests; a buffer inside one
//!   2 MiB huge page is one piece and one request. How scattered plain pages are is the page
//!   allocator's luck, measured before each O_DIRECT run (`layout.rs`);
//! - a read from the page cache is a copy into the buffer, and where the buffer starts matters:
//!   on the AMD EPYC dev VM a 1 MiB copy into a page-aligned buffer ran at 5.6–6.3 GiB/s and into
//!   one 16 bytes past a page boundary (where glibc's `malloc` puts a large block, and so fio's
//!   default `--iomem=malloc`) at 1.4–2.0 GiB/s (docs/accuracy.md).
//!
//! So the backing is a setting, recorded in every result, and `--fio` names the fio memory that
//! matches it. `auto` (the default) is what diskscope always did: for `O_DIRECT` the most
//! contiguous memory offered, in this order, and plain pages otherwise:
//!
//! 1. hugetlb pages (`MAP_HUGETLB`, 2 MiB): only if the system already has free ones
//!    (`/proc/sys/vm/nr_hugepages`); diskscope never changes that setting itself;
//! 2. anonymous memory aligned to 2 MiB with `MADV_HUGEPAGE` (transparent huge pages), checked in
//!    `/proc/self/smaps` after it is touched, since the kernel may not find a free huge page;
//! 3. plain pages.
//!
//! Every buffer is a private anonymous mapping (so failure is an `ENOMEM` error, never an abort
//! in the allocator), zeroed and touched when made, so page faults never land in a timed
//! operation. The kind obtained is reported ([`BufferKind`]).
//!
//! `DISKSCOPE_IO_MEMORY=pages` (or `thp`) caps `auto`'s ladder, to compare against scattered
//! pages or to test the fallback; unset (or `hugetlb`) tries every step.
//!
//! The mappings are made, advised and unmapped through `rustix::mm`, whose wrappers are `unsafe`
//! by nature (they hand out or take back raw memory), so each call keeps its `SAFETY:` reason, as
//! do the slices handed out over the mapping.

use crate::config::Buffers;
use rustix::mm::{self, Advice, MapFlags, ProtFlags};
use std::ffi::c_void;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

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

/// Page alignment used for every I/O buffer (O_DIRECT needs it; misaligned buffers cost ~30%
/// even without it).
pub const BUF_ALIGN: usize = 4096;

/// Size of a (PMD-level) huge page on x86-64 and arm64 with 4 KiB pages.
pub const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Where `--buffers malloc` starts a buffer past a page boundary: where glibc's `malloc` puts a
/// block large enough to get its own mapping (after its 16-byte chunk header).
pub const MALLOC_OFFSET_BYTES: usize = 16;

/// The memory behind a buffer. Its serde name is the `--buffers` value that asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum BufferKind {
    /// hugetlb pages (`MAP_HUGETLB`, 2 MiB each): physically contiguous by construction.
    #[serde(rename = "hugetlb")]
    HugeTlb,
    /// Transparent huge pages (`MADV_HUGEPAGE`), confirmed in `/proc/self/smaps`.
    #[serde(rename = "thp")]
    TransparentHuge,
    /// Ordinary 4 KiB pages, page-aligned.
    #[serde(rename = "plain")]
    Pages,
    /// Ordinary 4 KiB pages, starting [`MALLOC_OFFSET_BYTES`] past a page boundary.
    #[serde(rename = "malloc")]
    MallocOffset,
}

impl BufferKind {
    /// Short name, as in verbose output and notes: the `--buffers` value.
    pub fn as_str(self) -> &'static str {
        self.setting().as_str()
    }

    /// The `--buffers` value that asks for this kind.
    pub fn setting(self) -> Buffers {
        match self {
            BufferKind::HugeTlb => Buffers::HugeTlb,
            BufferKind::TransparentHuge => Buffers::Thp,
            BufferKind::Pages => Buffers::Plain,
            BufferKind::MallocOffset => Buffers::Malloc,
        }
    }

    /// One line for the user: which memory, and what it means for O_DIRECT.
    pub fn describe(self) -> &'static str {
        match self {
            BufferKind::HugeTlb => "hugetlb 2 MiB pages (physically contiguous)",
            BufferKind::TransparentHuge => "transparent huge pages (2 MiB, physically contiguous)",
            BufferKind::Pages => "4 KiB pages (large O_DIRECT requests may be split)",
            BufferKind::MallocOffset => "4 KiB pages, 16 bytes past a page boundary",
        }
    }
}

impl std::fmt::Display for BufferKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Buffers that could not be had. A run fails with it before it starts.
#[derive(Debug, thiserror::Error)]
pub enum BufferError {
    /// The kernel refused the memory (`RLIMIT_AS`, overcommit limits).
    #[error(
        "allocating {} MiB of buffers: {error}; lower --threads, BLOCK_SIZE or --queue-depth, or \
         raise the limit (ulimit -v)",
        bytes.div_ceil(1 << 20)
    )]
    Alloc {
        bytes: u64,
        /// Not a `#[source]`: the message already says it.
        error: std::io::Error,
    },
    /// `--buffers hugetlb` without enough free hugetlb pages.
    #[error(
        "--buffers: hugetlb needs {} MiB of free hugetlb pages and the system has fewer \
         (HugePages_Free in /proc/meminfo); reserve them (as root: echo N > \
         /proc/sys/vm/nr_hugepages) or use --buffers thp",
        bytes.div_ceil(1 << 20)
    )]
    NoHugeTlb { bytes: u64 },
}

/// A zeroed buffer that owns its memory: a private anonymous mapping of `map_len` bytes at
/// `map_base`, the buffer starting at `ptr` inside it.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    map_base: NonNull<u8>,
    map_len: usize,
    kind: BufferKind,
}

/// A fresh private anonymous read-write mapping of `len` bytes with `extra` flags.
fn map_anonymous(len: usize, extra: MapFlags) -> Result<NonNull<u8>, std::io::Error> {
    // SAFETY: a fresh private anonymous mapping at an address the kernel picks (no MAP_FIXED);
    // no existing memory is touched.
    let raw = unsafe {
        mm::mmap_anonymous(
            std::ptr::null_mut(),
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::PRIVATE | extra,
        )
    }?;
    NonNull::new(raw.cast()).ok_or_else(|| std::io::Error::from_raw_os_error(libc::ENOMEM))
}

/// Writes one byte per page of `[start, start + len)`, so the pages exist before any timed
/// operation.
///
/// # Safety
/// The range must be writable memory owned by the caller.
unsafe fn touch(start: *mut u8, len: usize) {
    for off in (0..len).step_by(BUF_ALIGN) {
        // SAFETY: inside the caller's writable range.
        unsafe { std::ptr::write_volatile(start.add(off), 0) };
    }
}

impl AlignedBuf {
    /// A buffer of `len` bytes (at least 1) of ordinary pages, aligned to [`BUF_ALIGN`]. Panics
    /// when the memory cannot be had: for small helper buffers; runs use [`AlignedBuf::allocate`].
    pub fn new(len: usize) -> Self {
        Self::plain(len).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A buffer of `len` bytes backed as `backing` asks; `direct`: for O_DIRECT, which `auto`
    /// gives the most contiguous memory offered. `thp` falls back to plain pages when the kernel
    /// has no huge page to give (the kind says so); `hugetlb` fails without free hugetlb pages.
    pub fn allocate(len: usize, backing: Buffers, direct: bool) -> Result<Self, BufferError> {
        match backing {
            Buffers::Plain => Self::plain(len),
            Buffers::Malloc => Self::at_offset(len, MALLOC_OFFSET_BYTES, BufferKind::MallocOffset),
            Buffers::Thp => match Self::transparent_huge(len)? {
                Some(b) => Ok(b),
                None => Self::plain(len),
            },
            Buffers::HugeTlb => Self::hugetlb(len).ok_or(BufferError::NoHugeTlb {
                bytes: len.max(1).next_multiple_of(HUGE_PAGE_BYTES) as u64,
            }),
            Buffers::Auto if direct => Self::contiguous(len),
            Buffers::Auto => Self::plain(len),
        }
    }

    /// Page-aligned ordinary pages (`MADV_NOHUGEPAGE`, so even with transparent huge pages set
    /// to `always` they stay 4 KiB pages), touched now.
    pub fn plain(len: usize) -> Result<Self, BufferError> {
        Self::at_offset(len, 0, BufferKind::Pages)
    }

    /// Ordinary pages with the buffer starting `offset` bytes past a page boundary.
    fn at_offset(len: usize, offset: usize, kind: BufferKind) -> Result<Self, BufferError> {
        let map_len = (offset + len.max(1)).next_multiple_of(BUF_ALIGN);
        let alloc = |error| BufferError::Alloc {
            bytes: map_len as u64,
            error,
        };
        let base = map_anonymous(map_len, MapFlags::empty()).map_err(alloc)?;
        // SAFETY: `base` is our mapping of `map_len` bytes; madvise only changes its backing.
        // (It may fail on a kernel without THP, which changes nothing.)
        unsafe {
            let _ = mm::madvise(base.as_ptr().cast(), map_len, Advice::LinuxNoHugepage);
            touch(base.as_ptr(), map_len);
        }
        Ok(AlignedBuf {
            // SAFETY: `offset < BUF_ALIGN <= map_len`, inside the mapping.
            ptr: unsafe { NonNull::new_unchecked(base.as_ptr().add(offset)) },
            len,
            map_base: base,
            map_len,
            kind,
        })
    }

    /// A buffer of `len` bytes in the most contiguous memory the system offers without changing
    /// its settings: hugetlb, then transparent huge pages, then ordinary pages. Buffers of one
    /// page or less gain nothing from huge pages and are ordinary.
    pub fn contiguous(len: usize) -> Result<Self, BufferError> {
        let allowed = allowed();
        if len <= BUF_ALIGN || allowed == BufferKind::Pages {
            return Self::plain(len);
        }
        if allowed == BufferKind::HugeTlb {
            if let Some(b) = Self::hugetlb(len) {
                return Ok(b);
            }
        }
        match Self::transparent_huge(len)? {
            Some(b) => Ok(b),
            None => Self::plain(len),
        }
    }

    /// Like [`AlignedBuf::contiguous`] without the hugetlb step: for large buffers (pre-generated
    /// write data) that should not use up the small hugetlb pool the I/O slots need.
    pub fn large(len: usize) -> Result<Self, BufferError> {
        if len <= BUF_ALIGN || allowed() == BufferKind::Pages {
            return Self::plain(len);
        }
        match Self::transparent_huge(len)? {
            Some(b) => Ok(b),
            None => Self::plain(len),
        }
    }

    /// [`AlignedBuf::large`], starting `offset` bytes (under a page) past a page boundary, as
    /// malloc places a large block.
    pub fn large_at_offset(len: usize, offset: usize) -> Result<Self, BufferError> {
        let offset = offset % BUF_ALIGN;
        let mut b = Self::large(len + offset)?;
        // SAFETY: `offset <= len + offset`, the buffer's length: inside the mapping, which
        // `map_base` and `map_len` still name for the unmap.
        b.ptr = unsafe { NonNull::new_unchecked(b.ptr.as_ptr().add(offset)) };
        b.len = len;
        Ok(b)
    }

    /// The memory behind this buffer.
    pub fn kind(&self) -> BufferKind {
        self.kind
    }

    /// hugetlb pages, populated now; `None` when the pool has too few free pages.
    pub fn hugetlb(len: usize) -> Option<Self> {
        let cap = len.max(1).next_multiple_of(HUGE_PAGE_BYTES);
        // MAP_POPULATE faults every page in now, and a private hugetlb mapping reserves its
        // pages at mmap time, so it either fails here or never raises SIGBUS later.
        let base = map_anonymous(cap, MapFlags::HUGETLB | MapFlags::POPULATE).ok()?;
        Some(AlignedBuf {
            ptr: base,
            len,
            map_base: base,
            map_len: cap,
            kind: BufferKind::HugeTlb,
        })
    }

    /// Anonymous memory aligned to 2 MiB with `MADV_HUGEPAGE`, touched now; `Ok(None)` when the
    /// kernel gave ordinary pages anyway (THP off, or no free huge page), an error when it gave
    /// no memory at all.
    pub fn transparent_huge(len: usize) -> Result<Option<Self>, BufferError> {
        let cap = len.max(1).next_multiple_of(HUGE_PAGE_BYTES);
        let over = cap + HUGE_PAGE_BYTES;
        let raw = map_anonymous(over, MapFlags::empty()).map_err(|error| BufferError::Alloc {
            bytes: over as u64,
            error,
        })?;
        let base = raw.as_ptr() as usize;
        let start = base.next_multiple_of(HUGE_PAGE_BYTES);
        let head = start - base;
        let tail = over - head - cap;
        // SAFETY: `[base, base + head)` and `[start + cap, start + cap + tail)` lie inside the
        // mapping made above and nothing refers to them; unmapping them leaves `[start, start +
        // cap)`, 2 MiB-aligned. madvise only changes how that range is backed.
        let advised = unsafe {
            if head > 0 {
                let _ = mm::munmap(base as *mut c_void, head);
            }
            if tail > 0 {
                let _ = mm::munmap((start + cap) as *mut c_void, tail);
            }
            mm::madvise(start as *mut c_void, cap, Advice::LinuxHugepage).is_ok()
        };
        // SAFETY: `start` lies inside the non-null mapping.
        let start_ptr = unsafe { NonNull::new_unchecked(start as *mut u8) };
        let buf = AlignedBuf {
            ptr: start_ptr,
            len,
            map_base: start_ptr,
            map_len: cap,
            kind: BufferKind::TransparentHuge,
        };
        if !advised {
            return Ok(None); // `buf` unmaps the region
        }
        // Touch every page now, so faults stay out of timed operations and the kernel decides
        // here whether it has huge pages for us.
        // SAFETY: `[start, start + cap)` is our mapping, readable and writable.
        unsafe { touch(start_ptr.as_ptr(), cap) };
        Ok((huge_bytes_at(start) >= cap.min(HUGE_PAGE_BYTES)).then_some(buf))
    }
}

/// The system's transparent huge page mode (`always`, `madvise` or `never`: the bracketed word
/// of `/sys/kernel/mm/transparent_hugepage/enabled`), if known.
pub fn thp_mode() -> Option<String> {
    let text = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

/// Free hugetlb pages (`HugePages_Free`), bytes (0 when unknown): with [`thp_mode`], what a
/// run's context states about the memory `--buffers auto` can get.
pub fn hugetlb_free_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            let l = t.lines().find(|l| l.starts_with("HugePages_Free:"))?;
            l.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .unwrap_or(0)
        * HUGE_PAGE_BYTES as u64
}

/// What `backing` will most likely give buffers of `bytes_per_worker` for `workers` workers,
/// before any is made (for the fio line printed beside a run): `auto` follows its ladder with
/// the pool and THP mode of now; `thp` is assumed to get huge pages unless THP is `never`. The
/// run's own result says what it got.
pub fn predicted_kind(
    backing: Buffers,
    direct: bool,
    bytes_per_worker: u64,
    workers: u64,
) -> BufferKind {
    let thp_possible = thp_mode().is_some_and(|m| m != "never");
    match backing {
        Buffers::Plain => BufferKind::Pages,
        Buffers::Malloc => BufferKind::MallocOffset,
        Buffers::HugeTlb => BufferKind::HugeTlb,
        Buffers::Thp if thp_possible => BufferKind::TransparentHuge,
        Buffers::Thp => BufferKind::Pages,
        Buffers::Auto if !direct || bytes_per_worker <= BUF_ALIGN as u64 => BufferKind::Pages,
        Buffers::Auto => {
            let each = bytes_per_worker.next_multiple_of(HUGE_PAGE_BYTES as u64);
            let allowed = allowed();
            if allowed == BufferKind::HugeTlb
                && hugetlb_free_bytes() >= each.saturating_mul(workers.max(1))
            {
                BufferKind::HugeTlb
            } else if allowed != BufferKind::Pages && thp_possible {
                BufferKind::TransparentHuge
            } else {
                BufferKind::Pages
            }
        }
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
        // SAFETY: the mapping of `map_len` bytes at `map_base` was made by us and is unmapped
        // once.
        unsafe {
            let _ = mm::munmap(self.map_base.as_ptr().cast(), self.map_len);
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
    /// Slots of ordinary memory (`contiguous == false`) or of the most contiguous memory
    /// offered. Panics when the memory cannot be had; runs use [`SlotBufs::allocate`].
    pub fn new(count: usize, slot_bytes: usize, contiguous: bool) -> Self {
        Self::allocate(count, slot_bytes, Buffers::Auto, contiguous)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// `count` slots of `slot_bytes` in memory backed as `backing` asks (see
    /// [`AlignedBuf::allocate`]; `direct`: for O_DIRECT), or the error that says why not.
    pub fn allocate(
        count: usize,
        slot_bytes: usize,
        backing: Buffers,
        direct: bool,
    ) -> Result<Self, BufferError> {
        let stride = slot_bytes.max(1).next_multiple_of(BUF_ALIGN);
        let total = stride.saturating_mul(count.max(1));
        Ok(SlotBufs {
            arena: AlignedBuf::allocate(total, backing, direct)?,
            stride,
            slot_bytes,
            count,
        })
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

    /// Where the slots lie in physical memory (`layout.rs`), or `None` when it cannot be read.
    pub fn layout(&self) -> Option<super::layout::Layout> {
        super::layout::Layout::of((0..self.count).map(|i| self.slot(i)))
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
        let mut b = AlignedBuf::contiguous(3 << 20).unwrap();
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

    #[test]
    fn each_backing_gives_the_memory_it_names_or_says_why_not() {
        let b = AlignedBuf::allocate(1 << 20, Buffers::Plain, true).unwrap();
        assert_eq!(
            (b.kind(), b.as_ptr() as usize % BUF_ALIGN),
            (BufferKind::Pages, 0)
        );
        let b = AlignedBuf::allocate(1 << 20, Buffers::Malloc, false).unwrap();
        assert_eq!(b.kind(), BufferKind::MallocOffset);
        assert_eq!(b.as_ptr() as usize % BUF_ALIGN, MALLOC_OFFSET_BYTES);
        let b = AlignedBuf::allocate(1 << 20, Buffers::Auto, false).unwrap();
        assert_eq!(
            b.kind(),
            BufferKind::Pages,
            "auto without O_DIRECT: plain, as before"
        );
        // thp gets huge pages or falls back to plain pages, and says which.
        let b = AlignedBuf::allocate(3 << 20, Buffers::Thp, false).unwrap();
        assert!(matches!(
            b.kind(),
            BufferKind::TransparentHuge | BufferKind::Pages
        ));
        match AlignedBuf::allocate(1 << 20, Buffers::HugeTlb, false) {
            Ok(b) => assert_eq!(b.kind(), BufferKind::HugeTlb),
            Err(e) => assert!(
                e.to_string().starts_with("--buffers: hugetlb needs "),
                "{e}"
            ),
        }
    }

    #[test]
    fn malloc_offset_slots_all_start_sixteen_bytes_into_a_page() {
        let mut s = SlotBufs::allocate(3, 4096, Buffers::Malloc, false).unwrap();
        for i in 0..3 {
            s.slot_mut(i).fill(9);
            assert_eq!(s.slot(i).as_ptr() as usize % BUF_ALIGN, MALLOC_OFFSET_BYTES);
        }
        let one = s.into_single(4096);
        assert!(one.iter().all(|&x| x == 9));
    }

    #[test]
    fn memory_the_kernel_refuses_is_an_error_that_names_the_size() {
        // More address space than any machine has: mmap fails with ENOMEM.
        let e = match AlignedBuf::allocate(1 << 62, Buffers::Plain, false) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("4 EiB of buffers"),
        };
        assert!(
            e.starts_with("allocating 4398046511104 MiB of buffers: "),
            "{e}"
        );
    }
}
