//! Building HTTP responses: JSON-RPC error bodies for refusals, JSON
//! answers, recorded raw bodies, and SSE streams fed from a channel.

use std::convert::Infallible;
use std::future::Future;

use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderValue, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper::body::Frame;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::jsonrpc;

/// Every response body: whole or streamed; it fails only to hang up.
pub(super) type Body = UnsyncBoxBody<Bytes, Hangup>;

/// The server hangs up (a faults overlay's `disconnect`): as a response's
/// extension, the connection is dropped before the response; as a body's
/// error, in the middle of it.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the replayed server hung up (a `disconnect` fault)")]
pub(crate) struct Hangup;

/// How long a body that hangs up waits before it fails, so the events
/// before the hang-up reach the client (hyper drops what it has not
/// written when a body fails).
const HANGUP_FLUSH: std::time::Duration = std::time::Duration::from_millis(50);

/// A body that is there whole.
fn full(bytes: Bytes) -> Body {
    Full::new(bytes).map_err(never).boxed_unsync()
}

fn never(never: Infallible) -> Hangup {
    match never {}
}

/// A response whose connection is dropped instead of it being sent.
pub(super) fn hangup() -> Response {
    let mut response = empty(StatusCode::INTERNAL_SERVER_ERROR);
    response.extensions_mut().insert(Hangup);
    response
}
/// Every response.
pub(super) type Response = http::Response<Body>;

/// JSON-RPC code for a request refused at the HTTP level (as the official
/// TypeScript SDK answers; -32000..-32019 are for implementations).
pub(super) const BAD_REQUEST_CODE: i64 = -32000;
/// JSON-RPC code for an unknown or ended session.
pub(super) const SESSION_NOT_FOUND_CODE: i64 = -32001;

/// The session header.
pub(super) const SESSION_ID: &str = crate::wire::situation::SESSION_ID;

/// A JSON-RPC error with id null, for refusals that precede the message.
pub(super) fn error(status: StatusCode, code: i64, message: &str) -> Response {
    error_with_id(status, Value::Null, code, message)
}

/// A JSON-RPC error for a message whose id is known.
pub(super) fn error_with_id(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    let body = jsonrpc::error_response(id, code, message, None);
    json(
        status,
        serde_json::to_vec(&body).expect("JSON values serialise"),
    )
}

/// A JSON body.
pub(super) fn json(status: StatusCode, body: Vec<u8>) -> Response {
    with_body(status, Some("application/json"), full(Bytes::from(body)))
}

/// A body replayed as recorded (an HTTP error page, say).
pub(super) fn raw(status: StatusCode, content_type: Option<&str>, body: &str) -> Response {
    let body = full(Bytes::copy_from_slice(body.as_bytes()));
    with_body(status, content_type, body)
}

/// No body (202 Accepted, a recorded 405, ...).
pub(super) fn empty(status: StatusCode) -> Response {
    with_body(status, None, Empty::new().map_err(never).boxed_unsync())
}

/// A handler's status instead of an answer (a faults overlay's `http`).
pub(super) fn status(reply: &crate::server::StatusReply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = full(Bytes::copy_from_slice(&reply.body));
    let mut response = with_body(status, Some(reply.content_type), body);
    if let Some(seconds) = reply.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// 404 for any path but the endpoint.
pub(super) fn not_found() -> Response {
    raw(StatusCode::NOT_FOUND, Some("text/plain"), "Not Found")
}

/// 405, naming the methods that do work.
pub(super) fn method_not_allowed(allow: &'static str) -> Response {
    let mut response = error(
        StatusCode::METHOD_NOT_ALLOWED,
        BAD_REQUEST_CODE,
        "Method Not Allowed",
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

/// 401 asking for a bearer token (RFC 6750), for `replay --auth bearer`.
pub(super) fn unauthorized() -> Response {
    let mut response = raw(
        StatusCode::UNAUTHORIZED,
        Some("text/plain"),
        "Unauthorized: this replay requires `Authorization: Bearer <token>` (any token; replay --auth bearer)",
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"mcpcassette\""),
    );
    response
}

/// An SSE stream: each `Bytes` from `events` is one encoded SSE event,
/// written as it comes. The stream ends when every sender is gone or when
/// `closed` resolves (server shutdown).
pub(super) fn sse(
    status: StatusCode,
    mut events: mpsc::UnboundedReceiver<Bytes>,
    closed: impl Future<Output = ()> + Send + 'static,
) -> Response {
    let frames = futures_util::stream::poll_fn(move |cx| events.poll_recv(cx))
        .then(|event| async move {
            match &event[..] {
                crate::server::HANGUP => {
                    // Long enough for the connection to write out what
                    // came before; then it drops.
                    tokio::time::sleep(HANGUP_FLUSH).await;
                    Err(Hangup)
                }
                _ => Ok(Frame::data(event)),
            }
        })
        .take_until(closed);
    with_sse_body(status, StreamBody::new(frames).boxed_unsync())
}

/// An SSE answer known whole before it is sent: its events as one body.
pub(super) fn sse_whole(status: StatusCode, events: Bytes) -> Response {
    with_sse_body(status, full(events))
}

/// An SSE answer's headers around `body`.
fn with_sse_body(status: StatusCode, body: Body) -> Response {
    let mut response = with_body(status, Some("text/event-stream"), body);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Sets the session header on a response.
pub(super) fn with_session(mut response: Response, session: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(session) {
        response.headers_mut().insert(SESSION_ID, value);
    }
    response
}

fn with_body(status: StatusCode, content_type: Option<&str>, body: Body) -> Response {
    let mut response = http::Response::new(body);
    *response.status_mut() = status;
    if let Some(value) = content_type.and_then(|c| HeaderValue::from_str(c).ok()) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}
