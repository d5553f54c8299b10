//! Saving one server process of a recording that has several (see
//! [`super::Scope`]): the processes of one test record one after another
//! or at the same time, and each one that ends adds its interactions to
//! the cassette the others wrote.
//!
//! What makes processes one recording is their `recorded_at`: a scope
//! stamps every process with the time its first process joined. A process
//! whose stamp is the cassette's joins it, replacing what an earlier save
//! of the same process put there; any other replaces the cassette, as a
//! new recording does.

use std::io::Read;
use std::path::Path;

use super::builder::Finished;
use super::error::CassetteError;
use super::format::{Cassette, Interaction};
use super::{load, save};
use crate::protocol::Era;

/// How far into a cassette its `recorded_at` is looked for before the
/// whole file is read: `save` writes it second, on the second line.
const HEAD: usize = 4096;

impl Finished {
    /// Saves this recording as server process `process` of the recording
    /// at `path` (0 for a recording of one process). Whether it wrote
    /// anything: a process that recorded nothing leaves the file as it was.
    ///
    /// A new recording is streamed to the file one interaction at a time,
    /// in bounded memory; joining the processes already there reads the
    /// cassette whole (one test's recording).
    pub fn save_as_process(self, path: &Path, process: u32) -> Result<bool, CassetteError> {
        let (header, interactions) = self.into_parts();
        let mut tagged = interactions
            .map(move |read| {
                read.map(|mut interaction| {
                    interaction.process = process;
                    interaction
                })
            })
            .peekable();
        let nothing = tagged.peek().is_none() && header.opening.is_empty();
        if !same_recording(path, &header.recorded_at) {
            if nothing && path.exists() {
                return Ok(false);
            }
            save::save_streamed(path, &header, tagged)?;
            return Ok(true);
        }
        if nothing {
            return Ok(false);
        }
        let recorded: Vec<Interaction> =
            tagged
                .collect::<Result<_, _>>()
                .map_err(|source| CassetteError::Read {
                    path: path.into(),
                    source,
                })?;
        let mut cassette = load::load(path)?;
        join(&mut cassette, header, recorded, process);
        save::save(path, &cassette)?;
        Ok(true)
    }
}

/// Adds process `process` (its `header` and `recorded` interactions) to
/// `cassette`, in process order, replacing what the cassette held of it.
fn join(cassette: &mut Cassette, header: Cassette, recorded: Vec<Interaction>, process: u32) {
    cassette.interactions.retain(|i| i.process != process);
    cassette.interactions.extend(recorded);
    // Stable: each process keeps its own order.
    cassette.interactions.sort_by_key(|i| i.process);
    if cassette.protocol.era == Era::Unknown && header.protocol.era != Era::Unknown {
        cassette.protocol = header.protocol;
        cassette.server = header.server;
    }
    if process == 0 {
        cassette.opening = header.opening;
    } else if !header.opening.is_empty() {
        tracing::warn!(
            "server process {process} sent {} message(s) before its client's first; a cassette keeps only the first process's",
            header.opening.len()
        );
    }
}

/// Whether the cassette at `path` was stamped `recorded_at`, by another
/// process of the same recording.
fn same_recording(path: &Path, recorded_at: &str) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(HEAD);
    if file.take(HEAD as u64).read_to_end(&mut head).is_err() {
        return false;
    }
    let needle = format!("\"recorded_at\": {}", serde_json::json!(recorded_at));
    if String::from_utf8_lossy(&head).contains(&needle) {
        return true;
    }
    if head.len() < HEAD {
        return false;
    }
    // Hand-edited, its keys moved: read the stamp wherever it is.
    #[derive(serde::Deserialize)]
    struct Stamp {
        #[serde(default)]
        recorded_at: String,
    }
    std::fs::File::open(path)
        .ok()
        .and_then(|file| serde_json::from_reader::<_, Stamp>(std::io::BufReader::new(file)).ok())
        .is_some_and(|stamp| stamp.recorded_at == recorded_at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{Builder, Direction, Transport};
    use serde_json::json;

    fn recording(recorded_at: &str, tool: &str) -> Finished {
        let transport = Transport::Stdio {
            command: vec!["server".into()],
            cwd: None,
        };
        let mut builder = Builder::new(recorded_at.into(), transport);
        let request =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}});
        builder.observe(Direction::ClientToServer, request);
        builder.observe(
            Direction::ServerToClient,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
        );
        builder.finish_streamed()
    }

    fn tools(path: &Path) -> Vec<(u32, String)> {
        load::load(path)
            .unwrap()
            .interactions
            .iter()
            .map(|i| {
                let name = i.client.message()["params"]["name"].as_str().unwrap();
                (i.process, name.to_owned())
            })
            .collect()
    }

    #[test]
    fn processes_of_one_recording_join_in_process_order_whatever_order_they_end_in() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let stamp = "2026-12-07T10:00:00Z";
        assert!(recording(stamp, "b").save_as_process(&path, 2).unwrap());
        assert!(recording(stamp, "a").save_as_process(&path, 0).unwrap());
        assert!(recording(stamp, "c").save_as_process(&path, 1).unwrap());
        assert_eq!(
            tools(&path),
            [(0, "a".into()), (1, "c".into()), (2, "b".into())]
        );
        // A process saved again (recovered after a save) replaces itself.
        recording(stamp, "d").save_as_process(&path, 1).unwrap();
        assert_eq!(tools(&path)[1], (1, "d".into()));
        assert_eq!(tools(&path).len(), 3);
    }

    #[test]
    fn another_recording_replaces_the_cassette() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        recording("2026-12-07T10:00:00Z", "a")
            .save_as_process(&path, 0)
            .unwrap();
        recording("2026-12-07T10:00:00Z", "b")
            .save_as_process(&path, 1)
            .unwrap();
        recording("2026-12-07T11:00:00Z", "new")
            .save_as_process(&path, 0)
            .unwrap();
        assert_eq!(tools(&path), [(0, "new".into())]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("\"process\""), "{text}");
    }
}
