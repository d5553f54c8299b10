//! `demo_server`: a small, deterministic MCP server over stdio, used by
//! mcpcassette's tests and examples as something to record and replay.
//!
//! It speaks both protocol eras and decides per request:
//! - **legacy** (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25): `initialize`
//!   handshake, session state (negotiated version, client capabilities, log
//!   level) and server→client requests (`sampling/createMessage`,
//!   `elicitation/create`, `roots/list`);
//! - **modern** (2026-07-28): no handshake, `server/discover`, every request
//!   carries `params._meta`, every result carries `resultType`, and
//!   server→client requests become `input_required` results (multi round-trip
//!   requests).
//!
//! Wire format: one JSON-RPC message per line on stdin/stdout; diagnostics go
//! to stderr. Requests run concurrently (one thread each); the process exits
//! with status 0 once stdin is closed and in-flight requests are answered.
//!
//! `DEMO_SERVER_DRIFT=1` changes the `echo` tool (new text and a new required
//! `volume` property in its input schema) so tests can provoke drift.
//!
//! Run it with `cargo run --example demo_server`.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use serde_json::{Map, Value, json};

/// The handshake-free protocol version.
const MODERN_VERSION: &str = "2026-07-28";
/// Versions negotiated with `initialize`, newest first.
const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

const SERVER_NAME: &str = "mcpcassette-demo";
const SERVER_VERSION: &str = "0.1.0";
const SERVER_TITLE: &str = "mcpcassette demo server";
const INSTRUCTIONS: &str = "A deterministic demo server for mcpcassette's tests. \
    Tools: echo, add, count, divide, explode, sleep, summarize, confirm, roots. \
    Resources: demo://readme, demo://logo and demo://notes/{id}. Prompts: greet, review.";

/// Cache hints (`ttlMs`) of modern cacheable results.
const DISCOVER_TTL_MS: u64 = 3_600_000;
const RESULT_TTL_MS: u64 = 300_000;
/// Modern methods whose complete results carry `ttlMs` and `cacheScope`.
const CACHEABLE_METHODS: [&str; 5] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// Every request method this server knows, in either era.
const KNOWN_METHODS: [&str; 12] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

/// Log levels, least severe first (RFC 5424 order as used by MCP).
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];
const DEFAULT_LOG_LEVEL: usize = 1; // "info"

const README_URI: &str = "demo://readme";
const README_TEXT: &str = "# mcpcassette demo\nA tiny server used by mcpcassette's tests.";
const LOGO_URI: &str = "demo://logo";
/// A valid 1×1 PNG image, base64-encoded.
const LOGO_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
const NOTES_TEMPLATE: &str = "demo://notes/{id}";
const NOTES_PREFIX: &str = "demo://notes/";
/// Completion candidates for the `name` argument of the `greet` prompt.
const GREET_NAMES: [&str; 3] = ["Alice", "Bob", "Carol"];

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;
/// Resource not found, before 2026-07-28 (which uses -32602 instead).
const RESOURCE_NOT_FOUND: i64 = -32002;
const MISSING_CLIENT_CAPABILITY: i64 = -32021;
const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

fn main() {
    let drift = std::env::var("DEMO_SERVER_DRIFT").is_ok_and(|v| v == "1");
    let server = Arc::new(Server::new(drift));
    note(&format!("ready (drift: {drift})"));

    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    let mut stdin = io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(error) => {
                note(&format!("stdin: {error}"));
                break;
            }
        }
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if let Some(worker) = server.handle_line(line) {
            workers.retain(|w| !w.is_finished());
            workers.push(worker);
        }
    }

    // Stdin is closed: nobody will answer our own requests any more.
    server.close_pending();
    for worker in workers {
        let _ = worker.join();
    }
    note("stdin closed, bye");
}

/// Writes a diagnostic line to stderr.
fn note(message: &str) {
    eprintln!("[demo_server] {message}");
}

/// Locks a mutex, ignoring poisoning (a panicked worker must not stop the rest).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

// ---------------------------------------------------------------------------
// Errors and per-request context
// ---------------------------------------------------------------------------

/// A JSON-RPC error object.
#[derive(Debug)]
struct RpcError {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// -32022, listing every version this server accepts.
    fn unsupported_version(requested: &str) -> Self {
        Self::new(
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {requested}"),
        )
        .with_data(json!({ "supported": supported_versions(), "requested": requested }))
    }

    /// -32021 for a modern request that needs a capability the client lacks.
    fn missing_capability(capability: &str, required: Value) -> Self {
        Self::new(
            MISSING_CLIENT_CAPABILITY,
            format!("Server requires the {capability} capability for this request"),
        )
        .with_data(json!({ "requiredCapabilities": required }))
    }

    fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }
}

type RpcResult = Result<Value, RpcError>;

/// Protocol era of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Era {
    Legacy,
    Modern,
}

