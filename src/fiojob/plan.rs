//! The jobs of a file → the sweep's [`Plan`]: each job mapped ([`super::map`]), the one file
//! of the batch chosen ([`super::file`]), one `throughput` experiment per job with its point,
//! names made unique, and the jobs drawn together in `compare.svg`.

use super::error::{FioError, Loc};
use super::file::plan_file;
use super::map::{map_job, sanitise, spec_of};
use super::parse::Job;
use crate::sweep::experiment::{Experiment, MAX_POINTS};
use crate::sweep::plan::Plan;
use std::path::Path;

/// Plans the jobs as a sweep named after the job file (`stem`).
pub fn plan(
    jobs: &[Job],
    display: &str,
    stem: &str,
    out: Option<&Path>,
    force: bool,
) -> Result<Plan, FioError> {
    if jobs.is_empty() {
        return Err(FioError::Syntax {
            loc: Loc {
                file: display.to_string(),
                line: 1,
            },
            message: "no job; add a [job-name] section with rw=, bs= and size=".into(),
        });
    }
    if jobs.len() as u64 > MAX_POINTS {
        return Err(FioError::Syntax {
            loc: jobs[MAX_POINTS as usize].header.clone(),
            message: format!("more than {MAX_POINTS} jobs; split the job file"),
        });
    }
    let name = sanitise(stem);
    let out_dir = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| Path::new("diskscope-results").join(&name));
    let mut mapped = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| map_job(j, i, jobs))
        .collect::<Result<Vec<_>, _>>()?;
    let file = plan_file(&mut mapped)?;
    let mut experiments: Vec<Experiment> = Vec::new();
    let mut names = std::collections::HashSet::new();
    // Every file name the plan will write into --out, checked before the first run: the
    // documents beside the CSVs, then each job's files as it is named. Two jobs whose files
    // would meet (`x`'s timeline is `x-timeline.csv`, the results of a job named `x-timeline`)
    // are told apart here, not found when the second one writes after the measuring.
    let mut outputs: std::collections::HashSet<String> =
        ["compare.svg", "context.json", "sweep.json"]
            .into_iter()
            .map(str::to_string)
            .collect();
    let kind: crate::sweep::experiment::Kind = &crate::sweep::kinds::throughput::Throughput;
    for m in &mapped {
        let spec = spec_of(m, &file)?;
        let mut name = m.name.clone();
        let mut n = 2;
        // `a-summary` would collide with `a`'s summary file: keep the names apart.
        // `compare` would write compare.svg, the figure of all the jobs together.
        while names.contains(&name)
            || name.ends_with("-summary")
            || name.ends_with("-fio")
            || name == "compare"
            || crate::sweep::experiment::output_names(&name, kind)
                .iter()
                .any(|o| outputs.contains(o))
        {
            name = format!("{}-{n}", m.name);
            n += 1;
        }
        names.insert(name.clone());
        outputs.extend(crate::sweep::experiment::output_names(&name, kind));
        let mut notes = m.notes.clone();
        if name != m.job.name {
            notes.insert(
                0,
                format!(
                    "job [{}] ({})",
                    crate::text::shown(&m.job.name),
                    m.job.header
                ),
            );
        }
        if m.runtime.is_none() {
            notes.push(
                "no runtime: each run ends when its range is done; the estimate does not count it"
                    .into(),
            );
        }
        experiments.push(Experiment {
            name,
            kind: &crate::sweep::kinds::throughput::Throughput,
            reps: m.reps,
            seconds: m.runtime.map_or(0.0, |d| d.as_secs_f64()),
            points: vec![spec],
            command: None,
            locality: None,
            knee: None,
            notes,
            upper_bound: !m.time_based,
        });
    }
    // Several jobs (a queue-depth or block-size series written as one job each) are drawn
    // together in compare.svg.
    let compare = if experiments.len() >= 2 {
        experiments.iter().map(|x| x.name.clone()).collect()
    } else {
        Vec::new()
    };
    Ok(Plan {
        name,
        description: format!("fio jobs of {display}"),
        file: Some(file),
        experiments,
        out_dir,
        compare,
        y_scale: Default::default(),
        force,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fiojob::parse::parse_command_lines;

    proptest::proptest! {
        /// Whatever the text, reading and planning it ends in jobs or one located error line,
        /// never a panic.
        #[test]
        fn any_text_is_read_and_planned_without_panicking(
            text in "([\\[\\]=;#$ {}a-z0-9:,%\\-]{0,40}\n){0,12}",
        ) {
            let env = |v: &str| (v == "A").then(|| "4k".to_string());
            if let Ok(jobs) = parse_ini_text(&text, "p.fio", &env) {
                let r = plan(
                    &jobs,
                    "p.fio",
                    "p",
                    Some(Path::new("/nonexistent-diskscope-out")),
                    false,
                );
                if let Err(e) = r {
                    proptest::prop_assert!(!e.to_string().contains('\n'));
                }
            }
            if let Err(e) = parse_command_lines(&format!("fio {text}"), "p.txt") {
                proptest::prop_assert!(e.to_string().starts_with("p.txt:"));
            }
        }
    }
    use crate::fiojob::parse::parse_ini_text;

    fn plan_of(text: &str) -> Result<Plan, String> {
        let jobs = parse_ini_text(text, "j.fio", &|_| None).map_err(|e| e.to_string())?;
        plan(
            &jobs,
            "j.fio",
            "j",
            Some(Path::new("/nonexistent-diskscope-out")),
            false,
        )
        .map_err(|e| e.to_string())
    }

    const FILE: &str = "filename=/nonexistent-diskscope-dir/f.dat\nsize=1m\n";

    #[test]
    fn a_value_runspec_refuses_is_reported_at_the_fio_option_that_set_it() {
        let e = plan_of(&format!("[a]\n{FILE}ioengine=mmap\ndirect=1\n")).unwrap_err();
        assert!(e.starts_with("j.fio:5: option `direct`: O_DIRECT"), "{e}");
        let e = plan_of(&format!("[a]\n{FILE}numjobs=0\n")).unwrap_err();
        assert!(e.starts_with("j.fio:4: option `numjobs`:"), "{e}");
        // size=0 is fio's default: the whole file (here, one that does not exist: no size).
        let e = plan_of("[a]\nfilename=/nonexistent-diskscope-dir/f.dat\nsize=0\n").unwrap_err();
        assert!(e.contains("no job gives its size"), "{e}");
    }

    #[test]
    fn numjobs_says_in_the_threads_line_where_fios_clones_and_diskscopes_threads_differ() {
        let notes = |text: &str| {
            plan_of(text).unwrap().experiments[0]
                .notes
                .iter()
                .find(|n| n.starts_with("threads "))
                .cloned()
                .unwrap()
        };
        let seq =
            notes("[a]\nfilename=/nonexistent-diskscope-dir/f.dat\nsize=64m\nnumjobs=2\nrw=read\n");
        assert!(
            seq.starts_with(
                "threads 2 ← numjobs=2 (j.fio:4): fio's 2 clones each go over the whole 64M"
            ) && seq.contains("split it into 2 parts of 32M")
                && seq.contains("fio moves 128M (2 × 64M), diskscope 64M in all"),
            "{seq}"
        );
        let rand = notes("[a]\nfilename=/nonexistent-diskscope-dir/f.dat\nsize=64m\nnumjobs=2\nrw=randread\nruntime=5\ntime_based\n");
        assert!(
            rand.contains("all draw offsets from the whole range; both run for the runtime"),
            "{rand}"
        );
        // offset_increment=size: fio splits the range too; nothing differs.
        let split = notes("[a]\nfilename=/nonexistent-diskscope-dir/f.dat\nsize=64m\nnumjobs=2\noffset_increment=64m\n");
        assert!(!split.contains("fio's 2 clones"), "{split}");
    }

    #[test]
    fn time_based_without_runtime_is_refused_because_fio_would_never_stop() {
        let e = plan_of(&format!("[a]\n{FILE}time_based\n")).unwrap_err();
        assert!(
            e.starts_with("j.fio:4: option `time_based`: time_based needs runtime"),
            "{e}"
        );
    }

    #[test]
    fn jobs_without_stonewall_are_noted_as_run_one_after_another() {
        let p = plan_of(&format!("[global]\n{FILE}[a]\n[b]\n[c]\nstonewall\n")).unwrap();
        let together = |i: usize| {
            p.experiments[i]
                .notes
                .iter()
                .any(|n| n.contains("fio starts this job together with"))
        };
        assert!(!together(0) && together(1) && !together(2));
    }

    #[test]
    fn a_job_named_like_an_output_of_the_batch_is_renamed() {
        let p = plan_of(&format!(
            "[global]\n{FILE}[compare]\n[a-summary]\n[a]\n[a]\n"
        ))
        .unwrap();
        let names: Vec<&str> = p.experiments.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["compare-2", "a-summary-2", "a", "a-2"]);
        assert_eq!(p.compare.len(), 4);
    }

    #[test]
    fn a_file_that_does_not_exist_is_created_at_the_largest_range() {
        let p = plan_of(&format!(
            "[global]\n{FILE}[a]\n[b]\nsize=2m\n[c]\nrw=write\nsize=512k\n"
        ))
        .unwrap();
        let f = p.file.unwrap();
        assert_eq!((f.size_bytes, f.create, f.writable), (2 << 20, true, true));
        let w = &p.experiments[2].points[0];
        assert_eq!(w.target.block_count, Some(128)); // 512k at fio's default bs=4k
        assert!(w.safety.overwrite_in_place);
    }
}
