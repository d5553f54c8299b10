//! The cassette file format, version 1.
//!
//! A cassette is pretty-printed JSON whose keys keep the order written here,
//! so that a re-recording shows up in a pull request as a readable diff.
//! Every JSON-RPC message is stored whole, exactly as it was sent; ids are
//! kept for reference and never used for matching.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Rules;
use crate::json::RawMessage;
use crate::protocol::Era;

/// The format version this build writes.
pub const FORMAT_VERSION: u32 = 1;

/// One recorded session with an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cassette {
    /// Format version; see [`FORMAT_VERSION`] for the reading rule.
    pub format_version: u32,
    /// When recording started, RFC 3339 in UTC.
    pub recorded_at: String,
    /// How the client reached the server.
    pub transport: Transport,
    /// The era and version the session negotiated.
    pub protocol: ProtocolInfo,
    /// Who answered: from `initialize` or `server/discover`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerIdentity>,
    /// How live requests are matched against this cassette.
    #[serde(default, skip_serializing_if = "Rules::is_default")]
    pub rules: Rules,
    /// Server messages sent before the client said anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub opening: Vec<Event>,
    /// Client messages in the order they were sent, each with what answered it.
    #[serde(deserialize_with = "super::presize::interactions")]
    pub interactions: Vec<Interaction>,
}

impl Cassette {
    /// Everything but its interactions: what a cassette written one
    /// interaction at a time starts from ([`super::save_streamed`]).
    pub fn header(&self) -> Cassette {
        Cassette {
            format_version: self.format_version,
            recorded_at: self.recorded_at.clone(),
            transport: self.transport.clone(),
            protocol: self.protocol.clone(),
            server: self.server.clone(),
            rules: self.rules.clone(),
            opening: self.opening.clone(),
            interactions: Vec::new(),
        }
    }

    /// Every tool definition the recorded `tools/list` answers hold, in
    /// recorded order.
    pub fn listed_tools(&self) -> impl Iterator<Item = &Value> {
        self.interactions
            .iter()
            .filter(|i| i.method() == "tools/list")
            .filter_map(|i| i.response.as_ref()?.pointer("/result/tools")?.as_array())
            .flatten()
    }

    /// The recorded retry of interaction `position` (an `input_required`
    /// answer): the next interaction of the same method whose request carries
    /// the same `requestState` (or, without one, the same name).
    pub fn recorded_retry(&self, position: usize) -> Option<usize> {
        let first = self.interactions.get(position)?;
        let state = first
            .response
            .as_ref()
            .and_then(|r| r.pointer("/result/requestState"))
            .cloned();
        let name = first
            .request()
            .and_then(crate::jsonrpc::params)
            .and_then(|p| p.get("name"))
            .cloned();
        self.interactions
            .iter()
            .enumerate()
            .skip(position + 1)
            .find(|(_, i)| {
                let Some(params) = i.request().and_then(crate::jsonrpc::params) else {
                    return false;
                };
                i.method() == first.method()
                    && params.get("inputResponses").is_some()
                    && match &state {
                        Some(state) => params.get("requestState") == Some(state),
                        None => params.get("name").cloned() == name,
                    }
            })
            .map(|(index, _)| index)
    }
}

/// The transport a cassette was recorded over.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Transport {
    /// A child process speaking newline-delimited JSON on stdin/stdout.
    Stdio {
        /// The server command, with secrets masked.
        command: Vec<String>,
        /// The directory the server ran in, with secrets masked: relative
        /// to the cassette's directory (`..`), or absolute when the two
        /// share nothing but the root. Relative commands (`venv/bin/python
        /// server.py`) are run from there again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// Streamable HTTP (2025-03-26 and later): one endpoint for POST (and,
    /// in the legacy era, GET and DELETE).
    StreamableHttp {
        /// The upstream URL that was recorded, with secrets masked.
        url: String,
        /// The endpoint's path, which replay serves.
        endpoint: String,
        /// What the server answered to GET and DELETE on the endpoint.
        #[serde(default, skip_serializing_if = "HttpEndpointBehaviour::is_empty")]
        behaviour: HttpEndpointBehaviour,
    },
    /// The 2024-11-05 HTTP+SSE transport: GET on the SSE endpoint announces
    /// the POST endpoint; every server message arrives as `event: message`.
    HttpSse {
        /// The upstream SSE URL that was recorded, with secrets masked.
        url: String,
        /// The SSE endpoint's path (e.g. `/sse`).
        sse_endpoint: String,
        /// The POST endpoint's path as announced, without its query string.
        post_endpoint: String,
    },
}

