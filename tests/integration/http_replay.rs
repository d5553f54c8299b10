//! Replay over Streamable HTTP ([`serve_http`]).
//!
//! Against the shipped demo cassettes, which were recorded over stdio (so
//! these also show that a cassette replays over either transport), and
//! against small cassettes crafted with HTTP metadata to check that what
//! was recorded over HTTP is answered the same way: status, body, SSE
//! framing, timing. Clients: a plain hyper client, and rmcp's Streamable
//! HTTP client compared with the same client over stdio.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use mcpcassette::cassette::{self, Builder, Cassette, Direction, HttpEndpointBehaviour, Transport};
use mcpcassette::replay::{EXHAUSTED, Engine, NO_MATCH, OUT_OF_ORDER, ReplayConfig, Summary};
use mcpcassette::replay::{HttpReplayConfig, Pace, SessionMode, serve_http};
use mcpcassette::{OnExhausted, Rules, Strategy};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::support;
use crate::support::http_client::{BOTH, Http, PATIENCE, SseEvent, call, parse_events};

const LEGACY_VERSION: &str = "2025-11-25";
const MODERN_VERSION: &str = "2026-07-28";

// ---------------------------------------------------------------------------
// A replay server in this process

/// `serve_http` on a free loopback port, until [`Replay::stop`].
struct Replay {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<Summary>>,
}

impl Replay {
    async fn start(cassette: Cassette) -> Replay {
        Replay::start_with(cassette, Pace::Fast).await
    }

    async fn start_with(cassette: Cassette, pace: Pace) -> Replay {
        let engine = Engine::new(cassette, Path::new("test-cassette.json"));
        let config = HttpReplayConfig {
            pace,
            ..HttpReplayConfig::new("127.0.0.1:0".parse().unwrap())
        };
        Replay::serve(engine, config).await
    }

    /// A replay that answers only clients of the cassette's own era.
    async fn start_strict_era(cassette: Cassette) -> Replay {
        let mut replay = ReplayConfig::new(Path::new("test-cassette.json"));
        replay.cross_era = mcpcassette::replay::CrossEra::Off;
        let engine = Engine::with_config(cassette, replay);
        Replay::serve(
            engine,
            HttpReplayConfig::new("127.0.0.1:0".parse().unwrap()),
        )
        .await
    }

    /// A replay under `rules` (the cassette's own without), with sessions
    /// as `sessions` says.
    async fn start_sessions(
        cassette: Cassette,
        rules: Option<Rules>,
        sessions: SessionMode,
    ) -> Replay {
        let mut replay = ReplayConfig::new(Path::new("test-cassette.json"));
        replay.rules = rules;
        let engine = Engine::with_config(cassette, replay);
        let config = HttpReplayConfig {
            sessions,
            ..HttpReplayConfig::new("127.0.0.1:0".parse().unwrap())
        };
        Replay::serve(engine, config).await
    }

    async fn serve(engine: std::sync::Arc<Engine>, config: HttpReplayConfig) -> Replay {
        let (ready, bound) = oneshot::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve_http(
            engine,
            config,
            move |addr| {
                let _ = ready.send(addr);
            },
            async move {
                let _ = stopped.await;
            },
        ));
        let addr = tokio::time::timeout(PATIENCE, bound)
            .await
            .expect("replay bound in time")
            .expect("replay started");
        Replay { addr, stop, task }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn http(&self) -> Http {
        Http::at_base(&self.url(""), "/mcp")
    }

    async fn stop(self) -> Summary {
        let _ = self.stop.send(());
        tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("replay stopped in time")
            .unwrap()
            .expect("replay ended cleanly")
    }
}

fn demo(name: &str) -> Cassette {
    cassette::load(&support::root().join("cassettes").join(name)).unwrap()
}

// ---------------------------------------------------------------------------
// The plain HTTP client (support::http_client), with this file's handshake

impl Http {
    /// `initialize` as a legacy client sends it; returns the session.
    async fn initialize(&self) -> String {
        let reply = self.post(&initialize_request("init"), &[]).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        let session = reply.session();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let reply = self.post(&initialized, &session_headers(&session)).await;
        assert_eq!(reply.status, StatusCode::ACCEPTED);
        session
    }
}

fn session_headers(session: &str) -> [(&str, &str); 2] {
    [
        ("mcp-session-id", session),
        ("mcp-protocol-version", LEGACY_VERSION),
    ]
}

fn initialize_request(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": LEGACY_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "http-replay-test", "version": "9.9.9"},
    }})
}

fn echo(id: Value) -> Value {
    call(id, "echo", json!({"message": "hello"}))
}

fn tool_text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no tool text in {response}"))
}

// ---------------------------------------------------------------------------
// Legacy era, from a stdio recording

#[tokio::test]
async fn legacy_sessions_are_issued_required_and_ended() {
    let replay = Replay::start(demo("demo-legacy.json")).await;
    let http = replay.http();

    let reply = http.post(&initialize_request("init-7"), &[]).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.content_type(), "application/json");
    let init = reply.json();
    assert_eq!(init["id"], "init-7");
    assert_eq!(init["result"]["serverInfo"]["name"], "mcpcassette-demo");
    let session = reply.session();
    assert_eq!(session.len(), 32, "{session}");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = http.post(&initialized, &session_headers(&session)).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    assert!(reply.body.is_empty());

    let reply = http
        .post(&echo(json!(42)), &session_headers(&session))
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let response = reply.json();
    assert_eq!(response["id"], 42, "the live id, not the recorded one");
    assert_eq!(tool_text(&response), "echo: hello");

    let reply = http.post(&echo(json!(43)), &[]).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "no session");
    assert_eq!(reply.json()["id"], Value::Null);
    let reply = http
        .post(&echo(json!(44)), &[("mcp-session-id", "bogus")])
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "unknown session");
    assert_eq!(reply.json()["id"], Value::Null);
    assert!(reply.json()["error"]["code"].is_i64());
    let reply = http
        .post(
            &echo(json!(45)),
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "1999-01-01"),
            ],
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::BAD_REQUEST,
        "unknown protocol version"
    );

    // Every initialize gets a fresh session.
    let other = http.post(&initialize_request("again"), &[]).await.session();
    assert_ne!(other, session);

    let reply = http
        .without_body(Method::DELETE, &session_headers(&session))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    let reply = http
        .post(&echo(json!(46)), &session_headers(&session))
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "deleted session");
    let reply = http
        .without_body(Method::DELETE, &session_headers(&session))
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "deleted twice");
    let reply = http.post(&echo(json!(47)), &session_headers(&other)).await;
    assert_eq!(reply.status, StatusCode::OK, "other sessions live on");
    replay.stop().await;
}

