//! `mcpcassette replay`.

use std::process::ExitCode;

use anyhow::Context;
use mcpcassette::cassette;
use mcpcassette::replay::{Engine, serve};
use mcpcassette::transport::stdio::process_stdio;

use super::args::ReplayArgs;
use super::exit;

/// Serves the cassette on stdin/stdout until the client disconnects.
pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    if let Some(recovery) = cassette::recover(&args.cassette)? {
        tracing::warn!(
            "recovered {} interaction(s) from {} left by an interrupted recording",
            recovery.interactions,
            recovery.journal.display()
        );
    }
    let cassette = cassette::load(&args.cassette)?;
    let engine = Engine::new(cassette, &args.cassette);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let summary = runtime
        .block_on(async {
            let (stdin, stdout) = process_stdio();
            serve(engine.clone(), stdin, stdout).await
        })
        .context("replay I/O failed")?;
    if !summary.unused.is_empty() {
        let interactions = &engine.cassette().interactions;
        let methods: Vec<&str> = summary
            .unused
            .iter()
            .map(|&p| interactions[p].method())
            .collect();
        tracing::info!(
            "{} recorded interaction(s) were not replayed: {}",
            methods.len(),
            methods.join(", ")
        );
    }
    if summary.misses.is_empty() {
        return Ok(ExitCode::from(exit::OK));
    }
    tracing::error!(
        "{} request(s) had no recorded answer in {}",
        summary.misses.len(),
        args.cassette.display()
    );
    Ok(ExitCode::from(exit::UNMATCHED))
}
