//! Every key of the explorer, declared once: the key codes, the command they give, the help
//! text and the footer's short label (gitui's `Component::commands()`). The explorer's parts
//! that take keys ([`Part`]: anywhere (Ctrl-C), a screen too small, the entry line, an overlay,
//! a running KDiskMark set, the main view) each bring their part of the one table ([`PARTS`]);
//! the key handler ([`App::handle_key`](super::app::App::handle_key)) offers a key to the first
//! part that is active, looks it up in that part's table ([`command_in`]) and matches on the
//! [`Cmd`]. The help overlay ([`help_lines`]), the footer ([`footer`]) and each part's hint
//! ([`hint`]: the entry line's "Enter applies · Esc cancels") are generated from the same
//! tables, so a key cannot work without being listed nor be listed without working (the tests
//! walk the tables).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key asks for.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    BlockUp,
    BlockDown,
    BlockType,
    ThreadUp,
    ThreadDown,
    Method,
    QueueUp,
    QueueDown,
    Cold,
    Direct,
    Write,
    MixShare,
    Pattern,
    Sync,
    Buffers,
    Rate,
    KDiskMark,
    Pin,
    Delete,
    Units,
    Export,
    Pause,
    Reset,
    Transient,
    CursorDown,
    CursorUp,
    PageDown,
    PageUp,
    Home,
    End,
    Sort,
    Hide,
    ShowHidden,
    LogCounts,
    Span,
    Kernel,
    Save,
    Help,
    Quit,
    /// The entry line: apply what was typed.
    EntryApply,
    /// The entry line: close it, nothing changed.
    EntryCancel,
    /// The entry line: erase the last character.
    EntryErase,
    /// The entry line: a character typed into it.
    EntryType,
    /// An overlay (help, the KDiskMark card): closed by any key, which does nothing else.
    CloseOverlay,
    /// A running KDiskMark set: cancel it.
    CancelSet,
    /// A key the active part does not take: it says why (a screen too small, a set running) or
    /// does nothing (another Ctrl key).
    Refused,
}

/// The parts of the explorer that take keys, in the order a key is offered to them: the first
/// part that is active takes it, and only from its own table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// A key with Ctrl held, wherever the explorer is.
    Anywhere,
    /// The terminal is too small to show the settings: only q acts.
    TooSmall,
    /// An entry line is open (`b`, `R`, `W`).
    Entry,
    /// The help or the KDiskMark card is open.
    Overlay,
    /// A KDiskMark set is running.
    KDiskMark,
    /// The explorer itself: settings, view, rows.
    Main,
}

/// A part's keys: its table, and what a key outside it does (None: nothing).
pub struct PartKeys {
    pub part: Part,
    pub keys: &'static [KeyDef],
    /// How the help names the other keys, what they do, and their command.
    pub other: Option<(&'static str, &'static str, Cmd)>,
}

/// One line of the key table (one line of the help): the keys as the help shows them, each
/// key code with its command, what they do, and the footer's short label (None: help only).
pub struct KeyDef {
    pub shown: &'static str,
    pub binds: &'static [(KeyCode, Cmd)],
    pub help: &'static str,
    pub footer: Option<&'static str>,
}

const fn k(
    shown: &'static str,
    binds: &'static [(KeyCode, Cmd)],
    help: &'static str,
    footer: Option<&'static str>,
) -> KeyDef {
    KeyDef {
        shown,
        binds,
        help,
        footer,
    }
}

use KeyCode::Char as C;

