//! The proxy's own answers: the body every response it sends has, and
//! the plain-text answers it writes itself (the proxied request and the
//! OAuth stand-in both answer with them).

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};

use super::tee::BoxError;

/// The body of every response the proxy sends.
pub(super) type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

/// A plain-text answer of our own.
pub(super) fn text_response(status: StatusCode, text: String) -> Response<ProxyBody> {
    let mut response = Response::new(
        Full::new(Bytes::from(text))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
