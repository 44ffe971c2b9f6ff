//! Command-line definitions (clap) and the entry points of the binaries.
//!
//! Parsing stays here; turning raw strings into validated settings is `config`'s job, so sizes
//! and method names are taken as text and checked there with messages that name the argument.
//! Exit codes follow ripgrep: 0 success, 1 a run failed, 2 bad usage; a closed stdout pipe is
//! not an error.

use crate::config::UsageError;
use crate::lab::fast::FastArgs;
use crate::lab::syscalls::SyscallsParams;
use crate::lab::throughput::{Run2Args, RunArgs};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;

/// The version `--version` prints: the crate's version and the git revision it was built from
/// (build.rs; `unknown` outside a git checkout).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("DISKSCOPE_GIT_REV"),
    ")"
);

/// diskscope: how fast can this machine read and write this file, and why?
#[derive(Debug, Parser)]
#[command(
    name = "diskscope",
    version = VERSION,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// File to explore in the live UI (read only; a 1 GiB scratch file is made when omitted)
    pub file: Option<PathBuf>,
    /// Run a sweep headless and write CSVs and plots: a TOML sweep file, a fio job file or fio
    /// command lines (docs/fio.md), or a built-in preset by name (`diskscope presets`; a file of
    /// that name wins)
    #[arg(long, value_name = "SWEEP.toml|PRESET")]
    pub batch: Option<PathBuf>,
    /// Output directory of --batch (default: diskscope-results/<sweep name>/)
    #[arg(long, value_name = "DIR", requires = "batch")]
    pub out: Option<PathBuf>,
    /// With --batch: print the plan and exit
    #[arg(long, requires = "batch")]
    pub dry_run: bool,
    /// Explorer: compare every row with a saved run (a batch result directory, a per-repetition
    /// CSV or rows saved with `s`): each row shows Δ% against the same setup there
    #[arg(long, value_name = "RESULTS", conflicts_with = "batch")]
    pub baseline: Option<PathBuf>,
    /// Explorer: start on the settings of the first job of this fio job file (rw, bs, ioengine,
    /// iodepth, numjobs, direct, runtime, ...); what the explorer cannot do is refused with its
    /// line (docs/fio.md)
    #[arg(
        long,
        value_name = "JOB.fio",
        conflicts_with = "batch",
        requires = "file"
    )]
    pub fio_job: Option<PathBuf>,
    /// With --batch: also write a self-contained HTML report to this new file
    #[arg(
        long,
        value_name = "FILE.html",
        requires = "batch",
        conflicts_with = "dry_run"
    )]
    pub report: Option<PathBuf>,
    /// With --batch: print one JSON document of the sweep (context, setup, every row, the
    /// model's bounds) on stdout; the plan and summary table go to stderr
    #[arg(long, requires = "batch")]
    pub json: bool,
    /// With --batch: accept plans past the caps (100000 points per experiment, 24 h estimated),
    /// and with --report replace an existing report file
    #[arg(long, requires = "batch")]
    pub force: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

// Parsed once per process and matched at once: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read or write BLOCK_COUNT blocks of BLOCK_SIZE bytes and print the XOR
    Run(RunCommand),
    /// Find a block count that takes at least --target seconds to read
    Run2(Run2Args),
    /// XOR a whole file as fast as this machine allows
    Fast(FastArgs),
    /// Measure the cost of system calls
    Syscalls(SyscallsParams),
    /// The highest rate whose response-time p99 stays under a target (open loop, a search)
    Knee(crate::lab::knee::KneeArgs),
    /// Many small files vs one packed file, in sequential, random and trace order
    Locality(crate::locality::LocalityParams),
    /// Compare two runs: Δ%, 95% interval, faster/slower/no change; or two setups (--pair)
    Compare(crate::compare::CompareArgs),
    /// Fleet runs: throughput by number of clients, from the CSVs of several fleet runs
    #[cfg(feature = "mpi")]
    Clients(crate::fleet::clients::ClientsArgs),
    /// Without `--features mpi`: accepted (hidden) only to say which build it needs
    #[cfg(not(feature = "mpi"))]
    #[command(hide = true, disable_help_flag = true)]
    Clients {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Measure this machine's ceilings for a file's device once and store them as a profile
    Limits(crate::explain::limits::LimitsArgs),
    /// List the built-in sweeps `--batch NAME` runs, one line each
    Presets,
    /// Print a shell completion script: `source <(diskscope completions bash)`
    Completions {
        /// The shell to complete in
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `diskscope man > diskscope.1 && man -l diskscope.1`
    Man {
        /// A subcommand's page (`diskscope man run`: diskscope-run(1)) instead of the main one
        subcommand: Option<String>,
    },
}

/// Parses arguments for a binary; on error prints one line and exits 2 (help/version exit 0).
/// First checks the standard streams ([`check_std_streams`]): every binary starts here.
pub fn parse_or_exit<P: Parser>() -> P {
    check_std_streams();
    match P::try_parse() {
        Ok(p) => p,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                // On stdout, checked: help sent to a full disk is an error, not exit 0.
                use std::io::IsTerminal;
                let text = if std::io::stdout().is_terminal() {
                    e.render().ansi().to_string()
                } else {
                    e.render().to_string()
                };
                exit_with(write_stdout(text.as_bytes()).map(|()| 0));
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                std::process::exit(2);
            }
            let line = crate::text::shown(&one_line(&e.to_string())).into_owned();
            let _ = writeln!(std::io::stderr(), "{line} (see --help)");
            std::process::exit(2);
        }
    }
}