/// The key table, in the order the help lists it (it fits an 80×24 terminal).
#[rustfmt::skip]
pub const KEYS: &[KeyDef] = &[
    k("←/→", &[(KeyCode::Left, Cmd::BlockDown), (KeyCode::Right, Cmd::BlockUp)],
        "halve / double the block size", Some("←→ b block")),
    k("b", &[(C('b'), Cmd::BlockType)],
        "type an exact block size (12K, 3, 1M: 1 B to 1G), Enter", None),
    k("↑/↓ +/-", &[(KeyCode::Up, Cmd::ThreadUp), (C('+'), Cmd::ThreadUp), (C('='), Cmd::ThreadUp),
        (KeyCode::Down, Cmd::ThreadDown), (C('-'), Cmd::ThreadDown), (C('_'), Cmd::ThreadDown)],
        "one thread more / less", Some("↑↓ thr")),
    k("m", &[(C('m'), Cmd::Method)],
        "next method (read pread mmap io_uring buffered)", Some("m")),
    k("[ ]", &[(C('['), Cmd::QueueDown), (C(']'), Cmd::QueueUp)],
        "io_uring queue depth", None),
    k("c", &[(C('c'), Cmd::Cold)],
        "cold / as is (cold evicts now and before every pass)", Some("c")),
    k("d", &[(C('d'), Cmd::Direct)], "O_DIRECT on / off", Some("d")),
    k("w W", &[(C('w'), Cmd::Write), (C('W'), Cmd::MixShare)],
        "read → write → mix (scratch file) / type the mix's % of reads", Some("w")),
    k("p", &[(C('p'), Cmd::Pattern)], "sequential / random offsets", Some("p")),
    k("f", &[(C('f'), Cmd::Sync)],
        "writes: plain / fsync at the end / O_DSYNC", Some("f sync")),
    k("M R", &[(C('M'), Cmd::Buffers), (C('R'), Cmd::Rate)],
        "buffer memory (auto plain malloc thp hugetlb) / type a rate", None),
    k("k", &[(C('k'), Cmd::KDiskMark)],
        "KDiskMark set (SEQ1M Q8T1 ... RND4K Q1T1, read+write)", Some("k KDiskMark")),
    k("B x", &[(C('B'), Cmd::Pin), (C('x'), Cmd::Delete)],
        "pin the row under the cursor as baseline (again: none) / delete it", Some("B base")),
    k("u e l", &[(C('u'), Cmd::Units), (C('e'), Cmd::Export), (C('l'), Cmd::LogCounts)],
        "MiB/s or MB/s / export SVG and JSON / latency log counts", Some("u unit  e export")),
    k("v L", &[(C('v'), Cmd::Span), (C('L'), Cmd::Kernel)],
        "chart span 60 s / 10 min / 1 h / kernel view: block layer, device", Some("v span")),
    k("space r t", &[(C(' '), Cmd::Pause), (C('r'), Cmd::Reset), (C('t'), Cmd::Transient)],
        "pause / resume; reset; keep rows under 1 s or 100 ops too", None),
    k("J/K PgDn/PgUp Home/End", &[(C('J'), Cmd::CursorDown), (C('K'), Cmd::CursorUp),
        (KeyCode::PageDown, Cmd::PageDown), (KeyCode::PageUp, Cmd::PageUp),
        (KeyCode::Home, Cmd::Home), (KeyCode::End, Cmd::End)],
        "results cursor (wheel scrolls, click selects)", None),
    k("o h H", &[(C('o'), Cmd::Sort), (C('h'), Cmd::Hide), (C('H'), Cmd::ShowHidden)],
        "sort rows (thr IOPS p99 time) / hide the row / show hidden", None),
    k("s ? q", &[(C('s'), Cmd::Save), (C('?'), Cmd::Help), (C('q'), Cmd::Quit)],
        "append the table to the CSV / this help / quit (Ctrl-C too)", Some("s  ?  q")),
];

