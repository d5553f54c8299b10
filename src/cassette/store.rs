//! Loading cassettes (versioned reads), the journal beside a recording,
//! and recovery of a journal left behind by an interrupted recording.
//! Saving is `save`'s.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Rules;
use super::append::Appender;
use super::builder::{Builder, Direction};
use super::error::CassetteError;
use super::format::{Cassette, FORMAT_VERSION, HttpEndpointBehaviour, HttpExchange, Transport};
use super::save::folder_of;

/// The journal that sits beside a cassette while it is being recorded.
pub fn journal_path(cassette: &Path) -> PathBuf {
    process_journal_path(cassette, 0)
}

/// The journal of one server process of a recording (see
/// [`super::Scope`]): `CASSETTE.journal` for the first, as a recording of
/// one process has always written, `CASSETTE.N.journal` for process N.
pub fn process_journal_path(cassette: &Path, process: u32) -> PathBuf {
    let mut name = cassette.file_name().unwrap_or_default().to_os_string();
    if process > 0 {
        name.push(format!(".{process}"));
    }
    name.push(".journal");
    cassette.with_file_name(name)
}

/// Every journal beside `cassette` (of any of its processes), first
/// process first.
pub fn journals(cassette: &Path) -> Vec<PathBuf> {
    let name = cassette.file_name().unwrap_or_default().to_string_lossy();
    let process_of = |file: &str| -> Option<u32> {
        let rest = file.strip_prefix(name.as_ref())?.strip_suffix(".journal")?;
        match rest.strip_prefix('.') {
            None if rest.is_empty() => Some(0),
            Some(n) if !n.starts_with('0') && n.bytes().all(|b| b.is_ascii_digit()) => {
                n.parse().ok()
            }
            _ => None,
        }
    };
    let mut found: Vec<(u32, PathBuf)> = match fs::read_dir(folder_of(cassette)) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let process = process_of(entry.file_name().to_str()?)?;
                Some((process, process_journal_path(cassette, process)))
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    found.sort();
    found.into_iter().map(|(_, path)| path).collect()
}

/// The recorder that holds `journal` locked, if one does: its journal's
/// process id (`Some(None)` when its header does not say).
pub fn journal_owner(journal: &Path) -> Option<Option<u32>> {
    let file = File::open(journal).ok()?;
    match Flock::lock(file, FlockArg::LockSharedNonblock) {
        Ok(_unlocked_when_dropped) => None,
        Err(_) => Some(header_pid(journal)),
    }
}

/// The process id a journal's header names.
fn header_pid(journal: &Path) -> Option<u32> {
    let mut first = Vec::new();
    let file = File::open(journal).ok()?;
    BufReader::new(file).read_until(b'\n', &mut first).ok()?;
    serde_json::from_slice::<JournalHeader>(&first).ok()?.pid
}

/// Reads a cassette. Older format versions are upgraded in memory; newer
/// ones are refused with [`CassetteError::TooNew`].
pub fn load(path: &Path) -> Result<Cassette, CassetteError> {
    let bytes = crate::json::read_file(path).map_err(|source| CassetteError::Read {
        path: path.into(),
        source,
    })?;
    let text = file_text(path, &bytes)?;
    // A big cassette as `save` wrote it: its interactions parsed on all
    // cores, for replay's first answer. Anything the split parse can't
    // vouch for goes the usual way. (`check` parses with `parse`, on one
    // core: its other core is busy with the secrets scan already.)
    if let Some(cassette) = super::split::parse(text) {
        return accepted(path, text, cassette);
    }
    parse_text(path, text)
}

