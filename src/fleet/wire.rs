//! The fleet's messages and their encoding. Ranks exchange only small control messages and,
//! once per point, one report each.
//!
//! A message is its serde form in CBOR (`ciborium`): self-describing, so a rank's row
//! ([`RunResult`]) travels as its serde fields — a column added to the struct travels without
//! touching this file, an optional column left out is read as absent, and a figure that is not
//! known (NaN) stays NaN (CBOR has floats, where CSV text had an empty cell). Binary, so numbers
//! are bytes, not decimal text, and nothing is parsed twice. The MPI layer stays "send bytes /
//! receive bytes", and the in-process transport of the tests carries the very same bytes.
//!
//! Histograms travel in hdrhistogram's own V2 format (the one HdrHistogram's Java, C and Go
//! implementations read), as CBOR byte strings. Every histogram in diskscope has the same bounds
//! and precision ([`new_latency_histogram`]); a histogram whose header says otherwise is refused
//! before it is rebuilt (a garbled header could ask for any size), and rank 0 merges the ones it
//! gets exactly as the threads of one run do.

use super::error::FleetError;
use crate::measure::histogram::new_latency_histogram;
use crate::measure::timeline::{IntervalRow, Reading};
use crate::measure::{RunResult, Timeline};
use hdrhistogram::serialization::{Serializer as _, V2Serializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// One rank's measurement of one point, as rank 0 receives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: usize,
    /// The rank's own row (host, file, bytes, seconds, percentiles, error...).
    pub result: RunResult,
    /// Wall-clock start and end of the measured part, ns since the Unix epoch (CLOCK_REALTIME,
    /// so comparable across hosts only as far as their clocks are synchronised, e.g. by NTP).
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    /// XOR of the rank's range when it covered it completely.
    pub xor_full: Option<u32>,
    /// Why the rank stopped before its end (stonewall, another rank failed), else empty.
    pub stopped_by: String,
    /// Latency histogram of every operation, ns.
    #[serde(serialize_with = "histogram_out", deserialize_with = "histogram_in")]
    pub latency: Histogram<u64>,
    /// A mixed point (issue 26): the reads' and the writes' histograms apart, so rank 0 merges
    /// each direction's percentiles exactly as it merges the whole. None for a pure point (and
    /// absent from a report of a build that had no mixes).
    #[serde(default)]
    pub mixed_latency: Option<MixedLatency>,
    /// The rank's timeline on its own clock (None: the run had none, e.g. it failed to start).
    #[serde(serialize_with = "timeline_out", deserialize_with = "timeline_in")]
    pub timeline: Option<Timeline>,
}

/// A mixed point's latency by direction, ns (each as [`RankReport::latency`] travels).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedLatency {
    #[serde(serialize_with = "histogram_out", deserialize_with = "histogram_in")]
    pub read: Histogram<u64>,
    #[serde(serialize_with = "histogram_out", deserialize_with = "histogram_in")]
    pub write: Histogram<u64>,
}

/// Everything ranks say to each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Msg {
    /// Rank → 0 at start: my host name.
    Hello { host: String },
    /// 0 → all: every rank's host name, by rank.
    Hosts { hosts: Vec<String> },
    /// Rank → 0: ready for point `seq` (or the setup failed, and why).
    Ready { seq: u64, error: Option<String> },
    /// 0 → all: start point `seq` now, or abort it (why; `lost`: a rank is gone, the fleet
    /// cannot go on).
    Verdict {
        seq: u64,
        abort: Option<String>,
        lost: bool,
    },
    /// Anyone: still alive (rank → 0, and 0 → all while it waits).
    Heartbeat,
    /// Rank → 0: my run of point `seq` ended (failed: why).
    Done { seq: u64, error: Option<String> },
    /// 0 → all: stop point `seq` now (why).
    Stop { seq: u64, why: String },
    /// Rank → 0: my measurement of point `seq`.
    Report { seq: u64, report: Box<RankReport> },
    /// 0 → all: point `seq` is over (abort: it failed, and why; `lost`: a rank is gone).
    End {
        seq: u64,
        abort: Option<String>,
        lost: bool,
    },
}

