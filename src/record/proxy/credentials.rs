//! Credentials in HTTP headers: the recorder's own (`--header`,
//! `--bearer-env`), added to every request to the upstream, and those a
//! client sends. No header is ever stored, and every credential value seen
//! is a secret for the rest of the session: an upstream that echoes one (in
//! a result, an error body, a 401 page) does not get it into the cassette,
//! the journal or a log.

use http::header::{HeaderMap, HeaderName, HeaderValue};

/// Headers that carry credentials whatever their value looks like.
const CREDENTIAL_HEADERS: [&str; 5] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
    "api-key",
];

/// Words that make any other header name a credential's (`X-Auth-Token`,
/// `X-Github-Secret`, `X-Access-Key`).
const SECRET_WORDS: [&str; 6] = ["auth", "token", "secret", "key", "password", "credential"];

/// Shorter values are not masked: they would mask ordinary text too.
const MIN_SECRET: usize = 8;

/// Headers the recorder adds to every upstream request, parsed once.
#[derive(Debug, Clone, Default)]
pub(super) struct UpstreamHeaders(Vec<(HeaderName, HeaderValue)>);

/// Why a `--header` cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// Not `NAME: VALUE`.
    #[error("`--header` takes `NAME: VALUE`; got a value without `:` (named `{name}`)")]
    NoColon {
        /// What came before the value (never the value).
        name: String,
    },
    /// A name HTTP does not allow.
    #[error("`--header {name}: …`: not a valid HTTP header name")]
    BadName {
        /// The name given.
        name: String,
    },
    /// A value HTTP does not allow (a control character, say).
    #[error("`--header {name}: …`: the value is not a valid HTTP header value")]
    BadValue {
        /// The header's name (never the value).
        name: String,
    },
}

impl UpstreamHeaders {
    /// Parses `NAME: VALUE` pairs (as `--header` takes them).
    pub(super) fn parse(headers: &[(String, String)]) -> Result<Self, HeaderError> {
        let mut parsed = Vec::with_capacity(headers.len());
        for (name, value) in headers {
            let header = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                HeaderError::BadName {
                    name: name.trim().to_owned(),
                }
            })?;
            let mut value =
                HeaderValue::from_str(value.trim()).map_err(|_| HeaderError::BadValue {
                    name: name.trim().to_owned(),
                })?;
            value.set_sensitive(true);
            parsed.push((header, value));
        }
        Ok(UpstreamHeaders(parsed))
    }

    /// Sets them on a request to the upstream, replacing the client's own.
    pub(super) fn apply(&self, headers: &mut HeaderMap) {
        for (name, _) in &self.0 {
            headers.remove(name);
        }
        for (name, value) in &self.0 {
            headers.append(name.clone(), value.clone());
        }
    }

    /// Their values, as secrets (every one, whatever its name: the user
    /// chose to send it).
    pub(super) fn secrets(&self) -> Vec<(String, String)> {
        let mut secrets = Vec::new();
        for (name, value) in &self.0 {
            if let Ok(text) = value.to_str() {
                push_credential(&mut secrets, name.as_str(), text, true);
            }
        }
        secrets
    }
}

/// Splits `NAME: VALUE` (as `--header` takes it).
pub fn split_header(text: &str) -> Result<(String, String), HeaderError> {
    match text.split_once(':') {
        Some((name, value)) => Ok((name.trim().to_owned(), value.trim().to_owned())),
        None => Err(HeaderError::NoColon {
            name: text
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect(),
        }),
    }
}

/// The credential values among a client's request headers, each with the
/// placeholder name it is masked with.
pub(super) fn in_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    let mut secrets = Vec::new();
    for (name, value) in headers {
        let name = name.as_str();
        if !is_credential(name) {
            continue;
        }
        if let Ok(text) = value.to_str() {
            push_credential(&mut secrets, name, text, false);
        }
    }
    secrets
}

fn is_credential(name: &str) -> bool {
    if name.starts_with("mcp-") || name == "last-event-id" {
        return false;
    }
    CREDENTIAL_HEADERS.contains(&name) || SECRET_WORDS.iter().any(|word| name.contains(word))
}

