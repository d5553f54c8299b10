//! Replaying a cassette that holds several server processes: a test whose
//! client started its stdio server more than once recorded each process
//! (`Interaction::process`), and on replay each live process plays one of
//! them, so a later process sees what the real server gave the later
//! process, state that outlived the first one included.
//!
//! Which recorded process a live one plays is decided by what it asks
//! (docs/processes.md):
//!
//! - while every recorded process still free would answer alike (a
//!   handshake, a `tools/list` every process sent), the earliest of them
//!   answers and nothing is decided;
//! - at the first request they would answer differently, or that only
//!   some of them recorded, the live process claims the earliest one free
//!   that answers it, in the scope every process of the test shares, so
//!   no two live processes play one recording; the one claimed takes the
//!   messages answered before, silently, and plays on;
//! - a live process that ends before that claims the earliest one it was
//!   still alike with (a `server/discover` probe in a process of its own
//!   plays the recorded probe).
//!
//! So processes started one after another play the recorded ones in
//! order, and processes that run at the same time are told apart by what
//! they ask.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::task::JoinSet;

use super::engine::lookup::Lookup;
use super::engine::{Engine, ReplayConfig};
use crate::cassette::{Cassette, HttpSituation, Scope};
use crate::jsonrpc::{self, Kind};
use crate::server::{Handled, Handler, HttpProfile, Sink};

/// A live server process of a test, answered by the recorded processes of
/// a cassette.
#[derive(Debug)]
pub struct ProcessReplay {
    recorded: Vec<Recorded>,
    /// The test's scope and this process's ordinal in it, when there is
    /// one; without, this process is the only one and claims for itself.
    scope: Option<(Scope, u32)>,
    choice: Mutex<Choice>,
}

/// One recorded process: its number and an engine over its interactions.
#[derive(Debug)]
struct Recorded {
    process: u32,
    engine: Arc<Engine>,
}

/// Where the live process stands.
#[derive(Debug, Default)]
struct Choice {
    /// The recorded process it plays, once claimed (an index into
    /// `recorded`).
    claimed: Option<usize>,
    /// Recorded processes that could not answer what it asked.
    ruled_out: BTreeSet<usize>,
    /// What it sent before the claim, for the engine claimed to take.
    history: Vec<Value>,
    /// How much of `history` each engine has taken.
    taken: Vec<usize>,
    /// The engine that answered last before the claim.
    lead: Option<usize>,
}

/// The recorded processes of `cassette`, in order; one when it was recorded
/// from a single process (or before processes were recorded).
pub fn recorded_processes(cassette: &Cassette) -> Vec<u32> {
    let processes: BTreeSet<u32> = cassette.interactions.iter().map(|i| i.process).collect();
    match processes.is_empty() {
        true => vec![0],
        false => processes.into_iter().collect(),
    }
}

impl ProcessReplay {
    /// A replay of `cassette`'s recorded processes for one live process:
    /// `scope` is the test's, with this process's ordinal there.
    pub fn new(cassette: &Cassette, config: &ReplayConfig, scope: Option<(Scope, u32)>) -> Self {
        let processes = recorded_processes(cassette);
        let count = processes.len();
        let live = match &scope {
            Some((_, ordinal)) => format!("live server process {ordinal} of the test"),
            None => "the live server process".to_owned(),
        };
        let recorded: Vec<Recorded> = processes
            .into_iter()
            .map(|process| {
                let mut config = config.clone();
                config.process = Some(format!(
                    "{live}, playing recorded process {process} of {count}"
                ));
                let mut part = cassette.header();
                part.interactions = (cassette.interactions.iter())
                    .filter(|i| i.process == process)
                    .cloned()
                    .collect();
                if process != 0 {
                    part.opening.clear();
                }
                Recorded {
                    process,
                    engine: Engine::with_config(part, config),
                }
            })
            .collect();
        let choice = Choice {
            taken: vec![0; recorded.len()],
            ..Choice::default()
        };
        ProcessReplay {
            recorded,
            scope,
            choice: Mutex::new(choice),
        }
    }