/// How a recorded HTTP endpoint answered methods other than POST, so that
/// replay answers them the same way: the first of each made in the ordinary
/// situation (see [`HttpSituation`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HttpEndpointBehaviour {
    /// Status of `GET` (opening the server's stream): 200, or 405 when the
    /// server has no GET stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get_status: Option<u16>,
    /// Status of `DELETE` (ending a session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_status: Option<u16>,
    /// The priming event the server opened its GET stream with (an id,
    /// often a `retry:`, no data), which a client resumes after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get_priming: Option<SseFrame>,
    /// What the server asked of clients that came without (enough of) a
    /// token, for `replay --auth oauth` to ask the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<RecordedAuth>,
}

/// How a protected server challenged its clients while recording. The
/// challenges themselves (401, and 403 `insufficient_scope`) are not
/// interactions: a client retries the same request with a token, and that
/// is what is recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedAuth {
    /// The `scopes_supported` of its protected-resource metadata.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes_supported: Vec<String>,
    /// The `scope` its 401 asked for, if it named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Requests it answered with 403 `insufficient_scope` until the token
    /// carried more scope (step-up authorization).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_up: Vec<StepUp>,
    /// Whether its authorization server issued refresh tokens (absent when
    /// no token was seen). Clients step up differently with one: replay
    /// issues them only if the recorded server did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_tokens: Option<bool>,
}

/// One request that needs more scope than the first token carried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepUp {
    /// Its method (`tools/call`).
    pub method: String,
    /// Its `params.name` (a tool, a prompt) or `params.uri` (a resource),
    /// if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The scope the 403 asked for (space-separated).
    pub scope: String,
}

impl StepUp {
    /// What a step-up rule names of a request: its method, and its
    /// `params.name` or `params.uri`. `None` for anything but a request.
    /// Recording and `replay --auth oauth` both read requests with it.
    pub fn target(message: &Value) -> Option<(&str, Option<&str>)> {
        message.get("id")?;
        let method = message.get("method")?.as_str()?;
        let name = message
            .get("params")
            .and_then(|params| params.get("name").or_else(|| params.get("uri")))
            .and_then(Value::as_str);
        Some((method, name))
    }

    /// Whether this rule is about `message`.
    pub fn applies_to(&self, message: &Value) -> bool {
        Self::target(message)
            .is_some_and(|(method, name)| method == self.method && name == self.name.as_deref())
    }
}

impl HttpEndpointBehaviour {
    /// Nothing recorded.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// How one client message travelled over HTTP, for faithful replay.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HttpExchange {
    /// The HTTP status of the answer to the POST.
    pub status: u16,
    /// Its content type: `application/json`, `text/event-stream`, or absent
    /// for an answer without a body (202 Accepted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// A body that is not a JSON-RPC message (an HTTP error page, say),
    /// kept as text so replay can return it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// SSE framing of the answer's stream, one entry per SSE event in order
    /// (a priming event, then one per message: `during`, then `response`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sse: Vec<SseFrame>,
    /// Whether the answer issued a session id (`Mcp-Session-Id`). The id
    /// itself is never stored: replay issues fresh ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub issued_session: bool,
    /// Whether the request carried a session id.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub had_session: bool,
    /// The circumstances that decided the answer besides the body, when
    /// they were out of the ordinary (a missing or unknown session, a
    /// foreign origin, headers that disagree with the body).
    #[serde(default, skip_serializing_if = "HttpSituation::is_normal")]
    pub situation: HttpSituation,
    /// Milliseconds from the request to each SSE event, for `--pace recorded`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delays_ms: Vec<u64>,
    /// The interaction's server messages that travelled on the session's
    /// GET stream rather than in the answer to the POST, each with its SSE
    /// framing there; replay sends them down the GET stream the same way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub get_stream: Vec<StreamedEvent>,
    /// The answer was an authentication challenge (401, or 403
    /// `insufficient_scope`): in the journal only, for the interaction
    /// never reaches the cassette (see [`RecordedAuth`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auth_challenge: bool,
}

/// One server message of an interaction that travelled on the session's
/// GET stream: which one (`{"during": 0}` or `{"after": 1}`) and the SSE
/// framing it came with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamedEvent {
    /// Which of the interaction's server messages it is.
    #[serde(flatten)]
    pub event: EventRef,
    /// Its SSE framing on the GET stream.
    #[serde(flatten)]
    pub frame: SseFrame,
}

/// One of an interaction's server messages, by list and position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventRef {
    /// `during[i]`.
    During(usize),
    /// `after[i]`.
    After(usize),
}

