//! How MCP messages are framed on the wire.

pub(crate) mod http;
pub mod pairing;
pub mod stdio;
pub mod unread;
