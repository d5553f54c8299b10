//! A small MCP server over Streamable HTTP, built on rmcp's server side. It
//! serves both eras on one endpoint: legacy clients (`initialize`, sessions,
//! 2025-11-25 and older) and modern ones (2026-07-28: stateless, per-request
//! `_meta`, `server/discover`, `input_required` results).
//!
//! ```text
//! cargo run --example rmcp_http_server -- 8123      # or PORT=8123
//! # → prints http://127.0.0.1:8123/mcp once it listens
//! ```
//!
//! It always binds 127.0.0.1 and serves `/mcp`. `.ci/conformance.sh` runs the
//! official conformance suite against it directly, through
//! `mcpcassette record` and against `mcpcassette replay`.
//!
//! What it offers:
//! - tools `echo` and `add`, a resource `demo://greeting`, a prompt `greet`;
//! - the fixture tools, resources and prompts the conformance scenarios call
//!   (`test_simple_text`, `test://static-text`, `test_simple_prompt`, ...),
//!   including the SEP-2322 `input_required` tools, whose `requestState` is
//!   sealed with a SHA-256 tag over a fixed key so that a tampered state is
//!   rejected.
//!
//! - the tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`, 2026-07-28)
//!   with the conformance fixtures `greet` (sync), `slow_compute`,
//!   `failing_job`, `protocol_error_job`, `confirm_delete`, `multi_input` and
//!   `test_tool_with_task`, run by rmcp's `TaskManager`;
//! - `subscriptions/listen` streams, notified by `test_trigger_tool_change`
//!   and `test_trigger_prompt_change` (a legacy session that calls them is
//!   notified too).
//!
//! Output is deterministic: no clocks, no random values in any result (rmcp's
//! own session ids, SSE event ids, task ids and task timestamps aside), so a
//! replayed session can be compared with a live one.

#![allow(deprecated)] // logging, sampling and resources/subscribe are legacy-only APIs

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rmcp::model::*;
use rmcp::service::{RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::Mutex;

/// A 1x1 red PNG.
const IMAGE_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";
/// A WAV header with no samples.
const AUDIO_WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";
const CACHE_TTL_MS: u64 = 60_000;
/// Key for the integrity tag of `requestState`. Fixed, because this is a test
/// server whose output must not change between runs.
const STATE_KEY: &[u8] = b"mcpcassette rmcp_http_server request state";

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("expected a JSON object, got {other}"),
    }
}

fn no_arguments() -> JsonObject {
    object(json!({"type": "object", "properties": {}}))
}

/// SEP-2243: its `value` argument is mirrored in an `Mcp-Param-Value` header,
/// which rmcp checks against the body (it finds the tool via `get_tool`).
fn custom_header_tool() -> Tool {
    Tool::new(
        "test_custom_header",
        "Echoes a value that the client also sends as a header (SEP-2243)",
        object(json!({
            "type": "object",
            "properties": {"value": {"type": "string", "x-mcp-header": "Value"}},
            "required": ["value"]
        })),
    )
}

fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

// ─── requestState sealing ───────────────────────────────────────────────────

fn tag(payload: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(STATE_KEY);
    hasher.update(payload);
    hex::encode(hasher.finalize())
}

/// `hex(json).hex(sha256(key || json))`.
fn seal(state: &Value) -> String {
    let payload = state.to_string();
    format!(
        "{}.{}",
        hex::encode(payload.as_bytes()),
        tag(payload.as_bytes())
    )
}

fn open(sealed: &str) -> Result<Value, ErrorData> {
    let tampered = || ErrorData::invalid_params("requestState failed integrity verification", None);
    let (payload, mac) = sealed.split_once('.').ok_or_else(tampered)?;
    let payload = hex::decode(payload).map_err(|_| tampered())?;
    if tag(&payload) != mac {
        return Err(tampered());
    }
    serde_json::from_slice(&payload).map_err(|_| tampered())
}

// ─── input requests (SEP-2322) ──────────────────────────────────────────────

fn elicit(message: &str, properties: Value, required: Value) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.into(),
            requested_schema: serde_json::from_value(json!({
                "type": "object",
                "properties": properties,
                "required": required,
            }))
            .expect("a valid elicitation schema"),
        },
    ))
}

fn sample(prompt: &str) -> InputRequest {
    InputRequest::CreateMessage(CreateMessageRequest::new(CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(prompt)],
        100,
    )))
}

