//! Serving an MCP server to clients: newline-delimited JSON on any byte
//! stream ([`serve_stdio`]) and Streamable HTTP ([`http::serve_http`]),
//! both driving one [`Handler`], in the manner of mini-redis (frame →
//! connection → handler).
//!
//! The transports own framing, sessions, delivery and (over HTTP) how each
//! answer travels: status, JSON or SSE, pacing, the specification's
//! refusals. What to answer is the handler's: replay's
//! [`Engine`](crate::replay::Engine) answers from a cassette, the
//! [`MockServer`](crate::mock::MockServer) from its programme (fixtures
//! included).

pub(crate) mod handler;
pub mod http;
mod lines;
mod pace;
mod raw_ids;
pub(crate) mod sink;
mod stdio;

pub use handler::{Handled, Handler, HttpProfile, StatusReply};
pub(crate) use lines::unreadable_error;
pub use lines::{handle_line, invalid_request};
pub use pace::Pace;
pub use sink::{BARRIER, Delivery, HANGUP, Sink, encode};
pub use stdio::{BLIND_PAUSE, DRAIN_LIMIT, Drain, StdioConfig, serve as serve_stdio, serve_with};

/// For `crate::fuzzing`: a line's ids noted, then restored into `reply`.
#[cfg(fuzzing)]
pub(crate) fn fuzzing_restore_ids(line: &[u8], reply: Vec<u8>) -> Vec<u8> {
    let ids = raw_ids::RawIds::default();
    match crate::json::parse_message(line) {
        Ok(serde_json::Value::Array(batch)) => ids.note(line, &batch, true),
        Ok(message) => ids.note(line, std::slice::from_ref(&message), false),
        Err(_) => {}
    }
    ids.restore(reply)
}
