//! Where a [`Handler`](super::Handler) sends the server messages for one
//! client message, and what the transport asks of it beyond them.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::pace::Pace;
use super::raw_ids::RawIds;
use crate::cassette::SseFrame;

/// Where the engine sends server messages for one client message, as
/// encoded JSON (one message per `Vec`, no newline).
#[derive(Debug, Clone)]
pub struct Sink {
    /// Notifications and server-to-client requests (and barriers, when
    /// `delivery` asks for them).
    pub events: mpsc::UnboundedSender<Vec<u8>>,
    /// The response (kept apart so a batch can gather its responses).
    pub responses: mpsc::UnboundedSender<Vec<u8>>,
    /// What the transport asks of the engine beyond the messages.
    pub delivery: Delivery,
    /// Ids to write back as the client wrote them.
    ids: Arc<RawIds>,
    /// The session's own stream (HTTP GET), for server messages recorded
    /// there; `None` where there is none, and they go to `events`.
    session: Option<SessionStream>,
}

/// Where a transport takes server messages that travel on the session's
/// own stream, each with the SSE framing it was recorded with.
#[derive(Clone)]
pub(crate) struct SessionStream(Arc<SendToSession>);

/// Takes one encoded message and its recorded framing.
type SendToSession = dyn Fn(Vec<u8>, &SseFrame) + Send + Sync;

impl SessionStream {
    /// Messages handed to `send`.
    pub(crate) fn new(send: impl Fn(Vec<u8>, &SseFrame) + Send + Sync + 'static) -> Self {
        SessionStream(Arc::new(send))
    }
}

impl std::fmt::Debug for SessionStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionStream")
    }
}

/// What a transport asks of the engine beyond sending messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Send a [`BARRIER`] on `events` between the notifications an
    /// interaction sends and its response, so that the transport can make
    /// sure the client has read them before it writes the response (stdio:
    /// see [`StdioConfig`](super::StdioConfig)). Only interactions with
    /// notifications before their response get one.
    pub barriers: bool,
    /// Keep the recorded timing of `during` and the response
    /// ([`Interaction::delays_ms`](crate::cassette::Interaction::delays_ms), kept by stdio recordings). HTTP paces
    /// SSE events itself and leaves this fast.
    pub pace: Pace,
}

/// The barrier message: empty, so it can never be a JSON-RPC message. A
/// transport that asked for barriers writes everything before it, and
/// everything after it only once the client has taken what came before;
/// it never writes the barrier itself.
pub const BARRIER: &[u8] = b"";

/// The hang-up message: a single space, which no encoded message can be.
/// A transport that meets it ends the connection there, as a server that
/// died would: stdio writes what came before, closes its output and stops;
/// HTTP drops the connection (an SSE answer after the events before it).
/// A faults overlay's `disconnect` sends it.
pub const HANGUP: &[u8] = b" ";

impl Sink {
    /// A sink that sends everything down one channel, in order, with the
    /// default delivery.
    pub fn single(channel: mpsc::UnboundedSender<Vec<u8>>) -> Self {
        Self::ordered(channel, Delivery::default())
    }

    /// A sink that sends everything down one channel, in order, delivered
    /// as `delivery` says.
    pub fn ordered(channel: mpsc::UnboundedSender<Vec<u8>>, delivery: Delivery) -> Self {
        Sink {
            events: channel.clone(),
            responses: channel,
            delivery,
            ids: Arc::default(),
            session: None,
        }
    }

    /// This sink, with server messages recorded on the session's own
    /// stream going to `stream`.
    pub(crate) fn with_session(mut self, stream: SessionStream) -> Sink {
        self.session = Some(stream);
        self
    }

    /// Whether the session has its own stream here.
    pub fn has_session(&self) -> bool {
        self.session.is_some()
    }

    /// Sends a notification or server request that was recorded on the
    /// session's own stream, framed by `frame`: there, if this transport
    /// has one, else like any event.
    pub fn session_event(&self, message: &impl Serialize, frame: &SseFrame) {
        match &self.session {
            Some(stream) => (stream.0)(encode(message), frame),
            None => self.event(message),
        }
    }

    /// Notes the ids of `messages`, read from `bytes` (a batch, or one
    /// message), that must be written back as they were written.
    pub fn note_ids(&self, bytes: &[u8], messages: &[Value], batch: bool) {
        self.ids.note(bytes, messages, batch);
    }

    /// Sends a notification or server request.
    pub fn event(&self, message: &impl Serialize) {
        let _ = self.events.send(encode(message));
    }

    /// Sends the response, with the ids written back as the client wrote
    /// them.
    pub fn respond(&self, message: &impl Serialize) {
        let _ = self.responses.send(self.ids.restore(encode(message)));
    }

    /// Sends a response already encoded (a recorded one, with the live
    /// id), with the ids written back as the client wrote them.
    pub fn respond_encoded(&self, message: Vec<u8>) {
        let _ = self.responses.send(self.ids.restore(message));
    }

    /// A sink like this one whose responses go to `responses` instead
    /// (a batch gathers its own).
    pub(crate) fn with_responses(&self, responses: mpsc::UnboundedSender<Vec<u8>>) -> Sink {
        Sink {
            events: self.events.clone(),
            responses,
            delivery: self.delivery,
            ids: Arc::clone(&self.ids),
            session: self.session.clone(),
        }
    }

    /// A sink like this one (same delivery, ids and session stream) whose
    /// events and responses both go to `channel`, in order: for a layer
    /// that must see the answer before the transport does.
    pub fn rerouted(&self, channel: mpsc::UnboundedSender<Vec<u8>>) -> Sink {
        Sink {
            events: channel.clone(),
            responses: channel,
            delivery: self.delivery,
            ids: Arc::clone(&self.ids),
            session: self.session.clone(),
        }
    }

    /// A barrier, if the transport wants them.
    pub fn barrier(&self) {
        if self.delivery.barriers {
            let _ = self.events.send(BARRIER.to_vec());
        }
    }
}

/// Encodes a message as the sinks carry it. Serialising a JSON value
/// cannot fail.
pub fn encode(message: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(message).expect("JSON values serialise")
}

/// Whether an encoded message is a response: only notifications and
/// requests have a `method`. What is not JSON (a faults overlay's
/// `malformed`) goes where a response goes, in its place.
pub(crate) fn is_response(message: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        method: Option<serde::de::IgnoredAny>,
    }
    !serde_json::from_slice::<Probe>(message).is_ok_and(|probe| probe.method.is_some())
}
