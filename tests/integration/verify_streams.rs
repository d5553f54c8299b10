//! `verify` over Streamable HTTP against a live server in this process:
//! it compares order only where the protocol fixes it, within one
//! request's stream and within the server's own stream (GET), never across
//! them; and it hints at the `normalize` rule for values that change on
//! every run.
//!
//! The order tests: The live server here (in this process,
//! on loopback) sends a tool call's progress on the call's SSE answer and
//! its log messages on the GET stream, as the TypeScript SDK's server does,
//! interleaved otherwise than the recording; `verify` finds no drift. The
//! same server with two progress notifications (or two log messages)
//! swapped drifts.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::Output;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::StreamExt;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use mcpcassette::cassette::{self, Builder, Cassette, Direction, HttpEndpointBehaviour, Transport};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::loopback::{self, Body};
use crate::support::mcpcassette;

/// How the live server sends the `work` call's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Live {
    /// Logs on the GET stream first, then progress on the POST stream.
    LogsFirst,
    /// Each progress notification, then a log: as recorded.
    AsRecorded,
    /// Progress and the answer, then the logs: they may arrive while the
    /// next request is in flight.
    LogsAfterAnswer,
    /// Progress 2 before progress 1 on the POST stream.
    ProgressSwapped,
    /// Log "b" before log "a" on the GET stream.
    LogsSwapped,
}

fn progress(n: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress",
           "params": {"progressToken": "work-1", "progress": n, "total": 2}})
}

fn log(text: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
           "params": {"level": "info", "logger": "work", "data": text}})
}

fn work_request(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "work", "arguments": {}, "_meta": {"progressToken": "work-1"}}})
}

const WORK_RESULT: &str = "worked";

fn initialize_result() -> Value {
    json!({"protocolVersion": "2025-11-25",
           "capabilities": {"tools": {}, "logging": {}},
           "serverInfo": {"name": "streams", "version": "1"}})
}

fn tools_result() -> Value {
    json!({"tools": [{"name": "work", "inputSchema": {"type": "object"}}]})
}

/// The `clock` tool's answer: the time and a request id, in text and
/// structured.
fn clock(at: &str, request: &str) -> Value {
    json!({"content": [{"type": "text", "text": format!("now: {at}")}],
           "structuredContent": {"at": at, "request": request}})
}

fn now() -> String {
    cassette::now_rfc3339()
}

/// A UUID-shaped id that differs on every call.
fn fresh_uuid() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let hex = format!("{nanos:032x}");
    format!(
        "{}-{}-4{}-8{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32]
    )
}

/// The server's own stream: messages wait until a GET takes them.
#[derive(Default)]
struct ServerStream {
    queued: VecDeque<Bytes>,
    live: Option<mpsc::UnboundedSender<Bytes>>,
}

impl ServerStream {
    fn push(&mut self, message: &Value) {
        let event = sse(message);
        match &self.live {
            Some(live) if live.send(event.clone()).is_ok() => {}
            _ => self.queued.push_back(event),
        }
    }
}

fn sse(message: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {message}\n\n"))
}

fn json_reply(status: StatusCode, message: Option<&Value>) -> Response<Body> {
    let mut response = Response::builder()
        .status(status)
        .header("mcp-session-id", "s-1");
    let body = match message {
        Some(message) => {
            response = response.header("content-type", "application/json");
            Bytes::from(message.to_string())
        }
        None => Bytes::new(),
    };
    response.body(Full::new(body).boxed()).unwrap()
}

fn sse_reply(rx: mpsc::UnboundedReceiver<Bytes>) -> Response<Body> {
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|event| (event, rx))
    });
    let frames = events.map(|bytes| Ok::<_, Infallible>(Frame::data(bytes)));
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("mcp-session-id", "s-1")
        .body(BodyExt::boxed(StreamBody::new(frames)))
        .unwrap()
}

