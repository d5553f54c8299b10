//! `new-episodes` mode: what the cassette cannot answer goes to the real
//! stdio server, started on the first miss, and what it says is recorded so
//! that it can be appended to the cassette.
//!
//! Ids. Every request forwarded to the server gets an id of ours
//! (`"mcpcassette-upstream-N"`), so it can never collide with anything the
//! server has seen; its response goes back to the client with the live id.
//! Server-to-client requests reach the client with an id of ours too
//! (`"mcpcassette-upstream-s-N"`, strings, so they cannot collide with the
//! engine's numeric ones), and the client's answer goes back to the server
//! with the server's own id.
//!
//! Recording. A [`Builder`] is fed the exchange: client requests and
//! responses with the live ids, server notifications and requests as the
//! server sent them, and the client's answers to server requests with the
//! server's ids (which is how the builder pairs them, and how replay, which
//! gives server requests fresh ids, expects them). Our own handshake is not
//! recorded: the cassette already has one.
//!
//! Session traffic. What the server sends on its own right after our
//! handshake (`roots/list` after `notifications/initialized`, say) belongs
//! to the session, not to the request being forwarded: the first request
//! waits until the server has sent what the cassette recorded after its own
//! handshake ([`SessionScript`], up to [`SETTLE_TIMEOUT`]); those messages
//! are answered with the client's recorded answers and never reach the
//! client a second time. Session traffic the cassette lacks is relayed to
//! the client and kept apart ([`NewEpisodes::session_traffic`]), to be
//! filed after the cassette's handshake, never under a request.
//!
//! Failures. When the server cannot be started, fails the handshake, or
//! exits (or closes its stdout) with requests in flight, those requests and
//! every later one are answered with the JSON-RPC error [`UPSTREAM_FAILED`]
//! (-32003, in the range MCP leaves to implementations), message
//! `mcpcassette: the server for new episodes failed: <reason>`.
//!
//! This file holds the upstream's face to the engine and its state; the
//! server process (started, greeted, read and written, gone) is in
//! `process`, and which way each message goes between the server and the
//! client (ids swapped, session traffic, relayed requests) in `routing`.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::timeout;

use super::session_traffic::SessionScript;
use super::upstream::{Episodes, Forwarding, Upstream, UpstreamFailure};
use crate::cassette::{Builder, Cassette, Direction, Event, Transport};
use crate::client::LiveError;
use crate::jsonrpc;
use crate::protocol::Era;
use crate::redact;
use crate::server::Sink;

mod process;
mod routing;

/// The error code of requests the live server could not answer because it
/// could not be started, failed the handshake or went away.
pub const UPSTREAM_FAILED: i64 = -32003;

/// JSON-RPC's internal error, for server requests no client can answer.
const INTERNAL_ERROR: i64 = -32603;

/// How long the server has to answer our `initialize`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the server has to exit once its stdin is closed.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);
/// How long to wait for an exit status once the server's stdout closed.
const EXIT_STATUS_TIMEOUT: Duration = Duration::from_secs(1);
/// How long to wait for the server's last output after it exited.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the first forwarded request waits for the session traffic the
/// cassette recorded after its handshake.
pub(super) const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// The outcome of starting the server: the reason it failed, if it did.
type Started = Result<(), UpstreamFailure>;

/// An [`Upstream`] that starts the recorded server on the first request the
/// cassette cannot answer and records what it says.
pub struct NewEpisodes {
    inner: Arc<Inner>,
}

struct Inner {
    command: Vec<String>,
    /// Where the server runs (default: ours).
    dir: Option<std::path::PathBuf>,
    era: Era,
    /// The client's `initialize`, from [`Upstream::handshake`].
    initialize: Mutex<Option<Value>>,
    /// The outcome of starting the server (and its handshake): `None`
    /// while it is under way. Starting runs as a task of its own, so a
    /// forwarding that is dropped meanwhile cannot leave it half done.
    start: Mutex<Option<watch::Receiver<Option<Started>>>>,
    started: AtomicBool,
    /// How many requests were answered with [`UPSTREAM_FAILED`].
    failed: AtomicUsize,
    state: Mutex<State>,
    child: tokio::sync::Mutex<Option<Child>>,
    /// Woken when the live server's session traffic took a script item.
    settled: tokio::sync::Notify,
}

