//! Redaction: secrets in a live session never reach the cassette, its
//! journal, a log line or an error message, and the redacted cassette still
//! replays. Schema breaks are warned about while recording, and forwarded
//! unchanged.

use std::process::Command;

use base64::Engine as _;
use mcpcassette::cassette;
use serde_json::{Value, json};

use crate::support::peer::Peer;
use crate::support::{
    BROKEN_SERVER, demo_server_path, initialize_demo, list_broken_tools, mcpcassette,
};

const ENV_SECRET: &str = "s3cr3t-Value-0042-xyz";
const GITHUB_TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const ACCOUNT: &str = "acct-991234";

fn record(path: &std::path::Path, extra: &[&str]) -> Command {
    let mut command = mcpcassette();
    command
        .arg("record")
        .arg("--cassette")
        .arg(path)
        .args(["--redact", "ACCOUNT=acct-[0-9]{6}"])
        .args(extra)
        .arg("--")
        .arg(demo_server_path())
        .env("DEMO_API_TOKEN", ENV_SECRET);
    command
}

/// A message that carries every kind of secret, in several encodings.
fn secret_message() -> String {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("me:{ENV_SECRET}"));
    let url_encoded = ENV_SECRET.replace('-', "%2D");
    format!(
        "env {ENV_SECRET}; url {url_encoded}; basic Basic {basic}; gh {GITHUB_TOKEN}; account {ACCOUNT}; Bearer 4f9a8b7c6d5e4f3a2b1c0d9e"
    )
}

fn assert_no_secret(what: &str, text: &str) {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("me:{ENV_SECRET}"));
    for secret in [
        ENV_SECRET,
        GITHUB_TOKEN,
        ACCOUNT,
        "4f9a8b7c6d5e4f3a2b1c0d9e",
        &basic[4..],
    ] {
        assert!(!text.contains(secret), "{what} holds `{secret}`:\n{text}");
    }
}

#[test]
fn a_session_with_secrets_records_masked_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record(&path, &[]));
    initialize_demo(&mut peer);
    let message = secret_message();
    let live = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": message}, "_meta": {"progressToken": "acct-555555"}}),
    );
    // Forwarded unchanged: the client saw the real values.
    assert_eq!(live.text(), format!("echo: {message}"));
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert_no_secret("the recorder's log", &stderr);

    let text = std::fs::read_to_string(&path).unwrap();
    assert_no_secret("the cassette", &text);
    for placeholder in [
        "[REDACTED:DEMO_API_TOKEN]",
        "[REDACTED:GITHUB_TOKEN]",
        "[REDACTED:ACCOUNT]",
        "[REDACTED:BEARER_TOKEN]",
    ] {
        assert!(text.contains(placeholder), "no {placeholder} in\n{text}");
    }
    // Protocol fields are never rewritten: the progress token matches the
    // account rule, and stays.
    let recorded = cassette::load(&path).unwrap();
    let call = recorded
        .interactions
        .iter()
        .find(|i| i.method() == "tools/call")
        .unwrap();
    let request = call.request().unwrap();
    assert_eq!(
        request["params"]["_meta"]["progressToken"],
        json!("acct-555555")
    );
    assert_eq!(request["id"], json!(2));
    assert_eq!(request["method"], json!("tools/call"));
    // The rule given on the command line is stored for replay.
    assert_eq!(recorded.rules.redact.len(), 1);

    // Replay masks the live request the same way before matching.
    let mut replayed = Peer::spawn({
        let mut command = mcpcassette();
        command
            .arg("replay")
            .arg(&path)
            .env("DEMO_API_TOKEN", ENV_SECRET);
        command
    });
    initialize_demo(&mut replayed);
    let answer = replayed.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": message}, "_meta": {"progressToken": "acct-555555"}}),
    );
    assert!(
        answer
            .text()
            .starts_with("echo: env [REDACTED:DEMO_API_TOKEN]"),
        "{}",
        answer.text()
    );
    // An unmatched request carrying a secret: the report masks it.
    let miss = replayed.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": format!("other {GITHUB_TOKEN}")}}),
    );
    assert!(miss.response.get("error").is_some());
    assert_no_secret("the miss error", &miss.response.to_string());
    let (status, stderr) = replayed.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert_no_secret("replay's log", &stderr);
    assert!(stderr.contains("[REDACTED:GITHUB_TOKEN]"), "{stderr}");
}

#[test]
fn selector_rules_mask_whole_values_and_let_other_values_match() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record(&path, &["--redact", "/params/arguments/message"]));
    initialize_demo(&mut peer);
    peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "private words"}}),
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("\"private words\""), "{text}");
    assert!(
        text.contains("\"message\": \"[REDACTED:MESSAGE]\""),
        "{text}"
    );

    // Any value at the selector matches the masked recording.
    let mut replayed = Peer::spawn({
        let mut command = mcpcassette();
        command.arg("replay").arg(&path);
        command
    });
    initialize_demo(&mut replayed);
    let answer = replayed.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "other words"}}),
    );
    assert_eq!(answer.text(), "echo: private words");
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn the_journal_never_holds_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record(&path, &[]));
    initialize_demo(&mut peer);
    peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": secret_message()}}),
    );
    let journal = cassette::journal_path(&path);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("echo: env")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the journal never held the answer"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let text = std::fs::read_to_string(&journal).unwrap();
    assert_no_secret("the journal", &text);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(peer.pid() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = peer.wait();
}

#[test]
fn error_messages_are_masked() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join(format!("{GITHUB_TOKEN}.json"));
    let output = mcpcassette().arg("replay").arg(&missing).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("[REDACTED:GITHUB_TOKEN]"), "{stderr}");
    assert_no_secret("replay's error", &stderr);

    let output = mcpcassette().arg("check").arg(&missing).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_no_secret("check's error", &String::from_utf8_lossy(&output.stdout));
}

#[test]
fn record_warns_about_schema_breaks_and_forwards_them_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut command = mcpcassette();
    command
        .arg("record")
        .arg("--cassette")
        .arg(&path)
        .args(["--", "sh", "-c", BROKEN_SERVER]);
    let (peer, list) = list_broken_tools(command);
    assert_eq!(
        list.response,
        serde_json::from_str::<Value>(
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","inputSchema":{"type":"array"}}]}}"#
        )
        .unwrap()
    );
    let (_, stderr) = peer.finish();
    assert!(
        stderr.contains("the response to `tools/list` from the server breaks the 2025-11-25 schema at /result/tools/0/inputSchema"),
        "{stderr}"
    );
}
