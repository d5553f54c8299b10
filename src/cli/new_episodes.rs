//! `run --mode new-episodes` on an existing cassette: replay what matches,
//! forward the rest to the real server, append what it answered.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mcpcassette::Rules;
use mcpcassette::cassette;
use mcpcassette::cassette::Cassette;
use mcpcassette::cli_support::{append_new_episodes, process_stdio, recorded_place};
use mcpcassette::replay::CrossEra;
use mcpcassette::replay::HttpReplayConfig;
use mcpcassette::replay::{
    Engine, HttpEpisodes, NewEpisodes, Pace, ReplayConfig, StdioConfig, Upstream, serve_with,
};

use super::args::MatchArgs;
use super::replay;

/// Replays with the server behind it and saves the new interactions. The
/// processes of a `scope` append one at a time, each to the cassette as
/// the others left it.
pub fn run(
    path: &Path,
    command: &[String],
    matching: &MatchArgs,
    scope: Option<&cassette::Scope>,
) -> anyhow::Result<ExitCode> {
    let recorded = replay::open(path)?;
    let rules = replay::resolve_rules(&recorded.rules, matching)?;
    let (command, dir) = recorded_place(&recorded, path, command);
    let upstream = NewEpisodes::for_cassette(command, &recorded, dir);
    upstream.spill_beside(path);
    let engine = engine(recorded, path, rules, upstream.clone());
    // One runtime for both: the server process belongs to it.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (summary, episodes) = runtime.block_on(async {
        let config = StdioConfig::stdout(Pace::Fast);
        let (stdin, stdout) = process_stdio();
        let summary = serve_with(engine.clone(), stdin, stdout, config)
            .await
            .context("replay I/O failed")?;
        let episodes = upstream.finish().await.context("stopping the server")?;
        anyhow::Ok((summary, episodes))
    })?;
    let redactor = engine.redactor();
    match scope {
        Some(scope) => scope.locked(|| {
            // Another process of the test may have appended meanwhile.
            let now = cassette::load(path)?;
            append_new_episodes(&now, path, redactor, upstream.session_traffic(), episodes)
        })??,
        None => append_new_episodes(
            engine.cassette(),
            path,
            redactor,
            upstream.session_traffic(),
            episodes,
        )?,
    }
    conclude(&engine, &summary, matching, upstream.failures())
}

/// The same over Streamable HTTP: replays on `listen` until SIGINT or
/// SIGTERM, forwarding misses to the server at `url`.
pub fn run_http(
    path: &Path,
    url: &str,
    listen: std::net::SocketAddr,
    matching: &MatchArgs,
) -> anyhow::Result<ExitCode> {
    let recorded = replay::open(path)?;
    let rules = replay::resolve_rules(&recorded.rules, matching)?;
    let upstream = HttpEpisodes::new(
        url.to_owned(),
        recorded.protocol.era,
        recorded.transport.clone(),
    );
    upstream.spill_beside(path);
    let engine = engine(recorded, path, rules, upstream.clone());
    let http_config = HttpReplayConfig {
        sessions: matching.sessions,
        auth: matching.auth.unwrap_or(engine.rules().auth),
        ..HttpReplayConfig::new(listen)
    };
    let summary = replay::serve_http_engine(&engine, http_config)?;
    append_new_episodes(
        engine.cassette(),
        path,
        engine.redactor(),
        Vec::new(),
        upstream.finish(),
    )?;
    conclude(&engine, &summary, matching, upstream.failures())
}

/// The replay engine of `new-episodes`: misses go to `upstream`, and the
/// log masks what the cassette masks.
fn engine(
    recorded: Cassette,
    path: &Path,
    rules: Rules,
    upstream: Arc<dyn Upstream>,
) -> Arc<Engine> {
    let config = ReplayConfig {
        path: path.to_owned(),
        rules: Some(rules),
        mode: "new-episodes".into(),
        upstream: Some(upstream),
        // The server answers in the recorded era: requests of the other
        // era could not be forwarded to it.
        cross_era: CrossEra::Off,
        on_miss: None,
        process: None,
    };
    let engine = Engine::with_config(recorded, config);
    super::logging::set_redactor(engine.redactor().clone());
    engine
}

/// The exit code: replay's, unless requests could not be forwarded (the
/// client got an error for each; the run did not do its job).
fn conclude(
    engine: &Engine,
    summary: &mcpcassette::replay::Summary,
    matching: &MatchArgs,
    failures: Option<(usize, mcpcassette::replay::UpstreamFailure)>,
) -> anyhow::Result<ExitCode> {
    let code = replay::finish(engine, summary, matching, None)?;
    if let Some((failed, reason)) = failures {
        let reason = mcpcassette::cli_support::chain(&reason);
        tracing::error!(
            "{failed} request(s) could not be forwarded to the server for new episodes: {reason}"
        );
        return Ok(ExitCode::from(super::exit::ERROR));
    }
    Ok(code)
}
