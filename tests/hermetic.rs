//! The tests never read or write the home, cache or working directory of the user who runs
//! them: a limits profile stored by `diskscope limits`, or rows saved by the explorer, must not
//! change what a test sees (`tests/util.rs`: a sandbox for the whole test process, made before
//! `main`, and one more for every binary a test starts).

use crate::util::{bin, p, tmp, write_varied_file};
use std::path::{Path, PathBuf};

/// `fast FILE --json`'s `bound` column for `c` (`fast` run on `f`): set only when a limits
/// profile covers the file's device.
fn bound_seen(mut c: std::process::Command, f: &Path) -> serde_json::Value {
    let out = c
        .arg(f)
        .args(["--road", "pread", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["results"][0]["bound"].clone()
}

#[test]
fn a_binary_does_not_see_a_profile_in_the_invoking_users_cache() {
    let dir = tmp();
    let f = p(&dir, "data");
    write_varied_file(&f, 1 << 20, 9);
    // A user whose `diskscope limits` stored a profile of this device in `~/.cache`.
    let user_home = p(&dir, "user");
    let user_cache = user_home.join(".cache");
    crate::util::store_synthetic_profile(&user_cache, dir.path(), 1.0);
    let fast = crate::util::command("fast").get_program().to_owned();
    let as_user = || {
        let mut c = std::process::Command::new(&fast);
        c.env("HOME", &user_home).env("XDG_CACHE_HOME", &user_cache);
        c
    };
    let seen = bound_seen(as_user(), &f);
    assert!(
        seen.as_str().is_some_and(|b| b.ends_with("-bound")),
        "the user's own run uses the profile: {seen}"
    );
    // The same environment, made hermetic as every test's binary is: no profile.
    let mut c = as_user();
    crate::util::hermetic(&mut c);
    let seen = bound_seen(c, &f);
    assert!(
        seen.as_str().is_none_or(str::is_empty),
        "a test's binary read the user's cache: {seen}"
    );
}

#[test]
fn the_test_process_runs_in_a_home_and_directory_of_its_own() {
    let temp = std::env::temp_dir();
    let home = PathBuf::from(std::env::var_os("HOME").unwrap());
    let cache = PathBuf::from(std::env::var_os("XDG_CACHE_HOME").unwrap());
    let cwd = std::env::current_dir().unwrap();
    for (what, p) in [("HOME", &home), ("XDG_CACHE_HOME", &cache), ("cwd", &cwd)] {
        assert!(p.starts_with(&temp), "{what} is {}", p.display());
    }
    assert_ne!(cwd, Path::new(env!("CARGO_MANIFEST_DIR")));
    // A binary gets yet another one: what it leaves in its working directory stays there.
    let out = bin("diskscope")
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let c = crate::util::command("run");
    let child_dir = c.get_current_dir().unwrap();
    assert!(child_dir.starts_with(&temp) && child_dir != cwd);
    let envs: Vec<_> = c.get_envs().collect();
    for v in ["HOME", "XDG_CACHE_HOME"] {
        let set = envs.iter().find(|(k, _)| *k == v).and_then(|(_, x)| *x);
        assert!(
            set.is_some_and(|x| Path::new(x).starts_with(&temp) && Path::new(x) != home),
            "{v}: {set:?}"
        );
    }
}

#[test]
fn no_test_starts_a_crate_binary_but_through_the_sandboxing_helpers() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = vec![];
    let mut stack = vec![tests.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                files.push(path);
            }
        }
    }
    let mut bad = vec![];
    for f in files {
        if f.ends_with("util.rs") || f.ends_with("hermetic.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.contains("cargo_bin(") || line.contains("CARGO_BIN_EXE") {
                bad.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "start binaries with util::bin / util::command (a sandboxed HOME, cache and \
         directory):\n{}",
        bad.join("\n")
    );
}
