//! The redactor: a registered environment value or a well-known token,
//! written into a message in any of the encodings real software emits
//! (verbatim, `\u` escapes anywhere, URL-encoded as `encodeURIComponent`
//! does, base64, hex, upper case), never survives a recorded line, and the
//! line stays JSON.
#![no_main]

use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use mcpcassette::redact::{RedactConfig, Redactor};
use serde_json::Value;

/// Tokens of well-known shapes (made up, of the right form).
const TOKENS: [&str; 8] = [
    "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678",
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "AKIAIOSFODNN7EXAMPLE",
    "glpat-AbCdEfGhIj1234567890",
    "sk_live_51AbCdEfGhIjKlMnOpQrStUv",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
];

/// `text` with the characters `mask` picks written as `\u` escapes, as a
/// JSON string's inside.
fn escaped(text: &str, mask: &[u8]) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        let bit = mask.get(n / 8).is_some_and(|b| b >> (n % 8) & 1 == 1);
        if bit {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (pick, encoding, rest) = (data[0], data[1] % 7, &data[2..]);
    let (mask, rest) = rest.split_at(rest.len().min(8));
    // The secret: a registered value made of the input, or a token.
    // Printable ASCII but quotes and backslashes (a value that holds
    // those is written escaped, which the `\u` encoding covers).
    let from_input: String = rest
        .iter()
        .filter(|&&b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
        .map(|&b| b as char)
        .take(40)
        .collect();
    let (secret, env) = if pick % 2 == 0 && from_input.len() >= 12 {
        let env = vec![("FUZZ_SERVICE_TOKEN".to_owned(), from_input.clone())];
        (from_input, env)
    } else {
        (TOKENS[usize::from(pick / 2) % TOKENS.len()].to_owned(), Vec::new())
    };
    let registered = !env.is_empty();
    let config = RedactConfig {
        defaults: true,
        env,
        extra_env: Vec::new(),
        rules: Vec::new(),
    };
    let redactor = Redactor::new(&config).expect("no rules, no errors");
    let written = match encoding {
        0 => secret.clone(),
        1 => escaped(&secret, mask),
        2 if registered => uri_component(&secret),
        3 if registered => base64::engine::general_purpose::STANDARD.encode(&secret),
        4 if registered => hex(&secret),
        5 if registered => secret.to_uppercase(),
        _ => escaped(&secret, &[0xFF; 8]),
    };
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{{"a":"note {written} end"}}}}}}"#
    );
    let redacted = redactor.redact_line(line.as_bytes());
    let text = String::from_utf8_lossy(&redacted);
    assert!(!text.contains(&written), "survived as written: {text}");
    let value: Value = serde_json::from_str(&text).expect("the line stays JSON");
    let decoded = value.to_string();
    assert!(!decoded.contains(&secret), "survived decoded: {decoded}");
});

/// `text` as JavaScript's `encodeURIComponent` writes it.
fn uri_component(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'!' | b'~' | b'*'
            | b'\'' | b'(' | b')' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}
