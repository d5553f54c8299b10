//! A small legacy-era MCP server over stdio that, like several reference
//! servers, asks the client for its roots on its own right after
//! `notifications/initialized` (when the client declared the `roots`
//! capability), then logs how many it got. Unlike them it does so at once
//! and in a fixed order, so tests of session traffic are deterministic.
//!
//! Tools: `echo` (`{"message": string}` → `echo: <message>`).

use std::io::{BufRead, Write};

use serde_json::{Value, json};

fn main() {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut send = |message: Value| {
        let _ = writeln!(stdout, "{message}");
        let _ = stdout.flush();
    };
    let mut wants_roots = false;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message.get("id").cloned();
        match (message["method"].as_str(), id) {
            (Some("initialize"), Some(id)) => {
                wants_roots = message.pointer("/params/capabilities/roots").is_some();
                send(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": message["params"]["protocolVersion"].as_str().unwrap_or("2025-11-25"),
                    "capabilities": {"tools": {}, "logging": {}},
                    "serverInfo": {"name": "roots-server", "version": "1.0.0"},
                }}));
            }
            (Some("notifications/initialized"), None) if wants_roots => {
                send(json!({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"}));
            }
            (Some("tools/list"), Some(id)) => send(json!({"jsonrpc": "2.0", "id": id, "result": {
                "tools": [{"name": "echo", "inputSchema": {"type": "object",
                    "properties": {"message": {"type": "string"}}}}],
            }})),
            (Some("tools/call"), Some(id)) => {
                let text = format!(
                    "echo: {}",
                    message
                        .pointer("/params/arguments/message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                );
                send(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": text}],
                }}));
            }
            (Some("ping"), Some(id)) => send(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
            (Some(method), Some(id)) => send(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("Method not found: {method}")}})),
            (None, Some(id)) if id == "roots-1" => {
                let count = message
                    .pointer("/result/roots")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                send(
                    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                        "level": "info", "logger": "roots-server", "data": format!("roots: {count}"),
                    }}),
                );
            }
            _ => {}
        }
    }
}