/// Plain requests are answered straight from their text; those whose
/// headers must be held against the body are parsed first. A client sees
/// no difference: the same requests (ids spelled oddly, progress, an
/// unmatched call, answers recorded as a 500 page and as framed SSE) in
/// two sessions, one with and one without `Mcp-Method` and `Mcp-Name`.
#[tokio::test]
async fn plain_requests_are_answered_as_parsed_ones_are() {
    let replay = Replay::start(demo("demo-legacy.json")).await;
    let [answers, parsed] = both_ways(
        &replay.http(),
        &[
            r#"{ "jsonrpc" : "2.0", "id" : 1.50, "method" : "tools/call", "params" : {"name":"echo","arguments":{"message":"hello"}} }"#,
            r#"{"jsonrpc":"2.0","id":"\u0041b","method":"tools/call","params":{"name":"count","arguments":{"steps":3},"_meta":{"progressToken":7}}}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"tools/call","params":{"name":"echo","arguments":{"message":"never recorded"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        ],
    )
    .await;
    assert_eq!(answers, parsed);
    let [echo, count, unmatched, list] = &answers[..] else {
        unreachable!()
    };
    assert!(echo.2.contains(r#""id":1.50"#), "{echo:?}");
    assert!(count.2.contains(r#""id":"\u0041b""#), "{count:?}");
    assert!(count.2.contains(r#""progressToken":7"#), "{count:?}");
    assert!(unmatched.2.contains(r#""id":-0"#), "{unmatched:?}");
    assert!(unmatched.2.contains(r#""error""#), "{unmatched:?}");
    assert_eq!(list.0, StatusCode::OK, "{list:?}");
    replay.stop().await;

    let replay = Replay::start(legacy_http_cassette([0, 0, 0])).await;
    let [answers, parsed] = both_ways(
        &replay.http().at("/rpc"),
        &[
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"boom","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow","arguments":{}}}"#,
        ],
    )
    .await;
    assert_eq!(answers, parsed);
    let [boom, slow] = &answers[..] else {
        unreachable!()
    };
    assert_eq!(boom.0, StatusCode::INTERNAL_SERVER_ERROR, "{boom:?}");
    assert_eq!(boom.2, "upstream exploded");
    assert_eq!(slow.1, "text/event-stream", "{slow:?}");
    let ids: Vec<_> = parse_events(&slow.2).into_iter().map(|e| e.id).collect();
    assert_eq!(ids, [Some("p0".into()), Some("r2".into())]);
    replay.stop().await;
}

/// Status, content type and body of each of `bodies` POSTed in a new
/// session: first as they are, then with the `Mcp-Method` and `Mcp-Name`
/// headers that make the server hold its headers against the body.
async fn both_ways(http: &Http, bodies: &[&'static str]) -> [Vec<(StatusCode, String, String)>; 2] {
    let mut answers: [Vec<_>; 2] = Default::default();
    for (declared, answers) in answers.iter_mut().enumerate() {
        let session = http.initialize().await;
        for body in bodies {
            let message: Value = serde_json::from_str(body).unwrap();
            let method = message["method"].as_str().unwrap();
            let name = message["params"]["name"].as_str().unwrap_or_default();
            let mut headers = session_headers(&session).to_vec();
            if declared == 1 {
                headers.push(("mcp-method", method));
                if !name.is_empty() {
                    headers.push(("mcp-name", name));
                }
            }
            let request = http.request(Method::POST, &headers, Bytes::from(*body));
            let reply = http.send(request).await;
            let content_type = reply.content_type().to_owned();
            answers.push((reply.status, content_type, reply.text().to_owned()));
        }
    }
    answers
}

#[tokio::test]
async fn foreign_origins_and_hosts_are_refused() {
    let replay = Replay::start(demo("demo-legacy.json")).await;
    let http = replay.http();
    let message = initialize_request("x");
    let evil = http
        .post(&message, &[("origin", "http://evil.example")])
        .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);
    let rebound = http.post(&message, &[("host", "evil.example")]).await;
    assert_eq!(rebound.status, StatusCode::FORBIDDEN);
    let local = http
        .post(&message, &[("origin", "http://localhost:5173")])
        .await;
    assert_eq!(local.status, StatusCode::OK);
    let elsewhere = replay.http().at("/other").post(&message, &[]).await;
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);
    let put = http.without_body(Method::PUT, &[]).await;
    assert_eq!(put.status, StatusCode::METHOD_NOT_ALLOWED);
    let text = http.post(&message, &[("content-type", "text/plain")]).await;
    assert_eq!(text.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let html = http.post(&message, &[("accept", "text/html")]).await;
    assert_eq!(html.status, StatusCode::NOT_ACCEPTABLE);
    let broken = http
        .send(http.request(Method::POST, &[], Bytes::from_static(b"{not json")))
        .await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST);
    assert_eq!(broken.json()["error"]["code"], -32700);
    replay.stop().await;
}

#[tokio::test]
async fn progress_travels_on_an_sse_answer_in_order_then_the_response() {
    let replay = Replay::start(demo("demo-legacy.json")).await;
    let http = replay.http();
    let session = http.initialize().await;
    let mut count = call(json!("c-1"), "count", json!({"steps": 3}));
    count["params"]["_meta"] = json!({"progressToken": "live-token"});
    let reply = http.post(&count, &session_headers(&session)).await;
    assert_eq!(reply.status, StatusCode::OK);
    let messages: Vec<Value> = reply.events().iter().map(SseEvent::message).collect();
    assert_eq!(messages.len(), 5, "{messages:#?}");
    for (step, progress) in messages[..3].iter().enumerate() {
        assert_eq!(progress["method"], "notifications/progress");
        assert_eq!(progress["params"]["progressToken"], "live-token");
        assert_eq!(progress["params"]["progress"], step + 1);
    }
    assert_eq!(messages[3]["method"], "notifications/message");
    assert_eq!(messages[4]["id"], "c-1");
    assert_eq!(tool_text(&messages[4]), "counted 3 steps");

    // A client that takes only SSE gets even a plain answer as a stream.
    let reply = http
        .post(
            &echo(json!(5)),
            &[
                ("mcp-session-id", &session),
                ("accept", "text/event-stream"),
            ],
        )
        .await;
    let events = reply.events();
    assert_eq!(events.len(), 1);
    assert_eq!(tool_text(&events[0].message()), "echo: hello");
    replay.stop().await;
}

#[tokio::test]
async fn server_requests_travel_on_the_request_stream_and_answers_come_by_post() {
    let replay = Replay::start(demo("demo-legacy.json")).await;
    let http = replay.http();
    let session = http.initialize().await;
    let headers = session_headers(&session);
    let summarize = call(
        json!(20),
        "summarize",
        json!({"text": "cassettes make MCP tests fast"}),
    );
    let body = Bytes::from(serde_json::to_vec(&summarize).unwrap());
    let (status, answer_headers, mut stream) =
        http.open(http.request(Method::POST, &headers, body)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer_headers["content-type"], "text/event-stream");
    let asked = read_events(&mut stream, 1).await[0].message();
    assert_eq!(asked["method"], "sampling/createMessage");

    let answer = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "a short summary"},
        "model": "test-model"}});
    let reply = http.post(&answer, &headers).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    assert!(reply.body.is_empty());

    let response = read_events(&mut stream, 1).await[0].message();
    assert_eq!(response["id"], 20);
    assert_eq!(tool_text(&response), "summary: a short summary");
    let end = tokio::time::timeout(PATIENCE, stream.collect()).await;
    assert!(end.is_ok(), "the stream ends after the response");
    replay.stop().await;
}

/// Over HTTP too: a sampling answer that differs from the recording is
/// reported, and under `strict` the call fails with -32004.
#[tokio::test]
async fn a_sampling_answer_unlike_the_recording_is_reported_and_fails_strict() {
    for strict in [false, true] {
        let mut cassette = demo("demo-legacy.json");
        if strict {
            cassette.rules.strategy = mcpcassette::Strategy::Strict;
        }
        let earlier: Vec<Value> = cassette.interactions[2..9]
            .iter()
            .filter_map(|i| i.request().cloned())
            .collect();
        let replay = Replay::start(cassette).await;
        let http = replay.http();
        let session = http.initialize().await;
        let headers = session_headers(&session);
        if strict {
            for request in &earlier {
                let reply = http.post(request, &headers).await;
                assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
            }
        }
        let summarize = call(
            json!(20),
            "summarize",
            json!({"text": "cassettes make MCP tests fast"}),
        );
        let body = Bytes::from(serde_json::to_vec(&summarize).unwrap());
        let (_, _, mut stream) = http.open(http.request(Method::POST, &headers, body)).await;
        let asked = read_events(&mut stream, 1).await[0].message();
        assert_eq!(asked["method"], "sampling/createMessage");
        let answer = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
            "role": "assistant", "content": {"type": "text", "text": "something else"},
            "model": "demo-model", "stopReason": "endTurn"}});
        assert_eq!(
            http.post(&answer, &headers).await.status,
            StatusCode::ACCEPTED
        );
        let response = read_events(&mut stream, 1).await[0].message();
        assert_eq!(response["id"], 20);
        if strict {
            assert_eq!(response["error"]["code"], -32004, "{response}");
        } else {
            assert_eq!(
                tool_text(&response),
                "summary: a short summary",
                "as recorded"
            );
        }
        let summary = replay.stop().await;
        assert_eq!(summary.answer_mismatches.len(), 1, "{summary:?}");
        let mismatch = &summary.answer_mismatches[0];
        assert_eq!(mismatch.method, "sampling/createMessage");
        assert!(
            mismatch
                .diff
                .contains("+      \"text\": \"something else\""),
            "{}",
            mismatch.diff
        );
    }
}

#[tokio::test]
async fn unmatched_requests_get_the_engine_error_and_batches_an_array() {
    let replay = Replay::start(demo("demo-legacy.json")).await;
    let http = replay.http();
    let session = http.initialize().await;
    let headers = session_headers(&session);

    let reply = http
        .post(&call(json!(9), "no-such-tool", json!({})), &headers)
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    let error = reply.json();
    assert_eq!(error["id"], 9);
    assert_eq!(error["error"]["code"], NO_MATCH);

    let batch = json!([echo(json!("a")), {"jsonrpc": "2.0", "id": "b", "method": "ping"}]);
    let reply = http.post(&batch, &headers).await;
    assert_eq!(reply.status, StatusCode::OK);
    let answers = reply.json();
    let ids: Vec<&Value> = answers
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["id"])
        .collect();
    assert_eq!(ids, [&json!("a"), &json!("b")], "{answers}");

    let summary = replay.stop().await;
    assert_eq!(summary.misses.len(), 1);
}

