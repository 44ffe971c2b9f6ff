//! The classic `fast` command line, verbatim: see `diskscope fast --help`.
fn main() {
    let cli: diskscope::cli::FastBin = diskscope::cli::parse_or_exit();
    diskscope::cli::exit_with(diskscope::lab::fast::command::execute(&cli.args))
}
