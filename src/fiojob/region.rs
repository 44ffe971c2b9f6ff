//! Where a fio job's I/O lands: `nrfiles`, `offset`, `size`/`filesize` with
//! `offset_increment`, `number_ios`, `filename` and `directory` → the bytes a mapped job covers
//! and its file, and how fio's `numjobs` split differs from diskscope's threads (said in the
//! plan). Split from `map` (the rest of a job's options), which asks [`region`] once per job.

use super::error::FioError;
use super::options::{from, Opts};
use super::parse::Opt;
use crate::config::Pattern;
use crate::size::format_size;
use std::path::{Path, PathBuf};

/// What a job covers: `size`/`filesize` (with `offset_increment`), `number_ios`, and its file.
pub(super) struct Region<'a> {
    pub bytes: Option<u64>,
    pub size_opt: Option<&'a Opt>,
    pub number_ios: Option<u64>,
    pub target: Option<(PathBuf, &'a Opt)>,
}

/// `nrfiles`, `offset`, `size`, `filesize`, `offset_increment`, `number_ios`, `filename`,
/// `directory`.
pub(super) fn region<'a>(
    opts: &Opts<'a>,
    threads: usize,
    pattern: Pattern,
    time_based: bool,
    notes: &mut Vec<String>,
) -> Result<Region<'a>, FioError> {
    if let Some((n, o)) = opts.int("nrfiles")? {
        if n != 1 {
            return Err(FioError::refused(
                &o.loc,
                &o.key,
                "diskscope measures one file; write nrfiles=1 or remove it",
            ));
        }
    }
    if let Some((off, o)) = opts.size("offset")? {
        if off != 0 {
            return Err(FioError::refused(
                &o.loc,
                &o.key,
                "diskscope's runs start at offset 0; remove it",
            ));
        }
    }
    let size = opts.size("size")?.or(opts.size("filesize")?);
    // fio's size=0 (its default) is the whole file.
    if let Some((0, o)) = size {
        notes.push(format!("{}: the whole file, as in fio", from(o)));
    }
    let mut region_bytes = size.map(|(s, _)| s).filter(|s| *s > 0);
    if let Some((inc, o)) = opts.size("offset_increment")? {
        match size {
            Some((s, _)) if inc == s => {
                region_bytes = Some(s.saturating_mul(threads as u64)).filter(|r| *r > 0);
                notes.push(format!(
                    "{}: the {threads} threads split {} into ranges of size each, as diskscope always does",
                    from(o),
                    format_size(s.saturating_mul(threads as u64))
                ));
            }
            _ => return Err(FioError::refused(&o.loc, &o.key, "diskscope splits the range evenly over the threads; write offset_increment equal to size, or remove it")),
        }
    } else if threads > 1 {
        // fio's numjobs clones are each a whole job; diskscope's threads are one job's workers.
        // Where that changes what runs, the `threads ← numjobs` line says so in figures.
        let differs = numjobs_difference(
            threads,
            pattern,
            time_based,
            size.map(|(s, _)| s).filter(|s| *s > 0),
        );
        match notes.iter_mut().find(|n| n.starts_with("threads ")) {
            Some(line) => *line = format!("{line}: {differs}"),
            None => notes.push(differs),
        }
    }
    if let Some((s, o)) = size.filter(|(s, _)| *s > 0) {
        notes.push(format!("range {} ← {}", format_size(s), from(o)));
    }
    let number_ios = opts.int("number_ios")?.map(|(n, o)| {
        notes.push(format!(
            "block_count {} ← {} × numjobs",
            n.saturating_mul(threads as u64),
            from(o)
        ));
        n.saturating_mul(threads as u64)
    });
    // file
    let filename = opts.get("filename");
    let directory = opts.get("directory");
    if let Some(o) = filename {
        if o.value.replace("\\:", "").contains(':') {
            return Err(FioError::refused(
                &o.loc,
                &o.key,
                "several files (a:b) are not implemented in diskscope; name one file",
            ));
        }
    }
    let target = filename.map(|o| {
        let name = PathBuf::from(o.value.replace("\\:", ":"));
        let path = match directory {
            Some(d) if name.is_relative() => Path::new(&d.value).join(name),
            _ => name,
        };
        (path, o)
    });
    Ok(Region {
        bytes: region_bytes,
        size_opt: size.map(|(_, o)| o),
        number_ios,
        target,
    })
}

/// How `numjobs=threads` differs between fio and diskscope, for the plan: fio starts `threads`
/// clones of the job, each doing all of it (its `size` from offset 0, or its `runtime`);
/// diskscope runs one job with `threads` workers that share it (a sequential range split into
/// one part each; a random one drawn from by all, its bytes shared).
fn numjobs_difference(
    threads: usize,
    pattern: Pattern,
    time_based: bool,
    size: Option<u64>,
) -> String {
    let n = threads as u64;
    let range = match (pattern, size) {
        (Pattern::Sequential, Some(s)) => format!(
            "fio's {n} clones each go over the whole {} (the same offsets {n} times); diskscope's {n} threads split it into {n} parts of {}, each offset once",
            format_size(s),
            format_size(s / n)
        ),
        (Pattern::Sequential, None) => format!(
            "fio's {n} clones each go over the whole file; diskscope's {n} threads split it into {n} parts, each offset once"
        ),
        (Pattern::Random, _) => format!(
            "fio's {n} clones and diskscope's {n} threads all draw offsets from the whole range"
        ),
    };
    let bytes = match (time_based, size) {
        (true, _) => "both run for the runtime".to_string(),
        (false, Some(s)) => format!(
            "fio moves {} ({n} × {}), diskscope {} in all",
            format_size(s.saturating_mul(n)),
            format_size(s),
            format_size(s)
        ),
        (false, None) => format!("fio moves {n} times the bytes diskscope moves"),
    };
    format!("{range}; {bytes} (offset_increment=size makes fio split the range as diskscope does)")
}
