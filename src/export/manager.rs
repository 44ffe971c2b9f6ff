//! One export path for every front end (hyperfine's `ExportManager`). A command that finished a
//! measurement hands its judged results, as an [`Exportable`], to an [`ExportManager`] built
//! from what the user asked (`--export-csv`, `--export-json`, `--export-svg`, `--export-html`,
//! and the older spellings kept as aliases: `knee --svg`, `compare --plot`, `compare --report`);
//! the manager writes every format through [`write_file`], the one place an output's bytes
//! reach a file: created with `O_CREAT|O_EXCL|O_NOFOLLOW` by `fsguard`, an existing file
//! refused unless `--force` (and replaced only when it is a regular file, never through a
//! link), a file cut short by a failed write removed. Every path is checked before the run
//! starts ([`ExportManager::check`]), so an old output or a typo is reported at once, not after
//! minutes of measuring. A sweep's exporters (`sweep::output::EXPORTERS`, named files in
//! `--out`) go through the same writer, [`write_into`].
//!
//! The formats themselves are pure: [`Exportable::export`] returns bytes and writes nothing, so
//! each is tested as `serialize(&results) -> Vec<u8>`, without a directory.

use super::figure::Figure;
use crate::config::usage;
use std::path::{Path, PathBuf};

/// A format a finished measurement can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Json,
    Svg,
    Html,
    Markdown,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::Csv,
        Format::Json,
        Format::Svg,
        Format::Html,
        Format::Markdown,
    ];

    /// Its flag, `--export-csv`.
    pub fn flag(self) -> &'static str {
        match self {
            Format::Csv => "--export-csv",
            Format::Json => "--export-json",
            Format::Svg => "--export-svg",
            Format::Html => "--export-html",
            Format::Markdown => "--export-md",
        }
    }

    /// What it is, in a message: `CSV`, `figure (SVG)`.
    pub fn what(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Json => "JSON",
            Format::Svg => "figure (SVG)",
            Format::Html => "HTML page",
            Format::Markdown => "Markdown table",
        }
    }
}

/// The `--export-*` flags, the same on every command that has them.
#[derive(clap::Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportArgs {
    /// Write the results as CSV to this new file (an existing one is refused without --force)
    #[arg(long, value_name = "FILE.csv")]
    pub export_csv: Option<PathBuf>,
    /// Write the results as one JSON document to this new file
    #[arg(long, value_name = "FILE.json")]
    pub export_json: Option<PathBuf>,
    /// Draw the results' figure into this new SVG file
    #[arg(long, value_name = "FILE.svg")]
    pub export_svg: Option<PathBuf>,
    /// Write a self-contained HTML page (the results, the figure inline) to this new file
    #[arg(long, value_name = "FILE.html")]
    pub export_html: Option<PathBuf>,
    /// Write the results as a Markdown table to this new file
    #[arg(long, value_name = "FILE.md")]
    pub export_md: Option<PathBuf>,
}

impl ExportArgs {
    /// The path given for `format`.
    pub fn path(&self, format: Format) -> Option<&Path> {
        match format {
            Format::Csv => self.export_csv.as_deref(),
            Format::Json => self.export_json.as_deref(),
            Format::Svg => self.export_svg.as_deref(),
            Format::Html => self.export_html.as_deref(),
            Format::Markdown => self.export_md.as_deref(),
        }
    }

    /// Whether any `--export-*` flag was given.
    pub fn any(&self) -> bool {
        Format::ALL.iter().any(|f| self.path(*f).is_some())
    }
}

/// A `--json` document as its file holds it, with the newline the document printed on stdout
/// ends with; for [`Exportable::json`] of a front end that made the document.
pub fn document_file(document: Option<&str>) -> Option<Vec<u8>> {
    document.map(|d| format!("{d}\n").into_bytes())
}

