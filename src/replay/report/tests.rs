//! A miss report stays within its bounds whatever the shape of the request
//! (one huge string, a huge key, a deep object, thousands of keys, a huge
//! method or tool name or protocol version), in every form: the text
//! stderr shows, the JSON `--report` writes and the error reply the client
//! reads; and it says what it left out.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::bound::{MISS_JSON_BYTES, MISS_REPLY_BYTES, MISS_REPORT_BYTES};
use super::{Context, Miss};
use crate::cassette::{Builder, Cassette, Direction, Rules, Transport};
use crate::matching::Refusal;

/// Far past every budget.
const HUGE: usize = 1 << 20;

fn shipped(name: &str) -> Cassette {
    let text = match name {
        "demo-legacy.json" => include_str!("../../../cassettes/demo-legacy.json"),
        _ => include_str!("../../../cassettes/demo-modern.json"),
    };
    crate::cassette::parse(Path::new(name), text).expect("a shipped cassette")
}

/// A cassette of one `tools/call` with these params.
fn recording(params: Value) -> Cassette {
    let mut builder = Builder::new(
        "2026-01-01T00:00:00Z".into(),
        Transport::Stdio {
            command: vec![],
            cwd: None,
        },
    );
    builder.observe(
        Direction::ClientToServer,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
    );
    builder.observe(
        Direction::ServerToClient,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
    );
    builder.finish()
}

fn miss(cassette: &Cassette, method: &str, params: Value, refusal: Refusal) -> Miss {
    let rules = Rules::default();
    let context = Context {
        path: Path::new("c.json"),
        mode: "replay",
        rules: &rules,
    };
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    Miss::new(cassette, &request, refusal, context)
}

/// Checks each form of `miss` against its bound; returns the text and the
/// JSON, for what they must say.
fn bounded(miss: &Miss) -> (String, String) {
    let text = miss.to_string();
    assert!(
        text.len() < MISS_REPORT_BYTES,
        "a report of {} bytes: {}",
        text.len(),
        text.chars().take(2000).collect::<String>()
    );
    // As `--report` writes it: with its text, in a list of misses.
    let mut json = serde_json::to_value(miss).unwrap();
    json["text"] = Value::String(text.clone());
    let json = serde_json::to_string_pretty(&json!({"misses": [json]})).unwrap();
    assert!(json.len() < MISS_JSON_BYTES, "JSON of {} bytes", json.len());
    let reply = serde_json::to_string(&crate::jsonrpc::error_response(
        json!(7),
        miss.code(),
        &miss.message(),
        Some(miss.data()),
    ))
    .unwrap();
    assert!(
        reply.len() < MISS_REPLY_BYTES,
        "a reply of {} bytes",
        reply.len()
    );
    crate::json::parse_message(reply.as_bytes()).expect("a client reads the reply");
    (text, json)
}

#[test]
fn one_huge_string_shows_its_start_and_how_much_was_left_out() {
    let cassette = shipped("demo-legacy.json");
    let long = "C".repeat(HUGE);
    for refusal in [
        Refusal::Missing,
        Refusal::Exhausted { answered: 1 },
        Refusal::OutOfOrder { expected: 4 },
    ] {
        let params = json!({"name": "echo", "arguments": {"n": long}});
        let miss = miss(&cassette, "tools/call", params, refusal);
        let (text, _) = bounded(&miss);
        let diff = &miss.closest[0].diff;
        assert!(diff.contains("+    \"n\": \"CCCC"), "{diff}");
        assert!(diff.contains("more bytes)"), "{diff}");
        assert!(text.contains("more bytes)"), "{text}");
    }
}

#[test]
fn long_strings_of_any_characters_are_cut_between_them() {
    let cassette = shipped("demo-legacy.json");
    for unit in ["é", "☃", "𝄞", "a\u{301}", "\u{0}", "\""] {
        let params = json!({"name": "echo", "arguments": {"message": unit.repeat(HUGE / 4)}});
        let (text, _) = bounded(&miss(&cassette, "tools/call", params, Refusal::Missing));
        assert!(text.contains("more bytes)"), "{unit}: {text}");
    }
}

#[test]
fn a_huge_key_makes_a_cut_pointer_and_no_ignore_rule() {
    let cassette = shipped("demo-legacy.json");
    let key = "K".repeat(HUGE);
    let params = json!({"name": "echo", "arguments": {key: 1}});
    let miss = miss(&cassette, "tools/call", params, Refusal::Missing);
    let (text, _) = bounded(&miss);
    let pointer = miss.closest[0].differs_at.as_deref().unwrap();
    assert!(
        pointer.starts_with("/params/arguments/KKK") && pointer.ends_with("more bytes)"),
        "{pointer}"
    );
    assert!(miss.closest[0].rejected_by.ends_with("more bytes)"));
    // A pointer cut short matches nothing: no rule is made of it.
    assert!(
        miss.fixes.iter().all(|fix| !fix.contains("\"ignore\"")),
        "{:#?}",
        miss.fixes
    );
    assert!(
        text.contains("params differ at /params/arguments/KKK"),
        "{text}"
    );
}

