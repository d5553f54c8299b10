//! The upstream server: where requests go, and which headers travel.

use http::header::{self, HeaderMap, HeaderName};
use http::uri::{PathAndQuery, Scheme};
use http::{Uri, uri::Authority};

use super::super::error::RecordError;
use crate::redact::{self, Redactor};

/// The upstream endpoint, parsed once.
#[derive(Debug, Clone)]
pub(super) struct Endpoint {
    /// `http`, or `https` (the `tls` feature).
    scheme: Scheme,
    authority: Authority,
    /// The endpoint's path, e.g. `/mcp`; the proxy serves it under the same path.
    path: String,
    query: Option<String>,
    /// The URL as it may be written into a cassette.
    masked: String,
}

impl Endpoint {
    /// Parses `url`: an `http://` URL, or with the `tls` feature an
    /// `https://` one.
    pub(super) fn parse(url: &str) -> Result<Self, RecordError> {
        let bad = |reason: &str| RecordError::BadUpstream {
            url: mask_url(url),
            reason: reason.into(),
        };
        let uri: Uri = url
            .parse()
            .map_err(|e: http::uri::InvalidUri| bad(&e.to_string()))?;
        let scheme = match uri.scheme() {
            Some(scheme) if *scheme == Scheme::HTTP => Scheme::HTTP,
            #[cfg(feature = "tls")]
            Some(scheme) if *scheme == Scheme::HTTPS => Scheme::HTTPS,
            #[cfg(not(feature = "tls"))]
            Some(scheme) if *scheme == Scheme::HTTPS => {
                return Err(crate::client::LiveError::TlsUnsupported.into());
            }
            _ => return Err(bad("only http:// and https:// URLs are supported")),
        };
        let authority = uri.authority().cloned().ok_or_else(|| bad("no host"))?;
        Ok(Endpoint {
            scheme,
            authority,
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            masked: mask_url(url),
        })
    }

    /// Whether the upstream is `https://`.
    pub(super) fn is_https(&self) -> bool {
        self.scheme == Scheme::HTTPS
    }

    /// The endpoint's path.
    pub(super) fn path(&self) -> &str {
        &self.path
    }

    /// The URL with secrets masked.
    pub(super) fn masked(&self) -> &str {
        &self.masked
    }

    /// Masks in the URL, too, what `redactor` finds (the environment's
    /// secrets, such as an API key passed in the query under any name).
    pub(super) fn mask_with(&mut self, redactor: &Redactor) {
        self.masked = redactor.mask_plain(&self.masked);
    }

    /// Where a request for `uri` (as the proxy received it) goes: the same
    /// path and query on the upstream. A request for the endpoint also gets
    /// the query the upstream URL carries (e.g. an API key the client never
    /// sees), before its own.
    pub(super) fn target(&self, uri: &Uri) -> Uri {
        let path = uri.path();
        let query = match (path == self.path, &self.query, uri.query()) {
            (true, Some(ours), Some(theirs)) => Some(format!("{ours}&{theirs}")),
            (true, Some(ours), None) => Some(ours.clone()),
            (_, _, theirs) => theirs.map(str::to_owned),
        };
        let path_and_query = match query {
            Some(query) => format!("{path}?{query}"),
            None => path.to_owned(),
        };
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(
                PathAndQuery::try_from(path_and_query)
                    .unwrap_or_else(|_| PathAndQuery::from_static("/")),
            )
            .build()
            .expect("scheme, authority and path make a URI")
    }
}

/// A URL fit for a cassette: a password in it, token-shaped values and the
/// values of credential-looking query parameters (`api_key`, `sig`,
/// `code`, …) are masked.
pub(super) fn mask_url(url: &str) -> String {
    redact::mask_command(&[url.to_owned()])
        .pop()
        .unwrap_or_default()
}

/// Headers that describe one connection, not the message (RFC 9110 §7.6.1),
/// as names made once: removing by `&str` would parse each name again on
/// every request and answer.
const HOP_BY_HOP: [HeaderName; 9] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

