//! The cartesian product of an experiment's axes, as validated [`RunSpec`]s: the points of the
//! `throughput` and `command` kinds, in run order (block size innermost).

use super::experiment::{CommandPlan, Experiment};
use super::files::FilePlan;
use super::layered::Layered;
use super::values::{one_size, Rate};
use crate::config::spec::{RunSpec, TOML_NAMES};
use crate::config::{
    Arrival, Buffers, CacheMode, Checksum, Method, Op, Pattern, Setup, SubmitPolicy,
};
use std::time::Duration;

/// Seconds after which a `command` repetition is killed, unless `timeout` says otherwise.
const DEFAULT_TIMEOUT_S: f64 = 60.0;

/// Checks every value `[defaults]` sets by the rules the points use (`l` holds an empty
/// experiment in front of the defaults), so a bad default is refused with its line even where
/// every experiment sets its own value.
pub fn check_defaults(l: &Layered) -> anyhow::Result<()> {
    l.list("block_size", 0, |c| c.sizes(true))?;
    l.list("block_count", 0, |c| c.counts())?;
    l.list("threads", 0, |c| c.counts())?;
    l.list("queue_depth", 0, |c| c.counts())?;
    l.list("buffers", Buffers::DEFAULT, |c| c.names(Buffers::parse))?;
    l.list("checksum", Checksum::DEFAULT, |c| c.names(Checksum::parse))?;
    l.list("method", Method::Pread, |c| c.names(Method::parse))?;
    l.list("cache", CacheMode::Warm, |c| c.names(CacheMode::parse))?;
    l.list("direct", false, |c| c.bools())?;
    l.list("operation", Op::Read, |c| c.names(Op::parse))?;
    l.list("pattern", Pattern::Sequential, |c| c.names(Pattern::parse))?;
    l.list("submit", SubmitPolicy::DEFAULT, |c| {
        c.names(SubmitPolicy::parse)
    })?;
    l.list("rate", Rate::Closed, |c| c.rates())?;
    l.list("arrival", Arrival::Constant, |c| c.names(Arrival::parse))?;
    kernel_of(l)?;
    if let Some(b) = &l.defaults.bytes {
        one_size(l.src, b, "bytes")?;
    }
    l.reps()?;
    l.seconds("seconds", 1.0)?;
    l.seconds("timeout", DEFAULT_TIMEOUT_S)?;
    Ok(())
}

/// The `mix` key: the percents of reads of a mixed workload's points, or `[None]` (pure
/// points). A mix writes, so like `operation = "write"` it needs a writable file, and it takes
/// the place of `operation` (naming both is refused).
fn mixes_of(l: &Layered, file: &FilePlan) -> anyhow::Result<Vec<Option<u32>>> {
    let Some(c) = l.axis("mix") else {
        return Ok(vec![None]);
    };
    let pcts = c.counts()?;
    if l.axis("operation").is_some() {
        return Err(l.src.key_error(
            l.span("mix"),
            "mix",
            "a mix is its own operation (reads and writes); remove `operation` or `mix`",
        ));
    }
    if !file.writable {
        return Err(l.src.key_error(l.span("mix"), "mix", &format!(
            "a mix writes and would overwrite {}; add `write = true` under [file] to allow it, or use `create`",
            crate::text::shown_path(&file.path)
        )));
    }
    Ok(pcts
        .into_iter()
        .map(|p| Some(u32::try_from(p).unwrap_or(u32::MAX)))
        .collect())
}

