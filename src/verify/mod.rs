//! Drift: re-running a cassette against the live server, comparing what it
//! says now with what was recorded, and updating cassettes deliberately,
//! change by change, the way insta updates snapshots.
//!
//! - [`verify()`] drives the live server with the cassette's client side
//!   ([`drive`]), compares ([`compare()`]) after normalising volatile
//!   fields ([`NormalizeRule`]), and writes the live version as a pending
//!   cassette (`pending.rs`) as [`UpdateMode`] says.
//! - `render.rs` turns a [`DriftReport`] into text (unified diffs);
//!   [`ToolChange`] classifies `tools/list` changes.

mod assert;
pub(crate) mod compare;
mod driver;
mod hints;
mod normalize;
pub(crate) mod pending;
mod processes;
pub(crate) mod render;
mod run;
mod sessions;
mod streams;
mod tools;
mod update;

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

pub use crate::cassette::NormalizeRule;
pub use assert::assert_verified;
pub use compare::compare;
pub use driver::{DriveConfig, drive};
pub use hints::Hint;
pub use run::{Target, Verification, VerifyConfig, verify};
pub use tools::ToolChange;
pub use update::{UnknownUpdateMode, UpdateMode};

/// Why verifying could not be done (as opposed to finding drift).
#[derive(Debug, thiserror::Error)]
pub enum DriftError {
    /// The cassette could not be read.
    #[error(transparent)]
    Cassette(#[from] crate::cassette::CassetteError),
    /// The live server could not be started or reached.
    #[error("cannot start the live server `{program}`")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// Talking to the live server failed.
    #[error("the live server")]
    Live(#[source] crate::client::LiveError),
    /// No server to verify against: none given, and the recorded command
    /// was masked or the cassette was recorded over HTTP.
    #[error("{0}")]
    NoTarget(String),
    /// A pending cassette could not be read, written or applied.
    #[error("{path}: {message}")]
    Pending {
        /// The pending or accepted cassette.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The cassette's rules are unusable (a redaction rule that does not
    /// build).
    #[error(transparent)]
    Rules(#[from] crate::cassette::RulesError),
}

impl From<crate::client::LiveError> for DriftError {
    /// A server that cannot start is said to be the live one, as verify
    /// names it; every other failure is the live server's.
    fn from(error: crate::client::LiveError) -> Self {
        match error {
            crate::client::LiveError::Spawn { program, source } => {
                DriftError::Spawn { program, source }
            }
            other => DriftError::Live(other),
        }
    }
}

/// How one interaction compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Same answer and same server traffic (after normalisation).
    Same,
    /// The answer or the server traffic differs.
    Changed,
    /// The recording has an answer; the live server gave none.
    Missing,
}

/// One interaction's comparison.
#[derive(Debug, Clone, Serialize)]
pub struct InteractionDrift {
    /// Its index in the cassette.
    pub index: usize,
    /// The recorded server process it belongs to (0, the first, is left
    /// out), which `verify` ran in a live process of its own.
    #[serde(skip_serializing_if = "is_first_process")]
    pub process: u32,
    /// The client message's method (and the tool, prompt or resource it
    /// names, e.g. `tools/call echo`).
    pub label: String,
    /// How it compares.
    pub status: Status,
    /// The recorded side, normalised, as compared: `{"response": …,
    /// "during": […], "after": […]}` without JSON-RPC ids.
    pub recorded: Value,
    /// The live side, the same way.
    pub live: Value,
    /// Notifications (and server requests) the live server sent that the
    /// recording does not have, and the other way round.
    pub notifications: NotificationCounts,
    /// For `tools/list`: what changed, tool by tool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_changes: Vec<tools::ToolChange>,
    /// `normalize` rules that would absorb differences that look volatile
    /// (timestamps, UUIDs, ids, epoch times).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub normalize_hints: Vec<hints::Hint>,
}

/// Whether `process` is the first, which reports leave out as cassettes do.
fn is_first_process(process: &u32) -> bool {
    *process == 0
}

/// Server traffic that came with an interaction, compared as sequences.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NotificationCounts {
    /// In both, in the same place.
    pub same: usize,
    /// In both places, but different.
    pub changed: usize,
    /// Recorded, not sent live.
    pub missing: usize,
    /// Sent live, not recorded.
    pub new: usize,
}

/// What a normalisation rule did, so nothing is normalised silently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Normalized {
    /// The rule, as written.
    pub rule: String,
    /// Values it replaced in the recording.
    pub recorded: usize,
    /// Values it replaced in the live answers.
    pub live: usize,
}

/// The result of comparing a recording with the live server.
#[derive(Debug, Clone, Serialize)]
pub struct DriftReport {
    /// The accepted cassette.
    pub cassette: PathBuf,
    /// Every interaction, in order.
    pub interactions: Vec<InteractionDrift>,
    /// What normalisation did.
    pub normalized: Vec<Normalized>,
    /// Totals.
    pub counts: Counts,
}

/// Totals over a report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Interactions that are the same.
    pub same: usize,
    /// Interactions that changed.
    pub changed: usize,
    /// Interactions the live server did not answer.
    pub missing: usize,
    /// Notifications over all interactions.
    pub notifications: NotificationCounts,
}

impl DriftReport {
    /// Whether anything differs.
    pub fn has_drift(&self) -> bool {
        self.counts.changed + self.counts.missing > 0
    }

    /// Whether the recording has server processes other than the first, so
    /// that the interactions are named with their process.
    pub fn has_processes(&self) -> bool {
        self.interactions.iter().any(|i| i.process != 0)
    }

    /// The interactions that differ.
    pub fn drifted(&self) -> impl Iterator<Item = &InteractionDrift> {
        self.interactions
            .iter()
            .filter(|i| i.status != Status::Same)
    }
}
