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
    app.view.show_help = true;
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

// ---- third round (issue 34): escapes in paths on every way to the terminal -----------------

/// A directory name that retitles the terminal and turns its text red when printed raw.
const HOSTILE_DIR: &str = "d\u{1b}]0;pwned\u{7}\u{1b}[31m";

/// Asserts that neither stream of `out` carries a terminal control; returns stderr.
fn clean(what: &str, out: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !has_terminal_control(&out.stderr),
        "{what}: stderr {stderr:?}"
    );
    assert!(
        !has_terminal_control(&out.stdout),
        "{what}: stdout {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// The arguments bash reads from `line` (with `set --`, which runs nothing).
fn shell_words(line: &str) -> Vec<Vec<u8>> {
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("set -- {line}; printf '%s\\0' \"$@\""))
        .output()
        .unwrap();
    assert!(out.status.success(), "bash could not read {line:?}");
    out.stdout
        .split(|&b| b == 0)
        .filter(|w| !w.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

#[test]
fn escape_sequences_in_paths_never_reach_the_terminal_and_the_fio_line_stays_a_shell_word() {
    let d = tmp();
    let dir = d.path().join(HOSTILE_DIR);
    std::fs::create_dir(&dir).unwrap();
    let mut tried = 0;
    // run --fio: the printed fio line names the file in one shell word that bash reads back.
    let f = dir.join("t\u{1b}[2J.bin");
    let a = bin("run")
        .arg(&f)
        .args(["-w", "4K", "16", "--fio"])
        .output()
        .unwrap();
    tried += 1;
    let err = clean("run --fio", &a);
    assert_eq!(a.status.code(), Some(0), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("fio "))
        .unwrap_or_else(|| panic!("no fio line in {err}"));
    let words = shell_words(line);
    let want = format!("--filename={}", f.display()).into_bytes();
    assert!(
        words.contains(&want),
        "the fio line does not name the file as one word: {line}"
    );
    // run2 on a file that ends before the target: the advice names the file, escaped.
    let a = bin("run2")
        .arg(&f)
        .args(["4K", "--target", "30"])
        .output()
        .unwrap();
    tried += 1;
    let err = clean("run2", &a);
    assert!(err.contains("ends after"), "{err}");
    assert!(err.contains("d\\u{1b}]0;pwned\\u{7}"), "{err}");
    // A batch in that directory: "creating the test file …", "wrote N files to …".
    let sweep = write_sweep(
        &d,
        &format!(
            "[file]\npath = \"{}\"\ncreate = \"64K\"\n[[experiment]]\nname = \"r\"\n\
             kind = \"throughput\"\nblock_size = \"16K\"\nreps = 2\nseconds = 0.05\n",
            toml_escaped(dir.join("tf.bin").to_str().unwrap())
        ),
    );
    let mut outs = Vec::new();
    for (i, dry) in [false, true].into_iter().enumerate() {
        let out_dir = dir.join(format!("out{i}"));
        let a = bin("diskscope")
            .arg("--batch")
            .arg(&sweep)
            .args(if dry { &["--dry-run"][..] } else { &[][..] })
            .arg("--out")
            .arg(&out_dir)
            .output()
            .unwrap();
        tried += 1;
        let err = clean("batch", &a);
        assert_eq!(a.status.code(), Some(0), "{err}");
        if !dry {
            assert!(err.contains("creating the test file"), "{err}");
            assert!(err.contains("wrote "), "{err}");
            outs.push(out_dir);
        }
    }
    // A second batch for compare.
    let out2 = dir.join("out-b");
    let a = bin("diskscope")
        .arg("--batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out2)
        .output()
        .unwrap();
    assert_eq!(a.status.code(), Some(0));
    // compare --plot and --report: "wrote …".
    let a = bin("diskscope")
        .arg("compare")
        .arg(&outs[0])
        .arg(&out2)
        .arg("--plot")
        .arg(dir.join("p\u{1b}[5m.svg"))
        .arg("--report")
        .arg(dir.join("r\u{7}.html"))
        .output()
        .unwrap();
    tried += 1;
    let err = clean("compare --plot", &a);
    assert!(err.contains("wrote"), "{err}");
    // A fio job's filename= in "creating the test file …" and the plan.
    let job = dir.join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[r]\nrw=read\nfilename={}\nbs=16k\nsize=64k\n",
            dir.join("job\u{1b}]0;x\u{7}.bin").display()
        ),
    )
    .unwrap();
    let a = bin("diskscope")
        .arg("--batch")
        .arg(&job)
        .arg("--out")
        .arg(dir.join("out-job"))
        .output()
        .unwrap();
    tried += 1;
    let err = clean("fio job", &a);
    assert_eq!(a.status.code(), Some(0), "{err}");
    assert!(err.contains("creating the test file"), "{err}");
    eprintln!("attacks tried and held: {tried}");
}

/// Every line the crate prints goes through one escaping function: no bare `println!`,
/// `eprintln!`, `print!` or `eprint!` with arguments in src/ outside `text.rs`'s macros (tests
/// aside), and no path printed with `.display()` inside one.
#[test]
fn every_print_in_src_goes_through_the_escaping_macros() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") || p.ends_with("text.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for m in ["println!(", "eprintln!(", "print!(", "eprint!("] {
                for (at, _) in code.match_indices(m) {
                    // A word of its own (`eprint!(` holds `print!(`; `crate::eprintln_shown!(`
                    // is the way), not in a comment.
                    let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
                    let line = &code[line_start..];
                    if code[..at]
                        .chars()
                        .last()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                        || line.trim_start().starts_with("//")
                    {
                        continue;
                    }
                    if !prints_a_plain_literal(&code[at + m.len()..]) {
                        let n = code[..at].lines().count();
                        bad.push(format!(
                            "{}:{n}: {}",
                            p.display(),
                            line.lines().next().unwrap_or_default().trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "print through crate::eprintln_shown! (text::shown_lines):\n{}",
        bad.join("\n")
    );
}

/// Whether the arguments of a print macro (`rest`, after its `(`) are nothing, or one string
/// literal without a `{` (text of the crate's own, with nothing from outside).
fn prints_a_plain_literal(rest: &str) -> bool {
    let rest = rest.trim_start();
    if rest.starts_with(')') {
        return true;
    }
    let Some(body) = rest.strip_prefix('"') else {
        return false;
    };
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '{' => return false,
            '"' => {
                let after = body[i + 1..].trim_start();
                let after = after.strip_prefix(',').unwrap_or(after).trim_start();
                return after.starts_with(')');
            }
            _ => {}
        }
    }
    false
}

// ---- third round (issue 34): no CSV cell runs as a spreadsheet formula ---------------------

/// Whether a spreadsheet would run `cell` as a formula: it starts with `=`, `+`, `-`, `@`, a tab
/// or a carriage return and is not a plain number.
fn runs_as_formula(cell: &str) -> bool {
    cell.starts_with(['=', '+', '-', '@', '\t', '\r']) && cell.parse::<f64>().is_err()
}

/// Every cell of every CSV under `dir` (and the CSV text `extra`): none runs as a formula.
fn assert_no_formula(what: &str, texts: &[(String, String)]) {
    for (name, text) in texts {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(text.as_bytes());
        for rec in r.records() {
            for cell in rec.unwrap().iter() {
                assert!(
                    !runs_as_formula(cell),
                    "{what}: {name} has a formula cell {cell:?}"
                );
            }
        }
    }
}

fn csv_texts(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "csv") {
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
    assert!(!out.is_empty(), "no CSV in {}", dir.display());
    out
}

#[test]
fn paths_and_names_that_look_like_formulas_are_neutralised_in_every_csv() {
    let d = tmp();
    let mut tried = 0;
    let names = [
        "=1+2.bin",
        "+cmd.bin",
        "-x.bin",
        "@x.bin",
        "=HYPERLINK(\"http:evil\",\"click\")",
        "\tx.bin",
    ];
    let mut outs = Vec::new();
    for (i, name) in names.iter().enumerate() {
        // A relative path, as the attack gave it: the `file` cell is the text itself.
        let sweep = write_sweep(
            &d,
            &format!(
                "[file]\npath = \"{}\"\ncreate = \"64K\"\n[[experiment]]\nname = \"r\"\n\
                 kind = \"throughput\"\nblock_size = \"16K\"\nreps = 1\nseconds = 0.05\n",
                toml_escaped(name)
            ),
        );
        let out = d.path().join(format!("out{i}"));
        let a = bin("diskscope")
            .current_dir(d.path())
            .arg("--batch")
            .arg(&sweep)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        tried += 1;
        assert_eq!(
            a.status.code(),
            Some(0),
            "{name:?}: {}",
            String::from_utf8_lossy(&a.stderr)
        );
        let texts = csv_texts(&out);
        assert_no_formula(name, &texts);
        // The cell still says which file: the text, after the guard's quote.
        let rows = crate::util::csv_file_maps(&out.join("r.csv"));
        assert!(rows[0]["file"].starts_with('\''), "{:?}", rows[0]["file"]);
        outs.push(out);
    }
    // compare --csv of two such batches prints guarded cells too.
    let a = bin("diskscope")
        .args(["compare", "--csv"])
        .arg(&outs[0])
        .arg(&outs[1])
        .output()
        .unwrap();
    tried += 1;
    assert_no_formula(
        "compare --csv",
        &[(
            "stdout".into(),
            String::from_utf8_lossy(&a.stdout).into_owned(),
        )],
    );
    // fio job names become experiment names and cells.
    let job = d.path().join("j.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=data.bin\nsize=64k\nbs=16k\n\n[@SUM(1+1)]\nrw=read\n\n[-2+3]\nrw=read\n",
    )
    .unwrap();
    let out = d.path().join("out-fio");
    let a = bin("diskscope")
        .current_dir(d.path())
        .arg("--batch")
        .arg(&job)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    tried += 1;
    assert_eq!(
        a.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&a.stderr)
    );
    assert_no_formula("fio job names", &csv_texts(&out));
    // The explorer's `s` rows.
    let saved = d.path().join("tui.csv");
    for name in names {
        let row = diskscope::measure::RunResult {
            identity: diskscope::measure::result::Identity {
                file: name.to_string(),
                experiment: name.to_string(),
                ..Default::default()
            },
            figures: diskscope::measure::result::Figures {
                error: format!("{name}: failed"),
                ..Default::default()
            },
            ..Default::default()
        };
        diskscope::tui::save::append_rows(&saved, &[row]).unwrap();
        tried += 1;
    }
    assert_no_formula(
        "explorer s",
        &[("tui.csv".into(), std::fs::read_to_string(&saved).unwrap())],
    );
    eprintln!("attacks tried and held: {tried}");
}

#[test]
fn escape_bytes_of_fio_job_names_never_reach_compares_html_or_terminal_raw() {
    let d = tmp();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/psync-seq-rand.json");
    let text = std::fs::read_to_string(fixture).unwrap();
    let hostile = text.replace(
        "\"jobname\" : \"seqread\"",
        "\"jobname\" : \"seq\\u001b]0;pwned\\u0007\\u001b[31mread\"",
    );
    assert_ne!(hostile, text, "the fixture changed: fix the test");
    let old = p(&d, "old.json");
    let new = p(&d, "new.json");
    std::fs::write(&old, &hostile).unwrap();
    std::fs::write(&new, &hostile).unwrap();
    let report = p(&d, "r.html");
    let a = bin("diskscope")
        .arg("compare")
        .arg(&old)
        .arg(&new)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let stderr = clean("compare --report", &a);
    assert_eq!(a.status.code(), Some(0), "{stderr}");
    let html = std::fs::read(&report).unwrap();
    assert!(!has_terminal_control(&html), "raw controls in the HTML");
    assert!(
        String::from_utf8_lossy(&html).contains("seq\\u{1b}]0;pwned\\u{7}"),
        "the job name is not shown escaped"
    );
    for flag in ["--markdown", "--csv"] {
        let a = bin("diskscope")
            .args(["compare", flag])
            .arg(&old)
            .arg(&new)
            .output()
            .unwrap();
        clean(flag, &a);
    }
}
