//! `mcpcassette record`.

use std::process::ExitCode;

use anyhow::Context;
use mcpcassette::record::{RecordConfig, record_stdio};

use super::args::RecordArgs;

/// Records, then exits with the server's own exit status.
pub fn run(args: RecordArgs) -> anyhow::Result<ExitCode> {
    let config = RecordConfig {
        cassette: args.cassette,
        command: args.command,
    };
    let outcome = record_stdio(&config).context("recording failed")?;
    if let Some(recovery) = &outcome.recovered {
        tracing::warn!(
            "recovered {} interaction(s) from {} left by an interrupted recording; this recording replaces them",
            recovery.interactions,
            recovery.journal.display()
        );
    }
    tracing::info!(
        "recorded {} interaction(s) to {}",
        outcome.interactions,
        config.cassette.display()
    );
    Ok(ExitCode::from(outcome.exit_code.clamp(0, 255) as u8))
}
