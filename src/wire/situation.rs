//! Streamable HTTP facts that the recording proxy and the replay server must
//! judge the same way: the [`HttpSituation`] of a POSTed message (its
//! session, where it comes from, whether its headers agree with its body,
//! whether its protocol version header is a known one).
//!
//! The proxy stores each message's situation in the cassette; replay
//! computes it again for a live request with the very same functions and
//! answers from a recording made in the same situation, so that what the
//! recorded server did in an out-of-the-ordinary situation (say, a 400
//! instead of a 404 for a stale session) is what replay does too.

use std::net::{IpAddr, SocketAddr};

use http::{HeaderMap, Uri, header};
use serde_json::Value;

use crate::cassette::{HttpSituation, SessionState};
use crate::jsonrpc;
use crate::protocol::{self, MODERN_VERSION};

/// The session header.
pub(crate) const SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`.
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method` (2026-07-28): repeats the body's method.
pub(crate) const MCP_METHOD: &str = "mcp-method";
/// `Mcp-Name` (2026-07-28): repeats the tool, prompt or resource named.
pub(crate) const MCP_NAME: &str = "mcp-name";

/// Which header named a foreign site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Foreign {
    /// `Origin` is not a loopback origin (or not readable).
    Origin,
    /// `Host` names neither loopback nor the address listened on.
    Host,
}

/// DNS-rebinding protection: whether a request comes from elsewhere. An
/// `Origin` that is not loopback, or a `Host` that names neither loopback
/// nor `local` (when that is a specific address), is foreign.
pub(crate) fn foreign(headers: &HeaderMap, local: SocketAddr) -> Option<Foreign> {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = origin
            .to_str()
            .ok()
            .and_then(|origin| origin.parse::<Uri>().ok())
            .and_then(|uri| uri.host().map(str::to_owned));
        if !host.is_some_and(|host| is_loopback(&host)) {
            return Some(Foreign::Origin);
        }
    }
    if let Some(host) = headers.get(header::HOST)
        && !is_local_host(host.to_str().ok(), local)
    {
        return Some(Foreign::Host);
    }
    None
}

/// Whether a `Host` value names loopback or `local` itself.
pub(crate) fn is_local_host(host: Option<&str>, local: SocketAddr) -> bool {
    host.and_then(|host| host.parse::<http::uri::Authority>().ok())
        .is_some_and(|authority| {
            let host = authority.host();
            is_loopback(host) || is_listen_address(host, local)
        })
}

/// `localhost`, `127.0.0.0/8` or `::1` (brackets allowed).
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The literal address listened on, when that is a specific one: a user
/// who binds a LAN address means to be reached by it.
fn is_listen_address(host: &str, local: SocketAddr) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    !local.ip().is_unspecified() && host.parse::<IpAddr>().is_ok_and(|ip| ip == local.ip())
}

/// Whether `version` is a released protocol version.
pub(crate) fn is_known_version(version: &str) -> bool {
    crate::protocol::Version::parse(version).is_some()
}

/// `MCP-Protocol-Version` is present and names no known version (or is not
/// text).
pub(crate) fn bad_protocol_version(headers: &HeaderMap) -> bool {
    headers
        .get(PROTOCOL_VERSION)
        .is_some_and(|value| !value.to_str().is_ok_and(is_known_version))
}

/// The session a request names, as the server's session table sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionLookup {
    /// No `Mcp-Session-Id` header.
    Absent,
    /// One the server issued and has not ended.
    Live,
    /// One it never issued, or has ended.
    Stale,
}

/// Looks up the request's `Mcp-Session-Id` with `is_live` (whether the
/// server issued that id and has not ended it). An id that is not text is
/// stale.
pub(crate) fn session_lookup(
    headers: &HeaderMap,
    is_live: impl FnOnce(&str) -> bool,
) -> SessionLookup {
    match headers.get(SESSION_ID).map(|value| value.to_str()) {
        None => SessionLookup::Absent,
        Some(Ok(id)) if is_live(id) => SessionLookup::Live,
        Some(_) => SessionLookup::Stale,
    }
}

/// A message's session state. It matters only where the server hands out
/// sessions (it has issued one so far) and for legacy-era messages: a
/// request that declares a protocol version in `_meta` (2026-07-28) is
/// stateless. Without a session header only `initialize` and client
/// responses are normal; a header the server did not issue, or has ended,
/// is unknown.
pub(crate) fn session_state(
    message: &Value,
    lookup: SessionLookup,
    issues_sessions: bool,
) -> SessionState {
    if !issues_sessions || protocol::declared_version(message).is_some() {
        return SessionState::Normal;
    }
    match lookup {
        SessionLookup::Live => SessionState::Normal,
        SessionLookup::Stale => SessionState::Unknown,
        SessionLookup::Absent => match jsonrpc::method(message) {
            Some("initialize") | None => SessionState::Normal,
            Some(_) => SessionState::Missing,
        },
    }
}

