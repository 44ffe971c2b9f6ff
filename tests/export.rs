//! Issue 35 step 5, one export path from the outside: every `--export-csv/json/svg/html` of
//! `run`, `knee` and `compare` writes its file, refuses an existing one without `--force` (by its
//! flag, before anything is measured, the old file untouched) and replaces it with `--force`;
//! the SVGs are well-formed XML. No timing is judged: only what was written.

use crate::util::{bin, p, tmp, write_varied_file};
use std::path::{Path, PathBuf};

/// The four outputs of one command line, in `dir` with file names starting `stem`.
fn exports(dir: &tempfile::TempDir, stem: &str) -> [(&'static str, PathBuf); 4] {
    [
        ("--export-csv", p(dir, &format!("{stem}.csv"))),
        ("--export-json", p(dir, &format!("{stem}.json"))),
        ("--export-svg", p(dir, &format!("{stem}.svg"))),
        ("--export-html", p(dir, &format!("{stem}.html"))),
    ]
}

fn export_args(outs: &[(&'static str, PathBuf)]) -> Vec<std::ffi::OsString> {
    outs.iter()
        .flat_map(|(flag, path)| [flag.into(), path.clone().into_os_string()])
        .collect()
}

/// A well-formedness check of XML as we write it: every tag closed in order, attributes
/// quoted, only the five entities and numeric ones, no control character.
fn well_formed(svg: &str) -> Result<(), String> {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = svg.trim();
    if !rest.starts_with("<svg") {
        return Err("does not start with <svg".into());
    }
    let text_ok = |t: &str| -> Result<(), String> {
        let mut r = t;
        while let Some(i) = r.find('&') {
            let after = &r[i + 1..];
            let end = after.find(';').ok_or(format!("bare & in {t:?}"))?;
            let e = &after[..end];
            if !(["amp", "lt", "gt", "quot", "apos"].contains(&e)
                || e.strip_prefix('#')
                    .is_some_and(|d| d.parse::<u32>().is_ok()))
            {
                return Err(format!("entity &{e};"));
            }
            r = &after[end..];
        }
        if t.chars().any(|c| c.is_control() && !"\n\t\r".contains(c)) {
            return Err(format!("control character in {t:?}"));
        }
        Ok(())
    };
    while let Some(i) = rest.find('<') {
        text_ok(&rest[..i])?;
        let end = rest[i..].find('>').ok_or("unclosed tag")? + i;
        let tag = &rest[i + 1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            if stack.pop() != Some(name.trim()) {
                return Err(format!("</{name}> out of order"));
            }
            continue;
        }
        if !tag.matches('"').count().is_multiple_of(2) {
            return Err(format!("unbalanced quotes in <{tag}>"));
        }
        let name = tag.split_whitespace().next().unwrap_or("");
        if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    text_ok(rest)?;
    if stack.is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed: {stack:?}"))
    }
}

/// Checks the four files: CSV with a header and a row, one JSON document, an SVG that parses,
/// a page with the figure inline.
fn check_written(outs: &[(&'static str, PathBuf)], json_command: &str) {
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    let csv = read(&outs[0].1);
    assert!(csv.lines().count() >= 2, "a header and rows: {csv}");
    let doc: serde_json::Value = serde_json::from_str(&read(&outs[1].1)).expect("one document");
    assert_eq!(doc["command"], json_command, "{doc}");
    let svg = read(&outs[2].1);
    well_formed(&svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
    let html = read(&outs[3].1);
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains("<svg"),
        "{html}"
    );
}

/// Runs `cmd` again over existing outputs: refused with exit 2, naming the first flag, nothing
/// on stdout (nothing was measured), every old file as it was.
fn refused_then_forced(cmd: &dyn Fn(bool) -> std::process::Output, outs: &[(&str, PathBuf)]) {
    for (_, path) in outs {
        std::fs::write(path, "keep").unwrap();
    }
    let out = cmd(false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--export-csv") && stderr.contains("already exists; pass --force"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "refused before measuring");
    for (_, path) in outs {
        assert_eq!(std::fs::read_to_string(path).unwrap(), "keep");
    }
    let out = cmd(true);
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (_, path) in outs {
        assert_ne!(std::fs::read_to_string(path).unwrap(), "keep", "{path:?}");
    }
}

#[test]
fn run_writes_every_export_and_refuses_an_old_one_without_force() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 1 << 20, 3);
    let outs = exports(&dir, "r");
    let run = |force: bool| {
        let mut c = bin("diskscope");
        c.arg("run").arg("-r").arg(&f).args(["4K", "256"]);
        // Paced at 500/s: ~0.5 s, five 100 ms intervals, enough for a timeline figure.
        c.args(["--rate", "500", "--interval", "100ms"])
            .args(export_args(&outs));
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let out = run(false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // stdout keeps its one answer, the XOR.
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim().len(), 8);
    for (_, path) in &outs {
        assert!(
            stderr.contains(&format!("wrote {}", path.display())),
            "{stderr}"
        );
    }
    check_written(&outs, "run");
    let csv = std::fs::read_to_string(&outs[0].1).unwrap();
    assert!(csv.starts_with("experiment,"), "{csv}");
    assert!(csv.contains(",4096,"), "the row: {csv}");
    refused_then_forced(&run, &outs);
}

#[test]
fn an_output_at_the_runs_own_file_or_at_another_outputs_path_is_refused_before_writing() {
    let dir = tmp();
    let data = p(&dir, "new.bin");
    let out = bin("diskscope")
        .arg("run")
        .arg("-w")
        .arg(&data)
        .args(["64K", "4", "--export-csv"])
        .arg(&data)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--export-csv") && stderr.contains("FILE"),
        "{stderr}"
    );
    assert!(!data.exists(), "nothing was written");
    let f = p(&dir, "data");
    write_varied_file(&f, 1 << 16, 2);
    let x = p(&dir, "x");
    let out = bin("diskscope")
        .arg("run")
        .arg("-r")
        .arg(&f)
        .args(["4K", "1", "--export-csv"])
        .arg(&x)
        .arg("--export-html")
        .arg(&x)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("also given to --export-csv"), "{stderr}");
}

#[test]
fn knee_writes_every_export_and_refuses_an_old_one_without_force() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 4 << 20, 5);
    let outs = exports(&dir, "k");
    let knee = |force: bool| {
        let mut c = bin("diskscope");
        c.arg("knee").arg(&f);
        c.args(["--p99", "1s", "--seconds", "0.2", "--min-ops", "50"]);
        c.args(["--max-points", "2"]).args(export_args(&outs));
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let out = knee(false);
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 1,
        "exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_written(&outs, "knee");
    let csv = std::fs::read_to_string(&outs[0].1).unwrap();
    assert!(csv.starts_with("offered_iops,"), "{csv}");
    let svg = std::fs::read_to_string(&outs[2].1).unwrap();
    assert!(svg.contains("offered rate"), "the knee's figure");
    refused_then_forced(&knee, &outs);
}

#[test]
fn compare_writes_every_export_and_its_old_flags_still_work() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 1 << 20, 9);
    // Two single-point results, each one run's row.
    let side = |name: &str| {
        let csv = p(&dir, name);
        let out = bin("diskscope")
            .arg("run")
            .arg("-r")
            .arg(&f)
            .args(["4K", "256", "--export-csv"])
            .arg(&csv)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        csv
    };
    let (old, new) = (side("old.csv"), side("new.csv"));
    let outs = exports(&dir, "c");
    let (plot, report) = (p(&dir, "plot.svg"), p(&dir, "report.html"));
    let compare = |force: bool| {
        let mut c = bin("diskscope");
        c.arg("compare")
            .arg(&old)
            .arg(&new)
            .args(export_args(&outs));
        c.arg("--plot").arg(&plot).arg("--report").arg(&report);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let out = compare(false);
    let code = out.status.code().unwrap();
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&out.stderr));
    check_written(&outs, "compare");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&outs[1].1).unwrap()).unwrap();
    assert!(!doc["rows"].as_array().unwrap().is_empty(), "{doc}");
    // --plot and --report are the same outputs as --export-svg and --export-html.
    assert_eq!(
        std::fs::read_to_string(&plot).unwrap(),
        std::fs::read_to_string(&outs[2].1).unwrap()
    );
    assert!(std::fs::read_to_string(&report)
        .unwrap()
        .contains("diskscope compare"));
    std::fs::remove_file(&plot).unwrap();
    std::fs::remove_file(&report).unwrap();
    refused_then_forced(&compare, &outs);
}

#[test]
fn an_output_is_never_written_through_a_link_not_even_with_force() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 1 << 16, 1);
    let link = p(&dir, "link.svg");
    std::os::unix::fs::symlink(p(&dir, "elsewhere"), &link).unwrap();
    let out = bin("diskscope")
        .arg("run")
        .arg("-r")
        .arg(&f)
        .args(["4K", "1", "--export-svg"])
        .arg(&link)
        .arg("--force")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--export-svg") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    assert!(!p(&dir, "elsewhere").exists());
}
