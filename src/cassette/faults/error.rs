//! The error a faults list is refused with (where, as a JSON pointer, and
//! what), and the small checks every part of reading a list shares.

use serde_json::{Map, Value};

/// A faults list that cannot be used: where (a JSON pointer rooted at the
/// list's document) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at JSON pointer \"{pointer}\")")]
pub struct FaultsError {
    /// Where, rooted at the document the list was read from.
    pub pointer: String,
    /// What is wrong, and what is allowed.
    pub message: String,
}

impl FaultsError {
    pub(super) fn at(pointer: &str, message: impl Into<String>) -> Self {
        FaultsError {
            pointer: pointer.to_owned(),
            message: message.into(),
        }
    }

    /// The same error with its pointer rooted one level up (`prefix`
    /// before it, as `/rules/faults`).
    pub fn rooted(mut self, prefix: &str) -> Self {
        self.pointer = format!("{prefix}{}", self.pointer);
        self
    }
}

/// Refuses members of an object parameter other than `allowed`.
pub(super) fn only(
    members: &Map<String, Value>,
    allowed: &[&str],
    at: &str,
    what: &str,
) -> Result<(), FaultsError> {
    match members.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(FaultsError::at(
            &pointer(at, key),
            format!(
                "unknown member `{key}` of `{what}` (allowed: {})",
                allowed.join(", ")
            ),
        )),
        None => Ok(()),
    }
}

pub(super) fn unsigned(value: &Value, at: &str, what: &str) -> Result<u64, FaultsError> {
    value.as_u64().ok_or_else(|| {
        FaultsError::at(
            at,
            format!("`{what}` must be a whole number from 0 up, not {value}"),
        )
    })
}

pub(super) fn pointer(at: &str, key: &str) -> String {
    let mut pointer = at.to_owned();
    crate::json::push_key(&mut pointer, key);
    pointer
}

pub(super) fn kind_of(value: &Value) -> &'static str {
    crate::json::kind_of(value)
}