fn list_roots() -> InputRequest {
    InputRequest::ListRoots(ListRootsRequest::default())
}

fn ask(requests: impl IntoIterator<Item = (&'static str, InputRequest)>) -> InputRequests {
    requests
        .into_iter()
        .map(|(key, request)| (key.to_owned(), request))
        .collect()
}

/// A usable answer is a JSON object; anything else counts as missing, so the
/// server asks again.
fn answer<'a>(responses: Option<&'a InputResponses>, key: &str) -> Option<&'a JsonObject> {
    responses
        .and_then(|r| r.get(key))
        .and_then(Value::as_object)
}

/// What `slow_compute` answers.
fn computed(args: &JsonObject) -> String {
    let label = args.get("label").and_then(Value::as_str).unwrap_or("job");
    format!("Computed {label}")
}

/// -32021 naming the tasks extension, for a task tool or task method the
/// request's client did not declare it for.
fn tasks_required() -> ErrorData {
    ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

fn declares_tasks(cx: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
    if cx.client_capabilities().is_some_and(|c| c.supports_tasks()) {
        Ok(())
    } else {
        Err(tasks_required())
    }
}

fn content_str<'a>(response: &'a JsonObject, field: &str) -> Option<&'a str> {
    response.get("content")?.get(field)?.as_str()
}

// ─── the server ─────────────────────────────────────────────────────────────

#[derive(Clone, Default)]
struct Demo {
    /// Open `subscriptions/listen` streams (2026-07-28).
    listeners: Arc<Mutex<HashMap<u64, SubscriptionSink>>>,
    next_listener: Arc<AtomicU64>,
    /// Tasks (SEP-2663) the task tools created, shared by every request.
    tasks: TaskManager,
}

impl Demo {
    async fn listeners(&self) -> Vec<SubscriptionSink> {
        self.listeners.lock().await.values().cloned().collect()
    }

