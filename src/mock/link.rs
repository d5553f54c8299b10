//! One connection to a mock: a [`Handler`], so the transports of
//! [`crate::server`] (stdio, any byte stream, Streamable HTTP) carry the
//! mock as they carry a replay.
//!
//! Everything about a request is decided when the transport hands it
//! over, in arrival order (the log, transitions, handshake rules,
//! immediate answers); only waiting (delays, `never`,
//! `subscriptions/listen`) happens in a task, which
//! `notifications/cancelled` or the client going away ends.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use super::answer::{Asked, Step};
use super::respond::Leaf;
use super::server::{Client, Context, MockServer, lock};
use crate::cassette::{HttpSituation, Transport};
use crate::jsonrpc::RpcError;
use crate::jsonrpc::{self, Kind};
use crate::protocol::META_SUBSCRIPTION_ID as SUBSCRIPTION_ID;
use crate::protocol::{self, Era};
use crate::server::{Handled, Handler, HttpProfile, Sink, encode};

/// What is left of a request once it is decided: the wait for its answer.
type Forwarding = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A connection's view of the mock.
pub(crate) struct Link {
    server: MockServer,
    me: Weak<Link>,
    state: Mutex<LinkState>,
}

#[derive(Default)]
struct LinkState {
    /// `initialize` was answered.
    initialized: bool,
    /// `notifications/initialized` arrived.
    ready: bool,
    /// Where the latest legacy request's events went: unprompted
    /// notifications go there (stdio: the connection; HTTP: the session's
    /// GET stream, through that request's leftovers).
    events: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// Requests waiting to be answered: id key, seq, and a sender whose
    /// dropping ends the wait without an answer.
    waiting: Vec<(String, usize, oneshot::Sender<()>)>,
    /// Open `subscriptions/listen` streams.
    listens: Vec<Listen>,
}

/// An open `subscriptions/listen` stream.
struct Listen {
    key: String,
    seq: usize,
    id: Value,
    accepted: Value,
    events: mpsc::UnboundedSender<Vec<u8>>,
    /// Dropped to end the stream.
    _open: oneshot::Sender<()>,
}

impl Link {
    pub(crate) fn new(server: MockServer) -> Arc<Link> {
        let link = Arc::new_cyclic(|me| Link {
            server: server.clone(),
            me: me.clone(),
            state: Mutex::new(LinkState::default()),
        });
        server.register(&link);
        link
    }
}

impl Client for Link {
    fn notify_client(&self, method: &str, params: &Value) {
        let state = lock(&self.state);
        if state.initialized
            && let Some(events) = &state.events
        {
            let mut message = json!({"jsonrpc": "2.0", "method": method});
            if !params.is_null() {
                message["params"] = params.clone();
            }
            let _ = events.send(encode(&message));
        }
        for listen in &state.listens {
            if !accepts(&listen.accepted, method, params) {
                continue;
            }
            let mut params = match params {
                Value::Object(_) => params.clone(),
                _ => json!({}),
            };
            params["_meta"][SUBSCRIPTION_ID] = listen.id.clone();
            let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
            let _ = listen.events.send(encode(&message));
        }
    }
}

impl Link {
    /// Logs the answer and sends it.
    fn finish(&self, call: &Pending, answer: Result<Value, RpcError>, sink: &Sink) {
        self.server.ended(call.seq, Some(&answer));
        if call.method == "initialize" && answer.is_ok() {
            lock(&self.state).initialized = true;
        }
        let message = (self.server).response(call.id.clone(), &call.method, call.modern, &answer);
        let _ = sink.responses.send(encode(&message));
    }

    /// Waits `delay`, then answers as `leaf` says, unless cancelled first.
    fn later(
        &self,
        call: Pending,
        delay: Duration,
        leaf: Leaf,
        input: Value,
        context: Box<Context>,
        sink: Sink,
    ) -> Forwarding {
        let (open, closed) = oneshot::channel();
        lock(&self.state)
            .waiting
            .push((call.key.clone(), call.seq, open));
        let Some(link) = self.me.upgrade() else {
            return Box::pin(async {});
        };
        Box::pin(async move {
            let guard = Ending {
                link: Arc::clone(&link),
                seq: call.seq,
            };
            let answer = async {
                tokio::time::sleep(delay).await;
                match leaf.run(&input, &context) {
                    Some(answer) => answer,
                    None => std::future::pending().await,
                }
            };
            let answer = tokio::select! {
                biased;
                _ = closed => None,
                answer = answer => Some(answer),
            };
            if let Some(answer) = answer {
                link.finish(&call, answer, &sink);
            }
            drop(guard);
        })
    }

    /// Opens a `subscriptions/listen` stream: the acknowledgement, then
    /// matching notifications until the client cancels it or leaves.
    fn listen(&self, call: Pending, accepted: Value, sink: Sink) -> Forwarding {
        let ack = json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUBSCRIPTION_ID: call.id}, "notifications": accepted},
        });
        let _ = sink.events.send(encode(&ack));
        let (open, closed) = oneshot::channel();
        lock(&self.state).listens.push(Listen {
            key: call.key.clone(),
            seq: call.seq,
            id: call.id.clone(),
            accepted,
            events: sink.events.clone(),
            _open: open,
        });
        let Some(link) = self.me.upgrade() else {
            return Box::pin(async {});
        };
        Box::pin(async move {
            let _guard = Ending {
                link,
                seq: call.seq,
            };
            let _ = closed.await;
        })
    }
}

