//! The module structure, checked: dependencies between the files of `src/` point one way (no
//! import cycle), and every top-level module sits in a layer (`LAYERS`) and imports only from its
//! own layer or the ones below it. `docs/architecture.md` draws the same map.
//!
//! The check reads the source text, as a new contributor would: every `use crate::…` /
//! `use super::…` statement (braces expanded), every inline `crate::…` or `super::…` path, and
//! every path through a child module the file declares (`mod plan;` then `plan::Plan` or
//! `use self::plan::…`), outside `#[cfg(test)]` code, resolved to the file that defines the module
//! it names. The layer breaks and cycles that exist today are listed as debts (`LAYER_DEBT`,
//! `CYCLE_DEBT`), each with its reason: the test fails on any other.
//!
//! It also checks that the settings of a run are declared once (issue 35): no struct outside
//! `config::Setup` and the sweep's axes restates five or more of them (`SETUP_DEBT` lists the
//! ones left, with their reason).

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

/// The source without comments and without its test module (`#[cfg(test)]` followed by a `mod`;
/// a `#[cfg(test)]` on a single item earlier in the file does not end the code).
fn code_of(text: &str) -> String {
    let mut end = text.len();
    let mut from = 0;
    while let Some(i) = text[from..].find("#[cfg(test)]") {
        let at = from + i;
        let rest = text[at + "#[cfg(test)]".len()..].trim_start();
        if ["mod ", "pub mod ", "pub(crate) mod ", "pub(super) mod "]
            .iter()
            .any(|m| rest.starts_with(m))
        {
            end = at;
            break;
        }
        from = at + 1;
    }
    let text = &text[..end];
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
            // `pub(in crate::runner)` names who may see an item, not a dependency.
            if code[..at].ends_with("(in ") {
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
        Some(&"self") => {
            parts.remove(0);
        }
        _ => return None,
    }
    let full: Vec<&str> = base.into_iter().chain(parts).collect();
    (1..=full.len())
        .rev()
        .map(|n| full[..n].join("::"))
        .find(|m| known.contains_key(m))
}

/// The child modules a file declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`): a path that
/// starts with one of them (`x::Y`, `use x::{..}`, `self::x::Y`) names that child's file.
fn children_in(code: &str) -> BTreeSet<String> {
    code.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = if let Some(rest) = l.strip_prefix("pub") {
                match rest.strip_prefix('(') {
                    Some(r) => r.split_once(')')?.1.trim_start(),
                    None => rest.trim_start(),
                }
            } else {
                l
            };
            let name = l.strip_prefix("mod ")?.trim().strip_suffix(';')?;
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
                .then(|| name.to_string())
        })
        .collect()
}

/// Every path through a child module (`x::Y` or `self::x::Y` where `mod x;` is declared here), as
/// a `self::`-rooted path; `use` statements and inline paths alike.
fn child_paths_in(code: &str, children: &BTreeSet<String>) -> Vec<String> {
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
        let stmt = after[..after.find(';').unwrap_or(0)].trim_start();
        let stmt = stmt.strip_prefix("self::").unwrap_or(stmt);
        let first = stmt.split("::").next().unwrap_or("");
        if !children.contains(first) || !stmt.contains("::") {
            continue;
        }
        for p in expand(stmt) {
            if children.contains(p.split("::").next().unwrap_or("")) {
                out.push(format!("self::{p}"));
            }
        }
    }
    // Inline paths: `x::f(...)` where x is a child.
    let bytes = code.as_bytes();
    for child in children {
        let start = format!("{child}::");
        let mut from = 0;
        while let Some(i) = code[from..].find(&start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            // `a::x::` is some other module's x; `self::x::` is ours.
            if at > 1 && &code[at - 2..at] == "::" && !code[..at].ends_with("self::") {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| at + e);
            out.push(format!("self::{}", code[at..end].trim_end_matches(':')));
        }
    }
    out
}

/// File-level dependency graph of the crate: `crate::`/`super::` paths, and paths through the
/// child modules a file declares (which a checker of `crate::` paths alone cannot see).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    let mut g = BTreeMap::new();
    for (m, path) in &known {
        let code = code_of(&std::fs::read_to_string(path).unwrap());
        let children = children_in(&code);
        let deps: BTreeSet<String> = paths_in(&code)
            .iter()
            .chain(child_paths_in(&code, &children).iter())
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
    let new: Vec<&String> = found
        .iter()
        .zip(&shown)
        .filter(|(c, _)| {
            !CYCLE_DEBT
                .iter()
                .any(|k| c.iter().all(|m| k.contains(&m.as_str())))
        })
        .map(|(_, s)| s)
        .collect();
    assert!(new.is_empty(), "import cycles: {new:?}");
}

