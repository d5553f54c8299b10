//! The replay engine: answers live client messages from a cassette.
//!
//! It knows nothing about transports. A transport hands it each message with
//! a [`Sink`] saying where server messages go, and the engine writes the
//! recorded answer there: notifications first, in recorded order, with
//! progress tokens rewritten; server-to-client requests with fresh ids,
//! waiting for the client's answer; then the response with the live id.
//! What a transport needs beyond that (a barrier before a response, the
//! recorded timing) it asks for with its sink's [`Delivery`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::Instant;

pub(super) mod lookup;
mod plain;

use super::answers::{ANSWER_MISMATCH, AnswerMismatch};
use super::cross_era::{self, CrossEra, Translation};
use super::report::{self, Miss};
use super::subscriptions::{self, Listeners, Route};
use super::upstream::Upstream;
use crate::cassette::{
    Cassette, Event, EventRef, HttpSituation, Interaction, SseFrame, StreamedEvent,
};
use crate::cassette::{Rules, Strategy};
use crate::json::RawMessage;
use crate::jsonrpc::{self, Kind, codes};
use crate::matching::{Answer, Matcher, Refusal};
use crate::protocol::{self, Era};
use crate::redact::Redactor;
use crate::server::{Handled, Pace, Sink};

/// How to replay.
#[derive(Clone)]
pub struct ReplayConfig {
    /// The cassette's path, named in messages and reports.
    pub path: PathBuf,
    /// Rules to use instead of the cassette's own.
    pub rules: Option<Rules>,
    /// The mode replay runs in, for reports (`replay`, `none`, `once`, ...).
    pub mode: String,
    /// Where requests the cassette cannot answer go (`new-episodes`);
    /// without one they get an error.
    pub upstream: Option<Arc<dyn Upstream>>,
    /// Whether clients of the other protocol era are answered too.
    pub cross_era: CrossEra,
    /// Told of each miss as it happens, for a report that must survive a
    /// client killing the replay (SIGKILL leaves no time to write one at
    /// the end).
    pub on_miss: Option<MissHook>,
    /// Which server process of a test this replay is, named in its miss
    /// reports (`live server process 2 of the test, playing recorded
    /// process 1 of 3`); `None` for a replay of one process.
    pub process: Option<String>,
}

/// See [`ReplayConfig::on_miss`].
pub type MissHook = Arc<dyn Fn(&Miss) + Send + Sync>;

impl ReplayConfig {
    /// Plain replay of the cassette at `path` under its own rules.
    pub fn new(path: &Path) -> Self {
        ReplayConfig {
            path: path.to_owned(),
            rules: None,
            mode: "replay".into(),
            upstream: None,
            cross_era: CrossEra::default(),
            on_miss: None,
            process: None,
        }
    }
}

impl std::fmt::Debug for ReplayConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayConfig")
            .field("path", &self.path)
            .field("rules", &self.rules)
            .field("mode", &self.mode)
            .field("upstream", &self.upstream.is_some())
            .field("cross_era", &self.cross_era)
            .field("on_miss", &self.on_miss.is_some())
            .field("process", &self.process)
            .finish()
    }
}

/// Replays one cassette to one client session ([`Engine::fork`] makes
/// another, for another session).
#[derive(Debug)]
pub struct Engine {
    /// Shared by an engine and its forks.
    cassette: Arc<Cassette>,
    config: ReplayConfig,
    /// Masks live messages the way recording masked the cassette, so they
    /// match it (and no secret reaches a report or log).
    redactor: Redactor,
    state: Mutex<State>,
    /// Every fork made from this engine or its forks (one per client
    /// session over HTTP), for the summary of the whole replay.
    forks: Forks,
    /// The era the client speaks, as far as it has shown (read without a
    /// lock: every request asks).
    client_era: ClientEra,
}

/// The era a client speaks: unknown until it shows one; a handshake says
/// it for sure, so an `initialize` after a refused `server/discover` probe
/// (a client falling back) makes a modern-first client a legacy one.
#[derive(Debug, Default)]
struct ClientEra(std::sync::atomic::AtomicU8);

impl ClientEra {
    const UNKNOWN: u8 = 0;
    const LEGACY: u8 = 1;
    const MODERN: u8 = 2;

    fn get(&self) -> Era {
        match self.0.load(std::sync::atomic::Ordering::Relaxed) {
            Self::LEGACY => Era::Legacy,
            Self::MODERN => Era::Modern,
            _ => Era::Unknown,
        }
    }

    /// Notes what `request` shows; whether the era changed.
    fn observe(&self, request: &Value) -> bool {
        let Some(shown) = cross_era::client_era(request) else {
            return false;
        };
        let handshake = matches!(
            jsonrpc::method(request),
            Some("initialize" | "server/discover")
        );
        if !handshake && self.get() != Era::Unknown {
            return false;
        }
        let value = match shown {
            Era::Legacy => Self::LEGACY,
            Era::Modern => Self::MODERN,
            Era::Unknown => Self::UNKNOWN,
        };
        self.0.swap(value, std::sync::atomic::Ordering::Relaxed) != value
    }
}

/// The forks of one engine: the engine first made owns the list, its forks
/// only point at it (so no fork keeps itself alive).
#[derive(Debug)]
struct Forks {
    /// `Some` in the engine first made, keeping the list alive.
    _owned: Option<Arc<Mutex<Vec<Arc<Engine>>>>>,
    list: std::sync::Weak<Mutex<Vec<Arc<Engine>>>>,
}

impl Forks {
    fn owner() -> Forks {
        let owned = Arc::default();
        Forks {
            list: Arc::downgrade(&owned),
            _owned: Some(owned),
        }
    }

    fn member(&self) -> Forks {
        Forks {
            _owned: None,
            list: self.list.clone(),
        }
    }

    fn add(&self, fork: &Arc<Engine>) {
        if let Some(list) = self.list.upgrade() {
            list.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Arc::clone(fork));
        }
    }

    fn all(&self) -> Vec<Arc<Engine>> {
        self.list
            .upgrade()
            .map(|list| list.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    }
}