struct State {
    /// `None` once [`NewEpisodes::finish`] took it.
    builder: Option<Builder>,
    /// Numbers our ids (forwarded requests, relayed server requests).
    next_id: u64,
    /// Lines for the server's stdin; `None` once it is closed.
    to_server: Option<mpsc::UnboundedSender<Vec<u8>>>,
    reader: Option<JoinHandle<()>>,
    /// Forwarded requests awaiting the server's response, by our id.
    in_flight: HashMap<String, InFlight>,
    /// Live id → our id, for cancellation.
    by_live: HashMap<String, String>,
    /// Server requests relayed to the client: our id → the server's id.
    relayed: HashMap<String, Value>,
    /// The same, the other way: the server's id → our id.
    relayed_by_server: HashMap<String, Value>,
    /// Our `initialize`, awaiting its response.
    handshake: Option<(String, oneshot::Sender<Value>)>,
    /// Where the most recent forwarded request's events went: unprompted
    /// server messages go there.
    events: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// Why requests can no longer be forwarded.
    failure: Option<UpstreamFailure>,
    /// From the start of the server until the first request is forwarded:
    /// what the server sends then belongs to the session.
    handshaking: bool,
    /// Session traffic the cassette recorded, still expected.
    script: SessionScript,
    /// Session traffic the cassette lacks, relayed to the client (its
    /// answers paired here too).
    session: Builder,
    /// Server ids of session requests relayed to the client.
    session_requests: std::collections::HashSet<String>,
}

/// A forwarded request.
struct InFlight {
    /// Order of forwarding: server traffic that names no request belongs to
    /// the newest.
    seq: u64,
    proxy_id: Value,
    live_id: Value,
    live_key: String,
    /// The request's progress token, as an id key.
    token: Option<String>,
    sink: Sink,
    /// Dropped when the request is over; its receiver ends the forwarding.
    _done: oneshot::Sender<()>,
}

impl NewEpisodes {
    /// An upstream running `command` (program and arguments) when first
    /// needed. `era` is the cassette's: `Legacy` initialises the server
    /// first (with the client's own `initialize`), `Modern` does not;
    /// `Unknown` initialises it unless no `initialize` was given and the
    /// first forwarded request declares the modern version in `_meta`.
    pub fn new(command: Vec<String>, era: Era) -> Arc<Self> {
        Self::new_in(command, era, None)
    }

    /// The same, the server started in `dir` (default: ours): where the
    /// cassette's server was recorded, for a relative command.
    pub fn new_in(command: Vec<String>, era: Era, dir: Option<std::path::PathBuf>) -> Arc<Self> {
        // Only the interactions are kept: the cassette has its transport.
        let transport = Transport::Stdio {
            command: redact::mask_command(&command),
            cwd: None,
        };
        Arc::new(NewEpisodes {
            inner: Arc::new(Inner {
                command,
                dir,
                era,
                initialize: Mutex::new(None),
                start: Mutex::new(None),
                started: AtomicBool::new(false),
                failed: AtomicUsize::new(0),
                state: Mutex::new(State {
                    builder: Some(Builder::new(crate::cassette::now_rfc3339(), transport)),
                    next_id: 0,
                    to_server: None,
                    reader: None,
                    in_flight: HashMap::new(),
                    by_live: HashMap::new(),
                    relayed: HashMap::new(),
                    relayed_by_server: HashMap::new(),
                    handshake: None,
                    events: None,
                    failure: None,
                    handshaking: true,
                    script: SessionScript::default(),
                    session: Builder::new(
                        String::new(),
                        Transport::Stdio {
                            command: vec![],
                            cwd: None,
                        },
                    ),
                    session_requests: Default::default(),
                }),
                child: tokio::sync::Mutex::new(None),
                settled: tokio::sync::Notify::new(),
            }),
        })
    }

