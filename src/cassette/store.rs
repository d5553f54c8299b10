//! The journal beside a recording: where it lives, who holds it, and what
//! each line says. Loading is `load.rs`'s, recovering a journal left
//! behind `recovery.rs`'s, saving `save.rs`'s.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Rules;
use super::append::Appender;
use super::builder::Direction;
use super::error::CassetteError;
use super::format::{FORMAT_VERSION, HttpEndpointBehaviour, HttpExchange, Transport};
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

/// The first line of a journal: everything the cassette holds besides its
/// messages, so that a recovered cassette is the one the recorder would
/// have saved.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct JournalHeader {
    pub(super) journal_version: u32,
    pub(super) recorded_at: String,
    /// The recorder's process id, named when another recorder of the same
    /// cassette is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) pid: Option<u32>,
    /// Which server process of a scope's recording this is (0 is left out).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(super) process: u32,
    pub(super) transport: Transport,
    /// The rules the cassette keeps (hand-written cases, what was masked).
    /// Journals written before they were kept have none.
    #[serde(default, skip_serializing_if = "Rules::is_default")]
    pub(super) rules: Rules,
}

/// Every later line: one message, as forwarded; or, in an HTTP
/// recording, how an interaction travelled, or how the endpoint answers
/// GET and DELETE, as they stand when written (a later line for the same
/// interaction replaces an earlier one), or that an interaction's exchange
/// is final (the recorder released it; see [`Builder::hold`]).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum JournalEntry {
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

/// Whether a number is 0, which journal headers leave out.
fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{
        Builder, Cassette, Recovery, SkipReason, SkippedLine, load, parse, recover, save,
        save_streamed, to_text,
    };
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
            match crate::cassette::recovery::read_entry(line.to_string().as_bytes()) {
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
