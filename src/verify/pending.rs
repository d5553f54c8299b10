//! Pending cassettes: the live version of a drifted cassette, written as
//! `CASSETTE.new` beside the accepted one (or under a pending directory),
//! never over it, like insta's `.snap.new`. Nothing replaces an accepted
//! cassette until someone accepts the change, interaction by interaction.
//!
//! Interactions align by index: interaction `i` of the pending cassette is
//! the live answer to the client message of interaction `i` of the accepted
//! one.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::DriftError;
use crate::cassette::{self, Cassette, CassetteError, Interaction};
use crate::protocol::Era;

/// What a pending cassette's file name adds to the accepted one's.
const SUFFIX: &str = ".new";

/// Directories [`find`] never descends into: build output, VCS data and
/// dependencies hold copies nobody reviews.
const SKIPPED_DIRS: [&str; 3] = ["target", ".git", "node_modules"];

/// Where the pending cassette for `accepted` goes: `accepted` + `.new`
/// beside it, or under `pending_dir` mirroring `accepted`'s path relative to
/// the current directory (absolute paths outside it: mirrored without the
/// leading `/`), so cassettes with the same name in different folders do
/// not collide.
pub fn pending_path(accepted: &Path, pending_dir: Option<&Path>) -> PathBuf {
    pending_path_in(accepted, pending_dir, &current_dir())
}

/// The accepted cassette a pending file belongs to (the inverse of
/// [`pending_path`]); `None` if `pending` does not end in `.new` (or is not
/// under `pending_dir`).
pub fn accepted_path(pending: &Path, pending_dir: Option<&Path>) -> Option<PathBuf> {
    accepted_path_in(pending, pending_dir, &current_dir())
}

/// Writes `live` as the pending cassette for `accepted` (atomically,
/// creating directories); returns its path.
pub fn write(
    accepted: &Path,
    live: &Cassette,
    pending_dir: Option<&Path>,
) -> Result<PathBuf, DriftError> {
    let path = pending_path(accepted, pending_dir);
    cassette::save(&path, live).map_err(|e| pending_error(&path, e))?;
    Ok(path)
}

/// An accepted cassette and its pending replacement.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The accepted cassette's file.
    pub accepted_path: PathBuf,
    /// The pending cassette's file.
    pub pending_path: PathBuf,
    /// The accepted cassette.
    pub accepted: Cassette,
    /// The pending cassette.
    pub pending: Cassette,
}

/// What one pending interaction changes.
#[derive(Debug, Clone)]
pub struct Change {
    /// The interaction's index in both cassettes.
    pub index: usize,
    /// The client message's method and what it names (`tools/call echo`,
    /// `initialize`).
    pub label: String,
    /// The accepted version; `None` when only the pending cassette has it.
    pub accepted: Option<Interaction>,
    /// The pending version; `None` when only the accepted cassette has it.
    pub pending: Option<Interaction>,
}

impl Pending {
    /// The pending cassette for `accepted`, if there is one.
    pub fn load(
        accepted: &Path,
        pending_dir: Option<&Path>,
    ) -> Result<Option<Pending>, DriftError> {
        Pending::load_pair(accepted.to_path_buf(), pending_path(accepted, pending_dir))
    }

    fn load_pair(
        accepted_path: PathBuf,
        pending_path: PathBuf,
    ) -> Result<Option<Pending>, DriftError> {
        if !pending_path.is_file() {
            return Ok(None);
        }
        if !accepted_path.exists() {
            return Err(DriftError::Pending {
                message: format!(
                    "its accepted cassette {} does not exist; restore it, or delete the pending file",
                    accepted_path.display()
                ),
                path: pending_path,
            });
        }
        let pending = cassette::load(&pending_path).map_err(|e| pending_error(&pending_path, e))?;
        let accepted = cassette::load(&accepted_path)?;
        Ok(Some(Pending {
            accepted_path,
            pending_path,
            accepted,
            pending,
        }))
    }

    /// Interactions that differ, in order. Interactions compare as their
    /// serialised JSON (key order aside); one present on one side only
    /// counts as a change.
    pub fn changes(&self) -> Vec<Change> {
        let (accepted, pending) = (&self.accepted.interactions, &self.pending.interactions);
        (0..accepted.len().max(pending.len()))
            .filter_map(|index| {
                let (a, p) = (accepted.get(index), pending.get(index));
                if same(a, p) {
                    return None;
                }
                Some(Change {
                    index,
                    label: a.or(p).expect("one side has the interaction").label(),
                    accepted: a.cloned(),
                    pending: p.cloned(),
                })
            })
            .collect()
    }

