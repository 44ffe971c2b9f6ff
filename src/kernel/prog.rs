//! The seven programs of the kernel view, generated for this kernel's layouts and the run's
//! filter (see the module doc of `kernel` for what each measures and why).
//!
//! A request is known by its disk and first sector. A record in the in-flight table
//! (`inflight`: [`SLOTS`] records of `{disk, sector, start_ns, issue_ns}`, two places per key
//! chosen by a multiplicative hash, so finding one is two inlined array lookups: no hashing
//! helper, no lock) is made when one of the run's bios enters the block layer
//! (`block_bio_queue`, in the submitting thread, so the process filter is a comparison of
//! `bpf_get_current_pid_tgid() >> 32`), follows the bio through a split (the rest of the bio
//! starts where the split-off part ends) and a front merge (the request then starts at the
//! bio's sector), is dropped by a merge (`block_bio_backmerge`, `block_rq_merge`), stamped at
//! issue (`block_rq_issue`, any context) and read and emptied at completion
//! (`block_rq_complete`, often in an interrupt). Requests without a record are not the run's
//! and cost two failed compares. When both places of a key are taken, the older record gives
//! way (counted: [`Word::Evictions`]); a stale one (a completion never seen) is thus
//! overwritten in time. Counters go to a per-CPU array (one element of [`hist::WORDS`] words)
//! by atomic adds, so a program interrupted by another on the same CPU loses nothing.
//!
//! Where the fields come from is the [`Source`]: raw tracepoints hand the programs the
//! kernel's own `struct bio *` / `struct request *`, whose fields are read with
//! `bpf_probe_read_kernel` at offsets from BTF ([`RawLayout`]); the perf tracepoints of the
//! fallback hand them a record whose layout tracefs describes ([`Source::Record`]). The disk in
//! a key is its `struct request_queue` pointer in the first (a request's `q`, a bio's block
//! device's `bd_queue`: one read fewer than the `gendisk`), the disk's `dev_t` in the second.

use super::asm::{Alu, Asm, AsmError, Cond, Helper, Insn, Label, Reg, Size};
use super::btf::{Arg, Btf, Member};
use super::hist::{self, Word};
use super::tracefs::{Event, Field};

/// The events the programs attach to, in the order [`programs`] returns them.
pub const EVENTS: [&str; 7] = [
    "block_bio_queue",
    "block_split",
    "block_bio_backmerge",
    "block_bio_frontmerge",
    "block_rq_merge",
    "block_rq_issue",
    "block_rq_complete",
];

/// Which bios start an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Select {
    /// Those a thread of this thread group (`tgid`) submits.
    Process { tgid: u32 },
    /// Those sent to this device: its disk or, when the file is on one, its partition (kernel
    /// `dev_t`s: `major << 20 | minor`).
    Device { disk: u32, partition: Option<u32> },
}

/// Which direction of bios start an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `REQ_OP_READ`.
    Read,
    /// `REQ_OP_WRITE`.
    Write,
}

/// What the generator needs beyond the layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub select: Select,
    /// Only bios of this direction; `None`: every bio.
    pub direction: Option<Direction>,
    /// A partition's number and its disk's (kernel `dev_t`s), for the record source: a bio
    /// event names the partition a bio was sent to, a request event the disk, so a bio's
    /// device is translated before it is used as a key. `None` when the file's device is a
    /// whole disk (or unknown). The raw source reads the disk itself.
    pub partition: Option<(u32, u32)>,
    pub inflight_fd: i32,
    pub stats_fd: i32,
}

/// A field the programs need that the kernel does not describe in the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place} has no {field} of {size} bytes at an aligned offset")]
pub struct LayoutError {
    /// `tracepoint block_rq_issue`, `struct request`.
    pub place: String,
    pub field: &'static str,
    pub size: usize,
}

/// Why the programs could not be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenError {
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(transparent)]
    Asm(#[from] AsmError),
}

/// The kernel's structures as the raw-tracepoint programs read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLayout {
    /// Per event of [`EVENTS`]: the argument holding the bio or request pointer.
    ptr_arg: [usize; 7],
    /// `block_rq_complete`'s `blk_status_t` argument, if it has one.
    error_arg: Option<usize>,
    rq_q: Member,
    rq_sector: Member,
    rq_bytes: Member,
    bio_bdev: Member,
    bio_sector: Member,
    bio_size: Member,
    bio_opf: Member,
    bdev_queue: Member,
    bdev_dev: Member,
}

