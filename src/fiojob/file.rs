//! The one file a batch of fio jobs measures: the first file a job names, or the file fio would
//! lay out for the first job. An existing file is read (and written only if it is diskscope's
//! own test file); a missing one is created at the largest job's range and removed afterwards.

use super::error::FioError;
use super::map::Mapped;
use super::parse::Job;
use crate::config::Op;
use crate::size::format_size;
use crate::sweep::files::{test_file_proof, FilePlan};
use std::path::PathBuf;

fn at_header(job: &Job, option: &str, message: &str) -> FioError {
    FioError::refused(&job.header, option, message)
}

/// A refusal about the file: at the `filename` line that named it, else at the first job.
fn at_file(mapped: &[Mapped], message: &str) -> FioError {
    match mapped.iter().find_map(|m| m.target.as_ref()) {
        Some((_, o)) => FioError::refused(&o.loc, &o.key, message),
        None => at_header(mapped[0].job, "filename", message),
    }
}

/// The one file of the batch: the first file a job names (or, with none named, the file fio
/// would lay out for the first job), checked against every job.
pub fn plan_file(mapped: &mut [Mapped]) -> Result<FilePlan, FioError> {
    let first = &mapped[0];
    let path = match mapped.iter().find_map(|m| m.target.as_ref()) {
        Some((p, _)) => p.clone(),
        None => {
            let dir = first
                .job
                .opts
                .iter()
                .rev()
                .find(|o| o.key == "directory")
                .map(|o| PathBuf::from(&o.value));
            dir.unwrap_or_default().join(format!("{}.0.0", first.name))
        }
    };
    for m in mapped.iter_mut() {
        match &m.target {
            Some((p, o)) if *p != path => {
                return Err(FioError::refused(&o.loc, &o.key, &format!(
                    "diskscope measures one file per batch and an earlier job uses {}; give every job the same filename, or split the job file",
                    crate::text::shown_path(&path)
                )))
            }
            Some(_) => {}
            None => m.notes.push(format!(
                "no filename: fio lays out a file per job (and per numjobs clone); diskscope's threads share {}, one range each",
                crate::text::shown_path(&path)
            )),
        }
    }
    let needed = mapped.iter().filter_map(|m| m.region_bytes).max();
    let writes = mapped.iter().find(|m| m.setup.op == Op::Write);
    match std::fs::symlink_metadata(&path) {
        Ok(_) => {
            let (_, meta) = crate::fsguard::check_input(&path, "filename")
                .map_err(|e| at_file(mapped, &e.to_string()))?;
            if !meta.is_file() || meta.len() == 0 {
                return Err(at_file(
                    mapped,
                    &format!(
                        "{} is not a regular file with data; diskscope measures regular files",
                        crate::text::shown_path(&path)
                    ),
                ));
            }
            let len = meta.len();
            if let Some(m) = mapped
                .iter()
                .find(|m| m.region_bytes.is_some_and(|r| r > len))
            {
                let o = m.region_opt.expect("region from size");
                return Err(FioError::refused(&o.loc, &o.key, &format!(
                    "{} holds {len} bytes, less than the job's range; lower size, or name a file that does not exist yet (diskscope creates it)",
                    crate::text::shown_path(&path)
                )));
            }
            // Read-only jobs read any file; writes need the proof (mark and every byte).
            let proof = if writes.is_some() {
                test_file_proof(&path, len)
            } else {
                Err(crate::sweep::files::NotOurs::NoMark)
            };
            let ours = proof.is_ok();
            if let (Some(w), Err(why)) = (writes, proof) {
                let loc = w.rw.map_or(w.job.header.clone(), |o| o.loc.clone());
                return Err(FioError::refused(&loc, "rw", &format!(
                    "{} exists and is not a diskscope test file: {why}; writing would overwrite it; name a file that does not exist yet (diskscope creates it and removes it afterwards)",
                    crate::text::shown_path(&path)
                )));
            }
            Ok(FilePlan {
                path,
                size_bytes: len,
                create: ours,
                keep: true,
                writable: ours,
            })
        }
        Err(_) => {
            let Some(size) = needed else {
                return Err(at_header(
                    mapped[0].job,
                    "size",
                    &format!(
                        "{} does not exist and no job gives its size; add size=1g (diskscope creates the file)",
                        crate::text::shown_path(&path)
                    ),
                ));
            };
            if let Some(free) = crate::fsguard::free_bytes(&path).filter(|f| *f < size) {
                return Err(at_header(
                    mapped[0].job,
                    "size",
                    &format!(
                        "{} does not fit: {} free; lower size or use another directory",
                        format_size(size),
                        crate::size::format_bytes_approx(free)
                    ),
                ));
            }
            mapped[0].notes.push(format!(
                "diskscope creates {} ({}, its own data pattern) and removes it afterwards; fio would keep it",
                crate::text::shown_path(&path),
                format_size(size)
            ));
            Ok(FilePlan {
                path,
                size_bytes: size,
                create: true,
                keep: false,
                writable: true,
            })
        }
    }
}
