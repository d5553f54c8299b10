//! Playing a recorded answer: the interaction's notifications, its server
//! requests (waiting for the client's answers, compared with the recorded
//! ones), its response with the live id, what came after; inline when it
//! needs nothing from the client, else as a task a cancellation aborts.
//! Cross-era plays (`input_required` and its retry) are here too.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::rewrite::{Origin, Tokens, WithId};
use super::timing::Timing;
use super::{Engine, Unanswered};
use crate::cassette::{Event, EventRef, Interaction};
use crate::json::RawMessage;
use crate::jsonrpc;
use crate::protocol;
use crate::replay::answers::{ANSWER_MISMATCH, AnswerMismatch};
use crate::replay::cross_era::{self, Translation};
use crate::replay::subscriptions::{self, Route};
use crate::server::{Pace, Sink};

/// Why playing an interaction stopped before its end.
enum Stop {
    /// The client can no longer answer a server request.
    ClientGone,
    /// `strict`: the client answered a server request otherwise than
    /// recorded.
    Refused(Box<AnswerMismatch>),
}

impl Engine {
    /// A modern client's retry of a legacy interaction whose server asked
    /// the client for something: its answers (`inputResponses`) are
    /// compared with the recorded ones, then the rest of the recorded
    /// answer is played.
    pub(super) fn finish_retry(&self, position: usize, retry: Value, sink: &Sink) {
        self.state().matcher.retake(&self.cassette, position);
        let interaction = &self.cassette.interactions[position];
        let asked = cross_era::server_requests(interaction);
        for (index, (server_request, recorded)) in asked.iter().enumerate() {
            let key = cross_era::input_key(index);
            let live = cross_era::input_response(&retry, &key).unwrap_or(Value::Null);
            let live = self.masked(&live).into_owned();
            if let Some(mismatch) =
                AnswerMismatch::compare(Some(position), server_request, *recorded, &live)
                && self.note_mismatch(&mismatch)
            {
                refuse(sink, &retry, &mismatch);
                return;
            }
        }
        let tokens = Tokens::new(interaction, &retry, Translation::ToModern);
        let first_request = first_server_request(&interaction.during);
        self.send_notifications(
            &interaction.during[first_request..],
            Origin::During(first_request),
            &tokens,
            sink,
        );
        if let Some(response) = &interaction.response {
            let response = Translation::ToModern.response(interaction.client.message(), response);
            sink.respond(&WithId(&response, jsonrpc::id(&retry)));
        }
        self.send_notifications(&interaction.after, Origin::After(0), &tokens, sink);
    }

