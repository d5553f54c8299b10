//! Tests whose client starts the server more than once (agent frameworks
//! do: a probe then the session, a process per tool call, several at
//! once), through `run --scope`: every process is recorded into one
//! cassette and replayed in order; recorders never corrupt each other; a
//! killed recorder loses no completed interaction.
//!
//! The server is examples/notes_server.rs, whose notes outlive its process.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcpcassette::cassette;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::{Value, json};

use crate::support::notes::{call, finish_scope, notes_server, run_scoped, started};
use crate::support::peer::Peer;
use crate::support::{demo_server_path, mcpcassette};

/// A test's server processes, as a test-runner integration starts them:
/// the same `run --scope` command line every time.
struct Scope {
    dir: tempfile::TempDir,
    cassette: PathBuf,
    notes: PathBuf,
    server: PathBuf,
    number: usize,
}

impl Scope {
    /// A fresh folder holding the cassette and the server's notes.
    fn new() -> Scope {
        let dir = tempfile::tempdir().unwrap();
        Scope {
            cassette: dir.path().join("cassettes/test.json"),
            notes: dir.path().join("notes.txt"),
            server: notes_server(),
            dir,
            number: 0,
        }
    }

    /// The next test run: a new scope folder, fresh notes.
    fn next_run(&mut self) -> PathBuf {
        self.number += 1;
        let _ = std::fs::remove_file(&self.notes);
        self.dir.path().join(format!("scope-{}", self.number))
    }

    /// The server gone, as in CI: its command cannot start.
    fn without_server(&mut self) {
        self.server = self.dir.path().join("no-such-server");
    }

    /// `run --scope SCOPE` in front of the notes server.
    fn command(&self, scope: &Path) -> Command {
        run_scoped(&self.cassette, scope, &self.server, &self.notes)
    }

    /// `mcpcassette finish --scope SCOPE`, its JSON.
    fn finish(&self, scope: &Path) -> Value {
        finish_scope(scope)
    }

    fn recorded(&self) -> Value {
        serde_json::from_slice(&std::fs::read(&self.cassette).unwrap()).unwrap()
    }
}

/// One process, one call: langchain-mcp-adapters' way.
fn one_call(scope: &Scope, dir: &Path, tool: &str, arguments: Value) -> String {
    let mut peer = started(scope.command(dir));
    let text = call(&mut peer, tool, arguments);
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    text
}