async fn handle(
    live: Live,
    stream: Arc<Mutex<ServerStream>>,
    request: Request<Incoming>,
) -> Response<Body> {
    match *request.method() {
        Method::GET => {
            let (tx, rx) = mpsc::unbounded_channel();
            let mut stream = stream.lock().unwrap();
            for event in stream.queued.drain(..) {
                let _ = tx.send(event);
            }
            stream.live = Some(tx);
            return sse_reply(rx);
        }
        Method::DELETE => return json_reply(StatusCode::OK, None),
        _ => {}
    }
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&body).unwrap();
    let id = message["id"].clone();
    let result = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match message["method"].as_str() {
        Some("initialize") => json_reply(StatusCode::OK, Some(&result(initialize_result()))),
        Some("tools/list") => json_reply(StatusCode::OK, Some(&result(tools_result()))),
        Some("tools/call") if message["params"]["name"] == "clock" => {
            json_reply(StatusCode::OK, Some(&result(clock(&now(), &fresh_uuid()))))
        }
        Some("tools/call") => {
            let (tx, rx) = mpsc::unbounded_channel();
            let post = |message: Value| {
                let _ = tx.send(sse(&message));
            };
            let get = |text: &str| stream.lock().unwrap().push(&log(text));
            match live {
                Live::LogsFirst => {
                    get("a");
                    get("b");
                    post(progress(1));
                    post(progress(2));
                }
                Live::AsRecorded => {
                    post(progress(1));
                    get("a");
                    post(progress(2));
                    get("b");
                }
                Live::ProgressSwapped => {
                    get("a");
                    get("b");
                    post(progress(2));
                    post(progress(1));
                }
                Live::LogsSwapped => {
                    get("b");
                    get("a");
                    post(progress(1));
                    post(progress(2));
                }
                Live::LogsAfterAnswer => {}
            }
            let text = json!({"content": [{"type": "text", "text": WORK_RESULT}]});
            if live == Live::LogsAfterAnswer {
                post(progress(1));
                post(progress(2));
                post(result(text));
                get("a");
                get("b");
            } else {
                post(result(text));
            }
            sse_reply(rx)
        }
        // Notifications.
        _ => json_reply(StatusCode::ACCEPTED, None),
    }
}

/// Serves on a loopback port until the returned runtime is dropped.
fn serve(live: Live) -> (tokio::runtime::Runtime, SocketAddr) {
    let stream = Arc::new(Mutex::new(ServerStream::default()));
    loopback::serve(move |request| handle(live, Arc::clone(&stream), request))
}

/// The recording: progress and logs interleaved, one after the other; the
/// URL is the live server's, so `verify` needs no `--url`.
fn recording(url: &str) -> Cassette {
    use Direction::{ClientToServer as C, ServerToClient as S};
    let transport = Transport::StreamableHttp {
        url: url.to_owned(),
        endpoint: "/mcp".into(),
        behaviour: HttpEndpointBehaviour::default(),
    };
    let mut builder = Builder::new("2026-12-01T00:00:00Z".into(), transport);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "verify-streams", "version": "1"}}});
    let traffic = [
        (C, initialize),
        (
            S,
            json!({"jsonrpc": "2.0", "id": 0, "result": initialize_result()}),
        ),
        (
            C,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
        (C, work_request(1)),
        (S, progress(1)),
        (S, log("a")),
        (S, progress(2)),
        (S, log("b")),
        (
            S,
            json!({"jsonrpc": "2.0", "id": 1, "result": {
                "content": [{"type": "text", "text": WORK_RESULT}]}}),
        ),
        (
            C,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
        ),
        (
            S,
            json!({"jsonrpc": "2.0", "id": 2, "result": tools_result()}),
        ),
        // A last notification, after which verify waits for late traffic.
        (
            C,
            json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
        ),
    ];
    for (direction, message) in traffic {
        builder.observe(direction, message);
    }
    builder.finish()
}

/// `mcpcassette verify CASSETTE --json` against a server sending as `live`.
fn verify(live: Live) -> (Output, Value) {
    verify_recorded_at(live, None)
}

