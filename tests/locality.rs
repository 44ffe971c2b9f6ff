//! The locality lab from the outside: layout generation and reuse, trace parsing, the batch entry
//! point and the `diskscope locality` command.

use crate::util::{bin, tmp};
use diskscope::config::{CacheMode, Pattern};
use diskscope::locality::bench::{prepare_cache, LayoutKind};
use diskscope::locality::index::read_index;
use diskscope::locality::layout::{
    ensure, fill_content, remove_layout, small_file_rel, Layout, LayoutSpec, INDEX_NAME,
    MANIFEST_NAME,
};
use diskscope::locality::params::{Params, Syntax};
use diskscope::locality::{run_sweep_experiment, LocalityParams};

/// A sweep's `params` table, read and checked as the planner does.
fn params_of(t: &toml::Table) -> Params {
    LocalityParams::from_toml(t)
        .unwrap()
        .validate(Syntax::Toml)
        .unwrap()
}
use diskscope::locality::trace::{first_access_order, parse_trace};
use predicates::prelude::*;
use predicates::str::contains;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

const FILES: u32 = 300;
/// Not a multiple of the page size, so offsets are not accidentally aligned.
const SIZE: u64 = 3000;

fn make(dir: &Path, pack_ids: &[u32], label: &str, log: &mut Vec<String>) -> Layout {
    let spec = LayoutSpec {
        files: FILES,
        file_size_bytes: SIZE,
        fanout: 250,
        pack_ids,
        pack_label: label,
        syntax: Syntax::Cli,
    };
    ensure(dir, &spec, &AtomicBool::new(false), &mut |l| log.push(l)).unwrap()
}

/// Every id read through the packed file's index equals its small file and its expected contents.
fn assert_layouts_agree(layout: &Layout) {
    let packed = std::fs::File::open(&layout.packed_path).unwrap();
    let mut expected = vec![0u8; SIZE as usize];
    let mut from_packed = vec![0u8; SIZE as usize];
    for id in 0..FILES {
        fill_content(id, &mut expected);
        let small = std::fs::read(&layout.paths[id as usize]).unwrap();
        assert_eq!(small, expected, "small file of id {id}");
        packed
            .read_exact_at(&mut from_packed, layout.offsets[id as usize])
            .unwrap();
        assert_eq!(from_packed, expected, "packed contents of id {id}");
    }
}

#[test]
fn generation_puts_each_id_in_its_hashed_directory_and_packs_the_same_bytes() {
    let t = tmp();
    let dir = t.path().join("set");
    let ids: Vec<u32> = (0..FILES).collect();
    let layout = make(&dir, &ids, "id", &mut Vec::new());
    assert_eq!(layout.paths[299], dir.join("0/4/9/299.txt"));
    assert_eq!(layout.paths[42], dir.join(small_file_rel(42, 250)));
    assert!(dir.join("0/4/9/49.txt").is_file());
    for p in &layout.paths {
        assert_eq!(std::fs::metadata(p).unwrap().len(), SIZE, "{}", p.display());
    }
    let packed_len = std::fs::metadata(&layout.packed_path).unwrap().len();
    assert_eq!(packed_len, FILES as u64 * SIZE);
    // The index round-trips: offsets read back from disk are the ones the layout uses.
    let offsets = read_index(&dir.join(INDEX_NAME), FILES, SIZE).unwrap();
    assert_eq!(offsets, layout.offsets);
    assert_eq!(offsets[7], 7 * SIZE);
    assert_layouts_agree(&layout);
}

#[test]
fn packing_in_trace_order_puts_first_accessed_ids_first_with_the_same_contents() {
    let t = tmp();
    let dir = t.path().join("set");
    let order = first_access_order(&[250, 3, 250, 17], FILES);
    let layout = make(&dir, &order, "trace", &mut Vec::new());
    assert_eq!(layout.offsets[250], 0);
    assert_eq!(layout.offsets[3], SIZE);
    assert_eq!(layout.offsets[17], 2 * SIZE);
    assert_eq!(layout.offsets[0], 3 * SIZE);
    assert_layouts_agree(&layout);
}

