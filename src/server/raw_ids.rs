//! Request ids written back exactly as the client wrote them.
//!
//! serde_json keeps integers that fit 64 bits exactly, but reads any other
//! number as a float and writes it back its own way: `1e2` as `100.0`,
//! `-0` as `-0.0`, 2^64 as `1.8446744073709552e19`. A response's id must
//! be the request's, byte for byte, or the client cannot pair them. So the
//! raw text of such ids is kept as the request is read, and put back into
//! the encoded answer; likewise strings written with escapes (`"s\u00e9"`
//! comes back as `"sé"` otherwise). Integer ids and plain strings (all
//! that real clients send) cost nothing: nothing is kept for them.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// Raw ids of the requests on one connection (or one HTTP POST), by the
/// text serde_json would write for them.
#[derive(Debug, Default)]
pub(super) struct RawIds {
    any: AtomicBool,
    by_written: Mutex<HashMap<String, VecDeque<String>>>,
}

#[derive(Deserialize)]
struct IdOf<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

impl RawIds {
    /// Notes the ids of `messages` (read from `line`, as a batch or one
    /// message) that serde_json would not write back as they were written.
    pub(super) fn note(&self, line: &[u8], messages: &[Value], batch: bool) {
        // Strings come back as written unless they hold escapes.
        let escapes = memchr::memchr(b'\\', line).is_some();
        let lossy = |message: &Value| {
            message
                .get("id")
                .is_some_and(|id| id.is_f64() || (escapes && id.is_string()))
        };
        if !messages.iter().any(lossy) {
            return;
        }
        let raw: Vec<Option<&RawValue>> = match batch {
            true => serde_json::from_slice::<Vec<IdOf>>(line)
                .map(|ids| ids.into_iter().map(|i| i.id).collect())
                .unwrap_or_default(),
            false => serde_json::from_slice::<IdOf>(line)
                .map(|i| vec![i.id])
                .unwrap_or_default(),
        };
        let mut by_written = self.lock();
        for raw in raw.into_iter().flatten() {
            let Ok(value) = serde_json::from_str::<Value>(raw.get()) else {
                continue;
            };
            let written = value.to_string();
            if written != raw.get() {
                by_written
                    .entry(written)
                    .or_default()
                    .push_back(raw.get().to_owned());
                self.any.store(true, Ordering::Release);
            }
        }
    }

    /// `encoded` (one message) with its id put back as the client wrote
    /// it, if it is one that was noted.
    pub(super) fn restore(&self, encoded: Vec<u8>) -> Vec<u8> {
        if !self.any.load(Ordering::Acquire) {
            return encoded;
        }
        let Some((start, end)) = id_span(&encoded) else {
            return encoded;
        };
        let written = String::from_utf8_lossy(&encoded[start..end]).into_owned();
        let raw = {
            let mut by_written = self.lock();
            let Some(queue) = by_written.get_mut(&written) else {
                return encoded;
            };
            let raw = queue.pop_front();
            if queue.is_empty() {
                by_written.remove(&written);
            }
            raw
        };
        let Some(raw) = raw else { return encoded };
        let mut restored = Vec::with_capacity(encoded.len() + raw.len());
        restored.extend_from_slice(&encoded[..start]);
        restored.extend_from_slice(raw.as_bytes());
        restored.extend_from_slice(&encoded[end..]);
        restored
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<String>>> {
        self.by_written
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Where the top-level `id` of an encoded message is, as a byte range.
fn id_span(encoded: &[u8]) -> Option<(usize, usize)> {
    let id = serde_json::from_slice::<IdOf>(encoded).ok()?.id?;
    let start = id.get().as_ptr() as usize - encoded.as_ptr() as usize;
    Some((start, start + id.get().len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn float_ids_come_back_as_written() {
        let ids = RawIds::default();
        for raw in [
            "1e2",
            "-0",
            "18446744073709551616",
            "1000000000000000000000000000001",
            "1.50",
            r#""s\u00e9""#,
        ] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
            let parsed: Value = serde_json::from_str(&line).unwrap();
            ids.note(line.as_bytes(), std::slice::from_ref(&parsed), false);
            let reply =
                serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": parsed["id"], "result": {}}))
                    .unwrap();
            let restored = String::from_utf8(ids.restore(reply)).unwrap();
            assert_eq!(
                restored,
                format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#)
            );
        }
    }

    #[test]
    fn integer_ids_are_not_kept() {
        let ids = RawIds::default();
        let line = br#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#;
        ids.note(line, &[serde_json::from_slice(line).unwrap()], false);
        assert!(!ids.any.load(Ordering::Relaxed));
    }

    #[test]
    fn batches_keep_each_id() {
        let ids = RawIds::default();
        let line =
            br#"[{"jsonrpc":"2.0","id":1e0,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]"#;
        let batch: Vec<Value> = serde_json::from_slice(line).unwrap();
        ids.note(line, &batch, true);
        let reply = br#"{"jsonrpc":"2.0","id":1.0,"result":{}}"#.to_vec();
        assert_eq!(
            ids.restore(reply),
            br#"{"jsonrpc":"2.0","id":1e0,"result":{}}"#
        );
    }
}