/// What a handler needs to know about the request it serves.
#[derive(Clone, Debug)]
struct Ctx {
    era: Era,
    /// Version that shapes the answer: negotiated (legacy) or 2026-07-28.
    version: &'static str,
    /// From `initialize` (legacy) or from the request's `_meta` (modern).
    client_caps: Value,
    /// Least severe log level to send; `None` sends no log notifications.
    log_level: Option<usize>,
    /// `params._meta.progressToken`, if the client asked for progress.
    progress_token: Option<Value>,
}

impl Ctx {
    fn is_modern(&self) -> bool {
        self.era == Era::Modern
    }

    /// Whether the version is `version` or newer (ISO dates compare lexically).
    fn at_least(&self, version: &str) -> bool {
        self.version >= version
    }

    fn has_capability(&self, name: &str) -> bool {
        self.client_caps.get(name).is_some_and(Value::is_object)
    }

    /// Form-mode elicitation: `elicitation: {}` means form only (2025-11-25 rule).
    fn supports_form_elicitation(&self) -> bool {
        match self
            .client_caps
            .get("elicitation")
            .and_then(Value::as_object)
        {
            Some(modes) => modes.contains_key("form") || !modes.contains_key("url"),
            None => false,
        }
    }
}

/// Legacy session state, set by `initialize`.
#[derive(Debug)]
struct Session {
    version: &'static str,
    client_caps: Value,
    log_level: usize,
}

/// What the reader thread decided for a request.
enum Plan {
    /// Answer right away (cheap or session-changing requests).
    Answer(Value),
    /// Run [`Server::handle`] on a worker thread.
    Spawn(Ctx),
}

/// What a tool gets from [`Server::ask`].
enum Asked {
    /// The client's result (`CreateMessageResult`, `ElicitResult`, ...).
    Answer(Value),
    /// Stop and return this tool result: `input_required` or a tool error.
    Return(Value),
}

// ---------------------------------------------------------------------------
// Server: transport, routing, era selection
// ---------------------------------------------------------------------------

struct Server {
    stdout: Mutex<io::Stdout>,
    session: Mutex<Option<Session>>,
    /// Handlers waiting for the client's answer to one of our requests, by
    /// request id; `None` once stdin is closed.
    pending: Mutex<Option<HashMap<u64, mpsc::Sender<Value>>>>,
    next_request_id: AtomicU64,
    drift: bool,
}

impl Server {
    fn new(drift: bool) -> Self {
        Self {
            stdout: Mutex::new(io::stdout()),
            session: Mutex::new(None),
            pending: Mutex::new(Some(HashMap::new())),
            next_request_id: AtomicU64::new(0),
            drift,
        }
    }

    /// Writes one message as one line.
    fn send(&self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        let mut stdout = lock(&self.stdout);
        if let Err(error) = stdout
            .write_all(line.as_bytes())
            .and_then(|()| stdout.flush())
        {
            note(&format!("stdout: {error}"));
        }
    }