/// A finished measurement in every format it has, computed from its judged results alone
/// (pure: bytes out, nothing written, nothing read from the machine). `None`: nothing to write
/// in that format for these results (a run too short for a timeline has no figure).
pub trait Exportable {
    /// The page's and the figure's title.
    fn title(&self) -> String;
    /// Under the title on the page: what was measured, where, when.
    fn subtitle(&self) -> String {
        String::new()
    }
    /// The answer in sentences, as the command printed it (the page's summary).
    fn lines(&self) -> Vec<String> {
        Vec::new()
    }
    fn csv(&self) -> anyhow::Result<Option<Vec<u8>>>;
    fn json(&self) -> anyhow::Result<Option<Vec<u8>>>;
    fn figure(&self) -> Option<Figure>;
    /// The page: by default the title, the lines, the figure inline and the CSV as a table
    /// (one row: as name–value pairs).
    fn html(&self) -> anyhow::Result<Option<Vec<u8>>> {
        Ok(Some(page(self)?.into_bytes()))
    }

    /// The CSV as a Markdown table.
    fn markdown(&self) -> anyhow::Result<Option<Vec<u8>>> {
        let Some(csv) = self.csv()? else {
            return Ok(None);
        };
        let mut rd = ::csv::Reader::from_reader(csv.as_slice());
        let head: Vec<String> = rd
            .headers()?
            .iter()
            .map(|c| crate::text::md_cell(c).into_owned())
            .collect();
        let mut s = format!("| {} |\n|{}\n", head.join(" | "), "---|".repeat(head.len()));
        for r in rd.records() {
            let r: Vec<String> = r?
                .iter()
                .map(|c| crate::text::md_cell(c).into_owned())
                .collect();
            s += &format!("| {} |\n", r.join(" | "));
        }
        Ok(Some(s.into_bytes()))
    }

    /// The bytes of `format`.
    fn export(&self, format: Format) -> anyhow::Result<Option<Vec<u8>>> {
        match format {
            Format::Csv => self.csv(),
            Format::Json => self.json(),
            Format::Svg => Ok(self.figure().map(|f| f.to_svg().into_bytes())),
            Format::Html => self.html(),
            Format::Markdown => self.markdown(),
        }
    }
}

/// The default page of an [`Exportable`].
pub fn page(x: &(impl Exportable + ?Sized)) -> anyhow::Result<String> {
    let title = x.title();
    let mut page = super::html::Page::new(&title, &x.subtitle());
    for line in x.lines() {
        page.para("summary", &line);
    }
    if let Some(f) = x.figure() {
        page.figure(&f.to_svg(), &f.title);
    }
    if let Some(csv) = x.csv()? {
        let mut rd = ::csv::Reader::from_reader(csv.as_slice());
        let header: Vec<String> = rd.headers()?.iter().map(str::to_string).collect();
        let rows: Vec<Vec<String>> = rd
            .records()
            .map(|r| r.map(|r| r.iter().map(str::to_string).collect()))
            .collect::<Result<_, _>>()?;
        page.h2("Results");
        if let [row] = rows.as_slice() {
            let facts: Vec<(String, String)> = header
                .iter()
                .zip(row)
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            page.facts(&facts);
        } else {
            let head: Vec<&str> = header.iter().map(String::as_str).collect();
            let cells: Vec<Vec<(String, &str)>> = rows
                .into_iter()
                .map(|r| r.into_iter().map(|c| (c, "")).collect())
                .collect();
            page.table(&head, &[0], &cells);
        }
    }
    Ok(page.finish(&title))
}

/// One output the user asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub format: Format,
    pub path: PathBuf,
    /// The flag that named it (`--export-svg`, or an alias such as `--svg`), for messages.
    pub flag: &'static str,
}

/// Every output one command line asked for, checked before the run and written after it.
#[derive(Debug, Clone, Default)]
pub struct ExportManager {
    targets: Vec<Target>,
    force: bool,
    /// Other paths of the same command line (the file a run writes, `--timeline`), which no
    /// output may name: (path, flag).
    others: Vec<(PathBuf, String)>,
}

