//! The client's own OAuth flow through the recording proxy.
//!
//! A client that reaches an OAuth-protected upstream through the proxy
//! discovers, from the proxy, a protected resource whose URL is the
//! proxy's. If the upstream's metadata went through unchanged, the client
//! would either refuse it (its `resource` is not the URL it connected to)
//! or ask the authorization server for a token for the proxy's URL, which
//! a strict server refuses: the "proxied OAuth resource mismatch". So the
//! proxy stands in for the authorization server, and maps one resource
//! onto the other:
//!
//! - `WWW-Authenticate: … resource_metadata="URL"` on the upstream's 401
//!   and 403 answers points at the proxy's own well-known path; the real
//!   URL is remembered.
//! - `GET /.well-known/oauth-protected-resource…` (RFC 9728) fetches the
//!   upstream's metadata, names the proxy's URL as the `resource`, and
//!   lists each authorization server as `{proxy}/_mcpcassette/as/N`.
//! - Authorization-server metadata (RFC 8414 and OpenID discovery, in
//!   each of the forms a client tries for an issuer with a path) is the
//!   real server's, with the proxy's issuer and every `*_endpoint` at
//!   `{proxy}/_mcpcassette/as/N/KEY`.
//! - The authorization endpoint redirects the browser to the real one;
//!   every other endpoint (token, registration, revocation …) is
//!   forwarded. In both, the `resource` parameter is mapped back to the
//!   upstream's, so the token is the upstream's: the client's
//!   `Authorization` then goes through to it unchanged.
//! - A client that registers through the stand-in (dynamic registration)
//!   has its redirect URIs registered as the stand-in's
//!   `{proxy}/_mcpcassette/as/N/callback/K`: the authorization response
//!   comes back through the proxy, which sends the browser on to the
//!   client's own URI with `iss` (RFC 9207) naming the stand-in, the
//!   issuer the client discovered. The client sees its own URIs in the
//!   registration's answer, and they are mapped in the authorization and
//!   token requests.
//!
//! Nothing here is recorded. Every credential that passes (codes, PKCE
//! verifiers, client secrets, refresh and access tokens, in requests and
//! in answers) becomes a secret of the recording at once, before the
//! client can use it, so that no echo of one reaches the cassette, the
//! journal or a log.
//!
//! A client registered beforehand (or by a client ID metadata document)
//! keeps its own redirect URIs: an `iss` on the authorization response
//! then names the real server, and a client that checks it refuses it.

use std::collections::HashMap;
use std::sync::Mutex;

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use serde_json::Value;

use super::endpoint::{Endpoint, strip_hop_by_hop};
use super::reply::{ProxyBody, text_response};
use crate::client::HttpClient;

/// The prefix of every path the stand-in serves for authorization server N.
const AS_PREFIX: &str = "/_mcpcassette/as/";
/// The protected-resource metadata's well-known prefix (RFC 9728).
const PRM: &str = "/.well-known/oauth-protected-resource";
/// The authorization-server metadata's well-known names.
const AS_WELL_KNOWN: [&str; 2] = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
];

/// Form and JSON fields that carry credentials, in requests and answers.
const SECRET_FIELDS: [&str; 13] = [
    "code",
    "code_verifier",
    "refresh_token",
    "access_token",
    "id_token",
    "client_secret",
    "client_assertion",
    "assertion",
    "token",
    "password",
    "subject_token",
    "device_code",
    "registration_access_token",
];

/// The placeholder a credential of the OAuth flow is masked with.
const PLACEHOLDER: &str = "OAUTH_CREDENTIAL";

/// Shorter values are not masked: they would mask ordinary text too.
const MIN_SECRET: usize = 8;