    fn tools() -> Vec<Tool> {
        let mut tools = vec![
            Tool::new(
                "echo",
                "Echoes a message back",
                object(json!({
                    "type": "object",
                    "properties": {"message": {"type": "string"}},
                    "required": ["message"]
                })),
            ),
            Tool::new(
                "add",
                "Adds two numbers",
                object(json!({
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]
                })),
            ),
            Tool::new(
                "test_sampling",
                "Requests LLM sampling from the client (legacy era)",
                object(json!({
                    "type": "object",
                    "properties": {"prompt": {"type": "string"}},
                    "required": ["prompt"]
                })),
            ),
            Tool::new(
                "json_schema_2020_12_tool",
                "Tool with JSON Schema 2020-12 features",
                object(json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "$defs": {
                        "address": {
                            "$anchor": "address",
                            "type": "object",
                            "properties": {
                                "street": {"type": "string"},
                                "city": {"type": "string"}
                            }
                        }
                    },
                    "properties": {
                        "name": {"type": "string"},
                        "address": {"$ref": "#/$defs/address"}
                    },
                    "allOf": [{"anyOf": [{"required": ["name"]}, {"required": ["address"]}]}],
                    "if": {"required": ["address"]},
                    "then": {"properties": {"address": {"required": ["street"]}}},
                    "else": {"required": ["name"]},
                    "additionalProperties": false
                })),
            ),
            custom_header_tool(),
        ];
        let simple = [
            ("test_simple_text", "Returns simple text content"),
            ("test_image_content", "Returns image content"),
            ("test_audio_content", "Returns audio content"),
            (
                "test_embedded_resource",
                "Returns embedded resource content",
            ),
            (
                "test_multiple_content_types",
                "Returns multiple content types",
            ),
            ("test_tool_with_logging", "Sends log messages while it runs"),
            ("test_error_handling", "Always returns a tool error"),
            ("test_tool_with_progress", "Reports progress"),
            ("test_reconnection", "Completes after a short pause"),
            (
                "test_trigger_tool_change",
                "Notifies listeners that the tool list changed",
            ),
            (
                "test_trigger_prompt_change",
                "Notifies listeners that the prompt list changed",
            ),
            (
                "test_missing_capability",
                "Requires the sampling client capability",
            ),
            (
                "test_streaming_elicitation",
                "Returns an input_required elicitation",
            ),
            (
                "test_logging_tool",
                "Logs only when the request sets a log level",
            ),
            (
                "test_input_required_result_elicitation",
                "Requires an elicitation input (SEP-2322)",
            ),
            (
                "test_input_required_result_sampling",
                "Requires a sampling input (SEP-2322)",
            ),
            (
                "test_input_required_result_list_roots",
                "Requires a roots/list input (SEP-2322)",
            ),
            (
                "test_input_required_result_request_state",
                "Round-trips a sealed requestState (SEP-2322)",
            ),
            (
                "test_input_required_result_multiple_inputs",
                "Requires three inputs in one round (SEP-2322)",
            ),
            (
                "test_input_required_result_multi_round",
                "Asks for input over several rounds (SEP-2322)",
            ),
            (
                "test_input_required_result_tampered_state",
                "Rejects a tampered requestState (SEP-2322)",
            ),
            (
                "test_input_required_result_capabilities",
                "Asks only for inputs the client declared (SEP-2322)",
            ),
        ];
        tools.extend(
            simple
                .into_iter()
                .map(|(name, description)| Tool::new(name, description, no_arguments())),
        );
        tools.extend(Self::task_tools());
        tools
    }

    /// The tasks extension's conformance fixtures.
    fn task_tools() -> Vec<Tool> {
        let with = |properties: Value| object(json!({"type": "object", "properties": properties}));
        vec![
            Tool::new(
                "greet",
                "Greets by name, synchronously",
                with(json!({"name": {"type": "string"}})),
            ),
            Tool::new(
                "slow_compute",
                "Runs as a task for `seconds` seconds (cancellable)",
                with(json!({"seconds": {"type": "number"}, "label": {"type": "string"}})),
            ),
            Tool::new(
                "failing_job",
                "A task (required) whose tool reports an error after a second",
                no_arguments(),
            ),
            Tool::new(
                "protocol_error_job",
                "A task (required) that fails with a protocol error",
                no_arguments(),
            ),
            Tool::new(
                "confirm_delete",
                "A task (required) that asks the client to confirm",
                with(json!({"filename": {"type": "string"}})),
            ),
            Tool::new(
                "multi_input",
                "A task (required) that asks two questions at once",
                no_arguments(),
            ),
            Tool::new(
                "test_tool_with_task",
                "Asks for a name (input_required), then runs as a task (required)",
                no_arguments(),
            ),
        ]
    }

    /// The task tools: a task when the request declares the tasks
    /// extension; without it `slow_compute` runs synchronously and the
    /// others, which require a task, are refused with -32021. `None` for
    /// any other tool.
    async fn call_task_tool(
        &self,
        request: &CallToolRequestParams,
        cx: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let args = request.arguments.clone().unwrap_or_default();
        let declared = cx.client_capabilities().is_some_and(|c| c.supports_tasks());
        let name = request.name.as_ref();
        if ![
            "slow_compute",
            "failing_job",
            "protocol_error_job",
            "confirm_delete",
            "multi_input",
            "test_tool_with_task",
        ]
        .contains(&name)
        {
            return None;
        }
        if !declared {
            if name == "slow_compute" {
                let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
                tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 60.0))).await;
                return Some(Ok(text(computed(&args)).into()));
            }
            return Some(Err(tasks_required()));
        }
        let options = TaskOptions::new().with_poll_interval_ms(200);
        let task = match name {
            "slow_compute" => {
                let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
                self.tasks.spawn(options, move |ctx| {
                    Box::pin(async move {
                        tokio::select! {
                            () = ctx.cancelled() => Err(TaskExit::Cancelled),
                            () = tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 60.0))) => {
                                Ok(text(computed(&args)))
                            }
                        }
                    })
                })
            }
            "failing_job" => self.tasks.spawn(options, |_| {
                Box::pin(async {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Ok(CallToolResult::error(vec![ContentBlock::text(
                        "The job failed",
                    )]))
                })
            }),
            "protocol_error_job" => self.tasks.spawn(options, |_| {
                Box::pin(async {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    Err(TaskExit::Error(ErrorData::internal_error(
                        "The job crashed",
                        None,
                    )))
                })
            }),
            "confirm_delete" => {
                let filename = args
                    .get("filename")
                    .and_then(Value::as_str)
                    .unwrap_or("the file")
                    .to_owned();
                self.tasks.spawn(options, move |ctx| {
                    Box::pin(async move {
                        let question = elicit(
                            &format!("Delete {filename}?"),
                            json!({"confirm": {"type": "boolean"}}),
                            json!(["confirm"]),
                        );
                        let answer = tokio::select! {
                            () = ctx.cancelled() => return Err(TaskExit::Cancelled),
                            answer = ctx.request_input("confirm", question) => answer?,
                        };
                        let confirmed =
                            answer.pointer("/content/confirm") == Some(&Value::Bool(true));
                        Ok(text(if confirmed {
                            format!("Deleted {filename}")
                        } else {
                            format!("Kept {filename}")
                        }))
                    })
                })
            }
            "multi_input" => self.tasks.spawn(options, |ctx| {
                Box::pin(async move {
                    let question = |what: &str| {
                        elicit(
                            what,
                            json!({"answer": {"type": "string"}}),
                            json!(["answer"]),
                        )
                    };
                    let (first, second) = tokio::select! {
                        () = ctx.cancelled() => return Err(TaskExit::Cancelled),
                        answers = async {
                            tokio::join!(
                                ctx.request_input("first", question("First question?")),
                                ctx.request_input("second", question("Second question?")),
                            )
                        } => answers,
                    };
                    let (first, second) = (first?, second?);
                    let said = |answer: &Value| {
                        answer
                            .pointer("/content/answer")
                            .and_then(Value::as_str)
                            .unwrap_or("-")
                            .to_owned()
                    };
                    Ok(text(format!(
                        "Answers: {}, {}",
                        said(&first),
                        said(&second)
                    )))
                })
            }),
            _ => {
                // test_tool_with_task: the name first (SEP-2322), then a task.
                let Some(answer) = answer(request.input_responses.as_ref(), "user_name") else {
                    let ask_name = elicit(
                        "What is your name?",
                        json!({"name": {"type": "string"}}),
                        json!(["name"]),
                    );
                    return Some(Ok(InputRequiredResult::from_input_requests(ask([(
                        "user_name",
                        ask_name,
                    )]))
                    .into()));
                };
                let greeting = format!(
                    "Hello, {}!",
                    content_str(answer, "name").unwrap_or("friend")
                );
                self.tasks.spawn(options, move |_| {
                    Box::pin(async move { Ok(text(greeting)) })
                })
            }
        };
        Some(Ok(CallToolResponse::Task(CreateTaskResult::new(task))))
    }

    /// The SEP-2322 tools: `input_required` until the client retries with the
    /// answers (and, where used, the sealed state).
    fn call_input_required(
        &self,
        request: &CallToolRequestParams,
        meta: &RequestMetaObject,
    ) -> Result<CallToolResponse, ErrorData> {
        let responses = request.input_responses.as_ref();
        let state = request.request_state.as_deref();
        let name_request = || {
            (
                "user_name",
                elicit(
                    "What is your name?",
                    json!({"name": {"type": "string"}}),
                    json!(["name"]),
                ),
            )
        };
        Ok(match request.name.as_ref() {
            "test_input_required_result_elicitation" => match answer(responses, "user_name") {
                Some(r) => text(format!(
                    "Hello, {}!",
                    content_str(r, "name").unwrap_or("friend")
                ))
                .into(),
                None => InputRequiredResult::from_input_requests(ask([name_request()])).into(),
            },
            "test_input_required_result_sampling" => match answer(responses, "capital_question") {
                Some(r) => text(format!(
                    "Sampling response: {}",
                    content_str(r, "text").unwrap_or("(no sampling text)")
                ))
                .into(),
                None => InputRequiredResult::from_input_requests(ask([(
                    "capital_question",
                    sample("What is the capital of France?"),
                )]))
                .into(),
            },
            "test_input_required_result_list_roots" => match answer(responses, "client_roots") {
                Some(r) => {
                    let uris: Vec<&str> = r
                        .get("roots")
                        .and_then(Value::as_array)
                        .map(|roots| {
                            roots
                                .iter()
                                .filter_map(|root| root.get("uri").and_then(Value::as_str))
                                .collect()
                        })
                        .unwrap_or_default();
                    text(format!("Client roots: [{}]", uris.join(", "))).into()
                }
                None => {
                    InputRequiredResult::from_input_requests(ask([("client_roots", list_roots())]))
                        .into()
                }
            },
            "test_input_required_result_request_state"
            | "test_input_required_result_tampered_state" => match state {
                None => InputRequiredResult::new(
                    Some(ask([(
                        "confirm",
                        elicit(
                            "Please confirm",
                            json!({"ok": {"type": "boolean"}}),
                            json!(["ok"]),
                        ),
                    )])),
                    Some(seal(&json!({"stage": "confirm"}))),
                )
                .into(),
                Some(sealed) => {
                    open(sealed)?;
                    text("Confirmed: state-ok").into()
                }
            },
            "test_input_required_result_multiple_inputs" => {
                if let Some(sealed) = state {
                    open(sealed)?;
                }
                let complete = ["user_name", "greeting", "client_roots"]
                    .iter()
                    .all(|key| answer(responses, key).is_some());
                if complete && state.is_some() {
                    text("All inputs received").into()
                } else {
                    InputRequiredResult::new(
                        Some(ask([
                            name_request(),
                            ("greeting", sample("Generate a greeting")),
                            ("client_roots", list_roots()),
                        ])),
                        Some(seal(&json!({"stage": "gather"}))),
                    )
                    .into()
                }
            }
            "test_input_required_result_multi_round" => {
                let round = match state {
                    None => 0,
                    Some(sealed) => open(sealed)?
                        .get("round")
                        .and_then(Value::as_i64)
                        .unwrap_or(0),
                };
                match round {
                    0 => InputRequiredResult::new(
                        Some(ask([(
                            "step1",
                            elicit(
                                "Step 1: What is your name?",
                                json!({"name": {"type": "string"}}),
                                json!(["name"]),
                            ),
                        )])),
                        Some(seal(&json!({"round": 1}))),
                    )
                    .into(),
                    1 => InputRequiredResult::new(
                        Some(ask([(
                            "step2",
                            elicit(
                                "Step 2: What is your favorite color?",
                                json!({"color": {"type": "string"}}),
                                json!(["color"]),
                            ),
                        )])),
                        Some(seal(&json!({"round": 2}))),
                    )
                    .into(),
                    _ => text("Multi-round flow complete").into(),
                }
            }
            "test_input_required_result_capabilities" => {
                if responses.is_some() {
                    return Ok(text("Capability-aware flow complete").into());
                }
                let capabilities = meta.client_capabilities().unwrap_or_default();
                let mut requests = InputRequests::new();
                if capabilities.elicitation.is_some() {
                    let (key, request) = name_request();
                    requests.insert(key.into(), request);
                }
                if capabilities.sampling.is_some() {
                    requests.insert("greeting".into(), sample("Generate a greeting"));
                }
                if capabilities.roots.is_some() {
                    requests.insert("client_roots".into(), list_roots());
                }
                if requests.is_empty() {
                    text("Client declared no MRTR-capable capabilities").into()
                } else {
                    InputRequiredResult::from_input_requests(requests).into()
                }
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("Unknown tool: {other}"),
                    None,
                ));
            }
        })
    }
}