/// The situation of one message POSTed with `headers`, to a server
/// listening on `local`, whose session is in `session`.
pub(crate) fn situation(
    headers: &HeaderMap,
    local: SocketAddr,
    message: &Value,
    session: SessionState,
) -> HttpSituation {
    HttpSituation {
        session,
        foreign_origin: foreign(headers, local).is_some(),
        header_mismatch: header_mismatch(headers, message).is_some(),
        bad_protocol_version: bad_protocol_version(headers),
    }
}

/// The situation of a request without a message (GET, DELETE): as for a
/// message, but any request other than `initialize` needs a session where
/// the server hands them out.
pub(crate) fn bodiless_situation(
    headers: &HeaderMap,
    local: SocketAddr,
    lookup: SessionLookup,
    issues_sessions: bool,
) -> HttpSituation {
    let session = match lookup {
        _ if !issues_sessions => SessionState::Normal,
        SessionLookup::Live => SessionState::Normal,
        SessionLookup::Stale => SessionState::Unknown,
        SessionLookup::Absent => SessionState::Missing,
    };
    HttpSituation {
        session,
        foreign_origin: foreign(headers, local).is_some(),
        header_mismatch: false,
        bad_protocol_version: bad_protocol_version(headers),
    }
}

/// Whether `headers` agree with the body of any message that declares no
/// protocol version in `_meta`: [`header_mismatch`] is `None` for every
/// such message, since there is no `Mcp-Method` or `Mcp-Name` to hold
/// against it and no 2026-07-28 `MCP-Protocol-Version` that requires them.
pub(crate) fn agree_with_undeclared(headers: &HeaderMap) -> bool {
    !headers.contains_key(MCP_METHOD)
        && !headers.contains_key(MCP_NAME)
        && single(headers, PROTOCOL_VERSION).is_ok_and(|v| v.is_none_or(|v| v < MODERN_VERSION))
}

/// Why a message's headers disagree with its body, or cannot be read: a
/// server answers it with HeaderMismatch (-32020, 2026-07-28).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum HeaderMismatch {
    /// A header that may appear once appears more often.
    #[error("duplicate {0} header")]
    Duplicate(String),
    /// A header that is not text.
    #[error("{0} header contains invalid characters")]
    NotText(String),
    /// `MCP-Protocol-Version` is not the version `_meta` declares.
    #[error(
        "MCP-Protocol-Version header ({}) does not match the request's _meta protocolVersion ({declared})",
        header.as_deref().unwrap_or("missing")
    )]
    Version {
        /// The header's version, if it was sent.
        header: Option<String>,
        /// The version `_meta` declares.
        declared: String,
    },
    /// No `Mcp-Method` where one is required.
    #[error("missing required Mcp-Method header")]
    NoMethod,
    /// `Mcp-Method` names another method than the body.
    #[error("Mcp-Method header `{header}` does not match body method `{method}`")]
    Method {
        /// The header's method.
        header: String,
        /// The body's.
        method: String,
    },
    /// No `Mcp-Name` where one is required.
    #[error("missing required Mcp-Name header for `{method}`")]
    NoName {
        /// The body's method.
        method: String,
    },
    /// `Mcp-Name` names another tool, prompt or resource than the body.
    #[error("Mcp-Name header `{header}` does not match body value `{body}`")]
    Name {
        /// The header's name, decoded.
        header: String,
        /// The body's.
        body: String,
    },
    /// `Mcp-Name` is `=?base64?…?=` around something that is not Base64.
    #[error("Mcp-Name header is not valid Base64")]
    NameNotBase64,
    /// An `Mcp-Param-*` header that is not its argument.
    #[error("Mcp-Param-{header} header `{sent}` does not match argument `{argument}` ({value})")]
    Param {
        /// The header's name, after the prefix.
        header: String,
        /// Its value, decoded.
        sent: String,
        /// The argument's path, `.`-separated.
        argument: String,
        /// The argument's value.
        value: String,
    },
    /// An `Mcp-Param-*` header that is `=?base64?…?=` around something
    /// that is not Base64.
    #[error("Mcp-Param-{header} header is not valid Base64")]
    ParamNotBase64 {
        /// The header's name, after the prefix.
        header: String,
    },
    /// No `Mcp-Param-*` header for an argument the body has.
    #[error("missing Mcp-Param-{header} header for argument `{argument}`")]
    NoParam {
        /// The header's name, after the prefix.
        header: String,
        /// The argument's path, `.`-separated.
        argument: String,
    },
    /// An `Mcp-Param-*` header for an argument the body does not have.
    #[error("Mcp-Param-{header} header for argument `{argument}`, which the body does not have")]
    ExtraParam {
        /// The header's name, after the prefix.
        header: String,
        /// The argument's path, `.`-separated.
        argument: String,
    },
}

