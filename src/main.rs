//! The `mcpcassette` command: argument parsing and exit codes live in
//! `cli`; everything else is the library.
//!
//! It runs on the system allocator. mimalloc was faster while a cassette
//! loaded as a tree of a node per JSON value; messages are text now, and
//! mimalloc's fresh page per size class cost a short replay a tenth of
//! its start-up and big cassettes a fifth more memory (docs/benchmarks.md,
//! "fourteenth").

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
