//! The tape: every line that passed through a recording, in order.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::RecordError;
use crate::cassette::{Builder, Direction, Journal};
use crate::redact::Redactor;

/// Lines as forwarded, journalled the moment they are taped and kept until
/// the watcher takes them (every 100 ms) to check and file them, off the
/// forwarding path. Both forwarding threads share one tape behind a
/// mutex, which puts every line in one order consistent with cause and
/// effect (a line is taped before it is forwarded).
#[derive(Debug)]
pub(super) struct Tape {
    /// `None` once the tape is finished; later lines are not kept.
    journal: Option<Journal>,
    lines: Vec<(Direction, Vec<u8>)>,
    /// When each line was taped, from the start: the timing replay's
    /// `--pace recorded` keeps (the journal does not keep it).
    times: Vec<Duration>,
    started: Instant,
    journal_failed: bool,
    /// Masks secrets before a line is journalled or kept.
    redactor: Redactor,
    /// The journal entries of the lines being taped, kept for its buffer.
    entries: Vec<u8>,
}

impl Tape {
    /// A tape that journals to `journal`, masking with `redactor`.
    pub(super) fn new(journal: Journal, redactor: Redactor) -> Self {
        Tape {
            journal: Some(journal),
            lines: Vec::new(),
            times: Vec::new(),
            started: Instant::now(),
            journal_failed: false,
            redactor,
            entries: Vec::new(),
        }
    }

    /// Keeps the forwarded lines of `lines` (each ends with its `\n`, but
    /// perhaps the last; blank lines are skipped), journalled together
    /// in one append: the lines a read brought in at once, before any
    /// of them is forwarded.
    pub(super) fn record(&mut self, direction: Direction, lines: &[u8]) {
        let Some(journal) = &mut self.journal else {
            return;
        };
        let at = self.started.elapsed();
        self.entries.clear();
        for line in lines.split_inclusive(|&b| b == b'\n') {
            let line = line.trim_ascii();
            if line.is_empty() {
                continue;
            }
            // Masked before anything touches the disk; usually borrowed as is.
            let line = self.redactor.redact_line(line);
            Journal::entry(&mut self.entries, direction, &line);
            self.lines.push((direction, line.into_owned()));
            self.times.push(at);
        }
        if !self.journal_failed
            && !self.entries.is_empty()
            && let Err(e) = journal.append_entries(&self.entries)
        {
            // Forwarding must go on; the cassette is still written at the end.
            let e = crate::error_chain::chain(&e);
            tracing::warn!("{e}; the recording is no longer crash-safe");
            self.journal_failed = true;
        }
    }

    /// The lines taped since the last call, with when each was taped;
    /// the tape keeps no copy.
    pub(super) fn take(&mut self) -> Vec<(Direction, Vec<u8>, Duration)> {
        let times = std::mem::take(&mut self.times);
        std::mem::take(&mut self.lines)
            .into_iter()
            .zip(times)
            .map(|((direction, line), at)| (direction, line, at))
            .collect()
    }

    /// Stops taping and files the lines not yet taken into `builder`.
    pub(super) fn finish(
        &mut self,
        mut builder: Builder,
    ) -> Result<(Builder, Journal), RecordError> {
        let journal = self.journal.take().ok_or(RecordError::TapeFinished)?;
        for (direction, line, at) in self.take() {
            file(&mut builder, direction, &line, at);
        }
        Ok((builder, journal))
    }
}

/// Files one taped line into `builder`, parsed; see [`parse`].
pub(super) fn file(builder: &mut Builder, direction: Direction, line: &[u8], at: Duration) {
    if let Some(message) = parse(direction, line) {
        builder.observe_at(direction, message, at);
    }
}

/// One taped line as JSON, parsed once for both the watch and the
/// builder. Lines that are not JSON were forwarded but cannot be
/// recorded; each is reported.
pub(super) fn parse(direction: Direction, line: &[u8]) -> Option<Value> {
    match crate::json::parse_message(line) {
        Ok(message) => Some(message),
        Err(crate::json::ParseError::TooDeep(deep)) => {
            tracing::warn!(
                ?direction,
                "forwarded a message that is {deep}; not recorded"
            );
            None
        }
        Err(e) => {
            tracing::warn!(
                ?direction,
                "forwarded a line that is not JSON ({e}); not recorded"
            );
            None
        }
    }
}
