//! Running out of memory is a one-line error, not an abort.
//!
//! Rust's allocation failure path prints `memory allocation of N bytes failed` and aborts
//! (SIGABRT, exit 134, a core dump where enabled): what a user saw from `compare` of a large CSV
//! under `prlimit --as=100M`, or from a fio job file including a huge sparse file. Allocations
//! are everywhere (a parser's strings, a map's buckets, a vector's growth), so no call site can
//! catch them all; this crate's global allocator is the system allocator with one change: an
//! allocation the system refuses ends the process at once with one line on stderr, naming the
//! size, and exit status 1. Inputs are also read with a size limit
//! ([`crate::fsguard::read_text_bounded`]), so the common case is refused by name before any
//! memory is asked for.
//!
//! What this cannot do: run destructors (the process is out of memory; `_exit` is the one safe
//! way out), so a batch's test file is left behind as after any other kill. No code of the crate
//! relies on a fallible allocation (`try_reserve`): here an allocation that fails never returns.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, reporting a refused allocation in one line ([`out_of_memory`]).
pub struct ReportingAllocator;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract (alignment, sizes, pointer provenance) is `System`'s; a null result
// never reaches the caller (the process ends instead).
unsafe impl GlobalAlloc for ReportingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `alloc`'s contract for `layout`.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` (through us) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller upholds `realloc`'s contract; `ptr` came from `System`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            out_of_memory(new_size);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: ReportingAllocator = ReportingAllocator;

/// Writes `error: out of memory: …` (without allocating) and ends the process with status 1.
fn out_of_memory(size_bytes: usize) -> ! {
    let mut line = [0u8; 256];
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        for &b in bytes {
            if n < line.len() {
                line[n] = b;
                n += 1;
            }
        }
    };
    put(b"error: out of memory: an allocation of ");
    let mut digits = [0u8; 20];
    let mut d = digits.len();
    let mut v = size_bytes;
    loop {
        d -= 1;
        digits[d] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    put(&digits[d..]);
    put(
        b" bytes failed (the address-space limit, ulimit -v, or the machine's memory); \
          give diskscope more memory or a smaller input\n",
    );
    // SAFETY: `line[..n]` is initialised and lives across the call; fd 2 may be closed, in which
    // case write fails harmlessly. `_exit` ends the process without running anything else
    // (no destructor, no atexit handler that could allocate).
    unsafe {
        libc::write(2, line.as_ptr().cast(), n);
        libc::_exit(1)
    }
}
