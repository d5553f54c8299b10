//! Loading and saving cassettes: atomic saves, versioned reads, and
//! recovery of a journal left behind by an interrupted recording.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::builder::{Builder, Direction};
use super::error::CassetteError;
use super::format::{Cassette, FORMAT_VERSION, Transport};

/// The journal that sits beside a cassette while it is being recorded.
pub fn journal_path(cassette: &Path) -> PathBuf {
    let mut name = cassette.file_name().unwrap_or_default().to_os_string();
    name.push(".journal");
    cassette.with_file_name(name)
}

/// Reads a cassette. Older format versions are upgraded in memory; newer
/// ones are refused with [`CassetteError::TooNew`].
pub fn load(path: &Path) -> Result<Cassette, CassetteError> {
    let text = fs::read_to_string(path).map_err(|source| CassetteError::Read {
        path: path.into(),
        source,
    })?;
    parse(path, &text)
}

/// Parses cassette text; `path` only names the file in errors.
pub fn parse(path: &Path, text: &str) -> Result<Cassette, CassetteError> {
    // The common case first: one typed pass. Only a cassette that fails it
    // pays for the passes that locate the error precisely.
    if let Ok(cassette) = serde_json::from_str::<Cassette>(text) {
        if cassette.format_version > FORMAT_VERSION {
            return Err(CassetteError::TooNew {
                path: path.into(),
                found: cassette.format_version.into(),
                supported: FORMAT_VERSION,
            });
        }
        return Ok(cassette);
    }
    diagnose(path, text)
}

/// Parses a cassette that failed the fast pass, for an error that names the
/// line, column and JSON pointer (or says the format is too new).
fn diagnose(path: &Path, text: &str) -> Result<Cassette, CassetteError> {
    let invalid = |line, column, pointer: &str, message: String| CassetteError::Invalid {
        path: path.into(),
        line,
        column,
        pointer: pointer.into(),
        message,
    };
    let value: Value = serde_json::from_str(text)
        .map_err(|e| invalid(e.line(), e.column(), "", format!("not valid JSON: {e}")))?;
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
        Some((_, Some(_))) => {}
        Some((other, None)) => {
            return Err(invalid(
                1,
                1,
                "/format_version",
                format!("`format_version` must be a positive integer, found {other}"),
            ));
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let pointer = to_pointer(e.path());
        let inner = e.into_inner();
        invalid(inner.line(), inner.column(), &pointer, inner.to_string())
    })
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
            Segment::Map { key } => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
            Segment::Enum { variant } => pointer.push_str(variant),
            Segment::Unknown => pointer.push('?'),
        }
    }
    pointer
}

/// The canonical text of a cassette: pretty JSON, two-space indent, trailing
/// newline, keys in the order the format defines.
pub fn to_text(cassette: &Cassette) -> String {
    let mut text = serde_json::to_string_pretty(cassette).expect("a cassette always serialises");
    text.push('\n');
    text
}