/// The circumstances of an HTTP request that decide how a server answers
/// it, besides its body. Replay matches on them, so a request the recorded
/// server rejected (say, for a stale session) is answered with that
/// rejection only in the same circumstances, and is never handed to a
/// normal request with the same body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HttpSituation {
    /// The request's session id, when it was not as the server expects.
    #[serde(default, skip_serializing_if = "SessionState::is_normal")]
    pub session: SessionState,
    /// Its `Origin` or `Host` named a site other than the loopback one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub foreign_origin: bool,
    /// Its `Mcp-Method` / `Mcp-Name` headers disagreed with the body.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub header_mismatch: bool,
    /// Its `MCP-Protocol-Version` header named an unknown version.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bad_protocol_version: bool,
}

/// A request's session id, against the sessions the server issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionState {
    /// As the server expects: one it issued, or none where none is needed.
    #[default]
    Normal,
    /// None, where the server issues sessions and this is not `initialize`.
    Missing,
    /// One the server never issued, or has ended.
    Unknown,
}

impl SessionState {
    /// Whether this is the ordinary state.
    pub fn is_normal(&self) -> bool {
        *self == SessionState::Normal
    }
}

impl HttpSituation {
    /// Whether nothing was out of the ordinary.
    pub fn is_normal(&self) -> bool {
        *self == HttpSituation::default()
    }

    /// A stable spelling of an out-of-the-ordinary situation, for match
    /// keys; `None` when normal.
    pub fn tag(&self) -> Option<String> {
        (!self.is_normal()).then(|| serde_json::to_string(self).expect("serialisable"))
    }
}

/// One SSE event's framing (its data is the message it carried, or empty
/// for a priming event).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SseFrame {
    /// `id:`, if the server sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `event:`, if not the default `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// `retry:`, if sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<u64>,
    /// A priming event: an id with empty data, carrying no message.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub priming: bool,
}

/// Protocol era and negotiated version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtocolInfo {
    /// `legacy`, `modern` or `unknown` (no handshake recorded).
    pub era: Era,
    /// The negotiated version, when a handshake was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The recorded server's identity and capabilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerIdentity {
    /// `serverInfo` (name, version, …) as the server sent it.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub info: Value,
    /// `capabilities` as the server sent them.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub capabilities: Value,
    /// `instructions`, when the server gave any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// A client message and the server traffic that belongs to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "InteractionFields")]
pub struct Interaction {
    /// The client's request or notification, whole.
    #[serde(flatten)]
    pub client: ClientMessage,
    /// Server messages sent while the request was in flight, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub during: Vec<Event>,
    /// The server's response; absent for notifications and for requests
    /// that were cancelled or still open when recording stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<RawMessage>,
    /// Server messages sent afterwards, unprompted, before the next client
    /// message (e.g. `notifications/tools/list_changed` after `initialized`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<Event>,
    /// Milliseconds from the client message to each message of `during`,
    /// then to the response, for `--pace recorded` over stdio. Kept by
    /// stdio recordings, for interactions with messages in `during` (over
    /// HTTP the timing is in `http.delays_ms`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delays_ms: Vec<u64>,
    /// How the exchange travelled, for cassettes recorded over HTTP
    /// (boxed: stdio cassettes, and big ones, pay a pointer for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<Box<HttpExchange>>,
    /// Which server process of the recording it belongs to, in the order
    /// the processes started (0, the first, is left out): a test whose
    /// client starts its stdio server more than once records every
    /// process into one cassette (docs/processes.md).
    #[serde(default, skip_serializing_if = "is_first_process")]
    pub process: u32,
}

/// Whether `process` is the first, which the format leaves out.
fn is_first_process(process: &u32) -> bool {
    *process == 0
}

/// The client side of an interaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientMessage {
    /// A JSON-RPC request (has an `id`).
    Request(RawMessage),
    /// A JSON-RPC notification (no `id`).
    Notification(RawMessage),
}

impl ClientMessage {
    /// The message itself, as a tree (parsed on first use, then kept).
    pub fn message(&self) -> &Value {
        self.raw()
    }

    /// The message as recorded.
    pub fn raw(&self) -> &RawMessage {
        match self {
            ClientMessage::Request(m) | ClientMessage::Notification(m) => m,
        }
    }

    /// Its `method`.
    pub fn method(&self) -> &str {
        self.raw().method().unwrap_or_default()
    }
}

/// Server traffic inside an interaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged, try_from = "EventFields")]
pub enum Event {
    /// A server notification (progress, log message, list changed, …).
    Notification {
        /// The notification, whole.
        notification: RawMessage,
    },
    /// A server-to-client request (sampling, elicitation, roots) and the
    /// client's answer to it.
    ServerRequest {
        /// The server's request, whole.
        server_request: RawMessage,
        /// The client's response; absent if it never answered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_response: Option<RawMessage>,
    },
}

