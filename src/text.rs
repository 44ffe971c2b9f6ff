//! Text from outside, made safe to show.
//!
//! File names, CSV and JSON fields, trace lines and profile strings come from places an attacker
//! (or an accident) controls. Shown raw, an escape sequence in any of them retitles or clears the
//! user's terminal, a newline splits a one-line error or a markdown table row, and a cell that
//! begins with `=` runs as a formula in a spreadsheet. Every such text passes through this module on
//! its way to a terminal, a table or a CSV cell:
//!
//! * [`shown`] escapes every control character (C0, DEL, C1 and the Unicode bidi/format controls
//!   that reorder what a terminal draws) as `\u{..}`-style text, so the text stays one line and
//!   draws exactly as its characters.
//! * [`shown_lines`] does the same for a block of lines (newlines and tabs stay): every
//!   line the crate prints passes through it ([`eprintln_shown!`] and its siblings).
//! * [`shown_path`] does the same for a path, whose bytes need not be UTF-8 (invalid bytes become
//!   `\xNN`).
//! * [`csv_cell`] neutralises a cell that a spreadsheet would run as a formula (OWASP's advice: a
//!   leading `'` before `= + - @`, tab or carriage return), after escaping its controls.
//! * [`md_cell`] escapes a markdown table cell (controls, and the `|` that would end the cell).
//!
//! The functions borrow when nothing needs changing, so the common case costs no allocation.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Whether `c` must not reach a terminal as itself: C0 and C1 controls, DEL, and the Unicode
/// format characters that reorder or hide text (bidi overrides and isolates, zero-width joiners,
/// line and paragraph separators).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// `text` with every unsafe character escaped (`\n`, `\t`, `\u{1b}`, ...): one line, no escape
/// sequence, drawn as written.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text of one or more lines made safe for a terminal: like [`shown`], but newlines and tabs
/// stay (a printed block keeps its lines and columns). Every line diskscope prints on stdout or
/// stderr passes through this, so an escape sequence from a path, a job name or a field that
/// reached a message on any way is written out, never run by the terminal.
pub fn shown_lines(text: &str) -> Cow<'_, str> {
    let unsafe_here = |c: char| c != '\n' && c != '\t' && is_unsafe_char(c);
    if !text.chars().any(unsafe_here) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_here(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `eprintln!` with the whole text through [`shown_lines`]: the crate's way of printing a
/// message on stderr (an architecture test keeps bare `eprintln!` with arguments out of src/).
#[macro_export]
macro_rules! eprintln_shown {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        // A message for a stderr that is gone (closed, full) is dropped, never a panic.
        let _ = ::std::writeln!(
            ::std::io::stderr(),
            "{}",
            $crate::text::shown_lines(&::std::format!($($arg)*))
        );
    }};
}

/// `eprint!` through [`shown_lines`] (see [`eprintln_shown!`]).
#[macro_export]
macro_rules! eprint_shown {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::write!(
            ::std::io::stderr(),
            "{}",
            $crate::text::shown_lines(&::std::format!($($arg)*))
        );
    }};
}

/// `println!` through [`shown_lines`] (see [`eprintln_shown!`]).
#[macro_export]
macro_rules! println_shown {
    ($($arg:tt)*) => {
        ::std::println!("{}", $crate::text::shown_lines(&::std::format!($($arg)*)))
    };
}

/// `print!` through [`shown_lines`] (see [`eprintln_shown!`]).
#[macro_export]
macro_rules! print_shown {
    ($($arg:tt)*) => {
        ::std::print!("{}", $crate::text::shown_lines(&::std::format!($($arg)*)))
    };
}

/// Writes `bytes` to stdout and flushes it: the one way diskscope's results reach stdout, so
/// every write is checked. An error says it was stdout (`writing to stdout: No space left on
/// device`); a broken pipe stays a `BrokenPipe` error, which the front end takes for success
/// (`cli::exit_with`, ripgrep's rule).
pub fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .context("writing to stdout")
}

/// A path as text that is safe to show: invalid UTF-8 bytes as `\xNN`, control characters escaped.
pub fn shown_path(path: &Path) -> Cow<'_, str> {
    shown_os(path.as_os_str())
}

/// An `OsStr` (a file name, an argument) as text that is safe to show; see [`shown_path`].
pub fn shown_os(text: &OsStr) -> Cow<'_, str> {
    match text.to_str() {
        Some(s) => shown(s),
        None => {
            let mut out = String::new();
            for chunk in text.as_bytes().utf8_chunks() {
                out.push_str(&shown(chunk.valid()));
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            Cow::Owned(out)
        }
    }
}

/// Whether a spreadsheet would read a cell beginning with this text as a formula.
fn starts_like_formula(text: &str) -> bool {
    matches!(
        text.chars().next(),
        Some('=' | '+' | '-' | '@' | '\t' | '\r')
    )
}

/// A CSV cell that is safe to open in a spreadsheet: controls escaped, and a leading `'` before a
/// cell that would otherwise run as a formula. A plain number (`-3.5`, `+1e3`) is left alone, so
/// numeric columns stay numbers.
pub fn csv_cell(text: &str) -> Cow<'_, str> {
    let escaped = shown(text);
    if starts_like_formula(text) && text.parse::<f64>().is_err() {
        return Cow::Owned(format!("'{escaped}"));
    }
    escaped
}

/// A markdown table cell: controls escaped and `|` written as `\|`.
pub fn md_cell(text: &str) -> Cow<'_, str> {
    let escaped = shown(text);
    if escaped.contains('|') {
        Cow::Owned(escaped.replace('|', "\\|"))
    } else {
        escaped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        assert!(matches!(shown("big.dat 4K"), Cow::Borrowed("big.dat 4K")));
        assert!(matches!(csv_cell("pread"), Cow::Borrowed("pread")));
    }

    #[test]
    fn escape_sequences_and_newlines_are_written_out() {
        let s = shown("a\u{1b}]2;pwned\u{7}b\nc\u{9b}d\u{202e}e");
        assert!(!s.chars().any(is_unsafe_char), "{s:?}");
        assert_eq!(s, "a\\u{1b}]2;pwned\\u{7}b\\nc\\u{9b}d\\u{202e}e");
    }

    #[test]
    fn invalid_utf8_in_a_path_is_shown_as_hex() {
        let p = OsString::from_vec(b"o\xff/\x1bx".to_vec());
        assert_eq!(shown_os(&p), "o\\xff/\\u{1b}x");
    }

    #[test]
    fn formula_cells_are_neutralised_but_numbers_stay_numbers() {
        assert_eq!(csv_cell("=cmd|'/C calc'!A0"), "'=cmd|'/C calc'!A0");
        assert_eq!(csv_cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_cell("\tx"), "'\\tx");
        assert_eq!(csv_cell("-3.5"), "-3.5");
        assert_eq!(csv_cell("+1e3"), "+1e3");
        assert_eq!(csv_cell("-inf"), "-inf");
    }

    #[test]
    fn printed_blocks_keep_their_lines_but_no_escape_sequence() {
        assert_eq!(
            shown_lines("a\u{1b}[31m\tb\nc\u{7}"),
            "a\\u{1b}[31m\tb\nc\\u{7}"
        );
        assert!(matches!(shown_lines("x\ny"), Cow::Borrowed(_)));
    }

    #[test]
    fn markdown_cells_keep_one_cell() {
        assert_eq!(md_cell("a|b\nc"), "a\\|b\\nc");
    }
}
