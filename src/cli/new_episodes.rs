//! `run --mode new-episodes` on an existing cassette: replay what matches,
//! forward the rest to the real server, append what it answered.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mcpcassette::Rules;
use mcpcassette::cassette;
use mcpcassette::cassette::Cassette;
use mcpcassette::cli_support::process_stdio;
use mcpcassette::replay::CrossEra;
use mcpcassette::replay::HttpReplayConfig;
use mcpcassette::replay::{
    Engine, Episodes, HttpEpisodes, NewEpisodes, Pace, ReplayConfig, StdioConfig, Upstream,
    serve_with, session_traffic_place,
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
    match scope {
        Some(scope) => scope.locked(|| {
            // Another process of the test may have appended meanwhile.
            let now = cassette::load(path)?;
            append(&engine, &now, path, upstream.session_traffic(), episodes)
        })??,
        None => append(
            &engine,
            engine.cassette(),
            path,
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
    append(
        &engine,
        engine.cassette(),
        path,
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

/// Appends what the server answered to the cassette, masked as the
/// cassette's own recording was: the session traffic it lacked after the
/// handshake (as `record` files it), the new interactions at the end. The
/// cassette is written one interaction at a time, as the episodes are read
/// from where the run kept them.
fn append(
    engine: &Engine,
    recorded: &Cassette,
    path: &Path,
    mut session: Vec<cassette::Event>,
    episodes: Episodes,
) -> anyhow::Result<()> {
    let mut episodes = episodes.peekable();
    if episodes.peek().is_none() && session.is_empty() {
        return Ok(());
    }
    let redactor = engine.redactor();
    for event in &mut session {
        for message in event_messages(event) {
            message.modify(|message| redactor.redact_message(message));
        }
    }
    let mut header = recorded.header();
    let after = session_traffic_place(recorded);
    if after.is_none() {
        header.opening.append(&mut session);
    }
    let kept = recorded
        .interactions
        .iter()
        .enumerate()
        .map(|(n, interaction)| {
            let mut interaction = interaction.clone();
            if Some(n) == after {
                interaction.after.append(&mut session);
            }
            Ok(interaction)
        });
    let mut appended = 0;
    let new = episodes.map(|read| {
        let mut interaction = read?;
        for message in interaction.messages_mut() {
            message.modify(|message| redactor.redact_message(message));
        }
        appended += 1;
        Ok(interaction)
    });
    cassette::save_streamed(path, &header, kept.chain(new))?;
    tracing::info!(
        "appended {appended} new interaction(s) to {}",
        path.display()
    );
    Ok(())
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

/// `command` as given, unless it is the cassette's own relative command
/// and the cassette says it was recorded in another directory that exists
/// here: then it runs from there, as `verify` does.
fn recorded_place(
    recorded: &cassette::Cassette,
    path: &Path,
    command: &[String],
) -> (Vec<String>, Option<std::path::PathBuf>) {
    let cassette::Transport::Stdio {
        command: recorded_command,
        cwd: Some(cwd),
    } = &recorded.transport
    else {
        return (command.to_vec(), None);
    };
    let here = std::env::current_dir().unwrap_or_default();
    let dir = cassette::resolve_cwd(cwd, path, &here);
    // Masked as recording masked it: with the environment's secrets.
    let masked = match mcpcassette::redact::Redactor::new(&recorded.rules.redaction()) {
        Ok(redactor) => redactor.mask_command(command),
        Err(_) => mcpcassette::redact::mask_command(command),
    };
    let same = masked == *recorded_command;
    if same && cassette::is_relative(command) && dir != here && dir.is_dir() {
        tracing::info!(
            "running the recorded server command from {}, where it was recorded",
            dir.display()
        );
        (cassette::command_in(command, &dir), Some(dir))
    } else {
        (command.to_vec(), None)
    }
}

/// The messages of one server event: the server's, and the client's answer.
fn event_messages(event: &mut cassette::Event) -> Vec<&mut mcpcassette::RawMessage> {
    match event {
        cassette::Event::Notification { notification } => vec![notification],
        cassette::Event::ServerRequest {
            server_request,
            client_response,
        } => std::iter::once(server_request)
            .chain(client_response.as_mut())
            .collect(),
    }
}
