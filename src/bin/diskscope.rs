//! `diskscope`: the live explorer, `--batch`, and every lab command as a subcommand.
fn main() {
    diskscope::cli::diskscope_main()
}
