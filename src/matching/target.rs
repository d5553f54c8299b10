//! What a request is addressed to: the tool, prompt or resource it names.
//!
//! A recorded request for another tool is never "the same request with a
//! changed argument", so reports rank and label by the target first, and
//! never suggest ignoring an argument to make another tool's recording
//! answer.

use serde_json::Value;

/// The params field that names a request's target, and what it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Target {
    /// The field under `params` (`name`, `uri`).
    pub field: &'static str,
    /// What it names, for messages (`tool`, `prompt`, `resource`).
    pub kind: &'static str,
}

impl Target {
    /// The target field of `method`'s requests, if it has one.
    pub(crate) fn of(method: &str) -> Option<Target> {
        let (field, kind) = match method {
            "tools/call" => ("name", "tool"),
            "prompts/get" => ("name", "prompt"),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                ("uri", "resource")
            }
            _ => return None,
        };
        Some(Target { field, kind })
    }

    /// The JSON pointer of the field in a message (`/params/name`).
    pub(crate) fn pointer(&self) -> String {
        format!("/params/{}", self.field)
    }

    /// The target named in `params`, if any.
    pub(crate) fn named_in<'a>(&self, params: Option<&'a Value>) -> Option<&'a Value> {
        params?.get(self.field)
    }
}

/// Whether two requests of `method` name the same target (true for methods
/// without one).
pub(crate) fn same_target(method: &str, a: Option<&Value>, b: Option<&Value>) -> bool {
    Target::of(method).is_none_or(|t| t.named_in(a) == t.named_in(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_uris_are_targets() {
        let a = json!({"name": "echo", "arguments": {"x": 1}});
        let b = json!({"name": "echo", "arguments": {"x": 2}});
        let c = json!({"name": "ecko", "arguments": {"x": 1}});
        assert!(same_target("tools/call", Some(&a), Some(&b)));
        assert!(!same_target("tools/call", Some(&a), Some(&c)));
        assert!(same_target("tools/list", Some(&a), Some(&c)));
        let r = |uri: &str| json!({"uri": uri});
        assert!(!same_target(
            "resources/read",
            Some(&r("file:///a")),
            Some(&r("file:///b"))
        ));
        assert_eq!(Target::of("prompts/get").unwrap().pointer(), "/params/name");
    }
}