/// The stand-in, shared by every connection of the proxy.
#[derive(Debug, Default)]
pub(super) struct StandIn {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The real metadata URL behind each well-known path the proxy named
    /// in a `WWW-Authenticate` header.
    metadata: HashMap<String, String>,
    /// Resource identifiers: the proxy's, and the upstream's it stands for.
    resources: Vec<(String, String)>,
    /// The real authorization servers, by the N of their stand-in path.
    servers: Vec<RealServer>,
    /// The client redirect URIs registered as stand-in callbacks, by K.
    callbacks: Vec<String>,
}

#[derive(Debug)]
struct RealServer {
    /// The issuer, without a trailing `/`.
    issuer: String,
    /// Its endpoints, by metadata key (`token_endpoint`).
    endpoints: HashMap<String, String>,
}

/// What a request to the stand-in is for.
#[derive(Debug, PartialEq, Eq)]
enum Route {
    /// Protected-resource metadata, at this path.
    ResourceMetadata,
    /// Server N's metadata, under one well-known name, inserted before
    /// the issuer's path (`true`, RFC 8414) or appended to it.
    ServerMetadata {
        server: usize,
        name: &'static str,
        inserted: bool,
    },
    /// Server N's endpoint under this metadata key.
    Endpoint { server: usize, key: String },
    /// The stand-in's redirect URI K for server N's authorization responses.
    Callback { server: usize, callback: usize },
}

/// What the stand-in learnt from one request: credentials to mask from now
/// on, and what the protected-resource metadata declares.
#[derive(Debug, Default)]
pub(super) struct Learnt {
    /// `(placeholder, value)` pairs, as the redactor takes them.
    pub(super) secrets: Vec<(String, String)>,
    /// `scopes_supported` of the upstream's protected-resource metadata.
    pub(super) scopes_supported: Option<Vec<String>>,
    /// Whether a token answer carried a refresh token (`None`: no token).
    pub(super) refresh_token: Option<bool>,
}

impl StandIn {
    /// Whether the stand-in answers a request for `path`.
    pub(super) fn serves(path: &str) -> bool {
        route(path).is_some()
    }