impl Msg {
    /// The point a message belongs to (None for the ones that belong to no point).
    pub fn seq(&self) -> Option<u64> {
        match self {
            Msg::Ready { seq, .. }
            | Msg::Verdict { seq, .. }
            | Msg::Done { seq, .. }
            | Msg::Stop { seq, .. }
            | Msg::Report { seq, .. }
            | Msg::End { seq, .. } => Some(*seq),
            Msg::Hello { .. } | Msg::Hosts { .. } | Msg::Heartbeat => None,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        // Writing into a Vec fails only where serializing does: a histogram the V2 format
        // cannot hold, which new_latency_histogram's bounds exclude.
        if let Err(e) = ciborium::into_writer(self, &mut out) {
            debug_assert!(false, "a fleet message did not encode: {e}");
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Msg, FleetError> {
        let mut rest = bytes;
        let m = ciborium::from_reader(&mut rest)
            .map_err(|e| FleetError::Garbled(format!("a message: {e}")))?;
        if !rest.is_empty() {
            return Err(FleetError::Garbled("trailing bytes after a message".into()));
        }
        Ok(m)
    }
}

/// The bytes of the V2 header's precision and bounds: (significant digits, lowest, highest).
fn v2_bounds(bytes: &[u8]) -> Option<(u32, u64, u64)> {
    let u32_at = |i: usize| Some(u32::from_be_bytes(bytes.get(i..i + 4)?.try_into().ok()?));
    let u64_at = |i: usize| Some(u64::from_be_bytes(bytes.get(i..i + 8)?.try_into().ok()?));
    Some((u32_at(12)?, u64_at(16)?, u64_at(24)?))
}

/// A latency histogram in hdrhistogram's V2 format.
pub fn histogram_to_bytes(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    // Into a Vec this fails only for a histogram too large for usize, which ours never are.
    let _ = V2Serializer::new().serialize(h, &mut out);
    out
}

/// Rebuilds a histogram from [`histogram_to_bytes`]; one whose header has other bounds than
/// [`new_latency_histogram`]'s is refused before anything is allocated for it.
pub fn histogram_from_bytes(bytes: &[u8]) -> Result<Histogram<u64>, FleetError> {
    let ours = new_latency_histogram();
    let want = (u32::from(ours.sigfig()), ours.low(), ours.high());
    match v2_bounds(bytes) {
        Some(b) if b == want => {}
        b => {
            return Err(FleetError::Garbled(format!(
                "a histogram with bounds {b:?}, not diskscope's {want:?}"
            )))
        }
    }
    let mut rest = bytes;
    let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut rest)
        .map_err(|e| FleetError::Garbled(format!("a histogram: {e:?}")))?;
    if !rest.is_empty() {
        return Err(FleetError::Garbled(
            "trailing bytes after a histogram".into(),
        ));
    }
    // The same bounds as every other, so adding it into a fresh one cannot fail; the result is
    // also the same kind of histogram (its settings, not only its counts) as a local one.
    let mut same = new_latency_histogram();
    same.add(&h)
        .map_err(|e| FleetError::Garbled(format!("a histogram: {e:?}")))?;
    Ok(same)
}

/// Bytes as a CBOR byte string (not a list of numbers).
struct Bytes(Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
        }
        d.deserialize_byte_buf(V)
    }
}

/// A latency histogram's serde form: its V2 bytes.
fn histogram_out<S: serde::Serializer>(h: &Histogram<u64>, s: S) -> Result<S::Ok, S::Error> {
    Bytes(histogram_to_bytes(h)).serialize(s)
}

fn histogram_in<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Histogram<u64>, D::Error> {
    let b = Bytes::deserialize(d)?;
    histogram_from_bytes(&b.0).map_err(serde::de::Error::custom)
}

/// A timeline as it travels: its figures and each interval's histogram (a [`Timeline`] keeps
/// those out of its serde form, which is the one its JSON documents show).
#[derive(Serialize, Deserialize)]
struct WireTimeline {
    interval_s: f64,
    device: Option<String>,
    rows: Columns,
    reading: Reading,
    latency: Vec<Bytes>,
}