    fn respond(&self, id: &Value, outcome: RpcResult) {
        let message = match outcome {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json() }),
        };
        self.send(&message);
    }

    fn notify(&self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends `notifications/message` if the request's log level lets it through.
    fn log(&self, ctx: &Ctx, level: usize, logger: &str, data: Value) {
        if ctx.log_level.is_some_and(|min| level >= min) {
            let params = json!({ "level": LOG_LEVELS[level], "logger": logger, "data": data });
            self.notify("notifications/message", params);
        }
    }

    /// Handles one line from stdin; returns the worker thread it started, if any.
    fn handle_line(self: &Arc<Self>, line: &[u8]) -> Option<JoinHandle<()>> {
        let message: Value = match serde_json::from_slice(line) {
            Ok(message) => message,
            Err(error) => {
                note(&format!("unparsable line: {error}"));
                self.respond(&Value::Null, Err(RpcError::new(PARSE_ERROR, "Parse error")));
                return None;
            }
        };
        let Value::Object(mut message) = message else {
            let error = RpcError::new(INVALID_REQUEST, "Invalid Request: expected a JSON object");
            self.respond(&Value::Null, Err(error));
            return None;
        };
        let id = message.remove("id");
        let params = message.remove("params");
        match (message.get("method"), id) {
            (Some(Value::String(method)), None) => {
                self.on_notification(method);
                None
            }
            (Some(Value::String(method)), Some(id)) if is_request_id(&id) => {
                self.on_request(id, method.clone(), params)
            }
            (None, Some(id)) if message.contains_key("result") || message.contains_key("error") => {
                message.insert("id".to_string(), id);
                self.on_response(message);
                None
            }
            (_, id) => {
                let id = id.filter(is_request_id).unwrap_or(Value::Null);
                self.respond(&id, Err(RpcError::new(INVALID_REQUEST, "Invalid Request")));
                None
            }
        }
    }

    fn on_notification(&self, method: &str) {
        match method {
            "notifications/initialized"
            | "notifications/cancelled"
            | "notifications/progress"
            | "notifications/roots/list_changed" => {}
            other => note(&format!("ignoring notification {other}")),
        }
    }

    /// Routes the client's answer to the handler waiting for it.
    fn on_response(&self, response: Map<String, Value>) {
        let id = response.get("id").and_then(Value::as_u64);
        let waiter = id.and_then(|id| lock(&self.pending).as_mut()?.remove(&id));
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(Value::Object(response));
            }
            None => note(&format!(
                "response to unknown request id {:?}",
                response.get("id")
            )),
        }
    }

    /// Wakes every handler still waiting for the client (stdin is closed).
    fn close_pending(&self) {
        lock(&self.pending).take();
    }

    fn on_request(
        self: &Arc<Self>,
        id: Value,
        method: String,
        params: Option<Value>,
    ) -> Option<JoinHandle<()>> {
        let params = match params {
            None => Map::new(),
            Some(Value::Object(params)) => params,
            Some(_) => {
                self.respond(
                    &id,
                    Err(RpcError::invalid_params("params must be an object")),
                );
                return None;
            }
        };
        match self.plan(&method, &params) {
            Err(error) => {
                self.respond(&id, Err(error));
                None
            }
            Ok(Plan::Answer(result)) => {
                self.respond(&id, Ok(result));
                None
            }
            Ok(Plan::Spawn(ctx)) => {
                let server = Arc::clone(self);
                Some(thread::spawn(move || {
                    let outcome = server.handle(&ctx, &method, &params);
                    let outcome = outcome.map(|result| finish(&ctx, &method, result));
                    server.respond(&id, outcome);
                }))
            }
        }
    }

    /// Picks the era of a request; answers handshake and session requests
    /// inline so that later requests see their effect.
    fn plan(&self, method: &str, params: &Map<String, Value>) -> Result<Plan, RpcError> {
        if !KNOWN_METHODS.contains(&method) {
            return Err(RpcError::method_not_found(method));
        }
        match method {
            "initialize" => return self.initialize(params).map(Plan::Answer),
            "server/discover" => return discover(params).map(Plan::Answer),
            _ => {}
        }
        let ctx = self.context(params)?;
        match (ctx.era, method) {
            (Era::Modern, "ping" | "logging/setLevel") => Err(RpcError::method_not_found(method)),
            (Era::Legacy, "ping") => Ok(Plan::Answer(json!({}))),
            (Era::Legacy, "logging/setLevel") => self.set_level(params).map(Plan::Answer),
            _ => Ok(Plan::Spawn(ctx)),
        }
    }

    /// Builds the request context from `params._meta` or the legacy session.
    fn context(&self, params: &Map<String, Value>) -> Result<Ctx, RpcError> {
        let meta = params.get("_meta").and_then(Value::as_object);
        let progress_token = meta
            .and_then(|meta| meta.get("progressToken"))
            .filter(|token| is_request_id(token))
            .cloned();
        match meta.and_then(|meta| meta.get(META_VERSION)) {
            Some(Value::String(version)) if version == MODERN_VERSION => {
                modern_context(meta.unwrap_or(&Map::new()), progress_token)
            }
            Some(Value::String(version)) if !LEGACY_VERSIONS.contains(&version.as_str()) => {
                Err(RpcError::unsupported_version(version))
            }
            Some(Value::String(version)) => self.legacy_context(progress_token).ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "protocol version {version} requires the initialize handshake"
                ))
            }),
            Some(_) => Err(RpcError::invalid_params(format!(
                "params._meta[\"{META_VERSION}\"] must be a string"
            ))),
            None => self.legacy_context(progress_token).ok_or_else(|| {
                RpcError::invalid_params(format!("missing params._meta[\"{META_VERSION}\"]"))
            }),
        }
    }

    /// The context of the initialized legacy session, if there is one.
    fn legacy_context(&self, progress_token: Option<Value>) -> Option<Ctx> {
        let session = lock(&self.session);
        let session = session.as_ref()?;
        Some(Ctx {
            era: Era::Legacy,
            version: session.version,
            client_caps: session.client_caps.clone(),
            log_level: Some(session.log_level),
            progress_token,
        })
    }

    /// Legacy `initialize`: negotiates a version and starts the session.
    fn initialize(&self, params: &Map<String, Value>) -> RpcResult {
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("missing params.protocolVersion"))?;
        let version = LEGACY_VERSIONS
            .into_iter()
            .find(|v| *v == requested)
            .unwrap_or(LEGACY_VERSIONS[0]);
        let client_caps = match params.get("capabilities") {
            Some(caps @ Value::Object(_)) => caps.clone(),
            _ => json!({}),
        };
        *lock(&self.session) = Some(Session {
            version,
            client_caps,
            log_level: DEFAULT_LOG_LEVEL,
        });
        note(&format!(
            "initialize: client asked for {requested}, using {version}"
        ));
        Ok(json!({
            "protocolVersion": version,
            "capabilities": server_capabilities(version),
            "serverInfo": server_info(version),
            "instructions": INSTRUCTIONS,
        }))
    }

    /// Legacy `logging/setLevel`.
    fn set_level(&self, params: &Map<String, Value>) -> RpcResult {
        let level = params
            .get("level")
            .and_then(Value::as_str)
            .and_then(log_level_index)
            .ok_or_else(|| RpcError::invalid_params("Invalid log level"))?;
        if let Some(session) = lock(&self.session).as_mut() {
            session.log_level = level;
        }
        Ok(json!({}))
    }

    /// Sends a request to the client (legacy era) and waits for its answer.
    /// Returns the `result`, or the error message.
    fn ask_client(&self, method: &str, params: Option<Value>) -> Result<Value, String> {
        const CLOSED: &str = "the client closed the connection";
        let id = self.next_request_id.fetch_add(1, Ordering::SeqCst);
        let (sender, receiver) = mpsc::channel();
        match lock(&self.pending).as_mut() {
            Some(pending) => pending.insert(id, sender),
            None => return Err(CLOSED.to_string()),
        };
        let mut request = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if let Some(params) = params {
            request["params"] = params;
        }
        self.send(&request);
        let response = receiver.recv().map_err(|_| CLOSED.to_string())?;
        if let Some(error) = response.get("error") {
            let message = error.get("message").and_then(Value::as_str);
            return Err(message.unwrap_or("unknown error").to_string());
        }
        Ok(response.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Runs a request on a worker thread.
    fn handle(&self, ctx: &Ctx, method: &str, params: &Map<String, Value>) -> RpcResult {
        match method {
            "tools/list" => {
                reject_cursor(params)?;
                Ok(json!({ "tools": tools(ctx, self.drift) }))
            }
            "tools/call" => self.call_tool(ctx, params),
            "resources/list" => {
                reject_cursor(params)?;
                Ok(list_resources())
            }
            "resources/templates/list" => {
                reject_cursor(params)?;
                Ok(list_resource_templates())
            }
            "resources/read" => read_resource(ctx, params),
            "prompts/list" => {
                reject_cursor(params)?;
                Ok(list_prompts())
            }
            "prompts/get" => get_prompt(params),
            "completion/complete" => complete(params),
            _ => Err(RpcError::method_not_found(method)),
        }
    }
}

/// JSON-RPC ids (and progress tokens) are strings or integers.
fn is_request_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

fn log_level_index(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

/// Context of a modern request; `meta` names 2026-07-28.
fn modern_context(
    meta: &Map<String, Value>,
    progress_token: Option<Value>,
) -> Result<Ctx, RpcError> {
    let client_caps = match meta.get(META_CAPABILITIES) {
        Some(caps @ Value::Object(_)) => caps.clone(),
        _ => {
            return Err(RpcError::invalid_params(format!(
                "missing params._meta[\"{META_CAPABILITIES}\"]"
            )));
        }
    };
    let log_level = match meta.get(META_LOG_LEVEL) {
        None => None,
        Some(level) => Some(level.as_str().and_then(log_level_index).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "Invalid log level in params._meta[\"{META_LOG_LEVEL}\"]"
            ))
        })?),
    };
    Ok(Ctx {
        era: Era::Modern,
        version: MODERN_VERSION,
        client_caps,
        log_level,
        progress_token,
    })
}

