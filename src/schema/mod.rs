//! What MCP messages must look like, version by version (built in), and
//! validation against an official schema.json on request.
//!
//! The built-in rules are hand-written tables (no schema is embedded): one
//! table per concern, each row carrying the protocol versions it applies
//! to. [`check_message`] judges a whole message (JSON-RPC envelope
//! included), [`check_shape`] one definition on its own, [`ToolArguments`]
//! recorded tool arguments, [`ToolOutput`] tool results against an
//! `outputSchema`. [`official::OfficialSchema`] validates against a
//! schema.json from the specification instead.

mod catalog;
mod common;
mod content;
mod elicitation;
mod envelope;
mod methods;
mod notifications;
mod official;
mod sampling;
mod tasks;
mod tools;
mod version;
mod violation;
mod walker;

use serde_json::Value;

pub use official::{OfficialSchema, OfficialSchemaError};
pub use tools::{ToolArguments, ToolOutput};
pub use violation::{Violation, ViolationKind};

use envelope::Role;
use version::{V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28, Version};
use walker::{Ty, Walker};

/// The protocol versions this crate knows, newest last: the names of
/// [`crate::protocol::Version::ALL`].
pub const VERSIONS: [&str; 5] = [
    Version::ALL[0].as_str(),
    Version::ALL[1].as_str(),
    Version::ALL[2].as_str(),
    Version::ALL[3].as_str(),
    Version::ALL[4].as_str(),
];

/// Checks the JSON-RPC envelope of one message (any direction, any
/// version). A JSON array is a JSON-RPC batch: each element is checked.
pub fn check_envelope(message: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    match message {
        Value::Array(items) => {
            batch_rules(items, &mut out);
            for (i, item) in items.iter().enumerate() {
                envelope::check(item, &format!("/{i}"), false, &mut out);
            }
        }
        _ => envelope::check(message, "", false, &mut out),
    }
    out
}

/// Checks one message's MCP shape for `version` (envelope included).
///
/// `request_method` is the method of the request a response answers (None
/// for requests and notifications, or for a response whose request is
/// unknown: then only the envelope and the rules every result follows
/// apply). Methods and notifications the version does not define give one
/// [`ViolationKind::UnknownMethod`] (custom methods are legal: callers treat
/// it as a warning); a response to such a method gets only the generic
/// result rules. An unknown `version` gets the envelope check plus one
/// `UnknownMethod` saying so. Pointers are rooted at the message.
pub fn check_message(
    version: &str,
    message: &Value,
    request_method: Option<&str>,
) -> Vec<Violation> {
    let Some(version) = Version::parse(version) else {
        let mut out = check_envelope(message);
        out.push(unknown_version(version));
        return out;
    };
    let mut out = Vec::new();
    match message {
        // Batches: only 2025-03-26 allowed them.
        Value::Array(items) if version == V2025_03_26 => {
            batch_rules(items, &mut out);
            for (i, item) in items.iter().enumerate() {
                check_one(version, item, None, &format!("/{i}"), &mut out);
            }
        }
        Value::Array(_) => out.push(Violation::new(
            ViolationKind::JsonRpcVersion,
            "",
            format!(
                "JSON-RPC batches (arrays of messages) are only allowed in MCP 2025-03-26, not {}",
                version.as_str()
            ),
        )),
        _ => check_one(version, message, request_method, "", &mut out),
    }
    dedup(out)
}

/// A batch holds at least one message, and either calls (requests and
/// notifications) or responses, not both.
fn batch_rules(items: &[Value], out: &mut Vec<Violation>) {
    let problem = if items.is_empty() {
        "a JSON-RPC batch must hold at least one message"
    } else {
        let calls = items
            .iter()
            .filter_map(Value::as_object)
            .map(|m| m.contains_key("method"));
        let (mut has_call, mut has_response) = (false, false);
        for is_call in calls {
            has_call |= is_call;
            has_response |= !is_call;
        }
        if !(has_call && has_response) {
            return;
        }
        "a JSON-RPC batch holds either requests and notifications or responses, not both"
    };
    out.push(Violation::new(ViolationKind::JsonRpcVersion, "", problem));
}

