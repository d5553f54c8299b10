//! Version negotiation at the edges, over stdio, against the shipped
//! cassettes: what a client asks for and what it gets, in both eras and
//! across them.

use serde_json::{Value, json};

use crate::support::peer::Peer;
use crate::support::{mcpcassette, root};

const LEGACY: &str = "cassettes/demo-legacy.json";
const MODERN: &str = "cassettes/demo-modern.json";

fn replay(cassette: &str, extra: &[&str]) -> Peer {
    let mut command = mcpcassette();
    command.arg("replay").arg(root().join(cassette)).args(extra);
    Peer::spawn(command)
}

fn initialize(peer: &mut Peer, version: &str) -> Value {
    peer.request(
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    )
    .response
}

fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    })
}

/// A legacy client offering a newer or an older version than recorded gets
/// the recorded server's choice: the version its answers are valid for.
#[test]
fn a_legacy_client_gets_the_recorded_servers_version_whatever_it_offers() {
    for offered in ["2026-07-28", "2025-03-26", "2025-11-25"] {
        let mut peer = replay(LEGACY, &[]);
        let answer = initialize(&mut peer, offered);
        assert_eq!(
            answer["result"]["protocolVersion"], "2025-11-25",
            "{offered}: {answer}"
        );
        let (status, stderr) = peer.finish();
        assert_eq!(status.code(), Some(0), "{stderr}");
    }
}

/// A legacy client of a 2026-07-28 cassette gets the version it asked for
/// when the recorded server supports it, else the newest legacy one it
/// supports; the recorded answers then come without the modern fields.
#[test]
fn a_legacy_client_of_a_modern_cassette_negotiates_among_the_recorded_versions() {
    for (offered, granted) in [("2025-06-18", "2025-06-18"), ("2099-01-01", "2025-11-25")] {
        let mut peer = replay(MODERN, &[]);
        let answer = initialize(&mut peer, offered);
        assert_eq!(
            answer["result"]["protocolVersion"], granted,
            "{offered}: {answer}"
        );
        assert_eq!(answer["result"]["serverInfo"]["name"], "mcpcassette-demo");
        peer.notify("notifications/initialized", json!({}));
        let ping = peer.request("ping", json!({}));
        assert_eq!(ping.response["result"], json!({}));
        let list = peer.request("tools/list", json!({})).response;
        let result = &list["result"];
        assert!(result["tools"].is_array(), "{list}");
        for key in ["resultType", "ttlMs", "cacheScope"] {
            assert!(
                result.get(key).is_none(),
                "{key} in a legacy answer: {list}"
            );
        }
        let (status, stderr) = peer.finish();
        assert_eq!(status.code(), Some(0), "{stderr}");
        assert!(!stderr.contains("no recorded interaction"), "{stderr}");
    }
}

