//! The system calls under the kernel view: `bpf(2)` (create a map, load a program, read and
//! write a map's element, a program's counters) and `perf_event_open(2)` with its two ioctls
//! (attach a program to a tracepoint, enable it). Every object comes back as an [`OwnedFd`], so
//! dropping it (or unwinding through it on a panic, or the process ending) closes it and the
//! kernel detaches and frees what it held: nothing outlives the handle that made it.
//!
//! Each `bpf_attr` variant is written out as a `#[repr(C)]` struct holding the fields this code
//! sets, in the kernel's order (`include/uapi/linux/bpf.h`); the kernel reads as many bytes as
//! it is told and treats the rest as zero.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const BPF_MAP_CREATE: libc::c_int = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_int = 1;
const BPF_MAP_UPDATE_ELEM: libc::c_int = 2;
const BPF_PROG_LOAD: libc::c_int = 5;
const BPF_OBJ_GET_INFO_BY_FD: libc::c_int = 15;

/// `enum bpf_map_type` values used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapType {
    Array = 2,
    PercpuArray = 6,
}

/// `BPF_F_MMAPABLE`: an array map whose values user space can map and read directly.
pub const MAP_MMAPABLE: u32 = 1 << 10;

/// The kinds of program the view loads (`enum bpf_prog_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgType {
    /// Run with a perf tracepoint's record as its context.
    Tracepoint = 5,
    /// Run with a raw tracepoint's arguments (`u64 args[]`) as its context.
    RawTracepoint = 17,
}

const BPF_RAW_TRACEPOINT_OPEN: libc::c_int = 17;

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// `_IOW('$', 8, __u32)`.
const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;
/// `_IO('$', 0)`.
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;

/// `bpf(cmd, attr, size)`, returning a descriptor or a value.
///
/// # Safety
/// `attr` must point at a live, initialised `T` laid out as the kernel expects for `cmd`,
/// whose pointer fields point at memory valid for what the command reads or writes.
unsafe fn bpf<T>(cmd: libc::c_int, attr: &mut T) -> io::Result<libc::c_long> {
    // SAFETY: the caller guarantees the attribute layout and its pointers (see above); the
    // size passed is the struct's own.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut T as *mut libc::c_void,
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// A descriptor that `bpf(2)` or `perf_event_open(2)` returned, owned from now on.
fn owned(r: libc::c_long) -> OwnedFd {
    // SAFETY: `r` is a new descriptor the kernel just returned to us and nothing else owns.
    unsafe { OwnedFd::from_raw_fd(r as RawFd) }
}

#[repr(C)]
#[derive(Default)]
struct MapCreateAttr {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

/// A new map; `name` (at most 15 bytes) shows in `bpftool map`.
pub fn map_create(
    kind: MapType,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    flags: u32,
    name: &str,
) -> io::Result<OwnedFd> {
    let mut attr = MapCreateAttr {
        map_type: kind as u32,
        key_size,
        value_size,
        max_entries,
        map_flags: flags,
        ..Default::default()
    };
    copy_name(&mut attr.map_name, name);
    // SAFETY: a MAP_CREATE attribute with no pointers.
    unsafe { bpf(BPF_MAP_CREATE, &mut attr) }.map(owned)
}

fn copy_name(to: &mut [u8; 16], name: &str) {
    let n = name.len().min(15);
    to[..n].copy_from_slice(&name.as_bytes()[..n]);
}

#[repr(C)]
struct ElemAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// Reads the element at `key` into `value` (for a per-CPU map: one slot per possible CPU,
/// each rounded up to 8 bytes). The caller sizes both buffers to the map's key and value.
pub fn map_lookup(map: &OwnedFd, key: &[u8], value: &mut [u8]) -> io::Result<()> {
    let mut attr = ElemAttr {
        map_fd: map.as_raw_fd() as u32,
        _pad: 0,
        key: key.as_ptr() as u64,
        value: value.as_mut_ptr() as u64,
        flags: 0,
    };
    // SAFETY: key and value point at live buffers of the map's sizes (the caller's contract);
    // the kernel writes at most the value's size into `value`.
    unsafe { bpf(BPF_MAP_LOOKUP_ELEM, &mut attr) }.map(|_| ())
}

/// Writes `value` at `key` (`BPF_ANY`: created or replaced).
pub fn map_update(map: &OwnedFd, key: &[u8], value: &[u8]) -> io::Result<()> {
    let mut attr = ElemAttr {
        map_fd: map.as_raw_fd() as u32,
        _pad: 0,
        key: key.as_ptr() as u64,
        value: value.as_ptr() as u64,
        flags: 0,
    };
    // SAFETY: key and value point at live buffers of the map's sizes; the kernel only reads.
    unsafe { bpf(BPF_MAP_UPDATE_ELEM, &mut attr) }.map(|_| ())
}

/// A copy of the first `len` bytes of a map made with [`MAP_MMAPABLE`] (an array's values,
/// back to back), read through a shared read-only mapping that is gone when this returns.
pub fn map_read_mapped(map: &OwnedFd, len: usize) -> io::Result<Vec<u8>> {
    // SAFETY: a fresh read-only shared mapping of `len` bytes of the map's descriptor; the
    // kernel checks the length against the map, and nothing else refers to the mapping.
    let at = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            map.as_raw_fd(),
            0,
        )
    };
    if at == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `at` is a live mapping of `len` readable bytes until the munmap below. The
    // programs may write it meanwhile: the copy is of plain integers, any value is valid.
    let copy = unsafe { std::slice::from_raw_parts(at as *const u8, len) }.to_vec();
    // SAFETY: unmaps exactly the mapping made above, which no reference outlives.
    unsafe { libc::munmap(at, len) };
    Ok(copy)
}

