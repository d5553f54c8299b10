//! `mcpcassette verify`: drive the live server, print the drift report,
//! and say where the pending cassette went.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use mcpcassette::cli_support::process_env;
use mcpcassette::cli_support::render::{self, RenderOptions};
use mcpcassette::cli_support::shell_quote;
use mcpcassette::verify::{Target, UpdateMode, VerifyConfig, verify};

use super::args::VerifyArgs;

/// Exit 0 without drift, 1 with drift, 2 (via the error) when it could not
/// be verified.
pub fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let (update, why) = UpdateMode::from_env(process_env)?.resolve(process_env);
    let target = match (args.url, args.command.is_empty()) {
        (Some(url), _) => Target::Url(url),
        (None, true) => Target::Recorded,
        (None, false) => Target::Command(args.command),
    };
    let config = VerifyConfig {
        cassette: args.cassette.clone(),
        target,
        pending_dir: args.pending_dir.clone(),
        update,
        timeout: Duration::from_secs(args.timeout),
    };
    tracing::info!(
        "verifying {} (update mode {update:?}, {why})",
        args.cassette.display()
    );
    let verification = verify(&config)?;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let json = serde_json::json!({
            "report": verification.report,
            "drift": verification.report.has_drift(),
            "pending": verification.pending,
            "overwritten": verification.overwritten,
        });
        writeln!(stdout, "{}", serde_json::to_string_pretty(&json)?)?;
    } else {
        write!(
            stdout,
            "{}",
            render::report(&verification.report, &RenderOptions::for_stdout())
        )?;
    }
    if let Some(pending) = &verification.pending {
        // Commands that find this pending cassette from here.
        let quote = |p: &std::path::Path| shell_quote(&p.display().to_string());
        let dir = args
            .pending_dir
            .as_deref()
            .map(|d| format!(" --pending-dir {}", quote(d)))
            .unwrap_or_default();
        let cassette = quote(&args.cassette);
        tracing::info!(
            "the live version is pending in {}: `mcpcassette review{dir} {cassette}` to go through it, or `mcpcassette accept{dir} {cassette}` / `mcpcassette reject{dir} {cassette}`",
            pending.display(),
        );
    } else if verification.overwritten {
        tracing::info!(
            "MCPCASSETTE_UPDATE=always: {} overwritten",
            args.cassette.display()
        );
    } else if verification.report.has_drift() {
        tracing::info!("update mode {update:?}: nothing written");
    }
    let code = if verification.report.has_drift() {
        super::exit::UNMATCHED
    } else {
        super::exit::OK
    };
    Ok(ExitCode::from(code))
}