/// The same, the cassette naming `recorded_url` (default: the live one)
/// and `--url` giving the live one.
fn verify_recorded_at(live: Live, recorded_url: Option<&str>) -> (Output, Value) {
    let (server, addr) = serve(live);
    let url = format!("http://{addr}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("streams.json");
    let recorded = recording(recorded_url.unwrap_or(&url));
    cassette::save(&path, &recorded).unwrap();
    let mut command = mcpcassette();
    command
        .arg("verify")
        .arg(&path)
        .arg("--json")
        .env("MCPCASSETTE_UPDATE", "no");
    if recorded_url.is_some() {
        command.args(["--url", &url]);
    }
    let output = command.output().unwrap();
    drop(server);
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{live:?}: not JSON ({e}): {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output, report)
}

fn work_drift(report: &Value) -> &Value {
    &report["report"]["interactions"][2]
}

#[test]
fn order_across_the_get_and_post_streams_is_not_drift() {
    for live in [Live::LogsFirst, Live::AsRecorded, Live::LogsAfterAnswer] {
        let (output, report) = verify(live);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{live:?}: {report:#}\n{stderr}"
        );
        assert_eq!(report["drift"], false);
        let work = work_drift(&report);
        assert_eq!(work["label"], "tools/call work");
        assert_eq!(work["notifications"]["same"], 4, "{live:?}: {work:#}");
        assert!(
            stderr.contains("verifying against the recorded URL http://127.0.0.1:"),
            "the URL comes from the cassette: {stderr}"
        );
    }
}

#[test]
fn order_within_one_stream_is_drift() {
    for live in [Live::ProgressSwapped, Live::LogsSwapped] {
        let (output, report) = verify(live);
        assert_eq!(output.status.code(), Some(1), "{live:?}: {report:#}");
        let work = work_drift(&report);
        assert_eq!(work["status"], "changed", "{live:?}: {work:#}");
        assert!(
            work["notifications"]["changed"].as_u64() >= Some(2),
            "{work:#}"
        );
        // Only the work call drifted.
        let drifted: Vec<&Value> = report["report"]["interactions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["status"] != "same")
            .collect();
        assert_eq!(drifted.len(), 1, "{live:?}: {drifted:#?}");
    }
}

#[test]
fn url_overrides_the_recorded_one() {
    // Nothing listens at the recorded URL (port 9, discard).
    let (output, report) = verify_recorded_at(Live::AsRecorded, Some("http://127.0.0.1:9/mcp"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{report:#}\n{stderr}");
    assert!(!stderr.contains("recorded URL"), "{stderr}");
}

/// A recording of one `clock` call, at an earlier time and with another id.
fn clock_recording(url: &str) -> Cassette {
    use Direction::{ClientToServer as C, ServerToClient as S};
    let transport = Transport::StreamableHttp {
        url: url.to_owned(),
        endpoint: "/mcp".into(),
        behaviour: HttpEndpointBehaviour::default(),
    };
    let mut builder = Builder::new("2026-11-30T10:00:00Z".into(), transport);
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "verify-hints", "version": "1"}}});
    let recorded = clock(
        "2026-11-30T10:00:00Z",
        "0b6a3c57-8d1e-4f2a-9c3b-1e2d3f4a5b6c",
    );
    let traffic = [
        (C, initialize),
        (
            S,
            json!({"jsonrpc": "2.0", "id": 0, "result": initialize_result()}),
        ),
        (
            C,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
        (
            C,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "clock", "arguments": {}}}),
        ),
        (S, json!({"jsonrpc": "2.0", "id": 1, "result": recorded})),
    ];
    for (direction, message) in traffic {
        builder.observe(direction, message);
    }
    builder.finish()
}

