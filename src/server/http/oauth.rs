//! `replay --auth oauth`: the replay as an OAuth 2.1 protected resource
//! with its own authorization server on the same loopback address, so a
//! client's real OAuth code path (discovery, registration, authorization
//! with PKCE, token exchange, refresh) runs end to end offline.
//!
//! - `GET /.well-known/oauth-protected-resource[/PATH]` (RFC 9728): this
//!   endpoint as the resource, this address as its authorization server.
//! - `GET /.well-known/oauth-authorization-server` and
//!   `/.well-known/openid-configuration` (RFC 8414): the endpoints below,
//!   PKCE S256 only, dynamic registration and client ID metadata documents.
//! - `POST /register` (RFC 7591): any client is registered.
//! - `GET /authorize`: approves at once, redirecting to the client's
//!   `redirect_uri` with a code (and `state`, `iss`). A client ID that is a
//!   metadata document URL is accepted as it is: replay opens no outbound
//!   connection to fetch it.
//! - `POST /token`: the authorization-code grant (the PKCE verifier must
//!   match the challenge) and the refresh-token grant.
//! - The MCP endpoint answers 401 with `WWW-Authenticate: Bearer
//!   resource_metadata=…` to a request without a token this server issued
//!   (naming the `scope` the recorded server's 401 named), and 403
//!   `insufficient_scope` to a request the recorded server refused so
//!   until the client stepped up to more scope, when the token lacks it.
//!   Tokens carry the scope the client asked for.
//!
//! Everything lives in memory for the replay's lifetime. Codes and tokens
//! are random and never logged.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::reply::{self, Response};
use super::session::{fresh_id, lock};
use crate::cassette::RecordedAuth;

/// How long an access token is good for; the client refreshes after.
const ACCESS_TOKEN_SECONDS: u64 = 3600;
/// How long an authorization code may wait for its exchange.
const CODE_LIFETIME: Duration = Duration::from_secs(600);

/// The authorization server and the tokens it issued.
#[derive(Debug)]
pub(super) struct OAuth {
    /// `http://127.0.0.1:PORT`: the issuer, and the resource's origin.
    issuer: String,
    /// The MCP endpoint's path (`/mcp`).
    endpoint: String,
    /// What the recorded server asked of clients.
    recorded: RecordedAuth,
    state: Mutex<State>,
    counter: AtomicU64,
}

#[derive(Debug, Default)]
struct State {
    /// Codes waiting for their exchange.
    codes: HashMap<String, Grant>,
    /// Access tokens, with when they expire and the scope they carry.
    access: HashMap<String, (Instant, Option<String>)>,
    /// Refresh tokens, with the scope they carry.
    refresh: HashMap<String, Option<String>>,
}

/// What an authorization code stands for.
#[derive(Debug)]
struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    scope: Option<String>,
    issued: Instant,
}

impl OAuth {
    /// For a replay at `issuer` serving MCP at `endpoint`, challenging
    /// clients as `recorded`.
    pub(super) fn new(issuer: String, endpoint: String, recorded: RecordedAuth) -> Self {
        OAuth {
            issuer,
            endpoint,
            recorded,
            state: Mutex::default(),
            counter: AtomicU64::new(0),
        }
    }

    /// Whether `path` is one of the authorization server's.
    pub(super) fn serves(&self, path: &str) -> bool {
        path.starts_with("/.well-known/oauth-protected-resource")
            || path.starts_with("/.well-known/oauth-authorization-server")
            || path.starts_with("/.well-known/openid-configuration")
            || matches!(path, "/authorize" | "/token" | "/register")
    }

    /// Answers a request for one of its paths.
    pub(super) fn handle(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        body: &Bytes,
    ) -> Response {
        match (method, path) {
            (&Method::GET, p) if p.starts_with("/.well-known/oauth-protected-resource") => {
                json(StatusCode::OK, &self.resource_metadata())
            }
            (&Method::GET, p)
                if p.starts_with("/.well-known/oauth-authorization-server")
                    || p.starts_with("/.well-known/openid-configuration") =>
            {
                json(StatusCode::OK, &self.server_metadata())
            }
            (&Method::POST, "/register") => self.register(body),
            (&Method::GET, "/authorize") => self.authorize(query.unwrap_or_default()),
            (&Method::POST, "/token") => self.token(body),
            _ => reply::method_not_allowed(if matches!(path, "/token" | "/register") {
                "POST"
            } else {
                "GET"
            }),
        }
    }

