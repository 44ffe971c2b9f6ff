//! The classic `run` command line, verbatim: see `diskscope run --help`.
fn main() {
    let cli: diskscope::cli::RunBin = diskscope::cli::parse_or_exit();
    diskscope::cli::exit_with(diskscope::cli::run_command(&cli.args))
}