/// Cycles that exist today, each a debt with its reason (issue 18): the test fails on any other.
const CYCLE_DEBT: &[&[&str]] = &[];

/// Every top-level module of `src/` and its layer: a module imports only from its own layer (without
/// a cycle) or from layers below it. docs/architecture.md draws the same stack.
const LAYERS: &[(&str, u8)] = &[
    // below all: leaf helpers
    ("text", 0),
    ("units", 0),
    ("size", 0),
    ("xor", 0),
    ("pattern", 0),
    ("sigbus", 0),
    ("interrupt", 0),
    ("mounts", 0),
    ("oom", 0),
    ("fsguard", 1),
    ("kernel", 1),
    ("config", 2),
    // The run's own facts (per-task I/O, extents, cachestat, PSI, the device chain): read by
    // the runner around the timed part, carried by the result, judged by explain. Below the
    // measuring layer, whose result carries them.
    ("facts", 2),
    ("measure", 3),
    ("engine", 4),
    ("cache", 5),
    ("runner", 6),
    ("explain", 7),
    ("export", 7),
    ("fio", 7),
    ("lab", 8),
    ("locality", 8),
    ("fleet", 8),
    ("commands", 9),
    ("sweep", 9),
    // fio job files plan into the sweep's plan, so they sit above the sweep, which knows no
    // other format; `batch` tells the two apart for `--batch`.
    ("fiojob", 10),
    ("compare", 10),
    ("batch", 11),
    ("tui", 11),
    // The sweep's page runs a batch and shares compare's summary table; compare's own page is
    // compare's.
    ("report", 12),
    ("cli", 13),
];

/// Imports against the layers that exist today, each a debt to pay (issue 18), not a precedent:
/// the check fails on any other, and on a debt paid but still listed. (who, the top-level
/// module it may still import) None today: the last (`fleet::clients` → `report`) was paid.
const LAYER_DEBT: &[(&str, &str)] = &[];

