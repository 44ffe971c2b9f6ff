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
fn readme_run2_example_has_a_file_big_enough_for_its_target_read_from_the_page_cache() {
    // run2 doubles the block count until a read takes --target seconds (5 by default). The
    // README's file is written just before, so it is in the page cache: 4 KiB reads of it run at
    // several GiB/s (2.5 on one lab VM, 4.8 on another, where a 2 GiB file for a 0.5 s target
    // ran out first: CI's examples failed), and a machine with room to cache it (24 GiB holds an
    // 8 GiB file) would run out of file before 5 s. So the file must hold at least 8 GiB per
    // second of target.
    let lines = shell_lines(&readme());
    let Some(run2) = lines.iter().position(|l| l.contains("run2 big.dat")) else {
        return;
    };
    let words: Vec<&str> = lines[run2].split_whitespace().collect();
    let target_s: f64 = words
        .iter()
        .position(|w| *w == "--target")
        .map_or(5.0, |i| words[i + 1].parse().unwrap());
    let write = lines[..run2]
        .iter()
        .rev()
        .find(|l| l.contains("big.dat -w"))
        .expect("a write of big.dat before run2");
    let parts: Vec<&str> = write.split_whitespace().collect();
    let bs = diskscope::size::parse_size(parts[parts.len() - 2]).unwrap();
    let count: u64 = parts[parts.len() - 1].parse().unwrap();
    let needed = (target_s * (8u64 << 30) as f64) as u64;
    assert!(
        bs * count >= needed,
        "{write} writes less than {needed} bytes, what {target_s} s of cached 4K reads can take"
    );
}

#[test]
fn the_readme_fits_in_15_kb_and_states_the_test_command_ci_runs() {
    let text = readme();
    assert!(text.len() <= 15 * 1024, "README.md is {} bytes", text.len());
    let lines = shell_lines(&text);
    assert!(lines.iter().any(|l| l == "cargo test"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l == "cargo run --release"),
        "{lines:?}"
    );
    // The picture at the top is there.
    let picture = text
        .lines()
        .find_map(|l| l.strip_prefix("![").and_then(|l| l.split("](").nth(1)))
        .and_then(|l| l.strip_suffix(')'))
        .expect("a picture");
    assert!(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(picture)
            .is_file(),
        "{picture}"
    );
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(ci.contains("cargo test"), "CI runs what README says");
}

#[test]
fn the_guide_has_no_history_and_its_links_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The pages the guide's other authors own are checked by their own tests.
    let theirs = ["safety.md", "explain.md", "architecture.md"];
    let mut pages = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.extension().is_some_and(|x| x == "md") && !theirs.contains(&name.as_str()) {
            pages.push(p);
        }
    }
    let mut bad = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for (i, line) in text.lines().enumerate() {
            if is_history(&line.to_lowercase()) {
                bad.push(format!("{}:{}: {line}", page.display(), i + 1));
            }
            // Relative links: [text](path) to a file of the checkout.
            for part in line.split("](").skip(1) {
                let target = part.split(')').next().unwrap_or("");
                let target = target.split('#').next().unwrap_or("");
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                if !page.parent().unwrap().join(target).exists() {
                    bad.push(format!(
                        "{}:{}: broken link {target}",
                        page.display(),
                        i + 1
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Whether `line` (lower case) tells the project's history instead of the program: "issue 12",
/// "stop 31", "this session".
fn is_history(line: &str) -> bool {
    let numbered = |word: &str| {
        line.match_indices(word).any(|(i, _)| {
            line[i + word.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
    };
    numbered("issue ") || numbered("stop ") || line.contains("this session")
}
