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

use std::collections::HashMap;
use std::sync::mpsc::{self as std_mpsc, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use http::uri::Scheme;
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;
use sse_stream::SseStream;
use tokio::runtime::Runtime;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::{HttpClient, Live, LiveAnswer, LiveError};
use crate::jsonrpc::{self, Kind};
use crate::protocol::{self, Era, MODERN_VERSION};
use crate::wire::params;
use crate::wire::situation::{MCP_METHOD, MCP_NAME, PROTOCOL_VERSION, SESSION_ID, header_text};

/// The `Accept` every POST carries.
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// How a header value that cannot travel bare is wrapped.
const BASE64_PREFIX: &str = "=?base64?";
const BASE64_SUFFIX: &str = "?=";
/// At most this much of an error body goes into an error message.
const EXCERPT_CHARS: usize = 200;
/// How long the GET that opens the server's stream may take to be
/// answered before the next POST goes out anyway.
const GET_OPEN_TIMEOUT: Duration = Duration::from_secs(2);
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

/// The HTTP answers to POSTs, by number, as they become known.
type Answers = Arc<Mutex<HashMap<usize, Known>>>;

/// What is known of the answer to one POST.
#[derive(Debug, Clone)]
struct Known {
    answer: LiveAnswer,
    /// Whether its body (when it matters) has been read.
    complete: bool,
}

/// One HTTP request for the sender.
struct Outgoing {
    request: Request<Full<Bytes>>,
    /// `POST tools/call`, for messages.
    label: String,
    /// The id of the request POSTed, whose response the answer should carry.
    expects: Option<Value>,
    /// Whether this is `initialize` (its answer issues the session).
    initialize: bool,
    /// A GET to send once this request was accepted (after
    /// `notifications/initialized`): the server's own stream.
    then_get: Option<Request<Full<Bytes>>>,
    /// Its number, for [`HttpLive::answers`].
    number: usize,
    /// Whether an HTTP error with a body that is not JSON-RPC is an answer
    /// (the recording had one) rather than a failure.
    tolerate_error: bool,
    /// Whether it carries a session id.
    had_session: bool,
}

/// Which stream a server message came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Channel {
    /// The answer to a POST (its JSON body or SSE stream).
    Answer,
    /// The server's own stream (GET).
    Server,
}

