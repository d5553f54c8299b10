//! A dry run: which recorded interactions each fault rule would hit, if
//! a client asked exactly what was recorded, in the recorded order
//! (`mcpcassette check --faults FILE CASSETTE`).

use serde::Serialize;

use super::choose::{self, Counts};
use crate::cassette::{Cassette, Faults};

/// What one rule would hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// The rule's index.
    pub fault: usize,
    /// The interactions it would fire on, by position.
    pub interactions: Vec<usize>,
}

/// Each rule's hits on `cassette`. A new session starts where the client
/// handshakes again (an `initialize` after other requests) or where the
/// recording moves to another server process; chances are drawn as
/// replay draws them.
pub fn would_hit(faults: &Faults, cassette: &Cassette) -> Vec<Hit> {
    let mut hits: Vec<Hit> = (0..faults.rules.len())
        .map(|fault| Hit {
            fault,
            interactions: Vec::new(),
        })
        .collect();
    let mut session = 1;
    let mut counts = Counts::new(faults.rules.len());
    let mut asked_since_handshake = false;
    let mut process = None;
    for (position, interaction) in cassette.interactions.iter().enumerate() {
        let Some(request) = interaction.request() else {
            continue;
        };
        let method = interaction.method();
        let new_process = process.is_some_and(|p| p != interaction.process);
        let handshake_again =
            matches!(method, "initialize" | "server/discover") && asked_since_handshake;
        if new_process || handshake_again {
            session += 1;
            counts = Counts::new(faults.rules.len());
            asked_since_handshake = false;
        }
        process = Some(interaction.process);
        if !matches!(method, "initialize" | "server/discover") {
            asked_since_handshake = true;
        }
        for firing in choose::firing(faults, &mut counts, method, request, session) {
            hits[firing.rule].interactions.push(position);
        }
    }
    hits
}