/// The first paragraph of a clap error on one line: its first line alone may not name the
/// argument (`the following required arguments were not provided:` lists them below it).
fn one_line(text: &str) -> String {
    let words: Vec<&str> = text
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    if words.is_empty() {
        "error: bad arguments".to_string()
    } else {
        words.join(" ")
    }
}

/// Writes `bytes` to stdout, checked (see [`crate::text::write_stdout`]).
pub use crate::text::write_stdout;

/// Refuses a stdout that was closed when the process started (`>&-`): every result would be
/// lost without an error. Rust's runtime reopens a closed descriptor 0, 1 or 2 on `/dev/null`
/// (read-write) before `main`, so that no file opened later takes its number and receives what
/// was meant for the terminal; that is what is recognised here: `/dev/null` open for reading
/// *and* writing, which a shell's `> /dev/null` (write-only) never is. Discarding output on
/// purpose (`> /dev/null`) runs as before.
pub fn check_std_streams() {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    // SAFETY: F_GETFL on a descriptor number only reads its flags; no memory is involved.
    let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
    let read_write = flags != -1 && flags & libc::O_ACCMODE == libc::O_RDWR;
    let dev_null = |m: &std::fs::Metadata| {
        m.file_type().is_char_device()
            && std::fs::metadata("/dev/null").is_ok_and(|n| n.rdev() == m.rdev())
    };
    if read_write && std::fs::metadata("/dev/stdout").is_ok_and(|m| dev_null(&m)) {
        let _ = writeln!(
            std::io::stderr(),
            "error: stdout is closed, so the output would be lost; redirect it (to /dev/null to \
             discard it)"
        );
        std::process::exit(1);
    }
}

/// Ends the process with the exit code of `r`, printing an error in one line. Before a
/// successful exit, what is still buffered for stdout is flushed and checked: output lost on a
/// full disk (`> /dev/full`) is an error, a closed pipe (`| head`) is not (ripgrep's rule).
pub fn exit_with(r: anyhow::Result<i32>) -> ! {
    use anyhow::Context;
    let r = r.and_then(|code| {
        std::io::stdout()
            .flush()
            .context("writing to stdout")
            .map(|()| code)
    });
    match r {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            if is_broken_pipe(&e) {
                std::process::exit(0);
            }
            let code = if e.chain().any(|c| {
                c.downcast_ref::<UsageError>().is_some()
                    || c.downcast_ref::<crate::runner::BudgetExceeded>().is_some()
            }) {
                2
            } else {
                1
            };
            // The one place every error is rendered: its control characters (an escape sequence
            // or a newline in a file name, a field, a trace line) are escaped here, once, so no
            // error retitles the terminal or splits its line. A dead stderr is not a panic.
            let _ = writeln!(std::io::stderr(), "error: {}", error_line(&e));
            std::process::exit(code);
        }
    }
}

