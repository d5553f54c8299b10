//! The unmatched-request report: whatever the request, the report, the
//! one-line message and the error reply stay within their stated bounds
//! (`mcpcassette::replay::MISS_*_BYTES`), and the reply is one a client
//! can read back.
//!
//! The first byte picks the method, the refusal and the shape: the rest as
//! params, or, since libFuzzer's inputs are short, the rest repeated into
//! one long scalar (a string value, a key, a tool name) far past every
//! budget.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcassette::Refusal;
use mcpcassette::replay::{Context, MISS_JSON_BYTES, MISS_REPLY_BYTES, MISS_REPORT_BYTES, Miss};
use serde_json::{Value, json};

/// How long a long scalar grows: past every budget of a report, and past
/// the 16 KiB of params it keeps whole (longer only costs executions).
const LONG: usize = 64 * 1024;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let long = || {
        let unit = String::from_utf8_lossy(rest);
        let unit = if unit.is_empty() { "C".into() } else { unit };
        unit.repeat(LONG / unit.len() + 1)
    };
    let params = match pick / 9 % 4 {
        0 => match mcpcassette::fuzzing::json::parse_message(rest) {
            Ok(params) => params,
            Err(_) => return,
        },
        1 => json!({"name": "echo", "arguments": {"n": long()}}),
        2 => json!({"name": "echo", "arguments": {long(): 1}}),
        _ => json!({"name": long(), "arguments": {}}),
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
    assert!(
        report.len() < MISS_REPORT_BYTES,
        "a report of {} bytes",
        report.len()
    );
    assert!(miss.message().len() < 4 * 1024);
    let reply = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": miss.code(), "message": miss.message(), "data": miss.data()}}))
    .unwrap();
    assert!(
        reply.len() < MISS_REPLY_BYTES,
        "a reply of {} bytes",
        reply.len()
    );
    let mut entry = serde_json::to_value(&miss).unwrap();
    entry["text"] = Value::String(report);
    let entry = serde_json::to_vec_pretty(&json!({"misses": [entry]})).unwrap();
    assert!(
        entry.len() < MISS_JSON_BYTES,
        "a --report entry of {} bytes",
        entry.len()
    );
    mcpcassette::fuzzing::json::parse_message(&reply).expect("a client can read the reply");
});
