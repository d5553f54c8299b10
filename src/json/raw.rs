//! Recorded messages kept as text.
//!
//! A cassette holds thousands of messages that replay writes back verbatim
//! and reads inside only now and then. As `Value` trees they cost five to
//! ten times their text (a map, a key string and a 32-byte value per
//! member), which is most of a big cassette's load time and memory. A
//! [`RawMessage`] keeps the compact text instead and builds the tree the
//! first time something asks for it.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::compact::{Method, Scanned, Shape, scan, string_end};

/// A JSON message as recorded: its compact text, and its `Value` tree once
/// something has read it (through `Deref`, [`RawMessage::value`]).
///
/// Reading through [`RawMessage::with`] parses without keeping the tree,
/// for passes over every message of a cassette (building the match index,
/// saving) that would otherwise leave every tree behind.
pub struct RawMessage {
    /// Valid JSON without whitespace outside strings: every constructor
    /// either serialises a `Value` or compacts text serde_json accepted.
    text: Box<str>,
    /// What the pass that compacted `text` saw of its top level: read for
    /// every interaction at load and on almost every decision, so found
    /// once rather than walked for again.
    shape: Shape,
    tree: OnceLock<Box<Value>>,
}

impl RawMessage {
    /// The message's compact text, as it goes on the wire.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its top-level `method`, if that is a string; read without a tree.
    pub fn method(&self) -> Option<&str> {
        match self.shape.method {
            Method::Absent | Method::NotString => None,
            Method::At { start, end } => Some(&self.text[start as usize..end as usize]),
            Method::InTree => self.value().get("method")?.as_str(),
        }
    }

    /// Whether it is an object with a top-level member `key`; read without
    /// a tree (unless a key is spelled with escapes).
    pub fn has_member(&self, key: &str) -> bool {
        if self.shape.escaped_keys {
            return self.with(|v| v.get(key).is_some());
        }
        match key {
            "method" => self.shape.method != Method::Absent,
            "id" => self.shape.has_id,
            _ => last_member(&self.text, key).is_some(),
        }
    }

    /// Its text with the value of its top-level `id` replaced by `id` (and
    /// nothing else changed), to answer a live request with a recorded
    /// response without a tree; `None` when its keys are spelled with
    /// escapes, for the caller to go through the tree.
    pub fn text_with_id(&self, id: &Value) -> Option<String> {
        self.text_with_id_text(&serde_json::to_string(id).expect("a Value serialises"))
    }

    /// [`RawMessage::text_with_id`] with the id's JSON text, as a live
    /// request's text holds it.
    pub(crate) fn text_with_id_text(&self, id: &str) -> Option<String> {
        if self.shape.escaped_keys {
            return None;
        }
        let text = &*self.text;
        let (start, end) = match self.shape.id_value {
            Some((start, end)) => (start as usize, end as usize),
            None if !self.shape.has_id => return Some(text.to_owned()),
            None => {
                let value = last_member(text, "id")?;
                let start = value.as_ptr() as usize - text.as_ptr() as usize;
                (start, start + value.len())
            }
        };
        let mut out = String::with_capacity(text.len() + id.len());
        out.push_str(&text[..start]);
        out.push_str(id);
        out.push_str(&text[end..]);
        Some(out)
    }

    /// Its top-level member `key`, parsed alone (ids, for pairing, without
    /// the rest of the message).
    pub fn member(&self, key: &str) -> Option<Value> {
        if self.shape.escaped_keys {
            return self.with(|v| v.get(key).cloned());
        }
        last_member(&self.text, key).map(parse)
    }

    /// Whether its text holds a backslash: an escape, which the readers
    /// of raw text below cannot see through.
    pub(crate) fn has_escapes(&self) -> bool {
        self.shape.escapes
    }

    /// The text of the value of its top-level member `key` (the last), for
    /// a message without escapes ([`RawMessage::has_escapes`]): keys are
    /// compared as written.
    pub(crate) fn member_text(&self, key: &str) -> Option<&str> {
        last_member(&self.text, key)
    }

