//! `mcpcassette replay`: matching, id and token rewriting, handshakes,
//! unmatched and malformed requests, exit codes, journal recovery.

use std::path::{Path, PathBuf};

use mcpcassette::cassette::{self, Builder, Direction, Journal, Transport};
use serde_json::{Value, json};

use crate::support::peer::Peer;
use crate::support::{replay, root};

fn shipped(era: &str) -> PathBuf {
    root().join("cassettes").join(format!("demo-{era}.json"))
}

/// A cassette built from a scripted exchange, as the recorder would build it.
fn cassette_from(dir: &Path, messages: &[(Direction, Value)]) -> PathBuf {
    let mut builder = Builder::new(
        "2026-01-01T00:00:00Z".into(),
        Transport::Stdio {
            command: vec!["server".into()],
            cwd: None,
        },
    );
    for (direction, message) in messages {
        builder.observe(*direction, message.clone());
    }
    let path = dir.join("crafted.json");
    cassette::save(&path, &builder.finish()).unwrap();
    path
}

fn c2s(v: Value) -> (Direction, Value) {
    (Direction::ClientToServer, v)
}

fn s2c(v: Value) -> (Direction, Value) {
    (Direction::ServerToClient, v)
}

fn legacy_handshake(peer: &mut Peer) -> Value {
    let init = peer.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "another-client", "version": "9.9"}}),
    );
    peer.notify("notifications/initialized", json!({}));
    init.response
}

#[test]
fn initialize_is_answered_whatever_the_client_says_with_the_recorded_version() {
    let mut peer = Peer::spawn(replay(&shipped("legacy")));
    let response = legacy_handshake(&mut peer);
    assert_eq!(response["id"], 1);
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(response["result"]["serverInfo"]["name"], "mcpcassette-demo");
    let (status, _) = peer.finish();
    assert!(status.success());
}

#[test]
fn ids_key_order_and_meta_do_not_affect_matching() {
    let mut peer = Peer::spawn(replay(&shipped("legacy")));
    legacy_handshake(&mut peer);
    peer.send(&json!({"jsonrpc": "2.0", "id": "custom-id", "method": "tools/call",
        "params": {"_meta": {"progressToken": "other"}, "arguments": {"message": "hello"}, "name": "echo"}}));
    let exchange = peer.until_response(&json!("custom-id"));
    assert_eq!(exchange.text(), "echo: hello");
    assert_eq!(exchange.response["id"], "custom-id");
}

#[test]
fn progress_tokens_are_rewritten_to_the_live_token_or_dropped() {
    let mut peer = Peer::spawn(replay(&shipped("legacy")));
    legacy_handshake(&mut peer);
    let with_token = peer.request(
        "tools/call",
        json!({"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": 99}}),
    );
    let progress = with_token.with_method("notifications/progress");
    assert_eq!(progress.len(), 3);
    assert!(
        progress.iter().all(|p| p["params"]["progressToken"] == 99),
        "{progress:?}"
    );
    assert_eq!(
        progress[2]["params"]["progress"], 3,
        "recorded order is kept"
    );
    assert_eq!(with_token.text(), "counted 3 steps");
}

#[test]
fn progress_is_not_sent_to_a_request_that_asked_for_none() {
    let dir = tempfile::tempdir().unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "count", "_meta": {"progressToken": "p"}}});
    let path = cassette_from(
        dir.path(),
        &[
            c2s(request),
            s2c(
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": 1}}),
            ),
            s2c(
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}),
            ),
            s2c(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}})),
        ],
    );
    let mut peer = Peer::spawn(replay(&path));
    let exchange = peer.request("tools/call", json!({"name": "count"}));
    assert_eq!(exchange.before.len(), 1, "{:?}", exchange.before);
    assert_eq!(exchange.before[0]["method"], "notifications/message");
}