impl ExportManager {
    /// The outputs of `args` for a command that writes the formats `offered`; `force` lets an
    /// existing regular file be replaced. A format the command does not write is refused by
    /// its flag.
    pub fn new(
        command: &str,
        args: &ExportArgs,
        offered: &[Format],
        force: bool,
    ) -> anyhow::Result<ExportManager> {
        let mut m = ExportManager {
            targets: Vec::new(),
            force,
            others: Vec::new(),
        };
        for f in Format::ALL {
            let Some(path) = args.path(f) else { continue };
            if !offered.contains(&f) {
                let have: Vec<&str> = offered.iter().map(|f| f.flag()).collect();
                return Err(usage(format!(
                    "{}: `{command}` writes no {}; it has {}",
                    f.flag(),
                    f.what(),
                    have.join(", ")
                )));
            }
            m = m.with(f, Some(path), f.flag());
        }
        Ok(m)
    }

    /// With `force`, an existing regular file may be replaced.
    pub fn forced(mut self, force: bool) -> Self {
        self.force = force;
        self
    }

    /// Adds an output under another flag (an alias: `--svg`, `--plot`, `--report`).
    pub fn with(mut self, format: Format, path: Option<&Path>, flag: &'static str) -> Self {
        if let Some(p) = path {
            self.targets.push(Target {
                format,
                path: p.to_path_buf(),
                flag,
            });
        }
        self
    }

