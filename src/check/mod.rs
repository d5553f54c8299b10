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
mod messages;
mod secrets;
mod structure;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use crate::json::Lines;
pub use findings::{Code, Finding, Severity};

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
    #[error("cannot read {path}: {source}")]
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
}

/// Reads and checks one file.
pub fn check_file(path: &Path, config: &CheckConfig) -> Result<FileReport, CheckError> {
    let bytes = std::fs::read(path).map_err(|source| CheckError::Read {
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
    let mut findings = match document::read(path, text) {
        Err(findings) => findings,
        Ok(document::Read::Fixture(document)) => fixture_file::check(path, text, &document, config),
        Ok(document::Read::Cassette(cassette)) => {
            let mut findings = Vec::new();
            messages::shapes(&cassette, config, &mut findings);
            messages::pairing(&cassette, &mut findings);
            messages::tool_arguments(&cassette, &mut findings);
            messages::tool_results(&cassette, &mut findings);
            structure::duplicates(&cassette, &mut findings);
            structure::contradictions(&cassette, &mut findings);
            structure::no_success(&cassette, &mut findings);
            structure::one_era(&cassette, &mut findings);
            let version = cassette
                .protocol
                .version
                .as_deref()
                .filter(|v| crate::schema::VERSIONS.contains(v));
            structure::cases(&cassette, version, &mut findings);
            secrets::scan_text(text, &config.redactor, &mut findings);
            if !findings.is_empty() {
                let lines = Lines::index(text);
                for finding in &mut findings {
                    finding.line = finding.line.or_else(|| lines.line_of(&finding.pointer));
                }
            }
            findings
        }
    };
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
