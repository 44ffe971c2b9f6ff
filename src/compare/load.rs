//! Reading results back: batch result directories, per-repetition CSVs and rows saved from the
//! explorer (`s` writes `diskscope-results/tui-*.csv` with batch mode's columns), grouped into one
//! [`Record`] per sweep point.
//!
//! Inputs are an enum ([`InputKind`]) picked from the path, one variant and one reader per format.
//! CSVs are read by column name, never by position, and must carry batch mode's per-repetition
//! columns: a summary CSV, a syscall CSV or any other file is refused with a message saying which
//! file to pass instead. JSON documents (`run --json`, batch `--json`, a sweep's `sweep.json`) are
//! read through their `results` rows, which are the CSV's rows (serde of the same `RunResult`), so
//! both roads fill the same [`Record`]s. A result directory is read from its CSVs; its
//! `sweep.json` is read only when the directory holds no per-repetition CSV (the CSVs are what
//! batch mode writes first and what a user edits, so they win when both exist). fio's JSON
//! documents (`--output-format=json`/`json+`) are read by [`super::fio`] into the same rows; a
//! directory holding neither CSVs nor `sweep.json` is read as fio documents, one run each.

use super::rows::{add_row, check_row, Points, Row, REQUIRED};
pub use super::rows::{Bound, InputKind, Kind, LoadError, Point, Record};
use crate::measure::columns::Cells;
use std::path::{Path, PathBuf};

/// Loads `path` (a result directory or a CSV) into one record per point, sorted by setup.
pub fn load(path: &Path) -> Result<Vec<Record>, LoadError> {
    let mut points = Points::new();
    match InputKind::detect(path)? {
        InputKind::RepetitionCsv => {
            read_csv(path, &mut points)?;
            super::timeline::read_beside(path, &mut points);
        }
        InputKind::JsonDocument => read_json(path, &mut points)?,
        InputKind::ResultDir => {
            let entries = std::fs::read_dir(path).map_err(|source| LoadError::Read {
                path: path.into(),
                source,
            })?;
            let mut csvs: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"))
                        && std::fs::metadata(p).is_ok_and(|m| m.is_file())
                        // A run's intervals (`<experiment>-timeline.csv`) are not repetitions.
                        && !p.to_string_lossy().ends_with("-timeline.csv")
                })
                .collect();
            csvs.sort();
            for csv in &csvs {
                match read_csv(csv, &mut points) {
                    // A result directory holds summaries and syscall CSVs beside the repetitions.
                    Err(LoadError::Summary { .. } | LoadError::Syscalls { .. }) => {}
                    // A header written by a sweep stopped before its first run.
                    Err(LoadError::NoRows { .. }) => {}
                    r => r?,
                }
            }
            super::timeline::read_dir(path, &mut points);
            // No per-repetition CSV (only the document was kept): the sweep's JSON document.
            let doc = path.join("sweep.json");
            if points.is_empty() && std::fs::metadata(&doc).is_ok_and(|m| m.is_file()) {
                read_json(&doc, &mut points)?;
            }
            // Neither: a directory of fio documents, one run (repetition) each.
            if points.is_empty() {
                let mut docs: Vec<PathBuf> = std::fs::read_dir(path)
                    .map_err(|source| LoadError::Read {
                        path: path.into(),
                        source,
                    })?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.extension()
                            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
                            && std::fs::metadata(p).is_ok_and(|m| m.is_file())
                    })
                    .collect();
                docs.sort();
                for doc in &docs {
                    read_json(doc, &mut points)?;
                }
            }
        }
    }
    if points.is_empty() {
        return Err(LoadError::Empty { path: path.into() });
    }
    Ok(points.into_values().map(|p| p.record).collect())
}

/// The records of result rows held in memory (a sweep's outcome), read through the same serde
/// names as a CSV's or a JSON document's rows, so the three roads fill the same [`Record`]s.
/// A row no measurement gives (see `check_row`) is an error naming its index.
pub fn records_of(rows: &[crate::measure::RunResult]) -> Result<Vec<Record>, String> {
    let mut points = Points::new();
    for (i, r) in rows.iter().enumerate() {
        let v = serde_json::to_value(r).map_err(|e| format!("row {i}: {e}"))?;
        let row = Row::of_json(&v).map_err(|e| format!("row {i}: {e}"))?;
        check_row(&row).map_err(|m| format!("row {i}: {m}"))?;
        add_row(&mut points, row);
    }
    Ok(points.into_values().map(|p| p.record).collect())
}