/// Adds the modern envelope to a handler's result: `resultType` first and,
/// for cacheable complete results, `ttlMs` and `cacheScope`.
fn finish(ctx: &Ctx, method: &str, result: Value) -> Value {
    let Value::Object(mut body) = result else {
        return result;
    };
    if !ctx.is_modern() {
        return Value::Object(body);
    }
    let result_type = body
        .shift_remove("resultType")
        .unwrap_or_else(|| json!("complete"));
    let cacheable = result_type == "complete" && CACHEABLE_METHODS.contains(&method);
    let mut out = Map::new();
    out.insert("resultType".to_string(), result_type);
    out.extend(body);
    if cacheable {
        out.insert("ttlMs".to_string(), json!(RESULT_TTL_MS));
        out.insert("cacheScope".to_string(), json!("public"));
    }
    Value::Object(out)
}

/// List requests have a single page: any cursor is invalid.
fn reject_cursor(params: &Map<String, Value>) -> Result<(), RpcError> {
    match params.get("cursor") {
        None | Some(Value::Null) => Ok(()),
        Some(_) => Err(RpcError::invalid_params("Invalid cursor")),
    }
}

// ---------------------------------------------------------------------------
// Discovery and capabilities
// ---------------------------------------------------------------------------

/// Modern first, then the legacy versions reachable through `initialize`.
fn supported_versions() -> Vec<&'static str> {
    let mut versions = vec![MODERN_VERSION];
    versions.extend(LEGACY_VERSIONS);
    versions
}

/// `server/discover`, answered in any era (it is the stdio era probe).
fn discover(params: &Map<String, Value>) -> RpcResult {
    let requested = params.get("_meta").and_then(|meta| meta.get(META_VERSION));
    match requested {
        None => {}
        Some(Value::String(v)) if supported_versions().contains(&v.as_str()) => {}
        Some(Value::String(v)) => return Err(RpcError::unsupported_version(v)),
        Some(_) => {
            return Err(RpcError::invalid_params(format!(
                "params._meta[\"{META_VERSION}\"] must be a string"
            )));
        }
    }
    Ok(json!({
        "resultType": "complete",
        "supportedVersions": supported_versions(),
        "capabilities": server_capabilities(MODERN_VERSION),
        "instructions": INSTRUCTIONS,
        "ttlMs": DISCOVER_TTL_MS,
        "cacheScope": "public",
        "_meta": { META_SERVER_INFO: server_info(MODERN_VERSION) },
    }))
}

