//! An experiment's keys with `[defaults]` behind them: which key is set where (for the line of an
//! error), axis lookup by key name, and the scalar settings (`reps`, `seconds`, `timeout`) with
//! their range checks.

use super::schema::{Axis, Section, Source};
use super::values::Ctx;
use std::ops::Range;

/// Repetitions per point when neither the experiment nor `[defaults]` sets `reps`.
pub const DEFAULT_REPS: i64 = 5;

/// The span of `key` in a section, if set there.
pub fn key_span(s: &Section, key: &str) -> Option<Range<usize>> {
    let axis = |a: &Axis| a.as_ref().map(|v| v.span());
    match key {
        "name" => s.name.as_ref().map(|v| v.span()),
        "kind" => s.kind.as_ref().map(|v| v.span()),
        "reps" => s.reps.as_ref().map(|v| v.span()),
        "seconds" => s.seconds.as_ref().map(|v| v.span()),
        "command" => s.command.as_ref().map(|v| v.span()),
        "bytes" => s.bytes.as_ref().map(|v| v.span()),
        "timeout" => s.timeout.as_ref().map(|v| v.span()),
        "params" => s.params.as_ref().map(|v| v.span()),
        "one_pass" => s.one_pass.as_ref().map(|v| v.span()),
        "kernel" => s.kernel.as_ref().map(|v| v.span()),
        _ => axis(axis_of(s, key)?),
    }
}

pub fn axis_of<'a>(s: &'a Section, key: &str) -> Option<&'a Axis> {
    Some(match key {
        "block_size" => &s.block_size,
        "block_count" => &s.block_count,
        "threads" => &s.threads,
        "method" => &s.method,
        "cache" => &s.cache,
        "direct" => &s.direct,
        "queue_depth" => &s.queue_depth,
        "buffers" => &s.buffers,
        "operation" => &s.operation,
        "mix" => &s.mix,
        "pattern" => &s.pattern,
        "submit" => &s.submit,
        "rate" => &s.rate,
        "arrival" => &s.arrival,
        "checksum" => &s.checksum,
        _ => return None,
    })
}

/// Every key a `[defaults]` or `[[experiment]]` table may hold, read from [`Section`]'s own
/// serde form (no second list to keep in step).
pub fn all_keys() -> &'static [&'static str] {
    crate::config::serde_fields::<Section>()
}

/// An experiment's section with the defaults behind it.
pub struct Layered<'a> {
    pub src: &'a Source,
    pub exp: &'a Section,
    pub exp_span: Range<usize>,
    pub defaults: &'a Section,
    /// `--force`: plan past the point cap.
    pub force: bool,
}

impl<'a> Layered<'a> {
    pub fn span(&self, key: &str) -> Range<usize> {
        key_span(self.exp, key)
            .or_else(|| key_span(self.defaults, key))
            .unwrap_or(self.exp_span.clone())
    }

    pub fn axis(&self, key: &'static str) -> Option<Ctx<'a>> {
        let a = axis_of(self.exp, key)?
            .as_ref()
            .or(axis_of(self.defaults, key)?.as_ref())?;
        Some(Ctx {
            src: self.src,
            key,
            axis: a,
        })
    }

    pub fn list<T>(
        &self,
        key: &'static str,
        default: T,
        conv: impl Fn(&Ctx<'a>) -> anyhow::Result<Vec<T>>,
    ) -> anyhow::Result<Vec<T>> {
        match self.axis(key) {
            Some(c) => conv(&c),
            None => Ok(vec![default]),
        }
    }

    pub fn reps(&self) -> anyhow::Result<u32> {
        let r = self.exp.reps.as_ref().or(self.defaults.reps.as_ref());
        let n = r.map(|r| *r.get_ref()).unwrap_or(DEFAULT_REPS);
        if !(1..=1000).contains(&n) {
            return Err(self.src.key_error(
                self.span("reps"),
                "reps",
                &format!("must be between 1 and 1000, got {n}"),
            ));
        }
        Ok(n as u32)
    }

    pub fn seconds(&self, key: &'static str, default: f64) -> anyhow::Result<f64> {
        let v = match key {
            "seconds" => self.exp.seconds.as_ref().or(self.defaults.seconds.as_ref()),
            _ => self.exp.timeout.as_ref().or(self.defaults.timeout.as_ref()),
        };
        let s = v.map(|v| *v.get_ref()).unwrap_or(default);
        crate::config::check_seconds(s, key)
            .map_err(|e| self.src.key_error(self.span(key), key, &e.message))?;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_come_from_the_section_struct_and_each_has_a_span_lookup() {
        let keys = all_keys();
        assert_eq!(keys.len(), 25, "{keys:?}");
        for k in ["name", "kind", "block_size", "submit", "params", "one_pass"] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
        // Every key can be located (key_span knows it), so an error can name its line.
        let text = "name = \"a\"\nkind = \"throughput\"\nreps = 1\nseconds = 1.0\nblock_size = 1\n\
                    block_count = 1\nthreads = 1\nmethod = \"read\"\ncache = \"warm\"\n\
                    direct = false\nqueue_depth = 1\nbuffers = \"plain\"\nchecksum = \"none\"\noperation = \"read\"\nmix = 70\npattern = \"random\"\n\
                    submit = \"each\"\nrate = [0, 500]\narrival = \"poisson\"\none_pass = true\nkernel = \"process\"\ncommand = \"x\"\nbytes = 1\ntimeout = 1.0\n\
                    params = {}\n";
        let s: Section = toml::from_str(text).unwrap();
        for k in keys {
            assert!(key_span(&s, k).is_some(), "{k} has no span lookup");
        }
    }
}
