//! What the HTTP server knows about the cassette it serves, and routing of
//! each request to its handler.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use http::{HeaderMap, StatusCode};
use serde_json::Value;

use super::discover::ModernRuns;
use super::flow::{Closing, Flow, Spill};
use super::guard::header;
use super::oauth::OAuth;
use super::reply::{self, Response};
use super::session::{Session, Sessions, lock};
use super::sse_sessions::{Endpoints, Streams};
use super::{Auth, HttpReplayConfig, Pace, SessionMode};
use crate::cassette::{SseFrame, Transport};
use crate::protocol::Era;
use crate::server::Handler;
use crate::wire::params::ParamHeaders;
use crate::wire::situation::{self, SessionLookup};

/// Where a cassette recorded over anything but Streamable HTTP is served.
const DEFAULT_ENDPOINT: &str = "/mcp";

/// The replay server's state, shared by every connection.
#[derive(Debug)]
pub(super) struct Server {
    /// Answers what belongs to no session (and, with shared sessions,
    /// everything).
    pub(super) handler: Arc<dyn Handler>,
    pub(super) pace: Pace,
    /// What a request must show to be served.
    pub(super) auth: Auth,
    /// `--auth oauth`: the authorization server.
    pub(super) oauth: Option<OAuth>,
    session_mode: SessionMode,
    /// The handlers of isolated sessions, live or ended, to tell them
    /// when the clients have gone.
    forks: Mutex<Vec<Arc<dyn Handler>>>,
    /// The endpoint's path.
    pub(super) endpoint: String,
    /// The two endpoints of a cassette recorded over 2024-11-05 HTTP+SSE,
    /// served instead of the Streamable HTTP endpoint.
    pub(super) http_sse_endpoints: Option<Endpoints>,
    pub(super) http_sse: Streams,
    /// 2026-07-28: POST only, stateless, header checks.
    pub(super) modern: bool,
    /// 2026-07-28: the state each client's `server/discover` starts.
    modern_runs: ModernRuns,
    /// Legacy era with sessions (the recorded `initialize` issued one).
    pub(super) stateful: bool,
    /// An `initialize` answered from no recording opens a session (see
    /// [`HttpProfile`](crate::server::HttpProfile)).
    pub(super) sessions_without_recording: bool,
    /// An unrecorded `subscriptions/listen` streams notifications.
    pub(super) listen_streams: bool,
    /// The `Mcp-Param-*` headers each tool's calls carry (2026-07-28).
    pub(super) param_headers: ParamHeaders,
    /// Recorded answers to GET and DELETE.
    pub(super) get_status: Option<u16>,
    pub(super) delete_status: Option<u16>,
    /// The priming event the recorded server opened its GET stream with.
    pub(super) get_priming: Option<SseFrame>,
    /// Where replay listens: a `Host` naming it is not foreign.
    pub(super) local: SocketAddr,
    pub(super) sessions: Sessions,
    closing: Closing,
}

impl Server {
    pub(super) fn new(
        handler: Arc<dyn Handler>,
        config: &HttpReplayConfig,
        local: SocketAddr,
    ) -> Self {
        let profile = handler.http_profile();
        let (endpoint, get_status, delete_status, get_priming, recorded_auth) =
            match &profile.transport {
                Transport::StreamableHttp {
                    endpoint,
                    behaviour,
                    ..
                } => (
                    normalise(endpoint),
                    behaviour.get_status,
                    behaviour.delete_status,
                    behaviour.get_priming.clone(),
                    behaviour.auth.clone().unwrap_or_default(),
                ),
                _ => (
                    DEFAULT_ENDPOINT.to_owned(),
                    None,
                    None,
                    None,
                    Default::default(),
                ),
            };
        let http_sse_endpoints = match &profile.transport {
            Transport::HttpSse {
                sse_endpoint,
                post_endpoint,
                ..
            } => Some(Endpoints {
                sse: normalise(sse_endpoint),
                post: normalise(post_endpoint),
            }),
            _ => None,
        };
        let modern = profile.era == Era::Modern;
        let stateful = !modern && profile.sessions;
        let modern_runs = ModernRuns::new(Arc::clone(&handler), config.sessions);
        Server {
            handler,
            pace: config.pace,
            auth: config.auth,
            oauth: (config.auth == Auth::OAuth)
                .then(|| OAuth::new(format!("http://{local}"), endpoint.clone(), recorded_auth)),
            session_mode: config.sessions,
            forks: Mutex::new(Vec::new()),
            endpoint,
            http_sse_endpoints,
            http_sse: Streams::default(),
            modern,
            modern_runs,
            stateful,
            sessions_without_recording: profile.sessions_without_recording,
            listen_streams: profile.listen_streams,
            param_headers: ParamHeaders::from_tools(&profile.tools),
            get_status,
            get_priming,
            delete_status,
            local,
            sessions: Sessions::default(),
            closing: Closing::new(),
        }
    }

