//! Results valid for an MCP method: what a stand-in answers when nobody
//! wrote the answer, and what a hand-written case starts from.

use serde_json::{Value, json};

use super::schema::from_schema;

/// The text of a result meant to be replaced by hand.
pub(crate) const PLACEHOLDER: &str = "…";

/// A `tools/call` result for a tool with `output_schema` (its
/// `outputSchema`, if it declares one): `structuredContent` the schema
/// accepts ([`from_schema`]) and, as the specification recommends for
/// clients that read only `content`, one text item carrying the same JSON.
/// Without a schema: one text item with `text`.
pub(crate) fn tool_result(output_schema: Option<&Value>, text: &str) -> Value {
    match output_schema {
        None => json!({"content": [{"type": "text", "text": text}]}),
        Some(schema) => {
            let structured = from_schema(schema);
            let serialized = serde_json::to_string(&structured).unwrap_or_default();
            json!({
                "content": [{"type": "text", "text": serialized}],
                "structuredContent": structured,
            })
        }
    }
}

/// A result valid for `method` asked with `params`, with [`PLACEHOLDER`]
/// where the answer goes: for `tools/call`, a [`tool_result`] for the tool
/// `tools` (the recorded `tools/list` definitions) names, so it satisfies
/// the tool's `outputSchema`; for `prompts/get` one user message; for
/// `resources/read` one text content for the URI asked; empty lists and
/// completions; `{}` for methods whose result has no required fields.
/// Legacy-era shapes: a 2026-07-28 answer also needs its `resultType`.
pub(crate) fn method_result(method: &str, params: Option<&Value>, tools: &[Value]) -> Value {
    let param = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
    match method {
        "tools/call" => {
            let tool = param("name").and_then(|name| {
                tools
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            });
            tool_result(tool.and_then(|t| t.get("outputSchema")), PLACEHOLDER)
        }
        "prompts/get" => json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": PLACEHOLDER}}]
        }),
        "resources/read" => json!({
            "contents": [{"uri": param("uri").unwrap_or("about:blank"), "text": PLACEHOLDER}]
        }),
        "tools/list" => json!({"tools": []}),
        "resources/list" => json!({"resources": []}),
        "resources/templates/list" => json!({"resourceTemplates": []}),
        "prompts/list" => json!({"prompts": []}),
        "completion/complete" => json!({"completion": {"values": []}}),
        "sampling/createMessage" => json!({
            "role": "assistant",
            "content": {"type": "text", "text": PLACEHOLDER},
            "model": PLACEHOLDER,
        }),
        "elicitation/create" => json!({"action": "decline"}),
        "roots/list" => json!({"roots": []}),
        _ => json!({}),
    }
}
