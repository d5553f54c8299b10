//! JSON-RPC 2.0 message shapes, as MCP uses them.
//!
//! Messages stay `serde_json::Value`s so that what we record is exactly what
//! was sent (key order included, thanks to `preserve_order`); this module only
//! classifies them, builds the few messages we originate ourselves, and reads
//! error objects ([`RpcError`]).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value, json};

/// JSON-RPC's own error codes.
pub mod codes {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a JSON-RPC request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The server does not know the method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The params are wrong for the method.
    pub const INVALID_PARAMS: i64 = -32602;
    /// MCP 2026-07-28: the requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A JSON-RPC error object, `{"code", "message", "data"?}`: what a fixture
/// or a mock answers with, what a test client gets back. One type for
/// every error we read or write, so they serialise alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct RpcError {
    /// The error code (see [`codes`]).
    pub code: i64,
    /// The one-line description.
    pub message: String,
    /// Anything else the error carries. Present, even as `null`, it is
    /// kept and written back (a fixture's `"data": null` is answered as
    /// written); absent, it is left out.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub data: Option<Value>,
}

/// A member that is there, `null` included (plain `Option` reads `null`
/// as absent).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl RpcError {
    /// An error with no data.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error carrying `data`.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// A well-formed error object (an integer `code`, a string `message`;
    /// other members ignored), or `None`: for checking what someone wrote.
    pub fn from_value(error: &Value) -> Option<RpcError> {
        error.as_object()?;
        RpcError::deserialize(error).ok()
    }

    /// The error object as it goes on the wire (`data` left out when
    /// `None`).
    pub fn to_value(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), self.code.into());
        error.insert("message".into(), self.message.clone().into());
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        Value::Object(error)
    }

    /// The error response to request `id`.
    pub fn response(&self, id: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "error": self.to_value()})
    }
}

/// The `error` of a response, if it has one, read as far as it goes: a
/// peer's error is reported, not judged, so a missing or mistyped `code`
/// reads as 0 and `message` as empty (see [`RpcError::from_value`] to
/// judge one).
pub(crate) fn error_of(response: &Value) -> Option<RpcError> {
    let error = response.get("error")?;
    Some(RpcError {
        code: error
            .get("code")
            .and_then(Value::as_i64)
            .unwrap_or_default(),
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        data: error.get("data").cloned(),
    })
}

/// What a JSON value is, as a JSON-RPC message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Has `method` and `id`: expects an answer.
    Request,
    /// Has `method` and no `id`.
    Notification,
    /// Has `id` and `result` or `error`.
    Response,
}

/// Why a value is not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Invalid {
    /// Not a JSON object.
    #[error("a JSON-RPC message must be a JSON object")]
    NotAnObject,
    /// `jsonrpc` missing or not `"2.0"`.
    #[error("`jsonrpc` must be the string \"2.0\"")]
    BadVersion,
    /// `method` not a string.
    #[error("`method` must be a string")]
    BadMethod,
    /// `id` neither a string nor a number.
    #[error("`id` must be a string or a number")]
    BadId,
    /// `params` neither an object nor an array.
    #[error("`params` must be an object or an array")]
    BadParams,
    /// A response with both or neither of `result` and `error`.
    #[error("a response needs exactly one of `result` and `error`")]
    BadResponse,
    /// Neither a request, a notification nor a response.
    #[error("the message has neither `method` nor `result`/`error`")]
    Unrecognised,
}

/// Classifies `value` as a JSON-RPC 2.0 message, checking the envelope.
pub(crate) fn classify(value: &Value) -> Result<Kind, Invalid> {
    let obj = value.as_object().ok_or(Invalid::NotAnObject)?;
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Invalid::BadVersion);
    }
    let id = obj.get("id");
    if let Some(id) = id
        && !(id.is_string() || id.is_number())
    {
        // `null` ids are only legal on error responses to unparsable requests.
        let null_error = id.is_null() && obj.contains_key("error");
        if !null_error {
            return Err(Invalid::BadId);
        }
    }
    if let Some(method) = obj.get("method") {
        if !method.is_string() {
            return Err(Invalid::BadMethod);
        }
        if let Some(params) = obj.get("params")
            && !(params.is_object() || params.is_array())
        {
            return Err(Invalid::BadParams);
        }
        return Ok(if id.is_some() {
            Kind::Request
        } else {
            Kind::Notification
        });
    }
    match (obj.contains_key("result"), obj.contains_key("error")) {
        (true, false) | (false, true) if id.is_some() => Ok(Kind::Response),
        (false, false) => Err(Invalid::Unrecognised),
        _ => Err(Invalid::BadResponse),
    }
}

/// The `method` of a request or notification.
pub(crate) fn method(value: &Value) -> Option<&str> {
    value.get("method").and_then(Value::as_str)
}

