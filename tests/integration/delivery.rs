//! How replay delivers an interaction's notifications and its response:
//! the barrier between them, stdio's wait for the client to read the
//! notifications before the response is written (a pipe, and the Unix
//! socket Node spawns servers with), and `--pace recorded` over stdio.
//!
//! The guarantee is tested without timing: a client that does not read
//! must not find the response in its stdout until it has read the
//! notifications, however long it waits.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcpcassette::cassette::{self, Builder, Cassette, Direction, Transport};
use mcpcassette::replay::{BARRIER, Delivery, Engine, Pace, Sink};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::support::http_client;
use crate::support::mcpcassette;

const C2S: Direction = Direction::ClientToServer;
const S2C: Direction = Direction::ServerToClient;

fn progress(token: &str, n: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress",
           "params": {"progressToken": token, "progress": n, "total": 3}})
}

/// A legacy session: the handshake, `ping` (a plain exchange), and a
/// `tools/call` with three progress notifications `during`, timed as
/// recorded: the notifications at 10, 20, 30 ms after the request and the
/// response at `response_ms`.
fn progress_cassette(response_ms: u64) -> Cassette {
    let mut builder = Builder::new(
        "2026-01-01T00:00:00Z".into(),
        Transport::Stdio {
            command: vec!["server".into()],
            cwd: None,
        },
    );
    let ms = Duration::from_millis;
    let mut at = |direction, message: Value, t: u64| builder.observe_at(direction, message, ms(t));
    at(
        C2S,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}),
        0,
    );
    at(
        S2C,
        json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}}),
        1,
    );
    at(
        C2S,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        2,
    );
    at(C2S, json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}), 3);
    at(S2C, json!({"jsonrpc": "2.0", "id": 1, "result": {}}), 4);
    at(
        C2S,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": "rec"}}}),
        100,
    );
    for n in 1..=3 {
        at(S2C, progress("rec", n), 100 + 10 * n);
    }
    at(
        S2C,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "counted 3"}]}}),
        100 + response_ms,
    );
    builder.finish()
}

fn save(dir: &Path, cassette: &Cassette) -> PathBuf {
    let path = dir.join("progress.json");
    cassette::save(&path, cassette).unwrap();
    path
}

/// A call of `count` asking for progress under `token`.
fn call(id: u64, token: &str) -> Value {
    let mut call = http_client::call(id, "count", json!({"steps": 3}));
    call["params"]["_meta"] = json!({"progressToken": token});
    call
}

/// What the engine sends for `message`, barriers included, through a sink
/// delivering as `delivery` says.
async fn sent(engine: &Arc<Engine>, message: &Value, delivery: Delivery) -> Vec<Vec<u8>> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let sink = Sink::ordered(tx, delivery);
    let mut tasks = JoinSet::new();
    mcpcassette::server::handle_line(engine, message.to_string().as_bytes(), &sink, &mut tasks);
    while tasks.join_next().await.is_some() {}
    drop(sink);
    let mut out = Vec::new();
    while let Some(message) = rx.recv().await {
        out.push(message);
    }
    out
}

fn is_response(message: &[u8]) -> bool {
    let value: Value = serde_json::from_slice(message).unwrap();
    value.get("result").is_some()
}

#[tokio::test]
async fn a_barrier_separates_notifications_from_their_response_only_when_asked() {
    let engine = Engine::new(progress_cassette(40), Path::new("progress.json"));
    let barriers = Delivery {
        barriers: true,
        pace: Pace::Fast,
    };
    let out = sent(&engine, &call(7, "live"), barriers).await;
    assert_eq!(out.len(), 5, "{out:?}");
    assert!(out[..3].iter().all(|m| !m.is_empty() && !is_response(m)));
    assert_eq!(out[3], BARRIER, "the barrier comes after the notifications");
    assert!(is_response(&out[4]));

    // A plain exchange gets none.
    let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"});
    let out = sent(&engine, &ping, barriers).await;
    assert_eq!(out.len(), 1);
    assert!(is_response(&out[0]));

    // Nor does a call whose progress is dropped (no token asked for).
    let engine = Engine::new(progress_cassette(40), Path::new("progress.json"));
    let mut untokened = call(9, "x");
    untokened["params"].as_object_mut().unwrap().remove("_meta");
    let out = sent(&engine, &untokened, barriers).await;
    assert_eq!(out.len(), 1, "{out:?}");

    // Nor does a sink that did not ask (HTTP, an in-process duplex).
    let engine = Engine::new(progress_cassette(40), Path::new("progress.json"));
    let out = sent(&engine, &call(7, "live"), Delivery::default()).await;
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|m| !m.is_empty()));
}