/// What a request needs once it is answered.
struct Pending {
    seq: usize,
    id: Value,
    key: String,
    method: String,
    modern: bool,
}

/// Ends a wait: forgets it and logs it unanswered (unless it was
/// answered), also when the wait is dropped (an HTTP client went away).
struct Ending {
    link: Arc<Link>,
    seq: usize,
}

impl Drop for Ending {
    fn drop(&mut self) {
        {
            let mut state = lock(&self.link.state);
            state.waiting.retain(|(_, seq, _)| *seq != self.seq);
            state.listens.retain(|l| l.seq != self.seq);
        }
        self.link.server.ended(self.seq, None);
    }
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").finish_non_exhaustive()
    }
}

impl Handler for Link {
    fn handle(
        self: Arc<Self>,
        message: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: &HttpSituation,
    ) -> Handled {
        let kind = jsonrpc::classify(&message);
        // A mock records nothing, so nothing answers out-of-the-ordinary
        // HTTP situations: the transport answers as the specification says.
        if situation.tag().is_some() && matches!(kind, Ok(Kind::Request | Kind::Notification)) {
            return Handled::NotRecorded;
        }
        match kind {
            Ok(Kind::Request) => {
                tasks.spawn(self.request(message, sink.clone()));
            }
            Ok(Kind::Notification) => self.notification(&message),
            Ok(Kind::Response) => {
                let id = jsonrpc::id(&message).map(jsonrpc::id_key);
                tracing::warn!(id, "client answered a request the mock never sent");
            }
            Err(invalid) => sink.respond(&crate::server::invalid_request(&message, &invalid)),
        }
        Handled::Answered(None)
    }

    fn fork(&self) -> Arc<dyn Handler> {
        Link::new(self.server.clone())
    }

    fn client_gone(&self) {
        let (waits, listens) = {
            let mut state = lock(&self.state);
            state.events = None;
            (
                std::mem::take(&mut state.waiting),
                std::mem::take(&mut state.listens),
            )
        };
        drop((waits, listens));
    }

    /// Served over HTTP as a Streamable HTTP server at `/mcp` of either
    /// era that hands out sessions (with a GET stream for list_changed
    /// notifications) and streams `subscriptions/listen`.
    fn http_profile(&self) -> HttpProfile {
        HttpProfile {
            transport: Transport::Stdio {
                command: Vec::new(),
                cwd: None,
            },
            era: Era::Unknown,
            sessions: true,
            sessions_without_recording: true,
            listen_streams: true,
            tools: Vec::new(),
        }
    }
}

impl Link {
    /// Decides a request; the wait for its answer, if it has one.
    fn request(&self, request: Value, sink: Sink) -> Forwarding {
        let method = jsonrpc::method(&request).unwrap_or_default().to_owned();
        let params = jsonrpc::params(&request).cloned().unwrap_or(Value::Null);
        let id = jsonrpc::id(&request).cloned().unwrap_or(Value::Null);
        let declared = protocol::declared_version(&request);
        let seq = self.server.arrived(&method, &params, false);
        let state = self.server.transition(&method, &params);
        let mut asked = Asked {
            method: &method,
            params: &params,
            declared,
            ready: false,
            state,
        };
        let modern = asked.modern();
        asked.ready = {
            let mut link = lock(&self.state);
            if !modern {
                link.events = Some(sink.events.clone());
            }
            link.ready
        };
        let step = self.server.step(&asked);
        let call = Pending {
            seq,
            key: jsonrpc::id_key(&id),
            id,
            method: method.clone(),
            modern,
        };
        match step {
            Step::Now(answer) => {
                self.finish(&call, answer, &sink);
                Box::pin(async {})
            }
            Step::Later {
                delay,
                leaf,
                input,
                context,
            } => self.later(call, delay, leaf, input, context, sink),
            Step::Listen(accepted) => self.listen(call, accepted, sink),
        }
    }

    /// Logs a client notification and acts on the ones the mock knows.
    fn notification(&self, notification: &Value) {
        let method = jsonrpc::method(notification).unwrap_or_default();
        let params = jsonrpc::params(notification)
            .cloned()
            .unwrap_or(Value::Null);
        self.server.arrived(method, &params, true);
        self.server.transition(method, &params);
        match method {
            "notifications/initialized" => lock(&self.state).ready = true,
            "notifications/cancelled" => {
                let Some(key) = params.get("requestId").map(jsonrpc::id_key) else {
                    return;
                };
                // Dropped outside the lock: their waits end and lock it.
                let (waits, listens) = {
                    let mut state = lock(&self.state);
                    let waits: Vec<_> = state
                        .waiting
                        .extract_if(.., |(k, _, _)| *k == key)
                        .collect();
                    let listens: Vec<_> = state.listens.extract_if(.., |l| l.key == key).collect();
                    (waits, listens)
                };
                drop((waits, listens));
            }
            _ => {}
        }
    }
}

/// Whether a listen stream that accepted `accepted` takes this message.
fn accepts(accepted: &Value, method: &str, params: &Value) -> bool {
    let flag = |name: &str| accepted.get(name) == Some(&json!(true));
    match method {
        "notifications/tools/list_changed" => flag("toolsListChanged"),
        "notifications/prompts/list_changed" => flag("promptsListChanged"),
        "notifications/resources/list_changed" => flag("resourcesListChanged"),
        "notifications/resources/updated" => {
            let uri = params.get("uri");
            accepted
                .get("resourceSubscriptions")
                .and_then(Value::as_array)
                .is_some_and(|uris| uri.is_some_and(|u| uris.contains(u)))
        }
        _ => false,
    }
}