#[test]
fn a_matching_layout_is_reused_and_a_different_pack_order_rewrites_only_the_packed_file() {
    let t = tmp();
    let dir = t.path().join("set");
    let ids: Vec<u32> = (0..FILES).collect();
    let mut log = Vec::new();
    make(&dir, &ids, "id", &mut log);
    assert!(log.iter().any(|l| l.starts_with("generated")), "{log:?}");
    let mut log = Vec::new();
    make(&dir, &ids, "id", &mut log);
    assert!(log.iter().any(|l| l.starts_with("reusing")), "{log:?}");
    let mut log = Vec::new();
    let reversed: Vec<u32> = (0..FILES).rev().collect();
    let layout = make(&dir, &reversed, "trace", &mut log);
    assert!(!log.iter().any(|l| l.starts_with("generated")), "{log:?}");
    assert!(log.iter().any(|l| l.starts_with("wrote")), "{log:?}");
    assert_eq!(layout.offsets[FILES as usize - 1], 0);
    assert_layouts_agree(&layout);
}

#[test]
fn a_directory_with_other_files_is_refused_and_left_alone() {
    let t = tmp();
    std::fs::write(t.path().join("notes.txt"), "mine").unwrap();
    let spec = LayoutSpec {
        files: 10,
        file_size_bytes: 100,
        fanout: 250,
        pack_ids: &(0..10).collect::<Vec<_>>(),
        pack_label: "id",
        syntax: Syntax::Cli,
    };
    let err = ensure(t.path(), &spec, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert!(format!("{err:#}").contains("--dir"), "{err:#}");
    assert!(remove_layout(t.path()).is_err());
    let names: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
    assert_eq!(
        std::fs::read_to_string(t.path().join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn an_interrupted_generation_leaves_nothing_behind() {
    let t = tmp();
    let dir = t.path().join("set");
    let spec = LayoutSpec {
        files: 10,
        file_size_bytes: 100,
        fanout: 250,
        pack_ids: &(0..10).collect::<Vec<_>>(),
        pack_label: "id",
        syntax: Syntax::Cli,
    };
    let err = ensure(&dir, &spec, &AtomicBool::new(true), &mut |_| {}).unwrap_err();
    assert!(format!("{err:#}").contains("interrupted"), "{err:#}");
    assert!(!dir.exists());
}

#[test]
fn cold_preparation_evicts_both_layouts_and_warm_loads_them() {
    let t = tmp();
    let dir = t.path().join("set");
    let layout = make(&dir, &(0..FILES).collect::<Vec<_>>(), "id", &mut Vec::new());
    let warm = prepare_cache(&layout, LayoutKind::Dir, CacheMode::Warm).unwrap();
    assert!(warm > 99.0, "warm dir layout {warm}% resident");
    let cold_dir = prepare_cache(&layout, LayoutKind::Dir, CacheMode::Cold).unwrap();
    let cold_packed = prepare_cache(&layout, LayoutKind::Packed, CacheMode::Cold).unwrap();
    if cold_dir > 50.0 {
        eprintln!("skipping the eviction check: this file system ignores POSIX_FADV_DONTNEED");
        return;
    }
    assert!(
        cold_dir < 5.0 && cold_packed < 5.0,
        "{cold_dir}% / {cold_packed}%"
    );
}

#[test]
fn a_trace_of_ids_is_read_in_order_with_repeats_comments_and_blank_lines() {
    let ids = parse_trace("# a comment\n5\n\n  7 \n5\n0\n", 10).unwrap();
    assert_eq!(ids, vec![5, 7, 5, 0]);
}

#[test]
fn common_log_format_request_paths_map_to_the_file_number() {
    let log = concat!(
        "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /2/3/4/1234.txt HTTP/1.0\" 200 2326\n",
        "10.0.0.2 - - [10/Oct/2000:13:55:37 -0700] \"GET /0/0/7/7.txt HTTP/1.1\" 304 -\n",
        "10.0.0.3 - - [10/Oct/2000:13:55:38 -0700] \"GET /files/0042.txt?x=1 HTTP/1.1\" 200 14336 ",
        "\"http://example.com/\" \"Mozilla/5.0 (X11)\"\n",
    );
    assert_eq!(parse_trace(log, 2000).unwrap(), vec![1234, 7, 42]);
}

#[test]
fn malformed_trace_lines_are_reported_with_their_line_number() {
    let e = parse_trace("1\n2\nthree\n4\n", 10).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.to_string().starts_with("line 3:"), "{e}");

    let broken_clf = "1\n10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /5.txt HTTP/1.0\n";
    let e = parse_trace(broken_clf, 10).unwrap_err();
    assert_eq!(e.line, 2, "{e}");

    let no_number =
        "10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /index.html HTTP/1.0\" 200 5\n";
    let e = parse_trace(no_number, 10).unwrap_err();
    assert!(e.to_string().contains("no file number"), "{e}");

    let e = parse_trace("3\n\n12\n", 10).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.to_string().contains("--files 13"), "{e}");

    assert!(parse_trace("# only a comment\n", 10).is_err());
}

#[test]
fn the_batch_kind_emits_one_result_per_layout_order_and_repetition() {
    let t = tmp();
    let params: toml::Table = toml::from_str(&format!(
        "dir = \"{}\"\nfiles = 40\nfile_size = \"2K\"\norder = [\"sequential\", \"random\", \"trace\"]\nreps = 2\ncache = \"warm\"\nfanout = 10\nseed = 3",
        t.path().join("set").display()
    ))
    .unwrap();
    let params = params_of(&params);
    let mut results = Vec::new();
    run_sweep_experiment("small", &params, &AtomicBool::new(false), &mut |r| {
        results.push(r);
        Ok(())
    })
    .unwrap();
    assert_eq!(results.len(), 2 * 3 * 2);
    for r in &results {
        assert_eq!(r.identity.experiment, "small");
        assert!(
            matches!(r.setup.method.as_str(), "dir" | "packed"),
            "{}",
            r.setup.method
        );
        assert_eq!(r.setup.block_size_bytes, 2048);
        assert_eq!(r.setup.cache, CacheMode::Warm);
        assert_eq!(r.figures.bytes, r.figures.ops * 2048);
        assert!(
            r.figures.seconds > 0.0 && r.figures.mib_s > 0.0 && r.figures.lat_p50_us > 0.0,
            "{r:?}"
        );
    }
    for order in ["sequential", "random", "trace"] {
        let of = |m: &str| {
            results
                .iter()
                .filter(|r| r.setup.pattern.as_str() == order && r.setup.method.as_str() == m)
                .count()
        };
        assert_eq!((of("dir"), of("packed")), (2, 2), "{order}");
    }
    // Both layouts read the same bytes for the same access list.
    let dir_seq = results
        .iter()
        .find(|r| r.setup.pattern == Pattern::Sequential && r.setup.method.as_str() == "dir");
    let packed_seq = results
        .iter()
        .find(|r| r.setup.pattern == Pattern::Sequential && r.setup.method.as_str() == "packed");
    assert_eq!(
        dir_seq.unwrap().figures.xor,
        packed_seq.unwrap().figures.xor
    );
}

#[test]
fn the_batch_kind_names_unknown_keys_and_stops_when_asked() {
    let bad: toml::Table = toml::from_str("files = 10\nblocksize = 4").unwrap();
    let err = LocalityParams::from_toml(&bad).unwrap_err();
    assert!(
        err.to_string().starts_with("blocksize: unknown key"),
        "{err}"
    );

    let t = tmp();
    let params: toml::Table = toml::from_str(&format!(
        "dir = \"{}\"\nfiles = 10",
        t.path().join("s").display()
    ))
    .unwrap();
    let params = params_of(&params);
    let mut n = 0;
    run_sweep_experiment("x", &params, &AtomicBool::new(true), &mut |_| {
        n += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(n, 0);
}

#[test]
fn the_command_prints_a_table_per_order_reuses_the_layout_and_cleans_up() {
    let t = tmp();
    let dir = t.path().join("set");
    let d = dir.to_str().unwrap();
    let args = [
        "locality",
        "--dir",
        d,
        "--files",
        "200",
        "--file-size",
        "4K",
        "--reps",
        "2",
        "--cache",
        "warm,cold",
    ];
    let out = bin("diskscope").args(args).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for order in ["sequential", "random", "trace"] {
        for cache in ["warm", "cold"] {
            assert!(
                stdout.contains(&format!("order {order}, cache {cache}")),
                "{stdout}"
            );
        }
    }
    assert_eq!(stdout.matches("dir / packed:").count(), 6, "{stdout}");
    assert!(dir.join(MANIFEST_NAME).is_file());
    bin("diskscope")
        .args([
            "locality",
            "--dir",
            d,
            "--files",
            "200",
            "--file-size",
            "4K",
            "--reps",
            "1",
        ])
        .args(["--order", "sequential"])
        .assert()
        .success()
        .stderr(contains("reusing the layout"));
    bin("diskscope")
        .args(["locality", "--dir", d, "--clean"])
        .assert()
        .success();
    assert!(!dir.exists());
}

#[test]
fn the_command_replays_an_access_log_and_can_pack_in_its_order() {
    let t = tmp();
    let log = t.path().join("access.log");
    std::fs::write(
        &log,
        concat!(
            "10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /0/0/7/7.txt HTTP/1.0\" 200 14336\n",
            "10.0.0.1 - - [10/Oct/2000:13:55:37 -0700] \"GET /0/0/8/8.txt HTTP/1.0\" 200 14336\n",
            "10.0.0.2 - - [10/Oct/2000:13:55:38 -0700] \"GET /0/0/7/7.txt HTTP/1.0\" 304 -\n",
        ),
    )
    .unwrap();
    let dir = t.path().join("set");
    bin("diskscope")
        .args(["locality", "--dir", dir.to_str().unwrap(), "--files", "50"])
        .args([
            "--file-size",
            "1K",
            "--reps",
            "1",
            "--order",
            "trace",
            "--pack-order",
            "trace",
        ])
        .arg("--trace")
        .arg(&log)
        .assert()
        .success()
        .stdout(contains("order trace, cache warm: 3 accesses"))
        .stderr(contains("trace: 3 accesses to 2 distinct ids").and(contains("(trace order)")));
    let offsets = read_index(&dir.join(INDEX_NAME), 50, 1024).unwrap();
    assert_eq!((offsets[7], offsets[8], offsets[0]), (0, 1024, 2048));
}

#[test]
fn the_command_rejects_bad_input_in_one_line_naming_the_argument() {
    let t = tmp();
    let d = t.path().join("set");
    let d = d.to_str().unwrap();
    for (args, needle) in [
        (vec!["--files", "0"], "--files"),
        (vec!["--file-size", "huge"], "--file-size"),
        (vec!["--order", "zigzag"], "--order"),
        (vec!["--cache", "lukewarm"], "--cache"),
        (vec!["--pack-order", "size"], "--pack-order"),
        (vec!["--reps", "0"], "--reps"),
    ] {
        bin("diskscope")
            .args(["locality", "--dir", d])
            .args(&args)
            .assert()
            .code(2)
            .stderr(contains(needle));
    }
    let trace = t.path().join("trace.txt");
    std::fs::write(&trace, "1\n2\noops\n").unwrap();
    let out = bin("diskscope")
        .args([
            "locality", "--dir", d, "--files", "20", "--order", "trace", "--trace",
        ])
        .arg(&trace)
        .assert()
        .code(2)
        .stderr(contains("--trace").and(contains("line 3")));
    assert_eq!(
        String::from_utf8_lossy(&out.get_output().stderr)
            .lines()
            .count(),
        1
    );
    assert!(
        !Path::new(d).exists(),
        "a bad trace must not leave a layout behind"
    );
    bin("diskscope")
        .args(["locality", "--dir", d, "--order", "random", "--trace"])
        .arg(&trace)
        .assert()
        .code(2)
        .stderr(contains("--trace: the trace would not be used"));
}

#[test]
fn ctrl_c_during_generation_removes_the_partial_layout() {
    let t = tmp();
    let dir = t.path().join("set");
    let child = crate::util::command("diskscope")
        .args([
            "locality",
            "--dir",
            dir.to_str().unwrap(),
            "--files",
            "200000",
        ])
        .args(["--file-size", "512", "--reps", "1", "--order", "sequential"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !dir.join(MANIFEST_NAME).exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "generation never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(
        !dir.exists(),
        "the partial layout was left behind: {stderr}"
    );
}

#[test]
fn a_sweep_experiment_names_its_keys_not_the_flags_when_its_directory_is_refused() {
    let t = tmp();
    let dir = t.path().join("photos");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("holiday.jpg"), b"precious").unwrap();
    let params: toml::Table =
        toml::from_str(&format!("dir = \"{}\"\nfiles = 10", dir.display())).unwrap();
    let err = run_sweep_experiment(
        "x",
        &params_of(&params),
        &AtomicBool::new(false),
        &mut |_| Ok(()),
    )
    .unwrap_err()
    .to_string();
    assert!(err.starts_with("dir: "), "{err}");
    assert!(!err.contains("--dir"), "{err}");
    assert_eq!(std::fs::read(dir.join("holiday.jpg")).unwrap(), b"precious");
}
