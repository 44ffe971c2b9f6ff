//! The kernel panel's state (`L`): whether the explorer's runs attach the kernel view and what
//! the live setting's view counted so far. State only, like the baseline's: the app holds it,
//! `widgets::kernel` draws it, and it imports neither of them.

use crate::kernel::{Counts, FilterBy, Word};
use crate::measure::kernel::KernelSection;
use std::time::Instant;

/// The panel shows from this many columns (where the log column is: `ui::SIDE_BY_SIDE_WIDTH`).
pub const SHOWN_FROM_WIDTH: u16 = 150;

/// The panel's state: whether it is on and what the live segment's view counted so far.
#[derive(Debug, Clone, Default)]
pub struct KernelPanel {
    /// `L` turned it on: the explorer's runs attach the view.
    pub on: bool,
    /// The segment the counts are of.
    id: Option<u64>,
    /// Its counts so far, every read (and pass) added.
    total: Option<Counts>,
    /// Why the view is absent, as its last read said.
    absent: Option<String>,
    /// The last read's requests and the seconds it spanned.
    last: Option<(u64, f64)>,
    /// When the last read came.
    last_at: Option<Instant>,
}

impl KernelPanel {
    /// Adds a read of segment `id` (one that is not the current segment's starts afresh).
    pub fn add(&mut self, id: u64, read: Result<Box<Counts>, String>, now: Instant) {
        if self.id != Some(id) {
            *self = KernelPanel {
                on: self.on,
                id: Some(id),
                ..KernelPanel::default()
            };
        }
        match read {
            Ok(c) => {
                let secs = self
                    .last_at
                    .map(|t| now.saturating_duration_since(t).as_secs_f64());
                if let Some(s) = secs.filter(|s| *s >= 0.05) {
                    self.last = Some((c.get(Word::Issued), s));
                }
                self.total.get_or_insert_with(Counts::default).add(&c);
                self.absent = None;
            }
            Err(why) => self.absent = Some(why),
        }
        self.last_at = Some(now);
    }

    /// Forgets the counts (the view was turned off).
    pub fn clear(&mut self) {
        *self = KernelPanel {
            on: self.on,
            ..KernelPanel::default()
        };
    }

    /// The segment the counts are of.
    pub fn segment(&self) -> Option<u64> {
        self.id
    }

    /// Requests per second over the last read.
    pub fn per_s(&self) -> Option<f64> {
        self.last.map(|(n, s)| n as f64 / s)
    }

    /// The section so far, of the run's `ops` operations moving `bytes` with latency p50
    /// `app_p50_us` (None: no operation yet), its requests going to `device`.
    pub fn section(
        &self,
        device: Option<String>,
        ops: u64,
        bytes: u64,
        app_p50_us: Option<f64>,
    ) -> KernelSection {
        let mut s = KernelSection::absent_of(FilterBy::Process);
        s.absent = self.absent.clone();
        s.device = device;
        if let Some(c) = &self.total {
            s.total = Some(c.summary());
            s.bios = c.get(Word::Bios);
            s.requeues = c.get(Word::Requeues);
            s.errors = c.get(Word::Errors);
            s.unissued = c.get(Word::Unissued);
        }
        let mut s = match app_p50_us {
            Some(p50) if ops > 0 => s.with_run(ops, bytes, p50),
            _ => s,
        };
        // The counts lag the run's operations by up to a read (a second): bytes that did not
        // reach the device yet by the view's count are not the page cache's.
        s.facts.retain(|f| f.code != "page_cache");
        s
    }
}
