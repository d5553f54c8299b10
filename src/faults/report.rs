//! What a faults overlay did: the faults that fired (bounded), the rules
//! that never did, and the requests left hanging.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// How many fired faults a summary keeps; later ones are counted.
pub const KEPT_FIRED: usize = 256;

/// One fault that fired.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fired {
    /// The rule's index in the faults list.
    pub fault: usize,
    /// Its kind (`error`, `delay`, …).
    pub kind: &'static str,
    /// The client session it hit (1-based).
    pub session: u64,
    /// The request it hit: method, and the tool, prompt or resource.
    pub request: String,
    /// The request's id.
    pub id: Value,
    /// What was done.
    pub did: String,
}

/// A request a `hang` fault never answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hung {
    /// The rule's index.
    pub fault: usize,
    /// The request.
    pub request: String,
    /// Its id.
    pub id: Value,
    /// Whether the client cancelled it (`notifications/cancelled`), as a
    /// client whose time-out fired does.
    pub cancelled: bool,
}

/// What a faults overlay did over a replay (every session).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FaultsSummary {
    /// Each rule, as a few words (`#0 tools/call search nth 2: error -32000: …`).
    pub rules: Vec<String>,
    /// The faults that fired, in order (the first [`KEPT_FIRED`]).
    pub fired: Vec<Fired>,
    /// Fired faults beyond those kept.
    pub fired_not_kept: usize,
    /// Rules that never fired.
    pub unused: Vec<usize>,
    /// Requests a `hang` held.
    pub hung: Vec<Hung>,
    /// The exit status a `disconnect` ended the replay with (stdio).
    pub disconnected: Option<u8>,
}

impl FaultsSummary {
    /// Whether there was a faults overlay at all.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

impl fmt::Display for FaultsSummary {
    /// The lines replay prints on stderr at the end.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fired = self.fired.len() + self.fired_not_kept;
        writeln!(
            f,
            "faults: {fired} fired, {} of {} rule(s) never fired",
            self.unused.len(),
            self.rules.len()
        )?;
        for fired in &self.fired {
            writeln!(
                f,
                "  fired #{} {} on {} (id {}, session {}): {}",
                fired.fault, fired.kind, fired.request, fired.id, fired.session, fired.did
            )?;
        }
        if self.fired_not_kept > 0 {
            writeln!(f, "  … and {} more", self.fired_not_kept)?;
        }
        for hung in &self.hung {
            let end = if hung.cancelled {
                "cancelled by the client"
            } else {
                "never cancelled"
            };
            writeln!(
                f,
                "  hung #{} {} (id {}): {end}",
                hung.fault, hung.request, hung.id
            )?;
        }
        for &rule in &self.unused {
            writeln!(f, "  never fired {}", self.rules[rule])?;
        }
        if let Some(exit) = self.disconnected {
            writeln!(f, "  the replay hung up (exit status {exit})")?;
        }
        Ok(())
    }
}
