//! Reading fio's two ways of writing a job, with the file and line of every option kept:
//!
//! - the INI job file as fio reads it: `[global]` and job sections (a job inherits the
//!   `[global]` options written above its header), `;` and `#` comments (to the end of any
//!   line), `include FILE` inside a section (options only, found from the working directory or
//!   next to the including file), options without a value (`time_based`) meaning `1`,
//!   `${VAR}` (an environment variable) and `$ncpus`, `$pagesize`, `$mb_memory` substituted in
//!   values;
//! - fio command lines (`fio --name=a --rw=read ...`, one invocation per line, `#` comment
//!   lines), which is what diskscope writes to `<experiment>-fio.txt`: `--name` starts a job, the
//!   options before the first `--name` are that line's globals.
//!
//! Nothing here knows what an option means; `map` does. Errors are [`FioError`]s naming the
//! file and line.

use super::error::{FioError, Loc};
use std::path::{Path, PathBuf};

/// One `key=value` as written (after substitution), with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// The option's name, lower case, as written (aliases are resolved by `map`).
    pub key: String,
    pub value: String,
    pub loc: Loc,
}

/// One job: its name, the line of its header, and its options in order — the inherited
/// `[global]` ones first, so the last one of a name wins, as in fio.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub name: String,
    pub header: Loc,
    pub opts: Vec<Opt>,
    /// Command lines only: a `# warm: ...` note follows the command (diskscope's companion
    /// writes it under a warm point: "read the file once first").
    pub warm_hint: bool,
    /// Command lines only: the first job of its line, so a fio run of its own (not started
    /// together with the job before it).
    pub starts_invocation: bool,
}

/// Deepest `include` nesting accepted (a loop of includes is refused before this).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Values fio substitutes for `$name` keywords.
fn keyword(name: &str) -> Option<String> {
    match name {
        "ncpus" => Some(
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .to_string(),
        ),
        "pagesize" => Some(rustix::param::page_size().max(1).to_string()),
        "mb_memory" => {
            // sysconf(_SC_PHYS_PAGES) as glibc computes it: sysinfo's total RAM in whole pages.
            let info = rustix::system::sysinfo();
            let page = rustix::param::page_size().max(1) as u64;
            let ram_bytes = (info.totalram as u64).saturating_mul(u64::from(info.mem_unit));
            let pages = ram_bytes / page;
            Some((pages * page / (1 << 20)).to_string())
        }
        _ => None,
    }
}

