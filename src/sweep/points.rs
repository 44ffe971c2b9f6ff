//! The cartesian product of an experiment's axes, as validated [`RunSpec`]s: the points of the
//! `throughput` and `command` kinds, in run order (block size innermost).

use super::files::FilePlan;
use super::layered::Layered;
use super::plan::{CommandPlan, Experiment};
use super::values::one_size;
use crate::config::{CacheMode, Method, Op, Pattern, RunSpec, TOML_NAMES};
use std::time::Duration;

/// Seconds after which a `command` repetition is killed, unless `timeout` says otherwise.
const DEFAULT_TIMEOUT_S: f64 = 60.0;

pub fn throughput_points(l: &Layered, file: &FilePlan, x: &mut Experiment) -> anyhow::Result<()> {
    let sizes = l.list("block_size", 1 << 20, |c| c.sizes(true))?;
    let threads = l.list("threads", 1, |c| c.counts())?;
    let methods = l.list("method", Method::Pread, |c| c.names(Method::parse))?;
    let caches = l.list("cache", CacheMode::Warm, |c| c.names(CacheMode::parse))?;
    let directs = l.list("direct", false, |c| c.bools())?;
    let depths = l.list("queue_depth", 1, |c| c.counts())?;
    let ops = l.list("operation", Op::Read, |c| c.names(Op::parse))?;
    let patterns = l.list("pattern", Pattern::Sequential, |c| c.names(Pattern::parse))?;
    if ops.contains(&Op::Write) && !file.writable {
        return Err(l.src.key_error(l.span("operation"), "operation", &format!(
            "write would overwrite {}; add `write = true` under [file] to allow it, or use `create`",
            file.path.display()
        )));
    }
    let size = file.size_bytes;
    let one_pass_all = l
        .exp
        .one_pass
        .as_ref()
        .or(l.defaults.one_pass.as_ref())
        .is_some_and(|v| *v.get_ref());
    x.upper_bound = one_pass_all;
    let mut skipped_direct: Vec<&str> = Vec::new();
    for &op in &ops {
        for &method in &methods {
            for &cache in &caches {
                for &direct in &directs {
                    if direct && !method.supports_direct() {
                        if !skipped_direct.contains(&method.as_str()) {
                            skipped_direct.push(method.as_str());
                        }
                        continue;
                    }
                    for &t in &threads {
                        for &qd in &depths {
                            for &pattern in &patterns {
                                for &bs in &sizes {
                                    let mut s = RunSpec::new(&file.path);
                                    s.op = op;
                                    s.method = method;
                                    s.cache = if op == Op::Write {
                                        CacheMode::AsIs
                                    } else {
                                        cache
                                    };
                                    s.direct = direct;
                                    s.threads = usize::try_from(t).unwrap_or(usize::MAX);
                                    s.queue_depth = if method == Method::IoUring {
                                        u32::try_from(qd).unwrap_or(u32::MAX)
                                    } else {
                                        1
                                    };
                                    s.pattern = pattern;
                                    s.block_size_bytes = bs;
                                    s.duration = Some(Duration::from_secs_f64(x.seconds));
                                    let one_pass = one_pass_all
                                        || op == Op::Write
                                        || (pattern == Pattern::Sequential
                                            && matches!(
                                                cache,
                                                CacheMode::Cold | CacheMode::ColdAll
                                            ));
                                    s.block_count = one_pass.then(|| size.div_ceil(bs).max(1));
                                    s.force = op == Op::Write;
                                    s.overwrite_in_place = op == Op::Write;
                                    s.validate(&TOML_NAMES)
                                        .map_err(|e| l.src.spec_error(e, |k| l.span(k)))?;
                                    if !x.points.contains(&s) {
                                        x.points.push(s);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if !skipped_direct.is_empty() {
        x.notes.push(format!(
            "skipped direct = true for method {} (O_DIRECT applies to read, pread and io_uring only)",
            skipped_direct.join(", ")
        ));
    }
    if depths.len() > 1 && methods.iter().any(|m| *m != Method::IoUring) {
        x.notes
            .push("queue_depth applies to io_uring only; other methods run at depth 1".into());
    }
    if ops.contains(&Op::Write) && caches.len() > 1 {
        x.notes
            .push("cache applies to reads only; writes run once per other setting".into());
    }
    if x.points.is_empty() {
        return Err(l.src.key_error(
            l.span("direct"),
            "direct",
            "no point is left to run: O_DIRECT needs method read, pread or io_uring",
        ));
    }
    Ok(())
}

pub fn command_points(l: &Layered, file: &FilePlan, x: &mut Experiment) -> anyhow::Result<()> {
    let src = l.src;
    let Some(cmd) = &l.exp.command else {
        return Err(src.key_error(l.span("name"), "command", "missing; e.g. command = \"dd if={file} of=/dev/null bs={block_size} count={block_count}\""));
    };
    if cmd.get_ref().trim().is_empty() {
        return Err(src.key_error(
            cmd.span(),
            "command",
            "is empty; give the shell command to time",
        ));
    }
    let bytes = match &l.exp.bytes {
        Some(b) => Some(one_size(src, b, "bytes")?),
        None => None,
    };
    x.command = Some(CommandPlan {
        template: cmd.get_ref().clone(),
        bytes,
        timeout: Duration::from_secs_f64(l.seconds("timeout", DEFAULT_TIMEOUT_S)?),
    });
    let sizes = l.list("block_size", 1 << 20, |c| c.sizes(true))?;
    let caches = l.list("cache", CacheMode::Warm, |c| c.names(CacheMode::parse))?;
    let counts: Vec<Option<u64>> = match l.axis("block_count") {
        Some(c) => c.counts()?.into_iter().map(Some).collect(),
        None => vec![None],
    };
    for &cache in &caches {
        for &count in &counts {
            for &bs in &sizes {
                let mut s = RunSpec::new(&file.path);
                s.method = Method::Read;
                s.cache = cache;
                s.block_size_bytes = bs;
                s.block_count = Some(count.unwrap_or(file.size_bytes.div_ceil(bs).max(1)));
                s.validate(&TOML_NAMES)
                    .map_err(|e| src.spec_error(e, |k| l.span(k)))?;
                x.points.push(s);
            }
        }
    }
    Ok(())
}
