//! [`MockServer`] and what it is made of: the registry of tools,
//! resources and prompts with their [`Respond`]ers, the state machine, the
//! call log, and the clients it notifies. How it answers a request is in
//! `answer.rs`; how a [`Respond`] is built and resolved, in `respond.rs`.

use std::ops::Range;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{Map, Value, json};

use super::call::{Call, Outcome};
use super::config::{ANY_STATE, Config};
use super::items::{Prompt, Resource, ResourceTemplate, Tool};
use super::rng::Rng;
use crate::jsonrpc::RpcError;

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A programmable MCP server for tests: it answers as it is told, can fail,
/// hang, change with state, and remembers every call for assertions.
///
/// Cheap to clone (an `Arc` inside): every clone is the same server, so a
/// test keeps one to assert on while another serves.
#[derive(Clone)]
pub struct MockServer {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("server_info", &self.inner.config.info)
            .field("state", &self.state())
            .field("calls", &lock(&self.inner.log).len())
            .finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub(crate) config: Config,
    pub(super) registry: Mutex<Registry>,
    state: Mutex<String>,
    log: Mutex<Vec<Slot>>,
    pub(super) rng: Mutex<Rng>,
    /// Connected clients, for notifications.
    clients: Mutex<Vec<Weak<dyn Client>>>,
    started: Instant,
    on_call: Mutex<Option<Arc<CallHook>>>,
}

type CallHook = dyn Fn(&Call) + Send + Sync;

/// A registered handler and how often it was called.
pub(crate) struct Entry {
    pub(super) respond: Respond,
    pub(super) calls: AtomicUsize,
}

impl Entry {
    pub(crate) fn new(respond: Respond) -> Arc<Entry> {
        Arc::new(Entry {
            respond,
            calls: AtomicUsize::new(0),
        })
    }
}

/// What the mock offers, in list order.
#[derive(Default)]
pub(crate) struct Registry {
    pub(super) tools: Vec<(Tool, Arc<Entry>)>,
    pub(super) resources: Vec<(Resource, Arc<Entry>)>,
    pub(super) templates: Vec<(ResourceTemplate, Arc<Entry>)>,
    pub(super) prompts: Vec<(Prompt, Arc<Entry>)>,
    pub(crate) completion: Option<Arc<Entry>>,
}

/// Replaces the item with the same key, or appends.
fn put<T>(items: &mut Vec<(T, Arc<Entry>)>, item: T, respond: Respond, key: impl Fn(&T) -> String) {
    let entry = Entry::new(respond);
    match items.iter_mut().find(|(i, _)| key(i) == key(&item)) {
        Some(slot) => *slot = (item, entry),
        None => items.push((item, entry)),
    }
}

/// Removes the item with this key; returns whether there was one.
fn take<T>(items: &mut Vec<(T, Arc<Entry>)>, wanted: &str, key: impl Fn(&T) -> String) -> bool {
    let before = items.len();
    items.retain(|(i, _)| key(i) != wanted);
    items.len() != before
}

impl Registry {
    pub(crate) fn put_tool(&mut self, tool: Tool, respond: Respond) {
        put(&mut self.tools, tool, respond, Tool::name);
    }

    pub(crate) fn put_resource(&mut self, resource: Resource, respond: Respond) {
        put(&mut self.resources, resource, respond, Resource::uri);
    }

    pub(crate) fn put_template(&mut self, template: ResourceTemplate, respond: Respond) {
        put(
            &mut self.templates,
            template,
            respond,
            ResourceTemplate::uri_template,
        );
    }

    pub(crate) fn put_prompt(&mut self, prompt: Prompt, respond: Respond) {
        put(&mut self.prompts, prompt, respond, Prompt::name);
    }
}

/// One call in the log, and whether it is over.
struct Slot {
    call: Call,
    arrived: Instant,
    done: bool,
}

/// A handler function: gets the arguments (tools, prompts) or the params
/// (resources, completions) and the call's [`Context`].
pub(crate) type HandlerFn = dyn Fn(&Value, &Context) -> Result<Value, RpcError> + Send + Sync;

/// How a handler answers.
///
/// Combinators compose, outermost last:
/// `Respond::text("hi").delay(Duration::from_millis(50)).times(2)` answers
/// twice, each time after 50 ms, then with an "exhausted" error.
#[derive(Clone)]
pub struct Respond {
    pub(super) answer: Answer,
    pub(super) delay: Duration,
    pub(super) jitter: Option<Range<Duration>>,
    pub(super) times: Option<usize>,
    /// Answers given so far (shared by clones, so a handler registered
    /// once counts once).
    pub(super) used: Arc<AtomicUsize>,
}