/// A modern client declaring a version the recorded server does not
/// support gets -32022 with the supported ones; one declaring 2026-07-28
/// gets the recorded caching hints, as recorded.
#[test]
fn a_modern_client_gets_unsupported_version_errors_and_the_recorded_caching_hints() {
    let mut peer = replay(MODERN, &[]);
    let wrong = peer
        .request("tools/list", json!({"_meta": meta("2099-01-01")}))
        .response;
    assert_eq!(wrong["error"]["code"], -32022, "{wrong}");
    assert!(
        wrong["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{wrong}"
    );
    let list = peer
        .request("tools/list", json!({"_meta": meta("2026-07-28")}))
        .response;
    assert_eq!(list["result"]["ttlMs"], 300000, "{list}");
    assert_eq!(list["result"]["cacheScope"], "public", "{list}");
    let _ = peer.finish();
}

/// A modern-first client probing a legacy cassette is answered in its own
/// era; with `--cross-era off` it gets what a legacy server says, -32601,
/// and falls back to `initialize`, which is answered as recorded.
#[test]
fn a_modern_first_probe_is_answered_or_refused_as_cross_era_says() {
    let mut peer = replay(LEGACY, &[]);
    let discover = peer
        .request("server/discover", json!({"_meta": meta("2026-07-28")}))
        .response;
    assert_eq!(discover["result"]["resultType"], "complete", "{discover}");
    let _ = peer.finish();

    let mut peer = replay(LEGACY, &["--cross-era", "off"]);
    let discover = peer
        .request("server/discover", json!({"_meta": meta("2026-07-28")}))
        .response;
    assert_eq!(discover["error"]["code"], -32601, "{discover}");
    let answer = initialize(&mut peer, "2025-11-25");
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    let _ = peer.finish();
}

/// Across eras, what one era has and the other has not: a legacy client's
/// `logging/setLevel` is accepted by a 2026-07-28 cassette (where each
/// request asks for its own logs), and so is its `resources/subscribe`
/// (which decides the `resources/updated` it gets); a modern client's
/// `subscriptions/listen` on a legacy cassette is acknowledged with what
/// the recorded capabilities allow, and stays open. (What the streams then
/// carry: `subscriptions.rs`.)
#[test]
fn features_of_one_era_alone_are_translated_across_eras() {
    let mut peer = replay(MODERN, &[]);
    let _ = initialize(&mut peer, "2025-11-25");
    let level = peer
        .request("logging/setLevel", json!({"level": "info"}))
        .response;
    assert_eq!(level["result"], json!({}), "{level}");
    let subscribe = peer
        .request("resources/subscribe", json!({"uri": "demo://readme"}))
        .response;
    assert_eq!(subscribe["result"], json!({}), "{subscribe}");
    let unsubscribe = peer
        .request("resources/unsubscribe", json!({"uri": "demo://readme"}))
        .response;
    assert_eq!(unsubscribe["result"], json!({}), "{unsubscribe}");
    let _ = peer.finish();

    let mut peer = replay(LEGACY, &[]);
    peer.send(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": {
            "_meta": meta("2026-07-28"),
            "notifications": {"toolsListChanged": true, "promptsListChanged": true},
        }}),
    );
    let ack = peer.recv();
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        9
    );
    let offered = ack["params"]["notifications"].clone();
    assert!(offered.is_object(), "{ack}");
    let ping = peer.request("ping", json!({})).response;
    assert!(
        ping.get("result").is_some(),
        "the stream stays open; the session goes on: {ping}"
    );
    let _ = peer.finish();
}

/// A modern-first client whose `server/discover` probe the recording
/// refused (as a legacy server does) falls back to `initialize`: from then
/// on it is a legacy client, answered as recorded (no `resultType`, server
/// requests as requests, log messages kept). fastmcp's client does this.
#[test]
fn a_client_that_falls_back_to_initialize_is_answered_in_the_legacy_era() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probed.json");
    let mut cassette: Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(LEGACY)).unwrap()).unwrap();
    let probe = json!({
        "request": {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta("2026-07-28")}},
        "response": {"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "Method not found"}},
    });
    cassette["interactions"]
        .as_array_mut()
        .unwrap()
        .insert(0, probe);
    std::fs::write(&path, serde_json::to_string_pretty(&cassette).unwrap()).unwrap();

    let mut command = mcpcassette();
    command.arg("replay").arg(&path);
    let mut peer = Peer::spawn(command);
    let probe = peer
        .request("server/discover", json!({"_meta": meta("2026-07-28")}))
        .response;
    assert_eq!(
        probe["error"]["code"], -32601,
        "the recorded refusal: {probe}"
    );
    let answer = initialize(&mut peer, "2025-11-25");
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    peer.notify("notifications/initialized", json!({}));
    let echo = peer
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "hello"}}),
        )
        .response;
    assert_eq!(
        echo["result"]["content"][0]["text"], "echo: hello",
        "{echo}"
    );
    assert!(echo["result"].get("resultType").is_none(), "{echo}");
    let _ = peer.finish();
}

/// A request that declares 2026-07-28 in `_meta` is a modern request
/// whatever else the session sent: after an `initialize` probe (as a
/// conformance suite sends one to a modern server), modern requests still
/// get modern answers.
#[test]
fn a_modern_request_gets_a_modern_answer_after_a_legacy_probe() {
    let mut peer = replay(MODERN, &[]);
    let _ = initialize(&mut peer, "2025-11-25");
    let list = peer
        .request("tools/list", json!({"_meta": meta("2026-07-28")}))
        .response;
    assert_eq!(list["result"]["resultType"], "complete", "{list}");
    assert_eq!(list["result"]["ttlMs"], 300000, "{list}");
    let legacy = peer.request("resources/list", json!({})).response;
    assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
    let _ = peer.finish();
}
