//! Change notifications in causal order, over Streamable HTTP, against the
//! rmcp example server live, through `record --upstream`, and from
//! `replay --listen`: a `notifications/tools/list_changed` that the server
//! sent because a tool call changed the list reaches the client's open
//! `subscriptions/listen` stream after that call and never before, tagged
//! with the live listen request's id; and across eras, a legacy client of a
//! modern recording gets it as a legacy server sends it, and a modern client
//! of a legacy recording on the listen stream it opened.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::http::{Served, rmcp_http_server};
use crate::support::http_client::{self, PATIENCE, SseStream};

/// How long a listen stream is watched for a notification that must not
/// come (one sent too early would already be there: replay writes a
/// request's notifications before its answer).
const QUIET: Duration = Duration::from_millis(150);
const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
const TOOLS_CHANGED: &str = "notifications/tools/list_changed";

/// A client of one endpoint speaking either era: the shared plain client,
/// the headers each era sends, and the legacy session.
struct Http {
    http: http_client::Http,
    /// Legacy: the session `initialize` opened.
    session: Option<String>,
}

impl Http {
    fn new(url: &str) -> Http {
        Http {
            http: http_client::Http::new(url),
            session: None,
        }
    }

    /// POSTs `message` as a client of its era sends it.
    async fn open(&self, message: &Value) -> (StatusCode, SseStream) {
        let method = message["method"].as_str().unwrap_or_default();
        let modern = message.pointer("/params/_meta").is_some();
        let mut headers = vec![("mcp-protocol-version", if modern { MODERN } else { LEGACY })];
        if modern && !method.is_empty() {
            headers.push(("mcp-method", method));
            if let Some(name) = message.pointer("/params/name").and_then(Value::as_str) {
                headers.push(("mcp-name", name));
            }
        }
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id", session));
        }
        let body = Bytes::from(serde_json::to_vec(message).unwrap());
        let (status, headers, body) = self
            .http
            .open(self.http.request(Method::POST, &headers, body))
            .await;
        let json = headers
            .get("content-type")
            .is_some_and(|c| c.to_str().unwrap().starts_with("application/json"));
        let mut stream = SseStream::new(body);
        if json {
            stream.read_json_body().await;
        }
        (status, stream)
    }

    /// POSTs `message` and reads the whole answer.
    async fn send(&self, message: &Value) -> Vec<Value> {
        let (status, stream) = self.open(message).await;
        assert!(status.is_success(), "{status} for {message}");
        stream.all().await
    }

    /// The legacy session's GET stream, where a legacy server sends what
    /// belongs to no request.
    async fn get_stream(&self) -> SseStream {
        self.get_stream_after(None).await
    }

    /// The GET stream, resumed after `last_event_id` when given.
    async fn get_stream_after(&self, last_event_id: Option<&str>) -> SseStream {
        let mut headers = vec![
            ("accept", "text/event-stream"),
            ("content-type", ""),
            ("mcp-protocol-version", LEGACY),
        ];
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id", session));
        }
        if let Some(last) = last_event_id {
            headers.push(("last-event-id", last));
        }
        let (status, _, body) = self
            .http
            .open(self.http.request(Method::GET, &headers, Bytes::new()))
            .await;
        assert_eq!(status, StatusCode::OK, "a GET stream");
        SseStream::new(body)
    }

    /// A legacy `initialize` and `notifications/initialized`.
    async fn initialize(&mut self) {
        let request = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "subscriptions-test", "version": "1.0.0"}}});
        let (_, headers, body) = self
            .http
            .open(
                self.http
                    .request(Method::POST, &[], Bytes::from(request.to_string())),
            )
            .await;
        self.session = headers
            .get("mcp-session-id")
            .map(|s| s.to_str().unwrap().to_owned());
        let _ = body.collect().await;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(self.send(&initialized).await.is_empty());
    }
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "subscriptions-test", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn call(id: u64, name: &str, arguments: Value, modern: bool) -> Value {
    let mut call = http_client::call(id, name, arguments);
    if modern {
        call["params"]["_meta"] = meta();
    }
    call
}

fn listen(id: u64, filter: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
           "params": {"_meta": meta(), "notifications": filter}})
}

fn response(messages: &[Value]) -> &Value {
    messages
        .iter()
        .find(|m| m.get("method").is_none())
        .unwrap_or_else(|| panic!("no response among {messages:?}"))
}

fn tag(message: &Value) -> &Value {
    &message["params"]["_meta"][SUBSCRIPTION_ID]
}

