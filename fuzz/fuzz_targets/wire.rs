//! stdio framing and JSON-RPC classification: every line of arbitrary
//! input is read as replay reads it. Nothing may panic; what parses must
//! classify; a response written back carries the request's id as written.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcassette::fuzzing::{json, jsonrpc};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    for line in data.split(|b| *b == b'\n') {
        let line = line.trim_ascii();
        match json::parse_message(line) {
            Ok(Value::Array(batch)) => {
                for message in &batch {
                    let _ = jsonrpc::classify(message);
                }
            }
            Ok(message) => {
                let _ = jsonrpc::classify(&message);
                if let Some(id) = jsonrpc::id(&message) {
                    let reply = jsonrpc::result_response(id.clone(), serde_json::json!({}));
                    let encoded = serde_json::to_vec(&reply).unwrap();
                    let restored = mcpcassette::fuzzing::restore_ids(line, encoded);
                    let back: Value = json::parse_message(&restored).expect("a reply parses");
                    assert_eq!(back["result"], serde_json::json!({}));
                }
            }
            Err(_) => {
                let _ = json::readable_id(line);
            }
        }
    }
});
