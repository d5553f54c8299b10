//! Recording over HTTP: [`record_http`] as a reverse proxy.
//!
//! Always run: a small in-test server that speaks enough Streamable HTTP
//! (JSON answers, SSE answers that wait for the test between events, 202s,
//! a session id, a 500, a stream cut short) and of the 2024-11-05 HTTP+SSE
//! transport. Ignored (`.ci/run` runs them): the same against
//! `@modelcontextprotocol/server-everything` in both HTTP modes.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http::header::HeaderMap;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcpcassette::cassette::{
    self, Cassette, Event, HttpSituation, SessionState, SseFrame, Transport,
};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc};

use crate::support::cli::Cli;
use crate::support::http_client::{self, request};
use crate::support::pinned::everything_js;
use crate::support::recorder::Recorder;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type TestBody = BoxBody<Bytes, BoxError>;
/// Writes the frames of a streamed answer.
type Frames = mpsc::UnboundedSender<Result<Frame<Bytes>, BoxError>>;

/// How long any one step may take before the test calls it stuck.
const PATIENCE: Duration = Duration::from_secs(10);

/// Header values the client sends that must never reach a cassette.
const SECRETS: [&str; 4] = [
    "bearer-secret-value",
    "cookie-secret-value",
    "apikey-secret-value",
    SESSION_ID,
];
const SESSION_ID: &str = "session-secret-value";

// ---------------------------------------------------------------------------
// The fake upstream.

/// What the fake server shares between requests.
#[derive(Default)]
struct Fake {
    addr: OnceLock<SocketAddr>,
    /// Lets a `slow` call send its last event.
    release: Notify,
    /// The client answered a server request.
    answered: Notify,
    /// The open HTTP+SSE stream, for answers to POSTs on `/message`.
    sse: Mutex<Option<Frames>>,
    /// Headers of every request the fake received.
    headers: Mutex<Vec<HeaderMap>>,
    /// GET on `/mcp` opens a server stream (else 405).
    get_stream: AtomicBool,
}

/// Starts the fake server on 127.0.0.1.
async fn start_fake() -> Arc<Fake> {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let fake = Arc::new(Fake::default());
    fake.addr.set(listener.local_addr().unwrap()).unwrap();
    let shared = fake.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let fake = shared.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request| fake_answer(fake.clone(), request));
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    fake
}

impl Fake {
    fn addr(&self) -> SocketAddr {
        *self.addr.get().unwrap()
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr())
    }
}

async fn fake_answer(
    fake: Arc<Fake>,
    request: Request<Incoming>,
) -> Result<Response<TestBody>, Infallible> {
    let (parts, body) = request.into_parts();
    fake.headers.lock().unwrap().push(parts.headers.clone());
    let body = body.collect().await.unwrap().to_bytes();
    Ok(match (&parts.method, parts.uri.path()) {
        (&Method::POST, "/mcp") if body.starts_with(b"[") => fake_batch(&body),
        (&Method::POST, "/mcp") => fake_post(&fake, &body),
        (&Method::GET, "/mcp") if fake.get_stream.load(Ordering::Relaxed) => fake_get_stream(),
        (&Method::GET, "/mcp") => status(StatusCode::METHOD_NOT_ALLOWED),
        (&Method::POST, "/register") => {
            json_response(&json!({"client_secret": "oauth-secret-value"}))
        }
        (&Method::DELETE, "/mcp") => status(StatusCode::OK),
        (&Method::GET, "/sse") => fake_sse_open(&fake),
        (&Method::POST, "/message") => fake_sse_post(&fake, &body),
        _ => status(StatusCode::NOT_FOUND),
    })
}

/// Streamable HTTP: a POST on `/mcp`.
fn fake_post(fake: &Arc<Fake>, body: &[u8]) -> Response<TestBody> {
    let message: Value = serde_json::from_slice(body).unwrap();
    let Some(method) = message["method"].as_str() else {
        // The client answered a server request.
        fake.answered.notify_one();
        return status(StatusCode::ACCEPTED);
    };
    let Some(id) = message.get("id").cloned() else {
        return status(StatusCode::ACCEPTED);
    };
    match (method, message["params"]["name"].as_str()) {
        ("initialize", _) => {
            let mut response = json_response(&result(id, initialize_result()));
            response
                .headers_mut()
                .insert("mcp-session-id", SESSION_ID.parse().unwrap());
            response
        }
        ("tools/call", Some("slow")) => fake_slow(fake.clone(), id),
        ("tools/call", Some("ask")) => fake_ask(fake.clone(), id),
        ("tools/call", Some("cut")) => fake_cut(id),
        ("tools/call", Some("boom")) => {
            let mut response = text(StatusCode::INTERNAL_SERVER_ERROR, "internal kaboom");
            response
                .headers_mut()
                .insert("x-upstream", "fake".parse().unwrap());
            response
        }
        // Some servers repeat the session id in what they say.
        _ => json_response(&result(
            id,
            json!({"tools": [{"name": "slow", "description": format!("for session {SESSION_ID}")}]}),
        )),
    }
}

/// 2025-03-26 batches: one JSON array answering every request in it.
fn fake_batch(body: &[u8]) -> Response<TestBody> {
    let batch: Vec<Value> = serde_json::from_slice(body).unwrap();
    let answers: Vec<Value> = batch
        .iter()
        .filter(|m| m.get("method").is_some())
        .filter_map(|m| m.get("id"))
        .map(|id| result(id.clone(), json!({"batched": true})))
        .collect();
    json_response(&Value::Array(answers))
}

