//! Issue 21: text from outside (file names, paths, sweep fields, trace lines) never reaches the
//! terminal raw, and a path that is not UTF-8 is used as the bytes it is. Every output checked
//! here must carry no ESC, BEL, CSI or C1 byte, and no newline inside one of its lines.

use crate::util::{bin, p, tmp};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

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

/// `name` as a TOML basic string's body: quotes, backslashes and every control as `\uXXXX`.
fn toml_escaped(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '"' => "\\\"".to_string(),
            '\\' => "\\\\".to_string(),
            c if c.is_control() => format!("\\u{:04X}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

/// The explorer's screen as text, every cell's symbol in order, rows joined by newlines.
fn explorer_screen(app: &diskscope::tui::app::App, width: u16, height: u16) -> String {
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| f.render_widget(app, f.area())).unwrap();
    let buf = terminal.backend().buffer().clone();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An explorer on a file named `name` (its scratch file and CSV named after it too), with
/// `message` on its status line.
fn hostile_explorer(name: &str, message: &str) -> diskscope::tui::app::App {
    let dir = Path::new("/data").join(name);
    let mut app = diskscope::tui::app::App::new(
        dir.join(name),
        1 << 30,
        dir.join(format!(".{name}.diskscope-scratch")),
        dir.join(format!("{name}.csv")),
    );
    app.message = message.to_string();
    app
}

#[test]
fn a_file_named_with_an_escape_sequence_is_drawn_escaped_in_every_explorer_panel() {
    let name = "big\u{1b}]2;pwned\u{7}\u{9b}31m.bin";
    let mut app = hostile_explorer(name, &format!("error: cannot open {name}\nsecond line"));
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = explorer_screen(&app, w, h);
        assert!(!has_terminal_control(screen.as_bytes()), "{screen}");
        assert!(screen.contains("big\\u{1b}]2;pwned"), "{screen}");
    }
    app.show_help = true;
    let help = explorer_screen(&app, 100, 40);
    assert!(!has_terminal_control(help.as_bytes()), "{help}");
}

#[test]
fn run2_on_a_file_named_with_newlines_and_escapes_fails_in_one_escaped_line() {
    let d = tmp();
    let f = d.path().join("a\nb\u{1b}]2;x\u{7}");
    let a = bin("run2").arg(&f).args(["4K"]).output().unwrap();
    assert_ne!(a.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&a.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!has_terminal_control(&a.stderr), "{stderr:?}");
    assert!(stderr.contains("a\\nb\\u{1b}]2;x\\u{7}"), "{stderr}");
}

#[test]
fn a_hostile_trace_line_is_quoted_escaped_in_the_error() {
    use diskscope::locality::trace::parse_trace;
    for trace in [
        "\u{1b}]2;pwned\u{7}\n",
        "h - - [10/Oct/2000:13:55:36 -0700] \"GET /\u{1b}[2J/x.txt HTTP/1.0\" 200 1\n",
        "h - - [10/Oct/2000:13:55:36 -0700] \"GET /\u{9b}2J HTTP/1.0\" 2\u{7}0 1\n",
    ] {
        let e = parse_trace(trace, 100).unwrap_err().to_string();
        assert!(!has_terminal_control(e.as_bytes()), "{e:?}");
        assert!(!e.contains('\n'), "{e:?}");
    }
}

/// The dry run's plan text of a sweep described `description` whose test file is `file`.
fn plan_text_of(description: &str, file: &str) -> Option<String> {
    use diskscope::sweep::schema::Source;
    let text = format!(
        "name = \"s\"\ndescription = \"{}\"\n[file]\npath = \"/nonexistent-diskscope/{}\"\n\
         create = \"1M\"\n[[experiment]]\nname = \"a\"\nkind = \"throughput\"\n\
         block_size = \"4K\"\nseconds = 0.1\n",
        toml_escaped(description),
        toml_escaped(file),
    );
    let src = Source {
        display: "t.toml".into(),
        text,
    };
    let doc = src.parse().ok()?;
    let plan = diskscope::sweep::plan::build(
        &src,
        &doc,
        "t",
        Some(Path::new("/nonexistent-diskscope-out")),
    )
    .ok()?;
    Some(diskscope::sweep::text::plan_text(&plan))
}

#[test]
fn the_dry_run_shows_a_hostile_description_and_file_path_escaped_on_their_lines() {
    let shown = plan_text_of("s\u{1b}]2;t\u{7}", "f\nx\u{1b}[2J").expect("it plans");
    assert!(!has_terminal_control(shown.as_bytes()), "{shown}");
    assert!(
        shown.contains("file: /nonexistent-diskscope/f\\nx\\u{1b}[2J"),
        "{shown}"
    );
    assert!(
        shown.starts_with("sweep s: s\\u{1b}]2;t\\u{7}\n"),
        "{shown}"
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Text mixing plain characters with the controls a terminal acts on.
    fn hostile_text() -> impl Strategy<Value = String> {
        let c = prop_oneof![
            4 => proptest::char::range('a', 'z'),
            1 => Just('\u{1b}'),
            1 => Just('\u{7}'),
            1 => Just('\n'),
            1 => Just('\r'),
            1 => Just('\u{9b}'),
            1 => Just('\u{85}'),
            1 => Just('\u{202e}'),
            1 => any::<char>(),
        ];
        proptest::collection::vec(c, 1..24).prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn the_error_line_stays_one_line_without_controls(name in hostile_text()) {
            let e = anyhow::anyhow!("FILE: {name} does not exist")
                .context(format!("opening {name}"));
            let line = diskscope::cli::error_line(&e);
            prop_assert!(!has_terminal_control(line.as_bytes()), "{line:?}");
            prop_assert!(!line.contains('\n'), "{line:?}");
        }

        #[test]
        fn the_batch_plan_text_carries_no_control(text in hostile_text(), path in hostile_text()) {
            let plain = plan_text_of("x", "x").expect("a plain sweep plans");
            // A name the planner refuses is refused in the one error line, checked above.
            if let Some(shown) = plan_text_of(&text, &path.replace('/', "_")) {
                prop_assert!(!has_terminal_control(shown.as_bytes()), "{}", shown);
                prop_assert_eq!(shown.lines().count(), plain.lines().count(), "{}", shown);
                prop_assert!(shown.lines().any(|l| l.starts_with("file: ")), "{}", shown);
            }
        }

        #[test]
        fn the_explorer_screen_carries_no_control(name in hostile_text(), message in hostile_text()) {
            let name = name.replace('/', "_");
            let app = hostile_explorer(&name, &message);
            let screen = explorer_screen(&app, 80, 24);
            prop_assert!(!has_terminal_control(screen.as_bytes()), "{}", screen);
        }
    }
}
