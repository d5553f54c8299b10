//! Looking a request up without answering it, for a replay that must
//! choose which recorded server process answers a live one
//! (`replay::processes`): which interaction would answer, and taking it
//! without playing it, so an engine chosen late starts where the live
//! process is.

use serde_json::Value;

use super::Engine;
use super::cross_era::{self, Translation};
use crate::jsonrpc::{self, Kind};
use crate::matching::Answer;

/// What answering a request would send, as far as telling recordings
/// apart goes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lookup {
    /// This recorded interaction's answer (id left out) and traffic.
    Recorded(Value),
    /// A hand-written case of the rules.
    Case(usize),
    /// Nothing recorded, but replay answers it anyway (`ping`, a
    /// handshake from another recording of it, the other era's).
    Fallback,
}

impl Engine {
    /// What this engine would answer `request` with, without answering it
    /// or counting it as used; `None` for a miss.
    pub(crate) fn lookup(&self, request: &Value) -> Option<Lookup> {
        let masked = self.masked_for_matching(request);
        let mut state = self.state();
        let answer = state.matcher.request(&self.cassette, &masked, None);
        match answer {
            Ok(Answer::Recorded(position) | Answer::Repeated(position)) => {
                state.matcher.give_back(&self.cassette, position);
                Some(Lookup::Recorded(self.fingerprint(position)))
            }
            Ok(Answer::Case(case)) => Some(Lookup::Case(case)),
            Err(_) => {
                let method = jsonrpc::method(request).unwrap_or_default();
                matches!(method, "ping" | "initialize" | "server/discover")
                    .then_some(Lookup::Fallback)
            }
        }
    }

    /// Counts what would answer `request` as used without taking it: a
    /// fault answered in its place ([`Handler::stand_in`]), and the next
    /// time it is asked (a client's retry) it answers as recorded.
    ///
    /// [`Handler::stand_in`]: crate::server::Handler::stand_in
    pub(crate) fn stand_in(&self, request: &Value) {
        let masked = self.masked_for_matching(request);
        let mut state = self.state();
        if let Ok(Answer::Recorded(position) | Answer::Repeated(position)) =
            state.matcher.request(&self.cassette, &masked, None)
        {
            state.matcher.give_back(&self.cassette, position);
            state.stood_in.insert(position);
        }
    }

    /// Takes what would answer `message` as if it had been played, sending
    /// nothing: the requests and notifications a live process sent before
    /// this engine was chosen for it.
    pub(crate) fn take_silently(&self, message: &Value) {
        if matches!(jsonrpc::classify(message), Ok(Kind::Request)) {
            // The era the client's handshake showed, as if it had seen it.
            self.observe_client(message);
        }
        let masked = self.masked_for_matching(message);
        let mut state = self.state();
        match jsonrpc::classify(message) {
            Ok(Kind::Request) => {
                let _ = state.matcher.request(&self.cassette, &masked, None);
            }
            Ok(Kind::Notification) => {
                let _ = state.matcher.notification(&self.cassette, &masked);
            }
            _ => {}
        }
    }

    /// `message` as matching sees it: masked, and declaring the recorded
    /// version when a legacy client asks a modern recording.
    fn masked_for_matching(&self, message: &Value) -> Value {
        let masked = self.masked(message).into_owned();
        match self.translation(message) {
            Translation::ToLegacy => {
                let version = self.cassette.protocol.version.as_deref();
                cross_era::declaring(&masked, version)
            }
            _ => masked,
        }
    }

    /// Interaction `position`'s answer as the client would see it, the
    /// live id aside: its response without `id`, and its server traffic.
    fn fingerprint(&self, position: usize) -> Value {
        let interaction = &self.cassette.interactions[position];
        let mut response = interaction
            .response
            .as_ref()
            .map_or(Value::Null, |r| r.value().clone());
        if let Value::Object(fields) = &mut response {
            fields.remove("id");
        }
        let events = |events: &[crate::cassette::Event]| -> Vec<Value> {
            events
                .iter()
                .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
                .collect()
        };
        serde_json::json!([
            response,
            events(&interaction.during),
            events(&interaction.after)
        ])
    }
}
