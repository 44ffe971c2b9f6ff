//! What a rule is and what it reads: the [`Rule`] record of the table, the [`Finding`] it
//! returns, and the [`Input`] every rule shares (the result, its facts, its context and profile,
//! and what they derive from them once). Apart from the rules so both families of rules and the
//! table in `mod.rs` build on it without importing each other.

use super::codes::Code;
use crate::config::{CacheMode, Op, WriteSync};
use crate::explain::context::{Context, RAM_FS};
use crate::explain::profile::Profile;
use crate::facts::Facts;
use crate::measure::RunResult;
use crate::size::format_bytes_approx;

/// Whether the filesystem compresses what it stores: btrfs mounted with `compress` or
/// `compress-force`, or zfs. Only where the file's extents cannot be read.
pub fn compresses(ctx: &Context) -> Option<String> {
    let fs = ctx.filesystem.as_ref()?;
    let opts = format!("{},{}", fs.mount_options, fs.super_options);
    let opt = opts
        .split(',')
        .find(|o| o.starts_with("compress"))
        .map(str::to_string);
    match (fs.fs_type.as_str(), opt) {
        ("btrfs", Some(o)) => Some(format!("btrfs mounted with {o}")),
        ("zfs", _) => Some("zfs (compression is a dataset property)".to_string()),
        _ => None,
    }
}

pub(super) fn fmt_us(us: f64) -> String {
    crate::units::fmt_us(us, crate::units::UsStyle::Tick)
}

pub(super) fn fmt_bytes(b: u64) -> String {
    format_bytes_approx(b)
}

pub(super) fn pct(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// What a rule found.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    /// The figure is suspect, for this reason.
    Suspect(String),
    /// A note beside the verdict: the profile, not the data, is in doubt.
    Note(String),
}

/// One rule of the judge.
pub struct Rule {
    pub code: Code,
    /// When it fires, in words (docs/explain.md's table says the same).
    pub threshold: &'static str,
    /// Why that threshold.
    pub why: &'static str,
    pub check: fn(&Input) -> Option<Finding>,
}

/// What the rules read: the result, its facts, its context, the profile, and what they derive
/// from them once.
pub struct Input<'a> {
    pub r: &'a RunResult,
    pub facts: Option<&'a Facts>,
    pub ctx: &'a Context,
    pub profile: Option<&'a Profile>,
    pub(super) read: bool,
    pub(super) write: bool,
    pub(super) cold: bool,
    pub(super) warm: bool,
    pub(super) synced: bool,
    /// The file is in RAM (its filesystem, its device, what lies under its loop or overlay).
    pub(super) in_ram: bool,
}

impl<'a> Input<'a> {
    pub fn new(
        r: &'a RunResult,
        facts: Option<&'a Facts>,
        ctx: &'a Context,
        profile: Option<&'a Profile>,
    ) -> Input<'a> {
        let op = r.setup.op.known();
        let cache = r.setup.cache.known();
        let in_ram = facts.is_some_and(|f| f.ram_below.is_some())
            || ctx
                .filesystem
                .as_ref()
                .is_some_and(|f| RAM_FS.contains(&f.fs_type.as_str()))
            || ram_device(&device_name_of(ctx, facts));
        Input {
            r,
            facts,
            ctx,
            profile,
            read: op == Some(Op::Read),
            write: op == Some(Op::Write),
            cold: matches!(cache, Some(CacheMode::Cold | CacheMode::ColdAll)),
            warm: cache == Some(CacheMode::Warm),
            synced: r.setup.write_sync.is_some_and(|w| w != WriteSync::None),
            in_ram,
        }
    }

    /// A run meant to measure the device: a cold or O_DIRECT read, an O_DIRECT or synced write.
    pub(super) fn meant_for_device(&self) -> bool {
        (self.read && (self.cold || self.r.setup.direct))
            || (self.write && (self.r.setup.direct || self.synced))
    }

    /// The run's own storage bytes in its direction (read or written), when known.
    pub(super) fn own_bytes(&self) -> Option<u64> {
        let io = self.facts?.run_io()?;
        Some(if self.write {
            io.net_write_bytes()
        } else {
            io.read_bytes
        })
    }

    /// The name of the device the run's I/O goes to first.
    pub(super) fn device(&self) -> String {
        device_name_of(self.ctx, self.facts)
    }

    /// The bytes a read of the whole run could get from the device: the run's bytes less the
    /// share of the file that is holes, unwritten or compressed (which no device holds as such).
    pub(super) fn device_held_bytes(&self) -> u64 {
        let Some(m) = self.facts.and_then(Facts::extents) else {
            return self.r.figures.bytes;
        };
        let held = 1.0 - m.share(m.zero_bytes()) - m.share(m.encoded_bytes);
        (self.r.figures.bytes as f64 * held.max(0.0)) as u64
    }
}

pub(super) fn ram_device(name: &str) -> bool {
    ["zram", "ram", "brd"].iter().any(|p| name.starts_with(p))
}

pub(super) fn device_name_of(ctx: &Context, facts: Option<&Facts>) -> String {
    facts
        .and_then(|f| f.chain.as_ref()?.top().map(|l| l.name.clone()))
        .or_else(|| {
            ctx.device
                .as_ref()
                .map(|d| d.chain.first().cloned().unwrap_or_default())
        })
        .unwrap_or_default()
}

pub(super) fn suspect(s: String) -> Option<Finding> {
    Some(Finding::Suspect(s))
}
