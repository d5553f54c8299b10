//! GET (the server's own SSE stream, and resumption) and DELETE (ending a
//! session), both legacy-era only.

use http::{HeaderMap, StatusCode};

use super::guard::{self, Accept, header};
use super::reply::{self, Response};
use super::server::Server;

/// `Last-Event-ID`.
const LAST_EVENT_ID: &str = "last-event-id";

/// GET on the endpoint: the session's stream, resumed after
/// `Last-Event-ID` when given; or the recorded refusal (e.g. 405).
pub(super) fn get(server: &Server, headers: &HeaderMap) -> Response {
    try_get(server, headers).unwrap_or_else(|refused| refused)
}

fn try_get(server: &Server, headers: &HeaderMap) -> Result<Response, Response> {
    if let Some(status) = recorded_refusal(server, server.get_status) {
        return Err(status);
    }
    if !server.stateful {
        return Err(reply::method_not_allowed(server.allowed_methods()));
    }
    if !Accept::of(headers).sse {
        return Err(reply::error(
            StatusCode::NOT_ACCEPTABLE,
            reply::BAD_REQUEST_CODE,
            "Not Acceptable: Client must accept text/event-stream",
        ));
    }
    let session = server.session(headers)?;
    guard::check_version_header(headers)?;
    let events = match header(headers, LAST_EVENT_ID) {
        Some(last) => session.resume(last),
        None => session.open(server.get_priming.as_ref()).map_err(|_| {
            reply::error(
                StatusCode::CONFLICT,
                reply::BAD_REQUEST_CODE,
                "Conflict: Only one SSE stream is allowed per session",
            )
        })?,
    };
    Ok(reply::sse(StatusCode::OK, events, server.closed()))
}

/// DELETE on the endpoint: ends the session; or the recorded refusal.
pub(super) fn delete(server: &Server, headers: &HeaderMap) -> Response {
    try_delete(server, headers).unwrap_or_else(|refused| refused)
}

fn try_delete(server: &Server, headers: &HeaderMap) -> Result<Response, Response> {
    if let Some(status) = recorded_refusal(server, server.delete_status) {
        return Err(status);
    }
    if !server.stateful {
        return Err(reply::method_not_allowed(server.allowed_methods()));
    }
    let session = server.session(headers)?;
    guard::check_version_header(headers)?;
    server.sessions.end(&session.id);
    let status = server
        .delete_status
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::OK);
    Ok(reply::empty(status))
}

/// A recorded non-2xx answer to GET or DELETE, replayed as is.
fn recorded_refusal(server: &Server, recorded: Option<u16>) -> Option<Response> {
    let status = StatusCode::from_u16(recorded?).ok()?;
    if status.is_success() {
        return None;
    }
    if status == StatusCode::METHOD_NOT_ALLOWED {
        return Some(reply::method_not_allowed(allow_without_refused(server)));
    }
    Some(reply::empty(status))
}

/// `Allow` for a recorded 405: what the recording says works.
fn allow_without_refused(server: &Server) -> &'static str {
    if !server.stateful {
        return server.allowed_methods();
    }
    let refused = |s: Option<u16>| s.is_some_and(|s| !(200..300).contains(&s));
    match (refused(server.get_status), refused(server.delete_status)) {
        (true, true) => "POST",
        (true, false) => "POST, DELETE",
        (false, true) => "GET, POST",
        (false, false) => server.allowed_methods(),
    }
}