/// Adds a header value's secrets: the whole value, an `Authorization`
/// scheme's credentials (`Bearer TOKEN` → `TOKEN`), each cookie's value.
/// `always`: keep even a short value whole (the user named it).
fn push_credential(secrets: &mut Vec<(String, String)>, name: &str, value: &str, always: bool) {
    let placeholder = placeholder_name(name);
    let mut push = |text: &str| {
        let text = text.trim();
        if text.len() >= MIN_SECRET || (always && !text.is_empty()) {
            secrets.push((placeholder.clone(), text.to_owned()));
        }
    };
    push(value);
    if let Some((scheme, credentials)) = value.trim().split_once(' ') {
        push(credentials);
        // `Basic base64(id:secret)`: the secret, as it may travel elsewhere.
        if scheme.eq_ignore_ascii_case("basic")
            && let Ok(decoded) = base64::Engine::decode(
                &base64::engine::general_purpose::STANDARD,
                credentials.trim(),
            )
            && let Ok(decoded) = String::from_utf8(decoded)
            && let Some((_, secret)) = decoded.split_once(':')
        {
            push(secret);
        }
    }
    if name.eq_ignore_ascii_case("cookie") {
        for cookie in value.split(';') {
            if let Some((_, cookie_value)) = cookie.split_once('=') {
                push(cookie_value);
            }
        }
    }
}

/// `x-api-key` → `X_API_KEY`: a placeholder name (letters, digits, `_`,
/// starting with a letter).
fn placeholder_name(header: &str) -> String {
    let name = crate::redact::placeholder_name(header);
    if name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name
    } else {
        format!("HEADER_{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn credential_headers_and_their_parts_are_secrets() {
        let seen = in_headers(&headers(&[
            ("authorization", "Bearer sk-live-0123456789"),
            // client-id:client-secret-0123
            (
                "proxy-authorization",
                "Basic Y2xpZW50LWlkOmNsaWVudC1zZWNyZXQtMDEyMw==",
            ),
            ("cookie", "session=abcdef123456; theme=dark"),
            ("x-api-key", "key-9876543210"),
            ("x-auth-token", "tok-1234567890"),
            ("mcp-session-id", "0123456789abcdef"),
            ("content-type", "application/json"),
        ]));
        let values: Vec<&str> = seen.iter().map(|(_, v)| v.as_str()).collect();
        assert!(values.contains(&"Bearer sk-live-0123456789"));
        assert!(values.contains(&"sk-live-0123456789"));
        assert!(values.contains(&"client-secret-0123"), "{values:?}");
        assert!(values.contains(&"abcdef123456"));
        assert!(!values.contains(&"dark"), "too short to mask: {values:?}");
        assert!(values.contains(&"key-9876543210"));
        assert!(values.contains(&"tok-1234567890"));
        assert!(!values.iter().any(|v| v.contains("0123456789abcdef")));
        assert!(!values.contains(&"application/json"));
        let names: Vec<&str> = seen.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"X_API_KEY") && names.contains(&"AUTHORIZATION"));
    }

    #[test]
    fn upstream_headers_replace_the_clients_and_are_secrets() {
        let pairs = [split_header("X-Api-Key: k1").unwrap()];
        let upstream = UpstreamHeaders::parse(&pairs).unwrap();
        let mut sent = headers(&[("x-api-key", "the-clients-own-key")]);
        upstream.apply(&mut sent);
        assert_eq!(sent.get_all("x-api-key").iter().count(), 1);
        assert_eq!(sent["x-api-key"], "k1");
        assert!(sent["x-api-key"].is_sensitive());
        assert_eq!(
            upstream.secrets(),
            [("X_API_KEY".to_owned(), "k1".to_owned())]
        );
    }

    #[test]
    fn bad_headers_are_named_without_their_values() {
        let error = split_header("X-Api-Key=secret-value").unwrap_err();
        assert!(!error.to_string().contains("secret-value"), "{error}");
        let error = UpstreamHeaders::parse(&[("X Bad".into(), "v".into())]).unwrap_err();
        assert!(error.to_string().contains("X Bad"), "{error}");
        let error =
            UpstreamHeaders::parse(&[("X-Ok".into(), "line\nbreak-secret".into())]).unwrap_err();
        assert!(!error.to_string().contains("break-secret"), "{error}");
    }
}