fn read_csv(path: &Path, points: &mut Points) -> Result<(), LoadError> {
    let file = std::fs::File::open(path).map_err(|source| LoadError::Read {
        path: path.into(),
        source,
    })?;
    let mut rdr = csv::Reader::from_reader(std::io::BufReader::new(file));
    let headers = rdr.headers().map_err(|e| row_error(path, &e))?.clone();
    let has = |c: &str| headers.iter().any(|h| h == c);
    if has("mean_mib_s") || (has("reps") && !has("rep")) {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().trim_end_matches("-summary").to_string())
            .unwrap_or_default();
        return Err(LoadError::Summary {
            path: path.into(),
            stem,
        });
    }
    if has("syscall") && has("ns_per_call") {
        return Err(LoadError::Syscalls { path: path.into() });
    }
    if let Some(column) = REQUIRED.iter().find(|c| !has(c)) {
        return Err(LoadError::Foreign {
            path: path.into(),
            column,
        });
    }
    let mut rows = 0usize;
    let mut record = csv::StringRecord::new();
    while rdr
        .read_record(&mut record)
        .map_err(|e| row_error(path, &e))?
    {
        let mut r: Row = record
            .deserialize(Some(&headers))
            .map_err(|e| row_error(path, &e))?;
        r.set_setup(&Cells::of_record(&headers, &record))
            .map_err(|message| LoadError::Row {
                path: path.into(),
                line: record.position().map(|p| p.line()).unwrap_or(0),
                message,
            })?;
        check_row(&r).map_err(|message| LoadError::Row {
            path: path.into(),
            line: record.position().map(|p| p.line()).unwrap_or(0),
            message,
        })?;
        rows += 1;
        add_row(points, r);
    }
    if rows == 0 {
        return Err(LoadError::NoRows { path: path.into() });
    }
    Ok(())
}

