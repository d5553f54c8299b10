//! How a value travels in an MCP header: set when it can be a header at
//! all, Base64-wrapped (`=?base64?…?=`) when it cannot travel bare, and
//! which member of a message `Mcp-Name` repeats.

use http::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::jsonrpc;

/// How a header value that cannot travel bare is wrapped.
const BASE64_PREFIX: &str = "=?base64?";
const BASE64_SUFFIX: &str = "?=";

/// Sets `name` to `value`; a value that cannot be a header is left out.
pub(super) fn insert(headers: &mut HeaderMap, name: &str, value: &str) {
    match (
        HeaderName::from_bytes(name.as_bytes()),
        HeaderValue::from_str(value),
    ) {
        (Ok(name), Ok(value)) => {
            headers.insert(name, value);
        }
        _ => tracing::warn!("cannot send the header {name}: {value:?}"),
    }
}

/// The value `Mcp-Name` repeats, for the methods that have one.
pub(super) fn mcp_name<'a>(method: &str, message: &'a Value) -> Option<&'a str> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    jsonrpc::params(message)?.get(key)?.as_str()
}

/// A header value as sent: bare, or `=?base64?…?=` when it has surrounding
/// spaces or tabs, characters outside visible ASCII, or looks wrapped.
pub(super) fn encode_header_value(value: &str) -> String {
    use base64::Engine as _;
    let needs = value.starts_with([' ', '\t'])
        || value.ends_with([' ', '\t'])
        || value.chars().any(|c| !(' '..='~').contains(&c))
        || (value.starts_with(BASE64_PREFIX) && value.ends_with(BASE64_SUFFIX));
    if !needs {
        return value.to_owned();
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(value);
    format!("{BASE64_PREFIX}{encoded}{BASE64_SUFFIX}")
}
