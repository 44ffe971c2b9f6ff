//! The README's own commands work as written on a fresh clone.

use std::path::Path;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// Lines of the README's shell blocks.
fn shell_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for l in text.lines() {
        if l.starts_with("```") {
            inside = l == "```sh";
            continue;
        }
        if inside {
            out.push(l.split('#').next().unwrap_or("").trim().to_string());
        }
    }
    out
}

#[test]
fn readme_commands_name_a_diskscope_that_exists_after_the_build() {
    let text = readme();
    let installs = text.contains("cargo install --path .");
    for l in shell_lines(&text) {
        if l.starts_with("diskscope ") {
            assert!(
                installs,
                "`{l}` needs diskscope on PATH, but the README never installs it"
            );
        }
    }
}

#[test]
fn readme_run2_example_has_a_file_big_enough_for_5_seconds_of_4k_reads() {
    // run2 doubles the block count until a read takes 5 s; on a fast cached machine 4 KiB reads
    // need more than 4 GiB, so the README's file must be at least 8 GiB when run2 follows.
    let lines = shell_lines(&readme());
    let Some(run2) = lines.iter().position(|l| l.contains("run2 big.dat")) else {
        return;
    };
    let write = lines[..run2]
        .iter()
        .rev()
        .find(|l| l.contains("big.dat -w"))
        .expect("a write of big.dat before run2");
    let parts: Vec<&str> = write.split_whitespace().collect();
    let bs = diskscope::size::parse_size(parts[parts.len() - 2]).unwrap();
    let count: u64 = parts[parts.len() - 1].parse().unwrap();
    assert!(bs * count >= 8 << 30, "{write} writes less than 8 GiB");
}

#[test]
fn the_readme_example_file_is_ignored_by_git() {
    let ignore = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".gitignore"))
        .unwrap_or_default();
    assert!(ignore
        .lines()
        .any(|l| l.trim() == "big.dat" || l.trim() == "/big.dat"));
}
