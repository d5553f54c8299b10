//! POST on the endpoint: checks, then the handler, then the answer.

use std::sync::Arc;

use http::{HeaderMap, Request, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;
use serde_json::Value;
use tokio::time::Instant;

use super::answer::{self, Expect};
use super::flow::{Flow, Spill};
use super::guard::{self, Accept};
use super::modern;
use super::plain;
use super::plan::{Plan, Shape};
use super::posted::Post;
use super::reply::{self, Response};
use super::server::Server;
use super::session::Session;
use crate::cassette::{HttpSituation, SessionState};
use crate::jsonrpc::{self, Kind, codes};
use crate::server::handler::traced;
use crate::server::{Handled, StatusReply};
use crate::wire::situation;

/// The largest body accepted.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// Handles a POST: one JSON-RPC message, or a batch (2025-03-26).
pub(super) async fn handle(server: &Arc<Server>, request: Request<Incoming>) -> Response {
    let start = Instant::now();
    let (parts, body) = request.into_parts();
    let accept = Accept::of(&parts.headers);
    let checked = async {
        check_media_types(&parts.headers, accept)?;
        read_body(body).await
    };
    // A request from elsewhere learns no more than that it is refused.
    let refuse = |refused| match situation::foreign(&parts.headers, server.local) {
        Some(which) => guard::forbidden(which),
        None => refused,
    };
    let body = match checked.await {
        Ok(body) => body,
        Err(refused) => return refuse(refused),
    };
    let mut post = Post {
        headers: &parts.headers,
        body,
        batch: false,
        accept,
        start,
    };
    if let Some(played) = plain::play(server, &post) {
        return played.respond(server).await;
    }
    let messages = match parse_messages(&post.body) {
        Ok((messages, batch)) => {
            post.batch = batch;
            messages
        }
        Err(refused) => return refuse(refused),
    };
    if let Some(oauth) = &server.oauth
        && let Err(refused) = oauth.check_scope(&parts.headers, &messages)
    {
        return refused;
    }
    dispatch(server, post, messages).await
}

/// The body must be JSON (415) and some MCP answer acceptable (406).
fn check_media_types(headers: &HeaderMap, accept: Accept) -> Result<(), Response> {
    if !guard::is_json_body(headers) {
        return Err(reply::error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            reply::BAD_REQUEST_CODE,
            "Unsupported Media Type: Content-Type must be application/json",
        ));
    }
    if !accept.any() {
        return Err(reply::error(
            StatusCode::NOT_ACCEPTABLE,
            reply::BAD_REQUEST_CODE,
            "Not Acceptable: Client must accept application/json or text/event-stream",
        ));
    }
    Ok(())
}

/// The body's messages, and whether they came as a batch, and the body.
/// A body that is not JSON, an empty batch, or a single message that is
/// not JSON-RPC gets 400 with the JSON-RPC error.
pub(super) async fn read_messages(
    body: Incoming,
) -> Result<(Vec<Value>, bool, bytes::Bytes), Response> {
    let bytes = read_body(body).await?;
    let (messages, batch) = parse_messages(&bytes)?;
    Ok((messages, batch, bytes))
}

/// The whole body, up to [`MAX_BODY`] (413 beyond).
async fn read_body(body: Incoming) -> Result<bytes::Bytes, Response> {
    match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<LengthLimitError>() => Err(reply::error(
            StatusCode::PAYLOAD_TOO_LARGE,
            reply::BAD_REQUEST_CODE,
            "Payload Too Large",
        )),
        Err(error) => Err(bad_request(codes::PARSE_ERROR, &error.to_string())),
    }
}

/// The body's messages, and whether they came as a batch (see
/// [`read_messages`]).
fn parse_messages(bytes: &[u8]) -> Result<(Vec<Value>, bool), Response> {
    let value: Value = crate::json::parse_message(bytes).map_err(|e| {
        let error = crate::server::unreadable_error(&e);
        bad_request(error.code, &error.message)
    })?;
    match value {
        Value::Array(batch) if batch.is_empty() => Err(bad_request(
            codes::INVALID_REQUEST,
            "Invalid Request: empty batch",
        )),
        Value::Array(batch) => Ok((batch, true)),
        message => match jsonrpc::classify(&message) {
            Ok(_) => Ok((vec![message], false)),
            Err(invalid) => {
                let id = jsonrpc::id(&message)
                    .filter(|id| id.is_string() || id.is_number())
                    .cloned()
                    .unwrap_or(Value::Null);
                let text = format!("Invalid Request: {invalid}");
                let status = StatusCode::BAD_REQUEST;
                Err(reply::error_with_id(
                    status,
                    id,
                    codes::INVALID_REQUEST,
                    &text,
                ))
            }
        },
    }
}

fn bad_request(code: i64, message: &str) -> Response {
    reply::error(StatusCode::BAD_REQUEST, code, message)
}

/// The specification's answer to a message in an out-of-the-ordinary
/// situation that no recording answers: 403 from elsewhere; in the modern
/// era 400 for an unknown `MCP-Protocol-Version` and 400 with -32020 for
/// headers that disagree with the body; in the legacy era (but for
/// `initialize`) 400 without a session, 404 for an unknown or ended one,
/// and 400 for an unknown version. `None`: the specification has no rule
/// for it, and the message is answered as a normal one.
fn refusal(
    server: &Server,
    headers: &HeaderMap,
    situation: &HttpSituation,
    message: &Value,
    initialize: bool,
) -> Option<Response> {
    if situation.foreign_origin
        && let Some(which) = situation::foreign(headers, server.local)
    {
        return Some(guard::forbidden(which));
    }
    if server.modern {
        if situation.bad_protocol_version {
            return guard::check_version_header(headers).err();
        }
        if situation.header_mismatch {
            return modern::check_headers(headers, message).err();
        }
        return None;
    }
    if initialize {
        return None;
    }
    match situation.session {
        SessionState::Normal => {}
        SessionState::Missing | SessionState::Unknown => {
            return server.session(headers).err();
        }
    }
    if situation.bad_protocol_version {
        return guard::check_version_header(headers).err();
    }
    None
}

