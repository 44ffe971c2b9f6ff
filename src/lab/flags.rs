//! The settings of a run as a person types them: one definition per flag (its long name, the
//! older spellings as aliases, its help) that is both a command line's clap `Args` and a
//! sweep's `params = { ... }` keys (serde), parsed into a [`Setup`] by one function
//! ([`SetupFlags::apply`]).
//!
//! Why it is shaped so: `run`, `run2` and `knee` used to declare `--method`, `--threads`,
//! `--queue-depth`, `--pattern`, `--cache` and `--direct` each in their own struct, with their
//! own help, and the knee lacked `--buffers`, `--submit` and `--checksum`; a flag added to one
//! was missing from the others. Here every field is an `Option` with no default of its own: a
//! flag not given leaves the command's starting [`Setup`] as it is, so each command's defaults
//! are its starting setup (`run`'s method `read`, the knee's pattern `random`), declared once
//! where the command builds it, and the help shows them ([`show_default`]).

use crate::config::{Buffers, CacheMode, Checksum, Method, Pattern, Setup, SubmitPolicy};
use crate::config::{Named, UsageError};
use serde::Deserialize;

/// The settings every measuring command takes (`run`, `run2`, `knee`; a knee sweep's `params`).
/// Block size, the operation and the rate are not here: each command takes them in its own form
/// (`run`'s positional `BLOCK_SIZE` and `-r|-w`, the knee's searched rate).
#[derive(Debug, Clone, Default, clap::Args, Deserialize)]
#[serde(default)]
pub struct SetupFlags {
    /// I/O method: read, pread, mmap, io_uring, buffered
    #[arg(long, value_name = "METHOD")]
    pub method: Option<String>,
    /// Worker threads, each with its own descriptor and a disjoint range
    #[arg(long, short = 't', value_name = "N", allow_negative_numbers = true)]
    pub threads: Option<usize>,
    /// Open with O_DIRECT (bypass the page cache); needs a block size multiple of 512
    #[arg(long)]
    pub direct: bool,
    /// Page cache before the run: as-is, warm, cold (fsync + fadvise), cold-all (root: drop_caches)
    #[arg(long, value_name = "MODE")]
    pub cache: Option<String>,
    /// io_uring queue depth (operations in flight per thread; the synchronous methods have 1)
    #[arg(long, alias = "qd", value_name = "N", allow_negative_numbers = true)]
    #[serde(alias = "qd")]
    pub queue_depth: Option<u32>,
    /// Offsets: sequential or random (block-aligned)
    #[arg(long, value_name = "ORDER")]
    pub pattern: Option<String>,
    /// io_uring submission: batch (fill every free slot, one submit-and-wait) or each (submit
    /// every operation as it is queued, like fio)
    #[arg(long, value_name = "POLICY")]
    pub submit: Option<String>,
    /// Memory behind the I/O buffers: auto (huge pages for O_DIRECT when offered, else plain),
    /// plain (page-aligned 4 KiB pages), malloc (16 bytes past a page, like malloc and fio's
    /// default), thp (transparent huge pages), hugetlb (reserved huge pages). A write that is
    /// not O_DIRECT with plain or malloc copies from its data, generated before the clock in
    /// huge pages where offered
    #[arg(long, value_name = "BACKING")]
    pub buffers: Option<String>,
    /// Read the data back: xor (fold every byte into the XOR printed on stdout) or none (move
    /// the data without the CPU reading it, like fio: no XOR; an mmap read touches one byte
    /// per page)
    #[arg(long, value_name = "CHECKSUM")]
    pub checksum: Option<String>,
}

impl SetupFlags {
    /// Overlays the settings given onto `setup` (a command's starting setup, which holds its
    /// defaults). `name` turns a key into the flag or key an error names (`queue_depth` →
    /// `--queue-depth`). Range checks are `RunSpec::validate`'s, later, with every setting known.
    pub fn apply(
        &self,
        setup: &mut Setup,
        name: impl Fn(&str) -> String,
    ) -> Result<(), UsageError> {
        if let Some(m) = &self.method {
            setup.method = Method::parse(m, &name("method"))?;
        }
        if let Some(t) = self.threads {
            setup.threads = t;
        }
        setup.direct |= self.direct;
        if let Some(c) = &self.cache {
            setup.cache = CacheMode::parse(c, &name("cache"))?;
        }
        if let Some(q) = self.queue_depth {
            setup.queue_depth = q;
        }
        if let Some(p) = &self.pattern {
            setup.pattern = Pattern::parse(p, &name("pattern"))?;
        }
        if let Some(s) = &self.submit {
            setup.submit = SubmitPolicy::parse(s, &name("submit"))?;
        }
        if let Some(b) = &self.buffers {
            setup.buffers = Buffers::parse(b, &name("buffers"))?;
        }
        if let Some(c) = &self.checksum {
            setup.checksum = Checksum::parse(c, &name("checksum"))?;
        }
        Ok(())
    }
}