/// Substitutes `${VAR}` and `$keyword` in a value. `env` looks up environment variables.
pub fn substitute(
    value: &str,
    loc: &Loc,
    key: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, FioError> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(inner) = after.strip_prefix('{') {
            let Some(end) = inner.find('}') else {
                return Err(FioError::bad_value(
                    loc,
                    key,
                    "`${` without a closing `}`; write ${VAR}",
                ));
            };
            let var = &inner[..end];
            let v = env(var).ok_or_else(|| {
                FioError::bad_value(
                    loc,
                    key,
                    &format!(
                        "environment variable {} is not set; set it or write the value",
                        crate::text::shown(var)
                    ),
                )
            })?;
            out.push_str(&v);
            rest = &inner[end + 1..];
        } else if after.starts_with('(') {
            return Err(FioError::bad_value(
                loc,
                key,
                "fio's $(...) arithmetic is not implemented in diskscope; write the value",
            ));
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            let name = &after[..end];
            match keyword(name) {
                Some(v) => out.push_str(&v),
                None => {
                    return Err(FioError::bad_value(
                        loc,
                        key,
                        &format!(
                        "unknown `${}`; fio substitutes $ncpus, $pagesize, $mb_memory and ${{VAR}}",
                        crate::text::shown(name)
                    ),
                    ))
                }
            }
            rest = &after[end..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Reads and parses an INI job file (with its includes) into jobs.
pub fn parse_ini_file(path: &Path, display: &str) -> Result<Vec<Job>, FioError> {
    let text = read(path, display, None)?;
    let mut p = IniParser {
        jobs: Vec::new(),
        global: Vec::new(),
        current: None,
        env: &|v| std::env::var(v).ok(),
        stack: vec![path.to_path_buf()],
    };
    p.lines(&text, path, display)?;
    p.finish()
}

/// Parses INI text (no file system: an `include` is refused). For tests and for text in memory.
pub fn parse_ini_text(
    text: &str,
    display: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Job>, FioError> {
    let mut p = IniParser {
        jobs: Vec::new(),
        global: Vec::new(),
        current: None,
        env,
        stack: Vec::new(),
    };
    p.lines(text, Path::new(""), display)?;
    p.finish()
}

fn read(path: &Path, display: &str, from: Option<&Loc>) -> Result<String, FioError> {
    let fail = |why: String| match from {
        Some(loc) => FioError::Include {
            loc: loc.clone(),
            message: why,
        },
        None => FioError::Read {
            file: display.to_string(),
            message: why,
        },
    };
    crate::fsguard::check_input(path, "JOB.fio").map_err(|e| fail(e.to_string()))?;
    // Bounded: an include of a huge (or sparse) file is refused by its size, never read whole.
    crate::fsguard::read_text_bounded(path, crate::fsguard::MAX_TEXT_INPUT_BYTES).map_err(|e| {
        match e {
            // The file's own line: where the bad byte is.
            crate::fsguard::TextReadError::NotUtf8 { line, byte } => FioError::Syntax {
                loc: Loc {
                    file: display.to_string(),
                    line,
                },
                message: format!("not UTF-8 text (byte 0x{byte:02x}); a fio job file is text"),
            },
            crate::fsguard::TextReadError::Io(e) => {
                fail(format!("cannot read {display}: {e}; check the path"))
            }
            e => fail(format!("{display} {e}")),
        }
    })
}

struct IniParser<'e> {
    jobs: Vec<Job>,
    /// The `[global]` options seen so far.
    global: Vec<Opt>,
    /// The section being read: None before any header, Some(None) in `[global]`, Some(Some(i))
    /// in job i.
    current: Option<Option<usize>>,
    env: &'e dyn Fn(&str) -> Option<String>,
    /// The files being read, outermost first (an include loop is refused).
    stack: Vec<PathBuf>,
}

impl IniParser<'_> {
    fn lines(&mut self, text: &str, path: &Path, display: &str) -> Result<(), FioError> {
        for (i, raw) in text.lines().enumerate() {
            let loc = Loc {
                file: display.to_string(),
                line: i + 1,
            };
            // As fio: a `;` or `#` anywhere starts a comment that runs to the end of the line.
            let line = raw[..raw.find([';', '#']).unwrap_or(raw.len())].trim();
            if line.is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                if self.stack.len() > 1 {
                    return Err(FioError::Include {
                        loc,
                        message: "an included file may not hold [sections] (fio's rule); move the section into the job file".into(),
                    });
                }
                let Some(name) = rest.strip_suffix(']') else {
                    return Err(FioError::Syntax {
                        loc,
                        message: "a section header needs a closing `]`; write [name]".into(),
                    });
                };
                let name = name.trim();
                if name.is_empty() {
                    return Err(FioError::Syntax {
                        loc,
                        message: "empty section name; write [global] or [job-name]".into(),
                    });
                }
                if name == "global" {
                    self.current = Some(None);
                } else {
                    self.jobs.push(Job {
                        name: name.to_string(),
                        header: loc,
                        opts: self.global.clone(),
                        warm_hint: false,
                        starts_invocation: false,
                    });
                    self.current = Some(Some(self.jobs.len() - 1));
                }
                continue;
            }
            let (key, value) = match line.split_once('=') {
                Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim().to_string()),
                None => {
                    if let Some(file) = line.strip_prefix("include") {
                        if file.starts_with(char::is_whitespace) {
                            if self.current.is_none() {
                                return Err(FioError::Include {
                                    loc,
                                    message: "include before any section; fio reads it inside [global] or a job section".into(),
                                });
                            }
                            self.include(file.trim(), path, &loc)?;
                            continue;
                        }
                    }
                    (line.to_ascii_lowercase(), "1".to_string())
                }
            };
            let value = substitute(&value, &loc, &key, self.env)?;
            let opt = Opt { key, value, loc };
            match self.current {
                None => {
                    return Err(FioError::Syntax {
                        loc: opt.loc,
                        message: format!(
                            "option `{}` before any section; put it under [global] or a [job]",
                            crate::text::shown(&opt.key)
                        ),
                    })
                }
                Some(None) => self.global.push(opt),
                Some(Some(j)) => self.jobs[j].opts.push(opt),
            }
        }
        Ok(())
    }

    fn include(&mut self, name: &str, from: &Path, loc: &Loc) -> Result<(), FioError> {
        if self.stack.is_empty() {
            return Err(FioError::Include {
                loc: loc.clone(),
                message: "include needs a job file on disk".into(),
            });
        }
        let name = substitute(name, loc, "include", self.env)?;
        // As fio: the name as given (relative to the working directory) when it exists, else
        // relative to the including file.
        let path = match from.parent() {
            Some(dir)
                if Path::new(&name).is_relative() && std::fs::symlink_metadata(&name).is_err() =>
            {
                dir.join(&name)
            }
            _ => PathBuf::from(&name),
        };
        let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if self
            .stack
            .iter()
            .any(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()) == canonical)
        {
            return Err(FioError::Include {
                loc: loc.clone(),
                message: format!(
                    "{} includes itself (directly or through another file); remove the loop",
                    crate::text::shown_path(&path)
                ),
            });
        }
        if self.stack.len() >= MAX_INCLUDE_DEPTH {
            return Err(FioError::Include {
                loc: loc.clone(),
                message: format!("includes nest deeper than {MAX_INCLUDE_DEPTH}; flatten them"),
            });
        }
        let display = crate::text::shown_path(&path).into_owned();
        let text = read(&path, &display, Some(loc))?;
        self.stack.push(path.clone());
        let r = self.lines(&text, &path, &display);
        self.stack.pop();
        r
    }

    fn finish(self) -> Result<Vec<Job>, FioError> {
        Ok(self.jobs)
    }
}

