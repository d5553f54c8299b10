//! `mcpcassette record`, and recording for `run`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use mcpcassette::record::{RecordConfig, record_stdio};

use super::args::RecordArgs;

/// Records, then exits with the server's own exit status.
pub fn run(args: RecordArgs) -> anyhow::Result<ExitCode> {
    record(Some(args.cassette), args.command)
}

/// Forwards to the server, recording into `cassette` when there is one,
/// and exits with the server's status.
pub fn record(cassette: Option<PathBuf>, command: Vec<String>) -> anyhow::Result<ExitCode> {
    let config = RecordConfig { cassette, command };
    let outcome = record_stdio(&config).context("recording failed")?;
    if let Some(recovery) = &outcome.recovered {
        tracing::warn!(
            "recovered {} interaction(s) from {} left by an interrupted recording; this recording replaces them",
            recovery.interactions,
            recovery.journal.display()
        );
    }
    if let Some(path) = &config.cassette {
        tracing::info!(
            "recorded {} interaction(s) to {}",
            outcome.interactions,
            path.display()
        );
    }
    Ok(ExitCode::from(outcome.exit_code.clamp(0, 255) as u8))
}
