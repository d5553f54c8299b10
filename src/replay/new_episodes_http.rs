//! `new-episodes` over Streamable HTTP: what the cassette cannot answer is
//! sent to the live server at the cassette's URL (or the one given), and
//! what it says is recorded so that it can be appended to the cassette.
//!
//! The live side is the HTTP client `verify --url` uses
//! ([`HttpLive`](crate::client::HttpLive): sessions, protocol
//! headers of both eras, JSON and SSE answers), driven from a blocking
//! thread, one forwarded request at a time. Ids are handled as in
//! [`NewEpisodes`](super::NewEpisodes): forwarded requests carry
//! `"mcpcassette-upstream-N"`, server requests reach the client as
//! `"mcpcassette-upstream-s-N"`, and the recording has the live ids (client
//! side) and the server's ids (server requests). In the legacy era the
//! server is initialised first with the client's own `initialize`, which is
//! not recorded. Requests that cannot be forwarded are answered with
//! [`UPSTREAM_FAILED`](super::UPSTREAM_FAILED).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::new_episodes_stdio::{answer_upstream_failed, encode, lock, with_id};
use super::upstream::Episodes;
use super::upstream::{Forwarding, Upstream, UpstreamFailure};
use crate::cassette::{Builder, Direction, Transport};
use crate::client::{HttpLive, Live, handshake};
use crate::jsonrpc::{self, Kind};
use crate::protocol::Era;
use crate::server::Sink;

/// How long the server has to answer one forwarded request.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a forwarding looks for the client's answers to server requests.
const POLL: Duration = Duration::from_millis(20);

/// An [`Upstream`] that forwards misses to a live Streamable HTTP server.
pub struct HttpEpisodes {
    inner: Arc<Inner>,
}

struct Inner {
    url: String,
    era: Era,
    initialize: Mutex<Option<Value>>,
    /// The connection, opened (and initialised) by the first forwarding;
    /// one forwarding at a time holds it.
    live: Mutex<Option<HttpLive>>,
    state: Mutex<State>,
    failed: AtomicUsize,
    /// The client has gone: forwardings still waiting give up.
    gone: AtomicBool,
}

struct State {
    builder: Option<Builder>,
    next_id: u64,
    /// Why requests can no longer be forwarded.
    failure: Option<UpstreamFailure>,
    /// Server requests relayed to the client: our id → the server's id.
    relayed: HashMap<String, Value>,
    /// The client's answers, on their way to the forwarding that waits.
    answers: Option<mpsc::Sender<Value>>,
}

impl HttpEpisodes {
    /// An upstream at `url`, speaking the cassette's `era`, recorded as
    /// `transport`.
    pub fn new(url: String, era: Era, transport: Transport) -> Arc<Self> {
        Arc::new(HttpEpisodes {
            inner: Arc::new(Inner {
                url,
                era,
                initialize: Mutex::new(None),
                live: Mutex::new(None),
                state: Mutex::new(State {
                    builder: Some(Builder::new(crate::cassette::now_rfc3339(), transport)),
                    next_id: 0,
                    failure: None,
                    relayed: HashMap::new(),
                    answers: None,
                }),
                failed: AtomicUsize::new(0),
                gone: AtomicBool::new(false),
            }),
        })
    }

    /// How many requests could not be forwarded, and why the first failed.
    pub fn failures(&self) -> Option<(usize, UpstreamFailure)> {
        let failed = self.inner.failed.load(Ordering::SeqCst);
        (failed > 0).then(|| {
            let reason = lock(&self.inner.state).failure.clone();
            (failed, reason.unwrap_or(UpstreamFailure::Unexpected))
        })
    }

    /// Ends the HTTP session and returns the answered interactions
    /// ([`Episodes`]).
    pub fn finish(&self) -> Episodes {
        if let Some(mut live) = lock(&self.inner.live).take() {
            live.close();
        }
        Episodes::of(lock(&self.inner.state).builder.take())
    }

    /// Keeps settled new episodes in a spill file beside `cassette` rather
    /// than in memory.
    pub fn spill_beside(&self, cassette: &std::path::Path) {
        if let Some(builder) = &mut lock(&self.inner.state).builder {
            super::upstream::spill_beside(builder, cassette);
        }
    }
}

impl Upstream for HttpEpisodes {
    fn handshake(&self, initialize: &Value) {
        *lock(&self.inner.initialize) = Some(initialize.clone());
    }

    fn forward(&self, request: Value, sink: Sink) -> Forwarding {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let outcome = tokio::task::spawn_blocking(move || inner.forward(request, sink)).await;
            if let Err(e) = outcome {
                tracing::warn!("forwarding to the live server failed: {e}");
            }
        })
    }

    fn notify(&self, _notification: &Value) {}

    fn client_gone(&self) {
        self.inner.gone.store(true, Ordering::SeqCst);
    }

    fn client_response(&self, response: &Value) -> bool {
        let Some(id) = jsonrpc::id(response) else {
            return false;
        };
        let mut state = lock(&self.inner.state);
        let Some(server_id) = state.relayed.remove(&jsonrpc::id_key(id)) else {
            return false;
        };
        let answer = with_id(response.clone(), server_id);
        state.observe(Direction::ClientToServer, answer.clone());
        if let Some(answers) = &state.answers {
            let _ = answers.send(answer);
        }
        true
    }
}