    /// How many processes the cassette recorded.
    pub fn recorded_count(&self) -> usize {
        self.recorded.len()
    }

    /// The recorded process this live one plays (claimed, or the one that
    /// answered it so far), and its engine, whose summary is this
    /// process's replay.
    pub fn playing(&self) -> (u32, Arc<Engine>) {
        let choice = self.choice();
        let at = choice.claimed.or(choice.lead).unwrap_or(0);
        let recorded = &self.recorded[at];
        (recorded.process, Arc::clone(&recorded.engine))
    }

    /// Whether a recorded process was claimed for this live one.
    pub fn claimed(&self) -> Option<u32> {
        self.choice().claimed.map(|at| self.recorded[at].process)
    }

    /// The live process has ended: one that never had to choose claims
    /// the earliest recorded process it was alike with, so the next live
    /// process plays the one after it.
    pub fn end(&self) {
        let mut choice = self.choice();
        if choice.claimed.is_some() || choice.history.is_empty() {
            return;
        }
        let candidates = self.candidates(&choice);
        for at in candidates {
            if self.claim(at) {
                choice.claimed = Some(at);
                return;
            }
        }
    }

    fn choice(&self) -> MutexGuard<'_, Choice> {
        self.choice
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The recorded processes this live one may still play, earliest first.
    fn candidates(&self, choice: &Choice) -> Vec<usize> {
        let others: BTreeSet<u32> = match &self.scope {
            Some((scope, ordinal)) => match scope.claimed_by_others(*ordinal) {
                Ok(claimed) => claimed.into_iter().collect(),
                Err(e) => {
                    let e = crate::error_chain::chain(&e);
                    tracing::warn!("{e}; replaying as if no other process had claimed any");
                    BTreeSet::new()
                }
            },
            None => BTreeSet::new(),
        };
        (0..self.recorded.len())
            .filter(|at| !choice.ruled_out.contains(at))
            .filter(|&at| !others.contains(&self.recorded[at].process))
            .collect()
    }

    /// Claims recorded process `at` in the scope; whether it is ours.
    fn claim(&self, at: usize) -> bool {
        let Some((scope, ordinal)) = &self.scope else {
            return true;
        };
        match scope.claim(*ordinal, self.recorded[at].process) {
            Ok(ours) => ours,
            Err(e) => {
                let process = self.recorded[at].process;
                let e = crate::error_chain::chain(&e);
                tracing::warn!("{e}; playing recorded process {process} unclaimed");
                true
            }
        }
    }

    /// Brings engine `at` up to what the live process sent so far.
    fn catch_up(&self, choice: &mut Choice, at: usize) {
        let engine = &self.recorded[at].engine;
        for message in &choice.history[choice.taken[at]..] {
            engine.take_silently(message);
        }
        choice.taken[at] = choice.history.len();
    }

    /// Which engine handles `message`, before any claim: a request that
    /// tells the candidates apart claims one; anything else goes to the
    /// earliest candidate, and into the history.
    fn engine_for(&self, message: &Value) -> Arc<Engine> {
        let mut choice = self.choice();
        if let Some(at) = choice.claimed {
            return Arc::clone(&self.recorded[at].engine);
        }
        let request = matches!(jsonrpc::classify(message), Ok(Kind::Request));
        let mut candidates = self.candidates(&choice);
        if request {
            let mut answers = Vec::with_capacity(candidates.len());
            for &at in &candidates {
                self.catch_up(&mut choice, at);
                answers.push(self.recorded[at].engine.lookup(message));
            }
            let answering: Vec<(usize, Lookup)> = candidates
                .iter()
                .zip(answers)
                .filter_map(|(&at, answer)| answer.map(|a| (at, a)))
                .collect();
            if !answering.is_empty() {
                for &at in &candidates {
                    if !answering.iter().any(|(a, _)| *a == at) {
                        choice.ruled_out.insert(at);
                    }
                }
                // Claimed when it tells recordings apart, or when only one
                // is left: a process running beside it must not share it.
                let alike = answering.iter().all(|(_, a)| *a == answering[0].1);
                if !alike || answering.len() < candidates.len() || answering.len() == 1 {
                    for &(at, _) in &answering {
                        if self.claim(at) {
                            choice.claimed = Some(at);
                            return Arc::clone(&self.recorded[at].engine);
                        }
                    }
                }
                candidates = answering.into_iter().map(|(at, _)| at).collect();
            }
        }
        // Nothing to decide yet (or nothing answers: the earliest
        // candidate reports the miss).
        let lead = candidates.first().copied().or(choice.lead).unwrap_or(0);
        self.catch_up(&mut choice, lead);
        if !matches!(jsonrpc::classify(message), Ok(Kind::Response)) {
            choice.history.push(message.clone());
            choice.taken[lead] = choice.history.len();
        }
        choice.lead = Some(lead);
        Arc::clone(&self.recorded[lead].engine)
    }
}

