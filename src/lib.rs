//! mcpcassette: record and replay Model Context Protocol sessions.
//!
//! - [`record`] sits between a client and a real server, forwards every byte
//!   unchanged, and writes a [`cassette`].
//! - [`replay`] answers a client from a cassette, deterministically, without
//!   starting the server.
//! - [`matching`] decides which recorded interaction answers a live request.

pub mod cassette;
pub mod jsonrpc;
pub mod matching;
pub mod mode;
pub mod protocol;
pub mod record;
pub mod redact;
pub mod replay;
pub mod transport;
