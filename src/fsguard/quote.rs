//! Paths quoted for a shell (`'...'` or `$'...'`), so a message that tells the user what to
//! type next can be pasted as is, whatever bytes the path holds. A leaf used by every guard's
//! error text.

use std::path::Path;

/// Quotes `s` for a shell when it holds anything but plain path characters, so a suggested
/// command can be pasted as is. Text with a control character (an escape sequence in a file
/// name) is written in ANSI-C quotes (`$'a\033]0;x'`, bash, zsh, ksh, busybox and dash 0.5.12
/// read them), so the quoted word reproduces the text and never carries a raw control to the
/// terminal it is printed on.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        s.to_string()
    } else if s.chars().any(crate::text::is_unsafe_char) {
        ansi_c_quote(s.as_bytes())
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// [`shell_quote`] for a path, whose bytes need not be UTF-8: such a path is written in ANSI-C
/// quotes with its bytes as `\xNN`, so the word names exactly that file.
pub fn shell_quote_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    match path.to_str() {
        Some(s) => shell_quote(s),
        None => ansi_c_quote(path.as_os_str().as_bytes()),
    }
}

/// `$'...'` with every byte that is not printable ASCII as `\xNN` (so every unsafe character,
/// and any byte of a multi-byte one, stays text), `\` and `'` escaped.
pub(super) fn ansi_c_quote(bytes: &[u8]) -> String {
    let mut out = String::from("$'");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('\'');
    out
}