/// Parses cassette text; `path` only names the file in errors.
pub fn parse(path: &Path, text: &str) -> Result<Cassette, CassetteError> {
    parse_text(path, text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// Parses a cassette file's bytes: the one loader behind replay, `check`
/// and every other command, so that they accept and refuse the same files.
/// Every refusal names the line, column and JSON pointer.
pub fn parse_bytes(path: &Path, bytes: &[u8]) -> Result<Cassette, CassetteError> {
    parse_text(path, file_text(path, bytes)?)
}

/// A file's bytes as text without its byte-order mark, or the refusal
/// that names where they stop being UTF-8.
fn file_text<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, CassetteError> {
    crate::json::file_text(bytes).map_err(|e| CassetteError::Invalid {
        path: path.into(),
        line: e.line,
        column: e.column,
        pointer: String::new(),
        message: e.to_string(),
    })
}

/// [`parse_bytes`] of text already checked, its byte-order mark removed.
fn parse_text(path: &Path, text: &str) -> Result<Cassette, CassetteError> {
    let invalid =
        |(line, column): (usize, usize), pointer: &str, message: String| CassetteError::Invalid {
            path: path.into(),
            line,
            column,
            pointer: pointer.into(),
            message,
        };
    let bytes = text.as_bytes();
    // The common case first: one typed pass. Only a cassette that fails it
    // pays for the passes that locate the error precisely.
    let fast = crate::json::deserialize_borrowing(|| {
        super::presize::for_text(text.len(), || serde_json::from_str::<Cassette>(text))
    });
    let fast_error = match fast {
        Ok(cassette) => return accepted(path, text, cassette),
        Err(e) => e,
    };
    let limit = crate::json::MAX_DEPTH + crate::json::FILE_WRAPPING;
    let nesting = crate::json::nesting(bytes, limit).map_err(|too_deep| {
        invalid(
            (too_deep.line, too_deep.column),
            &too_deep.pointer,
            too_deep.to_string(),
        )
    })?;
    // Deeper than serde_json goes by default, within our limit.
    let deep = nesting.deepest > crate::json::MAX_DEPTH;
    // Only a cassette that stopped at serde_json's depth limit is worth a
    // second typed pass; any other failure goes to the diagnosis.
    let retry = deep && crate::json::is_recursion_limit(&fast_error);
    let cassette = match retry.then(|| crate::json::unbounded::<Cassette>(bytes)) {
        Some(Ok(cassette)) => cassette,
        _ => diagnose(path, text, deep)?,
    };
    // Messages deeper than a message may be are refused as they are read
    // (`RawMessage`), wherever the file's own structure allowed them.
    accepted(path, text, cassette)
}

/// A parsed cassette, if this build reads its format version and its
/// hand-written rules make sense.
fn accepted(path: &Path, text: &str, cassette: Cassette) -> Result<Cassette, CassetteError> {
    let cassette = versioned(path, cassette)?;
    if let Err(problem) = cassette.rules.validate() {
        // `validate` names the place under the rules.
        let pointer = format!("/rules{}", problem.pointer());
        let line = crate::json::Lines::index(text)
            .line_of(&pointer)
            .unwrap_or(1);
        return Err(CassetteError::Invalid {
            path: path.into(),
            line,
            column: 1,
            pointer,
            message: format!("invalid rules: {}", problem.problem()),
        });
    }
    Ok(cassette)
}

/// A parsed cassette, if this build reads its format version.
fn versioned(path: &Path, cassette: Cassette) -> Result<Cassette, CassetteError> {
    match cassette.format_version {
        0 => Err(CassetteError::Invalid {
            path: path.into(),
            line: 1,
            column: 1,
            pointer: "/format_version".into(),
            message: "`format_version` must be a positive integer, found 0".into(),
        }),
        found if found > FORMAT_VERSION => Err(CassetteError::TooNew {
            path: path.into(),
            found: found.into(),
            supported: FORMAT_VERSION,
        }),
        _ => Ok(cassette),
    }
}

/// Parses a cassette that failed the fast pass, for an error that names the
/// line, column and JSON pointer (or says the format is too new). `deep`:
/// it nests deeper than serde_json's default limit (and within ours).
fn diagnose(path: &Path, text: &str, deep: bool) -> Result<Cassette, CassetteError> {
    let invalid = |line, column, pointer: &str, message: String| CassetteError::Invalid {
        path: path.into(),
        line,
        column,
        pointer: pointer.into(),
        message,
    };
    let value: Result<Value, _> = if deep {
        crate::json::unbounded(text.as_bytes())
    } else {
        serde_json::from_str(text)
    };
    let value = value.map_err(|e| {
        invalid(
            e.line(),
            e.column(),
            "",
            format!("not valid JSON: {}", crate::json::plain_error(&e)),
        )
    })?;
    if !value.is_object() {
        return Err(invalid(1, 1, "", "a cassette is a JSON object".into()));
    }
    match value.get("format_version").map(|v| (v, v.as_u64())) {
        None => {
            return Err(invalid(
                1,
                1,
                "/format_version",
                "not a cassette: `format_version` is missing".into(),
            ));
        }
        Some((_, Some(found))) if found > u64::from(FORMAT_VERSION) => {
            return Err(CassetteError::TooNew {
                path: path.into(),
                found,
                supported: FORMAT_VERSION,
            });
        }
        Some((_, Some(found))) if found > 0 => {}
        Some((other, _)) => {
            return Err(invalid(
                1,
                1,
                "/format_version",
                format!("`format_version` must be a positive integer, found {other}"),
            ));
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    if deep {
        de.disable_recursion_limit();
    }
    let cassette = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let pointer = to_pointer(e.path());
        let inner = e.into_inner();
        invalid(
            inner.line(),
            inner.column(),
            &pointer,
            crate::json::plain_error(&inner),
        )
    })?;
    Ok(cassette)
}

/// A serde path as a JSON pointer (RFC 6901): `interactions[3].request` →
/// `/interactions/3/request`.
pub(crate) fn to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        pointer.push('/');
        match segment {
            Segment::Seq { index } => pointer.push_str(&index.to_string()),
            Segment::Map { key } => pointer.push_str(&crate::json::pointer_segment(key)),
            Segment::Enum { variant } => pointer.push_str(variant),
            Segment::Unknown => pointer.push('?'),
        }
    }
    pointer
}