/// Why a message's `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name`
/// headers disagree with its body (2026-07-28), or why a required one is
/// missing; `None` when they agree. Headers are required once the message
/// declares a protocol version in `_meta`, or the header names 2026-07-28
/// or later. Client responses carry none.
pub(crate) fn header_mismatch(headers: &HeaderMap, message: &Value) -> Option<HeaderMismatch> {
    let method = jsonrpc::method(message)?;
    check_headers(headers, method, message).err()
}

fn check_headers(headers: &HeaderMap, method: &str, message: &Value) -> Result<(), HeaderMismatch> {
    let header_version = single(headers, PROTOCOL_VERSION)?;
    let declared = protocol::declared_version(message);
    if let Some(declared) = declared
        && header_version != Some(declared)
    {
        return Err(HeaderMismatch::Version {
            header: header_version.map(str::to_owned),
            declared: declared.to_owned(),
        });
    }
    let required = declared.is_some() || header_version.is_some_and(|v| v >= MODERN_VERSION);
    match single(headers, MCP_METHOD)? {
        None if required => return Err(HeaderMismatch::NoMethod),
        Some(value) if value != method => {
            return Err(HeaderMismatch::Method {
                header: value.to_owned(),
                method: method.to_owned(),
            });
        }
        _ => {}
    }
    let Some(expected) = named(method, message) else {
        return Ok(());
    };
    match single(headers, MCP_NAME)? {
        None if required => Err(HeaderMismatch::NoName {
            method: method.to_owned(),
        }),
        None => Ok(()),
        Some(raw) => match decode(raw) {
            Some(name) if name == expected => Ok(()),
            Some(name) => Err(HeaderMismatch::Name {
                header: name,
                body: expected.to_owned(),
            }),
            None => Err(HeaderMismatch::NameNotBase64),
        },
    }
}

/// The value `Mcp-Name` must repeat, for the methods that have one.
fn named<'a>(method: &str, message: &'a Value) -> Option<&'a str> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    jsonrpc::params(message)?.get(key)?.as_str()
}

/// A header that may appear at most once, as text.
pub(super) fn single<'a>(
    headers: &'a HeaderMap,
    name: &str,
) -> Result<Option<&'a str>, HeaderMismatch> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(HeaderMismatch::Duplicate(name.to_owned()));
    }
    value
        .to_str()
        .map(Some)
        .map_err(|_| HeaderMismatch::NotText(name.to_owned()))
}

/// A header value, unwrapped from `=?base64?…?=` when a client had to
/// encode it (non-ASCII, or surrounding spaces).
pub(super) fn decode(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|inner| inner.strip_suffix("?="))
    {
        Some(inner) => String::from_utf8(base64(inner)?).ok(),
        None => Some(value.to_owned()),
    }
}

