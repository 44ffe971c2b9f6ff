//! A block device's counters as `/sys/block/<dev>/stat` gives them
//! (`Documentation/block/stat.rst`): the one parser of that file, for the run's facts (each level
//! of the device chain, before and after) and for the timeline's device samples
//! (`measure::device`, which re-exports it). Kept here, below both, so the facts read nothing
//! from the measuring layer above them.

/// Bytes per sector in the block layer's `stat` files, whatever the device's own sector size.
pub const STAT_SECTOR_BYTES: u64 = 512;

/// A block device's counters (`/sys/block/<dev>/stat`), since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    /// Requests in flight now (not a counter).
    pub in_flight: u64,
    /// Milliseconds the device had at least one request in flight.
    pub io_ticks_ms: u64,
    /// Milliseconds requests spent in flight, summed over the requests (the weighted
    /// `time_in_queue` field, the 11th): its rate is iostat's time-averaged queue, `aqu-sz`.
    /// 0 where the file has only ten fields.
    pub time_in_queue_ms: u64,
}

impl DiskStat {
    /// Parses a `stat` file (at least the first ten fields).
    pub fn parse(text: &str) -> Option<DiskStat> {
        let v: Vec<u64> = text
            .split_whitespace()
            .map(|w| w.parse().ok())
            .collect::<Option<_>>()?;
        if v.len() < 10 {
            return None;
        }
        Some(DiskStat {
            read_ios: v[0],
            read_merges: v[1],
            read_sectors: v[2],
            read_ticks_ms: v[3],
            write_ios: v[4],
            write_merges: v[5],
            write_sectors: v[6],
            write_ticks_ms: v[7],
            in_flight: v[8],
            io_ticks_ms: v[9],
            time_in_queue_ms: v.get(10).copied().unwrap_or(0),
        })
    }
}