    /// A request to the MCP endpoint needs a live access token from here.
    pub(super) fn check(&self, headers: &HeaderMap) -> Result<(), Response> {
        let Some(token) = bearer(headers) else {
            return Err(self.challenge(None));
        };
        let valid = lock(&self.state)
            .access
            .get(token)
            .is_some_and(|(expires, _)| *expires > Instant::now());
        if valid {
            Ok(())
        } else {
            Err(self.challenge(Some("invalid_token")))
        }
    }

    /// A request the recorded server refused with 403 `insufficient_scope`
    /// until the client stepped up gets the same, while its token (already
    /// [`check`](Self::check)ed) lacks that scope.
    pub(super) fn check_scope(
        &self,
        headers: &HeaderMap,
        messages: &[Value],
    ) -> Result<(), Response> {
        if self.recorded.step_up.is_empty() {
            return Ok(());
        }
        let granted = bearer(headers)
            .and_then(|token| lock(&self.state).access.get(token).map(|(_, s)| s.clone()))
            .flatten()
            .unwrap_or_default();
        let granted: Vec<&str> = granted.split_whitespace().collect();
        for message in messages {
            let needed = self
                .recorded
                .step_up
                .iter()
                .find(|rule| rule.applies_to(message));
            if let Some(rule) = needed
                && !rule.scope.split_whitespace().all(|s| granted.contains(&s))
            {
                return Err(self.forbidden(&rule.scope));
            }
        }
        Ok(())
    }

