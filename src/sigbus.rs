//! Guarded file mappings: SIGBUS on a mapping becomes an error, never a signal death.
//!
//! Touching a page of a shared file mapping past the file's end (another process truncated it),
//! or a page the filesystem cannot back (a write fault on a full tmpfs, an I/O error), raises
//! SIGBUS, and its default action kills the process (exit 135, no message, partial files left).
//! Checking the size before each chunk or `MADV_POPULATE_READ` narrows the window but cannot
//! close it: the file can shrink between the check and the access.
//!
//! So the mmap paths register each mapping with a [`Guard`], and a process-wide SIGBUS handler,
//! when the faulting address lies in a registered range, maps one anonymous zero page over the
//! faulting page (`mmap(MAP_FIXED)`, a plain system call) and records the fault in the guard.
//! The faulting instruction is then restarted and succeeds on the anonymous page, so the code
//! reading (or writing) the mapping never sees a signal, never unwinds and never jumps: there is
//! no `sigsetjmp`/`longjmp` across Rust frames. The data that came from the replaced pages is
//! wrong (zeros), so every user of a guarded mapping calls [`Guard::check`] after each chunk and
//! before using what it computed: a fault turns the chunk into an error that names the offset.
//! A SIGBUS outside every registered range (a genuine bug elsewhere) gets the previous action,
//! which is the default: the process dies as it would have without us.
//!
//! The signal machinery stays on libc and `unsafe`: rustix has no stable `sigaction` (only its
//! `runtime` feature, meant for libc implementations), and the handler saves and restores the
//! thread's `errno`, which only libc knows where it lives.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

/// How many mappings can be guarded at once (one per mmap worker, a few for `fast`).
const SLOTS: usize = 1024;

/// `start` of a slot being filled or emptied: above every address, so it matches none.
const CLAIMED: usize = usize::MAX;

struct Slot {
    /// First byte of the guarded range; 0 when the slot is free, [`CLAIMED`] while it changes.
    start: AtomicUsize,
    /// One past the last byte.
    end: AtomicUsize,
    /// Address of the first fault seen in the range (0: none).
    fault_at: AtomicUsize,
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    fault_at: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
};
static SLOTS_TABLE: [Slot; SLOTS] = [FREE; SLOTS];
static INSTALL: Once = Once::new();
/// Whether the handler could be installed.
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The action SIGBUS had before ours (set by `install` before the handler is, read by the
/// handler: `OnceLock::get` is one atomic load, fine in a signal handler).
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();

fn page_size() -> usize {
    rustix::param::page_size()
}

static PAGE: AtomicUsize = AtomicUsize::new(4096);

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for a handler installed with SA_SIGINFO.
    let addr = unsafe { (*info).si_addr() } as usize;
    // SAFETY: errno is thread-local; saved here and restored below so the interrupted code never
    // sees our system call's errno.
    let errno = unsafe { *libc::__errno_location() };
    let page = PAGE.load(Ordering::Relaxed);
    for slot in &SLOTS_TABLE {
        let start = slot.start.load(Ordering::Acquire);
        if start == 0 || addr < start || addr >= slot.end.load(Ordering::Acquire) {
            continue;
        }
        let at = addr & !(page - 1);
        // SAFETY: `at` is a page inside a mapping registered by a live `Guard` (its owner keeps
        // the mapping until the guard is dropped); replacing that page with a private anonymous
        // page changes only memory this process mapped for reading the file. mmap is a plain
        // system call, safe to make in a signal handler.
        let r = unsafe {
            libc::syscall(
                libc::SYS_mmap,
                at,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1i64,
                0i64,
            )
        };
        if r as usize == at {
            let _ = slot
                .fault_at
                .compare_exchange(0, addr, Ordering::AcqRel, Ordering::Relaxed);
            slot.faulted.store(true, Ordering::Release);
            // SAFETY: as above (restoring this thread's errno).
            unsafe { *libc::__errno_location() = errno };
            return;
        }
        break;
    }
    // Not ours (or the page could not be replaced): put the previous action back and return, so
    // the faulting instruction runs again and gets it (the default action: the process dies).
    let default = PREVIOUS
        .get()
        .map_or(std::ptr::null(), |p| p as *const libc::sigaction);
    // SAFETY: `default` is null or points to the action stored in a static for the life of the
    // process; sigaction and signal are async-signal-safe. Once the previous action (or SIG_DFL)
    // is back, the faulting access, restarted on return, gets what it would have had without us.
    unsafe {
        if !default.is_null() {
            libc::sigaction(sig, default, std::ptr::null_mut());
        } else {
            libc::signal(sig, libc::SIG_DFL);
        }
        *libc::__errno_location() = errno;
    }
}