fn processes_of(cassette: &Value) -> Vec<u64> {
    let mut seen: Vec<u64> = cassette["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.get("process").and_then(Value::as_u64).unwrap_or(0))
        .collect();
    seen.dedup();
    seen
}

#[test]
fn processes_one_after_another_are_recorded_then_replayed_in_order_with_their_state() {
    let mut scope = Scope::new();
    let session = |scope: &Scope, dir: &Path| -> Vec<String> {
        vec![
            one_call(scope, dir, "recall", json!({})),
            one_call(scope, dir, "remember", json!({"note": "alpha"})),
            one_call(scope, dir, "recall", json!({})),
            one_call(scope, dir, "remember", json!({"note": "beta"})),
            one_call(scope, dir, "recall", json!({})),
        ]
    };
    let first = scope.next_run();
    let live = session(&scope, &first);
    assert_eq!(
        live,
        [
            "nothing yet",
            "remembered 1 note(s)",
            "alpha",
            "remembered 2 note(s)",
            "alpha\nbeta"
        ]
    );
    assert_eq!(scope.finish(&first)["action"], "record");
    assert_eq!(processes_of(&scope.recorded()), [0, 1, 2, 3, 4]);

    // The same recall, three answers: each process plays its own.
    scope.without_server();
    let second = scope.next_run();
    assert_eq!(session(&scope, &second), live);
    let finished = scope.finish(&second);
    assert_eq!(finished["action"], "replay");
    for report in finished["processes"].as_array().unwrap() {
        assert_eq!(report["exit_code"], 0, "{report}");
    }
}

#[test]
fn processes_at_the_same_time_are_told_apart_by_what_they_ask() {
    let mut scope = Scope::new();
    let tags = ["a", "b", "c"];
    let at_once = |scope: &Scope, dir: &Path, order: &[usize]| -> Vec<String> {
        // Every process started and through its handshake before any asks.
        let mut peers: Vec<Peer> = tags.iter().map(|_| started(scope.command(dir))).collect();
        let mut answers = vec![String::new(); tags.len()];
        for &i in order {
            let tag = tags[i];
            answers[i] = call(&mut peers[i], "slow", json!({"tag": tag, "ms": 10}));
        }
        for peer in peers {
            let (status, stderr) = peer.finish();
            assert!(status.success(), "{stderr}");
        }
        answers
    };
    let first = scope.next_run();
    let live = at_once(&scope, &first, &[0, 1, 2]);
    assert_eq!(live, ["a done", "b done", "c done"]);
    scope.finish(&first);
    assert_eq!(processes_of(&scope.recorded()), [0, 1, 2]);

    scope.without_server();
    let second = scope.next_run();
    // They ask in another order than they were recorded in.
    assert_eq!(at_once(&scope, &second, &[2, 0, 1]), live);
}

#[test]
fn a_second_recorder_of_a_cassette_is_refused_and_never_takes_the_live_journal() {
    let scope = Scope::new();
    let plain = |scope: &Scope| {
        let mut command = mcpcassette();
        command
            .args(["record", "--cassette"])
            .arg(&scope.cassette)
            .arg("--")
            .arg(&scope.server)
            .arg(&scope.notes);
        command
    };
    let mut first = started(plain(&scope));
    assert_eq!(
        call(&mut first, "remember", json!({"note": "one"})),
        "remembered 1 note(s)"
    );

    let second = plain(&scope).output().unwrap();
    assert_eq!(second.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("is being recorded by process")
            && stderr.contains(&first.pid().to_string()),
        "{stderr}"
    );
    let replay = mcpcassette()
        .arg("replay")
        .arg(&scope.cassette)
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&replay.stderr).contains("is being recorded by process"),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );

    // The first never noticed.
    assert_eq!(
        call(&mut first, "remember", json!({"note": "two"})),
        "remembered 2 note(s)"
    );
    let (status, stderr) = first.finish();
    assert!(status.success(), "{stderr}");
    let recorded = scope.recorded();
    let methods: Vec<&str> = (recorded["interactions"].as_array().unwrap())
        .iter()
        .map(|i| {
            (i.get("request").or(i.get("notification")).unwrap()["method"])
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/call",
            "tools/call"
        ]
    );
}

#[test]
fn a_killed_process_of_a_scope_is_part_of_the_cassette_once_the_scope_is_finished() {
    let mut scope = Scope::new();
    let first = scope.next_run();
    let mut killed = started(scope.command(&first));
    assert_eq!(
        call(&mut killed, "remember", json!({"note": "kept"})),
        "remembered 1 note(s)"
    );
    kill(Pid::from_raw(killed.pid() as i32), Signal::SIGKILL).unwrap();
    let _ = killed.wait();
    assert_eq!(
        one_call(&scope, &first, "recall", json!({})),
        "kept",
        "a later process records beside the dead one's journal"
    );
    let finished = scope.finish(&first);
    let reports = finished["processes"].as_array().unwrap();
    assert_eq!(reports.len(), 2, "{finished}");
    assert_eq!(reports[0]["killed"], true, "{finished}");
    // The later process recovered the journal as it started.
    assert!(cassette::journals(&scope.cassette).is_empty());
    let dir = scope.cassette.parent().unwrap();
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["test.json"], "only the cassette is left");
    assert_eq!(processes_of(&scope.recorded()), [0, 1]);

    scope.without_server();
    let second = scope.next_run();
    let mut again = started(scope.command(&second));
    assert_eq!(
        call(&mut again, "remember", json!({"note": "kept"})),
        "remembered 1 note(s)"
    );
    drop(again);
    assert_eq!(one_call(&scope, &second, "recall", json!({})), "kept");
}

#[test]
fn a_miss_names_the_live_process_and_the_recorded_ones() {
    let mut scope = Scope::new();
    let first = scope.next_run();
    one_call(&scope, &first, "remember", json!({"note": "alpha"}));
    one_call(&scope, &first, "recall", json!({}));
    scope.finish(&first);
    scope.without_server();
    let second = scope.next_run();
    let mut peer = started(scope.command(&second));
    assert_eq!(
        call(&mut peer, "remember", json!({"note": "changed"})),
        "error -32000"
    );
    let (_, stderr) = peer.finish();
    assert!(
        stderr.contains("live server process 0") && stderr.contains("of 2"),
        "{stderr}"
    );
}

