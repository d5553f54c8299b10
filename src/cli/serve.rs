//! `mcpcassette serve FIXTURE`: a fixture served as a mock MCP server.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::Context;
use clap::Args;
use mcpcassette::fixture;
use mcpcassette::mock::MockServer;

use super::exit;

/// `mcpcassette serve`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 served until the client left (or SIGINT/SIGTERM with --listen), 2 error (e.g. an invalid fixture).

Examples:
  mcpcassette serve tests/weather.fixture.json
  mcpcassette serve tests/weather.fixture.json --listen 127.0.0.1:8080 --log calls.jsonl"
)]
pub struct ServeArgs {
    /// The fixture to serve (docs/fixture-format.md).
    #[arg(value_name = "FIXTURE")]
    pub fixture: PathBuf,
    /// Serve Streamable HTTP on this address instead of stdio; the URL is
    /// printed on stdout.
    #[arg(long, value_name = "ADDR", value_parser = super::args::listen_addr)]
    pub listen: Option<std::net::SocketAddr>,
    /// Append one JSON line per call (seq, method, params, outcome,
    /// duration_ms) to this file. Off by default: the log holds whatever
    /// clients send, secrets included, unmasked.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

/// Serves the fixture until the client leaves (stdio) or a signal (HTTP).
pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let fixture = fixture::load(&args.fixture)?;
    let mock = MockServer::from_fixture(fixture);
    if let Some(path) = &args.log {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open the call log {}", path.display()))?;
        log_calls(&mock, file);
    }
    match args.listen {
        Some(listen) => {
            super::until_signal(|shutdown| {
                mock.serve_http(listen, |addr| super::announce(addr, "/mcp"), shutdown)
            })?
            .context("serving HTTP failed")?;
        }
        None => {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?
                .block_on(mock.serve_stdio())
                .context("serving stdio failed")?;
        }
    }
    Ok(ExitCode::from(exit::OK))
}

/// Appends each call to `file` as it ends.
fn log_calls(mock: &MockServer, file: File) {
    let file = Mutex::new(file);
    mock.on_call(move |call| {
        let mut line = call.to_json().to_string();
        line.push('\n');
        let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(error) = file.write_all(line.as_bytes()) {
            tracing::warn!("cannot write the call log: {error}");
        }
    });
}