#[derive(Clone)]
pub(super) enum Answer {
    Result(Value),
    Text(String),
    With(Arc<HandlerFn>),
    Error(RpcError),
    Never,
    ByState(Vec<(String, Respond)>, Box<Respond>),
}

/// What a handler knows about the call it answers.
#[derive(Debug, Clone)]
pub struct Context {
    pub(crate) state: String,
    pub(crate) server: MockServer,
    pub(crate) call_number: usize,
    pub(crate) method: String,
    pub(crate) params: Value,
}

/// A connected client, told of the server's notifications.
pub(crate) trait Client: Send + Sync {
    /// Sends a server notification (see [`MockServer::notify`]).
    fn notify_client(&self, method: &str, params: &Value);
}

impl MockServer {
    /// A server with this configuration and registry, in `initial_state`;
    /// `seed` drives the jitter.
    pub(crate) fn new(
        config: Config,
        registry: Registry,
        initial_state: String,
        seed: u64,
    ) -> MockServer {
        MockServer {
            inner: Arc::new(Inner {
                config,
                registry: Mutex::new(registry),
                state: Mutex::new(initial_state),
                log: Mutex::new(Vec::new()),
                rng: Mutex::new(Rng::new(seed)),
                clients: Mutex::new(Vec::new()),
                started: Instant::now(),
                on_call: Mutex::new(None),
            }),
        }
    }

    // -- runtime changes ---------------------------------------------------

    /// Adds (or replaces) a tool while serving, and tells connected
    /// clients (`notifications/tools/list_changed`).
    pub fn add_tool(&self, tool: Tool, respond: Respond) {
        lock(&self.inner.registry).put_tool(tool, respond);
        self.list_changed("notifications/tools/list_changed");
    }

    /// Removes a tool while serving, and tells connected clients.
    pub fn remove_tool(&self, name: &str) {
        if take(&mut lock(&self.inner.registry).tools, name, Tool::name) {
            self.list_changed("notifications/tools/list_changed");
        }
    }

    /// Adds (or replaces) a resource while serving, and tells connected
    /// clients (`notifications/resources/list_changed`).
    pub fn add_resource(&self, resource: Resource, respond: Respond) {
        lock(&self.inner.registry).put_resource(resource, respond);
        self.list_changed("notifications/resources/list_changed");
    }

    /// Removes the resource at `uri` while serving, and tells clients.
    pub fn remove_resource(&self, uri: &str) {
        if take(
            &mut lock(&self.inner.registry).resources,
            uri,
            Resource::uri,
        ) {
            self.list_changed("notifications/resources/list_changed");
        }
    }

    /// Adds (or replaces) a resource template while serving, and tells
    /// clients (`notifications/resources/list_changed`).
    pub fn add_resource_template(&self, template: ResourceTemplate, respond: Respond) {
        lock(&self.inner.registry).put_template(template, respond);
        self.list_changed("notifications/resources/list_changed");
    }

    /// Removes the template `uri_template` while serving, and tells clients.
    pub fn remove_resource_template(&self, uri_template: &str) {
        let registry = &mut lock(&self.inner.registry).templates;
        if take(registry, uri_template, ResourceTemplate::uri_template) {
            self.list_changed("notifications/resources/list_changed");
        }
    }

    /// Adds (or replaces) a prompt while serving, and tells connected
    /// clients (`notifications/prompts/list_changed`).
    pub fn add_prompt(&self, prompt: Prompt, respond: Respond) {
        lock(&self.inner.registry).put_prompt(prompt, respond);
        self.list_changed("notifications/prompts/list_changed");
    }

    /// Removes a prompt while serving, and tells connected clients.
    pub fn remove_prompt(&self, name: &str) {
        if take(&mut lock(&self.inner.registry).prompts, name, Prompt::name) {
            self.list_changed("notifications/prompts/list_changed");
        }
    }

    /// Sends a notification to every connected client: on legacy
    /// connections as is (once they are initialised), on modern
    /// `subscriptions/listen` streams when their filter accepts it (the
    /// three list_changed kinds and `notifications/resources/updated`).
    pub fn notify(&self, method: &str, params: Value) {
        let clients: Vec<Arc<dyn Client>> = {
            let mut clients = lock(&self.inner.clients);
            clients.retain(|c| c.strong_count() > 0);
            clients.iter().filter_map(Weak::upgrade).collect()
        };
        for client in clients {
            client.notify_client(method, &params);
        }
    }