/// Torture: processes of one scope recording at once, some killed at
/// random points; every call a client saw answered is in the cassette.
#[test]
fn recorders_of_one_scope_killed_at_random_points_lose_no_completed_interaction() {
    let mut lcg = 0x5eed_u64;
    let mut below = |n: u64| {
        lcg = lcg
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (lcg >> 33) % n
    };
    for round in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let cassette = dir.path().join("c.json");
        let scope = dir.path().join("scope");
        let command = || {
            let mut command = mcpcassette();
            command
                .args(["run", "--mode", "once", "--cassette"])
                .arg(&cassette)
                .arg("--scope")
                .arg(&scope)
                .arg("--")
                .arg(demo_server_path());
            command
        };
        let mut peers: Vec<Peer> = (0..4)
            .map(|_| {
                let mut peer = Peer::spawn(command());
                crate::support::initialize_demo(&mut peer);
                peer
            })
            .collect();
        let mut answered: Vec<String> = Vec::new();
        let calls: Vec<u64> = (0..4).map(|_| 1 + below(6)).collect();
        let doomed: Vec<bool> = (0..4).map(|_| below(2) == 0).collect();
        for step in 0..6 {
            for (i, peer) in peers.iter_mut().enumerate() {
                if step < calls[i] {
                    let message = format!("r{round}-p{i}-c{step}");
                    let answer = peer.request(
                        "tools/call",
                        json!({"name": "echo", "arguments": {"message": message}}),
                    );
                    assert_eq!(answer.text(), format!("echo: {message}"));
                    answered.push(message);
                }
            }
        }
        for (peer, doomed) in peers.into_iter().zip(&doomed) {
            if *doomed {
                kill(Pid::from_raw(peer.pid() as i32), Signal::SIGKILL).unwrap();
                let _ = peer.wait();
            } else {
                let (status, stderr) = peer.finish();
                assert!(status.success(), "{stderr}");
            }
        }
        let output = mcpcassette()
            .args(["finish", "--scope"])
            .arg(&scope)
            .output()
            .unwrap();
        assert!(output.status.success());
        let text = std::fs::read_to_string(&cassette).unwrap();
        for message in &answered {
            assert!(
                text.contains(&format!("\"message\": \"{message}\"")),
                "round {round}: {message} lost (killed: {doomed:?})"
            );
        }
        let check = mcpcassette().arg("check").arg(&cassette).output().unwrap();
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stdout)
        );
        assert!(
            cassette::journals(&cassette).is_empty(),
            "round {round}: a journal is left"
        );
    }
}

#[test]
fn new_episodes_of_processes_at_the_same_time_are_all_appended() {
    let mut scope = Scope::new();
    let first = scope.next_run();
    one_call(&scope, &first, "recall", json!({}));
    scope.finish(&first);
    let second = scope.next_run();
    let episodes = |dir: &Path| {
        let mut command = scope.command(dir);
        let args: Vec<std::ffi::OsString> = command
            .get_args()
            .map(|a| match a.to_str() {
                Some("once") => "new-episodes".into(),
                _ => a.to_owned(),
            })
            .collect();
        command = Command::new(command.get_program());
        command
            .args(args)
            .env("MCPCASSETTE_LOG", "info")
            .env_remove("CI");
        command
    };
    let mut peers: Vec<Peer> = (0..2).map(|_| started(episodes(&second))).collect();
    for (i, peer) in peers.iter_mut().enumerate() {
        let tag = format!("new-{i}");
        assert_eq!(
            call(peer, "slow", json!({"tag": tag, "ms": 1})),
            format!("{tag} done")
        );
    }
    for peer in peers {
        let (status, stderr) = peer.finish();
        assert!(status.success(), "{stderr}");
    }
    let text = std::fs::read_to_string(&scope.cassette).unwrap();
    for tag in ["new-0", "new-1"] {
        assert!(
            text.contains(&format!("\"{tag} done\"")),
            "{tag} lost:\n{text}"
        );
    }
}
