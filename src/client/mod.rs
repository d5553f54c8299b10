//! Talking to a real MCP server, as a client: the one place that starts a
//! server process, opens a Streamable HTTP connection, and knows the
//! handshake of each protocol era.
//!
//! - [`spawn`] builds the server's process: piped stdin and stdout, stderr
//!   passed through. The recorder, [`StdioLive`] and `new-episodes` all
//!   start servers with it.
//! - [`Live`] is a connection to a server, one message at a time:
//!   [`StdioLive`] (a child process) and [`HttpLive`] (a Streamable HTTP
//!   endpoint, either era). `verify`, `new-episodes` over HTTP and `stub`
//!   drive one.
//! - [`http_client`] is the HTTP client every upstream connection uses
//!   (the recorder's reverse proxy too): TLS with the `tls` feature.
//! - [`handshake`] holds what a client of ours says to open a session.
//!
//! Every failure is a [`LiveError`], which keeps the error it came from.

mod error;
pub mod handshake;
mod http;
mod http_client;
mod spawn;
mod stdio;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(feature = "tls")]
mod tls;

use std::time::Duration;

use serde_json::Value;

pub use error::LiveError;
pub use http::HttpLive;
pub use http_client::{HttpClient, http_client};
pub use spawn::{spawn, spawn_async};
pub use stdio::StdioLive;

/// A connection to a live server: send a message, receive the next one.
pub trait Live {
    /// Sends one message.
    fn send(&mut self, message: &Value) -> Result<(), LiveError>;
    /// The next message, or `None` when `timeout` passes first (or the
    /// server has gone).
    fn recv(&mut self, timeout: Duration) -> Result<Option<Value>, LiveError>;
    /// Ends the session (closes stdin, ends the HTTP session).
    fn close(&mut self);
    /// Over HTTP, how many messages were POSTed so far: the number of the
    /// last one, for [`http_answer`](Self::http_answer). `None` where
    /// messages do not travel one per request (stdio).
    fn sent(&self) -> Option<usize> {
        None
    }
    /// The next message may be answered with an HTTP error (the recording
    /// was): such an answer is compared, not a failure.
    fn expect_http_error(&mut self) {}
    /// The HTTP answer to POST number `sent`, waiting up to `wait` for its
    /// status (and an error's body).
    fn http_answer(&mut self, sent: usize, wait: Duration) -> Option<LiveAnswer> {
        let _ = (sent, wait);
        None
    }
}

/// The HTTP status of the live answer to one POST, and its body when that
/// is not a JSON-RPC answer to the request (an error page, a rejection).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The body, kept as text, as a recording keeps it.
    pub body: Option<String>,
    /// Its media type.
    pub content_type: Option<String>,
    /// Whether it issued a session id.
    pub issued_session: bool,
    /// Whether the request carried one.
    pub had_session: bool,
}