    /// An upstream for new episodes of `cassette`, in its era, expecting the
    /// session traffic it recorded after its handshake.
    pub fn for_cassette(
        command: Vec<String>,
        cassette: &Cassette,
        dir: Option<std::path::PathBuf>,
    ) -> Arc<Self> {
        let upstream = Self::new_in(command, cassette.protocol.era, dir);
        upstream.inner.state().script = SessionScript::of(cassette);
        upstream
    }

    /// Session traffic the server sent that the cassette lacks (call after
    /// [`NewEpisodes::finish`]): it belongs after the cassette's handshake
    /// ([`crate::replay::file_session_traffic`]), not under any request.
    pub fn session_traffic(&self) -> Vec<Event> {
        let mut state = self.inner.state();
        let session = std::mem::replace(
            &mut state.session,
            Builder::new(
                String::new(),
                Transport::Stdio {
                    command: vec![],
                    cwd: None,
                },
            ),
        );
        session.finish().opening
    }

    /// Whether the server was started.
    pub fn started(&self) -> bool {
        self.inner.started.load(Ordering::SeqCst)
    }

    /// How many requests could not be forwarded (answered with
    /// [`UPSTREAM_FAILED`]), and why the first failure happened.
    pub fn failures(&self) -> Option<(usize, UpstreamFailure)> {
        let failed = self.inner.failed.load(Ordering::SeqCst);
        (failed > 0).then(|| {
            let reason = self.inner.state().failure.clone();
            (failed, reason.unwrap_or(UpstreamFailure::Unexpected))
        })
    }

    /// Stops the server (closes its stdin, waits up to 5 s, then kills it)
    /// and returns the interactions it answered ([`Episodes`]); none if
    /// the server was never started.
    ///
    /// # Errors
    ///
    /// [`LiveError::Wait`] when the server cannot be waited for or killed.
    pub async fn finish(&self) -> Result<Episodes, LiveError> {
        if !self.started() {
            return Ok(Episodes::of(None));
        }
        let reader = {
            let mut state = self.inner.state();
            // Dropping the only sender ends the writer, which closes stdin.
            state.to_server = None;
            state.failure.get_or_insert(UpstreamFailure::SessionOver);
            state.reader.take()
        };
        let child = self.inner.child.lock().await.take();
        let mut outcome = Ok(());
        if let Some(mut child) = child {
            match timeout(STOP_TIMEOUT, child.wait()).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => outcome = Err(LiveError::Wait(e)),
                Err(_) => {
                    tracing::warn!(
                        "the server for new episodes did not exit within {} s of its stdin closing; killing it",
                        STOP_TIMEOUT.as_secs()
                    );
                    if let Err(e) = child.kill().await {
                        outcome = Err(LiveError::Wait(e));
                    }
                }
            }
        }
        // What the server wrote before exiting is still recorded.
        if let Some(mut reader) = reader
            && timeout(DRAIN_TIMEOUT, &mut reader).await.is_err()
        {
            reader.abort();
        }
        let builder = self.inner.state().builder.take();
        outcome?;
        Ok(Episodes::of(builder))
    }

    /// Keeps settled new episodes in a spill file beside `cassette` rather
    /// than in memory.
    pub fn spill_beside(&self, cassette: &std::path::Path) {
        if let Some(builder) = &mut self.inner.state().builder {
            super::upstream::spill_beside(builder, cassette);
        }
    }
}

impl fmt::Debug for NewEpisodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewEpisodes")
            .field("command", &self.inner.command)
            .field("era", &self.inner.era)
            .field("started", &self.started())
            .finish_non_exhaustive()
    }
}