impl Handler for ProcessReplay {
    fn handle(
        self: Arc<Self>,
        message: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: &HttpSituation,
    ) -> Handled {
        let engine = self.engine_for(&message);
        engine.handle(message, sink, tasks, situation)
    }

    fn stand_in(&self, request: &Value) {
        self.engine_for(request).stand_in(request);
    }

    fn open(self: Arc<Self>, sink: &Sink, tasks: &mut JoinSet<()>) {
        // What the first recorded process sent before its client spoke.
        Arc::clone(&self.recorded[0].engine).open(sink, tasks);
    }

    fn fork(&self) -> Arc<dyn Handler> {
        // Over HTTP a session is a fork; a cassette of processes is
        // replayed over stdio, where no fork is asked for.
        self.recorded[0].engine.fork() as Arc<dyn Handler>
    }

    fn client_gone(&self) {
        for recorded in &self.recorded {
            recorded.engine.client_gone();
        }
    }

    fn http_profile(&self) -> HttpProfile {
        self.recorded[0].engine.http_profile()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::Interaction;
    use serde_json::json;

    /// A cassette of `processes`, each a list of (tool name, answer text).
    fn cassette(processes: &[&[(&str, &str)]]) -> Cassette {
        let mut interactions = Vec::new();
        for (process, calls) in processes.iter().enumerate() {
            let mut id = 0;
            let mut push = |request: Value, result: Value| {
                id += 1;
                let mut request = request;
                request["id"] = json!(id);
                let text = json!({"request": request, "response": {"jsonrpc": "2.0", "id": id, "result": result}, "process": process});
                interactions.push(serde_json::from_value::<Interaction>(text).unwrap());
            };
            push(
                json!({"jsonrpc": "2.0", "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
                json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}),
            );
            for (name, answer) in *calls {
                push(
                    json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": name, "arguments": {}}}),
                    json!({"content": [{"type": "text", "text": answer}]}),
                );
            }
        }
        let text = json!({
            "format_version": 1,
            "recorded_at": "2026-12-07T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": "legacy", "version": "2025-06-18"},
            "interactions": interactions,
        });
        crate::cassette::parse(std::path::Path::new("c.json"), &text.to_string()).unwrap()
    }

    fn initialize() -> Value {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    }

    fn call(name: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": {}}})
    }

    fn replay(cassette: &Cassette, scope: &Scope, ordinal: u32) -> ProcessReplay {
        let config = ReplayConfig::new(std::path::Path::new("c.json"));
        ProcessReplay::new(cassette, &config, Some((scope.clone(), ordinal)))
    }

