//! One proxied request: record what the client sent, forward it, and hand
//! back the upstream's answer as it streams in.

use std::collections::HashSet;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use bytes::Bytes;
use http::header::{self, HeaderMap};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;

use super::super::Observer;
use super::credentials::{self, UpstreamHeaders};
use super::endpoint::{Endpoint, strip_hop_by_hop};
use super::oauth::{self, Learnt, StandIn};
use super::reply::{ProxyBody, text_response};
use super::tap::{Opened, Tap};
use super::tee::{Announcement, Observing, Reading, SseParser, Tee, TeeBody};
use crate::cassette::{Direction, StepUp};
use crate::error_chain::chain;
use crate::wire::situation::{self, SessionLookup, header_text};

/// The client that forwards requests to the upstream.
type UpstreamClient = crate::client::HttpClient;

/// The session header of Streamable HTTP.
const SESSION: &str = situation::SESSION_ID;

/// The reverse proxy, shared by every connection.
#[derive(Debug)]
pub(super) struct Proxy {
    upstream: Endpoint,
    /// Credentials the recorder adds to every upstream request.
    upstream_headers: UpstreamHeaders,
    /// Credential values seen in client requests so far (in memory only).
    credentials: Mutex<HashSet<String>>,
    /// Stands in for the upstream's authorization servers (see [`oauth`]).
    stand_in: StandIn,
    client: UpstreamClient,
    tap: Tap,
    /// Sees every MCP message that passes.
    observing: Observing,
    /// Where the proxy listens, for URLs that must point at it.
    listen: SocketAddr,
    seen_get: AtomicBool,
    seen_delete: AtomicBool,
    /// The sessions the upstream issued and has not ended, to tell each
    /// request's situation as replay will.
    sessions: Mutex<Sessions>,
    /// How many requests the upstream answered, and how many it never did.
    pub(super) tally: Tally,
}

/// Upstream answers and failures, so that a recording of nothing but
/// failures (the upstream was down) is not mistaken for a good one.
#[derive(Debug, Default)]
pub(super) struct Tally {
    answered: std::sync::atomic::AtomicUsize,
    failed: std::sync::atomic::AtomicUsize,
}

impl Tally {
    /// Requests the upstream answered (any status).
    pub(super) fn answered(&self) -> usize {
        self.answered.load(Ordering::Relaxed)
    }

    /// Requests the upstream never answered (502 from the proxy).
    pub(super) fn failed(&self) -> usize {
        self.failed.load(Ordering::Relaxed)
    }
}

/// The upstream's sessions, as seen passing by.
#[derive(Debug, Default)]
struct Sessions {
    /// Issued (`Mcp-Session-Id` on an answer) and not ended (a DELETE
    /// naming it answered 2xx).
    live: HashSet<String>,
    /// Whether the upstream issued any session so far.
    issued_any: bool,
}

/// What the client sent, as far as the recording cares.
struct Sent {
    method: Method,
    /// Sent to the endpoint (not, say, to an OAuth endpoint beside it).
    on_endpoint: bool,
    /// Sent to the endpoint or to the announced HTTP+SSE POST endpoint:
    /// MCP traffic, which is recorded. Nothing else is.
    is_mcp: bool,
    had_session: Option<String>,
    /// A GET or DELETE in the ordinary situation (a live session where
    /// the upstream hands them out, from loopback): only those stand for
    /// how the endpoint answers them.
    ordinary: bool,
    opened: Opened,
    started: Instant,
    /// `http://host:port` as the client reached the proxy.
    origin: String,
    /// The body, read again only if the upstream asks for more scope.
    body: Bytes,
}

impl Proxy {
    /// A proxy to `upstream` through `client`, listening on `listen`,
    /// recording into `tap`, showing every MCP message to `observer`.
    pub(super) fn new(
        upstream: Endpoint,
        upstream_headers: UpstreamHeaders,
        client: UpstreamClient,
        tap: Tap,
        listen: SocketAddr,
        observer: Option<Arc<dyn Observer>>,
    ) -> Self {
        Proxy {
            upstream,
            upstream_headers,
            credentials: Mutex::default(),
            stand_in: StandIn::default(),
            client,
            tap,
            observing: Observing(observer),
            listen,
            seen_get: AtomicBool::new(false),
            seen_delete: AtomicBool::new(false),
            sessions: Mutex::new(Sessions::default()),
            tally: Tally::default(),
        }
    }

