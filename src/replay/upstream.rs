//! Where replay sends what the cassette cannot answer, in `new-episodes`
//! mode: a live server, started only when first needed.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::cassette::{Builder, Interaction, InteractionStream};
use crate::client::LiveError;
use crate::server::Sink;

/// A boxed future, as the trait returns it.
pub type Forwarding = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A live server behind a replay. The engine calls it for every request no
/// recorded interaction answers, and tells it about client traffic it may
/// need; the implementation records what the server says so it can be
/// appended to the cassette.
pub trait Upstream: Send + Sync + 'static {
    /// The client's `initialize` request, kept so that a server started
    /// later can be initialised as the client would have done it.
    fn handshake(&self, initialize: &Value);

    /// Forwards `request` and writes everything the server sends for it to
    /// `sink`: notifications and server-to-client requests (with ids that
    /// cannot collide with replay's own), then the response with the live
    /// request's id.
    fn forward(&self, request: Value, sink: Sink) -> Forwarding;

    /// A client notification (cancellation of a forwarded request, for
    /// instance); implementations pass on what concerns the server.
    fn notify(&self, notification: &Value);

    /// A client response to a server-to-client request this upstream
    /// relayed. Returns false when the response is not one of those.
    fn client_response(&self, response: &Value) -> bool;

    /// The client has gone (its input closed, or the HTTP server stopped):
    /// forwardings still waiting should end, so serving can finish.
    fn client_gone(&self) {}
}

/// Why the live server for new episodes cannot answer (any more). The
/// first failure is kept and said in the error of every request it fails,
/// so it is cheap to clone.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamFailure {
    /// It could not be started or reached, or talking to it failed.
    #[error(transparent)]
    Live(Arc<LiveError>),
    /// It went away before answering `initialize`.
    #[error("it stopped during the handshake")]
    StoppedInHandshake,
    /// It did not answer `initialize` in time.
    #[error("it did not answer `initialize` within {} s", .0.as_secs())]
    HandshakeTimeout(Duration),
    /// Its HTTP answers ended without the `initialize` response.
    #[error("it did not answer `initialize`")]
    NoInitializeAnswer,
    /// It answered `initialize` with an error.
    #[error("it answered `initialize` with an error: {0}")]
    InitializeRejected(Value),
    /// It exited.
    #[error("the server exited ({0})")]
    Exited(std::process::ExitStatus),
    /// It closed its stdout and cannot be waited for.
    #[error("the server closed its stdout and cannot be waited for")]
    Unwaitable(#[source] Arc<std::io::Error>),
    /// It closed its stdout (and is still running).
    #[error("the server closed its stdout")]
    StdoutClosed,
    /// The client went away while a forwarded request was waiting.
    #[error("the client went away before the server answered")]
    ClientGone,
    /// A forwarded request was not answered in time.
    #[error("it did not answer within {} s", .0.as_secs())]
    AnswerTimeout(Duration),
    /// It was stopped by us.
    #[error("the server was stopped")]
    Stopped,
    /// The replay session ended.
    #[error("the replay session is over")]
    SessionOver,
    /// Starting it ended in a way it never should (a task panicked).
    #[error("starting it failed unexpectedly")]
    Unexpected,
}

impl From<LiveError> for UpstreamFailure {
    fn from(error: LiveError) -> Self {
        UpstreamFailure::Live(Arc::new(error))
    }
}

/// The interactions a server for new episodes answered, in the order the
/// client sent them, with the client's ids: requests it never answered (the
/// cancelled ones, those in flight when it stopped) and client
/// notifications are left out. Read one at a time from where the recording
/// kept them (a spill file beside the cassette, once one is set), so that a
/// long run holds only what is in flight.
pub struct Episodes(InteractionStream);

impl Episodes {
    /// What `builder` recorded; nothing without one (the server was never
    /// started).
    pub(crate) fn of(builder: Option<Builder>) -> Self {
        let Some(builder) = builder else {
            return Episodes(Box::new(std::iter::empty()));
        };
        let (_, interactions) = builder.finish_streamed().into_parts();
        Episodes(Box::new(interactions.filter(|read| {
            read.as_ref()
                .map_or(true, |i| i.is_request() && i.response.is_some())
        })))
    }
}

impl Iterator for Episodes {
    type Item = std::io::Result<Interaction>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

impl std::fmt::Debug for Episodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Episodes").finish_non_exhaustive()
    }
}

/// Lets `builder`'s settled interactions leave memory for a spill file
/// beside `cassette`; a folder that refuses one keeps them in memory.
pub(crate) fn spill_beside(builder: &mut Builder, cassette: &std::path::Path) {
    if let Err(e) = builder.spill_beside(cassette) {
        tracing::warn!(
            "cannot make a spill file beside {} ({e}); keeping new episodes in memory",
            cassette.display()
        );
    }
}
