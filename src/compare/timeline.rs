//! The timelines beside the results compare reads (issue 22): a point whose repetition's
//! throughput moved to another level mid-run and stayed there has a mean that is of two levels,
//! and a comparison of such means says little about either. Compare's totals do not change; the
//! point gets a note ([`super::rows::Record::level_shifts`]).
//!
//! Where a timeline is found: a batch directory's `<experiment>-timeline.csv`, the
//! `<name>-timeline.csv` beside a per-repetition `<name>.csv`, and the `timeline` of a JSON
//! document (`run --json`: one timeline; `sweep.json`: one per run with its key). The level
//! shift is found by the same rule a run uses ([`crate::measure::timeline::level_shift`]), so a
//! timeline written before the verdict existed is read the same way. A timeline that cannot be
//! read adds no note and is no error: the results themselves were read and compared.

use super::rows::{note_level_shift, Point, Points};
use crate::config::RecordedSetup;
use crate::measure::columns::{CellError, Cells};
use crate::measure::timeline::{level_shift, LevelShift};
use serde::Deserialize;
use std::path::Path;

/// The run of a timeline CSV row (or of a `sweep.json` timeline's `run`): its point (the
/// experiment and the settings every table shows, which must be there) and its repetition.
fn run_of(c: &Cells) -> Option<(Point, u32)> {
    #[derive(Deserialize)]
    struct Run {
        experiment: String,
        #[serde(default)]
        rep: u32,
    }
    if !RecordedSetup::SHOWN_COLUMNS.iter().all(|k| c.has(k)) {
        return None;
    }
    let run: Run = c.part::<_, CellError>().ok()?;
    let setup: RecordedSetup = c.part::<_, CellError>().ok()?;
    let point = Point {
        experiment: run.experiment,
        setup: setup.shown(),
    };
    Some((point, run.rep))
}

#[derive(Debug, Deserialize)]
struct Interval {
    t_start_s: f64,
    t_end_s: f64,
    mib_s: f64,
}

/// The note of a shift.
fn what(s: &LevelShift) -> String {
    format!(
        "throughput went from {:.1} to {:.1} MiB/s at {:.1} s and stayed there",
        s.before_mib_s, s.after_mib_s, s.at_s
    )
}

/// The level shift of one run's intervals (a last interval shorter than half of one is left
/// out, as the run itself does).
fn shift_of(rows: &[Interval]) -> Option<LevelShift> {
    let interval_s = rows.first().map(|r| r.t_end_s - r.t_start_s)?;
    if interval_s.is_nan() || interval_s <= 0.0 {
        return None;
    }
    let series: Vec<f64> = rows
        .iter()
        .filter(|r| r.t_end_s - r.t_start_s >= interval_s / 2.0)
        .map(|r| r.mib_s)
        .collect();
    level_shift(&series, interval_s)
}

fn note(points: &mut Points, setup: &Point, rep: u32, s: &LevelShift) {
    if let Some(p) = points.get_mut(setup) {
        note_level_shift(&mut p.record, rep, what(s));
    }
}

/// Reads a timeline CSV and notes the level shift of each run (setup and repetition) in it.
pub(super) fn read_csv(path: &Path, points: &mut Points) {
    let Ok(mut rdr) = csv::Reader::from_path(path) else {
        return;
    };
    let Ok(headers) = rdr.headers().cloned() else {
        return;
    };
    // A fleet's file of every rank: only its `all` rows are the points compare reads.
    let rank_col = headers.iter().position(|h| h == "rank");
    let mut runs: Vec<((Point, u32), Vec<Interval>)> = Vec::new();
    let mut record = csv::StringRecord::new();
    while rdr.read_record(&mut record).unwrap_or(false) {
        if rank_col.is_some_and(|i| record.get(i).is_some_and(|r| r != "all")) {
            continue;
        }
        let (Some(key), Ok(row)) = (
            run_of(&Cells::of_record(&headers, &record)),
            record.deserialize::<Interval>(Some(&headers)),
        ) else {
            continue;
        };
        match runs.last_mut() {
            Some((k, rows)) if *k == key => rows.push(row),
            _ => runs.push((key, vec![row])),
        }
    }
    for ((setup, rep), rows) in runs {
        if let Some(s) = shift_of(&rows) {
            note(points, &setup, rep, &s);
        }
    }
}

