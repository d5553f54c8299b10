//! Errors from reading and writing cassettes.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong opening, parsing or saving a cassette.
/// Every variant names the file; parse errors also name line, column and
/// the JSON pointer of the offending value.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// The file could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The cassette or journal.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The cassette or journal.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not a valid cassette.
    #[error("{path}:{line}:{column}: {message} (at JSON pointer \"{pointer}\")")]
    Invalid {
        /// The cassette or journal.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Where in the document, as a JSON pointer (RFC 6901).
        pointer: String,
        /// What was wrong.
        message: String,
    },
    /// Another recorder, still running, writes this journal: it is never
    /// recovered from under it.
    #[error(
        "{journal} is being recorded by {}: wait for it to end, or give each server of a test a cassette (or a scope, `run --scope`) of its own",
        match pid { Some(pid) => format!("process {pid}"), None => "another process".to_owned() }
    )]
    Busy {
        /// The journal.
        journal: PathBuf,
        /// The recorder's process id, when its journal says.
        pid: Option<u32>,
    },
    /// A scope folder (`run --scope`) that cannot be used as it is.
    #[error("{path}: {message}")]
    Scope {
        /// The scope file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The cassette was written by a newer mcpcassette.
    #[error(
        "{path}: cassette format version {found} is newer than this mcpcassette reads (up to {supported}); upgrade mcpcassette"
    )]
    TooNew {
        /// The cassette.
        path: PathBuf,
        /// Its `format_version`.
        found: u64,
        /// The newest version this build reads.
        supported: u32,
    },
}
