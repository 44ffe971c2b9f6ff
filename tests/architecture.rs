//! The module structure, checked: dependencies between the files of `src/` point one way (no
//! import cycle), and the layers keep their order — the lab kinds and the command lines never
//! read `cli`, the sweep and the explorer never import the command lines, and the engine never
//! reaches up into the runner or a front end. `docs/architecture.md` draws the same map.
//!
//! The check reads the source text, as a new contributor would: every `use crate::…` /
//! `use super::…` statement (braces expanded) and every inline `crate::…` or `super::…` path
//! outside `#[cfg(test)]` code, resolved to the file that defines the module it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`sweep::exec`) of every `.rs` file under `src/`, excluding the binaries.
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "bin") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            out.insert(parts.join("::"), path);
        }
    }
    out
}

/// The source without comments and without its `#[cfg(test)]` part.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(path: &str) -> Vec<String> {
    let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = path.find('{') else {
        return vec![path];
    };
    let (prefix, body) = (&path[..open], &path[open + 1..path.rfind('}').unwrap()]);
    let mut parts = Vec::new();
    let (mut depth, mut cur) = (0, String::new());
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    parts.push(cur);
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(p))
        .map(|p| format!("{prefix}{p}"))
        .collect()
}

/// Every `crate::`/`super::` path the code names.
fn paths_in(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    // `use` statements, which may span lines and hold braces.
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = rest[..i].chars().last();
        let after = &rest[i + 4..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let stmt = &after[..after.find(';').unwrap_or(0)];
        let trimmed = stmt.trim_start();
        if trimmed.starts_with("crate::") || trimmed.starts_with("super::") {
            out.extend(expand(trimmed));
        }
    }
    // Inline paths: `crate::a::b(...)`, `super::x::y`.
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            if at > 1 && &code[at - 2..at] == "::" {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| at + e);
            let path = code[at..end].trim_end_matches(':');
            if path.contains("::") {
                out.push(path.to_string());
            }
        }
    }
    out
}

/// The module (file) a path names, relative to the module `from`.
fn resolve(path: &str, from: &str, known: &BTreeMap<String, PathBuf>) -> Option<String> {
    let mut parts: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = if from.is_empty() {
        Vec::new()
    } else {
        from.split("::").collect()
    };
    match parts.first() {
        Some(&"crate") => {
            base.clear();
            parts.remove(0);
        }
        Some(&"super") => {
            while parts.first() == Some(&"super") {
                base.pop();
                parts.remove(0);
            }
        }
        _ => return None,
    }
    let full: Vec<&str> = base.into_iter().chain(parts).collect();
    (1..=full.len())
        .rev()
        .map(|n| full[..n].join("::"))
        .find(|m| known.contains_key(m))
}

/// File-level dependency graph of the crate.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    let mut g = BTreeMap::new();
    for (m, path) in &known {
        let code = code_of(&std::fs::read_to_string(path).unwrap());
        let deps: BTreeSet<String> = paths_in(&code)
            .iter()
            .filter_map(|p| resolve(p, m, &known))
            .filter(|d| d != m && !d.is_empty())
            .collect();
        g.insert(m.clone(), deps);
    }
    g
}

/// Strongly connected components with more than one file (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn top(m: &str) -> &str {
    m.split("::").next().unwrap_or(m)
}

#[test]
fn the_files_of_src_import_each_other_without_a_cycle() {
    let g = graph();
    assert!(g.len() > 50, "found only {} modules", g.len());
    let found = cycles(&g);
    let shown: Vec<String> = found
        .iter()
        .map(|c| {
            let edges: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    g[a].iter()
                        .filter(|b| c.contains(b))
                        .map(move |b| format!("{a} → {b}"))
                })
                .collect();
            format!("[{}]", edges.join(", "))
        })
        .collect();
    assert!(found.is_empty(), "import cycles: {}", shown.join("; "));
}

#[test]
fn the_layers_import_downwards_only() {
    let g = graph();
    // (who, must never import)
    let rules: &[(&str, &[&str])] = &[
        (
            "lab",
            &["cli", "commands", "sweep", "tui", "report", "compare"],
        ),
        ("commands", &["cli", "sweep", "tui"]),
        ("sweep", &["cli", "commands", "tui"]),
        ("tui", &["cli", "commands", "sweep"]),
        (
            "runner",
            &["cli", "commands", "lab", "sweep", "tui", "explain"],
        ),
        (
            "engine",
            &[
                "cli", "commands", "lab", "sweep", "tui", "runner", "explain",
            ],
        ),
        (
            "measure",
            &["cli", "commands", "lab", "sweep", "tui", "runner", "engine"],
        ),
        (
            "config",
            &["cli", "commands", "lab", "sweep", "tui", "runner"],
        ),
    ];
    let mut broken = Vec::new();
    for (m, deps) in &g {
        for (who, never) in rules {
            if top(m) != *who {
                continue;
            }
            for d in deps {
                if never.contains(&top(d)) {
                    broken.push(format!("{m} → {d}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "imports against the layers: {broken:?}");
}

#[test]
fn the_checker_sees_a_cycle_and_resolves_super_and_braces() {
    // The checker itself: a made-up pair of modules that import each other is a cycle.
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    g.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycles(&g), vec![vec!["a".to_string(), "b".to_string()]]);
    let known: BTreeMap<String, PathBuf> = ["sweep", "sweep::plan", "sweep::exec", "config"]
        .iter()
        .map(|m| (m.to_string(), PathBuf::new()))
        .collect();
    let code = "use super::{plan::{Plan, Kind}, exec};\nlet x = crate::config::usage(1);";
    let resolved: BTreeSet<String> = paths_in(code)
        .iter()
        .filter_map(|p| resolve(p, "sweep::exec", &known))
        .collect();
    assert_eq!(
        resolved,
        BTreeSet::from([
            "sweep::plan".to_string(),
            "sweep::exec".to_string(),
            "config".to_string()
        ])
    );
}