/// Misses reported in full on stderr; later ones get a line each.
const FULL_REPORTS: usize = 20;

/// Misses kept for the summary and `--report`; later ones are counted, so
/// a client that misses forever costs bounded memory.
const KEPT_MISSES: usize = 256;

#[derive(Debug)]
struct State {
    matcher: Matcher,
    misses: Vec<Miss>,
    /// Misses past [`KEPT_MISSES`], counted only.
    misses_not_kept: usize,
    /// Server-to-client requests awaiting the client's answer, by id.
    pending: HashMap<String, oneshot::Sender<Value>>,
    /// Requests being played, by live id, so they can be cancelled.
    running: HashMap<String, AbortHandle>,
    next_server_id: u64,
    /// Client answers to replayed sampling or elicitation requests that
    /// differ from the recorded ones.
    answer_mismatches: Vec<AnswerMismatch>,
    /// Live requests answered from an interaction recorded without a
    /// response, by live id, until the client cancels them.
    unanswered: HashMap<String, Unanswered>,
    /// The client's open `subscriptions/listen` streams, where change
    /// notifications go.
    listeners: Listeners,
    /// Interactions something else answered in the place of (a fault):
    /// not unused, though still there to answer.
    stood_in: std::collections::BTreeSet<usize>,
}

/// A live request that replay could not answer: the interaction that
/// matched it was recorded without a response (cancelled, still open when
/// recording stopped, or lost by an older recorder).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unanswered {
    /// The live request's id.
    pub id: Value,
    /// The recorded interaction that matched it.
    pub interaction: usize,
    /// Its method and name (`tools/call slow`).
    pub label: String,
}

/// Why playing an interaction stopped before its end.
enum Stop {
    /// The client can no longer answer a server request.
    ClientGone,
    /// `strict`: the client answered a server request otherwise than
    /// recorded.
    Refused(Box<AnswerMismatch>),
}

impl State {
    fn new(matcher: Matcher) -> Self {
        State {
            matcher,
            misses: Vec::new(),
            misses_not_kept: 0,
            pending: HashMap::new(),
            running: HashMap::new(),
            next_server_id: 0,
            answer_mismatches: Vec::new(),
            unanswered: HashMap::new(),
            listeners: Listeners::default(),
            stood_in: std::collections::BTreeSet::new(),
        }
    }
}

/// What happened during a replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Requests nothing recorded could answer (the first few hundred).
    pub misses: Vec<Miss>,
    /// Misses beyond those kept in `misses`.
    pub misses_not_kept: usize,
    /// Positions of recorded interactions that were never replayed.
    pub unused: Vec<usize>,
    /// Hand-written cases that answered nothing.
    pub unused_cases: Vec<usize>,
    /// Client answers to replayed sampling or elicitation requests that
    /// differ from the recording.
    pub answer_mismatches: Vec<AnswerMismatch>,
    /// Requests that got no answer because the interaction that matched
    /// them has none, and that the client never cancelled.
    pub unanswered: Vec<Unanswered>,
}

impl Summary {
    /// One summary for replays of the same cassette (an engine and its
    /// forks): every miss, in the order given, and what none of them used.
    pub fn merge(summaries: impl IntoIterator<Item = Summary>) -> Summary {
        let mut summaries = summaries.into_iter();
        let Some(mut merged) = summaries.next() else {
            return Summary::default();
        };
        for summary in summaries {
            merged.misses.extend(summary.misses);
            merged.misses_not_kept += summary.misses_not_kept;
            merged.answer_mismatches.extend(summary.answer_mismatches);
            merged.unanswered.extend(summary.unanswered);
            merged.unused.retain(|p| summary.unused.contains(p));
            merged
                .unused_cases
                .retain(|c| summary.unused_cases.contains(c));
        }
        merged
    }
}

impl Engine {
    /// An engine for `cassette` under its own rules; `path` names it in
    /// messages.
    pub fn new(cassette: Cassette, path: &Path) -> Arc<Self> {
        Self::with_config(cassette, ReplayConfig::new(path))
    }

    /// An engine for `cassette` as `config` says.
    pub fn with_config(cassette: Cassette, mut config: ReplayConfig) -> Arc<Self> {
        let rules = config
            .rules
            .take()
            .unwrap_or_else(|| cassette.rules.clone());
        let redactor = Redactor::new(&rules.redaction()).unwrap_or_else(|e| {
            let e = crate::error_chain::chain(&e);
            tracing::warn!("{e}; masking token shapes only");
            Redactor::defaults()
        });
        let matcher = Matcher::new(&cassette, rules);
        // Reports and fixes repeat the recorded command or URL.
        let mut cassette = cassette;
        crate::cassette::mask_transport(&mut cassette.transport, &redactor);
        Arc::new(Engine {
            cassette: Arc::new(cassette),
            config,
            redactor,
            state: Mutex::new(State::new(matcher)),
            forks: Forks::owner(),
            client_era: ClientEra::default(),
        })
    }

    /// A fresh replay of the same cassette under the same rules, as a
    /// newly started replay would begin: nothing answered yet, no misses.
    /// For a new client session that must see the cassette from the top.
    pub fn fork(&self) -> Arc<Self> {
        let matcher = self.state().matcher.fresh();
        let fork = Arc::new(Engine {
            cassette: Arc::clone(&self.cassette),
            config: self.config.clone(),
            redactor: self.redactor.clone(),
            state: Mutex::new(State::new(matcher)),
            forks: self.forks.member(),
            client_era: ClientEra::default(),
        });
        self.forks.add(&fork);
        fork
    }

