//! fio's results in: a document of `fio --output-format=json` (or `json+`) read as rows of the
//! same shape as diskscope's, so `diskscope compare fio-old/ fio-new/` (and the explorer's
//! `--baseline`) judge fio runs with the same statistics.
//!
//! Each job of a document is one repetition of a point per direction it moved data in (`read`,
//! `write`, `trim`): throughput from `bw_bytes`, p99 latency from `clat_ns.percentile."99.000000"`
//! (completion latency, µs). The point's setup is the job's options, `global options` under the
//! job's own: `rw` (operation, and `rand*` → random order), `bs`, `iodepth` (queue depth),
//! `numjobs` (threads), `direct`, `ioengine` (the method, shown as `fio:psync`), `invalidate`
//! (fio drops the file's page cache before a job unless `invalidate=0`: cache `invalidate`, else
//! `as-is`); the experiment is the job's name. Clones of a job (`numjobs` without
//! `group_reporting`) ran at once: their throughput is summed and the worst p99 kept.
//!
//! A mixed job (`rw=randrw`, `rw`/`readwrite`, issue 26) reports a `read` and a `write` section:
//! they are the two directions of one mix, named `mix70:read` and `mix70:write` (the share from
//! `rwmixread`, or 100 − `rwmixwrite`, fio's default 50) as a diskscope mix's row is split
//! ([`super::rows::directions`]), so the two pair direction by direction.
//! Repetitions come from several documents: a directory of them, one per run.

use super::rows::{is_mix_operation, mix_operation, LoadError, Points, Record, Row};
use crate::config::{CacheMode, Op, Pattern, RecordedSetup};
use crate::measure::result::Label;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Whether a parsed JSON document is fio's.
pub fn is_fio(doc: &Value) -> bool {
    doc.get("fio version").is_some_and(|v| v.is_string()) && doc.get("jobs").is_some()
}

/// A job option as text (fio writes every option as a string), the job's own over the global.
fn option<'a>(job: &'a Value, global: &'a Value, key: &str) -> Option<&'a str> {
    job.get("job options")
        .and_then(|o| o.get(key))
        .or_else(|| global.get(key))
        .and_then(|v| v.as_str())
}

/// fio's block size text (`4k`, `64K`, `1m`; `4k,8k` per direction, `4k-16k` a range): the first
/// size. fio's suffixes are binary by default, like diskscope's.
fn block_size(text: &str) -> Option<u64> {
    let first = text.split([',', '-', ':']).next()?;
    crate::size::parse_size(first).ok()
}