/// What the server said.
#[derive(Debug)]
enum Heard {
    Message(Value, Channel),
    /// The answer to the request with this id ended without its response.
    Gone(Value),
    /// An HTTP error or a body that could not be read.
    Failed(LiveError),
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

/// Sends the requests in order, each once the previous one's answer
/// headers arrived; reads every answer body on its own task.
async fn dispatch(
    client: HttpClient,
    mut queue: UnboundedReceiver<Outgoing>,
    tx: Sender<Heard>,
    session: Arc<Mutex<Option<String>>>,
    answers: Answers,
) {
    while let Some(outgoing) = queue.recv().await {
        let response = match client.request(outgoing.request).await {
            Ok(response) => response,
            Err(source) => {
                let _ = tx.send(Heard::Failed(LiveError::Request {
                    label: outgoing.label,
                    source,
                }));
                continue;
            }
        };
        let issued = header_text(response.headers(), SESSION_ID);
        if outgoing.initialize
            && response.status().is_success()
            && let Some(id) = issued.clone()
        {
            *session.lock().unwrap_or_else(|e| e.into_inner()) = Some(id);
        }
        let accepted = response.status().is_success();
        lock(&answers).insert(
            outgoing.number,
            Known {
                answer: LiveAnswer {
                    status: response.status().as_u16(),
                    body: None,
                    content_type: Some(media_type(response.headers())).filter(|m| !m.is_empty()),
                    issued_session: issued.is_some(),
                    had_session: outgoing.had_session,
                },
                complete: accepted,
            },
        );
        let post = Post {
            label: outgoing.label,
            expects: outgoing.expects,
            number: outgoing.number,
            tolerate_error: outgoing.tolerate_error,
        };
        tokio::spawn(read_answer(response, post, tx.clone(), answers.clone()));
        if accepted && let Some(get) = outgoing.then_get {
            // Open before the next POST goes out: a server drops what it
            // has for its own stream while none is open (the TypeScript
            // SDK's does).
            match tokio::time::timeout(GET_OPEN_TIMEOUT, client.request(get)).await {
                Ok(Ok(response)) => {
                    tokio::spawn(server_stream(response, tx.clone()));
                }
                Ok(Err(e)) => tracing::debug!("GET of the server's stream failed: {e}"),
                Err(_) => tracing::debug!("GET of the server's stream: no answer in time"),
            }
        }
    }
}

/// The POST an answer is read for.
struct Post {
    /// `POST tools/call`, for messages.
    label: String,
    /// The id of the request POSTed.
    expects: Option<Value>,
    /// Its number, for the answers.
    number: usize,
    /// Whether an HTTP error that is not JSON-RPC is an answer.
    tolerate_error: bool,
}

/// `lock()`, also after a panic elsewhere.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads an HTTP error answer: its JSON-RPC messages are handed on (an
/// error with a `null` id answers the POST's request); a body that does
/// not answer the request is kept for the comparison. A body that is not
/// JSON-RPC fails the session unless the error was expected.
async fn read_error(
    body: Incoming,
    status: StatusCode,
    post: Post,
    tx: Sender<Heard>,
    answers: Answers,
) {
    let bytes = match body.collect().await {
        Ok(body) => body.to_bytes(),
        Err(source) => {
            let _ = tx.send(Heard::Failed(LiveError::Body {
                label: post.label,
                status: Some(status),
                source,
            }));
            return;
        }
    };
    let messages = parse_messages(&bytes)
        .filter(|m| !m.is_empty() && m.iter().all(|m| jsonrpc::classify(m).is_ok()));
    let answers_by_id = messages.as_ref().is_some_and(|messages| {
        messages.iter().any(|m| {
            jsonrpc::classify(m) == Ok(Kind::Response)
                && post.expects.is_some()
                && jsonrpc::id(m) == post.expects.as_ref()
        })
    });
    if let Some(known) = lock(&answers).get_mut(&post.number) {
        if !answers_by_id && !bytes.is_empty() {
            known.answer.body = Some(String::from_utf8_lossy(&bytes).into_owned());
        }
        known.complete = true;
    }
    let answered = match messages {
        Some(messages) => deliver(messages, post.expects.as_ref(), Channel::Answer, &tx),
        None if post.tolerate_error => false,
        None => {
            let _ = tx.send(Heard::Failed(LiveError::Status {
                label: post.label,
                status,
                excerpt: excerpt(&bytes),
            }));
            return;
        }
    };
    if let Some(id) = post.expects
        && !answered
    {
        let _ = tx.send(Heard::Gone(id));
    }
}

/// Reads the answer to a POST: its messages, or its error.
async fn read_answer(
    response: Response<Incoming>,
    post: Post,
    tx: Sender<Heard>,
    answers: Answers,
) {
    let status = response.status();
    if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
        return;
    }
    let media = media_type(response.headers());
    let body = response.into_body();
    if !status.is_success() {
        read_error(body, status, post, tx, answers).await;
        return;
    }
    let Post { label, expects, .. } = post;
    let answered = if media == "text/event-stream" {
        read_sse(body, &label, expects.as_ref(), Channel::Answer, &tx).await
    } else {
        match body.collect().await {
            Ok(body) => {
                let bytes = body.to_bytes();
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    false
                } else {
                    match parse_messages(&bytes) {
                        Some(messages) => deliver(messages, expects.as_ref(), Channel::Answer, &tx),
                        None => {
                            let media = if media.is_empty() {
                                "no Content-Type".to_owned()
                            } else {
                                media
                            };
                            let _ = tx.send(Heard::Failed(LiveError::NotJson {
                                label,
                                status,
                                media,
                                excerpt: excerpt(&bytes),
                            }));
                            return;
                        }
                    }
                }
            }
            Err(source) => {
                let _ = tx.send(Heard::Failed(LiveError::Body {
                    label,
                    status: None,
                    source,
                }));
                return;
            }
        }
    };
    if let Some(id) = expects
        && !answered
    {
        let _ = tx.send(Heard::Gone(id));
    }
}

