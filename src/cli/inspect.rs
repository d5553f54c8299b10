//! `mcpcassette inspect`: a passthrough proxy that prints what passes.

use std::fs::File;
use std::io::BufWriter;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;

use mcpcassette::cli_support::{Inspector, Output};
use mcpcassette::record::{HttpRecordConfig, RecordConfig, Redaction, record_stdio};

use super::args::InspectArgs;

/// Inspects a stdio server (exiting with its status) or an HTTP one (until
/// SIGINT or SIGTERM), then prints the summary on stderr.
pub fn run(args: InspectArgs) -> anyhow::Result<ExitCode> {
    let redactor = super::redactor(Vec::new(), Vec::new())?;
    let output = match &args.log {
        Some(path) => {
            let file =
                File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            Output::Log(Box::new(BufWriter::new(file)))
        }
        None => Output::Lines(Box::new(std::io::stderr())),
    };
    let inspector = Arc::new(Inspector::new(redactor, output));
    let code = match args.upstream {
        Some(upstream) => http(upstream, args.listen, inspector.clone())?,
        None => stdio(args.command, inspector.clone())?,
    };
    // Masked like log lines (the inspector masked its parts already).
    eprint!("{}", super::logging::mask(&inspector.summary().render()));
    Ok(code)
}

/// Forwards to the server until it exits; its status is returned.
fn stdio(command: Vec<String>, inspector: Arc<Inspector>) -> anyhow::Result<ExitCode> {
    let config = RecordConfig {
        cassette: None,
        command,
        redaction: Redaction::default(),
        observer: Some(inspector),
        scope: None,
    };
    let outcome = record_stdio(&config).context("inspecting failed")?;
    Ok(ExitCode::from(outcome.exit_code.clamp(0, 255) as u8))
}

/// Runs the reverse proxy until SIGINT or SIGTERM.
fn http(
    upstream: String,
    listen: std::net::SocketAddr,
    inspector: Arc<Inspector>,
) -> anyhow::Result<ExitCode> {
    let endpoint = http::Uri::try_from(upstream.as_str())
        .map(|uri| uri.path().to_owned())
        .with_context(|| format!("not a URL: {upstream}"))?;
    let config = HttpRecordConfig {
        cassette: None,
        upstream,
        listen,
        redaction: Redaction::default(),
        observer: Some(inspector),
        upstream_headers: Vec::new(),
    };
    super::until_signal(|shutdown| {
        mcpcassette::record::record_http(config, |addr| super::announce(addr, &endpoint), shutdown)
    })??;
    Ok(ExitCode::from(super::exit::OK))
}
