//! Concurrent calls over stdio: a notification tied to no request, sent
//! while several calls are in flight, is replayed where the recording saw
//! it relative to the answers, every run (a client that calls tools
//! concurrently, like pydantic-ai's `TestModel`, sees one sequence).

use mcpcassette::cassette;
use serde_json::{Value, json};

use crate::support::peer::Peer;
use crate::support::{mcpcassette, replay};

/// A stdio server for `sh -c`: answers `initialize`, then reads the
/// initialized notification and two calls, and only then sends a log
/// (no progress token: nothing ties it to either call), the answer to the
/// first call and the answer to the second, in that order.
const CONCURRENT_SERVER: &str = r#"
read line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"concurrent","version":"1"}}}'
read line
read line
read line
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"from a"}}'
printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"a"}]}}'
printf '%s\n' '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"b"}]}}'
while read line; do :; done
"#;

/// The handshake, then calls `a` (id 2) and `b` (id 3) back to back;
/// what the client sees next, as `log`, `a` or `b`.
fn call_both(peer: &mut Peer) -> Vec<String> {
    peer.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}));
    assert_eq!(peer.recv()["id"], 1);
    peer.notify("notifications/initialized", json!({}));
    for (id, name) in [(2, "a"), (3, "b")] {
        peer.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": {}}}));
    }
    (0..3).map(|_| seen(&peer.recv())).collect()
}

fn seen(message: &Value) -> String {
    match (message["method"].as_str(), message["id"].as_i64()) {
        (Some("notifications/message"), _) => "log".into(),
        (None, Some(2)) => "a".into(),
        (None, Some(3)) => "b".into(),
        _ => format!("unexpected {message}"),
    }
}

#[test]
fn concurrent_calls_replay_in_the_recorded_order_around_an_untied_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("concurrent.json");
    let mut record = mcpcassette();
    record
        .args(["record", "--cassette"])
        .arg(&path)
        .args(["--", "sh", "-c", CONCURRENT_SERVER]);
    let mut peer = Peer::spawn(record);
    let recorded = call_both(&mut peer);
    assert_eq!(recorded, ["log", "a", "b"]);
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");

    let cassette = cassette::load(&path).unwrap();
    let during = |name: &str| {
        cassette
            .interactions
            .iter()
            .find(|i| i.request().is_some_and(|r| r["params"]["name"] == name))
            .map(|i| i.during.len())
    };
    assert_eq!(
        (during("a"), during("b")),
        (Some(1), Some(0)),
        "the log is filed under the call answered next"
    );

    for run in 0..20 {
        let mut peer = Peer::spawn(replay(&path));
        let replayed = call_both(&mut peer);
        assert_eq!(replayed, recorded, "run {run}");
        let (status, stderr) = peer.finish();
        assert!(status.success(), "run {run}: {stderr}");
    }
}
