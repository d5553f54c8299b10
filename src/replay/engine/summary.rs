//! What a replay reports: each miss (on stderr, to the client, to the miss
//! hook), each client answer unlike the recorded one, and the [`Summary`]
//! of a session or of every session of one cassette.

use serde_json::Value;

use super::{Engine, Unanswered};
use crate::cassette::Strategy;
use crate::jsonrpc;
use crate::matching::Refusal;
use crate::replay::answers::AnswerMismatch;
use crate::replay::cross_era::Translation;
use crate::replay::report::{self, Miss};
use crate::server::Sink;

/// Misses reported in full on stderr; later ones get a line each.
const FULL_REPORTS: usize = 20;

/// Misses kept for the summary and `--report`; later ones are counted, so
/// a client that misses forever costs bounded memory.
const KEPT_MISSES: usize = 256;

/// What happened during a replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Requests nothing recorded could answer (the first few hundred).
    pub misses: Vec<Miss>,
    /// Misses beyond those kept in `misses`.
    pub misses_not_kept: usize,
    /// Positions of recorded interactions that were never replayed.
    pub unused: Vec<usize>,
    /// Hand-written cases that answered nothing.
    pub unused_cases: Vec<usize>,
    /// Client answers to replayed sampling or elicitation requests that
    /// differ from the recording.
    pub answer_mismatches: Vec<AnswerMismatch>,
    /// Requests that got no answer because the interaction that matched
    /// them has none, and that the client never cancelled.
    pub unanswered: Vec<Unanswered>,
}

impl Summary {
    /// One summary for replays of the same cassette (an engine and its
    /// forks): every miss, in the order given, and what none of them used.
    pub fn merge(summaries: impl IntoIterator<Item = Summary>) -> Summary {
        let mut summaries = summaries.into_iter();
        let Some(mut merged) = summaries.next() else {
            return Summary::default();
        };
        for summary in summaries {
            merged.misses.extend(summary.misses);
            merged.misses_not_kept += summary.misses_not_kept;
            merged.answer_mismatches.extend(summary.answer_mismatches);
            merged.unanswered.extend(summary.unanswered);
            merged.unused.retain(|p| summary.unused.contains(p));
            merged
                .unused_cases
                .retain(|c| summary.unused_cases.contains(c));
        }
        merged
    }
}

impl Engine {
    pub(super) fn miss(&self, request: &Value, refusal: Refusal, sink: &Sink) {
        let rules = self.rules();
        let context = report::Context {
            path: &self.config.path,
            mode: &self.config.mode,
            rules: &rules,
        };
        let translates = self.translation(request) != Translation::None;
        let mut miss = Miss::build(&self.cassette, request, refusal, context, !translates);
        miss.process = self.config.process.clone();
        let seen = {
            let state = self.state();
            state.misses.len() + state.misses_not_kept
        };
        // A cassette recorded under other rules (or by an older version)
        // may still hold a secret: nothing shown of it goes unmasked.
        if seen < FULL_REPORTS {
            eprint!("{}", self.redactor.redact_text(&miss.to_string()));
        } else {
            eprintln!(
                "mcpcassette: miss #{}: {} (full reports stop after {FULL_REPORTS}; --report keeps {KEPT_MISSES})",
                seen + 1,
                self.redactor.redact_text(&miss.message())
            );
        }
        let id = jsonrpc::id(request).cloned().unwrap_or(Value::Null);
        let mut data = miss.data();
        self.redactor.redact_document(&mut data);
        sink.respond(&jsonrpc::error_response(
            id,
            miss.code(),
            &self.redactor.redact_text(&miss.message()),
            Some(data),
        ));
        if let Some(hook) = &self.config.on_miss {
            hook(&miss);
        }
        let mut state = self.state();
        if state.misses.len() < KEPT_MISSES {
            state.misses.push(miss);
        } else {
            state.misses_not_kept += 1;
        }
    }

    /// Reports a client answer unlike the recorded one (stderr, the
    /// summary); whether the strategy (`strict`) refuses it.
    pub(super) fn note_mismatch(&self, mismatch: &AnswerMismatch) -> bool {
        eprint!("{mismatch}");
        let mut state = self.state();
        state.answer_mismatches.push(mismatch.clone());
        state.matcher.rules().strategy == Strategy::Strict
    }

    /// What went unmatched and what was never used.
    pub fn summary(&self) -> Summary {
        let state = self.state();
        Summary {
            misses: state.misses.clone(),
            misses_not_kept: state.misses_not_kept,
            unused: {
                let mut unused = state.matcher.unused(&self.cassette);
                unused.retain(|p| !state.stood_in.contains(p));
                unused
            },
            unused_cases: state.matcher.unused_cases(),
            answer_mismatches: state.answer_mismatches.clone(),
            unanswered: {
                let mut unanswered: Vec<Unanswered> = state.unanswered.values().cloned().collect();
                unanswered.sort_by_key(|u| u.interaction);
                unanswered
            },
        }
    }

    /// What the replay did over every client session: this engine's
    /// summary merged with those of every fork made from it (see
    /// [`Summary::merge`]).
    pub fn summary_of_every_session(&self) -> Summary {
        let forks = self.forks.all();
        Summary::merge(std::iter::once(self.summary()).chain(forks.iter().map(|f| f.summary())))
    }
}