/// Reads the jobs of fio document `doc` (read from `path`) into `points`.
pub(super) fn read_doc(path: &Path, doc: &Value, points: &mut Points) -> Result<(), LoadError> {
    let err = |message: String| LoadError::Json {
        path: path.into(),
        message,
    };
    let jobs = doc
        .get("jobs")
        .and_then(|j| j.as_array())
        .ok_or_else(|| err("a fio document without a `jobs` array".into()))?;
    if jobs.is_empty() {
        return Err(LoadError::NoRows { path: path.into() });
    }
    let global = doc.get("global options").unwrap_or(&Value::Null);
    // One row per (job name, setup, direction); clones of a job merge into it.
    let mut rows: BTreeMap<(String, String), Row> = BTreeMap::new();
    for (i, job) in jobs.iter().enumerate() {
        let name = job
            .get("jobname")
            .and_then(|n| n.as_str())
            .ok_or_else(|| err(format!("jobs[{i}]: no `jobname`")))?;
        let opt = |key: &str| option(job, global, key);
        let rw = opt("rw").or(opt("readwrite")).unwrap_or("read");
        let number = |key: &str, default: u64| -> Result<u64, LoadError> {
            match opt(key) {
                None => Ok(default),
                Some(t) => t
                    .trim()
                    .parse()
                    .map_err(|_| err(format!("jobs[{i}]: option {key} = {t:?} is not a number"))),
            }
        };
        let iodepth = number("iodepth", 1)?;
        let numjobs = number("numjobs", 1)?;
        let bs_text = opt("bs").or(opt("blocksize")).unwrap_or("4k");
        let bs = block_size(bs_text)
            .ok_or_else(|| err(format!("jobs[{i}]: option bs = {bs_text:?} is not a size")))?;
        let direct = matches!(opt("direct"), Some("1" | "true"));
        let engine = opt("ioengine").unwrap_or("psync");
        let cache = if opt("invalidate") == Some("0") {
            CacheMode::AsIs.into()
        } else {
            Label::of_text("invalidate")
        };
        let pattern = if rw.starts_with("rand") {
            Pattern::Random
        } else {
            Pattern::Sequential
        };
        // A mix: its share of reads, as fio reads it (rwmixread, else 100 - rwmixwrite, else 50).
        let mix = if matches!(
            rw.to_ascii_lowercase().as_str(),
            "rw" | "readwrite" | "randrw"
        ) {
            let read = match opt("rwmixread") {
                Some(_) => Some(number("rwmixread", 50)?),
                None => opt("rwmixwrite")
                    .map(|_| number("rwmixwrite", 50).map(|w| 100u64.saturating_sub(w)))
                    .transpose()?,
            };
            Some(u32::try_from(read.unwrap_or(50)).unwrap_or(u32::MAX))
        } else {
            None
        };
        let error = match job.get("error").and_then(|e| e.as_i64()) {
            Some(0) | None => String::new(),
            Some(e) => format!("fio error {e}"),
        };
        for dir in ["read", "write", "trim"] {
            let Some(stats) = job.get(dir) else { continue };
            let moved = stats.get("io_bytes").and_then(|v| v.as_u64()).unwrap_or(0);
            if moved == 0 && error.is_empty() {
                continue;
            }
            let bytes_s = stats
                .get("bw_bytes")
                .and_then(|v| v.as_f64())
                .or_else(|| stats.get("bw").and_then(|v| v.as_f64()).map(|k| k * 1024.0))
                .ok_or_else(|| err(format!("jobs[{i}].{dir}: no `bw_bytes` or `bw`")))?;
            let p99_us = stats
                .get("clat_ns")
                .and_then(|c| c.get("percentile"))
                .and_then(|p| p.get("99.000000"))
                .and_then(|v| v.as_f64())
                .map(|ns| ns / 1000.0);
            let operation = match (dir, mix) {
                ("read" | "write", Some(pct)) => mix_operation(pct, dir),
                ("read", None) => Op::Read.into(),
                ("write", None) => Op::Write.into(),
                (other, _) => Label::of_text(other),
            };
            let row = Row {
                experiment: name.to_string(),
                host: String::new(),
                file: opt("filename").unwrap_or("").to_string(),
                setup: RecordedSetup {
                    op: operation,
                    method: Label::of_text(&format!("fio:{engine}")),
                    pattern: pattern.into(),
                    cache: cache.clone(),
                    direct,
                    block_size_bytes: bs,
                    threads: numjobs as usize,
                    queue_depth: u32::try_from(iodepth).unwrap_or(u32::MAX),
                    ..Default::default()
                },
                mib_s: Some(bytes_s / (1u64 << 20) as f64),
                lat_p99_us: p99_us,
                error: error.clone(),
                bound: None,
                bound_mib_s: None,
                bound_hint: None,
                rep: 0,
                verdict: String::new(),
                reasons: String::new(),
                why: String::new(),
                rank: None,
                read_mib_s: None,
                read_lat_p99_us: None,
                write_mib_s: None,
                write_lat_p99_us: None,
            };
            super::rows::check_row(&row).map_err(|m| err(format!("jobs[{i}].{dir}: {m}")))?;
            let key = (
                format!("{name}\u{0}{rw}\u{0}{bs}\u{0}{engine}"),
                dir.to_string(),
            );
            match rows.get_mut(&key) {
                // A clone of a job already read: it ran at the same time.
                Some(r) => {
                    r.mib_s = Some(r.mib_s.unwrap_or(0.0) + row.mib_s.unwrap_or(0.0));
                    r.lat_p99_us = match (r.lat_p99_us, row.lat_p99_us) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                    if r.error.is_empty() {
                        r.error = row.error;
                    }
                }
                None => {
                    rows.insert(key, row);
                }
            }
        }
    }
    if rows.is_empty() {
        return Err(LoadError::NoRows { path: path.into() });
    }
    for row in rows.into_values() {
        super::rows::add_row(points, row);
    }
    Ok(())
}