    /// Points `resource_metadata` in an upstream's `WWW-Authenticate`
    /// header at the proxy (at `origin`), remembering the real URL.
    pub(super) fn rewrite_challenge(&self, headers: &mut HeaderMap, origin: &str) {
        let Some(value) = headers
            .get(header::WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
        else {
            return;
        };
        let Some(real) = auth_param(value, "resource_metadata") else {
            return;
        };
        let path = {
            let mut state = lock(&self.state);
            let known = state.metadata.iter().find(|(_, url)| **url == real);
            let path = match (known, real.parse::<Uri>()) {
                (Some((path, _)), _) => path.clone(),
                (None, Ok(uri)) if uri.path().starts_with(PRM) => uri.path().to_owned(),
                (None, _) => format!("{PRM}/_mcpcassette/{}", state.metadata.len()),
            };
            state.metadata.insert(path.clone(), real.clone());
            path
        };
        let rewritten = value.replacen(&real, &format!("{origin}{path}"), 1);
        if let Ok(rewritten) = HeaderValue::from_str(&rewritten) {
            headers.insert(header::WWW_AUTHENTICATE, rewritten);
        }
    }

    /// Answers a request for one of the stand-in's paths (see
    /// [`serves`](Self::serves)), reaching the real servers through
    /// `client`. `origin` is the proxy's as the client addressed it.
    pub(super) async fn handle(
        &self,
        client: &HttpClient,
        upstream: &Endpoint,
        request: Request<Bytes>,
        origin: &str,
    ) -> (Response<ProxyBody>, Learnt) {
        let mut learnt = Learnt::default();
        let path = request.uri().path().to_owned();
        let answer = match route(&path) {
            Some(Route::ResourceMetadata) => {
                self.resource_metadata(client, upstream, &path, origin, &mut learnt)
                    .await
            }
            Some(Route::ServerMetadata {
                server,
                name,
                inserted,
            }) => {
                self.server_metadata(client, server, name, inserted, origin)
                    .await
            }
            Some(Route::Endpoint { server, key }) => {
                self.endpoint(client, server, &key, request, origin, &mut learnt)
                    .await
            }
            Some(Route::Callback { server, callback }) => {
                self.callback(server, callback, request.uri().query(), origin, &mut learnt)
            }
            None => Err(Refusal::new(StatusCode::NOT_FOUND, "no such path")),
        };
        let response = answer.unwrap_or_else(|refusal| {
            text_response(
                refusal.status,
                format!("mcpcassette (OAuth stand-in): {}\n", refusal.reason),
            )
        });
        (response, learnt)
    }

    /// The upstream's protected-resource metadata, naming the proxy as the
    /// resource and the stand-ins as its authorization servers.
    async fn resource_metadata(
        &self,
        client: &HttpClient,
        upstream: &Endpoint,
        path: &str,
        origin: &str,
        learnt: &mut Learnt,
    ) -> Result<Response<ProxyBody>, Refusal> {
        let remembered = lock(&self.state).metadata.get(path).cloned();
        let url = match remembered {
            Some(url) => url,
            None => upstream
                .target(&path.parse().unwrap_or_default())
                .to_string(),
        };
        let (status, mut metadata) = fetch_json(client, &url).await?;
        if !status.is_success() {
            return Ok(json_response(status, &metadata));
        }
        let upstream_origin = origin_of(&upstream.target(&Uri::from_static("/")).to_string());
        if let Some(real) = metadata.get("resource").and_then(Value::as_str) {
            let ours = match real.strip_prefix(&upstream_origin) {
                Some(rest) => format!("{origin}{rest}"),
                None => format!("{origin}{}", upstream.path()),
            };
            let mut state = lock(&self.state);
            if !state.resources.iter().any(|(known, _)| *known == ours) {
                state.resources.push((ours.clone(), real.to_owned()));
            }
            metadata["resource"] = Value::String(ours);
        }
        if let Some(Value::Array(servers)) = metadata.get_mut("authorization_servers") {
            let mut state = lock(&self.state);
            for server in servers.iter_mut() {
                let Some(issuer) = server.as_str() else {
                    continue;
                };
                let issuer = issuer.trim_end_matches('/').to_owned();
                let index = match state.servers.iter().position(|s| s.issuer == issuer) {
                    Some(index) => index,
                    None => {
                        state.servers.push(RealServer {
                            issuer,
                            endpoints: HashMap::new(),
                        });
                        state.servers.len() - 1
                    }
                };
                *server = Value::String(format!("{origin}{AS_PREFIX}{index}"));
            }
        }
        learnt.scopes_supported = metadata
            .get("scopes_supported")
            .and_then(Value::as_array)
            .map(|scopes| {
                scopes
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            });
        Ok(json_response(status, &metadata))
    }

    /// Server N's metadata, with the stand-in as issuer and endpoints.
    async fn server_metadata(
        &self,
        client: &HttpClient,
        server: usize,
        name: &str,
        inserted: bool,
        origin: &str,
    ) -> Result<Response<ProxyBody>, Refusal> {
        let issuer = self.issuer(server)?;
        let url = if inserted {
            let (issuer_origin, issuer_path) = split_origin(&issuer);
            format!("{issuer_origin}{name}{issuer_path}")
        } else {
            format!("{issuer}{name}")
        };
        let (status, mut metadata) = fetch_json(client, &url).await?;
        if !status.is_success() {
            return Ok(json_response(status, &metadata));
        }
        let ours = format!("{origin}{AS_PREFIX}{server}");
        let mut endpoints = HashMap::new();
        if let Value::Object(fields) = &mut metadata {
            for (key, value) in fields.iter_mut() {
                if let (true, Some(real)) = (key.ends_with("_endpoint"), value.as_str()) {
                    endpoints.insert(key.clone(), real.to_owned());
                    *value = Value::String(format!("{ours}/{key}"));
                }
            }
            fields.insert("issuer".into(), Value::String(ours));
        }
        if let Some(known) = lock(&self.state).servers.get_mut(server) {
            known.endpoints.extend(endpoints);
        }
        Ok(json_response(status, &metadata))
    }

    /// One of server N's endpoints: a redirect to the real authorization
    /// endpoint, or the request forwarded to any other.
    async fn endpoint(
        &self,
        client: &HttpClient,
        server: usize,
        key: &str,
        request: Request<Bytes>,
        origin: &str,
        learnt: &mut Learnt,
    ) -> Result<Response<ProxyBody>, Refusal> {
        let callbacks = format!("{origin}{AS_PREFIX}{server}/callback/");
        let real = lock(&self.state)
            .servers
            .get(server)
            .and_then(|known| known.endpoints.get(key).cloned())
            .ok_or_else(|| {
                Refusal::new(
                    StatusCode::NOT_FOUND,
                    "no such endpoint: the client asked before reading the authorization server's metadata",
                )
            })?;
        check_scheme(&real)?;
        let (mut parts, body) = request.into_parts();
        if key == "authorization_endpoint" {
            let query = parts
                .uri
                .query()
                .map(|query| self.map_form(query.as_bytes(), &callbacks, learnt));
            let location = match query {
                Some(query) => join_query(&real, &query),
                None => real,
            };
            let mut response = text_response(StatusCode::FOUND, String::new());
            let location = HeaderValue::from_str(&location).map_err(|_| {
                Refusal::new(StatusCode::BAD_GATEWAY, "an unusable authorization URL")
            })?;
            response.headers_mut().insert(header::LOCATION, location);
            return Ok(response);
        }
        let is_form = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/x-www-form-urlencoded"));
        let registering = key == "registration_endpoint" && parts.method == Method::POST;
        let body = if is_form {
            Bytes::from(self.map_form(&body, &callbacks, learnt))
        } else {
            match serde_json::from_slice::<Value>(&body) {
                Ok(mut sent) => {
                    secrets_in_json(&sent, &mut learnt.secrets);
                    if registering {
                        self.register_callbacks(&mut sent, &callbacks);
                        Bytes::from(sent.to_string())
                    } else {
                        body
                    }
                }
                Err(_) => body,
            }
        };
        let target: Uri = match parts.uri.query() {
            Some(query) => join_query(&real, query),
            None => real,
        }
        .parse()
        .map_err(|_| Refusal::new(StatusCode::BAD_GATEWAY, "an unusable endpoint URL"))?;
        strip_hop_by_hop(&mut parts.headers);
        parts.headers.remove(header::HOST);
        parts.headers.remove(header::CONTENT_LENGTH);
        parts.headers.remove(header::ACCEPT_ENCODING);
        parts.uri = target;
        let forwarded = Request::from_parts(parts, Full::new(body));
        let response = client.request(forwarded).await.map_err(|e| {
            Refusal::new(
                StatusCode::BAD_GATEWAY,
                &format!(
                    "cannot reach the authorization server: {}",
                    crate::error_chain::chain(&e)
                ),
            )
        })?;
        let (mut parts, body) = response.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|e| {
                Refusal::new(
                    StatusCode::BAD_GATEWAY,
                    &format!("the authorization server's answer broke off: {e}"),
                )
            })?
            .to_bytes();
        let mut body = body;
        if let Ok(mut answer) = serde_json::from_slice::<Value>(&body) {
            secrets_in_json(&answer, &mut learnt.secrets);
            if parts.status.is_success() && answer.get("access_token").is_some() {
                learnt.refresh_token = Some(answer.get("refresh_token").is_some());
            }
            if registering && self.unmap_callbacks(&mut answer, &callbacks) {
                body = Bytes::from(answer.to_string());
            }
        }
        strip_hop_by_hop(&mut parts.headers);
        parts.headers.remove(header::CONTENT_LENGTH);
        Ok(Response::from_parts(parts, boxed(body)))
    }