/// The `params` of a request or notification.
pub(crate) fn params(value: &Value) -> Option<&Value> {
    value.get("params")
}

/// The `id` of a request or response.
pub(crate) fn id(value: &Value) -> Option<&Value> {
    value.get("id")
}

/// An error response with a `null` id: a rejection of a request the
/// server could not (or would not) read. Over HTTP it answers the request
/// of the POST it came back on.
pub(crate) fn is_rejection(message: &Value) -> bool {
    classify(message) == Ok(Kind::Response) && id(message).is_some_and(Value::is_null)
}

/// A hashable spelling of a JSON-RPC id: `1` and `"1"` stay distinct.
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

/// `params._meta.progressToken`, if the request asked for progress.
pub(crate) fn progress_token(request: &Value) -> Option<&Value> {
    request.get("params")?.get("_meta")?.get("progressToken")
}

/// A successful response.
pub(crate) fn result_response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response; `data` is left out when `None`.
pub(crate) fn error_response(id: Value, code: i64, message: &str, data: Option<Value>) -> Value {
    RpcError {
        code,
        message: message.to_owned(),
        data,
    }
    .response(id)
}

/// Encoded messages joined into one JSON-RPC batch array.
pub(crate) fn batch(encoded: &[Vec<u8>]) -> Vec<u8> {
    let mut array = b"[".to_vec();
    array.extend_from_slice(&encoded.join(&b","[..]));
    array.push(b']');
    array
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_the_three_kinds() {
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let resp = json!({"jsonrpc": "2.0", "id": "a", "result": {}});
        assert_eq!(classify(&req), Ok(Kind::Request));
        assert_eq!(classify(&note), Ok(Kind::Notification));
        assert_eq!(classify(&resp), Ok(Kind::Response));
    }

    #[test]
    fn rejects_broken_envelopes() {
        let cases = [
            (json!([1]), Invalid::NotAnObject),
            (json!({"id": 1, "method": "x"}), Invalid::BadVersion),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": 3}),
                Invalid::BadMethod,
            ),
            (
                json!({"jsonrpc": "2.0", "id": true, "method": "x"}),
                Invalid::BadId,
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": "x", "params": 3}),
                Invalid::BadParams,
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}}),
                Invalid::BadResponse,
            ),
            (json!({"jsonrpc": "2.0", "id": 1}), Invalid::Unrecognised),
        ];
        for (value, want) in cases {
            assert_eq!(classify(&value), Err(want), "{value}");
        }
    }

    #[test]
    fn batches_join_encoded_messages() {
        assert_eq!(
            batch(&[b"{\"a\":1}".to_vec(), b"2".to_vec()]),
            b"[{\"a\":1},2]"
        );
    }

    #[test]
    fn error_objects_read_and_write_alike() {
        let written = json!({"message": "m", "code": -32000, "data": null, "extra": 1});
        let error = RpcError::from_value(&written).unwrap();
        assert_eq!(error, RpcError::new(-32000, "m").with_data(Value::Null));
        assert_eq!(error.to_string(), "-32000: m");
        assert_eq!(
            error.to_value(),
            json!({"code": -32000, "message": "m", "data": null})
        );
        assert_eq!(serde_json::to_value(&error).unwrap(), error.to_value());
        let plain: RpcError = serde_json::from_value(json!({"code": 1, "message": "x"})).unwrap();
        assert_eq!(plain.data, None);
        assert_eq!(plain.to_value(), json!({"code": 1, "message": "x"}));
        for bad in [
            json!({"code": "1", "message": "x"}),
            json!({"code": 1.5, "message": "x"}),
            json!({"code": 1}),
            json!([1, "x"]),
        ] {
            assert_eq!(RpcError::from_value(&bad), None, "{bad}");
        }
        assert_eq!(
            error_response(json!(7), -32601, "no", None),
            RpcError::new(-32601, "no").response(json!(7))
        );
    }

    #[test]
    fn error_of_reads_whatever_a_peer_sent() {
        let response =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 5, "message": "m", "data": [1]}});
        assert_eq!(
            error_of(&response),
            Some(RpcError::new(5, "m").with_data(json!([1])))
        );
        let sloppy = json!({"jsonrpc": "2.0", "id": 1, "error": {"message": 3}});
        assert_eq!(error_of(&sloppy), Some(RpcError::new(0, "")));
        assert_eq!(
            error_of(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            None
        );
    }

    #[test]
    fn null_id_is_allowed_only_on_errors() {
        let err = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}});
        assert_eq!(classify(&err), Ok(Kind::Response));
        let req = json!({"jsonrpc": "2.0", "id": null, "method": "x"});
        assert_eq!(classify(&req), Err(Invalid::BadId));
    }
}