/// The server's own stream: one notification, then it stays open.
fn fake_get_stream() -> Response<TestBody> {
    let (tx, response) = sse_response();
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    let _ = tx.send(data(&format!("id: g1\ndata: {changed}\n\n")));
    tokio::spawn(async move {
        // Keeps the stream open until the test ends.
        tx.closed().await;
    });
    response
}

/// A priming event, progress, then (once released) the response.
fn fake_slow(fake: Arc<Fake>, id: Value) -> Response<TestBody> {
    let (tx, response) = sse_response();
    tokio::spawn(async move {
        let _ = tx.send(data("id: p0\nretry: 1000\ndata:\n\n"));
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "tok", "progress": 1}});
        let _ = tx.send(data(&format!("id: e1\ndata: {progress}\n\n")));
        fake.release.notified().await;
        let _ = tx.send(data(&format!(
            "id: e2\ndata: {}\n\n",
            result(id, json!({"content": [{"type": "text", "text": "done"}]}))
        )));
    });
    response
}

/// A server request (roots/list), then the response once the client answered.
fn fake_ask(fake: Arc<Fake>, id: Value) -> Response<TestBody> {
    let (tx, response) = sse_response();
    tokio::spawn(async move {
        let ask = json!({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"});
        let _ = tx.send(data(&format!("data: {ask}\n\n")));
        fake.answered.notified().await;
        let _ = tx.send(data(&format!(
            "data: {}\n\n",
            result(id, json!({"content": []}))
        )));
    });
    response
}

/// One event, then the connection breaks.
fn fake_cut(id: Value) -> Response<TestBody> {
    let (tx, response) = sse_response();
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": id, "progress": 1}});
    let _ = tx.send(data(&format!("data: {progress}\n\n")));
    tokio::spawn(async move {
        // After the first event has gone out.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let _ = tx.send(Err("the server fell over".into()));
    });
    response
}

/// HTTP+SSE: GET `/sse` announces `/message` with an absolute URL.
fn fake_sse_open(fake: &Fake) -> Response<TestBody> {
    let (tx, response) = sse_response();
    let announce = format!(
        "event: endpoint\ndata: http://{}/message?sessionId={SESSION_ID}\n\n",
        fake.addr()
    );
    let _ = tx.send(data(&announce));
    *fake.sse.lock().unwrap() = Some(tx);
    response
}

/// HTTP+SSE: a POST on `/message`; answers go on the GET stream.
fn fake_sse_post(fake: &Fake, body: &[u8]) -> Response<TestBody> {
    let message: Value = serde_json::from_slice(body).unwrap();
    if let (Some(id), Some(_)) = (message.get("id"), message.get("method")) {
        let answer = result(id.clone(), json!({"ok": true, "session": SESSION_ID}));
        let sse = fake.sse.lock().unwrap();
        let _ = sse
            .as_ref()
            .unwrap()
            .send(data(&format!("event: message\ndata: {answer}\n\n")));
    }
    text(StatusCode::ACCEPTED, "Accepted")
}

fn initialize_result() -> Value {
    json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}})
}

fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn data(text: &str) -> Result<Frame<Bytes>, BoxError> {
    Ok(Frame::data(Bytes::from(text.to_owned())))
}

fn status(status: StatusCode) -> Response<TestBody> {
    let mut response = Response::new(Empty::new().map_err(|never| match never {}).boxed());
    *response.status_mut() = status;
    response
}

fn text(status: StatusCode, text: &'static str) -> Response<TestBody> {
    let mut response = Response::new(full(text));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", "text/plain; charset=utf-8".parse().unwrap());
    response
}

fn json_response(message: &Value) -> Response<TestBody> {
    let mut response = Response::new(full(message.to_string()));
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    response
}

fn full(body: impl Into<Bytes>) -> TestBody {
    Full::new(body.into())
        .map_err(|never| match never {})
        .boxed()
}

/// An SSE answer whose frames the returned sender writes.
fn sse_response() -> (Frames, Response<TestBody>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let frames = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|frame| (frame, rx))
    });
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(frames)));
    response
        .headers_mut()
        .insert("content-type", "text/event-stream".parse().unwrap());
    (tx, response)
}

// ---------------------------------------------------------------------------
// The recorder under test.

// ---------------------------------------------------------------------------
// A scripted client.

fn client() -> Client<HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new()).build_http()
}

/// What the client saw of one answer.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    status: u16,
    content_type: Option<String>,
    session: Option<String>,
    body: Bytes,
}