/// fio against diskscope: when one side holds only fio points and the other none, the fio
/// side's setups are restated in diskscope's words, as `--batch job.fio` maps the same options
/// (`ioengine=psync` is method `pread`, a read with fio's `invalidate` is cache `cold`, a write
/// is `as-is`, a synchronous engine has depth 1), so a job and its `--batch` run pair point by
/// point. Between two fio runs (or two diskscope runs) nothing changes. Returns whether it
/// restated a side.
pub fn restate_across(old: &mut [Record], new: &mut [Record]) -> bool {
    let is_fio = |r: &Record| r.point.setup.method.as_str().starts_with("fio:");
    let side = match (old.iter().all(is_fio), new.iter().all(is_fio)) {
        (true, false) if !new.iter().any(is_fio) => old,
        (false, true) if !old.iter().any(is_fio) => new,
        _ => return false,
    };
    for r in side.iter_mut() {
        let s = &mut r.point;
        // The one table of fio's engines (`crate::fio::ENGINES`), as `--batch job.fio` maps them.
        let Some((method, _)) =
            crate::fio::method_of_engine(&s.setup.method.as_str()["fio:".len()..])
        else {
            continue;
        };
        s.setup.method = method.into();
        if !crate::engine::caps(method).queued {
            s.setup.queue_depth = 1;
        }
        s.setup.cache = match s.setup.op.known() {
            Some(Op::Read) if s.setup.cache.as_str() == "invalidate" => CacheMode::Cold.into(),
            Some(Op::Write) => CacheMode::AsIs.into(),
            // A mix writes: `--batch job.fio` runs it on its file as it is, like a write.
            None if is_mix_operation(&s.setup.op) => CacheMode::AsIs.into(),
            _ => s.setup.cache.clone(),
        };
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::load::load;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fio")
            .join(name)
    }

    #[test]
    fn a_fio_document_gives_one_point_per_job_with_its_options_as_the_setup() {
        for name in ["psync-seq-rand.json", "psync-seq-rand-plus.json"] {
            let recs = load(&fixture(name)).unwrap();
            assert_eq!(recs.len(), 2, "{name}: {recs:?}");
            let by_name = |n: &str| recs.iter().find(|r| r.point.experiment == n).unwrap();
            let (rand, seq) = (by_name("randread"), by_name("seqread"));
            assert_eq!(seq.point.setup.block_size_bytes, 64 << 10);
            assert_eq!(rand.point.setup.block_size_bytes, 4 << 10);
            assert_eq!(seq.point.setup.pattern.known(), Some(Pattern::Sequential));
            assert_eq!(rand.point.setup.pattern.known(), Some(Pattern::Random));
            assert_eq!(seq.point.setup.method.as_str(), "fio:psync");
            assert_eq!(
                (seq.point.setup.threads, seq.point.setup.queue_depth),
                (1, 1)
            );
            assert!(!seq.point.setup.direct);
            for r in [seq, rand] {
                assert_eq!(r.mib_s.len(), 1);
                assert!(r.mib_s[0] > 0.0 && r.lat_p99_us[0] > 0.0, "{r:?}");
                assert_eq!(r.point.setup.op.known(), Some(Op::Read));
            }
            assert_eq!(seq.files, ["/tmp/fiofix/data.bin"]);
        }
        // json and json+ of one run's shape, the numbers of two runs: same setups.
        let a: Vec<_> = load(&fixture("psync-seq-rand.json")).unwrap();
        let b: Vec<_> = load(&fixture("psync-seq-rand-plus.json")).unwrap();
        let setups =
            |v: &[crate::compare::Record]| v.iter().map(|r| r.point.clone()).collect::<Vec<_>>();
        assert_eq!(setups(&a), setups(&b));
    }

    #[test]
    fn a_mixed_job_is_two_directions_of_one_mix_and_pairs_with_a_diskscope_mix_row() {
        let mut doc: Value =
            serde_json::from_str(&std::fs::read_to_string(fixture("psync-seq-rand.json")).unwrap())
                .unwrap();
        let mut job = doc["jobs"][1].clone();
        job["job options"]["rw"] = "randrw".into();
        job["job options"]["rwmixwrite"] = "30".into();
        job["write"] = job["read"].clone();
        job["write"]["bw_bytes"] = (job["read"]["bw_bytes"].as_f64().unwrap() / 2.0).into();
        doc["jobs"] = Value::Array(vec![job]);
        let dir = tempfile::tempdir().unwrap();
        let fio = dir.path().join("fio.json");
        std::fs::write(&fio, doc.to_string()).unwrap();
        let recs = load(&fio).unwrap();
        let ops: Vec<&str> = recs.iter().map(|r| r.point.setup.op.as_str()).collect();
        assert_eq!(ops, ["mix70:read", "mix70:write"]);
        assert!((recs[0].mib_s[0] - 2.0 * recs[1].mib_s[0]).abs() < 1e-9 * recs[0].mib_s[0]);
        // A diskscope mix row of the same job: split the same way, and fio's side restated.
        let mut m = crate::measure::snapshot::MixedSnapshot::new();
        m.read.ops = 7;
        m.read.bytes = 7 << 12;
        m.read.latency.record(50_000).unwrap();
        m.write.ops = 3;
        m.write.bytes = 3 << 12;
        m.write.latency.record(90_000).unwrap();
        let mut row = crate::measure::RunResult {
            identity: crate::measure::result::Identity {
                experiment: recs[0].point.experiment.clone(),
                rep: 1,
                ..Default::default()
            },
            setup: crate::config::RecordedSetup {
                method: crate::config::Method::Pread.into(),
                pattern: Pattern::Random.into(),
                cache: CacheMode::AsIs.into(),
                block_size_bytes: 4096,
                threads: 1,
                queue_depth: 1,
                ..Default::default()
            },
            figures: crate::measure::result::Figures {
                seconds: 1.0,
                bytes: 10 << 12,
                ops: 10,
                ..Default::default()
            },
            ..Default::default()
        };
        row.set_rates();
        row.set_mixed(70, &m);
        let mut ours = crate::compare::load::records_of(&[row]).unwrap();
        let mut theirs = recs.clone();
        assert!(restate_across(&mut theirs, &mut ours));
        let setups = |v: &[Record]| v.iter().map(|r| r.point.clone()).collect::<Vec<_>>();
        assert_eq!(setups(&theirs), setups(&ours));
        assert!((ours[1].mib_s[0] - 3.0 * 4096.0 / (1 << 20) as f64).abs() < 1e-12);
        let p99 = ours[0].lat_p99_us[0];
        assert!((p99 - 50.0).abs() < 0.5, "{p99}");
    }

    #[test]
    fn clones_of_a_job_add_their_throughput() {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(fixture("psync-seq-rand.json")).unwrap())
                .unwrap();
        let mut two = doc.clone();
        let first = two["jobs"][0].clone();
        two["jobs"].as_array_mut().unwrap().insert(1, first);
        let dir = tempfile::tempdir().unwrap();
        let (p1, p2) = (dir.path().join("one.json"), dir.path().join("two.json"));
        std::fs::write(&p1, doc.to_string()).unwrap();
        std::fs::write(&p2, two.to_string()).unwrap();
        let (one, two) = (load(&p1).unwrap(), load(&p2).unwrap());
        let seq = |v: &[crate::compare::Record]| {
            v.iter()
                .find(|r| r.point.experiment == "seqread")
                .unwrap()
                .mib_s[0]
        };
        assert!((seq(&two) - 2.0 * seq(&one)).abs() < 1e-6 * seq(&one));
    }
}
