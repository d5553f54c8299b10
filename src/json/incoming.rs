//! Reading one JSON-RPC message (or batch) off the wire as peers write it.
//!
//! Two things serde_json refuses that peers send: text nested past the
//! limit (refused here by name, with where), and lone UTF-16 surrogates
//! (`"\ud800"`), which JavaScript's and Python's JSON writers emit for
//! strings that hold one and their readers accept. Those are read as
//! U+FFFD, the replacement character, as a lossy UTF-8 decoder would.

use serde::Deserialize;
use serde_json::Value;

use super::{MAX_DEPTH, ParseError, is_recursion_limit, nesting, unbounded};

/// Parses one message or a batch of them.
pub(crate) fn parse_message(bytes: &[u8]) -> Result<Value, ParseError> {
    match parse_within_limit(bytes) {
        Err(ParseError::Json(e)) if e.is_syntax() => match replace_lone_surrogates(bytes) {
            Some(repaired) => parse_within_limit(&repaired).map_err(|_| ParseError::Json(e)),
            None => Err(ParseError::Json(e)),
        },
        parsed => parsed,
    }
}

/// The `id` of a message that did not parse, when the rest of it reads as
/// JSON: an error reply should name the request it answers.
pub(crate) fn readable_id(bytes: &[u8]) -> Option<Value> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<Value>,
    }
    // Skipping a value does not decode its strings, so a message that
    // failed over a string's content still gives up its id.
    let id = serde_json::from_slice::<IdOnly>(bytes).ok()?.id?;
    (id.is_string() || id.is_number()).then_some(id)
}

fn parse_within_limit(bytes: &[u8]) -> Result<Value, ParseError> {
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(value),
        Err(e) if is_recursion_limit(&e) => {
            let batch = bytes.trim_ascii_start().first() == Some(&b'[');
            let limit = MAX_DEPTH + usize::from(batch);
            nesting(bytes, limit).map_err(ParseError::TooDeep)?;
            unbounded(bytes).map_err(ParseError::Json)
        }
        Err(e) => Err(ParseError::Json(e)),
    }
}

/// `bytes` with every `\uD800`–`\uDFFF` escape that is not half of a pair
/// replaced by `\uFFFD`; `None` if there was none.
fn replace_lone_surrogates(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut replaced = false;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            if bytes[i + 1] == b'u'
                && let Some(unit) = hex4(bytes, i + 2)
            {
                let high = (0xD800..0xDC00).contains(&unit);
                let low = (0xDC00..0xE000).contains(&unit);
                let paired = high
                    && bytes.get(i + 6..i + 8) == Some(b"\\u")
                    && hex4(bytes, i + 8).is_some_and(|next| (0xDC00..0xE000).contains(&next));
                if paired {
                    out.extend_from_slice(&bytes[i..i + 12]);
                    i += 12;
                    continue;
                }
                if high || low {
                    replaced = true;
                    out.extend_from_slice(b"\\ufffd");
                    i += 6;
                    continue;
                }
            }
            // Any other escape, copied whole so `\\u` is never misread.
            out.extend_from_slice(&bytes[i..i + 2]);
            i += 2;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    replaced.then_some(out)
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lone_surrogates_read_as_the_replacement_character() {
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"\ud800z","b":"\udc00","c":"\ud83d\ude00","d":"\\ud800"}}"#;
        let value = parse_message(line).unwrap();
        assert_eq!(value["id"], json!(7));
        assert_eq!(value["params"]["a"], json!("\u{fffd}z"));
        assert_eq!(value["params"]["b"], json!("\u{fffd}"));
        assert_eq!(value["params"]["c"], json!("😀"));
        assert_eq!(value["params"]["d"], json!("\\ud800"));
    }

    #[test]
    fn the_id_of_a_broken_message_is_still_read() {
        let line = br#"{"jsonrpc":"2.0","id":"a-1","method":"x","params":{"a":"\uZZZZ"}}"#;
        assert!(parse_message(line).is_err());
        assert_eq!(readable_id(line), None, "not JSON at all: no id");
        let line = br#"{"jsonrpc":"2.0","id":"a-1","method":"x","params":{"a":"\ud800"}}"#;
        assert_eq!(readable_id(line), Some(json!("a-1")));
    }

    #[test]
    fn messages_nest_to_the_limit_and_batches_one_more() {
        let message = |depth: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{}{}}}"#,
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            )
        };
        assert!(parse_message(message(MAX_DEPTH).as_bytes()).is_ok());
        let err = parse_message(message(MAX_DEPTH + 1).as_bytes()).unwrap_err();
        assert!(matches!(err, ParseError::TooDeep(_)), "{err}");
        let batch = format!("[{}]", message(MAX_DEPTH));
        assert!(parse_message(batch.as_bytes()).is_ok());
    }
}
