//! Which part of the server answers an HTTP request: the guards every
//! request passes, the OAuth stand-in, the 2024-11-05 HTTP+SSE transport,
//! or the Streamable HTTP endpoint's POST, GET and DELETE.

use std::sync::Arc;

use http::{Method, Request};
use hyper::body::Incoming;

use super::reply::{self, Response};
use super::server::Server;
use super::{guard, legacy_sse, post, stream};

/// Routes one HTTP request. A POST on the Streamable HTTP endpoint from
/// elsewhere is answered as recorded in that situation, if it was (see
/// [`post`]); anything else from elsewhere gets 403.
pub(super) async fn route(server: &Arc<Server>, request: Request<Incoming>) -> Response {
    let mcp_post = server.http_sse_endpoints.is_none()
        && request.method() == Method::POST
        && request.uri().path() == server.endpoint;
    if !mcp_post && let Err(refused) = guard::check_origin_and_host(request.headers(), server.local)
    {
        return refused;
    }
    if let Some(oauth) = &server.oauth {
        let path = request.uri().path().to_owned();
        if oauth.serves(&path) {
            let method = request.method().clone();
            let query = request.uri().query().map(str::to_owned);
            let body = match http_body_util::BodyExt::collect(request.into_body()).await {
                Ok(body) => body.to_bytes(),
                Err(_) => bytes::Bytes::new(),
            };
            return oauth.handle(&method, &path, query.as_deref(), &body);
        }
        if let Err(refused) = oauth.check(request.headers()) {
            return refused;
        }
    }
    if let Err(refused) = guard::check_auth(server.auth, request.headers()) {
        return refused;
    }
    if let Some(endpoints) = &server.http_sse_endpoints {
        return legacy_sse::handle(server, endpoints, request).await;
    }
    if request.uri().path() != server.endpoint {
        return reply::not_found();
    }
    match *request.method() {
        Method::POST => post::handle(server, request).await,
        Method::GET if !server.modern => stream::get(server, request.headers()),
        Method::DELETE if !server.modern => stream::delete(server, request.headers()),
        _ => reply::method_not_allowed(server.allowed_methods()),
    }
}
