//! Pairing what the client sends with what the server answers, by id,
//! with any number in flight, and settling an interaction once nothing can
//! change it (so it may leave memory).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::describe::describes;
use super::{Builder, Direction, Place, is_challenge, prepare};
use crate::cassette::format::{ClientMessage, Event, Interaction};
use crate::cassette::spill::Settled;
use crate::jsonrpc::{self, Kind};

impl Builder {
    /// Keeps interaction `index` in memory until [`release`](Self::release):
    /// the HTTP recorder revises an exchange after its messages are filed
    /// (status, headers, SSE framing), so it holds each interaction a POST
    /// opens, right after filing it, until that POST's answer is over.
    pub fn hold(&mut self, index: usize) {
        self.held.insert(index);
    }

    /// Lets a [`hold`](Self::hold) go: the interaction settles as soon as
    /// nothing else keeps it. Whether it was held.
    pub fn release(&mut self, index: usize) -> bool {
        let held = self.held.remove(&index);
        if held {
            self.try_settle(index);
        }
        held
    }

    /// Gives up on a request whose answer ended without a response (an HTTP
    /// error, say): it stays in the cassette without one, like a cancelled
    /// request, and later server traffic is no longer filed under it.
    pub fn unanswered(&mut self, request_id: &Value) {
        if let Some(index) = self.in_flight.take(&jsonrpc::id_key(request_id)) {
            self.close(index);
        }
    }

    /// Gives up on the request of interaction `index` (see
    /// [`unanswered`](Self::unanswered)), as a recovery does for one whose
    /// answer was an authentication challenge: the client's retry carries
    /// the same id, and its response must not land here.
    pub fn unanswered_at(&mut self, index: usize) {
        if self.in_flight.remove_index(index) {
            self.close(index);
        }
    }

    /// Files `response` as the answer to the client request `request_id`,
    /// whatever id it carries: over HTTP the answer to a POST answers the
    /// request it carried, and a server that rejects the POST itself (no
    /// session, say) answers with an error whose id is `null`.
    pub fn respond_to(&mut self, request_id: &Value, response: Value) {
        let Some(index) = self.in_flight.take(&jsonrpc::id_key(request_id)) else {
            let id = jsonrpc::id_key(request_id);
            tracing::warn!(id, "server answered a request that is not in flight");
            return;
        };
        self.answer(index, response);
    }

    /// Files one message seen `at` this long into the session, keeping the
    /// timing `--pace recorded` replays over stdio (`delays_ms`). A session
    /// is observed either all timed or all untimed.
    pub fn observe_at(&mut self, direction: Direction, message: Value, at: Duration) {
        self.now = Some(at);
        self.observe(direction, message);
        self.now = None;
    }

    /// Files one server message that arrived on the SSE stream answering
    /// the POST that opened interaction `owner`: Streamable HTTP sends a
    /// request's related notifications and requests on its own stream, so
    /// it is that request's whatever else is in flight (with two calls
    /// running at once, the most recent is often the other one).
    pub fn observe_on_stream(&mut self, owner: Option<usize>, message: Value) {
        self.stream_of = owner;
        self.observe(Direction::ServerToClient, message);
        self.stream_of = None;
    }

    /// Files one message. Messages that are not JSON-RPC are ignored: they
    /// were forwarded unchanged, and nothing in a cassette can refer to them.
    pub fn observe(&mut self, direction: Direction, message: Value) {
        let Ok(kind) = jsonrpc::classify(&message) else {
            tracing::warn!("not a JSON-RPC message, forwarded but not recorded");
            return;
        };
        match (direction, kind) {
            (Direction::ClientToServer, Kind::Request) => self.client_request(message),
            (Direction::ClientToServer, Kind::Notification) => self.client_notification(message),
            (Direction::ClientToServer, Kind::Response) => self.client_response(message),
            (Direction::ServerToClient, Kind::Response) => self.server_response(message),
            (Direction::ServerToClient, Kind::Notification) => {
                let event = |message: Value| Event::Notification {
                    notification: message.into(),
                };
                match self.candidates_for(&message) {
                    Some(candidates) => self.wait_for_answer(event(message), candidates),
                    None => {
                        let place = self.place_for(&message);
                        self.file(place, event(message));
                    }
                }
            }
            (Direction::ServerToClient, Kind::Request) => {
                let id = jsonrpc::id(&message).map(jsonrpc::id_key);
                let place = self.place_for(&message);
                let place = self.file(
                    place,
                    Event::ServerRequest {
                        server_request: message.into(),
                        client_response: None,
                    },
                );
                if let Some(id) = id {
                    if let Place::During(n, _) | Place::After(n, _) = place {
                        *self.waiting.entry(n).or_default() += 1;
                    }
                    if let Some(Place::During(n, _) | Place::After(n, _)) =
                        self.server_requests.insert(id, place)
                    {
                        // A server request id used again: the first is no
                        // longer waited for.
                        self.stop_waiting(n);
                    }
                }
            }
        }
    }