    /// Writes the accepted cassette with the pending version of exactly the
    /// interactions in `accept`, then removes the pending file. Accepting
    /// nothing is [`Pending::reject`]. Returns how many changes were
    /// accepted.
    ///
    /// Interactions not accepted stay as accepted; pending-only ones at
    /// accepted indices are appended in order; accepted-only ones are
    /// dropped only when accepted. `protocol` and `server` are recomputed
    /// from the result with [`cassette::describe`] (the accepted ones stay
    /// where it finds nothing); `rules`, `transport` and `format_version`
    /// stay as accepted; `recorded_at` (and, when every change is accepted,
    /// `opening`) come from the pending cassette when anything was
    /// accepted.
    pub fn apply(self, accept: &[usize]) -> Result<usize, DriftError> {
        self.apply_keeping(accept, &[])
    }

    /// [`Pending::apply`], except that the changes in `keep` stay pending:
    /// the pending file is rewritten to hold them and nothing else (changes
    /// neither accepted nor kept revert to the accepted version), so a
    /// review that skips some changes loses none. When nothing is accepted
    /// and everything is kept, no file is touched. An index both accepted
    /// and kept is accepted.
    pub fn apply_keeping(self, accept: &[usize], keep: &[usize]) -> Result<usize, DriftError> {
        let len = self
            .accepted
            .interactions
            .len()
            .max(self.pending.interactions.len());
        if let Some(index) = accept.iter().chain(keep).find(|&&i| i >= len) {
            return Err(DriftError::Pending {
                path: self.pending_path,
                message: format!("there is no interaction {index}: the cassettes have {len}"),
            });
        }
        let changed: BTreeSet<usize> = self.changes().iter().map(|c| c.index).collect();
        let accept: BTreeSet<usize> = accept
            .iter()
            .copied()
            .filter(|i| changed.contains(i))
            .collect();
        let keep: BTreeSet<usize> = keep
            .iter()
            .copied()
            .filter(|i| changed.contains(i) && !accept.contains(i))
            .collect();
        if accept.is_empty() && keep.is_empty() {
            self.reject()?;
            return Ok(0);
        }
        if accept.is_empty() && keep == changed {
            return Ok(0);
        }
        if !accept.is_empty() {
            let mut merged = merge(&self.accepted, &self.pending, &accept, &self.accepted);
            merged.recorded_at.clone_from(&self.pending.recorded_at);
            if accept == changed {
                merged.opening.clone_from(&self.pending.opening);
            }
            cassette::save(&self.accepted_path, &merged)?;
        }
        if keep.is_empty() {
            self.reject()?;
        } else {
            let take: BTreeSet<usize> = accept.union(&keep).copied().collect();
            let remaining = merge(&self.accepted, &self.pending, &take, &self.pending);
            cassette::save(&self.pending_path, &remaining)
                .map_err(|e| pending_error(&self.pending_path, e))?;
        }
        Ok(accept.len())
    }

    /// Accepts every change.
    pub fn accept_all(self) -> Result<usize, DriftError> {
        let all: Vec<usize> = self.changes().iter().map(|c| c.index).collect();
        self.apply(&all)
    }

    /// Removes the pending file; the accepted cassette is not touched
    /// (it stays byte-identical).
    pub fn reject(self) -> Result<(), DriftError> {
        fs::remove_file(&self.pending_path).map_err(|e| DriftError::Pending {
            message: format!("cannot remove the pending cassette: {e}"),
            path: self.pending_path,
        })
    }
}

