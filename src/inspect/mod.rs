//! Inspecting live traffic: an [`Inspector`] is the
//! [`Observer`] behind `mcpcassette inspect`. It
//! sees every message a passthrough proxy forwards, prints one line per
//! message (or logs one JSON object per message), pairs responses with
//! their requests for latencies, flags messages that break the MCP shapes
//! of the session's protocol version with `check`'s codes, and sums it all
//! up in a [`Summary`].
//!
//! Everything it prints or logs is masked by its
//! [`Redactor`], and none of it is params or
//! results: direction, kind, method, id, size, timing, violations.

mod event;
mod summary;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cassette::Direction;
use crate::record::Observer;
use crate::redact::Redactor;
use crate::wire::pairing::{Paired, Pairing};

pub(crate) use event::Event;
pub(crate) use summary::Summary;

use summary::Stats;

/// Where an [`Inspector`] writes each message as it passes.
pub enum Output {
    /// A human-readable line per message (`→ tools/call id=3 …`), with its
    /// violations on the lines below.
    Lines(Box<dyn Write + Send>),
    /// One JSON object per message and line (see `Event`). Violations
    /// are also reported through `tracing`, once per method and code.
    Log(Box<dyn Write + Send>),
    /// Nothing per message; only the summary.
    Quiet,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Output::Lines(_) => "Lines",
            Output::Log(_) => "Log",
            Output::Quiet => "Quiet",
        })
    }
}

/// Watches a session pass: thread-safe, so both directions of a proxy can
/// show it their messages. Timestamps are taken when a message is shown.
#[derive(Debug)]
pub struct Inspector {
    started: Instant,
    state: Mutex<State>,
}

/// A message's time and size, carried through the pairing.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    at: Duration,
    bytes: usize,
}

#[derive(Debug)]
struct State {
    /// Masks what is written; it learns the session's credentials.
    redactor: Redactor,
    pairing: Pairing<Stamp>,
    output: Output,
    stats: Stats,
    /// (method, code) pairs already reported through `tracing`.
    warned: HashSet<(String, &'static str)>,
    /// The output failed once; it is not written to again.
    output_failed: bool,
}

impl Inspector {
    /// An inspector that writes to `output`, masking with `redactor`. Its
    /// clock starts now.
    pub fn new(redactor: Redactor, output: Output) -> Self {
        Inspector {
            started: Instant::now(),
            state: Mutex::new(State {
                redactor,
                pairing: Pairing::default(),
                output,
                stats: Stats::default(),
                warned: HashSet::new(),
                output_failed: false,
            }),
        }
    }

    /// What was seen so far. Responses still waiting for a request that
    /// never came are written out first, unpaired.
    pub fn summary(&self) -> Summary {
        let elapsed = self.started.elapsed();
        let mut state = self.lock();
        let unpaired = state.pairing.unpaired();
        for paired in &unpaired {
            let event = Self::event(&state, paired);
            state.emit(event);
        }
        state
            .stats
            .summary(elapsed, state.pairing.version(), state.pairing.awaiting())
    }

    /// Takes in one line (a message, a batch, or something else) seen
    /// going `direction` at `at` since the inspector started.
    fn seen_at(&self, direction: Direction, line: &[u8], at: Duration) {
        let line = line.trim_ascii();
        if line.is_empty() {
            return;
        }
        let parsed = serde_json::from_slice::<Value>(line);
        let mut state = self.lock();
        match parsed {
            Ok(Value::Array(batch)) if !batch.is_empty() => {
                for message in &batch {
                    let bytes = serde_json::to_vec(message).map_or(0, |b| b.len());
                    self.take(&mut state, direction, message, Stamp { at, bytes });
                }
            }
            Ok(message) => {
                let stamp = Stamp {
                    at,
                    bytes: line.len(),
                };
                self.take(&mut state, direction, &message, stamp);
            }
            Err(_) => {
                let event = Event::invalid(direction, at, line.len());
                state.emit(event);
            }
        }
    }

    fn take(&self, state: &mut State, direction: Direction, message: &Value, stamp: Stamp) {
        let understood = state.pairing.message(direction, message, stamp);
        for paired in &understood {
            let event = Self::event(state, paired);
            state.emit(event);
        }
    }

    /// The event for one understood message, masked.
    fn event(state: &State, paired: &Paired<'_, Stamp>) -> Event {
        let answers = paired.request.as_ref().map(|(method, _)| method.as_str());
        let violations = state.pairing.violations(&paired.message, answers);
        let latency = paired
            .request
            .as_ref()
            .map(|(_, request)| paired.tag.at.saturating_sub(request.at));
        Event::new(
            paired,
            paired.tag.at,
            paired.tag.bytes,
            latency,
            &violations,
            &state.redactor,
        )
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Observer for Inspector {
    fn message(&self, direction: Direction, line: &[u8]) {
        let at = self.started.elapsed();
        self.seen_at(direction, line, at);
    }

    fn secrets(&self, secrets: &[(String, String)]) {
        let mut state = self.lock();
        match state.redactor.with_secrets(secrets) {
            Ok(redactor) => state.redactor = redactor,
            Err(e) => tracing::warn!(
                "cannot mask a client's credentials: {}",
                crate::error_chain::chain(&e)
            ),
        }
    }
}

impl State {
    /// Counts `event` and writes it out.
    fn emit(&mut self, event: Event) {
        self.stats.add(&event);
        let text = match &self.output {
            Output::Lines(_) => event.render(),
            Output::Log(_) => {
                self.warn(&event);
                event.to_json_line()
            }
            Output::Quiet => return,
        };
        if self.output_failed {
            return;
        }
        let written = match &mut self.output {
            Output::Lines(out) | Output::Log(out) => {
                out.write_all(text.as_bytes()).and_then(|()| out.flush())
            }
            Output::Quiet => Ok(()),
        };
        if let Err(e) = written {
            tracing::warn!("cannot write what passes ({e}); forwarding goes on");
            self.output_failed = true;
        }
    }

    /// Reports an event's violations through `tracing`, once per method
    /// and code (the log has every one).
    fn warn(&mut self, event: &Event) {
        for flag in &event.violations {
            let what = event.describe();
            if self.warned.insert((what.clone(), flag.code)) {
                tracing::warn!(
                    "{what} {} breaks the MCP schema: {} at {}: {} (forwarded unchanged)",
                    event.sender(),
                    flag.code,
                    flag.pointer_or_root(),
                    flag.message
                );
            }
        }
    }
}