    /// The tree of `params._meta` alone, parsed without the rest of the
    /// message, for a message without escapes.
    pub(crate) fn params_meta(&self) -> Option<Value> {
        let params = self.member_text("params")?;
        last_member(params, "_meta").map(parse)
    }

    /// `params._meta[key]`, parsed alone: the builder reads progress
    /// tokens and declared versions off every request, and a tree each
    /// time would cost a parse of the whole message.
    pub(crate) fn meta_member(&self, key: &str) -> Option<Value> {
        if self.has_escapes() {
            return self.with(|v| v.get("params")?.get("_meta")?.get(key).cloned());
        }
        let meta = last_member(self.member_text("params")?, "_meta")?;
        last_member(meta, key).map(parse)
    }

    /// Whether it is a JSON object.
    pub fn is_object(&self) -> bool {
        self.text.starts_with('{')
    }

    /// The message as a tree, parsed on first use and kept.
    pub fn value(&self) -> &Value {
        self.tree.get_or_init(|| Box::new(parse(&self.text)))
    }

    /// Runs `f` on the tree without keeping it (unless it is already kept).
    pub fn with<R>(&self, f: impl FnOnce(&Value) -> R) -> R {
        match self.tree.get() {
            Some(tree) => f(tree),
            None => f(&parse(&self.text)),
        }
    }

    /// An owned copy of the tree.
    pub fn to_value(&self) -> Value {
        match self.tree.get() {
            Some(tree) => Value::clone(tree),
            None => parse(&self.text),
        }
    }

    /// The tree, taken.
    pub fn into_value(self) -> Value {
        match self.tree.into_inner() {
            Some(tree) => *tree,
            None => parse(&self.text),
        }
    }

    /// Changes the message through its tree, and its text with it.
    pub fn modify<R>(&mut self, f: impl FnOnce(&mut Value) -> R) -> R {
        let mut tree = std::mem::replace(self, RawMessage::from(Value::Null)).into_value();
        let result = f(&mut tree);
        *self = RawMessage::from(tree);
        result
    }

    /// Compacts JSON text serde_json has already accepted, or says how
    /// deep it nests if that is deeper than a message may.
    /// Text that is compact already is kept as it is handed over: an owned
    /// `Box<str>` is not copied, borrowed text is copied once.
    fn from_valid<T>(text: T) -> Result<Self, TooDeep>
    where
        T: AsRef<str> + Into<Box<str>>,
    {
        Self::from_valid_scanned(text).map(|(message, _)| message)
    }

    /// [`RawMessage::from_valid`], and all that its pass saw.
    fn from_valid_scanned<T>(text: T) -> Result<(Self, Scanned), TooDeep>
    where
        T: AsRef<str> + Into<Box<str>>,
    {
        let (compacted, scanned) = scan(text.as_ref());
        if scanned.depth > super::MAX_DEPTH {
            return Err(TooDeep(scanned.depth));
        }
        let compacted = match compacted {
            Cow::Owned(compacted) => Some(compacted.into_boxed_str()),
            Cow::Borrowed(_) => None,
        };
        let message = RawMessage {
            text: compacted.unwrap_or_else(|| text.into()),
            shape: scanned.shape,
            tree: OnceLock::new(),
        };
        Ok((message, scanned))
    }

    /// Text that is compact already (a `Value` serialised).
    fn from_compact(text: Box<str>) -> Self {
        let shape = scan(&text).1.shape;
        RawMessage {
            text,
            shape,
            tree: OnceLock::new(),
        }
    }
}

/// The text of the value of member `key` of a compact JSON object: the
/// last, as in a parsed tree. Keys are compared as written, so one spelled
/// with escapes is not found (callers look in the tree when text has any).
fn last_member<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    members(text)
        .filter(|(quoted, _)| quoted.len() == key.len() + 2 && &quoted[1..quoted.len() - 1] == key)
        .last()
        .map(|(_, value)| value)
}

