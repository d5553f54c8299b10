//! The recorded pace (`--pace recorded`): when each message of an
//! interaction is due, as long after the live message as it came after the
//! recorded one.

use std::time::Duration;

use tokio::time::Instant;

use crate::cassette::Interaction;
use crate::server::{Pace, Sink};

/// When each message of an interaction is due under `--pace recorded`.
pub(super) struct Timing<'a> {
    asked: Instant,
    /// Empty when the sink goes fast or nothing was timed.
    delays: &'a [u64],
}

impl<'a> Timing<'a> {
    pub(super) fn new(interaction: &'a Interaction, sink: &Sink, asked: Instant) -> Self {
        let paced = sink.delivery.pace == Pace::Recorded;
        Timing {
            asked,
            delays: if paced { &interaction.delays_ms } else { &[] },
        }
    }

    /// Waits until message `index` (of `during`, then the response) is due,
    /// as long after the live message as it came after the recorded one.
    pub(super) async fn wait(&self, index: usize) {
        if let Some(&delay) = self.delays.get(index) {
            tokio::time::sleep_until(self.asked + Duration::from_millis(delay)).await;
        }
    }
}
