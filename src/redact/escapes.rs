//! JSON escapes in text that is searched as it is: a log line, a line that
//! is not one JSON message, JSON nested in a string. `"\u0073k-…"` or Go's
//! `\u0026` hide a secret from a search of the raw bytes, so such text is
//! also searched decoded (up to [`MAX_LEVELS`] times, for JSON inside JSON),
//! and what is found there is mapped back to the escaped bytes.
//!
//! The pre-scan stays on raw bytes: [`TRIGGERS`] are the escapes that can
//! hide part of a token shape or of a printable-ASCII secret, and a line
//! holding one is looked at closely.

use std::ops::Range;

/// How many times escaped text is decoded: JSON in a string in a line.
const MAX_LEVELS: usize = 3;

/// The escapes of printable ASCII (`\u0020`–`\u007f`), any hex case: what a
/// token shape, or a secret of printable ASCII, can be hidden by.
pub(super) const TRIGGERS: [&str; 6] = ["\\u002", "\\u003", "\\u004", "\\u005", "\\u006", "\\u007"];

/// Any `\u` escape: a secret with other characters may hide behind any.
pub(super) const ANY_ESCAPE: &str = "\\u";

/// Text decoded once or more, with where each byte came from.
pub(super) struct Decoded {
    /// The decoded text.
    pub text: String,
    /// For each byte of `text`, and its end, the offset in the original.
    map: Vec<usize>,
}

impl Decoded {
    /// The range of the original text that `range` of the decoded one came
    /// from (char boundaries map to the starts of whole escapes).
    pub(super) fn original(&self, range: Range<usize>) -> Range<usize> {
        self.map[range.start]..self.map[range.end]
    }
}

/// `text` decoded level by level while it still has escapes; empty when it
/// has none.
pub(super) fn levels(text: &str) -> Vec<Decoded> {
    let mut out: Vec<Decoded> = Vec::new();
    let mut current = decode(text);
    while let Some(mut level) = current {
        if let Some(previous) = out.last() {
            for offset in &mut level.map {
                *offset = previous.map[*offset];
            }
        }
        current = (out.len() + 1 < MAX_LEVELS)
            .then(|| decode(&level.text))
            .flatten();
        out.push(level);
    }
    out
}

/// One level of JSON string unescaping, lenient: an escape it does not know
/// stays as it is. `None` when nothing was decoded.
fn decode(text: &str) -> Option<Decoded> {
    if !text.contains('\\') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(text.len() + 1);
    let mut changed = false;
    let mut at = 0;
    while at < text.len() {
        let (decoded, len) = match bytes[at] {
            b'\\' => escape(text, at).unwrap_or(('\\', 1)),
            _ => {
                let c = text[at..].chars().next().unwrap_or('\u{fffd}');
                (c, c.len_utf8())
            }
        };
        changed |= bytes[at] == b'\\' && len > 1;
        let mut buffer = [0; 4];
        let encoded = decoded.encode_utf8(&mut buffer);
        map.extend(std::iter::repeat_n(at, encoded.len()));
        out.push_str(encoded);
        at += len;
    }
    map.push(text.len());
    changed.then_some(Decoded { text: out, map })
}

/// The escape at `at` (a backslash): what it stands for and its length.
fn escape(text: &str, at: usize) -> Option<(char, usize)> {
    let simple = match text.as_bytes().get(at + 1)? {
        b'n' => Some('\n'),
        b't' => Some('\t'),
        b'r' => Some('\r'),
        b'b' => Some('\u{8}'),
        b'f' => Some('\u{c}'),
        b'/' => Some('/'),
        b'\\' => Some('\\'),
        b'"' => Some('"'),
        b'u' => None,
        _ => return None,
    };
    if let Some(c) = simple {
        return Some((c, 2));
    }
    let unit = hex4(text, at + 2)?;
    if (0xD800..0xDC00).contains(&unit)
        && text.get(at + 6..at + 8) == Some("\\u")
        && let Some(low) = hex4(text, at + 8).filter(|low| (0xDC00..0xE000).contains(low))
    {
        let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        return Some((char::from_u32(c).unwrap_or('\u{fffd}'), 12));
    }
    Some((char::from_u32(unit).unwrap_or('\u{fffd}'), 6))
}

/// Four hex digits at `at`.
fn hex4(text: &str, at: usize) -> Option<u32> {
    let digits = text.get(at..at + 4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_decode_and_map_back() {
        let text = r#"a\u0073k-\"x\" \ud83d\ude00 \q \u12"#;
        let decoded = levels(text);
        assert_eq!(decoded.len(), 1);
        let decoded = &decoded[0];
        assert_eq!(decoded.text, "ask-\"x\" 😀 \\q \\u12");
        let sk = decoded.text.find("sk-").unwrap();
        assert_eq!(&text[decoded.original(sk..sk + 3)], "\\u0073k-");
        let smile = decoded.text.find('😀').unwrap();
        assert_eq!(&text[decoded.original(smile..smile + 4)], "\\ud83d\\ude00");
        assert!(levels("no escapes").is_empty());
        assert!(levels(r"\q only").is_empty());
    }

    #[test]
    fn nested_escapes_decode_level_by_level() {
        let text = r#"{\"k\":\"\\u0067hp_x\"}"#;
        let decoded = levels(text);
        assert_eq!(decoded.len(), 2);
        assert_eq!(decoded[1].text, r#"{"k":"ghp_x"}"#);
        let g = decoded[1].text.find("ghp_x").unwrap();
        assert_eq!(&text[decoded[1].original(g..g + 5)], r"\\u0067hp_x");
    }
}
