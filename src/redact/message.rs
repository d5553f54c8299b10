//! Redacting a parsed JSON-RPC message: selector rules first (whole
//! values), then every string value as text, and every number that is a
//! numeric environment secret. Object keys and the protocol fields replay
//! depends on are left byte-identical.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Masked, Redactor, placeholder, placeholder_ranges};
use crate::json::push_key;

/// Fields (relative to one message) that are never rewritten: replay and
/// the client match on them, and none of them carries user data.
const PROTECTED: [&str; 9] = [
    "/jsonrpc",
    "/id",
    "/method",
    "/params/_meta/progressToken",
    "/params/progressToken",
    "/params/requestId",
    "/params/cursor",
    "/result/nextCursor",
    "/result/resultType",
];

fn protected(pointer: &str) -> bool {
    PROTECTED.contains(&pointer)
}

impl Sink<'_> {
    fn keeps(&self, pointer: &str) -> bool {
        self.protect && protected(pointer)
    }
}

/// Whether `text` is exactly one placeholder: already masked.
fn is_whole_placeholder(text: &str) -> bool {
    placeholder_ranges(text)
        .next()
        .is_some_and(|range| range == (0..text.len()))
}

/// Where results go: the pointer prefix of the message within a batch.
struct Sink<'a> {
    prefix: &'a str,
    out: &'a mut Vec<Masked>,
    /// Whether the protocol fields are kept (a message), or everything is
    /// masked (a report, a fixture).
    protect: bool,
}

impl Sink<'_> {
    fn push(&mut self, pointer: &str, name: &str) {
        self.out.push(Masked {
            pointer: format!("{}{pointer}", self.prefix),
            name: name.to_owned(),
        });
    }
}

impl Redactor {
    /// Masks a JSON-RPC message (or a batch of them) in place; returns what
    /// was masked.
    pub fn redact_message(&self, message: &mut Value) -> Vec<Masked> {
        let mut out = Vec::new();
        match message {
            Value::Array(batch) => {
                for (i, item) in batch.iter_mut().enumerate() {
                    let prefix = format!("/{i}");
                    self.redact_one(
                        item,
                        &mut Sink {
                            prefix: &prefix,
                            out: &mut out,
                            protect: true,
                        },
                    );
                }
            }
            _ => self.redact_one(
                message,
                &mut Sink {
                    prefix: "",
                    out: &mut out,
                    protect: true,
                },
            ),
        }
        out
    }

    /// Masks every string value of a document that is not a message (a
    /// replay report, a fixture), and every number that is a numeric
    /// secret; only object keys are kept. Selector rules do not apply:
    /// they name places in messages.
    pub fn redact_document(&self, document: &mut Value) -> Vec<Masked> {
        let mut out = Vec::new();
        self.redact_strings(
            document,
            &mut String::new(),
            &mut Sink {
                prefix: "",
                out: &mut out,
                protect: false,
            },
        );
        out
    }

    fn redact_one(&self, message: &mut Value, sink: &mut Sink<'_>) {
        for (selector, name) in &self.inner.selectors {
            let pointers: Vec<String> = selector
                .select(message)
                .into_iter()
                .map(|(pointer, _)| pointer)
                .collect();
            for mut pointer in pointers {
                if protected(&pointer) {
                    continue;
                }
                if let Some(value) = message.pointer_mut(&pointer) {
                    mask_selected(value, &mut pointer, name, sink);
                }
            }
        }
        let mut pointer = String::new();
        self.redact_strings(message, &mut pointer, sink);
    }

    fn redact_strings(&self, value: &mut Value, pointer: &mut String, sink: &mut Sink<'_>) {
        match value {
            Value::String(text) => {
                if sink.keeps(pointer) {
                    return;
                }
                let mut names = Vec::new();
                if let Some(masked) = self.mask_str(text, &mut names) {
                    *text = masked;
                    for name in &names {
                        sink.push(pointer, name);
                    }
                }
            }
            Value::Number(number) => {
                if sink.keeps(pointer) {
                    return;
                }
                if let Some(name) = self.number_secret(number).map(str::to_owned) {
                    *value = Value::String(placeholder(&name));
                    sink.push(pointer, &name);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = pointer.len();
                    let _ = write!(pointer, "/{i}");
                    self.redact_strings(item, pointer, sink);
                    pointer.truncate(len);
                }
            }
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    let len = pointer.len();
                    push_key(pointer, key);
                    self.redact_strings(child, pointer, sink);
                    pointer.truncate(len);
                }
            }
            _ => {}
        }
    }
}

/// A value a selector rule picked: a scalar becomes the placeholder, a
/// container keeps its structure with every string inside masked.
fn mask_selected(value: &mut Value, pointer: &mut String, name: &str, sink: &mut Sink<'_>) {
    match value {
        Value::Array(_) | Value::Object(_) => mask_strings(value, pointer, name, sink),
        Value::String(text) if is_whole_placeholder(text) => {}
        _ => {
            *value = Value::String(placeholder(name));
            sink.push(pointer, name);
        }
    }
}

/// Every string leaf below `value` (protected fields excepted).
fn mask_strings(value: &mut Value, pointer: &mut String, name: &str, sink: &mut Sink<'_>) {
    match value {
        Value::String(text) if !protected(pointer) && !is_whole_placeholder(text) => {
            *text = placeholder(name);
            sink.push(pointer, name);
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = pointer.len();
                let _ = write!(pointer, "/{i}");
                mask_strings(item, pointer, name, sink);
                pointer.truncate(len);
            }
        }
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                let len = pointer.len();
                push_key(pointer, key);
                mask_strings(child, pointer, name, sink);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}
