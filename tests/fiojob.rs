//! Issue 26, "Speak fio": fio job files run through `--batch` (tests/fixtures/fio/jobs/, written
//! in the style of fio's own examples), every option diskscope does not implement refused by
//! name with its file and line, the `-fio.txt` companion planned back into the same points; and
//! the shell: completion scripts, the man page, `--version` with the git revision.

use crate::util::bin;

#[test]
fn the_bash_completion_script_loads_and_registers_diskscope() {
    let script = bin("diskscope")
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(script.status.success());
    let dir = crate::util::tmp();
    let path = dir.path().join("diskscope.bash");
    std::fs::write(&path, &script.stdout).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p diskscope",
            path.display()
        ))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{shown}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(shown.contains("diskscope"), "{shown}");
}

#[test]
fn zsh_and_fish_completions_name_the_subcommands() {
    for shell in ["zsh", "fish"] {
        let out = bin("diskscope")
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        for sub in ["run", "compare", "completions", "man"] {
            assert!(text.contains(sub), "{shell} script lacks {sub}");
        }
    }
}

#[test]
fn the_man_page_has_a_name_section_and_lists_the_subcommands() {
    let out = bin("diskscope").arg("man").output().unwrap();
    assert!(out.status.success());
    let roff = String::from_utf8_lossy(&out.stdout);
    assert!(roff.contains(".TH diskscope"), "{roff}");
    assert!(roff.contains(".SH NAME"), "{roff}");
    assert!(roff.contains(".SH SUBCOMMANDS"), "{roff}");
    for sub in ["run", "compare", "completions", "man"] {
        assert!(
            roff.contains(&format!("diskscope\\-{sub}(1)")),
            "no {sub} in {roff}"
        );
    }
    // Rendered by man itself where it is installed.
    let dir = crate::util::tmp();
    let page = dir.path().join("diskscope.1");
    std::fs::write(&page, &out.stdout).unwrap();
    match std::process::Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
    {
        Ok(m) if m.status.success() => {
            let text = String::from_utf8_lossy(&m.stdout);
            assert!(
                text.contains("NAME") && text.contains("SUBCOMMANDS"),
                "{text}"
            );
        }
        Ok(m) => panic!("man -l failed: {}", String::from_utf8_lossy(&m.stderr)),
        Err(e) => eprintln!("skipped rendering: man is not installed ({e})"),
    }
}

#[test]
fn version_names_the_git_revision() {
    let out = bin("diskscope").arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let expected = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match expected {
        Some(rev) => assert!(text.contains(&format!("({rev})")), "{text}"),
        None => assert!(text.contains('('), "{text}"),
    }
}