#[tokio::test(start_paused = true)]
async fn recorded_pace_keeps_the_delays_of_during_and_the_response() {
    let engine = Engine::new(progress_cassette(250), Path::new("progress.json"));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let paced = Delivery {
        barriers: false,
        pace: Pace::Recorded,
    };
    let sink = Sink::ordered(tx, paced);
    let mut tasks = JoinSet::new();
    let start = tokio::time::Instant::now();
    mcpcassette::server::handle_line(
        &engine,
        call(3, "live").to_string().as_bytes(),
        &sink,
        &mut tasks,
    );
    drop(sink);
    let mut arrivals = Vec::new();
    while let Some(message) = rx.recv().await {
        arrivals.push((start.elapsed().as_millis(), is_response(&message)));
    }
    assert_eq!(
        arrivals,
        vec![(10, false), (20, false), (30, false), (250, true)],
        "each message as long after the request as recorded"
    );
    while tasks.join_next().await.is_some() {}
}

/// `mcpcassette replay CASSETTE`, its stdout going to `stdout`.
fn spawn_replay(cassette: &Path, stdout: Stdio, extra: &[&str]) -> (Child, ChildStdin) {
    let mut child = mcpcassette()
        .arg("replay")
        .args(extra)
        .arg(cassette)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

fn send(stdin: &mut ChildStdin, message: &Value) {
    stdin
        .write_all(format!("{message}\n").as_bytes())
        .and_then(|()| stdin.flush())
        .unwrap();
}

/// Reads until `buffer` holds a line containing `needle`.
fn read_until(reader: &mut impl Read, buffer: &mut Vec<u8>, needle: &str) {
    let mut chunk = [0u8; 64 * 1024];
    while !String::from_utf8_lossy(buffer).contains(needle) {
        let n = reader.read(&mut chunk).unwrap();
        assert!(
            n > 0,
            "stdout closed before {needle}: {}",
            String::from_utf8_lossy(buffer)
        );
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// The drain check over one kind of stdout: after the handshake and a
/// plain `ping`, the client sends the progress call and does not read for
/// a while; its first read then holds the three notifications and not the
/// response, which only arrives after that read.
fn the_response_waits_until_the_notifications_are_read(
    reader: &mut impl Read,
    mut child: Child,
    mut stdin: ChildStdin,
) {
    let mut seen = Vec::new();
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    read_until(reader, &mut seen, r#""id":1"#);
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    );
    read_until(reader, &mut seen, r#""id":2"#);

    send(&mut stdin, &call(3, "live-token"));
    // Not reading: replay writes the notifications and must then hold the
    // response back, however long this takes (well under its 2 s limit).
    std::thread::sleep(Duration::from_millis(300));
    let mut chunk = vec![0u8; 64 * 1024];
    let n = reader.read(&mut chunk).unwrap();
    let first = String::from_utf8_lossy(&chunk[..n]).into_owned();
    let lines: Vec<Value> = first
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "only the notifications: {first}");
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(line["method"], "notifications/progress", "{first}");
        assert_eq!(line["params"]["progressToken"], "live-token");
        assert_eq!(line["params"]["progress"], n as u64 + 1);
    }
    let mut rest = Vec::new();
    read_until(reader, &mut rest, r#""id":3"#);
    let response: Value = serde_json::from_slice(rest.trim_ascii()).unwrap();
    assert_eq!(response["result"]["content"][0]["text"], "counted 3");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn over_a_pipe_the_response_waits_until_the_client_has_read_the_notifications() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = save(dir.path(), &progress_cassette(40));
    let (mut reader, writer) = std::io::pipe().unwrap();
    // The command, and with it our copy of the writing end, is gone once
    // spawned, so the child's exit ends our reads.
    let (child, stdin) = spawn_replay(&cassette, Stdio::from(writer), &[]);
    the_response_waits_until_the_notifications_are_read(&mut reader, child, stdin);
}

#[test]
fn over_a_unix_socket_the_response_waits_until_the_client_has_read_the_notifications() {
    // Node's child_process (so the TypeScript SDK) gives a server a
    // socketpair as stdout.
    let dir = tempfile::tempdir().unwrap();
    let cassette = save(dir.path(), &progress_cassette(40));
    let (mut ours, theirs) = UnixStream::pair().unwrap();
    let (child, stdin) = spawn_replay(&cassette, Stdio::from(OwnedFd::from(theirs)), &[]);
    the_response_waits_until_the_notifications_are_read(&mut ours, child, stdin);
}

#[test]
fn stdio_replay_keeps_the_recorded_delay_under_recorded_pace() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = save(dir.path(), &progress_cassette(600));
    let (child, mut stdin) = spawn_replay(&cassette, Stdio::piped(), &["--pace", "recorded"]);
    let mut child = child;
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    read_until(&mut stdout, &mut seen, r#""id":1"#);
    let asked = Instant::now();
    send(&mut stdin, &call(2, "t"));
    read_until(&mut stdout, &mut seen, r#""id":2"#);
    let took = asked.elapsed();
    assert!(
        took >= Duration::from_millis(600),
        "the response came {took:?} after the request; recorded 600 ms"
    );
    let text = String::from_utf8_lossy(&seen).into_owned();
    assert_eq!(text.matches("notifications/progress").count(), 3, "{text}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
