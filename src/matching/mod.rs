//! Request matching: which recorded interaction answers a live message.
//!
//! A message is reduced to its canonical form — kind, method and params with
//! object keys sorted and `params._meta` dropped — and hashed with SHA-256.
//! The hash indexes the cassette, so a lookup costs the same for ten
//! interactions as for a hundred thousand. JSON-RPC ids never take part.

mod matcher;
mod rules;
mod target;

pub use matcher::{Answer, Matcher, Refusal};
// The rules are the cassette's data; matching implements them.
pub(crate) use crate::cassette::{OnExhausted, Rules, Strategy};
pub(crate) use target::{Target, same_target};

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::json;

/// The SHA-256 of a message's canonical form.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Key([u8; 32]);

/// A key is already a uniform hash: its first eight bytes are all a hash
/// table needs, rather than SipHash over all thirty-two.
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut prefix = [0; 8];
        prefix.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(prefix));
    }
}

/// A hash map keyed by [`Key`]s (alone or with other integers), hashed by
/// [`KeyHasher`].
pub(crate) type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// Hashes the integers written to it (a [`Key`]'s prefix, a declaration's
/// hash) by multiplying and rotating, as they arrive already hashed.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({})", hex::encode(&self.0[..8]))
    }
}

/// Whether a message expects an answer; part of the key, so a request never
/// matches a notification with the same method and params.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// A request.
    Request,
    /// A notification.
    Notification,
}

/// The canonical form: method and params with sorted keys, without
/// `params._meta` (progress tokens, modern protocol metadata).
pub(crate) fn canonical(method: &str, params: Option<&Value>) -> String {
    format!("{method} {}", canonical_params(params))
}

/// Params as compact JSON with sorted keys and without `_meta`; no params
/// and empty params are the same.
pub(crate) fn canonical_params(params: Option<&Value>) -> String {
    match params {
        Some(Value::Object(map)) => json::canonical_object(map, Some("_meta")),
        Some(other) => json::canonical_json(other),
        None => "{}".to_owned(),
    }
}

/// Hashes a message's canonical form.
pub(crate) fn key(kind: MessageKind, method: &str, params: Option<&Value>) -> Key {
    key_from_canonical(kind, method, &canonical_params(params))
}

/// Hashes kind, method and the canonical JSON of what is compared.
pub(crate) fn key_from_canonical(kind: MessageKind, method: &str, canonical_params: &str) -> Key {
    let mut hasher = Sha256::new();
    hasher.update(match kind {
        MessageKind::Request => b"R",
        MessageKind::Notification => b"N",
    });
    hasher.update(method.as_bytes());
    hasher.update(b" ");
    hasher.update(canonical_params.as_bytes());
    Key(hasher.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_meta_do_not_matter() {
        let a = json!({"name": "echo", "arguments": {"x": 1, "y": [1, {"b": 2, "a": 1}]}, "_meta": {"progressToken": 1}});
        let b = json!({"arguments": {"y": [1, {"a": 1, "b": 2}], "x": 1}, "name": "echo"});
        assert_eq!(
            key(MessageKind::Request, "tools/call", Some(&a)),
            key(MessageKind::Request, "tools/call", Some(&b))
        );
        assert_eq!(
            canonical("tools/call", Some(&b)),
            r#"tools/call {"arguments":{"x":1,"y":[1,{"a":1,"b":2}]},"name":"echo"}"#
        );
    }

    #[test]
    fn nested_meta_and_values_do_matter() {
        let a = json!({"arguments": {"_meta": 1}});
        let b = json!({"arguments": {}});
        assert_ne!(
            key(MessageKind::Request, "m", Some(&a)),
            key(MessageKind::Request, "m", Some(&b))
        );
        let c = json!({"arguments": {"x": "1"}});
        let d = json!({"arguments": {"x": 1}});
        assert_ne!(
            key(MessageKind::Request, "m", Some(&c)),
            key(MessageKind::Request, "m", Some(&d))
        );
        assert_ne!(
            key(MessageKind::Request, "m", None),
            key(MessageKind::Notification, "m", None)
        );
    }

    #[test]
    fn missing_and_empty_params_are_the_same() {
        assert_eq!(
            key(MessageKind::Request, "m", None),
            key(MessageKind::Request, "m", Some(&json!({})))
        );
    }
}
