//! Replay: a deterministic MCP server that answers from a cassette.

mod answers;
mod engine;
mod episodes;
mod era;
pub mod http;
mod http_episodes;
mod pace;
mod raw_ids;
mod report;
mod session_traffic;
mod stdio;
mod upstream;

pub use answers::{ANSWER_MISMATCH, AnswerMismatch};
pub use engine::{BARRIER, Delivery, Engine, Handled, ReplayConfig, Sink, Summary, Unanswered};
pub use episodes::{NewEpisodes, UPSTREAM_FAILED};
pub use era::EraMismatch;
pub use http_episodes::HttpEpisodes;
pub use pace::Pace;
pub use report::{Candidate, Context, EXHAUSTED, Miss, NO_MATCH, OUT_OF_ORDER, shell_quote};
pub use session_traffic::{SessionScript, file_into as file_session_traffic};
pub use stdio::{Drain, StdioConfig, serve, serve_with};
pub use upstream::{Forwarding, Upstream, UpstreamFailure};

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
