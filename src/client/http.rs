//! A live Streamable HTTP server (`verify --url`, `new-episodes` over
//! HTTP, `stub --url`): each client message is
//! POSTed to the endpoint, and what comes back (a JSON body, or the events
//! of an SSE stream as they arrive) is handed to the driver in order.
//!
//! - Legacy era: the `Mcp-Session-Id` of the `initialize` answer goes on
//!   every later request, with `MCP-Protocol-Version` set to the version the
//!   `initialize` result negotiated. After `notifications/initialized` a GET
//!   opens the server's own stream (a 405 or any other refusal is fine),
//!   answered before the next POST goes out;
//!   what comes on it is noted ([`HttpLive::server_stream`]), since the
//!   protocol orders it only among itself.
//!   [`Live::close`] DELETEs the session.
//! - Modern era (2026-07-28), and any message that declares a version in
//!   `params._meta`: `MCP-Protocol-Version` (the declared version),
//!   `Mcp-Method`, `Mcp-Name` (from `params.name`, `params.uri` or
//!   `params.taskId`, as the method says) and the `Mcp-Param-*` headers a
//!   tool's input schema asks for with `x-mcp-header` (known from a
//!   `tools/list` answer seen earlier), Base64-wrapped where a value cannot
//!   travel bare.
//! - POSTs go out one after the other, each once the previous one's answer
//!   headers arrived, so the server sees them in order; bodies are read
//!   concurrently, so a server request in the middle of an SSE stream is
//!   answered before the stream ends.
//! - An HTTP error status with a JSON-RPC body (a server rejecting a POST
//!   answers with an error whose id is `null`, which answers the POST's
//!   request) is an answer like any other; so is any error status the
//!   driver said to expect ([`Live::expect_http_error`]: the recording had
//!   one). Each POST's status, and a body that does not answer its request,
//!   are kept for the comparison ([`Live::http_answer`]). Any other HTTP
//!   error is reported by the next [`Live::recv`], with the status and the
//!   start of the body. A request whose answer ended without its response
//!   makes `recv` return `None` at once, as a timeout would.
//!
//! `https://` needs the `tls` feature, as for `record --upstream` (the same
//! client, trusting the system's roots and `MCPCASSETTE_CA_FILE`).
//!
//! Not supported: resuming an SSE stream that ends early
//! (`Last-Event-ID`), and the 2024-11-05 HTTP+SSE transport.
//!
//! This file holds the client and what it sends; the task that sends each
//! request in order and reads every answer is in `exchange`, how a value
//! travels in a header in `headers`.