impl RawLayout {
    /// Reads the layout from BTF: the fields and each tracepoint's arguments.
    pub fn from_btf(btf: &Btf) -> Result<RawLayout, LayoutError> {
        let field = |s: &'static str, path: &[&'static str], sizes: &[usize]| {
            let missing = || LayoutError {
                place: format!("struct {s}"),
                field: path[path.len() - 1],
                size: sizes[0],
            };
            let m = btf.field(s, path).ok_or_else(missing)?;
            if sizes.contains(&m.size) && m.offset % m.size == 0 {
                Ok(m)
            } else {
                Err(missing())
            }
        };
        let mut ptr_arg = [0; 7];
        let mut error_arg = None;
        for (i, name) in EVENTS.iter().enumerate() {
            let want = if name.starts_with("block_rq") {
                "request"
            } else {
                "bio"
            };
            let missing = || LayoutError {
                place: format!("raw tracepoint {name}"),
                field: if want == "bio" {
                    "struct bio * argument"
                } else {
                    "struct request * argument"
                },
                size: 8,
            };
            let args = btf.tracepoint_args(name).ok_or_else(missing)?;
            ptr_arg[i] = args
                .iter()
                .position(|a| *a == Arg::StructPtr(want.into()))
                .ok_or_else(missing)?;
            if *name == "block_rq_complete" {
                error_arg = args
                    .iter()
                    .position(|a| *a == Arg::Value("blk_status_t".into()));
            }
        }
        Ok(RawLayout {
            ptr_arg,
            error_arg,
            rq_q: field("request", &["q"], &[8])?,
            rq_sector: field("request", &["__sector"], &[8])?,
            rq_bytes: field("request", &["__data_len"], &[4])?,
            bio_bdev: field("bio", &["bi_bdev"], &[8])?,
            bio_sector: field("bio", &["bi_iter", "bi_sector"], &[8])?,
            bio_size: field("bio", &["bi_iter", "bi_size"], &[4])?,
            bio_opf: field("bio", &["bi_opf"], &[4])?,
            bdev_queue: field("block_device", &["bd_queue"], &[8])?,
            bdev_dev: field("block_device", &["bd_dev"], &[4])?,
        })
    }
}

/// Where the programs read their fields.
#[derive(Debug, Clone)]
pub enum Source {
    /// Raw tracepoints (`BPF_PROG_TYPE_RAW_TRACEPOINT`): the kernel's structures, through BTF.
    Raw(Box<RawLayout>),
    /// Perf tracepoints (`BPF_PROG_TYPE_TRACEPOINT`): the records tracefs describes, in
    /// [`EVENTS`]' order.
    Record(Vec<Event>),
}

// Stack slots (offsets from r10); every slot is 8-aligned, as the verifier wants.
/// The in-flight key: disk (8 bytes) then sector (8 bytes).
const KEY: i16 = -16;
const VALUE: i16 = -32;
const STATS_KEY: i16 = -40;
const KEY2: i16 = -56;
/// An event's other figure (new sector, sectors, bytes, error), as 8 bytes.
const EXTRA: i16 = -64;
/// The device number a bio was sent to (4 bytes, then 4 of zero).
const DEVNUM: i16 = -72;
/// A bio's operation: 0 read, 1 write, others (flush, discard, ...) above (8 bytes).
const OP: i16 = -80;
/// Bytes copied from a structure by `bpf_probe_read_kernel`.
const SCRATCH: i16 = -160;
const SCRATCH_BYTES: usize = 80;
/// The two table indexes of the key being looked up (u32 each).
const WAY0: i16 = -168;
const WAY1: i16 = -164;
/// `bpf_probe_read_kernel` (Linux 5.5).
const PROBE_READ_KERNEL: i32 = 113;

/// One generated program and the event it goes to.
#[derive(Debug, Clone)]
pub struct Program {
    pub event: &'static str,
    pub insns: Vec<Insn>,
}

/// What a loader puts on the stack besides the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Extra {
    None,
    /// `block_split`: where the rest of the bio starts.
    NewSector,
    /// `block_bio_frontmerge`: the bio's length in sectors.
    Sectors,
    /// `block_rq_issue`: the request's bytes.
    Bytes,
    /// `block_rq_complete`: nonzero on an error (0 when the source has no error).
    Error,
    /// `block_bio_queue`: the device number the bio was sent to, at [`DEVNUM`], and its
    /// operation at [`OP`].
    DevNum,
}

/// `REQ_OP_MASK`: a bio's operation is the low 8 bits of its `bi_opf`.
const REQ_OP_MASK: i32 = 0xff;

fn record_field(e: &Event, name: &'static str, size: usize) -> Result<i16, LayoutError> {
    match e.field(name) {
        Some(Field { offset, size: s }) if s == size && offset % size == 0 && offset < 4096 => {
            Ok(offset as i16)
        }
        _ => Err(LayoutError {
            place: format!("tracepoint {}", e.name),
            field: name,
            size,
        }),
    }
}

/// `reg = r10 + off`.
fn stack_ptr(a: &mut Asm, reg: Reg, off: i16) {
    a.mov(reg, Reg::R10).alu_imm(Alu::Add, reg, i32::from(off));
}

/// Copies `len` bytes from `ptr_reg + off` to the stack at `to` (clobbers r1-r5; `ptr_reg`
/// must be r6-r9). A failed read leaves zeros, which match no entry.
fn probe_read(a: &mut Asm, to: i16, len: usize, ptr_reg: Reg, off: usize) {
    stack_ptr(a, Reg::R1, to);
    a.mov_imm(Reg::R2, len as i32)
        .mov(Reg::R3, ptr_reg)
        .alu_imm(Alu::Add, Reg::R3, off as i32);
    a.push_call(PROBE_READ_KERNEL);
}