/// Rows of one serde struct, its field names once and each row's values in their order (a map
/// per row would repeat every name in every interval).
#[derive(Serialize, Deserialize)]
struct Columns {
    names: Vec<String>,
    rows: Vec<Vec<ciborium::Value>>,
}

impl Columns {
    fn of<T: Serialize>(rows: &[T]) -> Result<Columns, String> {
        let mut names: Vec<String> = Vec::new();
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let ciborium::Value::Map(fields) =
                ciborium::Value::serialized(r).map_err(|e| e.to_string())?
            else {
                return Err("a row is not a struct".into());
            };
            if names.is_empty() {
                names = fields
                    .iter()
                    .filter_map(|(k, _)| k.as_text().map(str::to_string))
                    .collect();
            }
            out.push(fields.into_iter().map(|(_, v)| v).collect());
        }
        Ok(Columns { names, rows: out })
    }

    fn rows<T: serde::de::DeserializeOwned>(self) -> Result<Vec<T>, String> {
        let names = self.names;
        self.rows
            .into_iter()
            .map(|values| {
                if values.len() != names.len() {
                    return Err(format!(
                        "a row of {} values for {} columns",
                        values.len(),
                        names.len()
                    ));
                }
                let map = names
                    .iter()
                    .map(|n| ciborium::Value::Text(n.clone()))
                    .zip(values)
                    .collect();
                ciborium::Value::Map(map)
                    .deserialized()
                    .map_err(|e| e.to_string())
            })
            .collect()
    }
}

/// A report's timeline's serde form ([`WireTimeline`]).
fn timeline_out<S: serde::Serializer>(t: &Option<Timeline>, s: S) -> Result<S::Ok, S::Error> {
    let wire = match t {
        None => None,
        Some(t) => Some(WireTimeline {
            interval_s: t.interval_s,
            device: t.device.clone(),
            rows: Columns::of(&t.rows).map_err(serde::ser::Error::custom)?,
            reading: t.reading.clone(),
            latency: t
                .latency
                .iter()
                .map(|h| Bytes(histogram_to_bytes(h)))
                .collect(),
        }),
    };
    wire.serialize(s)
}