use std::collections::HashMap;
use std::sync::mpsc::{self as std_mpsc, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use http::uri::Scheme;
use http::{Method, Request, Uri};
use http_body_util::Full;
use serde_json::Value;
use tokio::runtime::Runtime;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::{HttpClient, Live, LiveAnswer, LiveError};
use crate::jsonrpc::{self, Kind};
use crate::protocol::{self, Era, MODERN_VERSION};
use crate::wire::params;
use crate::wire::situation::{MCP_METHOD, MCP_NAME, PROTOCOL_VERSION, SESSION_ID};

mod exchange;
mod headers;

use exchange::{Answers, Channel, Heard, Outgoing, dispatch, lock};
use headers::{encode_header_value, insert, mcp_name};

/// The `Accept` every POST carries.
const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// How long `close` waits for the DELETE that ends a session.
const DELETE_TIMEOUT: Duration = Duration::from_secs(2);

/// A live Streamable HTTP server at one URL.
pub struct HttpLive {
    /// Runs the HTTP client; `None` once closed.
    runtime: Option<Runtime>,
    client: HttpClient,
    uri: Uri,
    era: Era,
    /// Requests to send, in order.
    outgoing: UnboundedSender<Outgoing>,
    /// What the server said, in order.
    incoming: Receiver<Heard>,
    /// The session the `initialize` answer issued (set by the sender).
    session: Arc<Mutex<Option<String>>>,
    /// The id of the `initialize` request whose result is awaited.
    initialize: Option<Value>,
    /// The version the `initialize` result negotiated.
    negotiated: Option<String>,
    /// The last version a message declared in `_meta`.
    declared: Option<String>,
    /// The id of the last request sent while its response is awaited.
    awaiting: Option<Value>,
    /// Tools' input schemas, from `tools/list` answers, for `Mcp-Param-*`.
    tool_schemas: HashMap<String, Value>,
    /// The messages that came on the server's own stream (GET), in order.
    server_stream: Vec<Value>,
    /// How many messages were POSTed.
    sent: usize,
    /// Whether the next POST may be answered with an HTTP error.
    tolerate_error: bool,
    /// The HTTP answer to each POST, by its number (from 1).
    answers: Answers,
}

impl HttpLive {
    /// A client for the Streamable HTTP endpoint at `url` (`http://` only)
    /// that speaks `era`. Nothing is sent until the first message.
    pub fn connect(url: &str, era: Era) -> Result<HttpLive, LiveError> {
        let bad = |reason: String| LiveError::BadUrl {
            url: url.to_owned(),
            reason,
        };
        let uri: Uri = url.parse().map_err(|e| bad(format!("not a URL: {e}")))?;
        let https = match uri.scheme() {
            Some(scheme) if *scheme == Scheme::HTTP => false,
            Some(scheme) if *scheme == Scheme::HTTPS => true,
            _ => return Err(bad("only http:// and https:// URLs are supported".into())),
        };
        if uri.authority().is_none() {
            return Err(bad("no host".into()));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("mcpcassette-http-live")
            .enable_all()
            .build()
            .map_err(LiveError::Runtime)?;
        let client = {
            let _entered = runtime.enter();
            super::http_client(https)?
        };
        let (outgoing, queue) = unbounded_channel();
        let (tx, incoming) = std_mpsc::channel();
        let session = Arc::new(Mutex::new(None));
        let answers = Answers::default();
        runtime.spawn(dispatch(
            client.clone(),
            queue,
            tx,
            session.clone(),
            answers.clone(),
        ));
        Ok(HttpLive {
            runtime: Some(runtime),
            client,
            uri,
            era,
            outgoing,
            incoming,
            session,
            initialize: None,
            negotiated: None,
            declared: None,
            awaiting: None,
            tool_schemas: HashMap::new(),
            server_stream: Vec::new(),
            sent: 0,
            tolerate_error: false,
            answers,
        })
    }

    /// The messages received so far that came on the server's own stream
    /// (GET) rather than in the answer to a POST, in the order they came:
    /// the protocol orders them among themselves, not against the answers.
    pub fn server_stream(&self) -> &[Value] {
        &self.server_stream
    }

    /// The session id the server issued, if any.
    fn session_id(&self) -> Option<String> {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether `message` goes out the 2026-07-28 way.
    fn is_modern(&self, message: &Value) -> bool {
        protocol::declared_version(message).is_some() || self.era == Era::Modern
    }

    /// The MCP headers `message` goes out with (besides `Content-Type` and
    /// `Accept`).
    fn mcp_headers(&self, message: &Value) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if self.is_modern(message) {
            let version = protocol::declared_version(message)
                .or(self.declared.as_deref())
                .unwrap_or(MODERN_VERSION);
            insert(&mut headers, PROTOCOL_VERSION, version);
            if let Some(method) = jsonrpc::method(message) {
                insert(&mut headers, MCP_METHOD, method);
                if let Some(name) = mcp_name(method, message) {
                    insert(&mut headers, MCP_NAME, &encode_header_value(name));
                }
                if method == "tools/call" {
                    for (header, value) in self.param_headers(message) {
                        insert(&mut headers, &header, &value);
                    }
                }
            }
        } else {
            if let Some(session) = self.session_id() {
                insert(&mut headers, SESSION_ID, &session);
            }
            if let Some(version) = &self.negotiated {
                insert(&mut headers, PROTOCOL_VERSION, version);
            }
        }
        headers
    }

    /// `Mcp-Param-*` headers for a `tools/call`: the arguments the tool's
    /// input schema marks with `x-mcp-header`, when they are primitives.
    fn param_headers(&self, call: &Value) -> Vec<(String, String)> {
        let Some(params) = jsonrpc::params(call) else {
            return Vec::new();
        };
        let Some(schema) = params
            .get("name")
            .and_then(Value::as_str)
            .and_then(|name| self.tool_schemas.get(name))
        else {
            return Vec::new();
        };
        let Some(arguments) = params.get("arguments") else {
            return Vec::new();
        };
        params::annotations(schema)
            .into_iter()
            .filter_map(|(path, header)| {
                let value = path
                    .iter()
                    .try_fold(arguments, |value, key| value.get(key))?;
                let text = params::header_text(value)?;
                Some((
                    format!("{}{header}", params::PREFIX),
                    encode_header_value(&text),
                ))
            })
            .collect()
    }

    /// A request to the endpoint with `method`, the session's headers and
    /// `body`.
    fn request(&self, method: Method, headers: HeaderMap, body: Bytes) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(body));
        *request.method_mut() = method;
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = headers;
        request
    }

    /// Notes what a server message tells about the session.
    fn observe(&mut self, message: &Value) {
        if jsonrpc::classify(message) != Ok(Kind::Response) {
            return;
        }
        let id = jsonrpc::id(message);
        if id.is_some() && id == self.awaiting.as_ref() {
            self.awaiting = None;
        }
        let Some(result) = message.get("result") else {
            return;
        };
        if id.is_some() && id == self.initialize.as_ref() {
            self.initialize = None;
            if let Some(version) = result.get("protocolVersion").and_then(Value::as_str) {
                self.negotiated = Some(version.to_owned());
            }
        }
        if let Some(tools) = result.get("tools").and_then(Value::as_array) {
            for tool in tools {
                if let (Some(name), Some(schema)) = (
                    tool.get("name").and_then(Value::as_str),
                    tool.get("inputSchema"),
                ) {
                    self.tool_schemas.insert(name.to_owned(), schema.clone());
                }
            }
        }
    }
}