    /// The `Allow` header of a 405.
    pub(super) fn allowed_methods(&self) -> &'static str {
        if self.stateful {
            "GET, POST, DELETE"
        } else {
            "POST"
        }
    }

    /// The session a request names: missing → 400, unknown or ended → 404.
    pub(super) fn session(&self, headers: &HeaderMap) -> Result<Arc<Session>, Response> {
        let Some(id) = header(headers, reply::SESSION_ID) else {
            return Err(reply::error(
                StatusCode::BAD_REQUEST,
                reply::BAD_REQUEST_CODE,
                "Bad Request: Mcp-Session-Id header is required",
            ));
        };
        self.sessions.get(id).ok_or_else(|| {
            reply::error(
                StatusCode::NOT_FOUND,
                reply::SESSION_NOT_FOUND_CODE,
                "Session not found",
            )
        })
    }

    /// What the session table says about the session a request names, and
    /// that session when it is live.
    pub(super) fn lookup(&self, headers: &HeaderMap) -> (SessionLookup, Option<Arc<Session>>) {
        let mut live = None;
        let lookup = situation::session_lookup(headers, |id| {
            live = self.sessions.get(id);
            live.is_some()
        });
        (lookup, live)
    }

    /// The handler a new session runs on: a fresh fork when sessions
    /// are isolated, else the shared one.
    pub(super) fn session_handler(&self) -> Arc<dyn Handler> {
        match self.session_mode {
            SessionMode::Shared => Arc::clone(&self.handler),
            SessionMode::Isolated => {
                let fork = self.handler.fork();
                lock(&self.forks).push(Arc::clone(&fork));
                fork
            }
        }
    }

    /// A new session running on `handler`, with what the server sends
    /// unprompted (a recording's opening messages) queued on its GET
    /// stream.
    pub(super) fn open_session(&self, handler: Arc<dyn Handler>) -> Arc<Session> {
        let session = self.sessions.create(handler);
        let (mut flow, sink) = Flow::open(Spill::Session(Arc::clone(&session)));
        Arc::clone(&session.handler).open(&sink, &mut flow.tasks);
        drop(sink);
        flow.drain(self.closed());
        session
    }

    /// The handler for a request naming `session` (or none).
    pub(super) fn handler_for(&self, session: Option<&Session>) -> Arc<dyn Handler> {
        Arc::clone(session.map_or(&self.handler, |s| &s.handler))
    }

    /// The handler for a modern POST's `messages`: a fresh one when a
    /// `server/discover` starts a new client session (see [`ModernRuns`]).
    pub(super) fn modern_handler(&self, messages: &[Value]) -> Arc<dyn Handler> {
        let (handler, started) = self.modern_runs.handler_for(messages);
        if let Some(fork) = started {
            lock(&self.forks).push(fork);
        }
        handler
    }

    /// Server requests still waiting on any handler end: the clients are
    /// gone.
    pub(super) fn client_gone(&self) {
        self.handler.client_gone();
        for fork in lock(&self.forks).iter() {
            fork.client_gone();
        }
    }

    /// Resolves once shutdown has started.
    pub(super) fn closed(&self) -> impl Future<Output = ()> + Send + 'static {
        self.closing.closed()
    }

    /// Shutdown, for what outlives a request and must end with the server.
    pub(super) fn closing(&self) -> Closing {
        self.closing.clone()
    }

    /// Starts shutdown: streams end, sessions end.
    pub(super) fn close(&self) {
        self.closing.close();
        self.sessions.clear();
        self.http_sse.clear();
    }
}

/// A path with its leading slash.
fn normalise(endpoint: &str) -> String {
    if endpoint.starts_with('/') {
        endpoint.to_owned()
    } else {
        format!("/{endpoint}")
    }
}