    fn list_changed(&self, method: &str) {
        self.notify(method, Value::Null);
    }

    pub(crate) fn register(&self, client: &Arc<impl Client + 'static>) {
        let client: Arc<dyn Client> = client.clone();
        lock(&self.inner.clients).push(Arc::downgrade(&client));
    }

    /// Moves the mock to `state`, as a transition would.
    pub fn set_state(&self, state: &str) {
        state.clone_into(&mut lock(&self.inner.state));
    }

    /// The current state.
    pub fn state(&self) -> String {
        lock(&self.inner.state).clone()
    }

    /// Calls `f` with each call once it is over (answered, cancelled,
    /// abandoned, or a notification): for logs written as a session goes.
    pub fn on_call(&self, f: impl Fn(&Call) + Send + Sync + 'static) {
        *lock(&self.inner.on_call) = Some(Arc::new(f));
    }

    // -- the call log ------------------------------------------------------

    /// Every request and notification received so far, in arrival order.
    pub fn calls(&self) -> Vec<Call> {
        lock(&self.inner.log)
            .iter()
            .map(|slot| slot.call.clone())
            .collect()
    }

    /// Logs a message on arrival; returns its seq.
    pub(crate) fn arrived(&self, method: &str, params: &Value, notification: bool) -> usize {
        let now = Instant::now();
        let call = {
            let mut log = lock(&self.inner.log);
            let seq = log.len() + 1;
            let call = Call {
                seq,
                at: now.duration_since(self.inner.started),
                method: method.to_owned(),
                params: params.clone(),
                outcome: if notification {
                    Outcome::Notification
                } else {
                    Outcome::NoAnswer
                },
                duration: Duration::ZERO,
            };
            log.push(Slot {
                call: call.clone(),
                arrived: now,
                done: notification,
            });
            call
        };
        if notification {
            self.call_over(&call);
        }
        call.seq
    }

    /// Notes how a request ended (`None`: without an answer); only the
    /// first ending counts.
    pub(crate) fn ended(&self, seq: usize, outcome: Option<&Result<Value, RpcError>>) {
        let call = {
            let mut log = lock(&self.inner.log);
            let Some(slot) = log.get_mut(seq - 1) else {
                return;
            };
            if slot.done {
                return;
            }
            slot.done = true;
            slot.call.duration = slot.arrived.elapsed();
            slot.call.outcome = match outcome {
                Some(Ok(result)) => Outcome::Result(result.clone()),
                Some(Err(error)) => Outcome::Error(error.clone()),
                None => Outcome::NoAnswer,
            };
            slot.call.clone()
        };
        self.call_over(&call);
    }

    fn call_over(&self, call: &Call) {
        let hook = lock(&self.inner.on_call).clone();
        if let Some(hook) = hook {
            hook(call);
        }
    }

    // -- answering ---------------------------------------------------------

    /// Applies the first matching transition; returns the state before it.
    pub(crate) fn transition(&self, method: &str, params: &Value) -> String {
        let mut state = lock(&self.inner.state);
        let before = state.clone();
        let rule = self.inner.config.transitions.iter().find(|(from, on, _)| {
            (from == ANY_STATE || *from == before) && on.matches(method, params)
        });
        if let Some((_, _, to)) = rule {
            to.clone_into(&mut state);
        }
        before
    }

    /// The capabilities announced: the override, or what is registered.
    pub(crate) fn capabilities(&self) -> Value {
        if let Some(caps) = &self.inner.config.capabilities {
            return caps.clone();
        }
        let registry = lock(&self.inner.registry);
        let mut caps = Map::new();
        if !registry.tools.is_empty() {
            caps.insert("tools".into(), json!({"listChanged": true}));
        }
        if !registry.resources.is_empty() || !registry.templates.is_empty() {
            caps.insert("resources".into(), json!({"listChanged": true}));
        }
        if !registry.prompts.is_empty() {
            caps.insert("prompts".into(), json!({"listChanged": true}));
        }
        if registry.completion.is_some() {
            caps.insert("completions".into(), json!({}));
        }
        caps.insert("logging".into(), json!({}));
        Value::Object(caps)
    }

    pub(super) fn versions(&self) -> &[String] {
        &self.inner.config.versions
    }
}