fn unknown_version(version: &str) -> Violation {
    Violation::new(
        ViolationKind::UnknownMethod,
        "",
        format!(
            "`{version}` is not an MCP protocol version this build knows ({}); only the JSON-RPC envelope was checked",
            VERSIONS.join(", ")
        ),
    )
}

/// One message (not a batch), its pointers under `base`.
fn check_one(
    version: Version,
    message: &Value,
    request_method: Option<&str>,
    base: &str,
    out: &mut Vec<Violation>,
) {
    envelope::check(message, base, version >= V2025_11_25, out);
    let Some(map) = message.as_object() else {
        return;
    };
    let role = envelope::role(map);
    let mut walker = Walker::new(version, ViolationKind::RequestParams, base, out);
    match role {
        Role::Request | Role::Notification => {
            let Some(name) = map.get("method").and_then(Value::as_str) else {
                return;
            };
            invocation(&mut walker, name, role == Role::Request, message);
        }
        Role::Result => walker.as_kind(ViolationKind::ResultShape, |w| {
            w.at("result", |w| {
                let result = &map["result"];
                match request_method
                    .and_then(methods::find)
                    .filter(|m| m.exists(version))
                {
                    Some(method) => methods::check_result(w, method, result, true),
                    None if result.is_object() => methods::check_any_result(w, result),
                    None => w.mismatch("an object", result),
                }
            })
        }),
        Role::Error | Role::Unknown => {}
    }
}

/// A request or notification named `name`.
fn invocation(walker: &mut Walker<'_>, name: &str, has_id: bool, message: &Value) {
    let version = walker.version;
    let method = methods::find(name).filter(|m| m.exists(version));
    let notification = notifications::find(name).filter(|n| n.versions.contains(version));
    // A request method sent without an id (or vice versa) is judged by
    // what its name says it is.
    match (method, notification) {
        (Some(method), _) if has_id || notification.is_none() => {
            if !method.versions.contains(version) {
                unknown_method(
                    walker,
                    format!(
                        "`{name}` is not a JSON-RPC method in MCP {}: it only travels inside the `inputRequests` of an `input_required` result",
                        version.as_str()
                    ),
                );
            } else if !has_id && version >= V2025_11_25 {
                walker.as_kind(ViolationKind::IdType, |w| {
                    w.missing("id", format!("`{name}` is a request"), None)
                });
            }
            methods::check_request_params(walker, method, message);
        }
        (_, Some(notification)) => walker.as_kind(ViolationKind::Notification, |w| {
            notifications::check_notification_params(w, notification, message)
        }),
        _ => {
            unknown_method(walker, methods::unknown(name, version, has_id));
            // Legacy envelopes still constrain `params._meta` of any method.
            if let Some(params) = message.get("params").filter(|p| p.is_object()) {
                if version <= V2025_06_18 && has_id {
                    walker.at("params", |w| methods::check_legacy_meta(w, params));
                } else if version <= V2025_06_18 {
                    walker.as_kind(ViolationKind::Notification, |w| {
                        w.at("params", |w| notifications::check_meta(w, params))
                    });
                }
            }
        }
    }
}

fn unknown_method(walker: &mut Walker<'_>, message: String) {
    walker.as_kind(ViolationKind::UnknownMethod, |w| {
        w.at("method", |w| w.report(message))
    });
}

/// Removes repeated violations (two rules can see the same problem).
fn dedup(violations: Vec<Violation>) -> Vec<Violation> {
    let mut out: Vec<Violation> = Vec::with_capacity(violations.len());
    for violation in violations {
        if !out.contains(&violation) {
            out.push(violation);
        }
    }
    out
}