/// Standard Base64 with padding (the `base64` crate, strict).
fn base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// A header's value as text, if present and readable.
pub(crate) fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name)?.to_str().ok().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use serde_json::json;

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
    fn loopback_origins_and_hosts_are_not_foreign() {
        for (origin, host) in [
            ("http://127.0.0.1:9", "127.0.0.1:4000"),
            ("http://localhost:3000", "localhost:4000"),
            ("http://[::1]:80", "[::1]:4000"),
            ("https://LOCALHOST", "localhost"),
        ] {
            let map = headers(&[("origin", origin), ("host", host)]);
            assert_eq!(foreign(&map, local()), None, "{origin} {host}");
        }
    }

    #[test]
    fn foreign_origins_and_hosts_are_told_apart() {
        let origin = headers(&[
            ("origin", "http://evil.example"),
            ("host", "127.0.0.1:4000"),
        ]);
        assert_eq!(foreign(&origin, local()), Some(Foreign::Origin));
        let null = headers(&[("origin", "null"), ("host", "127.0.0.1:4000")]);
        assert_eq!(foreign(&null, local()), Some(Foreign::Origin));
        let host = headers(&[
            ("origin", "http://127.0.0.1:1"),
            ("host", "evil.example:4000"),
        ]);
        assert_eq!(foreign(&host, local()), Some(Foreign::Host));
    }

    #[test]
    fn the_listen_address_is_a_local_host() {
        let lan: SocketAddr = "192.168.1.5:80".parse().unwrap();
        let map = headers(&[("host", "192.168.1.5")]);
        assert_eq!(foreign(&map, lan), None);
        assert_eq!(foreign(&map, local()), Some(Foreign::Host));
        let any: SocketAddr = "0.0.0.0:80".parse().unwrap();
        assert_eq!(foreign(&map, any), Some(Foreign::Host));
    }

    #[test]
    fn protocol_version_headers_must_be_known() {
        assert!(!bad_protocol_version(&headers(&[(
            PROTOCOL_VERSION,
            "2025-06-18"
        )])));
        assert!(!bad_protocol_version(&HeaderMap::new()));
        assert!(bad_protocol_version(&headers(&[(
            PROTOCOL_VERSION,
            "v999.0.0"
        )])));
    }

    #[test]
    fn sessions_matter_for_legacy_messages_to_servers_that_issue_them() {
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"});
        let modern = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        use SessionLookup::*;
        assert_eq!(session_state(&list, Absent, true), SessionState::Missing);
        assert_eq!(session_state(&list, Stale, true), SessionState::Unknown);
        assert_eq!(session_state(&list, Live, true), SessionState::Normal);
        assert_eq!(session_state(&init, Absent, true), SessionState::Normal);
        assert_eq!(session_state(&list, Absent, false), SessionState::Normal);
        assert_eq!(session_state(&list, Stale, false), SessionState::Normal);
        assert_eq!(session_state(&modern, Absent, true), SessionState::Normal);
    }

    fn call(name: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": name,
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        }})
    }

    const VERSION: (&str, &str) = ("mcp-protocol-version", "2026-07-28");

    #[test]
    fn matching_headers_agree() {
        let map = headers(&[VERSION, ("mcp-method", "tools/call"), ("mcp-name", "echo")]);
        assert_eq!(header_mismatch(&map, &call("echo")), None);
        let encoded = headers(&[
            VERSION,
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?w6ljaG8=?="),
        ]);
        assert_eq!(header_mismatch(&encoded, &call("écho")), None);
    }

    #[test]
    fn mismatched_or_missing_headers_disagree() {
        let cases = [
            headers(&[VERSION, ("mcp-method", "tools/list"), ("mcp-name", "echo")]),
            headers(&[VERSION, ("mcp-method", "tools/call"), ("mcp-name", "add")]),
            headers(&[VERSION, ("mcp-name", "echo")]),
            headers(&[VERSION, ("mcp-method", "tools/call")]),
            headers(&[("mcp-method", "tools/call"), ("mcp-name", "echo")]),
            headers(&[
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-method", "tools/call"),
                ("mcp-name", "echo"),
            ]),
        ];
        for map in cases {
            assert!(header_mismatch(&map, &call("echo")).is_some(), "{map:?}");
        }
    }

    #[test]
    fn notifications_without_meta_need_no_headers() {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled"});
        assert_eq!(header_mismatch(&HeaderMap::new(), &note), None);
        let wrong = headers(&[("mcp-method", "x")]);
        assert!(header_mismatch(&wrong, &note).is_some());
        let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
        assert_eq!(header_mismatch(&wrong, &response), None);
    }

    #[test]
    fn base64_decodes_with_padding() {
        assert_eq!(base64("aGk=").unwrap(), b"hi");
        assert_eq!(base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64("aGVsbG8h").unwrap(), b"hello!");
        assert_eq!(base64("").unwrap(), b"");
        assert!(base64("a===").is_none());
        assert!(base64("aGk").is_none());
        assert!(base64("a=Gk").is_none());
    }

    #[test]
    fn bodiless_requests_need_a_session_where_there_are_sessions() {
        let none = HeaderMap::new();
        let absent = bodiless_situation(&none, local(), SessionLookup::Absent, true);
        assert_eq!(absent.session, SessionState::Missing);
        let stale = bodiless_situation(&none, local(), SessionLookup::Stale, true);
        assert_eq!(stale.session, SessionState::Unknown);
        assert!(bodiless_situation(&none, local(), SessionLookup::Absent, false).is_normal());
        assert!(bodiless_situation(&none, local(), SessionLookup::Live, true).is_normal());
    }

    #[test]
    fn situations_combine_every_circumstance() {
        let map = headers(&[("origin", "http://evil.example"), (PROTOCOL_VERSION, "1")]);
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
        let situation = situation(&map, local(), &list, SessionState::Unknown);
        assert_eq!(
            situation,
            HttpSituation {
                session: SessionState::Unknown,
                foreign_origin: true,
                header_mismatch: false,
                bad_protocol_version: true,
            }
        );
    }
}
