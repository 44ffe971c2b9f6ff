//! The machine's measured ceilings for one device, as stored by `diskscope limits`: JSON under
//! the user's cache directory (`$XDG_CACHE_HOME` or `~/.cache`, then
//! `diskscope/profiles/<host>-<device>.json`).
//!
//! A profile is outside input like any other file: another process (or a user) can put a FIFO,
//! a symbolic link to `/dev/zero` or a hand-edited number there. So it is read with
//! [`read_capped`] (no symlink followed, nothing but a regular file of at most
//! [`MAX_PROFILE_BYTES`], never a blocking open) and checked by [`Profile::validate`] (every
//! ceiling finite, positive and below a physical bound) before the model sees it. A profile that
//! fails either is ignored with one warning line naming the file and the key; a missing one just
//! means "no explanation".
//!
//! A profile also knows how far to trust it: the [`Spread`] of the tries behind each ceiling
//! (a run above its bound by less than that spread is within the profile's error, one above by
//! more is not explained by it), and its [`Provenance`]: the file it read, whether it was a
//! `--quick` one, and the load and CPU steal it was measured under. Profiles stored before these
//! existed still load (the fields default to "unknown") and are said to have an unknown error. A
//! profile from another kernel, another device or older than [`STALE_AFTER_DAYS`] is still used
//! but said to be stale.
//!
//! A ceiling holds for one kind of buffer memory (`--buffers`): the kernel's copy from the page
//! cache into a buffer and an O_DIRECT request of 1 MiB both run at very different speeds into
//! 4 KiB pages and into 2 MiB pages (2.5 against 9 GiB/s, 1.4 against 2.4 GiB/s on the lab VM,
//! issue 20). So every copy level and every device figure records the memory it was measured
//! with ([`MemoryLevel::buffers`], [`DeviceCeiling::buffers`]), `limits` measures both plain and
//! huge-page buffers, and the model asks for the run's own ([`same_memory`]): a run whose memory
//! has no ceiling here is told so instead of being bounded by the other's. Profiles stored before
//! (version 2) did not record it and are measured again.
//!
//! The parts: `records` (what is stored, and the look-ups), `validate` (numbers that may be
//! used at all), `trust` (how far to trust a valid profile) and `store` (where it lives, how it
//! is read and written).

mod records;
mod store;
mod trust;
mod validate;