    /// An authorization response coming back through the stand-in: on to
    /// the client's own redirect URI, with `iss` naming the stand-in.
    fn callback(
        &self,
        server: usize,
        callback: usize,
        query: Option<&str>,
        origin: &str,
        learnt: &mut Learnt,
    ) -> Result<Response<ProxyBody>, Refusal> {
        let target = lock(&self.state)
            .callbacks
            .get(callback)
            .cloned()
            .ok_or_else(|| Refusal::new(StatusCode::NOT_FOUND, "no such callback"))?;
        let issuer = format!("{origin}{AS_PREFIX}{server}");
        let mut params = form_urlencoded::Serializer::new(String::new());
        for (name, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            match name.as_ref() {
                "iss" => params.append_pair("iss", &issuer),
                "code" => {
                    push_secret(&mut learnt.secrets, &value);
                    params.append_pair(&name, &value)
                }
                _ => params.append_pair(&name, &value),
            };
        }
        let location = join_query(&target, &params.finish());
        let location = HeaderValue::from_str(&location)
            .map_err(|_| Refusal::new(StatusCode::BAD_REQUEST, "an unusable redirect URI"))?;
        let mut response = text_response(StatusCode::FOUND, String::new());
        response.headers_mut().insert(header::LOCATION, location);
        Ok(response)
    }

