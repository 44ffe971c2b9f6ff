//! Untimed setup of a run's memory and file: I/O slots, pre-generated write data and
//! preallocation. They are called while a run is prepared, before any clock starts, so a timed
//! operation never pays for a page fault, pattern generation or block allocation that fio would
//! also have done in its setup.

use super::buffer::{BufferError, BufferKind, SlotBufs};
use super::job::WriteData;
use super::layout::Layout as BufferLayout;
use crate::config::spec::RunSpec;
use crate::config::{Buffers, Op, Prealloc, UsageError};
use rustix::fs::FallocateFlags;
use std::fs::File;
use std::sync::Arc;

/// `fallocate` refused to reserve a write run's blocks (a full disk, most often): the run fails
/// before it starts. The OS error is kept, so a full disk is told by its kind, not its text.
#[derive(Debug, thiserror::Error)]
#[error("preallocating {len_bytes} bytes (--prealloc native): {error}")]
pub struct PreallocFailed {
    pub len_bytes: u64,
    /// Not a `#[source]`: the message already says it, and `{:#}` would say it twice.
    pub error: std::io::Error,
}

/// Write data is pre-generated only when it takes at most this share of the available memory.
const WRITE_DATA_MAX_SHARE_OF_AVAILABLE: u64 = 4;

/// Most bytes of pregenerated data a write that loops until stopped holds (rounded up to whole
/// blocks): its data repeats every this many bytes ([`WriteData::ring`]).
pub const WRITE_RING_BYTES: u64 = 64 << 20;

/// I/O slots a worker of `spec` uses at `queue_depth` (see [`super::caps::Caps::slots`]).
pub fn slots_per_worker(spec: &RunSpec, queue_depth: u32) -> usize {
    super::caps(spec.setup.method).slots(queue_depth)
}

/// The slots of one worker of `spec`, made now, backed as `spec.buffers` asks (`auto`:
/// contiguous memory for O_DIRECT). `block_size` and `queue_depth` are the worker's own, as the
/// memory budget fitted them (the budget's `fitted`): never more than the worker can use. Memory
/// the kernel refuses is an error ([`BufferError`]), never an abort; `--buffers hugetlb` without
/// free hugetlb pages is a usage error naming the flag.
pub fn worker_slots(
    spec: &RunSpec,
    block_size: usize,
    queue_depth: u32,
) -> anyhow::Result<Option<SlotBufs>> {
    let n = slots_per_worker(spec, queue_depth);
    if n == 0 {
        return Ok(None);
    }
    match SlotBufs::allocate(n, block_size, spec.setup.buffers, spec.setup.direct) {
        Ok(s) => Ok(Some(s)),
        Err(e @ BufferError::NoHugeTlb { .. }) => Err(UsageError::new(
            "--buffers",
            e.to_string().trim_start_matches("--buffers: "),
        )
        .into()),
        Err(e) => Err(e.into()),
    }
}

/// Where every worker's O_DIRECT slots lie in physical memory (see `layout.rs`): `None` for a
/// run through the page cache (the copy does not care), or when it cannot be read.
pub fn buffer_layout<'a>(
    spec: &RunSpec,
    slots: impl IntoIterator<Item = &'a SlotBufs>,
) -> Option<BufferLayout> {
    if !spec.setup.direct {
        return None;
    }
    slots
        .into_iter()
        .map(SlotBufs::layout)
        .reduce(|a, b| {
            let (mut a, b) = (a?, b?);
            a.extend(b);
            Some(a)
        })
        .flatten()
}

