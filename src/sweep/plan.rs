//! Sweep file -> [`Plan`]: the file to use, and for each experiment the cartesian product of its
//! axes as validated [`RunSpec`](crate::config::spec::RunSpec)s. Everything that can be wrong with a sweep is found here, before
//! any I/O, and reported with the key and line (`RunSpec::validate` does the value checks, so a
//! sweep rejects exactly what the command line rejects).
//!
//! A point's work is bounded by time: reads loop over the file until `seconds` is up (cold reads
//! stop at the end of the file instead, since a second pass would be served from the cache), writes
//! cover the file once or stop at the time bound.

pub use super::experiment::{CommandPlan, Experiment, Kind, Plan, MAX_POINTS, MAX_POINTS_FORCED};
use super::files::FilePlan;
use super::kinds;
use super::layered::{all_keys, key_span, Layered};
use super::schema::{Section, Source, SweepDoc};
use std::path::Path;

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        && !s.starts_with('.')
}

/// Longest estimated measuring time accepted without `--force`.
pub const MAX_ESTIMATE_S: f64 = 24.0 * 3600.0;

/// Builds the plan of a parsed sweep file. `default_name` is the file stem.
/// `out`: the `--out` directory (default `diskscope-results/<name>/`).
pub fn build(
    src: &Source,
    doc: &SweepDoc,
    default_name: &str,
    out: Option<&Path>,
) -> anyhow::Result<Plan> {
    build_with(src, doc, default_name, out, false)
}

/// [`build`], with `force` lifting the point cap ([`MAX_POINTS`]) to [`MAX_POINTS_FORCED`].
pub fn build_with(
    src: &Source,
    doc: &SweepDoc,
    default_name: &str,
    out: Option<&Path>,
    force: bool,
) -> anyhow::Result<Plan> {
    let name = match &doc.name {
        Some(n) if !valid_name(n.get_ref()) => {
            return Err(src.key_error(n.span(), "name", "use letters, digits, '.', '_' and '-' only (it names the output directory)"))
        }
        Some(n) => n.get_ref().clone(),
        None if valid_name(default_name) => default_name.to_string(),
        None => {
            return Err(crate::config::usage(format!(
                "{}:1: key `name`: the file name is not usable as a sweep name; add name = \"my-sweep\"",
                src.display
            )))
        }
    };
    let out_dir = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new("diskscope-results").join(&name));
    let empty = Section::default();
    let defaults = doc.defaults.as_ref().map(|d| d.get_ref()).unwrap_or(&empty);
    for key in ["name", "kind", "command", "params"] {
        if let Some(span) = key_span(defaults, key) {
            return Err(src.key_error(
                span,
                key,
                "belongs in an [[experiment]], not in [defaults]; move it",
            ));
        }
    }
    let defaults_span = doc.defaults.as_ref().map_or(0..0, |d| d.span());
    super::points::check_defaults(&Layered {
        src,
        exp: &empty,
        exp_span: defaults_span,
        defaults,
        force,
    })?;
    if doc.experiment.is_empty() {
        return Err(crate::config::usage(format!(
            "{}:1: no experiments; add an [[experiment]] table with a `name` and a `kind`",
            src.display
        )));
    }
    let needs_file = doc.experiment.iter().any(|e| {
        match e.get_ref().kind.as_ref() {
            None => true, // the error about the missing kind comes with the experiment's line
            Some(k) => kinds::by_name(k.get_ref()).is_some_and(|k| k.traits().needs_file),
        }
    });
    let file = super::files::plan_file(src, doc.file.as_ref(), needs_file, &out_dir)?;
    let mut experiments: Vec<Experiment> = Vec::new();
    let mut names = std::collections::HashSet::new();
    // Output file name -> the experiment writing it: `a`'s summary is `a-summary.csv`, which an
    // experiment named `a-summary` would also write.
    let mut outputs = std::collections::HashMap::new();
    for e in &doc.experiment {
        let layered = Layered {
            src,
            exp: e.get_ref(),
            exp_span: e.span(),
            defaults,
            force,
        };
        let x = experiment(&layered, file.as_ref())?;
        if !names.insert(x.name.clone()) {
            return Err(src.key_error(
                layered.span("name"),
                "name",
                &format!(
                "experiment `{}` is defined twice; names must be unique (they name the CSV files)",
                x.name
            ),
            ));
        }
        for out_name in super::experiment::output_names(&x.name, x.kind) {
            if let Some(other) = outputs.insert(out_name.clone(), x.name.clone()) {
                return Err(src.key_error(
                    layered.span("name"),
                    "name",
                    &format!(
                        "experiment `{}` would write {out_name}, which experiment `{other}` \
                         writes too; rename one of them",
                        x.name
                    ),
                ));
            }
        }
        experiments.push(x);
    }
    // A default that no experiment can take is a mistake too (a key for another kind).
    for key in all_keys() {
        if let Some(span) = key_span(defaults, key) {
            if !experiments.iter().any(|x| x.kind.keys().contains(key)) {
                let kinds: Vec<&str> = experiments.iter().map(|x| x.kind.name()).collect();
                return Err(src.key_error(
                    span,
                    key,
                    &format!(
                        "in [defaults] but no experiment takes it (kinds here: {}); remove it",
                        kinds.join(", ")
                    ),
                ));
            }
        }
    }
    let compare = match &doc.compare {
        None => Vec::new(),
        Some(c) => {
            for n in c.get_ref() {
                match experiments.iter().find(|x| &x.name == n) {
                    Some(x) if x.kind.traits().comparable => {}
                    Some(_) => {
                        return Err(src.key_error(
                            c.span(),
                            "compare",
                            &format!(
                                "`{n}` is not a throughput or command experiment; list only those"
                            ),
                        ))
                    }
                    None => {
                        return Err(src.key_error(
                            c.span(),
                            "compare",
                            &format!("no experiment is named `{n}`; list experiment names"),
                        ))
                    }
                }
            }
            if c.get_ref().len() < 2 {
                return Err(src.key_error(
                    c.span(),
                    "compare",
                    "list at least two experiments to draw together",
                ));
            }
            if let Some(other) = outputs.get("compare.svg") {
                return Err(src.key_error(
                    c.span(),
                    "compare",
                    &format!(
                        "the comparison figure compare.svg would replace experiment `{other}`'s \
                         figure; rename that experiment"
                    ),
                ));
            }
            c.get_ref().clone()
        }
    };
    let y_scale = match &doc.y_scale {
        None => Default::default(),
        Some(v) => crate::export::chart::YScale::parse(v.get_ref())
            .map_err(|e| src.key_error(v.span(), "y_scale", &e))?,
    };
    Ok(Plan {
        force,
        compare,
        y_scale,
        name,
        description: doc.description.clone().unwrap_or_default(),
        file,
        experiments,
        out_dir,
    })
}