    /// The cassette being replayed.
    pub fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The redactor live messages are masked with before matching.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// `message` as recording would have stored it.
    fn masked<'a>(&self, message: &'a Value) -> std::borrow::Cow<'a, Value> {
        self.redactor.masked(message)
    }

    /// The rules in force.
    pub fn rules(&self) -> Rules {
        self.state().matcher.rules().clone()
    }

    /// Handles one JSON-RPC message.
    pub fn handle_message(self: &Arc<Self>, message: Value, sink: &Sink, tasks: &mut JoinSet<()>) {
        self.handle_message_traced(message, sink, tasks);
    }

    /// Handles one JSON-RPC message like [`Engine::handle_message`], and
    /// says which recorded interaction answers it, if one does, so that a
    /// transport can replay how that answer travelled (HTTP status, SSE
    /// framing). Matching happens before this returns.
    pub fn handle_message_traced(
        self: &Arc<Self>,
        message: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> Option<usize> {
        self.handle_message_in(message, sink, tasks, &HttpSituation::default())
            .interaction()
    }

    /// Handles a message that arrived over HTTP in `situation`. In an
    /// out-of-the-ordinary situation (a stale session, a foreign origin,
    /// mismatched headers) only a recording made in the same situation
    /// answers, faithfully, whatever the recorded server did; otherwise
    /// nothing is sent and [`Handled::NotRecorded`] lets the transport answer
    /// as the specification says.
    pub fn handle_message_in(
        self: &Arc<Self>,
        message: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: &HttpSituation,
    ) -> Handled {
        let tag = situation.tag();
        match jsonrpc::classify(&message) {
            Ok(Kind::Request) => self.request(message, sink, tasks, tag.as_deref()),
            Ok(Kind::Notification) if tag.is_some() => Handled::NotRecorded,
            Ok(Kind::Notification) => Handled::Answered(self.notification(&message, sink, tasks)),
            Ok(Kind::Response) => {
                self.client_response(message);
                Handled::Answered(None)
            }
            Err(invalid) => {
                sink.respond(&crate::server::invalid_request(&message, &invalid));
                Handled::Answered(None)
            }
        }
    }

    /// Answers a request. Recorded answers come first, so replay is faithful
    /// to the recorded server even where it deviated from the specification;
    /// then the fallbacks: handshakes and `ping` are always answered, version
    /// errors, hand-written cases, the upstream, and finally a miss.
    fn request(
        self: &Arc<Self>,
        request: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
        situation: Option<&str>,
    ) -> Handled {
        let id = jsonrpc::id(&request).cloned().unwrap_or(Value::Null);
        let method = jsonrpc::method(&request).unwrap_or_default();
        if method == "initialize"
            && let Some(upstream) = &self.config.upstream
        {
            upstream.handshake(&request);
        }
        let translation = self.observe_client(&request);
        if translation == Translation::ToModern
            && let Some(position) = cross_era::retry_position(&request)
            && position < self.cassette.interactions.len()
        {
            self.finish_retry(position, request, sink);
            return Handled::Answered(Some(position));
        }
        let mut masked = self.masked(&request);
        if translation == Translation::ToLegacy {
            let version = self.cassette.protocol.version.as_deref();
            masked = std::borrow::Cow::Owned(cross_era::declaring(&masked, version));
        }
        // A statement of its own, so the lock is released here.
        let answer = self
            .state()
            .matcher
            .request(&self.cassette, &masked, situation);
        let refusal = match answer {
            Ok(Answer::Recorded(position) | Answer::Repeated(position)) => {
                return Handled::Answered(Some(self.play_request(position, request, sink, tasks)));
            }
            Ok(Answer::Case(case)) => {
                self.answer_case(case, id, sink);
                return Handled::Answered(None);
            }
            Err(refusal) => refusal,
        };
        if situation.is_some() {
            return Handled::NotRecorded;
        }
        if let Some(error) = self.version_error(&request) {
            sink.respond(&error.with_id(id));
            return Handled::Answered(None);
        }
        match method {
            "ping" => {
                sink.respond(&jsonrpc::result_response(id, serde_json::json!({})));
                return Handled::Answered(None);
            }
            "initialize" | "server/discover" => {
                if let Some(position) = self.handshake(method) {
                    self.state().matcher.mark_used(position);
                    return Handled::Answered(Some(
                        self.play_request(position, request, sink, tasks),
                    ));
                }
                if let Some(answered) = self.translate_handshake(method, &request, sink) {
                    return Handled::Answered(Some(answered));
                }
                if method == "server/discover" && self.cassette.protocol.era != Era::Modern {
                    if let Some(mismatch) =
                        super::era::EraMismatch::detect(&self.cassette, &request)
                    {
                        tracing::info!(
                            "a client probed server/discover; this {} cassette answers -32601 as a legacy server does. A client that cannot fall back to initialize: {}",
                            mismatch.cassette_era,
                            mismatch.advice()
                        );
                    }
                    // What a legacy server says to a modern probe.
                    let text = format!("Method not found: {method}");
                    sink.respond(&jsonrpc::error_response(
                        id,
                        codes::METHOD_NOT_FOUND,
                        &text,
                        None,
                    ));
                    return Handled::Answered(None);
                }
            }
            _ => {}
        }
        if self.config.upstream.is_none() && self.subscribe_across_eras(translation, &request, sink)
        {
            return Handled::Answered(None);
        }
        if self.config.upstream.is_none()
            && let Some(answer) = cross_era::unrecorded(translation, method, &id)
        {
            sink.respond(&answer);
            return Handled::Answered(None);
        }
        match &self.config.upstream {
            Some(upstream) => {
                tasks.spawn(upstream.forward(request, sink.clone()));
            }
            None => self.miss(&masked, refusal, sink),
        }
        Handled::Answered(None)
    }

    /// The other era's way to subscribe, answered from this recording (see
    /// [`subscriptions`]): a modern client's `subscriptions/listen` on a
    /// legacy cassette opens a stream fed by the recorded change
    /// notifications; a legacy client's `resources/subscribe` and
    /// `resources/unsubscribe` on a modern one are accepted and decide
    /// which `resources/updated` it gets. Whether it answered.
    fn subscribe_across_eras(
        &self,
        translation: Translation,
        request: &Value,
        sink: &Sink,
    ) -> bool {
        let method = jsonrpc::method(request).unwrap_or_default();
        match (translation, method) {
            (Translation::ToModern, "subscriptions/listen") => {
                let capabilities = self
                    .cassette
                    .server
                    .as_ref()
                    .map_or(&Value::Null, |server| &server.capabilities);
                let ack = self
                    .state()
                    .listeners
                    .open_translated(request, capabilities, sink);
                sink.event(&ack);
                true
            }
            (Translation::ToLegacy, "resources/subscribe" | "resources/unsubscribe") => {
                let subscribe = method == "resources/subscribe";
                self.state().listeners.subscription(request, subscribe);
                let id = jsonrpc::id(request).cloned().unwrap_or(Value::Null);
                sink.respond(&jsonrpc::result_response(id, serde_json::json!({})));
                true
            }
            _ => false,
        }
    }

    /// Notes the era `request` shows the client speaks; how this session's
    /// answers are translated from now on (said once on stderr when they
    /// are).
    fn observe_client(&self, request: &Value) -> Translation {
        if self.config.cross_era == CrossEra::Off {
            return Translation::None;
        }
        let cassette_era = self.cassette.protocol.era;
        if self.client_era.observe(request)
            && let era = self.client_era.get()
            && Translation::between(cassette_era, era) != Translation::None
        {
            tracing::info!(
                "this {} cassette answers a {} client: handshakes and results are translated (docs/cassette-format.md, \"Cross-era replay\")",
                era_name(cassette_era),
                era_name(era)
            );
        }
        self.translation(request)
    }

    /// How the answer to `request` is translated: by the era the request
    /// declares in `_meta`, if it does (a modern request is modern whatever
    /// else the session sent, a conformance suite's `initialize` probe
    /// included), else by the era the session's handshake showed.
    fn translation(&self, request: &Value) -> Translation {
        if self.config.cross_era == CrossEra::Off {
            return Translation::None;
        }
        let client = match protocol::declared_version(request) {
            Some(version) => Era::of_version(version),
            None => self.client_era.get(),
        };
        Translation::between(self.cassette.protocol.era, client)
    }

    /// The other era's handshake, answered from this cassette's own:
    /// `initialize` from a recorded `server/discover`, `server/discover`
    /// from a recorded `initialize`. Returns the interaction it came from.
    fn translate_handshake(&self, method: &str, request: &Value, sink: &Sink) -> Option<usize> {
        if self.config.cross_era == CrossEra::Off {
            return None;
        }
        let id = jsonrpc::id(request).cloned().unwrap_or(Value::Null);
        let (recorded, result): (usize, Value) = match (method, self.cassette.protocol.era) {
            ("initialize", Era::Modern) => {
                let position = self.handshake("server/discover")?;
                let discover = self.recorded_result(position)?;
                let asked = protocol::requested_version(request);
                (position, cross_era::initialize_result(discover, asked))
            }
            ("server/discover", Era::Legacy) => {
                let position = self.handshake("initialize")?;
                (
                    position,
                    cross_era::discover_result(self.recorded_result(position)?),
                )
            }
            _ => return None,
        };
        self.state().matcher.mark_used(recorded);
        sink.respond(&jsonrpc::result_response(id, result));
        Some(recorded)
    }

    /// The result interaction `position` answered with.
    fn recorded_result(&self, position: usize) -> Option<&Value> {
        self.cassette.interactions[position]
            .response
            .as_ref()?
            .get("result")
    }

    /// A modern client's retry of a legacy interaction whose server asked
    /// the client for something: its answers (`inputResponses`) are
    /// compared with the recorded ones, then the rest of the recorded
    /// answer is played.
    fn finish_retry(&self, position: usize, retry: Value, sink: &Sink) {
        self.state().matcher.retake(&self.cassette, position);
        let interaction = &self.cassette.interactions[position];
        let asked = cross_era::server_requests(interaction);
        for (index, (server_request, recorded)) in asked.iter().enumerate() {
            let key = cross_era::input_key(index);
            let live = cross_era::input_response(&retry, &key).unwrap_or(Value::Null);
            let live = self.masked(&live).into_owned();
            if let Some(mismatch) =
                AnswerMismatch::compare(Some(position), server_request, *recorded, &live)
                && self.note_mismatch(&mismatch)
            {
                refuse(sink, &retry, &mismatch);
                return;
            }
        }
        let tokens = Tokens::new(interaction, &retry, Translation::ToModern);
        let first_request = first_server_request(&interaction.during);
        self.send_notifications(
            &interaction.during[first_request..],
            Origin::During(first_request),
            &tokens,
            sink,
        );
        if let Some(response) = &interaction.response {
            let response = Translation::ToModern.response(interaction.client.message(), response);
            sink.respond(&WithId(&response, jsonrpc::id(&retry)));
        }
        self.send_notifications(&interaction.after, Origin::After(0), &tokens, sink);
    }

    /// Plays a recorded answer to a request; returns its position.
    fn play_request(
        self: &Arc<Self>,
        position: usize,
        request: Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> usize {
        if jsonrpc::method(&request) == Some("initialize") {
            self.note_version_downgrade(&request, position);
        }
        self.start(position, request, sink, tasks);
        position
    }

    /// Answers from a hand-written case.
    fn answer_case(&self, case: usize, id: Value, sink: &Sink) {
        let rules = self.state().matcher.rules().clone();
        let case = &rules.cases[case];
        let response = match (&case.result, &case.error) {
            (Some(result), _) => jsonrpc::result_response(id, result.clone()),
            (None, Some(error)) => serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}),
            (None, None) => {
                jsonrpc::error_response(id, codes::INVALID_REQUEST, "case without an answer", None)
            }
        };
        sink.respond(&response);
    }

    /// Plays interaction `position` for the live client message: inline when
    /// it needs nothing from the client and no waiting, else as a task that
    /// a `notifications/cancelled` naming the live request can abort.
    fn start(self: &Arc<Self>, position: usize, live: Value, sink: &Sink, tasks: &mut JoinSet<()>) {
        let interaction = &self.cassette.interactions[position];
        // A listen stream is open until the client closes it: recorded
        // without a response is how it ends, not a lost answer. Nor is an
        // HTTP refusal (a 403 page for a foreign origin): that is the answer.
        let stream = interaction.method() == "subscriptions/listen";
        let refused = interaction
            .http
            .as_ref()
            .is_some_and(|http| http.status >= 400 || http.body.is_some());
        if interaction.response.is_none()
            && !stream
            && !refused
            && let Some(id) = interaction.request().and(jsonrpc::id(&live))
        {
            self.state().unanswered.insert(
                jsonrpc::id_key(id),
                Unanswered {
                    id: id.clone(),
                    interaction: position,
                    label: interaction.label(),
                },
            );
        }
        let translation = self.translation(&live);
        if stream
            && translation != Translation::ToLegacy
            && let Some(recorded) = interaction.request().and_then(jsonrpc::id)
        {
            // Before its acknowledgement plays, which goes down it.
            self.state().listeners.open_recorded(recorded, &live, sink);
        }
        if translation == Translation::ToModern && needs_client(&interaction.during) {
            // The server asked the client for something: a modern client
            // is asked in an `input_required` result, and retries.
            let tokens = Tokens::new(interaction, &live, translation);
            let first_request = first_server_request(&interaction.during);
            self.send_notifications(
                &interaction.during[..first_request],
                Origin::During(0),
                &tokens,
                sink,
            );
            let requests = cross_era::server_requests(interaction);
            let result = cross_era::input_required(&requests, position);
            let id = jsonrpc::id(&live).cloned().unwrap_or(Value::Null);
            sink.respond(&jsonrpc::result_response(id, result));
            // Only the retry completes it: asked again, it asks again.
            self.state().matcher.give_back(&self.cassette, position);
            return;
        }
        let asks_client = translation == Translation::ToLegacy
            && interaction
                .response
                .as_deref()
                .is_some_and(cross_era::is_input_required);
        let paced = sink.delivery.pace == Pace::Recorded && !interaction.delays_ms.is_empty();
        if !paced
            && !asks_client
            && !needs_client(&interaction.during)
            && !needs_client(&interaction.after)
        {
            self.play_now(interaction, &live, sink, translation);
            return;
        }
        let asked = Instant::now();
        let id = jsonrpc::id(&live).map(jsonrpc::id_key);
        let engine = Arc::clone(self);
        let sink = sink.clone();
        // Holding the lock while spawning keeps the task from finishing (and
        // deregistering) before it is registered.
        let mut state = self.state();
        let task_id = id.clone();
        let handle = tasks.spawn(async move {
            if asks_client {
                engine.play_input_required(position, &live, &sink).await;
            } else {
                engine.play(position, &live, &sink, asked).await;
            }
            if let Some(id) = task_id {
                engine.state().running.remove(&id);
            }
        });
        if let Some(id) = id {
            state.running.insert(id, handle);
        }
    }

    /// Sends the server messages the recording opened with, before any
    /// client message.
    pub fn play_opening(self: &Arc<Self>, sink: &Sink, tasks: &mut JoinSet<()>) {
        let opening = &self.cassette.opening;
        if !needs_client(opening) {
            self.send_notifications(opening, Origin::Opening, &Tokens::NONE, sink);
            return;
        }
        let engine = Arc::clone(self);
        let sink = sink.clone();
        tasks.spawn(async move {
            let _ = engine
                .play_events(
                    None,
                    &engine.cassette.opening,
                    Origin::Opening,
                    &Tokens::NONE,
                    &sink,
                )
                .await;
        });
    }

    /// Handshakes are answered from the first recording of them, however
    /// often they are asked and whatever clientInfo or capabilities say.
    fn handshake(&self, method: &str) -> Option<usize> {
        self.cassette.interactions.iter().position(|i| {
            i.method() == method && i.response.as_ref().is_some_and(|r| r.has_member("result"))
        })
    }

    /// Version negotiation: a replay supports exactly the recorded version,
    /// the only one its answers are valid for, so that is what it answers
    /// with (the spec lets a server answer with another version it supports).
    fn note_version_downgrade(&self, request: &Value, position: usize) {
        let recorded = self.cassette.interactions[position]
            .response
            .as_ref()
            .and_then(|r| r.pointer("/result/protocolVersion"))
            .and_then(Value::as_str);
        if let (Some(asked), Some(recorded)) = (protocol::requested_version(request), recorded)
            && asked != recorded
        {
            tracing::info!(
                "client asked for protocol {asked}; answering with the recorded {recorded}"
            );
        }
    }

    /// A modern request naming a version the recorded server did not offer.
    fn version_error(&self, request: &Value) -> Option<ErrorReply> {
        let declared = protocol::declared_version(request)?;
        if self.cassette.protocol.era != Era::Modern {
            return None;
        }
        let supported: Vec<&str> = self
            .handshake("server/discover")
            .and_then(|p| self.cassette.interactions[p].response.as_ref())
            .and_then(|r| r.pointer("/result/supportedVersions"))
            .and_then(Value::as_array)
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_else(|| {
                self.cassette
                    .protocol
                    .version
                    .as_deref()
                    .into_iter()
                    .collect()
            });
        if supported.is_empty() || supported.contains(&declared) {
            return None;
        }
        Some(ErrorReply {
            code: codes::UNSUPPORTED_PROTOCOL_VERSION,
            message: format!("Unsupported protocol version: {declared}"),
            data: Some(serde_json::json!({"supported": supported, "requested": declared})),
        })
    }

    fn miss(&self, request: &Value, refusal: Refusal, sink: &Sink) {
        let rules = self.rules();
        let context = report::Context {
            path: &self.config.path,
            mode: &self.config.mode,
            rules: &rules,
        };
        let translates = self.translation(request) != Translation::None;
        let mut miss = Miss::build(&self.cassette, request, refusal, context, !translates);
        miss.process = self.config.process.clone();
        let seen = {
            let state = self.state();
            state.misses.len() + state.misses_not_kept
        };
        // A cassette recorded under other rules (or by an older version)
        // may still hold a secret: nothing shown of it goes unmasked.
        if seen < FULL_REPORTS {
            eprint!("{}", self.redactor.redact_text(&miss.to_string()));
        } else {
            eprintln!(
                "mcpcassette: miss #{}: {} (full reports stop after {FULL_REPORTS}; --report keeps {KEPT_MISSES})",
                seen + 1,
                self.redactor.redact_text(&miss.message())
            );
        }
        let id = jsonrpc::id(request).cloned().unwrap_or(Value::Null);
        let mut data = miss.data();
        self.redactor.redact_document(&mut data);
        sink.respond(&jsonrpc::error_response(
            id,
            miss.code(),
            &self.redactor.redact_text(&miss.message()),
            Some(data),
        ));
        if let Some(hook) = &self.config.on_miss {
            hook(&miss);
        }
        let mut state = self.state();
        if state.misses.len() < KEPT_MISSES {
            state.misses.push(miss);
        } else {
            state.misses_not_kept += 1;
        }
    }

    /// Takes a notification; returns the recorded interaction it matched.
    fn notification(
        self: &Arc<Self>,
        notification: &Value,
        sink: &Sink,
        tasks: &mut JoinSet<()>,
    ) -> Option<usize> {
        if jsonrpc::method(notification) == Some("notifications/cancelled") {
            let id = notification
                .pointer("/params/requestId")
                .map(jsonrpc::id_key);
            if let Some(id) = id {
                let mut state = self.state();
                if let Some(live) = notification.pointer("/params/requestId") {
                    state.listeners.close(live);
                }
                state.unanswered.remove(&id);
                if let Some(handle) = state.running.remove(&id) {
                    handle.abort();
                }
            }
        }
        if let Some(upstream) = &self.config.upstream {
            upstream.notify(notification);
        }
        let masked = self.masked(notification);
        let position = self.state().matcher.notification(&self.cassette, &masked);
        if let Some(position) = position {
            self.start(position, notification.clone(), sink, tasks);
        }
        position
    }

    fn client_response(&self, response: Value) {
        let Some(id) = jsonrpc::id(&response).map(jsonrpc::id_key) else {
            return;
        };
        let waiter = self.state().pending.remove(&id);
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(response);
            }
            None => {
                let upstream = self.config.upstream.as_ref();
                if !upstream.is_some_and(|u| u.client_response(&response)) {
                    tracing::warn!(id, "client answered a request replay never sent");
                }
            }
        }
    }

    /// Plays an interaction that needs answers from the client or keeps its
    /// recorded timing; `asked` is when the live message arrived.
    async fn play(&self, position: usize, live: &Value, sink: &Sink, asked: Instant) {
        let interaction = &self.cassette.interactions[position];
        let tokens = Tokens::new(interaction, live, self.translation(live));
        let timing = Timing::new(interaction, sink, asked);
        // Whether notifications went out that the client may not have read:
        // its answer to a server request shows it read what came before.
        let mut unread = false;
        for (index, event) in interaction.during.iter().enumerate() {
            timing.wait(index).await;
            let at = Some(EventRef::During(index));
            match self
                .play_event(Some(position), event, at, &tokens, sink)
                .await
            {
                Ok(Played::Notified) => unread = true,
                Ok(Played::Dropped) => {}
                Ok(Played::Answered) => unread = false,
                Err(Stop::ClientGone) => return,
                Err(Stop::Refused(mismatch)) => {
                    refuse(sink, live, &mismatch);
                    return;
                }
            }
        }
        if let Some(response) = &interaction.response {
            timing.wait(interaction.during.len()).await;
            if unread {
                sink.barrier();
            }
            let response = self
                .translation(live)
                .response(interaction.client.message(), response);
            sink.respond(&WithId(&response, jsonrpc::id(live)));
        }
        let _ = self
            .play_events(
                Some(position),
                &interaction.after,
                Origin::After(0),
                &tokens,
                sink,
            )
            .await;
    }

    /// Plays a modern interaction answered with `input_required` to a
    /// legacy client: each input request goes to the client as the server
    /// request it stands for, and its answer is compared with the one the
    /// recorded retry carried; then the recorded retry's answer is played
    /// (which may ask again), until the final one.
    async fn play_input_required(&self, position: usize, live: &Value, sink: &Sink) {
        let id = jsonrpc::id(live);
        let mut current = position;
        loop {
            let interaction = &self.cassette.interactions[current];
            let tokens = Tokens::new(interaction, live, Translation::ToLegacy);
            if self
                .play_events(
                    Some(current),
                    &interaction.during,
                    Origin::During(0),
                    &tokens,
                    sink,
                )
                .await
                .is_err()
            {
                return;
            }
            let Some(response) = &interaction.response else {
                return;
            };
            if !cross_era::is_input_required(response) {
                let response =
                    Translation::ToLegacy.response(interaction.client.message(), response);
                sink.respond(&WithId(&response, id));
                let _ = self
                    .play_events(
                        Some(current),
                        &interaction.after,
                        Origin::After(0),
                        &tokens,
                        sink,
                    )
                    .await;
                return;
            }
            let Some(retry) = self.cassette.recorded_retry(current) else {
                let message = format!(
                    "mcpcassette: interaction #{current} answered input_required, and the cassette has no retry of it to answer a legacy client with"
                );
                let id = id.cloned().unwrap_or(Value::Null);
                sink.respond(&jsonrpc::error_response(id, NO_RETRY, &message, None));
                return;
            };
            let retry_request = self.cassette.interactions[retry].request();
            for (key, server_request) in cross_era::input_requests(&response["result"]) {
                let recorded = retry_request.and_then(|r| cross_era::input_response(r, &key));
                let event = Event::ServerRequest {
                    server_request: server_request.into(),
                    client_response: recorded.map(RawMessage::from),
                };
                match self
                    .play_event(Some(current), &event, None, &tokens, sink)
                    .await
                {
                    Ok(_) => {}
                    Err(Stop::ClientGone) => return,
                    Err(Stop::Refused(mismatch)) => {
                        refuse(sink, live, &mismatch);
                        return;
                    }
                }
            }
            self.state().matcher.mark_used(retry);
            current = retry;
        }
    }

    /// Sends events in order, until one stops the play.
    async fn play_events(
        &self,
        position: Option<usize>,
        events: &[Event],
        origin: Origin,
        tokens: &Tokens<'_>,
        sink: &Sink,
    ) -> Result<(), Stop> {
        for (index, event) in events.iter().enumerate() {
            self.play_event(position, event, origin.at(index), tokens, sink)
                .await?;
        }
        Ok(())
    }

    /// Sends one event; a server request waits for the client's answer,
    /// which is compared with the recorded one.
    async fn play_event(
        &self,
        position: Option<usize>,
        event: &Event,
        at: Option<EventRef>,
        tokens: &Tokens<'_>,
        sink: &Sink,
    ) -> Result<Played, Stop> {
        match event {
            Event::Notification { notification } => {
                let sent = tokens
                    .rewrite(notification)
                    .is_some_and(|notification| self.notify(notification, at, tokens, sink));
                Ok(if sent {
                    Played::Notified
                } else {
                    Played::Dropped
                })
            }
            Event::ServerRequest {
                server_request,
                client_response,
            } => {
                let (tx, rx) = oneshot::channel();
                let id = {
                    let mut state = self.state();
                    let id = state.next_server_id;
                    state.next_server_id += 1;
                    state.pending.insert(jsonrpc::id_key(&id.into()), tx);
                    id
                };
                let request = WithId(server_request, Some(&id.into()));
                match tokens.streamed(at) {
                    Some(frame) => sink.session_event(&request, frame),
                    None => sink.event(&request),
                }
                let answer = rx.await.map_err(|_| Stop::ClientGone)?;
                let live = self.masked(&answer);
                let Some(mismatch) = AnswerMismatch::compare(
                    position,
                    server_request,
                    client_response.as_deref(),
                    &live,
                ) else {
                    return Ok(Played::Answered);
                };
                if self.note_mismatch(&mismatch) {
                    return Err(Stop::Refused(Box::new(mismatch)));
                }
                Ok(Played::Answered)
            }
        }
    }

    /// Plays an interaction that needs nothing from the client, its answer
    /// shaped for the client's era.
    fn play_now(
        &self,
        interaction: &Interaction,
        live: &Value,
        sink: &Sink,
        translation: Translation,
    ) {
        let tokens = Tokens::new(interaction, live, translation);
        let sent = self.send_notifications(&interaction.during, Origin::During(0), &tokens, sink);
        if let Some(response) = &interaction.response {
            if sent > 0 {
                sink.barrier();
            }
            // The common case writes the recorded text, with the live id.
            let raw = (translation == Translation::None)
                .then(|| response.text_with_id(jsonrpc::id(live)?))
                .flatten();
            match raw {
                Some(text) => sink.respond_encoded(text.into_bytes()),
                None => {
                    let response = translation.response(interaction.client.message(), response);
                    sink.respond(&WithId(&response, jsonrpc::id(live)));
                }
            }
        }
        self.send_notifications(&interaction.after, Origin::After(0), &tokens, sink);
    }

    /// Sends the notifications among `events` (callers check there are no
    /// server requests); returns how many went to `sink`.
    fn send_notifications(
        &self,
        events: &[Event],
        origin: Origin,
        tokens: &Tokens<'_>,
        sink: &Sink,
    ) -> usize {
        let mut sent = 0;
        for (index, event) in events.iter().enumerate() {
            if let Event::Notification { notification } = event
                && let Some(notification) = tokens.rewrite(notification)
                && self.notify(notification, origin.at(index), tokens, sink)
            {
                sent += 1;
            }
        }
        sent
    }

    /// Sends a recorded notification (the message `at` of its interaction),
    /// rewritten for the live request, where it goes: down the session's
    /// GET stream when it travelled there, framed as it was; a change
    /// notification to the listen streams that asked for it (see
    /// [`subscriptions`]); anything else to `sink`. Whether it went to
    /// `sink`.
    fn notify(
        &self,
        notification: Value,
        at: Option<EventRef>,
        tokens: &Tokens<'_>,
        sink: &Sink,
    ) -> bool {
        if let Some(frame) = tokens.streamed(at)
            && sink.has_session()
        {
            sink.session_event(&notification, frame);
            return false;
        }
        if !subscriptions::concerns(&notification) {
            sink.event(&notification);
            return true;
        }
        let route = self
            .state()
            .listeners
            .route(&notification, tokens.translation);
        match route {
            Route::Here(notification) => {
                sink.event(&notification);
                true
            }
            Route::Streams(streams) => {
                for (stream, notification) in streams {
                    stream.event(&notification);
                }
                false
            }
            Route::Dropped => false,
        }
    }

    /// Reports a client answer unlike the recorded one (stderr, the
    /// summary); whether the strategy (`strict`) refuses it.
    fn note_mismatch(&self, mismatch: &AnswerMismatch) -> bool {
        eprint!("{mismatch}");
        let mut state = self.state();
        state.answer_mismatches.push(mismatch.clone());
        state.matcher.rules().strategy == Strategy::Strict
    }

    /// Forgets server-to-client requests still waiting: the client has gone,
    /// so their plays end.
    pub fn client_gone(&self) {
        self.state().pending.clear();
        if let Some(upstream) = &self.config.upstream {
            upstream.client_gone();
        }
    }

    /// What went unmatched and what was never used.
    pub fn summary(&self) -> Summary {
        let state = self.state();
        Summary {
            misses: state.misses.clone(),
            misses_not_kept: state.misses_not_kept,
            unused: {
                let mut unused = state.matcher.unused(&self.cassette);
                unused.retain(|p| !state.stood_in.contains(p));
                unused
            },
            unused_cases: state.matcher.unused_cases(),
            answer_mismatches: state.answer_mismatches.clone(),
            unanswered: {
                let mut unanswered: Vec<Unanswered> = state.unanswered.values().cloned().collect();
                unanswered.sort_by_key(|u| u.interaction);
                unanswered
            },
        }
    }

    /// What the replay did over every client session: this engine's
    /// summary merged with those of every fork made from it (see
    /// [`Summary::merge`]).
    pub fn summary_of_every_session(&self) -> Summary {
        let forks = self.forks.all();
        Summary::merge(std::iter::once(self.summary()).chain(forks.iter().map(|f| f.summary())))
    }

    /// The configuration replay runs with.
    pub fn config(&self) -> &ReplayConfig {
        &self.config
    }
}

