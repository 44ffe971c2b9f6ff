//! The fleet's messages and their byte encoding. Ranks exchange only small control messages and,
//! once per point, one report each; a length-prefixed little-endian encoding is all that needs,
//! keeps the MPI layer down to "send bytes / receive bytes", and lets the in-process transport of
//! the tests carry the very same bytes.
//!
//! A rank's result travels as one CSV record of [`RunResult`] (its serde columns, so a column added
//! to the struct travels without touching this file) and its latency histogram as the list of
//! its non-empty buckets: every histogram in diskscope has the same bounds and precision
//! ([`new_latency_histogram`]), so recording each bucket's highest equivalent value with its count
//! rebuilds it bucket for bucket, and rank 0 merges exactly as the threads of one run do.

use super::error::FleetError;
use crate::measure::histogram::new_latency_histogram;
use crate::measure::timeline::{IntervalRow, Reading};
use crate::measure::{RunResult, Timeline};
use hdrhistogram::Histogram;

/// One rank's measurement of one point, as rank 0 receives it.
#[derive(Debug, Clone, PartialEq)]
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
    pub latency: Histogram<u64>,
    /// The rank's timeline on its own clock (None: the run had none, e.g. it failed to start).
    pub timeline: Option<Timeline>,
}

/// Everything ranks say to each other.
#[derive(Debug, Clone, PartialEq)]
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
        let mut w = Writer(Vec::with_capacity(64));
        match self {
            Msg::Hello { host } => {
                w.u8(1);
                w.str(host);
            }
            Msg::Hosts { hosts } => {
                w.u8(2);
                w.u64(hosts.len() as u64);
                for h in hosts {
                    w.str(h);
                }
            }
            Msg::Ready { seq, error } => {
                w.u8(3);
                w.u64(*seq);
                w.opt_str(error.as_deref());
            }
            Msg::Verdict { seq, abort, lost } => {
                w.u8(4);
                w.u64(*seq);
                w.opt_str(abort.as_deref());
                w.u8(*lost as u8);
            }
            Msg::Heartbeat => w.u8(5),
            Msg::Done { seq, error } => {
                w.u8(6);
                w.u64(*seq);
                w.opt_str(error.as_deref());
            }
            Msg::Stop { seq, why } => {
                w.u8(7);
                w.u64(*seq);
                w.str(why);
            }
            Msg::Report { seq, report } => {
                w.u8(8);
                w.u64(*seq);
                w.report(report);
            }
            Msg::End { seq, abort, lost } => {
                w.u8(9);
                w.u64(*seq);
                w.opt_str(abort.as_deref());
                w.u8(*lost as u8);
            }
        }
        w.0
    }

    pub fn decode(bytes: &[u8]) -> Result<Msg, FleetError> {
        let mut r = Reader { b: bytes, at: 0 };
        let m = match r.u8()? {
            1 => Msg::Hello { host: r.str()? },
            2 => {
                let n = r.u64()?;
                let mut hosts = Vec::new();
                for _ in 0..n {
                    hosts.push(r.str()?);
                }
                Msg::Hosts { hosts }
            }
            3 => Msg::Ready {
                seq: r.u64()?,
                error: r.opt_str()?,
            },
            4 => Msg::Verdict {
                seq: r.u64()?,
                abort: r.opt_str()?,
                lost: r.u8()? != 0,
            },
            5 => Msg::Heartbeat,
            6 => Msg::Done {
                seq: r.u64()?,
                error: r.opt_str()?,
            },
            7 => Msg::Stop {
                seq: r.u64()?,
                why: r.str()?,
            },
            8 => Msg::Report {
                seq: r.u64()?,
                report: Box::new(r.report()?),
            },
            9 => Msg::End {
                seq: r.u64()?,
                abort: r.opt_str()?,
                lost: r.u8()? != 0,
            },
            k => return Err(FleetError::Garbled(format!("unknown message kind {k}"))),
        };
        if r.at != bytes.len() {
            return Err(FleetError::Garbled("trailing bytes after a message".into()));
        }
        Ok(m)
    }
}

/// The non-empty buckets of a latency histogram as (highest equivalent value, count) pairs.
pub fn histogram_to_bytes(h: &Histogram<u64>) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    let buckets: Vec<(u64, u64)> = h
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect();
    w.u64(buckets.len() as u64);
    for (v, n) in buckets {
        w.u64(v);
        w.u64(n);
    }
    w.0
}

