//! `mcpcassette record`, and recording for `run`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use std::net::SocketAddr;

use mcpcassette::cassette::Recovery;
use mcpcassette::record::{
    HttpRecordConfig, RecordConfig, Redaction, ScopedRecording, record_stdio,
};

use super::args::{RecordArgs, RedactArgs, UpstreamCredentialArgs};

impl UpstreamCredentialArgs {
    /// The headers to add to every upstream request; an unset
    /// `--bearer-env` variable or a malformed `--header` is an error that
    /// names it (never a value).
    pub fn resolve(&self) -> anyhow::Result<Vec<(String, String)>> {
        let mut headers = Vec::new();
        for header in &self.headers {
            headers.push(mcpcassette::cli_support::split_header(header)?);
        }
        if let Some(var) = &self.bearer_env {
            let token = std::env::var(var)
                .ok()
                .filter(|token| !token.trim().is_empty())
                .with_context(|| {
                    format!("--bearer-env {var}: the variable is not set (or empty)")
                })?;
            headers.push(("Authorization".into(), format!("Bearer {}", token.trim())));
        }
        Ok(headers)
    }
}

impl RedactArgs {
    /// What the recording masks.
    pub fn resolve(self) -> Redaction {
        Redaction {
            rules: self.redact,
            env: self.redact_env,
            defaults: !self.no_default_redaction,
        }
    }
}

/// Records a stdio server (exiting with its status) or an HTTP one (until
/// SIGINT or SIGTERM).
pub fn run(args: RecordArgs) -> anyhow::Result<ExitCode> {
    if let Some(faults) = &args.faults {
        anyhow::bail!(
            "--faults {}: record never applies faults (a fault must never reach a cassette); record without it, then `mcpcassette replay --faults`",
            faults.display()
        );
    }
    super::redactor(
        args.redaction.redact.clone(),
        args.redaction.redact_env.clone(),
    )?;
    let redaction = args.redaction.resolve();
    let upstream_headers = args.credentials.resolve()?;
    match args.upstream {
        Some(upstream) => record_http(
            Some(args.cassette),
            upstream,
            args.listen,
            redaction,
            upstream_headers,
        ),
        None => record(Some(args.cassette), args.command, redaction, None),
    }
}

/// Says what was recovered from interrupted recordings.
fn warn_recovered(recovered: &[Recovery]) {
    for recovery in recovered {
        match recovery.kept_previous {
            true => tracing::warn!("{recovery}"),
            false => tracing::warn!("{recovery}; this recording replaces them"),
        }
    }
}

/// Runs the recording reverse proxy until SIGINT or SIGTERM, then writes
/// the cassette.
pub fn record_http(
    cassette: Option<PathBuf>,
    upstream: String,
    listen: SocketAddr,
    redaction: Redaction,
    upstream_headers: Vec<(String, String)>,
) -> anyhow::Result<ExitCode> {
    let endpoint = http::Uri::try_from(upstream.as_str())
        .map(|uri| uri.path().to_owned())
        .with_context(|| {
            let shown = mcpcassette::redact::mask_command(std::slice::from_ref(&upstream));
            format!("not a URL: {}", shown.concat())
        })?;
    let config = HttpRecordConfig {
        cassette: cassette.clone(),
        upstream,
        listen,
        redaction,
        observer: None,
        upstream_headers,
    };
    let outcome = super::until_signal(|shutdown| {
        mcpcassette::record::record_http(config, |addr| super::announce(addr, &endpoint), shutdown)
    })??;
    warn_recovered(&outcome.recovered);
    if let Some(path) = &cassette {
        tracing::info!(
            "recorded {} interaction(s) to {}",
            outcome.interactions,
            path.display()
        );
    }
    if outcome.upstream_down() {
        tracing::error!(
            "the upstream never answered ({} request(s) failed): nothing was recorded but failures; start the server and record again",
            outcome.upstream_failed
        );
        return Ok(ExitCode::from(super::exit::UPSTREAM_DOWN));
    }
    Ok(ExitCode::from(super::exit::OK))
}

/// Forwards to the server, recording into `cassette` when there is one
/// (as one process of `scope`'s recording, when there is one), and exits
/// with the server's status.
pub fn record(
    cassette: Option<PathBuf>,
    command: Vec<String>,
    redaction: Redaction,
    scope: Option<ScopedRecording>,
) -> anyhow::Result<ExitCode> {
    let config = RecordConfig {
        cassette,
        command,
        redaction,
        observer: None,
        scope,
    };
    let outcome = record_stdio(&config).context("recording failed")?;
    warn_recovered(&outcome.recovered);
    if let Some(path) = &config.cassette {
        tracing::info!(
            "recorded {} interaction(s) to {}",
            outcome.interactions,
            path.display()
        );
    }
    Ok(ExitCode::from(outcome.exit_code.clamp(0, 255) as u8))
}