/// Hands on each event's messages as it arrives; whether the response to
/// `expects` was among them.
async fn read_sse(
    body: Incoming,
    label: &str,
    expects: Option<&Value>,
    channel: Channel,
    tx: &Sender<Heard>,
) -> bool {
    let mut events = SseStream::new(body);
    let mut answered = false;
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                tracing::warn!("{label}: the SSE stream broke off: {e}");
                break;
            }
        };
        let data = event.data.unwrap_or_default();
        if data.trim().is_empty() {
            continue; // a priming event, or a keep-alive
        }
        match parse_messages(data.as_bytes()) {
            Some(messages) => answered |= deliver(messages, expects, channel, tx),
            None => tracing::warn!("{label}: an SSE event's data is not JSON; ignored"),
        }
    }
    answered
}

/// The server's own stream (GET): its messages, for as long as it lasts.
/// A refusal (405, say) is fine: servers need not offer one.
async fn server_stream(response: Response<Incoming>, tx: Sender<Heard>) {
    let status = response.status();
    if !status.is_success() || media_type(response.headers()) != "text/event-stream" {
        tracing::debug!("the server offers no stream of its own (GET: HTTP {status})");
        return;
    }
    read_sse(response.into_body(), "GET", None, Channel::Server, &tx).await;
}

/// Sends `messages` on; whether one is the response to `expects`.
fn deliver(
    messages: Vec<Value>,
    expects: Option<&Value>,
    channel: Channel,
    tx: &Sender<Heard>,
) -> bool {
    let mut answered = false;
    for message in messages {
        answered |= expects.is_some()
            && jsonrpc::classify(&message) == Ok(Kind::Response)
            && (jsonrpc::id(&message) == expects || jsonrpc::is_rejection(&message));
        let _ = tx.send(Heard::Message(message, channel));
    }
    answered
}

/// One JSON message, or each message of a batch; `None` if not JSON.
fn parse_messages(bytes: &[u8]) -> Option<Vec<Value>> {
    match serde_json::from_slice::<Value>(bytes).ok()? {
        Value::Array(batch) => Some(batch),
        message => Some(vec![message]),
    }
}

/// The media type of a response, lower case, without parameters.
fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// `: <the start of the body>`, on one line; empty for an empty body.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return String::new();
    }
    let mut short: String = line.chars().take(EXCERPT_CHARS).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    format!(": {short}")
}

/// Sets `name` to `value`; a value that cannot be a header is left out.
fn insert(headers: &mut HeaderMap, name: &str, value: &str) {
    match (
        HeaderName::from_bytes(name.as_bytes()),
        HeaderValue::from_str(value),
    ) {
        (Ok(name), Ok(value)) => {
            headers.insert(name, value);
        }
        _ => tracing::warn!("cannot send the header {name}: {value:?}"),
    }
}

/// The value `Mcp-Name` repeats, for the methods that have one.
fn mcp_name<'a>(method: &str, message: &'a Value) -> Option<&'a str> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    jsonrpc::params(message)?.get(key)?.as_str()
}

/// A header value as sent: bare, or `=?base64?…?=` when it has surrounding
/// spaces or tabs, characters outside visible ASCII, or looks wrapped.
fn encode_header_value(value: &str) -> String {
    use base64::Engine as _;
    let needs = value.starts_with([' ', '\t'])
        || value.ends_with([' ', '\t'])
        || value.chars().any(|c| !(' '..='~').contains(&c))
        || (value.starts_with(BASE64_PREFIX) && value.ends_with(BASE64_SUFFIX));
    if !needs {
        return value.to_owned();
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(value);
    format!("{BASE64_PREFIX}{encoded}{BASE64_SUFFIX}")
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::net::SocketAddr;

    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    use serde_json::json;

    use super::*;

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
