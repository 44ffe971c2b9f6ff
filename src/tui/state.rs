//! The explorer's state in groups, each with one concern, so [`App`](super::app::App) reads as
//! a short list: the explored file, the view, the device's samples, the KDiskMark set and the
//! runs' bookkeeping. Plain data with no terminal type (the screen size is two numbers): the
//! session model can be built and driven in a unit test without a terminal.

use super::kdiskmark::KdmRun;
use super::segment::{Segment, XorSeen};
use crate::cache::Residency;
use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;

/// What a typed entry sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `b`: an exact block size.
    BlockSize,
    /// `R`: an open-loop rate.
    Rate,
    /// `W`: the mix's share of reads, percent.
    MixShare,
}

impl Entry {
    /// What the prompt calls it.
    pub fn name(self) -> &'static str {
        match self {
            Entry::BlockSize => "block size",
            Entry::Rate => "rate",
            Entry::MixShare => "mix % reads",
        }
    }
}

/// What is known of the explored file and where the session writes.
#[derive(Debug, Clone)]
pub struct Explored {
    /// The file's size, bytes.
    pub size_bytes: u64,
    /// The scratch file writes go to (created by the session, never the explored file).
    pub scratch: PathBuf,
    /// Where `s` appends rows.
    pub csv_path: PathBuf,
    /// How much of the file is in the page cache, as last sampled.
    pub residency: Option<Residency>,
    /// The `limits` profile of the explored file's device and, when it may be out of date, why;
    /// loaded once at start (`App::load_explain`), None without one.
    pub profile: Option<crate::explain::Loaded>,
    /// Where the explored file lives (filesystem, device, RAM/network warnings), collected at
    /// start; None until then.
    pub context: Option<crate::explain::context::Context>,
}

/// What is shown and how.
#[derive(Debug, Clone)]
pub struct View {
    /// The help overlay is open (any key closes it).
    pub show_help: bool,
    /// What the chart shows: the last minute, 10 minutes or hour (`v`).
    pub span: super::history::Span,
    /// The results-table row under the cursor (position in
    /// [`results::body`](super::widgets::results::body)); the table scrolls to keep it in view.
    pub table_cursor: usize,
    /// The column (of [`results::SORT_COLUMNS`](super::widgets::results::SORT_COLUMNS)) the
    /// finished rows are sorted by; None: newest first.
    pub table_sort: Option<usize>,
    /// Finished rows hidden from the table with `h` (indices into `rows`; `H` shows them again).
    /// Hidden rows are still saved and exported.
    pub hidden_rows: BTreeSet<usize>,
    /// Show throughput in MB/s (10^6 bytes, as KDiskMark) instead of MiB/s.
    pub units_mb: bool,
    /// Draw the latency histogram's counts on a log scale (`l` toggles).
    pub latency_log: bool,
    /// Keep transient rows (`app::is_transient`: too short to mean anything) too (`t` toggles).
    pub keep_transient: bool,
    /// The terminal's size as last drawn (columns, rows), set by the event loop; None until
    /// the first frame (and in tests that never draw).
    pub screen_size: Option<(u16, u16)>,
    /// Draw without colours (the `NO_COLOR` environment variable, <https://no-color.org>):
    /// bold and reverse stay, so the live row and the cursor still stand out.
    pub no_color: bool,
    /// Text typed after `b` (exact block size entry), `R` (rate) or `W` (the mix's share of
    /// reads), while entering.
    pub entry: Option<String>,
    /// What the entry is.
    pub entry_kind: Entry,
    /// When the explorer started: the log's clock.
    pub clock: std::time::Instant,
}

impl View {
    pub fn new() -> View {
        View {
            show_help: false,
            span: Default::default(),
            table_cursor: 0,
            table_sort: None,
            hidden_rows: BTreeSet::new(),
            units_mb: false,
            latency_log: false,
            keep_transient: false,
            screen_size: None,
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            entry: None,
            entry_kind: Entry::BlockSize,
            clock: std::time::Instant::now(),
        }
    }
}

impl Default for View {
    fn default() -> View {
        View::new()
    }
}

/// The device under the running file as the session samples it.
#[derive(Debug, Clone, Default)]
pub struct DeviceWatch {
    /// The device, as the session last resolved it: None before the first sample, `Some(None)`
    /// when the file has no block device (tmpfs, overlay, NFS).
    pub name: Option<Option<String>>,
    /// The last second of device/CPU samples, each with the bytes the file had moved by then
    /// (`file_bytes_moved`) and this process's own I/O accounting read just before it
    /// (`Update::OwnIo`; None where `/proc/self/io` cannot be read), oldest first.
    pub samples: VecDeque<(
        crate::measure::device::Sample,
        u64,
        Option<crate::facts::taskio::TaskIo>,
    )>,
    /// The device's util %, await (ms) and time-averaged queue between consecutive samples, at
    /// three resolutions (the sparklines under the panels).
    pub history: super::history::Tiers<3>,
    /// This process's I/O accounting as the session last read it, for the next device sample.
    pub own_io: Option<crate::facts::taskio::TaskIo>,
    /// Bytes the explorer's runs have moved through the file, all runs together: set against the
    /// bytes the device moved in the same span.
    pub file_bytes_moved: u64,
}

/// The KDiskMark set.
#[derive(Debug, Clone)]
pub struct Kdm {
    /// The set in progress, or the last one (for its card).
    pub run: Option<KdmRun>,
    /// Segment id of the test running now.
    pub id: Option<u64>,
    /// Show the card (any key closes it).
    pub show: bool,
    /// Seconds per test.
    pub seconds: f64,
}

impl Default for Kdm {
    fn default() -> Kdm {
        Kdm {
            run: None,
            id: None,
            show: false,
            seconds: super::kdiskmark::DEFAULT_SECONDS,
        }
    }
}

/// The runs' bookkeeping.
#[derive(Debug, Clone)]
pub struct Runs {
    /// Space paused the runs: changes wait for it.
    pub paused: bool,
    /// Segments asked to stop whose last snapshots have not all come.
    pub ending: Vec<Segment>,
    /// What the table shows beside each row of `rows` (same index): warm-up, spread, verdict.
    pub row_extra: Vec<super::segment::RowExtra>,
    /// Rows of `rows` already appended to the CSV file.
    pub rows_saved: usize,
    /// Lines appended to the CSV file in this session (a live row saved with `s` included), so
    /// `s` and the summary at exit count the same thing.
    pub csv_rows_written: usize,
    /// The file's XOR as a whole read last gave it, and by which setting.
    pub xor: Option<XorSeen>,
    /// The share of reads, percent, of the mix `w` steps to (`W` sets it; fio's default 50).
    pub mix_share_pct: u32,
    /// Scratch files being removed in the background, with their progress.
    pub removing: Vec<super::discard::Removal>,
    /// The explorer is to leave now.
    pub quit: bool,
    /// `q` (or a signal) was taken: the explorer leaves once the run stopped and every scratch
    /// file is removed, showing that progress meanwhile.
    pub quitting: bool,
    /// When the explorer began to leave (`quitting`): what the screen counts the wait from.
    pub quit_since: Option<std::time::Instant>,
}

impl Default for Runs {
    fn default() -> Runs {
        Runs {
            paused: false,
            ending: Vec::new(),
            row_extra: Vec::new(),
            rows_saved: 0,
            csv_rows_written: 0,
            xor: None,
            mix_share_pct: super::settings::DEFAULT_MIX_READ_PCT,
            removing: Vec::new(),
            quit: false,
            quitting: false,
            quit_since: None,
        }
    }
}