/// The members of a compact JSON object, as the text of each key (quoted)
/// and value; nothing for anything but an object. Only for valid JSON.
pub(super) fn members(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let bytes = text.as_bytes();
    // Past the `{`, or at the end for anything but an object.
    let mut at = if bytes.first() == Some(&b'{') {
        1
    } else {
        bytes.len()
    };
    std::iter::from_fn(move || {
        if at >= bytes.len() || bytes[at] != b'"' {
            return None;
        }
        let key_end = value_end(bytes, at);
        let value_start = key_end + 1; // past the `:`
        let end = value_end(bytes, value_start);
        let member = (&text[at..key_end], &text[value_start..end]);
        at = end + 1; // past the `,` or the closing `}`
        Some(member)
    })
}

/// The text of each item of a compact JSON array; nothing for anything but
/// an array. Only for valid JSON.
pub(super) fn items(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    // Past the `[`, or at the end for anything but a non-empty array.
    let mut at = if bytes.first() == Some(&b'[') && bytes.get(1) != Some(&b']') {
        1
    } else {
        bytes.len()
    };
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        let end = value_end(bytes, at);
        let item = &text[at..end];
        at = end + 1; // past the `,` or the closing `]`
        Some(item)
    })
}

/// The end of the JSON value that starts at `start` in compact, valid text.
fn value_end(bytes: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut at = start;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at = string_end(bytes, at + 1);
                if depth == 0 {
                    return at;
                }
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            b',' | b']' | b'}' if depth == 0 => return at,
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// A message nested deeper than [`super::MAX_DEPTH`], by this many levels.
#[derive(Debug)]
struct TooDeep(usize);

impl fmt::Display for TooDeep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a message nested {} levels deep; mcpcassette reads messages nested at most {} levels",
            self.0,
            super::MAX_DEPTH
        )
    }
}

/// Parses text a [`RawMessage`] holds, which is valid JSON by construction
/// (text the loaders accepted, so nested no deeper than they allow, or a
/// `Value` serialised, which nests as deep as the `Value` did). Whether it
/// nests deeper than a message may is for the loaders to say, not for
/// every reader.
fn parse(text: &str) -> Value {
    super::unbounded(text.as_bytes()).expect("a RawMessage holds valid JSON")
}

/// A live request read as text: the message, and where its top-level
/// `params` and `jsonrpc` are, so that replay reads them without walking
/// the text again.
pub(crate) struct LiveRequest {
    /// The request.
    pub(crate) message: RawMessage,
    params: Option<(u32, u32)>,
    jsonrpc: Option<(u32, u32)>,
}

impl LiveRequest {
    /// Reads `bytes` as one JSON value; `None` if it is not one, or nests
    /// too deep.
    pub(crate) fn read(bytes: &[u8]) -> Option<Self> {
        let raw: &RawValue = serde_json::from_slice(bytes).ok()?;
        let (message, scanned) = RawMessage::from_valid_scanned(raw.get()).ok()?;
        Some(LiveRequest {
            message,
            params: scanned.params_value,
            jsonrpc: scanned.jsonrpc_value,
        })
    }

    /// The text of its `params`, when the keys are spelled plainly.
    pub(crate) fn params(&self) -> Option<&str> {
        self.kept(self.params, "params")
    }

    /// The text of its `id`, likewise.
    pub(crate) fn id(&self) -> Option<&str> {
        self.kept(self.message.shape.id_value, "id")
    }

    /// The text of its `jsonrpc`, likewise.
    pub(crate) fn jsonrpc(&self) -> Option<&str> {
        self.kept(self.jsonrpc, "jsonrpc")
    }

    fn kept(&self, span: Option<(u32, u32)>, key: &str) -> Option<&str> {
        match span {
            Some((start, end)) if !self.message.shape.escaped_keys => {
                Some(&self.message.text[start as usize..end as usize])
            }
            _ => self.message.member_text(key),
        }
    }
}

