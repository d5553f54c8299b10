//! The notes server (examples/notes_server.rs, whose notes outlive its
//! process) run through `run --scope`, as a test-runner integration starts
//! a server its client starts more than once: one command line for every
//! process.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::peer::Peer;
use super::{demo_server_path, mcpcassette};

/// The notes server, built beside the example server.
pub fn notes_server() -> PathBuf {
    demo_server_path().with_file_name("notes_server")
}

/// `run --mode once --cassette CASSETTE --scope SCOPE -- SERVER NOTES`.
pub fn run_scoped(cassette: &Path, scope: &Path, server: &Path, notes: &Path) -> Command {
    let mut command = mcpcassette();
    command
        .args(["run", "--mode", "once", "--cassette"])
        .arg(cassette)
        .arg("--scope")
        .arg(scope)
        .arg("--")
        .arg(server)
        .arg(notes);
    command
}

/// A process started and through its handshake with the notes server.
pub fn started(command: Command) -> Peer {
    let mut peer = Peer::spawn(command);
    let init = peer.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        init.result()["serverInfo"]["name"],
        "notes-server",
        "{init:?}"
    );
    peer.notify("notifications/initialized", json!({}));
    peer
}

/// Calls `tool`: its text, or `error CODE`.
pub fn call(peer: &mut Peer, tool: &str, arguments: Value) -> String {
    let answer = peer.call_tool(tool, arguments);
    match answer.response.get("result") {
        Some(result) => result["content"][0]["text"].as_str().unwrap().to_owned(),
        None => format!("error {}", answer.response["error"]["code"]),
    }
}

/// `mcpcassette finish --scope SCOPE`, which must succeed: its JSON.
pub fn finish_scope(scope: &Path) -> Value {
    let output = mcpcassette()
        .args(["finish", "--scope"])
        .arg(scope)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}
