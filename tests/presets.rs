//! Every ready sweep in `assets/sweeps/` keeps its outputs' shape: the same CSV files, the same
//! header line, and the same setup values (experiment, method, block size, cache, ...) on every
//! row, compared with golden files in `tests/fixtures/presets/`. Each preset runs shrunk (a
//! 32 MiB test file, one repetition of 10 ms) so the whole set takes seconds; the measured columns
//! are left out, the setup is what a refactoring must not change. The classic command lines'
//! stdout (the XOR of a written file, of its reread, of `fast`) is held to golden text too.
//!
//! After an intended change of the outputs, regenerate the golden files with
//! `DISKSCOPE_BLESS=1 cargo test --test main presets` and review the diff.

use crate::util::{bin, tmp};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Columns that describe what was measured rather than what came out of it.
const SETUP_COLUMNS: &[&str] = &[
    "experiment",
    "file",
    "file_size_bytes",
    "operation",
    "method",
    "pattern",
    "cache",
    "direct",
    "block_size_bytes",
    "threads",
    "queue_depth",
    "rep",
    "reps",
    "syscall",
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/presets")
}

fn bless() -> bool {
    std::env::var_os("DISKSCOPE_BLESS").is_some()
}

/// The preset with a 32 MiB test file, one repetition and 10 ms per point.
fn shrink(text: &str) -> String {
    text.lines()
        .map(|l| {
            let key = l.split('=').next().unwrap_or("").trim();
            match key {
                "create" => "create = \"32M\"".to_string(),
                "seconds" => "seconds = 0.01".to_string(),
                "reps" => "reps = 1".to_string(),
                _ => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One CSV as golden text: its header, then the setup columns of every row.
fn digest_csv(path: &Path) -> String {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().clone();
    let mut out = format!("{}\n", header.iter().collect::<Vec<_>>().join(","));
    let keep: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| SETUP_COLUMNS.contains(h))
        .map(|(i, _)| i)
        .collect();
    for rec in r.records() {
        let rec = rec.unwrap();
        let cells: Vec<String> = keep
            .iter()
            .map(|i| format!("{}={}", &header[*i], &rec[*i]))
            .collect();
        out.push_str(&format!("  {}\n", cells.join(" ")));
    }
    out
}

/// Compares `got` with the golden file `name` (or writes it when blessing).
fn check_golden(name: &str, got: &str, failures: &mut Vec<String>) {
    let path = fixtures().join(name);
    if bless() {
        std::fs::create_dir_all(fixtures()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with DISKSCOPE_BLESS=1)", path.display()));
    if want != got {
        let diff: Vec<String> = want
            .lines()
            .zip(got.lines())
            .filter(|(a, b)| a != b)
            .take(3)
            .map(|(a, b)| format!("    was: {a}\n    now: {b}"))
            .collect();
        failures.push(format!(
            "{name}: outputs changed ({} lines before, {} now)\n{}",
            want.lines().count(),
            got.lines().count(),
            diff.join("\n")
        ));
    }
}

#[test]
fn every_preset_sweep_writes_the_same_csv_columns_and_setup_values_as_before() {
    let presets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sweeps");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&presets)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "presets: {names:?}");
    // Every preset at once, each in its own process and directory: the runs wait on the disk
    // and on their timers far more than on the CPU, so side by side they take about as long as
    // the longest instead of the sum (63 s one after another on a loaded 2-core machine).
    let runs: Vec<_> = names
        .into_iter()
        .map(|preset| {
            std::thread::spawn(move || {
                let stem = preset.file_stem().unwrap().to_string_lossy().to_string();
                let dir = tmp();
                let sweep = dir.path().join("sweep.toml");
                std::fs::write(&sweep, shrink(&std::fs::read_to_string(&preset).unwrap())).unwrap();
                let o = bin("diskscope")
                    .args(["--batch", "sweep.toml", "--out", "out"])
                    .current_dir(dir.path())
                    .timeout(Duration::from_secs(180))
                    .output()
                    .unwrap();
                assert!(
                    o.status.success(),
                    "{stem}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                let mut csvs: BTreeMap<String, String> = BTreeMap::new();
                for e in std::fs::read_dir(dir.path().join("out")).unwrap() {
                    let path = e.unwrap().path();
                    let name = path.file_name().unwrap().to_string_lossy().to_string();
                    // A timeline's row count is the run's length in intervals, not its setup.
                    if path.extension().is_some_and(|e| e == "csv")
                        && !name.ends_with("-timeline.csv")
                    {
                        csvs.insert(name, digest_csv(&path));
                    }
                }
                let got: String = csvs
                    .iter()
                    .map(|(name, d)| format!("## {name}\n{d}"))
                    .collect();
                (stem, got)
            })
        })
        .collect();
    let mut failures = Vec::new();
    for run in runs {
        let (stem, got) = run.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        check_golden(&format!("{stem}.txt"), &got, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_classic_command_lines_print_the_same_stdout_as_before() {
    let dir = tmp();
    let run = |args: &[&str]| {
        let o = bin("diskscope")
            .args(args)
            .current_dir(dir.path())
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        format!(
            "$ diskscope {}\n{}",
            args.join(" "),
            String::from_utf8_lossy(&o.stdout)
        )
    };
    let mut got = String::new();
    got += &run(&["run", "f", "-w", "4K", "300"]);
    got += &run(&["run", "f", "-r", "4K", "300"]);
    got += &run(&[
        "run", "f", "-r", "64K", "1000", "--method", "mmap", "-t", "2",
    ]);
    got += &run(&["run", "f", "-r", "512", "1000000", "--method", "io_uring"]);
    got += &run(&["fast", "f"]);
    let syscalls = run(&["syscalls", "f", "--seconds", "0.01", "--csv"]);
    // The header and the calls measured, not their costs.
    let mut calls = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(syscalls.as_bytes());
    got += &calls
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect::<Vec<_>>()
        .join("\n");
    got.push('\n');
    let mut failures = Vec::new();
    check_golden("classic-stdout.txt", &got, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_preset_runs_by_name_from_any_directory_and_a_file_of_that_name_wins() {
    let dir = tmp();
    // By name, from a directory that has no sweep in it.
    let o = bin("diskscope")
        .args(["--batch", "kdiskmark", "--dry-run"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.starts_with("sweep kdiskmark"), "{out}");
    // `diskscope presets`: one line per preset, each runnable by its name.
    let o = bin("diskscope").arg("presets").output().unwrap();
    let list = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success());
    let names: Vec<&str> = list
        .lines()
        .filter(|l| !l.starts_with("run one"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(
        names.contains(&"quick") && names.contains(&"part3-block-size"),
        "{list}"
    );
    // A file of the same name in the working directory wins over the preset.
    std::fs::write(
        dir.path().join("quick"),
        "name = \"mine\"\n[[experiment]]\nname = \"s\"\nkind = \"syscalls\"\nreps = 1\nseconds = 0.01\n",
    )
    .unwrap();
    let o = bin("diskscope")
        .args(["--batch", "quick", "--dry-run"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("sweep mine"));
    // Neither a file nor a preset: one line naming the presets, exit 2.
    let o = bin("diskscope")
        .args(["--batch", "kdiskmrk"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("kdiskmrk") && err.contains("part4-cold-warm"),
        "{err}"
    );
}
