//! The mapping used by the mmap road, and the folio probe that decides whether that road pays.
//!
//! A cached file whose folios are 2 MiB can be mapped with one PMD entry per 2 MiB, and then the
//! XOR runs at memory speed with no page faults to speak of. Smaller folios are mapped 4 KiB at a
//! time (a fault per fault-around window, and per-page teardown at exit). Which case we are in is
//! a property of how the cache was filled, so we look: the mapping is placed on a 2 MiB boundary
//! (so PMD mapping is possible at all), a few 2 MiB-aligned points are touched, and the growth
//! of `FilePmdMapped` in `/proc/self/smaps_rollup` says how many of them got a PMD entry.
//!
//! The mapping is made and given back through `rustix::mm`, whose calls stay `unsafe` (they
//! place, replace and remove raw memory), each with its `SAFETY:` reason.

use crate::sigbus::Guard;
use anyhow::{bail, Context};
use rustix::mm::{self, Advice, MapFlags, ProtFlags};
use std::ffi::c_void;
use std::fs::File;

/// Size of a PMD mapping on x86-64 and arm64 with 4 KiB pages.
pub const PMD_BYTES: usize = 2 << 20;

/// A read-only, shared, 2 MiB-aligned mapping of a whole file; unmapped on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
    /// Turns SIGBUS on the mapping (the file shrank) into [`Mapping::check`]'s error.
    guard: Option<Guard>,
}

// SAFETY: the mapping is read-only and owned by this value; sharing `&Mapping` between threads only
// allows reads.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the first `len` bytes of `file` (`len > 0`) at a 2 MiB-aligned address, asking for
    /// huge pages (`MADV_HUGEPAGE`: faults on uncached parts then read 2 MiB folios).
    pub fn new(file: &File, len: u64) -> anyhow::Result<Self> {
        if len == 0 {
            bail!("cannot map an empty file");
        }
        let len = usize::try_from(len).context("file larger than the address space")?;
        let reserve = len
            .checked_add(PMD_BYTES)
            .context("file too large to map")?;
        // SAFETY: a fresh anonymous PROT_NONE reservation at an address the kernel picks; no
        // existing memory is affected.
        let base = unsafe {
            mm::mmap_anonymous(
                std::ptr::null_mut(),
                reserve,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        }
        .map_err(std::io::Error::from)
        .context("reserving address space")?;
        let base_addr = base as usize;
        let aligned = base_addr.next_multiple_of(PMD_BYTES);
        // SAFETY: [aligned, aligned + len) lies inside the reservation we own, so MAP_FIXED
        // replaces only our own PROT_NONE pages.
        let mapped = unsafe {
            mm::mmap(
                aligned as *mut c_void,
                len,
                ProtFlags::READ,
                MapFlags::SHARED | MapFlags::FIXED,
                file,
                0,
            )
        };
        let (ptr, map_err) = match mapped {
            Ok(p) => (p, None),
            Err(e) => (std::ptr::null_mut(), Some(std::io::Error::from(e))),
        };
        // Give back the unused head and tail of the reservation (or all of it on failure).
        let head = aligned - base_addr;
        let tail_start = aligned + len;
        let tail = base_addr + reserve - tail_start;
        // SAFETY: these ranges are parts of our reservation that the file mapping does not cover.
        unsafe {
            if map_err.is_some() {
                let _ = mm::munmap(base, reserve);
            } else {
                if head > 0 {
                    let _ = mm::munmap(base, head);
                }
                if tail > 0 {
                    let _ = mm::munmap(tail_start as *mut c_void, tail);
                }
            }
        }
        if let Some(e) = map_err {
            return Err(e).context("mmap of the file");
        }
        // SAFETY: advice on our own mapping; failure only means no huge pages.
        let _ = unsafe { mm::madvise(ptr, len, Advice::LinuxHugepage) };
        let mut mapping = Mapping {
            ptr: ptr.cast(),
            len,
            guard: None,
        };
        mapping.guard =
            Some(Guard::new(mapping.ptr, len).context("guarding the mapping against SIGBUS")?);
        Ok(mapping)
    }

    /// `Err` naming the offset if any page of the mapping could not be read since it was made
    /// (the file shrank under it): what was computed from the mapping is then not the file's.
    /// Call it after each chunk and before trusting its result.
    pub fn check(&self) -> anyhow::Result<()> {
        match self.guard.as_ref().map(Guard::check) {
            Some(Err(fault)) => bail!(
                "the file shrank while being read (the page at offset {} is past its end now)",
                fault.offset_bytes
            ),
            _ => Ok(()),
        }
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes for the lifetime of `self`. diskscope never
        // writes a file it reads; a concurrent truncation by another process raises SIGBUS on
        // access, which the guard absorbs (zeros read) and `check` reports.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Touches up to `samples` 2 MiB-aligned points and returns `(touched, pmd_mapped)`: how
    /// many of them the kernel mapped with a PMD entry. `None` when smaps cannot be read.
    pub fn probe_pmd(&self, samples: usize) -> Option<(usize, usize)> {
        let whole = self.len / PMD_BYTES;
        if whole == 0 {
            return Some((0, 0));
        }
        let before = file_pmd_mapped_kib()?;
        let n = samples.min(whole).max(1);
        let bytes = self.bytes();
        for k in 0..n {
            let at = (whole * k / n) * PMD_BYTES;
            std::hint::black_box(bytes[at]);
        }
        let after = file_pmd_mapped_kib()?;
        let pmds = (after.saturating_sub(before) / (PMD_BYTES as u64 / 1024)) as usize;
        Some((n, pmds.min(n)))
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Unregister before unmapping, so the handler never acts on an address we gave back.
        self.guard = None;
        // SAFETY: unmaps exactly the mapping made in `new`; no borrows of it outlive `self`.
        let _ = unsafe { mm::munmap(self.ptr.cast(), self.len) };
    }
}

/// `FilePmdMapped` of this process, in KiB.
fn file_pmd_mapped_kib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("FilePmdMapped:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
