//! Traces a user gives: a file of ids, one per line, or a web server access log in Common Log
//! Format (or the combined format, which extends it).
//!
//! A request path maps to the number in its file name, the last run of digits in the path's last
//! segment (`GET /2/3/4/1234.txt` → 1234), because that is how the study's server named its files.
//! Every line must be understood: a line that is neither an id nor a log line with a numbered path
//! is an error that names its line number, never silently skipped, so a replay is the trace that
//! was asked for. Blank lines and lines starting with `#` are allowed as comments.

use std::fmt;

/// A trace line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based line number; 0 when the error is about the whole trace (it holds no ids).
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

/// Parses a trace into ids `< files`, in order, repeats kept.
pub fn parse_trace(text: &str, files: u32) -> Result<Vec<u32>, TraceError> {
    let mut ids = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |message: String| TraceError {
            line: i + 1,
            message,
        };
        let id = if line.bytes().all(|b| b.is_ascii_digit()) {
            line.parse::<u64>()
                .map_err(|_| err(format!("id '{}' is too large", shorten(line))))?
        } else if line.contains('"') {
            clf_id(line).map_err(err)?
        } else {
            return Err(err(format!(
                "'{}' is neither an id nor a Common Log Format line",
                shorten(line)
            )));
        };
        if id >= files as u64 {
            return Err(err(format!(
                "id {id} is outside the layout's ids 0..{}; use --files {} or more",
                files.saturating_sub(1),
                id + 1
            )));
        }
        ids.push(id as u32);
    }
    if ids.is_empty() {
        return Err(TraceError {
            line: 0,
            message: "the trace holds no ids (only blank or # lines); give one id or log line \
                      per line"
                .into(),
        });
    }
    Ok(ids)
}

/// The id of a Common Log Format line:
/// `host ident user [10/Oct/2000:13:55:36 -0700] "GET /2/3/4/1234.txt HTTP/1.0" 200 2326`.
fn clf_id(line: &str) -> Result<u64, String> {
    let bad = |why: &str| format!("not a Common Log Format line ({why}): '{}'", shorten(line));
    let open = line.find('[').ok_or_else(|| bad("no [date]"))?;
    let close = line[open..]
        .find(']')
        .map(|c| open + c)
        .ok_or_else(|| bad("no closing ] after the date"))?;
    if line[..open].split_whitespace().count() != 3 {
        return Err(bad("expected host, ident and user before the date"));
    }
    let rest = &line[close + 1..];
    let q1 = rest.find('"').ok_or_else(|| bad("no quoted request"))?;
    let q2 = rest[q1 + 1..]
        .find('"')
        .map(|q| q1 + 1 + q)
        .ok_or_else(|| bad("the request's quote is not closed"))?;
    let request = &rest[q1 + 1..q2];
    let mut words = request.split_whitespace();
    let (Some(_method), Some(target)) = (words.next(), words.next()) else {
        return Err(bad("the request has no method and path"));
    };
    let mut after = rest[q2 + 1..].split_whitespace();
    let status_ok = after
        .next()
        .is_some_and(|s| s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit()));
    let bytes_ok = after
        .next()
        .is_some_and(|s| s == "-" || s.bytes().all(|b| b.is_ascii_digit()));
    if !status_ok || !bytes_ok {
        return Err(bad("no status and size after the request"));
    }
    path_id(target).ok_or_else(|| {
        format!(
            "request path '{}' has no file number; the trace maps /…/1234.txt to id 1234 \
             (filter the log to numbered files first)",
            shorten(target)
        )
    })
}

/// The last run of digits in the last segment of a request path (query string ignored).
pub fn path_id(target: &str) -> Option<u64> {
    let path = target.split(['?', '#']).next().unwrap_or(target);
    let last = path.rsplit('/').next().unwrap_or(path);
    let end = last.rfind(|c: char| c.is_ascii_digit())? + 1;
    // Step past the whole non-digit character: it may be several bytes long (`7é7.txt`).
    let start = last[..end]
        .char_indices()
        .rfind(|(_, c)| !c.is_ascii_digit())
        .map_or(0, |(s, c)| s + c.len_utf8());
    last[start..end].parse().ok()
}

/// A trace line as quoted in an error: at most 60 characters, its control characters escaped
/// (a web log is written by whoever sends the requests; an escape sequence in it must not reach
/// the terminal).
fn shorten(line: &str) -> String {
    const MAX_CHARS: usize = 60;
    if line.chars().count() <= MAX_CHARS {
        crate::text::shown(line).into_owned()
    } else {
        let head: String = line.chars().take(MAX_CHARS).collect();
        format!("{}…", crate::text::shown(&head))
    }
}

/// Ids in the order of their first access, then every other id `< files` in id order: the order
/// `--pack-order trace` writes the packed file in.
pub fn first_access_order(trace: &[u32], files: u32) -> Vec<u32> {
    let mut seen = vec![false; files as usize];
    let mut order = Vec::with_capacity(files as usize);
    for id in trace.iter().copied().chain(0..files) {
        if !seen[id as usize] {
            seen[id as usize] = true;
            order.push(id);
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multibyte_character_before_the_number_is_not_a_panic() {
        assert_eq!(path_id("/0/7é7.txt"), Some(7));
        assert_eq!(path_id("/0/7\u{e73b4}12.txt"), Some(12));
        assert!(parse_trace("h - - [d] \"GET /7\u{e7d2}7.txt HTTP/1.0\" 200 1\n", 100).is_ok());
    }

    #[test]
    fn path_ids_come_from_the_file_name() {
        assert_eq!(path_id("/2/3/4/1234.txt"), Some(1234));
        assert_eq!(path_id("/img/photo_0042.jpg?size=300"), Some(42));
        assert_eq!(path_id("/v2/index.html"), None);
        assert_eq!(path_id("/17"), Some(17));
    }

    #[test]
    fn first_access_order_is_a_permutation_led_by_the_trace() {
        let order = first_access_order(&[5, 2, 5, 9, 2], 10);
        assert_eq!(&order[..3], &[5, 2, 9]);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
    }
}