impl ServerHandler for Demo {
    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == "test_custom_header").then(custom_header_tool)
    }

    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_logging()
                .enable_completions()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("mcpcassette-rmcp-http-server", "0.1.0"))
        .with_instructions("A demo server for mcpcassette: echo, add, and conformance fixtures.")
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let key = self.next_listener.fetch_add(1, Ordering::Relaxed);
        self.listeners
            .lock()
            .await
            .insert(key, context.sink().clone());
        context.cancelled().await;
        self.listeners.lock().await.remove(&key);
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        declares_tasks(&cx)?;
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        declares_tasks(&cx)?;
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        declares_tasks(&cx)?;
        self.tasks.cancel_task(&request.task_id)
    }

    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult {
            tools: Self::tools(),
            ..Default::default()
        }
        .with_ttl_ms(CACHE_TTL_MS)
        .with_cache_scope(CacheScope::Public))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name.starts_with("test_input_required_result_") {
            return self.call_input_required(&request, &cx.meta);
        }
        if let Some(answer) = self.call_task_tool(&request, &cx).await {
            return answer;
        }
        let args = request.arguments.clone().unwrap_or_default();
        let result = match request.name.as_ref() {
            "echo" => {
                let message = args
                    .get("message")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ErrorData::invalid_params("message must be a string", None))?;
                text(format!("Echo: {message}"))
            }
            "add" => {
                let number = |key: &str| {
                    args.get(key).and_then(Value::as_f64).ok_or_else(|| {
                        ErrorData::invalid_params(format!("{key} must be a number"), None)
                    })
                };
                let sum = number("a")? + number("b")?;
                let mut result = text(sum.to_string());
                result.structured_content = Some(json!({"sum": sum}));
                result
            }
            "greet" => text(format!(
                "Hello, {}!",
                args.get("name").and_then(Value::as_str).unwrap_or("World")
            )),
            "test_custom_header" => text(
                args.get("value")
                    .and_then(Value::as_str)
                    .ok_or_else(|| ErrorData::invalid_params("value must be a string", None))?,
            ),
            "test_simple_text" => text("This is a simple text response for testing."),
            "test_image_content" => {
                CallToolResult::success(vec![ContentBlock::image(IMAGE_PNG, "image/png")])
            }
            "test_audio_content" => CallToolResult::success(vec![ContentBlock::Audio(
                AudioContent::new(AUDIO_WAV, "audio/wav"),
            )]),
            "test_embedded_resource" => CallToolResult::success(vec![ContentBlock::resource(
                ResourceContents::TextResourceContents {
                    uri: "test://embedded-resource".into(),
                    mime_type: Some("text/plain".into()),
                    text: "This is an embedded resource content.".into(),
                    meta: None,
                },
            )]),
            "test_multiple_content_types" => CallToolResult::success(vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(IMAGE_PNG, "image/png"),
                ContentBlock::resource(ResourceContents::TextResourceContents {
                    uri: "test://mixed-content-resource".into(),
                    mime_type: Some("application/json".into()),
                    text: r#"{"test":"data","value":123}"#.into(),
                    meta: None,
                }),
            ]),
            "test_tool_with_logging" => {
                for message in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ] {
                    let _ = cx
                        .peer
                        .notify_logging_message(
                            LoggingMessageNotificationParam::new(
                                LoggingLevel::Info,
                                json!(message),
                            )
                            .with_logger("rmcp_http_server"),
                        )
                        .await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                text("Logging test completed")
            }
            "test_error_handling" => CallToolResult::error(vec![ContentBlock::text(
                "This tool intentionally returns an error for testing",
            )]),
            "test_tool_with_progress" => {
                if let Some(token) = cx.meta.get_progress_token() {
                    for (progress, message) in
                        [(0.0, "Starting"), (50.0, "Halfway"), (100.0, "Complete")]
                    {
                        let _ = cx
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(token.clone(), progress)
                                    .with_total(100.0)
                                    .with_message(message),
                            )
                            .await;
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                }
                text("Progress test completed")
            }
            "test_sampling" => {
                let prompt = args
                    .get("prompt")
                    .and_then(Value::as_str)
                    .unwrap_or("Hello");
                match cx
                    .peer
                    .create_message(CreateMessageRequestParams::new(
                        vec![SamplingMessage::user_text(prompt)],
                        100,
                    ))
                    .await
                {
                    Ok(result) => text(format!(
                        "LLM response: {}",
                        result
                            .message
                            .content
                            .first()
                            .and_then(|c| c.as_text())
                            .map(|t| t.text.clone())
                            .unwrap_or_else(|| "No text response".into())
                    )),
                    Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                        "Sampling error: {e}"
                    ))]),
                }
            }
            "json_schema_2020_12_tool" => text(format!(
                "Hello, {}!",
                args.get("name").and_then(Value::as_str).unwrap_or("world")
            )),
            "test_reconnection" => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                text("Reconnection test completed")
            }
            // A 2026-07-28 server notifies the listen streams that asked;
            // a legacy one notifies the session that changed the list.
            "test_trigger_tool_change" => {
                if cx.meta.protocol_version().is_none() {
                    let _ = cx.peer.notify_tool_list_changed().await;
                }
                for listener in self.listeners().await {
                    let _ = listener.notify_tool_list_changed().await;
                }
                text("Tool list change triggered")
            }
            "test_trigger_prompt_change" => {
                if cx.meta.protocol_version().is_none() {
                    let _ = cx.peer.notify_prompt_list_changed().await;
                }
                for listener in self.listeners().await {
                    let _ = listener.notify_prompt_list_changed().await;
                }
                text("Prompt list change triggered")
            }
            "test_missing_capability" => {
                let capabilities = cx.meta.client_capabilities().unwrap_or_default();
                if capabilities.sampling.is_none() {
                    return Err(ErrorData::missing_required_client_capability(
                        ClientCapabilities::builder().enable_sampling().build(),
                    ));
                }
                text("Required capability declared")
            }
            "test_streaming_elicitation" => {
                return Ok(InputRequiredResult::from_input_requests(ask([(
                    "streaming_elicitation",
                    elicit(
                        "Provide a value",
                        json!({"value": {"type": "string"}}),
                        json!(["value"]),
                    ),
                )]))
                .into());
            }
            "test_logging_tool" => {
                if let Some(level) = cx.meta.log_level() {
                    let _ = cx
                        .peer
                        .notify_logging_message(
                            LoggingMessageNotificationParam::new(
                                level,
                                json!("logLevel was requested"),
                            )
                            .with_logger("rmcp_http_server"),
                        )
                        .await;
                }
                text("Logging tool completed")
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("Unknown tool: {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult {
            resources: vec![
                Resource::new("demo://greeting", "Greeting")
                    .with_description("A fixed greeting")
                    .with_mime_type("text/plain"),
                Resource::new("test://static-text", "Static Text Resource")
                    .with_description("A static text resource for testing")
                    .with_mime_type("text/plain"),
                Resource::new("test://static-binary", "Static Binary Resource")
                    .with_description("A static binary resource for testing")
                    .with_mime_type("image/png"),
            ],
            ..Default::default()
        }
        .with_ttl_ms(CACHE_TTL_MS)
        .with_cache_scope(CacheScope::Public))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult {
            resource_templates: vec![
                ResourceTemplate::new("test://template/{id}/data", "Dynamic Resource")
                    .with_description("A resource with a parameter")
                    .with_mime_type("application/json"),
            ],
            ..Default::default()
        }
        .with_ttl_ms(CACHE_TTL_MS)
        .with_cache_scope(CacheScope::Public))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let text_contents = |mime: &str, text: String| ResourceContents::TextResourceContents {
            uri: uri.into(),
            mime_type: Some(mime.into()),
            text,
            meta: None,
        };
        let contents = match uri {
            "demo://greeting" => text_contents("text/plain", "Hello from mcpcassette!".into()),
            "test://static-text" => text_contents(
                "text/plain",
                "This is the content of the static text resource.".into(),
            ),
            "test://static-binary" => ResourceContents::BlobResourceContents {
                uri: uri.into(),
                mime_type: Some("image/png".into()),
                blob: IMAGE_PNG.into(),
                meta: None,
            },
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) => text_contents(
                    "application/json",
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                        .to_string(),
                ),
                None => {
                    return Err(ErrorData::resource_not_found(
                        format!("Resource not found: {uri}"),
                        Some(json!({"uri": uri})),
                    ));
                }
            },
        };
        Ok(ReadResourceResult::new(vec![contents])
            .with_ttl_ms(CACHE_TTL_MS)
            .with_cache_scope(CacheScope::Public)
            .into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult {
            prompts: vec![
                Prompt::new(
                    "greet",
                    Some("Greets someone by name"),
                    Some(vec![
                        PromptArgument::new("name")
                            .with_description("Who to greet")
                            .with_required(true),
                    ]),
                ),
                Prompt::new(
                    "test_simple_prompt",
                    Some("A simple test prompt with no arguments"),
                    None,
                ),
                Prompt::new(
                    "test_prompt_with_arguments",
                    Some("A test prompt that accepts arguments"),
                    Some(vec![
                        PromptArgument::new("arg1")
                            .with_description("First test argument")
                            .with_required(true),
                        PromptArgument::new("arg2")
                            .with_description("Second test argument")
                            .with_required(false),
                    ]),
                ),
                Prompt::new(
                    "test_prompt_with_embedded_resource",
                    Some("A test prompt that includes an embedded resource"),
                    None,
                ),
                Prompt::new(
                    "test_prompt_with_image",
                    Some("A test prompt that includes an image"),
                    None,
                ),
                Prompt::new(
                    "test_input_required_result_prompt",
                    Some("A prompt that needs elicited input first (SEP-2322)"),
                    None,
                ),
            ],
            ..Default::default()
        }
        .with_ttl_ms(CACHE_TTL_MS)
        .with_cache_scope(CacheScope::Public))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let arguments = request.arguments.clone().unwrap_or_default();
        let argument = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let result = match request.name.as_str() {
            "greet" => GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                format!("Please greet {}.", argument("name")),
            )])
            .with_description("A greeting"),
            "test_simple_prompt" => GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                "This is a simple test prompt.",
            )])
            .with_description("A simple test prompt"),
            "test_prompt_with_arguments" => GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    argument("arg1"),
                    argument("arg2")
                ),
            )])
            .with_description("A prompt with arguments"),
            "test_prompt_with_embedded_resource" => GetPromptResult::new(vec![
                PromptMessage::new_text(Role::User, "Here is a resource:"),
                PromptMessage::new_resource(
                    Role::User,
                    "test://static-text".into(),
                    Some("text/plain".into()),
                    Some("Resource content for prompt".into()),
                    None,
                    None,
                    None,
                ),
            ])
            .with_description("A prompt with an embedded resource"),
            "test_prompt_with_image" => GetPromptResult::new(vec![
                PromptMessage::new_text(Role::User, "Here is an image:"),
                PromptMessage::new(
                    Role::User,
                    ContentBlock::Image(ImageContent::new(IMAGE_PNG, "image/png")),
                ),
            ])
            .with_description("A prompt with an image"),
            "test_input_required_result_prompt" => {
                return Ok(
                    match answer(request.input_responses.as_ref(), "user_context") {
                        Some(r) => GetPromptResult::new(vec![PromptMessage::new_text(
                            Role::User,
                            format!(
                                "Prompt with elicited context: {}",
                                content_str(r, "context").unwrap_or("(no context)")
                            ),
                        )])
                        .with_description("A prompt built from elicited context")
                        .into(),
                        None => InputRequiredResult::from_input_requests(ask([(
                            "user_context",
                            elicit(
                                "What context should the prompt use?",
                                json!({"context": {"type": "string"}}),
                                json!(["context"]),
                            ),
                        )]))
                        .into(),
                    },
                );
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("Unknown prompt: {other}"),
                    None,
                ));
            }
        };
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let values: Vec<String> = match (&request.r#ref, request.argument.name.as_str()) {
            (Reference::Resource(_), "id") => vec!["1".into(), "2".into(), "3".into()],
            (Reference::Prompt(_), "name") => {
                vec!["Alice".into(), "Bob".into(), "Charlie".into()]
            }
            (Reference::Prompt(_), "arg1") => {
                vec!["paris".into(), "park".into(), "party".into()]
            }
            (Reference::Prompt(_), "style") => {
                vec!["casual".into(), "formal".into(), "friendly".into()]
            }
            (Reference::Prompt(prompt), _) => vec![prompt.name.clone()],
            _ => vec![],
        };
        let prefix = request.argument.value.as_str();
        let values = values
            .into_iter()
            .filter(|v| v.starts_with(prefix))
            .collect();
        Ok(CompleteResult::new(
            CompletionInfo::new(values).map_err(|e| ErrorData::internal_error(e, None))?,
        ))
    }
}