/// What sending one event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Played {
    /// A notification went out.
    Notified,
    /// A notification was left out (progress nobody asked for).
    Dropped,
    /// A server request went out and the client answered it.
    Answered,
}

/// Answers `live` with the error `strict` gives a client answer unlike the
/// recorded one.
fn refuse(sink: &Sink, live: &Value, mismatch: &AnswerMismatch) {
    let id = jsonrpc::id(live).cloned().unwrap_or(Value::Null);
    let data = serde_json::to_value(mismatch).ok();
    sink.respond(&jsonrpc::error_response(
        id,
        ANSWER_MISMATCH,
        &mismatch.message(),
        data,
    ));
}

/// Where the first server request is among `events` (their length if
/// there is none).
fn first_server_request(events: &[Event]) -> usize {
    events
        .iter()
        .position(|e| matches!(e, Event::ServerRequest { .. }))
        .unwrap_or(events.len())
}

/// `legacy` or `modern`, for messages.
fn era_name(era: Era) -> &'static str {
    match era {
        Era::Modern => "modern (2026-07-28)",
        _ => "legacy-era",
    }
}

/// The error of a cross-era play that cannot go on: a modern
/// `input_required` answer without the recorded retry a legacy client's
/// answers would feed (in the range MCP leaves to implementations).
const NO_RETRY: i64 = -32005;