    /// Handles one request. Never fails: problems become HTTP answers.
    pub(super) async fn handle(
        self: Arc<Self>,
        request: Request<Incoming>,
    ) -> Result<Response<ProxyBody>, Infallible> {
        let started = Instant::now();
        let (mut parts, body) = request.into_parts();
        let body = match body.collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) => {
                tracing::warn!("cannot read a request from the client: {e}");
                return Ok(text_response(
                    StatusCode::BAD_REQUEST,
                    "mcpcassette: cannot read the request body\n".into(),
                ));
            }
        };
        let had_session = header_text(&parts.headers, SESSION);
        if let Some(id) = &had_session {
            self.tap.note_session(id);
        }
        // Before anything of this request is recorded: an upstream may
        // echo the client's credentials, now or later.
        self.note_credentials(&parts.headers);
        let on_endpoint = parts.uri.path() == self.upstream.path();
        if !on_endpoint && StandIn::serves(parts.uri.path()) {
            let origin = self.origin(&parts.headers);
            let request = Request::from_parts(parts, body);
            let (response, learnt) = self
                .stand_in
                .handle(&self.client, &self.upstream, request, &origin)
                .await;
            self.learn(learnt);
            return Ok(response);
        }
        let is_mcp = on_endpoint || self.tap.post_endpoint().as_deref() == Some(parts.uri.path());
        let (lookup, issues_sessions) = self.session_lookup(&parts.headers);
        let bodiless =
            situation::bodiless_situation(&parts.headers, self.listen, lookup, issues_sessions);
        let sent = Sent {
            on_endpoint,
            is_mcp,
            had_session,
            ordinary: bodiless.is_normal(),
            opened: if parts.method == Method::POST && is_mcp {
                self.tap.client_body(&body, |message| {
                    let session = situation::session_state(message, lookup, issues_sessions);
                    situation::situation(&parts.headers, self.listen, message, session)
                })
            } else {
                Opened::default()
            },
            started,
            origin: self.origin(&parts.headers),
            method: parts.method.clone(),
            body: body.clone(),
        };
        if sent.method == Method::POST && is_mcp {
            // Seen as it goes: its answer cannot come before.
            self.observing.see(Direction::ClientToServer, &body);
        }
        parts.uri = self.upstream.target(&parts.uri);
        self.prepare_headers(&mut parts.headers);
        let forwarded = Request::from_parts(parts, Full::new(body));
        match self.client.request(forwarded).await {
            Ok(response) => {
                self.tally.answered.fetch_add(1, Ordering::Relaxed);
                Ok(self.answer(&sent, response))
            }
            Err(e) => Ok(self.unreachable(&sent, &e)),
        }
    }

    /// A client request's credential headers (`Authorization`, `Cookie`,
    /// API keys): each value not seen before becomes a secret of the
    /// recording and of the observer.
    fn note_credentials(&self, headers: &HeaderMap) {
        let seen = credentials::in_headers(headers);
        if seen.is_empty() {
            return;
        }
        let new: Vec<(String, String)> = {
            let mut known = lock(&self.credentials);
            seen.into_iter()
                .filter(|(_, value)| known.insert(value.clone()))
                .collect()
        };
        if new.is_empty() {
            return;
        }
        self.tap.note_credentials(&new);
        self.observing.secrets(&new);
    }

    /// What the OAuth stand-in learnt: credentials are secrets from now
    /// on; the scopes the upstream offers go into the transport's `auth`.
    fn learn(&self, learnt: Learnt) {
        if !learnt.secrets.is_empty() {
            self.tap.note_credentials(&learnt.secrets);
            self.observing.secrets(&learnt.secrets);
        }
        if let Some(refresh) = learnt.refresh_token {
            self.tap.behaviour(|b| {
                let seen = &mut b.auth.get_or_insert_default().refresh_tokens;
                *seen = Some(seen.unwrap_or(false) || refresh);
            });
        }
        if let Some(scopes) = learnt.scopes_supported.filter(|s| !s.is_empty()) {
            self.tap
                .behaviour(|b| b.auth.get_or_insert_default().scopes_supported = scopes);
        }
    }

    /// An upstream's 401 or 403 (`insufficient_scope`) to MCP traffic: its
    /// `resource_metadata` points at the proxy, and the challenge is noted
    /// in the transport's `auth` rather than recorded as an interaction.
    fn challenged(&self, sent: &Sent, status: StatusCode, headers: &mut HeaderMap) {
        if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            return;
        }
        self.stand_in.rewrite_challenge(headers, &sent.origin);
        let challenge = header_text(headers, header::WWW_AUTHENTICATE.as_str());
        let Some(challenge) = challenge.filter(|_| sent.is_mcp && sent.method == Method::POST)
        else {
            return;
        };
        let scope = oauth::auth_param(&challenge, "scope");
        if status == StatusCode::UNAUTHORIZED {
            self.tap.behaviour(|b| {
                let auth = b.auth.get_or_insert_default();
                if auth.scope.is_none() {
                    auth.scope = scope;
                }
            });
        } else if oauth::auth_param(&challenge, "error").as_deref() == Some("insufficient_scope") {
            let needs = step_ups(&sent.body, scope.as_deref().unwrap_or_default());
            self.tap.behaviour(|b| {
                let auth = b.auth.get_or_insert_default();
                for step_up in needs {
                    if !auth.step_up.contains(&step_up) {
                        auth.step_up.push(step_up);
                    }
                }
            });
        } else {
            return;
        }
        self.tap
            .exchange(&sent.opened.interactions, |http| http.auth_challenge = true);
    }

    /// What the upstream's session table says about the session a request
    /// names, and whether the upstream hands out sessions at all.
    fn session_lookup(&self, headers: &HeaderMap) -> (SessionLookup, bool) {
        let sessions = lock(&self.sessions);
        let lookup = situation::session_lookup(headers, |id| sessions.live.contains(id));
        (lookup, sessions.issued_any)
    }

    /// Keeps the session table up to date with an answer: a session id on
    /// it was issued; a 2xx to a DELETE ended the session it named.
    fn track_sessions(&self, sent: &Sent, status: StatusCode, issued: Option<&str>) {
        let mut sessions = lock(&self.sessions);
        if let Some(id) = issued {
            sessions.issued_any = true;
            sessions.live.insert(id.to_owned());
        }
        if sent.method == Method::DELETE
            && sent.on_endpoint
            && status.is_success()
            && let Some(id) = &sent.had_session
        {
            sessions.live.remove(id);
        }
    }

    /// `http://host:port` as the client addressed the proxy.
    fn origin(&self, headers: &HeaderMap) -> String {
        let host =
            header_text(headers, header::HOST.as_str()).unwrap_or_else(|| self.listen.to_string());
        format!("http://{host}")
    }

    /// Request headers for the upstream: no hop-by-hop headers, and the
    /// upstream's Host (the client sets it) instead of the proxy's; but a
    /// foreign Host (neither loopback nor the proxy's address) goes on as
    /// the client sent it, so that the upstream judges it as it would have
    /// (DNS-rebinding protection). While recording or observing, no
    /// Accept-Encoding either, so that answers arrive readable.
    fn prepare_headers(&self, headers: &mut HeaderMap) {
        strip_hop_by_hop(headers);
        self.upstream_headers.apply(headers);
        let host = headers.get(header::HOST).map(|host| host.to_str().ok());
        if host.is_some_and(|host| situation::is_local_host(host, self.listen)) {
            headers.remove(header::HOST);
        }
        if self.tap.is_recording() || self.observing.is_on() {
            headers.remove(header::ACCEPT_ENCODING);
        }
    }

    /// Passes the upstream's answer on, reading it into the recording.
    fn answer(&self, sent: &Sent, response: Response<Incoming>) -> Response<ProxyBody> {
        let (mut parts, body) = response.into_parts();
        self.challenged(sent, parts.status, &mut parts.headers);
        let status = parts.status.as_u16();
        let media_type = media_type(&parts.headers);
        let issued_session = header_text(&parts.headers, SESSION);
        if let Some(id) = &issued_session {
            self.tap.note_session(id);
        }
        self.track_sessions(sent, parts.status, issued_session.as_deref());
        self.note_behaviour(sent, status);
        let had_session = sent.had_session.is_some();
        let issued = issued_session.is_some();
        self.tap.exchange(&sent.opened.interactions, |http| {
            http.status = status;
            http.content_type = media_type.clone();
            http.had_session = had_session;
            http.issued_session = issued;
        });
        strip_hop_by_hop(&mut parts.headers);

        let is_sse = media_type.as_deref() == Some("text/event-stream");
        let mut tee = Tee::new(
            self.tap.clone(),
            sent.opened.clone(),
            sent.started,
            self.reading(sent, &parts.headers, media_type.as_deref()),
        );
        tee.upstream = Arc::from(self.upstream.masked());
        tee.observing = self.observing.clone();
        tee.final_answer = status >= 400 || media_type.as_deref() == Some("application/json");
        tee.secrets = sent
            .had_session
            .iter()
            .chain(&issued_session)
            .cloned()
            .collect();
        tee.get_stream = is_sse
            && sent.method == Method::GET
            && sent.on_endpoint
            && self.tap.post_endpoint().is_none();
        if is_sse && sent.method == Method::GET && sent.on_endpoint && self.tap.is_recording() {
            // The announced URL may be rewritten, changing the length.
            parts.headers.remove(header::CONTENT_LENGTH);
            tee.announcement = Some(Announcement::new(
                sent.origin.clone(),
                self.upstream.path().to_owned(),
            ));
        }
        Response::from_parts(parts, TeeBody::new(body, tee).boxed_unsync())
    }

    /// What to read out of an answer of type `media_type`: for the
    /// recording, and for the observer (every JSON answer and SSE stream).
    fn reading(&self, sent: &Sent, headers: &HeaderMap, media_type: Option<&str>) -> Reading {
        let observe = self.observing.is_on();
        if !(self.tap.is_recording() || observe) || !sent.is_mcp {
            return Reading::Nothing;
        }
        if headers
            .get(header::CONTENT_ENCODING)
            .is_some_and(|encoding| encoding != "identity")
        {
            let not = if self.tap.is_recording() {
                "recorded"
            } else {
                "inspected"
            };
            tracing::warn!("the upstream compressed an answer; forwarded but not {not}");
            return Reading::Nothing;
        }
        let opened = !sent.opened.interactions.is_empty();
        match media_type {
            Some("text/event-stream") => Reading::Sse(SseParser::default()),
            Some("application/json") if opened || observe => Reading::Json(Vec::new()),
            _ if opened => Reading::Text(Vec::new()),
            _ => Reading::Nothing,
        }
    }

    /// Records the status of the first GET and the first DELETE on the
    /// endpoint made in the ordinary situation.
    fn note_behaviour(&self, sent: &Sent, status: u16) {
        if !sent.on_endpoint || !sent.ordinary {
            return;
        }
        let first = |seen: &AtomicBool| !seen.swap(true, Ordering::Relaxed);
        if sent.method == Method::GET && first(&self.seen_get) {
            self.tap.behaviour(|b| b.get_status = Some(status));
        } else if sent.method == Method::DELETE && first(&self.seen_delete) {
            self.tap.behaviour(|b| b.delete_status = Some(status));
        }
    }

    /// 502 for a request the upstream never answered; recorded as such.
    fn unreachable(
        &self,
        sent: &Sent,
        error: &hyper_util::client::legacy::Error,
    ) -> Response<ProxyBody> {
        let reason = chain(error);
        if self.tally.failed.fetch_add(1, Ordering::Relaxed) == 0 {
            let recorded = if self.tap.is_recording() {
                " and the cassette records the failure"
            } else {
                ""
            };
            tracing::warn!(
                "the upstream {} did not answer: the client gets 502{recorded}; is the server running at that URL?",
                self.upstream.masked()
            );
        }
        tracing::error!(
            "cannot reach the upstream {}: {reason}",
            self.upstream.masked()
        );
        let text = format!(
            "mcpcassette: cannot reach the upstream {}: {reason}\n",
            self.upstream.masked()
        );
        let had_session = sent.had_session.is_some();
        self.tap.exchange(&sent.opened.interactions, |http| {
            http.status = StatusCode::BAD_GATEWAY.as_u16();
            http.content_type = Some("text/plain".into());
            http.body = Some(text.clone());
            http.had_session = had_session;
        });
        self.tap.unanswered(&sent.opened.request_ids);
        text_response(StatusCode::BAD_GATEWAY, text)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The requests of a POST body that a 403 asked `scope` for.
fn step_ups(body: &[u8], scope: &str) -> Vec<StepUp> {
    let messages = super::tap::parse_messages(body).unwrap_or_default();
    messages
        .iter()
        .filter_map(StepUp::target)
        .map(|(method, name)| StepUp {
            method: method.to_owned(),
            name: name.map(str::to_owned),
            scope: scope.to_owned(),
        })
        .collect()
}

/// The media type of `Content-Type`, without parameters, lower case.
fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let media = value.split(';').next()?.trim().to_ascii_lowercase();
    (!media.is_empty()).then_some(media)
}