    /// Names a path of the same command line that no output may be written to.
    pub fn besides(mut self, path: Option<&Path>, flag: &str) -> Self {
        if let Some(p) = path {
            self.others.push((p.to_path_buf(), flag.to_string()));
        }
        self
    }

    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Before the run: every output can be created (no old file there without `--force`, no
    /// link, nothing but a regular file), and no two name the same file.
    pub fn check(&self) -> anyhow::Result<()> {
        for (i, t) in self.targets.iter().enumerate() {
            let same = |p: &Path| p == t.path || same_file(p, &t.path);
            if let Some(o) = self.targets[..i].iter().find(|o| same(&o.path)) {
                return Err(usage(format!(
                    "{}: {} is also given to {}; give each output its own file",
                    t.flag,
                    crate::text::shown_path(&t.path),
                    o.flag
                )));
            }
            if let Some((_, flag)) = self.others.iter().find(|(p, _)| same(p)) {
                return Err(usage(format!(
                    "{}: {} is also given to {flag}; give the output its own file",
                    t.flag,
                    crate::text::shown_path(&t.path)
                )));
            }
            // Everything that would keep it from being written after the run: something
            // there, a missing or read-only directory, a full file system.
            if let Some(refusal) =
                crate::fsguard::check_new_output(&t.path, self.force, t.flag, None)
            {
                return Err(usage(refusal));
            }
        }
        Ok(())
    }

    /// After the run: writes every output of `results`; returns a line for stderr per output
    /// (`wrote FILE`, or why nothing was written). Stops at the first file that cannot be
    /// written.
    pub fn write(&self, results: &(impl Exportable + ?Sized)) -> anyhow::Result<Vec<String>> {
        let mut lines = Vec::new();
        for t in &self.targets {
            match results.export(t.format)? {
                Some(bytes) => {
                    write_file(&t.path, &bytes, self.force, t.flag)?;
                    lines.push(format!("wrote {}", crate::text::shown_path(&t.path)));
                }
                None => lines.push(format!(
                    "{}: nothing to write (these results have no {}); {} not written",
                    t.flag,
                    t.format.what(),
                    crate::text::shown_path(&t.path)
                )),
            }
        }
        Ok(lines)
    }

    /// [`Self::write`], each line said on stderr (escaped): what every command does after its
    /// run.
    pub fn write_and_say(&self, results: &(impl Exportable + ?Sized)) -> anyhow::Result<()> {
        for line in self.write(results)? {
            crate::eprintln_shown!("{line}");
        }
        Ok(())
    }
}

/// Whether two paths name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Writes `bytes` to the new file `path`, as every output is written (see the module doc);
/// `flag` names the option that chose the path. A refusal is a usage error naming the flag.
pub fn write_file(path: &Path, bytes: &[u8], force: bool, flag: &str) -> anyhow::Result<()> {
    crate::fsguard::write_output_with(path, bytes, force, flag, usage)
}

/// Writes named files into `dir` (a sweep's `--out`), each as [`write_file`] does; returns
/// their paths. A refusal here is a plain error: the directory was checked before the run.
pub fn write_into(
    dir: &Path,
    files: &[super::Export],
    force: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    use anyhow::Context as _;
    let mut written = Vec::new();
    for e in files {
        let path = dir.join(&e.name);
        crate::fsguard::write_output(&path, &e.bytes, force)
            .with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Two;

    impl Exportable for Two {
        fn title(&self) -> String {
            "two rows".into()
        }
        fn lines(&self) -> Vec<String> {
            vec!["the answer".into()]
        }
        fn csv(&self) -> anyhow::Result<Option<Vec<u8>>> {
            Ok(Some(b"a,b\n1,<2>\n3,4\n".to_vec()))
        }
        fn json(&self) -> anyhow::Result<Option<Vec<u8>>> {
            Ok(None)
        }
        fn figure(&self) -> Option<Figure> {
            Some(Figure::new("fig"))
        }
    }

    fn args(dir: &Path) -> ExportArgs {
        ExportArgs {
            export_csv: Some(dir.join("r.csv")),
            export_json: Some(dir.join("r.json")),
            export_svg: Some(dir.join("r.svg")),
            export_html: Some(dir.join("r.html")),
            export_md: Some(dir.join("r.md")),
        }
    }

    #[test]
    fn every_asked_format_is_written_once_and_an_old_file_is_refused_before_the_run() {
        let d = tempfile::tempdir().unwrap();
        let m = ExportManager::new("t", &args(d.path()), &Format::ALL, false).unwrap();
        m.check().unwrap();
        let lines = m.write(&Two).unwrap();
        assert_eq!(lines.len(), 5, "{lines:?}");
        assert_eq!(
            std::fs::read_to_string(d.path().join("r.md")).unwrap(),
            "| a | b |\n|---|---|\n| 1 | <2> |\n| 3 | 4 |\n"
        );
        assert!(
            lines[1].contains("--export-json: nothing to write"),
            "{lines:?}"
        );
        assert!(!d.path().join("r.json").exists());
        assert_eq!(
            std::fs::read(d.path().join("r.csv")).unwrap(),
            b"a,b\n1,<2>\n3,4\n"
        );
        let html = std::fs::read_to_string(d.path().join("r.html")).unwrap();
        assert!(html.contains("<td>&lt;2&gt;</td>") && html.contains("the answer"));
        // Again: every file is there now; refused by its flag, before anything is measured.
        let e = m.check().unwrap_err().to_string();
        assert!(
            e.starts_with("--export-csv: ") && e.contains("already exists; pass --force"),
            "{e}"
        );
        let forced = ExportManager::new("t", &args(d.path()), &Format::ALL, true).unwrap();
        forced.check().unwrap();
        forced.write(&Two).unwrap();
    }

    #[test]
    fn a_format_the_command_lacks_a_shared_path_and_a_link_are_refused_by_flag() {
        let d = tempfile::tempdir().unwrap();
        let e = ExportManager::new("knee", &args(d.path()), &[Format::Csv], false)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--export-json: `knee` writes no JSON; it has --export-csv"
        );
        let same = ExportArgs {
            export_csv: Some(d.path().join("x")),
            export_json: Some(d.path().join("x")),
            ..ExportArgs::default()
        };
        let e = ExportManager::new("t", &same, &Format::ALL, false)
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("is also given to --export-csv"), "{e}");
        let run = ExportManager::new("t", &args(d.path()), &Format::ALL, false)
            .unwrap()
            .besides(Some(&d.path().join("r.svg")), "FILE");
        assert!(run
            .check()
            .unwrap_err()
            .to_string()
            .contains("also given to FILE"));
        std::os::unix::fs::symlink("/etc/hostname", d.path().join("r.csv")).unwrap();
        let e = ExportManager::new("t", &args(d.path()), &Format::ALL, true)
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("symbolic link"), "{e}");
    }
}