    /// A registration's redirect URIs become stand-in callbacks (under
    /// `callbacks`, the stand-in's prefix for them).
    fn register_callbacks(&self, registration: &mut Value, callbacks: &str) {
        let Some(Value::Array(uris)) = registration.get_mut("redirect_uris") else {
            return;
        };
        let mut state = lock(&self.state);
        for uri in uris.iter_mut() {
            let Some(original) = uri.as_str() else {
                continue;
            };
            let index = match state.callbacks.iter().position(|known| known == original) {
                Some(index) => index,
                None => {
                    state.callbacks.push(original.to_owned());
                    state.callbacks.len() - 1
                }
            };
            *uri = Value::String(format!("{callbacks}{index}"));
        }
    }

    /// The client's own redirect URIs back in a registration's answer;
    /// true if any was changed.
    fn unmap_callbacks(&self, answer: &mut Value, callbacks: &str) -> bool {
        let Some(Value::Array(uris)) = answer.get_mut("redirect_uris") else {
            return false;
        };
        let mut changed = false;
        for uri in uris.iter_mut() {
            if let Some(original) = uri
                .as_str()
                .and_then(|u| self.original_callback(u, callbacks))
            {
                *uri = Value::String(original);
                changed = true;
            }
        }
        changed
    }

    /// The client's redirect URI behind a stand-in callback URL.
    fn original_callback(&self, uri: &str, callbacks: &str) -> Option<String> {
        let index: usize = uri.strip_prefix(callbacks)?.parse().ok()?;
        lock(&self.state).callbacks.get(index).cloned()
    }

    /// Server N's issuer.
    fn issuer(&self, server: usize) -> Result<String, Refusal> {
        let issuer = lock(&self.state)
            .servers
            .get(server)
            .map(|known| known.issuer.clone())
            .ok_or_else(|| {
                Refusal::new(
                    StatusCode::NOT_FOUND,
                    "no such authorization server: the client asked before reading the protected-resource metadata",
                )
            })?;
        check_scheme(&issuer)?;
        Ok(issuer)
    }

