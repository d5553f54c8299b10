//! The server processes of one test.
//!
//! Agent frameworks start a stdio server more than once in one test (a
//! probe, then the session; a process per tool call), one after another or
//! at the same time, always with the same command line. A test-runner
//! integration hands them `run --scope DIR`, a folder it makes for the
//! test, and every process that starts joins the scope there:
//!
//! - the first to join decides for all of them whether the test records or
//!   replays (so the second process of a recording test records too, even
//!   though the first one's cassette is there by then), and the time the
//!   recording is stamped with;
//! - each gets its ordinal, in the order they started, which is the
//!   `process` a recording files its interactions under;
//! - replaying processes claim recorded processes there, so no two live
//!   processes play the same recording;
//! - each writes its report there, so a test sees every process's outcome.
//!
//! Everything is one small JSON file, read and written under an exclusive
//! lock on a file beside it, so processes of any number coordinate without
//! a server, and a process killed at any point leaves it consistent.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use super::error::CassetteError;

/// Whether the processes of a scope record or replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScopeAction {
    /// Record, every process into the one cassette.
    Record,
    /// Replay, each process from the recorded process it claims.
    Replay,
}

/// A test's scope folder, for one cassette.
#[derive(Debug, Clone)]
pub struct Scope {
    dir: PathBuf,
    cassette: PathBuf,
}

/// What joining a scope gave a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its place in the order the scope's processes started (0 first).
    pub ordinal: u32,
    /// What every process of the scope does.
    pub action: ScopeAction,
    /// The time the scope's recording is stamped with: the same for every
    /// process, so their interactions end up in one cassette.
    pub recorded_at: String,
}

/// One process that joined, as the scope file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Joined {
    /// Its ordinal.
    pub ordinal: u32,
    /// Its process id.
    pub pid: u32,
}

/// The scope file.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    cassette: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    action: Option<ScopeAction>,
    #[serde(default)]
    recorded_at: String,
    #[serde(default)]
    joined: Vec<Joined>,
    /// Recorded process → the ordinal of the live process playing it.
    #[serde(default)]
    claims: BTreeMap<u32, u32>,
}

impl Scope {
    /// The scope in `dir` (made if missing) for `cassette`. A folder that
    /// already serves another cassette is refused: one scope, one cassette.
    pub fn open(dir: &Path, cassette: &Path) -> Result<Scope, CassetteError> {
        fs::create_dir_all(dir).map_err(|source| CassetteError::Write {
            path: dir.into(),
            source,
        })?;
        let scope = Scope {
            dir: dir.into(),
            cassette: absolute(cassette),
        };
        scope.with_state(|state| {
            if state.cassette.as_os_str().is_empty() {
                state.cassette = scope.cassette.clone();
            }
            if state.cassette != scope.cassette {
                return Err(CassetteError::Scope {
                    path: scope.file(),
                    message: format!(
                        "this scope belongs to {}, not {}: give each cassette a scope folder of its own",
                        state.cassette.display(),
                        scope.cassette.display()
                    ),
                });
            }
            Ok(())
        })??;
        Ok(scope)
    }

    /// The scope in `dir` that processes joined already, for the cassette
    /// its file names; [`CassetteError::Scope`] when none did.
    pub fn existing(dir: &Path) -> Result<Scope, CassetteError> {
        let scope = Scope {
            dir: dir.into(),
            cassette: PathBuf::new(),
        };
        if !scope.file().exists() {
            return Err(CassetteError::Scope {
                path: scope.file(),
                message: "not a scope: no server process joined it".into(),
            });
        }
        let cassette = scope.with_state(|state| state.cassette.clone())?;
        Ok(Scope { cassette, ..scope })
    }

