//! `s`: appends results rows to a CSV file with batch mode's columns (the [`RunResult`] fields,
//! via serde, tidied as batch mode's: see [`crate::export::csv::tidy`]), writing the header only
//! when the file is new or empty.
//!
//! One session appends to one file, and the header is written before the rows to come are
//! known: an open-loop row (`R`) or a mix (`w`, `W`) has columns a plain row leaves out. So
//! the header always names them all ([`columns`]: the plain ones, then the open-loop ones,
//! then the mix's per-direction ones), every row is written by column name into it, and a row
//! without some leaves those cells empty: every line has the header's length.

use crate::fsguard::{create_exclusive, Created};
use crate::measure::RunResult;
use anyhow::Context;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where `s` saves: `diskscope-results/tui-YYYYMMDD-HHMMSS.csv` under the working directory, the
/// time being the explorer's start (UTC), so one session appends to one file.
pub fn default_csv_path() -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    PathBuf::from("diskscope-results").join(format!("tui-{}.csv", utc_stamp(secs)))
}

pub use crate::export::utc_stamp;

/// Files `s` made in this process: the path asked for and the file actually created for it.
static SAVED: Mutex<Vec<(PathBuf, Created)>> = Mutex::new(Vec::new());

/// Appends `rows` to the session's CSV for `path` (creating its directory), with a header when
/// the file is new; returns the file written. The first save creates the file exclusively and
/// without following links (`O_CREAT|O_EXCL|O_NOFOLLOW`); when `path` is taken (the user's file,
/// a symlink) it takes the first free `stem-2.csv`, `stem-3.csv`, …, as `e` does. Later saves
/// append only to that same inode, never through a link put there since.
pub fn append_rows(path: &Path, rows: &[RunResult]) -> anyhow::Result<PathBuf> {
    let header = columns()?;
    let mut text = Vec::new();
    {
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(&mut text);
        for r in rows {
            w.write_record(crate::export::csv::tidy_under(r, &header)?)?;
        }
        w.flush()?;
    }
    let mut saved = SAVED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = saved.iter().find(|(p, c)| p == path && c.is_intact()) {
        let mut f = OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&c.path)
            .with_context(|| format!("opening {}", crate::text::shown_path(&c.path)))?;
        if c.is_same(&f) {
            f.write_all(&text)
                .with_context(|| format!("writing {}", crate::text::shown_path(&c.path)))?;
            return Ok(c.path.clone());
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating {}", crate::text::shown_path(dir)))?;
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tui".into());
    for n in 1..1000 {
        let candidate = if n == 1 {
            path.to_path_buf()
        } else {
            path.with_file_name(format!("{stem}-{n}.csv"))
        };
        let (mut f, created) = match create_exclusive(&candidate) {
            Ok(x) => x,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => anyhow::bail!(crate::fsguard::create_error(&candidate, &e)),
        };
        let mut all = Vec::new();
        {
            let mut w = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(&mut all);
            w.write_record(&header)?;
            w.flush()?;
        }
        all.extend_from_slice(&text);
        if let Err(e) = f.write_all(&all) {
            created.remove();
            anyhow::bail!("writing {}: {e}", crate::text::shown_path(&candidate));
        }
        saved.retain(|(p, _)| p != path);
        saved.push((path.to_path_buf(), created));
        return Ok(candidate);
    }
    anyhow::bail!(
        "{}: 999 saved files already; move some away",
        crate::text::shown_path(path)
    )
}

/// The saved file's header: every column of a plain row, then every optional one (a later row
/// may be open-loop, mixed or durable with `f`), so each row's cells go under their names
/// ([`crate::export::csv::tidy_under`]), empty where a row has no such column.
pub fn columns() -> anyhow::Result<Vec<String>> {
    let mut header = crate::export::csv::header_of::<RunResult>()?;
    header.extend(RunResult::every_optional_column());
    Ok(header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_calendar_dates_in_utc() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        assert_eq!(utc_stamp(1_700_000_000), "20231114-221320");
    }

    #[test]
    fn the_header_is_written_once_and_rows_append() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/t.csv");
        let row = RunResult {
            identity: crate::measure::result::Identity {
                experiment: "tui".into(),
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                mib_s: 1.5,
                ..Default::default()
            },
            ..Default::default()
        };
        append_rows(&path, std::slice::from_ref(&row)).unwrap();
        append_rows(&path, &[row.clone(), row]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("experiment,host,file,"));
        assert_eq!(
            lines.iter().filter(|l| l.starts_with("experiment")).count(),
            1
        );
    }

    #[test]
    fn a_plain_row_then_a_mixed_one_share_one_header_and_read_back_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let plain = RunResult {
            identity: crate::measure::result::Identity {
                experiment: "tui".into(),
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                mib_s: 1.5,
                lat_p50_us: 5.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut mixed = RunResult {
            identity: crate::measure::result::Identity {
                experiment: "tui".into(),
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                seconds: 2.0,
                lat_p50_us: 5.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut m = crate::measure::snapshot::MixedSnapshot::new();
        m.read.ops = 7;
        m.read.bytes = 7 * 4096;
        m.write.ops = 3;
        m.write.bytes = 3 * 4096;
        mixed.set_mixed(70, &m);
        append_rows(&path, std::slice::from_ref(&plain)).unwrap();
        append_rows(&path, std::slice::from_ref(&mixed)).unwrap();
        let mut rd = csv::Reader::from_path(&path).unwrap();
        let header = rd.headers().unwrap().clone();
        let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), 2);
        for r in &rows {
            assert_eq!(r.len(), header.len(), "every line has the header's length");
        }
        let col = |n: &str| header.iter().position(|h| h == n).unwrap();
        assert_eq!(&rows[0][col("mix_read_pct_asked")], "");
        assert_eq!(&rows[1][col("operation")], "mix");
        assert_eq!(&rows[1][col("mix_read_pct_asked")], "70");
        assert_eq!(&rows[1][col("mix_read_pct_done")], "70");
        assert_eq!(&rows[1][col("write_ops")], "3");
        assert_eq!(&rows[1][col("read_mib_s")], "0.0136719");
        // And it reads back as results rows.
        let back: Vec<RunResult> = csv::Reader::from_path(&path)
            .unwrap()
            .deserialize()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(back[1].mix.as_ref().map(|m| m.read_ops), Some(7));
        assert_eq!(back[0].mix.as_ref().map(|m| m.read_ops), None);
    }

    #[test]
    fn a_symlink_or_a_file_at_the_save_path_is_left_alone_and_a_fresh_name_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, b"precious").unwrap();
        let path = dir.path().join("tui-x.csv");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let row = RunResult {
            identity: crate::measure::result::Identity {
                experiment: "tui".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let used = append_rows(&path, std::slice::from_ref(&row)).unwrap();
        assert_eq!(used, dir.path().join("tui-x-2.csv"));
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        // A link swapped in for our file later is not written through either.
        std::fs::remove_file(&used).unwrap();
        std::os::unix::fs::symlink(&victim, &used).unwrap();
        let again = append_rows(&path, std::slice::from_ref(&row)).unwrap();
        assert_eq!(again, dir.path().join("tui-x-3.csv"));
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read_to_string(&again).unwrap().lines().count(), 2);
    }
}
