//! `mcpcassette inspect`: traffic passes byte for byte, every message is
//! logged with its direction, method and latency, schema breaks are
//! flagged with `check`'s codes, and a summary ends the session; over stdio
//! and in front of an HTTP server.

use std::path::Path;
use std::process::{Command, ExitStatus};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, GetPromptRequestParams};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::http::{Served, rmcp_http_server};
use crate::support::peer::Peer;
use crate::support::{BROKEN_SERVER, demo_server_path, list_broken_tools, mcpcassette};

/// `command`, its stdout copied into `out` on its way to the client.
fn tee_stdout(out: &Path, command: &Command) -> Command {
    let mut sh = Command::new("sh");
    sh.args(["-c", r#""$@" | tee "$TEE_OUT""#, "sh"])
        .arg(command.get_program())
        .args(command.get_args())
        .env("TEE_OUT", out)
        .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))));
    for (key, value) in command.get_envs() {
        if value.is_none() {
            sh.env_remove(key);
        }
    }
    sh
}

/// The example server, its stdin copied into `input` (what it received).
fn demo_server_args(input: &Path) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        r#"tee "$0" | "$1""#.into(),
        input.display().to_string(),
        demo_server_path().display().to_string(),
    ]
}

/// One session: handshake, listings, tool calls (progress, sampling, an
/// error), a prompt.
fn session(peer: &mut Peer) {
    let init = peer.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(init.result()["serverInfo"]["name"], "mcpcassette-demo");
    peer.notify("notifications/initialized", json!({}));
    peer.request("tools/list", json!({}));
    let echo = peer.request(
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hello"}}),
    );
    assert!(echo.text().contains("hello"), "{:?}", echo.response);
    let count = peer.request(
        "tools/call",
        json!({"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": "p1"}}),
    );
    assert_eq!(count.with_method("notifications/progress").len(), 3);
    let summary = peer.request(
        "tools/call",
        json!({"name": "summarize", "arguments": {"text": "cassettes"}}),
    );
    assert_eq!(summary.with_method("sampling/createMessage").len(), 1);
    peer.request("tools/call", json!({"name": "explode", "arguments": {}}));
    peer.request(
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Alice"}}),
    );
}

/// Runs the session against `server` (a command), directly or through
/// `inspect`; returns what the client received, what the server received,
/// the exit status and stderr.
fn run_session(dir: &Path, name: &str, command: &Command) -> (Vec<u8>, ExitStatus, String) {
    let out = dir.join(format!("{name}.stdout"));
    let mut peer = Peer::spawn(tee_stdout(&out, command));
    session(&mut peer);
    let (status, stderr) = peer.finish();
    (std::fs::read(&out).unwrap(), status, stderr)
}

fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The row of the summary table for `method`, split into cells.
fn summary_row(stderr: &str, method: &str) -> Vec<String> {
    stderr
        .lines()
        .find(|line| line.split_whitespace().next() == Some(method))
        .unwrap_or_else(|| panic!("no summary row for {method}: {stderr}"))
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

#[test]
fn stdio_traffic_passes_byte_for_byte_and_every_message_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    let direct_in = dir.path().join("direct.stdin");
    let inspected_in = dir.path().join("inspected.stdin");
    let log = dir.path().join("inspect.jsonl");

    let args = demo_server_args(&direct_in);
    let mut direct = Command::new(&args[0]);
    direct.args(&args[1..]);
    let (direct_out, status, _) = run_session(dir.path(), "direct", &direct);
    assert!(status.success());

    let mut inspected = mcpcassette();
    inspected
        .arg("inspect")
        .arg("--log")
        .arg(&log)
        .arg("--")
        .args(demo_server_args(&inspected_in));
    let (inspected_out, status, stderr) = run_session(dir.path(), "inspected", &inspected);
    assert!(status.success(), "{stderr}");

    assert!(!direct_out.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&inspected_out),
        String::from_utf8_lossy(&direct_out),
        "the client received other bytes through inspect"
    );
    assert_eq!(inspected_out, direct_out);
    let direct_in = std::fs::read(&direct_in).unwrap();
    let inspected_in = std::fs::read(&inspected_in).unwrap();
    assert!(!direct_in.is_empty());
    assert_eq!(
        inspected_in, direct_in,
        "the server received other bytes through inspect"
    );

    // One log line per message, either way.
    let lines = log_lines(&log);
    let messages = direct_in
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count()
        + direct_out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count();
    assert_eq!(lines.len(), messages, "{lines:#?}");
    let shape = |line: &Value| {
        (
            line["dir"].as_str().unwrap().to_owned(),
            line["kind"].as_str().unwrap().to_owned(),
            line["method"].as_str().unwrap_or("").to_owned(),
        )
    };
    // Each direction is logged by the thread that forwards it, so the two
    // interleave as the threads run; within a direction the order is the
    // wire's.
    let tuple = |d: &str, k: &str, m: &str| (d.to_owned(), k.to_owned(), m.to_owned());
    let in_direction = |dir: &str| -> Vec<_> {
        lines
            .iter()
            .map(shape)
            .filter(|(d, _, _)| d == dir)
            .take(2)
            .collect()
    };
    assert_eq!(
        in_direction("c2s"),
        [
            tuple("c2s", "request", "initialize"),
            tuple("c2s", "notification", "notifications/initialized"),
        ]
    );
    assert_eq!(
        in_direction("s2c")[0],
        tuple("s2c", "response", "initialize")
    );
    assert_eq!(lines[0]["id"], 1);
    assert!(lines[0]["bytes"].as_u64().unwrap() > 50);
    assert!(lines[0]["t_ms"].as_f64().is_some());
    for line in &lines {
        let answered = matches!(line["kind"].as_str(), Some("response" | "error"));
        assert_eq!(
            line["latency_ms"].as_f64().is_some(),
            answered,
            "latency on responses only: {line}"
        );
        assert!(line.get("params").is_none() && line.get("result").is_none());
    }
    let all: Vec<_> = lines.iter().map(shape).collect();
    // The server's own request, answered by the client.
    assert!(all.contains(&tuple("s2c", "request", "sampling/createMessage")));
    assert!(all.contains(&tuple("c2s", "response", "sampling/createMessage")));
    assert!(all.contains(&tuple("s2c", "error", "tools/call")));
    assert!(all.contains(&tuple("s2c", "response", "prompts/get")));
    let progress = all
        .iter()
        .filter(|t| **t == tuple("s2c", "notification", "notifications/progress"))
        .count();
    assert_eq!(progress, 3);
    assert!(
        lines.iter().all(|line| line.get("violations").is_none()),
        "the demo server keeps to the schema"
    );

    // The summary, per method.
    assert!(stderr.contains("mcpcassette inspect:"), "{stderr}");
    assert_eq!(summary_row(&stderr, "tools/call")[1..3], ["4", "1"]);
    assert_eq!(summary_row(&stderr, "initialize")[1..3], ["1", "0"]);
    assert_eq!(summary_row(&stderr, "notifications/progress")[1], "3");
    assert_eq!(
        summary_row(&stderr, "sampling/createMessage")[1..3],
        ["1", "0"]
    );
    assert!(stderr.contains("schema violations: none"), "{stderr}");
    assert!(
        !stderr.contains("→ initialize"),
        "with --log, messages go to the file only: {stderr}"
    );
}

fn broken_session(log: Option<&Path>) -> (ExitStatus, String) {
    let mut command = mcpcassette();
    command.arg("inspect");
    if let Some(log) = log {
        command.arg("--log").arg(log);
    }
    command.args(["--", "sh", "-c", BROKEN_SERVER]);
    let (peer, list) = list_broken_tools(command);
    assert_eq!(
        list.result()["tools"][0]["inputSchema"],
        json!({"type": "array"}),
        "forwarded unchanged"
    );
    peer.finish()
}