/// With cross-era replay off, a client of the other era over HTTP is told
/// that the eras differ, in the JSON-RPC error, both ways, and each counts
/// as a miss.
#[tokio::test]
async fn without_cross_era_replay_a_client_of_the_other_era_is_told_so_over_http() {
    let replay = Replay::start_strict_era(demo("demo-modern.json")).await;
    let reply = replay.http().post(&initialize_request("init"), &[]).await;
    let error = reply.json();
    assert_eq!(error["error"]["code"], NO_MATCH, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("recorded in the modern era (protocol 2026-07-28")
            && message.contains("speaks the legacy era (protocol 2025-11-25")
            && message.contains("fastmcp's Client does by default"),
        "{message}"
    );
    let summary = replay.stop().await;
    assert!(summary.misses[0].era_mismatch.is_some());

    let replay = Replay::start_strict_era(demo("demo-legacy.json")).await;
    let discover = modern_request(1, "server/discover", json!({}));
    let headers = [
        ("mcp-protocol-version", MODERN_VERSION),
        ("mcp-method", "server/discover"),
    ];
    let reply = replay.http().post(&discover, &headers).await;
    // What a legacy server says to the probe, so dual-era clients fall back.
    assert_eq!(reply.json()["error"]["code"], -32601, "{}", reply.text());
    let call = modern_request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "modern"}}),
    );
    let headers = [
        ("mcp-protocol-version", MODERN_VERSION),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    let reply = replay.http().post(&call, &headers).await;
    assert_eq!(reply.json()["error"]["code"], NO_MATCH, "{}", reply.text());
    let message = reply.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("recorded in the legacy era (protocol 2025-11-25")
            && message.contains("speaks the modern era (protocol 2026-07-28")
            && message.contains("mode=\"legacy\""),
        "{message}"
    );
    let summary = replay.stop().await;
    assert_eq!(summary.misses.len(), 1);
}

// ---------------------------------------------------------------------------
// Modern era, from a stdio recording

fn modern_request(id: i64, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-replay-test", "version": "1"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn modern_replay_is_post_only_and_checks_its_headers() {
    let replay = Replay::start(demo("demo-modern.json")).await;
    let http = replay.http();
    let version = ("mcp-protocol-version", MODERN_VERSION);

    for method in [Method::GET, Method::DELETE] {
        let reply = http.without_body(method.clone(), &[version]).await;
        assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
        assert_eq!(reply.header("allow"), Some("POST"));
    }

    let discover = modern_request(1, "server/discover", json!({}));
    let reply = http
        .post(&discover, &[version, ("mcp-method", "server/discover")])
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(reply.header("mcp-session-id").is_none(), "no sessions");
    assert_eq!(
        reply.json()["result"]["supportedVersions"][0],
        MODERN_VERSION
    );

    let echo = modern_request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hello"}}),
    );
    let wrong_method = [version, ("mcp-method", "tools/list"), ("mcp-name", "echo")];
    let reply = http.post(&echo, &wrong_method).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.json()["error"]["code"], -32020);
    assert_eq!(reply.json()["id"], 2);
    let wrong_name = [version, ("mcp-method", "tools/call"), ("mcp-name", "add")];
    let reply = http.post(&echo, &wrong_name).await;
    assert_eq!(reply.json()["error"]["code"], -32020);
    let no_name = [version, ("mcp-method", "tools/call")];
    let reply = http.post(&echo, &no_name).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);

    let right = [version, ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    let reply = http.post(&echo, &right).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(tool_text(&reply.json()), "echo: hello");
    assert_eq!(reply.json()["id"], 2);
    replay.stop().await;
}

// ---------------------------------------------------------------------------
// Cassettes recorded over HTTP

/// Builds a cassette from messages in the order they travelled.
fn crafted(transport: Transport, traffic: Vec<(Direction, Value)>) -> Cassette {
    let mut builder = Builder::new("2026-11-29T00:00:00Z".into(), transport);
    for (direction, message) in traffic {
        builder.observe(direction, message);
    }
    builder.finish()
}

fn streamable(endpoint: &str, get_status: Option<u16>) -> Transport {
    Transport::StreamableHttp {
        url: format!("http://upstream.invalid{endpoint}"),
        endpoint: endpoint.into(),
        behaviour: HttpEndpointBehaviour {
            get_status,
            ..Default::default()
        },
    }
}

/// Sets interaction `index`'s HTTP exchange from JSON.
fn set_http(cassette: &mut Cassette, index: usize, http: Value) {
    cassette.interactions[index].http = Some(serde_json::from_value(http).unwrap());
}

fn legacy_traffic() -> Vec<(Direction, Value)> {
    use Direction::{ClientToServer as C, ServerToClient as S};
    let init_result = json!({"protocolVersion": LEGACY_VERSION, "capabilities": {"tools": {}},
                             "serverInfo": {"name": "crafted", "version": "1"}});
    vec![
        (C, initialize_request("1")),
        (
            S,
            json!({"jsonrpc": "2.0", "id": "1", "result": init_result}),
        ),
        (
            C,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
        (
            S,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ),
        (C, call(json!(2), "boom", json!({}))),
        (
            C,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "slow", "arguments": {}, "_meta": {"progressToken": 3}}}),
        ),
        (
            S,
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": 3, "progress": 1}}),
        ),
        (
            S,
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "slow done"}]}}),
        ),
    ]
}

/// Interaction 0 initialize, 1 initialized (list_changed after), 2 `boom`
/// (a recorded 500 page), 3 `slow` (framed SSE, delays).
fn legacy_http_cassette(delays: [u64; 3]) -> Cassette {
    let mut cassette = crafted(streamable("/rpc", Some(405)), legacy_traffic());
    cassette.rules.on_exhausted = OnExhausted::RepeatLast;
    set_http(
        &mut cassette,
        0,
        json!({"status": 200, "content_type": "application/json", "issued_session": true}),
    );
    set_http(
        &mut cassette,
        1,
        json!({"status": 202, "had_session": true}),
    );
    set_http(
        &mut cassette,
        2,
        json!({"status": 500, "content_type": "text/plain", "body": "upstream exploded"}),
    );
    set_http(
        &mut cassette,
        3,
        json!({
            "status": 200, "content_type": "text/event-stream",
            "sse": [{"id": "p0", "retry": 3000, "priming": true}, {"id": "e1"}, {"id": "r2"}],
            "delays_ms": delays,
        }),
    );
    cassette
}

