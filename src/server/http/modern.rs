//! 2026-07-28 request headers: `MCP-Protocol-Version`, `Mcp-Method` and
//! `Mcp-Name` repeat what the body says, so that intermediaries can route
//! without parsing it. A header that disagrees with the body, or a required
//! one that is missing, gets 400 with JSON-RPC error -32020, unless the
//! recording answered a request in that situation (see `post`).
//!
//! `Mcp-Param-*` headers (tool arguments annotated with `x-mcp-header` in
//! the tool definitions the handler lists) are held to the arguments the
//! same way ([`check_params`]).

use http::{HeaderMap, StatusCode};
use serde_json::Value;

use super::reply::{self, Response};
use crate::jsonrpc;
use crate::wire::params::ParamHeaders;
use crate::wire::situation;

/// HeaderMismatch: a header disagrees with the body.
pub(super) const HEADER_MISMATCH: i64 = -32020;
/// MissingRequiredClientCapability.
const MISSING_CAPABILITY: i64 = -32021;
/// UnsupportedProtocolVersion.
const UNSUPPORTED_VERSION: i64 = -32022;

/// Checks a 2026-07-28 `tools/call`'s `Mcp-Param-*` headers against its
/// arguments: 400 with -32020 when one disagrees or is missing.
pub(super) fn check_params(
    params: &ParamHeaders,
    headers: &HeaderMap,
    message: &Value,
) -> Result<(), Response> {
    if crate::protocol::declared_version(message).is_none() {
        return Ok(());
    }
    params.check(headers, message).map_err(|reason| {
        let id = jsonrpc::id(message).cloned().unwrap_or(Value::Null);
        reply::error_with_id(
            StatusCode::BAD_REQUEST,
            id,
            HEADER_MISMATCH,
            &reason.to_string(),
        )
    })
}

/// Checks one message's headers against its body (see
/// [`situation::header_mismatch`]): 400 with -32020 when they disagree.
pub(super) fn check_headers(headers: &HeaderMap, message: &Value) -> Result<(), Response> {
    match situation::header_mismatch(headers, message) {
        None => Ok(()),
        Some(reason) => {
            let id = jsonrpc::id(message).cloned().unwrap_or(Value::Null);
            Err(reply::error_with_id(
                StatusCode::BAD_REQUEST,
                id,
                HEADER_MISMATCH,
                &reason.to_string(),
            ))
        }
    }
}

/// The status for an error the engine made up itself (no recording says
/// otherwise): the spec's own header, capability and version errors are
/// HTTP 400; everything else travels in a 200.
pub(super) fn status_of_answer(answer: &[u8]) -> StatusCode {
    let code = serde_json::from_slice::<Value>(answer)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
    match code {
        Some(HEADER_MISMATCH | MISSING_CAPABILITY | UNSUPPORTED_VERSION) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use serde_json::json;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    fn call(name: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": name,
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        }})
    }

    fn status(result: Result<(), Response>) -> StatusCode {
        result.unwrap_err().status()
    }

    const VERSION: (&str, &str) = ("mcp-protocol-version", "2026-07-28");

    #[test]
    fn mismatched_or_missing_headers_get_400() {
        let cases = [
            headers(&[VERSION, ("mcp-method", "tools/list"), ("mcp-name", "echo")]),
            headers(&[VERSION, ("mcp-method", "tools/call"), ("mcp-name", "add")]),
            headers(&[VERSION, ("mcp-name", "echo")]),
            headers(&[VERSION, ("mcp-method", "tools/call")]),
            headers(&[("mcp-method", "tools/call"), ("mcp-name", "echo")]),
            headers(&[
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
            ]),
        ];
        for map in cases {
            let status = status(check_headers(&map, &call("echo")));
            assert_eq!(status, StatusCode::BAD_REQUEST, "{map:?}");
        }
        let right = headers(&[VERSION, ("mcp-method", "tools/call"), ("mcp-name", "echo")]);
        assert!(check_headers(&right, &call("echo")).is_ok());
    }

    #[test]
    fn spec_errors_made_up_by_replay_are_400() {
        let version = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x"}}"#;
        assert_eq!(status_of_answer(version), StatusCode::BAD_REQUEST);
        let miss = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}"#;
        assert_eq!(status_of_answer(miss), StatusCode::OK);
    }
}
