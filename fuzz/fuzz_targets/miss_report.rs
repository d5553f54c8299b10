//! The unmatched-request report: whatever the request, the report, the
//! one-line message and the error reply stay small, and the reply is one a
//! client can read back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcassette::Refusal;
use mcpcassette::replay::{Context, Miss};
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(params) = mcpcassette::fuzzing::json::parse_message(rest) else {
        return;
    };
    let recorded = mcpcassette::fuzzing::shipped_cassette();
    let method = ["tools/call", "resources/read", "nope/missing"][usize::from(pick) % 3];
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let refusal = match pick / 3 % 3 {
        0 => Refusal::Missing,
        1 => Refusal::Exhausted { answered: 1 },
        _ => Refusal::OutOfOrder { expected: 4 },
    };
    let context = Context {
        path: std::path::Path::new("demo-legacy.json"),
        mode: "replay",
        rules: &recorded.rules,
    };
    let miss = Miss::new(recorded, &request, refusal, context);
    let report = miss.to_string();
    assert!(report.len() < 64 * 1024, "a report of {} bytes", report.len());
    assert!(miss.message().len() < 4 * 1024);
    let reply = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": miss.code(), "message": miss.message(), "data": miss.data()}}))
    .unwrap();
    assert!(reply.len() < 128 * 1024, "a reply of {} bytes", reply.len());
    mcpcassette::fuzzing::json::parse_message(&reply).expect("a client can read the reply");
});