impl From<Value> for RawMessage {
    fn from(value: Value) -> Self {
        RawMessage::from(&value)
    }
}

impl From<&Value> for RawMessage {
    fn from(value: &Value) -> Self {
        let text = serde_json::to_string(value).expect("a Value serialises");
        RawMessage::from_compact(text.into())
    }
}

impl Deref for RawMessage {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl Clone for RawMessage {
    /// Copies the text only: a clone parses again if it is read.
    fn clone(&self) -> Self {
        RawMessage {
            text: self.text.clone(),
            shape: self.shape,
            tree: OnceLock::new(),
        }
    }
}

impl PartialEq for RawMessage {
    /// Equal as JSON values (the same text is, whatever its spelling).
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text || self.with(|a| other.with(|b| a == b))
    }
}

impl PartialEq<Value> for RawMessage {
    fn eq(&self, other: &Value) -> bool {
        self.with(|value| value == other)
    }
}

impl fmt::Debug for RawMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Display for RawMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for RawMessage {
    /// As the tree, so that a pretty printer indents it like the rest; as
    /// its text while a recording writes its spill (`serialize_as_text`).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if AS_TEXT.get() {
            // Checked as serde_json checks any text it is handed (a skip,
            // no tree), then written as it is.
            let raw: &RawValue =
                serde_json::from_str(&self.text).map_err(serde::ser::Error::custom)?;
            return raw.serialize(serializer);
        }
        self.with(|value| value.serialize(serializer))
    }
}

