//! Recovery: rebuilding a cassette from the journal an interrupted
//! recording left behind, one journal per server process.

use std::fs::{self, File};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use super::Rules;
use super::builder::Builder;
use super::error::CassetteError;
use super::format::Transport;
use super::save::folder_of;
use super::store::{JournalEntry, JournalHeader, journal_owner, journals};

/// What [`recover`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The journal that was read (and removed).
    pub journal: PathBuf,
    /// The cassette it was recovered into.
    pub cassette: PathBuf,
    /// Completed interactions now in the cassette.
    pub interactions: usize,
    /// Journal lines that could not be read, in order.
    pub skipped: Vec<SkippedLine>,
    /// The journal held no completed interaction, so the cassette that was
    /// there before the interrupted recording began was left as it was.
    pub kept_previous: bool,
}

/// A journal line recovery could not use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// 1-based line number in the journal.
    pub line: usize,
    /// Why it was skipped.
    pub reason: SkipReason,
}

/// Why a journal line was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Bytes that are not UTF-8: a line that was forwarded but could never
    /// be recorded (JSON is UTF-8).
    NotUtf8,
    /// Text that is not a message: forwarded, never recordable.
    NotJson,
    /// A message nested deeper than [`crate::json::MAX_DEPTH`] levels.
    TooDeep,
    /// The last line, cut short by the recorder's death mid-write.
    CutShort,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SkipReason::NotUtf8 => "not UTF-8",
            SkipReason::NotJson => "not JSON",
            SkipReason::TooDeep => "nested too deep",
            SkipReason::CutShort => "cut short",
        })
    }
}

/// Skipped lines listed by number in a recovery's message; more are counted.
const LISTED_SKIPS: usize = 5;

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.kept_previous {
            write!(
                f,
                "an interrupted recording left {} with no completed interaction; {} was left as it was",
                self.journal.display(),
                self.cassette.display()
            )?;
        } else {
            write!(
                f,
                "recovered {} interaction(s) from {} left by an interrupted recording",
                self.interactions,
                self.journal.display()
            )?;
        }
        // A torn last line is the normal trace of a killed recorder.
        let unusual: Vec<&SkippedLine> = self
            .skipped
            .iter()
            .filter(|s| s.reason != SkipReason::CutShort)
            .collect();
        if !unusual.is_empty() {
            let listed: Vec<String> = unusual
                .iter()
                .take(LISTED_SKIPS)
                .map(|s| format!("line {}: {}", s.line, s.reason))
                .collect();
            let more = unusual.len().saturating_sub(LISTED_SKIPS);
            write!(
                f,
                "; skipped {} line(s) that were forwarded but never recordable ({}{})",
                unusual.len(),
                listed.join(", "),
                if more > 0 {
                    format!(", and {more} more")
                } else {
                    String::new()
                }
            )?;
        }
        Ok(())
    }
}

/// If interrupted recordings left journals beside `cassette` (one per
/// server process), rebuilds the cassette from them, saves it, removes the
/// journals and says so, one [`Recovery`] per journal. A journal a live
/// recorder holds is never taken: [`CassetteError::Busy`] names it.
pub fn recover(cassette: &Path) -> Result<Vec<Recovery>, CassetteError> {
    for journal in journals(cassette) {
        if let Some(pid) = journal_owner(&journal) {
            return Err(CassetteError::Busy { journal, pid });
        }
    }
    recover_idle(cassette)
}

/// Like [`recover`], but leaves the journals of live recorders alone: for
/// the processes of one scope, whose siblings record beside them.
pub fn recover_idle(cassette: &Path) -> Result<Vec<Recovery>, CassetteError> {
    let mut recovered = Vec::new();
    for journal in journals(cassette) {
        if let Some(recovery) = recover_journal(cassette, &journal)? {
            recovered.push(recovery);
        }
    }
    Ok(recovered)
}