/// The first line of a journal: everything the cassette holds besides its
/// messages, so that a recovered cassette is the one the recorder would
/// have saved.
#[derive(Debug, Serialize, Deserialize)]
struct JournalHeader {
    journal_version: u32,
    recorded_at: String,
    /// The recorder's process id, named when another recorder of the same
    /// cassette is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pid: Option<u32>,
    /// Which server process of a scope's recording this is (0 is left out).
    #[serde(default, skip_serializing_if = "is_zero")]
    process: u32,
    transport: Transport,
    /// The rules the cassette keeps (hand-written cases, what was masked).
    /// Journals written before they were kept have none.
    #[serde(default, skip_serializing_if = "Rules::is_default")]
    rules: Rules,
}

/// Every later line: one message, as forwarded; or, in an HTTP
/// recording, how an interaction travelled, or how the endpoint answers
/// GET and DELETE, as they stand when written (a later line for the same
/// interaction replaces an earlier one), or that an interaction's exchange
/// is final (the recorder released it; see [`Builder::hold`]).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum JournalEntry {
    Message {
        dir: Direction,
        /// Over HTTP, the interaction whose POST's SSE stream carried it.
        #[serde(default)]
        on: Option<usize>,
        msg: Value,
    },
    Exchange {
        http: usize,
        exchange: HttpExchange,
        /// Final: the interaction is released with it.
        #[serde(default)]
        released: bool,
    },
    Behaviour {
        behaviour: HttpEndpointBehaviour,
    },
    Released {
        released: usize,
    },
}

/// An append-only log of the messages of a recording in progress. Each
/// message is appended in one copy (`cassette::append`) as soon as it is seen, so a
/// recorder killed at any moment leaves every completed interaction behind.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: Appender,
    /// The journal's lock, held while this recorder lives (a second
    /// descriptor of the same open file, so the lock is the file's).
    _lock: Flock<File>,
}

impl Journal {
    /// Starts a fresh journal beside `cassette`, for a recording that
    /// started at `recorded_at` over `transport` and keeps `rules`.
    pub fn create(
        cassette: &Path,
        recorded_at: &str,
        transport: &Transport,
        rules: &Rules,
    ) -> Result<Self, CassetteError> {
        Self::create_for_process(cassette, 0, recorded_at, transport, rules)
    }

