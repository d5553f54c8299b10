//! Programmable mock MCP servers for tests: servers that do on demand what
//! no real server will — fail on the third call, hang, change after a
//! login, answer with malformed content — and remember every call.
//!
//! ```no_run
//! use std::time::Duration;
//! use mcpcassette::mock::{MockServer, Respond, Tool, Transition};
//! use rmcp::ServiceExt;
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let mock = MockServer::builder()
//!     .tool(Tool::new("login"), Respond::text("welcome"))
//!     .tool(Tool::new("search"), Respond::by_state(
//!         [("in", Respond::text("3 results").delay(Duration::from_millis(50)).times(2))],
//!         Respond::error(-32010, "log in first"),
//!     ))
//!     .transition("initial", Transition::method("tools/call").params(json!({"name": "login"})), "in")
//!     .intercept("tools/list", |response| response["result"]["tools"][0]["inputSchema"] = json!(null))
//!     .build();
//! let client = ().serve(mock.duplex()).await?; // rmcp, in process
//! // ... exercise the code under test ...
//! client.cancel().await?;
//! mock.assert_tool_called_with("search", json!({"query": "rust"}));
//! # Ok(())
//! # }
//! ```
//!
//! A mock speaks both protocol eras, deciding per request: legacy
//! `initialize` sessions (2024-11-05 … 2025-11-25) and modern 2026-07-28
//! requests (`server/discover`, `_meta` on every request, `resultType` on
//! every result, `subscriptions/listen`). It is served by the replay
//! engine's own transports ([`MockServer::serve`], [`MockServer::duplex`],
//! [`MockServer::serve_stdio`], [`MockServer::serve_http`]): the engine,
//! given an empty cassette, hands everything to the mock as its upstream.
//! [`MockServer::from_fixture`] serves a hand-written fixture file, as
//! `mcpcassette serve` does.

mod answer;
mod assert;
mod builder;
mod call;
mod config;
mod from_fixture;
mod items;
mod link;
mod respond;
mod rng;
mod serve;
mod server;

pub use crate::jsonrpc::RpcError;
pub use builder::{INITIAL_STATE, MockBuilder};
pub use call::{Call, Outcome};
pub use config::{ANY_STATE, Transition};
pub use items::{Prompt, Resource, ResourceTemplate, Tool};
pub use respond::EXHAUSTED;
pub use server::{Context, MockServer, Respond};
