//! Recording: a transparent proxy between a client and a real server that
//! writes what passes through into a cassette.

mod error;
mod stdio;
mod tape;

pub use error::RecordError;
pub use stdio::{RecordConfig, RecordOutcome, record_stdio};