#[tokio::test]
async fn http_recordings_are_answered_as_recorded() {
    let replay = Replay::start(legacy_http_cassette([0, 0, 0])).await;
    let http = replay.http().at("/rpc");
    let wrong_path = replay.http().post(&initialize_request("1"), &[]).await;
    assert_eq!(
        wrong_path.status,
        StatusCode::NOT_FOUND,
        "served at the recorded endpoint"
    );

    let session = http.initialize().await;
    let headers = session_headers(&session);
    let get = http.without_body(Method::GET, &headers).await;
    assert_eq!(get.status, StatusCode::METHOD_NOT_ALLOWED, "as recorded");

    let boom = http
        .post(&call(json!(7), "boom", json!({})), &headers)
        .await;
    assert_eq!(boom.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(boom.content_type(), "text/plain");
    assert_eq!(boom.text(), "upstream exploded");

    let mut slow = call(json!(8), "slow", json!({}));
    slow["params"]["_meta"] = json!({"progressToken": "p"});
    let reply = http.post(&slow, &headers).await;
    let events = reply.events();
    assert_eq!(events.len(), 3, "{}", reply.text());
    assert_eq!(events[0].id.as_deref(), Some("p0"));
    assert_eq!(events[0].retry, Some(3000));
    assert!(events[0].data.is_empty(), "a priming event");
    assert_eq!(events[1].id.as_deref(), Some("e1"));
    assert_eq!(events[1].message()["params"]["progressToken"], "p");
    assert_eq!(events[2].id.as_deref(), Some("r2"));
    assert_eq!(events[2].message()["id"], 8);

    // Without a progress token the progress is dropped, and the response
    // keeps its recorded id.
    let reply = http
        .post(&call(json!(9), "slow", json!({})), &headers)
        .await;
    let ids: Vec<_> = reply.events().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, [Some("p0".into()), Some("r2".into())]);
    replay.stop().await;
}

/// Interaction 0 initialize, 1 initialized, 2 `echo` on a session the
/// server had ended (answered 400, as server-everything does, instead of
/// the 404 the specification asks for), 3 `echo` (normal), 4 `initialize`
/// from a foreign Host (accepted by the recorded server).
fn situational_cassette() -> Cassette {
    use Direction::{ClientToServer as C, ServerToClient as S};
    let init_result = json!({"protocolVersion": LEGACY_VERSION, "capabilities": {"tools": {}},
                             "serverInfo": {"name": "crafted", "version": "1"}});
    let echoed = json!({"content": [{"type": "text", "text": "echo: hello"}]});
    let traffic = vec![
        (C, initialize_request("1")),
        (
            S,
            json!({"jsonrpc": "2.0", "id": "1", "result": init_result}),
        ),
        (
            C,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ),
        (C, echo(json!(2))),
        (C, echo(json!(3))),
        (S, json!({"jsonrpc": "2.0", "id": 3, "result": echoed})),
        (C, initialize_request("4")),
        (
            S,
            json!({"jsonrpc": "2.0", "id": "4", "result": init_result}),
        ),
    ];
    let mut cassette = crafted(streamable("/mcp", None), traffic);
    let issued = json!({"status": 200, "content_type": "application/json", "issued_session": true});
    set_http(&mut cassette, 0, issued.clone());
    set_http(
        &mut cassette,
        1,
        json!({"status": 202, "had_session": true}),
    );
    set_http(
        &mut cassette,
        2,
        json!({
            "status": 400, "content_type": "application/json", "had_session": true,
            "situation": {"session": "unknown"},
            "body": "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":\"No valid session ID provided\"}}",
        }),
    );
    set_http(
        &mut cassette,
        3,
        json!({"status": 200, "content_type": "application/json", "had_session": true}),
    );
    let mut foreign = issued;
    foreign["situation"] = json!({"foreign_origin": true});
    set_http(&mut cassette, 4, foreign);
    cassette
}

#[tokio::test]
async fn answers_recorded_in_an_unusual_situation_answer_only_that_situation() {
    let replay = Replay::start(situational_cassette()).await;
    let http = replay.http();
    let session = http.initialize().await;
    let headers = session_headers(&session);

    // A normal request gets the normal answer, though the recording of the
    // same body on an ended session comes first.
    let reply = http.post(&echo(json!(10)), &headers).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(tool_text(&reply.json()), "echo: hello");
    assert_eq!(reply.json()["id"], 10);

    // Nothing recorded for these situations: the specification's rules.
    let missing = http.post(&echo(json!(11)), &[]).await;
    assert_eq!(
        missing.status,
        StatusCode::BAD_REQUEST,
        "{}",
        missing.text()
    );
    let list = json!({"jsonrpc": "2.0", "id": 12, "method": "tools/list"});
    let unknown = http.post(&list, &[("mcp-session-id", "bogus")]).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.text());
    let evil = http
        .post(&echo(json!(13)), &[("origin", "http://evil.example")])
        .await;
    assert_eq!(evil.status, StatusCode::FORBIDDEN);

    // The session ends; the request on it is answered as the recorded
    // server answered it, once; after that the specification's 404.
    let deleted = http.without_body(Method::DELETE, &headers).await;
    assert_eq!(deleted.status, StatusCode::OK);
    let stale = http.post(&echo(json!(14)), &headers).await;
    assert_eq!(stale.status, StatusCode::BAD_REQUEST, "as recorded");
    assert!(
        stale.text().contains("No valid session ID provided"),
        "{}",
        stale.text()
    );
    let again = http.post(&echo(json!(15)), &headers).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND, "{}", again.text());

    // The recorded server accepted an initialize from a foreign Host.
    let rebound = http
        .post(&initialize_request("16"), &[("host", "evil.example.com")])
        .await;
    assert_eq!(rebound.status, StatusCode::OK, "{}", rebound.text());
    assert_eq!(rebound.json()["id"], "16");
    // Each initialize starts a session from the top, so it is answered again.
    let twice = http
        .post(&initialize_request("17"), &[("host", "evil.example.com")])
        .await;
    assert_eq!(twice.status, StatusCode::OK, "{}", twice.text());

    let summary = replay.stop().await;
    assert!(summary.misses.is_empty(), "{:?}", summary.misses);

    // With shared sessions, what was recorded once is answered once.
    let replay = Replay::start_sessions(situational_cassette(), None, SessionMode::Shared).await;
    let http = replay.http();
    let foreign = [("host", "evil.example.com")];
    let once = http.post(&initialize_request("18"), &foreign).await;
    assert_eq!(once.status, StatusCode::OK, "{}", once.text());
    let twice = http.post(&initialize_request("19"), &foreign).await;
    assert_eq!(twice.status, StatusCode::FORBIDDEN, "recorded once");
    replay.stop().await;
}

#[tokio::test]
async fn recorded_pace_replays_the_delays() {
    let slow = |replay: &Replay| {
        let http = replay.http().at("/rpc");
        async move {
            let session = http.initialize().await;
            let mut request = call(json!(1), "slow", json!({}));
            request["params"]["_meta"] = json!({"progressToken": 1});
            let started = std::time::Instant::now();
            let reply = http.post(&request, &session_headers(&session)).await;
            assert_eq!(reply.events().len(), 3);
            started.elapsed()
        }
    };
    let replay = Replay::start_with(legacy_http_cassette([0, 100, 400]), Pace::Recorded).await;
    let paced = slow(&replay).await;
    replay.stop().await;
    assert!(paced >= Duration::from_millis(400), "{paced:?}");
    let replay = Replay::start_with(legacy_http_cassette([0, 100, 5000]), Pace::Fast).await;
    let fast = slow(&replay).await;
    replay.stop().await;
    assert!(fast < Duration::from_secs(4), "{fast:?}");
}

