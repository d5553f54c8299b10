//! Command-line arguments, as clap parses them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Record and replay Model Context Protocol (MCP) sessions.
#[derive(Debug, Parser)]
#[command(name = "mcpcassette", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a stdio MCP server, forward a client's traffic to it unchanged,
    /// and write what passed into a cassette.
    Record(RecordArgs),
    /// Serve a cassette over stdio as a deterministic MCP server.
    Replay(ReplayArgs),
}

/// `mcpcassette record`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  mcpcassette record --cassette cassettes/demo.json -- node server.js"
)]
pub struct RecordArgs {
    /// The cassette to write (replaced if it exists).
    #[arg(long, value_name = "PATH")]
    pub cassette: PathBuf,
    /// The server command and its arguments.
    #[arg(last = true, required = true, value_name = "SERVER CMD")]
    pub command: Vec<String>,
}

/// `mcpcassette replay`.
#[derive(Debug, Args)]
#[command(after_help = "Exit status: 0 all requests answered, 1 some request unmatched, 2 error.")]
pub struct ReplayArgs {
    /// The cassette to serve.
    #[arg(value_name = "CASSETTE")]
    pub cassette: PathBuf,
}