    /// A form (or query) with its credentials learnt, its `resource`
    /// mapped from the proxy's to the upstream's, and a `redirect_uri`
    /// registered as a stand-in callback (under `callbacks`) mapped to it.
    fn map_form(&self, form: &[u8], callbacks: &str, learnt: &mut Learnt) -> String {
        let state = lock(&self.state);
        let mut mapped = form_urlencoded::Serializer::new(String::new());
        for (name, value) in form_urlencoded::parse(form) {
            if SECRET_FIELDS.contains(&name.as_ref()) {
                push_secret(&mut learnt.secrets, &value);
            }
            let value = match name.as_ref() {
                "resource" => map_resource(&state.resources, &value),
                "redirect_uri" => match state.callbacks.iter().position(|known| *known == value) {
                    Some(index) => format!("{callbacks}{index}"),
                    None => value.into_owned(),
                },
                _ => value.into_owned(),
            };
            mapped.append_pair(&name, &value);
        }
        mapped.finish()
    }
}

/// Why the stand-in cannot answer: an HTTP status and a sentence.
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    reason: String,
}

impl Refusal {
    fn new(status: StatusCode, reason: &str) -> Self {
        Refusal {
            status,
            reason: reason.to_owned(),
        }
    }
}

/// What `path` asks the stand-in for, if anything.
fn route(path: &str) -> Option<Route> {
    if path.starts_with(PRM) {
        return Some(Route::ResourceMetadata);
    }
    for name in AS_WELL_KNOWN {
        if let Some(rest) = path.strip_prefix(name)
            && let Ok(server) = rest.strip_prefix(AS_PREFIX)?.parse()
        {
            return Some(Route::ServerMetadata {
                server,
                name,
                inserted: true,
            });
        }
    }
    let rest = path.strip_prefix(AS_PREFIX)?;
    let (index, key) = rest.split_once('/')?;
    let server = index.parse().ok()?;
    if let Some(callback) = key.strip_prefix("callback/") {
        return Some(Route::Callback {
            server,
            callback: callback.parse().ok()?,
        });
    }
    let key = format!("/{key}");
    match AS_WELL_KNOWN.iter().find(|name| **name == key) {
        Some(name) => Some(Route::ServerMetadata {
            server,
            name,
            inserted: false,
        }),
        None if !key[1..].contains('/') && !key[1..].is_empty() => Some(Route::Endpoint {
            server,
            key: key[1..].to_owned(),
        }),
        None => None,
    }
}

/// The upstream's resource for the proxy's `resource` (unchanged when it
/// is not one the proxy named).
fn map_resource(resources: &[(String, String)], resource: &str) -> String {
    let trimmed = resource.trim_end_matches('/');
    resources
        .iter()
        .find(|(ours, _)| ours.trim_end_matches('/') == trimmed)
        .map(|(_, real)| real.clone())
        .unwrap_or_else(|| resource.to_owned())
}

/// The value of `name="…"` (or `name=token`) in a `WWW-Authenticate` header.
pub(super) fn auth_param(header: &str, name: &str) -> Option<String> {
    let mut rest = header;
    while let Some(at) = rest.find(name) {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + name.len()..];
        rest = after;
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let Some(value) = after.trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start();
        return Some(match value.strip_prefix('"') {
            Some(quoted) => quoted.split('"').next().unwrap_or_default().to_owned(),
            None => value
                .split([',', ' '])
                .next()
                .unwrap_or_default()
                .to_owned(),
        });
    }
    None
}

/// An https URL needs the `tls` feature: say so rather than fail obscurely.
fn check_scheme(url: &str) -> Result<(), Refusal> {
    if url.starts_with("https://") && !cfg!(feature = "tls") {
        return Err(Refusal::new(
            StatusCode::BAD_GATEWAY,
            "the authorization server is https://, and this mcpcassette was built without the `tls` feature",
        ));
    }
    Ok(())
}