/// Rebuilds `cassette` from one journal an interrupted recording left, as
/// [`recover`] says; `None` when there is none, or a live recorder holds it.
///
/// Nothing the journal holds is lost to one bad line: lines that are not
/// UTF-8 or not JSON (the recorder forwards whatever it is given) are
/// skipped and listed. A journal without a completed interaction never
/// replaces a cassette that is already there: a recorder killed before its
/// first answer leaves the previous recording in place.
fn recover_journal(cassette: &Path, journal: &Path) -> Result<Option<Recovery>, CassetteError> {
    let journal = journal.to_path_buf();
    let file = match File::open(&journal) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(CassetteError::Read {
                path: journal,
                source,
            });
        }
    };
    // Held until the journal is gone: no other process recovers it too.
    let Ok(file) = Flock::lock(file, FlockArg::LockExclusiveNonblock) else {
        return Ok(None);
    };
    let read_error = |source| CassetteError::Read {
        path: journal.clone(),
        source,
    };
    let mut reader = BufReader::new(&*file);
    let mut line = Vec::new();
    let mut number = 0;
    // `None` until the header is read; `Some(None)` if it was cut short.
    let mut started: Option<Option<(Builder, Rules, u32)>> = None;
    let mut skipped = Vec::new();
    let mut behaviour = None;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(read_error)? == 0 {
            break;
        }
        // The zeros a killed recorder's journal ends with (reserved,
        // never written: `Appender`).
        if line.first() == Some(&0) {
            break;
        }
        if line.last() == Some(&0) {
            let written = line.iter().rposition(|&b| b != 0).map_or(0, |at| at + 1);
            line.truncate(written);
        }
        number += 1;
        let complete = line.last() == Some(&b'\n');
        let (builder, http) = match &mut started {
            None => {
                started = Some(start_recovery(&journal, &line, complete)?);
                continue;
            }
            Some(Some((builder, ..))) => {
                let http = !matches!(builder.transport(), Transport::Stdio { .. });
                (builder, http)
            }
            // A cut header is the last line; nothing follows it.
            Some(None) => break,
        };
        match read_entry(&line) {
            Ok(JournalEntry::Message { dir, on, msg }) => {
                let opened = builder.next_interaction();
                match on {
                    Some(owner) => builder.observe_on_stream(Some(owner), msg),
                    None => builder.observe(dir, msg),
                }
                // Held as the recorder held it, until its release line.
                if http && builder.next_interaction() > opened {
                    builder.hold(opened);
                }
            }
            Ok(JournalEntry::Exchange {
                http,
                exchange,
                released,
            }) => {
                let challenge = exchange.auth_challenge;
                if let Some(recorded) = builder.http_mut(http) {
                    *recorded = exchange;
                }
                if challenge {
                    builder.unanswered_at(http);
                }
                if released {
                    builder.release(http);
                }
            }
            Ok(JournalEntry::Behaviour { behaviour: latest }) => behaviour = Some(latest),
            Ok(JournalEntry::Released { released }) => {
                builder.release(released);
            }
            Err(_) if !complete => skipped.push(SkippedLine {
                line: number,
                reason: SkipReason::CutShort,
            }),
            Err(reason) => skipped.push(SkippedLine {
                line: number,
                reason,
            }),
        }
    }
    let (interactions, recovered) = match started.flatten() {
        Some((builder, rules, process)) => {
            let interactions = builder.completed();
            let mut recovered = builder.finish_streamed();
            recovered.header.rules = rules;
            if let (Some(latest), Transport::StreamableHttp { behaviour, .. }) =
                (behaviour, &mut recovered.header.transport)
            {
                *behaviour = latest;
            }
            (interactions, Some((recovered, process)))
        }
        // Killed before the header was whole: nothing was recorded.
        None => (0, None),
    };
    let kept_previous = interactions == 0 && cassette.exists();
    match recovered {
        Some((recovered, process)) if !kept_previous => {
            recovered.save_as_process(cassette, process)?;
        }
        _ => {}
    }
    fs::remove_file(&journal).map_err(|source| CassetteError::Write {
        path: journal.clone(),
        source,
    })?;
    drop(file);
    Ok(Some(Recovery {
        journal,
        cassette: cassette.into(),
        interactions,
        skipped,
        kept_previous,
    }))
}

/// The builder a journal's header line starts (with the rules to keep and
/// its server process), or `None` when the header itself was cut short.
fn start_recovery(
    journal: &Path,
    line: &[u8],
    complete: bool,
) -> Result<Option<(Builder, Rules, u32)>, CassetteError> {
    match serde_json::from_slice::<JournalHeader>(line) {
        Ok(header) => {
            // Settled interactions leave memory. An HTTP journal revises an
            // exchange until its release line; one written before journals
            // had them releases none, and is recovered in memory.
            let mut builder = Builder::new(header.recorded_at, header.transport);
            if let Err(e) = builder.spill_beside(journal) {
                tracing::warn!(
                    "cannot make a spill file in {} ({e}); recovering in memory",
                    folder_of(journal).display()
                );
            }
            Ok(Some((builder, header.rules, header.process)))
        }
        Err(_) if !complete => Ok(None),
        Err(e) => Err(CassetteError::Invalid {
            path: journal.into(),
            line: 1,
            column: e.column(),
            pointer: String::new(),
            message: format!(
                "not a journal mcpcassette wrote ({}); move it aside to record here",
                crate::json::plain_error(&e)
            ),
        }),
    }
}

/// One journal entry, or why the line is not one.
pub(super) fn read_entry(line: &[u8]) -> Result<JournalEntry, SkipReason> {
    std::str::from_utf8(line).map_err(|_| SkipReason::NotUtf8)?;
    // An entry wraps its message in one object.
    crate::json::from_slice(line, 1).map_err(|e| match e {
        crate::json::ParseError::TooDeep(_) => SkipReason::TooDeep,
        crate::json::ParseError::Json(_) => SkipReason::NotJson,
    })
}
