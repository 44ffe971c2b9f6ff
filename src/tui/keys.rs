//! Every key of the explorer, declared once: the key codes, the command they give, the help
//! text and the footer's short label (gitui's `Component::commands()`). The key handler
//! ([`App::handle_key`](super::app::App::handle_key)) looks a key up here and matches on the
//! [`Cmd`]; the help overlay ([`help_lines`]) and the footer ([`footer`]) are generated from
//! the same table, so a key cannot work without being listed nor be listed without working
//! (the tests walk the table).

use crossterm::event::KeyCode;

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