/// Reads `fields` of the structure at `ptr_reg` into the scratch area with as few calls as
/// fit; returns where each landed on the stack.
fn read_fields(a: &mut Asm, ptr_reg: Reg, fields: &[Member]) -> Vec<i16> {
    let lo = fields.iter().map(|m| m.offset).min().unwrap_or(0) & !7;
    let hi = fields.iter().map(|m| m.offset + m.size).max().unwrap_or(0);
    if hi - lo <= SCRATCH_BYTES {
        probe_read(a, SCRATCH, hi - lo, ptr_reg, lo);
        return fields
            .iter()
            .map(|m| SCRATCH + (m.offset - lo) as i16)
            .collect();
    }
    fields
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let at = SCRATCH + 8 * i as i16;
            probe_read(a, at, m.size, ptr_reg, m.offset);
            at
        })
        .collect()
}

fn size_of(m: &Member) -> Size {
    if m.size == 8 {
        Size::DW
    } else {
        Size::W
    }
}

/// Writes the key (and `extra`) of bio event number `ev` at [`KEY`].
fn load_bio(
    a: &mut Asm,
    src: &Source,
    p: &Params,
    ev: usize,
    extra: Extra,
) -> Result<(), GenError> {
    match src {
        Source::Raw(l) => {
            a.load(Size::DW, Reg::R7, Reg::R6, 8 * l.ptr_arg[ev] as i16);
            let at = read_fields(
                a,
                Reg::R7,
                &[l.bio_bdev, l.bio_sector, l.bio_size, l.bio_opf],
            );
            if extra == Extra::DevNum {
                a.load(Size::W, Reg::R1, Reg::R10, at[3])
                    .alu_imm(Alu::And, Reg::R1, REQ_OP_MASK)
                    .store(Size::DW, Reg::R10, OP, Reg::R1);
            }
            a.load(Size::DW, Reg::R1, Reg::R10, at[1])
                .store(Size::DW, Reg::R10, KEY + 8, Reg::R1)
                .load(Size::W, Reg::R2, Reg::R10, at[2])
                .alu_imm(Alu::Rsh, Reg::R2, 9);
            match extra {
                Extra::NewSector => {
                    a.alu_reg(Alu::Add, Reg::R2, Reg::R1)
                        .store(Size::DW, Reg::R10, EXTRA, Reg::R2);
                }
                Extra::Sectors => {
                    a.store(Size::DW, Reg::R10, EXTRA, Reg::R2);
                }
                _ => {}
            }
            // The bio's block device: its queue (the key's) and, for the device filter, its
            // number, in one read where they lie close.
            a.load(Size::DW, Reg::R7, Reg::R10, at[0]);
            let fields: &[Member] = if extra == Extra::DevNum {
                &[l.bdev_queue, l.bdev_dev]
            } else {
                &[l.bdev_queue]
            };
            let at = read_fields(a, Reg::R7, fields);
            a.load(Size::DW, Reg::R1, Reg::R10, at[0])
                .store(Size::DW, Reg::R10, KEY, Reg::R1);
            if extra == Extra::DevNum {
                a.load(Size::W, Reg::R1, Reg::R10, at[1]).store(
                    Size::DW,
                    Reg::R10,
                    DEVNUM,
                    Reg::R1,
                );
            }
        }
        Source::Record(events) => {
            let e = &events[ev];
            a.load(Size::W, Reg::R1, Reg::R6, record_field(e, "dev", 4)?);
            if extra == Extra::DevNum {
                a.store(Size::W, Reg::R10, DEVNUM, Reg::R1).store_imm(
                    Size::W,
                    Reg::R10,
                    DEVNUM + 4,
                    0,
                );
                record_op(a, e)?;
            }
            if let Some((part, disk)) = p.partition {
                let whole = a.label();
                a.jump32_imm(Cond::Ne, Reg::R1, part, whole)
                    .mov32_imm(Reg::R1, disk)
                    .bind(whole);
            }
            a.store(Size::W, Reg::R10, KEY, Reg::R1)
                .store_imm(Size::W, Reg::R10, KEY + 4, 0)
                .load(Size::DW, Reg::R2, Reg::R6, record_field(e, "sector", 8)?)
                .store(Size::DW, Reg::R10, KEY + 8, Reg::R2);
            match extra {
                Extra::NewSector => {
                    a.load(
                        Size::DW,
                        Reg::R2,
                        Reg::R6,
                        record_field(e, "new_sector", 8)?,
                    )
                    .store(Size::DW, Reg::R10, EXTRA, Reg::R2);
                }
                Extra::Sectors => {
                    a.load(Size::W, Reg::R2, Reg::R6, record_field(e, "nr_sector", 4)?)
                        .store(Size::DW, Reg::R10, EXTRA, Reg::R2);
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The record source's operation, from `rwbs` (`R`, `W`, `FWS` for a write with a flush
/// first, `D` discard, ...): 0 read, 1 write, 2 anything else, at [`OP`] (clobbers r2, r3).
fn record_op(a: &mut Asm, e: &Event) -> Result<(), GenError> {
    let rwbs = match e.field("rwbs") {
        Some(f) if f.size >= 2 && f.offset < 4096 => f.offset as i16,
        _ => {
            return Err(LayoutError {
                place: format!("tracepoint {}", e.name),
                field: "rwbs",
                size: 10,
            }
            .into())
        }
    };
    let (second, known) = (a.label(), a.label());
    a.load(Size::B, Reg::R2, Reg::R6, rwbs)
        .jump_imm(Cond::Ne, Reg::R2, i32::from(b'F'), second)
        .load(Size::B, Reg::R2, Reg::R6, rwbs + 1)
        .bind(second)
        .mov_imm(Reg::R3, 0)
        .jump_imm(Cond::Eq, Reg::R2, i32::from(b'R'), known)
        .mov_imm(Reg::R3, 1)
        .jump_imm(Cond::Eq, Reg::R2, i32::from(b'W'), known)
        .mov_imm(Reg::R3, 2)
        .bind(known)
        .store(Size::DW, Reg::R10, OP, Reg::R3);
    Ok(())
}

/// Writes the key (and `extra`) of request event number `ev` at [`KEY`].
fn load_rq(a: &mut Asm, src: &Source, ev: usize, extra: Extra) -> Result<(), GenError> {
    match src {
        Source::Raw(l) => {
            if extra == Extra::Error {
                match l.error_arg {
                    Some(i) => {
                        a.load(Size::DW, Reg::R1, Reg::R6, 8 * i as i16)
                            .alu_imm(Alu::And, Reg::R1, 0xff)
                            .store(Size::DW, Reg::R10, EXTRA, Reg::R1);
                    }
                    None => {
                        a.store_imm(Size::DW, Reg::R10, EXTRA, 0);
                    }
                }
            }
            a.load(Size::DW, Reg::R7, Reg::R6, 8 * l.ptr_arg[ev] as i16);
            let at = read_fields(a, Reg::R7, &[l.rq_q, l.rq_sector, l.rq_bytes]);
            a.load(Size::DW, Reg::R1, Reg::R10, at[1])
                .store(Size::DW, Reg::R10, KEY + 8, Reg::R1);
            if extra == Extra::Bytes {
                a.load(size_of(&l.rq_bytes), Reg::R1, Reg::R10, at[2])
                    .store(Size::DW, Reg::R10, EXTRA, Reg::R1);
            }
            a.load(Size::DW, Reg::R1, Reg::R10, at[0])
                .store(Size::DW, Reg::R10, KEY, Reg::R1);
        }
        Source::Record(events) => {
            let e = &events[ev];
            a.load(Size::W, Reg::R1, Reg::R6, record_field(e, "dev", 4)?)
                .store(Size::W, Reg::R10, KEY, Reg::R1)
                .store_imm(Size::W, Reg::R10, KEY + 4, 0)
                .load(Size::DW, Reg::R2, Reg::R6, record_field(e, "sector", 8)?)
                .store(Size::DW, Reg::R10, KEY + 8, Reg::R2);
            match extra {
                Extra::Bytes => {
                    a.load(Size::W, Reg::R1, Reg::R6, record_field(e, "bytes", 4)?)
                        .store(Size::DW, Reg::R10, EXTRA, Reg::R1);
                }
                Extra::Error => {
                    a.load(Size::W, Reg::R1, Reg::R6, record_field(e, "error", 4)?)
                        .store(Size::DW, Reg::R10, EXTRA, Reg::R1);
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The programs for `src` (in [`EVENTS`]' order).
pub fn programs(src: &Source, p: &Params) -> Result<Vec<Program>, GenError> {
    let mut out = Vec::new();
    for (ev, name) in EVENTS.iter().enumerate() {
        let insns = match *name {
            "block_bio_queue" => bio_queue(src, p, ev)?,
            "block_split" => split(src, p, ev)?,
            "block_bio_backmerge" => back_merge(src, p, ev)?,
            "block_bio_frontmerge" => front_merge(src, p, ev)?,
            "block_rq_merge" => rq_merge(src, p, ev)?,
            "block_rq_issue" => issue(src, p, ev)?,
            _ => complete(src, p, ev)?,
        };
        out.push(Program { event: name, insns });
    }
    Ok(out)
}

/// log2 of the in-flight table's entries ([`SLOTS`]).
pub const SLOT_BITS: u32 = 16;
/// Entries of the in-flight table: 2 MiB of 32-byte records, two places per key.
pub const SLOTS: u32 = 1 << SLOT_BITS;
/// Bytes of one record: the key (disk, sector), the entry time, the issue time.
pub const SLOT_BYTES: u32 = 32;
const SLOT_KEY: i16 = 0;
const SLOT_SECTOR: i16 = 8;
const SLOT_START: i16 = 16;
const SLOT_ISSUE: i16 = 24;
/// Fibonacci hashing's multiplier (2^64 / golden ratio).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// Writes the two table indexes of the key at `key_at` to [`WAY0`] and [`WAY1`]: a
/// multiplicative hash of the sector and the disk, rounded down to even (clobbers r1, r2).
fn ways(a: &mut Asm, key_at: i16) {
    a.load(Size::DW, Reg::R1, Reg::R10, key_at + 8)
        .load(Size::DW, Reg::R2, Reg::R10, key_at)
        .alu_imm(Alu::Rsh, Reg::R2, 4)
        .alu_reg(Alu::Xor, Reg::R1, Reg::R2)
        .load_imm64(Reg::R2, GOLDEN)
        .alu_reg(Alu::Mul, Reg::R1, Reg::R2)
        .alu_imm(Alu::Rsh, Reg::R1, 64 - SLOT_BITS as i32)
        .alu_imm(Alu::And, Reg::R1, -2)
        .store(Size::W, Reg::R10, WAY0, Reg::R1)
        .alu_imm(Alu::Add, Reg::R1, 1)
        .store(Size::W, Reg::R10, WAY1, Reg::R1);
}

/// r0 = the record at the index stored at `way` (to `miss` if none: never, the index is in
/// range, but the verifier wants the check). An array map's lookup, which the kernel inlines:
/// no hashing, no lock.
fn record(a: &mut Asm, p: &Params, way: i16, miss: Label) {
    a.load_map_fd(Reg::R1, p.inflight_fd);
    stack_ptr(a, Reg::R2, way);
    a.call(Helper::MapLookupElem)
        .jump_imm(Cond::Eq, Reg::R0, 0, miss);
}

/// Jumps to `no` unless the record at `rec` holds the key at `key_at` (clobbers r1, r2).
fn holds(a: &mut Asm, rec: Reg, key_at: i16, no: Label) {
    a.load(Size::DW, Reg::R1, rec, SLOT_KEY)
        .load(Size::DW, Reg::R2, Reg::R10, key_at)
        .jump_reg(Cond::Ne, Reg::R1, Reg::R2, no)
        .load(Size::DW, Reg::R1, rec, SLOT_SECTOR)
        .load(Size::DW, Reg::R2, Reg::R10, key_at + 8)
        .jump_reg(Cond::Ne, Reg::R1, Reg::R2, no);
}

/// `into` = the record of the key at `key_at`, or to `miss` when neither of its places holds
/// it (the request is not the run's).
fn find(a: &mut Asm, p: &Params, key_at: i16, into: Reg, miss: Label) {
    let (second, found) = (a.label(), a.label());
    ways(a, key_at);
    record(a, p, WAY0, miss);
    holds(a, Reg::R0, key_at, second);
    a.mov(into, Reg::R0).jump(found).bind(second);
    record(a, p, WAY1, miss);
    holds(a, Reg::R0, key_at, miss);
    a.mov(into, Reg::R0).bind(found);
}

/// Empties the record at `rec`.
fn clear(a: &mut Asm, rec: Reg) {
    for off in [SLOT_KEY, SLOT_SECTOR, SLOT_START, SLOT_ISSUE] {
        a.store_imm(Size::DW, rec, off, 0);
    }
}

/// Records the key at `key_at` with the times at [`VALUE`] (entry, issue): in the place that
/// holds it already (a collision: counted), else in an empty one, else in place of the older
/// of the two (an eviction: counted). Needs r7 (the counters); clobbers r1-r5, r8, r9.
fn insert(a: &mut Asm, p: &Params, key_at: i16, out: Label) {
    let (same, write, check1, take1, older) =
        (a.label(), a.label(), a.label(), a.label(), a.label());
    ways(a, key_at);
    record(a, p, WAY0, out);
    a.mov(Reg::R8, Reg::R0);
    record(a, p, WAY1, out);
    a.mov(Reg::R9, Reg::R0);
    holds(a, Reg::R8, key_at, check1);
    a.jump(same).bind(check1);
    let free = a.label();
    holds(a, Reg::R9, key_at, free);
    a.mov(Reg::R8, Reg::R9).jump(same).bind(free);
    a.load(Size::DW, Reg::R1, Reg::R8, SLOT_START)
        .jump_imm(Cond::Eq, Reg::R1, 0, write)
        .load(Size::DW, Reg::R1, Reg::R9, SLOT_START)
        .jump_imm(Cond::Eq, Reg::R1, 0, take1);
    count(a, Word::Evictions);
    a.load(Size::DW, Reg::R1, Reg::R8, SLOT_START)
        .load(Size::DW, Reg::R2, Reg::R9, SLOT_START)
        .jump_reg(Cond::Le, Reg::R1, Reg::R2, write)
        .jump(older);
    a.bind(same);
    // A record of the run at the same sector: the older one is stale or about to be mixed up
    // with this one; this bio's replaces it.
    count(a, Word::Collisions);
    a.jump(write);
    a.bind(take1).bind(older).mov(Reg::R8, Reg::R9).bind(write);
    a.load(Size::DW, Reg::R1, Reg::R10, key_at)
        .store(Size::DW, Reg::R8, SLOT_KEY, Reg::R1)
        .load(Size::DW, Reg::R1, Reg::R10, key_at + 8)
        .store(Size::DW, Reg::R8, SLOT_SECTOR, Reg::R1)
        .load(Size::DW, Reg::R1, Reg::R10, VALUE)
        .store(Size::DW, Reg::R8, SLOT_START, Reg::R1)
        .load(Size::DW, Reg::R1, Reg::R10, VALUE + 8)
        .store(Size::DW, Reg::R8, SLOT_ISSUE, Reg::R1);
}

/// r7 = this CPU's counters, or to `out` (never: the array's one element always exists, but
/// the verifier wants the check).
fn stats(a: &mut Asm, p: &Params, out: Label) {
    a.store_imm(Size::DW, Reg::R10, STATS_KEY, 0)
        .load_map_fd(Reg::R1, p.stats_fd);
    stack_ptr(a, Reg::R2, STATS_KEY);
    a.call(Helper::MapLookupElem)
        .jump_imm(Cond::Eq, Reg::R0, 0, out)
        .mov(Reg::R7, Reg::R0);
}

fn word_off(index: usize) -> i16 {
    (index * 8) as i16
}

/// Counters[w] += 1 (r7: the counters; clobbers r1).
fn count(a: &mut Asm, w: Word) {
    a.mov_imm(Reg::R1, 1)
        .atomic_add(Reg::R7, word_off(w.index()), Reg::R1);
}

/// Adds one to the histogram at word `base`, in the bucket of r1 ns (r7: the counters;
/// clobbers r2-r5, keeps r1). The mapping is [`hist::bucket_of`]'s.
pub fn emit_bucket(a: &mut Asm, base: usize) {
    let top = (hist::BUCKETS - 1) as i32;
    let small = 2 * hist::SUB_BUCKETS as i32;
    let done = a.label();
    a.mov(Reg::R2, Reg::R1)
        .jump_imm(Cond::Lt, Reg::R1, small, done)
        // r3 = floor(log2 r1), by halving the search six times.
        .mov_imm(Reg::R3, 0)
        .mov(Reg::R4, Reg::R1);
    for s in [32, 16, 8, 4, 2, 1] {
        let skip = a.label();
        a.mov(Reg::R5, Reg::R4)
            .alu_imm(Alu::Rsh, Reg::R5, s)
            .jump_imm(Cond::Eq, Reg::R5, 0, skip)
            .mov(Reg::R4, Reg::R5)
            .alu_imm(Alu::Add, Reg::R3, s)
            .bind(skip);
    }
    let sub_bits = hist::SUB_BITS as i32;
    a.mov_imm(Reg::R2, top)
        .jump_imm(Cond::Gt, Reg::R3, hist::TOP_OCTAVE as i32, done)
        // sub = (v >> (k - SUB_BITS)) & (SUB_BUCKETS - 1)
        .mov(Reg::R5, Reg::R3)
        .alu_imm(Alu::Sub, Reg::R5, sub_bits)
        .mov(Reg::R4, Reg::R1)
        .alu_reg(Alu::Rsh, Reg::R4, Reg::R5)
        .alu_imm(Alu::And, Reg::R4, hist::SUB_BUCKETS as i32 - 1)
        // index = (k - SUB_BITS + 1) * SUB_BUCKETS + sub
        .mov(Reg::R2, Reg::R3)
        .alu_imm(Alu::Sub, Reg::R2, sub_bits - 1)
        .alu_imm(Alu::Lsh, Reg::R2, sub_bits)
        .alu_reg(Alu::Add, Reg::R2, Reg::R4)
        .bind(done);
    // The bound the verifier needs for the pointer arithmetic below.
    let bounded = a.label();
    a.jump_imm(Cond::Le, Reg::R2, top, bounded)
        .mov_imm(Reg::R2, top)
        .bind(bounded)
        .alu_imm(Alu::Lsh, Reg::R2, 3)
        .mov(Reg::R3, Reg::R7)
        .alu_reg(Alu::Add, Reg::R3, Reg::R2)
        .mov_imm(Reg::R4, 1)
        .atomic_add(Reg::R3, word_off(base), Reg::R4);
}

/// The end every program jumps to: return 0 (nothing for perf to record).
fn finish(mut a: Asm, out: Label) -> Result<Vec<Insn>, AsmError> {
    a.bind(out).mov_imm(Reg::R0, 0).exit();
    a.finish()
}

fn bio_queue(src: &Source, p: &Params, ev: usize) -> Result<Vec<Insn>, GenError> {
    let mut a = Asm::new();
    let out = a.label();
    a.mov(Reg::R6, Reg::R1);
    if let Select::Process { tgid } = p.select {
        a.call(Helper::GetCurrentPidTgid)
            .alu_imm(Alu::Rsh, Reg::R0, 32)
            .jump_imm(Cond::Ne, Reg::R0, tgid as i32, out);
    }
    load_bio(&mut a, src, p, ev, Extra::DevNum)?;
    if let Select::Device { disk, partition } = p.select {
        let mine = a.label();
        a.load(Size::W, Reg::R1, Reg::R10, DEVNUM);
        if let Some(part) = partition {
            a.jump32_imm(Cond::Eq, Reg::R1, part, mine);
        }
        a.jump32_imm(Cond::Ne, Reg::R1, disk, out).bind(mine);
    }
    if let Some(d) = p.direction {
        let op = match d {
            Direction::Read => 0,
            Direction::Write => 1,
        };
        a.load(Size::DW, Reg::R1, Reg::R10, OP)
            .jump_imm(Cond::Ne, Reg::R1, op, out);
    }
    a.call(Helper::KtimeGetNs)
        .store(Size::DW, Reg::R10, VALUE, Reg::R0)
        .store_imm(Size::DW, Reg::R10, VALUE + 8, 0);
    stats(&mut a, p, out);
    count(&mut a, Word::Bios);
    insert(&mut a, p, KEY, out);
    Ok(finish(a, out)?)
}

fn split(src: &Source, p: &Params, ev: usize) -> Result<Vec<Insn>, GenError> {
    let mut a = Asm::new();
    let out = a.label();
    a.mov(Reg::R6, Reg::R1);
    load_bio(&mut a, src, p, ev, Extra::NewSector)?;
    // KEY2: the rest of the bio, on the same disk from the new sector.
    a.load(Size::DW, Reg::R1, Reg::R10, KEY)
        .store(Size::DW, Reg::R10, KEY2, Reg::R1)
        .load(Size::DW, Reg::R1, Reg::R10, EXTRA)
        .store(Size::DW, Reg::R10, KEY2 + 8, Reg::R1);
    find(&mut a, p, KEY, Reg::R8, out);
    // The rest of the bio keeps the time it entered the block layer.
    a.load(Size::DW, Reg::R1, Reg::R8, SLOT_START)
        .store(Size::DW, Reg::R10, VALUE, Reg::R1)
        .store_imm(Size::DW, Reg::R10, VALUE + 8, 0);
    stats(&mut a, p, out);
    count(&mut a, Word::Splits);
    insert(&mut a, p, KEY2, out);
    Ok(finish(a, out)?)
}

fn back_merge(src: &Source, p: &Params, ev: usize) -> Result<Vec<Insn>, GenError> {
    let mut a = Asm::new();
    let out = a.label();
    a.mov(Reg::R6, Reg::R1);
    load_bio(&mut a, src, p, ev, Extra::None)?;
    find(&mut a, p, KEY, Reg::R8, out);
    clear(&mut a, Reg::R8);
    stats(&mut a, p, out);
    count(&mut a, Word::Merges);
    Ok(finish(a, out)?)
}

fn front_merge(src: &Source, p: &Params, ev: usize) -> Result<Vec<Insn>, GenError> {
    let mut a = Asm::new();
    let out = a.label();
    let alone = a.label();
    a.mov(Reg::R6, Reg::R1);
    load_bio(&mut a, src, p, ev, Extra::Sectors)?;
    // KEY2: the request the bio joins, which starts where the bio ends.
    a.load(Size::DW, Reg::R1, Reg::R10, KEY)
        .store(Size::DW, Reg::R10, KEY2, Reg::R1)
        .load(Size::DW, Reg::R1, Reg::R10, KEY + 8)
        .load(Size::DW, Reg::R2, Reg::R10, EXTRA)
        .alu_reg(Alu::Add, Reg::R1, Reg::R2)
        .store(Size::DW, Reg::R10, KEY2 + 8, Reg::R1);
    find(&mut a, p, KEY, Reg::R8, out);
    clear(&mut a, Reg::R8);
    stats(&mut a, p, out);
    count(&mut a, Word::Merges);
    find(&mut a, p, KEY2, Reg::R8, alone);
    // The request now starts at the bio's sector: its record moves there.
    a.load(Size::DW, Reg::R1, Reg::R8, SLOT_START)
        .store(Size::DW, Reg::R10, VALUE, Reg::R1)
        .load(Size::DW, Reg::R1, Reg::R8, SLOT_ISSUE)
        .store(Size::DW, Reg::R10, VALUE + 8, Reg::R1);
    clear(&mut a, Reg::R8);
    insert(&mut a, p, KEY, out);
    a.bind(alone);
    Ok(finish(a, out)?)
}

fn rq_merge(src: &Source, p: &Params, ev: usize) -> Result<Vec<Insn>, GenError> {
    let mut a = Asm::new();
    let out = a.label();
    a.mov(Reg::R6, Reg::R1);
    load_rq(&mut a, src, ev, Extra::None)?;
    find(&mut a, p, KEY, Reg::R8, out);
    clear(&mut a, Reg::R8);
    stats(&mut a, p, out);
    count(&mut a, Word::Merges);
    Ok(finish(a, out)?)
}

fn issue(src: &Source, p: &Params, ev: usize) -> Result<Vec<Insn>, GenError> {
    let mut a = Asm::new();
    let out = a.label();
    let first = a.label();
    a.mov(Reg::R6, Reg::R1);
    load_rq(&mut a, src, ev, Extra::Bytes)?;
    find(&mut a, p, KEY, Reg::R8, out);
    a.call(Helper::KtimeGetNs).mov(Reg::R9, Reg::R0);
    stats(&mut a, p, out);
    // The last issue starts the device's time: a request the driver gave back (requeued)
    // waited in the block layer again until it was issued again.
    a.load(Size::DW, Reg::R1, Reg::R8, SLOT_ISSUE)
        .store(Size::DW, Reg::R8, SLOT_ISSUE, Reg::R9)
        .jump_imm(Cond::Eq, Reg::R1, 0, first);
    count(&mut a, Word::Requeues);
    a.jump(out).bind(first);
    count(&mut a, Word::Issued);
    a.load(Size::DW, Reg::R1, Reg::R10, EXTRA).atomic_add(
        Reg::R7,
        word_off(Word::IssuedBytes.index()),
        Reg::R1,
    );
    Ok(finish(a, out)?)
}

/// Both times are recorded at completion, from the record's entry and last issue stamps.
fn complete(src: &Source, p: &Params, ev: usize) -> Result<Vec<Insn>, GenError> {
    let mut a = Asm::new();
    let out = a.label();
    let issued = a.label();
    let remove = a.label();
    a.mov(Reg::R6, Reg::R1);
    load_rq(&mut a, src, ev, Extra::Error)?;
    find(&mut a, p, KEY, Reg::R8, out);
    a.call(Helper::KtimeGetNs).mov(Reg::R9, Reg::R0);
    stats(&mut a, p, out);
    a.load(Size::DW, Reg::R2, Reg::R8, SLOT_ISSUE)
        .jump_imm(Cond::Ne, Reg::R2, 0, issued);
    count(&mut a, Word::Unissued);
    a.jump(remove).bind(issued);
    // Queue: entry -> last issue.
    a.mov(Reg::R1, Reg::R2)
        .load(Size::DW, Reg::R3, Reg::R8, SLOT_START)
        .alu_reg(Alu::Sub, Reg::R1, Reg::R3)
        .atomic_add(Reg::R7, word_off(Word::QueueSumNs.index()), Reg::R1);
    emit_bucket(&mut a, hist::QUEUE_BASE);
    // Device: last issue -> now.
    a.mov(Reg::R1, Reg::R9)
        .load(Size::DW, Reg::R2, Reg::R8, SLOT_ISSUE)
        .alu_reg(Alu::Sub, Reg::R1, Reg::R2)
        .atomic_add(Reg::R7, word_off(Word::DeviceSumNs.index()), Reg::R1);
    emit_bucket(&mut a, hist::DEVICE_BASE);
    count(&mut a, Word::Requests);
    a.load(Size::DW, Reg::R1, Reg::R10, EXTRA)
        .jump32_imm(Cond::Eq, Reg::R1, 0, remove);
    count(&mut a, Word::Errors);
    a.bind(remove);
    clear(&mut a, Reg::R8);
    Ok(finish(a, out)?)
}

#[cfg(test)]
mod tests {
    use super::super::sys;
    use super::*;
    use std::os::fd::AsRawFd;

    /// The bucket code run by the kernel itself (a raw tracepoint program that files its
    /// argument, run with `BPF_PROG_TEST_RUN`) lands every value where [`hist::bucket_of`]
    /// says: the bucket edges, both sides of each octave, and past the top.
    #[test]
    fn the_kernel_files_each_time_in_the_bucket_the_reader_expects() {
        let _alone = super::super::tests::BPF_TESTS
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Err(why) = super::super::check() {
            eprintln!("skipped: kernel view unavailable: {why}");
            return;
        }
        let map = sys::map_create(
            sys::MapType::PercpuArray,
            4,
            (hist::WORDS * 8) as u32,
            1,
            0,
            "ds_test",
        )
        .unwrap();
        let p = Params {
            select: Select::Process { tgid: 0 },
            direction: None,
            partition: None,
            inflight_fd: -1,
            stats_fd: map.as_raw_fd(),
        };
        let mut a = Asm::new();
        let out = a.label();
        a.mov(Reg::R6, Reg::R1);
        stats(&mut a, &p, out);
        a.load(Size::DW, Reg::R1, Reg::R6, 0);
        emit_bucket(&mut a, hist::DEVICE_BASE);
        let insns = finish(a, out).unwrap();
        let prog = sys::prog_load(sys::ProgType::RawTracepoint, &insns, c"GPL", "ds_bucket")
            .unwrap_or_else(|e| panic!("{}: {}", e.error, e.log));
        let cpus = sys::possible_cpus().unwrap();
        let mut values: Vec<u64> = (0..40u32)
            .flat_map(|k| {
                let o = 1u64 << k;
                [o, o + o / 8, o + o / 2, 2 * o - 1, o.saturating_sub(1)]
            })
            .collect();
        values.extend([0, 1, 15, 16, 17, 1 << 40, u64::MAX]);
        let mut before = super::super::Counts::default();
        for v in values {
            if let Err(e) = sys::test_run_raw(&prog, &[v]) {
                eprintln!("skipped: BPF_PROG_TEST_RUN of a raw tracepoint program: {e}");
                return;
            }
            let mut raw = vec![0u8; cpus * hist::WORDS * 8];
            sys::map_lookup(&map, &0u32.to_ne_bytes(), &mut raw).unwrap();
            let now = super::super::Counts::from_per_cpu(&raw, cpus);
            let d = now.since(&before);
            let filed: Vec<usize> = (0..hist::BUCKETS)
                .filter(|i| d.device.buckets[*i] > 0)
                .collect();
            assert_eq!(filed, vec![hist::bucket_of(v)], "value {v}");
            before = now;
        }
    }
}