#[test]
fn server_requests_get_fresh_ids_and_wait_for_the_client() {
    let mut peer = Peer::spawn(replay(&shipped("legacy")))
        .respond_with(|_| json!({"role": "assistant", "content": {"type": "text", "text": "ignored"}, "model": "m"}));
    legacy_handshake(&mut peer);
    let first = peer.request(
        "tools/call",
        json!({"name": "summarize", "arguments": {"text": "cassettes make MCP tests fast"}}),
    );
    let confirm = peer.request(
        "tools/call",
        json!({"name": "confirm", "arguments": {"action": "deploy"}}),
    );
    let sampling = first.with_method("sampling/createMessage");
    let elicit = confirm.with_method("elicitation/create");
    assert_eq!(sampling.len(), 1);
    assert_ne!(
        sampling[0]["id"], elicit[0]["id"],
        "each server request gets its own id"
    );
    // The recorded answer is replayed, whatever the client answered.
    assert_eq!(first.text(), "summary: a short summary");
    assert_eq!(peer.answered.len(), 2);
}

#[test]
fn unmatched_request_names_the_closest_recording_and_fails_the_run() {
    let mut peer = Peer::spawn(replay(&shipped("legacy")));
    legacy_handshake(&mut peer);
    let miss = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "goodbye"}}),
    );
    let error = &miss.response["error"];
    assert_eq!(error["code"], mcpcassette::replay::NO_MATCH);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("no recorded interaction matches tools/call"),
        "{message}"
    );
    assert!(
        message.contains(
            r#"closest recorded: tools/call {"arguments":{"message":"hello"},"name":"echo"}"#
        ),
        "{message}"
    );
    assert_eq!(
        error["data"]["closest"]["params"]["arguments"]["message"],
        "hello"
    );
    // Replay goes on after a miss.
    assert_eq!(
        peer.request("ping", json!({})).response["result"],
        json!({})
    );
    let (status, stderr) = peer.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--- recorded") && stderr.contains("+++ live"),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"-    "message": "hello""#)
            && stderr.contains(r#"+    "message": "goodbye""#),
        "{stderr}"
    );
}

#[test]
fn a_request_recorded_twice_is_answered_in_order_then_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let call = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "next"}});
    let answer = |id: i64, text: &str| json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
    let path = cassette_from(
        dir.path(),
        &[
            c2s(call(1)),
            s2c(answer(1, "first")),
            c2s(call(2)),
            s2c(answer(2, "second")),
        ],
    );
    let mut peer = Peer::spawn(replay(&path));
    assert_eq!(
        peer.request("tools/call", json!({"name": "next"})).text(),
        "first"
    );
    assert_eq!(
        peer.request("tools/call", json!({"name": "next"})).text(),
        "second"
    );
    let third = peer.request("tools/call", json!({"name": "next"}));
    assert_eq!(
        third.response["error"]["code"],
        mcpcassette::replay::EXHAUSTED
    );
    let message = third.response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("recorded 2 time(s) and has been answered 2 time(s) already"),
        "{message}"
    );
    let (status, _) = peer.finish();
    assert_eq!(status.code(), Some(1));
}

#[test]
fn malformed_input_gets_json_rpc_errors_and_replay_goes_on() {
    let mut peer = Peer::spawn(replay(&shipped("legacy")));
    peer.send_raw(b"this is not json\n");
    let parse = peer.recv();
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(parse["id"], Value::Null);
    peer.send(&json!({"jsonrpc": "2.0", "id": 5, "method": 7}));
    let invalid = peer.recv();
    assert_eq!(invalid["error"]["code"], -32600);
    assert_eq!(invalid["id"], 5);
    peer.send(&json!({"jsonrpc": "1.0", "id": 6, "method": "ping"}));
    assert_eq!(peer.recv()["error"]["code"], -32600);
    peer.send_raw(b"[]\n");
    assert_eq!(peer.recv()["error"]["code"], -32600);
    assert_eq!(
        peer.request("ping", json!({})).response["result"],
        json!({})
    );
    let (status, stderr) = peer.finish();
    assert!(
        status.success(),
        "malformed input is not an unmatched request: {stderr}"
    );
}