/// Rebuilds a histogram from [`histogram_to_bytes`].
pub fn histogram_from_bytes(bytes: &[u8]) -> Result<Histogram<u64>, FleetError> {
    let mut r = Reader { b: bytes, at: 0 };
    let h = r.histogram()?;
    if r.at != bytes.len() {
        return Err(FleetError::Garbled(
            "trailing bytes after a histogram".into(),
        ));
    }
    Ok(h)
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            None => self.u8(0),
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
        }
    }
    fn report(&mut self, r: &RankReport) {
        self.u64(r.rank as u64);
        self.str(&result_to_csv(&r.result));
        self.u64(r.start_unix_ns);
        self.u64(r.end_unix_ns);
        match r.xor_full {
            None => self.u8(0),
            Some(x) => {
                self.u8(1);
                self.u64(x as u64);
            }
        }
        self.str(&r.stopped_by);
        let h = histogram_to_bytes(&r.latency);
        self.0.extend_from_slice(&h);
        match &r.timeline {
            None => self.u8(0),
            Some(t) => {
                self.u8(1);
                self.timeline(t);
            }
        }
    }
    /// A timeline: its interval, device, rows (CSV of [`IntervalRow`]'s serde columns, so a
    /// column added there travels without touching this file), reading (JSON) and the
    /// histogram of every interval.
    fn timeline(&mut self, t: &Timeline) {
        self.u64(t.interval_s.to_bits());
        self.opt_str(t.device.as_deref());
        let mut w = ::csv::Writer::from_writer(Vec::new());
        for r in &t.rows {
            // A flat struct of numbers always serializes.
            let _ = w.serialize(r);
        }
        self.str(&String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default());
        self.str(&serde_json::to_string(&t.reading).unwrap_or_default());
        self.u64(t.latency.len() as u64);
        for h in &t.latency {
            let h = histogram_to_bytes(h);
            self.0.extend_from_slice(&h);
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], FleetError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.b.len())
            .ok_or_else(|| FleetError::Garbled("message ends early".into()))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, FleetError> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, FleetError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn str(&mut self) -> Result<String, FleetError> {
        let n = self.u64()? as usize;
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| FleetError::Garbled("a string is not UTF-8".into()))
    }
    fn opt_str(&mut self) -> Result<Option<String>, FleetError> {
        Ok(match self.u8()? {
            0 => None,
            _ => Some(self.str()?),
        })
    }
    fn histogram(&mut self) -> Result<Histogram<u64>, FleetError> {
        let n = self.u64()?;
        let mut h = new_latency_histogram();
        for _ in 0..n {
            let v = self.u64()?;
            let c = self.u64()?;
            h.record_n(v, c)
                .map_err(|e| FleetError::Garbled(format!("histogram value {v}: {e}")))?;
        }
        Ok(h)
    }
    fn report(&mut self) -> Result<RankReport, FleetError> {
        let rank = self.u64()? as usize;
        let result = result_from_csv(&self.str()?)?;
        let start_unix_ns = self.u64()?;
        let end_unix_ns = self.u64()?;
        let xor_full = match self.u8()? {
            0 => None,
            _ => Some(self.u64()? as u32),
        };
        let stopped_by = self.str()?;
        let latency = self.histogram()?;
        let timeline = match self.u8()? {
            0 => None,
            _ => Some(self.timeline()?),
        };
        Ok(RankReport {
            rank,
            result,
            start_unix_ns,
            end_unix_ns,
            xor_full,
            stopped_by,
            latency,
            timeline,
        })
    }
    fn timeline(&mut self) -> Result<Timeline, FleetError> {
        let garbled = |what: &str, e: &dyn std::fmt::Display| {
            FleetError::Garbled(format!("a report's timeline {what}: {e}"))
        };
        let interval_s = f64::from_bits(self.u64()?);
        let device = self.opt_str()?;
        let csv_text = self.str()?;
        let rows = ::csv::Reader::from_reader(csv_text.as_bytes())
            .deserialize::<IntervalRow>()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| garbled("rows", &e))?;
        let reading: Reading =
            serde_json::from_str(&self.str()?).map_err(|e| garbled("reading", &e))?;
        let n = self.u64()?;
        if n != rows.len() as u64 {
            return Err(garbled(
                "histograms",
                &format!("{n} for {} rows", rows.len()),
            ));
        }
        let mut latency = Vec::with_capacity(rows.len());
        for _ in 0..n {
            latency.push(self.histogram()?);
        }
        Ok(Timeline {
            interval_s,
            device,
            rows,
            latency,
            reading,
        })
    }
}

fn result_to_csv(r: &RunResult) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    // A flat struct of strings and numbers always serializes.
    let _ = w.serialize(r);
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

fn result_from_csv(text: &str) -> Result<RunResult, FleetError> {
    let mut rd = ::csv::Reader::from_reader(text.as_bytes());
    rd.deserialize()
        .next()
        .ok_or_else(|| FleetError::Garbled("a report without its row".into()))?
        .map_err(|e| FleetError::Garbled(format!("a report's row: {e}")))
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
                host: "node-7".into(),
                file: "/data/f, \"quoted\"".into(),
                bytes: 1 << 40,
                seconds: 1.25,
                xor: "0badf00d".into(),
                error: "line one\nline two".into(),
                ..Default::default()
            },
            start_unix_ns: 1_700_000_000_000_000_000,
            end_unix_ns: 1_700_000_001_250_000_000,
            xor_full: Some(0xdead_beef),
            stopped_by: "stonewall".into(),
            latency,
            timeline: Some(crate::fleet::timeline::tests::timeline(3, 12_345, Some(1))),
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
        r.result.residency_before_pct = f64::NAN;
        let m = Msg::Report {
            seq: 2,
            report: Box::new(r),
        };
        match Msg::decode(&m.encode()).unwrap() {
            Msg::Report { report, .. } => assert!(report.result.residency_before_pct.is_nan()),
            other => panic!("{other:?}"),
        }
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
