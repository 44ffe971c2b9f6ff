//! The verdict of a fleet's `all` row (issue 23): can the fleet's number be trusted?
//!
//! Each rank judged its own run where it ran ([`crate::explain::verdict::judge`], from its own
//! facts: its file's filesystem and device, its own I/O, its CPU time), and its row arrives with
//! `verdict`, `reasons` and `why` filled. The aggregate is suspect when any rank is — a fleet
//! figure that includes one rank served from the page cache is not a disk figure either — with
//! each reason said once, naming the ranks that gave it. On top of that the aggregate is judged
//! on what only it has: the merged timeline (a level shift or spread of the whole fleet, which
//! no single rank may show) and its own length and operation count. That judgement is
//! [`judge`] with no facts, context or profile: those describe one host, and the ranks
//! already applied them where they hold.

use super::wire::RankReport;
use crate::explain::context::Context;
use crate::explain::verdict::{judge, Code, Reason, Verdict};
use crate::measure::RunResult;

/// The reasons of a judged row (its `reasons` codes with their `why` sentences).
pub fn reasons_of(r: &RunResult) -> Vec<Reason> {
    let mut why = r.judgement.why.split(" | ");
    r.judgement
        .reasons
        .split(';')
        .filter(|c| !c.is_empty())
        .filter_map(|c| {
            let sentence = why.next().unwrap_or("").to_string();
            let code = Code::ALL.iter().copied().find(|k| k.as_str() == c)?;
            Some(Reason { code, sentence })
        })
        .collect()
}

/// The `all` row's verdict: the ranks' reasons, each once with the ranks that gave it, then the
/// fleet's own (from the merged timeline in `row.timeline`). A failed aggregate is not judged.
pub fn of_all(row: &RunResult, reports: &[RankReport]) -> Option<Verdict> {
    if !row.figures.error.is_empty() {
        return None;
    }
    let mut reasons: Vec<(Reason, Vec<String>)> = Vec::new();
    for rep in reports {
        let who = format!(
            "rank {} ({})",
            rep.rank,
            crate::text::shown(&rep.result.identity.host)
        );
        for reason in reasons_of(&rep.result) {
            match reasons.iter_mut().find(|(r, _)| r.code == reason.code) {
                Some((_, ranks)) => ranks.push(who.clone()),
                None => reasons.push((reason, vec![who.clone()])),
            }
        }
    }
    let mut out: Vec<Reason> = reasons
        .into_iter()
        .map(|(r, ranks)| {
            let sentence = match ranks.len() {
                1 => format!("{}: {}", ranks[0], r.sentence),
                n => format!(
                    "{n} ranks ({}); the first: {}",
                    ranks.join(", "),
                    r.sentence
                ),
            };
            Reason {
                code: r.code,
                sentence,
            }
        })
        .collect();
    let own = judge(row, None, &Context::default(), None);
    for r in own.reasons {
        if !out.iter().any(|o| o.code == r.code) {
            out.push(Reason {
                code: r.code,
                sentence: format!("the fleet as a whole: {}", r.sentence),
            });
        }
    }
    Some(Verdict::of(out))
}

/// Writes [`of_all`] into the row's `verdict`, `reasons` and `why` (empty when not judged).
pub fn fill_all(row: &mut RunResult, reports: &[RankReport]) {
    match of_all(row, reports) {
        Some(v) => v.fill(row),
        None => {
            row.judgement.verdict.clear();
            row.judgement.reasons.clear();
            row.judgement.why.clear();
        }
    }
}