/// Where a run of events sits in its interaction, so that each one's
/// place (for its GET-stream framing) is known.
#[derive(Debug, Clone, Copy)]
enum Origin {
    /// `during`, from this index on.
    During(usize),
    /// `after`, from this index on.
    After(usize),
    /// Before any client message.
    Opening,
}

impl Origin {
    fn at(self, index: usize) -> Option<EventRef> {
        match self {
            Origin::During(start) => Some(EventRef::During(start + index)),
            Origin::After(start) => Some(EventRef::After(start + index)),
            Origin::Opening => None,
        }
    }
}

/// When each message of an interaction is due under `--pace recorded`.
struct Timing<'a> {
    asked: Instant,
    /// Empty when the sink goes fast or nothing was timed.
    delays: &'a [u64],
}

impl<'a> Timing<'a> {
    fn new(interaction: &'a Interaction, sink: &Sink, asked: Instant) -> Self {
        let paced = sink.delivery.pace == Pace::Recorded;
        Timing {
            asked,
            delays: if paced { &interaction.delays_ms } else { &[] },
        }
    }

    /// Waits until message `index` (of `during`, then the response) is due,
    /// as long after the live message as it came after the recorded one.
    async fn wait(&self, index: usize) {
        if let Some(&delay) = self.delays.get(index) {
            tokio::time::sleep_until(self.asked + Duration::from_millis(delay)).await;
        }
    }
}