/// A note naming the memory of the buffers (the first worker's) when it matters or surprises:
/// always for O_DIRECT (with the slots' physical layout when known), and when `--buffers thp`
/// got plain pages.
pub fn buffer_note(
    spec: &RunSpec,
    slots: Option<&SlotBufs>,
    layout: Option<&BufferLayout>,
) -> Option<String> {
    let kind = slots?.kind();
    if spec.setup.buffers == Buffers::Thp && kind != BufferKind::TransparentHuge {
        return Some(format!(
            "note: --buffers thp: the kernel gave no transparent huge page, so the buffers are \
             {} (see /sys/kernel/mm/transparent_hugepage/enabled)",
            kind.describe()
        ));
    }
    // The measured layout says more than the kind's general warning.
    let what = match layout {
        Some(l) => format!(
            "{}; {}",
            kind.describe().split(" (").next().unwrap_or(""),
            l.describe()
        ),
        None => kind.describe().to_string(),
    };
    spec.setup
        .direct
        .then(|| format!("note: O_DIRECT buffers: {what}"))
}

/// Bytes of memory this process may still take: the least of `MemAvailable`, its memory
/// cgroup's room and `RLIMIT_AS` minus what is mapped (see [`super::room`]), if any is known.
pub fn mem_available_bytes() -> Option<u64> {
    super::room::memory_room().map(|r| r.bytes)
}

/// The pattern bytes of a write of `total_bytes`, generated now (the bytes each write copies
/// from); `None` (with a note) when they would take more than a quarter of the available memory
/// or cannot be had (a hugetlb pool too small for them): then each block is generated into the
/// I/O slot just before its write, outside its latency but inside the run's wall time.
///
/// Their memory: [`write_data_memory`].
pub fn write_data(
    spec: &RunSpec,
    total_bytes: u64,
    notes: &mut Vec<String>,
) -> Option<Arc<WriteData>> {
    if spec.setup.op != Op::Write || total_bytes == 0 {
        return None;
    }
    let avail = mem_available_bytes().unwrap_or(0);
    if total_bytes > avail / WRITE_DATA_MAX_SHARE_OF_AVAILABLE || total_bytes > usize::MAX as u64 {
        notes.push(format!(
            "note: write data is generated during the run: {total_bytes} bytes is more than a \
             quarter of the {avail} bytes of available memory"
        ));
        return None;
    }
    let memory = write_data_memory(spec);
    // A write that loops until stopped takes its data from a ring of at most
    // WRITE_RING_BYTES (whole blocks, so no block straddles its end), not from a copy of its
    // whole region held for as long as it runs.
    let ring_bytes =
        WRITE_RING_BYTES.div_ceil(spec.setup.block_size_bytes.max(1)) * spec.setup.block_size_bytes;
    let made = if spec.target.loop_range && total_bytes > ring_bytes {
        WriteData::ring(
            spec.safety.seed,
            ring_bytes as usize,
            memory.backing,
            memory.skew,
        )
    } else {
        WriteData::generate(
            spec.safety.seed,
            total_bytes as usize,
            memory.backing,
            memory.skew,
        )
    };
    match made {
        Ok(d) => {
            // Only where the data's memory is not what was asked (`auto` asks for nothing).
            if !spec.setup.direct && matches!(spec.setup.buffers, Buffers::Plain | Buffers::Malloc)
            {
                notes.push(format!(
                    "note: --buffers {}: each write copies from its data, generated before the \
                     clock in {}{} (a source of {} in 4 KiB pages would cost \
                     the copy a TLB miss every 4 KiB, which a reused buffer does not; the \
                     setting sets the I/O slots: docs/accuracy.md)",
                    spec.setup.buffers.as_str(),
                    d.kind().describe(),
                    if memory.skew > 0 {
                        format!(", {} bytes past a page boundary", memory.skew)
                    } else {
                        String::new()
                    },
                    crate::size::format_bytes_approx(d.len() as u64),
                ));
            }
            Some(Arc::new(d))
        }
        Err(e) => {
            notes.push(format!("note: write data is generated during the run: {e}"));
            None
        }
    }
}

/// The memory a write's pre-generated data asks for: a backing for
/// [`WriteData::generate`] and how far past a page boundary the data starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataMemory {
    pub backing: Buffers,
    pub skew: usize,
}

