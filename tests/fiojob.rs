//! Issue 26, "Speak fio": fio job files run through `--batch` (tests/fixtures/fio/jobs/, written
//! in the style of fio's own examples), every option diskscope does not implement refused by
//! name with its file and line, the `-fio.txt` companion planned back into the same points; and
//! the shell: completion scripts, the man page, `--version` with the git revision.

use crate::util::bin;

#[test]
fn the_bash_completion_script_loads_and_registers_diskscope() {
    let script = bin("diskscope")
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(script.status.success());
    let dir = crate::util::tmp();
    let path = dir.path().join("diskscope.bash");
    std::fs::write(&path, &script.stdout).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p diskscope",
            path.display()
        ))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{shown}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(shown.contains("diskscope"), "{shown}");
}

#[test]
fn zsh_and_fish_completions_name_the_subcommands() {
    for shell in ["zsh", "fish"] {
        let out = bin("diskscope")
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        for sub in ["run", "compare", "completions", "man"] {
            assert!(text.contains(sub), "{shell} script lacks {sub}");
        }
    }
}

#[test]
fn the_man_page_has_a_name_section_and_lists_the_subcommands() {
    let out = bin("diskscope").arg("man").output().unwrap();
    assert!(out.status.success());
    let roff = String::from_utf8_lossy(&out.stdout);
    assert!(roff.contains(".TH diskscope"), "{roff}");
    assert!(roff.contains(".SH NAME"), "{roff}");
    assert!(roff.contains("diskscope \\- how fast"), "{roff}");
    assert!(roff.contains(".SH SUBCOMMANDS"), "{roff}");
    for sub in ["run", "compare", "completions", "man"] {
        assert!(
            roff.contains(&format!("diskscope\\-{sub}(1)")),
            "no {sub} in {roff}"
        );
    }
    // Rendered by man itself where it is installed.
    let dir = crate::util::tmp();
    let page = dir.path().join("diskscope.1");
    std::fs::write(&page, &out.stdout).unwrap();
    match std::process::Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
    {
        Ok(m) if m.status.success() => {
            let text = String::from_utf8_lossy(&m.stdout);
            assert!(
                text.contains("NAME") && text.contains("SUBCOMMANDS"),
                "{text}"
            );
        }
        Ok(m) => panic!("man -l failed: {}", String::from_utf8_lossy(&m.stderr)),
        Err(e) => eprintln!("skipped rendering: man is not installed ({e})"),
    }
}

#[test]
fn each_subcommand_has_its_own_man_page_and_a_wrong_name_is_refused() {
    let out = bin("diskscope").args(["man", "run"]).output().unwrap();
    assert!(out.status.success());
    let roff = String::from_utf8_lossy(&out.stdout);
    assert!(roff.contains(".TH diskscope-run"), "{roff}");
    assert!(roff.contains("BLOCK_SIZE"), "{roff}");
    let out = bin("diskscope").args(["man", "nope"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("man: no subcommand 'nope'; use one of run,"),
        "{stderr}"
    );
}

#[test]
fn version_names_the_git_revision() {
    let out = bin("diskscope").arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let expected = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match expected {
        Some(rev) => assert!(text.contains(&format!("({rev})")), "{text}"),
        None => assert!(text.contains('('), "{text}"),
    }
}

use std::path::{Path, PathBuf};

fn jobs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio/jobs")
}

/// The `*.fio` files of `dir`, sorted.
fn fio_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio" || e == "txt"))
        .collect();
    v.sort();
    v
}

