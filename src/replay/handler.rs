//! The engine as the transports see it: a [`Handler`] whose answers come
//! from the cassette, and whose HTTP presentation is the recording's.

use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinSet;

use super::cross_era::CrossEra;
use super::engine::Engine;
use crate::cassette::{Cassette, HttpSituation, Interaction};
use crate::protocol::Era;
use crate::server::{Handled, Handler, HttpProfile, Sink};

impl Handler for Engine {
    fn handle(
        self: Arc<Self>,
        message: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: &HttpSituation,
    ) -> Handled {
        self.handle_message_in(message, sink, tasks, situation)
    }

    fn handle_text(
        self: Arc<Self>,
        line: &[u8],
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> Option<Handled> {
        self.answer_text(line, sink, tasks)
    }

    fn stand_in(&self, request: &Value) {
        Engine::stand_in(self, request);
    }

    fn open(self: Arc<Self>, sink: &Sink, tasks: &mut JoinSet<()>) {
        self.play_opening(sink, tasks);
    }

    fn fork(&self) -> Arc<dyn Handler> {
        Engine::fork(self)
    }

    fn client_gone(&self) {
        Engine::client_gone(self);
    }

    fn recorded(&self, position: usize) -> Option<&Interaction> {
        self.cassette().interactions.get(position)
    }

    fn http_profile(&self) -> HttpProfile {
        let cassette = self.cassette();
        HttpProfile {
            transport: cassette.transport.clone(),
            era: cassette.protocol.era,
            sessions: initialize_issued_session(cassette),
            sessions_without_recording: false,
            // A modern client's listen on a legacy recording is a stream
            // replay opens itself (see `subscriptions`).
            listen_streams: cassette.protocol.era != Era::Modern
                && self.config().cross_era == CrossEra::Auto,
            tools: cassette.listed_tools().cloned().collect(),
        }
    }
}

/// Whether the recorded server handed out sessions: its first successful
/// `initialize` did (always assumed for recordings made without HTTP).
fn initialize_issued_session(cassette: &Cassette) -> bool {
    cassette
        .interactions
        .iter()
        .find(|i| i.method() == "initialize" && i.response.is_some())
        .is_some_and(|i| i.http.as_ref().is_none_or(|http| http.issued_session))
}