#[repr(C)]
#[derive(Default)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
}

/// A program the verifier refused, with what it said.
#[derive(Debug)]
pub struct LoadError {
    pub error: io::Error,
    /// The verifier's log (its last lines are the reason); empty when it wrote none.
    pub log: String,
}

/// Loads a program of `kind`. On refusal it loads again with the verifier's log on, so the
/// error says why (the first try runs without a log: the common case costs no log buffer).
pub fn prog_load(
    kind: ProgType,
    insns: &[super::asm::Insn],
    license: &CStr,
    name: &str,
) -> Result<OwnedFd, LoadError> {
    let bytes: Vec<u8> = insns.iter().flat_map(|i| i.to_bytes()).collect();
    let attempt = |log: &mut [u8]| {
        let mut attr = ProgLoadAttr {
            prog_type: kind as u32,
            insn_cnt: insns.len() as u32,
            insns: bytes.as_ptr() as u64,
            license: license.as_ptr() as u64,
            log_level: u32::from(!log.is_empty()),
            log_size: log.len() as u32,
            log_buf: if log.is_empty() {
                0
            } else {
                log.as_mut_ptr() as u64
            },
            ..Default::default()
        };
        copy_name(&mut attr.prog_name, name);
        // SAFETY: insns, license and log point at live buffers of the sizes given; the kernel
        // writes at most log_size bytes into the log.
        unsafe { bpf(BPF_PROG_LOAD, &mut attr) }.map(owned)
    };
    match attempt(&mut []) {
        Ok(fd) => Ok(fd),
        Err(_) => {
            let mut log = vec![0u8; 1 << 20];
            let error = match attempt(&mut log) {
                Ok(fd) => return Ok(fd),
                Err(e) => e,
            };
            let end = log.iter().position(|b| *b == 0).unwrap_or(log.len());
            Err(LoadError {
                error,
                log: String::from_utf8_lossy(&log[..end]).into_owned(),
            })
        }
    }
}

#[repr(C)]
struct InfoAttr {
    bpf_fd: u32,
    info_len: u32,
    info: u64,
}

/// What the kernel counts for a loaded program.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgStats {
    /// Times the program was skipped because a BPF program was already running on that CPU
    /// (an interrupt arrived while one ran): events the view did not see.
    pub recursion_misses: u64,
    /// Time in the program and runs, counted only while `kernel.bpf_stats_enabled` is 1.
    pub run_time_ns: u64,
    pub run_cnt: u64,
}

/// The program's counters (`bpf_prog_info`: `run_time_ns` at byte 192, `run_cnt` at 200,
/// `recursion_misses` at 208, since Linux 5.12; an older kernel fills fewer bytes and they read
/// as zero).
pub fn prog_stats(prog: &OwnedFd) -> io::Result<ProgStats> {
    let mut info = [0u64; 28];
    let mut attr = InfoAttr {
        bpf_fd: prog.as_raw_fd() as u32,
        info_len: std::mem::size_of_val(&info) as u32,
        info: info.as_mut_ptr() as u64,
    };
    // SAFETY: `info` is a live, writable buffer of info_len bytes.
    unsafe { bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr) }?;
    Ok(ProgStats {
        run_time_ns: info[24],
        run_cnt: info[25],
        recursion_misses: info[26],
    })
}