/// Every pending cassette under `roots`, sorted by the accepted cassette's
/// path. A root that is a file names an accepted cassette or a `.new`;
/// directories are searched recursively, skipping `target`, `.git`,
/// `node_modules` and hidden directories, and `.new` files without an
/// accepted cassette beside them (with a warning). With `pending_dir`, that
/// directory is searched instead of the roots, for pending cassettes whose
/// accepted cassette is under a root.
pub fn find(roots: &[PathBuf], pending_dir: Option<&Path>) -> Result<Vec<Pending>, DriftError> {
    let cwd = current_dir();
    for root in roots {
        if !root.exists() && !pending_path_in(root, pending_dir, &cwd).exists() {
            return Err(DriftError::Pending {
                path: root.clone(),
                message: "no such file or directory".into(),
            });
        }
    }
    let mut pairs: Vec<(PathBuf, PathBuf)> = Vec::new();
    match pending_dir {
        None => {
            for root in roots {
                if root.is_dir() {
                    let mut found = Vec::new();
                    walk(root, true, &mut found)?;
                    for pending in found {
                        let Some(accepted) = accepted_path_in(&pending, None, &cwd) else {
                            continue;
                        };
                        // Most likely a pending directory searched without
                        // `--pending-dir`: not an error, but not hidden.
                        if !accepted.exists() {
                            tracing::warn!(
                                "{}: skipped, no accepted cassette {} beside it \
                                 (a pending directory? then pass it with --pending-dir)",
                                pending.display(),
                                accepted.display()
                            );
                            continue;
                        }
                        pairs.push((accepted, pending));
                    }
                } else if let Some(accepted) = accepted_path_in(root, None, &cwd) {
                    pairs.push((accepted, clean(root)));
                } else {
                    pairs.push((clean(root), pending_path_in(root, None, &cwd)));
                }
            }
        }
        Some(dir) => {
            let mut found = Vec::new();
            if dir.is_dir() {
                walk(dir, false, &mut found)?;
            }
            let roots: Vec<PathBuf> = roots.iter().map(|r| absolute(r, &cwd)).collect();
            for pending in found {
                let Some(accepted) = accepted_path_in(&pending, Some(dir), &cwd) else {
                    continue;
                };
                let (accepted_abs, pending_abs) =
                    (absolute(&accepted, &cwd), absolute(&pending, &cwd));
                if roots
                    .iter()
                    .any(|r| accepted_abs.starts_with(r) || pending_abs == *r)
                {
                    pairs.push((accepted, pending));
                }
            }
        }
    }
    pairs.sort();
    let mut seen = BTreeSet::new();
    pairs.retain(|(_, pending)| seen.insert(absolute(pending, &cwd)));
    let mut all = Vec::new();
    for (accepted, pending) in pairs {
        all.extend(Pending::load_pair(accepted, pending)?);
    }
    Ok(all)
}

/// Whether two sides of an interaction are the same.
fn same(a: Option<&Interaction>, b: Option<&Interaction>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            a == b
                || matches!(
                    (serde_json::to_value(a), serde_json::to_value(b)),
                    (Ok(a), Ok(b)) if a == b
                )
        }
        (None, None) => true,
        _ => false,
    }
}

/// `header` with the interactions taken from `pending` at the indices in
/// `take` and from `accepted` elsewhere (an index missing on the chosen
/// side is left out), and `protocol` and `server` described from them.
fn merge(
    accepted: &Cassette,
    pending: &Cassette,
    take: &BTreeSet<usize>,
    header: &Cassette,
) -> Cassette {
    let len = accepted.interactions.len().max(pending.interactions.len());
    let interactions = (0..len)
        .filter_map(|i| {
            let side = if take.contains(&i) { pending } else { accepted };
            side.interactions.get(i).cloned()
        })
        .collect();
    let mut out = Cassette {
        interactions,
        ..header.clone()
    };
    let (protocol, server) = cassette::describe(&out.interactions);
    if protocol.era != Era::Unknown || protocol.version.is_some() {
        out.protocol = protocol;
    }
    if server.is_some() {
        out.server = server;
    }
    out
}

/// I/O errors on a pending file as [`DriftError::Pending`]; parse errors
/// stay cassette errors, which name line and column.
fn pending_error(path: &Path, error: CassetteError) -> DriftError {
    let message = match error {
        CassetteError::Read { source, .. } => format!("cannot read the pending cassette: {source}"),
        CassetteError::Write { source, .. } => {
            format!("cannot write the pending cassette: {source}")
        }
        other => return DriftError::Cassette(other),
    };
    DriftError::Pending {
        path: path.into(),
        message,
    }
}

fn current_dir() -> PathBuf {
    std::env::current_dir().unwrap_or_default()
}

fn pending_path_in(accepted: &Path, pending_dir: Option<&Path>, cwd: &Path) -> PathBuf {
    match pending_dir {
        None => with_suffix(accepted),
        Some(dir) => with_suffix(&dir.join(mirrored(accepted, cwd))),
    }
}