fn install() -> bool {
    INSTALL.call_once(|| {
        PAGE.store(page_size(), Ordering::Relaxed);
        // SAFETY: a zeroed sigaction is a valid starting value (SIG_DFL, no flags); the kernel
        // fills `prev` with the current action, and we fill handler, flags and mask of ours.
        // The previous action is stored before ours is installed, so the handler always has it.
        unsafe {
            let mut prev: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut prev) != 0 {
                return;
            }
            let _ = PREVIOUS.set(prev);
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            let ok = libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut()) == 0;
            INSTALLED.store(ok, Ordering::Release);
        }
    });
    INSTALLED.load(Ordering::Acquire)
}

/// A fault seen on a guarded mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MappingFault {
    /// Offset in the mapping of the first page that could not be accessed.
    pub offset_bytes: u64,
}

/// Registers `[ptr, ptr + len)` so SIGBUS there is recorded instead of fatal; unregisters on drop.
/// Create it right after mapping and drop it before unmapping.
pub struct Guard {
    slot: usize,
    start: usize,
}

impl Guard {
    /// Guards a mapping of `len` bytes at `ptr`. Fails when the handler cannot be installed or
    /// every slot is taken (the caller then refuses to use the mapping).
    pub fn new(ptr: *const u8, len: usize) -> std::io::Result<Guard> {
        if !install() {
            return Err(std::io::Error::other("cannot install a SIGBUS handler"));
        }
        let start = ptr as usize;
        for (i, slot) in SLOTS_TABLE.iter().enumerate() {
            // Claim the slot with the placeholder start `CLAIMED`, which no address lies at or
            // above, so the handler ignores the slot until its real range is in place.
            if slot
                .start
                .compare_exchange(0, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                slot.faulted.store(false, Ordering::Relaxed);
                slot.fault_at.store(0, Ordering::Relaxed);
                slot.end.store(start + len, Ordering::Release);
                slot.start.store(start, Ordering::Release);
                return Ok(Guard { slot: i, start });
            }
        }
        Err(std::io::Error::other("too many guarded mappings"))
    }

    /// `Err` with the first faulting offset if any access to the mapping raised SIGBUS since
    /// the guard was made (the data read from the mapping is then not the file's).
    #[inline]
    pub fn check(&self) -> Result<(), MappingFault> {
        let slot = &SLOTS_TABLE[self.slot];
        if !slot.faulted.load(Ordering::Acquire) {
            return Ok(());
        }
        let at = slot.fault_at.load(Ordering::Acquire);
        Err(MappingFault {
            offset_bytes: at.saturating_sub(self.start) as u64,
        })
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let slot = &SLOTS_TABLE[self.slot];
        // Match nothing first, then free the slot.
        slot.start.store(CLAIMED, Ordering::Release);
        slot.end.store(0, Ordering::Release);
        slot.start.store(0, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_read_past_a_truncated_end_is_recorded_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 64 << 10]).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let len = 64 << 10;
        // SAFETY: a fresh read-only shared mapping of our own file, unmapped below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        assert_ne!(ptr, libc::MAP_FAILED);
        let guard = Guard::new(ptr.cast(), len).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        // SAFETY: the mapping is live; the page past the end is guarded.
        let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
        assert_eq!(std::hint::black_box(bytes[0]), 7);
        assert!(guard.check().is_ok());
        let past = std::hint::black_box(bytes[8192]);
        assert_eq!(past, 0);
        assert_eq!(guard.check(), Err(MappingFault { offset_bytes: 8192 }));
        drop(guard);
        // SAFETY: unmaps the mapping made above.
        unsafe { libc::munmap(ptr, len) };
    }
}
