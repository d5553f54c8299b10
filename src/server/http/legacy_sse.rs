//! The 2024-11-05 HTTP+SSE transport, for cassettes recorded over it: GET
//! on the SSE endpoint opens a stream whose first event (`event: endpoint`)
//! names the POST endpoint with a session id; each POST there gets 202, and
//! every server message (answers included) travels on that stream as
//! `event: message`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use http::{Method, Request, StatusCode, Uri};
use hyper::body::Incoming;
use tokio::sync::mpsc;

use super::flow::{Flow, Spill};
use super::guard::{self, Accept};
use super::plan::Plan;
use super::reply::{self, Response};
use super::server::Server;
use super::session::fresh_id;
use super::sse::{self, FrameSpec};
use super::sse_sessions::{Endpoints, Stream};
use super::{answer, post};
use crate::server::handler::traced;

/// Routes a request when the cassette was recorded over HTTP+SSE.
pub(super) async fn handle(
    server: &Arc<Server>,
    endpoints: &Endpoints,
    request: Request<Incoming>,
) -> Response {
    let path = request.uri().path();
    let method = request.method().clone();
    if path == endpoints.sse {
        return match method {
            Method::GET => open(server, endpoints, request.headers()),
            _ => reply::method_not_allowed("GET"),
        };
    }
    if path == endpoints.post {
        return match method {
            Method::POST => receive(server, request).await,
            _ => reply::method_not_allowed("POST"),
        };
    }
    reply::not_found()
}

/// Opens a session's stream and announces where to POST.
fn open(server: &Server, endpoints: &Endpoints, headers: &http::HeaderMap) -> Response {
    if !Accept::of(headers).sse {
        return reply::error(
            StatusCode::NOT_ACCEPTABLE,
            reply::BAD_REQUEST_CODE,
            "Not Acceptable: Client must accept text/event-stream",
        );
    }
    let streams = &server.http_sse;
    let id = fresh_id(streams.issued.fetch_add(1, Ordering::Relaxed));
    let (tx, rx) = mpsc::unbounded_channel();
    let endpoint = FrameSpec {
        event: Some("endpoint".into()),
        ..FrameSpec::default()
    };
    let announced = format!("{}?sessionId={id}", endpoints.post);
    let _ = tx.send(sse::encode(&endpoint, Some(announced.into_bytes())));
    let stream = Stream {
        events: tx,
        handler: server.session_handler(),
    };
    streams.lock().insert(id, stream);
    reply::sse(StatusCode::OK, rx, server.closed())
}

/// A POST: the messages go to the handler, whose output goes to the
/// session's stream; the POST itself gets 202 (or what was recorded).
async fn receive(server: &Arc<Server>, request: Request<Incoming>) -> Response {
    let Some(id) = session_id(request.uri()) else {
        return reply::error(
            StatusCode::BAD_REQUEST,
            reply::BAD_REQUEST_CODE,
            "Bad Request: sessionId is required",
        );
    };
    let Some(stream) = server.http_sse.get(&id) else {
        return reply::error(
            StatusCode::NOT_FOUND,
            reply::SESSION_NOT_FOUND_CODE,
            "Session not found",
        );
    };
    if !guard::is_json_body(request.headers()) {
        return reply::error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            reply::BAD_REQUEST_CODE,
            "Unsupported Media Type: Content-Type must be application/json",
        );
    }
    let messages = match post::read_messages(request.into_body()).await {
        Ok((messages, batch, body)) => (messages, batch, body),
        Err(refused) => return refused,
    };
    let handler = stream.handler;
    let (messages, batch, body) = messages;
    let (mut flow, sink) = Flow::open(Spill::Stream(stream.events));
    sink.note_ids(&body, &messages, batch);
    let first = messages
        .into_iter()
        .map(|message| traced(&handler, message, &sink, &mut flow.tasks).interaction())
        .reduce(|first, _| first)
        .flatten();
    drop(sink);
    flow.drain(server.closed());
    let interaction = first.and_then(|p| handler.recorded(p));
    answer::without_stream(&Plan::for_notification(interaction))
}

/// `sessionId` from the query string.
fn session_id(uri: &Uri) -> Option<String> {
    uri.query()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("sessionId="))
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
}