/// Every part's keys, in the order a key is offered to the parts.
#[rustfmt::skip]
pub const PARTS: &[PartKeys] = &[
    PartKeys { part: Part::Anywhere,
        keys: &[k("Ctrl-C Ctrl-D", &[(C('c'), Cmd::Quit), (C('d'), Cmd::Quit)], "quit", None)],
        other: Some(("other Ctrl keys", "nothing", Cmd::Refused)) },
    PartKeys { part: Part::TooSmall,
        keys: &[k("q", &[(C('q'), Cmd::Quit)], "quit", None)],
        other: Some(("other keys", "say the terminal is too small", Cmd::Refused)) },
    PartKeys { part: Part::Entry,
        keys: &[k("Enter", &[(KeyCode::Enter, Cmd::EntryApply)], "applies", None),
                k("Esc", &[(KeyCode::Esc, Cmd::EntryCancel)], "cancels", None),
                k("Backspace", &[(KeyCode::Backspace, Cmd::EntryErase)], "erases", None)],
        other: Some(("letters, digits, . / space", "typed", Cmd::EntryType)) },
    PartKeys { part: Part::Overlay, keys: &[],
        other: Some(("any key", "closes this help", Cmd::CloseOverlay)) },
    PartKeys { part: Part::KDiskMark,
        keys: &[k("k Esc", &[(C('k'), Cmd::CancelSet), (KeyCode::Esc, Cmd::CancelSet)],
                  "cancels the set", None),
                k("?", &[(C('?'), Cmd::Help)], "help", None),
                k("q", &[(C('q'), Cmd::Quit)], "quits", None)],
        other: Some(("other keys", "say the set is running", Cmd::Refused)) },
    PartKeys { part: Part::Main, keys: KEYS, other: None },
];

/// The keys of `part`.
pub fn part_keys(part: Part) -> &'static PartKeys {
    PARTS
        .iter()
        .find(|p| p.part == part)
        .expect("every part has its keys in PARTS")
}

/// The command `key` gives in `part`: a key of its table, else the part's other keys' command.
/// Ctrl keys belong to [`Part::Anywhere`] alone.
pub fn command_in(part: Part, key: KeyEvent) -> Option<Cmd> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl != (part == Part::Anywhere) {
        return None;
    }
    let p = part_keys(part);
    p.keys
        .iter()
        .flat_map(|d| d.binds.iter())
        .find(|(c, _)| *c == key.code)
        .map(|(_, cmd)| *cmd)
        .or(p.other.map(|(_, _, cmd)| cmd))
}

/// A part's keys in one line, where the part shows them: `Enter applies · Esc cancels ·
/// Backspace erases`.
pub fn hint(part: Part) -> String {
    let p = part_keys(part);
    let mut items: Vec<String> = p
        .keys
        .iter()
        .map(|d| format!("{} {}", d.shown, d.help))
        .collect();
    if let Some((shown, help, _)) = p.other {
        if p.keys.is_empty() {
            items.push(format!("{shown} {help}"));
        }
    }
    items.join(" · ")
}

/// The command of `code`, if a key of the table has it.
pub fn command_of(code: KeyCode) -> Option<Cmd> {
    KEYS.iter()
        .flat_map(|d| d.binds.iter())
        .find(|(c, _)| *c == code)
        .map(|(_, cmd)| *cmd)
}

/// The help's key lines: `←/→      halve / double the block size`.
pub fn help_lines() -> Vec<String> {
    KEYS.iter()
        .map(|d| {
            let w = d.shown.chars().count().max(7) + 2;
            format!("{:<w$}{}", d.shown, d.help)
        })
        .collect()
}