/// GETs `url` and reads its answer as JSON.
async fn fetch_json(client: &HttpClient, url: &str) -> Result<(StatusCode, Value), Refusal> {
    check_scheme(url)?;
    let uri: Uri = url
        .parse()
        .map_err(|_| Refusal::new(StatusCode::BAD_GATEWAY, "an unusable metadata URL"))?;
    let request = Request::builder()
        .method(Method::GET)
        .uri(uri)
        .header(header::ACCEPT, "application/json")
        .body(Full::new(Bytes::new()))
        .expect("a GET without headers of the client's");
    let unreachable = |reason: String| {
        Refusal::new(
            StatusCode::BAD_GATEWAY,
            &format!(
                "cannot read the metadata at {}: {reason}",
                super::endpoint::mask_url(url)
            ),
        )
    };
    let response = client
        .request(request)
        .await
        .map_err(|e| unreachable(crate::error_chain::chain(&e)))?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| unreachable(e.to_string()))?
        .to_bytes();
    let value =
        serde_json::from_slice(&body).map_err(|e| unreachable(format!("not JSON ({e})")))?;
    Ok((status, value))
}

/// Credentials among a JSON object's fields.
fn secrets_in_json(value: &Value, secrets: &mut Vec<(String, String)>) {
    if let Value::Object(fields) = value {
        for name in SECRET_FIELDS {
            if let Some(Value::String(secret)) = fields.get(name) {
                push_secret(secrets, secret);
            }
        }
    }
}

fn push_secret(secrets: &mut Vec<(String, String)>, value: &str) {
    if value.len() >= MIN_SECRET {
        secrets.push((PLACEHOLDER.to_owned(), value.to_owned()));
    }
}

/// `url` with `query` added to its own.
fn join_query(url: &str, query: &str) -> String {
    if query.is_empty() {
        return url.to_owned();
    }
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{query}")
}

/// `scheme://authority` of a URL.
fn origin_of(url: &str) -> String {
    split_origin(url).0.to_owned()
}

/// A URL split into `scheme://authority` and the rest (its path, without
/// a trailing `/`).
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |at| at + 3);
    let end = url[after_scheme..]
        .find('/')
        .map_or(url.len(), |at| after_scheme + at);
    (&url[..end], url[end..].trim_end_matches('/'))
}