fn server_capabilities(version: &str) -> Value {
    let mut caps = json!({
        "tools": { "listChanged": false },
        "resources": { "subscribe": false, "listChanged": false },
        "prompts": { "listChanged": false },
        "logging": {},
    });
    if version >= "2025-03-26" {
        caps["completions"] = json!({});
    }
    caps
}

fn server_info(version: &str) -> Value {
    let mut info = json!({ "name": SERVER_NAME, "version": SERVER_VERSION });
    if version >= "2025-06-18" {
        info["title"] = json!(SERVER_TITLE);
    }
    info
}

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

/// The `tools/list` entries, shaped for the request's version.
fn tools(ctx: &Ctx, drift: bool) -> Vec<Value> {
    let mut echo_properties = json!({
        "message": { "type": "string", "description": "Text to echo back" },
    });
    let mut echo_required = vec!["message"];
    if drift {
        echo_properties["volume"] = json!({ "type": "integer", "description": "How loud to echo" });
        echo_required.push("volume");
    }
    let numbers = || {
        object_schema(
            json!({ "a": { "type": "number" }, "b": { "type": "number" } }),
            &["a", "b"],
        )
    };
    let no_arguments = || object_schema(json!({}), &[]);
    let sum_schema = object_schema(json!({ "sum": { "type": "number" } }), &["sum"]);
    let count_schema = object_schema(
        json!({
            "steps": { "type": "integer", "minimum": 1, "maximum": 20 },
            "delay_ms": { "type": "integer", "minimum": 0, "maximum": 10000, "default": 0 },
        }),
        &["steps"],
    );
    let sleep_schema = object_schema(
        json!({ "ms": { "type": "integer", "minimum": 0, "maximum": 60000 } }),
        &["ms"],
    );
    let string_argument =
        |name: &str| object_schema(json!({ name: { "type": "string" } }), &[name]);

    let tool = |name: &str, description: &str, input: Value, output: Option<Value>, read_only| {
        let mut tool = json!({ "name": name, "description": description, "inputSchema": input });
        if let Some(output) = output.filter(|_| ctx.at_least("2025-06-18")) {
            tool["outputSchema"] = output;
        }
        if ctx.at_least("2025-03-26") {
            tool["annotations"] = json!({ "readOnlyHint": read_only });
        }
        tool
    };
    vec![
        tool(
            "echo",
            "Echoes a message back.",
            object_schema(echo_properties, &echo_required),
            None,
            true,
        ),
        tool(
            "add",
            "Adds two numbers.",
            numbers(),
            Some(sum_schema),
            true,
        ),
        tool(
            "count",
            "Counts steps, reporting progress and logging when done.",
            count_schema,
            None,
            true,
        ),
        tool("divide", "Divides a by b.", numbers(), None, true),
        tool(
            "explode",
            "Always fails with a JSON-RPC error.",
            no_arguments(),
            None,
            true,
        ),
        tool(
            "sleep",
            "Waits, then answers (to get answers out of order).",
            sleep_schema,
            None,
            true,
        ),
        tool(
            "summarize",
            "Summarizes text by asking the client's LLM (sampling).",
            string_argument("text"),
            None,
            true,
        ),
        tool(
            "confirm",
            "Asks the user to confirm an action (elicitation).",
            string_argument("action"),
            None,
            false,
        ),
        tool(
            "roots",
            "Lists the client's roots.",
            no_arguments(),
            None,
            true,
        ),
    ]
}

fn object_schema(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// A successful tool result with one text block.
fn text_result(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }] })
}

/// A tool-level error (`isError: true`) with one text block.
fn tool_error(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }], "isError": true })
}

/// Typed access to `tools/call` arguments with -32602 errors.
struct Args<'a> {
    tool: &'a str,
    map: &'a Map<String, Value>,
}

impl Args<'_> {
    fn error(&self, detail: String) -> RpcError {
        RpcError::invalid_params(format!(
            "Invalid arguments for tool {}: {detail}",
            self.tool
        ))
    }

    fn required(&self, key: &str) -> Result<&Value, RpcError> {
        self.map
            .get(key)
            .ok_or_else(|| self.error(format!("missing required argument \"{key}\"")))
    }

    fn string(&self, key: &str) -> Result<&str, RpcError> {
        self.required(key)?
            .as_str()
            .ok_or_else(|| self.error(format!("argument \"{key}\" must be a string")))
    }

    fn number(&self, key: &str) -> Result<f64, RpcError> {
        self.required(key)?
            .as_f64()
            .ok_or_else(|| self.error(format!("argument \"{key}\" must be a number")))
    }

    /// An integer in `min..=max`; `default` applies when the key is absent.
    fn integer(
        &self,
        key: &str,
        default: Option<u64>,
        min: u64,
        max: u64,
    ) -> Result<u64, RpcError> {
        let value = match (self.map.get(key), default) {
            (None, Some(default)) => return Ok(default),
            _ => self.required(key)?,
        };
        let integral = value.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0);
        value
            .as_u64()
            .or(integral.map(|f| f as u64))
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| {
                self.error(format!(
                    "argument \"{key}\" must be an integer between {min} and {max}"
                ))
            })
    }
}

