//! The faults overlay through the binary: each kind as a client sees it
//! over stdio, the report, determinism by seed, the dry run, and where
//! faults are refused.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::peer::Peer;
use crate::support::{initialize_demo, mcpcassette, replay, root};

fn demo() -> PathBuf {
    root().join("cassettes/demo-legacy.json")
}

/// A faults file in `dir` holding `rules`.
fn faults_file(dir: &Path, rules: Value) -> PathBuf {
    let path = dir.join("faults.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&rules).unwrap()).unwrap();
    path
}

/// A replay of the demo cassette with `rules`, reporting to `report`.
fn faulty(dir: &Path, rules: Value) -> (Peer, PathBuf) {
    let faults = faults_file(dir, rules);
    let report = dir.join("report.json");
    let mut command = replay(&demo());
    command
        .arg("--faults")
        .arg(&faults)
        .arg("--report")
        .arg(&report)
        .args(["--on-exhausted", "repeat-last"]);
    let mut peer = Peer::spawn(command);
    initialize_demo(&mut peer);
    (peer, report)
}

fn report_of(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn an_error_fault_hits_the_nth_call_and_the_retry_is_answered_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, report) = faulty(
        dir.path(),
        json!([{"name": "echo", "nth": 2, "error": {"code": -32000, "message": "rate limited", "data": {"retry": true}}}]),
    );
    let hello = json!({"message": "hello"});
    assert_eq!(peer.call_tool("echo", hello.clone()).text(), "echo: hello");
    let failed = peer.call_tool("echo", hello.clone());
    assert_eq!(
        failed.response["error"],
        json!({"code": -32000, "message": "rate limited", "data": {"retry": true}})
    );
    assert_eq!(peer.call_tool("echo", hello).text(), "echo: hello");
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("fired #0 error on tools/call echo"),
        "{stderr}"
    );
    let faults = &report_of(&report)["faults"];
    assert_eq!(faults["fired"].as_array().unwrap().len(), 1);
    assert_eq!(faults["fired"][0]["id"], failed.response["id"]);
    assert_eq!(faults["unused"], json!([]));
}

#[test]
fn a_tool_error_is_a_result_valid_for_the_tools_output_schema() {
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, _) = faulty(
        dir.path(),
        json!([{"name": "add", "tool_error": "quota exceeded"}]),
    );
    let tools = peer.request("tools/list", json!({}));
    let add = tools.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "add")
        .unwrap()
        .clone();
    let result = peer
        .call_tool("add", json!({"a": 2, "b": 40}))
        .result()
        .clone();
    assert_eq!(result["isError"], true);
    assert_eq!(result["content"][0]["text"], "quota exceeded");
    if let Some(schema) = add.get("outputSchema") {
        let validator = jsonschema::validator_for(schema).unwrap();
        assert!(validator.is_valid(&result["structuredContent"]), "{result}");
    }
    peer.finish();
}

#[test]
fn a_hung_request_ends_when_the_client_cancels_it_and_the_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, report) = faulty(dir.path(), json!([{"name": "echo", "hang": true}]));
    peer.send(&json!({"jsonrpc": "2.0", "id": 900, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello"}}}));
    peer.notify(
        "notifications/cancelled",
        json!({"requestId": 900, "reason": "timed out"}),
    );
    // Later requests are answered; the hung one never is.
    let next = peer.call_tool("add", json!({"a": 2, "b": 40}));
    assert!(
        next.before.is_empty(),
        "nothing for the hung request: {:?}",
        next.before
    );
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    let hung = &report_of(&report)["faults"]["hung"];
    assert_eq!(
        hung,
        &json!([{"fault": 0, "request": "tools/call echo", "id": 900, "cancelled": true}])
    );
}

#[test]
fn drop_notifications_and_delay_reshape_the_recorded_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, _) = faulty(
        dir.path(),
        json!([
            {"name": "count", "nth": 2, "drop_notifications": ["notifications/progress"]},
            {"name": "echo", "delay": 300},
        ]),
    );
    let arguments = json!({"steps": 3});
    let count = |peer: &mut Peer| {
        peer.request(
            "tools/call",
            json!({"name": "count", "arguments": arguments, "_meta": {"progressToken": "count-1"}}),
        )
    };
    let first = count(&mut peer);
    assert_eq!(first.with_method("notifications/progress").len(), 3);
    let second = count(&mut peer);
    assert!(
        second.with_method("notifications/progress").is_empty(),
        "{:?}",
        second.before
    );
    assert_eq!(second.text(), first.text());
    let asked = Instant::now();
    assert_eq!(
        peer.call_tool("echo", json!({"message": "hello"})).text(),
        "echo: hello"
    );
    // A lower bound only: the answer cannot come before its delay.
    assert!(asked.elapsed().as_millis() >= 300);
    peer.finish();
}