/// An interaction as written, before it is checked: the loader reads
/// this, so a hand-edited cassette that replay could not use is refused
/// with a message in the format's own words (and `check`, which loads
/// through the same code, refuses exactly the same files).
#[derive(Deserialize)]
struct InteractionFields {
    #[serde(default)]
    request: Option<RawMessage>,
    #[serde(default)]
    notification: Option<RawMessage>,
    #[serde(default)]
    during: Vec<Event>,
    #[serde(default)]
    response: Option<RawMessage>,
    #[serde(default)]
    after: Vec<Event>,
    #[serde(default)]
    delays_ms: Vec<u64>,
    #[serde(default)]
    http: Option<Box<HttpExchange>>,
    #[serde(default)]
    process: u32,
}

/// Why an interaction or an event, as written, is not one replay can use
/// (serde says it, with the place, as the loader's message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ShapeError {
    /// An interaction with both a `request` and a `notification`.
    #[error("an interaction holds one client message: a `request` or a `notification`, not both")]
    TwoClientMessages,
    /// An interaction with neither.
    #[error("an interaction needs a `request` or a `notification`")]
    NoClientMessage,
    /// A client message that is not an object.
    #[error("`{field}` must be a JSON-RPC message (an object), found {found}")]
    NotAnObject {
        /// `request` or `notification`.
        field: &'static str,
        /// What it is instead.
        found: &'static str,
    },
    /// A client message without a `method`.
    #[error("`{field}` has no `method`")]
    NoMethod {
        /// `request` or `notification`.
        field: &'static str,
    },
    /// A `request` without an `id`.
    #[error("`{field}` has no `id`; a message without one is a `notification`")]
    NoId {
        /// `request`.
        field: &'static str,
    },
    /// A `notification` with an `id`.
    #[error("`{field}` has an `id`; a message with one is a `request`")]
    UnexpectedId {
        /// `notification`.
        field: &'static str,
    },
    /// An event with both a `notification` and a `server_request`.
    #[error("an event is a `notification` or a `server_request`, not both")]
    TwoEventMessages,
    /// A notification event with a `client_response`.
    #[error("`client_response` answers a `server_request`; this event is a `notification`")]
    AnsweredNotification,
    /// An event with neither.
    #[error("an event needs a `notification` or a `server_request`")]
    NoEventMessage,
}

impl TryFrom<InteractionFields> for Interaction {
    type Error = ShapeError;

    fn try_from(fields: InteractionFields) -> Result<Self, ShapeError> {
        let client = match (fields.request, fields.notification) {
            (Some(_), Some(_)) => return Err(ShapeError::TwoClientMessages),
            (None, None) => return Err(ShapeError::NoClientMessage),
            (Some(request), None) => {
                client_message("request", &request, true)?;
                ClientMessage::Request(request)
            }
            (None, Some(notification)) => {
                client_message("notification", &notification, false)?;
                ClientMessage::Notification(notification)
            }
        };
        Ok(Interaction {
            client,
            during: fields.during,
            response: fields.response,
            after: fields.after,
            delays_ms: fields.delays_ms,
            http: fields.http,
            process: fields.process,
        })
    }
}

/// Checks what replay needs of a client message: an object with a
/// `method`, and an `id` exactly when it is a request.
/// Read without a tree: most client messages are never read again.
fn client_message(
    field: &'static str,
    message: &RawMessage,
    request: bool,
) -> Result<(), ShapeError> {
    if !message.is_object() {
        return Err(ShapeError::NotAnObject {
            field,
            found: message.with(crate::json::kind_of),
        });
    }
    // The types of `method` and `id` are `check`'s to report (MC102,
    // MC103); what is decided here is what kind of message it is.
    if !message.has_member("method") {
        return Err(ShapeError::NoMethod { field });
    }
    match (request, message.has_member("id")) {
        (true, true) | (false, false) => Ok(()),
        (true, false) => Err(ShapeError::NoId { field }),
        (false, true) => Err(ShapeError::UnexpectedId { field }),
    }
}

/// An event as written, before it is checked.
#[derive(Deserialize)]
struct EventFields {
    #[serde(default)]
    notification: Option<RawMessage>,
    #[serde(default)]
    server_request: Option<RawMessage>,
    #[serde(default)]
    client_response: Option<RawMessage>,
}

impl TryFrom<EventFields> for Event {
    type Error = ShapeError;

