//! Checks on request headers that come before any JSON-RPC: who may talk to
//! the replay (DNS-rebinding protection), what it may answer with, and
//! which protocol versions it accepts.

use std::net::SocketAddr;

use http::{HeaderMap, StatusCode, header};

use super::Auth;
use super::reply::{self, Response};
use crate::wire::situation::{self, Foreign};

/// `MCP-Protocol-Version`.
pub(super) const PROTOCOL_VERSION: &str = situation::PROTOCOL_VERSION;

/// A header's value as text; `None` when absent or not visible ASCII.
pub(super) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// Under `--auth bearer`, a request needs `Authorization: Bearer` with
/// some token (its value is never looked at, stored or logged).
pub(super) fn check_auth(auth: Auth, headers: &HeaderMap) -> Result<(), Response> {
    match auth {
        // Checked by the authorization server itself (`oauth`).
        Auth::None | Auth::OAuth => Ok(()),
        Auth::Bearer => {
            let bearer = header(headers, header::AUTHORIZATION.as_str())
                .and_then(|value| value.split_once(' '))
                .is_some_and(|(scheme, token)| {
                    scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty()
                });
            if bearer {
                Ok(())
            } else {
                Err(reply::unauthorized())
            }
        }
    }
}

/// A browser page elsewhere must not reach a local replay: an `Origin` that
/// is not loopback, or a `Host` that names neither loopback nor the address
/// replay listens on, gets 403 (unless the recording answered a request
/// from elsewhere; see [`situation::situation`]).
pub(super) fn check_origin_and_host(
    headers: &HeaderMap,
    local: SocketAddr,
) -> Result<(), Response> {
    match situation::foreign(headers, local) {
        None => Ok(()),
        Some(which) => Err(forbidden(which)),
    }
}

/// The 403 for a request from elsewhere.
pub(super) fn forbidden(which: Foreign) -> Response {
    let message = match which {
        Foreign::Origin => "Forbidden: Origin not allowed",
        Foreign::Host => "Forbidden: Host not allowed",
    };
    reply::error(StatusCode::FORBIDDEN, reply::BAD_REQUEST_CODE, message)
}

/// What the client's `Accept` allows among the two answers MCP uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Accept {
    pub json: bool,
    pub sse: bool,
}

impl Accept {
    /// Reads `Accept`; no header accepts anything.
    pub(super) fn of(headers: &HeaderMap) -> Self {
        let mut accept = Accept {
            json: false,
            sse: false,
        };
        let mut any_header = false;
        for value in headers.get_all(header::ACCEPT) {
            any_header = true;
            let Ok(value) = value.to_str() else { continue };
            for range in value.split(',') {
                let essence = range.split(';').next().unwrap_or_default().trim();
                let essence = essence.to_ascii_lowercase();
                match essence.as_str() {
                    "*/*" => (accept.json, accept.sse) = (true, true),
                    "application/*" | "application/json" => accept.json = true,
                    "text/*" | "text/event-stream" => accept.sse = true,
                    _ => {}
                }
            }
        }
        if !any_header {
            return Accept {
                json: true,
                sse: true,
            };
        }
        accept
    }

    /// Whether any MCP answer is acceptable.
    pub(super) fn any(self) -> bool {
        self.json || self.sse
    }
}

/// Whether the body is declared as JSON.
pub(super) fn is_json_body(headers: &HeaderMap) -> bool {
    header(headers, header::CONTENT_TYPE.as_str()).is_some_and(|value| {
        let essence = value.split(';').next().unwrap_or_default().trim();
        essence.eq_ignore_ascii_case("application/json")
    })
}

/// `MCP-Protocol-Version`, when sent, must name a known version (400).
pub(super) fn check_version_header(headers: &HeaderMap) -> Result<(), Response> {
    let Some(value) = headers.get(PROTOCOL_VERSION) else {
        return Ok(());
    };
    match value.to_str() {
        Ok(version) if situation::is_known_version(version) => Ok(()),
        Ok(version) => Err(reply::error(
            StatusCode::BAD_REQUEST,
            reply::BAD_REQUEST_CODE,
            &format!("Bad Request: Unsupported protocol version: {version}"),
        )),
        Err(_) => Err(reply::error(
            StatusCode::BAD_REQUEST,
            reply::BAD_REQUEST_CODE,
            "Bad Request: MCP-Protocol-Version is not text",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    fn local() -> SocketAddr {
        "127.0.0.1:4000".parse().unwrap()
    }

    #[test]
    fn loopback_origins_and_hosts_pass() {
        for (origin, host) in [
            ("http://127.0.0.1:9", "127.0.0.1:4000"),
            ("http://localhost:3000", "localhost:4000"),
            ("http://[::1]:80", "[::1]:4000"),
            ("https://LOCALHOST", "localhost"),
        ] {
            let map = headers(&[("origin", origin), ("host", host)]);
            assert!(
                check_origin_and_host(&map, local()).is_ok(),
                "{origin} {host}"
            );
        }
    }

    #[test]
    fn foreign_origins_and_hosts_get_403() {
        for pairs in [
            [
                ("origin", "http://evil.example"),
                ("host", "127.0.0.1:4000"),
            ],
            [("origin", "null"), ("host", "127.0.0.1:4000")],
            [
                ("origin", "http://127.0.0.1:1"),
                ("host", "evil.example:4000"),
            ],
        ] {
            let response = check_origin_and_host(&headers(&pairs), local()).unwrap_err();
            assert_eq!(response.status(), StatusCode::FORBIDDEN, "{pairs:?}");
        }
    }

    #[test]
    fn the_listen_address_is_an_allowed_host() {
        let lan: SocketAddr = "192.168.1.5:80".parse().unwrap();
        let map = headers(&[("host", "192.168.1.5")]);
        assert!(check_origin_and_host(&map, lan).is_ok());
        assert!(check_origin_and_host(&map, local()).is_err());
    }

    #[test]
    fn accept_reads_media_ranges() {
        let both = headers(&[("accept", "application/json, text/event-stream")]);
        assert_eq!(
            Accept::of(&both),
            Accept {
                json: true,
                sse: true
            }
        );
        let sse = headers(&[("accept", "text/event-stream;q=1")]);
        assert_eq!(
            Accept::of(&sse),
            Accept {
                json: false,
                sse: true
            }
        );
        assert!(Accept::of(&HeaderMap::new()).json);
        assert!(!Accept::of(&headers(&[("accept", "text/html")])).any());
    }

    #[test]
    fn version_header_must_be_known() {
        assert!(check_version_header(&headers(&[(PROTOCOL_VERSION, "2025-06-18")])).is_ok());
        assert!(check_version_header(&HeaderMap::new()).is_ok());
        let bad = check_version_header(&headers(&[(PROTOCOL_VERSION, "1999-01-01")]));
        assert_eq!(bad.unwrap_err().status(), StatusCode::BAD_REQUEST);
    }
}
