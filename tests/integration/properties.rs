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