/// Splits one shell command line into words: single and double quotes and backslash escapes
/// as a POSIX shell reads them (no expansion).
fn shell_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("a single quote is not closed".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => cur.push(c),
                            Some(c) => {
                                cur.push('\\');
                                cur.push(c);
                            }
                            None => return Err("a double quote is not closed".into()),
                        },
                        Some(c) => cur.push(c),
                        None => return Err("a double quote is not closed".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    cur.push(c);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Parses fio command lines (a `-fio.txt` companion, or lines a user wrote): every non-comment
/// line is `fio --opt=value ...`.
pub fn parse_command_lines(text: &str, display: &str) -> Result<Vec<Job>, FioError> {
    let mut jobs: Vec<Job> = Vec::new();
    // The jobs of the previous command line, for a `# warm:` note under it.
    let mut last_line_jobs = 0..0;
    for (i, raw) in text.lines().enumerate() {
        let loc = Loc {
            file: display.to_string(),
            line: i + 1,
        };
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(note) = line.strip_prefix('#') {
            if note.trim_start().starts_with("warm:") {
                for j in &mut jobs[last_line_jobs.clone()] {
                    j.warm_hint = true;
                }
            }
            continue;
        }
        let words = shell_words(line).map_err(|m| FioError::Syntax {
            loc: loc.clone(),
            message: format!("{m}; fix the quoting"),
        })?;
        if words.first().map(String::as_str) != Some("fio") {
            return Err(FioError::Syntax {
                loc,
                message: "expected a `fio --option=value ...` command line (or a # comment)".into(),
            });
        }
        let first = jobs.len();
        let mut global = Vec::new();
        // `--name=global` opens fio's global section on the command line: the options after it
        // (until the next --name) go to every job that follows.
        let mut in_global = false;
        for w in &words[1..] {
            let Some(opt) = w.strip_prefix("--") else {
                return Err(FioError::Syntax {
                    loc,
                    message: format!(
                        "`{}`: only --option=value arguments are read (no job files or short flags); \
                         write the job's options as --option=value",
                        crate::text::shown(w)
                    ),
                });
            };
            let (key, value) = match opt.split_once('=') {
                Some((k, v)) => (k.to_ascii_lowercase(), v.to_string()),
                None => (opt.to_ascii_lowercase(), "1".to_string()),
            };
            let value = substitute(&value, &loc, &key, &|v| std::env::var(v).ok())?;
            if key == "name" && value == "global" {
                in_global = true;
                continue;
            }
            if key == "name" {
                in_global = false;
                jobs.push(Job {
                    name: value,
                    header: loc.clone(),
                    opts: global.clone(),
                    warm_hint: false,
                    starts_invocation: jobs.len() == first,
                });
                continue;
            }
            let o = Opt {
                key,
                value,
                loc: loc.clone(),
            };
            match jobs[first..].last_mut() {
                Some(j) if !in_global => j.opts.push(o),
                _ => global.push(o),
            }
        }
        if jobs.len() == first {
            return Err(FioError::Syntax {
                loc,
                message: "no job on this line; add --name=NAME before the job's options".into(),
            });
        }
        last_line_jobs = first..jobs.len();
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn jobs_inherit_the_globals_written_above_them_and_keep_their_lines() {
        let jobs = parse_ini_text(
            "; comment\n[global]\nbs=4k\n# another\n[a]\nrw=read\n[global]\nsize=1m\n[b]\ntime_based\n",
            "j.fio",
            &no_env,
        )
        .unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].name, "a");
        assert_eq!(jobs[0].header.line, 5);
        let keys: Vec<&str> = jobs[0].opts.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["bs", "rw"]);
        let b: Vec<(&str, &str, usize)> = jobs[1]
            .opts
            .iter()
            .map(|o| (o.key.as_str(), o.value.as_str(), o.loc.line))
            .collect();
        assert_eq!(
            b,
            [("bs", "4k", 3), ("size", "1m", 8), ("time_based", "1", 10)]
        );
    }

    #[test]
    fn variables_and_keywords_are_substituted_and_an_unset_one_is_refused() {
        let env = |v: &str| (v == "BS").then(|| "64k".to_string());
        let jobs = parse_ini_text("[a]\nbs=${BS}\nnumjobs=$ncpus\n", "j.fio", &env).unwrap();
        assert_eq!(jobs[0].opts[0].value, "64k");
        assert!(jobs[0].opts[1].value.parse::<u32>().unwrap() >= 1);
        let e = parse_ini_text("[a]\n\nsize=${NOPE}\n", "j.fio", &no_env)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("j.fio:3: option `size`: environment variable NOPE"),
            "{e}"
        );
    }

    #[test]
    fn a_comment_may_end_any_line_as_in_fio() {
        let jobs = parse_ini_text(
            "[a] ; first\nbs=4k # block size\nsize=1m;\n",
            "j.fio",
            &no_env,
        )
        .unwrap();
        let v: Vec<&str> = jobs[0].opts.iter().map(|o| o.value.as_str()).collect();
        assert_eq!(v, ["4k", "1m"]);
    }

    #[test]
    fn an_option_before_any_section_is_refused_with_its_line() {
        let e = parse_ini_text("\nbs=4k\n", "j.fio", &no_env)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("j.fio:2: option `bs` before any section"),
            "{e}"
        );
    }

    #[test]
    fn command_lines_start_a_job_at_each_name_and_see_warm_notes() {
        let jobs = parse_command_lines(
            "# notes\nfio --ioengine=psync --name=a '--filename=/tmp/x y' --rw=read --name=b --bs=4k\n# warm: read the file once\nfio --name=c --time_based\n",
            "x-fio.txt",
        )
        .unwrap();
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs[0].opts[1].value, "/tmp/x y");
        assert_eq!(jobs[0].opts[0].key, "ioengine");
        assert_eq!(jobs[1].opts[0].key, "ioengine");
        assert!(jobs[0].warm_hint && jobs[1].warm_hint && !jobs[2].warm_hint);
        assert_eq!(jobs[2].header.line, 4);
        // fio's HOWTO: `--name=global` opens the global section on the command line.
        let jobs = parse_command_lines(
            "fio --name=global --rw=randread --size=128m --name=job1 --name=job2 --bs=8k\n",
            "h.txt",
        )
        .unwrap();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["job1", "job2"]);
        assert_eq!(jobs[0].opts.len(), 2);
        assert_eq!(jobs[1].opts.len(), 3);
        let e = parse_command_lines("dd if=x\n", "x.txt")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.txt:1: expected a `fio"), "{e}");
    }
}