/// `diskscope --batch JOB ...` run in `cwd` (the job files name their data files relative to it).
fn batch(cwd: &Path, job: &Path, extra: &[&str]) -> std::process::Output {
    bin("diskscope")
        .current_dir(cwd)
        .env("DISKSCOPE_FIO_BS", "64k")
        .arg("--batch")
        .arg(job)
        .arg("--out")
        .arg(cwd.join("out"))
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn every_job_file_of_the_fixtures_plans_with_each_setting_traced_to_its_fio_option() {
    let files = fio_files(&jobs_dir());
    assert!(files.len() >= 7, "{files:?}");
    for job in files {
        let dir = crate::util::tmp();
        let out = batch(dir.path(), &job, &["--dry-run"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: {stdout}{}",
            job.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("block_size"), "{stdout}");
        // Each setting names the option and line it came from.
        assert!(stdout.contains(&format!("{}:", job.display())), "{stdout}");
        // A dry run creates nothing.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

#[test]
fn the_plan_of_a_job_file_holds_what_fio_would_do() {
    let load = |name: &str| {
        diskscope::batch::load(
            &jobs_dir().join(name),
            Some(Path::new("/nonexistent-diskscope-out")),
            false,
        )
        .unwrap()
    };
    use diskscope::config::{CacheMode, Method, Op, Pattern};
    let p = load("seq-read.fio");
    assert_eq!(p.experiments.len(), 1);
    let x = &p.experiments[0];
    assert_eq!(x.name, "seq-read"); // the [global] name= renames the job, as in fio
    let s = &x.points[0];
    assert_eq!((s.setup.method, s.setup.queue_depth), (Method::IoUring, 16)); // libaio runs as io_uring
    assert_eq!(
        (s.setup.block_size_bytes, s.target.block_count),
        (256 << 10, None)
    );
    assert_eq!(s.setup.cache, CacheMode::Cold); // fio's default invalidate=1
    assert_eq!(s.target.duration.unwrap().as_millis(), 300);
    assert!(
        x.notes.iter().any(|n| n.contains("libaio")),
        "{:?}",
        x.notes
    );
    let f = p.file.as_ref().unwrap();
    assert_eq!((f.size_bytes, f.create, f.keep), (4 << 20, true, false));

    let p = load("qd-sweep.fio");
    let depths: Vec<u32> = p
        .experiments
        .iter()
        .map(|x| x.points[0].setup.queue_depth)
        .collect();
    assert_eq!(depths, [1, 4, 16, 32]);
    let names: Vec<&str> = p.experiments.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["qd1", "qd4", "qd16", "qd32"]);
    assert_eq!(p.compare, names); // drawn together in compare.svg
    assert!(p
        .experiments
        .iter()
        .all(|x| x.points[0].setup.cache == CacheMode::AsIs
            && x.points[0].setup.pattern == Pattern::Random));
    assert_eq!(
        p.experiments[3].points[0].setup.submit,
        diskscope::config::SubmitPolicy::Batch
    );

    let p = load("numjobs.fio");
    let four = &p.experiments[0].points[0];
    assert_eq!((four.setup.threads, four.target.block_count), (4, Some(32))); // 4 x 1m at 128k
    assert_eq!(p.experiments[1].points[0].target.block_count, Some(4));
    // stonewall: fio too runs the second job after the first, so the plan has no note on order.
    assert!(p.experiments[1]
        .notes
        .iter()
        .all(|n| !n.contains("starts this job together")));
    // Without one (aio-style, several jobs at once) the plan says fio would overlap them.
    let p = load("seq-read.fio");
    assert!(p.experiments[0]
        .notes
        .iter()
        .all(|n| !n.contains("starts this job together")));

    // aio-read style: no stonewall and no filename; both differences are in the plan.
    let p = load("parallel-depths.fio");
    assert_eq!(p.experiments.len(), 4);
    assert!(p.experiments[0].points[0].setup.direct); // buffered=0
    let notes = |i: usize| p.experiments[i].notes.join("\n");
    assert!(
        notes(1).contains("fio starts this job together with [file1]"),
        "{}",
        notes(1)
    );
    assert!(notes(1).contains("no filename"), "{}", notes(1));
    assert_eq!(
        p.file.as_ref().unwrap().path,
        Path::new(".").join("file1.0.0")
    );

    let p = load("howto-cmdline.txt");
    let names: Vec<&str> = p.experiments.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["job1", "job2", "seq"]);
    assert_eq!(p.experiments[1].points[0].setup.block_size_bytes, 8192);
    assert!(p.experiments[1]
        .notes
        .iter()
        .any(|n| n.contains("together with [job1]")));
    assert!(p.experiments[2]
        .notes
        .iter()
        .all(|n| !n.contains("together")));

    let p = load("rand-read.fio");
    let x = &p.experiments[0];
    assert_eq!((x.reps, x.points[0].target.block_count), (2, Some(256)));

    let p = load("seq-write.fio");
    let w = &p.experiments[0].points[0];
    assert_eq!(
        (w.setup.op, w.setup.write_sync.fsync(), w.target.block_count),
        (Op::Write, true, Some(32))
    );
    assert!(w.safety.overwrite_in_place);

    let p = load("rand-write.fio");
    let w = &p.experiments[0].points[0];
    assert_eq!(
        (
            w.setup.write_sync.dsync(),
            w.setup.queue_depth,
            w.target.block_count
        ),
        (true, 8, Some(64))
    );
}

#[test]
fn includes_environment_variables_and_kb_base_are_read_as_fio_reads_them() {
    let dir = crate::util::tmp();
    let out = batch(
        dir.path(),
        &jobs_dir().join("with-include.fio"),
        &["--dry-run"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // bs=${DISKSCOPE_FIO_BS} (64k) comes from the included file, with its line; kb_base=1000
    // in [seq] makes it 64000 bytes there, 65536 in [rand].
    let inc = jobs_dir().join("common.inc");
    assert!(
        text.contains(&format!("block_size 64000 ← bs=64k ({}:6)", inc.display())),
        "{text}"
    );
    assert!(text.contains("block_size 64K ← bs=64k"), "{text}");
    assert!(text.contains("threads "), "{text}"); // numjobs=$ncpus
}

#[test]
fn each_refused_option_is_named_with_its_file_and_line() {
    let files = fio_files(&jobs_dir().join("refused"));
    assert!(files.len() >= 12, "{files:?}");
    for job in files {
        let text = std::fs::read_to_string(&job).unwrap();
        let expect = text
            .lines()
            .find_map(|l| l.strip_prefix("; expect: "))
            .unwrap_or_else(|| panic!("{} has no `; expect:` line", job.display()));
        // `; expect: LINE OPTION` or `; expect: LINE OPTION in INCLUDED-FILE`.
        let (expect, file) = match expect.split_once(" in ") {
            Some((e, f)) => (e, job.with_file_name(f)),
            None => (expect, job.clone()),
        };
        let (line, option) = expect.split_once(' ').unwrap();
        let dir = crate::util::tmp();
        let out = batch(dir.path(), &job, &["--dry-run"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", job.display());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        let at = format!("error: {}:{line}: ", file.display());
        assert!(stderr.starts_with(&at), "expected {at}... got {stderr}");
        assert!(
            stderr.contains(&format!("`{option}`")) || stderr.contains(&format!(": {option}:")),
            "{stderr}"
        );
    }
}

#[test]
fn the_job_files_run_and_leave_only_their_results() {
    for name in [
        "seq-read.fio",
        "qd-sweep.fio",
        "numjobs.fio",
        "seq-write.fio",
        "rand-write.fio",
        "randrw.fio",
    ] {
        let dir = crate::util::tmp();
        let job = jobs_dir().join(name);
        let out = batch(dir.path(), &job, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{name}: {}{stderr}",
            String::from_utf8_lossy(&out.stdout)
        );
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["out"], "{name}: the data file was not removed");
        let csvs = std::fs::read_dir(dir.path().join("out"))
            .unwrap()
            .filter(|e| {
                let n = e.as_ref().unwrap().file_name();
                let n = n.to_string_lossy();
                n.ends_with(".csv") && !n.ends_with("-summary.csv")
            })
            .count();
        assert!(csvs >= 1, "{name}: no CSV");
        if name == "qd-sweep.fio" {
            assert!(dir.path().join("out/compare.svg").exists());
        }
    }
}

#[test]
fn the_fio_lines_diskscope_writes_plan_the_same_points_again() {
    let dir = crate::util::tmp();
    let data = dir.path().join("data.bin");
    crate::util::write_varied_file(&data, 1 << 20, 7);
    let newfile = dir.path().join("new.dat");
    let cases = [
        format!(
            "[file]\npath = \"{}\"\n[[experiment]]\nname = \"reads\"\nkind = \"throughput\"\n\
             seconds = 0.5\nmethod = [\"read\", \"pread\", \"mmap\", \"io_uring\"]\n\
             pattern = [\"sequential\", \"random\"]\ncache = [\"warm\", \"cold\"]\n\
             threads = [1, 4]\nblock_size = [\"4K\", \"64K\", \"1M\"]\nqueue_depth = [1, 8]\n",
            data.display()
        ),
        format!(
            "[file]\npath = \"{}\"\ncreate = \"1M\"\n[[experiment]]\nname = \"writes\"\n\
             kind = \"throughput\"\nseconds = 0.5\noperation = \"write\"\n\
             method = [\"pread\", \"io_uring\"]\npattern = [\"sequential\", \"random\"]\n\
             threads = [1, 2]\nblock_size = [\"4K\", \"64K\"]\nsubmit = \"batch\"\nqueue_depth = 4\n",
            newfile.display()
        ),
    ];
    for (i, toml) in cases.iter().enumerate() {
        let sweep = dir.path().join(format!("s{i}.toml"));
        std::fs::write(&sweep, toml).unwrap();
        let out = Some(Path::new("/nonexistent-diskscope-out"));
        let plan = diskscope::batch::load(&sweep, out, false).unwrap();
        let x = &plan.experiments[0];
        let size = plan.file.as_ref().unwrap().size_bytes;
        let txt = dir.path().join(format!("{}-fio.txt", x.name));
        std::fs::write(
            &txt,
            diskscope::fio::sweep_companion(&x.name, &x.points, size),
        )
        .unwrap();
        let back = diskscope::batch::load(&txt, out, false).unwrap();
        let points: Vec<_> = back
            .experiments
            .iter()
            .flat_map(|x| x.points.clone())
            .collect();
        assert_eq!(points.len(), x.points.len());
        assert!(points.len() >= 16);
        for (a, b) in x.points.iter().zip(&points) {
            // `auto` comes back as the memory the line names for it (`iomem=mmap`: plain pages,
            // `mmaphuge`: hugetlb): the same I/O, said explicitly.
            let mut b = b.clone();
            if a.setup.buffers == diskscope::config::Buffers::Auto {
                assert!(
                    matches!(
                        b.setup.buffers,
                        diskscope::config::Buffers::Plain
                            | diskscope::config::Buffers::HugeTlb
                            | diskscope::config::Buffers::Auto
                    ),
                    "{b:?}"
                );
                b.setup.buffers = a.setup.buffers;
            }
            assert_eq!(a, &b);
        }
        let f = back.file.unwrap();
        assert_eq!((f.size_bytes, f.create), (size, i == 1));
    }
}

#[test]
fn a_job_that_would_write_into_a_file_diskscope_did_not_create_is_refused_and_the_file_kept() {
    let dir = crate::util::tmp();
    let data = crate::util::write_varied_file(&dir.path().join("mine.dat"), 1 << 16, 3);
    let job = dir.path().join("w.fio");
    std::fs::write(
        &job,
        "[global]\nfilename=mine.dat\n\n[w]\nrw=randwrite\nsize=64k\n",
    )
    .unwrap();
    let out = batch(dir.path(), &job, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}:5: option `rw`: ", job.display())),
        "{stderr}"
    );
    assert!(stderr.contains("is not a diskscope test file"), "{stderr}");
    assert_eq!(std::fs::read(dir.path().join("mine.dat")).unwrap(), data);
    assert!(!dir.path().join("out").exists());
}

#[test]
fn a_job_reading_a_file_of_its_own_measures_it_and_leaves_it_in_place() {
    let dir = crate::util::tmp();
    let data = crate::util::write_varied_file(&dir.path().join("mine.dat"), 1 << 18, 5);
    let job = dir.path().join("r.fio");
    std::fs::write(&job, "[r]\nfilename=mine.dat\nbs=16k\ninvalidate=0\n").unwrap();
    let out = batch(dir.path(), &job, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(dir.path().join("mine.dat")).unwrap(), data);
    let csv = std::fs::read_to_string(dir.path().join("out/r.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "{csv}"); // header and loops=1 row
    assert!(csv.lines().nth(1).unwrap().contains(",16384,"), "{csv}");
}

#[test]
fn a_filename_that_is_not_a_regular_file_is_refused_at_its_line() {
    let dir = crate::util::tmp();
    std::fs::create_dir(dir.path().join("adir")).unwrap();
    let job = dir.path().join("d.fio");
    std::fs::write(&job, "[global]\nsize=1m\n\n[r]\nfilename=adir\nrw=read\n").unwrap();
    let out = batch(dir.path(), &job, &["--dry-run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}:5: option `filename`: ", job.display())),
        "{stderr}"
    );
}

#[test]
fn a_randrw_job_with_rwmixread_70_plans_and_runs_as_a_70_30_mix() {
    let dir = crate::util::tmp();
    let job = jobs_dir().join("randrw.fio");
    let plan = batch(dir.path(), &job, &["--dry-run"]);
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(plan.status.success(), "{text}");
    assert!(
        text.contains("mix 70% reads, 30% writes, pattern random ← rw=randrw")
            && text.contains("rwmixread=70"),
        "{text}"
    );
    // rwmixwrite=30 on a sequential readwrite=rw job is the same mix.
    assert!(
        text.contains("mix 70% reads, 30% writes, pattern sequential ← readwrite=rw")
            && text.contains("rwmixwrite=30"),
        "{text}"
    );
    let out = batch(dir.path(), &job, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (name, ops) in [("mixed-70-30", 400u64), ("seq-mixed", 256)] {
        let mut r = csv::Reader::from_path(dir.path().join(format!("out/{name}.csv"))).unwrap();
        let h = r.headers().unwrap().clone();
        let rec = r.records().next().unwrap().unwrap();
        let get = |c: &str| rec[h.iter().position(|x| x == c).unwrap()].to_string();
        assert_eq!(get("operation"), "mix", "{name}");
        assert_eq!(get("mix_read_pct_asked"), "70", "{name}");
        let reads: u64 = get("read_ops").parse().unwrap();
        let writes: u64 = get("write_ops").parse().unwrap();
        assert_eq!(reads + writes, ops, "{name}");
        assert!(reads > writes, "{name}: {reads} reads, {writes} writes");
    }
}

#[test]
fn the_explorer_refuses_a_fio_job_it_cannot_run_at_its_file_and_line() {
    let dir = crate::util::tmp();
    let data = dir.path().join("data");
    std::fs::write(&data, vec![1u8; 1 << 16]).unwrap();
    let job = dir.path().join("mixed.fio");
    std::fs::write(
        &job,
        "; a mix at a rate\n[global]\nbs=4k\n[m]\nrw=randrw\nrate_iops=100\n",
    )
    .unwrap();
    let out = bin("diskscope")
        .arg(&data)
        .arg("--fio-job")
        .arg(&job)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: {}:6: option `rate_iops`: ", job.display())),
        "{stderr}"
    );
    // A job the explorer can run is accepted: what stops it here is the missing terminal.
    std::fs::write(&job, "[global]\nbs=4k\n[r]\nrw=randread\n").unwrap();
    let out = bin("diskscope")
        .arg(&data)
        .arg("--fio-job")
        .arg(&job)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("needs a terminal"), "{stderr}");
}

#[test]
fn the_explorer_starts_on_the_settings_of_a_jobs_first_section() {
    use diskscope::config::{Method, Op, Pattern};
    use diskscope::tui::settings::{Settings, WriteSync};
    let dir = crate::util::tmp();
    let data = dir.path().join("data");
    std::fs::write(&data, vec![1u8; 1 << 16]).unwrap();
    let job = dir.path().join("explore.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nioengine=io_uring\ndirect=1\n\n[rand-qd16]\nrw=randread\n\
             bs=8k\niodepth=16\nnumjobs=2\nruntime=3\n\n[later]\nrw=write\n",
            data.display()
        ),
    )
    .unwrap();
    let s = diskscope::cli::explorer_settings(&job, &data).unwrap();
    assert_eq!(
        s,
        Settings {
            setup: diskscope::config::Setup {
                op: Op::Read,
                method: Method::IoUring,
                block_size_bytes: 8192,
                threads: 2,
                queue_depth: 16,
                direct: true,
                cache: if s.cold() {
                    diskscope::config::CacheMode::Cold
                } else {
                    diskscope::config::CacheMode::AsIs
                },
                pattern: Pattern::Random,
                write_sync: WriteSync::None,
                buffers: diskscope::config::Buffers::DEFAULT,
                mix_read_pct: None,
                ..diskscope::config::Setup::default()
            },
            run_ms: Some(3000),
            rate: None,
        }
    );
    std::fs::write(&job, "[w]\nrw=write\nbs=1m\nioengine=psync\nfdatasync=1\n").unwrap();
    let w = diskscope::cli::explorer_settings(&job, &data).unwrap();
    assert_eq!(
        (
            w.setup.op,
            w.setup.method,
            w.setup.block_size_bytes,
            w.setup.pattern,
            w.setup.write_sync
        ),
        (
            Op::Write,
            Method::Pread,
            1 << 20,
            Pattern::Sequential,
            WriteSync::Dsync
        )
    );
}

#[test]
fn a_randrw_or_rw_job_starts_the_explorer_mixing_at_its_share_on_the_scratch_file() {
    use diskscope::config::{Op, Pattern};
    use std::path::Path;
    let dir = crate::util::tmp();
    let data = dir.path().join("data");
    std::fs::write(&data, vec![1u8; 1 << 16]).unwrap();
    let job = dir.path().join("mix.fio");
    for (text, pct, pattern) in [
        ("[m]\nrw=randrw\nrwmixread=70\nbs=4k\n", 70, Pattern::Random),
        (
            "[m]\nrw=rw\nrwmixwrite=30\nbs=4k\nioengine=io_uring\n",
            70,
            Pattern::Sequential,
        ),
        ("[m]\nrw=randrw\nbs=4k\n", 50, Pattern::Random),
    ] {
        std::fs::write(&job, text).unwrap();
        let s = diskscope::cli::explorer_settings(&job, &data)
            .unwrap_or_else(|e| panic!("{text}: {e:#}"));
        assert_eq!(
            (
                s.setup.op,
                s.setup.mix_read_pct,
                s.setup.pattern,
                s.is_mixed()
            ),
            (Op::Write, Some(pct), pattern, true),
            "{text}"
        );
        assert_eq!(s.op_text(), format!("mix {pct}/{}", 100 - pct));
        // A mix runs on the scratch file, never on the explored one.
        let spec = s.spec(&data, Path::new("/scratch"), 1 << 16);
        assert_eq!(
            (spec.target.path.as_path(), spec.setup.mix_read_pct),
            (Path::new("/scratch"), Some(pct))
        );
    }
    // A method that cannot mix is refused at its line, as --batch refuses it.
    std::fs::write(&job, "[m]\nrw=randrw\nioengine=mmap\n").unwrap();
    let e = format!(
        "{:#}",
        diskscope::cli::explorer_settings(&job, &data).unwrap_err()
    );
    assert!(e.contains("mix.fio:3:"), "{e}");
}

/// Whether the `fio` program runs here (`.ci/run` installs it).
fn fio_installed() -> bool {
    std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_fio_result_and_a_diskscope_run_of_the_same_job_compare_point_by_point() {
    if !fio_installed() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = crate::util::tmp();
    let job = dir.path().join("job.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=psync\nfilename=data.bin\nsize=4m\n\n[seqread]\nrw=read\nbs=64k\n\n\
         [randread]\nstonewall\nrw=randread\nbs=4k\nnumber_ios=256\n",
    )
    .unwrap();
    // fio lays out data.bin and reads it; diskscope then reads the same file with the same job.
    let fio = std::process::Command::new("fio")
        .current_dir(dir.path())
        .args(["--output-format=json", "--output=fio.json", "job.fio"])
        .output()
        .unwrap();
    assert!(
        fio.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let ds = bin("diskscope")
        .current_dir(dir.path())
        .args(["--batch", "job.fio", "--out", "out"])
        .output()
        .unwrap();
    assert!(
        ds.status.success(),
        "diskscope: {}",
        String::from_utf8_lossy(&ds.stderr)
    );
    let cmp = bin("diskscope")
        .current_dir(dir.path())
        .args(["compare", "fio.json", "out", "--csv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&cmp.stderr);
    assert!(cmp.status.success(), "compare: {stderr}");
    assert!(stderr.contains("matched in diskscope's words"), "{stderr}");
    let mut r = csv::Reader::from_reader(cmp.stdout.as_slice());
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let mut paired = std::collections::BTreeSet::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        let verdict = &rec[col("verdict")];
        assert!(
            verdict != "only_old" && verdict != "only_new",
            "a point did not pair: {rec:?}"
        );
        // Both sides measured the point once: fio's document and diskscope's one repetition.
        assert_eq!(
            (&rec[col("old_n")], &rec[col("new_n")]),
            ("1", "1"),
            "{rec:?}"
        );
        paired.insert((
            rec[col("experiment")].to_string(),
            rec[col("method")].to_string(),
            rec[col("block_size_bytes")].to_string(),
            rec[col("pattern")].to_string(),
            rec[col("cache")].to_string(),
        ));
    }
    let want: std::collections::BTreeSet<_> = [
        ("randread", "pread", "4096", "random", "cold"),
        ("seqread", "pread", "65536", "sequential", "cold"),
    ]
    .into_iter()
    .map(|(a, b, c, d, e)| (a.into(), b.into(), c.into(), d.into(), e.into()))
    .collect();
    assert_eq!(paired, want);
}

#[test]
fn a_rate_iops_job_plans_an_open_loop_over_all_its_clones_and_runs_with_response_times() {
    let p = diskscope::batch::load(
        &jobs_dir().join("rate-iops.fio"),
        Some(Path::new("/nonexistent-diskscope-out")),
        false,
    )
    .unwrap();
    let s = &p.experiments[0].points[0];
    // fio's rate_iops is per clone: 250/s × numjobs=2 is diskscope's 500/s over two threads.
    assert_eq!((s.setup.threads, s.setup.rate()), (2, Some(500.0)));
    assert_eq!(s.setup.arrival, diskscope::config::Arrival::Poisson);
    assert!(
        p.experiments[0]
            .notes
            .iter()
            .any(|n| n.contains("open loop at 500 operations/s") && n.contains("rate_iops=250")),
        "{:?}",
        p.experiments[0].notes
    );
    let dir = crate::util::tmp();
    let out = batch(dir.path(), &jobs_dir().join("rate-iops.fio"), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = crate::util::csv_file_maps(&dir.path().join("out/paced.csv"));
    assert!(!rows.is_empty());
    for r in &rows {
        let asked: f64 = r["rate_iops_asked"].parse().unwrap();
        assert_eq!(asked, 500.0, "{r:?}");
        // The response time runs from the intended start, so it is never below the service time.
        let (resp, service): (f64, f64) = (
            r["resp_p99_us"].parse().unwrap(),
            r["lat_p99_us"].parse().unwrap(),
        );
        assert!(resp >= service * 0.999, "{r:?}");
    }
}
