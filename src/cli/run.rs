//! `mcpcassette run`: one entry point that records or replays as the mode
//! says, VCR-style.

use std::process::ExitCode;

use anyhow::bail;
use mcpcassette::mode::{Mode, process_env};

use super::args::RunArgs;
use super::{record, replay};

/// Resolves the mode, says it on stderr, and does it.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    super::redactor(
        args.redaction.redact.clone(),
        args.redaction.redact_env.clone(),
    )?;
    let asked = Mode::parse(&args.mode).expect("clap checked the mode name");
    let (mode, why) = asked.resolve(process_env);
    let path = &args.cassette;
    let exists = path.exists() || mcpcassette::cassette::journal_path(path).exists();
    let action = match mode {
        Mode::Once | Mode::NewEpisodes if !exists => "cassette missing: recording",
        Mode::Once | Mode::None => "replaying",
        Mode::NewEpisodes => "replaying, recording what is missing",
        Mode::All => "recording afresh",
        Mode::Passthrough => "forwarding without recording",
        Mode::Auto => unreachable!("auto is resolved"),
    };
    tracing::info!("mode {mode} ({why}): {action}; cassette {}", path.display());
    let replays_only = mode == Mode::None || (mode == Mode::Once && exists);
    if !replays_only && args.command.is_empty() {
        bail!("mode {mode} needs the server command after `--`");
    }
    match mode {
        Mode::None if !exists => bail!(
            "{}: no such cassette, and mode `none` never records (record it with MCPCASSETTE_MODE=once or all)",
            path.display()
        ),
        Mode::Once if exists => {
            replay::replay(replay::open(path)?, path, &mode.to_string(), &args.matching)
        }
        Mode::None => replay::replay(replay::open(path)?, path, &mode.to_string(), &args.matching),
        Mode::NewEpisodes if exists => super::episodes::run(path, args.command, &args.matching),
        Mode::Once | Mode::NewEpisodes | Mode::All => {
            record::record(Some(path.clone()), args.command, args.redaction.resolve())
        }
        Mode::Passthrough => record::record(None, args.command, args.redaction.resolve()),
        Mode::Auto => unreachable!("auto is resolved"),
    }
}