/// A modern client's session: discover, open a listen stream (id
/// `listen_id`) for tool-list changes, call `echo` (which changes nothing),
/// then the tool that changes the list. What the stream carried before and
/// after, with the listen id checked and left out.
async fn modern_session(url: &str, listen_id: u64) -> Value {
    let http = Http::new(url);
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                          "params": {"_meta": meta()}});
    let discovered = http.send(&discover).await;
    assert!(response(&discovered)["result"]["supportedVersions"].is_array());

    let (status, mut stream) = http
        .open(&listen(listen_id, json!({"toolsListChanged": true})))
        .await;
    assert_eq!(status, StatusCode::OK);
    let mut ack = stream.next(PATIENCE).await.expect("the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(*tag(&ack), json!(listen_id), "the live listen id: {ack}");
    ack["params"]["_meta"][SUBSCRIPTION_ID] = json!("L");

    let echoed = http
        .send(&call(2, "echo", json!({"message": "hi"}), true))
        .await;
    let mut early = Vec::new();
    while let Some(message) = stream.next(QUIET).await {
        early.push(message);
    }
    let triggered = http
        .send(&call(3, "test_trigger_tool_change", json!({}), true))
        .await;
    assert!(
        triggered.iter().all(|m| m["method"] != TOOLS_CHANGED),
        "not on the call's own stream: {triggered:?}"
    );
    let mut changed = stream
        .next(PATIENCE)
        .await
        .expect("the change, after its cause");
    assert_eq!(changed["method"], TOOLS_CHANGED);
    assert_eq!(
        *tag(&changed),
        json!(listen_id),
        "the live listen id: {changed}"
    );
    changed["params"]["_meta"][SUBSCRIPTION_ID] = json!("L");
    json!({
        "ack": ack,
        "before the change": early,
        "echo": response(&echoed)["result"]["content"],
        "trigger": response(&triggered)["result"]["content"],
        "changed": changed,
    })
}

fn replay_server(path: &std::path::Path) -> Served {
    Cli::replay(path).listen().capture_stderr().start()
}

/// Stops replay, which must have answered everything.
fn stop_clean(replayer: Served) {
    let (status, stderr) = replayer.stop_with_stderr();
    assert!(status.success(), "replay had misses: {stderr}");
}

/// Live, recorded and replayed 20 times (a fresh session each, from the
/// top of the recording): the same stream, the change after its cause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_reaches_the_listen_stream_after_the_call_that_caused_it() {
    let live = Served::start(rmcp_http_server());
    let direct = modern_session(&live.url, 100).await;
    assert_eq!(direct["before the change"], json!([]), "{direct}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("listen.json");
    let recorder = Cli::record(&path).upstream(&live.url).listen().start();
    let recorded = modern_session(&recorder.url, 100).await;
    assert!(recorder.stop().success());
    drop(live);
    assert_eq!(direct, recorded, "the proxy changed what the client saw");

    let cassette = mcpcassette::cassette::load(&path).unwrap();
    let trigger = cassette
        .interactions
        .iter()
        .find(|i| i.label() == "tools/call test_trigger_tool_change")
        .unwrap();
    // While the call was in flight, or (its answer read first: the two
    // travel on different connections) right after it.
    let filed = serde_json::to_string(&(&trigger.during, &trigger.after)).unwrap();
    assert!(
        filed.contains(TOOLS_CHANGED),
        "filed under its cause: {filed}"
    );

    let replayer = replay_server(&path);
    for run in 0..20 {
        let replayed = modern_session(&replayer.url, 1000 + run).await;
        assert_eq!(
            direct, replayed,
            "run {run}: replay differs from the live server"
        );
    }
    stop_clean(replayer);
}

/// The recording above, replayed to a legacy client: the change comes as
/// a legacy server sends it, untagged, with the call that caused it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_client_of_a_modern_recording_gets_the_change_untagged() {
    let live = Served::start(rmcp_http_server());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("listen.json");
    let recorder = Cli::record(&path).upstream(&live.url).listen().start();
    let _ = modern_session(&recorder.url, 100).await;
    assert!(recorder.stop().success());
    drop(live);

    let replayer = replay_server(&path);
    let mut http = Http::new(&replayer.url);
    http.initialize().await;
    let triggered = http
        .send(&call(3, "test_trigger_tool_change", json!({}), false))
        .await;
    assert_eq!(
        response(&triggered)["result"]["content"][0]["text"],
        "Tool list change triggered"
    );
    assert!(
        triggered.contains(&json!({"jsonrpc": "2.0", "method": TOOLS_CHANGED})),
        "untagged, with its cause: {triggered:?}"
    );
    let subscribe = json!({"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe",
                           "params": {"uri": "test://static-text"}});
    assert_eq!(response(&http.send(&subscribe).await)["result"], json!({}));
    drop(http);
    stop_clean(replayer);
}

