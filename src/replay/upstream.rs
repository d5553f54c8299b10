//! Where replay sends what the cassette cannot answer, in `new-episodes`
//! mode: a live server, started only when first needed.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::engine::Sink;

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

    /// Whether this upstream is a whole MCP server (a programmable mock
    /// served through an empty cassette) rather than a stand-in for misses:
    /// the engine then leaves handshakes, `ping` and version checks to it
    /// instead of answering them itself.
    fn serves_everything(&self) -> bool {
        false
    }

    /// The client has gone (its input closed, or the HTTP server stopped):
    /// forwardings still waiting should end, so serving can finish.
    fn client_gone(&self) {}
}
