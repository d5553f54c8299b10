//! Replay: a deterministic MCP server that answers from a cassette.

mod answers;
mod engine;
mod episodes;
mod era;
pub mod http;
mod report;
mod session_traffic;
mod stdio;
mod upstream;

pub use answers::{ANSWER_MISMATCH, AnswerMismatch};
pub use engine::{Engine, Handled, ReplayConfig, Sink, Summary};
pub use episodes::{NewEpisodes, UPSTREAM_FAILED};
pub use era::EraMismatch;
pub use report::{Candidate, Context, EXHAUSTED, Miss, NO_MATCH, OUT_OF_ORDER};
pub use session_traffic::{SessionScript, file_into as file_session_traffic};
pub use stdio::serve;
pub use upstream::{Forwarding, Upstream};