    fn try_from(fields: EventFields) -> Result<Self, ShapeError> {
        match (fields.notification, fields.server_request) {
            (Some(_), Some(_)) => Err(ShapeError::TwoEventMessages),
            (Some(_), None) if fields.client_response.is_some() => {
                Err(ShapeError::AnsweredNotification)
            }
            (Some(notification), None) => Ok(Event::Notification { notification }),
            (None, Some(server_request)) => Ok(Event::ServerRequest {
                server_request,
                client_response: fields.client_response,
            }),
            (None, None) => Err(ShapeError::NoEventMessage),
        }
    }
}

impl Interaction {
    /// Every message in the interaction, for edits that apply to all
    /// (masking): the client's, the server's, and the client's answers.
    pub fn messages_mut(&mut self) -> impl Iterator<Item = &mut RawMessage> {
        let client = match &mut self.client {
            ClientMessage::Request(m) | ClientMessage::Notification(m) => m,
        };
        let events = self
            .during
            .iter_mut()
            .chain(self.after.iter_mut())
            .flat_map(|event| {
                let (first, second) = match event {
                    Event::Notification { notification } => (notification, None),
                    Event::ServerRequest {
                        server_request,
                        client_response,
                    } => (server_request, client_response.as_mut()),
                };
                std::iter::once(first).chain(second)
            });
        std::iter::once(client)
            .chain(self.response.as_mut())
            .chain(events)
    }

    /// The client message's method.
    pub fn method(&self) -> &str {
        self.client.method()
    }

    /// The method and what it names, for people (reports, review):
    /// `tools/call echo`, `resources/read demo://readme`, `initialize`.
    pub fn label(&self) -> String {
        let method = self.method();
        let params = self.client.message().get("params");
        let field = match method {
            "tools/call" | "prompts/get" => "name",
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => "uri",
            _ => "",
        };
        let method = if method.is_empty() {
            "(no method)"
        } else {
            method
        };
        match params.and_then(|p| p.get(field)).and_then(Value::as_str) {
            Some(detail) => format!("{method} {detail}"),
            None => method.to_owned(),
        }
    }

    /// Whether the client message is a request (read without a tree).
    pub fn is_request(&self) -> bool {
        matches!(self.client, ClientMessage::Request(_))
    }

    /// The request, if the client message is one (as a tree, parsed on
    /// first use and kept).
    pub fn request(&self) -> Option<&Value> {
        match &self.client {
            ClientMessage::Request(m) => Some(m),
            ClientMessage::Notification(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn interaction_serialises_with_readable_keys_in_order() {
        let interaction = Interaction {
            client: ClientMessage::Request(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}).into(),
            ),
            during: vec![
                Event::Notification {
                    notification: json!({"method": "notifications/progress"}).into(),
                },
                Event::ServerRequest {
                    server_request: json!({"id": 0, "method": "roots/list"}).into(),
                    client_response: Some(json!({"id": 0, "result": {"roots": []}}).into()),
                },
            ],
            response: Some(json!({"jsonrpc": "2.0", "id": 1, "result": {}}).into()),
            after: vec![],
            delays_ms: vec![],
            http: None,
            process: 0,
        };
        let text = serde_json::to_string(&interaction).unwrap();
        assert_eq!(
            text,
            r#"{"request":{"jsonrpc":"2.0","id":1,"method":"tools/call"},"during":[{"notification":{"method":"notifications/progress"}},{"server_request":{"id":0,"method":"roots/list"},"client_response":{"id":0,"result":{"roots":[]}}}],"response":{"jsonrpc":"2.0","id":1,"result":{}}}"#
        );
        let back: Interaction = serde_json::from_str(&text).unwrap();
        assert_eq!(back, interaction);
    }

    #[test]
    fn a_later_process_is_tagged_and_the_first_is_not() {
        let text = r#"{"request":{"jsonrpc":"2.0","id":1,"method":"ping"},"process":2}"#;
        let later: Interaction = serde_json::from_str(text).unwrap();
        assert_eq!(later.process, 2);
        assert_eq!(serde_json::to_string(&later).unwrap(), text);
        let mut first = later;
        first.process = 0;
        assert!(!serde_json::to_string(&first).unwrap().contains("process"));
    }

    #[test]
    fn notification_interaction_round_trips() {
        let text = r#"{"notification":{"jsonrpc":"2.0","method":"notifications/initialized"},"after":[{"notification":{"method":"notifications/tools/list_changed"}}]}"#;
        let interaction: Interaction = serde_json::from_str(text).unwrap();
        assert_eq!(interaction.method(), "notifications/initialized");
        assert!(interaction.request().is_none());
        assert_eq!(serde_json::to_string(&interaction).unwrap(), text);
    }
}