impl Live for HttpLive {
    fn send(&mut self, message: &Value) -> Result<(), LiveError> {
        if self.runtime.is_none() {
            return Err(LiveError::SessionClosed);
        }
        if let Some(version) = protocol::declared_version(message) {
            self.declared = Some(version.to_owned());
        }
        let kind = jsonrpc::classify(message).ok();
        let method = jsonrpc::method(message);
        let id = jsonrpc::id(message).cloned();
        let modern = self.is_modern(message);
        let mut headers = self.mcp_headers(message);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        let body = Bytes::from(serde_json::to_vec(message).expect("a Value serialises"));
        let label = match (method, &id) {
            (Some(method), _) => format!("POST {method}"),
            (None, Some(id)) => format!("POST the response to server request {id}"),
            (None, None) => "POST".to_owned(),
        };
        let expects = (kind == Some(Kind::Request)).then(|| id.clone()).flatten();
        let initialize = kind == Some(Kind::Request) && method == Some("initialize");
        if initialize {
            self.initialize = id.clone();
        }
        if expects.is_some() {
            self.awaiting = expects.clone();
        }
        let then_get = (!modern && method == Some("notifications/initialized")).then(|| {
            let mut headers = self.mcp_headers(message);
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            self.request(Method::GET, headers, Bytes::new())
        });
        let had_session = headers.contains_key(SESSION_ID);
        let request = self.request(Method::POST, headers, body);
        self.sent += 1;
        self.outgoing
            .send(Outgoing {
                request,
                label,
                expects,
                initialize,
                then_get,
                number: self.sent,
                tolerate_error: std::mem::take(&mut self.tolerate_error),
                had_session,
            })
            .map_err(|_| LiveError::ClientStopped)
    }