    /// The cassette the scope's processes share.
    pub fn cassette(&self) -> &Path {
        &self.cassette
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Joins this process: its ordinal, and what the scope does, which the
    /// first process to join decides with `decide`.
    pub fn join(&self, decide: impl FnOnce() -> ScopeAction) -> Result<Member, CassetteError> {
        self.with_state(|state| {
            let action = *state.action.get_or_insert_with(decide);
            if state.recorded_at.is_empty() {
                state.recorded_at = super::now_rfc3339();
            }
            let ordinal = state.joined.len() as u32;
            state.joined.push(Joined {
                ordinal,
                pid: std::process::id(),
            });
            Member {
                ordinal,
                action,
                recorded_at: state.recorded_at.clone(),
            }
        })
    }

    /// Claims recorded process `recorded` for live process `ordinal`:
    /// whether it is now `ordinal`'s (it was free, or `ordinal`'s already).
    pub fn claim(&self, ordinal: u32, recorded: u32) -> Result<bool, CassetteError> {
        self.with_state(|state| {
            let owner = *state.claims.entry(recorded).or_insert(ordinal);
            owner == ordinal
        })
    }

    /// The recorded processes live processes other than `ordinal` claimed.
    pub fn claimed_by_others(&self, ordinal: u32) -> Result<Vec<u32>, CassetteError> {
        self.with_state(|state| {
            (state.claims.iter())
                .filter(|&(_, &owner)| owner != ordinal)
                .map(|(&recorded, _)| recorded)
                .collect()
        })
    }

    /// Every process that joined, in order.
    pub fn joined(&self) -> Result<Vec<Joined>, CassetteError> {
        self.with_state(|state| state.joined.clone())
    }

    /// What the scope does, once its first process decided.
    pub fn action(&self) -> Result<Option<ScopeAction>, CassetteError> {
        self.with_state(|state| state.action)
    }

    /// Runs `f` while holding the scope's lock: recorders of one scope
    /// write the cassette one at a time.
    pub fn locked<R>(&self, f: impl FnOnce() -> R) -> Result<R, CassetteError> {
        let lock = self.lock()?;
        let result = f();
        drop(lock);
        Ok(result)
    }

    fn file(&self) -> PathBuf {
        self.dir.join("scope.json")
    }

    /// The lock file, locked exclusively (released when dropped, or when
    /// the process dies).
    fn lock(&self) -> Result<Flock<File>, CassetteError> {
        let path = self.dir.join("scope.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| CassetteError::Write {
                path: path.clone(),
                source,
            })?;
        Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, errno)| CassetteError::Write {
            path,
            source: errno.into(),
        })
    }

    /// Reads the scope file under the lock, lets `f` change it, and writes
    /// it back atomically.
    fn with_state<R>(&self, f: impl FnOnce(&mut State) -> R) -> Result<R, CassetteError> {
        let _lock = self.lock()?;
        let path = self.file();
        let mut state = match fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice::<State>(&bytes).map_err(|e| CassetteError::Invalid {
                    path: path.clone(),
                    line: e.line(),
                    column: e.column(),
                    pointer: String::new(),
                    message: format!(
                        "not a scope file mcpcassette wrote ({}); give the test an empty scope folder",
                        crate::json::plain_error(&e)
                    ),
                })?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => State::default(),
            Err(source) => return Err(CassetteError::Read { path, source }),
        };
        let result = f(&mut state);
        let text = serde_json::to_vec_pretty(&state).expect("serialisable");
        super::save::write_atomically(&path, &text)?;
        Ok(result)
    }
}

/// `path` made absolute against the working directory (left as it is if
/// that cannot be read), so the processes of a scope agree on a cassette
/// whatever folder each started in.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_process_decides_and_ordinals_follow_the_order_of_joining() {
        let dir = tempfile::tempdir().unwrap();
        let cassette = dir.path().join("c.json");
        let scope = Scope::open(&dir.path().join("scope"), &cassette).unwrap();
        let first = scope.join(|| ScopeAction::Record).unwrap();
        let again = Scope::open(&dir.path().join("scope"), &cassette).unwrap();
        let second = again.join(|| ScopeAction::Replay).unwrap();
        assert_eq!((first.ordinal, second.ordinal), (0, 1));
        assert_eq!(second.action, ScopeAction::Record);
        assert_eq!(first.recorded_at, second.recorded_at);
        assert_eq!(scope.joined().unwrap().len(), 2);
    }

    #[test]
    fn a_recorded_process_is_claimed_once() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope::open(dir.path(), &dir.path().join("c.json")).unwrap();
        assert!(scope.claim(0, 3).unwrap());
        assert!(scope.claim(0, 3).unwrap(), "its own claim holds");
        assert!(!scope.claim(1, 3).unwrap());
        assert!(scope.claim(1, 4).unwrap());
        assert_eq!(scope.claimed_by_others(1).unwrap(), vec![3]);
    }

    #[test]
    fn an_existing_scope_names_its_cassette_and_an_empty_folder_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let cassette = dir.path().join("c.json");
        Scope::open(dir.path(), &cassette).unwrap();
        assert_eq!(Scope::existing(dir.path()).unwrap().cassette(), cassette);
        let empty = tempfile::tempdir().unwrap();
        let error = Scope::existing(empty.path()).unwrap_err().to_string();
        assert!(error.contains("not a scope"), "{error}");
    }

    #[test]
    fn one_scope_serves_one_cassette() {
        let dir = tempfile::tempdir().unwrap();
        Scope::open(dir.path(), &dir.path().join("a.json")).unwrap();
        let error = Scope::open(dir.path(), &dir.path().join("b.json")).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("a.json") && text.contains("b.json"), "{text}");
    }

    #[test]
    fn processes_joining_at_once_get_every_ordinal_once() {
        let dir = tempfile::tempdir().unwrap();
        let cassette = dir.path().join("c.json");
        let ordinals: Vec<u32> = std::thread::scope(|threads| {
            let joins: Vec<_> = (0..8)
                .map(|_| {
                    threads.spawn(|| {
                        let scope = Scope::open(dir.path(), &cassette).unwrap();
                        scope.join(|| ScopeAction::Record).unwrap().ordinal
                    })
                })
                .collect();
            joins.into_iter().map(|j| j.join().unwrap()).collect()
        });
        let mut sorted = ordinals.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }
}
