//! Replay: a deterministic MCP server that answers from a cassette.

mod engine;
mod episodes;
pub mod http;
mod http_episodes;
mod pace;
mod report;
mod stdio;
mod upstream;

pub use engine::{BARRIER, Delivery, Engine, Handled, ReplayConfig, Sink, Summary};
pub use episodes::{NewEpisodes, UPSTREAM_FAILED};
pub use http_episodes::HttpEpisodes;
pub use pace::Pace;
pub use report::{Candidate, Context, EXHAUSTED, Miss, NO_MATCH, OUT_OF_ORDER, shell_quote};
pub use stdio::{Drain, StdioConfig, serve, serve_with};
pub use upstream::{Forwarding, Upstream};