#[test]
fn a_list_change_is_announced_then_served_and_removed_tools_are_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, _) = faulty(
        dir.path(),
        json!([{"name": "echo", "tools_changed": {
            "remove": ["add"],
            "change": {"echo": {"inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}
        }}]),
    );
    let before = peer.request("tools/list", json!({}));
    let names = |list: &crate::support::peer::Exchange| -> Vec<String> {
        list.result()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(names(&before).contains(&"add".to_owned()));
    // Over stdio, the change is announced with the answer that set it off.
    let echoed = peer.call_tool("echo", json!({"message": "hello"}));
    assert_eq!(echoed.text(), "echo: hello");
    assert_eq!(
        echoed.with_method("notifications/tools/list_changed").len(),
        1,
        "{:?}",
        echoed.before
    );
    let after = peer.request("tools/list", json!({}));
    assert!(
        !names(&after).contains(&"add".to_owned()),
        "{:?}",
        names(&after)
    );
    let echo = after.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .unwrap()
        .clone();
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]));
    let gone = peer.call_tool("add", json!({"a": 2, "b": 40}));
    assert_eq!(gone.response["error"]["code"], -32602);
    assert_eq!(gone.response["error"]["message"], "Unknown tool: add");
    peer.finish();
}

#[test]
fn mutate_edits_the_recorded_result() {
    let dir = tempfile::tempdir().unwrap();
    let (mut peer, _) = faulty(
        dir.path(),
        json!([{"name": "echo", "mutate": [
            {"op": "replace", "path": "/content/0/text", "value": "echo: goodbye"},
            {"op": "add", "path": "/isError", "value": false}
        ]}]),
    );
    let result = peer
        .call_tool("echo", json!({"message": "hello"}))
        .result()
        .clone();
    assert_eq!(
        result,
        json!({"content": [{"type": "text", "text": "echo: goodbye"}], "isError": false})
    );
    peer.finish();
}

/// Runs the replay with `rules` on `lines`, then closes stdin, unless
/// `hold` (a replay that hangs up must end on its own); its stdout, stderr
/// and status.
fn raw(rules: Value, lines: &[Value], hold: bool) -> (String, String, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let faults = faults_file(dir.path(), rules);
    let mut child = replay(&demo())
        .arg("--faults")
        .arg(&faults)
        .args(["--on-exhausted", "repeat-last"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    let held = hold.then_some(stdin);
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    drop(held);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    (stdout, stderr, status.code())
}

fn init() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

fn count_request(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": "count-1"}}})
}

#[test]
fn a_disconnect_writes_n_messages_closes_stdout_and_exits_with_its_status() {
    // stdout ends while stdin is still open: the replay hung up itself.
    let (stdout, stderr, code) = raw(
        json!([{"name": "count", "disconnect": {"after": 2, "exit": 7}}]),
        &[init(), count_request(1), count_request(2)],
        true,
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines.len(),
        3,
        "the handshake and two progress notifications: {stdout}"
    );
    assert!(
        lines[1..]
            .iter()
            .all(|m| m["method"] == "notifications/progress")
    );
    assert_eq!(code, Some(7), "{stderr}");
    assert!(
        stderr.contains("the replay hung up (exit status 7)"),
        "{stderr}"
    );
}

#[test]
fn malformed_answers_are_written_as_they_say() {
    let (stdout, _, code) = raw(
        json!([{"name": "count", "nth": 1, "malformed": "not_json"}, {"name": "count", "nth": 2, "malformed": "truncated"}, {"name": "echo", "malformed": "not_jsonrpc"}]),
        &[
            init(),
            count_request(1),
            count_request(2),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello"}}}),
        ],
        false,
    );
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = stdout.lines().collect();
    // The first call's answer is not JSON at all (nothing of it recorded
    // was played); calls are answered concurrently, so the rest are looked
    // for wherever they are.
    assert!(lines[1].starts_with("Traceback"), "{stdout}");
    let parsed = |line: &&str| serde_json::from_str::<Value>(line).ok();
    assert!(
        lines
            .iter()
            .filter_map(parsed)
            .any(|m| m.get("jsonrpc").is_none() && m["id"] == 3),
        "JSON that is not JSON-RPC: {stdout}"
    );
    // The truncated one: progress as recorded, then half a response.
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("notifications/progress"))
            .count(),
        3
    );
    assert!(
        lines
            .iter()
            .any(|l| parsed(l).is_none() && l.starts_with("{\"jsonrpc\"")),
        "{stdout}"
    );
}

