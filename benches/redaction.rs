//! The cost of redaction's pre-scan on lines with nothing to mask: what
//! every recorded line pays. A short request, and 10 KB of prose (with
//! words that start shapes' literals: `task-`, `basic`, URLs), code and
//! JSON tool definitions, each through `Redactor::redact_line` with the
//! token shapes and two environment secrets.
//!
//! Run it with `cargo bench --bench redaction`; docs/benchmarks.md keeps
//! the figures.

use std::borrow::Cow;
use std::time::Instant;

use mcpcassette::redact::{RedactConfig, Redactor};
use serde_json::json;

/// Best of this many timed rounds.
const ROUNDS: usize = 5;

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench binaries without `--bench`.
        println!("redaction: skipped; run it with `cargo bench --bench redaction`");
        return;
    }
    let redactor = Redactor::new(&RedactConfig {
        defaults: true,
        env: vec![
            (
                "GITHUB_TOKEN".into(),
                "ghp_0123456789abcdefghijABCDEFGHIJ012345".into(),
            ),
            ("MY_API_KEY".into(), "Sup3r-secret-value-42".into()),
        ],
        ..RedactConfig::default()
    })
    .expect("the redactor builds");
    let ten_kb = |unit: &str| {
        let mut text = String::new();
        while text.len() < 10_000 {
            text.push_str(unit);
        }
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1,
            "result": {"content": [{"type": "text", "text": text}]}}))
        .expect("a message serializes")
    };
    let lines = [
        (
            "short request",
            br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello world"}}}"#.to_vec(),
            2_000_000,
        ),
        (
            "10 KB prose",
            ten_kb("Ask the task-runner about the basic usage of the desk-lamp API, with maxTokens and a cursor; see https://example.com/docs/getting-started for the signal design. "),
            20_000,
        ),
        (
            "10 KB code",
            ten_kb("fn adapter_config(base: &str) -> Result<Signal, Error> { let line = access.shared_account(); Ok(sign(base, line)) }\n"),
            20_000,
        ),
        (
            "10 KB JSON",
            ten_kb(r#"{"name":"search_issues","description":"Search issues and pull requests; returns the matching items with labels and state.","inputSchema":{"type":"object"}},"#),
            20_000,
        ),
    ];
    for (name, line, count) in lines {
        assert!(
            matches!(redactor.redact_line(&line), Cow::Borrowed(_)),
            "{name} has something to mask"
        );
        let mut best = f64::MAX;
        for _ in 0..ROUNDS {
            let started = Instant::now();
            for _ in 0..count {
                std::hint::black_box(redactor.redact_line(std::hint::black_box(&line)));
            }
            best = best.min(started.elapsed().as_secs_f64() / f64::from(count));
        }
        println!("{name:14} {:>9.1} ns per line", best * 1e9);
    }
}
