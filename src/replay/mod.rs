//! Replay: a deterministic MCP server that answers from a cassette.

mod engine;
mod miss;
mod stdio;

pub use engine::{Engine, Sink, Summary};
pub use miss::{EXHAUSTED, Miss, NO_MATCH};
pub use stdio::serve;
