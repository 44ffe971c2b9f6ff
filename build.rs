//! Build script: records the git revision the binary is built from, so `diskscope --version`
//! says which commit a result came from (`0.1.0 (4b07f31)`). Outside a git checkout (a source
//! tarball) the revision is `unknown`; the build never fails for want of git.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// Tells cargo to rerun this script when the file at git path `p` changes (only if it exists:
/// cargo reruns on every build for a missing path).
fn watch(p: &str) {
    if let Some(path) = git(&["rev-parse", "--git-path", p]) {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

fn main() {
    let rev = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=DISKSCOPE_GIT_REV={rev}");
    // Rebuild when HEAD moves: HEAD itself (a branch switch) and the branch it points at (a
    // commit). `--git-path` resolves both inside a worktree too.
    watch("HEAD");
    watch("packed-refs");
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(&branch);
    }
    println!("cargo:rerun-if-changed=build.rs");
}