fn accepted_path_in(pending: &Path, pending_dir: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    let Some(dir) = pending_dir else {
        return without_suffix(pending);
    };
    let relative = absolute(pending, cwd)
        .strip_prefix(absolute(dir, cwd))
        .ok()
        .and_then(without_suffix)?;
    if relative.as_os_str().is_empty() {
        return None;
    }
    // The mirror of `/a/b` and of `./a/b` is the same: prefer the one that
    // exists, and the current directory when both or neither do.
    let rooted = Path::new("/").join(&relative);
    if !cwd.join(&relative).exists() && rooted.exists() {
        Some(rooted)
    } else {
        Some(relative)
    }
}

/// `accepted` as it appears under a pending directory: relative to `cwd`,
/// or, outside it, absolute without the root.
fn mirrored(accepted: &Path, cwd: &Path) -> PathBuf {
    let accepted = absolute(accepted, cwd);
    match accepted.strip_prefix(lexical(cwd)) {
        Ok(relative) => relative.to_path_buf(),
        Err(_) => accepted
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect(),
    }
}

fn with_suffix(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(SUFFIX);
    name.into()
}

/// `path` without `.new`, if its file name ends in it (and is more).
fn without_suffix(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.as_bytes();
    let stem = name.strip_suffix(SUFFIX.as_bytes())?;
    if stem.is_empty() {
        return None;
    }
    Some(path.with_file_name(OsStr::from_bytes(stem)))
}

/// `path` against `cwd`, with `.` and `..` resolved lexically (symlinks
/// are not followed: the paths may not exist yet).
fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    lexical(&cwd.join(path))
}

fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` without a leading `./`, for display.
fn clean(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}

/// Collects pending cassettes under `dir`. `.new` files that are not
/// cassettes (insta's `.snap.new`, say) are left alone.
fn walk(dir: &Path, skip_hidden: bool, found: &mut Vec<PathBuf>) -> Result<(), DriftError> {
    let unreadable = |e: std::io::Error| DriftError::Pending {
        path: dir.into(),
        message: format!("cannot read the directory: {e}"),
    };
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir).map_err(unreadable)? {
        entries.push(entry.map_err(unreadable)?);
    }
    for entry in entries {
        let path = clean(&entry.path());
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            let name = entry.file_name();
            let name = name.as_bytes();
            let skipped = SKIPPED_DIRS.iter().any(|s| s.as_bytes() == name)
                || (skip_hidden && name.starts_with(b"."));
            if !skipped {
                walk(&path, skip_hidden, found)?;
            }
        } else if (kind.is_file() || (kind.is_symlink() && path.is_file()))
            && without_suffix(&path).is_some()
            && looks_like_cassette(&path)
        {
            found.push(path);
        }
    }
    Ok(())
}

/// Whether a file found by searching is a cassette: a JSON object with
/// `format_version` and `interactions`. Unreadable files count, so that
/// loading them reports why.
fn looks_like_cassette(path: &Path) -> bool {
    let Ok(text) = fs::read(path) else {
        return true;
    };
    match serde_json::from_slice::<Value>(&text) {
        Ok(Value::Object(map)) => {
            map.contains_key("format_version") && map.contains_key("interactions")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::cassette::{ClientMessage, ProtocolInfo, Transport};

    fn request(id: u64, method: &str, params: Value) -> Interaction {
        Interaction {
            client: ClientMessage::Request(
                json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).into(),
            ),
            during: vec![],
            response: Some(json!({"jsonrpc": "2.0", "id": id, "result": {"n": id}}).into()),
            after: vec![],
            delays_ms: vec![],
            http: None,
            process: 0,
        }
    }

    fn answered(mut interaction: Interaction, result: Value) -> Interaction {
        let id = interaction.client.message()["id"].clone();
        interaction.response = Some(json!({"jsonrpc": "2.0", "id": id, "result": result}).into());
        interaction
    }

    fn initialize(version: &str, server: &str) -> Interaction {
        answered(
            request(0, "initialize", json!({"protocolVersion": version})),
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": server, "version": "1"},
            }),
        )
    }

    fn cassette(recorded_at: &str, interactions: Vec<Interaction>) -> Cassette {
        let (protocol, server) = cassette::describe(&interactions);
        Cassette {
            format_version: cassette::FORMAT_VERSION,
            recorded_at: recorded_at.into(),
            transport: Transport::Stdio {
                command: vec!["server".into()],
                cwd: None,
            },
            protocol,
            server,
            rules: Default::default(),
            opening: vec![],
            interactions,
        }
    }

    fn echo(id: u64, text: &str, answer: &str) -> Interaction {
        answered(
            request(
                id,
                "tools/call",
                json!({"name": "echo", "arguments": {"text": text}}),
            ),
            json!({"content": [{"type": "text", "text": answer}]}),
        )
    }

    /// Accepted: initialize, echo a, echo b, echo c. Pending: a new
    /// server version, echo b answered differently, echo c answered
    /// differently.
    fn pair(dir: &Path) -> (PathBuf, Cassette, Cassette) {
        let accepted = cassette(
            "2025-01-01T00:00:00Z",
            vec![
                initialize("2025-06-18", "old"),
                echo(1, "a", "a"),
                echo(2, "b", "b"),
                echo(3, "c", "c"),
            ],
        );
        let pending = cassette(
            "2026-01-01T00:00:00Z",
            vec![
                initialize("2025-11-25", "new"),
                echo(1, "a", "a"),
                echo(2, "b", "B!"),
                echo(3, "c", "C!"),
            ],
        );
        let path = dir.join("demo.json");
        cassette::save(&path, &accepted).unwrap();
        write(&path, &pending, None).unwrap();
        (path, accepted, pending)
    }

    fn load(path: &Path) -> Pending {
        Pending::load(path, None).unwrap().expect("pending")
    }

    #[test]
    fn pending_path_beside_the_cassette() {
        let cwd = Path::new("/work/project");
        assert_eq!(
            pending_path_in(Path::new("tests/c.json"), None, cwd),
            Path::new("tests/c.json.new")
        );
        assert_eq!(
            pending_path_in(Path::new("/elsewhere/c.json"), None, cwd),
            Path::new("/elsewhere/c.json.new")
        );
        assert_eq!(
            accepted_path_in(Path::new("tests/c.json.new"), None, cwd),
            Some(PathBuf::from("tests/c.json"))
        );
        assert_eq!(accepted_path_in(Path::new("tests/c.json"), None, cwd), None);
        assert_eq!(accepted_path_in(Path::new("tests/.new"), None, cwd), None);
    }

    #[test]
    fn pending_path_under_a_pending_dir_mirrors_the_path() {
        let cwd = Path::new("/work/project");
        let dir = Some(Path::new("pending"));
        let table = [
            ("tests/c.json", "pending/tests/c.json.new"),
            ("./tests/../tests/c.json", "pending/tests/c.json.new"),
            ("/work/project/tests/c.json", "pending/tests/c.json.new"),
            ("/elsewhere/c.json", "pending/elsewhere/c.json.new"),
            ("../sibling/c.json", "pending/work/sibling/c.json.new"),
        ];
        for (accepted, expected) in table {
            assert_eq!(
                pending_path_in(Path::new(accepted), dir, cwd),
                Path::new(expected),
                "{accepted}"
            );
        }
        let absolute_dir = Some(Path::new("/tmp/pending"));
        assert_eq!(
            pending_path_in(Path::new("tests/c.json"), absolute_dir, cwd),
            Path::new("/tmp/pending/tests/c.json.new")
        );
    }

    #[test]
    fn accepted_path_inverts_pending_path_under_a_pending_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path();
        let dir = Some(Path::new("pending"));
        for accepted in ["tests/c.json", "c.json", "a/b/c/d.cassette"] {
            let pending = pending_path_in(Path::new(accepted), dir, cwd);
            assert_eq!(
                accepted_path_in(&pending, dir, cwd),
                Some(PathBuf::from(accepted))
            );
            // Spelled absolutely, the pending file maps back too.
            assert_eq!(
                accepted_path_in(&cwd.join(&pending), dir, cwd),
                Some(PathBuf::from(accepted))
            );
        }
        // An absolute cassette outside the current directory that exists
        // maps back to itself.
        let outside = tempfile::tempdir().unwrap();
        let accepted = outside.path().join("c.json");
        fs::write(&accepted, "{}").unwrap();
        let pending = pending_path_in(&accepted, dir, cwd);
        assert!(pending.starts_with("pending"), "{}", pending.display());
        assert_eq!(accepted_path_in(&pending, dir, cwd), Some(accepted));
        // Not under the pending directory, or not `.new`.
        assert_eq!(
            accepted_path_in(Path::new("other/c.json.new"), dir, cwd),
            None
        );
        assert_eq!(
            accepted_path_in(Path::new("pending/c.json"), dir, cwd),
            None
        );
    }

    #[test]
    fn write_creates_directories_and_load_finds_it() {
        let tmp = tempfile::tempdir().unwrap();
        let accepted = tmp.path().join("demo.json");
        let live = cassette("2026-01-01T00:00:00Z", vec![echo(1, "a", "a")]);
        cassette::save(&accepted, &live).unwrap();
        assert!(Pending::load(&accepted, None).unwrap().is_none());
        let dir = tmp.path().join("deep/pending");
        let written = write(&accepted, &live, Some(&dir)).unwrap();
        assert!(written.starts_with(&dir) && written.is_file());
        assert_eq!(cassette::load(&written).unwrap(), live);
        let pending = Pending::load(&accepted, Some(&dir)).unwrap().unwrap();
        assert_eq!(pending.pending_path, written);
        assert!(pending.changes().is_empty());
    }

    #[test]
    fn load_without_the_accepted_cassette_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let accepted = tmp.path().join("gone.json");
        let live = cassette("2026-01-01T00:00:00Z", vec![]);
        write(&accepted, &live, None).unwrap();
        let error = Pending::load(&accepted, None).unwrap_err();
        assert!(
            matches!(&error, DriftError::Pending { message, .. } if message.contains("does not exist")),
            "{error}"
        );
    }

    #[test]
    fn changes_are_the_differing_interactions_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, accepted, pending) = pair(tmp.path());
        let changes = load(&path).changes();
        let summary: Vec<(usize, &str)> = changes
            .iter()
            .map(|c| (c.index, c.label.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                (0, "initialize"),
                (2, "tools/call echo"),
                (3, "tools/call echo")
            ]
        );
        assert_eq!(
            changes[1].accepted.as_ref(),
            Some(&accepted.interactions[2])
        );
        assert_eq!(changes[1].pending.as_ref(), Some(&pending.interactions[2]));
    }

    #[test]
    fn changes_count_interactions_on_one_side_only() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("c.json");
        let accepted = cassette("a", vec![echo(1, "a", "a"), echo(2, "b", "b")]);
        let pending = cassette(
            "b",
            vec![echo(1, "a", "a"), echo(2, "b", "b"), echo(3, "c", "c")],
        );
        cassette::save(&path, &accepted).unwrap();
        write(&path, &pending, None).unwrap();
        let changes = load(&path).changes();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].index, 2);
        assert!(changes[0].accepted.is_none() && changes[0].pending.is_some());

        // The other way round: the live run stopped early.
        write(&path, &cassette("b", vec![echo(1, "a", "a")]), None).unwrap();
        let changes = load(&path).changes();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].index, 1);
        assert!(changes[0].accepted.is_some() && changes[0].pending.is_none());
    }

    #[test]
    fn key_order_is_not_a_change() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("c.json");
        let mut reordered = echo(1, "a", "a");
        reordered.response = Some(
            json!({"result": {"content": [{"text": "a", "type": "text"}]}, "id": 1, "jsonrpc": "2.0"}).into(),
        );
        cassette::save(&path, &cassette("a", vec![echo(1, "a", "a")])).unwrap();
        write(&path, &cassette("b", vec![reordered]), None).unwrap();
        assert!(load(&path).changes().is_empty());
    }

    #[test]
    fn labels_name_what_the_request_names() {
        assert_eq!(echo(1, "a", "a").label(), "tools/call echo");
        assert_eq!(
            request(1, "resources/read", json!({"uri": "demo://readme"})).label(),
            "resources/read demo://readme"
        );
        assert_eq!(
            request(1, "prompts/get", json!({"name": "greet"})).label(),
            "prompts/get greet"
        );
        assert_eq!(request(1, "tools/list", json!({})).label(), "tools/list");
    }

    #[test]
    fn accept_all_makes_the_accepted_equal_the_pending() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, _, pending) = pair(tmp.path());
        assert_eq!(load(&path).accept_all().unwrap(), 3);
        assert_eq!(cassette::load(&path).unwrap(), pending);
        assert!(!with_suffix(&path).exists());
    }

    #[test]
    fn apply_partial_takes_exactly_the_accepted_interactions() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, accepted, pending) = pair(tmp.path());
        assert_eq!(load(&path).apply(&[2]).unwrap(), 1);
        let result = cassette::load(&path).unwrap();
        assert_eq!(result.interactions[0], accepted.interactions[0]);
        assert_eq!(result.interactions[2], pending.interactions[2]);
        assert_eq!(result.interactions[3], accepted.interactions[3]);
        // The header describes what is there: the old handshake.
        assert_eq!(result.protocol, accepted.protocol);
        assert_eq!(result.server, accepted.server);
        assert_eq!(result.recorded_at, pending.recorded_at);
        assert!(!with_suffix(&path).exists());
    }

    #[test]
    fn apply_recomputes_protocol_and_server_from_the_handshake() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, accepted, pending) = pair(tmp.path());
        load(&path).apply(&[0]).unwrap();
        let result = cassette::load(&path).unwrap();
        assert_eq!(result.protocol.version.as_deref(), Some("2025-11-25"));
        assert_eq!(result.protocol, pending.protocol);
        assert_eq!(result.server, pending.server);
        assert_eq!(result.transport, accepted.transport);
        assert_eq!(result.interactions[1..], accepted.interactions[1..]);
    }

    #[test]
    fn apply_keeps_the_accepted_header_where_describe_finds_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("c.json");
        let mut accepted = cassette("a", vec![echo(1, "a", "a")]);
        accepted.protocol = ProtocolInfo {
            era: Era::Legacy,
            version: Some("2025-06-18".into()),
        };
        accepted.rules.strategy = crate::cassette::Strategy::Sequential;
        cassette::save(&path, &accepted).unwrap();
        write(&path, &cassette("b", vec![echo(1, "a", "A")]), None).unwrap();
        load(&path).accept_all().unwrap();
        let result = cassette::load(&path).unwrap();
        assert_eq!(result.protocol, accepted.protocol);
        assert_eq!(result.rules, accepted.rules);
        assert_eq!(result.interactions[0], echo(1, "a", "A"));
    }

    #[test]
    fn apply_nothing_is_reject() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, _, _) = pair(tmp.path());
        let before = fs::read(&path).unwrap();
        assert_eq!(load(&path).apply(&[]).unwrap(), 0);
        assert_eq!(fs::read(&path).unwrap(), before);
        assert!(!with_suffix(&path).exists());
    }

    #[test]
    fn apply_ignores_unchanged_indices_and_refuses_unknown_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, _, _) = pair(tmp.path());
        let before = fs::read(&path).unwrap();
        // Interaction 1 did not change: accepting it accepts nothing.
        assert_eq!(load(&path).apply(&[1]).unwrap(), 0);
        assert_eq!(fs::read(&path).unwrap(), before);

        let (path, _, _) = pair(tmp.path());
        let error = load(&path).apply(&[9]).unwrap_err();
        assert!(error.to_string().contains("no interaction 9"), "{error}");
        assert_eq!(fs::read(&path).unwrap(), before);
        assert!(with_suffix(&path).exists());
    }

    #[test]
    fn accepted_only_interactions_are_dropped_only_when_accepted() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("c.json");
        let accepted = cassette("a", vec![echo(1, "a", "a"), echo(2, "b", "b")]);
        cassette::save(&path, &accepted).unwrap();
        write(&path, &cassette("b", vec![echo(1, "a", "A")]), None).unwrap();
        load(&path).apply(&[0]).unwrap();
        let result = cassette::load(&path).unwrap();
        assert_eq!(result.interactions, [echo(1, "a", "A"), echo(2, "b", "b")]);

        write(&path, &cassette("b", vec![echo(1, "a", "A")]), None).unwrap();
        load(&path).apply(&[1]).unwrap();
        let result = cassette::load(&path).unwrap();
        assert_eq!(result.interactions, [echo(1, "a", "A")]);
    }

    #[test]
    fn pending_only_interactions_are_appended_when_accepted() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("c.json");
        cassette::save(&path, &cassette("a", vec![echo(1, "a", "a")])).unwrap();
        let live = vec![echo(1, "a", "a"), echo(2, "b", "b"), echo(3, "c", "c")];
        write(&path, &cassette("b", live.clone()), None).unwrap();
        load(&path).apply(&[2]).unwrap();
        let result = cassette::load(&path).unwrap();
        assert_eq!(result.interactions, [live[0].clone(), live[2].clone()]);
    }

    #[test]
    fn apply_keeping_leaves_only_the_kept_changes_pending() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, accepted, pending) = pair(tmp.path());
        // Accept the handshake, reject echo b, skip echo c.
        assert_eq!(load(&path).apply_keeping(&[0], &[3]).unwrap(), 1);
        let result = cassette::load(&path).unwrap();
        assert_eq!(result.interactions[0], pending.interactions[0]);
        assert_eq!(result.interactions[1..], accepted.interactions[1..]);
        let left = load(&path);
        let changes: Vec<usize> = left.changes().iter().map(|c| c.index).collect();
        assert_eq!(changes, [3]);
        assert_eq!(left.pending.interactions[3], pending.interactions[3]);
        assert_eq!(left.pending.recorded_at, pending.recorded_at);
    }

    #[test]
    fn apply_keeping_everything_touches_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, _, _) = pair(tmp.path());
        let (before, pending_before) = (
            fs::read(&path).unwrap(),
            fs::read(with_suffix(&path)).unwrap(),
        );
        assert_eq!(load(&path).apply_keeping(&[], &[0, 2, 3]).unwrap(), 0);
        assert_eq!(fs::read(&path).unwrap(), before);
        assert_eq!(fs::read(with_suffix(&path)).unwrap(), pending_before);
    }

    #[test]
    fn reject_leaves_the_accepted_cassette_byte_identical() {
        let tmp = tempfile::tempdir().unwrap();
        let (path, _, _) = pair(tmp.path());
        // Not the canonical layout, to show nothing rewrites it.
        let text = fs::read_to_string(&path).unwrap().replace("  ", "\t");
        fs::write(&path, &text).unwrap();
        load(&path).reject().unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
        assert!(!with_suffix(&path).exists());
    }

    #[test]
    fn find_searches_directories_skipping_build_output_and_hidden_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let accepted = cassette("a", vec![echo(1, "a", "a")]);
        let live = cassette("b", vec![echo(1, "a", "A")]);
        for dir in [
            "",
            "tests/deep",
            "target/debug",
            ".git",
            "node_modules/x",
            ".hidden",
        ] {
            let path = root.join(dir).join("c.json");
            cassette::save(&path, &accepted).unwrap();
            write(&path, &live, None).unwrap();
        }
        // A cassette-shaped `.new` with no accepted cassette: skipped.
        write(&root.join("tests/orphan.json"), &live, None).unwrap();
        // Another tool's pending file, and a cassette with nothing pending.
        fs::write(root.join("tests/x.snap.new"), "---\nsnapshot\n").unwrap();
        fs::write(root.join("tests/x.snap"), "---\nsnapshot\n").unwrap();
        cassette::save(&root.join("tests/quiet.json"), &accepted).unwrap();

        let found = find(&[root.to_path_buf()], None).unwrap();
        let paths: Vec<&Path> = found.iter().map(|p| p.accepted_path.as_path()).collect();
        assert_eq!(paths, [root.join("c.json"), root.join("tests/deep/c.json")]);
        assert_eq!(found[1].pending_path, root.join("tests/deep/c.json.new"));

        // Files: the accepted cassette or its `.new`; no duplicates.
        let found = find(
            &[
                root.join("tests/deep/c.json"),
                root.join("tests/deep/c.json.new"),
                root.join("tests/quiet.json"),
            ],
            None,
        )
        .unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].accepted_path, root.join("tests/deep/c.json"));

        // A hidden directory named explicitly is searched.
        let found = find(&[root.join(".hidden")], None).unwrap();
        assert_eq!(found.len(), 1);

        assert!(find(&[root.join("missing.json")], None).is_err());
    }

    #[test]
    fn find_with_a_pending_dir_searches_it_instead() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let accepted = cassette("a", vec![echo(1, "a", "a")]);
        let live = cassette("b", vec![echo(1, "a", "A")]);
        let pending_dir = root.join("pending");
        for name in ["one/c.json", "two/c.json"] {
            let path = root.join(name);
            cassette::save(&path, &accepted).unwrap();
            write(&path, &live, Some(&pending_dir)).unwrap();
        }
        // Beside the cassette does not count when a pending dir is given.
        write(&root.join("one/c.json"), &live, None).unwrap();

        let found = find(&[root.to_path_buf()], Some(&pending_dir)).unwrap();
        assert_eq!(found.len(), 2);
        for pending in &found {
            assert!(pending.pending_path.starts_with(&pending_dir));
            assert!(pending.accepted_path.is_file());
            assert_eq!(
                pending_path(&pending.accepted_path, Some(&pending_dir)),
                pending.pending_path
            );
        }
        let found = find(&[root.join("two")], Some(&pending_dir)).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].accepted_path.ends_with("two/c.json"));
        let found = find(&[root.join("one/c.json")], Some(&pending_dir)).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].pending_path.starts_with(&pending_dir));
    }
}