/// An error as the one line `exit_with` prints after `error: `: the chain joined with `: `,
/// every control character escaped (a newline in a file name shows as `\n`).
pub fn error_line(e: &anyhow::Error) -> String {
    crate::text::shown(&format!("{e:#}")).into_owned()
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The `diskscope` binary.
pub fn diskscope_main() -> ! {
    let cli: Cli = parse_or_exit();
    exit_with(dispatch(cli))
}

fn dispatch(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Some(Command::Run(a)) => run_command(&a),
        Some(Command::Run2(a)) => crate::lab::throughput::run2_command::execute(&a),
        Some(Command::Fast(a)) => crate::lab::fast::command::execute(&a),
        Some(Command::Syscalls(a)) => crate::lab::syscalls::command::execute(&a),
        Some(Command::Knee(a)) => crate::lab::knee::command::execute(&a),
        Some(Command::Locality(a)) => crate::locality::execute(&a),
        Some(Command::Compare(a)) => crate::compare::execute(&a),
        #[cfg(feature = "mpi")]
        Some(Command::Clients(a)) => crate::fleet::clients::execute(&a),
        #[cfg(not(feature = "mpi"))]
        Some(Command::Clients { .. }) => Err(crate::fleet::needs_mpi("clients")),
        Some(Command::Limits(a)) => crate::explain::limits::execute(&a),
        Some(Command::Presets) => crate::sweep::presets::execute(),
        Some(Command::Completions { shell }) => print_completions(shell),
        Some(Command::Man { subcommand }) => print_man_page(subcommand.as_deref()),
        None => match cli.batch {
            Some(sweep) => match &cli.report {
                _ if cli.json && cli.report.is_some() => Err(crate::config::usage(
                    "--json: not with --report (the report embeds the figures); drop one",
                )),
                Some(report) if !cli.dry_run => crate::report::batch::run_with_report(
                    &sweep,
                    cli.out.as_deref(),
                    report,
                    cli.force,
                )
                .and_then(|o| batch_status(o.as_ref())),
                _ => crate::batch::execute(
                    &sweep,
                    cli.out.as_deref(),
                    cli.dry_run,
                    cli.force,
                    cli.json,
                )
                .and_then(|o| batch_status(o.as_ref())),
            },
            None => {
                // A job is read and checked before the terminal is taken over.
                let start = match (&cli.fio_job, &cli.file) {
                    (Some(job), Some(file)) => Some(explorer_settings(job, file)?),
                    _ => None,
                };
                crate::tui::execute(cli.file.as_deref(), cli.baseline.as_deref(), start)
            }
        },
    }
}

/// The exit status of a batch: its outcome's (0, 1 some runs failed, 130 interrupted; a
/// broken fleet is an error), 0 for a dry run.
fn batch_status(outcome: Option<&crate::sweep::SweepOutcome>) -> anyhow::Result<i32> {
    outcome.map_or(Ok(0), crate::sweep::SweepOutcome::exit_code)
}

/// `--fio-job`: the explorer's starting settings from the first job of `job` (see
/// `fiojob::explorer`), within the explorer's own limits; a refused option is a usage error
/// naming its file and line.
pub fn explorer_settings(
    job: &std::path::Path,
    file: &std::path::Path,
) -> anyhow::Result<crate::tui::settings::Settings> {
    use crate::config::{Setup, WriteSync};
    use crate::tui::settings::{Settings, MAX_BLOCK_SIZE_BYTES, MAX_QUEUE_DEPTH, MAX_THREADS};
    let limits = crate::fiojob::explorer::ExplorerLimits {
        max_threads: MAX_THREADS,
        max_queue_depth: MAX_QUEUE_DEPTH,
        max_block_size_bytes: MAX_BLOCK_SIZE_BYTES,
    };
    let s = crate::fiojob::explorer::explorer_start(job, file, &limits)
        .map_err(|e| crate::config::usage(e.to_string()))?;
    let settings = Settings {
        setup: Setup {
            queue_depth: if s.setup.queue_depth > 1 {
                s.setup.queue_depth
            } else {
                Settings::default().setup.queue_depth
            },
            // `f` reaches fsync or O_DSYNC, not both: O_DSYNC makes every write durable.
            write_sync: if s.setup.write_sync.dsync() {
                WriteSync::Dsync
            } else {
                s.setup.write_sync
            },
            // The open loop is the explorer's typed rate; rw=randrw/rw=rw: the mix `W` types
            // (op is then Write: the scratch file).
            rate_iops: None,
            ..s.setup
        },
        run_ms: s.run.map(|d| d.as_millis().max(1) as u64),
        rate: s
            .setup
            .rate()
            .map(|r| crate::tui::settings::Rate::Iops(r as u64)),
    };
    settings
        .validate()
        .map_err(|e| crate::config::usage(format!("--fio-job: {e}")))?;
    Ok(settings)
}

