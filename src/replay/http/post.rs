//! POST on the endpoint: checks, then the engine, then the answer.

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
use super::plan::Plan;
use super::reply::{self, Response};
use super::server::Server;
use super::session::Session;
use crate::jsonrpc::{self, Kind, codes};

/// The largest body accepted.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// Handles a POST: one JSON-RPC message, or a batch (2025-03-26).
pub(super) async fn handle(server: &Arc<Server>, request: Request<Incoming>) -> Response {
    let start = Instant::now();
    let (parts, body) = request.into_parts();
    let accept = Accept::of(&parts.headers);
    let checked = async {
        check_media_types(&parts.headers, accept)?;
        let (messages, batch) = read_messages(body).await?;
        let session = check_era(server, &parts.headers, &messages)?;
        Ok::<_, Response>((messages, batch, session))
    };
    match checked.await {
        Ok((messages, batch, session)) => {
            dispatch(server, session, messages, batch, accept, start).await
        }
        Err(refused) => refused,
    }
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

/// The body's messages, and whether they came as a batch. A body that is
/// not JSON, an empty batch, or a single message that is not JSON-RPC gets
/// 400 with the JSON-RPC error.
pub(super) async fn read_messages(body: Incoming) -> Result<(Vec<Value>, bool), Response> {
    let bytes = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => {
            return Err(reply::error(
                StatusCode::PAYLOAD_TOO_LARGE,
                reply::BAD_REQUEST_CODE,
                "Payload Too Large",
            ));
        }
        Err(error) => return Err(bad_request(codes::PARSE_ERROR, &error.to_string())),
    };
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| bad_request(codes::PARSE_ERROR, &format!("Parse error: {e}")))?;
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

/// The era's rules: modern requests must repeat the body in their headers;
/// legacy ones (but `initialize`) must name a live session. Returns that
/// session.
fn check_era(
    server: &Server,
    headers: &HeaderMap,
    messages: &[Value],
) -> Result<Option<Arc<Session>>, Response> {
    if server.modern {
        guard::check_version_header(headers)?;
        for message in messages {
            modern::check_headers(headers, message)?;
        }
        return Ok(None);
    }
    if is_initialize(messages) {
        return Ok(None);
    }
    let session = if server.stateful {
        Some(server.session(headers)?)
    } else {
        None
    };
    guard::check_version_header(headers)?;
    Ok(session)
}

/// A lone `initialize` request.
fn is_initialize(messages: &[Value]) -> bool {
    matches!(messages, [message]
        if jsonrpc::method(message) == Some("initialize") && jsonrpc::id(message).is_some())
}

/// Hands the messages to the engine and answers as the plan says.
async fn dispatch(
    server: &Arc<Server>,
    session: Option<Arc<Session>>,
    messages: Vec<Value>,
    batch: bool,
    accept: Accept,
    start: Instant,
) -> Response {
    let kinds: Vec<_> = messages.iter().map(jsonrpc::classify).collect();
    // Requests and invalid messages get answers; the rest get none.
    let answers = kinds
        .iter()
        .filter(|kind| !matches!(kind, Ok(Kind::Notification | Kind::Response)))
        .count();
    let first_request = kinds.iter().position(|k| *k == Ok(Kind::Request));
    let initialize = !server.modern && is_initialize(&messages);

    let spill = session.clone().map_or(Spill::Nowhere, Spill::Session);
    let (mut flow, sink) = Flow::open(spill);
    let positions: Vec<Option<usize>> = messages
        .into_iter()
        .map(|message| {
            server
                .engine
                .handle_message_traced(message, &sink, &mut flow.tasks)
        })
        .collect();
    drop(sink);

    let interactions = &server.engine.cassette().interactions;
    let played = |index: usize| positions[index].and_then(|p| interactions.get(p));
    if answers == 0 {
        let plan = Plan::for_notification(played(0));
        flow.drain(server.closed());
        return answer::without_stream(&plan);
    }
    let plan = Plan::for_request(first_request.and_then(played), accept);
    let mut session = session;
    let mut issued = None;
    if initialize && server.stateful && plan.issues_session {
        let opened = server.open_session();
        flow.set_spill(Spill::Session(Arc::clone(&opened)));
        issued = Some(opened.id.clone());
        session = Some(opened);
    }
    let expect = Expect { answers, batch };
    let response = answer::respond(server, flow, plan, expect, session, start).await;
    match issued {
        Some(id) => reply::with_session(response, &id),
        None => response,
    }
}
