//! The `mcpcassette` command: argument parsing and exit codes live in
//! `cli`; everything else is the library.

mod cli;

/// Loading a cassette allocates a node per JSON value: mimalloc makes that
/// (and freeing it) markedly cheaper than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