/// The timeline CSVs of a result directory (`*-timeline.csv`, a fleet's per-rank file
/// `*-ranks-timeline.csv` aside: its `all` rows are in the other).
pub(super) fn read_dir(dir: &Path, points: &mut Points) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with("-timeline.csv")
                && !name.ends_with("-ranks-timeline.csv")
                && std::fs::metadata(p).is_ok_and(|m| m.is_file())
        })
        .collect();
    files.sort();
    for f in files {
        read_csv(&f, points);
    }
}

/// The `<name>-timeline.csv` beside a per-repetition `<name>.csv`.
pub(super) fn read_beside(csv: &Path, points: &mut Points) {
    let Some(stem) = csv.file_stem() else { return };
    let mut name = stem.to_os_string();
    name.push("-timeline.csv");
    let t = csv.with_file_name(name);
    if std::fs::metadata(&t).is_ok_and(|m| m.is_file()) {
        read_csv(&t, points);
    }
}

/// The `timeline` of a diskscope JSON document: one timeline (`run --json`, of its one result
/// `only`), or a list of `{run, timeline}` (`sweep.json`, a fleet's `--json`; a fleet's rank
/// entries aside).
pub(super) fn read_json(doc: &serde_json::Value, only: Option<(Point, u32)>, points: &mut Points) {
    let shift = |t: &serde_json::Value| -> Option<LevelShift> {
        serde_json::from_value(t.get("reading")?.get("level_shift")?.clone()).ok()
    };
    match doc.get("timeline") {
        Some(serde_json::Value::Array(runs)) => {
            for r in runs {
                if r.get("rank")
                    .and_then(|v| v.as_str())
                    .is_some_and(|v| v != "all")
                {
                    continue;
                }
                let key = r
                    .get("run")
                    .and_then(|k| Cells::deserialize(k).ok())
                    .and_then(|c| run_of(&c));
                if let (Some((setup, rep)), Some(s)) = (key, r.get("timeline").and_then(shift)) {
                    note(points, &setup, rep, &s);
                }
            }
        }
        Some(t @ serde_json::Value::Object(_)) => {
            if let (Some((setup, rep)), Some(s)) = (only, shift(t)) {
                note(points, &setup, rep, &s);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_csv_whose_throughput_halves_and_stays_notes_its_point_and_rep() {
        let dir = tempfile::tempdir().unwrap();
        let header = "experiment,operation,method,pattern,cache,direct,block_size_bytes,threads,queue_depth,rep,device,t_start_s,t_end_s,bytes,ops,mib_s";
        let mut text = format!("{header}\n");
        for rep in 1..=2u32 {
            for i in 0..12 {
                let mib_s = if rep == 2 && i >= 6 { 50.0 } else { 100.0 };
                text += &format!(
                    "x,read,pread,sequential,warm,false,4096,1,1,{rep},,{i},{},1,1,{mib_s}\n",
                    i + 1
                );
            }
        }
        let path = dir.path().join("x-timeline.csv");
        std::fs::write(&path, text).unwrap();
        let mut points = Points::new();
        let rec = crate::compare::rows::Record::sample(4096, vec![100.0, 75.0], 1.0);
        points.insert(
            rec.point.clone(),
            crate::compare::rows::Gathered::of(rec.clone()),
        );
        read_dir(dir.path(), &mut points);
        let got = &points[&rec.point].record.level_shifts;
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, 2);
        assert!(
            got[0].1.contains("from 100.0 to 50.0 MiB/s at 6.0 s"),
            "{got:?}"
        );
    }
}