thread_local! {
    /// Whether messages serialise as their text on this thread.
    static AS_TEXT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether messages deserialise from text the input lends them on
    /// this thread.
    static BORROWING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Puts a thread's flag back however the run it was set for ends.
struct Restore(&'static std::thread::LocalKey<std::cell::Cell<bool>>, bool);

impl Restore {
    /// Sets `flag` until the returned value is dropped.
    fn set(flag: &'static std::thread::LocalKey<std::cell::Cell<bool>>) -> Restore {
        Restore(flag, flag.replace(true))
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        self.0.set(self.1);
    }
}

/// Runs `serialize` with every [`RawMessage`] written as its compact text
/// rather than through its tree: for compact output with serde_json (a
/// recording's spill lines), where a message then costs a copy instead of
/// a parse and a print. Other serializers see serde_json's raw-value form.
pub(crate) fn serialize_as_text<R>(serialize: impl FnOnce() -> R) -> R {
    let _restore = Restore::set(&AS_TEXT);
    serialize()
}

/// Runs `deserialize`, which must read with serde_json from a `&str` or a
/// `&[u8]` and nothing else, with every [`RawMessage`] compacted straight
/// from the input: a pretty-printed message is then copied once, compact,
/// instead of copied as written and then compacted (a cassette's load).
/// Any other deserializer can't lend its text, and would fail.
pub(crate) fn deserialize_borrowing<R>(deserialize: impl FnOnce() -> R) -> R {
    let _restore = Restore::set(&BORROWING);
    deserialize()
}

impl<'de> Deserialize<'de> for RawMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if BORROWING.get() {
            let raw = <&RawValue>::deserialize(deserializer)?;
            return RawMessage::from_valid(raw.get()).map_err(serde::de::Error::custom);
        }
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        RawMessage::from_valid(Box::<str>::from(raw)).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn text_from_a_file_is_compacted_outside_strings() {
        let text = "{\n  \"a\" : [ 1, 2 ],\n\t\"b\": \"x  \\\" y\\\\\" , \"c\":\"\\n \"\r\n}";
        let message: RawMessage = serde_json::from_str(text).unwrap();
        assert_eq!(message.as_str(), r#"{"a":[1,2],"b":"x  \" y\\","c":"\n "}"#);
        assert_eq!(*message, json!({"a": [1, 2], "b": "x  \" y\\", "c": "\n "}));
    }

    #[test]
    fn text_lent_by_the_input_is_compacted_as_a_copy_is() {
        let text = "{\n  \"a\" : [ 1, 2 ],\n  \"b\": \"x  y\",\"c\":{}\n}";
        let copied: RawMessage = serde_json::from_str(text).unwrap();
        let lent: RawMessage = deserialize_borrowing(|| serde_json::from_str(text)).unwrap();
        assert_eq!(lent.as_str(), r#"{"a":[1,2],"b":"x  y","c":{}}"#);
        assert_eq!(lent, copied);
        assert!(!BORROWING.get());
        // A reader can't lend its text: refused under the flag, which is
        // put back however the run ends.
        let read =
            deserialize_borrowing(|| serde_json::from_reader::<_, RawMessage>(text.as_bytes()));
        assert!(read.is_err());
        assert!(!BORROWING.get());
        let read: RawMessage = serde_json::from_reader(text.as_bytes()).unwrap();
        assert_eq!(read, copied);
    }

    #[test]
    fn compact_text_is_kept_as_it_is() {
        let message: RawMessage = serde_json::from_str(r#"{"n":1.0e3,"s":"\u00e9"}"#).unwrap();
        assert_eq!(message.as_str(), r#"{"n":1.0e3,"s":"\u00e9"}"#);
        assert_eq!(message, RawMessage::from(json!({"n": 1000.0, "s": "é"})));
    }

    #[test]
    fn reading_through_with_keeps_no_tree() {
        let message = RawMessage::from(json!({"a": 1}));
        assert_eq!(message.with(|v| v["a"].clone()), json!(1));
        assert!(message.tree.get().is_none());
        assert_eq!(message["a"], json!(1));
        assert!(message.tree.get().is_some());
    }

    #[test]
    fn modify_changes_text_and_tree() {
        let mut message = RawMessage::from(json!({"id": 1}));
        let _ = message.value();
        message.modify(|v| v["id"] = json!(7));
        assert_eq!(message.as_str(), r#"{"id":7}"#);
        assert_eq!(message["id"], json!(7));
    }

    #[test]
    fn it_serialises_as_its_tree() {
        let message: RawMessage = serde_json::from_str(r#"{"a":[1]}"#).unwrap();
        let pretty = serde_json::to_string_pretty(&json!({"m": message})).unwrap();
        assert_eq!(
            pretty,
            "{\n  \"m\": {\n    \"a\": [\n      1\n    ]\n  }\n}"
        );
    }

    #[test]
    fn messages_nest_to_the_limit_and_no_deeper() {
        use super::super::MAX_DEPTH;
        let nested = |depth: usize| format!(" {} 1 {}", "[ ".repeat(depth), " ]".repeat(depth));
        let message: RawMessage = serde_json::from_str(&nested(MAX_DEPTH)).unwrap();
        assert_eq!(super::super::depth_of(message.value()), MAX_DEPTH);
        let err = serde_json::from_str::<RawMessage>(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("a message nested 129 levels deep; mcpcassette reads messages nested at most 128 levels"),
            "{err}"
        );
    }

    #[test]
    fn meta_members_are_read_without_a_tree() {
        let token = |text: &str| {
            let message: RawMessage = serde_json::from_str(text).unwrap();
            let found = message.meta_member("progressToken");
            (found, message.tree.get().is_some())
        };
        let read = r#"{"method":"m","params":{"_meta":{"progressToken":"p1"},"a":1}}"#;
        assert_eq!(token(read), (Some(json!("p1")), false));
        assert_eq!(token(r#"{"params":{"a":{"_meta":1}}}"#), (None, false));
        assert_eq!(token(r#"{"params":[1]}"#), (None, false));
        assert_eq!(token(r#"{"method":"m"}"#), (None, false));
        // Duplicate keys: the last one counts, as in the tree.
        let twice = r#"{"params":{"_meta":{"progressToken":1,"progressToken":2}}}"#;
        assert_eq!(token(twice), (Some(json!(2)), false));
    }

    #[test]
    fn the_method_is_found_without_a_tree() {
        let method = |text: &str| {
            let message: RawMessage = serde_json::from_str(text).unwrap();
            let found = message.method().map(str::to_owned);
            assert_eq!(
                found.as_deref(),
                message.value().get("method").and_then(Value::as_str)
            );
            found
        };
        assert_eq!(
            method(r#"{"id":1,"params":{"method":"no","a":[{"}":"]"}]},"method":"tools/call"}"#)
                .as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            method(r#"{ "method" : "a", "method": "b" }"#).as_deref(),
            Some("b")
        );
        assert_eq!(
            method(r#"{"method":"t\u006fols/list"}"#).as_deref(),
            Some("tools/list")
        );
        assert_eq!(method(r#"{"m\u0065thod":"ping"}"#).as_deref(), Some("ping"));
        assert_eq!(method(r#"{"method":7}"#), None);
        assert_eq!(method(r#"{"id":1,"result":{}}"#), None);
        assert_eq!(method(r#"["method","ping"]"#), None);
        assert_eq!(method(r#""method""#), None);
    }

    #[test]
    fn the_id_is_replaced_in_the_text() {
        let message: RawMessage =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":{"a":[1]},"result":{"id":2}}"#).unwrap();
        assert_eq!(
            message.text_with_id(&serde_json::json!("x")).unwrap(),
            r#"{"jsonrpc":"2.0","id":"x","result":{"id":2}}"#
        );
        let last: RawMessage = serde_json::from_str(r#"{"result":0,"id":1}"#).unwrap();
        assert_eq!(
            last.text_with_id(&serde_json::json!(7)).unwrap(),
            r#"{"result":0,"id":7}"#
        );
        let none: RawMessage = serde_json::from_str(r#"{"result":0}"#).unwrap();
        assert_eq!(
            none.text_with_id(&serde_json::json!(7)).unwrap(),
            r#"{"result":0}"#
        );
        let escaped: RawMessage = serde_json::from_str(r#"{"\u0069d":1}"#).unwrap();
        assert_eq!(escaped.text_with_id(&serde_json::json!(7)), None);
    }

    #[test]
    fn members_are_found_without_a_tree() {
        let message: RawMessage =
            serde_json::from_str(r#"{"params":{"id":1},"method":"a","x":"\"id\""}"#).unwrap();
        assert!(message.has_member("method") && message.has_member("x"));
        assert!(!message.has_member("id"), "only top-level members count");
        let escaped: RawMessage = serde_json::from_str(r#"{"\u0069d":1}"#).unwrap();
        assert!(escaped.has_member("id"));
        assert_eq!(message.member("params"), Some(serde_json::json!({"id": 1})));
        assert_eq!(message.member("id"), None);
        assert_eq!(escaped.member("id"), Some(serde_json::json!(1)));
        let array: RawMessage = serde_json::from_str(r#"[{"id":1}]"#).unwrap();
        assert!(!array.has_member("id") && !array.is_object());
    }

    #[test]
    fn serialised_as_text_a_message_is_its_compact_text() {
        let message: RawMessage =
            serde_json::from_str("{ \"b\": [1, 2.50], \"a\": \"\\u00e9\" }").unwrap();
        let wrapped = serde_json::json!({"m": 1});
        let as_text = serialize_as_text(|| serde_json::to_string(&(&message, &wrapped)).unwrap());
        assert_eq!(as_text, r#"[{"b":[1,2.50],"a":"\u00e9"},{"m":1}]"#);
        assert!(message.tree.get().is_none(), "no tree was built");
        // Outside, through the tree, as before.
        assert_eq!(
            serde_json::to_string(&message).unwrap(),
            r#"{"b":[1,2.5],"a":"é"}"#
        );
    }

    proptest! {
        /// Whatever the message, `method` agrees with the tree.
        #[test]
        fn the_method_agrees_with_the_tree(
            value in super::super::strategy::json_value(),
            method in "[a/\"\\\\é]{0,4}",
        ) {
            let mut message = serde_json::json!({"x": value.clone()});
            message["method"] = Value::from(method);
            message["y"] = value;
            for text in [serde_json::to_string(&message).unwrap(), serde_json::to_string_pretty(&message).unwrap()] {
                let raw: RawMessage = serde_json::from_str(&text).unwrap();
                prop_assert_eq!(raw.method(), message["method"].as_str());
            }
        }

        /// Whatever the text, what the compacting pass saw of the top level
        /// (`method`, `id`, escapes) agrees with the tree and the text.
        #[test]
        fn the_shape_agrees_with_the_tree(
            value in super::super::strategy::json_value(),
            id in proptest::option::of(super::super::strategy::json_value()),
            method in proptest::option::of(super::super::strategy::json_value()),
            jsonrpc in proptest::option::of(super::super::strategy::json_value()),
            key in "[a-z\"\\\\]{0,3}",
        ) {
            let mut message = serde_json::json!({key: value.clone(), "params": {"id": 1, "method": "x"}});
            if let Some(id) = id {
                message["id"] = id;
            }
            if let Some(jsonrpc) = jsonrpc {
                message["jsonrpc"] = jsonrpc;
            }
            if let Some(method) = method {
                message["method"] = method;
            }
            for whole in [message, value] {
                for text in [serde_json::to_string(&whole).unwrap(), serde_json::to_string_pretty(&whole).unwrap()] {
                    let raw: RawMessage = serde_json::from_str(&text).unwrap();
                    prop_assert_eq!(raw.as_str(), serde_json::to_string(&whole).unwrap());
                    for key in ["id", "method", "params", "nothing"] {
                        prop_assert_eq!(raw.has_member(key), whole.get(key).is_some(), "{} in {}", key, text);
                    }
                    prop_assert_eq!(raw.method(), whole.get("method").and_then(Value::as_str));
                    prop_assert_eq!(raw.has_escapes(), raw.as_str().contains('\\'));
                    if !raw.has_escapes() {
                        let live = LiveRequest::read(text.as_bytes()).unwrap();
                        prop_assert_eq!(live.message.as_str(), raw.as_str());
                        let read = [live.message.member_text("id"), live.params(), live.jsonrpc()];
                        for (read, key) in read.into_iter().zip(["id", "params", "jsonrpc"]) {
                            let read = read.map(parse);
                            prop_assert_eq!(read.as_ref(), whole.get(key), "{} in {}", key, text);
                        }
                    }
                    let live = serde_json::json!({"live": [7]});
                    if let Some(spliced) = raw.text_with_id(&live) {
                        let mut expected = whole.clone();
                        if let Some(id) = expected.get_mut("id") {
                            *id = live.clone();
                        }
                        let spliced: Value = serde_json::from_str(&spliced).unwrap();
                        prop_assert_eq!(spliced, expected, "{}", text);
                    }
                }
            }
        }

        /// Whatever the message, `meta_member` agrees with the tree.
        #[test]
        fn meta_members_agree_with_the_tree(
            value in super::super::strategy::json_value(),
            key in "[a/\"\\\\é]{0,3}",
        ) {
            let message = serde_json::json!({
                "x": value.clone(),
                "params": {"y": value.clone(), "_meta": {"z": value.clone(), key.clone(): value}},
            });
            let raw = RawMessage::from(&message);
            let expected = message.pointer(&format!("/params/_meta/{}", key.replace('~', "~0").replace('/', "~1")));
            prop_assert_eq!(raw.meta_member(&key), expected.cloned());
        }

        /// Pretty or compact, any value's text compacts to the same value.
        #[test]
        fn compacting_keeps_the_value(value in super::super::strategy::json_value()) {
            let pretty = serde_json::to_string_pretty(&value).unwrap();
            let message: RawMessage = serde_json::from_str(&pretty).unwrap();
            prop_assert_eq!(message.as_str(), serde_json::to_string(&value).unwrap());
            prop_assert_eq!(message.to_value(), value);
        }
    }
}
