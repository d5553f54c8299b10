//! [`MockServer`]: the registry, the state machine, the call log, and the
//! answer to each request.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{Map, Value, json};

use super::builder::{ANY_STATE, Interceptor, MockBuilder, Transition};
use super::call::{Call, Outcome};
use super::items::{Prompt, Resource, ResourceTemplate, Tool};
use super::link::Link;
use super::respond::{Context, Leaf, Respond, Rng, RpcError, Target};
use crate::jsonrpc::{self, codes};
use crate::protocol::{self, Era};

/// Resource not found before 2026-07-28 (which uses -32602).
const RESOURCE_NOT_FOUND: i64 = -32002;

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
    registry: Mutex<Registry>,
    state: Mutex<String>,
    log: Mutex<Vec<Slot>>,
    rng: Mutex<Rng>,
    /// Connected clients, for notifications.
    links: Mutex<Vec<Weak<Link>>>,
    started: Instant,
    on_call: Mutex<Option<Arc<CallHook>>>,
}

type CallHook = dyn Fn(&Call) + Send + Sync;

/// What does not change once built.
pub(crate) struct Config {
    pub(crate) info: Value,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: Option<Value>,
    pub(crate) require_handshake: bool,
    pub(crate) transitions: Vec<(String, Transition, String)>,
    pub(crate) interceptors: Vec<(String, Arc<Interceptor>)>,
    /// Any order (`server/discover` lists them newest first).
    pub(crate) versions: Vec<String>,
}

/// A registered handler and how often it was called.
pub(crate) struct Entry {
    respond: Respond,
    calls: AtomicUsize,
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
    tools: Vec<(Tool, Arc<Entry>)>,
    resources: Vec<(Resource, Arc<Entry>)>,
    templates: Vec<(ResourceTemplate, Arc<Entry>)>,
    prompts: Vec<(Prompt, Arc<Entry>)>,
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

/// What to do about a request, decided when it arrives.
pub(crate) enum Step {
    /// Answer with this now.
    Now(Result<Value, RpcError>),
    /// Wait `delay`, then answer with what `leaf` says (or never).
    Later {
        delay: Duration,
        leaf: Leaf,
        input: Value,
        context: Box<Context>,
    },
    /// Open a `subscriptions/listen` stream accepting these notifications.
    Listen(Value),
}

/// Who is asking: what the request says and what its connection knows.
pub(crate) struct Asked<'a> {
    pub method: &'a str,
    pub params: &'a Value,
    /// The version declared in `_meta`, if any.
    pub declared: Option<&'a str>,
    /// The connection finished the legacy handshake.
    pub ready: bool,
    /// The state before this request's transition.
    pub state: String,
}

impl Asked<'_> {
    /// A 2026-07-28 request.
    pub(crate) fn modern(&self) -> bool {
        self.declared
            .is_some_and(|v| Era::of_version(v) == Era::Modern)
    }
}

impl MockServer {
    /// A builder; see [`MockBuilder`].
    pub fn builder() -> MockBuilder {
        MockBuilder::default()
    }

