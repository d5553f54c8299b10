//! Recording: a transparent proxy between a client and a real server that
//! writes what passes through into a cassette.

mod error;
mod http;
mod stdio;
mod tape;

pub use error::RecordError;
pub use http::{HttpRecordConfig, HttpRecordOutcome, record_http};
pub use stdio::{RecordConfig, RecordOutcome, record_stdio};