/// The footer for `width` columns: the labels that fit, in table order; the last (save, help,
/// quit) always, the others dropped from the end first.
pub fn footer(width: usize) -> String {
    let labels: Vec<&str> = KEYS.iter().filter_map(|d| d.footer).collect();
    let last = labels.len() - 1;
    let mut keep: Vec<usize> = (0..labels.len()).collect();
    let text = |keep: &[usize]| {
        keep.iter()
            .map(|&i| labels[i])
            .collect::<Vec<_>>()
            .join("  ")
    };
    while text(&keep).chars().count() > width && keep.len() > 1 {
        keep.remove(keep.len() - 2);
    }
    let _ = last;
    text(&keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, ctrl: bool) -> KeyEvent {
        let m = if ctrl {
            KeyModifiers::CONTROL
        } else {
            KeyModifiers::NONE
        };
        KeyEvent::new(code, m)
    }

    #[test]
    fn every_part_has_its_table_once_and_no_key_twice_within_it() {
        for part in [
            Part::Anywhere,
            Part::TooSmall,
            Part::Entry,
            Part::Overlay,
            Part::KDiskMark,
            Part::Main,
        ] {
            assert_eq!(PARTS.iter().filter(|p| p.part == part).count(), 1);
            let mut codes = Vec::new();
            for (c, _) in part_keys(part).keys.iter().flat_map(|d| d.binds.iter()) {
                assert!(!codes.contains(c), "{part:?}: {c:?} declared twice");
                codes.push(*c);
            }
        }
    }

    #[test]
    fn a_key_is_looked_up_in_its_part_alone_and_ctrl_keys_belong_to_anywhere() {
        let ctrl_c = key(C('c'), true);
        assert_eq!(command_in(Part::Anywhere, ctrl_c), Some(Cmd::Quit));
        assert_eq!(command_in(Part::Main, ctrl_c), None);
        assert_eq!(
            command_in(Part::Anywhere, key(C('x'), true)),
            Some(Cmd::Refused)
        );
        assert_eq!(command_in(Part::Anywhere, key(C('c'), false)), None);
        // `c` evicts in the main view, is typed in an entry line, closes an overlay.
        assert_eq!(command_in(Part::Main, key(C('c'), false)), Some(Cmd::Cold));
        assert_eq!(
            command_in(Part::Entry, key(C('c'), false)),
            Some(Cmd::EntryType)
        );
        assert_eq!(
            command_in(Part::Overlay, key(C('c'), false)),
            Some(Cmd::CloseOverlay)
        );
        assert_eq!(
            command_in(Part::KDiskMark, key(C('c'), false)),
            Some(Cmd::Refused)
        );
        assert_eq!(
            command_in(Part::KDiskMark, key(KeyCode::Esc, false)),
            Some(Cmd::CancelSet)
        );
        assert_eq!(
            command_in(Part::TooSmall, key(C('q'), false)),
            Some(Cmd::Quit)
        );
        assert_eq!(
            command_in(Part::Entry, key(KeyCode::Enter, false)),
            Some(Cmd::EntryApply)
        );
        // The main view has no key outside its table.
        assert_eq!(command_in(Part::Main, key(C('Z'), false)), None);
    }

    #[test]
    fn each_part_shows_its_keys_from_its_table() {
        assert_eq!(
            hint(Part::Entry),
            "Enter applies · Esc cancels · Backspace erases"
        );
        assert_eq!(hint(Part::Overlay), "any key closes this help");
        assert_eq!(
            hint(Part::KDiskMark),
            "k Esc cancels the set · ? help · q quits"
        );
    }

    #[test]
    fn no_key_is_declared_twice_and_every_command_has_a_key() {
        let mut codes = Vec::new();
        let mut cmds = Vec::new();
        for d in KEYS {
            for (c, cmd) in d.binds {
                assert!(!codes.contains(c), "{c:?} declared twice");
                codes.push(*c);
                cmds.push(*cmd);
            }
        }
        for cmd in [
            Cmd::BlockUp,
            Cmd::Buffers,
            Cmd::Pin,
            Cmd::Delete,
            Cmd::LogCounts,
            Cmd::MixShare,
            Cmd::Quit,
        ] {
            assert!(cmds.contains(&cmd), "{cmd:?}");
        }
        assert_eq!(command_of(KeyCode::Char('x')), Some(Cmd::Delete));
        assert_eq!(command_of(KeyCode::Char('Z')), None);
        assert_eq!(command_of(KeyCode::Char('W')), Some(Cmd::MixShare));
    }

    #[test]
    fn every_help_line_fits_an_80_column_help_box() {
        for l in help_lines() {
            assert!(l.chars().count() <= 78, "{l}");
        }
    }

    #[test]
    fn the_footer_fits_and_keeps_save_help_and_quit() {
        for w in [20, 80, 200] {
            let f = footer(w);
            assert!(f.chars().count() <= w, "{w}: {f}");
            assert!(f.ends_with("s  ?  q"), "{f}");
        }
        assert!(footer(80).starts_with("←→ b block"), "{}", footer(80));
        assert!(footer(200).contains("k KDiskMark"));
    }
}
