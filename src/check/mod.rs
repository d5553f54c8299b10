//! `mcpcassette check`: findings about cassette files.
//!
//! A file is read as text first (conflict markers, truncation, syntax,
//! format version, structure); a file that passes is checked message by
//! message (JSON-RPC envelope, MCP shapes of the recorded protocol version,
//! pairing, tool arguments and results, optionally an official schema) and as a whole
//! (duplicates, contradictions, hand-written cases, secrets). Every finding
//! has a stable [`Code`], a [`Severity`], a line and a JSON pointer.
//! Fixtures (files with `fixture_version`) get checks of their own: see
//! `fixture_file.rs`.

mod document;
mod findings;
mod fixture_file;
mod junit;
mod messages;
mod sarif;
mod secrets;
mod structure;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use crate::json::Lines;
pub use findings::{Code, Finding, REPORT_FINDINGS, REPORT_MESSAGE_CHARS, Severity};
pub use junit::to_junit;
pub use sarif::{INFORMATION_URI, SARIF_VERSION, to_sarif};

use crate::redact::Redactor;
use crate::schema::OfficialSchema;

/// What `check` looks with.
#[derive(Debug, Clone)]
pub struct CheckConfig {
    /// Finds likely secrets, and masks any that would reach a message.
    pub redactor: Redactor,
    /// An official schema.json to validate every message against
    /// (`--schema`).
    pub official: Option<std::sync::Arc<OfficialSchema>>,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            redactor: Redactor::defaults(),
            official: None,
        }
    }
}

/// Why a file could not be checked at all.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// It could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The findings for one file, in line order.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// The file, as named.
    pub path: PathBuf,
    /// What was found.
    pub findings: Vec<Finding>,
}

impl FileReport {
    /// How many findings have `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.count(Severity::Error) > 0
    }

    /// The report as `check` prints it: each finding
    /// ([`Finding::to_text`]), then a summary line.
    pub fn to_text(&self) -> String {
        let mut out: String = self
            .findings
            .iter()
            .map(|f| f.to_text(&self.path))
            .collect();
        let (errors, warnings) = (self.count(Severity::Error), self.count(Severity::Warning));
        let verdict = if errors > 0 { "FAILED" } else { "ok" };
        out.push_str(&format!(
            "{}: {verdict} ({errors} error{}, {warnings} warning{})\n",
            self.path.display(),
            plural(errors),
            plural(warnings)
        ));
        out
    }
}

/// A file `check` could not read: its path and why (already masked).
#[derive(Debug, Clone)]
pub struct Unreadable {
    /// The file, as named.
    pub path: std::path::PathBuf,
    /// Why it could not be read.
    pub message: String,
}

/// `s` after a count of `n`, but for one.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Reads and checks one file.
pub fn check_file(path: &Path, config: &CheckConfig) -> Result<FileReport, CheckError> {
    let bytes = crate::json::read_file(path).map_err(|source| CheckError::Read {
        path: path.into(),
        source,
    })?;
    Ok(check_bytes(path, &bytes, config))
}

/// Checks a file's bytes: text that is not UTF-8 is refused where it
/// stops being UTF-8, as every loader refuses it.
pub fn check_bytes(path: &Path, bytes: &[u8], config: &CheckConfig) -> FileReport {
    match crate::json::file_text(bytes) {
        Ok(text) => check_text(path, text, config),
        Err(e) => FileReport {
            path: path.into(),
            findings: vec![Finding::new(Code::InvalidJson, "", e.to_string()).at_line(e.line)],
        },
    }
}

/// Checks cassette (or fixture) text; `path` only names the file.
pub fn check_text(path: &Path, text: &str, config: &CheckConfig) -> FileReport {
    // The secrets scan reads the text, every other check the parsed
    // cassette. On a big file the scan starts at once, beside the parse,
    // and what it finds is kept only if the file is a cassette after all.
    let split = crate::parallel::threads_for(text.len(), TEXT_PER_THREAD) > 1;
    let scan_secrets = || {
        let mut findings = Vec::new();
        let outcome = secrets::scan_text(text, &config.redactor, &mut findings);
        (findings, outcome)
    };
    let read_and_check = || match document::read(path, text) {
        Err(findings) => (findings, false),
        Ok(document::Read::Fixture(document)) => {
            (fixture_file::check(path, text, &document, config), false)
        }
        Ok(document::Read::Cassette(cassette)) => (message_checks(&cassette, config), true),
        Ok(document::Read::Faults(document)) => (faults_file(text, &document), false),
    };
    let (mut findings, cassette, secrets) = if split {
        let (secrets, (findings, cassette)) =
            crate::parallel::join(true, scan_secrets, read_and_check);
        (findings, cassette, cassette.then_some(secrets))
    } else {
        let (findings, cassette) = read_and_check();
        (findings, cassette, cassette.then(scan_secrets))
    };
    if let Some((secrets, outcome)) = secrets {
        if let Err(e) = outcome {
            tracing::warn!("the secrets scan stopped early: {e}");
        }
        findings.extend(secrets);
    }
    if cassette && !findings.is_empty() {
        let lines = Lines::index(text);
        for finding in &mut findings {
            finding.line = finding.line.or_else(|| lines.line_of(&finding.pointer));
        }
    }
    for finding in &mut findings {
        if let std::borrow::Cow::Owned(masked) = config.redactor.redact_text(&finding.message) {
            finding.message = masked;
        }
    }
    findings.sort_by_key(|f| (f.line, f.code));
    FileReport {
        path: path.into(),
        findings,
    }
}

