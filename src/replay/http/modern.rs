//! 2026-07-28 request headers: `MCP-Protocol-Version`, `Mcp-Method` and
//! `Mcp-Name` repeat what the body says, so that intermediaries can route
//! without parsing it. A header that disagrees with the body, or a required
//! one that is missing, gets 400 with JSON-RPC error -32020.
//!
//! `Mcp-Param-*` headers (tool arguments annotated with `x-mcp-header`) are
//! not checked.

use http::{HeaderMap, StatusCode};
use serde_json::Value;

use super::guard::PROTOCOL_VERSION;
use super::reply::{self, Response};
use crate::jsonrpc;
use crate::protocol::{self, MODERN_VERSION};

/// HeaderMismatch: a header disagrees with the body.
pub(super) const HEADER_MISMATCH: i64 = -32020;
/// MissingRequiredClientCapability.
const MISSING_CAPABILITY: i64 = -32021;
/// UnsupportedProtocolVersion.
const UNSUPPORTED_VERSION: i64 = -32022;

const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";

/// Checks one message's headers against its body.
pub(super) fn check_headers(headers: &HeaderMap, message: &Value) -> Result<(), Response> {
    let Some(method) = jsonrpc::method(message) else {
        return Ok(());
    };
    let mismatch = |reason: String| {
        let id = jsonrpc::id(message).cloned().unwrap_or(Value::Null);
        reply::error_with_id(StatusCode::BAD_REQUEST, id, HEADER_MISMATCH, &reason)
    };
    let header_version = single(headers, PROTOCOL_VERSION).map_err(&mismatch)?;
    let declared = protocol::declared_version(message);
    if let Some(declared) = declared
        && header_version != Some(declared)
    {
        return Err(mismatch(format!(
            "MCP-Protocol-Version header ({}) does not match the request's _meta protocolVersion ({declared})",
            header_version.unwrap_or("missing")
        )));
    }
    // Headers are required once the client speaks a version that has them.
    let required = declared.is_some() || header_version.is_some_and(|v| v >= MODERN_VERSION);
    match single(headers, MCP_METHOD).map_err(&mismatch)? {
        None if required => return Err(mismatch("missing required Mcp-Method header".into())),
        Some(value) if value != method => {
            return Err(mismatch(format!(
                "Mcp-Method header `{value}` does not match body method `{method}`"
            )));
        }
        _ => {}
    }
    let Some(expected) = named(method, message) else {
        return Ok(());
    };
    match single(headers, MCP_NAME).map_err(&mismatch)? {
        None if required => Err(mismatch(format!(
            "missing required Mcp-Name header for `{method}`"
        ))),
        None => Ok(()),
        Some(raw) => match decode(raw) {
            Some(name) if name == expected => Ok(()),
            Some(name) => Err(mismatch(format!(
                "Mcp-Name header `{name}` does not match body value `{expected}`"
            ))),
            None => Err(mismatch("Mcp-Name header is not valid Base64".into())),
        },
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

/// The value `Mcp-Name` must repeat, for the methods that have one.
fn named<'a>(method: &str, message: &'a Value) -> Option<&'a str> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    jsonrpc::params(message)?.get(key)?.as_str()
}

/// A header that may appear at most once, as text.
fn single<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, String> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(format!("duplicate {name} header"));
    }
    value
        .to_str()
        .map(Some)
        .map_err(|_| format!("{name} header contains invalid characters"))
}

/// A header value, unwrapped from `=?base64?…?=` when a client had to
/// encode it (non-ASCII, or surrounding spaces).
fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|inner| inner.strip_suffix("?="))
    {
        Some(inner) => String::from_utf8(base64(inner)?).ok(),
        None => Some(value.to_owned()),
    }
}

/// Standard Base64 with padding.
fn base64(text: &str) -> Option<Vec<u8>> {
    fn sextet(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let groups = bytes.len() / 4;
    let mut out = Vec::with_capacity(groups * 3);
    for (index, chunk) in bytes.chunks(4).enumerate() {
        let padding = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if padding > 2 || (padding > 0 && index + 1 != groups) {
            return None;
        }
        let mut group = 0u32;
        for &c in &chunk[..4 - padding] {
            group = (group << 6) | sextet(c)?;
        }
        group <<= 6 * padding as u32;
        let [_, a, b, c] = group.to_be_bytes();
        out.extend_from_slice(&[a, b, c][..3 - padding]);
    }
    Some(out)
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
    fn matching_headers_pass() {
        let map = headers(&[VERSION, ("mcp-method", "tools/call"), ("mcp-name", "echo")]);
        assert!(check_headers(&map, &call("echo")).is_ok());
        let encoded = headers(&[
            VERSION,
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?w6ljaG8=?="),
        ]);
        assert!(check_headers(&encoded, &call("écho")).is_ok());
    }

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
    }

    #[test]
    fn notifications_without_meta_need_no_headers() {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled"});
        assert!(check_headers(&HeaderMap::new(), &note).is_ok());
        let wrong = headers(&[("mcp-method", "x")]);
        assert!(check_headers(&wrong, &note).is_err());
    }

    #[test]
    fn base64_decodes_with_padding() {
        assert_eq!(base64("aGk=").unwrap(), b"hi");
        assert_eq!(base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64("aGVsbG8h").unwrap(), b"hello!");
        assert_eq!(base64("").unwrap(), b"");
        assert!(base64("a===").is_none());
        assert!(base64("aGk").is_none());
        assert!(base64("a=Gk").is_none());
    }

    #[test]
    fn spec_errors_made_up_by_replay_are_400() {
        let version = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x"}}"#;
        assert_eq!(status_of_answer(version), StatusCode::BAD_REQUEST);
        let miss = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}"#;
        assert_eq!(status_of_answer(miss), StatusCode::OK);
    }
}
