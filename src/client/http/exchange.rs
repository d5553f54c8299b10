//! The task behind [`HttpLive`](super::HttpLive): it sends the requests in
//! order, each once the previous one's answer headers arrived, reads every
//! answer (a JSON body, an SSE stream, an HTTP error) on a task of its own,
//! opens the server's own stream (GET), and hands every message on, with
//! what is known of each POST's HTTP answer.

use std::collections::HashMap;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::header::{CONTENT_TYPE, HeaderMap};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;
use sse_stream::SseStream;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::client::{HttpClient, LiveAnswer, LiveError};
use crate::jsonrpc::{self, Kind};
use crate::wire::situation::{SESSION_ID, header_text};

/// At most this much of an error body goes into an error message.
pub(super) const EXCERPT_CHARS: usize = 200;
/// How long the GET that opens the server's stream may take to be
/// answered before the next POST goes out anyway.
const GET_OPEN_TIMEOUT: Duration = Duration::from_secs(2);

/// The HTTP answers to POSTs, by number, as they become known.
pub(super) type Answers = Arc<Mutex<HashMap<usize, Known>>>;

/// What is known of the answer to one POST.
#[derive(Debug, Clone)]
pub(super) struct Known {
    pub(super) answer: LiveAnswer,
    /// Whether its body (when it matters) has been read.
    pub(super) complete: bool,
}

/// One HTTP request for the sender.
pub(super) struct Outgoing {
    pub(super) request: Request<Full<Bytes>>,
    /// `POST tools/call`, for messages.
    pub(super) label: String,
    /// The id of the request POSTed, whose response the answer should carry.
    pub(super) expects: Option<Value>,
    /// Whether this is `initialize` (its answer issues the session).
    pub(super) initialize: bool,
    /// A GET to send once this request was accepted (after
    /// `notifications/initialized`): the server's own stream.
    pub(super) then_get: Option<Request<Full<Bytes>>>,
    /// Its number, for [`HttpLive::answers`](super::HttpLive::answers).
    pub(super) number: usize,
    /// Whether an HTTP error with a body that is not JSON-RPC is an answer
    /// (the recording had one) rather than a failure.
    pub(super) tolerate_error: bool,
    /// Whether it carries a session id.
    pub(super) had_session: bool,
}

/// Which stream a server message came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Channel {
    /// The answer to a POST (its JSON body or SSE stream).
    Answer,
    /// The server's own stream (GET).
    Server,
}

/// What the server said.
#[derive(Debug)]
pub(super) enum Heard {
    Message(Value, Channel),
    /// The answer to the request with this id ended without its response.
    Gone(Value),
    /// An HTTP error or a body that could not be read.
    Failed(LiveError),
}

/// Sends the requests in order, each once the previous one's answer
/// headers arrived; reads every answer body on its own task.
pub(super) async fn dispatch(
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
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
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
pub(super) fn excerpt(body: &[u8]) -> String {
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
