#![warn(missing_docs)]
//! mcpcassette: record and replay Model Context Protocol sessions.
//!
//! - [`record`] sits between a client and a real server, forwards every byte
//!   unchanged, and writes a [`cassette`].
//! - [`replay`] answers a client from a cassette, deterministically, without
//!   starting the server.
//! - [`matching`] decides which recorded interaction answers a live request.
//! - [`redact`] keeps secrets out of cassettes, logs and error messages.
//! - [`drift`] re-runs a cassette against the live server and reports what
//!   changed, for review.
//! - [`schema`] knows what MCP messages look like; [`check`] uses it to
//!   validate cassette files.
//! - [`inspect`] watches live traffic through a passthrough proxy: each
//!   message, latencies, schema violations, and a summary.
//! - [`example`] makes values a JSON Schema accepts and results valid for
//!   an MCP method, for stand-ins that answer without a server.
//! - [`fixture`] reads hand-written MCP servers (fixtures) and answers
//!   from them.
//! - [`mock`] is a programmable MCP server for tests: it fails, hangs or
//!   changes on demand and records every call for assertions; [`testkit`]
//!   connects a client to one per test.

pub mod cassette;
pub mod check;
pub mod drift;
pub mod example;
pub mod fixture;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
pub mod inspect;
pub mod json;
pub mod jsonrpc;
pub mod live;
pub mod matching;
pub mod mock;
pub mod mode;
pub mod protocol;
pub mod record;
pub mod redact;
pub mod replay;
pub mod schema;
pub mod serve;
pub mod stub;
pub mod testkit;
pub mod transport;
