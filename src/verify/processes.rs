//! The server processes of a stdio recording. A test whose client started
//! its server more than once (agent frameworks do) recorded each process
//! into one cassette, tagged `process` (docs/processes.md): each began with
//! its own handshake, numbered its requests from its own start and had a
//! server of its own. `verify` drives each in a live process of its own,
//! one after another in process order, so what a server keeps outside its
//! process (a file of notes) carries over as it did, and what it keeps in
//! it does not.

use crate::cassette::Cassette;

/// One recorded process: its number, its interactions as a cassette of
/// their own (the first process also keeps the opening), and where each
/// of them is in the recording.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Process {
    /// Its number (`Interaction::process`).
    pub number: u32,
    /// Its interactions, in the order the recording has them.
    pub cassette: Cassette,
    /// The recording's index of each of them.
    pub indices: Vec<usize>,
}

/// `recorded` cut into its processes, in process order; one, the whole
/// recording, when it was recorded from one process (every recording made
/// before processes were).
pub(super) fn split(recorded: &Cassette) -> Vec<Process> {
    let mut numbers: Vec<u32> = recorded.interactions.iter().map(|i| i.process).collect();
    numbers.sort_unstable();
    numbers.dedup();
    if numbers.len() <= 1 {
        return vec![Process {
            number: numbers.first().copied().unwrap_or(0),
            cassette: recorded.clone(),
            indices: (0..recorded.interactions.len()).collect(),
        }];
    }
    numbers
        .into_iter()
        .enumerate()
        .map(|(n, number)| {
            // A process's interactions wherever they are (a hand-edited
            // file may interleave them), in their order: what replay plays.
            let indices: Vec<usize> = (recorded.interactions.iter().enumerate())
                .filter(|(_, i)| i.process == number)
                .map(|(index, _)| index)
                .collect();
            let mut cassette = recorded.header();
            cassette.interactions = (indices.iter())
                .map(|&index| recorded.interactions[index].clone())
                .collect();
            if n > 0 {
                cassette.opening.clear();
            }
            Process {
                number,
                cassette,
                indices,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A stdio recording whose interactions belong to `processes`, in
    /// that order: each an `initialize` of its own when its process
    /// starts, else a `ping`.
    fn recording(processes: &[u32]) -> Cassette {
        let mut seen = Vec::new();
        let interactions: Vec<serde_json::Value> = processes
            .iter()
            .map(|&process| {
                let method = if seen.contains(&process) {
                    "ping"
                } else {
                    seen.push(process);
                    "initialize"
                };
                json!({
                    "request": {"jsonrpc": "2.0", "id": 0, "method": method},
                    "response": {"jsonrpc": "2.0", "id": 0, "result": {}},
                    "process": process,
                })
            })
            .collect();
        serde_json::from_value(json!({
            "format_version": crate::cassette::FORMAT_VERSION,
            "recorded_at": "2026-01-01T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": "legacy"},
            "opening": [{"notification": {"jsonrpc": "2.0", "method": "notifications/message"}}],
            "interactions": interactions,
        }))
        .unwrap()
    }

    #[test]
    fn one_process_is_left_whole() {
        let recorded = recording(&[0, 0, 0]);
        let processes = split(&recorded);
        assert_eq!(processes.len(), 1);
        assert_eq!(processes[0].cassette, recorded);
        assert_eq!(processes[0].indices, [0, 1, 2]);
    }

    #[test]
    fn each_process_is_a_cassette_of_its_own_in_process_order() {
        let recorded = recording(&[0, 0, 1, 2, 2]);
        let processes = split(&recorded);
        let numbers: Vec<u32> = processes.iter().map(|p| p.number).collect();
        assert_eq!(numbers, [0, 1, 2]);
        for process in &processes {
            assert_eq!(process.cassette.interactions[0].method(), "initialize");
            assert_eq!(process.cassette.transport, recorded.transport);
        }
        assert_eq!(processes[0].indices, [0, 1]);
        assert_eq!(processes[2].indices, [3, 4]);
        assert_eq!(processes[0].cassette.opening.len(), 1, "the first keeps it");
        assert!(processes[1].cassette.opening.is_empty());
    }

    #[test]
    fn interleaved_processes_are_gathered_each_in_its_own_order() {
        let recorded = recording(&[1, 0, 1, 0]);
        let processes = split(&recorded);
        assert_eq!(processes[0].number, 0);
        assert_eq!(processes[0].indices, [1, 3]);
        assert_eq!(processes[1].indices, [0, 2]);
        let methods: Vec<&str> = (processes[1].cassette.interactions.iter())
            .map(|i| i.method())
            .collect();
        assert_eq!(methods, ["initialize", "ping"]);
    }
}