impl Inner {
    /// One forwarding, on a blocking thread.
    fn forward(&self, request: Value, sink: Sink) {
        let Some(live_id) = jsonrpc::id(&request).cloned() else {
            return;
        };
        let mut live = lock(&self.live);
        if let Some(reason) = lock(&self.state).failure.clone() {
            return self.fail(&sink, live_id, reason);
        }
        if live.is_none() {
            match self.open() {
                Ok(opened) => *live = Some(opened),
                Err(reason) => {
                    lock(&self.state).failure.get_or_insert(reason.clone());
                    let shown = crate::error_chain::chain(&reason);
                    tracing::warn!("the server for new episodes failed: {shown}");
                    return self.fail(&sink, live_id, reason);
                }
            }
        }
        let live = live.as_mut().expect("opened above");
        let (answers, answered) = mpsc::channel();
        let proxy_id = {
            let mut state = lock(&self.state);
            state.answers = Some(answers);
            state.observe(Direction::ClientToServer, request.clone());
            Value::String(format!("mcpcassette-upstream-{}", state.take_id()))
        };
        if let Err(e) = live.send(&with_id(request, proxy_id.clone())) {
            return self.fail(&sink, live_id, e.into());
        }
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            while let Ok(answer) = answered.try_recv() {
                if let Err(e) = live.send(&answer) {
                    let e = crate::error_chain::chain(&e);
                    tracing::warn!("passing the client's answer on failed: {e}");
                }
            }
            if self.gone.load(Ordering::SeqCst) {
                return self.fail(&sink, live_id, UpstreamFailure::ClientGone);
            }
            if Instant::now() >= deadline {
                let reason = UpstreamFailure::AnswerTimeout(ANSWER_TIMEOUT);
                return self.fail(&sink, live_id, reason);
            }
            let message = match live.recv(POLL) {
                Ok(Some(message)) => message,
                Ok(None) => continue,
                Err(e) => return self.fail(&sink, live_id, e.into()),
            };
            let mut state = lock(&self.state);
            match jsonrpc::classify(&message) {
                // A rejection of the POST (an error with a `null` id)
                // answers the request it carried.
                Ok(Kind::Response)
                    if jsonrpc::id(&message) == Some(&proxy_id)
                        || jsonrpc::is_rejection(&message) =>
                {
                    let response = with_id(message, live_id);
                    state.observe(Direction::ServerToClient, response.clone());
                    let _ = sink.responses.send(encode(&response));
                    state.answers = None;
                    return;
                }
                Ok(Kind::Request) => {
                    let server_id = jsonrpc::id(&message).cloned().unwrap_or(Value::Null);
                    let ours = Value::String(format!("mcpcassette-upstream-s-{}", state.take_id()));
                    state.relayed.insert(jsonrpc::id_key(&ours), server_id);
                    state.observe(Direction::ServerToClient, message.clone());
                    let _ = sink.events.send(encode(&with_id(message, ours)));
                }
                Ok(Kind::Notification) => {
                    state.observe(Direction::ServerToClient, message.clone());
                    let _ = sink.events.send(encode(&message));
                }
                _ => tracing::debug!("ignoring a message from the live server: {message}"),
            }
        }
    }

    /// Connects, and in the legacy era initialises the session.
    fn open(&self) -> Result<HttpLive, UpstreamFailure> {
        let mut live = HttpLive::connect(&self.url, self.era)?;
        let initialize = lock(&self.initialize).clone();
        if self.era == Era::Modern || (self.era == Era::Unknown && initialize.is_none()) {
            return Ok(live);
        }
        let initialize = initialize.unwrap_or_else(|| {
            handshake::initialize(json!(0), handshake::client_info("mcpcassette"))
        });
        let id = Value::String(format!(
            "mcpcassette-upstream-{}",
            lock(&self.state).take_id()
        ));
        live.send(&with_id(initialize, id.clone()))?;
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match live.recv(left)? {
                Some(message)
                    if jsonrpc::id(&message) == Some(&id) || jsonrpc::is_rejection(&message) =>
                {
                    if let Some(error) = message.get("error") {
                        return Err(UpstreamFailure::InitializeRejected(error.clone()));
                    }
                    break;
                }
                Some(_) => {}
                None => return Err(UpstreamFailure::NoInitializeAnswer),
            }
        }
        live.send(&handshake::initialized())?;
        Ok(live)
    }

    fn fail(&self, sink: &Sink, id: Value, reason: UpstreamFailure) {
        self.failed.fetch_add(1, Ordering::SeqCst);
        lock(&self.state)
            .failure
            .get_or_insert_with(|| reason.clone());
        answer_upstream_failed(sink, id, &reason);
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
}