impl Upstream for NewEpisodes {
    fn handshake(&self, initialize: &Value) {
        *lock(&self.inner.initialize) = Some(initialize.clone());
    }

    fn forward(&self, request: Value, sink: Sink) -> Forwarding {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move { inner.forward(request, sink).await })
    }

    /// Only `notifications/cancelled` naming a forwarded request is passed
    /// on (with our id for it); the forwarding ends without a response. The
    /// rest is replay's business (`initialized` was sent by us already).
    fn notify(&self, notification: &Value) {
        if jsonrpc::method(notification) != Some("notifications/cancelled") {
            return;
        }
        let Some(live) = notification.pointer("/params/requestId") else {
            return;
        };
        let mut state = self.inner.state();
        let Some(proxy_key) = state.by_live.remove(&jsonrpc::id_key(live)) else {
            return;
        };
        let Some(flight) = state.in_flight.remove(&proxy_key) else {
            return;
        };
        let mut outgoing = notification.clone();
        outgoing["params"]["requestId"] = flight.proxy_id.clone();
        state.observe(Direction::ClientToServer, notification.clone());
        state.send(&outgoing);
    }

    fn client_response(&self, response: &Value) -> bool {
        let Some(id) = jsonrpc::id(response) else {
            return false;
        };
        let mut state = self.inner.state();
        let Some(server_id) = state.relayed.remove(&jsonrpc::id_key(id)) else {
            return false;
        };
        state.relayed_by_server.remove(&jsonrpc::id_key(&server_id));
        let answer = with_id(response.clone(), server_id.clone());
        if state.session_requests.remove(&jsonrpc::id_key(&server_id)) {
            state
                .session
                .observe(Direction::ClientToServer, answer.clone());
        } else {
            state.observe(Direction::ClientToServer, answer.clone());
        }
        state.send(&answer);
        true
    }
}

impl Inner {
    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    async fn forward(self: Arc<Self>, request: Value, sink: Sink) {
        let Some(live_id) = jsonrpc::id(&request).cloned() else {
            tracing::warn!("asked to forward a message that is not a request");
            return;
        };
        self.state().events = Some(sink.events.clone());
        if let Err(reason) = self.ensure_started(&request).await {
            self.respond_failure(&sink, live_id, &reason);
            return;
        }
        let done = {
            let mut state = self.state();
            if let Some(reason) = &state.failure {
                self.respond_failure(&sink, live_id, reason);
                return;
            }
            let seq = state.take_id();
            let proxy_id = Value::String(format!("mcpcassette-upstream-{seq}"));
            let proxy_key = jsonrpc::id_key(&proxy_id);
            let live_key = jsonrpc::id_key(&live_id);
            let (done, finished) = oneshot::channel();
            let flight = InFlight {
                seq,
                proxy_id: proxy_id.clone(),
                live_id,
                live_key: live_key.clone(),
                token: jsonrpc::progress_token(&request).map(jsonrpc::id_key),
                sink,
                _done: done,
            };
            state.in_flight.insert(proxy_key.clone(), flight);
            state.by_live.insert(live_key, proxy_key);
            state.observe(Direction::ClientToServer, request.clone());
            state.send(&with_id(request, proxy_id));
            finished
        };
        // Ends when the response was written, the request was cancelled, or
        // the server went away (which answers it with an error).
        let _ = done.await;
    }
}

impl State {
    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn observe(&mut self, direction: Direction, message: Value) {
        if let Some(builder) = &mut self.builder {
            builder.observe(direction, message);
        }
    }

    /// Writes one message to the server (dropped once its stdin is closed;
    /// the reader then notices the exit).
    fn send(&self, message: &Value) {
        if let Some(to_server) = &self.to_server {
            let _ = to_server.send(encode(message));
        }
    }
}