#[test]
fn batches_get_one_array_of_responses() {
    let mut peer = Peer::spawn(replay(&shipped("legacy")));
    legacy_handshake(&mut peer);
    peer.send(&json!([
        {"jsonrpc": "2.0", "id": 10, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 1}},
        {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello"}}}
    ]));
    let batch = peer.recv();
    let responses = batch
        .as_array()
        .unwrap_or_else(|| panic!("expected an array, got {batch}"));
    let mut ids: Vec<i64> = responses
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    ids.sort();
    assert_eq!(ids, [10, 11]);
}

#[test]
fn ping_is_always_answered_and_discover_gets_a_legacy_servers_answer() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_from(dir.path(), &[]);
    let mut peer = Peer::spawn(replay(&path));
    assert_eq!(
        peer.request("ping", json!({})).response["result"],
        json!({})
    );
    let discover = peer.request(
        "server/discover",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    );
    assert_eq!(discover.response["error"]["code"], -32601);
}

#[test]
fn modern_replay_answers_discover_and_refuses_unknown_versions() {
    let mut peer = Peer::spawn(replay(&shipped("modern")));
    let meta = |version: &str| json!({"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}});
    let discover = peer.request("server/discover", json!({"_meta": meta("2026-07-28")}));
    assert!(
        discover.result()["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    let old = peer.request("tools/list", json!({"_meta": meta("2099-01-01")}));
    assert_eq!(old.response["error"]["code"], -32022);
    assert!(
        old.response["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
}

/// Across eras, a recorded server error reaches the client in its era's
/// code, and the errors replay makes itself keep theirs: replay's
/// out-of-order error is -32002 like a legacy "resource not found", and is
/// not turned into 2026-07-28's -32602.
#[test]
fn across_eras_recorded_errors_are_translated_and_replays_own_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let missing = "demo://missing";
    let path = cassette_from(
        dir.path(),
        &[
            c2s(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}),
            ),
            s2c(
                json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"resources": {}, "tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}),
            ),
            c2s(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            c2s(
                json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": missing}}),
            ),
            s2c(
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "Resource not found", "data": {"uri": missing}}}),
            ),
            c2s(
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}}),
            ),
            s2c(
                json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "echo"}]}}),
            ),
        ],
    );
    let mut command = replay(&path);
    command.args(["--strategy", "strict"]);
    let mut peer = Peer::spawn(command);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    let discover = peer.request("server/discover", json!({"_meta": meta}));
    assert_eq!(discover.result()["resultType"], "complete");
    let early = peer.request("tools/call", json!({"name": "echo", "_meta": meta}));
    assert_eq!(
        early.response["error"]["code"],
        mcpcassette::replay::OUT_OF_ORDER,
        "{}",
        early.response
    );
    // Not a code either era gives a meaning: -32002 was legacy's
    // "resource not found".
    assert_eq!(mcpcassette::replay::OUT_OF_ORDER, -32007);
    let read = peer.request("resources/read", json!({"uri": missing, "_meta": meta}));
    assert_eq!(
        read.response["error"],
        json!({"code": -32602, "message": "Resource not found", "data": {"uri": missing}}),
        "2026-07-28 codes resource not found -32602"
    );
    let echo = peer.request("tools/call", json!({"name": "echo", "_meta": meta}));
    assert_eq!(echo.text(), "echo");
    peer.finish();
}

#[test]
fn unprompted_server_notifications_follow_the_client_message_they_followed() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_from(
        dir.path(),
        &[
            c2s(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            s2c(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        ],
    );
    let mut peer = Peer::spawn(replay(&path));
    peer.notify("notifications/initialized", json!({}));
    // `notify` sends params {} while the recording had none: both are "no params".
    assert_eq!(peer.recv()["method"], "notifications/tools/list_changed");
}

#[test]
fn replay_recovers_a_journal_left_by_a_killed_recorder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("interrupted.json");
    let transport = Transport::Stdio {
        command: vec!["server".into()],
        cwd: None,
    };
    let mut journal = Journal::create(
        &path,
        "2026-01-01T00:00:00Z",
        &transport,
        &Default::default(),
    )
    .unwrap();
    journal
        .append(
            Direction::ClientToServer,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}),
        )
        .unwrap();
    journal
        .append(
            Direction::ServerToClient,
            &json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
        )
        .unwrap();
    journal
        .append(
            Direction::ClientToServer,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "b"}}),
        )
        .unwrap();
    drop(journal);
    let mut peer = Peer::spawn(replay(&path));
    assert_eq!(
        peer.request("tools/call", json!({"name": "a"})).result()["content"],
        json!([])
    );
    let (status, stderr) = peer.finish();
    assert!(status.success());
    assert!(stderr.contains("recovered 1 interaction(s)"), "{stderr}");
    assert!(!cassette::journal_path(&path).exists());
    let recovered = cassette::load(&path).unwrap();
    assert_eq!(
        recovered.interactions.len(),
        2,
        "the unanswered request is kept, without a response"
    );
}