/// Records into `path` a legacy session of the live rmcp server with its GET
/// stream open: `echo`, then the tool that changes the list, whose change
/// the server sends on the GET stream. The change and the GET stream's
/// event ids (its priming event's too).
async fn record_legacy_change(path: &std::path::Path) -> (Value, Vec<String>) {
    let live = Served::start(rmcp_http_server());
    let recorder = Cli::record(path).upstream(&live.url).listen().start();
    let mut http = Http::new(&recorder.url);
    http.initialize().await;
    assert!(http.session.is_some(), "a legacy session");
    let mut session_stream = http.get_stream().await;
    let echoed = http
        .send(&call(2, "echo", json!({"message": "hi"}), false))
        .await;
    assert_eq!(
        response(&echoed)["result"]["content"][0]["text"],
        "Echo: hi"
    );
    let triggered = http
        .send(&call(3, "test_trigger_tool_change", json!({}), false))
        .await;
    assert!(
        triggered.iter().all(|m| m["method"] != TOOLS_CHANGED),
        "not in the call's answer: {triggered:?}"
    );
    let live_change = session_stream
        .next(PATIENCE)
        .await
        .expect("the live legacy server notified its session on the GET stream");
    assert_eq!(live_change["method"], TOOLS_CHANGED);
    let live_ids = session_stream.ids.clone();
    drop((http, session_stream));
    assert!(recorder.stop().success());
    (live_change, live_ids)
}

/// A legacy recording (the server notified the session that changed the
/// list) replayed to a modern client: the listen stream replay opens
/// acknowledges what the recorded capabilities allow, and carries the
/// change, tagged, after its cause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_client_of_a_legacy_recording_gets_the_change_on_its_listen_stream() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("legacy.json");
    record_legacy_change(&path).await;
    let cassette = mcpcassette::cassette::load(&path).unwrap();
    assert_eq!(cassette.protocol.era, mcpcassette::protocol::Era::Legacy);

    let replayer = replay_server(&path);
    let http = Http::new(&replayer.url);
    let (status, mut stream) = http
        .open(&listen(
            77,
            json!({"toolsListChanged": true, "resourcesListChanged": true}),
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    let ack = stream.next(PATIENCE).await.expect("the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(*tag(&ack), json!(77));
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "narrowed to what the recorded server declared"
    );
    let echoed = http
        .send(&call(2, "echo", json!({"message": "hi"}), true))
        .await;
    assert_eq!(
        response(&echoed)["result"]["content"][0]["text"],
        "Echo: hi"
    );
    assert_eq!(stream.next(QUIET).await, None, "nothing before the cause");
    let triggered = http
        .send(&call(3, "test_trigger_tool_change", json!({}), true))
        .await;
    assert_eq!(response(&triggered)["result"]["resultType"], "complete");
    assert!(
        triggered.iter().all(|m| m["method"] != TOOLS_CHANGED),
        "a modern server sends changes on listen streams only: {triggered:?}"
    );
    let changed = stream.next(PATIENCE).await.expect("the change");
    assert_eq!(changed["method"], TOOLS_CHANGED);
    assert_eq!(*tag(&changed), json!(77));
    drop(stream);
    stop_clean(replayer);
}

/// A legacy session whose server notifies it on the GET stream: recorded
/// with the framing there, replayed down the GET stream (not in the
/// answer to the call) with the recorded event ids after the recorded
/// priming event, and resumable after any of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_stream_messages_replay_on_the_get_stream_as_framed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("legacy.json");
    let (live_change, live_ids) = record_legacy_change(&path).await;

    let cassette = mcpcassette::cassette::load(&path).unwrap();
    let trigger = cassette
        .interactions
        .iter()
        .find(|i| i.label() == "tools/call test_trigger_tool_change")
        .unwrap();
    let streamed = &trigger.http.as_ref().unwrap().get_stream;
    assert_eq!(
        streamed.len(),
        1,
        "noted as a GET-stream message: {trigger:?}"
    );
    assert_eq!(
        streamed[0].frame.id.as_ref(),
        live_ids.last(),
        "with its id"
    );

    let replayer = replay_server(&path);
    let mut http = Http::new(&replayer.url);
    http.initialize().await;
    let mut session_stream = http.get_stream().await;
    let triggered = http
        .send(&call(3, "test_trigger_tool_change", json!({}), false))
        .await;
    assert_eq!(
        response(&triggered)["result"]["content"][0]["text"],
        "Tool list change triggered"
    );
    assert!(
        triggered.iter().all(|m| m["method"] != TOOLS_CHANGED),
        "not in the call's answer: {triggered:?}"
    );
    let change = session_stream
        .next(PATIENCE)
        .await
        .expect("on the GET stream");
    assert_eq!(change, live_change);
    assert_eq!(
        session_stream.ids, live_ids,
        "framed as recorded (priming included)"
    );
    drop(session_stream);

    // Resumed after the first event: what followed it, again.
    let mut resumed = http
        .get_stream_after(live_ids.first().map(String::as_str))
        .await;
    if live_ids.len() > 1 {
        assert_eq!(resumed.next(PATIENCE).await.as_ref(), Some(&live_change));
    }
    drop((resumed, http));
    stop_clean(replayer);
}
