//! `mcpcassette serve FIXTURE`: a fixture served as a mock MCP server.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::Context;
use std::sync::Arc;

use mcpcassette::cli_support::process_stdio;
use mcpcassette::faults::FaultOverlay;
use mcpcassette::fixture;
use mcpcassette::mock::MockServer;
use mcpcassette::replay::HttpReplayConfig;
use mcpcassette::server::Handler;

use super::args::ServeArgs;
use super::exit;

/// Serves the fixture until the client leaves (stdio) or a signal (HTTP).
pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let fixture = fixture::load(&args.fixture)?;
    let faults = super::replay::faults(
        fixture.rules.faults()?,
        "the fixture's rules.faults",
        args.faults.as_deref(),
        args.listen.is_some(),
    )?;
    let mock = MockServer::from_fixture(fixture);
    let overlay = (!faults.is_empty()).then(|| FaultOverlay::new(mock.handler(), faults));
    let served = match &overlay {
        Some(overlay) => Arc::clone(overlay) as Arc<dyn Handler>,
        None => mock.handler(),
    };
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
            let config = HttpReplayConfig::new(listen);
            super::until_signal(|shutdown| {
                mcpcassette::server::http::serve_http(
                    served,
                    config,
                    |addr| super::announce(addr, "/mcp"),
                    shutdown,
                )
            })?
            .context("serving HTTP failed")?;
        }
        None => {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?
                .block_on(async {
                    let (stdin, stdout) = process_stdio();
                    mcpcassette::server::serve_stdio(served, stdin, stdout).await
                })
                .context("serving stdio failed")?;
        }
    }
    let Some(overlay) = overlay else {
        return Ok(ExitCode::from(exit::OK));
    };
    let summary = overlay.summary();
    eprint!("mcpcassette: {summary}");
    match (args.listen, summary.disconnected) {
        (None, Some(status)) => Ok(ExitCode::from(status)),
        _ => Ok(ExitCode::from(exit::OK)),
    }
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