fn experiment(l: &Layered, file: Option<&FilePlan>) -> anyhow::Result<Experiment> {
    let src = l.src;
    let name = match &l.exp.name {
        None => {
            return Err(src.key_error(
                l.exp_span.clone(),
                "name",
                "missing; every [[experiment]] needs a name",
            ))
        }
        Some(n) if !valid_name(n.get_ref()) => {
            return Err(src.key_error(
                n.span(),
                "name",
                "use letters, digits, '.', '_' and '-' only (it names the CSV file)",
            ))
        }
        Some(n) => n.get_ref().clone(),
    };
    let kind = match &l.exp.kind {
        None => {
            return Err(src.key_error(
                l.span("name"),
                "kind",
                &format!(
                    "missing; add kind = \"throughput\" (or one of {})",
                    kinds::names()
                ),
            ))
        }
        Some(k) => kinds::by_name(k.get_ref()).ok_or_else(|| {
            src.key_error(
                k.span(),
                "kind",
                &format!(
                    "unknown kind '{}'; use one of {}",
                    k.get_ref(),
                    kinds::names()
                ),
            )
        })?,
    };
    for key in all_keys().iter().filter(|k| !["name", "kind"].contains(k)) {
        if !kind.keys().contains(key) {
            if let Some(span) = key_span(l.exp, key) {
                return Err(src.key_error(
                    span,
                    key,
                    &format!(
                        "does not apply to kind {}; remove it (that kind takes: {})",
                        kind.name(),
                        kind.keys().join(", ")
                    ),
                ));
            }
        }
    }
    let mut x = Experiment {
        name,
        kind,
        reps: kind.reps(l)?,
        seconds: l.seconds("seconds", kind.default_seconds())?,
        points: Vec::new(),
        command: None,
        locality: None,
        knee: None,
        notes: Vec::new(),
        upper_bound: false,
    };
    kind.plan(l, file, &mut x)?;
    Ok(x)
}