/// Whether playing `events` needs answers from the client.
fn needs_client(events: &[Event]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::ServerRequest { .. }))
}

/// The recorded and live progress tokens of one request, and which of
/// its recorded log messages the client gets.
struct Tokens<'a> {
    recorded: Option<&'a Value>,
    live: Option<&'a Value>,
    logs: cross_era::LogFloor,
    /// How the client's answers are translated, which decides where
    /// change notifications go.
    translation: Translation,
    /// The interaction's messages that travelled on the GET stream.
    streamed: &'a [StreamedEvent],
}

impl<'a> Tokens<'a> {
    /// For server messages that belong to no request.
    const NONE: Tokens<'static> = Tokens {
        recorded: None,
        live: None,
        logs: cross_era::LogFloor::All,
        translation: Translation::None,
        streamed: &[],
    };

    fn new(interaction: &'a Interaction, live: &'a Value, translation: Translation) -> Self {
        Tokens {
            // Only server messages carry a token to rewrite: most
            // interactions have none, and their request stays unparsed.
            recorded: (!interaction.during.is_empty() || !interaction.after.is_empty())
                .then(|| interaction.request().and_then(jsonrpc::progress_token))
                .flatten(),
            live: jsonrpc::progress_token(live),
            logs: cross_era::LogFloor::of(translation, live),
            translation,
            streamed: interaction
                .http
                .as_ref()
                .map_or(&[], |http| http.get_stream.as_slice()),
        }
    }

    /// The GET-stream framing of the interaction's message `at`, if it
    /// travelled there.
    fn streamed(&self, at: Option<EventRef>) -> Option<&'a SseFrame> {
        let at = at?;
        self.streamed
            .iter()
            .find(|streamed| streamed.event == at)
            .map(|streamed| &streamed.frame)
    }

    /// Progress for the recorded token is re-addressed to the live one, or
    /// dropped when the live request asked for no progress; a log message
    /// the client did not ask for is dropped.
    fn rewrite(&self, notification: &Value) -> Option<Value> {
        if !self.logs.keeps(notification) {
            return None;
        }
        let token = notification.pointer("/params/progressToken");
        if token.is_none() || token != self.recorded {
            return Some(notification.clone());
        }
        let live = self.live?;
        let mut notification = notification.clone();
        notification["params"]["progressToken"] = live.clone();
        Some(notification)
    }
}

/// A recorded message written with another id, without copying it.
struct WithId<'a>(&'a Value, Option<&'a Value>);

impl Serialize for WithId<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let WithId(Value::Object(fields), Some(id)) = self else {
            return self.0.serialize(serializer);
        };
        let mut map = serializer.serialize_map(Some(fields.len()))?;
        for (key, value) in fields {
            let value = if key == "id" { *id } else { value };
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// An error reply the engine makes up itself.
struct ErrorReply {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl ErrorReply {
    fn with_id(self, id: Value) -> Value {
        jsonrpc::error_response(id, self.code, &self.message, self.data)
    }
}