/// The ids of the calls a seeded rule fires on, over one replay.
fn seeded(seed: u64) -> Vec<i64> {
    let lines: Vec<Value> = std::iter::once(init())
        .chain((1..=40).map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello"}}})))
        .collect();
    let (stdout, _, _) = raw(
        json!({"seed": seed, "faults": [{"name": "echo", "probability": 0.5, "error": {"code": -32000, "message": "flaky"}}]}),
        &lines,
        false,
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m["error"]["message"] == "flaky")
        .map(|m| m["id"].as_i64().unwrap())
        .collect()
}

#[test]
fn the_same_seed_fires_the_same_faults_on_every_run_and_another_seed_others() {
    let first = seeded(42);
    assert!(!first.is_empty() && first.len() < 40, "{first:?}");
    for run in 1..20 {
        assert_eq!(seeded(42), first, "run {run}");
    }
    assert_ne!(seeded(43), first);
}

#[test]
fn check_reads_faults_files_and_dry_runs_them() {
    let dir = tempfile::tempdir().unwrap();
    let good = faults_file(
        dir.path(),
        json!([{"name": "add", "tool_error": "x"}, {"name": "nothing", "hang": true}]),
    );
    let output = mcpcassette()
        .arg("check")
        .arg(&good)
        .arg(demo())
        .arg("--faults")
        .arg(&good)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let rules = &json["faults"][0]["rules"];
    assert_eq!(rules[0]["hits"], json!([[5, "tools/call add"]]));
    assert_eq!(rules[1]["hits"], json!([]));

    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "[\n  {\"name\": \"add\"},\n  {\"method\": \"resources/read\", \"tool_error\": \"x\"}\n]\n",
    )
    .unwrap();
    let output = mcpcassette().arg("check").arg(&bad).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("needs one fault kind"), "{stdout}");
    assert!(
        stdout.contains(&format!("{}:2 at /0", bad.display())),
        "{stdout}"
    );
    // Replay refuses it at load, naming file, line and pointer.
    let output = replay(&demo())
        .arg("--faults")
        .arg(&bad)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}:2:1", bad.display())) && stderr.contains("\"/0\""),
        "{stderr}"
    );
}

#[test]
fn recording_refuses_faults() {
    let dir = tempfile::tempdir().unwrap();
    let faults = faults_file(dir.path(), json!([{"hang": true}]));
    let cassette = dir.path().join("new.json");
    let output = mcpcassette()
        .args(["run", "--mode", "once", "--cassette"])
        .arg(&cassette)
        .arg("--faults")
        .arg(&faults)
        .arg("--")
        .arg(crate::support::demo_server_path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("faults apply only when replaying"),
        "{stderr}"
    );
    assert!(!cassette.exists(), "nothing recorded");
    let output = mcpcassette()
        .args(["record", "--cassette"])
        .arg(&cassette)
        .arg("--faults")
        .arg(&faults)
        .arg("--")
        .arg(crate::support::demo_server_path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("record never applies faults"));
    assert!(!cassette.exists(), "nothing recorded");
}

