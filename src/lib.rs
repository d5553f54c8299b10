#![warn(missing_docs)]
#![warn(unreachable_pub)]
//! mcpcassette: record and replay Model Context Protocol sessions.
//!
//! The types most tests need are at the crate root: a [`Cassette`] and
//! [`load`], the replay [`Engine`], the [`MockServer`], [`verify`] and
//! [`check_file`]. Each area has a module of its own for the rest:
//!
//! - [`record`] sits between a client and a real server, forwards every byte
//!   unchanged, and writes a [`cassette`].
//! - [`replay`] answers a client from a cassette, deterministically, without
//!   starting the server; its [`Rules`] say how requests are matched.
//! - [`serve`] carries any [`serve::Handler`] (a replay, a mock) over stdio
//!   or Streamable HTTP.
//! - [`live`] talks to real servers as a client: starting them, both
//!   transports, both eras' handshakes.
//! - [`redact`] keeps secrets out of cassettes, logs and error messages.
//! - [`drift`] re-runs a cassette against the live server and reports what
//!   changed, for review.
//! - [`schema`] knows what MCP messages look like; [`check`] uses it to
//!   validate cassette files.
//! - [`fixture`] reads hand-written MCP servers (fixtures) and answers
//!   from them; [`stub`] writes one from a live server's lists.
//! - [`mock`] is a programmable MCP server for tests: it fails, hangs or
//!   changes on demand and records every call for assertions; [`testkit`]
//!   connects a client to one per test.
//! - [`faults`] makes a replayed or fixture-served server misbehave as a
//!   list of fault rules says (errors, delays, hangs, hang-ups, nonsense,
//!   HTTP statuses, changed lists), deterministically by seed.
//! - [`protocol`] names the eras and versions.

// The crate's toolbox and the CLI's own machinery: used through the
// modules above and the re-exports below.
mod example;
mod inspect;
mod json;
mod jsonrpc;
mod matching;
mod mode;
mod parallel;
mod transport;

pub mod cassette;
pub mod check;
pub mod drift;
pub mod faults;
pub mod fixture;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
pub mod live;
pub mod mock;
pub mod protocol;
pub mod record;
pub mod redact;
pub mod replay;
pub mod schema;
pub mod serve;
pub mod stub;
pub mod testkit;

pub use cassette::{
    Cassette, CassetteError, Event, Interaction, KeyRule, MethodCase, NormalizeRule, OnExhausted,
    Rules, Strategy, load,
};
pub use check::{CheckConfig, check_file};
pub use drift::{DriftError, UpdateMode, Verification, VerifyConfig, verify};
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

/// What the `mcpcassette` binary needs beyond the public API: the live
/// traffic inspector, where record modes come from and what `run` does
/// with them, how new episodes join a cassette, this process's stdio.
/// Not for other users; it may change at any time.
#[doc(hidden)]
pub mod cli_support {
    pub use crate::inspect::{Inspector, Output};
    pub use crate::mode::{
        Action, Decision, MatchOptions, Project, Refusal, RunPlan, RunRequest, ancestors,
        find_project, process_env,
    };
    pub use crate::replay::new_episodes_append::{append_new_episodes, recorded_place};
    pub use crate::transport::stdio::process_stdio;
}