/// The `initialize` sent when the client's is unknown.
/// Answers the request `id` with [`UPSTREAM_FAILED`], saying why the live
/// server (of either transport) could not answer it.
pub(super) fn answer_upstream_failed(sink: &Sink, id: Value, reason: &UpstreamFailure) {
    let reason = crate::error_chain::chain(reason);
    let message = format!("mcpcassette: the server for new episodes failed: {reason}");
    let error = jsonrpc::error_response(id, UPSTREAM_FAILED, &message, None);
    let _ = sink.responses.send(encode(&error));
}

/// `message` with another id.
pub(super) fn with_id(mut message: Value, id: Value) -> Value {
    if let Some(fields) = message.as_object_mut() {
        fields.insert("id".into(), id);
    }
    message
}

pub(super) fn encode(message: &Value) -> Vec<u8> {
    serde_json::to_vec(message).expect("JSON values serialise")
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{Event, Interaction};
    use serde_json::json;

    const PATIENCE: Duration = Duration::from_secs(10);

    use crate::client::testing::demo_server;

    fn channel() -> (Sink, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Sink::single(tx), rx)
    }

    async fn next(rx: &mut mpsc::UnboundedReceiver<Vec<u8>>) -> Value {
        let bytes = timeout(PATIENCE, rx.recv())
            .await
            .expect("a message in time")
            .expect("the sink is open");
        serde_json::from_slice(&bytes).unwrap()
    }

    /// Messages up to and including the response with `id`.
    async fn until_response(
        rx: &mut mpsc::UnboundedReceiver<Vec<u8>>,
        id: Value,
    ) -> (Vec<Value>, Value) {
        let mut events = Vec::new();
        loop {
            let message = next(rx).await;
            if message.get("method").is_none() && message["id"] == id {
                return (events, message);
            }
            events.push(message);
        }
    }

    async fn forward(upstream: &Arc<NewEpisodes>, request: Value, sink: Sink) {
        timeout(PATIENCE, upstream.forward(request, sink))
            .await
            .expect("forwarding does not hang");
    }

    async fn finish(upstream: &Arc<NewEpisodes>) -> Vec<Interaction> {
        timeout(PATIENCE, upstream.finish())
            .await
            .expect("finishing does not hang")
            .expect("the server stops")
            .collect::<Result<_, _>>()
            .expect("the episodes are readable")
    }

    fn initialize() -> Value {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"sampling": {}},
            "clientInfo": {"name": "episodes-test", "version": "0"},
        }})
    }

    fn call(id: Value, name: &str, arguments: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    }

    fn legacy() -> Arc<NewEpisodes> {
        let upstream = NewEpisodes::new(vec![demo_server()], Era::Legacy);
        upstream.handshake(&initialize());
        upstream
    }

    #[tokio::test]
    async fn legacy_echo_is_answered_with_the_live_id_and_recorded() {
        let upstream = legacy();
        assert!(!upstream.started());
        let (sink, mut rx) = channel();
        let request = call(json!(7), "echo", json!({"message": "hi"}));
        forward(&upstream, request.clone(), sink).await;
        assert!(upstream.started());
        let (_, response) = until_response(&mut rx, json!(7)).await;
        assert_eq!(response["result"]["content"][0]["text"], "echo: hi");
        assert!(upstream.failures().is_none());

        let interactions = finish(&upstream).await;
        assert_eq!(interactions.len(), 1, "{interactions:#?}");
        assert_eq!(interactions[0].request(), Some(&request));
        let recorded = interactions[0].response.as_ref().unwrap();
        assert_eq!(recorded["id"], 7);
        assert_eq!(recorded["result"], response["result"]);
    }

    #[tokio::test]
    async fn progress_reaches_the_sink_and_the_recording() {
        let upstream = legacy();
        let (sink, mut rx) = channel();
        let mut request = call(json!("c-1"), "count", json!({"steps": 3}));
        request["params"]["_meta"] = json!({"progressToken": "tok-1"});
        forward(&upstream, request, sink).await;
        let (events, response) = until_response(&mut rx, json!("c-1")).await;
        assert_eq!(response["result"]["content"][0]["text"], "counted 3 steps");
        let progress: Vec<&Value> = events
            .iter()
            .filter(|e| e["method"] == "notifications/progress")
            .collect();
        assert_eq!(progress.len(), 3, "{events:#?}");
        assert!(
            progress
                .iter()
                .all(|p| p["params"]["progressToken"] == "tok-1")
        );

        let interactions = finish(&upstream).await;
        assert_eq!(interactions.len(), 1);
        let recorded_progress = interactions[0]
            .during
            .iter()
            .filter(|e| matches!(e, Event::Notification { notification } if notification["method"] == "notifications/progress"))
            .count();
        assert_eq!(recorded_progress, 3);
    }

    #[tokio::test]
    async fn sampling_is_relayed_and_the_answer_goes_back() {
        let upstream = legacy();
        let (sink, mut rx) = channel();
        let request = call(json!(3), "summarize", json!({"text": "cassettes"}));
        let forwarding = tokio::spawn(upstream.forward(request, sink));

        let asked = next(&mut rx).await;
        assert_eq!(asked["method"], "sampling/createMessage");
        let ours = asked["id"].as_str().expect("a string id of ours");
        assert!(ours.starts_with("mcpcassette-upstream-s-"), "{ours}");
        assert!(!upstream.client_response(&json!({"jsonrpc": "2.0", "id": 0, "result": {}})));
        let answer = json!({"jsonrpc": "2.0", "id": ours, "result": {
            "role": "assistant",
            "content": {"type": "text", "text": "short"},
            "model": "test",
        }});
        assert!(upstream.client_response(&answer));
        assert!(!upstream.client_response(&answer), "answered once");

        let (_, response) = until_response(&mut rx, json!(3)).await;
        assert_eq!(response["result"]["content"][0]["text"], "summary: short");
        timeout(PATIENCE, forwarding).await.unwrap().unwrap();

        let interactions = finish(&upstream).await;
        assert_eq!(interactions.len(), 1);
        let Some(Event::ServerRequest {
            server_request,
            client_response,
        }) = interactions[0].during.first()
        else {
            panic!("expected a server request: {interactions:#?}");
        };
        assert_eq!(server_request["method"], "sampling/createMessage");
        let client_response = client_response.as_ref().expect("the client's answer");
        assert_eq!(
            client_response["id"], server_request["id"],
            "the server's id"
        );
        assert_eq!(client_response["result"]["content"]["text"], "short");
    }

    #[tokio::test]
    async fn modern_requests_need_no_handshake() {
        let upstream = NewEpisodes::new(vec![demo_server()], Era::Modern);
        let (sink, mut rx) = channel();
        let mut request = call(json!(1), "echo", json!({"message": "now"}));
        request["params"]["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "episodes-test", "version": "0"},
        });
        forward(&upstream, request.clone(), sink).await;
        let (_, response) = until_response(&mut rx, json!(1)).await;
        assert_eq!(response["result"]["content"][0]["text"], "echo: now");
        let interactions = finish(&upstream).await;
        assert_eq!(interactions.len(), 1);
        assert_eq!(interactions[0].request(), Some(&request));
    }

    fn assert_upstream_failed(response: &Value, id: Value, reason: &str) {
        assert_eq!(response["id"], id);
        assert_eq!(response["error"]["code"], UPSTREAM_FAILED);
        let message = response["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("mcpcassette: the server for new episodes failed: "),
            "{message}"
        );
        assert!(message.contains(reason), "{message}");
    }

    #[tokio::test]
    async fn a_server_that_cannot_start_fails_every_request() {
        let command = vec!["/nonexistent/mcpcassette-no-such-server".to_owned()];
        let upstream = NewEpisodes::new(command, Era::Legacy);
        for id in [1, 2] {
            let (sink, mut rx) = channel();
            forward(&upstream, call(json!(id), "echo", json!({})), sink).await;
            let response = next(&mut rx).await;
            assert_upstream_failed(&response, json!(id), "cannot start server");
        }
        let (failed, reason) = upstream.failures().expect("failures are counted");
        let reason = reason.to_string();
        assert_eq!(failed, 2);
        assert!(reason.contains("cannot start server"), "{reason}");
        assert!(!upstream.started());
        assert!(finish(&upstream).await.is_empty());
    }

    #[tokio::test]
    async fn a_failed_handshake_fails_requests() {
        let command = vec!["sh".to_owned(), "-c".to_owned(), "exit 4".to_owned()];
        let upstream = NewEpisodes::new(command, Era::Legacy);
        let (sink, mut rx) = channel();
        forward(&upstream, call(json!(1), "echo", json!({})), sink).await;
        let response = next(&mut rx).await;
        assert_upstream_failed(&response, json!(1), "exit status: 4");
        assert!(finish(&upstream).await.is_empty());
    }

    #[tokio::test]
    async fn a_server_exiting_mid_request_fails_it() {
        let script = "read line; exit 3".to_owned();
        let command = vec!["sh".to_owned(), "-c".to_owned(), script];
        let upstream = NewEpisodes::new(command, Era::Modern);
        let (sink, mut rx) = channel();
        forward(&upstream, call(json!("x"), "echo", json!({})), sink).await;
        let response = next(&mut rx).await;
        assert_upstream_failed(&response, json!("x"), "exit status: 3");
        let (sink, mut rx) = channel();
        forward(&upstream, call(json!("y"), "echo", json!({})), sink).await;
        assert_upstream_failed(&next(&mut rx).await, json!("y"), "exit status: 3");
        assert!(finish(&upstream).await.is_empty());
    }

    #[tokio::test]
    async fn cancelled_requests_end_without_an_answer_and_are_not_recorded() {
        let upstream = legacy();
        let (sink, mut rx) = channel();
        let request = call(json!(5), "sleep", json!({"ms": 1500}));
        let forwarding = tokio::spawn(upstream.forward(request, sink.clone()));
        forward(
            &upstream,
            call(json!(6), "echo", json!({"message": "a"})),
            sink,
        )
        .await;
        let (_, response) = until_response(&mut rx, json!(6)).await;
        assert_eq!(response["result"]["content"][0]["text"], "echo: a");
        timeout(PATIENCE, async {
            while !upstream.inner.state().by_live.contains_key("5") {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the sleep is forwarded");

        upstream.notify(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": 5, "reason": "test"}}),
        );
        timeout(Duration::from_secs(1), forwarding)
            .await
            .expect("the forwarding ends at once")
            .unwrap();
        // Other notifications are not forwarded, and do no harm.
        upstream.notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

        let interactions = finish(&upstream).await;
        let methods: Vec<&str> = interactions
            .iter()
            .map(|i| i.request().unwrap()["params"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(methods, ["echo"]);
        while let Ok(message) = rx.try_recv() {
            let message: Value = serde_json::from_slice(&message).unwrap();
            assert_ne!(message["id"], 5, "no answer to a cancelled request");
        }
    }

    #[tokio::test]
    async fn unknown_era_without_initialize_follows_the_first_request() {
        let upstream = NewEpisodes::new(vec![demo_server()], Era::Unknown);
        let (sink, mut rx) = channel();
        // No initialize given and a legacy-looking request: the fallback
        // handshake makes the session usable.
        forward(
            &upstream,
            call(json!(1), "echo", json!({"message": "x"})),
            sink,
        )
        .await;
        let (_, response) = until_response(&mut rx, json!(1)).await;
        assert_eq!(response["result"]["content"][0]["text"], "echo: x");
        assert_eq!(finish(&upstream).await.len(), 1);
    }
}