fn json_response(status: StatusCode, value: &Value) -> Response<ProxyBody> {
    let mut response = Response::new(boxed(Bytes::from(value.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn boxed(bytes: Bytes) -> ProxyBody {
    Full::new(bytes)
        .map_err(|never| match never {})
        .boxed_unsync()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_every_form_a_client_tries() {
        assert_eq!(
            route("/.well-known/oauth-protected-resource/mcp"),
            Some(Route::ResourceMetadata)
        );
        assert_eq!(
            route("/.well-known/oauth-authorization-server/_mcpcassette/as/0"),
            Some(Route::ServerMetadata {
                server: 0,
                name: AS_WELL_KNOWN[0],
                inserted: true
            })
        );
        assert_eq!(
            route("/.well-known/openid-configuration/_mcpcassette/as/2"),
            Some(Route::ServerMetadata {
                server: 2,
                name: AS_WELL_KNOWN[1],
                inserted: true
            })
        );
        assert_eq!(
            route("/_mcpcassette/as/1/.well-known/openid-configuration"),
            Some(Route::ServerMetadata {
                server: 1,
                name: AS_WELL_KNOWN[1],
                inserted: false
            })
        );
        assert_eq!(
            route("/_mcpcassette/as/0/token_endpoint"),
            Some(Route::Endpoint {
                server: 0,
                key: "token_endpoint".into()
            })
        );
        assert_eq!(
            route("/_mcpcassette/as/1/callback/3"),
            Some(Route::Callback {
                server: 1,
                callback: 3
            })
        );
        assert_eq!(route("/.well-known/oauth-authorization-server"), None);
        assert_eq!(route("/_mcpcassette/as/x/token_endpoint"), None);
        assert_eq!(route("/_mcpcassette/as/0/a/b"), None);
        assert_eq!(route("/mcp"), None);
    }

    #[test]
    fn reads_auth_parameters_quoted_or_not() {
        let header = r#"Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="http://h:1/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(
            auth_param(header, "scope").as_deref(),
            Some("mcp:tools mcp:admin")
        );
        assert_eq!(
            auth_param(header, "error").as_deref(),
            Some("insufficient_scope")
        );
        assert_eq!(
            auth_param(header, "resource_metadata").as_deref(),
            Some("http://h:1/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            auth_param("Bearer realm=x, error=invalid_token", "error").as_deref(),
            Some("invalid_token")
        );
        assert_eq!(auth_param("Bearer myscope=\"a\"", "scope"), None);
    }

    #[test]
    fn challenges_point_at_the_proxy_and_remember_the_real_metadata() {
        let stand_in = StandIn::default();
        let mut headers = HeaderMap::new();
        headers.insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(
                r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp""#,
            ),
        );
        stand_in.rewrite_challenge(&mut headers, "http://127.0.0.1:2");
        assert_eq!(
            headers[header::WWW_AUTHENTICATE],
            r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:2/.well-known/oauth-protected-resource/mcp""#
        );
        assert_eq!(
            lock(&stand_in.state).metadata["/.well-known/oauth-protected-resource/mcp"],
            "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp"
        );
    }

    #[test]
    fn forms_map_the_resource_and_yield_their_credentials() {
        let stand_in = StandIn::default();
        lock(&stand_in.state).resources.push((
            "http://127.0.0.1:2/mcp".into(),
            "http://127.0.0.1:1/mcp".into(),
        ));
        let mut learnt = Learnt::default();
        let form = stand_in.map_form(
            b"grant_type=authorization_code&code=code-0123456789&code_verifier=verifier-0123456789&resource=http%3A%2F%2F127.0.0.1%3A2%2Fmcp&client_secret=s",
            "http://127.0.0.1:2/_mcpcassette/as/0/callback/",
            &mut learnt,
        );
        assert!(
            form.contains("resource=http%3A%2F%2F127.0.0.1%3A1%2Fmcp"),
            "{form}"
        );
        assert!(form.contains("code=code-0123456789"), "{form}");
        let secrets: Vec<&str> = learnt.secrets.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(secrets, ["code-0123456789", "verifier-0123456789"]);
    }

    #[test]
    fn registered_redirects_come_back_through_the_stand_in_with_its_issuer() {
        let stand_in = StandIn::default();
        let callbacks = "http://127.0.0.1:2/_mcpcassette/as/0/callback/";
        let mut registration = serde_json::json!({"redirect_uris": ["http://127.0.0.1:9/cb"]});
        stand_in.register_callbacks(&mut registration, callbacks);
        assert_eq!(registration["redirect_uris"][0], format!("{callbacks}0"));
        let mut answer = registration.clone();
        assert!(stand_in.unmap_callbacks(&mut answer, callbacks));
        assert_eq!(answer["redirect_uris"][0], "http://127.0.0.1:9/cb");
        let mut learnt = Learnt::default();
        let query = stand_in.map_form(
            b"redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb&state=s",
            callbacks,
            &mut learnt,
        );
        assert!(
            query.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A2%2F_mcpcassette"),
            "{query}"
        );
        let back = stand_in
            .callback(
                0,
                0,
                Some("code=code-0123456789&state=s&iss=http%3A%2F%2Freal"),
                "http://127.0.0.1:2",
                &mut learnt,
            )
            .unwrap();
        assert_eq!(
            back.headers()[header::LOCATION],
            "http://127.0.0.1:9/cb?code=code-0123456789&state=s&iss=http%3A%2F%2F127.0.0.1%3A2%2F_mcpcassette%2Fas%2F0"
        );
        assert_eq!(learnt.secrets.len(), 1, "the code is a secret");
    }

    #[test]
    fn splits_origins_and_paths() {
        assert_eq!(
            split_origin("http://h:1/tenant/"),
            ("http://h:1", "/tenant")
        );
        assert_eq!(split_origin("http://h:1"), ("http://h:1", ""));
        assert_eq!(join_query("http://h/a?x=1", "y=2"), "http://h/a?x=1&y=2");
    }
}
