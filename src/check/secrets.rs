//! Likely secrets anywhere in a cassette: token shapes and the values of
//! secret-looking environment variables (the redactor's detectors, also
//! for a numeric secret stored as a number), and long strings under
//! secret-looking keys (`"api_key": "…"`).

use serde_json::Value;

use super::findings::{Code, Finding};
use crate::redact::{self, Redactor};

/// Walks every string of the document.
pub(super) fn scan(document: &Value, redactor: &Redactor, findings: &mut Vec<Finding>) {
    let mut pointer = String::new();
    walk(document, None, &mut pointer, redactor, findings);
}

fn walk(
    value: &Value,
    key: Option<&str>,
    pointer: &mut String,
    redactor: &Redactor,
    findings: &mut Vec<Finding>,
) {
    match value {
        Value::String(text) => {
            let mut names: Vec<String> = redactor.find(text).into_iter().map(|h| h.name).collect();
            names.dedup();
            if names.is_empty()
                && let Some(key) = key.filter(|k| redact::name_looks_secret(k))
                && text.chars().count() >= 8
                && !redact::is_placeholder(text)
            {
                names.push(format!("a value under the key `{key}`"));
            }
            for name in names {
                findings.push(Finding::new(
                    Code::LikelySecret,
                    pointer.clone(),
                    format!("this string holds what looks like a secret ({name})"),
                ));
            }
        }
        // A numeric environment secret sent unquoted.
        Value::Number(number) => {
            if let Some(name) = redactor.number_secret(number) {
                findings.push(Finding::new(
                    Code::LikelySecret,
                    pointer.clone(),
                    format!("this number is what looks like a secret ({name})"),
                ));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                walk(item, None, pointer, redactor, findings);
                pointer.truncate(len);
            }
        }
        Value::Object(members) => {
            for (name, member) in members {
                let len = pointer.len();
                crate::json::push_key(pointer, name);
                walk(member, Some(name), pointer, redactor, findings);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}
