//! A small legacy-era MCP server over stdio whose state outlives its
//! process, as `@modelcontextprotocol/server-memory`'s does: notes kept in
//! a file (the first argument), so a process started later reads what an
//! earlier one wrote. Tests of clients that start a server several times
//! in one test (agent frameworks do) record and replay it.
//!
//! Tools: `remember` (`{"note": string}` → `remembered <n> note(s)`),
//! `recall` (`{}` → the notes, one per line, or `nothing yet`), and
//! `slow` (`{"ms": integer, "tag": string}`: logs `<tag> started`, then
//! answers `<tag> done` after `ms` milliseconds, on a thread of its own, so
//! calls run at the same time).

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

fn main() {
    let notes = PathBuf::from(std::env::args().nth(1).expect("usage: notes_server FILE"));
    let stdout = Arc::new(Mutex::new(std::io::stdout()));
    let send = {
        let stdout = Arc::clone(&stdout);
        move |message: Value| {
            let mut out = stdout.lock().unwrap_or_else(|p| p.into_inner());
            let _ = writeln!(out, "{message}");
            let _ = out.flush();
        }
    };
    let mut threads = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id").cloned() else {
            continue;
        };
        let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        let text = |text: String| answer(json!({"content": [{"type": "text", "text": text}]}));
        let arguments = &message["params"]["arguments"];
        match message["method"].as_str().unwrap_or_default() {
            "initialize" => send(answer(json!({
                "protocolVersion": message["params"]["protocolVersion"].as_str().unwrap_or("2025-06-18"),
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "notes-server", "version": "1.0.0"},
            }))),
            "tools/list" => send(answer(json!({"tools": [
                {"name": "remember", "inputSchema": {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]}},
                {"name": "recall", "inputSchema": {"type": "object", "properties": {}}},
                {"name": "slow", "inputSchema": {"type": "object", "properties": {"ms": {"type": "integer"}, "tag": {"type": "string"}}}},
            ]}))),
            "tools/call" => match message["params"]["name"].as_str().unwrap_or_default() {
                "remember" => {
                    let mut file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&notes)
                        .expect("the notes file opens");
                    let note = arguments["note"].as_str().unwrap_or_default();
                    let _ = writeln!(file, "{note}");
                    let count = read(&notes).lines().count();
                    send(text(format!("remembered {count} note(s)")));
                }
                "recall" => {
                    let all = read(&notes);
                    send(text(match all.is_empty() {
                        true => "nothing yet".to_owned(),
                        false => all.trim_end().to_owned(),
                    }));
                }
                "slow" => {
                    let tag = arguments["tag"].as_str().unwrap_or_default().to_owned();
                    let ms = arguments["ms"].as_u64().unwrap_or(0);
                    send(json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "data": format!("{tag} started")}}));
                    let done = text(format!("{tag} done"));
                    let send = send.clone();
                    threads.push(std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(ms));
                        send(done);
                    }));
                }
                other => send(json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32602, "message": format!("Unknown tool: {other}")}})),
            },
            "ping" => send(answer(json!({}))),
            method => send(json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("Method not found: {method}")}})),
        }
    }
    for thread in threads {
        let _ = thread.join();
    }
}

/// The notes file's text, empty when there is none yet.
fn read(notes: &PathBuf) -> String {
    std::fs::read_to_string(notes).unwrap_or_default()
}