/// Reads SSE events from an open stream until `count` have come.
async fn read_events(body: &mut Incoming, count: usize) -> Vec<SseEvent> {
    let mut text = String::new();
    loop {
        let events = parse_events(&text);
        if events.len() >= count && text.ends_with("\n\n") {
            return events;
        }
        let frame = tokio::time::timeout(PATIENCE, body.frame())
            .await
            .expect("an event in time")
            .expect("the stream is still open")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
}

#[tokio::test]
async fn the_get_stream_carries_unprompted_messages_and_resumes() {
    let mut cassette = legacy_http_cassette([0, 0, 0]);
    // This recording's server had a GET stream.
    cassette.transport = streamable("/rpc", None);
    let replay = Replay::start(cassette).await;
    let http = replay.http().at("/rpc");
    let session = http.initialize().await;
    let headers = session_headers(&session);

    // `list_changed` followed `initialized`: it waits for the GET stream.
    let get = http.request(Method::GET, &headers, Bytes::new());
    let (status, _, mut stream) = http.open(get).await;
    assert_eq!(status, StatusCode::OK);
    let events = read_events(&mut stream, 1).await;
    assert_eq!(events[0].id.as_deref(), Some("get-0"));
    assert_eq!(
        events[0].message()["method"],
        "notifications/tools/list_changed"
    );

    let second = http.without_body(Method::GET, &headers).await;
    assert_eq!(
        second.status,
        StatusCode::CONFLICT,
        "one GET stream at a time"
    );
    // A client that goes away frees the slot for its reconnection.
    drop(stream);
    let reconnect = async {
        loop {
            let get = http.request(Method::GET, &headers, Bytes::new());
            let (status, _, stream) = http.open(get).await;
            if status == StatusCode::OK {
                return stream;
            }
            assert_eq!(status, StatusCode::CONFLICT);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let stream = tokio::time::timeout(PATIENCE, reconnect)
        .await
        .expect("the slot was freed");

    // A request stream resumes after the last id the client saw.
    let mut slow = call(json!(8), "slow", json!({}));
    slow["params"]["_meta"] = json!({"progressToken": "p"});
    http.post(&slow, &headers).await;
    let mut resume = headers.to_vec();
    resume.push(("last-event-id", "e1"));
    let resumed = http.without_body(Method::GET, &resume).await;
    let events = resumed.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].message()["id"], 8);
    let mut unknown = headers.to_vec();
    unknown.push(("last-event-id", "never-sent"));
    let nothing = http.without_body(Method::GET, &unknown).await;
    assert_eq!(nothing.status, StatusCode::OK);
    assert!(nothing.events().is_empty());

    // Ending the session ends its GET stream.
    let deleted = http.without_body(Method::DELETE, &headers).await;
    assert_eq!(deleted.status, StatusCode::OK);
    let end = tokio::time::timeout(PATIENCE, stream.collect()).await;
    assert!(end.expect("the stream ended").is_ok());
    replay.stop().await;
}

#[tokio::test]
async fn a_request_never_answered_keeps_its_stream_open_until_shutdown() {
    use Direction::{ClientToServer as C, ServerToClient as S};
    let listen =
        json!({"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen", "params": {}});
    let discover_result = json!({"supportedVersions": [MODERN_VERSION], "capabilities": {}});
    let traffic = vec![
        (C, modern_request(1, "server/discover", json!({}))),
        (
            S,
            json!({"jsonrpc": "2.0", "id": 1, "result": discover_result}),
        ),
        (C, listen.clone()),
        (
            S,
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                   "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen:0"}}}),
        ),
    ];
    let replay = Replay::start(crafted(streamable("/mcp", None), traffic)).await;
    let http = replay.http();
    let headers = [
        ("mcp-protocol-version", MODERN_VERSION),
        ("mcp-method", "subscriptions/listen"),
    ];
    let body = Bytes::from(serde_json::to_vec(&listen).unwrap());
    let (status, answer_headers, mut stream) =
        http.open(http.request(Method::POST, &headers, body)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer_headers["content-type"], "text/event-stream");
    let events = read_events(&mut stream, 1).await;
    assert_eq!(
        events[0].message()["method"],
        "notifications/subscriptions/acknowledged"
    );
    let still_open = tokio::time::timeout(Duration::from_millis(200), stream.frame()).await;
    assert!(still_open.is_err(), "the stream stays open");
    let stopping = tokio::spawn(replay.stop());
    let end = tokio::time::timeout(PATIENCE, stream.collect()).await;
    assert!(end.is_ok(), "shutdown ends the stream");
    stopping.await.unwrap();
}

#[tokio::test]
async fn http_sse_recordings_are_served_over_http_sse() {
    let transport = Transport::HttpSse {
        url: "http://upstream.invalid/sse".into(),
        sse_endpoint: "/sse".into(),
        post_endpoint: "/messages".into(),
    };
    let replay = Replay::start(crafted(transport, legacy_traffic())).await;
    let sse = replay.http().at("/sse");
    let (status, _, mut stream) = sse
        .open(sse.request(
            Method::GET,
            &[("accept", "text/event-stream")],
            Bytes::new(),
        ))
        .await;
    assert_eq!(status, StatusCode::OK);
    let announced = read_events(&mut stream, 1).await.remove(0);
    assert_eq!(announced.event.as_deref(), Some("endpoint"));
    assert!(
        announced.data.starts_with("/messages?sessionId="),
        "{announced:?}"
    );

    let post = replay.http().at(&announced.data);
    let reply = post.post(&initialize_request("i"), &[]).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    let answer = read_events(&mut stream, 1).await.remove(0);
    assert_eq!(answer.event.as_deref(), Some("message"));
    assert_eq!(answer.message()["id"], "i");
    assert_eq!(answer.message()["result"]["serverInfo"]["name"], "crafted");

    let reply = replay
        .http()
        .at("/messages")
        .post(&echo(json!(1)), &[])
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "no sessionId");
    let reply = replay
        .http()
        .at("/messages?sessionId=bogus")
        .post(&echo(json!(1)), &[])
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    let reply = replay.http().post(&echo(json!(1)), &[]).await;
    assert_eq!(
        reply.status,
        StatusCode::NOT_FOUND,
        "no Streamable HTTP endpoint"
    );
    let stopping = tokio::spawn(replay.stop());
    let end = tokio::time::timeout(PATIENCE, stream.collect()).await;
    assert!(end.is_ok(), "shutdown ends the stream");
    stopping.await.unwrap();
}

// ---------------------------------------------------------------------------
// Sessions: each new one replays the cassette from the top, unless shared

fn tools_list(id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}})
}

/// A legacy session's `tools/list` and echo, as the client sees them.
async fn list_and_echo(http: &Http, session: &str) -> (Value, Value) {
    let headers = session_headers(session);
    let tools = http.post(&tools_list("list"), &headers).await;
    assert_eq!(tools.status, StatusCode::OK, "{}", tools.text());
    let echoed = http.post(&echo(json!("echo")), &headers).await;
    assert_eq!(echoed.status, StatusCode::OK, "{}", echoed.text());
    (tools.json(), echoed.json())
}

fn assert_whole_recording(seen: &(Value, Value), which: &str) {
    let (tools, echoed) = seen;
    let listed = tools["result"]["tools"].as_array();
    assert_eq!(listed.map(Vec::len), Some(9), "{which}: {tools}");
    assert_eq!(tool_text(echoed), "echo: hello", "{which}");
}

#[tokio::test]
async fn every_new_session_replays_the_cassette_from_the_top() {
    let replay = Replay::start(demo("demo-legacy.json")).await;
    let http = replay.http();
    // Interleaved: both sessions are live at once.
    let first = http.initialize().await;
    let second = http.initialize().await;
    let headers = session_headers(&first);
    let early = http.post(&tools_list("early"), &headers).await.json();
    let seen_second = list_and_echo(&http, &second).await;
    assert_whole_recording(&seen_second, "second session");
    let echoed = http.post(&echo(json!("e")), &headers).await.json();
    assert_whole_recording(&(early, echoed), "first session");
    // One after another, the earlier ones ended.
    for session in [first, second] {
        let headers = session_headers(&session);
        let ended = http.without_body(Method::DELETE, &headers).await;
        assert_eq!(ended.status, StatusCode::OK);
    }
    for n in 3..6 {
        let session = http.initialize().await;
        let seen = list_and_echo(&http, &session).await;
        assert_whole_recording(&seen, &format!("session {n}"));
        // A session's own answers still run out, as a fresh server's would.
        let headers = session_headers(&session);
        let again = http.post(&echo(json!("again")), &headers).await.json();
        assert_eq!(again["error"]["code"], EXHAUSTED, "session {n}: {again}");
    }
    let summary = replay.stop().await;
    assert_eq!(summary.misses.len(), 3, "one exhausted echo per session");
    assert!(summary.misses.iter().all(|m| m.code() == EXHAUSTED));
    assert!(!summary.unused.contains(&3) && !summary.unused.contains(&4));
    assert!(summary.unused.contains(&5), "add was never called");
}

#[tokio::test]
async fn unused_counts_what_no_session_used() {
    let replay = Replay::start(demo("demo-legacy.json")).await;
    let http = replay.http();
    let lister = http.initialize().await;
    let tools = http.post(&tools_list("l"), &session_headers(&lister)).await;
    assert!(tools.json()["result"]["tools"].is_array());
    let adder = http.initialize().await;
    let add = call(json!(1), "add", json!({"a": 2, "b": 40}));
    let added = http.post(&add, &session_headers(&adder)).await.json();
    assert!(added["result"].is_object(), "{added}");
    let summary = replay.stop().await;
    assert!(summary.misses.is_empty(), "{:?}", summary.misses);
    assert!(!summary.unused.contains(&3), "tools/list was used by one");
    assert!(!summary.unused.contains(&5), "add was used by the other");
    assert!(summary.unused.contains(&4), "echo was used by neither");
    assert!(!summary.unused.contains(&0), "initialize was used");
}

