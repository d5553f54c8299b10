//! The replay engine: answers live client messages from a cassette.
//!
//! It knows nothing about transports. A transport hands it each message with
//! a [`Sink`] saying where server messages go, and the engine writes the
//! recorded answer there: notifications first, in recorded order, with
//! progress tokens rewritten; server-to-client requests with fresh ids,
//! waiting for the client's answer; then the response with the live id.
//! What a transport needs beyond that (a barrier before a response, the
//! recorded timing) it asks for with its sink's [`Delivery`].
//!
//! This file holds the engine's state and what every part of it reads (the
//! configuration, the session's era); its children hold the rest:
//! `request` what each live message gets, `play` how a recorded answer is
//! played, `rewrite` how a recorded message is addressed to the live one,
//! `timing` the recorded pace, `summary` the misses and the summary.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

pub(super) mod lookup;
mod plain;
mod play;
mod request;
mod rewrite;
mod summary;
mod timing;

pub use summary::Summary;

use super::answers::AnswerMismatch;
use super::cross_era::{self, CrossEra, Translation};
use super::report::Miss;
use super::subscriptions::Listeners;
use super::upstream::Upstream;
use crate::cassette::{Cassette, Rules};
use crate::jsonrpc;
use crate::matching::Matcher;
use crate::protocol::{self, Era};
use crate::redact::Redactor;

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

#[derive(Debug)]
struct State {
    matcher: Matcher,
    misses: Vec<Miss>,
    /// Misses past `summary::KEPT_MISSES`, counted only.
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

    /// Forgets server-to-client requests still waiting: the client has gone,
    /// so their plays end.
    pub fn client_gone(&self) {
        self.state().pending.clear();
        if let Some(upstream) = &self.config.upstream {
            upstream.client_gone();
        }
    }

    /// The configuration replay runs with.
    pub fn config(&self) -> &ReplayConfig {
        &self.config
    }
}

/// `legacy` or `modern`, for messages.
fn era_name(era: Era) -> &'static str {
    match era {
        Era::Modern => "modern (2026-07-28)",
        _ => "legacy-era",
    }
}
