//! `run --mode new-episodes` on an existing cassette: replay what matches,
//! forward the rest to the real server, append what it answered.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mcpcassette::cassette;
use mcpcassette::replay::{Engine, NewEpisodes, ReplayConfig, file_session_traffic, serve};
use mcpcassette::transport::stdio::process_stdio;

use super::args::MatchArgs;
use super::replay;

/// Replays with the server behind it and saves the new interactions.
pub fn run(path: &Path, command: Vec<String>, matching: &MatchArgs) -> anyhow::Result<ExitCode> {
    let recorded = replay::open(path)?;
    let rules = replay::resolve_rules(&recorded.rules, matching)?;
    let upstream = NewEpisodes::for_cassette(command, &recorded);
    let config = ReplayConfig {
        path: path.to_owned(),
        rules: Some(rules),
        mode: "new-episodes".into(),
        upstream: Some(upstream.clone() as Arc<dyn mcpcassette::replay::Upstream>),
    };
    let engine = Engine::with_config(recorded, config);
    super::logging::set_redactor(engine.redactor().clone());
    // One runtime for both: the server process belongs to it.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (summary, episodes) = runtime.block_on(async {
        let (stdin, stdout) = process_stdio();
        let summary = serve(engine.clone(), stdin, stdout)
            .await
            .context("replay I/O failed")?;
        let episodes = upstream.finish().await.context("stopping the server")?;
        anyhow::Ok((summary, episodes))
    })?;
    let mut session = upstream.session_traffic();
    if !episodes.is_empty() || !session.is_empty() {
        let mut updated = engine.cassette().clone();
        // Filed after the handshake, as `record` files it.
        for event in &mut session {
            for message in event_messages(event) {
                engine.redactor().redact_message(message);
            }
        }
        file_session_traffic(&mut updated, session);
        for mut interaction in episodes.iter().cloned() {
            // Masked as the cassette's own recording was.
            for message in interaction.messages_mut() {
                engine.redactor().redact_message(message);
            }
            updated.interactions.push(interaction);
        }
        cassette::save(path, &updated)?;
        tracing::info!(
            "appended {} new interaction(s) to {}",
            episodes.len(),
            path.display()
        );
    }
    replay::finish(&engine, &summary, matching)
}

/// The messages of one server event: the server's, and the client's answer.
fn event_messages(event: &mut cassette::Event) -> Vec<&mut serde_json::Value> {
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