/// The `rate` and `arrival` keys: the open-loop settings of the points, `(rate, arrival)`
/// pairs, `[(Closed, Constant)]` without them. A closed-loop point (`rate = 0`) has no arrivals,
/// so it is planned once whatever `arrival` lists; `arrival` without an open-loop rate is
/// refused like `run --arrival` without `--rate`, and so is a rate of a mix (`run` refuses it).
fn pacing_of(l: &Layered, mixed: bool) -> anyhow::Result<Vec<(Rate, Arrival)>> {
    let rates = l.list("rate", Rate::Closed, |c| c.rates())?;
    let arrivals = l.list("arrival", Arrival::Constant, |c| c.names(Arrival::parse))?;
    let open = rates.iter().any(|r| *r != Rate::Closed);
    if l.axis("arrival").is_some() && !open {
        return Err(l.src.key_error(
            l.span("arrival"),
            "arrival",
            "applies to open-loop points; add rate = N (operations per second) or remove it",
        ));
    }
    if mixed && open {
        return Err(l.src.key_error(
            l.span("rate"),
            "rate",
            "an open-loop run of a mix is not implemented; remove `rate` or `mix`",
        ));
    }
    let mut out = Vec::new();
    for r in rates {
        if r == Rate::Closed {
            out.push((r, Arrival::Constant));
        } else {
            out.extend(arrivals.iter().map(|a| (r.clone(), *a)));
        }
    }
    Ok(out)
}

/// The `kernel` key: the kernel view's filter for every point, or `None`.
fn kernel_of(l: &Layered) -> anyhow::Result<Option<crate::kernel::FilterBy>> {
    let Some(k) = l.exp.kernel.as_ref().or(l.defaults.kernel.as_ref()) else {
        return Ok(None);
    };
    crate::config::parse_kernel_filter(k.get_ref(), "kernel")
        .map(Some)
        .map_err(|e| l.src.key_error(l.span("kernel"), "kernel", &e.message))
}

/// A point as the axes make it, before the settings that depend on others are settled (the
/// cache of a write, the queue depth of a method that has none, a rate read at the block size).
#[derive(Clone)]
struct Draft<'a> {
    setup: Setup,
    cache: CacheMode,
    queue_depth: u64,
    rate: Option<&'a Rate>,
}

impl Draft<'_> {
    fn new(setup: Setup) -> Self {
        Draft {
            setup,
            cache: setup.cache,
            queue_depth: u64::from(setup.queue_depth),
            rate: None,
        }
    }
}

/// What one value of an axis sets in a point.
type Setter<'a> = Box<dyn Fn(&mut Draft<'a>) + 'a>;

/// One axis of a throughput experiment: its key, and each value its list holds as what it sets
/// in a point, in the list's order.
struct Axis<'a> {
    key: &'static str,
    values: Vec<Setter<'a>>,
}