fn port() -> u16 {
    let raw = std::env::args()
        .nth(1)
        .or_else(|| std::env::var("PORT").ok())
        .unwrap_or_else(|| "0".into());
    raw.parse()
        .unwrap_or_else(|_| panic!("port must be a number, got {raw:?}"))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener =
        tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port()))).await?;
    let address = listener.local_addr()?;

    // One `Demo` behind every request: a 2026-07-28 request is served
    // statelessly, so a `subscriptions/listen` stream and the tool call that
    // changes a list arrive at different service instances, which must share
    // the open listeners.
    let demo = Demo::default();
    let service = StreamableHttpService::new(
        move || Ok(demo.clone()),
        Arc::new(LocalSessionManager::default()),
        // Legacy clients get sessions; 2026-07-28 requests are always served
        // statelessly. The default Host allow-list is loopback only.
        StreamableHttpServerConfig::default(),
    );
    println!("http://{address}/mcp");

    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => accepted?.0,
            _ = tokio::signal::ctrl_c() => break,
            _ = terminate.recv() => break,
        };
        // Small writes must not wait for delayed ACKs (Nagle).
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let handler = service_fn(move |request| {
                let service = service.clone();
                async move {
                    // Only /mcp is an MCP endpoint.
                    if request.uri().path() != "/mcp" {
                        let mut response = http::Response::new(http_body_util::BodyExt::boxed(
                            http_body_util::Full::new(bytes::Bytes::from_static(b"not found\n")),
                        ));
                        *response.status_mut() = http::StatusCode::NOT_FOUND;
                        return Ok::<_, Infallible>(response);
                    }
                    Ok(service.handle(request).await)
                }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await;
        });
    }
    Ok(())
}
