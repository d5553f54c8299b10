//! What a finished replay comes to: passed, or failed for the first of
//! these reasons: requests nothing recorded answered, requests left
//! unanswered, (under `strict`) client answers that differ from the
//! recording, or (when asked) recordings never used. The CLI turns a
//! failure into exit status 1; the reasons are said the same way
//! everywhere.

use std::fmt;
use std::path::PathBuf;

use super::engine::{Engine, Summary, Unanswered};
use crate::cassette::Strategy;

/// What is held against a replay besides misses.
#[derive(Debug, Clone, Copy, Default)]
pub struct VerdictConfig {
    /// A recorded interaction (or hand-written case) never used fails the
    /// replay (`--fail-on-unused`).
    pub fail_on_unused: bool,
}

/// Why a replay failed; `None` of these means it passed.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Requests had no recorded answer.
    Misses {
        /// How many (kept in the summary or only counted).
        count: usize,
        /// The cassette.
        path: PathBuf,
    },
    /// Requests matched interactions recorded without a response, and the
    /// client never cancelled them.
    Unanswered(Vec<Unanswered>),
    /// `strict`: the client answered replayed sampling or elicitation
    /// requests otherwise than recorded.
    AnswerMismatches(usize),
    /// `fail_on_unused`: something recorded was never used.
    Unused,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Misses { count, path } => write!(
                f,
                "{count} request(s) had no recorded answer in {}",
                path.display()
            ),
            Failure::Unanswered(unanswered) => {
                let listed: Vec<String> = unanswered
                    .iter()
                    .map(|u| format!("id {} (#{} {})", u.id, u.interaction, u.label))
                    .collect();
                write!(
                    f,
                    "{} request(s) were never answered: the interaction that matched each was recorded without a response (cancelled, or still open when recording stopped); re-record it: {}",
                    unanswered.len(),
                    listed.join(", ")
                )
            }
            Failure::AnswerMismatches(count) => write!(
                f,
                "strategy strict: the client answered {count} replayed sampling or elicitation request(s) differently from the recording"
            ),
            Failure::Unused => write!(f, "--fail-on-unused: recorded interactions were never used"),
        }
    }
}

impl Engine {
    /// What `summary` (of a replay on this engine) comes to: `Ok` when it
    /// passed, else the first reason it failed.
    pub fn verdict(&self, summary: &Summary, config: &VerdictConfig) -> Result<(), Failure> {
        if !summary.misses.is_empty() {
            return Err(Failure::Misses {
                count: summary.misses.len() + summary.misses_not_kept,
                path: self.config().path.clone(),
            });
        }
        if !summary.unanswered.is_empty() {
            return Err(Failure::Unanswered(summary.unanswered.clone()));
        }
        if self.rules().strategy == Strategy::Strict && !summary.answer_mismatches.is_empty() {
            return Err(Failure::AnswerMismatches(summary.answer_mismatches.len()));
        }
        if config.fail_on_unused && !(summary.unused.is_empty() && summary.unused_cases.is_empty())
        {
            return Err(Failure::Unused);
        }
        Ok(())
    }

    /// What went unused, one line each (`#3 tools/call {"name":"echo"}`,
    /// secrets masked), for the end of a replay; `None` when all was used.
    pub fn unused_report(&self, summary: &Summary) -> Option<String> {
        let interactions = &self.cassette().interactions;
        let rules = self.rules();
        let mut lines = Vec::new();
        if !summary.unused.is_empty() {
            lines.push(format!(
                "{} recorded interaction(s) were never used:",
                summary.unused.len()
            ));
            for &position in summary.unused.iter().take(UNUSED_LISTED) {
                let interaction = &interactions[position];
                let params = interaction
                    .client
                    .raw()
                    .with(|m| m.get("params").map(crate::redact::mask_value));
                let canonical = crate::matching::canonical(interaction.method(), params.as_ref());
                lines.push(format!("  #{position} {}", shorten(&canonical)));
            }
            if let Some(more) = summary.unused.len().checked_sub(UNUSED_LISTED)
                && more > 0
            {
                lines.push(format!("  … and {more} more"));
            }
        }
        for &case in &summary.unused_cases {
            lines.push(format!(
                "hand-written case #{case} ({}) answered nothing",
                rules.cases[case].method
            ));
        }
        (!lines.is_empty()).then(|| lines.join("\n"))
    }
}

/// How many unused interactions the report names; a long session that
/// used a few of a big cassette's would otherwise print thousands of lines.
const UNUSED_LISTED: usize = 20;

/// At most 100 characters.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::Cassette;
    use serde_json::json;

    fn engine(strategy: Strategy) -> std::sync::Arc<Engine> {
        let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
        let mut cassette: Cassette = serde_json::from_value(json!({
            "format_version": crate::cassette::FORMAT_VERSION,
            "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": "legacy"},
            "interactions": [{
                "request": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"text": token}}},
                "response": {"jsonrpc": "2.0", "id": 1, "result": {}},
            }],
        }))
        .unwrap();
        cassette.rules.strategy = strategy;
        Engine::new(cassette, std::path::Path::new("c.json"))
    }

    #[test]
    fn unanswered_requests_fail_before_unused_ones_and_are_named() {
        let engine = engine(Strategy::Sequential);
        let summary = Summary {
            unused: vec![0],
            unanswered: vec![Unanswered {
                id: json!(7),
                interaction: 0,
                label: "tools/call slow".into(),
            }],
            ..Summary::default()
        };
        let config = VerdictConfig {
            fail_on_unused: true,
        };
        let failure = engine.verdict(&summary, &config).unwrap_err();
        assert!(matches!(failure, Failure::Unanswered(_)), "{failure}");
        assert!(
            failure
                .to_string()
                .ends_with("re-record it: id 7 (#0 tools/call slow)"),
            "{failure}"
        );
    }

    #[test]
    fn unused_fails_only_when_asked() {
        let engine = engine(Strategy::Sequential);
        let summary = Summary {
            unused: vec![0],
            ..Summary::default()
        };
        assert_eq!(engine.verdict(&summary, &VerdictConfig::default()), Ok(()));
        let strict = VerdictConfig {
            fail_on_unused: true,
        };
        assert_eq!(engine.verdict(&summary, &strict), Err(Failure::Unused));
    }

    #[test]
    fn the_unused_report_masks_what_it_lists() {
        let engine = engine(Strategy::Sequential);
        let summary = Summary {
            unused: vec![0],
            ..Summary::default()
        };
        let report = engine.unused_report(&summary).unwrap();
        assert!(
            report.starts_with("1 recorded interaction(s) were never used:\n  #0 tools/call"),
            "{report}"
        );
        assert!(!report.contains("ghp_"), "{report}");
        assert_eq!(engine.unused_report(&Summary::default()), None);
    }

    #[test]
    fn a_long_unused_list_is_cut_short() {
        let engine = engine(Strategy::Sequential);
        let summary = Summary {
            unused: vec![0; 25],
            ..Summary::default()
        };
        let report = engine.unused_report(&summary).unwrap();
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines[0], "25 recorded interaction(s) were never used:");
        assert_eq!(lines.len(), 1 + UNUSED_LISTED + 1, "{report}");
        assert_eq!(lines[UNUSED_LISTED + 1], "  … and 5 more");
    }
}
