//! Tools for the JSON every other module reads: one nesting limit for all
//! of it, parsing that enforces it without risking the stack, error
//! messages in plain words, selectors (JSON pointers with wildcards),
//! subset matching and the canonical form.
//!
//! This is the bottom layer: it imports nothing else from the crate.

mod canonical;
mod compact;
mod depth;
mod file;
mod incoming;
mod locate;
mod message;
mod pointer;
mod raw;
mod selector;
#[cfg(test)]
pub(crate) mod strategy;
mod subset;

pub use canonical::canonical_json;
pub(crate) use canonical::{canonical_object, canonical_text};
pub(crate) use depth::{TooDeep, nesting, position};
pub(crate) use file::read_file;
pub(crate) use incoming::{parse_message, readable_id};
pub use locate::Lines;
pub(crate) use message::plain_error;
pub(crate) use pointer::{pointer_segment, push_index, push_key};
pub use raw::RawMessage;
pub(crate) use raw::{LiveRequest, deserialize_borrowing, serialize_as_text};
pub use selector::{Selector, SelectorError};
pub(crate) use subset::{first_mismatch, is_subset};

use serde::de::DeserializeOwned;

/// The deepest a JSON-RPC message may nest (objects and arrays), on the
/// wire and in every file: a message that parses on the wire also loads
/// from a cassette, a journal or a fixture, and `check` reads what replay
/// reads. (serde_json alone stops one level short of it.)
pub const MAX_DEPTH: usize = 128;

/// How many levels mcpcassette's own files wrap a message in, at most: a
/// cassette's `/interactions/N/during/M/server_request`. Files may nest
/// this much deeper than a message.
pub(crate) const FILE_WRAPPING: usize = 5;

/// Why a document did not parse.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ParseError {
    /// It nests deeper than its limit.
    #[error(transparent)]
    TooDeep(TooDeep),
    /// It is not valid JSON, or not the expected shape. The message is
    /// serde's own, reworded and without its position (which callers say
    /// their own way), so serde's error is not also a source: a chain
    /// would say it twice.
    #[error("{}", plain_error(.0))]
    Json(serde_json::Error),
}

impl ParseError {
    /// 1-based line and column of the problem.
    pub(crate) fn position(&self) -> (usize, usize) {
        match self {
            ParseError::TooDeep(deep) => (deep.line, deep.column),
            ParseError::Json(e) => (e.line().max(1), e.column().max(1)),
        }
    }
}

/// Parses a document that holds messages `wrapping` levels inside its own
/// structure (a cassette nests a server request five levels down, a journal
/// entry one): messages up to [`MAX_DEPTH`] levels deep parse, deeper ones
/// are refused by name, and the parser never recurses further than that.
pub(crate) fn from_slice<T: DeserializeOwned>(
    bytes: &[u8],
    wrapping: usize,
) -> Result<T, ParseError> {
    match serde_json::from_slice(bytes) {
        Ok(value) => Ok(value),
        Err(e) if is_recursion_limit(&e) => {
            let limit = MAX_DEPTH + wrapping;
            if let Err(deep) = nesting(bytes, limit) {
                return Err(ParseError::TooDeep(deep));
            }
            unbounded(bytes).map_err(ParseError::Json)
        }
        Err(e) => Err(ParseError::Json(e)),
    }
}

/// Where a file stops being UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not UTF-8: byte 0x{byte:02X} at column {column} is not part of a character")]
pub(crate) struct NotUtf8 {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in bytes.
    pub column: usize,
    /// The byte there.
    pub byte: u8,
}

/// The text of a file's bytes, without a UTF-8 byte order mark (editors on
/// Windows write one; JSON has none), or where it stops being UTF-8.
pub(crate) fn file_text(bytes: &[u8]) -> Result<&str, NotUtf8> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let (line, column) = position(bytes, at);
        NotUtf8 {
            line,
            column,
            byte: bytes[at],
        }
    })
}

/// A JSON value's kind, as messages name it: `null`, `a boolean`,
/// `a number`, `a string`, `an array`, `an object`.
pub(crate) fn kind_of(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses `bytes` with serde_json's recursion limit off. Only for text
/// whose nesting [`nesting`] has bounded.
pub(crate) fn unbounded<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let value = T::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// How deep `value` nests (a scalar is 0, `[]` is 1), without recursion.
pub(crate) fn depth_of(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    let mut deepest = 0;
    let mut stack = vec![(value, 1)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(items) => {
                deepest = deepest.max(depth);
                stack.extend(items.iter().map(|v| (v, depth + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(depth);
                stack.extend(map.values().map(|v| (v, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// Whether serde_json stopped at its recursion limit.
pub(crate) fn is_recursion_limit(e: &serde_json::Error) -> bool {
    e.is_syntax() && e.to_string().starts_with("recursion limit exceeded")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn nested(depth: usize) -> String {
        "[".repeat(depth) + &"]".repeat(depth)
    }

    #[test]
    fn the_limit_is_reached_past_serde_jsons() {
        let e = serde_json::from_str::<Value>(&nested(MAX_DEPTH)).unwrap_err();
        assert!(is_recursion_limit(&e), "{e}");
        assert!(from_slice::<Value>(nested(MAX_DEPTH).as_bytes(), 0).is_ok());
        let err = from_slice::<Value>(nested(MAX_DEPTH + 1).as_bytes(), 0).unwrap_err();
        assert!(matches!(err, ParseError::TooDeep(_)), "{err}");
    }

    #[test]
    fn documents_get_room_for_their_own_structure() {
        let text = nested(MAX_DEPTH + 5);
        assert!(from_slice::<Value>(text.as_bytes(), 5).is_ok());
        let err = from_slice::<Value>(text.as_bytes(), 4).unwrap_err();
        assert!(
            err.to_string().contains(&format!("{}", MAX_DEPTH + 5)),
            "{err}"
        );
    }

    #[test]
    fn a_deep_bomb_is_refused_without_recursing() {
        let bomb = "[".repeat(1_000_000);
        let err = from_slice::<Value>(bomb.as_bytes(), 5).unwrap_err();
        assert!(matches!(err, ParseError::TooDeep(_)), "{err}");
    }
}
