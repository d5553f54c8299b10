//! How a [`MockServer`] answers a request: the version and handshake
//! rules, the built-in methods, and the registered handlers.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::respond::{Leaf, Target};
use super::server::{Context, Entry, MockServer, lock};
use crate::jsonrpc::{self, RpcError, codes};
use crate::protocol::{self, Era};

/// Resource not found before 2026-07-28 (which uses -32602).
const RESOURCE_NOT_FOUND: i64 = -32002;

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