/// A status the handler answered with instead of a message; a session
/// it ends is gone, so the client's next request with it gets 404 too.
fn status(server: &Server, session: &Option<Arc<Session>>, reply: &StatusReply) -> Response {
    if reply.ends_session
        && let Some(session) = session
    {
        server.sessions.end(&session.id);
    }
    reply::status(reply)
}

/// A lone `initialize` request.
fn is_initialize(messages: &[Value]) -> bool {
    matches!(messages, [message]
        if jsonrpc::method(message) == Some("initialize") && jsonrpc::id(message).is_some())
}

/// A `subscriptions/listen` request (2026-07-28).
fn is_listen(message: &Value) -> bool {
    jsonrpc::method(message) == Some("subscriptions/listen")
}

/// Hands the messages to the handler and answers as the plan says.
///
/// Each message is handed over in its [`HttpSituation`], computed exactly as
/// the recording proxy did. In an out-of-the-ordinary situation a recording
/// made in the same one answers, faithfully; without one the
/// specification's rule ([`refusal`]) answers the whole POST.
async fn dispatch(server: &Arc<Server>, post: Post<'_>, messages: Vec<Value>) -> Response {
    let kinds: Vec<_> = messages.iter().map(jsonrpc::classify).collect();
    // Requests and invalid messages get answers; the rest get none.
    let answers = kinds
        .iter()
        .filter(|kind| !matches!(kind, Ok(Kind::Notification | Kind::Response)))
        .count();
    let first_request = kinds.iter().position(|k| *k == Ok(Kind::Request));
    let initialize = !server.modern && is_initialize(&messages);
    let listen = first_request.is_some_and(|i| is_listen(&messages[i]));
    let (lookup, session) = server.lookup(post.headers);
    let issues_sessions = server.sessions.issued_any();
    // A new `initialize` starts a new session: on a fresh engine when
    // sessions are isolated, so it sees the cassette from the top.
    // In the modern era a client's `server/discover` starts one.
    let handler = if initialize && server.stateful {
        server.session_handler()
    } else if server.modern {
        server.modern_handler(&messages)
    } else {
        server.handler_for(session.as_deref())
    };

    let spill = session.clone().map_or(Spill::Nowhere, Spill::Session);
    let (mut flow, sink) = Flow::open(spill);
    sink.note_ids(&post.body, &messages, post.batch);
    let mut positions: Vec<Option<usize>> = Vec::with_capacity(messages.len());
    // Whether the handler sends messages before a response beyond the
    // recording's: a JSON answer would lose them.
    let mut streamed = false;
    for message in messages {
        let state = situation::session_state(&message, lookup, issues_sessions);
        let situation = situation::situation(post.headers, server.local, &message, state);
        if !situation.is_normal() {
            let handled =
                Arc::clone(&handler).handle(message.clone(), &sink, &mut flow.tasks, &situation);
            match handled {
                Handled::Answered(position) => {
                    positions.push(position);
                    continue;
                }
                Handled::Streamed(position) => {
                    positions.push(position);
                    streamed = true;
                    continue;
                }
                Handled::Status(reply) => return status(server, &session, &reply),
                Handled::NotRecorded => {}
            }
            if let Some(refused) = refusal(server, post.headers, &situation, &message, initialize) {
                return refused;
            }
        }
        if let Err(refused) = modern::check_params(&server.param_headers, post.headers, &message) {
            return refused;
        }
        match traced(&handler, message, &sink, &mut flow.tasks) {
            Handled::Status(reply) => return status(server, &session, &reply),
            handled => {
                streamed |= matches!(handled, Handled::Streamed(_));
                positions.push(handled.interaction());
            }
        }
    }
    drop(sink);

    let played = |index: usize| positions[index].and_then(|p| handler.recorded(p));
    if answers == 0 {
        let plan = Plan::for_notification(played(0));
        flow.drain(server.closed());
        return answer::without_stream(&plan);
    }
    let mut plan = Plan::for_request(first_request.and_then(played), post.accept);
    if streamed && post.accept.sse && matches!(plan.shape, Shape::Json) {
        plan.shape = Shape::Sse;
    }
    if listen && server.listen_streams && !plan.recorded && post.accept.sse {
        // The handler's `subscriptions/listen` streams its notifications
        // until the client closes the stream.
        plan.shape = Shape::Sse;
    }
    let mut session = session;
    let mut issued = None;
    let unrecorded_initialize =
        server.sessions_without_recording && first_request.and_then(played).is_none();
    if initialize && server.stateful && (plan.issues_session || unrecorded_initialize) {
        let opened = server.open_session(Arc::clone(&handler));
        flow.set_spill(Spill::Session(Arc::clone(&opened)));
        issued = Some(opened.id.clone());
        session = Some(opened);
    }
    let expect = Expect {
        answers,
        batch: post.batch,
    };
    let response = answer::respond(server, flow, plan, expect, session, post.start).await;
    match issued {
        Some(id) => reply::with_session(response, &id),
        None => response,
    }
}
