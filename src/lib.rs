#![warn(missing_docs)]
#![warn(unreachable_pub)]
//! mcpcassette: record and replay Model Context Protocol sessions.
//!
//! A **cassette** is a JSON file of matched request/response pairs, each
//! with the notifications and server-to-client requests that belong to
//! it. Three flows use one:
//!
//! - **Record**: [`record`] sits between a client and a real server
//!   ([`record_stdio`] runs it as a child process; [`record_http`] is a
//!   reverse proxy in front of a Streamable HTTP server), forwards every
//!   byte unchanged, and files what passes into a [`cassette`] through
//!   [`cassette::Builder`], masking secrets with [`redact`] first.
//! - **Replay**: [`load`] reads a [`Cassette`]; an [`Engine`] answers a
//!   client from it, matching each request in O(1) ([`Rules`] say how), and
//!   never starts the server. The engine is a [`server::Handler`]: the
//!   transports in [`server`] carry it over stdio, any byte stream, or
//!   Streamable HTTP.
//! - **Verify**: [`verify()`] replays the cassette's client side against
//!   the live server through a [`client`], compares what it says now with
//!   what was recorded, and leaves the live version for review.
//!
//! ```no_run
//! # async fn replay() -> Result<(), Box<dyn std::error::Error>> {
//! use std::path::Path;
//!
//! // Replay in process: the engine on one end of an in-memory pipe, any
//! // MCP client (rmcp, a hand-rolled one) on the other.
//! let path = Path::new("tests/cassettes/weather.json");
//! let engine = mcpcassette::Engine::new(mcpcassette::load(path)?, path);
//! let (client_side, server_side) = tokio::io::duplex(64 * 1024);
//! let (read, write) = tokio::io::split(server_side);
//! tokio::spawn(mcpcassette::replay::serve(engine.clone(), read, write));
//! # drop(client_side);
//! // … talk MCP over `client_side` …
//! // Afterwards: what was never asked for is a test failure too.
//! assert!(engine.summary().unused.is_empty());
//! # Ok(()) }
//! ```
//!
//! ```no_run
//! # fn drift() -> Result<(), Box<dyn std::error::Error>> {
//! // Has the real server's behaviour drifted from the recording?
//! let config = mcpcassette::VerifyConfig::new("tests/cassettes/weather.json");
//! let verification = mcpcassette::verify(&config)?;
//! assert_eq!(verification.report.drifted().count(), 0);
//! # Ok(()) }
//! ```
//!
//! For tests that need no recording at all, a [`MockServer`] is a
//! programmable MCP server (it fails, hangs or changes on demand and logs
//! every call), and [`TestKit`] connects a client to one per test.
//!
//! The modules, by layer (`docs/architecture.md` draws them):
//!
//! - [`record`], [`replay`], [`verify`](mod@verify): the three flows above.
//! - [`server`] serves any [`server::Handler`] (a replay, a mock) over stdio
//!   or Streamable HTTP; [`client`] talks to real servers as a client:
//!   starting them, both transports, both eras' handshakes.
//! - [`cassette`] is the format, its rules, loading, saving and the
//!   recording journal; [`redact`] keeps secrets out of cassettes, logs
//!   and error messages.
//! - [`schema`] knows what MCP messages look like; [`check`] uses it to
//!   validate cassette files.
//! - [`fixture`] reads hand-written MCP servers (fixtures) and answers
//!   from them; [`stub`] writes one from a live server's lists.
//! - [`mock`] and [`testkit`]: programmable servers and clients for Rust
//!   tests.
//! - [`faults`] makes a replayed or fixture-served server misbehave as a
//!   list of fault rules says (errors, delays, hangs, hang-ups, nonsense,
//!   HTTP statuses, changed lists), deterministically by seed.
//! - [`protocol`] names the eras and versions.

// The crate's toolbox and the CLI's own machinery: used through the
// modules above and the re-exports below.
mod error_chain;
mod example;
mod inspect;
mod json;
mod jsonrpc;
mod matching;
mod mode;
mod parallel;
mod wire;

pub mod cassette;
pub mod check;
pub mod client;
pub mod faults;
pub mod fixture;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
pub mod mock;
pub mod protocol;
pub mod record;
pub mod redact;
pub mod replay;
pub mod schema;
pub mod server;
pub mod stub;
pub mod testkit;
pub mod verify;

pub use cassette::{
    Cassette, CassetteError, Event, Interaction, KeyRule, MethodCase, NormalizeRule, OnExhausted,
    Rules, Strategy, load,
};
pub use check::{CheckConfig, check_file};
pub use example::from_schema as example_from_schema;
pub use json::{MAX_DEPTH, RawMessage, Selector, SelectorError, canonical_json};
pub use jsonrpc::{RpcError, codes};
pub use matching::{Answer, Matcher, Refusal};
pub use mock::MockServer;
pub use mode::{Mode, ModeError, ci_detected};
pub use protocol::{Era, Version};
pub use record::{HttpRecordConfig, RecordConfig, RecordError, record_http, record_stdio};
pub use replay::{Engine, ReplayConfig, Summary};
pub use testkit::{TestClient, TestKit};
pub use verify::{DriftError, UpdateMode, Verification, VerifyConfig, verify};

/// What the `mcpcassette` binary needs beyond the public API: the live
/// traffic inspector, where record modes come from and what `run` does
/// with them, how new episodes join a cassette, this process's stdio.
/// Not for other users; it may change at any time.
#[doc(hidden)]
pub mod cli_support {
    pub use crate::cassette::save::write_atomically;
    pub use crate::record::proxy::credentials::split_header;
    pub use crate::replay::processes::recorded_processes;
    pub use crate::replay::report::shell_quote;
    pub use crate::verify::compare::interaction as compare_interaction;
    /// Pending cassettes, for `review` and `verify`.
    pub mod pending {
        pub use crate::verify::pending::*;
    }
    /// Drift as text, for `review`.
    pub mod render {
        pub use crate::verify::render::*;
    }
    pub use crate::error_chain::chain;
    pub use crate::inspect::{Inspector, Output};
    pub use crate::mode::{
        Action, Decision, MatchOptions, Project, Refusal, RunPlan, RunRequest, ancestors,
        find_project, process_env,
    };
    pub use crate::replay::new_episodes_append::{append_new_episodes, recorded_place};
    pub use crate::wire::stdio::process_stdio;
}

/// Former module paths, kept so that existing tests keep compiling.
mod former {
    /// [`crate::client`] at its former path.
    #[deprecated(note = "renamed `mcpcassette::client`")]
    pub mod live {
        pub use crate::client::*;
    }
    /// [`crate::server`] at its former path.
    #[deprecated(note = "renamed `mcpcassette::server`")]
    pub mod serve {
        pub use crate::server::*;
    }
    /// [`crate::verify`](mod@crate::verify) at its former path.
    #[deprecated(note = "renamed `mcpcassette::verify`")]
    pub mod drift {
        pub use crate::verify::*;
    }
}
#[doc(hidden)]
#[allow(deprecated)]
pub use former::{drift, live, serve};