#[test]
fn schema_violations_are_flagged_with_check_codes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("broken.jsonl");
    let (status, stderr) = broken_session(Some(&log));
    assert_eq!(status.code(), Some(3), "the server's status: {stderr}");
    let lines = log_lines(&log);
    let list = lines
        .iter()
        .find(|line| line["kind"] == "response" && line["method"] == "tools/list")
        .unwrap_or_else(|| panic!("{lines:#?}"));
    let violations = list["violations"].as_array().unwrap();
    assert_eq!(violations[0]["code"], "MC206", "{list}");
    assert!(
        violations[0]["pointer"]
            .as_str()
            .unwrap()
            .starts_with("/result/tools/0/inputSchema"),
        "{list}"
    );
    assert!(violations[0]["message"].is_string());
    assert_eq!(
        lines
            .iter()
            .filter(|line| line.get("violations").is_some())
            .count(),
        1
    );
    assert!(stderr.contains("MC206"), "{stderr}");
    assert!(stderr.contains("schema violations: 1 (MC206"), "{stderr}");

    // Without --log, each message is a line on stderr, violations below.
    let (status, stderr) = broken_session(None);
    assert_eq!(status.code(), Some(3));
    assert!(stderr.contains("→ initialize id=1 "), "{stderr}");
    assert!(
        stderr.contains("← response to tools/list id=2 "),
        "{stderr}"
    );
    assert!(
        stderr.contains("! MC206 at /result/tools/0/inputSchema"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------
// HTTP.

/// What rmcp's client sees of a session: server identity, tools, two
/// calls and a prompt.
async fn http_session(url: &str) -> Value {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    let client = ().serve(transport).await.expect("handshake");
    let info = client
        .peer_info()
        .map(|i| json!({"server": i.server_info, "capabilities": i.capabilities}));
    let tools = client.list_all_tools().await.expect("tools/list");
    let call = |name: &str, arguments: Value| {
        CallToolRequestParams::new(name.to_owned())
            .with_arguments(arguments.as_object().unwrap().clone())
    };
    let echo = client
        .call_tool(call("echo", json!({"message": "hello"})))
        .await
        .expect("echo");
    let add = client
        .call_tool(call("add", json!({"a": 2, "b": 40})))
        .await
        .expect("add");
    let prompt = client
        .get_prompt(
            GetPromptRequestParams::new("greet")
                .with_arguments(json!({"name": "Alice"}).as_object().unwrap().clone()),
        )
        .await
        .expect("prompts/get");
    client.cancel().await.expect("client shut down");
    json!({"info": info, "tools": tools, "echo": echo, "add": add, "prompt": prompt})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_traffic_passes_unchanged_and_every_message_is_logged() {
    let live = Served::start_capturing_stderr(rmcp_http_server());
    let direct = http_session(&live.url).await;

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let inspector = Cli::inspect()
        .arg("--log")
        .arg(&log)
        .upstream(&live.url)
        .listen()
        .capture_stderr()
        .start();
    let inspected = http_session(&inspector.url).await;
    let (status, stderr) = inspector.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    assert_eq!(direct, inspected, "the proxy changed what the client saw");
    assert_eq!(direct["echo"]["content"][0]["text"], "Echo: hello");

    let lines = log_lines(&log);
    let seen = |dir: &str, kind: &str, method: &str| {
        lines
            .iter()
            .filter(|l| l["dir"] == dir && l["kind"] == kind && l["method"] == method)
            .collect::<Vec<_>>()
    };
    assert_eq!(seen("c2s", "request", "initialize").len(), 1, "{lines:#?}");
    let answer = seen("s2c", "response", "initialize");
    assert_eq!(answer.len(), 1, "{lines:#?}");
    assert!(answer[0]["latency_ms"].as_f64().is_some());
    assert_eq!(
        seen("c2s", "notification", "notifications/initialized").len(),
        1
    );
    assert_eq!(seen("c2s", "request", "tools/list").len(), 1);
    assert_eq!(seen("s2c", "response", "tools/list").len(), 1);
    assert_eq!(seen("c2s", "request", "tools/call").len(), 2);
    assert_eq!(seen("s2c", "response", "tools/call").len(), 2);
    assert_eq!(seen("s2c", "response", "prompts/get").len(), 1);
    assert!(
        lines.iter().all(|l| l.get("violations").is_none()),
        "{lines:#?}"
    );
    assert_eq!(summary_row(&stderr, "tools/call")[1..3], ["2", "0"]);
    assert!(stderr.contains("schema violations: none"), "{stderr}");
}