#[test]
fn unreadable_cassettes_exit_2_naming_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let output = replay(&missing).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("missing.json"));

    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        "{\n  \"format_version\": 1,\n  \"interactions\": [}\n",
    )
    .unwrap();
    let output = replay(&broken).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("broken.json:3:"), "{stderr}");

    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"format_version": 7}"#).unwrap();
    let output = replay(&newer).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("format version 7 is newer"));
}

#[test]
fn server_requests_after_a_notification_and_before_anything_are_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_from(
        dir.path(),
        &[
            s2c(json!({"jsonrpc": "2.0", "id": 7, "method": "roots/list"})),
            c2s(json!({"jsonrpc": "2.0", "id": 7, "result": {"roots": []}})),
            c2s(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            s2c(json!({"jsonrpc": "2.0", "id": 8, "method": "roots/list"})),
            c2s(json!({"jsonrpc": "2.0", "id": 8, "result": {"roots": []}})),
            s2c(
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "roots updated"}}),
            ),
        ],
    );
    let mut peer = Peer::spawn(replay(&path));
    let opening = peer.recv();
    assert_eq!(opening["method"], "roots/list");
    peer.send(&json!({"jsonrpc": "2.0", "id": opening["id"], "result": {"roots": []}}));
    peer.notify("notifications/initialized", json!({}));
    let request = peer.recv();
    assert_eq!(request["method"], "roots/list", "{request}");
    assert_ne!(request["id"], opening["id"]);
    peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}}));
    assert_eq!(
        peer.recv()["params"]["data"],
        "roots updated",
        "the log waits for the answer"
    );
}