#[tokio::test]
async fn sequential_order_starts_again_in_each_session() {
    let rules = Rules {
        strategy: Strategy::Sequential,
        ..Rules::default()
    };
    let replay = Replay::start_sessions(
        demo("demo-legacy.json"),
        Some(rules.clone()),
        SessionMode::Isolated,
    )
    .await;
    let http = replay.http();
    for n in 0..3 {
        let session = http.initialize().await;
        assert_whole_recording(&list_and_echo(&http, &session).await, &n.to_string());
    }
    let summary = replay.stop().await;
    assert!(summary.misses.is_empty(), "{:?}", summary.misses);

    // Shared: the second session's tools/list is out of order.
    let replay =
        Replay::start_sessions(demo("demo-legacy.json"), Some(rules), SessionMode::Shared).await;
    let http = replay.http();
    let session = http.initialize().await;
    assert_whole_recording(&list_and_echo(&http, &session).await, "first");
    let session = http.initialize().await;
    let tools = http
        .post(&tools_list("l"), &session_headers(&session))
        .await;
    assert_eq!(
        tools.json()["error"]["code"],
        OUT_OF_ORDER,
        "{}",
        tools.text()
    );
    replay.stop().await;
}

#[tokio::test]
async fn shared_sessions_draw_from_one_set_of_answers() {
    let replay = Replay::start_sessions(demo("demo-legacy.json"), None, SessionMode::Shared).await;
    let http = replay.http();
    let first = http.initialize().await;
    assert_whole_recording(&list_and_echo(&http, &first).await, "first");
    let second = http.initialize().await;
    let (tools, echoed) = list_and_echo(&http, &second).await;
    for answer in [&tools, &echoed] {
        assert_eq!(answer["error"]["code"], EXHAUSTED, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("answered 1 time(s)"), "{message}");
    }
    let summary = replay.stop().await;
    assert_eq!(summary.misses.len(), 2);
}

/// One modern client run: discover, then `tools/list` and an echo, as the
/// client sees them (2026-07-28 has no sessions: POSTs only).
async fn modern_client_run(http: &Http) -> (Value, Value) {
    let version = ("mcp-protocol-version", MODERN_VERSION);
    let discover = modern_request(1, "server/discover", json!({}));
    let found = http
        .post(&discover, &[version, ("mcp-method", "server/discover")])
        .await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.text());
    assert!(found.json()["result"]["supportedVersions"].is_array());
    assert!(found.header("mcp-session-id").is_none(), "no sessions");
    let list = modern_request(2, "tools/list", json!({}));
    let tools = http
        .post(&list, &[version, ("mcp-method", "tools/list")])
        .await;
    let echo = modern_request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hello"}}),
    );
    let headers = [version, ("mcp-method", "tools/call"), ("mcp-name", "echo")];
    let echoed = http.post(&echo, &headers).await;
    (tools.json(), echoed.json())
}

#[tokio::test]
async fn each_modern_discover_replays_the_cassette_from_the_top() {
    let replay = Replay::start(demo("demo-modern.json")).await;
    let http = replay.http();
    // Before any discover: the initial state answers.
    let version = ("mcp-protocol-version", MODERN_VERSION);
    let add = modern_request(
        9,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 40}}),
    );
    let headers = [version, ("mcp-method", "tools/call"), ("mcp-name", "add")];
    let added = http.post(&add, &headers).await.json();
    assert!(added["result"].is_object(), "{added}");
    for n in 0..3 {
        let seen = modern_client_run(&http).await;
        let (tools, echoed) = &seen;
        let listed = tools["result"]["tools"].as_array().map(Vec::len);
        assert!(listed.is_some_and(|n| n > 0), "run {n}: {tools}");
        assert_eq!(tool_text(echoed), "echo: hello", "run {n}: {echoed}");
        // Within one run answers still run out, as a fresh server's would.
        let again = modern_request(
            4,
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "hello"}}),
        );
        let headers = [version, ("mcp-method", "tools/call"), ("mcp-name", "echo")];
        let again = http.post(&again, &headers).await.json();
        assert_eq!(again["error"]["code"], EXHAUSTED, "run {n}: {again}");
    }
    let summary = replay.stop().await;
    assert_eq!(summary.misses.len(), 3, "one exhausted echo per run");
    assert!(summary.misses.iter().all(|m| m.code() == EXHAUSTED));
    for used in [0, 1, 2, 3] {
        assert!(!summary.unused.contains(&used), "{used} was used by a run");
    }
    assert!(summary.unused.contains(&4), "count was never called");
}

#[tokio::test]
async fn modern_unused_counts_what_no_client_run_used() {
    let replay = Replay::start(demo("demo-modern.json")).await;
    let http = replay.http();
    let version = ("mcp-protocol-version", MODERN_VERSION);
    let discover = modern_request(1, "server/discover", json!({}));
    let discovering = [version, ("mcp-method", "server/discover")];
    let add = modern_request(
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 40}}),
    );
    let adding = [version, ("mcp-method", "tools/call"), ("mcp-name", "add")];
    let divide = modern_request(
        2,
        "tools/call",
        json!({"name": "divide", "arguments": {"a": 1, "b": 0}}),
    );
    let dividing = [
        version,
        ("mcp-method", "tools/call"),
        ("mcp-name", "divide"),
    ];
    // The first run discovers (twice, as some clients do), then adds.
    for _ in 0..2 {
        assert_eq!(
            http.post(&discover, &discovering).await.status,
            StatusCode::OK
        );
    }
    assert!(http.post(&add, &adding).await.json()["result"].is_object());
    assert_eq!(
        http.post(&discover, &discovering).await.status,
        StatusCode::OK
    );
    let added = http.post(&add, &adding).await.json();
    assert!(added["result"].is_object(), "the second run's add: {added}");
    let divided = http.post(&divide, &dividing).await.json();
    assert!(
        divided.get("result").or(divided.get("error")).is_some(),
        "{divided}"
    );
    assert_ne!(divided["error"]["code"], EXHAUSTED, "{divided}");
    let summary = replay.stop().await;
    assert!(summary.misses.is_empty(), "{:?}", summary.misses);
    assert!(!summary.unused.contains(&0), "discover was used");
    assert!(!summary.unused.contains(&3), "add was used by both runs");
    assert!(
        !summary.unused.contains(&5),
        "divide was used by the second"
    );
    assert!(summary.unused.contains(&2), "echo was used by neither");
}

#[tokio::test]
async fn shared_modern_client_runs_draw_from_one_set_of_answers() {
    let replay = Replay::start_sessions(demo("demo-modern.json"), None, SessionMode::Shared).await;
    let http = replay.http();
    let (_, echoed) = modern_client_run(&http).await;
    assert_eq!(tool_text(&echoed), "echo: hello", "{echoed}");
    let (tools, echoed) = modern_client_run(&http).await;
    for answer in [&tools, &echoed] {
        assert_eq!(answer["error"]["code"], EXHAUSTED, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("answered 1 time(s)"), "{message}");
    }
    let summary = replay.stop().await;
    assert_eq!(summary.misses.len(), 2);
}

