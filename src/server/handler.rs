//! The one interface under every transport: a [`Handler`] answers client
//! messages; the stdio and Streamable HTTP servers only carry them.
//! Replay's engine and the mock server (which also serves fixtures) are
//! handlers.

use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinSet;

use super::sink::Sink;
use crate::cassette::{HttpSituation, Interaction, Transport};
use crate::protocol::Era;

/// What a handler did with a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handled {
    /// Answered (or accepted), by this recorded interaction if one.
    Answered(Option<usize>),
    /// Nothing recorded in that situation: nothing was sent, and the
    /// transport answers as the specification says.
    NotRecorded,
    /// Answered (by this recorded interaction if one), with server
    /// messages before the response that the recording did not have (a
    /// faults overlay's announcement): over HTTP, as a stream when the
    /// client accepts one, so they reach it.
    Streamed(Option<usize>),
    /// Answered by an HTTP status instead of any message (a faults
    /// overlay's `http` fault). Streamable HTTP answers the whole POST
    /// with it; byte streams have no status, and send nothing.
    Status(Box<StatusReply>),
}

impl Handled {
    /// The recorded interaction that answered, if one did.
    pub fn interaction(&self) -> Option<usize> {
        match self {
            Handled::Answered(position) | Handled::Streamed(position) => *position,
            Handled::NotRecorded | Handled::Status(_) => None,
        }
    }
}

/// An HTTP answer that carries no JSON-RPC answer: a status, its
/// `Retry-After`, a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusReply {
    /// 400..=599.
    pub status: u16,
    /// `Retry-After`, in seconds.
    pub retry_after: Option<u64>,
    /// The body, with its content type.
    pub body: Vec<u8>,
    /// The body's content type.
    pub content_type: &'static str,
    /// The client's session ends with it (404: it expired), so the
    /// client must open a new one.
    pub ends_session: bool,
}

/// An MCP server as the transports see it.
///
/// Each client message is handed over in arrival order; whatever the
/// server says for it goes to the [`Sink`], and work that outlasts the call
/// (waiting for the client's answer to a server request, a delay) is
/// spawned onto `tasks`, which the transport drives and ends with the
/// connection.
pub trait Handler: Send + Sync + std::fmt::Debug + 'static {
    /// Handles one JSON-RPC message (not a batch: the transports split
    /// those). Over HTTP, `situation` says how it arrived; in an
    /// out-of-the-ordinary one (a stale session, a foreign origin, headers
    /// that disagree) a handler answers only the way it was recorded
    /// answering, and otherwise returns [`Handled::NotRecorded`].
    fn handle(
        self: Arc<Self>,
        message: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: &HttpSituation,
    ) -> Handled;

    /// Handles a line of newline-delimited JSON straight from its text,
    /// when this handler can tell from the text alone how to answer it
    /// (replay's plain requests); `None` hands it back, to be parsed and
    /// given to [`Handler::handle`]. Only for messages in the ordinary
    /// situation.
    fn handle_text(
        self: Arc<Self>,
        line: &[u8],
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> Option<Handled> {
        let _ = (line, sink, tasks);
        None
    }

    /// Something else answered `request` in this handler's place (a
    /// faults overlay's error, say): what would have answered it counts
    /// as used, and stays there for the next time it is asked.
    fn stand_in(&self, request: &Value) {
        let _ = request;
    }

    /// A connection (stdio) or session (HTTP GET stream) opened: what the
    /// server sends unprompted goes to `sink`.
    fn open(self: Arc<Self>, sink: &Sink, tasks: &mut JoinSet<()>) {
        let _ = (sink, tasks);
    }

    /// A handler for a new client session, as a freshly started server
    /// would begin it.
    fn fork(&self) -> Arc<dyn Handler>;

    /// The client has gone: waits for it should end.
    fn client_gone(&self) {}

    /// The recorded interaction at `position` (as [`Handled::Answered`]
    /// named it), so that HTTP can answer the way it travelled.
    fn recorded(&self, position: usize) -> Option<&Interaction> {
        let _ = position;
        None
    }

    /// How the HTTP server presents this handler.
    fn http_profile(&self) -> HttpProfile;
}

/// How a handler is served over HTTP: the endpoint and era it was recorded
/// with, and how its sessions behave.
#[derive(Debug, Clone)]
pub struct HttpProfile {
    /// The transport it was recorded over (endpoint, recorded GET and
    /// DELETE answers, the 2024-11-05 HTTP+SSE endpoints).
    pub transport: Transport,
    /// Its protocol era: 2026-07-28 is POST-only and stateless.
    pub era: Era,
    /// Legacy era: its `initialize` answers hand out sessions (the
    /// recorded one did, or it is a server that always does).
    pub sessions: bool,
    /// An `initialize` answered from no recording still opens a session.
    pub sessions_without_recording: bool,
    /// A `subscriptions/listen` answered from no recording is an SSE
    /// stream of notifications, open until the client closes it.
    pub listen_streams: bool,
    /// The tool definitions it lists, whose `x-mcp-header` annotations say
    /// which `Mcp-Param-*` headers a 2026-07-28 `tools/call` must carry.
    pub tools: Vec<Value>,
}

/// Hands `message` to `handler` in the ordinary situation; the recorded
/// what it did.
pub(crate) fn traced(
    handler: &Arc<dyn Handler>,
    message: Value,
    sink: &Sink,
    tasks: &mut JoinSet<()>,
) -> Handled {
    Arc::clone(handler).handle(message, sink, tasks, &HttpSituation::default())
}

/// A handler that answers nothing, for tests of what carries one.
#[cfg(test)]
pub(crate) fn test_handler() -> Arc<dyn Handler> {
    #[derive(Debug)]
    struct Silent;
    impl Handler for Silent {
        fn handle(
            self: Arc<Self>,
            _: Value,
            _: &Sink,
            _: &mut JoinSet<()>,
            _: &HttpSituation,
        ) -> Handled {
            Handled::Answered(None)
        }
        fn fork(&self) -> Arc<dyn Handler> {
            Arc::new(Silent)
        }
        fn http_profile(&self) -> HttpProfile {
            HttpProfile {
                transport: Transport::Stdio {
                    command: Vec::new(),
                    cwd: None,
                },
                era: Era::Legacy,
                sessions: true,
                sessions_without_recording: false,
                listen_streams: false,
                tools: Vec::new(),
            }
        }
    }
    Arc::new(Silent)
}