impl Server {
    fn call_tool(&self, ctx: &Ctx, params: &Map<String, Value>) -> RpcResult {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("missing params.name"))?;
        let empty = Map::new();
        let map = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(map)) => map,
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.arguments must be an object",
                ));
            }
        };
        let args = Args { tool: name, map };
        match name {
            "echo" => self.echo(&args),
            "add" => add(ctx, &args),
            "count" => self.count(ctx, &args),
            "divide" => divide(&args),
            "explode" => Err(
                RpcError::new(INTERNAL_ERROR, "explode: the tool failed on purpose")
                    .with_data(json!({ "tool": "explode" })),
            ),
            "sleep" => sleep(&args),
            "summarize" => self.summarize(ctx, params, &args),
            "confirm" => self.confirm(ctx, params, &args),
            "roots" => self.roots(ctx, params),
            _ => Err(RpcError::invalid_params(format!("Unknown tool: {name}"))),
        }
    }

    fn echo(&self, args: &Args) -> RpcResult {
        let message = args.string("message")?;
        // Under drift, `volume` is advertised as required but never enforced.
        let prefix = if self.drift { "echo v2" } else { "echo" };
        Ok(text_result(format!("{prefix}: {message}")))
    }

    fn count(&self, ctx: &Ctx, args: &Args) -> RpcResult {
        let steps = args.integer("steps", None, 1, 20)?;
        let delay_ms = args.integer("delay_ms", Some(0), 0, 10_000)?;
        for step in 1..=steps {
            if step > 1 && delay_ms > 0 {
                thread::sleep(Duration::from_millis(delay_ms));
            }
            if let Some(token) = &ctx.progress_token {
                let params = json!({
                    "progressToken": token,
                    "progress": step,
                    "total": steps,
                    "message": format!("step {step} of {steps}"),
                });
                self.notify("notifications/progress", params);
            }
        }
        let text = format!("counted {steps} steps");
        self.log(ctx, DEFAULT_LOG_LEVEL, "count", json!(text));
        Ok(text_result(text))
    }

    fn summarize(&self, ctx: &Ctx, params: &Map<String, Value>, args: &Args) -> RpcResult {
        let text = args.string("text")?;
        let request = ClientRequest {
            key: "summary",
            method: "sampling/createMessage",
            params: Some(json!({
                "messages": [{
                    "role": "user",
                    "content": { "type": "text", "text": format!("Summarize: {text}") },
                }],
                "maxTokens": 100,
            })),
            state: json!({ "tool": "summarize", "text": text }),
            capability: "sampling",
            supported: ctx.has_capability("sampling"),
            required: json!({ "sampling": {} }),
        };
        let answer = match self.ask(ctx, params, request)? {
            Asked::Answer(answer) => answer,
            Asked::Return(result) => return Ok(result),
        };
        match sampled_text(&answer) {
            Some(summary) => Ok(text_result(format!("summary: {summary}"))),
            None => bad_answer(ctx, "summary", "a CreateMessageResult with text content"),
        }
    }

    fn confirm(&self, ctx: &Ctx, params: &Map<String, Value>, args: &Args) -> RpcResult {
        let action = args.string("action")?;
        let mut elicit = Map::new();
        if ctx.at_least("2025-11-25") {
            elicit.insert("mode".to_string(), json!("form"));
        }
        elicit.insert("message".to_string(), json!(format!("Really {action}?")));
        elicit.insert(
            "requestedSchema".to_string(),
            object_schema(json!({ "confirm": { "type": "boolean" } }), &["confirm"]),
        );
        let request = ClientRequest {
            key: "confirm",
            method: "elicitation/create",
            params: Some(Value::Object(elicit)),
            state: json!({ "tool": "confirm", "action": action }),
            capability: "elicitation",
            // Elicitation exists from 2025-06-18 on.
            supported: ctx.at_least("2025-06-18") && ctx.supports_form_elicitation(),
            required: json!({ "elicitation": { "form": {} } }),
        };
        let answer = match self.ask(ctx, params, request)? {
            Asked::Answer(answer) => answer,
            Asked::Return(result) => return Ok(result),
        };
        let Some(user_action) = answer.get("action").and_then(Value::as_str) else {
            return bad_answer(ctx, "confirm", "an ElicitResult");
        };
        let confirmed = user_action == "accept"
            && answer.pointer("/content/confirm") == Some(&Value::Bool(true));
        let verdict = if confirmed { "confirmed" } else { "declined" };
        Ok(text_result(format!("{verdict}: {action}")))
    }

    fn roots(&self, ctx: &Ctx, params: &Map<String, Value>) -> RpcResult {
        let request = ClientRequest {
            key: "roots",
            method: "roots/list",
            params: None,
            state: json!({ "tool": "roots" }),
            capability: "roots",
            supported: ctx.has_capability("roots"),
            required: json!({ "roots": {} }),
        };
        let answer = match self.ask(ctx, params, request)? {
            Asked::Answer(answer) => answer,
            Asked::Return(result) => return Ok(result),
        };
        let Some(roots) = answer.get("roots").and_then(Value::as_array) else {
            return bad_answer(ctx, "roots", "a ListRootsResult");
        };
        let uris: Vec<&str> = roots
            .iter()
            .filter_map(|root| root.get("uri").and_then(Value::as_str))
            .collect();
        if uris.is_empty() {
            Ok(text_result("no roots"))
        } else {
            Ok(text_result(uris.join("\n")))
        }
    }

    /// Gets the client's answer to `request`. Legacy: sends it as a JSON-RPC
    /// request and waits. Modern: takes it from `params.inputResponses`, or
    /// returns the `input_required` result asking for it.
    fn ask(
        &self,
        ctx: &Ctx,
        params: &Map<String, Value>,
        request: ClientRequest,
    ) -> Result<Asked, RpcError> {
        if ctx.is_modern() {
            return request.resolve(params);
        }
        let capability = request.capability;
        if !request.supported {
            let text = format!("client does not support {capability}");
            return Ok(Asked::Return(tool_error(text)));
        }
        Ok(match self.ask_client(request.method, request.params) {
            Ok(answer) => Asked::Answer(answer),
            Err(message) => Asked::Return(tool_error(format!("{capability} failed: {message}"))),
        })
    }
}

