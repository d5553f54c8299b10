//! Whole sessions: the example client gets the same transcript from the
//! live server, through `record`, and from `replay`, in both eras.

use serde_json::Value;

use crate::support::{demo_client_transcript, demo_server, record_demo, replay, root};

fn three_ways(era: &str) -> (Value, Value, Value, mcpcassette::cassette::Cassette) {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("session.json");
    let direct = demo_client_transcript(era, &demo_server());
    let recorded = demo_client_transcript(era, &record_demo(&cassette));
    let replayed = demo_client_transcript(era, &replay(&cassette));
    let loaded = mcpcassette::cassette::load(&cassette).unwrap();
    (direct, recorded, replayed, loaded)
}

fn step<'a>(transcript: &'a Value, method: &str, name: &str) -> &'a Value {
    transcript
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["request"]["method"] == method
                && (name.is_empty() || s["request"]["params"]["name"] == name)
        })
        .unwrap_or_else(|| panic!("no {method} {name} in transcript"))
}

#[test]
fn legacy_session_is_identical_live_recorded_and_replayed() {
    let (direct, recorded, replayed, cassette) = three_ways("legacy");
    assert_eq!(direct, recorded, "recording changed what the client saw");
    assert_eq!(direct, replayed, "replay differs from the live server");

    // The transcript really contains every kind of message.
    let count = step(&replayed, "tools/call", "count");
    let progress: Vec<_> = count["before"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 3);
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "count-1")
    );
    assert_eq!(
        count["before"][3]["method"], "notifications/message",
        "log after progress, before the response"
    );
    let summarize = step(&replayed, "tools/call", "summarize");
    assert_eq!(summarize["before"][0]["method"], "sampling/createMessage");
    assert_eq!(
        summarize["response"]["result"]["content"][0]["text"],
        "summary: a short summary"
    );
    assert_eq!(
        step(&replayed, "tools/call", "confirm")["before"][0]["method"],
        "elicitation/create"
    );
    assert_eq!(
        step(&replayed, "tools/call", "roots")["before"][0]["method"],
        "roots/list"
    );
    assert_eq!(
        step(&replayed, "tools/call", "explode")["response"]["error"]["code"],
        -32603
    );
    assert_eq!(
        step(&replayed, "tools/call", "divide")["response"]["result"]["isError"],
        true
    );

    // And the cassette describes the session.
    assert_eq!(cassette.protocol.era, mcpcassette::protocol::Era::Legacy);
    assert_eq!(cassette.protocol.version.as_deref(), Some("2025-11-25"));
    assert_eq!(
        cassette.server.as_ref().unwrap().info["name"],
        "mcpcassette-demo"
    );
    let initialized = cassette
        .interactions
        .iter()
        .find(|i| i.method() == "notifications/initialized");
    assert!(initialized.is_some(), "client notifications are recorded");
    let summarize = cassette
        .interactions
        .iter()
        .find(|i| {
            i.request()
                .is_some_and(|r| r["params"]["name"] == "summarize")
        })
        .unwrap();
    let mcpcassette::cassette::Event::ServerRequest {
        client_response, ..
    } = &summarize.during[0]
    else {
        panic!("sampling request not filed under its tool call")
    };
    assert_eq!(
        client_response.as_ref().unwrap()["result"]["model"],
        "demo-model"
    );
}

#[test]
fn modern_session_is_identical_live_recorded_and_replayed() {
    let (direct, recorded, replayed, cassette) = three_ways("modern");
    assert_eq!(direct, recorded, "recording changed what the client saw");
    assert_eq!(direct, replayed, "replay differs from the live server");

    let summarize = step(&replayed, "tools/call", "summarize");
    assert_eq!(
        summarize["response"]["result"]["resultType"],
        "input_required"
    );
    let retry = &summarize["retry"];
    assert!(retry["request"]["params"]["inputResponses"]["summary"].is_object());
    assert_eq!(retry["response"]["result"]["resultType"], "complete");
    assert_eq!(
        retry["response"]["result"]["content"][0]["text"],
        "summary: a short summary"
    );
    assert_eq!(
        step(&replayed, "tools/call", "count")["before"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        step(&replayed, "server/discover", "")["response"]["result"]["resultType"],
        "complete"
    );

    assert_eq!(cassette.protocol.era, mcpcassette::protocol::Era::Modern);
    assert_eq!(cassette.protocol.version.as_deref(), Some("2026-07-28"));
    assert_eq!(
        cassette.server.as_ref().unwrap().info["name"],
        "mcpcassette-demo"
    );
}

/// The cassettes in `cassettes/` still say what the example server says.
#[test]
fn shipped_cassettes_match_the_live_example_server() {
    for era in ["legacy", "modern"] {
        let shipped = root().join("cassettes").join(format!("demo-{era}.json"));
        let live = demo_client_transcript(era, &demo_server());
        let replayed = demo_client_transcript(era, &replay(&shipped));
        assert_eq!(
            live,
            replayed,
            "{} is stale: re-record it (see README)",
            shipped.display()
        );
    }
}

/// One cassette answers both eras: each shipped cassette, replayed to the
/// example client speaking the other era, gives that client the same
/// server, tools, resources, prompts and results the live example server
/// gives it in its own era, progress and errors included; sampling,
/// elicitation and roots, which one era asks as server requests and the
/// other as `input_required`, are asked and answered alike. Only what the
/// eras spell differently is left out of the comparison ([`same_in_both_eras`]).
#[test]
fn each_shipped_cassette_answers_a_client_of_the_other_era() {
    for (cassette, client) in [("legacy", "modern"), ("modern", "legacy")] {
        let shipped = root()
            .join("cassettes")
            .join(format!("demo-{cassette}.json"));
        let mut live = demo_client_transcript(client, &demo_server());
        if cassette == "modern" {
            // A 2026-07-28 client gets log messages only where a request
            // asks for them; the modern recording has none to give.
            drop_log_messages(&mut live);
        }
        let live = same_in_both_eras(live);
        let replayed = same_in_both_eras(demo_client_transcript(client, &replay(&shipped)));
        assert_eq!(
            serde_json::to_string_pretty(&live).unwrap(),
            serde_json::to_string_pretty(&replayed).unwrap(),
            "a {client} client against demo-{cassette}.json differs from the live server"
        );
    }
}

/// Leaves the server's log messages out of a transcript.
fn drop_log_messages(transcript: &mut serde_json::Value) {
    match transcript {
        serde_json::Value::Array(items) => {
            items.retain(|m| m["method"] != "notifications/message");
            items.iter_mut().for_each(drop_log_messages);
        }
        serde_json::Value::Object(map) => map.values_mut().for_each(drop_log_messages),
        _ => {}
    }
}

/// A transcript without what the two eras spell differently: the
/// handshake's version list and caching hints (`supportedVersions`,
/// `protocolVersion`, `ttlMs`, `cacheScope`), `resultType`, and the names
/// a server gives its input requests and request state (only the requests
/// and answers themselves compare).
fn same_in_both_eras(mut transcript: serde_json::Value) -> serde_json::Value {
    let dropped = [
        "supportedVersions",
        "protocolVersion",
        "ttlMs",
        "cacheScope",
        "resultType",
        "requestState",
    ];
    crate::support::across_eras(
        &mut transcript,
        &dropped,
        &["inputRequests", "inputResponses"],
    );
    transcript
}
