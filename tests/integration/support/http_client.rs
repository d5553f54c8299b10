//! A plain HTTP client for Streamable HTTP endpoints, and the JSON-RPC
//! messages the tests send through it.
//!
//! The library's `mcpcassette::testkit::TestClient` speaks MCP over a byte
//! stream (stdio, an in-process duplex); it hides the transport. The tests
//! here look at what the transport carries (statuses, headers, SSE framing,
//! a body left open), so they post raw requests with [`Http`] (or the
//! one-shot [`post`] and [`post_blocking`]) and read a whole [`Reply`].

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

/// How long a request, and then its body, may take before the test calls
/// it stuck.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// What a client that takes either answer sends as `accept`.
pub const BOTH: &str = "application/json, text/event-stream";

/// A JSON-RPC request.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A `tools/call` request.
pub fn call(id: impl Into<Value>, name: &str, arguments: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// POSTs `message` to `url` with the usual headers and `headers` (see
/// [`Http::request`]); the whole answer.
pub async fn post(url: &str, message: &Value, headers: &[(&str, &str)]) -> Reply {
    Http::new(url).post(message, headers).await
}

/// [`post`] from synchronous code, on a runtime of its own (for a test
/// whose server runs on another runtime, or none).
pub fn post_blocking(url: &str, message: &Value, headers: &[(&str, &str)]) -> Reply {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(post(url, message, headers))
}

/// A client of one HTTP endpoint (`base` + `path`).
pub struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    base: String,
    path: String,
}

/// A whole answer.
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Reply {
    /// The body as text; a panic when it is not UTF-8.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }

    /// The body as text, invalid UTF-8 replaced.
    pub fn lossy(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The status and the body as text (invalid UTF-8 replaced), for a
    /// test that looks at no header.
    pub fn status_text(&self) -> (StatusCode, String) {
        (self.status, self.lossy())
    }

    /// The body as JSON; a panic showing it when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.text()))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    /// The `Mcp-Session-Id` the answer issued, which must be there.
    pub fn session(&self) -> String {
        self.header("mcp-session-id")
            .expect("an Mcp-Session-Id header")
            .to_owned()
    }

    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or_default()
    }

    /// The SSE events of a `text/event-stream` body.
    pub fn events(&self) -> Vec<SseEvent> {
        assert_eq!(self.content_type(), "text/event-stream", "{}", self.text());
        parse_events(self.text())
    }

    /// The response, whether it came as a JSON body or as the last event
    /// of an SSE stream (either is the server's to choose).
    pub fn answer(&self) -> Value {
        if self.content_type() == "text/event-stream" {
            let events = self.events();
            return events.last().expect("an event").message();
        }
        self.json()
    }
}

/// One SSE event as the client saw it.
#[derive(Debug, Default)]
pub struct SseEvent {
    pub id: Option<String>,
    pub event: Option<String>,
    pub retry: Option<u64>,
    pub data: String,
}

impl SseEvent {
    /// The event's data as a JSON-RPC message.
    pub fn message(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("{e}: {:?}", self.data))
    }
}

/// The events of an SSE stream's text, in order.
pub fn parse_events(text: &str) -> Vec<SseEvent> {
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = SseEvent::default();
            for line in block.lines() {
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "id" => event.id = Some(value.to_owned()),
                    "event" => event.event = Some(value.to_owned()),
                    "retry" => event.retry = value.parse().ok(),
                    "data" => event.data.push_str(value),
                    _ => {}
                }
            }
            event
        })
        .collect()
}

impl Http {
    /// A client of `url` (its path included).
    pub fn new(url: &str) -> Http {
        Http::at_base(url, "")
    }

    /// A client of `base` + `path`; [`Http::at`] moves it to another path.
    pub fn at_base(base: &str, path: &str) -> Http {
        Http {
            client: Client::builder(TokioExecutor::new()).build_http(),
            base: base.into(),
            path: path.into(),
        }
    }

    /// The underlying hyper client, for a request whose failure is the
    /// point (no timeout, no unwrap).
    pub fn client(&self) -> &Client<HttpConnector, Full<Bytes>> {
        &self.client
    }