    /// Plays a recorded answer to a request; returns its position.
    pub(super) fn play_request(
        self: &Arc<Self>,
        position: usize,
        request: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> usize {
        if jsonrpc::method(&request) == Some("initialize") {
            self.note_version_downgrade(&request, position);
        }
        self.start(position, request, sink, tasks);
        position
    }

    /// Plays interaction `position` for the live client message: inline when
    /// it needs nothing from the client and no waiting, else as a task that
    /// a `notifications/cancelled` naming the live request can abort.
    pub(super) fn start(
        self: &Arc<Self>,
        position: usize,
        live: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) {
        let interaction = &self.cassette.interactions[position];
        // A listen stream is open until the client closes it: recorded
        // without a response is how it ends, not a lost answer. Nor is an
        // HTTP refusal (a 403 page for a foreign origin): that is the answer.
        let stream = interaction.method() == "subscriptions/listen";
        let refused = interaction
            .http
            .as_ref()
            .is_some_and(|http| http.status >= 400 || http.body.is_some());
        if interaction.response.is_none()
            && !stream
            && !refused
            && let Some(id) = interaction.request().and(jsonrpc::id(&live))
        {
            self.state().unanswered.insert(
                jsonrpc::id_key(id),
                Unanswered {
                    id: id.clone(),
                    interaction: position,
                    label: interaction.label(),
                },
            );
        }
        let translation = self.translation(&live);
        if stream
            && translation != Translation::ToLegacy
            && let Some(recorded) = interaction.request().and_then(jsonrpc::id)
        {
            // Before its acknowledgement plays, which goes down it.
            self.state().listeners.open_recorded(recorded, &live, sink);
        }
        if translation == Translation::ToModern && needs_client(&interaction.during) {
            // The server asked the client for something: a modern client
            // is asked in an `input_required` result, and retries.
            let tokens = Tokens::new(interaction, &live, translation);
            let first_request = first_server_request(&interaction.during);
            self.send_notifications(
                &interaction.during[..first_request],
                Origin::During(0),
                &tokens,
                sink,
            );
            let requests = cross_era::server_requests(interaction);
            let result = cross_era::input_required(&requests, position);
            let id = jsonrpc::id(&live).cloned().unwrap_or(Value::Null);
            sink.respond(&jsonrpc::result_response(id, result));
            // Only the retry completes it: asked again, it asks again.
            self.state().matcher.give_back(&self.cassette, position);
            return;
        }
        let asks_client = translation == Translation::ToLegacy
            && interaction
                .response
                .as_deref()
                .is_some_and(cross_era::is_input_required);
        let paced = sink.delivery.pace == Pace::Recorded && !interaction.delays_ms.is_empty();
        if !paced
            && !asks_client
            && !needs_client(&interaction.during)
            && !needs_client(&interaction.after)
        {
            self.play_now(interaction, &live, sink, translation);
            return;
        }
        let asked = Instant::now();
        let id = jsonrpc::id(&live).map(jsonrpc::id_key);
        let engine = Arc::clone(self);
        let sink = sink.clone();
        // Holding the lock while spawning keeps the task from finishing (and
        // deregistering) before it is registered.
        let mut state = self.state();
        let task_id = id.clone();
        let handle = tasks.spawn(async move {
            if asks_client {
                engine.play_input_required(position, &live, &sink).await;
            } else {
                engine.play(position, &live, &sink, asked).await;
            }
            if let Some(id) = task_id {
                engine.state().running.remove(&id);
            }
        });
        if let Some(id) = id {
            state.running.insert(id, handle);
        }
    }

    /// Sends the server messages the recording opened with, before any
    /// client message.
    pub fn play_opening(self: &Arc<Self>, sink: &Sink, tasks: &mut JoinSet<()>) {
        let opening = &self.cassette.opening;
        if !needs_client(opening) {
            self.send_notifications(opening, Origin::Opening, &Tokens::NONE, sink);
            return;
        }
        let engine = Arc::clone(self);
        let sink = sink.clone();
        tasks.spawn(async move {
            let _ = engine
                .play_events(
                    None,
                    &engine.cassette.opening,
                    Origin::Opening,
                    &Tokens::NONE,
                    &sink,
                )
                .await;
        });
    }

    /// Version negotiation: a replay supports exactly the recorded version,
    /// the only one its answers are valid for, so that is what it answers
    /// with (the spec lets a server answer with another version it supports).
    fn note_version_downgrade(&self, request: &Value, position: usize) {
        let recorded = self.cassette.interactions[position]
            .response
            .as_ref()
            .and_then(|r| r.pointer("/result/protocolVersion"))
            .and_then(Value::as_str);
        if let (Some(asked), Some(recorded)) = (protocol::requested_version(request), recorded)
            && asked != recorded
        {
            tracing::info!(
                "client asked for protocol {asked}; answering with the recorded {recorded}"
            );
        }
    }

    /// Plays an interaction that needs answers from the client or keeps its
    /// recorded timing; `asked` is when the live message arrived.
    async fn play(&self, position: usize, live: &Value, sink: &Sink, asked: Instant) {
        let interaction = &self.cassette.interactions[position];
        let tokens = Tokens::new(interaction, live, self.translation(live));
        let timing = Timing::new(interaction, sink, asked);
        // Whether notifications went out that the client may not have read:
        // its answer to a server request shows it read what came before.
        let mut unread = false;
        for (index, event) in interaction.during.iter().enumerate() {
            timing.wait(index).await;
            let at = Some(EventRef::During(index));
            match self
                .play_event(Some(position), event, at, &tokens, sink)
                .await
            {
                Ok(Played::Notified) => unread = true,
                Ok(Played::Dropped) => {}
                Ok(Played::Answered) => unread = false,
                Err(Stop::ClientGone) => return,
                Err(Stop::Refused(mismatch)) => {
                    refuse(sink, live, &mismatch);
                    return;
                }
            }
        }
        if let Some(response) = &interaction.response {
            timing.wait(interaction.during.len()).await;
            if unread {
                sink.barrier();
            }
            let response = self
                .translation(live)
                .response(interaction.client.message(), response);
            sink.respond(&WithId(&response, jsonrpc::id(live)));
        }
        let _ = self
            .play_events(
                Some(position),
                &interaction.after,
                Origin::After(0),
                &tokens,
                sink,
            )
            .await;
    }

    /// Plays a modern interaction answered with `input_required` to a
    /// legacy client: each input request goes to the client as the server
    /// request it stands for, and its answer is compared with the one the
    /// recorded retry carried; then the recorded retry's answer is played
    /// (which may ask again), until the final one.
    async fn play_input_required(&self, position: usize, live: &Value, sink: &Sink) {
        let id = jsonrpc::id(live);
        let mut current = position;
        loop {
            let interaction = &self.cassette.interactions[current];
            let tokens = Tokens::new(interaction, live, Translation::ToLegacy);
            if self
                .play_events(
                    Some(current),
                    &interaction.during,
                    Origin::During(0),
                    &tokens,
                    sink,
                )
                .await
                .is_err()
            {
                return;
            }
            let Some(response) = &interaction.response else {
                return;
            };
            if !cross_era::is_input_required(response) {
                let response =
                    Translation::ToLegacy.response(interaction.client.message(), response);
                sink.respond(&WithId(&response, id));
                let _ = self
                    .play_events(
                        Some(current),
                        &interaction.after,
                        Origin::After(0),
                        &tokens,
                        sink,
                    )
                    .await;
                return;
            }
            let Some(retry) = self.cassette.recorded_retry(current) else {
                let message = format!(
                    "mcpcassette: interaction #{current} answered input_required, and the cassette has no retry of it to answer a legacy client with"
                );
                let id = id.cloned().unwrap_or(Value::Null);
                sink.respond(&jsonrpc::error_response(id, NO_RETRY, &message, None));
                return;
            };
            let retry_request = self.cassette.interactions[retry].request();
            for (key, server_request) in cross_era::input_requests(&response["result"]) {
                let recorded = retry_request.and_then(|r| cross_era::input_response(r, &key));
                let event = Event::ServerRequest {
                    server_request: server_request.into(),
                    client_response: recorded.map(RawMessage::from),
                };
                match self
                    .play_event(Some(current), &event, None, &tokens, sink)
                    .await
                {
                    Ok(_) => {}
                    Err(Stop::ClientGone) => return,
                    Err(Stop::Refused(mismatch)) => {
                        refuse(sink, live, &mismatch);
                        return;
                    }
                }
            }
            self.state().matcher.mark_used(retry);
            current = retry;
        }
    }

    /// Sends events in order, until one stops the play.
    async fn play_events(
        &self,
        position: Option<usize>,
        events: &[Event],
        origin: Origin,
        tokens: &Tokens<'_>,
        sink: &Sink,
    ) -> Result<(), Stop> {
        for (index, event) in events.iter().enumerate() {
            self.play_event(position, event, origin.at(index), tokens, sink)
                .await?;
        }
        Ok(())
    }

    /// Sends one event; a server request waits for the client's answer,
    /// which is compared with the recorded one.
    async fn play_event(
        &self,
        position: Option<usize>,
        event: &Event,
        at: Option<EventRef>,
        tokens: &Tokens<'_>,
        sink: &Sink,
    ) -> Result<Played, Stop> {
        match event {
            Event::Notification { notification } => {
                let sent = tokens
                    .rewrite(notification)
                    .is_some_and(|notification| self.notify(notification, at, tokens, sink));
                Ok(if sent {
                    Played::Notified
                } else {
                    Played::Dropped
                })
            }
            Event::ServerRequest {
                server_request,
                client_response,
            } => {
                let (tx, rx) = oneshot::channel();
                let id = {
                    let mut state = self.state();
                    let id = state.next_server_id;
                    state.next_server_id += 1;
                    state.pending.insert(jsonrpc::id_key(&id.into()), tx);
                    id
                };
                let request = WithId(server_request, Some(&id.into()));
                match tokens.streamed(at) {
                    Some(frame) => sink.session_event(&request, frame),
                    None => sink.event(&request),
                }
                let answer = rx.await.map_err(|_| Stop::ClientGone)?;
                let live = self.masked(&answer);
                let Some(mismatch) = AnswerMismatch::compare(
                    position,
                    server_request,
                    client_response.as_deref(),
                    &live,
                ) else {
                    return Ok(Played::Answered);
                };
                if self.note_mismatch(&mismatch) {
                    return Err(Stop::Refused(Box::new(mismatch)));
                }
                Ok(Played::Answered)
            }
        }
    }

    /// Plays an interaction that needs nothing from the client, its answer
    /// shaped for the client's era.
    fn play_now(
        &self,
        interaction: &Interaction,
        live: &Value,
        sink: &Sink,
        translation: Translation,
    ) {
        let tokens = Tokens::new(interaction, live, translation);
        let sent = self.send_notifications(&interaction.during, Origin::During(0), &tokens, sink);
        if let Some(response) = &interaction.response {
            if sent > 0 {
                sink.barrier();
            }
            // The common case writes the recorded text, with the live id.
            let raw = (translation == Translation::None)
                .then(|| response.text_with_id(jsonrpc::id(live)?))
                .flatten();
            match raw {
                Some(text) => sink.respond_encoded(text.into_bytes()),
                None => {
                    let response = translation.response(interaction.client.message(), response);
                    sink.respond(&WithId(&response, jsonrpc::id(live)));
                }
            }
        }
        self.send_notifications(&interaction.after, Origin::After(0), &tokens, sink);
    }

    /// Sends the notifications among `events` (callers check there are no
    /// server requests); returns how many went to `sink`.
    fn send_notifications(
        &self,
        events: &[Event],
        origin: Origin,
        tokens: &Tokens<'_>,
        sink: &Sink,
    ) -> usize {
        let mut sent = 0;
        for (index, event) in events.iter().enumerate() {
            if let Event::Notification { notification } = event
                && let Some(notification) = tokens.rewrite(notification)
                && self.notify(notification, origin.at(index), tokens, sink)
            {
                sent += 1;
            }
        }
        sent
    }

    /// Sends a recorded notification (the message `at` of its interaction),
    /// rewritten for the live request, where it goes: down the session's
    /// GET stream when it travelled there, framed as it was; a change
    /// notification to the listen streams that asked for it (see
    /// [`subscriptions`]); anything else to `sink`. Whether it went to
    /// `sink`.
    fn notify(
        &self,
        notification: Value,
        at: Option<EventRef>,
        tokens: &Tokens<'_>,
        sink: &Sink,
    ) -> bool {
        if let Some(frame) = tokens.streamed(at)
            && sink.has_session()
        {
            sink.session_event(&notification, frame);
            return false;
        }
        if !subscriptions::concerns(&notification) {
            sink.event(&notification);
            return true;
        }
        let route = self
            .state()
            .listeners
            .route(&notification, tokens.translation);
        match route {
            Route::Here(notification) => {
                sink.event(&notification);
                true
            }
            Route::Streams(streams) => {
                for (stream, notification) in streams {
                    stream.event(&notification);
                }
                false
            }
            Route::Dropped => false,
        }
    }
}

/// What sending one event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Played {
    /// A notification went out.
    Notified,
    /// A notification was left out (progress nobody asked for).
    Dropped,
    /// A server request went out and the client answered it.
    Answered,
}

/// Answers `live` with the error `strict` gives a client answer unlike the
/// recorded one.
fn refuse(sink: &Sink, live: &Value, mismatch: &AnswerMismatch) {
    let id = jsonrpc::id(live).cloned().unwrap_or(Value::Null);
    let data = serde_json::to_value(mismatch).ok();
    sink.respond(&jsonrpc::error_response(
        id,
        ANSWER_MISMATCH,
        &mismatch.message(),
        data,
    ));
}

/// Where the first server request is among `events` (their length if
/// there is none).
fn first_server_request(events: &[Event]) -> usize {
    events
        .iter()
        .position(|e| matches!(e, Event::ServerRequest { .. }))
        .unwrap_or(events.len())
}

/// The error of a cross-era play that cannot go on: a modern
/// `input_required` answer without the recorded retry a legacy client's
/// answers would feed (in the range MCP leaves to implementations).
const NO_RETRY: i64 = -32005;

/// Whether playing `events` needs answers from the client.
fn needs_client(events: &[Event]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::ServerRequest { .. }))
}
