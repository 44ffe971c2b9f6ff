//! The per-operation clock.
//!
//! A 1-byte `read(2)` costs a few hundred nanoseconds, so two `clock_gettime` calls per operation
//! would be a visible tax on exactly the measurement the syscall lab cares about. We read the TSC
//! through `quanta` (a few ns, calibrated against the OS clock) and convert to nanoseconds only when
//! recording. Where there is no usable TSC, quanta falls back to the OS monotonic clock.

use std::sync::OnceLock;

/// A cheap monotonic clock in raw ticks; shared calibration for the whole process.
#[derive(Clone)]
pub struct Clock {
    inner: quanta::Clock,
}

static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();

impl Clock {
    /// The process-wide clock (calibrated once).
    pub fn get() -> Self {
        Clock {
            inner: CLOCK.get_or_init(quanta::Clock::new).clone(),
        }
    }

    /// Raw ticks; only differences are meaningful.
    #[inline(always)]
    pub fn raw(&self) -> u64 {
        self.inner.raw()
    }

    /// Nanoseconds between two raw readings (0 if `end` precedes `start`).
    #[inline(always)]
    pub fn delta_ns(&self, start: u64, end: u64) -> u64 {
        if end <= start {
            return 0;
        }
        self.inner.delta_as_nanos(start, end)
    }

    /// How many raw ticks span `ns` nanoseconds (at least 1).
    pub fn ticks_for_ns(&self, ns: u64) -> u64 {
        // Measure the scale once from a wide span to keep the rounding error small.
        let probe = 1u64 << 40;
        let ns_per_probe = self.inner.delta_as_nanos(0, probe).max(1);
        ((ns as u128 * probe as u128) / ns_per_probe as u128).max(1) as u64
    }
}