pub use self::records::*;
pub use self::store::*;
pub use self::trust::*;
pub use self::validate::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Buffers;
    use crate::explain::context::Context;
    use std::path::{Path, PathBuf};

    #[test]
    fn the_profile_lives_under_xdg_cache_home_else_home_and_never_in_a_unit_test() {
        let os = |s: &str| Some(std::ffi::OsString::from(s));
        assert_eq!(
            profile_dir_in(os("/c"), os("/h")),
            Some(PathBuf::from("/c/diskscope/profiles"))
        );
        for xdg in [None, os(""), os("relative/cache")] {
            assert_eq!(
                profile_dir_in(xdg, os("/h")),
                Some(PathBuf::from("/h/.cache/diskscope/profiles"))
            );
        }
        assert_eq!(profile_dir_in(None, os("")), None);
        assert_eq!(profile_dir_in(None, None), None);
        // This process is a unit test: the user's cache is out of reach.
        assert_eq!(profile_dir(), None);
    }

    fn profile_on(kernel: &str, measured_unix_s: u64) -> Profile {
        Profile {
            version: PROFILE_VERSION,
            measured_unix_s,
            context: Context {
                host: "h".into(),
                kernel: kernel.into(),
                cpu_count: 2,
                ..Default::default()
            },
            methods: vec![],
            memory: vec![],
            devices: vec![],
            cold_readahead_mib_s: None,
            notes: vec![],
            spread: None,
            provenance: None,
            cores_now: None,
        }
    }

    #[test]
    fn a_profile_is_stale_after_a_kernel_change_or_a_month_and_fresh_otherwise() {
        let now_ctx = profile_on("6.8.0", 0).context;
        let day = 86_400;
        assert_eq!(
            profile_on("6.8.0", 100 * day).staleness(&now_ctx, 101 * day),
            None
        );
        let k = profile_on("6.1.0", 100 * day)
            .staleness(&now_ctx, 101 * day)
            .unwrap();
        assert!(
            k.contains("kernel changed (6.1.0 → 6.8.0)") && k.contains("--refresh"),
            "{k}"
        );
        let old = profile_on("6.8.0", 0)
            .staleness(&now_ctx, 45 * day)
            .unwrap();
        assert!(old.contains("measured 45 days ago"), "{old}");
    }

    #[test]
    fn profile_file_names_are_host_and_device_without_path_separators() {
        let mut p = profile_on("6.8.0", 0);
        p.context.host = "a/b c".into();
        assert_eq!(profile_file_name(&p.context), "a_b_c-unknown.json");
    }

    #[test]
    fn the_memory_ceiling_for_a_thread_count_is_the_largest_measured_not_above_it() {
        let mut p = profile_on("6.8.0", 0);
        for t in [1, 2, 4] {
            p.memory.push(MemoryCeiling {
                threads: t,
                copy_mib_s: t as f64,
                xor_mib_s: t as f64,
                read_levels: vec![],
            });
        }
        assert_eq!(p.memory_for(3).unwrap().threads, 2);
        assert_eq!(p.memory_for(64).unwrap().threads, 4);
        assert_eq!(p.memory_for(0).unwrap().threads, 1);
    }

    #[test]
    fn copy_and_xor_slow_down_between_the_cache_and_memory_buffer_sizes() {
        let level = |buffer_bytes, copy_xor_mib_s| MemoryLevel {
            buffer_bytes,
            copy_xor_mib_s,
            buffers: Buffers::Plain,
        };
        let m = MemoryCeiling {
            threads: 1,
            copy_mib_s: 8000.0,
            xor_mib_s: 16000.0,
            read_levels: vec![level(1 << 19, 10000.0), level(1 << 27, 2500.0)],
        };
        let plain = |b| m.copy_xor_mib_s(b, Buffers::Plain).unwrap();
        assert_eq!(plain(4096), 10000.0);
        assert_eq!(plain(1 << 30), 2500.0);
        // Halfway in log size: time per byte halfway between 1/10000 and 1/2500.
        let mid = plain(1 << 23);
        assert!(
            (mid - 1.0 / ((1.0 / 10000.0 + 1.0 / 2500.0) / 2.0)).abs() < 1.0,
            "{mid}"
        );
        let none = MemoryCeiling {
            read_levels: vec![],
            ..m.clone()
        };
        let apart = none.copy_xor_mib_s(4096, Buffers::Thp).unwrap();
        assert!((apart - 1.0 / (1.0 / 8000.0 + 1.0 / 16000.0)).abs() < 1e-6);
    }

    #[test]
    fn a_copy_level_or_device_figure_bounds_only_runs_with_the_same_buffer_memory() {
        let level = |buffer_bytes, copy_xor_mib_s, buffers| MemoryLevel {
            buffer_bytes,
            copy_xor_mib_s,
            buffers,
        };
        let m = MemoryCeiling {
            threads: 1,
            copy_mib_s: 8000.0,
            xor_mib_s: 16000.0,
            read_levels: vec![
                level(1 << 16, 2500.0, Buffers::Plain),
                level(1 << 16, 9000.0, Buffers::Thp),
            ],
        };
        assert_eq!(m.copy_xor_mib_s(1 << 20, Buffers::Plain), Some(2500.0));
        // thp and hugetlb are the same memory to the copy; malloc's offset buffers are not.
        assert_eq!(m.copy_xor_mib_s(1 << 20, Buffers::HugeTlb), Some(9000.0));
        assert_eq!(m.copy_xor_mib_s(1 << 20, Buffers::Malloc), None);
        assert_eq!(m.level_memories(), vec![Buffers::Plain, Buffers::Thp]);
        let p = Profile::synthetic_example();
        assert!(p.device_for(Buffers::HugeTlb).is_some());
        assert!(p.device_for(Buffers::Plain).is_none());
        assert!(!same_memory(Buffers::Auto, Buffers::Auto));
        assert_eq!(resolved(Buffers::Auto, true), Buffers::Thp);
        assert_eq!(resolved(Buffers::Auto, false), Buffers::Plain);
        assert_eq!(resolved(Buffers::Malloc, true), Buffers::Malloc);
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix("diskscope-profile")
            .tempdir()
            .unwrap()
    }

    #[test]
    fn a_fifo_profile_is_refused_without_blocking() {
        let d = tmp();
        let f = d.path().join("p.json");
        rustix::fs::mkfifoat(rustix::fs::CWD, &f, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
        let e = read_capped(&f).unwrap_err();
        assert!(matches!(e, ProfileError::NotRegular("a FIFO")), "{e}");
    }

    #[test]
    fn a_symlinked_profile_is_never_followed_even_to_a_good_profile() {
        let d = tmp();
        let good = d.path().join("good.json");
        std::fs::write(
            &good,
            serde_json::to_string(&Profile::synthetic_example()).unwrap(),
        )
        .unwrap();
        for target in [Path::new("/dev/zero"), good.as_path()] {
            let link = d.path().join("link.json");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(target, &link).unwrap();
            let e = load_path(&link).unwrap_err();
            assert!(matches!(e, ProfileError::Symlink), "{target:?}: {e}");
        }
        assert!(load_path(&good).unwrap().is_some());
    }

    #[test]
    fn a_profile_over_a_mebibyte_is_refused_unread() {
        let d = tmp();
        let f = d.path().join("big.json");
        std::fs::write(&f, vec![b' '; (MAX_PROFILE_BYTES + 1) as usize]).unwrap();
        let e = read_capped(&f).unwrap_err();
        assert!(matches!(e, ProfileError::TooLarge(_)), "{e}");
        assert!(read_capped(&d.path().join("none.json")).unwrap().is_none());
    }

    #[test]
    fn zero_negative_huge_and_missing_ceilings_are_refused_with_their_key() {
        let base = Profile::synthetic_example();
        assert_eq!(base.validate(), Ok(()));
        type Spoil = fn(&mut Profile);
        let cases: Vec<(Spoil, &str)> = vec![
            (|p| p.methods[0].ops_per_s = 0.0, "methods[read].ops_per_s"),
            (
                |p| p.memory[1].copy_mib_s = -1.0,
                "memory[threads=4].copy_mib_s",
            ),
            (
                |p| p.memory[0].xor_mib_s = 1e308,
                "memory[threads=1].xor_mib_s",
            ),
            (
                |p| p.devices[0].rand4k_qd1_iops = u64::MAX as f64,
                "devices[thp].rand4k_qd1_iops",
            ),
            (
                |p| p.devices[0].seq_qd1_mib_s = f64::NAN,
                "devices[thp].seq_qd1_mib_s",
            ),
            (
                |p| p.cold_readahead_mib_s = Some(f64::INFINITY),
                "cold_readahead_mib_s",
            ),
            (|p| p.memory[0].threads = 0, "memory[threads=0].threads"),
            (
                |p| p.spread.as_mut().unwrap().memory_pct = 250.0,
                "spread.memory_pct",
            ),
            (
                |p| p.provenance.as_mut().unwrap().steal_pct = -3.0,
                "provenance.steal_pct",
            ),
        ];
        for (spoil, key) in cases {
            let mut p = base.clone();
            spoil(&mut p);
            let e = p.validate().unwrap_err();
            assert_eq!(e.key, key, "{e}");
            assert!(
                !e.to_string().contains("inf") || key == "cold_readahead_mib_s",
                "{e}"
            );
        }
        // Zero means "not measured" for the QD 32 figures.
        let mut p = base;
        p.devices[0].seq_qd32_mib_s = 0.0;
        p.devices[0].rand4k_qd32_iops = 0.0;
        assert_eq!(p.validate(), Ok(()));
    }

    #[test]
    fn an_invalid_profile_is_ignored_with_one_line_naming_the_file_and_the_key() {
        let d = tmp();
        let f = d.path().join("a\u{1b}]0;x\u{7}.json");
        let mut p = Profile::synthetic_example();
        p.memory[0].copy_mib_s = 1e308;
        std::fs::write(&f, serde_json::to_string(&p).unwrap()).unwrap();
        let e = load_path(&f).unwrap_err();
        let line = ignored_warning(&f, &e);
        assert!(!line.contains('\n') && !line.contains('\u{1b}'), "{line}");
        assert!(line.contains("a\\u{1b}]0;x\\u{7}.json"), "{line}");
        assert!(
            line.contains("`memory[threads=1].copy_mib_s` = 1e308"),
            "{line}"
        );
        assert!(line.contains("limits --refresh"), "{line}");
    }

    #[test]
    fn a_profile_stored_before_spread_and_provenance_still_loads_with_an_unknown_error() {
        let mut v = serde_json::to_value(Profile::synthetic_example()).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("spread");
        o.remove("provenance");
        let d = tmp();
        let f = d.path().join("old.json");
        std::fs::write(&f, v.to_string()).unwrap();
        let p = load_path(&f).unwrap().unwrap();
        assert!(p.spread.is_none() && p.provenance.is_none());
        let doubt = p.doubts(&p.context, p.measured_unix_s).unwrap();
        assert!(doubt.contains("its error is unknown"), "{doubt}");
        assert_eq!(Profile::synthetic_example().doubts(&p.context, 0), None);
    }

    #[test]
    fn a_profile_measured_under_load_or_quick_says_so() {
        let mut p = Profile::synthetic_example();
        let pv = p.provenance.as_mut().unwrap();
        pv.others_cpu_pct = 60.0;
        pv.steal_pct = 12.0;
        pv.quick = true;
        let d = p.doubts(&p.context, 0).unwrap();
        assert!(
            d.contains("measured under load (other processes used 60% of the CPUs, 12% stolen"),
            "{d}"
        );
        assert!(
            d.contains("--quick") && d.ends_with("run `diskscope limits --refresh`"),
            "{d}"
        );
        let mut now = p.context.clone();
        now.kernel = "\u{1b}[2J".into();
        let d = p.doubts(&now, 0).unwrap();
        assert!(
            d.starts_with("the limits profile is stale: kernel changed") && !d.contains('\u{1b}'),
            "{d}"
        );
    }
}
