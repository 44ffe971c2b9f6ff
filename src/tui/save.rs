//! `s`: appends results rows to a CSV file with batch mode's columns (the [`RunResult`] fields,
//! via serde, tidied as batch mode's: see [`crate::export::csv::tidy`]), writing the header only
//! when the file is new or empty.

use crate::measure::RunResult;
use anyhow::Context;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

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

/// Appends `rows` to `path` (creating its directory), with a header if the file is new.
pub fn append_rows(path: &Path, rows: &[RunResult]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    let is_new = file.metadata().map(|m| m.len() == 0).unwrap_or(true);
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(file);
    if is_new {
        w.write_record(crate::export::csv::header_of::<RunResult>()?)?;
    }
    for r in rows {
        w.write_record(crate::export::csv::tidy(r)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
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
            experiment: "tui".into(),
            mib_s: 1.5,
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
}