#[test]
fn volatile_values_get_the_normalize_rule_that_absorbs_them() {
    let (server, addr) = serve(Live::AsRecorded);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clock.json");
    let mut recorded = clock_recording(&format!("http://{addr}/mcp"));
    cassette::save(&path, &recorded).unwrap();
    let verify = |json: bool| {
        let mut command = mcpcassette();
        command
            .arg("verify")
            .arg(&path)
            .env("MCPCASSETTE_UPDATE", "no")
            .env("NO_COLOR", "1");
        if json {
            command.arg("--json");
        }
        command.output().unwrap()
    };

    let output = verify(false);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    for expected in [
        r#"hint: /result/structuredContent/at looks like a timestamp that changes every run; to ignore it, add to "normalize" in the cassette's "rules": {"selector":"/result/structuredContent/at","replacement":"[timestamp]"}"#,
        r#"hint: /result/structuredContent/request looks like a UUID"#,
        r#"hint: /result/content/*/text looks like a timestamp"#,
    ] {
        assert!(text.contains(expected), "no {expected:?} in:\n{text}");
    }

    // The rules suggested, added to the cassette, absorb the drift.
    let output = verify(true);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let hints = report["report"]["interactions"][2]["normalize_hints"]
        .as_array()
        .unwrap_or_else(|| panic!("no hints in {report:#}"));
    assert_eq!(hints.len(), 3, "{hints:#?}");
    for hint in hints {
        recorded
            .rules
            .normalize
            .push(serde_json::from_value(hint["rule"].clone()).unwrap());
    }
    cassette::save(&path, &recorded).unwrap();
    let output = verify(false);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("/result/structuredContent/at → [timestamp]: 1 recorded, 1 live"),
        "{text}"
    );
    drop(server);
}

/// The TypeScript SDK's own server (`tests/peers/ts_streams_server.mjs`
/// on `@modelcontextprotocol/sdk` from npm): log messages on the GET
/// stream, progress on the call's stream, their interleaving left to
/// timing. Recorded once through `record --upstream`, verified again and
/// again: never drift.
#[test]
#[ignore = "needs @modelcontextprotocol/sdk and Node 22 from npm; .ci/run installs them and runs ignored tests"]
fn ts_sdk_server_logs_and_progress_never_drift() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;

    use crate::support::http::Served;

    use crate::support::pinned::{NODE_MODULES, NODE22, node_modules};

    let modules = node_modules(&[NODE22]);
    let mut server = std::process::Command::new(modules.join(NODE22));
    server
        .arg(crate::support::root().join("tests/peers/ts_streams_server.mjs"))
        .env(NODE_MODULES, &modules);
    let live = Served::start(server);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ts.json");
    let mut record = mcpcassette();
    record.arg("record").arg("--cassette").arg(&path).args([
        "--upstream",
        &live.url,
        "--listen",
        "127.0.0.1:0",
    ]);
    let recorder = Served::start(record);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let transport = StreamableHttpClientTransport::from_uri(recorder.url.clone());
        let client = ().serve(transport).await.expect("handshake");
        // rmcp opens its GET stream in the background, and the SDK drops
        // log messages while none is open: give it time, so the recording
        // has them (verify opens its GET stream before the next request).
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let arguments = json!({"steps": 5}).as_object().unwrap().clone();
        let counted = client
            .call_tool(CallToolRequestParams::new("count").with_arguments(arguments))
            .await
            .expect("count");
        assert_eq!(counted.content[0].as_text().unwrap().text, "counted to 5");
        // A last request, beside which late log messages may land.
        client.list_all_tools().await.expect("tools/list");
        client.cancel().await.expect("client shut down");
    });
    assert!(recorder.stop().success(), "record failed");
    let recorded = cassette::load(&path).unwrap();
    let sent = |method: &str| {
        recorded
            .interactions
            .iter()
            .flat_map(|i| i.during.iter().chain(&i.after))
            .filter(|e| {
                matches!(e, mcpcassette::cassette::Event::Notification { notification }
                if notification["method"] == method)
            })
            .count()
    };
    assert_eq!(sent("notifications/progress"), 5);
    assert_eq!(sent("notifications/message"), 5);

    for run in 1..=5 {
        let output = mcpcassette()
            .arg("verify")
            .arg(&path)
            .env("MCPCASSETTE_UPDATE", "no")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "run {run}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    drop(live);
}