/// A faults file's rules, read as replay reads them: the first problem,
/// at its line and pointer.
fn faults_file(text: &str, document: &serde_json::Value) -> Vec<Finding> {
    match crate::cassette::Faults::from_document(document) {
        Ok(_) => Vec::new(),
        Err(e) => {
            let line = Lines::index(text).line_of(&e.pointer).unwrap_or(1);
            vec![Finding::new(Code::Structure, e.pointer, e.message).at_line(line)]
        }
    }
}

/// The checks of a cassette read from its parsed form, message by message
/// and as a whole.
fn message_checks(cassette: &crate::cassette::Cassette, config: &CheckConfig) -> Vec<Finding> {
    let mut findings = Vec::new();
    messages::shapes(cassette, config, &mut findings);
    messages::pairing(cassette, &mut findings);
    messages::tool_arguments(cassette, &mut findings);
    messages::tool_results(cassette, &mut findings);
    structure::duplicates(cassette, &mut findings);
    structure::contradictions(cassette, &mut findings);
    structure::no_success(cassette, &mut findings);
    structure::one_era(cassette, &mut findings);
    structure::process_order(cassette, &mut findings);
    let version = cassette
        .protocol
        .version
        .as_deref()
        .filter(|v| crate::schema::VERSIONS.contains(v));
    structure::cases(cassette, version, &mut findings);
    findings
}

/// Bytes of cassette text below which `check` reads it one way at a time.
const TEXT_PER_THREAD: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_cassette_read_both_ways_at_once_reports_what_each_way_finds() {
        let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let call = |n: usize| {
            format!(
                r#"{{"request": {{"jsonrpc": "2.0", "id": {n}, "method": "tools/list"}},
                "response": {{"jsonrpc": "2.0", "id": {n}, "result": {{"tools": [], "note": "{}"}}}}}}"#,
                "x".repeat(200)
            )
        };
        // Enough for the duplicate check to split across threads too.
        let mut interactions: Vec<String> = (1..20_000).map(call).collect();
        // A secret, for the text scan; an answer paired with no request
        // (its id is another's), for the checks of the parsed cassette.
        interactions[5_000] = interactions[5_000].replace(&"x".repeat(200), token);
        interactions[9_000] = interactions[9_000].replace(
            r#""jsonrpc": "2.0", "id": 9001, "result""#,
            r#""jsonrpc": "2.0", "id": 1, "result""#,
        );
        let text = format!(
            r#"{{"format_version": 1, "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {{"kind": "stdio", "command": ["s"]}},
            "protocol": {{"era": "legacy", "version": "2025-11-25"}},
            "interactions": [{}]}}"#,
            interactions.join(",\n")
        );
        assert!(text.len() > 2 * TEXT_PER_THREAD, "big enough to split");
        let report = check_text(Path::new("big.json"), &text, &CheckConfig::default());
        let at = |code: Code| {
            report
                .findings
                .iter()
                .filter(|f| f.code == code)
                .map(|f| f.pointer.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            at(Code::LikelySecret),
            ["/interactions/5000/response/result/note"]
        );
        let paired: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.pointer.starts_with("/interactions/9000"))
            .map(|f| f.code)
            .collect();
        assert!(paired.contains(&Code::Unpaired), "{:?}", report.findings);
        // Every call repeats the first, but the one with the secret.
        let repeats: Vec<String> = (1..interactions.len())
            .filter(|&i| i != 5_000)
            .map(|i| format!("/interactions/{i}"))
            .collect();
        assert_eq!(at(Code::Duplicate), repeats);
        // Each names the copy before it, across the threads' seams too.
        let last = report.findings.iter().rfind(|f| f.code == Code::Duplicate);
        let before = interactions.len() - 2;
        assert!(
            last.unwrap()
                .message
                .contains(&format!("repeats interaction {before}:")),
            "{last:?}"
        );
    }
}