/// Where a write's pre-generated data lives. A write through the page cache (or into a mapping)
/// copies its data with the CPU, so what the data's memory costs is the copy's TLB and cache
/// misses, and those grow with the data's size: fio's `--iomem=mmap` writes every block from
/// the same 1 MiB of 4 KiB pages, which the TLB covers, where 1 GiB of pregenerated 4 KiB pages
/// takes a TLB miss every 4 KiB. On the lab VM that cost a settled 1 GiB write + fsync a third
/// of its speed (357-366 MiB/s with plain pages, 500-570 in huge pages, fio 500-568:
/// docs/accuracy.md). So for such a write `plain` (and `auto`) data goes in huge pages where
/// the kernel offers them, and `malloc` data too, still 16 bytes past a page boundary (what
/// that setting is about: a copy from where malloc puts a block); `thp` and `hugetlb` get what
/// they ask. `--buffers` always sets the I/O slots, which are also where blocks are generated
/// when the data is too big to pregenerate. An O_DIRECT write's data is what the device reads,
/// so its physical layout is the run's: it keeps the memory `--buffers` asks for.
pub fn write_data_memory(spec: &RunSpec) -> DataMemory {
    let (backing, skew) = match spec.setup.buffers {
        b if spec.setup.direct => (b, 0),
        Buffers::Plain | Buffers::Auto => (Buffers::Auto, 0),
        Buffers::Malloc => (Buffers::Auto, super::buffer::MALLOC_OFFSET_BYTES),
        b @ (Buffers::Thp | Buffers::HugeTlb) => (b, 0),
    };
    DataMemory { backing, skew }
}

/// Preallocates `len_bytes` of the freshly created (or replaced) output file with
/// `fallocate(2)` when `spec.prealloc` asks for it, like fio's `fallocate=native`. A filesystem
/// without fallocate gets a note; a full disk is a failed run (so the caller removes the file).
/// Fails with [`PreallocFailed`].
pub fn preallocate(
    spec: &RunSpec,
    file: &File,
    len_bytes: u64,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    if spec.setup.op != Op::Write
        || spec.setup.prealloc == Prealloc::None
        || spec.safety.overwrite_in_place
        || len_bytes == 0
        || !file.metadata().is_ok_and(|m| m.is_file())
    {
        return Ok(());
    }
    if i64::try_from(len_bytes).is_err() {
        return Ok(());
    }
    loop {
        // Mode 0 allocates and extends the file.
        let Err(errno) = rustix::fs::fallocate(file, FallocateFlags::empty(), 0, len_bytes) else {
            return Ok(());
        };
        let e = std::io::Error::from(errno);
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => {
                notes.push(format!(
                    "note: --prealloc native: the filesystem of {} cannot preallocate ({e}); \
                     the writes allocate the blocks",
                    crate::text::shown_path(&spec.target.path)
                ));
                return Ok(());
            }
            _ => {
                // Leave no blocks reserved behind: the caller removes the file on this error.
                let _ = file.set_len(0);
                return Err(anyhow::Error::new(PreallocFailed {
                    len_bytes,
                    error: e,
                }));
            }
        }
    }
}

/// Bytes a mixed workload's layout writes per call.
const LAYOUT_CHUNK_BYTES: usize = 1 << 20;