#[test]
fn an_http_fault_over_stdio_is_refused_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let faults = faults_file(dir.path(), json!([{"delay": 1}, {"http": 503}]));
    let output = replay(&demo())
        .arg("--faults")
        .arg(&faults)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("rule #1") && stderr.contains("Streamable HTTP"),
        "{stderr}"
    );
}

#[test]
fn unused_fault_rules_fail_under_fail_on_unused() {
    let dir = tempfile::tempdir().unwrap();
    let faults = faults_file(dir.path(), json!([{"name": "never-called", "hang": true}]));
    let mut child = replay(&demo());
    child
        .arg("--faults")
        .arg(&faults)
        .arg("--fail-on-unused")
        .args(["--strategy", "keyed"]);
    let mut peer = Peer::spawn(child);
    initialize_demo(&mut peer);
    let (status, stderr) = peer.finish();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("never fired"), "{stderr}");
}

#[test]
fn a_fixture_is_served_with_its_own_faults() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = dir.path().join("weather.fixture.json");
    std::fs::write(
        &fixture,
        serde_json::to_vec(&json!({
            "fixture_version": 1,
            "server": {"name": "weather", "version": "1"},
            "tools": [{"name": "forecast", "inputSchema": {"type": "object"}, "result": {"content": [{"type": "text", "text": "sunny"}]}}],
            "rules": {"faults": [{"name": "forecast", "nth": 1, "tool_error": "weather service down"}]}
        }))
        .unwrap(),
    )
    .unwrap();
    let mut peer = Cli::serve(&fixture).peer();
    peer.request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}));
    peer.notify("notifications/initialized", json!({}));
    let first = peer.request("tools/call", json!({"name": "forecast", "arguments": {}}));
    assert_eq!(first.result()["isError"], true);
    let second = peer.request("tools/call", json!({"name": "forecast", "arguments": {}}));
    assert_eq!(second.text(), "sunny");
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("fired #0 tool_error on tools/call forecast"),
        "{stderr}"
    );
}

#[test]
fn what_a_fault_stood_in_for_answers_the_retry_and_is_not_unused() {
    let dir = tempfile::tempdir().unwrap();
    let faults = faults_file(
        dir.path(),
        json!([{"name": "echo", "nth": 1, "error": {"code": -32000, "message": "rate limited"}}]),
    );
    let mut command = replay(&demo());
    command.arg("--faults").arg(&faults);
    let mut peer = Peer::spawn(command);
    initialize_demo(&mut peer);
    let hello = json!({"message": "hello"});
    let failed = peer.call_tool("echo", hello.clone());
    assert_eq!(failed.response["error"]["message"], "rate limited");
    // Recorded once, and still there for the retry (no repeat-last).
    assert_eq!(peer.call_tool("echo", hello).text(), "echo: hello");
    let (status, stderr) = peer.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        !stderr.contains("#4 tools/call"),
        "echo is not unused: {stderr}"
    );
}

#[test]
fn a_modern_client_hears_of_a_list_change_on_its_listen_stream() {
    let dir = tempfile::tempdir().unwrap();
    let faults = faults_file(
        dir.path(),
        json!([{"name": "echo", "tools_changed": {"remove": ["add"]}}]),
    );
    let mut command = replay(&demo());
    command.arg("--faults").arg(&faults);
    let mut peer = Peer::spawn(command);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let discover = peer.request("server/discover", json!({"_meta": meta}));
    // A server whose tools change says so.
    assert_eq!(
        discover.result()["capabilities"]["tools"]["listChanged"],
        true
    );
    peer.send(
        &json!({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta}}),
    );
    let acknowledged = peer.recv();
    assert_eq!(
        acknowledged["method"],
        "notifications/subscriptions/acknowledged"
    );
    let echoed = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hello"}, "_meta": meta}),
    );
    assert_eq!(echoed.text(), "echo: hello");
    let changed = peer.recv();
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen"
    );
    let tools = peer.request("tools/list", json!({"_meta": meta}));
    let names: Vec<&str> = (tools.result()["tools"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"echo") && !names.contains(&"add"),
        "{names:?}"
    );
    peer.finish();
}
