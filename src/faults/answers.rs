//! The answers a fault gives instead of the recorded one, each what a real
//! misbehaving server sends.

use serde_json::{Value, json};

use crate::cassette::{HttpStatus, Malformed};
use crate::jsonrpc;
use crate::server::StatusReply;

/// A `tools/call` result reporting a failed tool (`isError`), valid for
/// the tool's declared `outputSchema` when it has one (as `stub` answers).
pub(crate) fn tool_error(text: &str, tool: Option<&Value>, id: Value) -> Value {
    let mut result = json!({
        "content": [{"type": "text", "text": text}],
        "isError": true,
    });
    if let Some(schema) = tool.and_then(|t| t.get("outputSchema")) {
        result["structuredContent"] = crate::example::from_schema(schema);
    }
    jsonrpc::result_response(id, result)
}

/// What a `malformed` fault writes instead of the answer (`Truncated`
/// cuts the recorded answer, elsewhere).
pub(crate) fn malformed(kind: Malformed, id: &Value) -> Vec<u8> {
    match kind {
        Malformed::NotJsonRpc => {
            serde_json::to_vec(&json!({"id": id, "answer": "not a JSON-RPC message"}))
                .expect("JSON values serialise")
        }
        Malformed::NotJson | Malformed::Truncated => {
            b"Traceback (most recent call last): the server wrote this instead of JSON".to_vec()
        }
    }
}

/// The first half of an encoded answer: never valid JSON.
pub(crate) fn truncated(answer: &[u8]) -> Vec<u8> {
    answer[..answer.len() / 2].to_vec()
}

/// An HTTP status instead of the answer, with the JSON-RPC error body the
/// SDK servers send with it (id null: it answers no message).
pub(crate) fn status(http: &HttpStatus) -> StatusReply {
    let (body, content_type) = match &http.body {
        Some(body) => (body.clone().into_bytes(), "text/plain"),
        None => {
            let (code, message) = match http.status {
                404 => (-32001, "Session not found".to_owned()),
                status => (-32000, format!("HTTP {status}: {}", reason(status))),
            };
            let body = jsonrpc::error_response(Value::Null, code, &message, None);
            (
                serde_json::to_vec(&body).expect("JSON values serialise"),
                "application/json",
            )
        }
    };
    StatusReply {
        status: http.status,
        retry_after: http.retry_after,
        body,
        content_type,
        ends_session: http.ends_session(),
    }
}

fn reason(status: u16) -> &'static str {
    http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error")
}

/// A request in a few words: its method, and the tool, prompt or resource
/// it names.
pub(crate) fn label(method: &str, request: &Value) -> String {
    let params = jsonrpc::params(request);
    let named = params
        .and_then(|p| p.get("name").or_else(|| p.get("uri")))
        .and_then(Value::as_str);
    match named {
        Some(name) => format!("{method} {}", shorten(name)),
        None => method.to_owned(),
    }
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_error_is_valid_for_the_tools_output_schema() {
        let tool = json!({"name": "t", "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}});
        let answer = tool_error("boom", Some(&tool), json!(3));
        assert_eq!(answer["id"], 3);
        assert_eq!(answer["result"]["isError"], true);
        assert_eq!(answer["result"]["content"][0]["text"], "boom");
        assert!(answer["result"]["structuredContent"]["n"].is_i64());
        let plain = tool_error("boom", None, json!(3));
        assert!(plain["result"].get("structuredContent").is_none());
    }

    #[test]
    fn malformed_answers_are_not_what_a_client_can_read() {
        let not_json = malformed(Malformed::NotJson, &json!(1));
        assert!(serde_json::from_slice::<Value>(&not_json).is_err());
        let not_rpc: Value =
            serde_json::from_slice(&malformed(Malformed::NotJsonRpc, &json!(1))).unwrap();
        assert!(jsonrpc::classify(&not_rpc).is_err());
        let whole = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
        assert!(serde_json::from_slice::<Value>(&truncated(whole)).is_err());
    }

    #[test]
    fn a_404_ends_the_session_with_the_sdk_servers_body() {
        let reply = status(&HttpStatus {
            status: 404,
            retry_after: None,
            body: None,
        });
        assert!(reply.ends_session);
        let body: Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(body["error"]["code"], -32001);
        let reply = status(&HttpStatus {
            status: 429,
            retry_after: Some(2),
            body: None,
        });
        assert!(!reply.ends_session);
        assert_eq!(reply.retry_after, Some(2));
    }
}