/// The client answered with something unusable: -32602 in the modern era
/// (the answer is part of the request), a tool error in the legacy era.
fn bad_answer(ctx: &Ctx, key: &str, expected: &str) -> RpcResult {
    if ctx.is_modern() {
        let message = format!("params.inputResponses[\"{key}\"] must be {expected}");
        Err(RpcError::invalid_params(message))
    } else {
        Ok(tool_error(format!("the client's answer is not {expected}")))
    }
}

fn add(ctx: &Ctx, args: &Args) -> RpcResult {
    let sum = args.number("a")? + args.number("b")?;
    if !sum.is_finite() {
        return Ok(tool_error("the sum is not a finite number"));
    }
    let mut result = text_result(format_number(sum));
    if ctx.at_least("2025-06-18") {
        result["structuredContent"] = json!({ "sum": number_value(sum) });
    }
    Ok(result)
}

fn divide(args: &Args) -> RpcResult {
    let a = args.number("a")?;
    let b = args.number("b")?;
    if b == 0.0 {
        return Ok(tool_error(format!(
            "cannot divide {} by zero",
            format_number(a)
        )));
    }
    Ok(text_result(format_number(a / b)))
}

fn sleep(args: &Args) -> RpcResult {
    let ms = args.integer("ms", None, 0, 60_000)?;
    thread::sleep(Duration::from_millis(ms));
    Ok(text_result(format!("slept {ms} ms")))
}

/// Integer-valued numbers print without ".0".
fn format_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Integer-valued numbers become JSON integers.
fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

/// The text of a `CreateMessageResult` (single block or first text block).
fn sampled_text(result: &Value) -> Option<&str> {
    match result.get("content")? {
        Value::Array(blocks) => blocks.iter().find_map(text_of),
        block => text_of(block),
    }
}

/// The text of a `{"type": "text"}` content block.
fn text_of(block: &Value) -> Option<&str> {
    if block.get("type").and_then(Value::as_str) == Some("text") {
        block.get("text").and_then(Value::as_str)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// Modern multi round-trip requests
// ---------------------------------------------------------------------------

/// A server→client request a tool needs (sampling, elicitation, roots).
struct ClientRequest {
    /// Key in `inputRequests` / `inputResponses` (modern era).
    key: &'static str,
    method: &'static str,
    params: Option<Value>,
    /// What the opaque `requestState` binds to: tool and salient arguments.
    state: Value,
    /// Client capability the request needs, for messages.
    capability: &'static str,
    /// Whether the client declared that capability.
    supported: bool,
    /// `data.requiredCapabilities` of the -32021 error (modern era).
    required: Value,
}

impl ClientRequest {
    /// Modern era: the client's answer from `params.inputResponses` (checking
    /// `requestState`), or the `input_required` result asking for it (again).
    fn resolve(self, params: &Map<String, Value>) -> Result<Asked, RpcError> {
        let state = base64url(self.state.to_string().as_bytes());
        let answer = match params.get("inputResponses") {
            None | Some(Value::Null) => None,
            Some(Value::Object(responses)) => responses.get(self.key),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "params.inputResponses must be an object",
                ));
            }
        };
        if let Some(answer) = answer {
            if params.get("requestState").and_then(Value::as_str) != Some(state.as_str()) {
                return Err(RpcError::invalid_params("invalid or missing requestState"));
            }
            return Ok(Asked::Answer(answer.clone()));
        }
        if !self.supported {
            return Err(RpcError::missing_capability(self.capability, self.required));
        }
        let mut request = json!({ "method": self.method });
        if let Some(params) = self.params {
            request["params"] = params;
        }
        Ok(Asked::Return(json!({
            "resultType": "input_required",
            "inputRequests": { self.key: request },
            "requestState": state,
        })))
    }
}