async fn send(
    method: Method,
    url: &str,
    body: Option<&Value>,
    session: Option<&str>,
) -> Response<Incoming> {
    let mut request = Request::builder()
        .method(method)
        .uri(url)
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {}", SECRETS[0]))
        .header("cookie", format!("sid={}", SECRETS[1]))
        .header("x-api-key", SECRETS[2]);
    if body.is_some() {
        request = request.header("content-type", "application/json");
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let body = body.map(|b| Bytes::from(b.to_string())).unwrap_or_default();
    tokio::time::timeout(
        PATIENCE,
        client().request(request.body(Full::new(body)).unwrap()),
    )
    .await
    .expect("no answer in time")
    .unwrap()
}

fn header(response: &Response<Incoming>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

/// Reads a response to the end.
async fn seen(response: Response<Incoming>) -> Seen {
    let status = response.status().as_u16();
    let content_type = header(&response, "content-type");
    let session = header(&response, "mcp-session-id");
    let body = tokio::time::timeout(PATIENCE, response.into_body().collect())
        .await
        .expect("the body did not end in time")
        .unwrap()
        .to_bytes();
    Seen {
        status,
        content_type,
        session,
        body,
    }
}

/// Reads frames until the body so far contains `marker`.
async fn read_until(body: &mut Incoming, so_far: &mut Vec<u8>, marker: &str) {
    while !String::from_utf8_lossy(so_far).contains(marker) {
        let frame = tokio::time::timeout(PATIENCE, body.frame())
            .await
            .unwrap_or_else(|_| panic!("`{marker}` did not arrive: the stream is held back"))
            .expect("the stream ended early")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            so_far.extend_from_slice(&data);
        }
    }
}

/// Reads an SSE answer to the end, doing `between` once `marker` arrived.
async fn seen_streaming<F: Future<Output = ()>>(
    response: Response<Incoming>,
    marker: &str,
    between: impl FnOnce() -> F,
) -> Seen {
    let status = response.status().as_u16();
    let content_type = header(&response, "content-type");
    let mut body = response.into_body();
    let mut so_far = Vec::new();
    read_until(&mut body, &mut so_far, marker).await;
    between().await;
    let rest = tokio::time::timeout(PATIENCE, body.collect())
        .await
        .expect("the stream did not end")
        .unwrap()
        .to_bytes();
    so_far.extend_from_slice(&rest);
    Seen {
        status,
        content_type,
        session: None,
        body: so_far.into(),
    }
}

/// A call of `tool` asking for progress.
fn call(id: u64, tool: &str) -> Value {
    let mut call = http_client::call(id, tool, json!({}));
    call["params"]["_meta"] = json!({"progressToken": "tok"});
    call
}

/// One legacy session against the fake at `url` (direct or proxied).
async fn script(fake: &Arc<Fake>, url: &str) -> Vec<Seen> {
    let mut seen_all = Vec::new();
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let init = seen(send(Method::POST, url, Some(&init), None).await).await;
    let session = init.session.clone().expect("a session id");
    seen_all.push(init);
    let s = Some(session.as_str());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    seen_all.push(seen(send(Method::POST, url, Some(&initialized), s).await).await);
    let list = request(1, "tools/list", json!({}));
    seen_all.push(seen(send(Method::POST, url, Some(&list), s).await).await);

    let slow = send(Method::POST, url, Some(&call(2, "slow")), s).await;
    seen_all.push(
        seen_streaming(slow, "notifications/progress", || async {
            fake.release.notify_one();
        })
        .await,
    );

    let ask = send(Method::POST, url, Some(&call(3, "ask")), s).await;
    seen_all.push(
        seen_streaming(ask, "roots/list", || async {
            let answer = json!({"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}});
            let accepted = seen(send(Method::POST, url, Some(&answer), s).await).await;
            assert_eq!(accepted.status, 202);
        })
        .await,
    );

    seen_all.push(seen(send(Method::POST, url, Some(&call(4, "boom")), s).await).await);
    seen_all.push(seen(send(Method::GET, url, None, s).await).await);
    seen_all.push(seen(send(Method::DELETE, url, None, s).await).await);
    seen_all
}

fn cassette_text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn assert_no_secrets(text: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "`{secret}` is in the cassette:\n{text}"
        );
    }
}

// ---------------------------------------------------------------------------
// Tests against the fake.

#[tokio::test(flavor = "multi_thread")]
async fn forwards_answers_unchanged_and_records_a_paired_session() {
    let fake = start_fake().await;
    let direct = script(&fake, &fake.url()).await;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("http.json");
    let upstream = format!("{}?api_key=query-secret-value", fake.url());
    let recorder = Recorder::start(Some(path.clone()), upstream).await;
    let proxied = script(&fake, &recorder.url("/mcp")).await;
    let outcome = recorder.finish().await;

    assert_eq!(proxied, direct, "the proxy changed what the client saw");
    assert_eq!(proxied[5].status, 500);
    assert_eq!(outcome.interactions, 6);
    assert!(outcome.recovered.is_empty());
    let forwarded = fake.headers.lock().unwrap();
    let last = forwarded.last().unwrap();
    assert!(
        last.get("authorization").is_some() && last.get("cookie").is_some(),
        "credentials reach the upstream: {last:?}"
    );

    let text = cassette_text(&path);
    assert_no_secrets(&text);
    assert!(!text.contains("query-secret-value"), "{text}");
    let recorded = cassette::load(&path).unwrap();
    check_streamable_cassette(&recorded, &fake);
}

fn check_streamable_cassette(recorded: &Cassette, fake: &Fake) {
    let Transport::StreamableHttp {
        url,
        endpoint,
        behaviour,
    } = &recorded.transport
    else {
        panic!("not Streamable HTTP: {:?}", recorded.transport)
    };
    assert_eq!(url, &format!("{}?api_key=[REDACTED]", fake.url()));
    assert_eq!(endpoint, "/mcp");
    assert_eq!(behaviour.get_status, Some(405));
    assert_eq!(behaviour.delete_status, Some(200));
    assert_eq!(recorded.server.as_ref().unwrap().info["name"], "fake");

    let methods: Vec<&str> = recorded.interactions.iter().map(|i| i.method()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            "tools/call",
            "tools/call"
        ]
    );
    let http = |n: usize| recorded.interactions[n].http.clone().unwrap();

    let init = http(0);
    assert_eq!(init.status, 200);
    assert_eq!(init.content_type.as_deref(), Some("application/json"));
    assert!(init.issued_session && !init.had_session);
    assert!(init.body.is_none() && init.sse.is_empty());
    assert!(recorded.interactions[0].response.is_some());

    let initialized = http(1);
    assert_eq!(initialized.status, 202);
    assert!(initialized.had_session && !initialized.issued_session);
    assert_eq!(initialized.content_type, None);

    let tools = &recorded.interactions[2].response.as_ref().unwrap()["result"]["tools"];
    assert_eq!(tools[0]["description"], "for session [REDACTED]");

    let slow = &recorded.interactions[3];
    assert_eq!(slow.during.len(), 1, "{slow:?}");
    assert_eq!(
        slow.response.as_ref().unwrap()["result"]["content"][0]["text"],
        "done"
    );
    let slow_http = http(3);
    assert_eq!(slow_http.content_type.as_deref(), Some("text/event-stream"));
    assert_eq!(
        slow_http.sse,
        vec![
            SseFrame {
                id: Some("p0".into()),
                event: None,
                retry: Some(1000),
                priming: true
            },
            SseFrame {
                id: Some("e1".into()),
                ..SseFrame::default()
            },
            SseFrame {
                id: Some("e2".into()),
                ..SseFrame::default()
            },
        ]
    );
    assert_eq!(slow_http.delays_ms.len(), 3);
    assert!(slow_http.delays_ms.windows(2).all(|w| w[0] <= w[1]));

    let ask = &recorded.interactions[4];
    let Event::ServerRequest {
        server_request,
        client_response,
    } = &ask.during[0]
    else {
        panic!("expected the server request: {ask:?}")
    };
    assert_eq!(server_request["method"], "roots/list");
    assert_eq!(
        client_response.as_ref().unwrap()["result"],
        json!({"roots": []})
    );
    assert!(ask.response.is_some());
    assert_eq!(http(4).sse.len(), 2);

    let boom = &recorded.interactions[5];
    assert!(boom.response.is_none());
    let boom_http = http(5);
    assert_eq!(boom_http.status, 500);
    assert_eq!(boom_http.content_type.as_deref(), Some("text/plain"));
    assert_eq!(boom_http.body.as_deref(), Some("internal kaboom"));
}

