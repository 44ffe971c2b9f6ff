//! The classic `run2` command line, verbatim: see `diskscope run2 --help`.
fn main() {
    let cli: diskscope::cli::Run2Bin = diskscope::cli::parse_or_exit();
    diskscope::cli::exit_with(diskscope::lab::throughput::run2_command::execute(&cli.args))
}