    fn recv(&mut self, timeout: Duration) -> Result<Option<Value>, LiveError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(Heard::Message(message, channel)) => {
                    if channel == Channel::Server {
                        self.server_stream.push(message.clone());
                    }
                    self.observe(&message);
                    return Ok(Some(message));
                }
                Ok(Heard::Gone(id)) => {
                    // Only for the request still awaited; a late one for a
                    // request given up on already says nothing.
                    if self.awaiting.as_ref() == Some(&id) {
                        self.awaiting = None;
                        return Ok(None);
                    }
                }
                Ok(Heard::Failed(error)) => return Err(error),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    return Ok(None);
                }
            }
        }
    }

    fn sent(&self) -> Option<usize> {
        Some(self.sent)
    }

    fn expect_http_error(&mut self) {
        self.tolerate_error = true;
    }

    fn http_answer(&mut self, sent: usize, wait: Duration) -> Option<LiveAnswer> {
        let deadline = Instant::now() + wait;
        loop {
            let known = lock(&self.answers).get(&sent).cloned();
            match known {
                Some(known) if known.complete => return Some(known.answer),
                Some(known) if Instant::now() >= deadline => return Some(known.answer),
                None if Instant::now() >= deadline => return None,
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }

    fn close(&mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        if let Some(session) = self.session_id() {
            let mut headers = HeaderMap::new();
            insert(&mut headers, SESSION_ID, &session);
            if let Some(version) = &self.negotiated {
                insert(&mut headers, PROTOCOL_VERSION, version);
            }
            let request = self.request(Method::DELETE, headers, Bytes::new());
            let client = self.client.clone();
            let (done, wait) = std_mpsc::channel();
            runtime.spawn(async move {
                let outcome = client.request(request).await;
                if let Err(e) = &outcome {
                    tracing::debug!("DELETE of the HTTP session failed: {e}");
                }
                let _ = done.send(());
            });
            let _ = wait.recv_timeout(DELETE_TIMEOUT);
        }
        // Never blocks, so closing works inside an async context too.
        runtime.shutdown_background();
    }
}

impl Drop for HttpLive {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::net::SocketAddr;

    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    use serde_json::json;

    use futures_util::StreamExt;
    use http::{Response, StatusCode};
    use http_body_util::BodyExt;
    use hyper::body::Incoming;

    use super::exchange::{EXCERPT_CHARS, excerpt};
    use super::*;
    use crate::wire::situation::header_text;

    const URL: &str = "http://127.0.0.1:9/mcp";

    type TestBody = http_body_util::combinators::UnsyncBoxBody<Bytes, Infallible>;

    fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
        headers.get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn https_needs_the_tls_feature_and_other_schemes_are_refused() {
        let https = HttpLive::connect("https://127.0.0.1:9/mcp", Era::Legacy);
        if cfg!(feature = "tls") {
            assert!(https.is_ok(), "nothing is sent before the first message");
        } else {
            let error = https.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.contains("`tls` feature"), "{error}");
        }
        assert!(HttpLive::connect("ftp://127.0.0.1/mcp", Era::Legacy).is_err());
        assert!(HttpLive::connect("not a url", Era::Legacy).is_err());
    }

    #[test]
    fn modern_requests_carry_version_method_and_name() {
        let mut live = HttpLive::connect(URL, Era::Modern).unwrap();
        let list = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"tools": [],
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        live.observe(&json!({"jsonrpc": "2.0", "id": 0, "result": {"tools": [{
            "name": "tagged", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "plain": {"type": "string"}}}}]}}));
        let headers = live.mcp_headers(&list);
        assert_eq!(header(&headers, "mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(header(&headers, "mcp-method"), Some("tools/list"));
        assert!(headers.get("mcp-name").is_none());
        assert!(headers.get("mcp-session-id").is_none());

        let call = |name: &str, arguments: Value| {
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": name, "arguments": arguments,
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
        };
        let headers = live.mcp_headers(&call("écho", json!({})));
        assert_eq!(header(&headers, "mcp-name"), Some("=?base64?w6ljaG8=?="));
        let headers = live.mcp_headers(&call(
            "tagged",
            json!({"region": " eu ", "n": 3, "plain": "x"}),
        ));
        assert_eq!(header(&headers, "mcp-name"), Some("tagged"));
        assert_eq!(
            header(&headers, "mcp-param-region"),
            Some("=?base64?IGV1IA==?=")
        );
        assert_eq!(header(&headers, "mcp-param-n"), Some("3"));
        assert_eq!(
            headers
                .keys()
                .filter(|k| k.as_str().starts_with("mcp-param-"))
                .count(),
            2
        );

        let read = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
            "params": {"uri": "demo://greeting"}});
        let headers = live.mcp_headers(&read);
        assert_eq!(header(&headers, "mcp-name"), Some("demo://greeting"));
        assert_eq!(header(&headers, "mcp-protocol-version"), Some("2026-07-28"));
    }

    #[test]
    fn legacy_requests_carry_the_session_and_negotiated_version() {
        let mut live = HttpLive::connect(URL, Era::Legacy).unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2026-07-28"}});
        assert!(live.mcp_headers(&init).is_empty());
        live.initialize = Some(json!(0));
        *live.session.lock().unwrap() = Some("s-1".into());
        live.observe(&json!({"jsonrpc": "2.0", "id": 0,
            "result": {"protocolVersion": "2025-11-25"}}));
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo"}});
        let headers = live.mcp_headers(&list);
        assert_eq!(header(&headers, "mcp-session-id"), Some("s-1"));
        assert_eq!(header(&headers, "mcp-protocol-version"), Some("2025-11-25"));
        assert!(headers.get("mcp-method").is_none());
        assert!(headers.get("mcp-name").is_none());
    }

    #[test]
    fn excerpts_are_short_and_on_one_line() {
        assert_eq!(excerpt(b""), "");
        assert_eq!(excerpt(b"  bad\n  request "), ": bad request");
        let long = excerpt("x".repeat(500).as_bytes());
        assert!(long.ends_with('…') && long.chars().count() == EXCERPT_CHARS + 3);
    }

    /// A test server on 127.0.0.1, on its own thread: `handler` answers
    /// every request.
    fn serve<F, Fut>(handler: F) -> SocketAddr
    where
        F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Response<TestBody>> + Send + 'static,
    {
        let (ready, addr) = std_mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                ready.send(listener.local_addr().unwrap()).unwrap();
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    let handler = handler.clone();
                    tokio::spawn(async move {
                        let service = service_fn(move |request| {
                            let handler = handler.clone();
                            async move { Ok::<_, Infallible>(handler(request).await) }
                        });
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        });
        addr.recv().unwrap()
    }

    fn full(status: u16, media: &str, body: String) -> Response<TestBody> {
        let mut response = Response::new(Full::new(Bytes::from(body)).boxed_unsync());
        *response.status_mut() = StatusCode::from_u16(status).unwrap();
        if !media.is_empty() {
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_str(media).unwrap());
        }
        response
    }

    #[test]
    fn http_errors_come_back_from_recv() {
        let addr = serve(|_| async { full(500, "text/plain", "boom\nat line 1".into()) });
        let mut live = HttpLive::connect(&format!("http://{addr}/mcp"), Era::Legacy).unwrap();
        live.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo"}}))
            .unwrap();
        let error = live.recv(Duration::from_secs(10)).unwrap_err().to_string();
        assert!(
            error.contains("POST tools/call: HTTP 500 Internal Server Error: boom at line 1"),
            "{error}"
        );
    }

    /// A rejection (400 with an error whose id is `null`) is an answer, kept
    /// with its status and body; an expected error that is not JSON-RPC
    /// ends the wait with its status.
    #[test]
    fn http_rejections_and_expected_errors_are_answers() {
        let addr = serve(|request: Request<Incoming>| async move {
            let body = request.into_body().collect().await.unwrap().to_bytes();
            let message: Value = serde_json::from_slice(&body).unwrap();
            match jsonrpc::method(&message) {
                Some("server/discover") => full(
                    400,
                    "application/json",
                    json!({"jsonrpc": "2.0", "id": null,
                        "error": {"code": -32000, "message": "no session id"}})
                    .to_string(),
                ),
                _ => full(404, "text/plain", "not here".into()),
            }
        });
        let mut live = HttpLive::connect(&format!("http://{addr}/mcp"), Era::Legacy).unwrap();
        live.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}))
            .unwrap();
        let first = live.sent().unwrap();
        let rejection = live.recv(Duration::from_secs(10)).unwrap().unwrap();
        assert!(jsonrpc::is_rejection(&rejection), "{rejection}");
        let answer = live.http_answer(first, Duration::from_secs(10)).unwrap();
        assert_eq!(answer.status, 400);
        assert!(answer.body.unwrap().contains("no session id"));

        live.expect_http_error();
        live.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
            .unwrap();
        let second = live.sent().unwrap();
        assert_eq!(live.recv(Duration::from_secs(10)).unwrap(), None);
        let answer = live.http_answer(second, Duration::from_secs(10)).unwrap();
        assert_eq!(answer.status, 404);
        assert_eq!(answer.body.as_deref(), Some("not here"));
    }

    #[test]
    fn a_json_answer_without_the_response_ends_the_wait() {
        let addr = serve(|_| async {
            full(
                200,
                "application/json",
                json!([{"jsonrpc": "2.0",
                "method": "notifications/message", "params": {}}])
                .to_string(),
            )
        });
        let mut live = HttpLive::connect(&format!("http://{addr}/mcp"), Era::Legacy).unwrap();
        live.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
            .unwrap();
        let started = Instant::now();
        let note = live.recv(Duration::from_secs(10)).unwrap().unwrap();
        assert_eq!(note["method"], "notifications/message");
        assert_eq!(live.recv(Duration::from_secs(10)).unwrap(), None);
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    /// A server request in the middle of an SSE stream is answered (on a
    /// second POST) before the stream carries the response; the legacy
    /// session goes on every request after `initialize`, and `close`
    /// DELETEs it.
    #[test]
    fn server_requests_mid_stream_are_answered_before_the_stream_ends() {
        let (seen_tx, seen) =
            std_mpsc::channel::<(Method, Option<String>, Option<String>, Value)>();
        let (answer_tx, answer_rx) = tokio::sync::watch::channel(None::<Value>);
        let answer_tx = Arc::new(answer_tx);
        let addr = serve(move |request: Request<Incoming>| {
            let seen_tx = seen_tx.clone();
            let answer_tx = answer_tx.clone();
            let answer_rx = answer_rx.clone();
            async move {
                let method = request.method().clone();
                let session = header_text(request.headers(), SESSION_ID);
                let version = header_text(request.headers(), PROTOCOL_VERSION);
                let body = request.into_body().collect().await.unwrap().to_bytes();
                let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                seen_tx
                    .send((method.clone(), session, version, message.clone()))
                    .unwrap();
                if method != Method::POST {
                    return full(405, "", String::new());
                }
                match jsonrpc::method(&message) {
                    Some("initialize") => {
                        let mut response = full(
                            200,
                            "application/json",
                            json!({
                            "jsonrpc": "2.0", "id": message["id"],
                            "result": {"protocolVersion": "2025-06-18"}})
                            .to_string(),
                        );
                        response
                            .headers_mut()
                            .insert(SESSION_ID, HeaderValue::from_static("abc"));
                        response
                    }
                    Some("tools/call") => {
                        let id = message["id"].clone();
                        let events = async_stream(id, answer_rx);
                        let mut response =
                            Response::new(http_body_util::StreamBody::new(events).boxed_unsync());
                        response
                            .headers_mut()
                            .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
                        response
                    }
                    Some(_) => full(202, "", String::new()),
                    None => {
                        answer_tx.send_replace(Some(message));
                        full(202, "", String::new())
                    }
                }
            }
        });

        /// The stream: a priming event, a sampling request, then (once the
        /// client answered it) the response quoting the answer.
        fn async_stream(
            id: Value,
            mut answer: tokio::sync::watch::Receiver<Option<Value>>,
        ) -> impl futures_util::Stream<Item = Result<hyper::body::Frame<Bytes>, Infallible>> + Send
        {
            let first = format!(
                "id: 0\ndata:\n\ndata: {}\n\n",
                json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage",
                    "params": {}})
            );
            futures_util::stream::once(async move { Bytes::from(first) })
                .chain(futures_util::stream::once(async move {
                    let answer = answer
                        .wait_for(Option::is_some)
                        .await
                        .unwrap()
                        .clone()
                        .unwrap();
                    let response = json!({"jsonrpc": "2.0", "id": id,
                        "result": {"content": [], "answer": answer}});
                    Bytes::from(format!("data: {response}\n\n"))
                }))
                .map(|bytes| Ok(hyper::body::Frame::data(bytes)))
        }

        let mut live = HttpLive::connect(&format!("http://{addr}/mcp"), Era::Legacy).unwrap();
        live.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18"}}))
            .unwrap();
        let init = live.recv(Duration::from_secs(10)).unwrap().unwrap();
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        live.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .unwrap();
        live.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "ask"}}))
            .unwrap();
        let request = live.recv(Duration::from_secs(10)).unwrap().unwrap();
        assert_eq!(request["method"], "sampling/createMessage");
        let answer = json!({"jsonrpc": "2.0", "id": "s1", "result": {"text": "hi"}});
        live.send(&answer).unwrap();
        let response = live.recv(Duration::from_secs(10)).unwrap().unwrap();
        assert_eq!(response["id"], 1);
        assert_eq!(response["result"]["answer"], answer);
        live.close();

        let seen: Vec<_> = seen.try_iter().collect();
        let posts: Vec<_> = seen.iter().filter(|s| s.0 == Method::POST).collect();
        assert_eq!(posts.len(), 4, "{seen:?}");
        assert_eq!((posts[0].1.as_deref(), posts[0].2.as_deref()), (None, None));
        for post in &posts[1..] {
            assert_eq!(post.1.as_deref(), Some("abc"), "{post:?}");
            assert_eq!(post.2.as_deref(), Some("2025-06-18"), "{post:?}");
        }
        assert!(
            seen.iter()
                .any(|s| s.0 == Method::GET && s.1.as_deref() == Some("abc"))
        );
        assert!(
            seen.iter()
                .any(|s| s.0 == Method::DELETE && s.1.as_deref() == Some("abc"))
        );
    }
}
