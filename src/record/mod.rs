//! Recording: a transparent proxy between a client and a real server that
//! writes what passes through into a cassette.

mod error;
pub(crate) mod proxy;
mod stdio;
mod tape;
mod watch;

pub use error::RecordError;
pub use proxy::{HeaderError, HttpRecordConfig, HttpRecordOutcome, record_http};
pub use stdio::{RecordConfig, RecordOutcome, record_stdio};

pub use watch::Watch;

use std::path::Path;

use crate::cassette::Rules;
use crate::cassette::{self, Direction, Recovery};
use crate::redact::{RedactRule, Redactor};

/// Sees every message that passes through a recording or a passthrough
/// proxy, after it was forwarded (or, over HTTP, as it is forwarded); it
/// can never change it. `mcpcassette inspect` is one.
///
/// - stdio: each line, called by the thread that forwarded it right after
///   the write, so the two directions arrive from two threads and a fast
///   answer may be seen before its request;
/// - HTTP: each MCP POST body (one message or a batch) just before it is
///   sent upstream, each JSON answer once read, and the data of each SSE
///   event as it is passed on. Only MCP traffic: the endpoint and, when
///   recording, an announced HTTP+SSE POST endpoint.
///
/// Lines are as forwarded: not redacted, maybe not JSON, maybe ending in a
/// newline.
pub trait Observer: Send + Sync {
    /// One message (or a batch, or a line that is not JSON) went `direction`.
    fn message(&self, direction: Direction, line: &[u8]);

    /// Credentials seen in a client's request headers (a placeholder name
    /// and a value each): secrets from now on, never to be shown.
    fn secrets(&self, secrets: &[(String, String)]) {
        let _ = secrets;
    }
}

/// What a recording masks, beyond the cassette's stored rules. Credential
/// headers are never stored, whatever this says.
#[derive(Debug, Clone)]
pub struct Redaction {
    /// Rules to add to the cassette's (`--redact`).
    pub rules: Vec<RedactRule>,
    /// Variables to mask whatever their names (`--redact-env`).
    pub env: Vec<String>,
    /// Token shapes and secret-looking variables (off with
    /// `--no-default-redaction`).
    pub defaults: bool,
}

impl Default for Redaction {
    fn default() -> Self {
        Redaction {
            rules: Vec::new(),
            env: Vec::new(),
            defaults: true,
        }
    }
}

/// The rules a recording stores (the old cassette's, plus `redaction`'s)
/// and the redactor they make, over this process's environment.
fn redaction_rules(
    mut rules: Rules,
    redaction: &Redaction,
) -> Result<(Rules, Redactor), RecordError> {
    rules.add_redaction(&redaction.rules, &redaction.env);
    rules.default_redaction = redaction.defaults;
    let redactor = Redactor::new(&rules.redaction())?;
    Ok((rules, redactor))
}

/// Saves a finished recording, streamed from where its builder kept it,
/// unless it holds nothing and a cassette is already there: a client that
/// never spoke (or a server that never started) leaves the previous
/// recording in place. Returns whether it saved.
pub(crate) fn save_finished(
    path: &Path,
    recorded: cassette::Finished,
) -> Result<bool, RecordError> {
    let saved = recorded.save(path)?;
    if !saved {
        tracing::warn!(
            "nothing was recorded; {} was left as it was",
            path.display()
        );
    }
    Ok(saved)
}

/// What a new recording takes over from the cassette it replaces: the
/// journals interrupted recordings left (recovered first, so nothing is
/// lost silently) and the hand-written rules, which a re-recording keeps.
///
/// One process of a scope leaves the journals of its live siblings alone,
/// and recovers a dead one's into the recording they share; any other
/// recording is refused while another recorder holds a journal of the
/// same cassette ([`cassette::CassetteError::Busy`]).
fn previous(
    cassette: Option<&Path>,
    scope: Option<&ScopedRecording>,
) -> Result<(Vec<Recovery>, Rules), RecordError> {
    let Some(path) = cassette else {
        return Ok((Vec::new(), Rules::default()));
    };
    let recovered = match scope {
        Some(scoped) => scoped.scope.locked(|| cassette::recover_idle(path))??,
        None => cassette::recover(path)?,
    };
    Ok((recovered, kept_rules(path)))
}

/// One server process of a scope's recording (`run --scope`): several
/// processes one test started, recorded into one cassette.
#[derive(Debug, Clone)]
pub struct ScopedRecording {
    /// The scope it joined.
    pub scope: cassette::Scope,
    /// What joining gave it: its ordinal, the scope's stamp.
    pub member: cassette::Member,
}

impl ScopedRecording {
    /// Saves this process's recording into the cassette the scope's
    /// processes share, one process at a time.
    fn save(&self, path: &Path, recorded: cassette::Finished) -> Result<bool, RecordError> {
        let ordinal = self.member.ordinal;
        Ok(self
            .scope
            .locked(|| recorded.save_as_process(path, ordinal))??)
    }
}

/// The rules of the cassette at `path`, if it is one this build reads:
/// read as the file streams past, without loading its interactions (a
/// long recording's cassette is hundreds of megabytes).
fn kept_rules(path: &Path) -> Rules {
    #[derive(serde::Deserialize)]
    struct Kept {
        format_version: u64,
        #[serde(default)]
        rules: Rules,
    }
    let Ok(file) = std::fs::File::open(path) else {
        return Rules::default();
    };
    let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
    // Without the byte order mark some editors write, as `load` reads it.
    if std::io::BufRead::fill_buf(&mut reader).is_ok_and(|head| head.starts_with(b"\xEF\xBB\xBF")) {
        std::io::BufRead::consume(&mut reader, 3);
    }
    match serde_json::from_reader::<_, Kept>(reader) {
        Ok(kept)
            if kept.format_version <= u64::from(cassette::FORMAT_VERSION)
                && kept.rules.validate().is_ok() =>
        {
            kept.rules
        }
        _ => Rules::default(),
    }
}

/// For `crate::fuzzing`: the SSE path of HTTP recording.
#[cfg(fuzzing)]
pub(crate) fn fuzzing_sse(chunks: &[&[u8]]) -> Vec<serde_json::Value> {
    proxy::fuzzing_sse(chunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_rules_are_read_wherever_they_are_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let write = |text: &str| std::fs::write(&path, text).unwrap();
        // Hand-edited: the rules after the interactions, a byte order mark.
        write(
            "\u{feff}{\"format_version\": 1, \"interactions\": [{\"request\": {\"id\": 1}}],\
             \"rules\": {\"strategy\": \"sequential\"}}",
        );
        assert_eq!(kept_rules(&path).strategy, cassette::Strategy::Sequential);
        // A newer format's rules, or rules that make no sense, are not kept.
        write("{\"format_version\": 99, \"rules\": {\"strategy\": \"sequential\"}}");
        assert!(kept_rules(&path).is_default());
        write("{\"format_version\": 1, \"rules\": {\"strategy\": 7}}");
        assert!(kept_rules(&path).is_default());
        assert!(kept_rules(&dir.path().join("missing.json")).is_default());
    }
}