/// 120 levels, in a message nesting 122 deep: under the wire's limit.
fn deep(levels: usize, key: &str, bottom: Value) -> Value {
    (0..levels).fold(bottom, |inner, _| json!({key: inner}))
}

#[test]
fn a_deep_object_is_bounded() {
    let cassette = shipped("demo-legacy.json");
    let params = json!({"name": "echo", "arguments": deep(120, "k", json!(1))});
    let miss = miss(&cassette, "tools/call", params, Refusal::Missing);
    let (text, _) = bounded(&miss);
    assert!(miss.shortened);
    assert!(text.contains("lines not shown"), "{text}");
}

#[test]
fn a_deep_difference_under_long_keys_is_bounded() {
    let key = "k".repeat(1000);
    let cassette = recording(json!({"name": "t", "arguments": deep(120, &key, json!(1))}));
    let params = json!({"name": "t", "arguments": deep(120, &key, json!(2))});
    let miss = miss(&cassette, "tools/call", params, Refusal::Missing);
    let (text, _) = bounded(&miss);
    let pointer = miss.closest[0].differs_at.as_deref().unwrap();
    assert!(pointer.ends_with("more bytes)"), "{pointer}");
    assert!(text.contains("more bytes)"), "{text}");
}

#[test]
fn many_keys_are_bounded() {
    let cassette = shipped("demo-legacy.json");
    let keys: Map<String, Value> = (0..100_000).map(|n| (format!("k{n}"), json!(n))).collect();
    let params = json!({"name": "echo", "arguments": keys});
    let miss = miss(&cassette, "tools/call", params, Refusal::Missing);
    let (text, _) = bounded(&miss);
    assert!(miss.shortened);
    assert!(text.contains("lines not shown"), "{text}");
}

#[test]
fn many_long_values_fill_a_diff_no_further_than_its_budget() {
    // Just under the params budget: kept whole, and every line long.
    let keys: Map<String, Value> = (0..60)
        .map(|n| (format!("k{n:02}"), json!("v".repeat(250))))
        .collect();
    let cassette = shipped("demo-legacy.json");
    let params = json!({"name": "echo", "arguments": keys});
    let miss = miss(&cassette, "tools/call", params, Refusal::Missing);
    let (text, _) = bounded(&miss);
    assert!(!miss.shortened);
    assert!(text.contains("more bytes)"), "{text}");
}

#[test]
fn a_huge_method_name_is_cut_and_no_case_is_made_of_it() {
    let cassette = shipped("demo-legacy.json");
    let method = "x".repeat(HUGE);
    let miss = miss(&cassette, &method, json!({}), Refusal::Missing);
    let (text, _) = bounded(&miss);
    assert!(miss.method.ends_with("more bytes)"), "{}", miss.method);
    assert!(
        miss.fixes.iter().all(|fix| !fix.contains("\"cases\"")),
        "{:#?}",
        miss.fixes
    );
    assert!(text.contains("more bytes)"), "{text}");
}

#[test]
fn a_huge_tool_name_is_cut_and_compared_at_once() {
    let cassette = shipped("demo-legacy.json");
    for name in ["e".repeat(HUGE), format!("ech{}", "o".repeat(HUGE))] {
        let params = json!({"name": name, "arguments": {"message": "hello"}});
        let miss = miss(&cassette, "tools/call", params, Refusal::Missing);
        let (text, _) = bounded(&miss);
        assert_eq!(miss.closest[0].differs_at.as_deref(), Some("/params/name"));
        assert!(text.contains("more bytes)"), "{text}");
    }
}

#[test]
fn a_huge_protocol_version_is_cut() {
    let cassette = shipped("demo-modern.json");
    let version = "9".repeat(HUGE);
    let params = json!({"protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}});
    let miss = miss(&cassette, "initialize", params, Refusal::Missing);
    let (text, _) = bounded(&miss);
    assert!(miss.era_mismatch.is_some());
    assert!(text.contains("more bytes)"), "{text}");
    assert!(miss.message().contains("more bytes)"), "{}", miss.message());
}

#[test]
fn thousands_of_tiny_values_are_shortened_before_pretty_printing_multiplies_them() {
    let cassette = shipped("demo-legacy.json");
    // 16 KiB of canonical JSON, a line each and 30 levels of indentation
    // in `--report`.
    let params = json!({"name": "echo", "arguments": deep(29, "k", json!(vec![0; 8000]))});
    let miss = miss(&cassette, "tools/call", params, Refusal::Missing);
    bounded(&miss);
    assert!(miss.shortened);
}

#[test]
fn escapes_that_double_under_json_stay_within_the_bounds() {
    let cassette = shipped("demo-legacy.json");
    let quotes = "\"".repeat(8000);
    // Just under the params budget: kept, and repeated by the case.
    let keys: Map<String, Value> = (0..60)
        .map(|n| (format!("k{n:02}"), json!("\"".repeat(125))))
        .collect();
    for (method, params) in [
        ("resources/read", json!({"uri": quotes})),
        ("tools/call", json!({"name": "echo", "arguments": keys})),
        ("tools/call", json!({"name": quotes, "arguments": {}})),
    ] {
        let miss = miss(&cassette, method, params, Refusal::Missing);
        bounded(&miss);
    }
}
