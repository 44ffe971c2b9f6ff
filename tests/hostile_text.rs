//! Issue 21: text from outside (file names, paths, sweep fields, trace lines) never reaches the
//! terminal raw, and a path that is not UTF-8 is used as the bytes it is. Every output checked
//! here must carry no ESC, BEL, CSI or C1 byte, and no newline inside one of its lines.

use crate::util::{bin, p, tmp};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Whether `out` holds a byte that a terminal would take as a control: ESC, BEL, the C1 range
/// (as UTF-8 `\xc2\x80`..`\xc2\x9f`), or any C0 control other than newline and tab.
fn has_terminal_control(out: &[u8]) -> bool {
    out.iter()
        .any(|&b| b < 0x20 && b != b'\n' && b != b'\t' || b == 0x7f)
        || out
            .windows(2)
            .any(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1]))
}

fn write_sweep(dir: &tempfile::TempDir, text: &str) -> std::path::PathBuf {
    let path = p(dir, "sweep.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_command_point_reads_the_file_under_a_non_utf8_out_not_a_lossy_decoy() {
    let d = tmp();
    let out = d.path().join(OsStr::from_bytes(b"o\xff"));
    // The lossy spelling of --out, planted: the command must never read it.
    let decoy = d.path().join("o\u{FFFD}");
    std::fs::create_dir(&decoy).unwrap();
    let sweep = write_sweep(
        &d,
        r#"
[file]
create = "64K"
[[experiment]]
name = "peek"
kind = "command"
command = "test -f {file} && head -c 5 {file} > /dev/null"
reps = 1
"#,
    );
    let a = bin("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&a.stderr);
    assert_eq!(a.status.code(), Some(0), "{stderr}");
    let csv = std::fs::read_to_string(out.join("peek.csv")).unwrap();
    assert!(!csv.contains("failed"), "{csv}");
    assert_eq!(std::fs::read_dir(&decoy).unwrap().count(), 0);
    assert!(!has_terminal_control(&a.stderr), "{stderr}");
}