/// Lays out the file of a mixed workload before its clock starts: writes the pattern over
/// `0..total_bytes` (from `data` when it was generated, else chunk by chunk), then
/// `fdatasync`s, so the run's reads find data on the device, not the zeros of unwritten blocks
/// that a filesystem hands back without any I/O; fio lays out its files the same way. Every
/// write of the run writes these same bytes again (the pattern is a function of the offset), so
/// what a read returns never depends on which writes came before it. Skipped for a batch's test
/// file that already holds the bytes. `file` may be open with O_DIRECT: chunks are whole
/// blocks from page-aligned memory.
pub fn lay_out_mix(
    spec: &RunSpec,
    file: &File,
    total_bytes: u64,
    data: Option<&WriteData>,
    notes: &mut Vec<String>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::os::unix::fs::FileExt;
    if !spec.is_mixed() || total_bytes == 0 {
        return Ok(());
    }
    let start = spec.target.range_start_bytes;
    let have = file.metadata().map(|m| m.len()).unwrap_or(0);
    if spec.safety.overwrite_in_place && have >= start + total_bytes {
        return Ok(());
    }
    let bs = spec.setup.block_size_bytes as usize;
    let chunk = (LAYOUT_CHUNK_BYTES / bs).max(1) * bs;
    let mut scratch = super::buffer::AlignedBuf::new(chunk);
    let mut at = 0u64;
    while at < total_bytes {
        let len = (chunk as u64).min(total_bytes - at) as usize;
        // The offsets the run's writes use, so the layout writes the bytes they write.
        let off = start + at;
        let bytes: &[u8] = match data.filter(|d| d.covers(off, len)) {
            Some(d) => d.at(off, len),
            None => {
                crate::pattern::fill(spec.safety.seed, off, &mut scratch[..len]);
                &scratch[..len]
            }
        };
        super::job::drain_to(bytes, |s, done| file.write_at(s, off + done as u64))
            .with_context(|| format!("laying out the mix's file at offset {off}"))?;
        at += len as u64;
    }
    file.sync_data()
        .context("laying out the mix's file: fdatasync")?;
    notes.push(format!(
        "note: mix: wrote the {total_bytes} bytes the run reads and writes before the clock \
         started (as fio lays out its files), so its reads find data on the device"
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn write_spec(path: &std::path::Path, prealloc: Prealloc) -> RunSpec {
        let mut s = RunSpec::new(path);
        s.setup.op = Op::Write;
        s.setup.prealloc = prealloc;
        s
    }

    #[test]
    fn native_preallocation_reserves_the_blocks_before_any_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let f = File::create(&path).unwrap();
        let mut notes = Vec::new();
        preallocate(
            &write_spec(&path, Prealloc::Native),
            &f,
            8 << 20,
            &mut notes,
        )
        .unwrap();
        let m = f.metadata().unwrap();
        if notes.is_empty() {
            assert_eq!(m.len(), 8 << 20);
            assert!(m.blocks() * 512 >= 8 << 20, "{} blocks", m.blocks());
        } else {
            eprintln!("skipped: {}", notes[0]);
        }
    }

    #[test]
    fn no_preallocation_leaves_the_file_to_the_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let f = File::create(&path).unwrap();
        let mut notes = Vec::new();
        preallocate(&write_spec(&path, Prealloc::None), &f, 8 << 20, &mut notes).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 0);
        assert_eq!(f.metadata().unwrap().blocks(), 0);
    }

    #[test]
    fn a_copied_writes_plain_or_malloc_data_is_in_huge_pages_and_the_rest_as_asked() {
        use super::super::buffer::MALLOC_OFFSET_BYTES;
        let mut s = write_spec(std::path::Path::new("/x"), Prealloc::Native);
        let mem = |backing, skew| DataMemory { backing, skew };
        for (b, buffered) in [
            (Buffers::Auto, mem(Buffers::Auto, 0)),
            (Buffers::Plain, mem(Buffers::Auto, 0)),
            (Buffers::Malloc, mem(Buffers::Auto, MALLOC_OFFSET_BYTES)),
            (Buffers::Thp, mem(Buffers::Thp, 0)),
            (Buffers::HugeTlb, mem(Buffers::HugeTlb, 0)),
        ] {
            s.setup.buffers = b;
            s.setup.direct = false;
            assert_eq!(write_data_memory(&s), buffered, "{b:?} buffered");
            s.setup.direct = true;
            assert_eq!(write_data_memory(&s), mem(b, 0), "{b:?} O_DIRECT");
        }
        // The data itself: malloc's starts 16 bytes past a page and holds the pattern; an
        // O_DIRECT write's plain data is plain pages. A buffered plain write's note says where
        // its data is.
        let mut notes = Vec::new();
        s.setup.direct = false;
        s.setup.buffers = Buffers::Malloc;
        let d = write_data(&s, 1 << 20, &mut notes).expect("1 MiB fits in memory");
        assert_eq!(d.at(0, 1).as_ptr() as usize % 4096, MALLOC_OFFSET_BYTES);
        assert_eq!(d.len(), 1 << 20);
        let mut want = vec![0u8; 1 << 20];
        crate::pattern::fill(s.safety.seed, 0, &mut want);
        assert_eq!(d.at(0, 1 << 20), &want[..]);
        assert!(d.covers(0, 1 << 20) && !d.covers(1, 1 << 20));
        assert!(notes[0].starts_with("note: --buffers malloc: each write copies from its data"));
        assert!(
            notes[0].contains("16 bytes past a page boundary"),
            "{}",
            notes[0]
        );
        assert!(!notes[0].contains("  "), "{}", notes[0]);
        s.setup.buffers = Buffers::Auto;
        notes.clear();
        write_data(&s, 1 << 20, &mut notes).unwrap();
        assert!(notes.is_empty(), "the default says nothing: {notes:?}");
        s.setup.direct = true;
        s.setup.buffers = Buffers::Plain;
        let d = write_data(&s, 8 << 20, &mut notes).expect("8 MiB fits in memory");
        assert_eq!(d.kind(), BufferKind::Pages);
        assert_eq!(d.at(0, 1).as_ptr() as usize % 4096, 0);
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn write_data_is_the_pattern_and_reads_need_none() {
        let mut notes = Vec::new();
        let mut s = write_spec(std::path::Path::new("/x"), Prealloc::Native);
        let d = write_data(&s, 10_000, &mut notes).expect("10 kB fits in memory");
        let mut want = vec![0u8; 10_000];
        crate::pattern::fill(s.safety.seed, 0, &mut want);
        assert_eq!(d.at(0, 10_000), &want[..]);
        assert!(d.covers(9_000, 1_000) && !d.covers(9_001, 1_000));
        s.setup.op = Op::Read;
        assert!(write_data(&s, 10_000, &mut notes).is_none());
    }

    #[test]
    fn a_looping_write_takes_its_data_from_a_ring_of_whole_blocks() {
        let mut notes = Vec::new();
        let mut s = write_spec(std::path::Path::new("/x"), Prealloc::Native);
        s.setup.block_size_bytes = 3 << 20;
        s.target.loop_range = true;
        let total = 1u64 << 30;
        let d = write_data(&s, total, &mut notes).expect("a ring fits in memory");
        let ring = WRITE_RING_BYTES.div_ceil(3 << 20) * (3 << 20);
        assert_eq!(
            d.len() as u64,
            ring,
            "a ring of whole blocks, not the region"
        );
        let block = 3 << 20;
        // Every block of the region is covered, and block k gets the ring's bytes at k % ring.
        for k in [0u64, 1, 21, 22, 340] {
            let off = k * block as u64;
            assert!(d.covers(off, block), "block {k}");
            assert_eq!(d.at(off, 16), d.at(off % ring, 16));
        }
        let mut want = vec![0u8; 4096];
        crate::pattern::fill(s.safety.seed, 0, &mut want);
        assert_eq!(
            d.at(ring, 4096),
            &want[..],
            "the ring starts over at its end"
        );
        // A write that stops by itself keeps its region's bytes.
        s.target.loop_range = false;
        let d = write_data(&s, 80 << 20, &mut notes).unwrap();
        assert_eq!(d.len(), 80 << 20);
        assert!(!d.covers(80 << 20, 4096));
    }
}