/// `diskscope completions SHELL`: the completion script of the whole command tree on stdout.
fn print_completions(shell: clap_complete::Shell) -> anyhow::Result<i32> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "diskscope", &mut out);
    write_stdout(&out)?;
    Ok(0)
}

/// `diskscope man [SUBCOMMAND]`: the manual page in roff, generated from the same clap tree as
/// `--help` (the main page lists the subcommands, whose pages are `diskscope man NAME`).
fn print_man_page(subcommand: Option<&str>) -> anyhow::Result<i32> {
    use clap::CommandFactory;
    let main = Cli::command();
    let page = match subcommand {
        // NAME reads "diskscope - how fast ...", not "diskscope - diskscope: how fast ...".
        None => main.about("how fast can this machine read and write this file, and why?"),
        Some(name) => match main.find_subcommand(name) {
            Some(sub) => sub
                .clone()
                .name(format!("diskscope-{name}"))
                .version(VERSION),
            None => {
                let names: Vec<&str> = main.get_subcommands().map(|c| c.get_name()).collect();
                return Err(crate::config::usage(format!(
                    "man: no subcommand '{}'; use one of {}",
                    crate::text::shown(name),
                    names.join(", ")
                )));
            }
        },
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page).render(&mut out)?;
    write_stdout(&out)?;
    Ok(0)
}

/// The `run` binary (the same as `diskscope run`): `run FILE -r|-w BLOCK_SIZE BLOCK_COUNT`.
#[derive(Debug, Parser)]
#[command(
    name = "run",
    version = VERSION,
    about = "Read or write BLOCK_COUNT blocks of BLOCK_SIZE bytes and print the XOR (the same as \
             `diskscope run`)"
)]
pub struct RunBin {
    #[command(flatten)]
    pub args: RunCommand,
}

/// `run`'s command line: the run's own flags and the fleet's (which apply under mpirun only).
#[derive(Debug, clap::Args)]
pub struct RunCommand {
    #[command(flatten)]
    pub args: RunArgs,
    #[cfg(feature = "mpi")]
    #[command(flatten)]
    pub fleet: crate::fleet::FleetArgs,
    #[cfg(not(feature = "mpi"))]
    #[command(flatten)]
    pub fleet: crate::fleet::FleetArgsWithoutMpi,
}

/// `run` (and the `run` binary): under mpirun or srun (built with `--features mpi`) the point on
/// every rank (`commands::fleet_run`, src/fleet/); otherwise a local run (`lab::throughput::run_command`), which
/// never passes through `fleet/` (tests/architecture.rs follows its imports).
pub fn run_command(c: &RunCommand) -> anyhow::Result<i32> {
    #[cfg(feature = "mpi")]
    {
        // Checked in every run, so a misspelt layout is an error before the first mpirun.
        let options = c.fleet.options()?;
        // None unless an MPI launcher started the process.
        if let Some(fleet) = crate::fleet::join(options)? {
            if c.args.export.any() {
                return Err(crate::config::usage(
                    "--export-*: not under mpirun (a fleet's rows are one per rank); run a sweep \
                     with --out for a fleet's files",
                ));
            }
            return crate::commands::fleet_run::execute(&c.args, fleet);
        }
    }
    #[cfg(not(feature = "mpi"))]
    c.fleet.refuse_any()?;
    crate::lab::throughput::run_command::execute(&c.args)
}

/// The `run2` binary (the same as `diskscope run2`).
#[derive(Debug, Parser)]
#[command(
    name = "run2",
    version = VERSION,
    about = "Find a block count that takes at least --target seconds to read, and print the XOR \
             (the same as `diskscope run2`)"
)]
pub struct Run2Bin {
    #[command(flatten)]
    pub args: Run2Args,
}

/// The `fast` binary (the same as `diskscope fast`).
#[derive(Debug, Parser)]
#[command(
    name = "fast",
    version = VERSION,
    about = "XOR a whole file as fast as this machine allows (the XOR on stdout, how on stderr; \
             the same as `diskscope fast`)"
)]
pub struct FastBin {
    #[command(flatten)]
    pub args: FastArgs,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_keep_the_names_of_missing_arguments_on_one_line() {
        let e = RunBin::try_parse_from(["run", "f", "-r"]).unwrap_err();
        let line = one_line(&e.to_string());
        assert!(
            line.contains("<BLOCK_SIZE>") && line.contains("<BLOCK_COUNT>"),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }
}
