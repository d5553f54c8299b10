//! What each live client message gets: a request its recorded answer or a
//! fallback (handshakes, `ping`, version errors, the other era's ways,
//! hand-written cases, the upstream, a miss), a notification what it
//! matched, a client's answer the play waiting for it.

use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinSet;

use super::Engine;
use crate::cassette::HttpSituation;
use crate::jsonrpc::{self, Kind, codes};
use crate::matching::Answer;
use crate::protocol::{self, Era};
use crate::replay::cross_era::{self, CrossEra, Translation};
use crate::server::{Handled, Sink};

impl Engine {
    /// Handles one JSON-RPC message.
    pub fn handle_message(self: &Arc<Self>, message: Value, sink: &Sink, tasks: &mut JoinSet<()>) {
        self.handle_message_traced(message, sink, tasks);
    }

    /// Handles one JSON-RPC message like [`Engine::handle_message`], and
    /// says which recorded interaction answers it, if one does, so that a
    /// transport can replay how that answer travelled (HTTP status, SSE
    /// framing). Matching happens before this returns.
    pub fn handle_message_traced(
        self: &Arc<Self>,
        message: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> Option<usize> {
        self.handle_message_in(message, sink, tasks, &HttpSituation::default())
            .interaction()
    }

    /// Handles a message that arrived over HTTP in `situation`. In an
    /// out-of-the-ordinary situation (a stale session, a foreign origin,
    /// mismatched headers) only a recording made in the same situation
    /// answers, faithfully, whatever the recorded server did; otherwise
    /// nothing is sent and [`Handled::NotRecorded`] lets the transport answer
    /// as the specification says.
    pub fn handle_message_in(
        self: &Arc<Self>,
        message: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: &HttpSituation,
    ) -> Handled {
        let tag = situation.tag();
        match jsonrpc::classify(&message) {
            Ok(Kind::Request) => self.request(message, sink, tasks, tag.as_deref()),
            Ok(Kind::Notification) if tag.is_some() => Handled::NotRecorded,
            Ok(Kind::Notification) => Handled::Answered(self.notification(&message, sink, tasks)),
            Ok(Kind::Response) => {
                self.client_response(message);
                Handled::Answered(None)
            }
            Err(invalid) => {
                sink.respond(&crate::server::invalid_request(&message, &invalid));
                Handled::Answered(None)
            }
        }
    }

    /// Answers a request. Recorded answers come first, so replay is faithful
    /// to the recorded server even where it deviated from the specification;
    /// then the fallbacks: handshakes and `ping` are always answered, version
    /// errors, hand-written cases, the upstream, and finally a miss.
    fn request(
        self: &Arc<Self>,
        request: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: Option<&str>,
    ) -> Handled {
        let id = jsonrpc::id(&request).cloned().unwrap_or(Value::Null);
        let method = jsonrpc::method(&request).unwrap_or_default();
        if method == "initialize"
            && let Some(upstream) = &self.config.upstream
        {
            upstream.handshake(&request);
        }
        let translation = self.observe_client(&request);
        if translation == Translation::ToModern
            && let Some(position) = cross_era::retry_position(&request)
            && position < self.cassette.interactions.len()
        {
            self.finish_retry(position, request, sink);
            return Handled::Answered(Some(position));
        }
        let mut masked = self.masked(&request);
        if translation == Translation::ToLegacy {
            let version = self.cassette.protocol.version.as_deref();
            masked = std::borrow::Cow::Owned(cross_era::declaring(&masked, version));
        }
        // A statement of its own, so the lock is released here.
        let answer = self
            .state()
            .matcher
            .request(&self.cassette, &masked, situation);
        let refusal = match answer {
            Ok(Answer::Recorded(position) | Answer::Repeated(position)) => {
                return Handled::Answered(Some(self.play_request(position, request, sink, tasks)));
            }
            Ok(Answer::Case(case)) => {
                self.answer_case(case, id, sink);
                return Handled::Answered(None);
            }
            Err(refusal) => refusal,
        };
        if situation.is_some() {
            return Handled::NotRecorded;
        }
        if let Some(error) = self.version_error(&request) {
            sink.respond(&error.with_id(id));
            return Handled::Answered(None);
        }
        match method {
            "ping" => {
                sink.respond(&jsonrpc::result_response(id, serde_json::json!({})));
                return Handled::Answered(None);
            }
            "initialize" | "server/discover" => {
                if let Some(position) = self.handshake(method) {
                    self.state().matcher.mark_used(position);
                    return Handled::Answered(Some(
                        self.play_request(position, request, sink, tasks),
                    ));
                }
                if let Some(answered) = self.translate_handshake(method, &request, sink) {
                    return Handled::Answered(Some(answered));
                }
                if method == "server/discover" && self.cassette.protocol.era != Era::Modern {
                    if let Some(mismatch) =
                        crate::replay::era::EraMismatch::detect(&self.cassette, &request)
                    {
                        tracing::info!(
                            "a client probed server/discover; this {} cassette answers -32601 as a legacy server does. A client that cannot fall back to initialize: {}",
                            mismatch.cassette_era,
                            mismatch.advice()
                        );
                    }
                    // What a legacy server says to a modern probe.
                    let text = format!("Method not found: {method}");
                    sink.respond(&jsonrpc::error_response(
                        id,
                        codes::METHOD_NOT_FOUND,
                        &text,
                        None,
                    ));
                    return Handled::Answered(None);
                }
            }
            _ => {}
        }
        if self.config.upstream.is_none() && self.subscribe_across_eras(translation, &request, sink)
        {
            return Handled::Answered(None);
        }
        if self.config.upstream.is_none()
            && let Some(answer) = cross_era::unrecorded(translation, method, &id)
        {
            sink.respond(&answer);
            return Handled::Answered(None);
        }
        match &self.config.upstream {
            Some(upstream) => {
                tasks.spawn(upstream.forward(request, sink.clone()));
            }
            None => self.miss(&masked, refusal, sink),
        }
        Handled::Answered(None)
    }

    /// The other era's way to subscribe, answered from this recording (see
    /// [`subscriptions`]): a modern client's `subscriptions/listen` on a
    /// legacy cassette opens a stream fed by the recorded change
    /// notifications; a legacy client's `resources/subscribe` and
    /// `resources/unsubscribe` on a modern one are accepted and decide
    /// which `resources/updated` it gets. Whether it answered.
    fn subscribe_across_eras(
        &self,
        translation: Translation,
        request: &Value,
        sink: &Sink,
    ) -> bool {
        let method = jsonrpc::method(request).unwrap_or_default();
        match (translation, method) {
            (Translation::ToModern, "subscriptions/listen") => {
                let capabilities = self
                    .cassette
                    .server
                    .as_ref()
                    .map_or(&Value::Null, |server| &server.capabilities);
                let ack = self
                    .state()
                    .listeners
                    .open_translated(request, capabilities, sink);
                sink.event(&ack);
                true
            }
            (Translation::ToLegacy, "resources/subscribe" | "resources/unsubscribe") => {
                let subscribe = method == "resources/subscribe";
                self.state().listeners.subscription(request, subscribe);
                let id = jsonrpc::id(request).cloned().unwrap_or(Value::Null);
                sink.respond(&jsonrpc::result_response(id, serde_json::json!({})));
                true
            }
            _ => false,
        }
    }

    /// The other era's handshake, answered from this cassette's own:
    /// `initialize` from a recorded `server/discover`, `server/discover`
    /// from a recorded `initialize`. Returns the interaction it came from.
    fn translate_handshake(&self, method: &str, request: &Value, sink: &Sink) -> Option<usize> {
        if self.config.cross_era == CrossEra::Off {
            return None;
        }
        let id = jsonrpc::id(request).cloned().unwrap_or(Value::Null);
        let (recorded, result): (usize, Value) = match (method, self.cassette.protocol.era) {
            ("initialize", Era::Modern) => {
                let position = self.handshake("server/discover")?;
                let discover = self.recorded_result(position)?;
                let asked = protocol::requested_version(request);
                (position, cross_era::initialize_result(discover, asked))
            }
            ("server/discover", Era::Legacy) => {
                let position = self.handshake("initialize")?;
                (
                    position,
                    cross_era::discover_result(self.recorded_result(position)?),
                )
            }
            _ => return None,
        };
        self.state().matcher.mark_used(recorded);
        sink.respond(&jsonrpc::result_response(id, result));
        Some(recorded)
    }

    /// The result interaction `position` answered with.
    fn recorded_result(&self, position: usize) -> Option<&Value> {
        self.cassette.interactions[position]
            .response
            .as_ref()?
            .get("result")
    }

    /// Answers from a hand-written case.
    fn answer_case(&self, case: usize, id: Value, sink: &Sink) {
        let rules = self.state().matcher.rules().clone();
        let case = &rules.cases[case];
        let response = match (&case.result, &case.error) {
            (Some(result), _) => jsonrpc::result_response(id, result.clone()),
            (None, Some(error)) => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}),
            (None, None) => {
                jsonrpc::error_response(id, codes::INVALID_REQUEST, "case without an answer", None)
            }
        };
        sink.respond(&response);
    }

    /// Handshakes are answered from the first recording of them, however
    /// often they are asked and whatever clientInfo or capabilities say.
    fn handshake(&self, method: &str) -> Option<usize> {
        self.cassette.interactions.iter().position(|i| {
            i.method() == method && i.response.as_ref().is_some_and(|r| r.has_member("result"))
        })
    }

    /// A modern request naming a version the recorded server did not offer.
    fn version_error(&self, request: &Value) -> Option<ErrorReply> {
        let declared = protocol::declared_version(request)?;
        if self.cassette.protocol.era != Era::Modern {
            return None;
        }
        let supported: Vec<&str> = self
            .handshake("server/discover")
            .and_then(|p| self.cassette.interactions[p].response.as_ref())
            .and_then(|r| r.pointer("/result/supportedVersions"))
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_else(|| {
                self.cassette
                    .protocol
                    .version
                    .as_deref()
                    .into_iter()
                    .collect()
            });
        if supported.is_empty() || supported.contains(&declared) {
            return None;
        }
        Some(ErrorReply {
            code: codes::UNSUPPORTED_PROTOCOL_VERSION,
            message: format!("Unsupported protocol version: {declared}"),
            data: Some(serde_json::json!({"supported": supported, "requested": declared})),
        })
    }

    /// Takes a notification; returns the recorded interaction it matched.
    fn notification(
        self: &Arc<Self>,
        notification: &Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> Option<usize> {
        if jsonrpc::method(notification) == Some("notifications/cancelled") {
            let id = notification
                .pointer("/params/requestId")
                .map(jsonrpc::id_key);
            if let Some(id) = id {
                let mut state = self.state();
                if let Some(live) = notification.pointer("/params/requestId") {
                    state.listeners.close(live);
                }
                state.unanswered.remove(&id);
                if let Some(handle) = state.running.remove(&id) {
                    handle.abort();
                }
            }
        }
        if let Some(upstream) = &self.config.upstream {
            upstream.notify(notification);
        }
        let masked = self.masked(notification);
        let position = self.state().matcher.notification(&self.cassette, &masked);
        if let Some(position) = position {
            self.start(position, notification.clone(), sink, tasks);
        }
        position
    }

    fn client_response(&self, response: Value) {
        let Some(id) = jsonrpc::id(&response).map(jsonrpc::id_key) else {
            return;
        };
        let waiter = self.state().pending.remove(&id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(response);
            }
            None => {
                let upstream = self.config.upstream.as_ref();
                if !upstream.is_some_and(|u| u.client_response(&response)) {
                    tracing::warn!(id, "client answered a request replay never sent");
                }
            }
        }
    }
}

/// An error reply the engine makes up itself.
struct ErrorReply {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl ErrorReply {
    fn with_id(self, id: Value) -> Value {
        jsonrpc::error_response(id, self.code, &self.message, self.data)
    }
}
