//! Recording: a transparent proxy between a client and a real server that
//! writes what passes through into a cassette.

mod error;
mod http;
mod stdio;
mod tape;

pub use error::RecordError;
pub use http::{HttpRecordConfig, HttpRecordOutcome, record_http};
pub use stdio::{RecordConfig, RecordOutcome, record_stdio};

use std::path::Path;

use crate::cassette::{self, Recovery};
use crate::matching::Rules;

/// What a new recording takes over from the cassette it replaces: a journal
/// an interrupted recording left (recovered first, so nothing is lost
/// silently) and the hand-written rules, which a re-recording keeps.
fn previous(cassette: Option<&Path>) -> Result<(Option<Recovery>, Rules), RecordError> {
    let Some(path) = cassette else {
        return Ok((None, Rules::default()));
    };
    let recovered = cassette::recover(path)?;
    let rules = cassette::load(path)
        .map(|old| old.rules)
        .unwrap_or_default();
    Ok((recovered, rules))
}
