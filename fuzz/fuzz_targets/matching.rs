//! Canonicalisation and matching: the canonical form is stable (reading
//! it back gives the same form and the same key), and the matcher answers
//! any request against the shipped cassette without panicking, only ever
//! with an interaction whose canonical params are the request's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcassette::{Answer, Matcher};
use serde_json::{Value, json};

const METHODS: [&str; 6] = [
    "tools/call",
    "tools/list",
    "resources/read",
    "prompts/get",
    "ping",
    "initialize",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(params) = mcpcassette::fuzzing::json::parse_message(rest) else {
        return;
    };
    let canonical = mcpcassette::canonical_json(&params);
    let again: Value = mcpcassette::fuzzing::json::parse_message(canonical.as_bytes()).expect("canonical JSON parses");
    assert_eq!(mcpcassette::canonical_json(&again), canonical);

    let method = METHODS[usize::from(pick) % METHODS.len()];
    let recorded = mcpcassette::fuzzing::shipped_cassette();
    let mut matcher = Matcher::new(recorded, recorded.rules.clone());
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    if let Ok(Answer::Recorded(position)) = matcher.request(recorded, &request, None) {
        let interaction = &recorded.interactions[position];
        assert_eq!(interaction.method(), method);
        let recorded_params = interaction.client.message().get("params");
        let normalize = |p: Option<&Value>| recorded.rules.normalize(method, p).into_owned();
        assert_eq!(
            mcpcassette::canonical_json(&normalize(recorded_params)),
            mcpcassette::canonical_json(&normalize(request.get("params")))
        );
    }
});