fn timeline_in<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Timeline>, D::Error> {
    let Some(w) = Option::<WireTimeline>::deserialize(d)? else {
        return Ok(None);
    };
    let rows: Vec<IntervalRow> = w.rows.rows().map_err(serde::de::Error::custom)?;
    if w.latency.len() != rows.len() {
        return Err(serde::de::Error::custom(format!(
            "a timeline of {} rows with {} histograms",
            rows.len(),
            w.latency.len()
        )));
    }
    let latency = w
        .latency
        .iter()
        .map(|b| histogram_from_bytes(&b.0))
        .collect::<Result<Vec<_>, _>>()
        .map_err(serde::de::Error::custom)?;
    Ok(Some(Timeline {
        interval_s: w.interval_s,
        device: w.device,
        rows,
        latency,
        reading: w.reading,
        kernel: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> RankReport {
        let mut latency = new_latency_histogram();
        for v in [1_000u64, 1_500, 80_000, 80_100, 5_000_000] {
            latency.record(v).unwrap();
        }
        RankReport {
            rank: 2,
            result: RunResult {
                identity: crate::measure::result::Identity {
                    host: "node-7".into(),
                    file: "/data/f, \"quoted\"".into(),
                    ..Default::default()
                },
                figures: crate::measure::result::Figures {
                    bytes: 1 << 40,
                    seconds: 1.25,
                    xor: "0badf00d".into(),
                    error: "line one\nline two".into(),
                    ..Default::default()
                },
                ..Default::default()
            },
            start_unix_ns: 1_700_000_000_000_000_000,
            end_unix_ns: 1_700_000_001_250_000_000,
            xor_full: Some(0xdead_beef),
            stopped_by: "stonewall".into(),
            latency,
            mixed_latency: None,
            timeline: Some(crate::fleet::timeline::tests::timeline(3, 12_345, Some(1))),
        }
    }

    #[test]
    fn a_mixed_reports_histograms_by_direction_travel_whole() {
        let mut r = report();
        let (mut read, mut write) = (new_latency_histogram(), new_latency_histogram());
        read.record_n(90_000, 70).unwrap();
        write.record_n(2_000_000, 30).unwrap();
        r.mixed_latency = Some(MixedLatency { read, write });
        let m = Msg::Report {
            seq: 5,
            report: Box::new(r),
        };
        let back = Msg::decode(&m.encode()).unwrap();
        assert_eq!(back, m);
        let Msg::Report { report: got, .. } = back else {
            panic!("a report")
        };
        let ml = got.mixed_latency.unwrap();
        assert_eq!((ml.read.len(), ml.write.len()), (70, 30));
        // A pure report (and one from a build without mixes) has none.
        assert_eq!(report_of(report()).mixed_latency, None);
    }

    fn report_of(r: RankReport) -> RankReport {
        match Msg::decode(
            &Msg::Report {
                seq: 1,
                report: Box::new(r),
            }
            .encode(),
        )
        .unwrap()
        {
            Msg::Report { report, .. } => *report,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_message_survives_encoding() {
        let msgs = vec![
            Msg::Hello { host: "a".into() },
            Msg::Hosts {
                hosts: vec!["a".into(), "b".into()],
            },
            Msg::Ready {
                seq: 3,
                error: Some("disk full".into()),
            },
            Msg::Verdict {
                seq: 3,
                abort: None,
                lost: false,
            },
            Msg::Heartbeat,
            Msg::Done {
                seq: 9,
                error: None,
            },
            Msg::Stop {
                seq: 9,
                why: "x".into(),
            },
            Msg::Report {
                seq: 4,
                report: Box::new(report()),
            },
            Msg::End {
                seq: 4,
                abort: Some("rank 1".into()),
                lost: true,
            },
        ];
        for m in msgs {
            assert_eq!(Msg::decode(&m.encode()).unwrap(), m);
        }
    }

    #[test]
    fn a_histogram_rebuilt_from_its_buckets_has_the_same_percentiles() {
        let r = report();
        let back = histogram_from_bytes(&histogram_to_bytes(&r.latency)).unwrap();
        assert_eq!(back.len(), r.latency.len());
        for q in [0.0, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(back.value_at_quantile(q), r.latency.value_at_quantile(q));
        }
    }

    #[test]
    fn a_row_whose_residency_is_unknown_still_travels() {
        // Residency is NaN (an empty cell) for a file this user may not write (cachestat EPERM).
        let mut r = report();
        r.result.figures.residency_before_pct = f64::NAN;
        let m = Msg::Report {
            seq: 2,
            report: Box::new(r),
        };
        match Msg::decode(&m.encode()).unwrap() {
            Msg::Report { report, .. } => {
                assert!(report.result.figures.residency_before_pct.is_nan())
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_histogram_of_other_bounds_is_refused_before_it_is_built() {
        let mut wide = Histogram::<u64>::new_with_bounds(1, u64::MAX, 5).unwrap();
        wide.record(7).unwrap();
        let e = histogram_from_bytes(&histogram_to_bytes(&wide)).unwrap_err();
        assert!(e.to_string().contains("not diskscope's"), "{e}");
        assert!(histogram_from_bytes(&[1, 2, 3]).is_err());
    }

    #[test]
    fn each_interval_adds_its_values_and_histogram_not_its_column_names() {
        let size = |secs: u64| {
            let mut r = report();
            r.timeline = Some(crate::fleet::timeline::tests::timeline(
                secs,
                12_345,
                Some(1),
            ));
            Msg::Report {
                seq: 1,
                report: Box::new(r),
            }
            .encode()
            .len()
        };
        let (short, long) = (size(3), size(33));
        let per_interval = (long - short) / 30;
        let names: usize = crate::export::csv::to_csv(&[IntervalRow::blank()])
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .len();
        eprintln!("report message: {short} bytes with 3 intervals, {long} with 33: {per_interval} bytes per interval (the column names alone are {names})");
        assert!(per_interval < names, "{per_interval} bytes per interval");
    }

    #[test]
    fn truncated_or_unknown_messages_are_errors_not_panics() {
        let bytes = Msg::Report {
            seq: 1,
            report: Box::new(report()),
        }
        .encode();
        for cut in 0..bytes.len() {
            assert!(Msg::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert!(Msg::decode(&[200]).is_err());
    }
}
