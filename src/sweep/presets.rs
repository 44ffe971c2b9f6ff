//! The ready sweeps of `assets/sweeps/`, built into the binary: `diskscope --batch kdiskmark`
//! works from any directory and after `cargo install`, and `diskscope presets` lists them.
//!
//! A name is looked up only when no file of that name exists: `--batch quick` runs `./quick`
//! when there is one (a path always means the file it names, as everywhere else in diskscope),
//! and the preset otherwise. A bare name that is neither is a one-line error listing the presets.
//! A preset is the file's text as committed ([`include_str!`]), so the preset run by name and
//! the file in a checkout are the same sweep (a test checks that every file has its preset).

use std::path::Path;

/// One built-in sweep.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// The name `--batch` takes: the file's stem (`part3-block-size`).
    pub name: &'static str,
    /// The TOML text of `assets/sweeps/<name>.toml`.
    pub text: &'static str,
}

macro_rules! presets {
    ($($name:literal),* $(,)?) => {
        &[$(Preset {
            name: $name,
            text: include_str!(concat!("../../assets/sweeps/", $name, ".toml")),
        }),*]
    };
}

/// Every preset, in the order `diskscope presets` lists them: a first look, the KDiskMark
/// table, the lab's parts, then the cross-checks.
pub const PRESETS: &[Preset] = presets![
    "quick",
    "kdiskmark",
    "part3-block-size",
    "part4-cold-warm",
    "part5-syscalls",
    "part6-threads",
    "readahead",
    "dd-compare",
    "explain-direct",
];

impl Preset {
    /// The sweep's own `description` (one line), or its first comment line.
    pub fn description(&self) -> String {
        let quoted = self.text.lines().find_map(|l| {
            let v = l
                .strip_prefix("description")?
                .trim_start()
                .strip_prefix('=')?;
            Some(v.trim().trim_matches('"').to_string())
        });
        quoted.unwrap_or_else(|| {
            self.text
                .lines()
                .find_map(|l| l.strip_prefix("# "))
                .unwrap_or("")
                .to_string()
        })
    }

    /// How long it takes, from its `(about N minutes)` comment, when it has one.
    pub fn duration(&self) -> Option<&'static str> {
        self.text.lines().find_map(|l| {
            let (_, rest) = l.split_once("(about ")?;
            rest.split_once(')').map(|(d, _)| d)
        })
    }
}

/// The preset called `name` (with or without `.toml`).
pub fn find(name: &str) -> Option<&'static Preset> {
    let name = name.strip_suffix(".toml").unwrap_or(name);
    PRESETS.iter().find(|p| p.name == name)
}

/// The names of every preset, comma-separated (for error messages).
pub fn names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `--batch ARG` names: the file `ARG` when anything exists at that path (a file, or
/// something `check_input` refuses with its reason), else the preset of that name when `ARG` is
/// a bare name, else `Err` with the line to print.
pub fn resolve(arg: &Path) -> Result<Option<&'static Preset>, String> {
    if std::fs::symlink_metadata(arg).is_ok() {
        return Ok(None);
    }
    let bare = arg.components().count() == 1 && arg.parent() == Some(Path::new(""));
    let Some(name) = arg.to_str().filter(|_| bare) else {
        return Ok(None);
    };
    match find(name) {
        Some(p) => Ok(Some(p)),
        None => Err(format!(
            "--batch: {} is neither a file nor a preset; presets: {} (`diskscope presets`)",
            crate::text::shown(name),
            names()
        )),
    }
}

/// `diskscope presets`: one line per preset, its name, what it measures and how long it takes.
pub fn list() -> String {
    let width = PRESETS.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for p in PRESETS {
        let took = p
            .duration()
            .map(|d| format!(" (about {d})"))
            .unwrap_or_default();
        out.push_str(&format!("{:width$}  {}{took}\n", p.name, p.description()));
    }
    out.push_str("run one: diskscope --batch NAME [--out DIR]; a file of the same name wins\n");
    out
}

/// `diskscope presets`.
pub fn execute() -> anyhow::Result<i32> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(list().as_bytes())?;
    stdout.flush()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_in_assets_sweeps_is_a_preset_with_the_same_text() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/sweeps");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut names: Vec<String> = PRESETS.iter().map(|p| p.name.to_string()).collect();
        names.sort();
        assert_eq!(files, names);
        for p in PRESETS {
            let on_disk = std::fs::read_to_string(dir.join(format!("{}.toml", p.name))).unwrap();
            assert_eq!(on_disk, p.text, "{}", p.name);
            assert!(!p.description().is_empty(), "{}", p.name);
        }
    }

    #[test]
    fn a_name_finds_its_preset_with_or_without_toml_and_a_path_never_does() {
        assert_eq!(find("kdiskmark").unwrap().name, "kdiskmark");
        assert_eq!(find("kdiskmark.toml").unwrap().name, "kdiskmark");
        assert!(find("kdiskmarks").is_none());
        // A path with a directory in it is a path, even when its last part is a preset's name.
        assert!(resolve(Path::new("no-such-dir/kdiskmark"))
            .unwrap()
            .is_none());
        let e = resolve(Path::new("kdiskmrk")).unwrap_err();
        assert!(
            e.contains("kdiskmrk") && e.contains("quick, kdiskmark"),
            "{e}"
        );
        assert_eq!(
            resolve(Path::new("part3-block-size"))
                .unwrap()
                .unwrap()
                .name,
            "part3-block-size"
        );
    }

    #[test]
    fn the_list_has_one_line_per_preset() {
        let text = list();
        assert_eq!(text.lines().count(), PRESETS.len() + 1);
        for (line, p) in text.lines().zip(PRESETS) {
            assert!(line.starts_with(p.name), "{line}");
        }
    }
}
