//! Which way each server message goes: a response back to the request in
//! flight with the live id, a notification or server request to the client
//! whose request it concerns (server requests under an id of ours), session
//! traffic during the handshake answered as the cassette recorded it or
//! relayed and kept apart; everything observed for the recording.

use serde_json::Value;
use tokio::sync::mpsc;

use super::{INTERNAL_ERROR, State, encode, with_id};
use crate::cassette::{Direction, Event};
use crate::jsonrpc;

impl State {
    /// Where a server message goes: to the request whose progress token it
    /// names, else to the newest request in flight, else to wherever the
    /// most recent request's events went.
    fn events_for(&self, message: &Value) -> Option<mpsc::UnboundedSender<Vec<u8>>> {
        let token = message
            .pointer("/params/progressToken")
            .map(jsonrpc::id_key);
        let by_token = token.and_then(|token| {
            self.in_flight
                .values()
                .find(|f| f.token.as_deref() == Some(token.as_str()))
        });
        let flight = by_token.or_else(|| self.in_flight.values().max_by_key(|f| f.seq));
        match flight {
            Some(flight) => Some(flight.sink.events.clone()),
            None => self.events.clone(),
        }
    }

    /// A server message during the handshake: session traffic. What the
    /// cassette recorded is answered as recorded and goes no further; the
    /// rest is relayed to the client and kept apart.
    pub(super) fn session_message(&mut self, message: Value) {
        let server_id = jsonrpc::id(&message).cloned();
        match (self.script.take(&message), server_id) {
            (
                Some(Event::ServerRequest {
                    client_response: Some(answer),
                    ..
                }),
                Some(id),
            ) => {
                self.send(&with_id(answer.to_value(), id));
            }
            (Some(Event::ServerRequest { .. }), Some(id)) => {
                self.refuse(
                    id,
                    "the cassette recorded no answer to this session request",
                );
            }
            (Some(_), _) => {}
            (None, server_id) => {
                if let Some(id) = &server_id {
                    self.session_requests.insert(jsonrpc::id_key(id));
                }
                self.session
                    .observe(Direction::ServerToClient, message.clone());
                let Some(events) = self.events.clone() else {
                    if let Some(id) = server_id {
                        self.refuse(id, "no client to relay the request to");
                    }
                    return;
                };
                let relayed = match server_id {
                    Some(server_id) => {
                        let ours =
                            Value::String(format!("mcpcassette-upstream-s-{}", self.take_id()));
                        self.relayed
                            .insert(jsonrpc::id_key(&ours), server_id.clone());
                        self.relayed_by_server
                            .insert(jsonrpc::id_key(&server_id), ours.clone());
                        with_id(message, ours)
                    }
                    None => message,
                };
                let _ = events.send(encode(&relayed));
            }
        }
    }

    pub(super) fn server_response(&mut self, response: Value) {
        let key = jsonrpc::id(&response)
            .map(jsonrpc::id_key)
            .unwrap_or_default();
        if self.handshake.as_ref().is_some_and(|(id, _)| *id == key) {
            if let Some((_, answer)) = self.handshake.take() {
                let _ = answer.send(response);
            }
            return;
        }
        let Some(flight) = self.in_flight.remove(&key) else {
            tracing::debug!(
                id = key,
                "a response to a request no longer in flight (cancelled?)"
            );
            return;
        };
        self.by_live.remove(&flight.live_key);
        let response = with_id(response, flight.live_id.clone());
        self.observe(Direction::ServerToClient, response.clone());
        let _ = flight.sink.responses.send(encode(&response));
    }

    pub(super) fn server_notification(&mut self, notification: Value) {
        let mut relayed = notification.clone();
        if jsonrpc::method(&notification) == Some("notifications/cancelled")
            && let Some(server_id) = notification.pointer("/params/requestId")
            && let Some(ours) = self.relayed_by_server.remove(&jsonrpc::id_key(server_id))
        {
            self.relayed.remove(&jsonrpc::id_key(&ours));
            relayed["params"]["requestId"] = ours;
        }
        let events = self.events_for(&notification);
        self.observe(Direction::ServerToClient, notification);
        match events {
            Some(events) => {
                let _ = events.send(encode(&relayed));
            }
            None => tracing::debug!("no client to pass a server notification on to"),
        }
    }

    pub(super) fn server_request(&mut self, request: Value) {
        let server_id = jsonrpc::id(&request).cloned().unwrap_or(Value::Null);
        let Some(events) = self.events_for(&request) else {
            self.refuse(server_id, "no client to relay the request to");
            return;
        };
        let ours = Value::String(format!("mcpcassette-upstream-s-{}", self.take_id()));
        self.relayed
            .insert(jsonrpc::id_key(&ours), server_id.clone());
        self.relayed_by_server
            .insert(jsonrpc::id_key(&server_id), ours.clone());
        self.observe(Direction::ServerToClient, request.clone());
        if events
            .send(encode(&with_id(request, ours.clone())))
            .is_err()
        {
            self.relayed.remove(&jsonrpc::id_key(&ours));
            self.relayed_by_server.remove(&jsonrpc::id_key(&server_id));
            self.refuse(server_id, "the client has gone");
        }
    }

    /// Answers a server request nobody can answer (not recorded).
    fn refuse(&self, server_id: Value, why: &str) {
        let message = format!("mcpcassette: {why}");
        self.send(&jsonrpc::error_response(
            server_id,
            INTERNAL_ERROR,
            &message,
            None,
        ));
    }
}