#[test]
fn the_layers_import_downwards_only() {
    let g = graph();
    let layer: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let unplaced: BTreeSet<&str> = g
        .keys()
        .map(|m| top(m))
        .filter(|t| !t.is_empty() && !layer.contains_key(t))
        .collect();
    assert!(
        unplaced.is_empty(),
        "top-level modules with no layer in tests/architecture.rs LAYERS (and docs/architecture.md): {unplaced:?}"
    );
    let mut broken = Vec::new();
    let mut owed = BTreeSet::new();
    for (m, deps) in &g {
        let Some(&from) = layer.get(top(m)) else {
            continue;
        };
        for d in deps {
            let to = layer[top(d)];
            if to > from {
                if LAYER_DEBT.contains(&(m.as_str(), top(d))) {
                    owed.insert((m.as_str(), top(d)));
                } else {
                    broken.push(format!("{m} → {d}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "imports against the layers: {broken:?}");
    let paid: Vec<_> = LAYER_DEBT.iter().filter(|d| !owed.contains(*d)).collect();
    assert!(
        paid.is_empty(),
        "debts paid but still listed in LAYER_DEBT: {paid:?}"
    );
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
    // A file that declares `mod plan;` and names `plan::Plan` or `use self::plan::{..}` depends on
    // the child's file, which a `crate::`-only checker cannot see.
    let code = "pub mod plan;\nmod exec;\nuse self::exec::{run, Outcome};\nfn f() { plan::Plan::new(); other::plan::x(); }";
    let children = children_in(code);
    assert_eq!(
        children,
        BTreeSet::from(["plan".to_string(), "exec".to_string()])
    );
    let resolved: BTreeSet<String> = child_paths_in(code, &children)
        .iter()
        .filter_map(|p| resolve(p, "sweep", &known))
        .collect();
    assert_eq!(
        resolved,
        BTreeSet::from(["sweep::plan".to_string(), "sweep::exec".to_string()])
    );
}

// ---------------------------------------------------------------------------------------------
// One setup (issue 35): the settings of a run live in `config::Setup`; every other struct holds a
// `Setup` (or builds one) instead of restating its fields. The check reads the struct definitions
// of `src/` outside test modules and counts the fields named like a setting of `Setup` (its field
// names, their serde names and aliases as `Setup` declares them, and the other spellings the
// settings have had: `block_size`, `qd`, `sync`, `fsync`, ...).

/// Every spelling of a setting: the fields of `config::Setup` with their serde renames and
/// aliases, read from its source, and the spellings the CLI, the sweep keys and older structs
/// use for the same settings.
fn setting_names() -> BTreeSet<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config.rs");
    let text = std::fs::read_to_string(src).unwrap();
    let body = struct_bodies(&code_of(&text))
        .into_iter()
        .find(|(name, _)| name == "Setup")
        .map(|(_, body)| body)
        .expect("config.rs defines struct Setup");
    let mut names: BTreeSet<String> = fields_of(&body).into_iter().collect();
    for quoted in ["rename = \"", "alias = \""] {
        for part in body.split(quoted).skip(1) {
            names.insert(part.split('"').next().unwrap().to_string());
        }
    }
    assert!(names.len() >= 16, "Setup has only {names:?}");
    for other in [
        "block_size",
        "block",
        "qd",
        "sync",
        "fsync",
        "dsync",
        "rate",
        "mix",
        "workload",
    ] {
        names.insert(other.to_string());
    }
    names
}

/// `(name, body)` of every `struct NAME { ... }` in `code`.
fn struct_bodies(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = code[from..].find("struct ") {
        let at = from + i;
        from = at + 7;
        if at > 0 && code.as_bytes()[at - 1].is_ascii_alphanumeric() {
            continue;
        }
        let rest = &code[at + 7..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = rest.find(['{', ';', '(']) else {
            continue;
        };
        if rest.as_bytes()[open] != b'{' {
            continue;
        }
        let mut depth = 0;
        let mut end = open;
        for (j, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((name, rest[open + 1..end].to_string()));
    }
    out
}

/// The field names of a struct body (`pub name: Type,` at its top level).
fn fields_of(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    for line in body.lines() {
        let l = line.trim();
        if depth == 0 && !l.starts_with('#') {
            let l = l
                .strip_prefix("pub(crate) ")
                .or_else(|| l.strip_prefix("pub(super) "))
                .or_else(|| l.strip_prefix("pub "))
                .unwrap_or(l);
            if let Some((name, _)) = l.split_once(':') {
                if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    out.push(name.to_string());
                }
            }
        }
        depth += line.matches(['(', '[', '{', '<']).count() as i32
            - line.matches([')', ']', '}', '>']).count() as i32;
        depth -= line.matches("->").count() as i32;
    }
    out
}

/// The structs that may carry five or more settings: the setup itself, and the sweep's axes (a
/// list of values per setting, with the line of each key).
/// And the setup's flags as a person types them (`lab::flags::SetupFlags`: one definition per flag,
/// clap and serde, for `run`, `run2` and `knee`).
const SETUP_HOLDERS: &[(&str, &str)] = &[
    ("config", "Setup"),
    ("sweep::schema", "Section"),
    ("lab::flags", "SetupFlags"),
];

/// Structs that still restate five or more settings, each a debt with its reason: the test fails
/// on any other, and on a debt paid but still listed. None today: the command lines' own copies
/// (`IoOpts`, `RunArgs`, `KneeParams`) became one `lab::flags::SetupFlags`.
const SETUP_DEBT: &[(&str, &str)] = &[];

#[test]
fn the_settings_of_a_run_are_declared_once_in_setup() {
    let names = setting_names();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for (m, path) in modules(&src) {
        let code = code_of(&std::fs::read_to_string(&path).unwrap());
        for (name, body) in struct_bodies(&code) {
            let settings: Vec<String> = fields_of(&body)
                .into_iter()
                .filter(|f| names.contains(f))
                .collect();
            if settings.len() >= 5 {
                found.push((m.clone(), name, settings));
            }
        }
    }
    let holders: Vec<&(String, String, Vec<String>)> = found
        .iter()
        .filter(|(m, n, _)| SETUP_HOLDERS.contains(&(m.as_str(), n.as_str())))
        .collect();
    assert_eq!(
        holders.len(),
        SETUP_HOLDERS.len(),
        "the setup, the sweep's axes and the setup's flags hold the settings: {found:?}"
    );
    let restating: Vec<String> = found
        .iter()
        .filter(|(m, n, _)| {
            !SETUP_HOLDERS.contains(&(m.as_str(), n.as_str()))
                && !SETUP_DEBT.contains(&(m.as_str(), n.as_str()))
        })
        .map(|(m, n, f)| format!("{m}::{n} {f:?}"))
        .collect();
    assert!(
        restating.is_empty(),
        "structs restating five or more settings of config::Setup (hold a Setup instead): {restating:?}"
    );
    let paid: Vec<&(&str, &str)> = SETUP_DEBT
        .iter()
        .filter(|(m, n)| !found.iter().any(|(fm, f, _)| fm == m && f == n))
        .collect();
    assert!(
        paid.is_empty(),
        "debts paid, remove them from SETUP_DEBT: {paid:?}"
    );
}

#[test]
fn the_setting_counter_sees_a_struct_that_restates_the_setup() {
    let code = "pub struct Knobs {\n    pub method: Method,\n    pub threads: usize,\n    #[serde(default)]\n    pub queue_depth: u32,\n    pub block_size: String,\n    pub direct: bool,\n    pub other: Option<Vec<(u8, u8)>>,\n}\nstruct Unit;\nstruct Pair(u8, u8);\n";
    let bodies = struct_bodies(code);
    assert_eq!(bodies.len(), 1);
    let names = setting_names();
    let counted: Vec<String> = fields_of(&bodies[0].1)
        .into_iter()
        .filter(|f| names.contains(f))
        .collect();
    assert_eq!(
        counted,
        ["method", "threads", "queue_depth", "block_size", "direct"]
    );
}

/// Lines of a source file before its test module (`#[cfg(test)]` followed by a `mod`; the whole
/// file when it has none).
fn lines_outside_tests(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    (0..lines.len())
        .find(|&i| {
            lines[i].trim() == "#[cfg(test)]"
                && lines.get(i + 1).is_some_and(|n| {
                    let n = n.trim_start();
                    n.starts_with("mod ") || n.contains(" mod ")
                })
        })
        .unwrap_or(lines.len())
}

#[test]
fn no_source_file_is_over_900_lines_outside_its_tests() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut long = Vec::new();
    for (module, path) in modules(&src) {
        // A file that is a test module itself (`#[cfg(test)] mod tests;`) is all tests.
        if path.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let n = lines_outside_tests(&text);
        if n > 900 {
            long.push(format!("{module}: {n} lines"));
        }
    }
    assert!(long.is_empty(), "over 900 lines outside tests: {long:?}");
    assert_eq!(lines_outside_tests("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert_eq!(lines_outside_tests("#[cfg(test)]\nfn f() {}\nc\n"), 3);
}

#[test]
fn the_explorers_app_has_at_most_15_public_fields() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui/app.rs");
    let code = code_of(&std::fs::read_to_string(path).unwrap());
    let (_, body) = struct_bodies(&code)
        .into_iter()
        .find(|(name, _)| name == "App")
        .expect("struct App in src/tui/app.rs");
    let public: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("pub ") && l.contains(':'))
        .collect();
    assert!(
        !public.is_empty() && public.len() <= 15,
        "App has {} public fields (at most 15: group the rest, as tui::state does): {public:?}",
        public.len()
    );
}

/// Every module `from` reaches through its imports (itself included).
fn reached_from(g: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        if seen.insert(m.clone()) {
            stack.extend(g.get(&m).into_iter().flatten().cloned());
        }
    }
    seen
}

#[test]
fn a_local_run_never_passes_through_fleet() {
    // `run` without mpirun is `lab::throughput::run_command::execute`; `cli::run_command` picks it unless an MPI
    // launcher started the process. Nothing it imports, however far down, may be fleet code:
    // a local run cannot depend on the fleet's rules, messages or options.
    let g = graph();
    assert!(
        g.contains_key("lab::throughput::run_command"),
        "lab::throughput::run_command moved?"
    );
    for from in [
        "lab::throughput::run_command",
        "lab::throughput::run2_command",
        "lab::fast::command",
        "lab::throughput",
    ] {
        let reached = reached_from(&g, from);
        let fleet: Vec<&String> = reached.iter().filter(|m| top(m) == "fleet").collect();
        assert!(
            fleet.is_empty(),
            "{from} reaches fleet code through its imports: {fleet:?}"
        );
    }
    assert!(
        reached_from(&g, "lab::throughput::run_command").contains("runner::run"),
        "a local run should reach the runner"
    );
    // The check can fail: the fleet's own run reaches it.
    assert!(reached_from(&g, "commands::fleet_run")
        .iter()
        .any(|m| top(m) == "fleet"));
}