    /// The same server, another path.
    pub fn at(mut self, path: &str) -> Http {
        self.path = path.into();
        self
    }

    /// A request to the endpoint with the usual headers (`accept` both,
    /// `content-type` JSON); `headers` are added last, replacing those (an
    /// empty value removes one).
    pub fn request(
        &self,
        method: Method,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Request<Full<Bytes>> {
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{}", self.base, self.path))
            .body(Full::new(body))
            .unwrap();
        let map = request.headers_mut();
        map.insert("accept", BOTH.parse().unwrap());
        map.insert("content-type", "application/json".parse().unwrap());
        for (name, value) in headers {
            let name: http::HeaderName = name.parse().unwrap();
            if value.is_empty() {
                map.remove(&name);
            } else {
                map.insert(name, value.parse().unwrap());
            }
        }
        request
    }

    /// Sends and reads the whole body, each within [`PATIENCE`].
    pub async fn send(&self, request: Request<Full<Bytes>>) -> Reply {
        let (status, headers, body) = self.open(request).await;
        let body = tokio::time::timeout(PATIENCE, body.collect())
            .await
            .expect("the body ended in time")
            .unwrap()
            .to_bytes();
        Reply {
            status,
            headers,
            body,
        }
    }

    /// Sends and returns the body unread (for streams that stay open).
    pub async fn open(&self, request: Request<Full<Bytes>>) -> (StatusCode, HeaderMap, Incoming) {
        let response = tokio::time::timeout(PATIENCE, self.client.request(request))
            .await
            .expect("an answer in time")
            .expect("the request went through");
        let (parts, body) = response.into_parts();
        (parts.status, parts.headers, body)
    }

    /// POSTs `message`.
    pub async fn post(&self, message: &Value, headers: &[(&str, &str)]) -> Reply {
        let body = Bytes::from(serde_json::to_vec(message).unwrap());
        self.send(self.request(Method::POST, headers, body)).await
    }

    /// A request without a body (GET, DELETE).
    pub async fn without_body(&self, method: Method, headers: &[(&str, &str)]) -> Reply {
        self.send(self.request(method, headers, Bytes::new())).await
    }
}

/// The messages of one SSE (or JSON) answer, read as they come: for a
/// stream that stays open (a GET stream, a listen), where [`Reply`] would
/// wait for the end.
pub struct SseStream {
    body: Incoming,
    buffer: String,
    ready: std::collections::VecDeque<Value>,
    /// Every SSE event's `id:` so far, in order (priming events too).
    pub ids: Vec<String>,
}

impl SseStream {
    /// Reads `body` as SSE.
    pub fn new(body: Incoming) -> SseStream {
        SseStream {
            body,
            buffer: String::new(),
            ready: Default::default(),
            ids: Vec::new(),
        }
    }

    /// Reads the whole body as one JSON message (an `application/json`
    /// answer); an empty body gives none.
    pub async fn read_json_body(&mut self) {
        let bytes = (&mut self.body).collect().await.unwrap().to_bytes();
        if !bytes.is_empty() {
            self.ready
                .push_back(serde_json::from_slice(&bytes).unwrap());
        }
    }

    /// The next message, if one comes within `within`.
    pub async fn next(&mut self, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(message);
            }
            let frame = tokio::time::timeout_at(deadline, self.body.frame())
                .await
                .ok()??
                .expect("the stream reads");
            let Ok(data) = frame.into_data() else {
                continue;
            };
            self.buffer.push_str(std::str::from_utf8(&data).unwrap());
            while let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                if let Some(id) = event.lines().find_map(|line| line.strip_prefix("id:")) {
                    self.ids.push(id.trim().to_owned());
                }
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if !data.is_empty() && !data.concat().trim().is_empty() {
                    self.ready
                        .push_back(serde_json::from_str(&data.join("\n")).unwrap());
                }
            }
        }
    }

    /// Every message until the answer ends (or none comes within
    /// [`PATIENCE`]).
    pub async fn all(mut self) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Some(message) = self.next(PATIENCE).await {
            messages.push(message);
        }
        messages
    }
}