    #[test]
    fn live_processes_claim_recorded_ones_by_what_they_ask() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope::open(dir.path(), &dir.path().join("c.json")).unwrap();
        // A process listing tools, then one per call (langchain's way).
        let cassette = cassette(&[&[], &[("add", "3")], &[("mul", "6")]]);
        // The two calls run at the same time, in the other order.
        let mul = replay(&cassette, &scope, 1);
        let add = replay(&cassette, &scope, 2);
        for live in [&mul, &add] {
            live.engine_for(&initialize());
        }
        assert_eq!(mul.claimed(), None, "a handshake decides nothing");
        mul.engine_for(&call("mul"));
        add.engine_for(&call("add"));
        assert_eq!((mul.claimed(), add.claimed()), (Some(2), Some(1)));
    }

    #[test]
    fn alike_processes_are_played_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope::open(dir.path(), &dir.path().join("c.json")).unwrap();
        // State that outlives a process: the same call, other answers.
        let cassette = cassette(&[&[("read", "empty")], &[("read", "one entity")]]);
        let first = replay(&cassette, &scope, 0);
        first.engine_for(&initialize());
        first.engine_for(&call("read"));
        let second = replay(&cassette, &scope, 1);
        second.engine_for(&initialize());
        second.engine_for(&call("read"));
        assert_eq!((first.claimed(), second.claimed()), (Some(0), Some(1)));
    }

    #[tokio::test]
    async fn the_process_claimed_after_a_handshake_answers_in_the_clients_era() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope::open(dir.path(), &dir.path().join("c.json")).unwrap();
        // A 2026-07-28 recording of two processes, told apart by their call.
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
        let mut interactions = Vec::new();
        for (process, tool) in [(0, "add"), (1, "mul")] {
            for (method, params, result) in [
                (
                    "server/discover",
                    json!({"_meta": meta}),
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "resultType": "complete"}),
                ),
                (
                    "tools/call",
                    json!({"name": tool, "arguments": {}, "_meta": meta}),
                    json!({"content": [{"type": "text", "text": tool}], "resultType": "complete"}),
                ),
            ] {
                interactions.push(json!({"request": {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, "response": {"jsonrpc": "2.0", "id": 1, "result": result}, "process": process}));
            }
        }
        let text = json!({"format_version": 1, "recorded_at": "2026-12-07T00:00:00Z",
            "transport": {"kind": "stdio", "command": ["server"]},
            "protocol": {"era": "modern", "version": "2026-07-28"},
            "interactions": interactions});
        let cassette =
            crate::cassette::parse(std::path::Path::new("c.json"), &text.to_string()).unwrap();
        let live = Arc::new(replay(&cassette, &scope, 0));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let sink = Sink::single(tx);
        let mut tasks = JoinSet::new();
        // A legacy client: its handshake is answered by the earliest
        // recording, its call by the one it claims.
        let handled =
            Arc::clone(&live).handle(initialize(), &sink, &mut tasks, &HttpSituation::default());
        assert!(matches!(handled, Handled::Answered(_)));
        Arc::clone(&live).handle(call("mul"), &sink, &mut tasks, &HttpSituation::default());
        while tasks.join_next().await.is_some() {}
        assert_eq!(live.claimed(), Some(1));
        let mut answers = Vec::new();
        while let Ok(bytes) = rx.try_recv() {
            answers.push(serde_json::from_slice::<Value>(&bytes).unwrap());
        }
        let answer = answers
            .iter()
            .find(|a| a["id"] == 1)
            .expect("the call's answer");
        assert_eq!(answer["result"]["content"][0]["text"], "mul");
        assert!(
            answer["result"].get("resultType").is_none(),
            "a legacy client gets a legacy result: {answer}"
        );
    }

    #[test]
    fn a_process_that_only_probed_claims_at_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let scope = Scope::open(dir.path(), &dir.path().join("c.json")).unwrap();
        let cassette = cassette(&[&[], &[("add", "3")]]);
        let probe = replay(&cassette, &scope, 0);
        probe.engine_for(&initialize());
        probe.end();
        assert_eq!(probe.claimed(), Some(0));
        let session = replay(&cassette, &scope, 1);
        session.engine_for(&initialize());
        assert_eq!(session.playing().0, 1, "the probe's recording is taken");
    }
}