/// Removes hop-by-hop headers, including those `Connection` names.
pub(super) fn strip_hop_by_hop(headers: &mut HeaderMap) {
    if headers.contains_key(header::CONNECTION) {
        let named: Vec<HeaderName> = headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(|name| HeaderName::try_from(name.trim()).ok())
            .collect();
        for name in named {
            headers.remove(name);
        }
    }
    for name in &HOP_BY_HOP {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_passwords_tokens_and_secret_parameters() {
        assert_eq!(
            mask_url("http://me:hunter2@h:1/mcp?api_key=abc&x=1&token=t"),
            "http://me:[REDACTED]@h:1/mcp?api_key=[REDACTED]&x=1&token=[REDACTED]"
        );
        assert_eq!(
            mask_url("http://h/mcp?k=ghp_0123456789abcdefghij"),
            "http://h/mcp?k=[REDACTED]"
        );
        assert_eq!(mask_url("http://h/mcp"), "http://h/mcp");
        // Signed URLs and OAuth redirects (issue 12, item 10).
        assert_eq!(
            mask_url(
                "http://h/mcp?sv=2022-11-02&sig=abc%2Bdef%3D&se=2030&code=xyz#access_token=t&x=1"
            ),
            "http://h/mcp?sv=2022-11-02&sig=[REDACTED]&se=2030&code=[REDACTED]#access_token=[REDACTED]&x=1"
        );
        assert_eq!(
            mask_url("http://h/mcp?X-Amz-Credential=AK%2F1&X-Amz-Signature=f00d&X-Amz-Date=1"),
            "http://h/mcp?X-Amz-Credential=[REDACTED]&X-Amz-Signature=[REDACTED]&X-Amz-Date=1"
        );
    }

    #[test]
    fn the_environment_secrets_are_masked_in_the_url() {
        let mut upstream = Endpoint::parse("http://127.0.0.1:9/mcp?k=Sup3r-secret-value").unwrap();
        let redactor = Redactor::new(&crate::redact::RedactConfig {
            defaults: true,
            env: vec![("MY_SERVICE_TOKEN".into(), "Sup3r-secret-value".into())],
            ..Default::default()
        })
        .unwrap();
        upstream.mask_with(&redactor);
        assert_eq!(upstream.masked(), "http://127.0.0.1:9/mcp?k=[REDACTED]");
    }

    #[test]
    fn targets_keep_path_and_add_the_upstream_query_on_the_endpoint() {
        let upstream = Endpoint::parse("http://127.0.0.1:9/mcp?key=k").unwrap();
        let target = |uri: &str| upstream.target(&uri.parse().unwrap()).to_string();
        assert_eq!(target("/mcp"), "http://127.0.0.1:9/mcp?key=k");
        assert_eq!(target("/mcp?a=1"), "http://127.0.0.1:9/mcp?key=k&a=1");
        assert_eq!(target("/message?s=1"), "http://127.0.0.1:9/message?s=1");
    }

    #[test]
    #[cfg(feature = "tls")]
    fn https_targets_stay_https() {
        let upstream = Endpoint::parse("https://127.0.0.1:9/mcp").unwrap();
        assert!(upstream.is_https());
        let target = upstream.target(&"/mcp?a=1".parse().unwrap());
        assert_eq!(target.to_string(), "https://127.0.0.1:9/mcp?a=1");
    }

    #[test]
    fn refuses_https_without_tls_and_other_schemes() {
        #[cfg(not(feature = "tls"))]
        assert!(matches!(
            Endpoint::parse("https://h/mcp"),
            Err(RecordError::Live(crate::client::LiveError::TlsUnsupported))
        ));
        assert!(matches!(
            Endpoint::parse("ftp://h/mcp"),
            Err(RecordError::BadUpstream { .. })
        ));
    }

    #[test]
    fn strips_hop_by_hop_headers_and_those_connection_names() {
        let mut headers = HeaderMap::new();
        headers.insert("connection", "close, x-hop".parse().unwrap());
        headers.insert("x-hop", "1".parse().unwrap());
        headers.insert("transfer-encoding", "chunked".parse().unwrap());
        headers.insert("x-kept", "1".parse().unwrap());
        strip_hop_by_hop(&mut headers);
        assert_eq!(headers.len(), 1);
        assert!(headers.contains_key("x-kept"));
    }
}
