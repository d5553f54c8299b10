//! Property tests against the engine, in process.

use std::path::Path;

use mcpcassette::cassette::{Builder, Direction, Transport};
use mcpcassette::replay::{Engine, Sink};
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// A cassette of `n` distinct `tools/call` interactions.
fn cassette(n: usize) -> mcpcassette::cassette::Cassette {
    let mut builder = Builder::new(
        "2026-01-01T00:00:00Z".into(),
        Transport::Stdio {
            command: vec![],
            cwd: None,
        },
    );
    for i in 0..n {
        builder.observe(Direction::ClientToServer, json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "t", "arguments": {"i": i}}}));
        builder.observe(
            Direction::ServerToClient,
            json!({"jsonrpc": "2.0", "id": i, "result": {"i": i}}),
        );
    }
    builder.finish()
}

proptest! {
    /// Under `keyed`, distinct recorded requests replay in any order, each
    /// with its own answer and the live id.
    #[test]
    fn any_permutation_of_distinct_requests_replays_under_keyed(order in Just((0..24).collect::<Vec<usize>>()).prop_shuffle()) {
        let engine = Engine::new(cassette(24), Path::new("permutation.json"));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sink = Sink::single(tx);
        let mut tasks = JoinSet::new();
        for (live_id, &i) in order.iter().enumerate() {
            let request = json!({"jsonrpc": "2.0", "id": format!("live-{live_id}"), "method": "tools/call", "params": {"arguments": {"i": i}, "name": "t"}});
            engine.handle_message(request, &sink, &mut tasks);
            let response: Value = serde_json::from_slice(&rx.try_recv().expect("answered at once")).unwrap();
            prop_assert_eq!(&response["id"], &json!(format!("live-{live_id}")));
            prop_assert_eq!(&response["result"]["i"], &json!(i));
        }
        let summary = engine.summary();
        prop_assert!(summary.misses.is_empty());
        prop_assert!(summary.unused.is_empty());
    }
}

/// Every answer `handler` writes for `lines`, fed one at a time as stdio
/// feeds them, in order.
fn answers(
    handler: std::sync::Arc<dyn mcpcassette::server::Handler>,
    lines: &[String],
) -> Vec<Vec<u8>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sink = Sink::single(tx);
        let mut tasks = JoinSet::new();
        for line in lines {
            mcpcassette::server::handle_line(&handler, line.as_bytes(), &sink, &mut tasks);
        }
        while tasks.join_next().await.is_some() {}
        drop(sink);
        let mut out = Vec::new();
        while let Some(message) = rx.recv().await {
            out.push(message);
        }
        out
    })
}

/// A fault rule that can never fire on the requests of [`cassette`]: its
/// selectors name another method or tool, or an `nth` past every call.
fn idle_rule() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        Just(json!({"error": {"code": -32000, "message": "x"}})),
        Just(json!({"tool_error": "x"})),
        Just(json!({"delay": 5})),
        Just(json!({"hang": true})),
        Just(json!({"disconnect": true})),
        Just(json!({"malformed": "truncated"})),
        Just(json!({"drop_notifications": true})),
        Just(json!({"tools_changed": {"remove": ["t"]}})),
        Just(json!({"mutate": [{"op": "remove", "path": "/i"}]})),
    ];
    let select = prop_oneof![
        Just(json!({"method": "resources/read"})),
        Just(json!({"name": "not-t"})),
        Just(json!({"method": "tools/call", "nth": 1000})),
        Just(json!({"method": "tools/call", "when": {"arguments": {"i": -1}}})),
        Just(json!({"name": "t", "session": 2})),
    ];
    (select, kind).prop_map(|(mut select, kind)| {
        for (key, value) in kind.as_object().unwrap() {
            select[key] = value.clone();
        }
        if select.get("tool_error").is_some() && select["method"] == "resources/read" {
            select["method"] = json!("tools/call");
            select["name"] = json!("not-t");
        }
        select
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A faults overlay whose rules do not fire changes nothing: the same
    /// requests get byte-identical answers with and without it, misses
    /// included.
    #[test]
    fn faults_that_do_not_fire_leave_replay_byte_identical(
        rules in proptest::collection::vec(idle_rule(), 1..5),
        calls in proptest::collection::vec(0_i64..30, 1..20),
    ) {
        let lines: Vec<String> = calls
            .iter()
            .enumerate()
            .map(|(id, i)| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "t", "arguments": {"i": i}}}).to_string())
            .collect();
        let plain = Engine::new(cassette(24), Path::new("idle.json"));
        let expected = answers(plain, &lines);
        let faults = mcpcassette::cassette::Faults::from_document(&Value::Array(rules.clone())).unwrap();
        let engine = Engine::new(cassette(24), Path::new("idle.json"));
        let overlay = mcpcassette::faults::FaultOverlay::new(engine, faults);
        let got = answers(overlay.clone(), &lines);
        prop_assert_eq!(got, expected);
        prop_assert!(overlay.summary().fired.is_empty());
    }
}