#[test]
fn a_hundred_requests_in_flight_answered_out_of_order_replay_correctly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("concurrent.json");
    let sleeps: Vec<u64> = (0..100).map(|i| (i * 37) % 100).collect();
    let send_all = |peer: &mut Peer, order: &mut dyn Iterator<Item = usize>| {
        for i in order {
            let params = json!({"name": "sleep", "arguments": {"ms": sleeps[i]}, "_meta": {"progressToken": i}});
            peer.send(&json!({"jsonrpc": "2.0", "id": format!("req-{i}"), "method": "tools/call", "params": params}));
        }
    };
    let collect = |peer: &mut Peer| -> Vec<(String, String)> {
        (0..100)
            .map(|_| {
                let response = peer.recv();
                let text = response["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                (response["id"].as_str().unwrap().to_owned(), text)
            })
            .collect()
    };

    let mut recorder = Peer::spawn(crate::support::record_demo(&path));
    legacy_handshake(&mut recorder);
    send_all(&mut recorder, &mut (0..100));
    let live = collect(&mut recorder);
    let arrival: Vec<&str> = live.iter().map(|(id, _)| id.as_str()).collect();
    assert_ne!(
        arrival,
        (0..100).map(|i| format!("req-{i}")).collect::<Vec<_>>(),
        "the server answered out of order"
    );
    recorder.finish();

    let mut replayed = Peer::spawn(replay(&path));
    legacy_handshake(&mut replayed);
    send_all(&mut replayed, &mut (0..100).rev());
    let answers = collect(&mut replayed);
    for (id, text) in &answers {
        let i: usize = id.trim_start_matches("req-").parse().unwrap();
        assert_eq!(text, &format!("slept {} ms", sleeps[i]), "{id}");
    }
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn a_cancelled_request_is_never_answered_and_replay_goes_on() {
    let mut peer = Peer::spawn(replay(&shipped("legacy")));
    legacy_handshake(&mut peer);
    peer.send(&json!({"jsonrpc": "2.0", "id": 50, "method": "tools/call",
        "params": {"name": "summarize", "arguments": {"text": "cassettes make MCP tests fast"}}}));
    let sampling = peer.recv();
    assert_eq!(sampling["method"], "sampling/createMessage");
    peer.notify(
        "notifications/cancelled",
        json!({"requestId": 50, "reason": "user gave up"}),
    );
    // Answering the server request after cancelling changes nothing.
    peer.send(&json!({"jsonrpc": "2.0", "id": sampling["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}}));
    let next = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hello"}}),
    );
    assert!(
        next.before.is_empty(),
        "nothing for the cancelled request: {:?}",
        next.before
    );
    assert_eq!(next.text(), "echo: hello");
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
}

/// The client declines an elicitation it accepted when recording: replay
/// warns with a diff and reports it; under `--strategy strict` the call
/// fails with -32004 and replay exits 1. A same answer is silent.
#[test]
fn a_client_answering_a_replayed_elicitation_otherwise_is_warned_or_failed() {
    let declines = |request: &Value| match request["method"].as_str() {
        Some("elicitation/create") => json!({"action": "decline"}),
        // As recorded.
        Some("sampling/createMessage") => json!({"role": "assistant",
            "content": {"type": "text", "text": "a short summary"},
            "model": "demo-model", "stopReason": "endTurn"}),
        _ => crate::support::peer::default_responder(request),
    };
    let confirm = json!({"name": "confirm", "arguments": {"action": "deploy"}});
    let dir = tempfile::tempdir().unwrap();
    for strategy in ["keyed", "strict"] {
        let report = dir.path().join(format!("{strategy}.json"));
        let mut command = crate::support::mcpcassette();
        command
            .current_dir(root())
            .args([
                "replay",
                "cassettes/demo-legacy.json",
                "--strategy",
                strategy,
                "--report",
            ])
            .arg(&report);
        let mut peer = Peer::spawn(command).respond_with(declines);
        crate::support::initialize_demo(&mut peer);
        if strategy == "strict" {
            // The recorded order: everything before the confirm call.
            let recorded = cassette::load(&root().join("cassettes/demo-legacy.json")).unwrap();
            for interaction in &recorded.interactions[2..10] {
                let request = interaction.request().unwrap();
                peer.request(interaction.method(), request["params"].clone());
            }
        }
        let answer = peer.request("tools/call", confirm.clone());
        let (status, stderr) = peer.finish();
        assert!(
            stderr.contains("the client answered `elicitation/create` (interaction #10) differently from the recording")
                && stderr.contains("-    \"action\": \"accept\",")
                && stderr.contains("+    \"action\": \"decline\""),
            "{strategy}: {stderr}"
        );
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        assert_eq!(
            json["answer_mismatches"].as_array().unwrap().len(),
            1,
            "{json:#}"
        );
        let mismatch = &json["answer_mismatches"][0];
        assert_eq!(mismatch["method"], "elicitation/create", "{json:#}");
        assert_eq!(mismatch["interaction"], 10);
        assert_eq!(mismatch["live"]["result"]["action"], "decline");
        if strategy == "strict" {
            assert_eq!(
                answer.response["error"]["code"], -32004,
                "{}",
                answer.response
            );
            assert_eq!(status.code(), Some(1), "{stderr}");
        } else {
            assert_eq!(answer.text(), "confirmed: deploy", "the recorded answer");
            assert!(status.success(), "{stderr}");
        }
    }

    // Answered as recorded: nothing to say.
    let mut command = crate::support::mcpcassette();
    command.current_dir(root()).args([
        "replay",
        "cassettes/demo-legacy.json",
        "--strategy",
        "keyed",
    ]);
    let mut peer = Peer::spawn(command);
    crate::support::initialize_demo(&mut peer);
    peer.request("tools/call", confirm);
    let (status, stderr) = peer.finish();
    assert!(status.success());
    assert!(
        !stderr.contains("differently from the recording"),
        "{stderr}"
    );
}
