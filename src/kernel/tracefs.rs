//! The block tracepoints as tracefs describes them: each event's id (what `perf_event_open`
//! attaches to) and its record's layout (`format`: each field's offset and size), read at run
//! time. The programs read a record's fields at the offsets found here, so they need neither
//! BTF nor CO-RE relocations: the kernel states its own layout, in the same words for every
//! version since the block tracepoints had these fields.

use std::path::{Path, PathBuf};

/// Where tracefs is mounted, tried in order (the second is the debugfs path of older systems).
pub const TRACEFS_ROOTS: &[&str] = &["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The first tracefs root that shows the block events.
pub fn root() -> Option<PathBuf> {
    TRACEFS_ROOTS
        .iter()
        .map(PathBuf::from)
        .find(|r| r.join("events/block").is_dir())
}

/// One field of a tracepoint's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
}

/// A tracepoint's id and record layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `block_rq_issue`.
    pub name: String,
    pub id: u64,
    /// (field name, where it is).
    fields: Vec<(String, Field)>,
}

impl Event {
    /// Reads `events/block/<name>/{id,format}` under `root`.
    pub fn read(root: &Path, name: &str) -> std::io::Result<Event> {
        let dir = root.join("events/block").join(name);
        let id_text = std::fs::read_to_string(dir.join("id"))?;
        let id = id_text.trim().parse().map_err(|_| {
            std::io::Error::other(format!("{}: not a number", dir.join("id").display()))
        })?;
        let format = std::fs::read_to_string(dir.join("format"))?;
        Ok(Event {
            name: name.to_string(),
            id,
            fields: parse_format(&format),
        })
    }

    /// The field `name`, if the record has one.
    pub fn field(&self, name: &str) -> Option<Field> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, f)| *f)
    }
}

/// The fields of a `format` file: lines such as
/// `field:sector_t sector; offset:16; size:8; signed:0;` (tab-separated; an array's name ends
/// in `[N]`).
pub fn parse_format(text: &str) -> Vec<(String, Field)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut decl = None;
        let (mut offset, mut size) = (None, None);
        for part in line.trim().split(';') {
            let part = part.trim();
            if let Some(d) = part.strip_prefix("field:") {
                decl = Some(d.trim());
            } else if let Some(o) = part.strip_prefix("offset:") {
                offset = o.trim().parse().ok();
            } else if let Some(s) = part.strip_prefix("size:") {
                size = s.trim().parse().ok();
            }
        }
        let (Some(decl), Some(offset), Some(size)) = (decl, offset, size) else {
            continue;
        };
        let Some(last) = decl.split_whitespace().last() else {
            continue;
        };
        let name = last.split('[').next().unwrap_or(last).to_string();
        out.push((name, Field { offset, size }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `events/block/block_rq_issue/format` of Linux 6.18.
    const ISSUE: &str = "name: block_rq_issue
ID: 2104
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;

print fmt: \"%d,%d %s %u (%s) %llu + %u\", ((unsigned int) ((REC->dev) >> 20))
";

    #[test]
    fn a_format_file_gives_each_fields_offset_and_size() {
        let f = parse_format(ISSUE);
        let get = |n: &str| f.iter().find(|(name, _)| name == n).map(|(_, x)| *x);
        assert_eq!(get("dev"), Some(Field { offset: 8, size: 4 }));
        assert_eq!(
            get("sector"),
            Some(Field {
                offset: 16,
                size: 8
            })
        );
        assert_eq!(
            get("bytes"),
            Some(Field {
                offset: 28,
                size: 4
            })
        );
        assert_eq!(
            get("rwbs"),
            Some(Field {
                offset: 34,
                size: 10
            })
        );
        assert_eq!(get("cmd").map(|c| c.offset), Some(60));
        assert_eq!(get("print"), None);
    }
}