#[tokio::test(flavor = "multi_thread")]
async fn sse_events_pass_through_one_by_one() {
    let fake = start_fake().await;
    let recorder = Recorder::start(None, fake.url()).await;
    let response = send(
        Method::POST,
        &recorder.url("/mcp"),
        Some(&call(1, "slow")),
        None,
    )
    .await;
    assert_eq!(
        header(&response, "content-type").as_deref(),
        Some("text/event-stream")
    );
    let mut body = response.into_body();
    let mut so_far = Vec::new();
    // The server sends its last event only when released, so this only
    // returns if the proxy passed the first ones on by themselves.
    read_until(&mut body, &mut so_far, "notifications/progress").await;
    assert!(!String::from_utf8_lossy(&so_far).contains("done"));
    fake.release.notify_one();
    read_until(&mut body, &mut so_far, "done").await;
    recorder.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn upstream_down_is_a_502_naming_the_upstream() {
    let unused = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}/mcp", unused.local_addr().unwrap());
    drop(unused);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("down.json");
    let recorder = Recorder::start(Some(path.clone()), upstream.clone()).await;
    let ping = request(1, "ping", json!({}));
    let answer = seen(send(Method::POST, &recorder.url("/mcp"), Some(&ping), None).await).await;
    assert_eq!(answer.status, 502);
    let body = String::from_utf8_lossy(&answer.body);
    assert!(body.contains(&upstream), "{body}");
    recorder.finish().await;

    let recorded = cassette::load(&path).unwrap();
    let http = recorded.interactions[0].http.clone().unwrap();
    assert_eq!(http.status, 502);
    assert!(http.body.unwrap().contains(&upstream));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_cut_short_upstream_is_cut_short_for_the_client() {
    let fake = start_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.json");
    let recorder = Recorder::start(Some(path.clone()), fake.url()).await;
    let response = send(
        Method::POST,
        &recorder.url("/mcp"),
        Some(&call(7, "cut")),
        None,
    )
    .await;
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let mut so_far = Vec::new();
    read_until(&mut body, &mut so_far, "notifications/progress").await;
    let ended = tokio::time::timeout(PATIENCE, body.collect())
        .await
        .expect("the broken stream did not end");
    assert!(
        ended.is_err(),
        "the client must see the break, not a clean end"
    );
    recorder.finish().await;

    let recorded = cassette::load(&path).unwrap();
    let cut = &recorded.interactions[0];
    assert!(cut.response.is_none());
    assert_eq!(cut.during.len(), 1);
    assert_eq!(cut.http.as_ref().unwrap().sse.len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn probe_connections_are_not_recorded() {
    let fake = start_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probe.json");
    let recorder = Recorder::start(Some(path.clone()), fake.url()).await;
    for _ in 0..3 {
        drop(TcpStream::connect(recorder.addr).await.unwrap());
    }
    let outcome = recorder.finish().await;
    assert_eq!(outcome.interactions, 0);
    let recorded = cassette::load(&path).unwrap();
    assert!(recorded.interactions.is_empty() && recorded.opening.is_empty());
    assert!(
        fake.headers.lock().unwrap().is_empty(),
        "probes reached upstream"
    );
    assert!(!cassette::journal_path(&path).exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn passthrough_forwards_and_writes_nothing() {
    let fake = start_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::start(None, fake.url()).await;
    let list = request(1, "tools/list", json!({}));
    let answer = seen(send(Method::POST, &recorder.url("/mcp"), Some(&list), None).await).await;
    assert_eq!(answer.status, 200);
    assert!(String::from_utf8_lossy(&answer.body).contains("slow"));
    let outcome = recorder.finish().await;
    assert_eq!(outcome.interactions, 0);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorder_that_dies_leaves_a_journal_of_messages() {
    let fake = start_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("died.json");
    let recorder = Recorder::start(Some(path.clone()), fake.url()).await;
    let list = request(1, "tools/list", json!({}));
    seen(send(Method::POST, &recorder.url("/mcp"), Some(&list), None).await).await;
    recorder.task.abort();
    let _ = recorder.task.await;
    assert!(cassette::journal_path(&path).exists());
    // A dead process holds no lock; here the aborted recorder's last
    // connection task lets go of the journal when it ends.
    let journal = cassette::journal_path(&path);
    for _ in 0..200 {
        if cassette::journal_owner(&journal).is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }

    let recovery = cassette::recover(&path).unwrap().pop().unwrap();
    assert_eq!(recovery.interactions, 1);
    let recorded = cassette::load(&path).unwrap();
    assert!(recorded.interactions[0].response.is_some());
    assert!(matches!(
        recorded.transport,
        Transport::StreamableHttp { .. }
    ));

    // The same exchange recorded to the end: the recovered cassette keeps
    // how it travelled, as the finished one does.
    let finished_path = dir.path().join("finished.json");
    let recorder = Recorder::start(Some(finished_path.clone()), fake.url()).await;
    seen(send(Method::POST, &recorder.url("/mcp"), Some(&list), None).await).await;
    recorder.finish().await;
    let finished = cassette::load(&finished_path).unwrap();
    let http = |c: &cassette::Cassette| {
        let mut http = c.interactions[0].http.clone().expect("HTTP metadata");
        http.delays_ms.clear();
        http
    };
    assert_eq!(http(&recorded), http(&finished), "the journal kept it");
    assert_eq!(http(&recorded).status, 200);
}

#[cfg(not(feature = "tls"))]
#[tokio::test(flavor = "multi_thread")]
async fn https_upstreams_are_refused() {
    use mcpcassette::record::{HttpRecordConfig, record_http};
    let config = HttpRecordConfig {
        cassette: None,
        upstream: "https://127.0.0.1:1/mcp".into(),
        listen: "127.0.0.1:0".parse().unwrap(),
        redaction: Default::default(),
        observer: None,
        upstream_headers: Vec::new(),
    };
    let error = record_http(config, |_| {}, async {}).await.unwrap_err();
    assert!(error.to_string().contains("`tls` feature"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn http_sse_endpoint_is_rewritten_and_recorded() {
    let fake = start_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sse.json");
    let upstream = format!("http://{}/sse", fake.addr());
    let recorder = Recorder::start(Some(path.clone()), upstream).await;
    let stream = send(Method::GET, &recorder.url("/sse"), None, None).await;
    let mut events = stream.into_body();
    let mut so_far = Vec::new();
    read_until(&mut events, &mut so_far, "\n\n").await;
    let announced = String::from_utf8_lossy(&so_far).into_owned();
    let post_url = format!("{}?sessionId={SESSION_ID}", recorder.url("/message"));
    assert_eq!(announced, format!("event: endpoint\ndata: {post_url}\n\n"));

    for (id, method) in [(1, "initialize"), (2, "tools/list")] {
        let answer = seen(
            send(
                Method::POST,
                &post_url,
                Some(&request(id, method, json!({}))),
                None,
            )
            .await,
        )
        .await;
        assert_eq!((answer.status, &answer.body[..]), (202, &b"Accepted"[..]));
        read_until(&mut events, &mut so_far, &format!("\"id\":{id}")).await;
    }
    recorder.finish().await;

    let text = cassette_text(&path);
    assert_no_secrets(&text);
    let recorded = cassette::load(&path).unwrap();
    assert_eq!(
        recorded.transport,
        Transport::HttpSse {
            url: format!("http://{}/sse", fake.addr()),
            sse_endpoint: "/sse".into(),
            post_endpoint: "/message".into(),
        }
    );
    assert_eq!(recorded.interactions.len(), 2);
    for interaction in &recorded.interactions {
        assert_eq!(interaction.response.as_ref().unwrap()["result"]["ok"], true);
        assert_eq!(interaction.http.as_ref().unwrap().status, 202);
    }
}

// ---------------------------------------------------------------------------
// Against @modelcontextprotocol/server-everything (ignored; .ci/run runs them).

/// server-everything in an HTTP mode, on a free loopback port; killed on drop.
struct Everything {
    child: tokio::process::Child,
    port: u16,
}

impl Everything {
    async fn start(mode: &str) -> Everything {
        let js = everything_js();
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let preload = crate::support::root().join("tests/peers/loopback.cjs");
        let child = tokio::process::Command::new("node")
            .arg("-r")
            .arg(preload)
            .arg(&js)
            .arg(mode)
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "server-everything did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Everything { child, port }
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// Reads SSE `data:` lines as JSON messages.
fn sse_messages(body: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// The answer's messages, whether it came as JSON or as SSE.
fn messages(seen: &Seen) -> Vec<Value> {
    match seen.content_type.as_deref() {
        Some(t) if t.starts_with("text/event-stream") => sse_messages(&seen.body),
        _ => serde_json::from_slice(&seen.body).into_iter().collect(),
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs server-everything; .ci/run runs ignored tests"]
async fn everything_streamable_http_records_a_paired_session() {
    let server = Everything::start("streamableHttp").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("everything-http.json");
    let upstream = format!("http://127.0.0.1:{}/mcp", server.port);
    let recorder = Recorder::start(Some(path.clone()), upstream.clone()).await;
    let url = recorder.url("/mcp");

    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let init = seen(send(Method::POST, &url, Some(&init), None).await).await;
    assert_eq!(init.status, 200, "{init:?}");
    let session = init
        .session
        .clone()
        .expect("server-everything issues a session");
    let s = Some(session.as_str());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let accepted = seen(send(Method::POST, &url, Some(&initialized), s).await).await;
    assert_eq!(accepted.status, 202);
    let echo = request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "through the proxy"}}),
    );
    let echoed = seen(send(Method::POST, &url, Some(&echo), s).await).await;
    let answer = messages(&echoed);
    assert_eq!(
        answer.last().unwrap()["result"]["content"][0]["text"],
        "Echo: through the proxy"
    );
    let long = request(
        2,
        "tools/call",
        json!({"name": "trigger-long-running-operation", "arguments": {"duration": 0.3, "steps": 3}, "_meta": {"progressToken": "p"}}),
    );
    let long = seen(send(Method::POST, &url, Some(&long), s).await).await;
    assert_eq!(messages(&long).len(), 4, "{long:?}");
    let deleted = seen(send(Method::DELETE, &url, None, s).await).await;
    let outcome = recorder.finish().await;
    assert_eq!(outcome.interactions, 4);

    let text = cassette_text(&path);
    assert!(
        !text.contains(&session),
        "the session id is in the cassette"
    );
    assert_no_secrets(&text);
    let recorded = cassette::load(&path).unwrap();
    let Transport::StreamableHttp { behaviour, .. } = &recorded.transport else {
        panic!("{:?}", recorded.transport)
    };
    assert_eq!(behaviour.delete_status, Some(deleted.status));
    assert_eq!(
        recorded.server.as_ref().unwrap().info["name"],
        "mcp-servers/everything"
    );
    let interactions = &recorded.interactions;
    assert!(interactions[0].http.as_ref().unwrap().issued_session);
    assert_eq!(interactions[1].http.as_ref().unwrap().status, 202);
    assert_eq!(
        interactions[2].response.as_ref().unwrap()["result"],
        answer.last().unwrap()["result"]
    );
    let long = &interactions[3];
    assert_eq!(long.during.len(), 3, "{long:?}");
    assert!(long.response.is_some());
    let long_http = long.http.as_ref().unwrap();
    assert_eq!(long_http.content_type.as_deref(), Some("text/event-stream"));
    let message_frames = long_http.sse.iter().filter(|f| !f.priming).count();
    assert_eq!(message_frames, 4, "{long_http:?}");
    assert_eq!(long_http.delays_ms.len(), long_http.sse.len());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs server-everything; .ci/run runs ignored tests"]
async fn everything_http_sse_records_a_paired_session() {
    let server = Everything::start("sse").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("everything-sse.json");
    let upstream = format!("http://127.0.0.1:{}/sse", server.port);
    let recorder = Recorder::start(Some(path.clone()), upstream).await;
    let stream = send(Method::GET, &recorder.url("/sse"), None, None).await;
    assert_eq!(stream.status(), 200);
    let mut events = stream.into_body();
    let mut so_far = Vec::new();
    read_until(&mut events, &mut so_far, "\n\n").await;
    let announced = String::from_utf8_lossy(&so_far).into_owned();
    let endpoint = announced
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .expect("an endpoint event")
        .trim()
        .to_owned();
    let post_url = if endpoint.starts_with('/') {
        recorder.url(&endpoint)
    } else {
        endpoint
    };
    assert!(
        post_url.starts_with(&recorder.url("/message")),
        "{post_url}"
    );

    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        seen(send(Method::POST, &post_url, Some(&init), None).await)
            .await
            .status,
        202
    );
    read_until(&mut events, &mut so_far, "\"id\":0").await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        seen(send(Method::POST, &post_url, Some(&initialized), None).await)
            .await
            .status,
        202
    );
    let echo = request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "sse"}}),
    );
    assert_eq!(
        seen(send(Method::POST, &post_url, Some(&echo), None).await)
            .await
            .status,
        202
    );
    read_until(&mut events, &mut so_far, "Echo: sse").await;
    drop(events);
    recorder.finish().await;

    let recorded = cassette::load(&path).unwrap();
    let Transport::HttpSse {
        sse_endpoint,
        post_endpoint,
        ..
    } = &recorded.transport
    else {
        panic!("{:?}", recorded.transport)
    };
    assert_eq!(
        (sse_endpoint.as_str(), post_endpoint.as_str()),
        ("/sse", "/message")
    );
    let methods: Vec<&str> = recorded.interactions.iter().map(|i| i.method()).collect();
    assert_eq!(
        methods,
        ["initialize", "notifications/initialized", "tools/call"]
    );
    assert!(recorded.interactions[0].response.is_some());
    assert_eq!(
        recorded.interactions[2].response.as_ref().unwrap()["result"]["content"][0]["text"],
        "Echo: sse"
    );
    assert!(!cassette_text(&path).contains("sessionId="));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_get_stream_is_recorded_after_the_last_client_message() {
    let fake = start_fake().await;
    fake.get_stream.store(true, Ordering::Relaxed);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("get.json");
    let recorder = Recorder::start(Some(path.clone()), fake.url()).await;
    let url = recorder.url("/mcp");
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
    );
    let init = seen(send(Method::POST, &url, Some(&init), None).await).await;
    let s = init.session.as_deref();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    seen(send(Method::POST, &url, Some(&initialized), s).await).await;
    let stream = send(Method::GET, &url, None, s).await;
    assert_eq!(stream.status(), 200);
    let mut events = stream.into_body();
    read_until(&mut events, &mut Vec::new(), "list_changed").await;
    recorder.finish().await;

    let recorded = cassette::load(&path).unwrap();
    let Transport::StreamableHttp { behaviour, .. } = &recorded.transport else {
        panic!("{:?}", recorded.transport)
    };
    assert_eq!(behaviour.get_status, Some(200));
    assert_eq!(behaviour.delete_status, None);
    let after = &recorded.interactions[1].after;
    assert_eq!(after.len(), 1, "{:?}", recorded.interactions);
    assert!(
        recorded.interactions[1]
            .http
            .as_ref()
            .unwrap()
            .sse
            .is_empty()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_is_filed_message_by_message() {
    let fake = start_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("batch.json");
    let recorder = Recorder::start(Some(path.clone()), fake.url()).await;
    let batch = json!([
        request(1, "tools/list", json!({})),
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        request(2, "prompts/list", json!({})),
    ]);
    let answer = seen(send(Method::POST, &recorder.url("/mcp"), Some(&batch), None).await).await;
    assert_eq!(answer.status, 200);
    let outcome = recorder.finish().await;
    assert_eq!(outcome.interactions, 3);

    let recorded = cassette::load(&path).unwrap();
    let interactions = &recorded.interactions;
    assert_eq!(interactions[0].response.as_ref().unwrap()["id"], 1);
    assert_eq!(interactions[2].response.as_ref().unwrap()["id"], 2);
    for interaction in interactions {
        let http = interaction.http.as_ref().unwrap();
        assert_eq!(http.status, 200);
        assert_eq!(http.content_type.as_deref(), Some("application/json"));
        assert!(http.body.is_none(), "the batch answered the requests");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_beside_the_endpoint_are_forwarded_not_recorded() {
    let fake = start_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("beside.json");
    let recorder = Recorder::start(Some(path.clone()), fake.url()).await;
    // E.g. OAuth dynamic client registration, which answers with a secret.
    let register = json!({"jsonrpc": "2.0", "id": 9, "method": "looks/like/jsonrpc"});
    let answer = seen(
        send(
            Method::POST,
            &recorder.url("/register"),
            Some(&register),
            None,
        )
        .await,
    )
    .await;
    assert!(String::from_utf8_lossy(&answer.body).contains("oauth-secret-value"));
    recorder.finish().await;

    let text = cassette_text(&path);
    assert!(
        !text.contains("oauth-secret-value") && !text.contains("looks/like"),
        "{text}"
    );
    assert!(cassette::load(&path).unwrap().interactions.is_empty());
}

/// A POST with exactly these extra headers (no credentials).
async fn post_with(url: &str, body: &Value, headers: &[(&str, &str)]) -> Seen {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = tokio::time::timeout(PATIENCE, client().request(request))
        .await
        .expect("no answer in time")
        .unwrap();
    seen(response).await
}

/// Each request's situation is stored as replay will judge it, and a
/// foreign Host reaches the upstream as the client sent it.
#[tokio::test(flavor = "multi_thread")]
async fn situations_are_recorded_and_foreign_hosts_forwarded() {
    let fake = start_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("situations.json");
    let recorder = Recorder::start(Some(path.clone()), fake.url()).await;
    let url = recorder.url("/mcp");
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let session = post_with(&url, &init, &[]).await.session.unwrap();
    let with_session = [("mcp-session-id", session.as_str())];
    let list = |id| request(id, "tools/list", json!({}));
    post_with(&url, &list(1), &with_session).await;
    let rebound = [
        ("mcp-session-id", session.as_str()),
        ("host", "evil.example.com"),
    ];
    post_with(&url, &list(2), &rebound).await;
    post_with(&url, &list(3), &[]).await;
    // Without a session: not how the endpoint answers GET in general.
    let get = seen(send(Method::GET, &url, None, None).await).await;
    assert_eq!(get.status, 405);
    let deleted = seen(send(Method::DELETE, &url, None, Some(&session)).await).await;
    assert_eq!(deleted.status, 200);
    post_with(&url, &list(4), &with_session).await;
    recorder.finish().await;

    let hosts: Vec<String> = fake
        .headers
        .lock()
        .unwrap()
        .iter()
        .map(|headers| headers["host"].to_str().unwrap().to_owned())
        .collect();
    let upstream = fake.addr().to_string();
    assert_eq!(
        hosts,
        [
            &upstream,
            &upstream,
            "evil.example.com",
            &upstream,
            &upstream,
            &upstream,
            &upstream
        ],
        "the proxy's own Host is rewritten, a foreign one forwarded"
    );

    let recorded = cassette::load(&path).unwrap();
    let situations: Vec<HttpSituation> = recorded
        .interactions
        .iter()
        .map(|i| i.http.as_ref().unwrap().situation)
        .collect();
    let normal = HttpSituation::default();
    let foreign = HttpSituation {
        foreign_origin: true,
        ..normal
    };
    let missing = HttpSituation {
        session: SessionState::Missing,
        ..normal
    };
    let stale = HttpSituation {
        session: SessionState::Unknown,
        ..normal
    };
    assert_eq!(situations, [normal, normal, foreign, missing, stale]);
    let Transport::StreamableHttp { behaviour, .. } = &recorded.transport else {
        panic!("{:?}", recorded.transport);
    };
    assert_eq!(behaviour.get_status, None, "only ordinary GETs count");
    assert_eq!(behaviour.delete_status, Some(200));
    let text = cassette_text(&path);
    assert!(text.contains("\"foreign_origin\": true"), "{text}");
    assert_eq!(
        text.matches("\"situation\"").count(),
        3,
        "normal ones are omitted"
    );
}

/// Transport independence: a cassette recorded over HTTP replays over stdio.
#[tokio::test(flavor = "multi_thread")]
async fn a_cassette_recorded_over_http_replays_over_stdio() {
    let fake = start_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("http.json");
    let recorder = Recorder::start(Some(path.clone()), fake.url()).await;
    let proxied = script(&fake, &recorder.url("/mcp")).await;
    recorder.finish().await;

    let path_for_stdio = path.clone();
    tokio::task::spawn_blocking(move || {
        let mut peer = crate::support::peer::Peer::spawn(crate::support::replay(&path_for_stdio));
        let init = peer.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert_eq!(init.result(), &initialize_result());
        peer.notify("notifications/initialized", json!({}));
        let list = peer.request("tools/list", json!({}));
        assert!(list.response.get("result").is_some(), "{:?}", list.response);
        let slow = peer.request("tools/call", json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": "tok"}}));
        assert!(!slow.with_method("notifications/progress").is_empty(), "{:?}", slow.before);
        let (status, stderr) = peer.finish();
        assert!(status.success(), "{stderr}");
    })
    .await
    .unwrap();
    assert!(!proxied.is_empty());
}

/// One HTTP/1.1 POST over a plain socket; returns the status code.
fn blocking_post(url: &str, body: &Value) -> u16 {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    let body = serde_json::to_vec(body).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(&body).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer.split(' ').nth(1).unwrap().parse().unwrap()
}

/// `record --upstream` against an upstream that is down: a warning at the
/// first failure, exit 3 when nothing but failures was recorded, and
/// `check` warns about the cassette (MC306).
#[test]
fn recording_a_down_upstream_warns_exits_3_and_check_warns() {
    let unused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let upstream = format!("http://{}/mcp", unused.local_addr().unwrap());
    drop(unused);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("down.json");
    let recorder = Cli::record(&path)
        .upstream(&upstream)
        .capture_stderr()
        .start();
    for id in [1, 2] {
        let status = blocking_post(&recorder.url, &request(id, "ping", json!({})));
        assert_eq!(status, 502);
    }
    let (status, stderr) = recorder.stop_with_stderr();
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert_eq!(
        stderr
            .matches("did not answer: the client gets 502")
            .count(),
        1,
        "warned once, at the first failure: {stderr}"
    );
    assert!(
        stderr.contains("nothing was recorded but failures"),
        "{stderr}"
    );

    let check = crate::support::mcpcassette()
        .arg("check")
        .arg(&path)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "a warning: {out}");
    assert!(
        out.contains("warning[MC306]")
            && out.contains(
                "none of the 2 recorded request(s) was answered by the server (HTTP status 502)"
            ),
        "{out}"
    );
}

/// Schema breaks are warned about when recording over HTTP as over stdio,
/// every one of them before the recorder exits.
#[test]
fn recording_over_http_warns_about_schema_breaks_before_it_exits() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(start_fake());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    let recorder = Cli::record(&path)
        .upstream(&fake.url())
        .capture_stderr()
        .start();
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(blocking_post(&recorder.url, &init), 200);
    // The fake lists a tool without its `inputSchema`.
    assert_eq!(
        blocking_post(&recorder.url, &request(1, "tools/list", json!({}))),
        200
    );
    let (status, stderr) = recorder.stop_with_stderr();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("the response to `tools/list` from the server breaks the 2025-06-18 schema at /result/tools/0"),
        "{stderr}"
    );
    assert_eq!(cassette::load(&path).unwrap().interactions.len(), 2);
}