    fn client_request(&mut self, message: Value) {
        let index = self.interactions.len();
        if let Some(id) = jsonrpc::id(&message) {
            let key = jsonrpc::id_key(id);
            if self.in_flight.insert(key.clone(), index) {
                tracing::warn!(
                    id = key,
                    "the client sent a request with the id of one still in flight; their answers are paired in order"
                );
            }
        }
        if let Some(token) = jsonrpc::progress_token(&message) {
            self.progress.insert(jsonrpc::id_key(token), index);
        }
        self.open.insert(index);
        self.push(ClientMessage::Request(message.into()));
    }

    fn client_notification(&mut self, message: Value) {
        if jsonrpc::method(&message) == Some("notifications/cancelled") {
            // The request stays in the cassette without a response.
            let id = message.pointer("/params/requestId").map(jsonrpc::id_key);
            if let Some(index) = id.and_then(|id| self.in_flight.take(&id)) {
                self.close(index);
            }
        }
        self.push(ClientMessage::Notification(message.into()));
    }

    fn client_response(&mut self, message: Value) {
        let Some(id) = jsonrpc::id(&message).map(jsonrpc::id_key) else {
            return;
        };
        let Some(place) = self.server_requests.remove(&id) else {
            tracing::warn!(id, "client answered a server request that was never seen");
            return;
        };
        let event = match place {
            Place::Opening(i) => &mut self.opening[i],
            Place::During(n, i) => &mut self.interactions[n].during[i],
            Place::After(n, i) => &mut self.interactions[n].after[i],
        };
        if let Event::ServerRequest {
            client_response, ..
        } = event
        {
            *client_response = Some(message.into());
        }
        if let Place::During(n, _) | Place::After(n, _) = place
            && let Some(waiting) = self.waiting.get_mut(&n)
        {
            *waiting -= 1;
            if *waiting == 0 {
                self.waiting.remove(&n);
                self.try_settle(n);
            }
        }
    }

    fn server_response(&mut self, message: Value) {
        let Some(id) = jsonrpc::id(&message).map(jsonrpc::id_key) else {
            return;
        };
        let Some(index) = self.in_flight.take(&id) else {
            tracing::warn!(id, "server answered a request that is not in flight");
            return;
        };
        self.answer(index, message);
    }

    /// Files `response` as the answer to the request of interaction
    /// `index`, after the notifications waiting for it.
    fn answer(&mut self, index: usize, response: Value) {
        self.decide_answered(index);
        self.interactions[index].response = Some(response.into());
        self.note_delay(index);
        self.close(index);
    }

    fn push(&mut self, client: ClientMessage) {
        let previous = self.last_client.replace(self.interactions.len());
        if let Some(now) = self.now {
            self.client_at.insert(self.interactions.len(), now);
        }
        self.interactions.push(Interaction {
            client,
            during: Vec::new(),
            response: None,
            after: Vec::new(),
            delays_ms: Vec::new(),
            http: None,
            process: 0,
        });
        if let Some(previous) = previous {
            self.try_settle(previous);
        }
    }

    fn close(&mut self, index: usize) {
        self.open.remove(&index);
        let token = self.interactions[index]
            .client
            .raw()
            .meta_member("progressToken")
            .map(|token| jsonrpc::id_key(&token));
        if let Some(token) = token {
            self.progress.remove(&token);
        }
        self.decide_orphans();
        self.try_settle(index);
    }

    fn stop_waiting(&mut self, index: usize) {
        if let Some(waiting) = self.waiting.get_mut(&index) {
            *waiting -= 1;
            if *waiting == 0 {
                self.waiting.remove(&index);
                self.try_settle(index);
            }
        }
    }

    /// Lets interaction `index` leave memory (see [`Builder::spill_in`])
    /// once nothing can change it: its request is answered (or given up
    /// on), a later client message came (what the server sends unprompted
    /// now follows that one), no server request filed under it waits
    /// for the client's answer, no notification waiting for an answer
    /// may go to it, and the recorder does not hold it.
    pub(super) fn try_settle(&mut self, index: usize) {
        if self.open.contains(&index)
            || self.last_client == Some(index)
            || self.waiting.contains_key(&index)
            || self.pinned.contains_key(&index)
            || self.held.contains(&index)
        {
            return;
        }
        let Some(interaction) = self.interactions.get_mut(index) else {
            return;
        };
        let challenge = is_challenge(interaction);
        let (handshake, declares) = describes(interaction);
        if handshake || declares {
            // Only the first of each is read, by index; interactions
            // settle in any order, so the earliest seen so far are kept.
            self.described.insert(index, interaction.clone());
            let first = |kind: fn((bool, bool)) -> bool,
                         described: &BTreeMap<usize, Interaction>| {
                described
                    .iter()
                    .find(|(_, kept)| kind(describes(kept)))
                    .map(|(&at, _)| at)
            };
            let handshake = first(|(h, _)| h, &self.described);
            let declares = first(|(_, d)| d, &self.described);
            self.described
                .retain(|&at, _| Some(at) == handshake || Some(at) == declares);
        }
        // Settled: no message will be timed against it again.
        self.client_at.remove(&index);
        if self.interactions.settle(index, prepare) == Settled::Dropped && challenge {
            self.dropped_challenges += 1;
        }
    }
}