#[tokio::test]
async fn each_http_sse_stream_is_a_session_of_its_own() {
    let transport = Transport::HttpSse {
        url: "http://upstream.invalid/sse".into(),
        sse_endpoint: "/sse".into(),
        post_endpoint: "/messages".into(),
    };
    let cassette = crafted(transport, legacy_traffic());
    for mode in [SessionMode::Isolated, SessionMode::Shared] {
        let replay = Replay::start_sessions(cassette.clone(), None, mode).await;
        let mut texts = Vec::new();
        for n in 0..2 {
            let sse = replay.http().at("/sse");
            let accept = [("accept", "text/event-stream")];
            let opened = sse.request(Method::GET, &accept, Bytes::new());
            let (_, _, mut stream) = sse.open(opened).await;
            let announced = read_events(&mut stream, 1).await.remove(0);
            let post = replay.http().at(&announced.data);
            let slow = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
                "name": "slow", "arguments": {}, "_meta": {"progressToken": "t"}}});
            assert_eq!(post.post(&slow, &[]).await.status, StatusCode::ACCEPTED);
            // Progress then the answer; a shared replay's second session
            // gets the exhausted error alone.
            let shared_again = mode == SessionMode::Shared && n == 1;
            let events = read_events(&mut stream, if shared_again { 1 } else { 2 }).await;
            let last = events.last().unwrap().message();
            if !shared_again {
                let progress = events[0].message();
                assert_eq!(progress["params"]["progressToken"], "t", "{progress}");
                texts.push(tool_text(&last).to_owned());
            } else {
                texts.push(last["error"]["code"].to_string());
            }
        }
        match mode {
            SessionMode::Isolated => assert_eq!(texts, ["slow done", "slow done"]),
            SessionMode::Shared => assert_eq!(texts, ["slow done", &EXHAUSTED.to_string()]),
        }
        replay.stop().await;
    }
}

// ---------------------------------------------------------------------------
// rmcp's Streamable HTTP client, compared with the same client over stdio

mod rmcp_client {
    use rmcp::model::{CallToolRequestParams, ProtocolVersion};
    use rmcp::service::RunningService;
    use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
    use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
    use serde_json::{Value, json};

    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Era {
        Legacy,
        Modern,
    }

    async fn connect<T, E, A>(transport: T, era: Era) -> RunningService<RoleClient, ()>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = match era {
            Era::Legacy => ().serve(transport).await,
            Era::Modern => {
                let lifecycle = ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                };
                ().serve_with_lifecycle(transport, lifecycle).await
            }
        };
        running.unwrap_or_else(|e| panic!("{era:?} handshake failed: {e}"))
    }

    /// What the client sees: the tool list and an echo.
    async fn session(client: RunningService<RoleClient, ()>) -> Value {
        let tools = client.list_tools(None).await.expect("tools/list");
        let arguments = json!({"message": "hello"}).as_object().unwrap().clone();
        let echo = client
            .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
            .await
            .expect("tools/call echo");
        client.cancel().await.expect("client shut down");
        json!({"tools": tools, "echo": echo})
    }

    async fn over_http(cassette: &str, era: Era) -> (Value, Summary) {
        let replay = Replay::start(demo(cassette)).await;
        let transport = StreamableHttpClientTransport::from_uri(replay.url("/mcp"));
        let seen = tokio::time::timeout(PATIENCE, session(connect(transport, era).await))
            .await
            .expect("the HTTP session ended in time");
        (seen, replay.stop().await)
    }

    async fn over_stdio(cassette: &str, era: Era) -> Value {
        let path = support::root().join("cassettes").join(cassette);
        let command = tokio::process::Command::from(support::replay(&path));
        let transport = TokioChildProcess::new(command).expect("replay started");
        tokio::time::timeout(PATIENCE, session(connect(transport, era).await))
            .await
            .expect("the stdio session ended in time")
    }

    async fn check(cassette: &str, era: Era) {
        let (http, summary) = over_http(cassette, era).await;
        let stdio = over_stdio(cassette, era).await;
        assert_eq!(http, stdio, "{era:?}: HTTP and stdio replays differ");
        let text = &http["echo"]["content"][0]["text"];
        assert_eq!(text, "echo: hello");
        assert_eq!(http["tools"]["tools"].as_array().unwrap().len(), 9);
        assert!(summary.misses.is_empty(), "{:?}", summary.misses);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn legacy_rmcp_client_sees_the_same_over_http_and_stdio() {
        check("demo-legacy.json", Era::Legacy).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn modern_rmcp_client_sees_the_same_over_http_and_stdio() {
        check("demo-modern.json", Era::Modern).await;
    }

    /// A test suite's clients one after another against one replay: each
    /// sees the whole recording, in either era.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn consecutive_rmcp_clients_each_see_the_whole_recording() {
        for (cassette, era) in [
            ("demo-modern.json", Era::Modern),
            ("demo-legacy.json", Era::Legacy),
        ] {
            let replay = Replay::start(demo(cassette)).await;
            let mut seen = Vec::new();
            for _ in 0..3 {
                let transport = StreamableHttpClientTransport::from_uri(replay.url("/mcp"));
                let run = tokio::time::timeout(PATIENCE, session(connect(transport, era).await));
                seen.push(run.await.expect("the client run ended in time"));
            }
            assert_eq!(
                seen[0]["echo"]["content"][0]["text"], "echo: hello",
                "{era:?}"
            );
            assert_eq!(seen[1], seen[0], "{era:?}: the second client");
            assert_eq!(seen[2], seen[0], "{era:?}: the third client");
            let summary = replay.stop().await;
            assert!(summary.misses.is_empty(), "{era:?}: {:?}", summary.misses);
        }
    }
}

/// Over Streamable HTTP, one cassette answers both eras: a legacy client
/// initialises against a 2026-07-28 cassette and gets results without
/// `resultType`; a 2026-07-28 client discovers a legacy cassette and gets
/// `resultType: "complete"`, and a tool whose recorded server asked for
/// sampling answers `input_required`, then the recorded result on retry.
#[tokio::test]
async fn one_cassette_answers_both_eras_over_http() {
    let replay = Replay::start(demo("demo-modern.json")).await;
    let init = replay.http().post(&initialize_request("init"), &[]).await;
    let result = &init.json()["result"];
    assert_eq!(result["protocolVersion"], LEGACY_VERSION, "{result}");
    assert_eq!(result["serverInfo"]["name"], "mcpcassette-demo", "{result}");
    assert!(result["capabilities"]["tools"].is_object(), "{result}");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hello"}}});
    let reply = replay.http().post(&call, &[]).await.json();
    assert_eq!(
        reply["result"]["content"][0]["text"], "echo: hello",
        "{reply}"
    );
    assert!(reply["result"].get("resultType").is_none(), "{reply}");
    let summary = replay.stop().await;
    assert!(summary.misses.is_empty(), "{:?}", summary.misses);

    let replay = Replay::start(demo("demo-legacy.json")).await;
    let headers = |method| {
        [
            ("mcp-protocol-version", MODERN_VERSION),
            ("mcp-method", method),
        ]
    };
    let discover = modern_request(1, "server/discover", json!({}));
    let reply = replay
        .http()
        .post(&discover, &headers("server/discover"))
        .await
        .json();
    let result = &reply["result"];
    assert_eq!(result["resultType"], "complete", "{reply}");
    assert_eq!(
        result["supportedVersions"],
        json!([MODERN_VERSION, LEGACY_VERSION]),
        "{reply}"
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "mcpcassette-demo",
        "{reply}"
    );
    let call = |id, params: Value| modern_request(id, "tools/call", params);
    let call_headers = |name| {
        [
            ("mcp-protocol-version", MODERN_VERSION),
            ("mcp-method", "tools/call"),
            ("mcp-name", name),
        ]
    };
    let echo = call(
        2,
        json!({"name": "echo", "arguments": {"message": "hello"}}),
    );
    let reply = replay
        .http()
        .post(&echo, &call_headers("echo"))
        .await
        .json();
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(
        reply["result"]["content"][0]["text"], "echo: hello",
        "{reply}"
    );
    let arguments = json!({"text": "cassettes make MCP tests fast"});
    let ask = call(3, json!({"name": "summarize", "arguments": arguments}));
    let reply = replay
        .http()
        .post(&ask, &call_headers("summarize"))
        .await
        .answer();
    let result = &reply["result"];
    assert_eq!(result["resultType"], "input_required", "{reply}");
    let (key, input) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(input["method"], "sampling/createMessage", "{reply}");
    let answer = json!({"role": "assistant", "model": "demo-model", "stopReason": "endTurn",
        "content": {"type": "text", "text": "a short summary"}});
    let retry = call(
        4,
        json!({"name": "summarize", "arguments": arguments,
        "inputResponses": {key: answer}, "requestState": result["requestState"]}),
    );
    let reply = replay
        .http()
        .post(&retry, &call_headers("summarize"))
        .await
        .answer();
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(
        reply["result"]["content"][0]["text"], "summary: a short summary",
        "{reply}"
    );
    let summary = replay.stop().await;
    assert!(summary.misses.is_empty(), "{:?}", summary.misses);
    assert!(
        summary.answer_mismatches.is_empty(),
        "{:?}",
        summary.answer_mismatches
    );
}

