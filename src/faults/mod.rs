//! The faults overlay: a replayed (or fixture-served) server that
//! misbehaves as a list of fault rules says, so a test can check what its
//! client or agent does when a server errors, stalls, dies, drifts or
//! answers nonsense, on top of real recordings.
//!
//! The rules are data (`cassette::Faults`); [`FaultOverlay`] applies
//! them around any [`Handler`](crate::server::Handler): faults that answer
//! instead of the recording (`error`, `tool_error`, `hang`, `malformed`,
//! `http`) never reach it, and count what they stood in for as used
//! (`Handler::stand_in`); the rest reshape its answer on the way out
//! (`output`). The transports do what only they can: a hang-up
//! (`server::HANGUP`) and an HTTP status (`Handled::Status`).

mod answers;
mod choose;
mod dry_run;
mod output;
mod overlay;
mod prefilter;
mod report;

pub use dry_run::{Hit, would_hit};
pub use overlay::FaultOverlay;

/// Each rule of `faults` in a few words (`#0 tools/call name search nth 2:
/// error -32000: rate limited`), as reports name them.
pub fn describe_rules(faults: &crate::cassette::Faults) -> Vec<String> {
    (faults.rules.iter().enumerate())
        .map(|(i, rule)| overlay::describe(i, rule))
        .collect()
}
pub use report::{FaultsSummary, Fired, Hung, KEPT_FIRED};
