//! The `mcpcassette` command: argument parsing and exit codes live in
//! `cli`; everything else is the library.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