/// A 2026-07-28 `tools/call` repeats the arguments its tool's input schema
/// marks with `x-mcp-header` in `Mcp-Param-*` headers; replay holds them
/// to the body as a server must: a header that disagrees, is missing, or
/// names an argument the body lacks gets 400 with -32020, and a
/// Base64-wrapped value is read unwrapped.
#[tokio::test]
async fn mcp_param_headers_are_checked_against_the_arguments() {
    let mut cassette = demo("demo-modern.json");
    let list = cassette
        .interactions
        .iter_mut()
        .find(|i| i.method() == "tools/list")
        .unwrap();
    list.response.as_mut().unwrap().modify(|response| {
        let tools = response["result"]["tools"].as_array_mut().unwrap();
        let echo = tools.iter_mut().find(|t| t["name"] == "echo").unwrap();
        echo["inputSchema"]["properties"]["message"]["x-mcp-header"] = json!("Message");
    });
    // The same call is answered each time it gets through.
    let mut rules = cassette.rules.clone();
    rules.on_exhausted = OnExhausted::RepeatLast;
    let replay = Replay::start_sessions(cassette, Some(rules), SessionMode::Isolated).await;
    let http = replay.http();
    let echo = modern_request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hello"}}),
    );
    let base = [
        ("mcp-protocol-version", MODERN_VERSION),
        ("mcp-method", "tools/call"),
        ("mcp-name", "echo"),
    ];
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut headers = base.to_vec();
        headers.extend_from_slice(extra);
        headers
    };
    for (headers, expected) in [
        (with(&[("mcp-param-message", "hello")]), None),
        (with(&[("mcp-param-message", "=?base64?aGVsbG8=?=")]), None),
        (
            with(&[("mcp-param-message", "bye")]),
            Some("does not match argument `message`"),
        ),
        (with(&[]), Some("missing Mcp-Param-Message header")),
    ] {
        let reply = http.post(&echo, &headers).await;
        match expected {
            None => {
                assert_eq!(
                    reply.status,
                    StatusCode::OK,
                    "{headers:?}: {}",
                    reply.text()
                );
                assert_eq!(tool_text(&reply.json()), "echo: hello");
            }
            Some(reason) => {
                assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{headers:?}");
                let error = &reply.json()["error"];
                assert_eq!(error["code"], -32020, "{error}");
                assert!(
                    error["message"].as_str().unwrap().contains(reason),
                    "{error}"
                );
                assert_eq!(reply.json()["id"], 2);
            }
        }
    }
    replay.stop().await;
}

// ---------------------------------------------------------------------------
// Faults over Streamable HTTP (docs/faults.md)

impl Replay {
    /// The demo cassette's replay behind a faults overlay of `rules`.
    async fn start_faulty(rules: Value) -> Replay {
        let engine = Engine::new(demo("demo-legacy.json"), Path::new("faulty.json"));
        let faults = mcpcassette::cassette::Faults::from_document(&rules).unwrap();
        let overlay =
            mcpcassette::faults::FaultOverlay::new(std::sync::Arc::clone(&engine) as _, faults);
        let (ready, bound) = oneshot::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            mcpcassette::server::http::serve_http(
                overlay,
                HttpReplayConfig::new("127.0.0.1:0".parse().unwrap()),
                move |addr| {
                    let _ = ready.send(addr);
                },
                async move {
                    let _ = stopped.await;
                },
            )
            .await?;
            Ok(engine.summary_of_every_session())
        });
        let addr = tokio::time::timeout(PATIENCE, bound)
            .await
            .unwrap()
            .unwrap();
        Replay { addr, stop, task }
    }
}

#[tokio::test]
async fn an_http_fault_answers_with_its_status_and_retry_after() {
    let replay = Replay::start_faulty(json!([
        {"name": "echo", "nth": 1, "http": {"status": 429, "retry_after": 3}}
    ]))
    .await;
    let http = replay.http();
    let session = http.initialize().await;
    let limited = http.post(&echo(json!(1)), &session_headers(&session)).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(limited.header("retry-after"), Some("3"));
    assert_eq!(limited.json()["error"]["code"], -32000);
    // The session lives on: the retry is answered as recorded.
    let retried = http.post(&echo(json!(2)), &session_headers(&session)).await;
    assert_eq!(retried.status, StatusCode::OK);
    assert_eq!(tool_text(&retried.answer()), "echo: hello");
    replay.stop().await;
}

#[tokio::test]
async fn a_404_fault_ends_the_session_and_the_next_one_is_served() {
    let replay =
        Replay::start_faulty(json!([{"name": "echo", "nth": 1, "session": 1, "http": 404}])).await;
    let http = replay.http();
    let session = http.initialize().await;
    let expired = http.post(&echo(json!(1)), &session_headers(&session)).await;
    assert_eq!(expired.status, StatusCode::NOT_FOUND);
    // Gone for good, as an expired session is.
    let again = http
        .post(
            &call(json!(2), "add", json!({"a": 2, "b": 40})),
            &session_headers(&session),
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND, "{}", again.text());
    // The client initialises again: a new session, served from the top.
    let fresh = http.initialize().await;
    assert_ne!(fresh, session);
    let answered = http.post(&echo(json!(3)), &session_headers(&fresh)).await;
    assert_eq!(tool_text(&answered.answer()), "echo: hello");
    replay.stop().await;
}

#[tokio::test]
async fn a_disconnect_cuts_an_sse_answer_after_n_events_or_drops_the_connection() {
    let replay = Replay::start_faulty(json!([
        {"name": "count", "disconnect": {"after": 1}},
        {"name": "echo", "disconnect": true},
    ]))
    .await;
    let http = replay.http();
    let session = http.initialize().await;
    let count = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "count", "arguments": {"steps": 3}, "_meta": {"progressToken": "count-1"}}});
    let body = Bytes::from(serde_json::to_vec(&count).unwrap());
    let headers: Vec<(&str, &str)> = session_headers(&session)
        .into_iter()
        .chain([("accept", BOTH)])
        .collect();
    let (status, _, mut body) = http.open(http.request(Method::POST, &headers, body)).await;
    assert_eq!(status, StatusCode::OK);
    let mut seen = Vec::new();
    let ended_in_error = loop {
        match tokio::time::timeout(PATIENCE, body.frame())
            .await
            .expect("in time")
        {
            Some(Ok(frame)) => seen.extend_from_slice(frame.data_ref().map_or(&[][..], |d| &d[..])),
            Some(Err(_)) => break true,
            None => break false,
        }
    };
    assert!(ended_in_error, "the stream is cut, not ended");
    let events = parse_events(std::str::from_utf8(&seen).unwrap());
    let messages: Vec<Value> = events
        .iter()
        .filter(|e| !e.data.is_empty())
        .map(SseEvent::message)
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["method"], "notifications/progress");
    // Without events to write first, the connection drops with no answer.
    let request = http.request(
        Method::POST,
        &session_headers(&session),
        Bytes::from(serde_json::to_vec(&echo(json!(2))).unwrap()),
    );
    let dropped = tokio::time::timeout(PATIENCE, http.client().request(request))
        .await
        .expect("in time");
    assert!(
        dropped.is_err(),
        "no response: {:?}",
        dropped.map(|r| r.status())
    );
    replay.stop().await;
}

#[tokio::test]
async fn a_truncated_answer_over_http_is_not_json() {
    let replay = Replay::start_faulty(json!([{"name": "echo", "malformed": "truncated"}])).await;
    let http = replay.http();
    let session = http.initialize().await;
    let headers: Vec<(&str, &str)> = session_headers(&session)
        .into_iter()
        .chain([("accept", "application/json")])
        .collect();
    let reply = http.post(&echo(json!(1)), &headers).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(
        serde_json::from_slice::<Value>(&reply.body).is_err(),
        "{}",
        reply.text()
    );
    assert!(reply.text().starts_with("{\"jsonrpc\""), "{}", reply.text());
    replay.stop().await;
}