/// `struct perf_event_attr` as of `PERF_ATTR_SIZE_VER5` (112 bytes): only the type, size,
/// config and sample period are set.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    rest: [u64; 11],
}

/// Opens the tracepoint numbered `id` (tracefs `events/<group>/<name>/id`) on CPU 0, attaches
/// `prog` and enables it. One event is enough for every CPU: the kernel runs a tracepoint's
/// programs wherever it fires once one perf event holds them (as libbpf does).
pub fn attach_tracepoint(id: u64, prog: &OwnedFd) -> io::Result<OwnedFd> {
    let mut attr = PerfEventAttr {
        kind: PERF_TYPE_TRACEPOINT,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: id,
        sample_period: 1,
        ..Default::default()
    };
    // SAFETY: `attr` is a live perf_event_attr of the size it declares; pid -1 and cpu 0
    // (every task on CPU 0), no group.
    let r = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &mut attr as *mut PerfEventAttr,
            -1 as libc::pid_t,
            0 as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let event = owned(r);
    // SAFETY: both ioctls take the event's descriptor and (SET_BPF) a program descriptor by
    // value; neither reads memory of ours.
    unsafe {
        if libc::ioctl(event.as_raw_fd(), PERF_EVENT_IOC_SET_BPF, prog.as_raw_fd()) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::ioctl(event.as_raw_fd(), PERF_EVENT_IOC_ENABLE, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(event)
}

#[repr(C)]
struct RawTpAttr {
    name: u64,
    prog_fd: u32,
    _pad: u32,
}

/// Attaches a raw tracepoint program to tracepoint `name` (`block_rq_issue`): one descriptor,
/// every CPU; closing it detaches.
pub fn attach_raw_tracepoint(name: &CStr, prog: &OwnedFd) -> io::Result<OwnedFd> {
    let mut attr = RawTpAttr {
        name: name.as_ptr() as u64,
        prog_fd: prog.as_raw_fd() as u32,
        _pad: 0,
    };
    // SAFETY: `name` is a live NUL-terminated string; the kernel only reads it.
    unsafe { bpf(BPF_RAW_TRACEPOINT_OPEN, &mut attr) }.map(owned)
}

const BPF_PROG_TEST_RUN: libc::c_int = 10;

#[repr(C)]
#[derive(Default)]
struct TestRunAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
}

/// Runs a raw tracepoint program once with `args` as its arguments (`BPF_PROG_TEST_RUN`,
/// Linux 5.10); its return value.
pub fn test_run_raw(prog: &OwnedFd, args: &[u64]) -> io::Result<u32> {
    let mut attr = TestRunAttr {
        prog_fd: prog.as_raw_fd() as u32,
        ctx_size_in: std::mem::size_of_val(args) as u32,
        ctx_in: args.as_ptr() as u64,
        ..Default::default()
    };
    // SAFETY: ctx_in points at `args`, live for the call, of the size given; nothing is written
    // back (no output buffers).
    unsafe { bpf(BPF_PROG_TEST_RUN, &mut attr) }?;
    Ok(attr.retval)
}

/// The number of possible CPUs (`/sys/devices/system/cpu/possible`, `0-3` or `0,2-5`): a
/// per-CPU map's value holds one slot for each.
pub fn possible_cpus() -> io::Result<usize> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/possible")?;
    parse_cpu_list(&text).ok_or_else(|| io::Error::other(format!("unreadable CPU list {text:?}")))
}

/// The highest CPU of a list plus one (`0-3` → 4; `0,2-5` → 6).
pub fn parse_cpu_list(text: &str) -> Option<usize> {
    let mut top = None;
    for part in text.trim().split(',') {
        let last = part.rsplit('-').next()?.trim().parse::<usize>().ok()?;
        top = Some(top.map_or(last, |t: usize| t.max(last)));
    }
    top.map(|t| t + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attribute_structs_have_the_kernels_sizes() {
        assert_eq!(std::mem::size_of::<PerfEventAttr>(), 112);
        assert_eq!(std::mem::size_of::<ElemAttr>(), 32);
        // prog_name ends at byte 64 of bpf_attr's PROG_LOAD variant.
        assert_eq!(std::mem::size_of::<ProgLoadAttr>(), 64);
        assert_eq!(std::mem::size_of::<MapCreateAttr>(), 44);
    }

    #[test]
    fn a_cpu_list_gives_the_number_of_slots() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(2));
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0,2-5"), Some(6));
        assert_eq!(parse_cpu_list(""), None);
    }
}