/// Reads the `results` rows of a JSON document written by diskscope.
fn read_json(path: &Path, points: &mut Points) -> Result<(), LoadError> {
    let json_err = |message: String| LoadError::Json {
        path: path.into(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|source| LoadError::Read {
        path: path.into(),
        source,
    })?;
    let doc: serde_json::Value = serde_json::from_reader(std::io::BufReader::new(file))
        .map_err(|e| json_err(format!("not JSON ({e})")))?;
    if super::fio::is_fio(&doc) {
        return super::fio::read_doc(path, &doc, points);
    }
    if !doc.get("diskscope").is_some_and(|v| v.is_object()) {
        return Err(json_err(
            "not a diskscope JSON document (no `diskscope` key)".into(),
        ));
    }
    let command = doc.get("command").and_then(|c| c.as_str()).unwrap_or("");
    if command == "fast" {
        return Err(json_err(
            "a `fast` document has no sweep point (method, block size, repetitions) to match"
                .into(),
        ));
    }
    let Some(results) = doc.get("results").and_then(|r| r.as_array()) else {
        return Err(json_err("no `results` array".into()));
    };
    if results.is_empty() {
        return Err(LoadError::NoRows { path: path.into() });
    }
    let mut only = None;
    for (i, v) in results.iter().enumerate() {
        let r = Row::of_json(v).map_err(|e| {
            json_err(format!(
                "results[{i}]: {e} (a `{command}` document is not a throughput result)"
            ))
        })?;
        check_row(&r).map_err(|m| json_err(format!("results[{i}]: {m}")))?;
        only = (results.len() == 1).then(|| (r.point(), r.rep));
        add_row(points, r);
    }
    super::timeline::read_json(&doc, only, points);
    Ok(())
}

fn row_error(path: &Path, e: &csv::Error) -> LoadError {
    let line = e.position().map(|p| p.line()).unwrap_or(0);
    let message = match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(i) => format!("field {}: {}", i + 1, err.kind()),
            None => err.kind().to_string(),
        },
        _ => e.to_string(),
    };
    LoadError::Row {
        path: path.into(),
        line,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CacheMode, Op, Pattern};
    use crate::measure::result::Label;

    const HEADER: &str = "experiment,host,file,file_size_bytes,operation,method,pattern,cache,direct,block_size_bytes,block_count,threads,queue_depth,rep,bytes,seconds,mib_s,ops,iops,lat_p50_us,lat_p90_us,lat_p99_us,lat_p999_us,lat_max_us,residency_before_pct,xor,error";

    fn row(exp: &str, bs: u64, rep: u32, mib_s: impl std::fmt::Display, error: &str) -> String {
        format!("{exp},h,/f,100,read,pread,sequential,warm,false,{bs},1,1,1,{rep},1,1,{mib_s},1,1,1,1,7.5,1,1,100,00000000,{error}")
    }

    #[test]
    fn repetitions_of_a_point_are_grouped_and_failures_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let text = [
            HEADER.to_string(),
            row("x", 4096, 1, 10.0, ""),
            row("x", 4096, 2, 12.0, ""),
            row("x", 4096, 3, 0.0, "EIO"),
            row("x", 8192, 1, 20.0, ""),
        ]
        .join("\n");
        std::fs::write(&path, text).unwrap();
        let recs = load(&path).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].point.setup.block_size_bytes, 4096);
        assert_eq!(recs[0].mib_s, vec![10.0, 12.0]);
        assert_eq!(recs[0].lat_p99_us, vec![7.5, 7.5]);
        assert_eq!(recs[0].failed_reps, 1);
        assert_eq!(recs[0].point.kind(), Kind::Throughput);
    }

    /// Rows with every value of every setting enum, and text from outside them (a program, a
    /// locality layout and order, the empty cells of a row whose setup was never known).
    fn rows_with_every_setting() -> Vec<crate::measure::RunResult> {
        use crate::config::Method;
        use crate::measure::RunResult;
        let base = RunResult {
            identity: crate::measure::result::Identity {
                experiment: "e".into(),
                host: "h".into(),
                file: "/f".into(),
                rep: 1,
                ..Default::default()
            },
            setup: crate::config::RecordedSetup {
                block_size_bytes: 4096,
                threads: 1,
                queue_depth: 1,
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                mib_s: 10.0,
                lat_p99_us: 7.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut rows = Vec::new();
        for &operation in Op::ALL {
            for &method in Method::ALL {
                for &pattern in Pattern::ALL {
                    for &cache in CacheMode::ALL {
                        rows.push(RunResult {
                            setup: crate::config::RecordedSetup {
                                op: operation.into(),
                                method: method.into(),
                                pattern: pattern.into(),
                                cache: cache.into(),
                                ..base.clone().setup
                            },
                            ..base.clone()
                        });
                    }
                }
            }
        }
        rows.push(RunResult {
            setup: crate::config::RecordedSetup {
                op: Op::Read.into(),
                method: Label::of_text("dd"),
                pattern: Pattern::Sequential.into(),
                cache: CacheMode::Cold.into(),
                ..base.clone().setup
            },
            ..base.clone()
        });
        rows.push(RunResult {
            setup: crate::config::RecordedSetup {
                op: Op::Read.into(),
                method: Label::of_text("packed"),
                pattern: Label::of_text("trace"),
                cache: CacheMode::Warm.into(),
                ..base.clone().setup
            },
            ..base.clone()
        });
        rows.push(RunResult {
            figures: crate::measure::result::Figures {
                error: "the experiment failed before its setup was known".into(),
                ..base.figures.clone()
            },
            ..base
        });
        rows
    }

    /// The text of `column` in every row of CSV `text`.
    fn column(text: &str, name: &str) -> Vec<String> {
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
        let i = rdr
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == name)
            .unwrap();
        rdr.records().map(|r| r.unwrap()[i].to_string()).collect()
    }

    #[test]
    fn every_setting_round_trips_through_the_csv_writer_and_the_loader_as_the_same_text() {
        let rows = rows_with_every_setting();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.csv");
        let mut sink =
            crate::export::CsvSink::create::<crate::measure::RunResult>(&path, false).unwrap();
        for r in &rows {
            sink.write(r).unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();

        // The cells are the enums' names, exactly as the string columns wrote them.
        let text_of = |f: fn(&crate::measure::RunResult) -> String| -> Vec<String> {
            rows.iter().map(f).collect()
        };
        assert_eq!(
            column(&text, "operation"),
            text_of(|r| r.setup.op.to_string())
        );
        assert_eq!(
            column(&text, "method"),
            text_of(|r| r.setup.method.to_string())
        );
        assert_eq!(
            column(&text, "pattern"),
            text_of(|r| r.setup.pattern.to_string())
        );
        assert_eq!(
            column(&text, "cache"),
            text_of(|r| r.setup.cache.to_string())
        );
        let cache = column(&text, "cache");
        for name in ["as-is", "warm", "cold", "cold-all"] {
            assert!(cache.iter().any(|c| c == name), "{name} in {cache:?}");
        }
        let method = column(&text, "method");
        for name in [
            "read", "pread", "mmap", "io_uring", "buffered", "dd", "packed", "",
        ] {
            assert!(method.iter().any(|c| c == name), "{name} in {method:?}");
        }
        let pattern = column(&text, "pattern");
        for name in ["sequential", "random", "trace"] {
            assert!(pattern.iter().any(|c| c == name), "{name} in {pattern:?}");
        }
        let operation = column(&text, "operation");
        for name in ["read", "write", ""] {
            assert!(
                operation.iter().any(|c| c == name),
                "{name} in {operation:?}"
            );
        }

        // The loader reads them back as the same values (an enum value as that value, other
        // text as that text), through the CSV and through a JSON document of the same rows.
        let doc = serde_json::json!({"diskscope": {}, "command": "batch", "results": rows});
        let json_path = dir.path().join("sweep.json");
        std::fs::write(&json_path, doc.to_string()).unwrap();
        for input in [&path, &json_path] {
            let recs = load(input).unwrap();
            assert_eq!(recs.len(), rows.len(), "one point per row of {input:?}");
            for r in &rows {
                let rec = recs
                    .iter()
                    .find(|rec| {
                        let s = &rec.point;
                        (
                            s.setup.op.known(),
                            s.setup.method.known(),
                            s.setup.pattern.known(),
                        ) == (
                            r.setup.op.known(),
                            r.setup.method.known(),
                            r.setup.pattern.known(),
                        ) && s.setup.cache.known() == r.setup.cache.known()
                            && (s.setup.op.as_str(), s.setup.method.as_str())
                                == (r.setup.op.as_str(), r.setup.method.as_str())
                            && (s.setup.pattern.as_str(), s.setup.cache.as_str())
                                == (r.setup.pattern.as_str(), r.setup.cache.as_str())
                    })
                    .unwrap_or_else(|| panic!("{input:?} lost the point of {r:?}"));
                let kind = match r.setup.method {
                    Label::Known(_) => Kind::Throughput,
                    Label::Other(_) => Kind::Other,
                };
                assert_eq!(rec.point.kind(), kind, "{r:?}");
                assert_eq!(rec.failed_reps, usize::from(!r.figures.error.is_empty()));
            }
        }
    }

    #[test]
    fn a_bad_number_names_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let text = format!(
            "{HEADER}\n{}\n{}\n",
            row("x", 1, 1, 1.0, ""),
            row("x", 1, 2, "fast", "")
        );
        std::fs::write(&path, text).unwrap();
        let e = load(&path).unwrap_err().to_string();
        assert!(e.contains("x.csv:3:"), "{e}");
    }

    #[test]
    fn a_number_no_measurement_gives_is_refused_naming_the_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        for (bad, column) in [
            ("inf", "mib_s"),
            ("NaN", "mib_s"),
            ("1e309", "mib_s"),
            ("-5", "mib_s"),
        ] {
            let text = format!(
                "{HEADER}\n{}\n{}\n",
                row("x", 1, 1, 1.0, ""),
                row("x", 1, 2, bad, "")
            );
            std::fs::write(&path, text).unwrap();
            let e = load(&path).unwrap_err().to_string();
            assert!(
                e.contains("x.csv:3: column ") && e.contains(column),
                "{bad}: {e}"
            );
            assert_eq!(e.lines().count(), 1);
        }
        // A failed row's numbers are not judged; a huge finite value is accepted.
        let text = format!(
            "{HEADER}\n{}\n{}\n",
            row("x", 1, 1, 1e308, ""),
            row("x", 1, 2, "inf", "EIO")
        );
        std::fs::write(&path, text).unwrap();
        let recs = load(&path).unwrap();
        assert_eq!(
            (recs[0].mib_s.clone(), recs[0].failed_reps),
            (vec![1e308], 1)
        );
    }

    #[test]
    fn hosts_and_files_are_listed_once_each_in_the_order_first_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let mut text = HEADER.to_string();
        // A few hosts (the list), then more than the list scans (the set).
        let mut hosts: Vec<String> = ["b", "a", "b", "c", "a"].map(String::from).to_vec();
        hosts.extend((0..40).map(|i| format!("n{}", i % 20)));
        for (i, host) in hosts.iter().enumerate() {
            text += "\n";
            text += &row("x", 1, i as u32, 1.0, "").replacen(",h,", &format!(",{host},"), 1);
        }
        std::fs::write(&path, text).unwrap();
        let recs = load(&path).unwrap();
        let mut want: Vec<String> = ["b", "a", "c"].map(String::from).to_vec();
        want.extend((0..20).map(|i| format!("n{i}")));
        assert_eq!(recs[0].hosts, want);
        assert_eq!(recs[0].files, ["/f"]);
    }

    #[test]
    fn a_json_document_fills_the_same_records_as_its_csv_with_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let hdr = format!("{HEADER},bound,bound_mib_s,pct_of_bound,bound_hint");
        let csv_path = dir.path().join("x.csv");
        let text = [
            hdr,
            row("x", 4096, 1, 10.0, "") + ",memory-bound,100,10,look at the page cache",
            row("x", 4096, 2, 30.0, "") + ",memory-bound,100,30,",
            row("x", 8192, 1, 20.0, "") + ",,,,",
        ]
        .join("\n");
        std::fs::write(&csv_path, text).unwrap();
        let from_csv = load(&csv_path).unwrap();
        assert_eq!(
            from_csv[0].bound,
            Some(Bound {
                bound: "memory-bound".into(),
                bound_mib_s: 100.0,
                hint: Some("look at the page cache".into())
            })
        );
        assert_eq!(from_csv[0].pct_of_bound(), Some(20.0));
        assert_eq!(from_csv[1].bound, None, "empty bound cells: no bound");

        // The same rows as a document's `results` (as serde writes RunResult: null for empty).
        let mut rdr = csv::Reader::from_path(&csv_path).unwrap();
        let h = rdr.headers().unwrap().clone();
        let results: Vec<serde_json::Value> = rdr
            .records()
            .map(|r| {
                let r = r.unwrap();
                let mut o = serde_json::Map::new();
                for (k, v) in h.iter().zip(r.iter()) {
                    let val = if v.is_empty() {
                        serde_json::Value::Null
                    } else if ["xor", "host", "file"].contains(&k) {
                        v.into()
                    } else if let Ok(n) = v.parse::<u64>() {
                        n.into()
                    } else if let Ok(n) = v.parse::<f64>() {
                        n.into()
                    } else if let Ok(b) = v.parse::<bool>() {
                        b.into()
                    } else {
                        v.into()
                    };
                    o.insert(k.into(), val);
                }
                o.insert("error".into(), "".into());
                serde_json::Value::Object(o)
            })
            .collect();
        let doc = serde_json::json!({"diskscope": {"version": "x"}, "command": "batch", "results": results});
        let json_path = dir.path().join("sweep.json");
        std::fs::write(&json_path, doc.to_string()).unwrap();
        assert_eq!(
            InputKind::detect(&json_path).unwrap(),
            InputKind::JsonDocument
        );
        assert_eq!(load(&json_path).unwrap(), from_csv);

        // A directory: the CSV wins over the document; without the CSV, the document is read.
        std::fs::write(&json_path, "{not json").unwrap();
        assert_eq!(load(dir.path()).unwrap(), from_csv);
        std::fs::remove_file(&csv_path).unwrap();
        let e = load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("sweep.json: not JSON"), "{e}");
        std::fs::write(
            &json_path,
            r#"{"diskscope":{},"command":"fast","results":[{}]}"#,
        )
        .unwrap();
        let e = load(&json_path).unwrap_err().to_string();
        assert!(e.contains("`fast` document"), "{e}");
        std::fs::write(&json_path, r#"{"command":"batch","results":[]}"#).unwrap();
        let e = load(&json_path).unwrap_err().to_string();
        assert!(e.contains("not a diskscope JSON document"), "{e}");
    }
}