    /// 403 `insufficient_scope`, naming the scope to ask for.
    fn forbidden(&self, scope: &str) -> Response {
        let value = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{}\", error_description=\"Insufficient scope\"",
            self.resource_metadata_url()
        );
        challenged(
            StatusCode::FORBIDDEN,
            &json!({"error": "insufficient_scope", "error_description": "Insufficient scope"}),
            &value,
        )
    }

    /// 401 pointing at the protected-resource metadata.
    fn challenge(&self, error: Option<&str>) -> Response {
        let mut value = format!(
            "Bearer resource_metadata=\"{}\"",
            self.resource_metadata_url()
        );
        if let Some(error) = error {
            value.push_str(&format!(", error=\"{error}\""));
        }
        if let Some(scope) = &self.recorded.scope {
            value.push_str(&format!(", scope=\"{scope}\""));
        }
        challenged(
            StatusCode::UNAUTHORIZED,
            &json!({"error": error.unwrap_or("unauthorized"),
                    "error_description": "this replay requires an OAuth access token (replay --auth oauth)"}),
            &value,
        )
    }

    fn resource(&self) -> String {
        format!("{}{}", self.issuer, self.endpoint)
    }

    fn resource_metadata_url(&self) -> String {
        format!(
            "{}/.well-known/oauth-protected-resource{}",
            self.issuer, self.endpoint
        )
    }

    fn resource_metadata(&self) -> Value {
        let mut metadata = json!({
            "resource": self.resource(),
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "mcpcassette replay",
        });
        if !self.recorded.scopes_supported.is_empty() {
            metadata["scopes_supported"] = json!(self.recorded.scopes_supported);
        }
        metadata
    }

    /// Every scope the recording names, in the order first named.
    fn scopes(&self) -> Vec<&str> {
        let recorded = &self.recorded;
        let mut scopes: Vec<&str> = Vec::new();
        let named = recorded.scopes_supported.iter().map(String::as_str);
        let asked = recorded.scope.iter().flat_map(|s| s.split_whitespace());
        let stepped = recorded
            .step_up
            .iter()
            .flat_map(|s| s.scope.split_whitespace());
        for scope in named.chain(asked).chain(stepped) {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        scopes
    }

    fn server_metadata(&self) -> Value {
        let at = |path: &str| format!("{}{path}", self.issuer);
        let mut metadata = json!({
            "issuer": self.issuer,
            "authorization_endpoint": at("/authorize"),
            "token_endpoint": at("/token"),
            "registration_endpoint": at("/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "client_id_metadata_document_supported": true,
            "authorization_response_iss_parameter_supported": true,
        });
        let scopes = self.scopes();
        if !scopes.is_empty() {
            metadata["scopes_supported"] = json!(scopes);
        }
        metadata
    }

    /// A fresh random value (a code, a token, a client id).
    fn fresh(&self, prefix: &str) -> String {
        let count = self.counter.fetch_add(1, Ordering::Relaxed);
        format!("{prefix}{}", fresh_id(count))
    }

    /// Dynamic client registration: every client is welcome.
    fn register(&self, body: &Bytes) -> Response {
        let Ok(Value::Object(mut metadata)) = serde_json::from_slice::<Value>(body) else {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                "the body must be a JSON object",
            );
        };
        metadata.insert("client_id".into(), json!(self.fresh("client-")));
        metadata.insert("client_id_issued_at".into(), json!(unix_now()));
        let confidential = metadata
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
            .is_some_and(|method| method != "none");
        if confidential {
            metadata.insert("client_secret".into(), json!(self.fresh("secret-")));
            metadata.insert("client_secret_expires_at".into(), json!(0));
        }
        json(StatusCode::CREATED, &Value::Object(metadata))
    }

    /// The authorization endpoint, approving at once.
    fn authorize(&self, query: &str) -> Response {
        let params: HashMap<String, String> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let get = |name: &str| params.get(name).filter(|v| !v.is_empty());
        let Some(redirect_uri) = get("redirect_uri") else {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "redirect_uri is required",
            );
        };
        let refuse = |error: &str, description: &str| {
            redirect(
                redirect_uri,
                &[("error", error), ("error_description", description)],
                params.get("state"),
                &self.issuer,
            )
        };
        if get("response_type").map(String::as_str) != Some("code") {
            return refuse("unsupported_response_type", "only response_type=code");
        }
        let Some(client_id) = get("client_id") else {
            return refuse("invalid_request", "client_id is required");
        };
        let Some(challenge) = get("code_challenge") else {
            return refuse("invalid_request", "PKCE is required: code_challenge");
        };
        if get("code_challenge_method").map(String::as_str) != Some("S256") {
            return refuse("invalid_request", "code_challenge_method must be S256");
        }
        let code = self.fresh("code-");
        lock(&self.state).codes.insert(
            code.clone(),
            Grant {
                client_id: client_id.clone(),
                redirect_uri: redirect_uri.clone(),
                challenge: challenge.clone(),
                scope: params.get("scope").cloned(),
                issued: Instant::now(),
            },
        );
        redirect(
            redirect_uri,
            &[("code", &code)],
            params.get("state"),
            &self.issuer,
        )
    }

    /// The token endpoint.
    fn token(&self, body: &Bytes) -> Response {
        let params: HashMap<String, String> = form_urlencoded::parse(body).into_owned().collect();
        match params.get("grant_type").map(String::as_str) {
            Some("authorization_code") => self.exchange(&params),
            Some("refresh_token") => self.refresh(&params),
            _ => oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "authorization_code or refresh_token",
            ),
        }
    }

    fn exchange(&self, params: &HashMap<String, String>) -> Response {
        let grant = params
            .get("code")
            .and_then(|code| lock(&self.state).codes.remove(code));
        let Some(grant) = grant.filter(|g| g.issued.elapsed() < CODE_LIFETIME) else {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "unknown or expired code",
            );
        };
        if params
            .get("redirect_uri")
            .is_some_and(|uri| *uri != grant.redirect_uri)
        {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "redirect_uri differs from the authorization request's",
            );
        }
        if params
            .get("client_id")
            .is_some_and(|id| *id != grant.client_id)
        {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "the code was issued to another client",
            );
        }
        let verifier = params
            .get("code_verifier")
            .map(String::as_str)
            .unwrap_or_default();
        let derived = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        if derived != grant.challenge {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "the PKCE code_verifier does not match the code_challenge",
            );
        }
        self.issue(grant.scope)
    }

    fn refresh(&self, params: &HashMap<String, String>) -> Response {
        let scope = params
            .get("refresh_token")
            .and_then(|token| lock(&self.state).refresh.remove(token));
        match scope {
            Some(scope) => self.issue(scope),
            None => oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_grant",
                "unknown refresh_token",
            ),
        }
    }

    /// A new access token, and a refresh token unless the recorded
    /// server's authorization server issued none.
    fn issue(&self, scope: Option<String>) -> Response {
        let access = self.fresh("at-");
        let refresh = (self.recorded.refresh_tokens != Some(false)).then(|| self.fresh("rt-"));
        {
            let mut state = lock(&self.state);
            let expires = Instant::now() + Duration::from_secs(ACCESS_TOKEN_SECONDS);
            state
                .access
                .insert(access.clone(), (expires, scope.clone()));
            if let Some(refresh) = &refresh {
                state.refresh.insert(refresh.clone(), scope.clone());
            }
        }
        let mut answer = json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_TOKEN_SECONDS,
        });
        if let Some(refresh) = refresh {
            answer["refresh_token"] = json!(refresh);
        }
        if let Some(scope) = scope {
            answer["scope"] = json!(scope);
        }
        let mut response = json(StatusCode::OK, &answer);
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }
}