/// `a` (one of a command's flags) with its help showing `base`'s value as the default
/// (`[default: random]`) when it is a [`SetupFlags`] flag, so a command's defaults are written
/// once, as its starting setup; for `#[command(mut_args(...))]`. `stated` gives the words for
/// a default that depends on other flags (`run`'s method: `read`, but `pread` for a mix).
pub fn show_default(a: clap::Arg, base: &Setup, stated: &[(&str, &str)]) -> clap::Arg {
    let id = a.get_id().as_str();
    let value = match id {
        _ if stated.iter().any(|(s, _)| *s == id) => stated
            .iter()
            .find(|(s, _)| *s == id)
            .map(|(_, v)| v.to_string())
            .unwrap_or_default(),
        "method" => base.method.name().to_string(),
        "threads" => base.threads.to_string(),
        "cache" => base.cache.name().to_string(),
        "queue_depth" => base.queue_depth.to_string(),
        "pattern" => base.pattern.name().to_string(),
        "submit" => base.submit.name().to_string(),
        "buffers" => base.buffers.name().to_string(),
        "checksum" => base.checksum.name().to_string(),
        _ => return a,
    };
    let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
    a.help(format!("{help} [default: {value}]"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        flags: SetupFlags,
    }

    #[test]
    fn a_flag_not_given_keeps_the_commands_own_default() {
        let base = Setup {
            method: Method::Read,
            pattern: Pattern::Random,
            ..Setup::default()
        };
        let c = Cmd::try_parse_from(["x", "--threads", "3", "--qd", "4"]).unwrap();
        let mut s = base;
        c.flags.apply(&mut s, |k| format!("--{k}")).unwrap();
        assert_eq!(s.method, Method::Read);
        assert_eq!(s.pattern, Pattern::Random);
        assert_eq!((s.threads, s.queue_depth), (3, 4));
        let c = Cmd::try_parse_from(["x", "--method", "mmap", "--pattern", "sequential"]).unwrap();
        let mut s = base;
        c.flags.apply(&mut s, |k| format!("--{k}")).unwrap();
        assert_eq!((s.method, s.pattern), (Method::Mmap, Pattern::Sequential));
    }

    #[test]
    fn a_bad_value_names_the_flag_or_the_key_it_came_from() {
        let c = Cmd::try_parse_from(["x", "--cache", "tepid"]).unwrap();
        let e = c
            .flags
            .apply(&mut Setup::default(), |k| {
                format!("--{}", k.replace('_', "-"))
            })
            .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("--cache"));
        let t: SetupFlags = toml::from_str("buffers = \"velvet\"").unwrap();
        let e = t.apply(&mut Setup::default(), str::to_string).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("buffers"));
    }

    #[test]
    fn the_help_shows_the_commands_defaults_from_its_starting_setup() {
        let base = Setup {
            pattern: Pattern::Random,
            ..Setup::default()
        };
        let mut cmd = Cmd::command()
            .mut_args(|a| show_default(a, &base, &[("method", "read; pread with --mix")]));
        // Wrapped at the terminal's width: compare the words.
        let help = cmd
            .render_help()
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(help.contains("[default: random]"), "{help}");
        assert!(help.contains("[default: as-is]"), "{help}");
        assert!(help.contains("[default: read; pread with --mix]"), "{help}");
    }

    #[test]
    fn every_flag_with_a_value_shows_its_default() {
        let cmd = Cmd::command();
        let flags: Vec<&clap::Arg> = cmd
            .get_arguments()
            .filter(|a| a.get_id() != "help" && a.get_id() != "direct")
            .collect();
        assert_eq!(flags.len(), 8);
        for a in flags {
            let shown = show_default(a.clone(), &Setup::default(), &[]);
            let help = shown.get_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(
                help.ends_with(']') && help.contains("[default: "),
                "{}: {help}",
                a.get_id()
            );
        }
    }
}
