//! JSON-RPC 2.0 envelope rules, the same for every message and version:
//! `jsonrpc`, `method`, `id`, `params`, and `result` xor `error`.

use serde_json::{Map, Value};

use super::Violation;
use super::ViolationKind::{
    self, ErrorShape, IdType, JsonRpcVersion, MethodType, ParamsType, ResultXorError,
};
use super::walker::{found, is_integer};

/// What a message is, judged by its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `method` and `id`.
    Request,
    /// `method`, no `id`.
    Notification,
    /// `result` (and no `error`).
    Result,
    /// `error`.
    Error,
    /// Neither `method` nor `result`/`error`.
    Unknown,
}

/// What `message` (an object) is.
pub(crate) fn role(message: &Map<String, Value>) -> Role {
    if message.contains_key("method") {
        if message.contains_key("id") {
            Role::Request
        } else {
            Role::Notification
        }
    } else if message.contains_key("error") {
        Role::Error
    } else if message.contains_key("result") {
        Role::Result
    } else {
        Role::Unknown
    }
}

/// Checks the envelope of one message (not a batch), pointers under
/// `base`. `error_id_optional`: whether an error response may leave out
/// `id` (allowed from 2025-11-25; JSON-RPC 2.0 itself wants `id`, `null`
/// when unknown).
pub(crate) fn check(
    message: &Value,
    base: &str,
    error_id_optional: bool,
    out: &mut Vec<Violation>,
) {
    let mut report = Reporter { base, out };
    let Some(map) = message.as_object() else {
        return report.push(
            JsonRpcVersion,
            "",
            format!(
                "must be a JSON-RPC message object; found {}",
                found(message)
            ),
        );
    };
    match map.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => report.mismatch(JsonRpcVersion, "/jsonrpc", "\"2.0\"", other),
        None => report.missing(JsonRpcVersion, "/jsonrpc", "\"2.0\""),
    }
    let role = role(map);
    if let Some(method) = map.get("method").filter(|m| !m.is_string()) {
        report.mismatch(MethodType, "/method", "a string", method);
    }
    match map.get("id") {
        None if role == Role::Result || (role == Role::Error && !error_id_optional) => report.missing(
            IdType,
            "/id",
            "the id of the request the response answers",
        ),
        None => {}
        Some(Value::Null) if role == Role::Error => {}
        Some(Value::Null) => report.push(
            IdType,
            "/id",
            "must be a string or an integer; found null (only an error response may have a null id)"
                .to_owned(),
        ),
        Some(id) if id.is_string() || is_integer(id) => {}
        Some(id) => report.mismatch(IdType, "/id", "a string or an integer", id),
    }
    if let Some(params) = map.get("params").filter(|p| !p.is_object()) {
        report.mismatch(
            ParamsType,
            "/params",
            "an object (MCP never passes params by position)",
            params,
        );
    }
    match role {
        Role::Error if map.contains_key("result") => report.push(
            ResultXorError,
            "",
            "must have exactly one of `result` and `error`; found both".to_owned(),
        ),
        Role::Error => check_error(&map["error"], &format!("{base}/error"), report.out),
        Role::Unknown => report.push(
            ResultXorError,
            "",
            "has neither `method` (a request or notification) nor `result`/`error` (a response)"
                .to_owned(),
        ),
        Role::Request | Role::Notification | Role::Result => {}
    }
}

/// Checks the `error` object of an error response (at `pointer`).
pub(crate) fn check_error(error: &Value, pointer: &str, out: &mut Vec<Violation>) {
    let mut report = Reporter { base: pointer, out };
    let Some(error) = error.as_object() else {
        return report.mismatch(ErrorShape, "", "an object with `code` and `message`", error);
    };
    match error.get("code") {
        Some(code) if is_integer(code) => {}
        Some(code) => report.mismatch(ErrorShape, "/code", "an integer", code),
        None => report.missing(ErrorShape, "/code", "an integer"),
    }
    match error.get("message") {
        Some(Value::String(_)) => {}
        Some(message) => report.mismatch(ErrorShape, "/message", "a string", message),
        None => report.missing(ErrorShape, "/message", "a string"),
    }
}

/// Builds envelope violations under a base pointer.
struct Reporter<'a> {
    base: &'a str,
    out: &'a mut Vec<Violation>,
}

impl Reporter<'_> {
    fn push(&mut self, kind: ViolationKind, member: &str, what: String) {
        let pointer = format!("{}{member}", self.base);
        let subject = if pointer.is_empty() {
            "the message".to_owned()
        } else {
            format!("`{pointer}`")
        };
        self.out
            .push(Violation::new(kind, pointer, format!("{subject} {what}")));
    }

    fn mismatch(&mut self, kind: ViolationKind, member: &str, expects: &str, value: &Value) {
        self.push(
            kind,
            member,
            format!("must be {expects}; found {}", found(value)),
        );
    }

    fn missing(&mut self, kind: ViolationKind, member: &str, expects: &str) {
        self.push(kind, member, format!("is required ({expects})"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(message: Value, error_id_optional: bool) -> Vec<ViolationKind> {
        let mut out = Vec::new();
        check(&message, "", error_id_optional, &mut out);
        out.into_iter().map(|v| v.kind).collect()
    }

    #[test]
    fn each_envelope_rule_has_its_kind() {
        assert_eq!(
            kinds(json!({"jsonrpc": "1.0", "method": "x"}), false),
            [JsonRpcVersion]
        );
        assert_eq!(kinds(json!([1]), false), [JsonRpcVersion]);
        assert_eq!(
            kinds(json!({"jsonrpc": "2.0", "method": 1}), false),
            [MethodType]
        );
        assert_eq!(
            kinds(json!({"jsonrpc": "2.0", "id": 1.5, "method": "x"}), false),
            [IdType]
        );
        assert_eq!(
            kinds(
                json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": [1]}),
                false
            ),
            [ParamsType]
        );
        assert_eq!(
            kinds(json!({"jsonrpc": "2.0", "id": 1}), false),
            [ResultXorError]
        );
        assert_eq!(
            kinds(
                json!({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}),
                false
            ),
            [ResultXorError]
        );
        assert_eq!(
            kinds(
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}),
                false
            ),
            [ErrorShape, ErrorShape]
        );
    }

    #[test]
    fn null_ids_only_in_error_responses() {
        assert!(
            kinds(
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "m"}}),
                false
            )
            .is_empty()
        );
        assert_eq!(
            kinds(json!({"jsonrpc": "2.0", "id": null, "result": {}}), false),
            [IdType]
        );
        assert_eq!(
            kinds(
                json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
                false
            ),
            [IdType]
        );
        let no_id = json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "m"}});
        assert_eq!(kinds(no_id.clone(), false), [IdType]);
        assert!(kinds(no_id, true).is_empty());
    }
}