/// A JSON error answer with the `WWW-Authenticate` challenge `value`.
fn challenged(status: StatusCode, body: &Value, value: &str) -> Response {
    let mut response = reply::raw(status, Some("application/json"), &body.to_string());
    if let Ok(value) = HeaderValue::from_str(value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The token of `Authorization: Bearer TOKEN`.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

fn json(status: StatusCode, value: &Value) -> Response {
    reply::json(status, value.to_string().into_bytes())
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    json(
        status,
        &json!({"error": error, "error_description": description}),
    )
}

/// 302 to `uri` with `params`, `state` and `iss` added to its query.
fn redirect(uri: &str, params: &[(&str, &str)], state: Option<&String>, issuer: &str) -> Response {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in params {
        query.append_pair(name, value);
    }
    if let Some(state) = state {
        query.append_pair("state", state);
    }
    query.append_pair("iss", issuer);
    let separator = if uri.contains('?') { '&' } else { '?' };
    let location = format!("{uri}{separator}{}", query.finish());
    let mut response = reply::empty(StatusCode::FOUND);
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oauth() -> OAuth {
        OAuth::new(
            "http://127.0.0.1:9".into(),
            "/mcp".into(),
            RecordedAuth::default(),
        )
    }

    fn location(response: &Response) -> String {
        response.headers()[header::LOCATION]
            .to_str()
            .unwrap()
            .to_owned()
    }

    fn query_of(location: &str) -> HashMap<String, String> {
        let query = location.split_once('?').unwrap().1;
        form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect()
    }

    #[test]
    fn a_code_with_its_verifier_buys_a_token_that_opens_the_endpoint() {
        let oauth = oauth();
        let headers = HeaderMap::new();
        let refused = oauth.check(&headers).unwrap_err();
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        let challenge = refused.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap();
        assert!(
            challenge.contains("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"),
            "{challenge}"
        );

        let verifier = "a-verifier-of-forty-three-characters-or-more-000";
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        let query = format!(
            "response_type=code&client_id=c1&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb&code_challenge={challenge}&code_challenge_method=S256&state=xyz"
        );
        let redirected = oauth.authorize(&query);
        assert_eq!(redirected.status(), StatusCode::FOUND);
        let back = query_of(&location(&redirected));
        assert_eq!(back["state"], "xyz");
        assert_eq!(back["iss"], "http://127.0.0.1:9");

        let wrong = format!(
            "grant_type=authorization_code&code={}&code_verifier=wrong",
            back["code"]
        );
        assert_eq!(
            oauth.token(&Bytes::from(wrong)).status(),
            StatusCode::BAD_REQUEST
        );
        // A code is good once: the failed try used it up.
        let redirected = oauth.authorize(&query);
        let code = query_of(&location(&redirected))["code"].clone();
        let body = format!(
            "grant_type=authorization_code&code={code}&code_verifier={verifier}&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb&client_id=c1"
        );
        let issued = oauth.token(&Bytes::from(body));
        assert_eq!(issued.status(), StatusCode::OK);
        assert_eq!(issued.headers()[header::CACHE_CONTROL], "no-store");
    }

    #[test]
    fn authorization_needs_pkce_s256() {
        let oauth = oauth();
        let plain = oauth.authorize(
            "response_type=code&client_id=c&redirect_uri=http://127.0.0.1:5/cb&code_challenge=x&code_challenge_method=plain",
        );
        let back = query_of(&location(&plain));
        assert_eq!(back["error"], "invalid_request");
        let missing = oauth.authorize("response_type=code&client_id=c");
        assert_eq!(missing.status(), StatusCode::BAD_REQUEST);
    }
}
