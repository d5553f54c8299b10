//! Replay: a deterministic MCP server that answers from a cassette.

mod answers;
mod cross_era;
mod engine;
mod era;
mod handler;
pub(crate) mod new_episodes_append;
mod new_episodes_http;
mod new_episodes_stdio;
mod over_http;
mod over_stdio;
pub(crate) mod processes;
pub(crate) mod report;
mod session_traffic;
mod subscriptions;
mod upstream;
mod verdict;

pub use crate::server::{BARRIER, Delivery, Drain, Handled, Pace, Sink, StdioConfig};
pub use answers::{ANSWER_MISMATCH, AnswerMismatch};
pub use cross_era::CrossEra;
pub use engine::{Engine, MissHook, ReplayConfig, Summary, Unanswered};
pub use era::EraMismatch;
pub use new_episodes_http::HttpEpisodes;
pub use new_episodes_stdio::{NewEpisodes, UPSTREAM_FAILED};
pub use over_http::{HttpReplayConfig, SessionMode, serve_http};
pub use over_stdio::{serve, serve_with};
pub use processes::ProcessReplay;
pub use report::{
    Candidate, Context, EXHAUSTED, MISS_JSON_BYTES, MISS_REPLY_BYTES, MISS_REPORT_BYTES, Miss,
    NO_MATCH, OUT_OF_ORDER,
};
pub use session_traffic::{SessionScript, file_into as file_session_traffic};
pub use upstream::{Episodes, Forwarding, Upstream, UpstreamFailure};
pub use verdict::{Failure, VerdictConfig};

/// Replay over Streamable HTTP, at its former path.
#[deprecated(note = "the items are re-exported from `mcpcassette::replay` itself")]
pub mod http {
    pub use super::over_http::*;
    pub use crate::cassette::Auth;
}