/// One definition on its own, for tests and for callers that know what a
/// value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape<'a> {
    /// A request for this method (`method` and `params`; from 2025-11-25
    /// also `jsonrpc` and `id`, which the official definitions include).
    Request(&'a str),
    /// The `params` of a request for this method.
    RequestParams(&'a str),
    /// The `result` answering this method.
    Result(&'a str),
    /// A notification (`method` and `params`; from 2025-11-25 also `jsonrpc`).
    Notification(&'a str),
    /// The `params` of this notification.
    NotificationParams(&'a str),
    /// A tool definition.
    Tool,
    /// A block of tool or prompt content (`ContentBlock`).
    ContentBlock,
    /// A block of sampling content (adds tool use and tool results from 2025-11-25).
    SamplingContent,
    /// Text or blob resource contents.
    ResourceContents,
    /// A prompt definition.
    Prompt,
    /// One message of a prompt.
    PromptMessage,
    /// One message of a sampling request.
    SamplingMessage,
    /// A resource definition.
    Resource,
    /// A resource template definition.
    ResourceTemplate,
    /// One of the client's roots.
    Root,
    /// `clientInfo` / `serverInfo`.
    Implementation,
    /// The client's capabilities.
    ClientCapabilities,
    /// The server's capabilities.
    ServerCapabilities,
    /// A sampling request's model preferences.
    ModelPreferences,
    /// Content annotations (audience, priority, last modified).
    Annotations,
    /// An icon of a tool, prompt, resource or implementation.
    Icon,
    /// One field of an elicitation form (`PrimitiveSchemaDefinition`).
    ElicitationField,
    /// The `error` object of an error response.
    Error,
    /// A task (2025-11-25).
    Task,
    /// 2026-07-28: an `input_required` result.
    InputRequiredResult,
    /// 2026-07-28: the `inputRequests` of an `input_required` result.
    InputRequests,
    /// 2026-07-28: the `inputResponses` of a retried request.
    InputResponses,
}

impl Shape<'_> {
    /// The kind problems inside are reported as (nested rules may be more specific).
    fn kind(self) -> ViolationKind {
        use ViolationKind::*;
        match self {
            Shape::Request(_)
            | Shape::RequestParams(_)
            | Shape::ClientCapabilities
            | Shape::ModelPreferences
            | Shape::SamplingMessage
            | Shape::ElicitationField
            | Shape::InputResponses => RequestParams,
            Shape::Notification(_) | Shape::NotificationParams(_) => Notification,
            Shape::Tool => ToolDefinition,
            Shape::ContentBlock | Shape::SamplingContent => Content,
            Shape::Error => ErrorShape,
            _ => ResultShape,
        }
    }
}

/// Checks one definition on its own (pointers rooted at `value`). A method
/// or notification the version does not define gives one
/// [`ViolationKind::UnknownMethod`], as does an unknown version.
pub fn check_shape(version: &str, shape: Shape<'_>, value: &Value) -> Vec<Violation> {
    let Some(version) = Version::parse(version) else {
        return vec![unknown_version(version)];
    };
    let mut out = Vec::new();
    let mut walker = Walker::new(version, shape.kind(), "", &mut out);
    let modern_only = |walker: &mut Walker<'_>, ty: &Ty| {
        if version >= V2026_07_28 {
            walker.check(ty, value);
        } else {
            unknown_method(walker, format!("{shape:?} exists only in MCP 2026-07-28"));
        }
    };
    match shape {
        Shape::Request(name) | Shape::RequestParams(name) | Shape::Result(name) => {
            match methods::find(name).filter(|m| m.exists(version)) {
                None => unknown_method(&mut walker, methods::unknown(name, version, true)),
                Some(method) => match shape {
                    Shape::Request(_) => request_shape(&mut walker, method, value),
                    Shape::RequestParams(_) => methods::check_params(&mut walker, method, value),
                    _ => {
                        let json_rpc = method.versions.contains(version);
                        methods::check_result(&mut walker, method, value, json_rpc)
                    }
                },
            }
        }
        Shape::Notification(name) | Shape::NotificationParams(name) => {
            match notifications::find(name).filter(|n| n.versions.contains(version)) {
                None => unknown_method(&mut walker, methods::unknown(name, version, false)),
                Some(notification) if matches!(shape, Shape::Notification(_)) => {
                    invocation_shape(&mut walker, name, Envelope::Notification, value);
                    notifications::check_notification_params(&mut walker, notification, value)
                }
                Some(notification) => notifications::check_params(&mut walker, notification, value),
            }
        }
        Shape::Tool => walker.check(&tools::TOOL, value),
        Shape::ContentBlock => walker.check(&content::CONTENT_BLOCK, value),
        Shape::SamplingContent => walker.check(&content::SAMPLING_CONTENT, value),
        Shape::ResourceContents => walker.check(&content::RESOURCE_CONTENTS, value),
        Shape::Prompt => walker.check(&Ty::Obj(&catalog::PROMPT), value),
        Shape::PromptMessage => walker.check(&Ty::Obj(&content::PROMPT_MESSAGE), value),
        Shape::SamplingMessage => walker.check(&Ty::Obj(&content::SAMPLING_MESSAGE), value),
        Shape::Resource => walker.check(&Ty::Obj(&catalog::RESOURCE), value),
        Shape::ResourceTemplate => walker.check(&Ty::Obj(&catalog::RESOURCE_TEMPLATE), value),
        Shape::Root => walker.check(&Ty::Obj(&catalog::ROOT), value),
        Shape::Implementation => walker.check(&Ty::Obj(&common::IMPLEMENTATION), value),
        Shape::ClientCapabilities => walker.check(&Ty::Obj(&common::CLIENT_CAPABILITIES), value),
        Shape::ServerCapabilities => walker.check(&Ty::Obj(&common::SERVER_CAPABILITIES), value),
        Shape::ModelPreferences => walker.check(&Ty::Obj(&sampling::MODEL_PREFERENCES), value),
        Shape::Annotations => walker.check(&Ty::Obj(&common::ANNOTATIONS), value),
        Shape::Icon => walker.check(&Ty::Obj(&common::ICON), value),
        Shape::ElicitationField => walker.check(&elicitation::PRIMITIVE_SCHEMA, value),
        Shape::Error => {
            let mut found = Vec::new();
            envelope::check_error(value, "", &mut found);
            walker.extend(found);
        }
        Shape::Task if version == V2025_11_25 => walker.check(&Ty::Obj(&tasks::TASK), value),
        Shape::Task => unknown_method(&mut walker, "tasks exist only in MCP 2025-11-25".to_owned()),
        Shape::InputRequiredResult => {
            modern_only(&mut walker, &Ty::Obj(&methods::INPUT_REQUIRED_RESULT))
        }
        Shape::InputRequests => modern_only(&mut walker, &Ty::MapOf(&methods::INPUT_REQUEST)),
        Shape::InputResponses => modern_only(&mut walker, &methods::INPUT_RESPONSES),
    }
    dedup(out)
}

/// A request object for `method`, as the version's definition describes it.
fn request_shape(walker: &mut Walker<'_>, method: &methods::Method, value: &Value) {
    if !value.is_object() {
        return walker.mismatch("an object", value);
    }
    // Input requests (2026-07-28) travel without an envelope.
    let envelope = if method.versions.contains(walker.version) {
        Envelope::Request
    } else {
        Envelope::None
    };
    invocation_shape(walker, method.name, envelope, value);
    methods::check_request_params(walker, method, value);
}

/// Which envelope a definition includes (from 2025-11-25 on).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Envelope {
    None,
    Notification,
    Request,
}

/// `method` must be `name`; from 2025-11-25 the definitions of JSON-RPC
/// messages also include the envelope.
fn invocation_shape(walker: &mut Walker<'_>, name: &str, envelope: Envelope, value: &Value) {
    match value.get("method") {
        Some(found) if found.as_str() == Some(name) => {}
        Some(found) => walker.at("method", |w| w.mismatch(Value::from(name), found)),
        None => walker.missing("method", Value::from(name), None),
    }
    if envelope != Envelope::None && walker.version >= V2025_11_25 {
        if envelope == Envelope::Request && value.get("id").is_none() {
            walker.as_kind(ViolationKind::IdType, |w| {
                w.missing("id", "a string or an integer", None)
            });
        }
        let mut envelope = Vec::new();
        envelope::check(value, "", true, &mut envelope);
        walker.extend(envelope);
    }
}

#[cfg(test)]
mod tests;