/// Writes a cassette atomically: a temporary file in the same folder,
/// renamed over the target, so readers see the old file or the new one.
pub fn save(path: &Path, cassette: &Cassette) -> Result<(), CassetteError> {
    write_atomically(path, to_text(cassette).as_bytes())
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CassetteError> {
    let write_error = |source| CassetteError::Write {
        path: path.into(),
        source,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).map_err(write_error)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(write_error)?;
    // Temporary files are private; a cassette is meant to be shared.
    let permissions = match fs::metadata(path) {
        Ok(existing) => existing.permissions(),
        Err(_) => fs::Permissions::from_mode(0o644),
    };
    tmp.as_file()
        .set_permissions(permissions)
        .map_err(write_error)?;
    tmp.write_all(bytes).map_err(write_error)?;
    tmp.as_file().sync_all().map_err(write_error)?;
    tmp.persist(path).map_err(|e| write_error(e.error))?;
    Ok(())
}

/// The first line of a journal.
#[derive(Debug, Serialize, Deserialize)]
struct JournalHeader {
    journal_version: u32,
    recorded_at: String,
    transport: Transport,
}

/// Every later line: one message, as forwarded.
#[derive(Debug, Serialize, Deserialize)]
struct JournalEntry {
    dir: Direction,
    msg: Value,
}

/// An append-only log of the messages of a recording in progress. Each
/// message is written with one `write` call as soon as it is seen, so a
/// recorder killed at any moment leaves every completed interaction behind.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Starts a fresh journal beside `cassette`.
    pub fn create(
        cassette: &Path,
        recorded_at: &str,
        transport: &Transport,
    ) -> Result<Self, CassetteError> {
        let path = journal_path(cassette);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|source| CassetteError::Write {
                path: path.clone(),
                source,
            })?;
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(|source| CassetteError::Write {
                path: path.clone(),
                source,
            })?;
        let mut journal = Journal { path, file };
        let header = JournalHeader {
            journal_version: FORMAT_VERSION,
            recorded_at: recorded_at.into(),
            transport: transport.clone(),
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
        let prefix: &[u8] = match dir {
            Direction::ClientToServer => br#"{"dir":"c2s","msg":"#,
            Direction::ServerToClient => br#"{"dir":"s2c","msg":"#,
        };
        let mut entry = Vec::with_capacity(prefix.len() + line.len() + 2);
        entry.extend_from_slice(prefix);
        entry.extend_from_slice(line);
        entry.extend_from_slice(b"}\n");
        self.file
            .write_all(&entry)
            .map_err(|source| CassetteError::Write {
                path: self.path.clone(),
                source,
            })
    }

    fn write_line(&mut self, value: &Value) -> Result<(), CassetteError> {
        let mut line = serde_json::to_vec(value).expect("serialisable");
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(|source| CassetteError::Write {
                path: self.path.clone(),
                source,
            })
    }

    /// Removes the journal once the cassette is safely saved.
    pub fn remove(self) -> Result<(), CassetteError> {
        fs::remove_file(&self.path).map_err(|source| CassetteError::Write {
            path: self.path,
            source,
        })
    }
}

/// What [`recover`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The journal that was read (and removed).
    pub journal: PathBuf,
    /// Completed interactions now in the cassette.
    pub interactions: usize,
}

/// If an interrupted recording left a journal beside `cassette`, rebuilds
/// the cassette from it, saves it, removes the journal and says so.
pub fn recover(cassette: &Path) -> Result<Option<Recovery>, CassetteError> {
    let journal = journal_path(cassette);
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
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|source| CassetteError::Read {
            path: journal.clone(),
            source,
        })?;
    let invalid = |line: usize, message: String| CassetteError::Invalid {
        path: journal.clone(),
        line,
        column: 1,
        pointer: String::new(),
        message,
    };
    let Some(first) = lines.first() else {
        // Killed before the header was written: nothing was recorded.
        fs::remove_file(&journal).map_err(|source| CassetteError::Write {
            path: journal.clone(),
            source,
        })?;
        return Ok(Some(Recovery {
            journal,
            interactions: 0,
        }));
    };
    let header: JournalHeader =
        serde_json::from_str(first).map_err(|e| invalid(1, format!("bad journal header: {e}")))?;
    let mut builder = Builder::new(header.recorded_at, header.transport);
    for line in &lines[1..] {
        // Entries that do not parse are lines that were never JSON (they
        // were forwarded, not recorded) or the last one, cut short when the
        // recorder died mid-write.
        if let Ok(entry) = serde_json::from_str::<JournalEntry>(line) {
            builder.observe(entry.dir, entry.msg);
        }
    }
    let interactions = builder.completed();
    save(cassette, &builder.finish())?;
    fs::remove_file(&journal).map_err(|source| CassetteError::Write {
        path: journal.clone(),
        source,
    })?;
    Ok(Some(Recovery {
        journal,
        interactions,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn transport() -> Transport {
        Transport::Stdio {
            command: vec!["server".into()],
            cwd: None,
        }
    }

    #[test]
    fn save_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let mut b = Builder::new("2026-01-01T00:00:00Z".into(), transport());
        b.observe(
            Direction::ClientToServer,
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        );
        b.observe(
            Direction::ServerToClient,
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
        );
        let cassette = b.finish();
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
        let mut journal = Journal::create(&path, "2026-01-01T00:00:00Z", &transport()).unwrap();
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
        let recovery = recover(&path).unwrap().unwrap();
        assert_eq!(recovery.interactions, 1);
        assert!(!journal_path(&path).exists());
        let cassette = load(&path).unwrap();
        assert_eq!(cassette.interactions.len(), 1);
        assert!(recover(&path).unwrap().is_none(), "recovery happens once");
    }
}