    /// Starts the journal of server process `process` of a recording (see
    /// [`super::Scope`]). The journal stays locked while this recorder
    /// lives, so no other process takes it for an interrupted one; a
    /// journal another recorder holds is refused with
    /// [`CassetteError::Busy`].
    pub fn create_for_process(
        cassette: &Path,
        process: u32,
        recorded_at: &str,
        transport: &Transport,
        rules: &Rules,
    ) -> Result<Self, CassetteError> {
        let path = process_journal_path(cassette, process);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|source| CassetteError::Write {
                path: path.clone(),
                source,
            })?;
        }
        // Read as well as write: a shared writable map needs both. Emptied
        // only once locked: until then it may be another recorder's.
        let file = OpenOptions::new()
            .create(true)
            .read(true)
            .write(true)
            .truncate(false)
            .open(&path)
            .map_err(|source| CassetteError::Write {
                path: path.clone(),
                source,
            })?;
        let lock = file.try_clone().map_err(|source| CassetteError::Write {
            path: path.clone(),
            source,
        })?;
        let Ok(lock) = Flock::lock(lock, FlockArg::LockExclusiveNonblock) else {
            return Err(CassetteError::Busy {
                pid: header_pid(&path),
                journal: path,
            });
        };
        file.set_len(0).map_err(|source| CassetteError::Write {
            path: path.clone(),
            source,
        })?;
        let mut journal = Journal {
            path,
            file: Appender::new(file),
            _lock: lock,
        };
        let header = JournalHeader {
            journal_version: FORMAT_VERSION,
            recorded_at: recorded_at.into(),
            pid: Some(std::process::id()),
            process,
            transport: transport.clone(),
            rules: rules.clone(),
        };
        journal.write_line(&serde_json::to_value(header).expect("serialisable"))?;
        Ok(journal)
    }

    /// Appends one message.
    pub fn append(&mut self, dir: Direction, msg: &Value) -> Result<(), CassetteError> {
        // Serialised once, straight into the entry's frame: no copy of the
        // message (HTTP recording journals parsed messages on its hot path).
        let line = serde_json::to_vec(msg).expect("JSON values serialise");
        self.append_raw(dir, &line)
    }

    /// Appends one line as it was forwarded, without parsing it: the
    /// recorder calls this before forwarding, so it must be cheap. A line
    /// that is not JSON makes an entry recovery skips, as it was never
    /// recordable.
    pub fn append_raw(&mut self, dir: Direction, line: &[u8]) -> Result<(), CassetteError> {
        let mut entry = Vec::with_capacity(line.len() + 24);
        Journal::entry(&mut entry, dir, line);
        self.append_entries(&entry)
    }

    /// Appends one server message that came on the SSE stream of the POST
    /// that opened interaction `owner` (recovery files it there, as the
    /// recorder did), as its text when that is given, else serialised.
    pub fn append_on_stream(
        &mut self,
        owner: usize,
        msg: &Value,
        text: Option<&[u8]>,
    ) -> Result<(), CassetteError> {
        let serialised;
        let line = match text {
            Some(text) => text,
            None => {
                serialised = serde_json::to_vec(msg).expect("JSON values serialise");
                &serialised
            }
        };
        let mut entry = Vec::with_capacity(line.len() + 40);
        entry.extend_from_slice(format!(r#"{{"dir":"s2c","on":{owner},"msg":"#).as_bytes());
        entry.extend_from_slice(line);
        entry.extend_from_slice(b"}\n");
        self.append_entries(&entry)
    }

    /// Adds to `entries` the journal entry of one line as it was forwarded,
    /// for [`Journal::append_entries`]: lines that arrived together are
    /// journalled with one append.
    pub(crate) fn entry(entries: &mut Vec<u8>, dir: Direction, line: &[u8]) {
        let prefix: &[u8] = match dir {
            Direction::ClientToServer => br#"{"dir":"c2s","msg":"#,
            Direction::ServerToClient => br#"{"dir":"s2c","msg":"#,
        };
        entries.extend_from_slice(prefix);
        entries.extend_from_slice(line);
        entries.extend_from_slice(b"}\n");
    }

    /// Appends entries made by [`Journal::entry`], in one copy.
    pub(crate) fn append_entries(&mut self, entries: &[u8]) -> Result<(), CassetteError> {
        self.file
            .append(entries)
            .map_err(|source| CassetteError::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// Appends how interaction `index` travelled over HTTP, as it stands
    /// now, so that a recovered cassette replays it as recorded.
    pub fn append_exchange(
        &mut self,
        index: usize,
        exchange: &HttpExchange,
    ) -> Result<(), CassetteError> {
        self.write_line(&ExchangeLine {
            http: index,
            exchange,
            released: None,
        })
    }

    /// Appends how interaction `index` travelled, final: it will not
    /// change again (the POST that opened it and its answer are over).
    pub fn append_final_exchange(
        &mut self,
        index: usize,
        exchange: &HttpExchange,
    ) -> Result<(), CassetteError> {
        self.write_line(&ExchangeLine {
            http: index,
            exchange,
            released: Some(true),
        })
    }

    /// Appends that interaction `index`'s exchange will not change again,
    /// for one whose POST ended without a final exchange (a client gone, an
    /// upstream unreachable).
    pub fn append_released(&mut self, index: usize) -> Result<(), CassetteError> {
        self.write_line(&serde_json::json!({ "released": index }))
    }

    /// Appends how the endpoint answers GET and DELETE, as it stands now.
    pub fn append_behaviour(
        &mut self,
        behaviour: &HttpEndpointBehaviour,
    ) -> Result<(), CassetteError> {
        self.write_line(&serde_json::json!({"behaviour": behaviour}))
    }

    /// Appends one line, serialised straight from `line` (no `Value` tree
    /// in between: the HTTP proxy journals an exchange on every answer).
    fn write_line(&mut self, line: &impl Serialize) -> Result<(), CassetteError> {
        let mut line = serde_json::to_vec(line).expect("serialisable");
        line.push(b'\n');
        self.file
            .append(&line)
            .map_err(|source| CassetteError::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// Removes the journal once the cassette is safely saved: the name
    /// goes first, then the lock, so no other process can take the journal
    /// for an interrupted recording in between.
    pub fn remove(self) -> Result<(), CassetteError> {
        let Journal { path, file, _lock } = self;
        let removed = fs::remove_file(&path);
        drop(file);
        drop(_lock);
        removed.map_err(|source| CassetteError::Write { path, source })
    }

    /// What a recorder killed now leaves: the journal as it is (no
    /// destructor cuts its reserved zeros), and no lock (the kernel drops
    /// a dead process's locks).
    #[cfg(test)]
    pub(crate) fn abandon(self) {
        let Journal { file, _lock, .. } = self;
        drop(_lock);
        std::mem::forget(file);
    }
}

/// A journal line saying how an interaction travelled over HTTP.
#[derive(Serialize)]
struct ExchangeLine<'a> {
    http: usize,
    exchange: &'a HttpExchange,
    #[serde(skip_serializing_if = "Option::is_none")]
    released: Option<bool>,
}

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

/// Whether a number is 0, which journal headers leave out.
fn is_zero(n: &u32) -> bool {
    *n == 0
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
fn read_entry(line: &[u8]) -> Result<JournalEntry, SkipReason> {
    std::str::from_utf8(line).map_err(|_| SkipReason::NotUtf8)?;
    // An entry wraps its message in one object.
    crate::json::from_slice(line, 1).map_err(|e| match e {
        crate::json::ParseError::TooDeep(_) => SkipReason::TooDeep,
        crate::json::ParseError::Json(_) => SkipReason::NotJson,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{save, save_streamed, to_text};
    use std::io::Write;

    /// The one journal's recovery.
    fn recover_one(path: &Path) -> Recovery {
        let mut recovered = recover(path).unwrap();
        assert_eq!(recovered.len(), 1);
        recovered.remove(0)
    }
    use crate::cassette::ClientMessage;
    use serde_json::json;

    fn transport() -> Transport {
        Transport::Stdio {
            command: vec!["server".into()],
            cwd: None,
        }
    }

    /// A cassette of one `ping` and its answer.
    fn ping_cassette() -> Cassette {
        let mut b = Builder::new("2026-01-01T00:00:00Z".into(), transport());
        b.observe(
            Direction::ClientToServer,
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        );
        b.observe(
            Direction::ServerToClient,
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        );
        b.finish()
    }

    fn journal(path: &Path, rules: &Rules) -> Journal {
        Journal::create(path, "2026-01-01T00:00:00Z", &transport(), rules).unwrap()
    }

    fn ping_pong(journal: &mut Journal, id: u64) {
        journal
            .append(
                Direction::ClientToServer,
                &json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
            )
            .unwrap();
        journal
            .append(
                Direction::ServerToClient,
                &json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            )
            .unwrap();
    }

    #[test]
    fn a_recovery_leaves_out_auth_challenges_and_files_the_retry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let mut j = journal(&path, &Rules::default());
        let call =
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "admin"}});
        j.append(Direction::ClientToServer, &call).unwrap();
        let challenge = HttpExchange {
            status: 403,
            auth_challenge: true,
            ..HttpExchange::default()
        };
        j.append_exchange(0, &challenge).unwrap();
        // The client steps up and sends the same request, same id.
        j.append(Direction::ClientToServer, &call).unwrap();
        j.append(
            Direction::ServerToClient,
            &json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}}),
        )
        .unwrap();
        drop(j);
        let recovery = recover_one(&path);
        assert_eq!(recovery.interactions, 1);
        let cassette = load(&path).unwrap();
        assert_eq!(cassette.interactions.len(), 1, "{cassette:?}");
        assert!(cassette.interactions[0].response.is_some());
        assert!(cassette.interactions[0].http.is_none());
    }

    #[test]
    fn lines_that_are_not_utf8_are_skipped_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let mut j = journal(&path, &Rules::default());
        ping_pong(&mut j, 1);
        j.append_raw(
            Direction::ServerToClient,
            b"garbage \xFF\xFE from the server",
        )
        .unwrap();
        j.append_raw(
            Direction::ClientToServer,
            b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"\xC3\"}",
        )
        .unwrap();
        j.append_raw(Direction::ClientToServer, b"plain text")
            .unwrap();
        ping_pong(&mut j, 2);
        drop(j);
        let recovery = recover_one(&path);
        assert_eq!(recovery.interactions, 2);
        assert_eq!(
            recovery.skipped,
            vec![
                SkippedLine {
                    line: 4,
                    reason: SkipReason::NotUtf8
                },
                SkippedLine {
                    line: 5,
                    reason: SkipReason::NotUtf8
                },
                SkippedLine {
                    line: 6,
                    reason: SkipReason::NotJson
                },
            ]
        );
        let said = recovery.to_string();
        assert!(said.contains("skipped 3 line(s)"), "{said}");
        assert!(said.contains("line 4: not UTF-8"), "{said}");
        assert_eq!(load(&path).unwrap().interactions.len(), 2);
    }

    #[test]
    fn exchange_lines_are_written_as_recovery_reads_them() {
        let exchange = HttpExchange {
            status: 200,
            content_type: Some("text/event-stream".into()),
            ..HttpExchange::default()
        };
        for released in [None, Some(true)] {
            let line = serde_json::to_value(ExchangeLine {
                http: 3,
                exchange: &exchange,
                released,
            })
            .unwrap();
            let mut expected = serde_json::json!({"http": 3, "exchange": exchange});
            if released.is_some() {
                expected["released"] = serde_json::json!(true);
            }
            assert_eq!(line, expected);
            assert_eq!(
                line.to_string(),
                expected.to_string(),
                "same keys, same order"
            );
            match read_entry(line.to_string().as_bytes()) {
                Ok(JournalEntry::Exchange {
                    http,
                    exchange: read,
                    released: read_released,
                }) => {
                    assert_eq!((http, &read), (3, &exchange));
                    assert_eq!(read_released, released.is_some());
                }
                other => panic!("not read back as an exchange: {other:?}"),
            }
        }
    }

    #[test]
    fn recovery_keeps_the_rules_the_recording_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let rules: Rules = serde_json::from_value(json!({
            "redact_env": ["MY_VAR"],
            "cases": [{"method": "tools/call", "result": {"content": []}}]
        }))
        .unwrap();
        let mut j = journal(&path, &rules);
        ping_pong(&mut j, 1);
        drop(j);
        recover_one(&path);
        assert_eq!(load(&path).unwrap().rules, rules);
    }

    #[test]
    fn a_journal_with_nothing_completed_leaves_the_previous_cassette() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        save(&path, &ping_cassette()).unwrap();
        let before = fs::read(&path).unwrap();
        // A recorder killed before its first answer: a header, a request.
        let mut j = journal(&path, &Rules::default());
        j.append(
            Direction::ClientToServer,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        )
        .unwrap();
        drop(j);
        let recovery = recover_one(&path);
        assert!(recovery.kept_previous, "{recovery}");
        assert!(
            recovery.to_string().contains("was left as it was"),
            "{recovery}"
        );
        assert_eq!(fs::read(&path).unwrap(), before);
        assert!(!journal_path(&path).exists());
    }

    #[test]
    fn a_header_cut_short_is_an_empty_recording() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        fs::write(journal_path(&path), b"{\"journal_version\":1,\"rec").unwrap();
        let recovery = recover_one(&path);
        assert_eq!(recovery.interactions, 0);
        assert!(
            !path.exists(),
            "nothing was recorded, so no cassette is made"
        );
    }

    #[test]
    fn messages_to_the_nesting_limit_survive_journal_and_cassette() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let deep = |depth: usize| -> Value {
            let mut value = json!(1);
            for _ in 0..depth {
                value = json!([value]);
            }
            value
        };
        // The message nests MAX_DEPTH levels: itself, params, then arrays.
        let depth = crate::json::MAX_DEPTH;
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"arguments": {"a": deep(depth - 3)}}});
        let mut j = journal(&path, &Rules::default());
        j.append(Direction::ClientToServer, &request).unwrap();
        j.append(
            Direction::ServerToClient,
            &json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
        )
        .unwrap();
        drop(j);
        assert_eq!(recover_one(&path).interactions, 1);
        let cassette = load(&path).unwrap();
        assert_eq!(cassette.interactions[0].request(), Some(&request));
        let mut deeper = cassette.clone();
        deeper.interactions[0].client = ClientMessage::Request(
            json!({"jsonrpc": "2.0",
            "id": 1, "method": "tools/call", "params": {"arguments": {"a": deep(depth - 2)}}})
            .into(),
        );
        let err = parse(Path::new("c.json"), &to_text(&deeper)).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains(&format!("nested {} levels deep", depth + 1)),
            "{message}"
        );
        assert!(message.contains("/interactions/0/request"), "{message}");
    }

    #[test]
    fn save_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let cassette = ping_cassette();
        save(&path, &cassette).unwrap();
        assert_eq!(load(&path).unwrap(), cassette);
        assert!(fs::read_to_string(&path).unwrap().ends_with("}\n"));
    }

    #[test]
    fn newer_formats_are_refused_by_name() {
        let err = parse(Path::new("c.json"), r#"{"format_version": 2}"#).unwrap_err();
        assert!(
            matches!(err, CassetteError::TooNew { found: 2, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("upgrade mcpcassette"));
    }

    #[test]
    fn structural_errors_name_line_and_pointer() {
        let text = "{\n  \"format_version\": 1,\n  \"recorded_at\": \"x\",\n  \"transport\": {\"kind\": \"stdio\", \"command\": []},\n  \"protocol\": {\"era\": \"legacy\"},\n  \"interactions\": [\n    {\"during\": 3}\n  ]\n}\n";
        let err = parse(Path::new("c.json"), text).unwrap_err();
        let CassetteError::Invalid { line, pointer, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(*line, 7, "{err}");
        assert!(pointer.starts_with("/interactions/0"), "{err}");
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let err = parse(
            Path::new("c.json"),
            "{\n\"format_version\": 1,\n<<<<<<< HEAD\n}",
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("c.json:3:"), "{err}");
    }

    #[test]
    fn journal_recovery_keeps_completed_interactions_and_drops_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let mut journal = journal(&path, &Rules::default());
        journal
            .append(
                Direction::ClientToServer,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            )
            .unwrap();
        journal
            .append(
                Direction::ServerToClient,
                &json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            )
            .unwrap();
        drop(journal);
        let mut file = OpenOptions::new()
            .append(true)
            .open(journal_path(&path))
            .unwrap();
        file.write_all(br#"{"dir":"c2s","msg":{"jsonrpc""#).unwrap();
        let recovery = recover_one(&path);
        assert_eq!(recovery.interactions, 1);
        assert!(!journal_path(&path).exists());
        let cassette = load(&path).unwrap();
        assert_eq!(cassette.interactions.len(), 1);
        assert!(recover(&path).unwrap().is_empty(), "recovery happens once");
    }

    #[test]
    fn a_message_journalled_on_a_posts_stream_is_recovered_under_that_post() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let http = Transport::StreamableHttp {
            url: "http://127.0.0.1:1/mcp".into(),
            endpoint: "/mcp".into(),
            behaviour: Default::default(),
        };
        let mut journal =
            Journal::create(&path, "2026-01-01T00:00:00Z", &http, &Rules::default()).unwrap();
        let call = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t"}});
        let answer = |id: u64| json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}});
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "first's"}});
        journal.append(Direction::ClientToServer, &call(1)).unwrap();
        journal.append(Direction::ClientToServer, &call(2)).unwrap();
        journal.append_on_stream(0, &log, None).unwrap();
        journal
            .append(Direction::ServerToClient, &answer(1))
            .unwrap();
        journal
            .append(Direction::ServerToClient, &answer(2))
            .unwrap();
        journal.abandon();
        recover_one(&path);
        let cassette = load(&path).unwrap();
        assert_eq!(
            cassette.interactions[0].during.len(),
            1,
            "under the first call"
        );
        assert!(cassette.interactions[1].during.is_empty());
    }

    #[test]
    fn a_killed_recorders_journal_ends_in_zeros_and_recovers_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let mut journal = journal(&path, &Rules::default());
        ping_pong(&mut journal, 1);
        ping_pong(&mut journal, 2);
        // Killed half-way through a line: the copy stopped, the reserved
        // zeros follow. A kill runs no destructor.
        journal
            .append_entries(br#"{"dir":"c2s","msg":{"jsonrpc":"2.0","id":3,"#)
            .unwrap();
        journal.abandon();
        let left = std::fs::read(journal_path(&path)).unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(left.last(), Some(&0), "space reserved ahead, as zeros");
        }
        let recovery = recover_one(&path);
        assert_eq!(recovery.interactions, 2);
        let cut: Vec<_> = recovery.skipped.iter().map(|s| s.line).collect();
        assert_eq!(cut, [6], "only the torn line is skipped");
        let cassette = load(&path).unwrap();
        assert_eq!(cassette.interactions.len(), 2);
    }

    #[test]
    fn a_streamed_save_writes_the_text_of_a_save() {
        let dir = tempfile::tempdir().unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cassettes");
        for name in ["demo-legacy.json", "demo-modern.json"] {
            let cassette = load(&root.join(name)).unwrap();
            let mut header = cassette.clone();
            let interactions = std::mem::take(&mut header.interactions);
            let path = dir.path().join(name);
            save_streamed(&path, &header, interactions.into_iter().map(Ok)).unwrap();
            assert_eq!(
                fs::read_to_string(&path).unwrap(),
                to_text(&cassette),
                "{name}"
            );
            save_streamed(&path, &header, std::iter::empty()).unwrap();
            assert_eq!(
                fs::read_to_string(&path).unwrap(),
                to_text(&header),
                "{name}"
            );
        }
    }
}