/// The axis `key` of `values`, each applied by `set`.
fn axis<'a, T: Clone + 'a>(
    key: &'static str,
    values: Vec<T>,
    set: impl Fn(&mut Draft<'a>, T) + Copy + 'a,
) -> Axis<'a> {
    Axis {
        key,
        values: values
            .into_iter()
            .map(|v| {
                Box::new(move |d: &mut Draft<'a>| set(d, v.clone()))
                    as Box<dyn Fn(&mut Draft<'a>) + 'a>
            })
            .collect(),
    }
}

/// Every combination of one value per axis, the first axis outermost (an odometer over the
/// lists), each applied to a copy of `base`; made one at a time, so a plan holds its points and
/// never the whole product beside them.
fn product_of<'s, 'a>(axes: &'s [Axis<'a>], base: Draft<'a>) -> impl Iterator<Item = Draft<'a>> + 's
where
    'a: 's,
{
    let mut at = (!axes.iter().any(|a| a.values.is_empty())).then(|| vec![0usize; axes.len()]);
    std::iter::from_fn(move || {
        let now = at.as_mut()?;
        let mut d = base.clone();
        for (a, &i) in axes.iter().zip(now.iter()) {
            (a.values[i])(&mut d);
        }
        // The innermost axis turns first; a full turn carries into the one outside it, and a
        // full turn of the outermost ends the product.
        let mut k = axes.len();
        loop {
            if k == 0 {
                at = None;
                break;
            }
            k -= 1;
            now[k] += 1;
            if now[k] < axes[k].values.len() {
                break;
            }
            now[k] = 0;
        }
        Some(d)
    })
}

/// The order in which the cap's error looks for the longest list (the last of equal ones is
/// named), as before the axes were a list; `mix` beside `operation`, whose lists multiply.
const LONGEST_ORDER: [&str; 12] = [
    "operation",
    "mix",
    "method",
    "cache",
    "direct",
    "threads",
    "queue_depth",
    "buffers",
    "checksum",
    "pattern",
    "rate",
    "block_size",
];

pub fn throughput_points(l: &Layered, file: &FilePlan, x: &mut Experiment) -> anyhow::Result<()> {
    let sizes = l.list("block_size", 1 << 20, |c| c.sizes(true))?;
    let threads = l.list("threads", 1, |c| c.counts())?;
    let methods = l.list("method", Method::Pread, |c| c.names(Method::parse))?;
    let caches = l.list("cache", CacheMode::Warm, |c| c.names(CacheMode::parse))?;
    let directs = l.list("direct", false, |c| c.bools())?;
    let depths = l.list("queue_depth", 1, |c| c.counts())?;
    let buffers = l.list("buffers", Buffers::DEFAULT, |c| c.names(Buffers::parse))?;
    let checksums = l.list("checksum", Checksum::DEFAULT, |c| c.names(Checksum::parse))?;
    let mut ops = l.list("operation", Op::Read, |c| c.names(Op::parse))?;
    let mixes = mixes_of(l, file)?;
    if mixes[0].is_some() {
        ops = vec![Op::Write];
    }
    let patterns = l.list("pattern", Pattern::Sequential, |c| c.names(Pattern::parse))?;
    let pacing = pacing_of(l, mixes[0].is_some())?;
    let submit = match l.list("submit", SubmitPolicy::DEFAULT, |c| c.names(SubmitPolicy::parse))?[..] {
        [one] => one,
        _ => {
            return Err(l.src.key_error(
                l.span("submit"),
                "submit",
                "one policy per experiment (the CSV has no submit column); make one experiment per policy",
            ))
        }
    };
    if ops.contains(&Op::Write) && !file.writable {
        return Err(l.src.key_error(l.span("operation"), "operation", &format!(
            "write would overwrite {}; add `write = true` under [file] to allow it, or use `create`",
            crate::text::shown_path(&file.path)
        )));
    }
    let size = file.size_bytes;
    let kernel = kernel_of(l)?;
    let one_pass_all = l
        .exp
        .one_pass
        .as_ref()
        .or(l.defaults.one_pass.as_ref())
        .is_some_and(|v| *v.get_ref());
    x.upper_bound = one_pass_all;
    // The axes, outermost first: the points are their product in this order (block size, then
    // the mix, innermost). Adding a setting to the sweep is one line here (and its key).
    let axes: Vec<Axis> = vec![
        axis("operation", ops.clone(), |d, v| d.setup.op = v),
        axis("method", methods.clone(), |d, v| d.setup.method = v),
        axis("cache", caches.clone(), |d, v| d.cache = v),
        axis("direct", directs, |d, v| d.setup.direct = v),
        axis("threads", threads, |d, v| {
            d.setup.threads = usize::try_from(v).unwrap_or(usize::MAX)
        }),
        axis("queue_depth", depths.clone(), |d, v| d.queue_depth = v),
        axis("pattern", patterns, |d, v| d.setup.pattern = v),
        axis("rate", pacing.iter().collect(), |d, (rate, arrival)| {
            d.rate = Some(rate);
            d.setup.arrival = *arrival;
        }),
        axis("buffers", buffers, |d, v| d.setup.buffers = v),
        axis("checksum", checksums, |d, v| d.setup.checksum = v),
        axis("block_size", sizes, |d, v| d.setup.block_size_bytes = v),
        axis("mix", mixes, |d, v| d.setup.mix_read_pct = v),
    ];
    // The product is checked before a single point is built: a typo like a 1000-entry list
    // times a few others must be refused at once, not after minutes of planning.
    let product = axes
        .iter()
        .fold(1u64, |acc, a| acc.saturating_mul(a.values.len() as u64));
    let cap = if l.force {
        super::experiment::MAX_POINTS_FORCED
    } else {
        super::experiment::MAX_POINTS
    };
    if product > cap {
        let len = |key: &str| {
            axes.iter()
                .find(|a| a.key == key)
                .map_or(0, |a| a.values.len())
        };
        // An axis missing from the order (a setting added since) is looked at after it.
        let longest = LONGEST_ORDER
            .iter()
            .copied()
            .chain(
                axes.iter()
                    .map(|a| a.key)
                    .filter(|k| !LONGEST_ORDER.contains(k)),
            )
            .max_by_key(|k| len(k))
            .unwrap_or("block_size");
        return Err(l.src.key_error(
            l.span(longest),
            longest,
            &format!(
                "the lists make {product} points, over the cap of {cap}; shorten them{}",
                if l.force { "" } else { " or pass --force" }
            ),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    let mut skipped_direct: Vec<&str> = Vec::new();
    for d in product_of(&axes, Draft::new(RunSpec::new(&file.path).setup)) {
        let (op, method, cache, bs) = (
            d.setup.op,
            d.setup.method,
            d.cache,
            d.setup.block_size_bytes,
        );
        let caps = crate::engine::caps(method);
        if d.setup.direct && !caps.direct() {
            if !skipped_direct.contains(&method.as_str()) {
                skipped_direct.push(method.as_str());
            }
            continue;
        }
        let mut s = RunSpec::new(&file.path);
        s.setup = d.setup;
        s.setup.cache = if op == Op::Write {
            CacheMode::AsIs
        } else {
            cache
        };
        s.setup.queue_depth = caps.queue_depth(u32::try_from(d.queue_depth).unwrap_or(u32::MAX));
        if caps.queued {
            s.setup.submit = submit;
        }
        s.setup.rate_iops = d
            .rate
            .map_or(Ok(None), |r| r.iops(bs, "rate"))
            .map_err(|e| l.src.key_error(l.span("rate"), "rate", &e))?
            .map(crate::config::Iops);
        s.kernel = kernel;
        s.target.duration = Some(Duration::from_secs_f64(x.seconds));
        let one_pass = one_pass_all
            || op == Op::Write
            || (s.setup.pattern == Pattern::Sequential
                && matches!(cache, CacheMode::Cold | CacheMode::ColdAll));
        s.target.block_count = one_pass.then(|| size.div_ceil(bs).max(1));
        s.safety.force = op == Op::Write;
        s.safety.overwrite_in_place = op == Op::Write;
        s.validate(&TOML_NAMES)
            .map_err(|e| l.src.spec_error(e, |k| l.span(k)))?;
        // A set of the points' descriptions: linear, not quadratic.
        if seen.insert(format!("{s:?}")) {
            x.points.push(s);
        }
    }
    if !skipped_direct.is_empty() {
        x.notes.push(format!(
            "skipped direct = true for method {} (O_DIRECT applies to {} only)",
            skipped_direct.join(", "),
            Method::direct_names("and")
        ));
    }
    if depths.len() > 1 && methods.iter().any(|m| !crate::engine::caps(*m).queued) {
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
            &format!(
                "no point is left to run: O_DIRECT needs method {}",
                Method::direct_names("or")
            ),
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
    let product = (caches.len() as u64)
        .saturating_mul(counts.len() as u64)
        .saturating_mul(sizes.len() as u64);
    let cap = if l.force {
        super::experiment::MAX_POINTS_FORCED
    } else {
        super::experiment::MAX_POINTS
    };
    if product > cap {
        return Err(src.key_error(
            l.span("block_count"),
            "block_count",
            &format!("the lists make {product} points, over the cap of {cap}; shorten them"),
        ));
    }
    for &cache in &caches {
        for &count in &counts {
            for &bs in &sizes {
                let mut s = RunSpec::new(&file.path);
                s.setup.method = Method::Read;
                s.setup.cache = cache;
                s.setup.block_size_bytes = bs;
                s.target.block_count = Some(count.unwrap_or(file.size_bytes.div_ceil(bs).max(1)));
                s.validate(&TOML_NAMES)
                    .map_err(|e| src.spec_error(e, |k| l.span(k)))?;
                x.points.push(s);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::{Arrival, CacheMode, Method, Op, SubmitPolicy};
    use crate::sweep::plan::{build, Plan};
    use crate::sweep::schema::Source;
    use std::path::Path;

    fn plan(experiment: &str) -> Plan {
        let src = Source {
            display: "t.toml".into(),
            text: format!(
                "[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"x\"\nkind = \"throughput\"\n{experiment}\n"
            ),
        };
        let doc = src.parse().unwrap();
        build(
            &src,
            &doc,
            "t",
            Some(Path::new("/nonexistent-diskscope-out")),
        )
        .unwrap()
    }

    fn plan_error(text: &str) -> String {
        let src = Source {
            display: "t.toml".into(),
            text: text.into(),
        };
        let doc = src.parse().unwrap();
        build(
            &src,
            &doc,
            "t",
            Some(Path::new("/nonexistent-diskscope-out")),
        )
        .unwrap_err()
        .to_string()
    }

    /// `key = [v, v, ...]` with `n` values.
    fn list(key: &str, v: &str, n: usize) -> String {
        format!("{key} = [{}]\n", vec![v; n].join(", "))
    }

    #[test]
    fn the_cap_names_the_longest_list_the_last_of_equal_ones_as_the_nested_loops_did() {
        let head = "[file]\ncreate = \"1M\"\nwrite = true\n[[experiment]]\nname = \"x\"\nkind = \"throughput\"\n";
        // rate and buffers as long: the nested loops named the rate (looked at last).
        let e = plan_error(&format!(
            "{head}{}{}",
            list("buffers", "\"auto\"", 400),
            list("rate", "1000", 400)
        ));
        assert!(
            e.contains("key `rate`: the lists make 160000 points"),
            "{e}"
        );
        // A mix's list is an axis of its own: the longest is named even where it is the mix.
        let e = plan_error(&format!(
            "{head}{}{}",
            list("threads", "1", 300),
            list("mix", "50", 400)
        ));
        assert!(e.contains("key `mix`: the lists make 120000 points"), "{e}");
    }

    #[test]
    fn the_points_are_the_product_of_the_axes_outermost_first() {
        let p = plan(
            "method = [\"read\", \"pread\"]\nblock_size = [\"4K\", \"8K\", \"16K\"]\nreps = 1\n",
        );
        let got: Vec<(String, u64)> = p.experiments[0]
            .points
            .iter()
            .map(|s| (s.setup.method.to_string(), s.setup.block_size_bytes))
            .collect();
        let want: Vec<(String, u64)> = ["read", "pread"]
            .iter()
            .flat_map(|m| [4096, 8192, 16384].map(|b| (m.to_string(), b)))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_bad_default_is_refused_even_where_every_experiment_sets_its_own() {
        let e = plan_error(
            "[file]\ncreate = \"1M\"\n[defaults]\nblock_size = \"4Q\"\n[[experiment]]\nname = \"x\"\n\
             kind = \"throughput\"\nblock_size = \"4K\"\n",
        );
        assert!(e.starts_with("t.toml:4: key `block_size`: '4Q'"), "{e}");
        let e = plan_error(
            "[file]\ncreate = \"1M\"\n[defaults]\nthreads = 0\n[[experiment]]\nname = \"x\"\n\
             kind = \"syscalls\"\n",
        );
        assert!(e.starts_with("t.toml:4: key `threads`:"), "{e}");
    }

    #[test]
    fn a_default_that_no_experiment_takes_is_refused() {
        let e = plan_error(
            "[file]\ncreate = \"1M\"\n[defaults]\ntimeout = 5\n[[experiment]]\nname = \"x\"\n\
             kind = \"throughput\"\n",
        );
        assert!(
            e.starts_with("t.toml:4: key `timeout`: in [defaults] but no experiment takes it"),
            "{e}"
        );
    }

    #[test]
    fn warm_reads_loop_for_their_time_and_cold_reads_make_one_pass() {
        let p = plan("cache = [\"warm\", \"cold\"]\nblock_size = \"3K\"\nseconds = 1.5");
        let pts = &p.experiments[0].points;
        assert_eq!(pts.len(), 2);
        assert_eq!(
            (pts[0].setup.cache, pts[0].target.block_count),
            (CacheMode::Warm, None)
        );
        assert_eq!(pts[0].target.duration.unwrap().as_secs_f64(), 1.5);
        assert_eq!(
            (pts[1].setup.cache, pts[1].target.block_count),
            (CacheMode::Cold, Some(342))
        );
    }

    #[test]
    fn writes_overwrite_in_place_once_whatever_the_cache_axis() {
        let p = plan("operation = \"write\"\ncache = [\"warm\", \"cold\"]\nblock_size = \"64K\"");
        let x = &p.experiments[0];
        assert_eq!(x.points.len(), 1);
        let w = &x.points[0];
        assert_eq!(
            (w.setup.op, w.setup.cache, w.target.block_count),
            (Op::Write, CacheMode::AsIs, Some(16))
        );
        assert!(w.safety.overwrite_in_place && w.safety.force);
        assert!(x
            .notes
            .iter()
            .any(|n| n.contains("cache applies to reads only")));
    }

    #[test]
    fn queue_depth_multiplies_only_io_uring_points() {
        let p = plan("method = [\"read\", \"io_uring\"]\nqueue_depth = [1, 8, 32]");
        let pts = &p.experiments[0].points;
        assert_eq!(pts.len(), 4);
        assert_eq!(
            pts.iter()
                .filter(|s| s.setup.method == Method::IoUring)
                .count(),
            3
        );
        assert_eq!(p.experiments[0].estimate_s(), Some(4.0 * 5.0 * 2.0));
    }

    #[test]
    fn a_rate_axis_plans_closed_and_open_loop_points_and_reads_a_throughput_at_each_block_size() {
        let p = plan(
            "rate = [0, 500, \"4 MiB/s\"]\narrival = [\"constant\", \"poisson\"]\n\
             block_size = [\"4K\", \"8K\"]\npattern = \"random\"",
        );
        let pts = &p.experiments[0].points;
        let got: Vec<(u64, Option<f64>, Arrival)> = pts
            .iter()
            .map(|s| (s.setup.block_size_bytes, s.setup.rate(), s.setup.arrival))
            .collect();
        // The closed loop once (it has no arrivals), each open rate once per arrival.
        assert_eq!(got.len(), 2 + 2 * 2 * 2, "{got:?}");
        assert_eq!(got[0], (4096, None, Arrival::Constant));
        assert!(got.contains(&(4096, Some(500.0), Arrival::Poisson)));
        assert!(got.contains(&(4096, Some(1024.0), Arrival::Constant)));
        assert!(got.contains(&(8192, Some(512.0), Arrival::Poisson)));
        // The fio companion of an open-loop point paces fio the same way, per job.
        let mut two = pts
            .iter()
            .find(|s| s.setup.rate() == Some(500.0) && s.setup.arrival == Arrival::Poisson)
            .unwrap()
            .clone();
        two.setup.threads = 2;
        let companion = crate::fio::sweep_companion("x", &[pts[0].clone(), two], 1 << 20);
        let lines: Vec<&str> = companion
            .lines()
            .filter(|l| l.starts_with("fio "))
            .collect();
        assert!(!lines[0].contains("--rate_iops"), "{companion}");
        assert!(
            lines[1].contains("--rate_iops=250") && lines[1].contains("--rate_process=poisson"),
            "{companion}"
        );
        // ... and reading that line back as a fio command plans the same open loop.
        let jobs = crate::fiojob::parse::parse_command_lines(lines[1], "c.txt").unwrap();
        let back = crate::fiojob::plan::plan(
            &jobs,
            "c.txt",
            "c",
            Some(Path::new("/nonexistent-diskscope-out")),
            false,
        )
        .unwrap();
        let s = &back.experiments[0].points[0];
        assert_eq!(
            (s.setup.threads, s.setup.rate(), s.setup.arrival),
            (2, Some(500.0), Arrival::Poisson)
        );
    }

    #[test]
    fn bad_rates_and_arrivals_are_refused_at_their_key_and_line() {
        let base = "[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"x\"\nkind = \"throughput\"\n";
        for (keys, want) in [
            ("rate = -5", "t.toml:6: key `rate`: -5 is not a rate"),
            (
                "rate = \"5 furlongs/s\"",
                "t.toml:6: key `rate`: cannot read",
            ),
            ("rate = true", "t.toml:6: key `rate`: boolean is not a rate"),
            ("rate = 2e9", "t.toml:6: key `rate`: must be above 0"),
            (
                "rate = \"1 GiB/s\"\nblock_size = 1",
                "t.toml:6: key `rate`: must be above 0 and at most 1e9",
            ),
            (
                "arrival = \"poisson\"",
                "t.toml:6: key `arrival`: applies to open-loop points",
            ),
            (
                "rate = 0\narrival = \"poisson\"",
                "t.toml:7: key `arrival`: applies to open-loop points",
            ),
            (
                "rate = 5\narrival = \"uniform\"",
                "t.toml:7: key `arrival`:",
            ),
        ] {
            let e = plan_error(&format!("{base}{keys}\n"));
            assert!(e.starts_with(want), "{keys}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = plan_error(
            "[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"x\"\nkind = \"throughput\"\n\
             mix = 70\nrate = [0, 100]\n",
        );
        assert!(
            e.starts_with("t.toml:7: key `rate`: an open-loop run of a mix"),
            "{e}"
        );
        let e = plan_error(
            "[file]\ncreate = \"1M\"\n[[experiment]]\nname = \"x\"\nkind = \"command\"\n\
             command = \"true\"\nrate = 100\n",
        );
        assert!(
            e.starts_with("t.toml:7: key `rate`: does not apply to kind command"),
            "{e}"
        );
        let e = plan_error(
            "[file]\ncreate = \"1M\"\n[defaults]\nrate = \"x\"\n[[experiment]]\nname = \"x\"\n\
             kind = \"throughput\"\n",
        );
        assert!(e.starts_with("t.toml:4: key `rate`:"), "{e}");
    }

    #[test]
    fn submit_sets_the_io_uring_policy_once_per_experiment() {
        let p = plan("method = [\"pread\", \"io_uring\"]\nsubmit = \"each\"");
        let pts = &p.experiments[0].points;
        let uring = pts
            .iter()
            .find(|s| s.setup.method == Method::IoUring)
            .unwrap();
        assert_eq!(uring.setup.submit, SubmitPolicy::Each);
        let companion = crate::fio::sweep_companion("x", pts, 1 << 20);
        assert!(
            companion.contains("--iodepth_batch_submit=1"),
            "{companion}"
        );
        assert_eq!(
            companion.lines().filter(|l| l.starts_with("fio ")).count(),
            2
        );
    }
}