    pub(crate) fn from_builder(builder: MockBuilder) -> MockServer {
        MockServer {
            inner: Arc::new(Inner {
                config: builder.config,
                registry: Mutex::new(builder.registry),
                state: Mutex::new(builder.initial_state),
                log: Mutex::new(Vec::new()),
                rng: Mutex::new(Rng::new(builder.seed)),
                links: Mutex::new(Vec::new()),
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
        let links: Vec<Arc<Link>> = {
            let mut links = lock(&self.inner.links);
            links.retain(|l| l.strong_count() > 0);
            links.iter().filter_map(Weak::upgrade).collect()
        };
        for link in links {
            link.notify_client(method, &params);
        }
    }

    fn list_changed(&self, method: &str) {
        self.notify(method, Value::Null);
    }

    pub(crate) fn register(&self, link: &Arc<Link>) {
        lock(&self.inner.links).push(Arc::downgrade(link));
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

    fn versions(&self) -> &[String] {
        &self.inner.config.versions
    }

    /// Decides what to do about a request.
    pub(crate) fn step(&self, asked: &Asked<'_>) -> Step {
        match self.check(asked) {
            Err(error) => Step::Now(Err(error)),
            Ok(()) => self.route(asked),
        }
    }

    /// Version and handshake rules.
    fn check(&self, asked: &Asked<'_>) -> Result<(), RpcError> {
        if let Some(declared) = asked.declared
            && !self.versions().iter().any(|v| v == declared)
        {
            return Err(RpcError {
                code: codes::UNSUPPORTED_PROTOCOL_VERSION,
                message: format!("Unsupported protocol version: {declared}"),
                data: Some(json!({"supported": self.versions(), "requested": declared})),
            });
        }
        let exempt = matches!(asked.method, "initialize" | "ping" | "server/discover");
        if self.inner.config.require_handshake && !asked.modern() && !asked.ready && !exempt {
            return Err(RpcError {
                code: codes::INVALID_REQUEST,
                message: format!(
                    "Invalid Request: `{}` before the initialize handshake; a legacy client \
                     sends `initialize`, then `notifications/initialized`, before anything \
                     but `ping` (MockBuilder::require_handshake(false) lifts this rule)",
                    asked.method
                ),
                data: Some(json!({"method": asked.method, "rule": "initialize first"})),
            });
        }
        Ok(())
    }

    fn route(&self, asked: &Asked<'_>) -> Step {
        let modern = asked.modern();
        let params = asked.params;
        let now = |value: Value| Step::Now(Ok(value));
        match asked.method {
            "initialize" if !modern => Step::Now(self.initialize(params)),
            "server/discover" => Step::Now(self.discover()),
            "ping" | "logging/setLevel" if !modern => now(json!({})),
            "subscriptions/listen" if modern => Step::Listen(self.accepted(params)),
            "tools/list" => {
                let registry = lock(&self.inner.registry);
                now(
                    json!({"tools": registry.tools.iter().map(|(t, _)| t.to_value()).collect::<Vec<_>>()}),
                )
            }
            "resources/list" => {
                let registry = lock(&self.inner.registry);
                let list: Vec<Value> = registry
                    .resources
                    .iter()
                    .map(|(r, _)| r.to_value())
                    .collect();
                now(json!({"resources": list}))
            }
            "resources/templates/list" => {
                let registry = lock(&self.inner.registry);
                let list: Vec<Value> = registry
                    .templates
                    .iter()
                    .map(|(t, _)| t.to_value())
                    .collect();
                now(json!({"resourceTemplates": list}))
            }
            "prompts/list" => {
                let registry = lock(&self.inner.registry);
                let list: Vec<Value> = registry.prompts.iter().map(|(p, _)| p.to_value()).collect();
                now(json!({"prompts": list}))
            }
            "tools/call" => self.call_tool(asked),
            "resources/read" => self.read_resource(asked),
            "prompts/get" => self.get_prompt(asked),
            "completion/complete" => {
                let entry = lock(&self.inner.registry).completion.clone();
                match entry {
                    Some(entry) => self.answer(asked, &entry, Target::Completion, params.clone()),
                    None => Step::Now(Err(method_not_found(asked.method))),
                }
            }
            method => Step::Now(Err(method_not_found(method))),
        }
    }

    /// Legacy `initialize`: the version asked for if spoken, else the
    /// newest legacy one spoken.
    fn initialize(&self, params: &Value) -> Result<Value, RpcError> {
        let legacy: Vec<&String> = self
            .versions()
            .iter()
            .filter(|v| Era::of_version(v) == Era::Legacy)
            .collect();
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        let version = legacy
            .iter()
            .find(|v| Some(v.as_str()) == requested)
            .or(legacy.iter().max())
            .ok_or_else(|| RpcError {
                code: codes::INVALID_PARAMS,
                message: "Unsupported protocol version: this server speaks no version with \
                          an initialize handshake"
                    .to_owned(),
                data: Some(json!({"supported": self.versions(), "requested": requested})),
            })?;
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": self.inner.config.info,
        });
        if let Some(instructions) = &self.inner.config.instructions {
            result["instructions"] = json!(instructions);
        }
        Ok(result)
    }

    /// `server/discover`: answered only when the modern version is spoken
    /// (else what a legacy server says: method not found).
    fn discover(&self) -> Result<Value, RpcError> {
        if !self
            .versions()
            .iter()
            .any(|v| Era::of_version(v) == Era::Modern)
        {
            return Err(method_not_found("server/discover"));
        }
        let mut versions = self.versions().to_vec();
        versions.sort_by(|a, b| b.cmp(a));
        let mut result = json!({
            "resultType": "complete",
            "supportedVersions": versions,
            "capabilities": self.capabilities(),
        });
        if let Some(instructions) = &self.inner.config.instructions {
            result["instructions"] = json!(instructions);
        }
        // The mock changes at runtime: nothing may be cached.
        result["ttlMs"] = json!(0);
        result["cacheScope"] = json!("private");
        result["_meta"] = json!({protocol::META_SERVER_INFO: self.inner.config.info});
        Ok(result)
    }

    /// The part of a `subscriptions/listen` filter the capabilities allow.
    fn accepted(&self, params: &Value) -> Value {
        let caps = self.capabilities();
        let requested = params.get("notifications").unwrap_or(&Value::Null);
        let mut accepted = Map::new();
        for (flag, capability) in [
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ] {
            let offered = caps.pointer(&format!("/{capability}/listChanged")) == Some(&json!(true));
            if requested.get(flag) == Some(&json!(true)) && offered {
                accepted.insert(flag.into(), json!(true));
            }
        }
        let subscribes = caps.pointer("/resources/subscribe") == Some(&json!(true));
        if let Some(uris) = requested
            .get("resourceSubscriptions")
            .filter(|_| subscribes)
        {
            accepted.insert("resourceSubscriptions".into(), uris.clone());
        }
        Value::Object(accepted)
    }

    fn call_tool(&self, asked: &Asked<'_>) -> Step {
        let name = asked.params.get("name").and_then(Value::as_str);
        let found = name.and_then(|name| {
            let registry = lock(&self.inner.registry);
            registry
                .tools
                .iter()
                .find(|(t, _)| t.name() == name)
                .map(|(t, e)| (t.declared_output_schema().cloned(), Arc::clone(e)))
        });
        let (Some(name), Some((output_schema, entry))) = (name, found) else {
            let known: Vec<String> = lock(&self.inner.registry)
                .tools
                .iter()
                .map(|(t, _)| t.name())
                .collect();
            return Step::Now(Err(unknown(
                codes::INVALID_PARAMS,
                "tool",
                name.unwrap_or("(no name)"),
                &known,
            )));
        };
        let arguments = asked.params.get("arguments").cloned();
        let input = arguments.unwrap_or_else(|| json!({}));
        let target = Target::Tool {
            name: name.to_owned(),
            output_schema,
        };
        self.answer(asked, &entry, target, input)
    }

    fn get_prompt(&self, asked: &Asked<'_>) -> Step {
        let name = asked.params.get("name").and_then(Value::as_str);
        let found = name.and_then(|name| {
            let registry = lock(&self.inner.registry);
            registry
                .prompts
                .iter()
                .find(|(p, _)| p.name() == name)
                .map(|(_, e)| Arc::clone(e))
        });
        let (Some(name), Some(entry)) = (name, found) else {
            let known: Vec<String> = lock(&self.inner.registry)
                .prompts
                .iter()
                .map(|(p, _)| p.name())
                .collect();
            return Step::Now(Err(unknown(
                codes::INVALID_PARAMS,
                "prompt",
                name.unwrap_or("(no name)"),
                &known,
            )));
        };
        let arguments = asked.params.get("arguments").cloned();
        let input = arguments.unwrap_or_else(|| json!({}));
        self.answer(asked, &entry, Target::Prompt(name.to_owned()), input)
    }

    /// A resource with the URI, else the first template matching it.
    fn read_resource(&self, asked: &Asked<'_>) -> Step {
        let uri = asked.params.get("uri").and_then(Value::as_str);
        let found = uri.and_then(|uri| {
            let registry = lock(&self.inner.registry);
            let resource = registry
                .resources
                .iter()
                .find(|(r, _)| r.uri() == uri)
                .map(|(r, e)| (r.mime(), Arc::clone(e)));
            resource.or_else(|| {
                registry
                    .templates
                    .iter()
                    .find(|(t, _)| t.matches(uri))
                    .map(|(t, e)| (t.mime(), Arc::clone(e)))
            })
        });
        let (Some(uri), Some((mime, entry))) = (uri, found) else {
            let registry = lock(&self.inner.registry);
            let mut known: Vec<String> = registry.resources.iter().map(|(r, _)| r.uri()).collect();
            known.extend(registry.templates.iter().map(|(t, _)| t.uri_template()));
            let code = if asked.modern() {
                codes::INVALID_PARAMS
            } else {
                RESOURCE_NOT_FOUND
            };
            let mut error = unknown(code, "resource", uri.unwrap_or("(no uri)"), &known);
            if let (Some(data), Some(uri)) = (&mut error.data, uri) {
                data["uri"] = json!(uri);
            }
            return Step::Now(Err(error));
        };
        let target = Target::Resource {
            uri: uri.to_owned(),
            mime,
        };
        self.answer(asked, &entry, target, asked.params.clone())
    }

    /// Resolves a handler for this call.
    fn answer(&self, asked: &Asked<'_>, entry: &Entry, target: Target, input: Value) -> Step {
        let call_number = entry.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let resolved = {
            let mut rng = lock(&self.inner.rng);
            entry
                .respond
                .resolve(&target, &asked.state, &mut |n| rng.below(n))
        };
        let context = Context {
            state: asked.state.clone(),
            server: self.clone(),
            call_number,
            method: asked.method.to_owned(),
            params: asked.params.clone(),
        };
        match resolved.leaf {
            leaf @ (Leaf::Ready(_) | Leaf::Call(_)) if resolved.delay.is_zero() => {
                let answer = leaf.run(&input, &context);
                Step::Now(answer.expect("ready and handler leaves answer"))
            }
            leaf => Step::Later {
                delay: resolved.delay,
                leaf,
                input,
                context: Box::new(context),
            },
        }
    }

    /// The response to send for request `id`: the modern envelope added,
    /// then the interceptors for `method`.
    pub(crate) fn response(
        &self,
        id: Value,
        method: &str,
        modern: bool,
        answer: &Result<Value, RpcError>,
    ) -> Value {
        let mut message = match answer {
            Ok(result) => {
                let result = if modern {
                    crate::fixture::modern_result(method, result.clone())
                } else {
                    result.clone()
                };
                jsonrpc::result_response(id, result)
            }
            Err(error) => error.response(id),
        };
        for (wanted, f) in &self.inner.config.interceptors {
            if wanted == method || wanted == "*" {
                f(&mut message);
            }
        }
        message
    }
}

fn method_not_found(method: &str) -> RpcError {
    RpcError {
        code: codes::METHOD_NOT_FOUND,
        message: format!("Method not found: {method}"),
        data: None,
    }
}

/// An unknown tool, prompt or resource, naming what exists.
fn unknown(code: i64, kind: &str, name: &str, known: &[String]) -> RpcError {
    let list = if known.is_empty() {
        format!("this mock has no {kind}s")
    } else {
        format!("{kind}s: {}", known.join(", "))
    };
    RpcError {
        code,
        message: format!("Unknown {kind}: {name} ({list})"),
        data: Some(json!({"known": known})),
    }
}