/// Unpadded base64url (RFC 4648 §5), for the opaque `requestState`.
fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let byte = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = (byte(0) << 16) | (byte(1) << 8) | byte(2);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Resources, prompts, completion
// ---------------------------------------------------------------------------

fn list_resources() -> Value {
    json!({
        "resources": [
            {
                "uri": README_URI,
                "name": "readme",
                "description": "What this server is",
                "mimeType": "text/markdown",
            },
            {
                "uri": LOGO_URI,
                "name": "logo",
                "description": "A 1x1 PNG image",
                "mimeType": "image/png",
            },
        ]
    })
}

fn list_resource_templates() -> Value {
    json!({
        "resourceTemplates": [{
            "uriTemplate": NOTES_TEMPLATE,
            "name": "note",
            "description": "A note by id",
            "mimeType": "text/plain",
        }]
    })
}

fn read_resource(ctx: &Ctx, params: &Map<String, Value>) -> RpcResult {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("missing params.uri"))?;
    let contents = match uri {
        README_URI => json!({ "uri": uri, "mimeType": "text/markdown", "text": README_TEXT }),
        LOGO_URI => json!({ "uri": uri, "mimeType": "image/png", "blob": LOGO_PNG_BASE64 }),
        _ => match note_id(uri) {
            Some(id) => {
                json!({ "uri": uri, "mimeType": "text/plain", "text": format!("note {id}") })
            }
            None => {
                let code = if ctx.is_modern() {
                    INVALID_PARAMS
                } else {
                    RESOURCE_NOT_FOUND
                };
                return Err(
                    RpcError::new(code, "Resource not found").with_data(json!({ "uri": uri }))
                );
            }
        },
    };
    Ok(json!({ "contents": [contents] }))
}

/// The `{id}` of a `demo://notes/{id}` URI (one non-empty path segment).
fn note_id(uri: &str) -> Option<&str> {
    let id = uri.strip_prefix(NOTES_PREFIX)?;
    let valid = !id.is_empty() && !id.contains(['/', '?', '#']);
    valid.then_some(id)
}

fn list_prompts() -> Value {
    json!({
        "prompts": [
            {
                "name": "greet",
                "description": "Greet someone by name",
                "arguments": [
                    { "name": "name", "description": "Who to greet", "required": true },
                ],
            },
            {
                "name": "review",
                "description": "Review a piece of code",
                "arguments": [
                    { "name": "code", "description": "The code to review", "required": true },
                    { "name": "style", "description": "Review style (default: plain)", "required": false },
                ],
            },
        ]
    })
}

fn get_prompt(params: &Map<String, Value>) -> RpcResult {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("missing params.name"))?;
    let empty = Map::new();
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(arguments)) => arguments,
        Some(_) => {
            return Err(RpcError::invalid_params(
                "params.arguments must be an object",
            ));
        }
    };
    let argument = |key: &str| -> Result<Option<&str>, RpcError> {
        match arguments.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(value)) => Ok(Some(value)),
            Some(_) => Err(RpcError::invalid_params(format!(
                "Argument \"{key}\" of prompt {name} must be a string"
            ))),
        }
    };
    let required = |key: &str| -> Result<&str, RpcError> {
        argument(key)?.ok_or_else(|| {
            RpcError::invalid_params(format!(
                "Missing required argument \"{key}\" for prompt {name}"
            ))
        })
    };
    let (description, text) = match name {
        "greet" => (
            "Greet someone by name",
            format!("Say hello to {}.", required("name")?),
        ),
        "review" => {
            let code = required("code")?;
            let style = argument("style")?.unwrap_or("plain");
            (
                "Review a piece of code",
                format!("Review this code ({style}):\n{code}"),
            )
        }
        _ => return Err(RpcError::invalid_params(format!("Unknown prompt: {name}"))),
    };
    Ok(json!({
        "description": description,
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
    }))
}

fn complete(params: &Map<String, Value>) -> RpcResult {
    let reference = params
        .get("ref")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::invalid_params("missing params.ref"))?;
    let argument = params
        .get("argument")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::invalid_params("missing params.argument"))?;
    let (Some(argument_name), Some(value)) = (
        argument.get("name").and_then(Value::as_str),
        argument.get("value").and_then(Value::as_str),
    ) else {
        return Err(RpcError::invalid_params(
            "params.argument needs string name and value",
        ));
    };
    let values: Vec<&str> = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let prompt = reference.get("name").and_then(Value::as_str);
            if prompt == Some("greet") && argument_name == "name" {
                let prefix = value.to_lowercase();
                GREET_NAMES
                    .into_iter()
                    .filter(|candidate| candidate.to_lowercase().starts_with(&prefix))
                    .collect()
            } else {
                Vec::new()
            }
        }
        Some("ref/resource") => Vec::new(),
        _ => {
            return Err(RpcError::invalid_params(
                "params.ref.type must be ref/prompt or ref/resource",
            ));
        }
    };
    Ok(json!({
        "completion": { "values": values, "total": values.len(), "hasMore": false }
    }))
}
