//! `mcpcassette record`: transparent forwarding, pairing, exit status,
//! signals, and the journal that survives a killed recorder.

use std::io::{Read, Write};
use std::process::Stdio;

use mcpcassette::cassette;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;

use crate::support::peer::Peer;
use crate::support::process::eventually;
use crate::support::{initialize_demo, mcpcassette, record_demo, replay};

#[test]
fn forwards_bytes_unchanged_and_passes_stderr_through() {
    let dir = tempfile::tempdir().unwrap();
    let cassette_path = dir.path().join("bytes.json");
    // A server with odd spacing and key order, a non-JSON line, and stderr.
    let script = r#"read line; echo 'server log' >&2; echo 'not json at all'; printf '{ "result" : {"b":1,"a":2}, "id":1,"jsonrpc":"2.0" }\n'"#;
    let mut child = mcpcassette()
        .args(["record", "--cassette"])
        .arg(&cassette_path)
        .args(["--", "sh", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let request = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}\n";
    child.stdin.take().unwrap().write_all(request).unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        stdout,
        "not json at all\n{ \"result\" : {\"b\":1,\"a\":2}, \"id\":1,\"jsonrpc\":\"2.0\" }\n"
    );
    assert!(stderr.contains("server log"), "{stderr}");
    assert!(
        stderr.contains("not JSON"),
        "the non-JSON line is reported: {stderr}"
    );
    let recorded = cassette::load(&cassette_path).unwrap();
    assert_eq!(recorded.interactions.len(), 1);
    let response = recorded.interactions[0].response.as_ref().unwrap();
    assert_eq!(
        serde_json::to_string(&response["result"]).unwrap(),
        r#"{"b":1,"a":2}"#,
        "key order is kept"
    );
}

#[test]
fn exits_with_the_servers_status() {
    let dir = tempfile::tempdir().unwrap();
    let status = mcpcassette()
        .args(["record", "--cassette"])
        .arg(dir.path().join("c.json"))
        .args(["--", "sh", "-c", "exit 3"])
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(3));
    assert!(
        dir.path().join("c.json").exists(),
        "an empty session still writes a cassette"
    );
}

#[test]
fn a_server_that_cannot_start_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let output = mcpcassette()
        .args(["record", "--cassette"])
        .arg(dir.path().join("c.json"))
        .args(["--", "/nonexistent/server"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("cannot start server `/nonexistent/server`")
    );
}

#[test]
fn answers_out_of_order_are_paired_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record_demo(&path));
    initialize_demo(&mut peer);
    peer.send(&json!({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 300}}}));
    peer.send(&json!({"jsonrpc": "2.0", "id": "fast", "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "quick"}}}));
    let first = peer.recv();
    let second = peer.recv();
    assert_eq!(
        (first["id"].as_str(), second["id"].as_str()),
        (Some("fast"), Some("slow"))
    );
    let (status, _) = peer.finish();
    assert!(status.success());
    let recorded = cassette::load(&path).unwrap();
    let calls: Vec<_> = recorded
        .interactions
        .iter()
        .filter(|i| i.method() == "tools/call")
        .collect();
    assert_eq!(
        calls[0].request().unwrap()["id"],
        "slow",
        "interactions keep request order"
    );
    assert_eq!(
        calls[0].response.as_ref().unwrap()["result"]["content"][0]["text"],
        "slept 300 ms"
    );
    assert_eq!(
        calls[1].response.as_ref().unwrap()["result"]["content"][0]["text"],
        "echo: quick"
    );
}

#[test]
fn sigterm_is_passed_to_the_server_and_the_cassette_is_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record_demo(&path));
    initialize_demo(&mut peer);
    assert_eq!(
        peer.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "kept"}})
        )
        .text(),
        "echo: kept"
    );
    kill(Pid::from_raw(peer.pid() as i32), Signal::SIGTERM).unwrap();
    let (status, stderr) = peer.wait();
    // The demo server dies of the signal; record exits as it did.
    assert_eq!(status.code(), Some(128 + 15), "{stderr}");
    assert!(stderr.contains("passing it on to the server"), "{stderr}");
    let recorded = cassette::load(&path).unwrap();
    assert_eq!(
        recorded.interactions.len(),
        3,
        "initialize, initialized, echo"
    );
    assert!(!cassette::journal_path(&path).exists());
}

#[test]
fn a_killed_recorder_loses_no_completed_interaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let mut peer = Peer::spawn(record_demo(&path));
    initialize_demo(&mut peer);
    assert_eq!(
        peer.request(
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "saved"}})
        )
        .text(),
        "echo: saved"
    );
    let journal = cassette::journal_path(&path);
    // The recorder journals off the forwarding path; give it a moment.
    eventually("the journal to hold the echo answer", || {
        std::fs::read_to_string(&journal).is_ok_and(|j| j.contains("echo: saved"))
    });
    kill(Pid::from_raw(peer.pid() as i32), Signal::SIGKILL).unwrap();
    let _ = peer.wait();
    assert!(!path.exists(), "a killed recorder wrote no cassette");

    let mut replayed = Peer::spawn(replay(&path));
    initialize_demo(&mut replayed);
    let echo = replayed.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "saved"}}),
    );
    assert_eq!(echo.text(), "echo: saved");
    let (status, stderr) = replayed.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("recovered 3 interaction(s)"), "{stderr}");
}

#[test]
fn secrets_in_the_server_command_are_masked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    let status = mcpcassette()
        .args(["record", "--cassette"])
        .arg(&path)
        .args([
            "--",
            "sh",
            "-c",
            "cat >/dev/null",
            "sh",
            "--api-key=sk-live-0123456789abcdef",
            "--token",
            "hunter2",
        ])
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        !text.contains("sk-live-0123456789abcdef") && !text.contains("hunter2"),
        "{text}"
    );
    let recorded = cassette::load(&path).unwrap();
    let cassette::Transport::Stdio { command, .. } = recorded.transport else {
        panic!("recorded over stdio")
    };
    assert_eq!(
        command[4..],
        ["--api-key=[REDACTED]", "--token", "[REDACTED]"]
    );
}
